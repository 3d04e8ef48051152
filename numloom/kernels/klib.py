"""What kernels can call: one row per function (Python's builtins, ``math``, ``cmath``,
NumPy's ufuncs and scalar types, numloom.cuda's API), each a handler
``(translator, node, args, kwargs) -> Value`` in ``CALLS``.

``math`` functions compute in double and return Python floats, as Python's do; NumPy's ufuncs
use NumPy's loops and the fusion compiler's snippets; numloom.cuda's names become thread
indices, shared and local arrays, shuffles and atomics.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import functools
import math

import numpy as np

from ..compile import kir
from . import ktypes
from .cuda import intrinsics as I
from .cuda import random as _xoro
from .kcalls import (
    _address,
    _complex,
    _describe,
    _int_value,
    _loop,
    _mixed_comparison,
    _no_threads,
    arithmetic,
    load,
    thread_value,
)
from .ktypes import WEAK_BOOL, WEAK_COMPLEX, WEAK_FLOAT, WEAK_INT, Array, Scalar, Tuple
from .kvalues import (
    _NO,
    PYOBJ,
    ArrayRef,
    Value,
    _storage_cast,
    constant,
    convert,
    literal,
    truth,
)


def handler_for(fn):
    """The handler of a callable kernels know (None: a Python function to compile)."""
    try:
        found = CALLS.get(fn)
    except TypeError:  # unhashable
        found = None
    if found is not None:
        return found
    if isinstance(fn, np.ufunc) or type(fn).__name__ == "ufunc" and hasattr(fn, "_np"):
        return _ufunc_call
    if isinstance(fn, type) and issubclass(fn, np.generic) or isinstance(fn, np.dtype):
        return _cast_call
    if getattr(fn, "_numloom_dtype", None) is not None:  # numloom.types.float32 and friends
        return _cast_call
    return None


# --- Python builtins ---------------------------------------------------------------------------


def _scalar_args(tr, node, args: list, n: tuple, what: str) -> None:
    if len(args) not in n:
        raise tr.typing(node, f"{what}() takes {' or '.join(map(str, n))} arguments, "
                        f"{len(args)} given")  # fmt: skip
    for a in args:
        if not isinstance(a.type, Scalar):
            raise tr.typing(node, f"{what}() of {_describe(a)}", f"{what}() takes scalars")


def _abs(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1,), "abs")
    (v,) = args
    t = v.type
    if t.kind == "c":
        part = Scalar(np.dtype(np.float32 if t.dtype == np.complex64 else np.float64), t.weak)
        return Value(part, f"{ktypes.storage_ctype(t.dtype)}_abs({v.code})", nonneg=True)
    if t.kind == "b":
        return Value(WEAK_INT, f"((int64_t){v.code})", nonneg=True)
    return arithmetic(tr, "absolute", (v,), node)


def _minmax(tr, node, args, kwargs, which: str) -> Value:
    if len(args) == 1 and isinstance(args[0].type, Tuple):
        args = list(args[0].items)
    if len(args) < 2:
        raise tr.typing(node, f"{which}() of one value", f"{which}(a, b, ...)")
    _scalar_args(tr, node, args, (len(args),), which)
    from .kvalues import promote

    t = functools.reduce(promote, [a.type for a in args])
    cmp = ">" if which == "max" else "<"
    code = convert(args[0], t)
    for a in args[1:]:
        b = convert(a, t)
        code = f"({b} {cmp} {code} ? {b} : {code})"  # Python keeps the first of equals
    nonneg = all(a.nonneg for a in args) if which == "min" else any(a.nonneg for a in args)
    return Value(t, code, nonneg=nonneg)


def _round(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1, 2), "round")
    v = args[0]
    if v.type.kind in "iub":
        return v
    suffix = "f" if v.type.dtype == np.float32 else ""
    if len(args) == 1:  # Python rounds half to even, as rint does
        return Value(WEAK_INT, f"nl_f2int64(rint{suffix}({v.code}))")
    ndigits = args[1]
    if ndigits.const is _NO:
        raise tr.unsupported(node, "round(x, n) with n not a constant")
    scale = literal(10.0 ** int(ndigits.const), v.type.dtype)
    return Value(v.type, f"(rint{suffix}({v.code} * {scale}) / {scale})")


def _int(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1,), "int")
    v = args[0]
    if v.type.kind == "c":
        raise tr.typing(node, "int() of a complex number", "use int(z.real)")
    return Value(WEAK_INT, convert(v, ktypes.INT64), nonneg=v.nonneg)


def _float(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1,), "float")
    v = args[0]
    if v.type.kind == "c":
        raise tr.typing(node, "float() of a complex number", "use z.real or abs(z)")
    return Value(WEAK_FLOAT, convert(v, ktypes.FLOAT64))


def _bool(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1,), "bool")
    return Value(WEAK_BOOL, truth(tr, args[0], node))


def _complex_call(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1, 2), "complex")
    c128 = Scalar(np.dtype(np.complex128))
    if len(args) == 1:
        return Value(WEAK_COMPLEX, convert(args[0], c128))
    re, im = (convert(a, ktypes.FLOAT64) for a in args)
    return Value(WEAK_COMPLEX, f"nl_complex128_make({re}, {im})")


def _len(tr, node, args, kwargs) -> Value:
    if len(args) != 1:
        raise tr.typing(node, "len() takes one argument")
    v = args[0]
    if isinstance(v.type, Tuple):
        return constant(len(v.items))
    if not isinstance(v.type, Array) or v.type.ndim == 0:
        raise tr.typing(node, f"len() of {_describe(v)}")
    return _int_value(v.arr.shape[0])


def _pow(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (2,), "pow")
    return arithmetic(tr, "power", tuple(args), node)


def _divmod(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (2,), "divmod")
    q = arithmetic(tr, "floor_divide", tuple(args), node)
    r = arithmetic(tr, "remainder", tuple(args), node)
    return Value(Tuple((q.type, r.type)), items=(q, r))


def _range_value(tr, node, args, kwargs) -> Value:
    raise tr.unsupported(node, "range() outside a for statement", "write for i in range(...)")


def _print(tr, node, args, kwargs) -> Value:
    raise tr.unsupported(node, "print() as a value", "call print(...) as a statement")


def print_statement(tr, node) -> None:
    """``print(a, b, ...)`` in a kernel or device function, as numba.cuda prints: one
    ``printf`` of the items separated by spaces and a newline (integers as ``%lld``/``%llu``,
    floats as ``%f``, bools as True/False, string constants as they are)::

        print("i =", i, x[i])    ->    NL_PRINTF("%s %lld %f\\n", "i =", (long long)(v_i), ...);

    On the CPU each print is flushed, so that it is in the process's output when the kernel
    ends; a block's threads print in order, blocks in any order (as on a GPU)."""
    if tr.program.scalar:
        raise tr.unsupported(node, "print() in a vectorized function",
                             "print in a cuda.jit kernel, or print the result array")  # fmt: skip
    if node.keywords:
        raise tr.unsupported(node, "print() with keyword arguments (sep, end, file, flush)",
                             "kernels print the items separated by spaces, then a newline")  # fmt: skip
    formats, values = [], []
    for arg in node.args:
        fmt, codes = _print_item(tr, arg)
        formats.append(fmt)
        values += codes
    if len(values) > 32:
        raise tr.unsupported(node, f"print() of {len(values)} values (CUDA's printf takes 32)",
                             "split it into several print() calls")  # fmt: skip
    text = _c_string(" ".join(formats) + "\n")
    tr.emit(kir.Do(f"NL_PRINTF({', '.join([text] + values)})", node.lineno))


def _print_item(tr, arg) -> tuple:
    """``(printf format, [C arguments])`` of one item of a print() call."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return "%s", [_c_string(arg.value)]
    v = tr.expr(arg)
    if v.type is None:
        return "%s", ['""']
    if v.type is PYOBJ and isinstance(v.obj, I.Dim3):
        axes = [thread_value(tr, arg, f"nl_c.{_DIM3_PREFIX[v.obj.name]}{a}") for a in "xyz"]
        return "(%lld, %lld, %lld)", [f"(long long){a.code}" for a in axes]
    if not isinstance(v.type, Scalar) or v.type.kind == "c":
        hint = ("print z.real and z.imag" if isinstance(v.type, Scalar)
                else "print scalars: elements of arrays, or each item of a tuple")  # fmt: skip
        raise tr.unsupported(arg, f"print() of {_describe(v)}", hint)
    kind = v.type.kind
    if kind == "b":
        return "%s", [f'(({v.code}) ? "True" : "False")']
    if kind == "u":
        return "%llu", [f"(unsigned long long)({v.code})"]
    if kind == "i":
        return "%lld", [f"(long long)({v.code})"]
    return "%f", [f"(double)({v.code})"]


_DIM3_PREFIX = {"threadIdx": "t", "blockIdx": "b", "blockDim": "bd", "gridDim": "gd"}


def _c_string(text: str) -> str:
    """A C string literal of ``text`` (UTF-8; quotes, backslashes, ``?`` (trigraphs) and
    anything not printable ASCII as octal escapes)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        out.append(ch if 32 <= byte < 127 and ch not in '\\"?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


# --- math and cmath -------------------------------------------------------------------------------

# name -> (C function, number of arguments, result: "float", "int" or "bool")
_MATH = {
    "exp": ("exp", 1, "float"), "exp2": ("exp2", 1, "float"), "expm1": ("expm1", 1, "float"),
    "log2": ("log2", 1, "float"), "log10": ("log10", 1, "float"),
    "log1p": ("log1p", 1, "float"), "sqrt": ("sqrt", 1, "float"), "cbrt": ("cbrt", 1, "float"),
    "sin": ("sin", 1, "float"), "cos": ("cos", 1, "float"), "tan": ("tan", 1, "float"),
    "asin": ("asin", 1, "float"), "acos": ("acos", 1, "float"), "atan": ("atan", 1, "float"),
    "sinh": ("sinh", 1, "float"), "cosh": ("cosh", 1, "float"), "tanh": ("tanh", 1, "float"),
    "asinh": ("asinh", 1, "float"), "acosh": ("acosh", 1, "float"),
    "atanh": ("atanh", 1, "float"), "fabs": ("fabs", 1, "float"), "erf": ("erf", 1, "float"),
    "erfc": ("erfc", 1, "float"), "gamma": ("tgamma", 1, "float"),
    "lgamma": ("lgamma", 1, "float"), "atan2": ("atan2", 2, "float"),
    "hypot": ("hypot", 2, "float"), "pow": ("pow", 2, "float"), "fmod": ("fmod", 2, "float"),
    "copysign": ("copysign", 2, "float"), "remainder": ("remainder", 2, "float"),
    "nextafter": ("nextafter", 2, "float"), "floor": ("floor", 1, "int"),
    "ceil": ("ceil", 1, "int"), "trunc": ("trunc", 1, "int"), "isnan": ("isnan", 1, "bool"),
    "isinf": ("isinf", 1, "bool"), "isfinite": ("isfinite", 1, "bool"),
}  # fmt: skip


def _math(name: str):
    cname, nargs, result = _MATH[name]

    def handler(tr, node, args, kwargs) -> Value:
        _scalar_args(tr, node, args, (nargs,), f"math.{name}")
        if any(a.type.kind == "c" for a in args):
            raise tr.typing(node, f"math.{name} of a complex number", f"use cmath.{name}")
        if result == "int" and args[0].type.kind in "iub":
            return Value(WEAK_INT, convert(args[0], ktypes.INT64), nonneg=args[0].nonneg)
        codes = [convert(a, ktypes.FLOAT64) for a in args]
        code = f"{cname}({', '.join(codes)})"
        if result == "int":
            return Value(WEAK_INT, f"nl_f2int64({code})")
        if result == "bool":
            return Value(WEAK_BOOL, f"({code} != 0)")
        return Value(WEAK_FLOAT, code)

    return handler


def _math_log(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (1, 2), "math.log")
    codes = [convert(a, ktypes.FLOAT64) for a in args]
    if len(codes) == 1:
        return Value(WEAK_FLOAT, f"log({codes[0]})")
    return Value(WEAK_FLOAT, f"(log({codes[0]}) / log({codes[1]}))")


def _math_angle(factor: str):
    def handler(tr, node, args, kwargs) -> Value:
        _scalar_args(tr, node, args, (1,), "math")
        return Value(WEAK_FLOAT, f"({convert(args[0], ktypes.FLOAT64)} * ({factor}))")

    return handler


def _math_ldexp(tr, node, args, kwargs) -> Value:
    _scalar_args(tr, node, args, (2,), "math.ldexp")
    x, e = convert(args[0], ktypes.FLOAT64), convert(args[1], Scalar(np.dtype(np.int32)))
    return Value(WEAK_FLOAT, f"ldexp({x}, {e})")


_C128 = Scalar(np.dtype(np.complex128))
_CMATH = ("exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh")


def _cmath(name: str):
    def handler(tr, node, args, kwargs) -> Value:
        _scalar_args(tr, node, args, (1, 2) if name == "log" else (1,), f"cmath.{name}")
        z = convert(args[0], _C128)
        code = f"nl_complex128_{name}({z})"
        if len(args) == 2:
            base = f"nl_complex128_log({convert(args[1], _C128)})"
            code = f"nl_complex128_div({code}, {base})"
        return Value(WEAK_COMPLEX, code)

    return handler


def _cmath_simple(kind: str):
    def handler(tr, node, args, kwargs) -> Value:
        _scalar_args(tr, node, args, (1,) if kind != "rect" else (2,), f"cmath.{kind}")
        if kind == "rect":
            r, phi = (convert(a, ktypes.FLOAT64) for a in args)
            return Value(WEAK_COMPLEX, f"nl_complex128_make({r} * cos({phi}), {r} * sin({phi}))")
        z = convert(args[0], _C128)
        if kind == "phase":
            return Value(WEAK_FLOAT, f"nl_complex128_phase({z})")
        if kind == "polar":
            r = Value(WEAK_FLOAT, f"nl_complex128_abs({z})", nonneg=True)
            return Value(Tuple((WEAK_FLOAT, WEAK_FLOAT)),
                         items=(r, Value(WEAK_FLOAT, f"nl_complex128_phase({z})")))  # fmt: skip
        if kind == "log10":
            return Value(WEAK_COMPLEX, f"nl_complex128_div(nl_complex128_log({z}), "
                         f"nl_complex128_make(log(10.0), 0.0))")  # fmt: skip
        test = {"isnan": "isnan({0}.re) || isnan({0}.im)",
                "isinf": "isinf({0}.re) || isinf({0}.im)",
                "isfinite": "isfinite({0}.re) && isfinite({0}.im)"}[kind]  # fmt: skip
        return Value(WEAK_BOOL, "(" + test.format(z) + ")")

    return handler


# --- NumPy: ufuncs and scalar types --------------------------------------------------------------


def _ufunc_call(tr, node, args, kwargs) -> Value:
    uf = _resolve_ufunc(tr, node)
    name = uf.__name__
    if "out" in kwargs or any(isinstance(a.type, Array) for a in args):
        return _ufunc_arrays(tr, node, uf, args, kwargs)
    if kwargs:
        raise tr.unsupported(node, f"keyword arguments of np.{name} in kernels")
    if len(args) != uf.nin:
        raise tr.typing(node, f"np.{name} takes {uf.nin} arguments, {len(args)} given")
    return _ufunc_scalars(tr, node, uf, args)


def _ufunc_arrays(tr, node, uf, args, kwargs) -> Value:
    """``np.sin(x, r)`` on arrays: the calling thread loops over the output's elements, the
    inputs (arrays or scalars) broadcast against it, as Numba's ufuncs in kernels do. Kernels
    allocate no arrays, so the outputs are given (``np.sin(x, r)`` or ``out=r``)."""
    name = uf.__name__
    if set(kwargs) - {"out"}:
        raise tr.unsupported(node, f"keyword arguments of np.{name} other than out= in kernels")
    ins, outs = list(args[: uf.nin]), list(args[uf.nin :])
    if "out" in kwargs:
        if outs:
            raise tr.typing(node, f"np.{name} is given its output twice (positional and out=)")
        out = kwargs["out"]
        outs = list(out.items) if isinstance(out.type, Tuple) else [out]
    if len(ins) != uf.nin or len(outs) != uf.nout:
        raise tr.typing(node, f"np.{name} of arrays in a kernel takes {uf.nin} input(s) and "
                        f"{uf.nout} output array(s), {len(args) + len(kwargs)} given",
                        f"pass the output array: np.{name}(x, out)")  # fmt: skip
    for o in outs:
        if not isinstance(o.type, Array):
            raise tr.typing(node, f"the output of np.{name} in a kernel is {_describe(o)}",
                            "pass an array to write the results into")  # fmt: skip
        if o.type.space == "const":
            raise tr.typing(node, "a global array is read-only in kernels",
                            "pass the array as an argument to write it")  # fmt: skip
    ndim = outs[0].type.ndim
    for a in ins + outs:
        if not isinstance(a.type, (Scalar, Array)) or (
            isinstance(a.type, Array) and a.type.ndim > ndim
        ):
            raise tr.typing(node, f"np.{name} of {_describe(a)} into a {ndim}-d output")
    line = node.lineno
    stops = [tr.temp("int64_t") for _ in range(ndim)]  # (bounds evaluated once, first)
    for stop, n in zip(stops, outs[0].arr.shape):
        tr.emit(kir.Assign(stop, n, line))
    counters = [tr.temp("int64_t") for _ in range(ndim)]
    tr.stack.extend([] for _ in range(ndim))

    def element(a: Value, out: bool = False):
        n = a.type.ndim
        index = [Value(ktypes.INT64, counters[ndim - n + j] if out else
                       f"({a.arr.shape[j]} == 1 ? 0 : {counters[ndim - n + j]})",
                       nonneg=True) for j in range(n)]  # fmt: skip
        return _address(tr, node, a, index)

    loaded = [load(a.type.dtype, element(a)) if isinstance(a.type, Array) else a for a in ins]
    result = _ufunc_scalars(tr, node, uf, loaded)
    results = result.items if isinstance(result.type, Tuple) else (result,)
    for o, v in zip(outs, results):
        dst = Scalar(o.type.dtype)
        if v.type.kind == "c" and dst.kind != "c":
            raise tr.typing(node, f"np.{name} cannot store complex values in a {dst} array")
        if o.arr.root is not None:
            tr.written.add(o.arr.root)
        tr.emit(kir.Assign(element(o, True), _storage_cast(convert(v, dst), o.type.dtype), line))
    for k in reversed(range(ndim)):
        body = tuple(tr.stack.pop())
        tr.emit(kir.For(counters[k], "0", stops[k], "1", body, 1, line))
    return outs[0] if len(outs) == 1 else Value(Tuple(tuple(o.type for o in outs)),
                                                 items=tuple(outs))  # fmt: skip


def _ufunc_scalars(tr, node, uf, args) -> Value:
    from ..compile.snippets import SNIPPETS

    name = uf.__name__
    for a in args:
        if not isinstance(a.type, Scalar):
            raise tr.typing(node, f"np.{name} of {_describe(a)} in a kernel",
                            "apply it to elements: np.sqrt(x[i])")  # fmt: skip
    if name in ("add", "subtract", "multiply", "divide", "true_divide", "power", "negative",
                "equal", "not_equal") and any(a.type.kind == "c" for a in args):  # fmt: skip
        return _complex(tr, "divide" if name == "true_divide" else name, tuple(args), node)
    try:  # NumPy's loop: Python scalars are weak, as in np.add(np.float32(1), 2.0)
        loop = _loop(name, tuple(ktypes.sample(a.type) for a in args))
    except (TypeError, np._core._exceptions._UFuncNoLoopError) as e:
        raise tr.typing(node, f"np.{name} has no loop for these types", str(e)) from None
    keys = [name] if uf.nout == 1 else [f"{name}.{k}" for k in range(uf.nout)]
    if any(k not in SNIPPETS for k in keys) or any(d.kind == "c" for d in loop):
        raise tr.unsupported(node, f"np.{name} in kernels",
                             "use the math module or operators")  # fmt: skip
    codes = [convert(a, Scalar(d)) for a, d in zip(args, loop)]
    outs = []
    for k, key in enumerate(keys):
        expr = _mixed_comparison(name, tuple(a.type for a in args), codes) or SNIPPETS[key](
            codes, loop[0]
        )
        out = loop[uf.nin + k]
        outs.append(Value(Scalar(out), f"nl_round_half({expr})" if out == np.float16 else expr))
    return outs[0] if len(outs) == 1 else Value(Tuple(tuple(o.type for o in outs)),
                                                 items=tuple(outs))  # fmt: skip


def _resolve_ufunc(tr, node):
    uf = tr.expr(node.func).obj
    return getattr(uf, "_np", uf)


def _cast_call(tr, node, args, kwargs) -> Value:
    target = tr.expr(node.func).obj
    dtype = dtype_of(target)
    if len(args) != 1 or not isinstance(args[0].type, Scalar):
        raise tr.typing(node, f"np.{dtype}() takes one scalar in kernels")
    v = args[0]
    if v.type.kind == "c" and dtype.kind != "c":
        raise tr.typing(node, f"converting a complex number to {dtype}", "use z.real")
    return Value(Scalar(dtype), convert(v, Scalar(dtype)), nonneg=v.nonneg and dtype.kind in "iu")


def dtype_of(obj):
    """The NumPy dtype a kernel's type argument names (np.float32, numloom.types.int32,
    'float32'), or None."""
    obj = getattr(obj, "_numloom_dtype", obj)
    try:
        dtype = np.dtype(obj)
    except TypeError:
        return None
    return dtype if ktypes.storage_ctype(dtype) else None


# --- numloom.cuda ------------------------------------------------------------------------------


def _this_grid(tr, node, args, kwargs) -> Value:
    raise tr.unsupported(node, "cuda.cg.this_grid(): grid-wide synchronization (cooperative "
                         "launches) is not supported", "end the kernel where the grid would "
                         "sync and launch a second kernel for what follows")  # fmt: skip


def _grid(which: str):
    def handler(tr, node, args, kwargs) -> Value:
        if len(args) != 1 or args[0].const not in (1, 2, 3):
            raise tr.typing(node, f"cuda.{which}(ndim) takes the number of dimensions, 1, 2 or 3")
        items = []
        for axis in "xyz"[: args[0].const]:
            code = (f"(nl_c.b{axis} * nl_c.bd{axis} + nl_c.t{axis})" if which == "grid"
                    else f"(nl_c.bd{axis} * nl_c.gd{axis})")  # fmt: skip
            items.append(thread_value(tr, node, code))
        if len(items) == 1:
            return items[0]
        return Value(Tuple((WEAK_INT,) * len(items)), items=tuple(items))

    return handler


def _array_alloc(space: str):
    def handler(tr, node, args, kwargs) -> Value:
        shape = kwargs.get("shape", args[0] if args else None)
        dtype_v = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        what = f"cuda.{space}.array"
        if shape is None or dtype_v is None:
            raise tr.typing(node, f"{what}(shape, dtype) takes a shape and a dtype")
        if space == "shared":
            _no_threads_device(tr, node, what)
        dims = _const_shape(tr, node, shape, what)
        dtype = dtype_of(dtype_v.obj if dtype_v.type is PYOBJ else None)
        if dtype is None:
            raise tr.typing(
                node,
                f"{what}: unknown dtype {_describe(dtype_v)}",
                "pass a NumPy type such as np.float32 or numloom.types.float32",
            )
        ctype = ktypes.storage_ctype(dtype)
        name = f"{'s' if space == 'shared' else 'l'}_{node.lineno}_{node.col_offset}"
        if space == "shared" and dims in ((0,), ()):  # dynamic: sized at launch
            tr.shared_decls.append(kir.Local(name, ctype, 0, "shared"))
            ref = ArrayRef(name, (f"(nl_dyn_bytes / {dtype.itemsize})",), ("1",), fixed=True)
            return Value(Array(dtype, 1, "C", "shared"), arr=ref)
        size = int(np.prod(dims))
        if space == "shared":
            tr.shared_decls.append(kir.Local(name, ctype, size, "shared"))
        else:
            tr.local(name, ctype, size, "thread")
        strides = tuple(str(int(np.prod(dims[k + 1 :]))) for k in range(len(dims)))
        ref = ArrayRef(name, tuple(str(d) for d in dims), strides, fixed=True)
        return Value(Array(dtype, len(dims), "C", "shared" if space == "shared" else "local"),
                     arr=ref)  # fmt: skip

    return handler


def _no_threads_device(tr, node, what: str) -> None:
    if tr.program.scalar:
        raise tr.unsupported(node, f"{what} in a vectorized function",
                             "write a cuda.jit kernel")  # fmt: skip
    if tr.mode == "device":
        raise tr.unsupported(node, f"{what} inside a device function",
                             "allocate the shared array in the kernel and pass it as an "
                             "argument")  # fmt: skip


def _const_shape(tr, node, shape: Value, what: str) -> tuple:
    if shape.const is not _NO:
        value = shape.const
    elif isinstance(shape.type, Tuple) and all(i.const is not _NO for i in shape.items):
        value = tuple(i.const for i in shape.items)
    else:
        raise tr.typing(node, f"{what}: the shape must be known when the kernel compiles",
                        "use integer literals or module-level constants")  # fmt: skip
    dims = (value,) if not isinstance(value, tuple) else value
    if not all(isinstance(d, (int, np.integer)) and d >= 0 for d in dims):
        raise tr.typing(node, f"{what}: the shape {value!r} is not a tuple of sizes")
    return tuple(int(d) for d in dims)


_ATOMIC_TYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")


def _atomic(name: str):
    def handler(tr, node, args, kwargs) -> Value:
        if tr.program.scalar:
            raise tr.unsupported(node, "atomics in a vectorized function")
        if name == "compare_and_swap":
            if len(args) != 3:
                raise tr.typing(node, "cuda.atomic.compare_and_swap(ary, old, val)")
            args = [args[0], constant(0), args[1], args[2]]
        nargs = 4 if name in ("cas", "compare_and_swap") else 3
        if len(args) != nargs:
            raise tr.typing(node, f"cuda.atomic.{name} takes {nargs} arguments "
                            f"(ary, idx{', old' if nargs == 4 else ''}, val)")  # fmt: skip
        ary = args[0]
        if isinstance(ary.type, Array) and ary.type.space == "const":
            raise tr.typing(node, f"cuda.atomic.{name} on a global array (read-only)")
        if not isinstance(ary.type, Array):
            raise tr.typing(node, f"cuda.atomic.{name} works on an array, not {_describe(ary)}")
        dtype = ary.type.dtype
        allowed = _atomic_dtypes(name)
        if str(dtype) not in allowed:
            raise tr.typing(node, f"cuda.atomic.{name} on a {dtype} array",
                            f"cuda.atomic.{name} works on {', '.join(allowed)} arrays")  # fmt: skip
        index = args[1].items if isinstance(args[1].type, Tuple) else (args[1],)
        if len(index) != ary.type.ndim:
            raise tr.typing(node, f"cuda.atomic.{name}: index all {ary.type.ndim} dimensions")
        address = _address(tr, node, ary, list(index))
        if ary.arr.root is not None:
            tr.written.add(ary.arr.root)
        t = Scalar(dtype)
        values = [convert(v, t) for v in args[2:]]
        op = name.rstrip("_").replace("compare_and_swap", "cas")
        prefix = "nl_atomic" if ary.type.space == "global" else "nl_satomic"
        ctype = ktypes.storage_ctype(dtype)
        return Value(t, f"{prefix}_{op}_{ctype}(&{address}, {', '.join(values)})")

    return handler


def _atomic_dtypes(name: str) -> tuple:
    """The array dtypes ``cuda.atomic.<name>`` works on (Numba's)."""
    if name in ("inc", "dec"):  # CUDA's wrapping counters
        return ("uint32", "uint64")
    if name in ("and_", "or_", "xor"):
        return tuple(t for t in _ATOMIC_TYPES if not t.startswith("float"))
    return _ATOMIC_TYPES


_XOROSHIRO = {  # numloom.cuda.random's draw -> (its type, the header's function)
    "next": ("uint64", "nl_xoro_next"), "uniform_float32": ("float32", "nl_xoro_f32"),
    "uniform_float64": ("float64", "nl_xoro_f64"),
    "normal_float32": ("float32", "nl_xoro_normal_f32"),
    "normal_float64": ("float64", "nl_xoro_normal_f64"),
}  # fmt: skip


def _xoroshiro(kind: str):
    def handler(tr, node, args, kwargs) -> Value:
        what = f"xoroshiro128p_{kind}"
        if tr.program.scalar:
            raise tr.unsupported(node, f"{what} in a vectorized function")
        if len(args) != 2 or kwargs:
            raise tr.typing(node, f"{what}(states, index)")
        states, index = args
        if (not isinstance(states.type, Array) or states.type.dtype != np.uint64
                or states.type.ndim != 2):  # fmt: skip
            raise tr.typing(node, f"{what} of {_describe(states)}",
                            "pass the states create_xoroshiro128p_states made (an (n, 2) "
                            "uint64 array)")  # fmt: skip
        if states.type.space == "const":
            raise tr.typing(node, f"{what} on a read-only array")
        address = _address(tr, node, states, [index, constant(0)])
        if states.arr.root is not None:
            tr.written.add(states.arr.root)
        dtype, fn = _XOROSHIRO[kind]
        return Value(Scalar(np.dtype(dtype)), f"{fn}(&{address})")

    return handler


def _shuffle(kind: str):
    def handler(tr, node, args, kwargs) -> Value:
        what = f"cuda.shfl_{kind}_sync" if kind != "idx" else "cuda.shfl_sync"
        if len(args) != 3:
            raise tr.typing(node, f"{what}(mask, value, {'lane' if kind == 'idx' else 'delta'})")
        _no_threads(tr, node)
        mask, value, lane = args
        if not isinstance(value.type, Scalar) or value.type.kind == "c":
            raise tr.typing(node, f"{what} of {_describe(value)}", "shuffle real scalars")
        t = ktypes.strong(value.type)
        if t.kind == "b" or t.dtype.itemsize < 4:  # CUDA shuffles 32- and 64-bit values
            t = Scalar(np.dtype(np.int32 if t.kind != "f" else np.float32))
        ctype = ktypes.ctype(t)
        target = tr.temp(ctype)
        tr.emit(kir.Shuffle(target, kind, convert(value, t), convert(lane, ktypes.INT64), ctype,
                            convert(mask, Scalar(np.dtype(np.uint32))), node.lineno))  # fmt: skip
        if value.type.kind == "b":
            return Value(value.type, f"({target} != 0)")
        if t.dtype != ktypes.strong(value.type).dtype:
            return Value(
                ktypes.strong(value.type), convert(Value(t, target), ktypes.strong(value.type))
            )
        return Value(t, target)

    return handler


# --- the table --------------------------------------------------------------------------------

CALLS = {
    builtins.abs: _abs, builtins.round: _round, builtins.int: _int, builtins.float: _float,
    builtins.bool: _bool, builtins.complex: _complex_call, builtins.len: _len,
    builtins.pow: _pow, builtins.divmod: _divmod, builtins.range: _range_value,
    builtins.print: _print,
    builtins.min: lambda tr, node, a, k: _minmax(tr, node, a, k, "min"),
    builtins.max: lambda tr, node, a, k: _minmax(tr, node, a, k, "max"),
    math.log: _math_log, math.ldexp: _math_ldexp,
    math.degrees: _math_angle("180.0 / 3.14159265358979323846"),
    math.radians: _math_angle("3.14159265358979323846 / 180.0"),
    cmath.phase: _cmath_simple("phase"), cmath.polar: _cmath_simple("polar"),
    cmath.rect: _cmath_simple("rect"), cmath.log10: _cmath_simple("log10"),
    cmath.isnan: _cmath_simple("isnan"), cmath.isinf: _cmath_simple("isinf"),
    cmath.isfinite: _cmath_simple("isfinite"),
    I.grid: _grid("grid"), I.gridsize: _grid("gridsize"),
    I.shared.array: _array_alloc("shared"), I.local.array: _array_alloc("local"),
    I.shfl_sync: _shuffle("idx"), I.shfl_up_sync: _shuffle("up"),
    I.shfl_down_sync: _shuffle("down"), I.shfl_xor_sync: _shuffle("xor"),
    I.cg.this_grid: _this_grid,
}  # fmt: skip
CALLS.update({getattr(math, name): _math(name) for name in _MATH if hasattr(math, name)})
CALLS.update({getattr(cmath, name): _cmath(name) for name in _CMATH})
CALLS.update({getattr(_xoro, f"xoroshiro128p_{kind}"): _xoroshiro(kind) for kind in _XOROSHIRO})
CALLS.update({getattr(I.atomic, name): _atomic(name)
              for name in ("add", "sub", "max", "min", "exch", "cas", "and_", "or_", "xor",
                           "compare_and_swap", "inc", "dec", "nanmax", "nanmin")})  # fmt: skip

"""What kernel expressions can call and index: one row per function.

Operators and NumPy's ufuncs use the fusion compiler's op snippets (``lower.SNIPPETS``) with
NumPy's own type resolution, so ``a // b`` in a kernel and ``np.floor_divide`` in an array
expression are the same C. ``math`` functions compute in double and return Python floats, as
Python's do; ``numloom.cuda``'s names become thread indices, barriers, shuffles and atomics.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import functools
import math
import operator
import types as pytypes

import numpy as np

from . import kir, ktypes
from .cuda import intrinsics as I
from .kerrors import KernelError
from .ktypes import WEAK_BOOL, WEAK_COMPLEX, WEAK_FLOAT, WEAK_INT, Array, Scalar, Tuple
from .translate import _NO, PYOBJ, UNKNOWN, ArrayRef, Value, constant, convert, literal, truth

# --- arithmetic -----------------------------------------------------------------------------

_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_PY_OPS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "power": operator.pow, "left_shift": operator.lshift, "right_shift": operator.rshift,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "bitwise_and": operator.and_,
    "negative": operator.neg, "invert": operator.invert, "equal": operator.eq,
    "not_equal": operator.ne, "less": operator.lt, "less_equal": operator.le,
    "greater": operator.gt, "greater_equal": operator.ge,
}  # fmt: skip
_SYMBOL = {
    "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
    "remainder": "%", "power": "**", "left_shift": "<<", "right_shift": ">>",
    "bitwise_or": "|", "bitwise_xor": "^", "bitwise_and": "&", "negative": "unary -",
    "invert": "~",
}  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _loop(op: str, samples: tuple) -> tuple:
    """NumPy's loop dtypes (inputs..., outputs...) of ufunc ``op`` for these inputs."""
    uf = getattr(np, op)
    return tuple(uf.resolve_dtypes(samples + (None,) * uf.nout))


def _weak_kind(op: str, types_: tuple) -> str:
    """The kind two Python scalars compute in (Python's bools do arithmetic as ints)."""
    kind = max((t.kind for t in types_), key=ktypes.KINDS.index)
    bitwise = op in ("bitwise_and", "bitwise_or", "bitwise_xor")
    if kind == "b" and not bitwise and op not in _COMPARISONS:
        kind = "i"
    return kind


def resolve(tr, op: str, types_: tuple, node) -> tuple:
    """``(loop dtypes, weak result)`` of ``op`` on scalars of ``types_``."""
    weak = all(t.weak for t in types_)
    if weak:
        dtype = ktypes.WEAK[_weak_kind(op, types_)].dtype
        samples = (dtype,) * len(types_)
    else:
        samples = tuple(ktypes.sample(t) for t in types_)
    try:
        return _loop(op, samples), weak
    except (TypeError, np._core._exceptions._UFuncNoLoopError) as e:
        names = " and ".join(str(t) for t in types_)
        raise tr.typing(
            node, f"{_SYMBOL.get(op, 'np.' + op)} is not defined for {names}", f"NumPy says: {e}"
        ) from None


def arithmetic(tr, op: str, args: tuple, node) -> Value:
    """An operator or a ufunc applied to scalar values, with NumPy's types and results."""
    from .lower import SNIPPETS

    types_ = tuple(a.type for a in args)
    for t in types_:
        if not isinstance(t, Scalar):
            raise tr.typing(node, f"{_SYMBOL.get(op, 'np.' + op)} is not defined for {t}",
                            "operators work on scalars; index arrays first")  # fmt: skip
    folded = _fold(op, args)
    if folded is not None:
        return folded
    if any(t.kind == "c" for t in types_):
        return _complex(tr, op, args, node)
    loop, weak = resolve(tr, op, types_, node)
    codes = [convert(a, Scalar(d)) for a, d in zip(args, loop)]
    expr = _mixed_comparison(op, types_, codes) or SNIPPETS[op](codes, loop[0])
    out = loop[len(args)]
    if out == np.float16:
        expr = f"nl_round_half({expr})"
    result = Scalar(out, weak and out.kind != "b" or (weak and op in _COMPARISONS))
    return Value(result, expr, nonneg=_nonneg(op, args, out))


def _fold(op: str, args: tuple):
    """Constant operands give a constant result (shapes of shared arrays need them)."""
    if any(a.const is _NO or isinstance(a.const, tuple) for a in args):
        return None
    if not all(a.type.weak for a in args):
        return None
    try:
        value = _PY_OPS[op](*[a.const for a in args])
    except (ArithmeticError, KeyError, TypeError, ValueError):
        return None
    if type(value) is int and not -(2**63) <= value < 2**63:
        return None
    return constant(value)


def _mixed_comparison(op: str, types_: tuple, codes: list):
    """A comparison of a signed and an unsigned integer is exact, as in NumPy."""
    if op not in _COMPARISONS:
        return None
    symbol = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
              "greater": ">", "greater_equal": ">="}[op]  # fmt: skip
    kinds = [t.kind for t in types_]
    if kinds[0] == "i" and kinds[1] == "u":
        return f"(nl_cmp_su((int64_t)({codes[0]}), (uint64_t)({codes[1]})) {symbol} 0)"
    if kinds[0] == "u" and kinds[1] == "i":
        return f"(0 {symbol} nl_cmp_su((int64_t)({codes[1]}), (uint64_t)({codes[0]})))"
    return None


def _nonneg(op: str, args: tuple, out) -> bool:
    if out.kind not in "iu":
        return False
    if out.kind == "u":
        return True
    a = args[0].nonneg
    b = args[1].nonneg if len(args) > 1 else True
    if op in ("add", "multiply", "floor_divide", "maximum", "right_shift"):
        return a and b if op != "maximum" else a or b
    if op == "remainder":
        return b
    if op == "bitwise_and":
        return a or b
    return False


_COMPLEX_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
                "power": "pow", "negative": "neg"}  # fmt: skip


def _complex(tr, op: str, args: tuple, node) -> Value:
    if op not in _COMPLEX_OPS and op not in ("equal", "not_equal"):
        raise tr.typing(node, f"{_SYMBOL.get(op, 'np.' + op)} is not defined for complex numbers")
    loop, weak = resolve(tr, op, tuple(a.type for a in args), node)
    ct = Scalar(loop[0], weak)
    prefix = ktypes.storage_ctype(loop[0])
    codes = [convert(a, ct) for a in args]
    if op in ("equal", "not_equal"):
        expr = f"{prefix}_eq({codes[0]}, {codes[1]})"
        return Value(WEAK_BOOL, expr if op == "equal" else f"(!{expr})")
    return Value(ct, f"{prefix}_{_COMPLEX_OPS[op]}({', '.join(codes)})")


# --- attributes -------------------------------------------------------------------------------

_DIM3 = {"threadIdx": "t", "blockIdx": "b", "blockDim": "bd", "gridDim": "gd"}


def attribute(tr, node) -> Value:
    base = tr.expr(node.value)
    attr = node.attr
    if base.type is None:
        return UNKNOWN
    if base.type is PYOBJ:
        obj = base.obj
        if isinstance(obj, I.Dim3) and attr in ("x", "y", "z"):
            return thread_value(tr, node, f"nl_c.{_DIM3[obj.name]}{attr}")
        try:
            found = getattr(obj, attr)
        except AttributeError:
            raise tr.typing(node, f"{_name(obj)} has no attribute '{attr}'") from None
        if found is I.laneid:
            return thread_value(tr, node, "nl_lane(nl_c)")
        return constant(found)
    if isinstance(base.type, Array):
        return _array_attribute(tr, node, base, attr)
    if isinstance(base.type, Scalar) and attr in ("real", "imag"):
        return _part(base, attr)
    raise tr.typing(node, f"{base.type} has no attribute '{attr}' in kernels")


def thread_value(tr, node, code: str) -> Value:
    if tr.program.scalar:
        raise tr.unsupported(node, "thread indices in a vectorized function",
                             "a vectorized function sees one element; write a cuda.jit kernel "
                             "to use threads")  # fmt: skip
    tr.uses_ctx = True
    return Value(WEAK_INT, code, nonneg=True)


def _array_attribute(tr, node, base: Value, attr: str) -> Value:
    t, ref = base.type, base.arr
    if attr == "shape":
        return _int_tuple(ref.shape)
    if attr == "strides":
        item = t.dtype.itemsize
        return Value(Tuple((WEAK_INT,) * t.ndim), items=tuple(
            Value(WEAK_INT, f"({s} * {item})") for s in ref.strides))  # fmt: skip
    if attr == "ndim":
        return constant(t.ndim)
    if attr == "size":
        return Value(WEAK_INT, "(" + " * ".join(ref.shape) + ")" if ref.shape else "1",
                     nonneg=True)  # fmt: skip
    if attr == "T":
        view = ArrayRef(ref.ptr, ref.shape[::-1], ref.strides[::-1], ref.root)
        return Value(Array(t.dtype, t.ndim, "A" if t.ndim > 1 else t.layout, t.space), arr=view)
    raise tr.typing(node, f"arrays in kernels have shape, strides, ndim, size and T, not '{attr}'")


def _int_tuple(codes: tuple) -> Value:
    items = tuple(_int_value(c) for c in codes)
    return Value(Tuple((WEAK_INT,) * len(codes)), items=items)


def _int_value(code: str) -> Value:
    if code.lstrip("-").isdigit():
        return constant(int(code))
    return Value(WEAK_INT, code, nonneg=True)


def _part(v: Value, attr: str) -> Value:
    t = v.type
    if t.kind != "c":
        return v if attr == "real" else Value(t, literal(0, t.dtype), const=0)
    part = Scalar(np.dtype(np.float32 if t.dtype == np.complex64 else np.float64), t.weak)
    return Value(part, f"{v.code}.{'re' if attr == 'real' else 'im'}")


# --- indexing --------------------------------------------------------------------------------


def subscript(tr, node) -> Value:
    base = tr.expr(node.value)
    if base.type is None:
        return UNKNOWN
    if isinstance(base.type, Tuple):
        return _tuple_item(tr, node, base)
    if not isinstance(base.type, Array):
        raise tr.typing(node, f"{_describe(base)} cannot be indexed")
    indices = _indices(tr, node.slice)
    if indices is None:
        return UNKNOWN
    if len(indices) > base.type.ndim:
        raise tr.typing(node, f"too many indices: {len(indices)} for a {base.type.ndim}-d array")
    if all(not isinstance(i, tuple) for i in indices) and len(indices) == base.type.ndim:
        address = _address(tr, node, base, indices)
        return load(base.type.dtype, address)
    return _view(tr, node, base, indices)


def load(dtype, address: str) -> Value:
    dtype = np.dtype(dtype)
    code = f"((float){address})" if dtype == np.float16 else address
    return Value(Scalar(dtype), code, nonneg=dtype.kind in "bu")


def element(tr, target):
    """``(C lvalue, array value)`` of ``a[i, j]`` as a store target (None if not known yet)."""
    base = tr.expr(target.value)
    if base.type is None:
        return None
    if not isinstance(base.type, Array):
        raise tr.typing(target, f"cannot assign to an element of {_describe(base)}",
                        "kernels assign elements of arrays")  # fmt: skip
    indices = _indices(tr, target.slice)
    if indices is None:
        return None
    if len(indices) != base.type.ndim or any(isinstance(i, tuple) for i in indices):
        raise tr.unsupported(target, "assigning to a slice of an array",
                             f"assign one element at a time (index all {base.type.ndim} "
                             "dimensions with integers)")  # fmt: skip
    return _address(tr, target, base, indices), base


def _tuple_item(tr, node, base: Value) -> Value:
    index = tr.expr(node.slice)
    if index.const is _NO or not isinstance(index.const, (int, np.integer)):
        raise tr.typing(node, "tuples are indexed with integer constants",
                        "write t[0], t[1], ... or unpack the tuple")  # fmt: skip
    k = int(index.const)
    if not -len(base.items) <= k < len(base.items):
        raise tr.typing(node, f"tuple index {k} out of range for a tuple of {len(base.items)}")
    return base.items[k]


def _indices(tr, node):
    """Each index: a Value (an integer) or a (start, stop, step) tuple of Values or None."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    out = []
    for p in parts:
        if isinstance(p, ast.Slice):
            bounds = tuple(None if b is None else tr.expr(b) for b in (p.lower, p.upper, p.step))
            if any(b is not None and b.type is None for b in bounds):
                return None
            out.append(bounds)
            continue
        v = tr.expr(p)
        if v.type is None:
            return None
        if isinstance(v.type, Tuple) and not isinstance(node, ast.Tuple):
            out.extend(v.items)
            continue
        if not (isinstance(v.type, Scalar) and v.type.kind in "iub"):
            raise tr.typing(p, f"an array index must be an integer, not {_describe(v)}",
                            "convert it with int(...)")  # fmt: skip
        out.append(v)
    return out


def _address(tr, node, base: Value, indices: list) -> str:
    """``ptr[offset]`` of an element; negative indices count from the end; bounds-checked
    kernels record an out-of-bounds index instead of reading it."""
    ref = base.arr
    terms = []
    for k, v in enumerate(indices):
        i = convert(v, ktypes.INT64) if v.type.dtype != np.int64 else v.code
        if not v.nonneg:
            i = f"nl_wrap({i}, {ref.shape[k]})"
        if tr.program.boundscheck:
            code = tr.program.check_code(ref.root or "a local array", k, tr.where(node))
            tr.uses_ctx = True
            i = f"nl_check({i}, {ref.shape[k]}, nl_c.err, {code})"
        stride = ref.strides[k]
        terms.append(i if stride == "1" else f"{i} * {stride}")
    return f"{ref.ptr}[{' + '.join(terms) or '0'}]"


def _view(tr, node, base: Value, indices: list) -> Value:
    """A view of an array: integer indices drop axes, slices keep them (Python's rules)."""
    ref, t = base.arr, base.type
    offset, shape, strides = [], [], []
    contiguous = t.layout == "C"
    for k in range(t.ndim):
        index = indices[k] if k < len(indices) else (None, None, None)
        n, s = ref.shape[k], ref.strides[k]
        if not isinstance(index, tuple):
            i = convert(index, ktypes.INT64)
            offset.append(f"{i if index.nonneg else f'nl_wrap({i}, {n})'} * {s}")
            continue
        start, length, step = _slice(tr, node, index, n)
        if start != "0":
            offset.append(f"{start} * {s}")
        shape.append(length)
        strides.append(s if step == 1 else f"({s} * {step})")
        contiguous = contiguous and (
            index == (None, None, None) or (len(shape) == 1 and k == t.ndim - 1 and step == 1)
        )
    ptr = f"({ref.ptr} + {' + '.join(offset)})" if offset else ref.ptr
    layout = "C" if contiguous and (not shape or strides[-1] == "1") else "A"
    return Value(Array(t.dtype, len(shape), layout, t.space),
                 arr=ArrayRef(ptr, tuple(shape), tuple(strides), ref.root))  # fmt: skip


def _slice(tr, node, index: tuple, n: str) -> tuple:
    """(start, length, step) of ``start:stop:step`` over an axis of length ``n``."""
    start, stop, step_v = index
    step = 1
    if step_v is not None:
        if (
            step_v.const is _NO
            or not isinstance(step_v.const, (int, np.integer))
            or not step_v.const
        ):
            raise tr.unsupported(node, "a slice step that is not a nonzero integer constant",
                                 "use a constant step such as a[::2]")  # fmt: skip
        step = int(step_v.const)
    if start is None and stop is None and step == 1:
        return "0", n, 1
    first = (f"nl_slice_bound({convert(start, ktypes.INT64)}, {n}, {step})" if start is not None
             else ("0" if step > 0 else f"({n} - 1)"))  # fmt: skip
    last = (f"nl_slice_bound({convert(stop, ktypes.INT64)}, {n}, {step})" if stop is not None
            else (n if step > 0 else "-1"))  # fmt: skip
    return first, f"nl_slice_len({first}, {last}, {step})", step


# --- calls ------------------------------------------------------------------------------------


def call(tr, node) -> Value:
    if isinstance(node.func, ast.Attribute):
        base = tr.expr(node.func.value)
        if base.type is None:
            return UNKNOWN
        if base.type is not PYOBJ:
            return _method(tr, node, base, node.func.attr)
    func = tr.expr(node.func)
    if func.type is None:
        return UNKNOWN
    if func.type is not PYOBJ:
        raise tr.typing(node, f"{_describe(func)} is not callable")
    fn = func.obj
    args = [tr.expr(a) for a in node.args]
    kwargs = {k.arg: tr.expr(k.value) for k in node.keywords}
    if any(a.type is None for a in args + list(kwargs.values())):
        return UNKNOWN
    handler = _handler(fn)
    if handler is not None:
        return handler(tr, node, args, kwargs)
    if isinstance(fn, I.Intrinsic):
        raise tr.unsupported(node, f"cuda.{fn.name} as a value", "call it")
    return _device_call(tr, node, fn, args, kwargs)


def statement_call(tr, node) -> bool:
    """Calls that are statements of their own (barriers); True when handled."""
    func = node.func
    try:
        value = tr.expr(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
    except KernelError:
        return False
    if value is None or value.type is not PYOBJ:
        return False
    fn = value.obj
    if fn is I.syncthreads or fn is I.syncwarp:
        _no_threads(tr, node)
        if fn is I.syncwarp:
            args = [tr.expr(a) for a in node.args]
            mask = convert(args[0], Scalar(np.dtype(np.uint32))) if args else "0xffffffffu"
            tr.emit(kir.Barrier("warp", mask, node.lineno))
        else:
            tr.emit(kir.Barrier("block", line=node.lineno))
        return True
    if fn is I.threadfence or fn is I.threadfence_block:
        tr.emit(kir.Do("nl_threadfence()", node.lineno))
        return True
    return False


def _no_threads(tr, node) -> None:
    if tr.program.scalar:
        raise tr.unsupported(node, "barriers in a vectorized function",
                             "write a cuda.jit kernel to synchronize threads")  # fmt: skip
    if tr.mode == "device":
        raise tr.unsupported(node, "a barrier inside a device function",
                             "call cuda.syncthreads() in the kernel itself")  # fmt: skip
    tr.uses_ctx = True


def _handler(fn):
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


def _method(tr, node, base: Value, name: str) -> Value:
    if isinstance(base.type, Scalar) and name in ("conjugate", "conj") and not node.args:
        if base.type.kind != "c":
            return base
        return Value(base.type, f"{ktypes.storage_ctype(base.type.dtype)}_conj({base.code})")
    raise tr.unsupported(
        node,
        f"the method {name}() of {base.type}",
        "kernels call functions (math, cmath, NumPy ufuncs, device functions)",
    )


def _device_call(tr, node, fn, args: list, kwargs: dict) -> Value:
    """A call of another Python function: compiled with the caller for these argument types."""
    from .cuda.dispatcher import Dispatcher

    if isinstance(fn, Dispatcher):
        if not fn.device:
            raise tr.unsupported(node, f"calling the kernel {fn.__name__} from a kernel",
                                 "decorate it with @cuda.jit(device=True)")  # fmt: skip
        fn = fn.py_func
    fn = getattr(fn, "pyfunc", fn) if not isinstance(fn, pytypes.FunctionType) else fn
    if not isinstance(fn, pytypes.FunctionType):
        raise tr.typing(
            node,
            f"unknown function {_name(fn)}: kernels call math and cmath "
            "functions, NumPy ufuncs, numloom.cuda's API and Python functions "
            "defined in a .py file",
            "make the helper a function decorated with @cuda.jit(device=True)",
        )
    args = _bind(tr, node, fn, args, kwargs)
    types_ = tuple(a.type for a in args)
    for a in args:
        if a.type is PYOBJ:
            raise tr.typing(node, f"cannot pass {_describe(a)} to {fn.__name__}")
    try:
        spec = tr.program.function(fn, types_, tr.where(node))
    except KernelError as e:
        tr.deferred.append(e)
        return UNKNOWN
    if spec.uses_ctx:
        if tr.program.scalar:
            raise tr.unsupported(node, f"{fn.__name__} uses thread indices or checked indexing",
                                 "a vectorized function sees one element")  # fmt: skip
        tr.uses_ctx = True
    for k in spec.writes:
        root = args[k].arr.root
        if root is not None:
            tr.written.add(root)
    code_args = (["nl_c"] if spec.uses_ctx else []) + [c for a in args for c in _flatten(a)]
    code = f"{spec.name}({', '.join(code_args)})"
    if isinstance(spec.ret, Tuple):
        temp = tr.temp(tr.program.struct(spec.ret.items))
        tr.emit(kir.Assign(temp, code, node.lineno))
        items = tuple(Value(t, f"{temp}.f{k}") for k, t in enumerate(spec.ret.items))
        return Value(spec.ret, items=items)
    if spec.ret is ktypes.NONE:
        return Value(ktypes.NONE, code)
    return Value(spec.ret, code)


def _bind(tr, node, fn, args: list, kwargs: dict) -> list:
    import inspect

    try:
        bound = inspect.signature(fn).bind(*range(len(args)), **dict.fromkeys(kwargs, None))
    except TypeError as e:
        raise tr.typing(node, f"bad call of {fn.__name__}: {e}") from None
    out = []
    for name, p in inspect.signature(fn).parameters.items():
        if name in kwargs:
            out.append(kwargs[name])
        elif name in bound.arguments:
            out.append(args[bound.arguments[name]])
        elif p.default is not inspect.Parameter.empty:
            out.append(constant(p.default))
    return out


def _flatten(v: Value) -> list:
    if isinstance(v.type, Array):
        return [v.arr.ptr, *v.arr.shape, *v.arr.strides]
    if isinstance(v.type, Tuple):
        return [c for item in v.items for c in _flatten(item)]
    return [v.code]


def _name(obj) -> str:
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return f"{module}.{name}" if module and module != "builtins" else name


def _describe(v: Value) -> str:
    if v.type is PYOBJ:
        return _name(v.obj)
    return f"a value of type {v.type}"


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
    from .translate import promote

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
    raise tr.unsupported(node, "print() in a kernel",
                         "write values to an array and print them after the launch")  # fmt: skip


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
    from .lower import SNIPPETS

    uf = _resolve_ufunc(tr, node)
    name = uf.__name__
    if kwargs:
        raise tr.unsupported(node, f"keyword arguments of np.{name} in kernels")
    if len(args) != uf.nin:
        raise tr.typing(node, f"np.{name} takes {uf.nin} arguments, {len(args)} given")
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
        if not isinstance(ary.type, Array):
            raise tr.typing(node, f"cuda.atomic.{name} works on an array, not {_describe(ary)}")
        dtype = ary.type.dtype
        ints_only = name in ("and_", "or_", "xor")
        if str(dtype) not in _ATOMIC_TYPES or (ints_only and dtype.kind == "f"):
            allowed = [t for t in _ATOMIC_TYPES if not (ints_only and t.startswith("float"))]
            raise tr.typing(node, f"cuda.atomic.{name} on a {dtype} array",
                            f"atomics work on {', '.join(allowed)} arrays")  # fmt: skip
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


# --- for loops ---------------------------------------------------------------------------------


def range_loop(tr, s) -> None:
    """``for i in range(...)``: a C loop over a counter, Python's bounds evaluated once."""
    it = s.iter
    func = tr.expr(it.func) if isinstance(it, ast.Call) else None
    if func is None or func.type is not PYOBJ or func.obj is not builtins.range:
        raise tr.unsupported(s.iter, "a for loop over something other than range()",
                             "loop over indices: for i in range(len(a))")  # fmt: skip
    if not isinstance(s.target, ast.Name):
        raise tr.unsupported(s.target, "a for loop target that is not a name")
    args = [tr.expr(a) for a in it.args]
    if not 1 <= len(args) <= 3 or it.keywords:
        raise tr.typing(it, "range() takes 1 to 3 integers")
    if any(a.type is None for a in args):
        bounds = [Value(WEAK_INT, "0")] * 3
    else:
        for a in args:
            if not (isinstance(a.type, Scalar) and a.type.kind in "iub"):
                raise tr.typing(it, f"range() of {_describe(a)}", "range takes integers")
        bounds = [constant(0)] + args if len(args) == 1 else args
        bounds = bounds + [constant(1)] if len(bounds) == 2 else bounds
    start, stop, step = bounds
    if step.const == 0:
        raise tr.typing(it, "range() step must not be zero")
    stop_c, step_c = (_once(tr, v) for v in (stop, step))
    counter = tr.temp("int64_t")
    # A step known to be >= 0 counts up (a zero step loops forever in either form).
    sign = (1 if step.nonneg else 0) if step.const is _NO else (1 if step.const > 0 else -1)
    tr.stack.append([])
    nonneg = start.nonneg and sign == 1
    tr.assign_name(s.target.id, Value(WEAK_INT, counter, nonneg=nonneg), s.target, s)
    tr.block(s.body)
    body = tuple(tr.stack.pop())
    start_c = convert(start, ktypes.INT64) if start.type is not None else "0"
    tr.emit(kir.For(counter, start_c, stop_c, step_c, body, sign, s.lineno))


def _once(tr, v: Value) -> str:
    """A loop bound as a literal or a local evaluated before the loop."""
    if v.type is None:
        return "0"
    code = convert(v, ktypes.INT64)
    if v.const is not _NO:
        return code
    temp = tr.temp("int64_t")
    tr.emit(kir.Assign(temp, code, tr.line))
    return temp


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
}  # fmt: skip
CALLS.update({getattr(math, name): _math(name) for name in _MATH if hasattr(math, name)})
CALLS.update({getattr(cmath, name): _cmath(name) for name in _CMATH})
CALLS.update({getattr(I.atomic, name): _atomic(name)
              for name in ("add", "sub", "max", "min", "exch", "cas", "and_", "or_", "xor",
                           "compare_and_swap")})  # fmt: skip

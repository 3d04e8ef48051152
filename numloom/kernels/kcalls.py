"""Kernel expressions: operators, attributes, indexing, calls and ``range`` loops.

Operators use the fusion compiler's op snippets (``snippets.SNIPPETS``) with NumPy's own type
resolution, so ``a // b`` in a kernel and ``np.floor_divide`` in an array expression are the
same C. What a call can reach, one row per function, is in ``klib.py``.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import operator
import types as pytypes

import numpy as np

from ..compile import kir
from . import ktypes
from .cuda import intrinsics as I
from .kerrors import KernelError
from .ktypes import WEAK_BOOL, WEAK_INT, Array, Scalar, Tuple
from .kvalues import _NO, PYOBJ, UNKNOWN, ArrayRef, Value, constant, convert, literal

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
    from ..compile.snippets import SNIPPETS

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
        return tr.program.global_value(found)
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
    from .klib import handler_for

    handler = handler_for(fn)
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
    if fn is builtins.print:
        from .klib import print_statement

        print_statement(tr, node)
        return True
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
    if isinstance(getattr(fn, "py_func", None), pytypes.FunctionType):
        fn = fn.py_func  # numloom.jit's (numba.jit's) wrapper: the function it wraps
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
    if not tr.program.scalar and synchronizes(fn):
        return _inline_call(tr, node, fn, args)
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


_SYNC = (I.syncthreads, I.syncwarp, I.shfl_sync, I.shfl_up_sync, I.shfl_down_sync,
         I.shfl_xor_sync)  # fmt: skip


def synchronizes(fn, seen: frozenset = frozenset()) -> bool:
    """Whether Python function ``fn`` calls a barrier or a shuffle, directly or through the
    functions it calls (found in its source, names resolved as the translator resolves them)."""
    from .cuda.dispatcher import Dispatcher
    from .ksource import environment, function_ast

    if fn in seen:
        return False
    try:
        _, tree = function_ast(fn)
    except KernelError:
        return False
    env = environment(fn)
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        callee = _resolve(n.func, env)
        if any(callee is s for s in _SYNC):
            return True
        if isinstance(callee, Dispatcher) and callee.device or isinstance(
            getattr(callee, "py_func", None), pytypes.FunctionType
        ):
            callee = callee.py_func
        if isinstance(callee, pytypes.FunctionType) and synchronizes(callee, seen | {fn}):
            return True
    return False


def _resolve(node, env: dict):
    """The object a name or a dotted name refers to (None when unknown)."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, env)
        try:
            return None if base is None else getattr(base, node.attr, None)
        except Exception:  # noqa: BLE001 (thread indices refuse attribute access in Python)
            return None
    return None


def _inline_call(tr, node, fn, args: list) -> Value:
    """A call of a function that synchronizes threads: its statements compiled into the
    caller's (so barriers split the CPU's phases as the kernel's own do), its variables
    renamed apart, its result in a temporary the caller reads."""
    from .translate import Translator

    program = tr.program
    if fn in program.active:
        raise tr.unsupported(node, f"{fn.__name__} calls itself: recursion is not supported "
                             "in kernels", "write the recursion as a loop")  # fmt: skip
    program.inlined += 1
    program.active.append(fn)
    try:
        sub = Translator(program, fn, tuple(a.type for a in args), "inline", bound=tuple(args))
        body, ret, value = sub.inline()
    except KernelError as e:  # the caller's types may not be final yet
        tr.deferred.append(e)
        return UNKNOWN
    finally:
        program.active.pop()
    for v in sub.locals_.values():
        tr.locals_.setdefault(v.name, v)
    for v in sub.shared_decls:  # one shared array however many calls (as CUDA's __shared__)
        if all(d.name != v.name for d in tr.shared_decls):
            tr.shared_decls.append(v)
    tr.uses_ctx = tr.uses_ctx or sub.uses_ctx
    tr.written |= sub.written_roots()  # (its variables' names are its own)
    if sub.filename == tr.filename:
        for line, text in sub.lines.items():
            tr.lines.setdefault(line, text)
    else:  # its line numbers are another file's: no comments from them
        body = _without_lines(body)
    for s in body:
        tr.emit(s)
    if value is None or value.type is None or ret is ktypes.NONE:
        return Value(ktypes.NONE)
    if isinstance(ret, Tuple):
        items = []
        for v, t in zip(value.items, ret.items):
            temp = tr.temp(ktypes.ctype(t))
            tr.emit(kir.Assign(temp, convert(v, t), node.lineno))
            items.append(Value(t, temp))
        return Value(ret, items=tuple(items))
    temp = tr.temp(ktypes.ctype(ret))
    tr.emit(kir.Assign(temp, convert(value, ret), node.lineno))
    return Value(ret, temp)


def _without_lines(stmts) -> list:
    out = []
    for s in stmts:
        if hasattr(s, "line"):
            s = dataclasses.replace(s, line=0)
        for part in ("then", "orelse", "body"):
            if isinstance(getattr(s, part, None), tuple):
                s = dataclasses.replace(s, **{part: tuple(_without_lines(getattr(s, part)))})
        out.append(s)
    return out


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
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:  # (an instance: its class, not its repr, which may print whole arrays)
        cls = type(obj)
        module, name = cls.__module__, f"{cls.__qualname__} object"
        return f"a {module}.{name}" if module != "builtins" else f"a {name}"
    return f"{module}.{name}" if module and module != "builtins" else name


def _describe(v: Value) -> str:
    if v.type is PYOBJ:
        return _name(v.obj)
    return f"a value of type {v.type}"


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

"""numloom's ufuncs: NumPy's type resolution, broadcasting and errors, recorded as MAP nodes.

Each call checks its operands exactly as NumPy would (raising NumPy's exception and message at
the user's call) and returns a lazy array. Dtype resolution runs once per combination of operand
dtypes: NumPy itself resolves the loop, on 0-d stand-ins, so promotion (NEP 50, weak Python
scalars) and casting errors are NumPy's by construction.
"""

from __future__ import annotations

import numpy as _np

from .array import ndarray, operand, result
from .dag import Node, Op, node
from .ufunc_table import COMPARISONS
from .views import broadcast_node, broadcast_shapes

_PY_SCALARS = (bool, int, float, complex)
_NO_VALUE = _np._NoValue


class ufunc:
    """A NumPy ufunc that records its work lazily (``numloom.add``, ``numloom.sin``...)."""

    def __init__(self, np_ufunc):
        self._np = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.__doc__ = np_ufunc.__doc__
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout
        self.nargs = np_ufunc.nargs
        self.ntypes = np_ufunc.ntypes
        self.types = np_ufunc.types
        self.identity = np_ufunc.identity
        self.signature = np_ufunc.signature

    def __repr__(self) -> str:
        return f"<numloom ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=True, casting="same_kind", dtype=None, **kwargs):
        if len(args) > self.nin:
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            args, out = args[: self.nin], args[self.nin :]
        if len(args) != self.nin:
            raise TypeError(
                f"{self.__name__}() takes from {self.nin} to {self.nargs} positional arguments "
                f"but {len(args)} were given"
            )
        _check_kwargs(self.__name__, kwargs)
        return apply(self, args, out, where, casting, dtype)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=True):  # fmt: skip
        from .reductions import ufunc_reduce

        return ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        from .reductions import ufunc_accumulate

        return ufunc_accumulate(self, array, axis, dtype, out)

    def outer(self, A, B, /, **kwargs):
        a, b = operand(A), operand(B)
        if isinstance(a, ndarray) and isinstance(b, ndarray):
            from .views import reshape_array

            a = reshape_array(a, a.shape + (1,) * b.ndim)
        return self(a, b, **kwargs)

    def at(self, a, indices, b=None):
        from .fallback import call_numpy

        return call_numpy(f"{self.__name__}.at", getattr(self._np, "at"), a, indices, b)


def _check_kwargs(name: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key in ("order", "subok") or (key == "signature" and value is None):
            continue
        raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")


# --- dtype resolution ----------------------------------------------------------------------

_resolved: dict = {}


def _type_key(x):
    """What decides the loop: a dtype, or a Python scalar type (weak, NEP 50)."""
    if isinstance(x, ndarray):
        return x.dtype
    if type(x) is bool:
        return _np.dtype(bool)
    if isinstance(x, _PY_SCALARS):
        return type(x)
    return x.dtype  # NumPy scalar: strong


def _stand_in(x, key):
    if isinstance(key, _np.dtype):
        return _np.zeros((), key)
    return x  # Python scalar: its value matters (out-of-bounds integers raise)


def resolve(uf: ufunc, inputs: tuple, out_dtypes: tuple, dtype, casting: str) -> tuple:
    """Loop dtypes ``(in..., out...)`` for this call; raises NumPy's error for a bad call."""
    keys = tuple(_type_key(x) for x in inputs)
    cache_key = (uf.__name__, keys, out_dtypes, dtype, casting)
    loop = _resolved.get(cache_key)
    if loop is None:
        loop = _resolve_slow(uf, inputs, keys, out_dtypes, dtype, casting)
        _resolved[cache_key] = loop
    for x, key, loop_dtype in zip(inputs, keys, loop):
        if key is int and loop_dtype.kind in "iu":
            loop = _fit_python_int(uf, x, loop, loop_dtype)
    return loop


def _resolve_slow(uf, inputs, keys, out_dtypes, dtype, casting) -> tuple:
    stand_ins = [_stand_in(x, k) for x, k in zip(inputs, keys)]
    outs = tuple(_np.zeros((), d) for d in out_dtypes) if out_dtypes else None
    kwargs = {"casting": casting}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if outs:
        kwargs["out"] = outs if len(outs) > 1 else outs[0]
    with _np.errstate(all="ignore"):
        uf._np(*stand_ins, **kwargs)  # raises NumPy's exception for a bad call
    slots = list(keys) + [None] * uf.nout
    if dtype is not None:
        slots[uf.nin] = _np.dtype(dtype)
    return tuple(uf._np.resolve_dtypes(tuple(slots), casting=casting))


def _fit_python_int(uf, value: int, loop: tuple, loop_dtype) -> tuple:
    info = _np.iinfo(loop_dtype)
    if info.min <= value <= info.max:
        return loop
    if uf.__name__ in COMPARISONS:
        # NumPy compares out-of-range Python ints exactly: widen the loop.
        wide = _np.dtype(_np.int64) if -(2**63) <= value < 2**63 else _np.dtype(_np.float64)
        if any(d.kind == "u" and d.itemsize == 8 for d in loop[: uf.nin]):
            wide = _np.dtype(_np.float64)
        return (wide,) * uf.nin + loop[uf.nin :]
    raise OverflowError(f"Python integer {value} out of bounds for {loop_dtype}")


# --- building the nodes --------------------------------------------------------------------


def scalar_node(value, dtype) -> Node:
    """A 0-d constant of ``dtype`` holding a Python or NumPy scalar, converted as NumPy does."""
    with _np.errstate(all="ignore"):
        v = _np.asarray(value).astype(dtype)[()]
    return node(Op.CONST, (), v, (), dtype)


def as_loop_node(x, dtype, shape) -> Node:
    """Operand ``x`` as a node of ``dtype`` broadcast to ``shape``."""
    if isinstance(x, ndarray):
        n = x._node()
        if n.dtype != dtype:
            n = node(Op.CAST, (n,), None, n.shape, dtype)
    else:
        n = scalar_node(x, dtype)
    return broadcast_node(n, shape)


def _shape(x) -> tuple:
    return x.shape if isinstance(x, ndarray) else ()


def _raise_broadcast_error(uf, inputs, outs):
    """Let NumPy raise its own broadcasting error, on zero-stride stand-ins (no memory used)."""
    stand_ins = [_np.broadcast_to(_np.zeros((), x.dtype), x.shape) if isinstance(x, ndarray)
                 else x for x in inputs]  # fmt: skip
    out_stand_ins = tuple(
        _np.lib.stride_tricks.as_strided(_np.zeros(1, o.dtype), o.shape, (0,) * o.ndim)
        for o in outs
    )
    kwargs = {"out": out_stand_ins} if out_stand_ins else {}
    with _np.errstate(all="ignore"):
        uf._np(*stand_ins, **kwargs)
    raise AssertionError("numloom and NumPy disagree about broadcasting")  # pragma: no cover


def _normalize_out(out, nout: int) -> tuple:
    if out is None:
        return ()
    if not isinstance(out, tuple):
        out = (out,)
    if len(out) != nout:
        raise ValueError(f"The 'out' tuple must have exactly {nout} entries: one per ufunc output")
    if all(o is None for o in out):
        return ()
    return out


def apply(uf: ufunc, args: tuple, out, where, casting: str, dtype):
    """Record ``uf(*args)`` and return its lazy result(s), written into ``out`` if given."""
    inputs = tuple(operand(a) for a in args)
    outs = _normalize_out(out, uf.nout)
    out_arrays = tuple(operand(o, for_output=True) for o in outs)
    out_dtypes = tuple(o.dtype for o in out_arrays)
    loop = resolve(uf, inputs, out_dtypes, None if dtype is None else _np.dtype(dtype), casting)
    shape = broadcast_shapes(*[_shape(x) for x in inputs], *[o.shape for o in out_arrays])
    if shape is None or any(o.shape != shape for o in out_arrays):
        _raise_broadcast_error(uf, inputs, out_arrays)
    srcs = tuple(as_loop_node(x, d, shape) for x, d in zip(inputs, loop))
    name = uf.__name__
    if uf.nout == 1:
        nodes = (node(Op.MAP, srcs, name, shape, loop[uf.nin]),)
    else:
        nodes = tuple(
            node(Op.MAP, srcs, f"{name}.{k}", shape, loop[uf.nin + k]) for k in range(uf.nout)
        )
    if where is not True:
        nodes = _apply_where(where, nodes, out_arrays, shape)
    if out_arrays:
        for o, n, target in zip(out_arrays, nodes, outs):
            o._assign(n)
            if target is not o:  # a host NumPy array given as out: copy the result back
                target[...] = o.get()
        results = tuple(outs)
    else:
        results = tuple(result(n) for n in nodes)
    return results[0] if uf.nout == 1 else results


def _apply_where(where, nodes, out_arrays, shape):
    mask = as_loop_node(operand(where), _np.dtype(bool), shape)
    kept = []
    for k, n in enumerate(nodes):
        if out_arrays:  # where the mask is False, out keeps its value: select in out's dtype
            old = out_arrays[k]._node()
            if n.dtype != old.dtype:
                n = node(Op.CAST, (n,), None, n.shape, old.dtype)
        else:
            old = scalar_node(0, n.dtype)
        kept.append(node(Op.MAP, (mask, n, broadcast_node(old, shape)), "where", shape, n.dtype))
    return tuple(kept)

"""Reductions and scans: sum, prod, max, min, any, all, argmax, argmin, mean, var, std,
cumsum, cumprod, count_nonzero, and the ufuncs' ``reduce`` and ``accumulate``.

Each reduction is one REDUCE node over normalized axes, in the dtype NumPy would use; mean, var
and std follow NumPy's own formulas (``numpy/_core/_methods.py``) so results match NumPy's.
Dtypes and errors come from NumPy run on a stand-in of at most one element per axis.
"""

from __future__ import annotations

import builtins

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from .array import asarray, ndarray, result
from .dag import Op, node, prod as _size_of
from .views import reshape_array

_NO_VALUE = _np._NoValue
_INTEGERS_AND_BOOL = "biu"


def _stand_in(a: ndarray):
    """Zeros of a's dtype with each axis cut to at most one element (zero-size kept)."""
    return _np.zeros(tuple(builtins.min(n, 1) for n in a.shape), a.dtype)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def _finish(n, a: ndarray, axes: tuple, keepdims: bool, out):
    """Wrap a reduced node as an array; restore reduced axes as 1s for keepdims; fill out."""
    r = result(n, a.device)
    if keepdims:
        r = reshape_array(r, tuple(1 if k in axes else s for k, s in enumerate(a.shape)))
    if out is not None:
        out._assign(r._node())
        return out
    return r


def _reduce(kind: str, a, axis, dtype, out, keepdims, where, np_fn, initial=_NO_VALUE):
    """One REDUCE node; NumPy's ``np_fn`` on a stand-in gives the dtype and raises errors."""
    a = asarray(a)
    kwargs = {} if initial is _NO_VALUE else {"initial": initial}
    if dtype is not None:
        kwargs["dtype"] = dtype
    probe = np_fn(_stand_in(a), axis=axis, **kwargs)
    out_dtype = _np.asarray(probe).dtype
    axes = _axes(axis, a.ndim)
    src = a._node()
    if kind in ("any", "all") and src.dtype != bool:
        src = node(Op.CAST, (src,), None, src.shape, bool)
    elif kind in ("sum", "prod") and src.dtype != out_dtype:
        src = node(Op.CAST, (src,), None, src.shape, out_dtype)
    if where is not True:
        src = _masked(src, where, kind, initial)
    shape = tuple(s for k, s in enumerate(a.shape) if k not in axes)
    n = node(Op.REDUCE, (src,), (kind, axes), shape, src.dtype)
    if initial is not _NO_VALUE:
        n = _with_initial(kind, n, initial)
    if n.dtype != out_dtype:
        n = node(Op.CAST, (n,), None, n.shape, out_dtype)
    return _finish(n, a, axes, keepdims, out)


def _masked(src, where, kind, initial):
    """Elements outside ``where`` replaced by the reduction's identity (or ``initial``)."""
    from .numpy_api import where as select

    identity = {"sum": 0, "prod": 1, "any": False, "all": True}.get(kind)
    if initial is not _NO_VALUE:
        identity = initial
    if identity is None:
        raise ValueError(f"reduction operation '{kind}' does not have an identity, so to use "
                         f"a where mask one has to specify 'initial'")  # fmt: skip
    picked = select(where, result(src), src.dtype.type(identity))
    return picked._node()


def _with_initial(kind, n, initial):
    from .ufuncs import apply
    from .numpy_api import UFUNCS_BY_NAME

    name = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[kind]
    combined = apply(UFUNCS_BY_NAME[name], (result(n), n.dtype.type(initial)), None, True,
                     "same_kind", None)  # fmt: skip
    return combined._node()


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("sum", a, axis, dtype, out, keepdims, where, _np.sum, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("prod", a, axis, dtype, out, keepdims, where, _np.prod, initial)


def max(a, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("max", a, axis, None, out, keepdims, where, _np.max, initial)


def min(a, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("min", a, axis, None, out, keepdims, where, _np.min, initial)


amax = max
amin = min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("any", a, axis, None, out, keepdims, where, _np.any)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("all", a, axis, None, out, keepdims, where, _np.all)


def _arg_reduce(kind: str, a, axis, out, keepdims, np_fn):
    a = asarray(a)
    np_fn(_stand_in(a), axis=axis)  # NumPy's errors (empty sequences, bad axis)
    if axis is None:
        flat = reshape_array(a, (a.size,))
        n = node(Op.REDUCE, (flat._node(),), (kind, (0,)), (), _np.intp)
        r = result(n, a.device)
        if keepdims:
            r = reshape_array(r, (1,) * a.ndim)
    else:
        axes = _axes(axis, a.ndim)
        shape = tuple(s for k, s in enumerate(a.shape) if k not in axes)
        r = result(node(Op.REDUCE, (a._node(),), (kind, axes), shape, _np.intp), a.device)
        if keepdims:
            r = reshape_array(r, tuple(1 if k in axes else s for k, s in enumerate(a.shape)))
    if out is not None:
        out._assign(r._node())
        return out
    return r


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmax", a, axis, out, keepdims, _np.argmax)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmin", a, axis, out, keepdims, _np.argmin)


def _count(a: ndarray, axes: tuple) -> int:
    return _size_of(a.shape[k] for k in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """NumPy's mean: a sum in float64 for integers (float32 for float16), divided by the count."""
    from .numpy_api import divide

    a = asarray(a)
    _np.mean(_stand_in(a), axis=axis, dtype=dtype)  # NumPy's errors
    is_float16 = dtype is None and a.dtype == _np.float16
    if dtype is None and a.dtype.kind in _INTEGERS_AND_BOOL:
        dtype = _np.float64
    elif is_float16:
        dtype = _np.float32
    total = sum(a, axis, dtype, None, keepdims, where=where)
    count = _count(a, _axes(axis, a.ndim)) if where is True else _where_count(a, axis, where,
                                                                               keepdims)  # fmt: skip
    r = divide(total, count, casting="unsafe", dtype=total.dtype)
    if is_float16:
        r = r.astype(_np.float16)
    if out is not None:
        out._assign(r._node())
        return out
    return r


def _where_count(a, axis, where, keepdims):
    from .numpy_api import broadcast_to

    return sum(broadcast_to(asarray(where), a.shape), axis, _np.intp, None, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NO_VALUE):  # fmt: skip
    """NumPy's two-pass variance: mean, squared deviations, sum, divide by count - ddof."""
    from .numpy_api import conjugate, divide, multiply, real, subtract

    a = asarray(a)
    if correction is not _NO_VALUE:
        ddof = correction
    _np.var(_stand_in(a), axis=axis, dtype=dtype)  # NumPy's errors
    if dtype is None and a.dtype.kind in _INTEGERS_AND_BOOL:
        dtype = _np.float64
    count = _count(a, _axes(axis, a.ndim))
    arrmean = sum(a, axis, dtype, None, True, where=where)
    arrmean = divide(arrmean, count, casting="unsafe", dtype=arrmean.dtype)
    x = subtract(a, arrmean)
    if a.dtype.kind in "fiu":
        x = multiply(x, x)
    elif a.dtype.kind == "c":
        x = real(multiply(x, conjugate(x)))
    else:
        x = multiply(x, x)
    total = sum(x, axis, dtype, None, keepdims, where=where)
    r = divide(total, builtins.max(count - ddof, 0), casting="unsafe", dtype=total.dtype)
    if out is not None:
        out._assign(r._node())
        return out
    return r


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NO_VALUE):  # fmt: skip
    from .numpy_api import sqrt

    r = sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, correction=correction))
    if out is not None:
        out._assign(r._node())
        return out
    return r


def count_nonzero(a, axis=None, *, keepdims=False):
    """Count of non-zero values; with ``axis=None`` a Python int, as NumPy returns."""
    a = asarray(a)
    counted = sum(a.astype(bool), axis, _np.intp, None, keepdims)
    if axis is None and not keepdims:
        return int(counted)
    return counted


def ptp(a, axis=None, out=None, keepdims=False):
    from .numpy_api import subtract

    return subtract(max(a, axis, None, keepdims), min(a, axis, None, keepdims), out=out)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    from .numpy_api import broadcast_to, divide, multiply, result_type

    a = asarray(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scale = _count(a, _axes(axis, a.ndim))
        return (avg, avg.dtype.type(scale)) if returned else avg
    w = asarray(weights)
    dtype = result_type(a.dtype, w.dtype, _np.float64 if a.dtype.kind in "biu" else a.dtype)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1 or w.shape[0] != a.shape[axis]:
            _np.average(_stand_in(a), axis, _np.zeros(w.shape))  # NumPy's error
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = broadcast_to(reshape_array(w, tuple(shape)), a.shape)
    scl = sum(w, axis, dtype, None, keepdims)
    avg = divide(sum(multiply(a, w), axis, dtype, None, keepdims), scl)
    return (avg, scl) if returned else avg


# --- scans -----------------------------------------------------------------------------------


def _scan(kind: str, a, axis, dtype, out, np_fn):
    a = asarray(a)
    probe = np_fn(_stand_in(a), axis=axis, dtype=dtype)
    if axis is None:
        a = reshape_array(a, (a.size,))
        axis = 0
    (axis,) = normalize_axis_tuple(axis, a.ndim)
    src = a._node()
    if src.dtype != probe.dtype:
        src = node(Op.CAST, (src,), None, src.shape, probe.dtype)
    r = result(node(Op.SCAN, (src,), (kind, axis), src.shape, src.dtype), a.device)
    if out is not None:
        out._assign(r._node())
        return out
    return r


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("cumsum", a, axis, dtype, out, _np.cumsum)


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("cumprod", a, axis, dtype, out, _np.cumprod)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    if include_initial:
        raise NotImplementedError("cumulative_sum(include_initial=True) is not supported")
    x = asarray(x)
    if axis is None and x.ndim > 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                         "is required.")  # fmt: skip
    return cumsum(x, axis, dtype, out)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    if include_initial:
        raise NotImplementedError("cumulative_prod(include_initial=True) is not supported")
    x = asarray(x)
    if axis is None and x.ndim > 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                         "is required.")  # fmt: skip
    return cumprod(x, axis, dtype, out)


# --- ufunc.reduce and ufunc.accumulate --------------------------------------------------------

_REDUCE_KINDS = {
    "add": (sum, True),
    "multiply": (prod, True),
    "maximum": (max, False),
    "minimum": (min, False),
    "logical_or": (any, False),
    "logical_and": (all, False),
}


def ufunc_reduce(uf, array, axis, dtype, out, keepdims, initial, where):
    entry = _REDUCE_KINDS.get(uf.__name__)
    if entry is None or (uf.__name__ in ("logical_or", "logical_and") and dtype is not None):
        from .fallback import call_numpy

        return call_numpy(f"{uf.__name__}.reduce", uf._np.reduce, array, axis=axis, dtype=dtype,
                          out=out, keepdims=keepdims, initial=initial, where=where)  # fmt: skip
    fn, takes_dtype = entry
    kwargs = {"where": where}
    if initial is not _NO_VALUE:
        kwargs["initial"] = initial
    if takes_dtype:
        return fn(array, axis, dtype, out, keepdims, **kwargs)
    return fn(array, axis, out, keepdims, **kwargs)


def ufunc_accumulate(uf, array, axis, dtype, out):
    if uf.__name__ == "add":
        return cumsum(array, axis, dtype, out)
    if uf.__name__ == "multiply":
        return cumprod(array, axis, dtype, out)
    from .fallback import call_numpy

    return call_numpy(f"{uf.__name__}.accumulate", uf._np.accumulate, array, axis=axis,
                      dtype=dtype, out=out)  # fmt: skip

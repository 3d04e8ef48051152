"""NumPy's nan-functions (``nansum``, ``nanmean``, ``nanargmax``...) built from numloom's
reductions and scans, so they fuse with the work around them on every device.

Each follows NumPy's own source (``numpy/lib/_nanfunctions_impl.py``): NaNs are replaced by the
reduction's identity with ``where`` (a select that fuses into the reduction), so results, dtypes
and errors are NumPy's; integer and boolean arrays, which hold no NaN, run the plain reduction.
NumPy's warnings for all-NaN slices (nanmin, nanmax, nanmean, nanvar, nanstd) and the
``ValueError`` of nanargmin/nanargmax for one depend on the data: for float and complex arrays
these functions evaluate the small mask they check at the call (a sync point), as NumPy does.
"""

from __future__ import annotations

import numpy as _np

from ..core.array import asarray
from ..core.dag import warn_at_user
from . import reductions as _r
from .elementwise import (
    conjugate,
    divide,
    equal,
    isnan,
    less_equal,
    logical_not,
    multiply,
    real,
    sqrt,
    subtract,
)
from .elementwise import where as _select

_NO_VALUE = _np._NoValue


def _replace_nan(a, value):
    """``a`` with its NaNs replaced by ``value``, and the mask of where they were (None for an
    array that holds no NaN): NumPy's ``_replace_nan``."""
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = isnan(a)
    return _select(mask, a.dtype.type(value), a), mask


def _kept(keepdims) -> bool:
    return False if keepdims is _NO_VALUE else keepdims


def _mask_arg(where_arg):
    return True if where_arg is _NO_VALUE else where_arg


def _any(mask) -> bool:
    """Whether any element of ``mask`` is true: evaluates it (a sync point)."""
    return bool(_r.any(mask))


def _divided(total, count, out=None):
    """NumPy's ``_divide_by_count``: ``total / count`` (NaN or inf for a zero count, without
    a warning), cast back to total's dtype, or divided into ``out``."""
    with _np.errstate(invalid="ignore", divide="ignore"):
        if out is not None:
            return divide(out, count, out=out, casting="unsafe")
        return divide(total, count).astype(total.dtype, copy=False)


def _check_inexact(dtype, out) -> None:
    if dtype is not None and _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and out.dtype.kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")


# --- sums, products and scans: NaN counts as the identity ---------------------------------------


def nansum(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE,
           where=_NO_VALUE):  # fmt: skip
    """The sum with NaNs counted as zero (an all-NaN or empty slice sums to 0)."""
    a, _ = _replace_nan(a, 0)
    return _r.sum(a, axis, dtype, out, _kept(keepdims), initial, _mask_arg(where))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE,
            where=_NO_VALUE):  # fmt: skip
    """The product with NaNs counted as one."""
    a, _ = _replace_nan(a, 1)
    return _r.prod(a, axis, dtype, out, _kept(keepdims), initial, _mask_arg(where))


def nancumsum(a, axis=None, dtype=None, out=None):
    """The cumulative sum with NaNs counted as zero."""
    a, _ = _replace_nan(a, 0)
    return _r.cumsum(a, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """The cumulative product with NaNs counted as one."""
    a, _ = _replace_nan(a, 1)
    return _r.cumprod(a, axis, dtype, out)


# --- extremes ----------------------------------------------------------------------------------


def nanmin(a, axis=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE, where=_NO_VALUE):
    """The minimum ignoring NaNs (NumPy's ``fmin.reduce``): NaN, with a RuntimeWarning, for
    an all-NaN slice."""
    return _nan_extreme(_r.min, _np.fmin, _np.inf, a, axis, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE, where=_NO_VALUE):
    """The maximum ignoring NaNs (NumPy's ``fmax.reduce``): NaN, with a RuntimeWarning, for
    an all-NaN slice."""
    return _nan_extreme(_r.max, _np.fmax, -_np.inf, a, axis, out, keepdims, initial, where)


def _nan_extreme(reduce, np_ufunc, fill, a, axis, out, keepdims, initial, where_arg):
    """``reduce`` (min or max) over ``a`` with NaNs replaced by ``fill``; all-NaN slices
    (without ``initial``) are NaN again. NumPy's ``fmin``/``fmax`` reduce on a stand-in gives
    the errors, in its words."""
    a = asarray(a)
    keepdims, mask_arg = _kept(keepdims), _mask_arg(where_arg)
    probe = {"keepdims": keepdims}
    if initial is not _NO_VALUE:
        probe["initial"] = initial
    if where_arg is not _NO_VALUE:
        probe["where"] = _np.ones(_r._stand_in(a).shape, bool)
    np_ufunc.reduce(_r._stand_in(a), axis=axis, **probe)
    _r._check_out(np_ufunc.reduce, a, axis, keepdims, out, **{k: v for k, v in probe.items()
                                                               if k != "keepdims"})  # fmt: skip
    replaced, mask = _replace_nan(a, fill)
    kwargs = {"where": mask_arg} if initial is _NO_VALUE else {"where": mask_arg,
                                                               "initial": initial}  # fmt: skip
    res = reduce(replaced, axis, None, keepdims, **kwargs)
    if mask is None:
        return _r.deliver(res, out)
    if initial is _NO_VALUE and res.size:
        res = _select(_r.all(mask, axis, None, keepdims, where=mask_arg), res.dtype.type(_np.nan),
                    res)  # fmt: skip
    if _any(isnan(res)):
        warn_at_user("All-NaN slice encountered", RuntimeWarning)
    return _r.deliver(res, out)


def nanargmin(a, axis=None, out=None, *, keepdims=_NO_VALUE):
    """The index of the minimum ignoring NaNs; ValueError for an all-NaN slice."""
    return _nan_arg(_r.argmin, _np.inf, a, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=_NO_VALUE):
    """The index of the maximum ignoring NaNs; ValueError for an all-NaN slice."""
    return _nan_arg(_r.argmax, -_np.inf, a, axis, out, keepdims)


def _nan_arg(arg_reduce, fill, a, axis, out, keepdims):
    a, mask = _replace_nan(a, fill)
    if mask is not None and mask.size and _any(_r.all(mask, axis)):
        raise ValueError("All-NaN slice encountered")
    return arg_reduce(a, axis, out, keepdims=_kept(keepdims))


# --- mean, variance, standard deviation ----------------------------------------------------------


def nanmean(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, *, where=_NO_VALUE):
    """The mean of the non-NaN elements: NaN, with a RuntimeWarning, for a slice that has
    none."""
    arr, mask = _replace_nan(a, 0)
    keepdims, mask_arg = _kept(keepdims), _mask_arg(where)
    if mask is None:
        return _r.mean(arr, axis, dtype, out, keepdims, where=mask_arg)
    _check_inexact(dtype, out)
    count = _r.sum(logical_not(mask), axis, _np.intp, None, keepdims, where=mask_arg)
    total = _r.sum(arr, axis, dtype, out, keepdims, where=mask_arg)
    avg = _divided(total, count, out)
    if _any(equal(count, 0)):
        warn_at_user("Mean of empty slice", RuntimeWarning)
    return avg


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO_VALUE, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE):  # fmt: skip
    """The variance of the non-NaN elements, ``sum(|x - mean|**2) / (count - ddof)``: NaN,
    with a RuntimeWarning, where ``count <= ddof``."""
    arr, mask = _replace_nan(a, 0)
    keepdims, mask_arg = _kept(keepdims), _mask_arg(where)
    if mask is None:
        return _r.var(arr, axis, dtype, out, ddof, keepdims, where=mask_arg,
                      mean=None if mean is _NO_VALUE else mean, correction=correction)  # fmt: skip
    _check_inexact(dtype, out)
    ddof = _r._ddof(ddof, correction)
    count = _r.sum(logical_not(mask), axis, _np.intp, None, True, where=mask_arg)
    if mean is _NO_VALUE:
        avg = _divided(_r.sum(arr, axis, dtype, None, True, where=mask_arg), count)
    else:
        avg = mean
    deviation = _select(mask, arr.dtype.type(0), subtract(arr, avg).astype(arr.dtype, copy=False))
    if deviation.dtype.kind == "c":
        squares = real(multiply(deviation, conjugate(deviation)))
    else:
        squares = multiply(deviation, deviation)
    var = _r.sum(squares, axis, dtype, out, keepdims, where=mask_arg)
    dof = subtract(count.reshape(var.shape), ddof)
    var = _divided(var, dof, out)
    bad = less_equal(dof, 0)
    if _any(bad):
        warn_at_user("Degrees of freedom <= 0 for slice.", RuntimeWarning)
        var = _r.deliver(_select(bad, var.dtype.type(_np.nan), var), out)
    return var


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO_VALUE, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE):  # fmt: skip
    """The standard deviation of the non-NaN elements: the square root of ``nanvar``."""
    var = nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                 correction=correction)  # fmt: skip
    if out is not None:
        return sqrt(var, out=var)
    return sqrt(var).astype(var.dtype, copy=False)

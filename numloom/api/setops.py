"""Set operations on 1-D arrays (setdiff1d, setxor1d, union1d, intersect1d), sort_complex,
trim_zeros and histogram_bin_edges, composed of numloom's native sort, unique, isin and
comparisons, following NumPy's own Python source. Their result sizes are data: they read what
decides them (a mask's count, the first and last non-zero positions, an array's extent), as
``nonzero`` does.
"""

from __future__ import annotations

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from ..core.array import asarray, ndarray
from . import reductions as _r
from .composed import isin
from .fallback import call_numpy, to_numpy
from .joins import concatenate, nonzero
from .sorting import argsort, sort, unique

__all__ = ["trim_zeros", "sort_complex", "setdiff1d", "setxor1d", "union1d", "intersect1d",
           "histogram_bin_edges"]  # fmt: skip


def _host(x):
    """Bin counts and ranges as NumPy data: numloom arrays are read back (they are small)."""
    return x.get() if isinstance(x, ndarray) else x


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading and/or trailing zeros (along each of ``axis``): reads
    where the first and last non-zero elements are."""
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    if not isinstance(filt, ndarray):
        return _np.trim_zeros(filt, trim, axis)
    ndim = filt.ndim
    axes = tuple(range(ndim)) if axis is None else normalize_axis_tuple(axis, ndim, "axis")
    if not axes:
        return filt
    found = nonzero(filt)
    if ndim == 0 or found[0].size == 0:
        start = stop = _np.zeros(ndim, dtype=_np.intp)
    else:
        start = [int(_r.min(f)) if "f" in trim else None for f in found]
        stop = [int(_r.max(f)) + 1 if "b" in trim else None for f in found]
    key = tuple(slice(start[ax], stop[ax]) if ax in axes else slice(None) for ax in range(ndim))
    return filt[key[0]] if len(key) == 1 else filt[key]


def sort_complex(a):
    """``a`` sorted by real part, then imaginary part, as a complex array."""
    b = sort(asarray(a), axis=-1)
    if b.dtype.kind != "c":
        if b.dtype.char in "bhBH":
            return b.astype("F")
        return b.astype("G" if b.dtype.char == "g" else "D")
    return b


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    if assume_unique:
        ar1 = asarray(ar1).reshape(-1)
    else:
        ar1, ar2 = unique(ar1), unique(ar2)
    return ar1[isin(ar1, ar2, assume_unique=True, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values in exactly one of the two arrays."""
    if not assume_unique:
        ar1, ar2 = unique(ar1), unique(ar2)
    aux = concatenate((ar1, ar2), axis=None)
    if aux.size == 0:
        return aux
    aux = sort(aux)
    edge = asarray(_np.ones(1, bool), device=aux.device)
    flag = concatenate((edge, aux[1:] != aux[:-1], edge))
    return aux[flag[1:] & flag[:-1]]


def union1d(ar1, ar2):
    """The sorted unique values in either array."""
    return unique(concatenate((ar1, ar2), axis=None))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays (and where each first occurs in each)."""
    ar1, ar2 = asarray(ar1), asarray(ar2)
    if not assume_unique:
        if return_indices:
            ar1, ind1 = unique(ar1, return_index=True)
            ar2, ind2 = unique(ar2, return_index=True)
        else:
            ar1, ar2 = unique(ar1), unique(ar2)
    else:
        ar1, ar2 = ar1.reshape(-1), ar2.reshape(-1)
    aux = concatenate((ar1, ar2))
    if return_indices:
        order = argsort(aux, kind="mergesort")
        aux = aux[order]
    else:
        aux = sort(aux)
    mask = aux[1:] == aux[:-1]
    int1d = aux[:-1][mask]
    if not return_indices:
        return int1d
    ar1_indices = order[:-1][mask]
    ar2_indices = order[1:][mask] - ar1.size
    if not assume_unique:
        ar1_indices, ar2_indices = ind1[ar1_indices], ind2[ar2_indices]
    return int1d, ar1_indices, ar2_indices


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (NumPy's name)
    """The bin edges ``histogram`` uses (a count of equal bins over ``range``, or over ``a``'s
    extent: reads its minimum and maximum; or the edges given). Estimator names ('auto',
    'fd'...) are NumPy's own."""
    a = asarray(a)
    if isinstance(bins, str) or a.dtype.kind not in "biuf":
        return call_numpy("histogram_bin_edges", _np.histogram_bin_edges, a, bins, range,
                          weights)  # fmt: skip
    bins, range = _host(bins), to_numpy(range)
    if weights is not None:
        weights = asarray(weights)
        if weights.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
    stand_in = _np.empty(0, a.dtype)
    if _np.ndim(bins) == 0 and range is None and a.size:
        stand_in = _np.array([_host(_r.min(a)), _host(_r.max(a))], a.dtype)
    return asarray(_np.histogram_bin_edges(stand_in, bins, range), device=a.device)

"""Sorting, searching and counting: ``sort``, ``argsort``, ``lexsort``, ``partition``,
``unique`` and its array-API forms, ``searchsorted``, ``digitize``, ``bincount``,
``histogram``, ``histogram2d``, ``median``, ``percentile`` and ``quantile``, with NumPy's
results, dtypes and errors.

On the CPU each runs as NumPy's own function over numloom's memory. On a GPU they run there:
the sort, search and counting kernels of ``backends/cuda_sort.py`` (a stable radix sort), and
numloom's own operations around them (a median is a sort, a gather and a mean), so nothing
leaves the device but the sizes of data-dependent results (how many unique values). Complex
data, ``out=`` arguments, ``unique`` along an axis and weighted quantiles run through NumPy.
"""

from __future__ import annotations

import builtins

import numpy as _np
from numpy.lib import _arraysetops_impl as _sets
from numpy.lib import _function_base_impl as _quantiles
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..core import realize
from ..core.array import asarray, ndarray
from .fallback import call_numpy

# The kernels the device paths run on the CPU device (None: NumPy runs there). Tests set a
# NumPy model of ``backends/cuda_sort.py`` here to run the GPU compositions on the CPU.
CPU_KERNELS = None


def _kernels(a):
    """The sorting kernels for numloom array ``a``'s device, or None where NumPy runs the
    call (the CPU, complex data, tracing inside ``numloom.jit``)."""
    if not isinstance(a, ndarray) or realize.TRACING:
        return None
    if a.device == "cpu":
        kernels = CPU_KERNELS
    else:
        kernels = getattr(realize._backend(a.device), "sorting", None)  # (backends/cuda_sort.py)
    return kernels if kernels is not None and kernels.supports(a.dtype, a.size) else None


def _probe(a) -> _np.ndarray:
    """A one-element NumPy array of ``a``'s dtype and dimensions: NumPy's function called on
    it raises NumPy's errors for the arguments (axis, kind, side, dtype casts)."""
    return _np.zeros((1,) * a.ndim, a.dtype)


def _rows_along(a, axis):
    """``a`` with ``axis`` moved last (``axis=None``: flattened), and ``axis``'s position."""
    if axis is None:
        return a.reshape(-1), None
    axis = normalize_axis_index(axis, a.ndim)
    return (a if axis == a.ndim - 1 else a.swapaxes(axis, -1)), axis


def _put_back(rows, axis):
    return rows if axis is None or axis == rows.ndim - 1 else rows.swapaxes(axis, -1)


def _sorted_rows(kernels, rows, exact=False):
    return kernels.sort_rows(rows, keys=True, indices=False, exact=exact)[0]


def _row_positions(kernels, rows):
    """Per row of ``rows``, the positions that sort it (``intp``), stably."""
    flat = kernels.sort_rows(rows, keys=False, indices=True)[1]
    length = rows.shape[-1] if rows.ndim else 1
    return flat if rows.ndim <= 1 or flat.size == length else flat % length


def _is_stable(kind, stable) -> bool:
    return bool(stable) or kind in ("stable", "mergesort")


# --- sort, argsort, lexsort, partition ---------------------------------------------------------


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """A sorted copy of ``a`` along ``axis`` (None: flattened), NaNs last, as ``numpy.sort``."""
    kernels = _kernels(a)
    if kernels is None:
        return call_numpy("sort", _np.sort, a, axis, kind, order, stable=stable)
    _np.sort(_probe(a), axis, kind, order, stable=stable)
    rows, axis = _rows_along(a, axis)
    return _put_back(_sorted_rows(kernels, rows, _is_stable(kind, stable)), axis)


def sort_inplace(a, axis=-1, kind=None, order=None, stable=None) -> None:
    """``a.sort()``: ``a`` sorted in place along ``axis``."""
    if a._readonly:
        raise ValueError("sort array is read-only")
    from .indexing import setitem

    if _kernels(a) is None:
        sorted_ = call_numpy("sort", _np.sort, a, axis, kind, order, stable=stable)
    else:
        _probe(a).sort(axis, kind, order, stable=stable)
        sorted_ = sort(a, axis, kind, order, stable=stable)
    setitem(a, Ellipsis, sorted_)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """The indices (``intp``) that sort ``a`` along ``axis``, as ``numpy.argsort``; equal
    elements keep their order (NumPy's stable sort's answer, valid for every kind)."""
    kernels = _kernels(a)
    if kernels is None:
        return call_numpy("argsort", _np.argsort, a, axis, kind, order, stable=stable)
    _np.argsort(_probe(a), axis, kind, order, stable=stable)
    rows, axis = _rows_along(a, axis)
    return _put_back(_row_positions(kernels, rows), axis)


def lexsort(keys, axis=-1):
    """The indirect stable sort by several keys, the last one primary, as ``numpy.lexsort``."""
    keys_list = list(keys) if isinstance(keys, (list, tuple)) else None
    if keys_list is None and isinstance(keys, ndarray) and keys.ndim >= 2:
        keys_list = [keys[k] for k in range(keys.shape[0])]
    kernels = _kernels(keys_list[0]) if keys_list else None
    usable = kernels is not None and all(
        isinstance(k, ndarray) and k.device == keys_list[0].device and k.shape == keys_list[0].shape
        and _kernels(k) is not None for k in keys_list
    )  # fmt: skip
    if not usable or keys_list[0].ndim == 0:
        return call_numpy("lexsort", _np.lexsort, keys, axis)
    first = keys_list[0]
    _np.lexsort([_probe(first)], axis)
    order = None  # flat positions in the rows' layout, sorted by the keys seen so far
    for key in keys_list:
        rows, moved = _rows_along(key, axis)
        shape, length = rows.shape, rows.shape[-1]
        flat = rows.reshape(-1)
        if order is not None:
            flat = flat[order]
        step = kernels.sort_rows(flat.reshape(shape), keys=False, indices=True)[1].reshape(-1)
        order = step if order is None else order[step]
    result = order.reshape(shape)
    if len(shape) > 1 and result.size:
        result = result % length
    return _put_back(result, moved)


def _check_kth(kth, length: int) -> None:
    kth = _np.asarray(kth)
    if kth.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if kth.ndim > 1:
        raise ValueError("kth array must have dimension <= 1")
    for k in kth.ravel().tolist():
        if not -length <= k < length:
            raise ValueError(f"kth(={k if k >= 0 else k + length}) out of bounds ({length})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` partitioned along ``axis``: each ``kth`` element is where a sort puts it, none
    before it greater, none after it smaller (here: ``a`` sorted, one valid answer)."""
    kernels = _kernels(a)
    if kernels is None or isinstance(kth, ndarray):
        return call_numpy("partition", _np.partition, a, kth, axis, kind, order)
    _np.partition(_probe(a), 0, axis, kind, order)
    rows, axis = _rows_along(a, axis)
    _check_kth(kth, rows.shape[-1])
    return _put_back(_sorted_rows(kernels, rows), axis)


def partition_inplace(a, kth, axis=-1, kind="introselect", order=None) -> None:
    """``a.partition(kth)``: ``a`` partitioned in place (see ``partition``)."""
    if _kernels(a) is None or isinstance(kth, ndarray):
        from .fallback import call_method

        call_method(a, "partition", kth, axis, kind, order)
        return
    if a._readonly:
        raise ValueError("partition array is read-only")
    from .indexing import setitem

    setitem(a, Ellipsis, partition(a, kth, axis, kind, order))


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices (``intp``) that partition ``a`` along ``axis`` (here: that sort it)."""
    kernels = _kernels(a)
    if kernels is None or isinstance(kth, ndarray):
        return call_numpy("argpartition", _np.argpartition, a, kth, axis, kind, order)
    _np.argpartition(_probe(a), 0, axis, kind, order)
    rows, axis = _rows_along(a, axis)
    _check_kth(kth, rows.shape[-1])
    return _put_back(_row_positions(kernels, rows), axis)


# --- searching --------------------------------------------------------------------------------


def searchsorted(a, v, side="left", sorter=None):
    """Where the elements of ``v`` go in sorted 1-D ``a`` to keep it sorted (``intp``):
    before equal elements (``side="left"``) or after them, as ``numpy.searchsorted``."""
    kernels = _kernels(a)
    needles = asarray(v, device=a.device) if kernels is not None else None
    if needles is None or _kernels(needles) is None:
        return call_numpy("searchsorted", _np.searchsorted, a, v, side, sorter)
    _np.searchsorted(_probe(a), _probe(needles), side)
    if sorter is not None:
        sorter = asarray(sorter, device=a.device)
        if sorter.shape != a.shape:
            return call_numpy("searchsorted", _np.searchsorted, a, v, side, sorter)
        a = a[sorter.astype(_np.intp)]
    common = _np.result_type(a.dtype, needles.dtype)
    return kernels.search(a.astype(common), needles.astype(common), side == "right")


def digitize(x, bins, right=False):
    """The bin of each element of ``x`` among monotonic ``bins`` (``intp``), as
    ``numpy.digitize``."""
    kernels = _kernels(x)
    edges = asarray(bins, device=x.device) if kernels is not None else None
    if edges is None or edges.ndim != 1 or _kernels(edges) is None:
        return call_numpy("digitize", _np.digitize, x, bins, right)
    side = "left" if right else "right"
    if edges.size > 1:
        steps = edges[1:] - edges[:-1] if edges.dtype.kind != "b" else edges[1:] ^ edges[:-1]
        rising, falling = bool((edges[1:] >= edges[:-1]).all()), bool((steps <= 0).all())
        if not rising and not falling:
            raise ValueError("bins must be monotonically increasing or decreasing")
        if not rising:
            return edges.size - searchsorted(edges[::-1], x, side=side)
    return searchsorted(edges, x, side=side)


# --- counting ---------------------------------------------------------------------------------


def _host_values(*values):
    """Small device results as host scalars, read together (one wait)."""
    realize.evaluate(*values)
    return [v.item() for v in values]


def bincount(x, weights=None, minlength=0):
    """How often each non-negative integer occurs in 1-D ``x`` (with ``weights``: the sums of
    their weights, ``float64``), at least ``minlength`` of them, as ``numpy.bincount``."""
    kernels = _kernels(x)
    if weights is not None and kernels is not None:
        weights = asarray(weights, device=x.device)
        if weights.shape != x.shape or _kernels(weights) is None:
            kernels = None
    if kernels is None:
        return call_numpy("bincount", _np.bincount, x, weights, minlength)
    _np.bincount(_probe(x), None if weights is None else _probe(weights), minlength)
    length = minlength
    if x.size:
        low, high = _host_values(x.min(), x.max())
        if low < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(int(high) + 1, minlength)
    sums = None if weights is None else weights.astype(_np.float64)
    return kernels.bincount(x.astype(_np.intp), length, sums)


def _outer_range(a):
    """A NumPy array of ``a``'s dtype holding its minimum and maximum (empty if ``a`` is):
    NumPy finds the same bin edges from it as from ``a``."""
    if not a.size:
        return _np.empty(0, a.dtype)
    return _np.array(_host_values(a.min(), a.max()), a.dtype)


def _host(x):
    """Bin edges, ranges and the like as host data (numloom arrays read back: they are small)."""
    if isinstance(x, ndarray):
        return x.get()
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    return x


def _count_in_bins(kernels, x, edges, weights):
    common = _np.result_type(x.dtype, edges.dtype)
    return kernels.histogram(x.astype(common), edges.astype(common), weights)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 (NumPy's name)
    """The histogram of ``a``: counts (or sums of ``weights``) per bin and the bin edges, as
    ``numpy.histogram``; bins as a count (equal bins over ``range``) or as edges."""
    kernels = _kernels(a)
    if weights is not None and kernels is not None:
        weights = asarray(weights, device=a.device)
        if weights.shape != a.shape or weights.dtype.kind not in "biuf":
            kernels = None
    if kernels is None or isinstance(bins, str):
        return call_numpy("histogram", _np.histogram, a, bins, range, density, weights)
    bins, range = _host(bins), _host(range)
    if _np.ndim(bins) == 0 and range is None:
        edges = _np.histogram_bin_edges(_outer_range(a), bins)
    else:
        edges = _np.histogram_bin_edges(_np.empty(0, a.dtype), bins, range)
    edges = asarray(edges, device=a.device)
    flat = a.reshape(-1)
    sums = None if weights is None else weights.reshape(-1).astype(_np.float64)
    counts = _count_in_bins(kernels, flat, edges, sums)
    if weights is not None:
        counts = counts.astype(weights.dtype)
    if density:
        widths = (edges[1:] - edges[:-1]).astype(_np.float64)
        return counts / widths / counts.sum(), edges
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """The 2-D histogram of points ``(x, y)`` (``float64``) and its x and y edges, as
    ``numpy.histogram2d``."""
    kernels = _kernels(x)
    usable = (
        kernels is not None and isinstance(y, ndarray) and y.device == x.device
        and x.ndim == 1 and y.shape == x.shape and _kernels(y) is not None
    )  # fmt: skip
    if usable and weights is not None:
        weights = asarray(weights, device=x.device)
        usable = weights.shape == x.shape and weights.dtype.kind in "biuf"
    if not usable:
        return call_numpy("histogram2d", _np.histogram2d, x, y, bins, range, density, weights)
    common = _np.result_type(x.dtype, y.dtype)
    x, y = x.astype(common), y.astype(common)
    bins, range = _host(bins), _host(range)
    empty = _np.empty(0, common)
    corners = (_outer_range(x), _outer_range(y)) if range is None else (empty, empty)
    _, x_edges, y_edges = _np.histogram2d(corners[0], corners[1], bins, range)
    x_edges, y_edges = asarray(x_edges, device=x.device), asarray(y_edges, device=x.device)
    return _histogram_cells(kernels, [x, y], [x_edges, y_edges], density, weights), x_edges, y_edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """The D-dimensional histogram of ``sample`` (an ``(N, D)`` array, or D arrays of N
    points) and its edges, as ``numpy.histogramdd``: each point's bin along each axis (the
    last edge closed, as ``histogram``'s), one cell number, one count."""
    if isinstance(sample, ndarray) and sample.ndim == 2:
        columns = [sample[:, i] for i in builtins.range(sample.shape[1])]
    elif isinstance(sample, (list, tuple)) and sample and all(
            isinstance(c, ndarray) and c.ndim == 1 for c in sample):  # fmt: skip
        columns = list(sample)
    else:
        columns = None
    kernels = _kernels(columns[0]) if columns else None
    usable = kernels is not None and all(
        c.shape == columns[0].shape and c.device == columns[0].device and _kernels(c) is not None
        for c in columns)  # fmt: skip
    if usable and weights is not None:
        weights = asarray(weights, device=columns[0].device)
        usable = weights.shape == columns[0].shape and weights.dtype.kind in "biuf"
    if not usable:
        return call_numpy("histogramdd", _np.histogramdd, sample, bins, range, density, weights)
    device = columns[0].device
    bins, range = _host(bins), _host(range)
    # the edges NumPy finds from the data's extremes along each axis (its own checks and
    # errors: bins, range, a range that is not finite)
    _, edges = _np.histogramdd(_np.stack([_outer_range(c) for c in columns], axis=1), bins,
                               range)  # fmt: skip
    edges = [asarray(e, device=device) for e in edges]
    return _histogram_cells(kernels, columns, edges, density, weights), edges


def _histogram_cells(kernels, columns: list, edges: list, density, weights):
    """The counts (or sums of ``weights``, ``float64``) of the points whose coordinates are
    ``columns`` in the cells ``edges`` make, by each point's bin along each axis (-1
    outside), its cell's number and one bincount; ``density``: divided by each cell's volume
    and the total, as NumPy divides."""
    from .elementwise import where

    shape = tuple(e.size - 1 for e in edges)
    cell, inside = None, None
    for column, edge, stride in zip(columns, edges, _np.cumprod((shape[1:] + (1,))[::-1])[::-1]):
        common = _np.result_type(column.dtype, edge.dtype)
        index = kernels.bin_index(column.astype(common), edge.astype(common))
        part = index * int(stride)
        cell = part if cell is None else cell + part
        inside = index >= 0 if inside is None else inside & (index >= 0)
    cell = where(inside, cell, -1)
    sums = None if weights is None else weights.astype(_np.float64)
    hist = kernels.bincount(cell, int(_np.prod(shape)), sums).astype(_np.float64).reshape(shape)
    if density:
        total = hist.sum()
        for axis, edge in enumerate(edges):
            widths = (edge[1:] - edge[:-1]).reshape(
                tuple(-1 if k == axis else 1 for k in builtins.range(len(edges))))
            hist = hist / widths
        hist = hist / total
    return hist


# --- unique -----------------------------------------------------------------------------------


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):  # noqa: A002 (NumPy's name)  # fmt: skip
    """The sorted unique elements of ``ar`` (flattened), and optionally where each first
    occurs, the indices that rebuild ``ar`` from them and their counts, as ``numpy.unique``."""
    kernels = _kernels(ar)
    if kernels is None or axis is not None:
        return call_numpy("unique", _np.unique, ar, return_index, return_inverse,
                          return_counts, axis, equal_nan=equal_nan, sorted=sorted)  # fmt: skip
    found = _unique(kernels, ar, return_index, return_inverse, return_counts, equal_nan)
    return found[0] if len(found) == 1 else tuple(found)


def _unique(kernels, ar, return_index, return_inverse, return_counts, equal_nan) -> list:
    from .creation import zeros
    from .elementwise import isnan
    from .joins import concatenate
    from .reductions import cumsum

    flat = ar.reshape(-1)
    n = flat.size
    with_order = return_index or return_inverse
    aux, perm = kernels.sort_rows(flat, keys=True, indices=with_order, exact=with_order)
    if n and not (with_order or return_counts) and hasattr(kernels, "run_firsts"):
        # the values alone: each run's first element, found in the sorted elements at once
        # (no mask, positions and gather of their own)
        found = kernels.run_firsts(aux, equal_nan)
        if found is not None:
            return [found]
    first = asarray(_np.ones(1, _np.bool_), device=ar.device)
    if n:
        new = aux[1:] != aux[:-1]
        if equal_nan and aux.dtype.kind == "f":
            new = new & ~(isnan(aux[1:]) & isnan(aux[:-1]))
        mask = concatenate((first, new))
        starts = kernels.true_positions(mask)
    else:
        mask = zeros(0, _np.bool_, device=ar.device)
        starts = zeros(0, _np.intp, device=ar.device)
    found = [aux[starts]]
    if return_index:
        found.append(perm[starts])
    if return_inverse:
        inverse = zeros(n, _np.intp, device=ar.device)
        if n:
            inverse[perm] = cumsum(mask, dtype=_np.intp) - 1
        found.append(inverse.reshape(ar.shape))
    if return_counts:
        ends = concatenate((starts, asarray(_np.array([n], _np.intp), device=ar.device)))
        found.append(ends[1:] - ends[:-1])
    return found


def unique_values(x):
    """The unique elements of ``x`` (NumPy gives them in no particular order; here sorted)."""
    kernels = _kernels(x)
    if kernels is None:
        return call_numpy("unique_values", _np.unique_values, x)
    return _unique(kernels, x, False, False, False, False)[0]


def unique_counts(x):
    """The unique elements of ``x`` and their counts, as ``numpy.unique_counts``."""
    kernels = _kernels(x)
    if kernels is None:
        return call_numpy("unique_counts", _np.unique_counts, x)
    return _sets.UniqueCountsResult(*_unique(kernels, x, False, False, True, False))


def unique_inverse(x):
    """The unique elements of ``x`` and the indices that rebuild ``x`` from them."""
    kernels = _kernels(x)
    if kernels is None:
        return call_numpy("unique_inverse", _np.unique_inverse, x)
    return _sets.UniqueInverseResult(*_unique(kernels, x, False, True, False, False))


def unique_all(x):
    """The unique elements of ``x``, where each first occurs, the indices that rebuild ``x``
    and the counts, as ``numpy.unique_all``."""
    kernels = _kernels(x)
    if kernels is None:
        return call_numpy("unique_all", _np.unique_all, x)
    return _sets.UniqueAllResult(*_unique(kernels, x, True, True, True, False))


# --- order statistics -------------------------------------------------------------------------


def _reduced_last(a, axis):
    """``a`` with the reduced axes flattened into one last axis, and the reduced axes."""
    if axis is None:
        return a.reshape(-1), tuple(range(a.ndim))
    axes = normalize_axis_tuple(axis, a.ndim)
    kept = [k for k in range(a.ndim) if k not in axes]
    moved = a.transpose(kept + list(axes)) if kept + list(axes) != list(range(a.ndim)) else a
    return moved.reshape(tuple(a.shape[k] for k in kept) + (-1,)), axes


def _keepdims_shape(a, axes) -> tuple:
    return tuple(1 if k in axes else a.shape[k] for k in range(a.ndim))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (the mean of the two middle elements of an even count; NaN
    where a NaN is among them), as ``numpy.median``."""
    kernels = _kernels(a)
    if kernels is None or not _native_out(out):
        return call_numpy("median", _np.median, a, axis, out=out, overwrite_input=overwrite_input,
                          keepdims=keepdims)  # fmt: skip
    return _into(_median(kernels, a, axis, keepdims), out, "median", _np.median, a, axis,
                 overwrite_input=overwrite_input, keepdims=keepdims)  # fmt: skip


def _native_out(out) -> bool:
    """Whether ``out`` (None, or a writable numloom array) lets numloom compute natively."""
    return out is None or (isinstance(out, ndarray) and not out._readonly)


def _into(result, out, name: str, fn, *args, **kwargs):
    """``result``, or ``result`` written into ``out``; an ``out`` of another shape or dtype
    goes to NumPy, for NumPy's error or its casts (which differ by input dtype)."""
    if out is None:
        return result
    if out.shape != result.shape or out.dtype != result.dtype:
        return call_numpy(name, fn, *args, out=out, **kwargs)
    from .reductions import deliver

    return deliver(result, out)


def _median(kernels, a, axis, keepdims):
    from .elementwise import isnan, where
    from .reductions import mean

    rows, axes = _reduced_last(a, axis)
    s = _sorted_rows(kernels, rows)
    n = s.shape[-1]
    middle = slice(n // 2, n // 2 + 1) if n % 2 else slice(max(n // 2 - 1, 0), n // 2 + 1)
    result = mean(s[..., middle], axis=-1)
    if n and a.dtype.kind == "f":
        last = s[..., -1]
        result = where(isnan(last), last, result)
    return result.reshape(_keepdims_shape(a, axes)) if keepdims else result


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` of the elements that are not NaN (NaN, with NumPy's
    RuntimeWarning, where a slice has none), as ``numpy.nanmedian``."""
    kernels = _kernels(a)
    if (kernels is None or not _native_out(out) or not a.size
            or (a.dtype == _np.float16 and a.size < 600)):  # (NumPy's masked path rounds apart)
        return call_numpy("nanmedian", _np.nanmedian, a, axis, out=out,
                          overwrite_input=overwrite_input, keepdims=keepdims)  # fmt: skip
    if a.dtype.kind != "f":
        found = _median(kernels, a, axis, keepdims)
    else:
        found = _nanmedian(kernels, a, axis, keepdims)
    return _into(found, out, "nanmedian", _np.nanmedian, a, axis,
                 overwrite_input=overwrite_input, keepdims=keepdims)  # fmt: skip


def _nanmedian(kernels, a, axis, keepdims):
    import warnings

    from .creation import arange
    from .elementwise import isnan, where
    from .joins import stack
    from .reductions import count_nonzero, mean

    rows, axes = _reduced_last(a, axis)
    s = _sorted_rows(kernels, rows)  # (NaNs last)
    valid = count_nonzero(~isnan(rows), axis=-1)
    if bool((valid == 0).any()):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    low, high = (valid - 1).clip(0, None) // 2, valid // 2
    high = where(high < s.shape[-1], high, 0)
    n = s.shape[-1]
    starts = arange(0, valid.size * n, n, dtype=_np.intp, device=a.device).reshape(valid.shape)
    flat = s.reshape(-1)
    pair = stack((flat[starts + low], flat[starts + high]), axis=-1)
    middle = pair[..., 0]  # (an odd count: the middle element itself, as NumPy takes it)
    result = where(valid % 2 == 1, middle, mean(pair, axis=-1))
    return result.reshape(_keepdims_shape(a, axes)) if keepdims else result


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):  # fmt: skip
    """The ``q``-th quantiles along ``axis`` of the elements that are not NaN, as
    ``numpy.nanquantile``."""
    return _order_statistic("nanquantile", _np.nanquantile, 1, "Quantiles must be in the "
                            "range [0, 1]", True, a, q, axis, out, overwrite_input, method,
                            keepdims, weights)  # fmt: skip


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):  # fmt: skip
    """The ``q``-th percentiles along ``axis`` of the elements that are not NaN, as
    ``numpy.nanpercentile``."""
    return _order_statistic("nanpercentile", _np.nanpercentile, 100, "Percentiles must be "
                            "in the range [0, 100]", True, a, q, axis, out, overwrite_input,
                            method, keepdims, weights)  # fmt: skip


def _order_statistic(name, fn, scale, message, skip_nans, a, q, axis, out, overwrite_input,
                     method, keepdims, weights):  # fmt: skip
    """NumPy's ``fn`` (quantile, percentile and their nan-versions: ``q`` divided by ``scale``,
    ``message`` for one out of range) on the device where it can run there, else NumPy's."""
    kernels = _kernels(a)
    if (kernels is None or not _native_out(out) or weights is not None
            or (skip_nans and not a.size)):  # (NumPy's nanmean answers an empty one)  # fmt: skip
        return call_numpy(name, fn, a, q, axis, out=out, overwrite_input=overwrite_input,
                          method=method, keepdims=keepdims, weights=weights)  # fmt: skip
    weak_q = type(q) in (int, float)
    fraction = _np.asanyarray(_np.true_divide(_host(q), scale) if scale != 1 else _host(q))
    if not _quantiles._quantile_is_valid(fraction):
        raise ValueError(message)
    if skip_nans and a.dtype.kind == "f":
        found = _nanquantile(kernels, a, fraction, axis, method, keepdims, weak_q)
    else:  # (no NaN to leave out: the quantile itself)
        found = _quantile(kernels, a, fraction, axis, method, keepdims, weak_q)
    return _into(found, out, name, fn, a, q, axis, overwrite_input=overwrite_input,
                 method=method, keepdims=keepdims)  # fmt: skip


def _method(q, method: str) -> dict:
    """NumPy's description of quantile ``method``, with NumPy's errors for it and for ``q``."""
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    try:
        return _quantiles._QuantileMethods[method]
    except KeyError:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{_quantiles._QuantileMethods.keys()}") from None  # fmt: skip


def _nanquantile(kernels, a, q, axis, method, keepdims, weak_q):
    """``_quantile`` of each row's numbers (its NaNs left out): NumPy's index arithmetic for
    each row's count, on the host (the counts read back: one value a row), the sort and the
    gathers on the device."""
    import warnings

    from .elementwise import isnan, subtract, where
    from .reductions import count_nonzero

    props = _method(q, method)
    rows, axes = _reduced_last(a, axis)
    s = _sorted_rows(kernels, rows)  # (NaNs last)
    length, kept = s.shape[-1], s.shape[:-1]
    counts = count_nonzero(~isnan(rows), axis=-1).get().reshape(-1, 1)
    if (counts == 0).any():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
    n = _np.maximum(counts, 1)  # (an all-NaN row's result is NaN: any index will do)
    fractions = q.reshape(1, -1)
    virtual = _np.asanyarray(props["get_virtual_index"](n, fractions))
    starts = _np.arange(counts.size).reshape(-1, 1) * length

    def at(indices):  # each row's elements at these positions among its numbers
        indices = _np.where(indices < 0, indices + n, indices).astype(_np.intp)
        flat = asarray((starts + indices).reshape(-1), device=a.device)
        return s.reshape(-1)[flat].reshape(indices.shape)

    if props["fix_gamma"] is None or (method == "linear" and virtual.dtype.kind in "iu"):
        result = at(virtual)
    else:
        previous, following = _quantiles._get_indexes(_np.empty(0, a.dtype), virtual, n)
        gamma = _quantiles._get_gamma(virtual, previous, props)
        low, high = at(previous), at(following)
        weak = _np.result_type(a.dtype, 1.0) if weak_q else _np.float64  # (a Python float's)
        t = asarray(gamma.astype(weak), device=a.device)
        rest = asarray((1 - gamma).astype(weak), device=a.device)
        diff = high - low
        lerp = low + diff * t
        upper = subtract(high, diff * rest, dtype=lerp.dtype, casting="unsafe")
        result = where(asarray(gamma >= 0.5, device=a.device), upper, lerp)
    nan = asarray(counts == 0, device=a.device)
    result = where(nan, _np.nan, result).astype(result.dtype, copy=False)
    result = result.T.reshape(q.shape + kept)
    if keepdims:
        result = result.reshape(q.shape + _keepdims_shape(a, axes))
    return result


def _lerp(a, b, t):
    """NumPy's ``_lerp``: ``a + (b - a) * t``, from ``b``'s side where ``t >= 0.5``."""
    from .elementwise import subtract, where

    diff = b - a
    lerp = a + diff * t
    upper = subtract(b, diff * (1 - t), dtype=lerp.dtype, casting="unsafe")
    if isinstance(t, float):
        return upper if t >= 0.5 else lerp
    return where(t >= 0.5, upper, lerp)


def _quantile(kernels, a, q, axis, method, keepdims, weak_q):
    """The ``q`` quantiles (``q`` a NumPy array in [0, 1]) of numloom array ``a`` along
    ``axis``: NumPy's index arithmetic on the host, the sort and the gathers on the device."""
    from .elementwise import isnan, where
    from .shapes import moveaxis

    props = _method(q, method)
    rows, axes = _reduced_last(a, axis)
    s = _sorted_rows(kernels, rows)
    n, kept = s.shape[-1], s.ndim - 1
    virtual = _np.asanyarray(props["get_virtual_index"](n, q))

    def at(indices):  # the elements at these sorted positions: indices' shape, then the kept
        taken = s[..., asarray(_np.asarray(indices, _np.intp), device=a.device)]
        return moveaxis(taken, tuple(range(kept, taken.ndim)), tuple(range(taken.ndim - kept)))

    integer = virtual.dtype.kind in "iu"
    if props["fix_gamma"] is None or (method == "linear" and integer):
        result = at(virtual)
    else:
        previous, following = _quantiles._get_indexes(_np.empty(0, a.dtype), virtual, n)
        gamma = _quantiles._get_gamma(virtual, previous, props)
        if weak_q:
            gamma = float(gamma)
        else:
            gamma = asarray(gamma.reshape(virtual.shape + (1,) * kept), device=a.device)
        result = _lerp(at(previous), at(following), gamma)
    if n and a.dtype.kind == "f":
        last = s[..., -1]
        result = where(isnan(last), last.astype(result.dtype), result)
    if keepdims:
        result = result.reshape(virtual.shape + _keepdims_shape(a, axes))
    return result


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):  # fmt: skip
    """The ``q``-th quantiles of ``a`` along ``axis`` by ``method``, as ``numpy.quantile``."""
    return _order_statistic("quantile", _np.quantile, 1, "Quantiles must be in the range "
                            "[0, 1]", False, a, q, axis, out, overwrite_input, method, keepdims,
                            weights)  # fmt: skip


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):  # fmt: skip
    """The ``q``-th percentiles of ``a`` along ``axis`` by ``method``, as
    ``numpy.percentile``."""
    return _order_statistic("percentile", _np.percentile, 100, "Percentiles must be in the "
                            "range [0, 100]", False, a, q, axis, out, overwrite_input, method,
                            keepdims, weights)  # fmt: skip


__all__ = [
    "sort", "sort_inplace", "argsort", "lexsort", "partition", "partition_inplace",
    "argpartition", "searchsorted", "digitize", "bincount", "histogram", "histogram2d",
    "histogramdd",
    "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "median",
    "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile",
]  # fmt: skip

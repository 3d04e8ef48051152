"""More of NumPy's namespace composed of numloom's own operations (views, concatenate, take,
fancy indexing, where, ufuncs, reductions, sort and unique), so each call is recorded in the DAG,
fuses with the work around it and runs natively on every device: joins (block, concat,
row_stack, insert, delete, resize), index builders (indices, ix_, diag_indices, tril_indices,
unravel_index...), selection (choose, select, compress, extract, piecewise, take_along_axis),
elementwise tests (iscomplex, isposinf...), unwrap, the vector-matrix products, array
conversions, and from the modules beside this one the window functions (``windows.py``),
polynomial arithmetic (``polynomials.py``), the functions that write into their first argument
(``placing.py``), set operations (``setops.py``) and bit packing (``bits.py``).

Each follows NumPy's own Python source, so results, dtypes and errors are NumPy's. Functions
whose result shape is data (compress, extract, ix_ of a mask, tril_indices) read what decides
that shape, as ``nonzero`` does.
"""

from __future__ import annotations

import math

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from ..core.array import asarray, ndarray, of_class, priority_subclass, programs_subclass
from ..core.array_views import reshape_array
from ..core.dag import warn_at_user
from . import elementwise as _ew
from . import reductions as _r
from .bits import packbits, unpackbits
from .composed import tri
from .creation import arange, array, full, in_order_of, small_grid, zeros, zeros_like
from .fallback import call_numpy
from .indexing import shape_str
from .joins import concatenate, diff, nonzero, take, vstack
from .placing import (
    _along_axis_index,
    copyto,
    fill_diagonal,
    place,
    put,
    put_along_axis,
    putmask,
)
from .polynomials import polyadd, polyder, polydiv, polyint, polymul, polysub
from .setops import (
    histogram_bin_edges,
    intersect1d,
    setdiff1d,
    setxor1d,
    sort_complex,
    trim_zeros,
    union1d,
)
from .shapes import broadcast_arrays, broadcast_to, diagonal, moveaxis, ravel, transpose
from .windows import bartlett, blackman, hamming, hanning, i0, kaiser
from .writes import as_numloom

__all__ = [
    "bartlett", "blackman", "hamming", "hanning", "kaiser", "i0", "polyadd", "polysub",
    "polymul", "polyder", "polyint", "polydiv", "copyto", "fill_diagonal", "place", "put",
    "put_along_axis", "putmask", "block", "concat", "row_stack", "delete", "insert", "resize",
    "rollaxis", "unstack", "diag", "diagflat", "diag_indices", "diag_indices_from", "indices",
    "ix_", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
    "mask_indices", "ravel_multi_index", "unravel_index", "iscomplex", "isreal", "isneginf",
    "isposinf", "real_if_close", "compress", "extract", "choose", "select", "piecewise",
    "take_along_axis", "trim_zeros", "unwrap", "sort_complex", "setdiff1d", "setxor1d",
    "union1d", "intersect1d", "histogram_bin_edges", "packbits", "unpackbits", "vecdot",
    "matvec", "vecmat", "asarray_chkfinite", "asanyarray", "fromfunction", "apply_along_axis",
    "apply_over_axes",
]  # fmt: skip

concat = concatenate


def _host(x):
    """Index data (positions, counts) as NumPy data: numloom arrays are read back."""
    return x.get() if isinstance(x, ndarray) else x


def _along(values: _np.ndarray, ndim: int, axis: int) -> _np.ndarray:
    """1-D NumPy ``values`` shaped to lie along ``axis`` of an ``ndim``-dimensional array."""
    return values.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


# --- joins and rearrangements -------------------------------------------------------------------


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists join along the last
    axis): concatenates of the blocks, each viewed with NumPy's leading axes added."""
    from numpy._core.shape_base import _block_setup

    arrays, list_ndim, result_ndim, _ = _block_setup(arrays)
    return _block(arrays, list_ndim, result_ndim)


def _block(arrays, max_depth: int, result_ndim: int, depth: int = 0):
    if depth < max_depth:
        blocks = [_block(a, max_depth, result_ndim, depth + 1) for a in arrays]
        return concatenate(blocks, axis=-(max_depth - depth))
    a = asarray(arrays)
    return a if a.ndim >= result_ndim else reshape_array(a, (1,) * (result_ndim - a.ndim) + a.shape)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """``vstack`` under its deprecated name (with NumPy's DeprecationWarning)."""
    warn_at_user("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning)
    return vstack(tup, dtype=dtype, casting=casting)


if not hasattr(_np, "row_stack"):  # (gone from NumPy 2.5: gone from numloom with it)
    del row_stack
    __all__.remove("row_stack")


def _axis_positions(arr: ndarray, axis):
    """``arr`` (flattened when ``axis`` is None), the axis, and a NumPy stand-in holding the
    positions along that axis (1 on every other axis), for NumPy to decide positions on."""
    if axis is None:
        arr = arr.reshape(-1) if arr.ndim != 1 else arr
        axis = arr.ndim - 1
    else:
        axis = normalize_axis_index(axis, arr.ndim)
    return arr, axis, _along(_np.arange(arr.shape[axis]), arr.ndim, axis)


def delete(arr, obj, axis=None):
    """``arr`` without the sub-arrays at ``obj`` (an index, slice, index list or mask) along
    ``axis``: NumPy picks the kept positions, a ``take`` gathers them."""
    arr, axis, positions = _axis_positions(asarray(arr), axis)
    kept = _np.delete(positions, _host(obj), axis).reshape(-1)
    return in_order_of(take(arr, asarray(kept, device=arr.device), axis=axis), arr)



def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the positions ``obj`` along ``axis``: NumPy
    decides where each old and new sub-array goes; the result gathers from ``arr`` joined
    with the values (broadcast as NumPy broadcasts them)."""
    arr, axis, positions = _axis_positions(asarray(arr), axis)
    obj = _host(obj)
    n, ndim = arr.shape[axis], arr.ndim
    indices = _np.arange(*obj.indices(n)) if isinstance(obj, slice) else _np.asarray(obj)
    given = _np.shape(values)
    values = array(values, ndmin=ndim, dtype=arr.dtype)
    if indices.size == 1 and indices.ndim == 0:
        values = moveaxis(values, 0, axis)
    count = values.shape[axis] if indices.size == 1 else len(indices.reshape(-1))
    shape = arr.shape[:axis] + (count,) + arr.shape[axis + 1 :]
    if indices.size == 1:
        _fits(values.shape, shape, "could not broadcast input array from shape {} into shape {}")
    else:
        _fits(
            given,
            shape,
            "shape mismatch: value array of shape {} could not be broadcast to "
            "indexing result of shape {}",
        )
    marks = n + _np.arange(count)
    if indices.size == 1 and indices.ndim == 0:
        marks = marks.reshape((count,) + (1,) * (ndim - 1))
    else:
        marks = _along(marks, ndim, axis)
    order = _np.insert(positions, obj, marks, axis).reshape(-1)
    joined = concatenate((arr, broadcast_to(values, shape)), axis=axis)
    return in_order_of(take(joined, asarray(order, device=arr.device), axis=axis), arr)


def _fits(shape: tuple, target: tuple, message: str) -> None:
    """Raise NumPy's ValueError ``message`` unless ``shape`` broadcasts to ``target``."""
    try:
        fits = _np.broadcast_shapes(shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(message.format(shape_str(shape), shape_str(target)))


def resize(a, new_shape):
    """An array of ``new_shape`` filled with ``a``'s elements in C order, repeated as needed
    (zeros when either is empty)."""
    if isinstance(new_shape, (int, _np.integer)):
        new_shape = (new_shape,)
    a = ravel(a)
    new_size = 1
    for dim_length in new_shape:
        new_size *= dim_length
        if dim_length < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    if a.size == 0 or new_size == 0:
        return zeros_like(a, shape=new_shape)
    picks = _ew.remainder(arange(new_size, device=a.device), a.size)
    return priority_subclass(take(a, picks), (a,)).reshape(new_shape)  # (as NumPy's join)


def rollaxis(a, axis, start=0):
    """A view of ``a`` with ``axis`` moved to before position ``start``."""
    a = asarray(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    msg = "'%s' arg requires %d <= %s < %d, but %d was passed in"
    if not (0 <= start < n + 1):
        raise _np.exceptions.AxisError(msg % ("start", -n, "start", n + 1, start))
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = list(range(0, n))
    axes.remove(axis)
    axes.insert(start, axis)
    return transpose(a, axes)


def unstack(x, /, *, axis=0):
    """The sub-arrays of ``x`` along ``axis``, as a tuple of views."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    moved = moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


# --- diagonals and index builders ---------------------------------------------------------------


def _on_diagonal(v: ndarray, k: int):
    """The square matrix with 1-D ``v`` on its ``k``-th diagonal, zeros elsewhere."""
    n = v.shape[0] + abs(k)
    res = zeros((n, n), v.dtype, device=v.device)
    i = arange(v.shape[0], device=v.device)
    res[i + max(-k, 0), i + max(k, 0)] = v
    return res


def diag(v, k=0):
    """The ``k``-th diagonal of 2-D ``v`` (a read-only view), or the square array with 1-D
    ``v`` on its ``k``-th diagonal."""
    v = asarray(v)
    if v.ndim == 1:
        return _on_diagonal(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0):
    """The square array with the flattened ``v`` on its ``k``-th diagonal."""
    return _on_diagonal(asarray(v).reshape(-1), k)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``ndim``-dimensional array of side ``n``."""
    idx = arange(n)
    return (idx,) * ndim


def diag_indices_from(arr):
    """The indices of the main diagonal of ``arr`` (at least 2-D, every side equal)."""
    arr = asarray(arr)
    if not arr.ndim >= 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def indices(dimensions, dtype=int, sparse=False):
    """The index grids of an array of shape ``dimensions`` (stacked, or one broadcastable
    array per axis when ``sparse``)."""
    dimensions = tuple(dimensions)
    n = len(dimensions)
    if not sparse and small_grid(n * math.prod(dimensions)):
        return as_numloom(_np.indices(dimensions, dtype))  # (a loop's small grid: NumPy's, now)
    grids = []
    for i, dim in enumerate(dimensions):
        idx = arange(dim, dtype=dtype).reshape((1,) * i + (dim,) + (1,) * (n - i - 1))
        grids.append(idx if sparse else broadcast_to(idx, dimensions))
    if sparse:
        return tuple(grids)
    if not grids:
        return zeros((0,), dtype=dtype)
    return concatenate([g[None] for g in grids], axis=0)


def ix_(*args):
    """Open meshes from 1-D sequences (masks become their true positions), for indexing the
    cross product."""
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if not isinstance(new, (ndarray, _np.ndarray)):
            new = asarray(new)
            if new.size == 0:
                new = new.astype(_np.intp)
        else:
            new = asarray(new)
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new.dtype == _np.bool_:
            (new,) = nonzero(new)
        out.append(new.reshape((1,) * k + (new.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle (on and below diagonal ``k``) of an (n, m) array."""
    return nonzero(tri(n, m, k=k, dtype=bool))


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle (on and above diagonal ``k``) of an (n, m) array."""
    return nonzero(_ew.logical_not(tri(n, m, k=k - 1, dtype=bool)))


def tril_indices_from(arr, k=0):
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def triu_indices_from(arr, k=0):
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (``triu``, ``tril``...)."""
    m = full((n, n), 1, dtype=int)
    return nonzero(asarray(mask_func(m, k)) != 0)


def _checked_index_probe(numpy_fn, first, *rest, **kwargs):
    """NumPy's ``numpy_fn`` on empty stand-ins of the index arrays: its type errors (an
    empty sequence goes as it is: NumPy names it, inferred as float)."""
    numpy_fn([_stand_in(x) for x in first], *rest, **kwargs)


def _stand_in(x):
    if isinstance(x, ndarray):
        return _np.zeros(0, x.dtype)
    return _np.zeros(0, _np.asarray(x).dtype) if _np.size(x) else x


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices, into an array of shape ``dims``, of the index arrays
    ``multi_index`` (mode 'raise' reads whether any is out of range: one boolean)."""
    dims = tuple(int(d) for d in _np.atleast_1d(dims))
    if len(multi_index) != len(dims):
        _np.ravel_multi_index(tuple(_np.zeros(1, _np.intp) for _ in multi_index), dims)
    _checked_index_probe(lambda idx, *r, **kw: _np.ravel_multi_index(tuple(idx), *r, **kw),
                         multi_index, dims, mode=mode, order=order)  # fmt: skip
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    coords = broadcast_arrays(*(asarray(i).astype(_np.intp) for i in multi_index))
    if 0 in dims and coords and coords[0].size:  # (NumPy's error, whatever the indices)
        _np.ravel_multi_index(tuple(_np.zeros(1, _np.intp) for _ in dims), dims, mode=mode)
    strides = _np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    strides = strides[::-1] if order == "C" else strides
    flat = zeros(coords[0].shape, _np.intp, device=coords[0].device) if coords else 0
    bad = None
    for idx, n, stride, how in zip(coords, dims, strides, modes):
        if how == "wrap":
            idx = _ew.remainder(idx, n)
        elif how == "clip":
            idx = _ew.clip(idx, 0, n - 1)
        else:
            out = (idx < 0) | (idx >= n)
            bad = out if bad is None else bad | out
        flat = flat + idx * int(stride)
    if bad is not None and bool(_r.any(bad)):
        raise ValueError("invalid entry in coordinates array")
    return flat


def unravel_index(indices, shape, order="C"):
    """The coordinates, in an array of ``shape``, of the flat ``indices`` (reads whether any
    is out of range: one boolean)."""
    if _np.ndim(indices) == 0:  # (a 0-d index: NumPy's errors for its shape, of a 0-d one)
        _np.unravel_index(_np.zeros((), asarray(indices).dtype), shape, order=order)
    elif _np.ndim(shape) == 1 and len(shape) == 0 and _np.size(indices):
        # (indices into shape (): NumPy's error for the first out of bounds, else its 0-d one)
        _np.unravel_index(_host(asarray(indices)), shape, order=order)
    else:
        _checked_index_probe(lambda idx, *r, **kw: _np.unravel_index(idx[0], *r, **kw),
                             [indices], shape, order=order)  # fmt: skip
    shape = tuple(int(d) for d in _np.atleast_1d(shape))
    idx = asarray(indices).astype(_np.intp)
    size = int(_np.prod(shape))
    if bool(_r.any((idx < 0) | (idx >= size))):
        first = _host(idx.reshape(-1))
        first = first[(first < 0) | (first >= size)][0]
        raise ValueError(f"index {first} is out of bounds for array with size {size}")
    out = []
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for ax in axes:
        out.append(_ew.remainder(idx, shape[ax]))
        idx = _ew.floor_divide(idx, shape[ax])
    return tuple(out[::-1] if order == "C" else out)


# --- elementwise tests --------------------------------------------------------------------------


def iscomplex(x):
    """Whether each element has a non-zero imaginary part (all False for real dtypes)."""
    ax = asarray(x)
    if ax.dtype.kind == "c":
        return _ew.imag(ax) != 0
    res = zeros(ax.shape, bool, device=ax.device)
    return res[()]


def isreal(x):
    """Whether each element has a zero imaginary part."""
    return _ew.imag(asarray(x)) == 0


def _inf_of_sign(x, out, negative: bool):
    is_inf = _ew.isinf(x)
    try:
        signbit = _ew.signbit(x)
    except TypeError as e:
        dtype = asarray(x).dtype
        raise TypeError(f"This operation is not supported for {dtype} values because it would "
                        "be ambiguous.") from e  # fmt: skip
    return _ew.logical_and(is_inf, signbit if negative else ~signbit, out)


def isneginf(x, out=None):
    """Whether each element is negative infinity."""
    return _inf_of_sign(x, out, True)


def isposinf(x, out=None):
    """Whether each element is positive infinity."""
    return _inf_of_sign(x, out, False)


def real_if_close(a, tol=100):
    """The real part of complex ``a`` when every imaginary part is within ``tol`` machine
    epsilons of zero (reads that one boolean), else ``a``."""
    a = asarray(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = _np.finfo(a.dtype).eps * tol
    if bool(_r.all(_ew.absolute(_ew.imag(a)) < tol)):
        a = _ew.real(a)
    return a


# --- selection ----------------------------------------------------------------------------------


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` where 1-D ``condition`` is true."""
    condition = asarray(condition)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    (picks,) = nonzero(condition)
    return take(a, picks, axis=axis, out=out)


def extract(condition, arr):
    """The elements of ``arr`` where ``condition`` is true, flattened."""
    return take(asarray(arr).reshape(-1), nonzero(asarray(condition).reshape(-1))[0])


def choose(a, choices, out=None, mode="raise"):
    """Each element from the choice array its index in ``a`` names (mode 'raise' reads whether
    any index is out of range: one boolean)."""
    from .reductions import deliver

    a = asarray(a)
    choices = [c if type(c) in (int, float, complex, bool) else asarray(c) for c in choices]
    tiny = [c if not isinstance(c, ndarray) else _np.zeros((), c.dtype) for c in choices]
    dtype = _np.choose(_np.zeros((), a.dtype), tiny, mode=mode).dtype
    shape = _np.broadcast(*(_np.broadcast_to(_np.empty((), bool), _np.shape(c))
                            for c in (*choices, a))).shape  # fmt: skip
    n = len(choices)
    idx = a.astype(_np.intp)
    if mode == "wrap":
        idx = _ew.remainder(idx, n)
    elif mode == "clip":
        idx = _ew.clip(idx, 0, n - 1)
    elif bool(_r.any((idx < 0) | (idx >= n))):
        raise ValueError("invalid entry in choice array")
    result = broadcast_to(asarray(choices[n - 1]).astype(dtype), shape)
    for k in range(n - 2, -1, -1):
        result = _ew.where(idx == k, asarray(choices[k]).astype(dtype), result)
    return deliver(broadcast_to(result, shape).astype(dtype), out)


def select(condlist, choicelist, default=0):
    """Elementwise, the choice of the first true condition (``default`` where none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choicelist = [c if type(c) in (int, float, complex) else asarray(c) for c in choicelist]
    choicelist.append(default if type(default) in (int, float, complex) else asarray(default))
    try:
        dtype = _np.result_type(*(c.dtype if isinstance(c, ndarray) else c for c in choicelist))
    except TypeError as e:
        msg = f"Choicelist and default value do not have a common dtype: {e}"
        raise TypeError(msg) from None
    condlist = broadcast_arrays(*(asarray(c) for c in condlist))
    choicelist = broadcast_arrays(*(asarray(c) for c in choicelist))
    for i, cond in enumerate(condlist):
        if cond.dtype != _np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = _np.broadcast_shapes(condlist[0].shape, choicelist[0].shape)
    result = broadcast_to(choicelist[-1].astype(dtype), shape)
    for choice, cond in zip(choicelist[-2::-1], condlist[::-1]):
        result = _ew.where(cond, choice.astype(dtype), result)
    return broadcast_to(result, shape).astype(dtype)


def piecewise(x, condlist, funclist, *args, **kw):
    """``x``'s shape filled, where each condition holds, with its function of ``x`` there (or
    its constant); the functions are called on numloom arrays of the selected elements."""
    x = asarray(x)
    n2 = len(funclist)
    zero_d = isinstance(condlist, (ndarray, _np.ndarray)) and condlist.ndim == 0  # (x > 3 of
    # a 0-d x: NumPy's scalar, numloom's 0-d array)
    if _np.isscalar(condlist) or zero_d or (
            not isinstance(condlist[0], (list, ndarray, _np.ndarray)) and x.ndim != 0):
        condlist = [condlist]
    condlist = array(condlist, dtype=bool) if not isinstance(condlist, ndarray) else \
        condlist.astype(bool)  # fmt: skip
    n = len(condlist)
    if n == n2 - 1:
        condelse = ~_r.any(condlist, axis=0, keepdims=True)
        condlist = concatenate([condlist, condelse], axis=0)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = zeros_like(x)
    for k, func in enumerate(funclist):
        cond = condlist[k]
        if not callable(func):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


def take_along_axis(arr, indices, axis=-1):
    """Values of ``arr`` at ``indices`` along ``axis`` (matching indices as ``argsort``
    returns them): one gather."""
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    else:
        axis = normalize_axis_index(axis, arr.ndim)
    return arr[_along_axis_index(arr.shape, indices, axis)]


# --- phase unwrapping -----------------------------------------------------------------------------


def unwrap(p, discont=None, axis=-1, *, period=2 * _np.pi):
    """``p`` with jumps larger than ``discont`` replaced by their ``period`` complements."""
    p = asarray(p)
    nd = p.ndim
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None, None)] * nd
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = _np.result_type(dd.dtype, period)
    if _np.issubdtype(dtype, _np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = _ew.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        fix = (ddmod == interval_low) & (dd > 0)
        ddmod = _ew.where(fix, interval_high, ddmod).astype(ddmod.dtype)
    ph_correct = ddmod - dd
    ph_correct = _ew.where(_ew.absolute(dd) < discont, 0, ph_correct).astype(ph_correct.dtype)
    up = array(p, copy=True, dtype=dtype)
    up[slice1] = p[slice1] + ph_correct.cumsum(axis)
    return up


# --- vector products ----------------------------------------------------------------------------


def _gufunc_check(numpy_fn, x1: ndarray, x2: ndarray, cores: tuple, kwargs: dict):
    """NumPy's ``numpy_fn`` on stand-ins (loop axes cut to one element, core axes zero-strided):
    its core-dimension and dtype errors, and the result dtype."""
    probes = []
    for x, core in zip((x1, x2), cores):
        if x.ndim < core:
            probes.append(_np.zeros(x.shape, x.dtype))
            continue
        loop = tuple(min(n, 1) for n in x.shape[: x.ndim - core])
        shape = loop + x.shape[x.ndim - core :]
        probes.append(_np.lib.stride_tricks.as_strided(_np.zeros(1, x.dtype), shape,
                                                       (0,) * len(shape)))  # fmt: skip
    return numpy_fn(*probes, **kwargs).dtype


def _vector_product(name: str, numpy_fn, x1, x2, cores: tuple, kwargs: dict, compute):
    from .reductions import deliver

    out = kwargs.pop("out", None)
    if kwargs or isinstance(out, tuple) or not (isinstance(x1, ndarray) or
                                                 isinstance(x2, ndarray)):  # fmt: skip
        extra = dict(kwargs, **({} if out is None else {"out": out}))
        return call_numpy(name, numpy_fn, x1, x2, **extra)
    x1, x2 = asarray(x1), asarray(x2)
    dtype = _gufunc_check(numpy_fn, x1, x2, cores, {})
    return deliver(compute(x1, x2).astype(dtype, copy=False), out)


def vecdot(x1, x2, /, out=None, *, axis=-1, **kwargs):
    """The dot products of the vectors along ``axis`` (the first conjugated)."""
    if axis != -1 and not kwargs:
        x1, x2 = moveaxis(asarray(x1), axis, -1), moveaxis(asarray(x2), axis, -1)
    elif axis != -1:
        kwargs["axis"] = axis
    return _vector_product("vecdot", _np.vecdot, x1, x2, (1, 1), dict(kwargs, out=out),
                           lambda a, b: _r.sum(_ew.conjugate(a) * b, axis=-1))  # fmt: skip


def matvec(x1, x2, /, out=None, **kwargs):
    """The products of the matrices in ``x1`` with the vectors in ``x2``."""
    from .products import matmul

    return _vector_product("matvec", _np.matvec, x1, x2, (2, 1), dict(kwargs, out=out),
                           lambda a, b: matmul(a, b[..., None])[..., 0])  # fmt: skip


def vecmat(x1, x2, /, out=None, **kwargs):
    """The products of the (conjugated) vectors in ``x1`` with the matrices in ``x2``."""
    from .products import matmul

    return _vector_product("vecmat", _np.vecmat, x1, x2, (1, 2), dict(kwargs, out=out),
                           lambda a, b: matmul(_ew.conjugate(a)[..., None, :], b)[..., 0, :])  # fmt: skip


# --- conversions and function application -------------------------------------------------------


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``a`` as a numloom array (numloom has no array subclasses: as ``asarray``)."""
    return asarray(a, dtype=dtype, order=order, device=device, copy=copy)


def asarray_chkfinite(a, dtype=None, order=None):
    """``a`` as an array, checked to hold no infinities or NaNs (reads that one boolean)."""
    a = asarray(a, dtype=dtype, order=order)
    if a.dtype.kind in "fc" and not bool(_r.all(_ew.isfinite(a))):
        raise ValueError("array must not contain infs or NaNs")
    return a


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function`` called on the index grids of ``shape`` (numloom arrays of ``dtype``)."""
    return function(*indices(shape, dtype=dtype), **kwargs)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (a numloom view each),
    the results stacked where the slices were."""
    arr = asarray(arr)
    nd = arr.ndim
    axis = normalize_axis_index(axis, nd)
    moved = moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if not outer or 0 in outer:
        if 0 in outer:
            raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    made = [func1d(moved[ind], *args, **kwargs) for ind in _np.ndindex(outer)]
    if not any(isinstance(r, ndarray) for r in made):
        # NumPy's values (a NumPy function of each slice): NumPy's own loop, a buffer of the
        # first result's dtype filled in place, one array (not a plan of a piece a result)
        first = _np.asanyarray(made[0])
        buff = _np.empty(outer + first.shape, first.dtype)
        for ind, r in zip(_np.ndindex(outer), made):
            buff[ind] = r
        return transpose(asarray(buff, device=arr.device), _result_axes(axis, nd, first.ndim))
    results = [asarray(r) for r in made]
    stacked = concatenate([r[None] for r in results], axis=0)
    res = stacked.reshape(outer + results[0].shape)
    out = transpose(res, _result_axes(axis, nd, results[0].ndim))
    # of the first result's subclass, as NumPy's buffer (``zeros_like`` of it); of arr's,
    # the guard in front of this function makes it
    return of_class(out, made[0]) if programs_subclass(made[0]) else out


def _result_axes(axis: int, nd: int, res_nd: int) -> list:
    """The transpose putting ``apply_along_axis``'s stacked results (the loop's axes, then
    each result's ``res_nd``) where the slices' axis was."""
    return list(range(axis)) + list(range(nd - 1, nd - 1 + res_nd)) + list(range(axis, nd - 1))


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied over each axis in ``axes`` in turn, the axis kept (as an axis
    of length 1) where ``func`` reduces it."""
    val = asarray(a)
    N = val.ndim
    if _np.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = N + axis
        res = asarray(func(val, axis))
        if res.ndim == val.ndim:
            val = res
        else:
            from .shapes import expand_dims

            res = expand_dims(res, axis)
            if res.ndim == val.ndim:
                val = res
            else:
                raise ValueError("function is not returning an array of the correct shape")
    return val

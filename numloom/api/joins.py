"""Joining, splitting, tiling and rearranging arrays, as DAG nodes.

Joins are one CONCAT node over inputs cast to NumPy's result dtype; splits, flips and the
``atleast_*`` family are views of their input's storage (writes through them are seen by it);
``tile`` and scalar ``repeat`` are a broadcast view read out in C order; ``take`` and array
``repeat`` are a GATHER (``pad``, in ``padding.py``, is CONCAT of constant blocks, broadcast
edges and reversed slices); ``tril``/``triu`` select with a mask built from IOTAs. Only
``nonzero``, ``flatnonzero`` and ``argwhere`` (whose result shape is data) and array ``repeats``
read data on the host.

Most functions follow NumPy's own Python source line for line, so shapes, dtypes and errors are
NumPy's. Where NumPy's C code decides (concatenate, take, repeat), NumPy runs on stand-ins that
hold no data: zero-stride arrays of the full shape where only an error can come out (NumPy
raises before it allocates), or arrays with every axis cut to at most one element where a
result comes out (its dtype is the real one).
"""

from __future__ import annotations

import operator

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..core import dag as _dag
from ..core.array import (
    _check_dtype,
    asarray,
    copyable,
    from_host,
    ndarray,
    priority_subclass,
    result,
    share,
)
from ..core.array_views import numpy_view, reshape_array
from ..core.dag import Op, View, node
from ..core.device import get_device
from ..core.views import reshape_view
from . import elementwise as _api  # (where, clip, subtract...: the elementwise family)
from .creation import arange, small_grid
from .fallback import to_numpy
from .indexing import device_true_positions, unravel_positions
from .shapes import broadcast_arrays, broadcast_to, transpose
from .ufuncs import scalar_node
from .writes import as_numloom

_SCALARS = (bool, int, float, complex, _np.generic)


# --- stand-ins, slices and nodes ----------------------------------------------------------------


def _zero_stride(shape: tuple, dtype):
    """A NumPy array of ``shape`` holding one element: NumPy can check it but not fill it."""
    shape = tuple(shape)
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def _cut(shape: tuple) -> tuple:
    """``shape`` with every axis cut to at most one element (empty axes stay empty)."""
    return tuple(min(n, 1) for n in shape)


def _full_stand_in(x):
    return _zero_stride(x.shape, x.dtype) if isinstance(x, (ndarray, _np.ndarray)) else x


def _small_stand_in(x):
    return _np.zeros(_cut(x.shape), x.dtype) if isinstance(x, (ndarray, _np.ndarray)) else x


def _view(a: ndarray, key: tuple) -> ndarray:
    """``a[key]`` for a key of slices and None: a view of a's storage."""
    return numpy_view(a, _np.ndarray.__getitem__, key)


def _axis_slice(a: ndarray, axis: int, start, stop, step=None) -> ndarray:
    """``a[..., start:stop:step]`` along ``axis``: a view, as indexing makes it (roll's and
    diff's operands, not returned themselves)."""
    return a[(slice(None),) * axis + (slice(start, stop, step),)]


def _ravel(a: ndarray) -> ndarray:
    return reshape_array(a, (a.size,))


def _copy(a: ndarray) -> ndarray:
    """A new array with a's value (buffers are immutable, so sharing the node is a copy)."""
    return result(copyable(a._node()), a.device)


def _device_of(items) -> str | None:
    return next((x.device for x in items if isinstance(x, ndarray)), None)


def _const_node(value, shape: tuple, dtype):
    """``value`` (already of ``dtype``) broadcast to ``shape``: no memory until evaluated."""
    n = node(Op.CONST, (), _np.asarray(value, dtype)[()], (), dtype)
    return n if not shape else node(Op.VIEW, (n,), View(shape, (0,) * len(shape)), shape, dtype)


def _concat_node(srcs: list, axis: int, dtype):
    """``srcs`` (of ``dtype``) joined along ``axis``; empty pieces are left out."""
    shape = list(srcs[0].shape)
    shape[axis] = sum(s.shape[axis] for s in srcs)
    shape = tuple(shape)
    if 0 in shape:
        return _const_node(0, shape, dtype)
    kept = [s for s in srcs if s.shape[axis]]
    if len(kept) == 1:
        return kept[0]
    return node(Op.CONCAT, tuple(kept), axis, shape, dtype)


def _joined(arrays: list, axis: int) -> ndarray:
    """A new array: arrays of one dtype joined along ``axis`` (shapes already checked)."""
    nodes = [a._node() for a in arrays]
    return result(_concat_node(nodes, axis, nodes[0].dtype), arrays[0].device)


def _reshaped_copy(a: ndarray, view: View, shape: tuple) -> ndarray:
    """A new array: a's storage read through ``view``, then reshaped in C order to ``shape``."""
    flat = reshape_view(view, shape)
    if flat is not None:
        return result(share(a, flat)._node(), a.device)
    n = share(a, view)._node()
    return result(node(Op.VIEW, (n,), View.contiguous(shape), shape, a.dtype), a.device)


def _finish(n, out, device):
    """The new array holding ``n``, or ``out`` with ``n`` written into it."""
    if out is None:
        return result(n, device)
    if isinstance(out, ndarray):
        out._assign(n)
        return out
    out[...] = result(n, device).get()  # a NumPy array given as out
    return out


# --- concatenate and the stacking family --------------------------------------------------------


def _joined_shape(shapes: list, axis) -> tuple | None:
    """The shape of ``shapes`` joined along ``axis``, or None where NumPy raises."""
    if not shapes or not shapes[0]:
        return None
    ndim = len(shapes[0])
    try:
        axis = operator.index(axis)
    except TypeError:
        return None
    if not -ndim <= axis < ndim or any(len(s) != ndim for s in shapes):
        return None
    axis %= ndim
    rest = shapes[0][:axis] + shapes[0][axis + 1 :]
    if any(s[:axis] + s[axis + 1 :] != rest for s in shapes):
        return None
    return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1 :]


def _concat_items(arrays) -> list:
    """The inputs: numloom arrays, and Python or NumPy scalars kept as they are (NumPy weighs
    Python scalars weakly when it promotes)."""
    try:
        items = list(arrays)
    except TypeError:
        _np.concatenate(_full_stand_in(arrays))  # NumPy's error for a non-sequence
        raise
    return [x if isinstance(x, _SCALARS) else asarray(x) for x in items]


def _item_shape(x, flat: bool) -> tuple:
    shape = x.shape if isinstance(x, (ndarray, _np.ndarray)) else ()
    return (shape or (1,)) if flat else shape


def _concat_probe(items: list, axis, out, dtype, casting):
    """The shape and dtype of ``np.concatenate(items, axis, ...)``; NumPy's errors."""
    flat = axis is None
    shape = _joined_shape([_item_shape(x, flat) for x in items], 0 if flat else axis)
    if shape is None or (out is not None and out.shape != shape):
        full_out = None if out is None else _zero_stride(out.shape, out.dtype)
        _np.concatenate([_full_stand_in(x) for x in items], axis, out=full_out, dtype=dtype,
                        casting=casting)  # fmt: skip
        raise AssertionError("numloom and NumPy disagree about concatenate's shapes")
    small = [_small_stand_in(x) for x in items]
    small_out = None
    if out is not None:
        small_shape = _joined_shape([_item_shape(x, flat) for x in small], 0 if flat else axis)
        small_out = _np.zeros(small_shape, out.dtype)
    probe = _np.concatenate(small, axis, out=small_out, dtype=dtype, casting=casting)
    _check_dtype(probe.dtype)
    return shape, probe.dtype


def _item_node(x, dtype, flat: bool):
    """One input of a CONCAT: the array's node (or the scalar's) cast to ``dtype``."""
    if isinstance(x, ndarray):
        n = x._node()
        return n if n.dtype == dtype else node(Op.CAST, (n,), None, n.shape, dtype)
    n = scalar_node(x, dtype)
    return node(Op.VIEW, (n,), View((1,), (0,)), (1,), dtype) if flat else n


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis: one CONCAT node over inputs cast to the result
    dtype (``axis=None`` joins the flattened inputs)."""
    items = _concat_items(arrays)
    if out is None and dtype is None and type(axis) is int:
        joined = _plain_join(items, axis)
        if joined is not None:
            return joined
    if axis is None:
        items = [_ravel(x) if isinstance(x, ndarray) else x for x in items]
    shape, out_dtype = _concat_probe(items, axis, out, dtype, casting)
    join_axis = 0 if axis is None else normalize_axis_index(axis, len(shape))
    srcs = [_item_node(x, out_dtype, axis is None) for x in items]
    made = _finish(_concat_node(srcs, join_axis, out_dtype), out, _device_of(items))
    return made if out is not None else priority_subclass(made, items)


def _plain_join(items: list, axis: int):
    """The common join, without NumPy's probe: numloom arrays of one dtype, rank and device
    whose shapes agree but along ``axis`` (a valid axis). None for any other call."""
    if len(items) < 2 or type(items[0]) is not ndarray:
        return None
    first = items[0]
    ndim, dtype, device, shape = first.ndim, first._dtype, first._storage.device, first.shape
    if not -ndim <= axis < ndim:
        return None
    axis %= ndim
    for x in items:
        if (type(x) is not ndarray or x._dtype != dtype or x._storage.device != device
                or x.ndim != ndim or x.shape[:axis] != shape[:axis]
                or x.shape[axis + 1 :] != shape[axis + 1 :]):  # fmt: skip
            return None
    return result(_concat_node([x._node() for x in items], axis, dtype), device)


def _sequence(arrays) -> tuple:
    """The arrays of a stacking call, checked as NumPy's dispatcher checks them."""
    if not hasattr(arrays, "__getitem__"):
        raise TypeError('arrays to stack must be passed as a "sequence" type such as list or '
                        "tuple.")  # fmt: skip
    return tuple(arrays)


def _as_tuple(arrs) -> tuple:
    return arrs if isinstance(arrs, tuple) else (arrs,)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays of one shape along a new axis (each input viewed with a new axis of 1)."""
    arrays = [asarray(a) for a in _sequence(arrays)]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, arrays[0].ndim + 1)
    key = (slice(None),) * axis + (None,)
    expanded = [_view(a, key) for a in arrays]
    return concatenate(expanded, axis=axis, out=out, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = _as_tuple(atleast_2d(*_sequence(tup)))
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = _as_tuple(atleast_1d(*_sequence(tup)))
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def dstack(tup):
    return concatenate(_as_tuple(atleast_3d(*_sequence(tup))), 2)


def column_stack(tup):
    """Stack 1-D arrays as columns (a 1-D input is viewed as one column), 2-D as they are."""
    arrays = []
    for v in _sequence(tup):
        arr = asarray(v)
        if arr.ndim < 2:
            arr = transpose(reshape_array(arr, (1,) * (2 - arr.ndim) + arr.shape))
        arrays.append(arr)
    return concatenate(arrays, 1)


def append(arr, values, axis=None):
    arr = asarray(arr)
    if axis is None:
        if arr.ndim != 1:
            arr = _ravel(arr)
        values = _ravel(asarray(values))
        axis = arr.ndim - 1
    return concatenate((arr, values), axis=axis)


# --- splitting: every piece is a view ----------------------------------------------------------


def _piece(stand_in, start, stop, axis):
    """What NumPy's array_split does for one piece, on a stand-in: swap, slice, swap back."""
    return _np.swapaxes(_np.swapaxes(stand_in, axis, 0)[start:stop], axis, 0)


def array_split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split along ``axis`` into sections of nearly equal size, or at indices."""
    if isinstance(indices_or_sections, ndarray):
        indices_or_sections = indices_or_sections.get()
    try:
        total = ary.shape[axis]
    except AttributeError:
        total = len(ary)
    ary = asarray(ary)
    try:
        sections = len(indices_or_sections) + 1
        div_points = [0] + list(indices_or_sections) + [total]
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        div_points = _np.array(sizes, dtype=_np.intp).cumsum()
    return [
        numpy_view(ary, _piece, div_points[i], div_points[i + 1], axis) for i in range(sections)
    ]


def split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split into equal sections (or at indices) along ``axis``."""
    try:
        len(indices_or_sections)
    except TypeError:
        sections = indices_or_sections
        n = ary.shape[axis]
        if n % sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    if _ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# --- tile and repeat -----------------------------------------------------------------------------


def tile(A, reps):
    """``A`` repeated ``reps`` times per axis: a broadcast view, read out in C order."""
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    c = asarray(A)
    if c.ndim < len(tup):
        c = reshape_array(c, (1,) * (len(tup) - c.ndim) + c.shape)
    if all(t == 1 for t in tup):
        return _copy(c)
    tup = (1,) * (c.ndim - len(tup)) + tup
    if c.size == 0:  # NumPy only reshapes (so a stand-in gives its shape and errors)
        shape = _np.tile(_zero_stride(c.shape, c.dtype), tup).shape
        return result(_const_node(0, shape, c.dtype), c.device)
    if any(t < 0 for t in tup):
        raise ValueError("negative dimensions are not allowed")
    shape = tuple(operator.index(s * t) for s, t in zip(c.shape, tup))
    # Axis k of the input becomes two: t_k copies (stride 0) of its s_k elements.
    dims, strides = [], []
    for t, n, stride in zip(tup, c.shape, c._view.strides):
        dims += [operator.index(t), n]
        strides += [0, stride]
    return _reshaped_copy(c, View(tuple(dims), tuple(strides), c._view.offset), shape)


def _repeat_picks(src: ndarray, repeats, axis):
    """``(axis, count)`` for one count per element, else ``(axis, indices along axis)``.

    NumPy computes them from the repeats (data, on the host) and raises its own errors.
    """
    try:
        ax = normalize_axis_index(0 if axis is None else axis, src.ndim)
    except (TypeError, _np.exceptions.AxisError):
        _np.repeat(_np.zeros(_cut(src.shape), _np.int8), repeats, axis)
        raise
    n = src.shape[ax]
    if _np.size(repeats) == 1:  # one count for all: repeat a single stand-in element
        picks = _np.repeat(_np.zeros(min(n, 1), _np.int8), repeats)
        return ax, picks.size if n else 0
    return ax, _np.repeat(_np.arange(n, dtype=_np.intp), repeats)


def repeat(a, repeats, axis=None):
    """Each element repeated: one count is a broadcast view read out in C order; counts per
    element become a GATHER whose indices are computed on the host from the counts."""
    a = asarray(a)
    if isinstance(repeats, ndarray):
        repeats = repeats.get()
    src = _ravel(a) if axis is None or a.ndim == 0 else a
    ax, picks = _repeat_picks(src, repeats, axis)
    if isinstance(picks, int):
        v = src._view
        view = View(v.shape[: ax + 1] + (picks,) + v.shape[ax + 1 :],
                    v.strides[: ax + 1] + (0,) + v.strides[ax + 1 :], v.offset)  # fmt: skip
        shape = v.shape[:ax] + (v.shape[ax] * picks,) + v.shape[ax + 1 :]
        return _reshaped_copy(src, view, shape)
    index = asarray(picks, device=src.device)._node()
    shape = src.shape[:ax] + index.shape + src.shape[ax + 1 :]
    return result(node(Op.GATHER, (src._node(), index), ax, shape, src.dtype), src.device)


# --- roll, rot90, flip, diff ---------------------------------------------------------------------


def roll(a, shift, axis=None):
    """Elements shifted cyclically: per rolled axis, CONCAT of the two slices swapped."""
    a = asarray(a)
    if axis is None:
        return reshape_array(roll(_ravel(a), shift, 0), a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    pairs = _np.broadcast(shift.get() if isinstance(shift, ndarray) else shift, axes)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        shifts[ax] += int(sh)
    cur = a
    for ax, offset in shifts.items():
        offset %= a.shape[ax] or 1
        if offset:
            tail, head = _axis_slice(cur, ax, -offset, None), _axis_slice(cur, ax, None, -offset)
            cur = _joined([tail, head], ax)
    return _copy(a) if cur is a else cur


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``: a view."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = asarray(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not (-m.ndim <= axes[0] < m.ndim and -m.ndim <= axes[1] < m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return _view(m, (slice(None),))
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    axes_list = list(range(m.ndim))
    axes_list[axes[0]], axes_list[axes[1]] = axes_list[axes[1]], axes_list[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1]), axes_list)
    return flip(transpose(m, axes_list), axes[1])


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (all axes when None): a view."""
    return numpy_view(asarray(m), _np.flip, axis)


def fliplr(m):
    return numpy_view(asarray(m), _np.fliplr)


def flipud(m):
    return numpy_view(asarray(m), _np.flipud)


def _diff_edge(value, a: ndarray, axis: int) -> ndarray:
    """A prepend/append value as NumPy takes it: an array, a scalar broadcast to one slice."""
    value = asarray(value)
    if value.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        value = broadcast_to(value, tuple(shape))
    return value


def diff(a, n=1, axis=-1, prepend=_np._NoValue, append=_np._NoValue):
    """The n-th discrete difference along ``axis``: shifted views subtracted."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    combined = [a]
    if prepend is not _np._NoValue:
        combined.insert(0, _diff_edge(prepend, a, axis))
    if append is not _np._NoValue:
        combined.append(_diff_edge(append, a, axis))
    if len(combined) > 1:
        a = concatenate(combined, axis)
    op = _api.not_equal if a.dtype == _np.bool_ else _api.subtract
    for _ in range(n):
        a = op(_axis_slice(a, axis, 1, None), _axis_slice(a, axis, None, -1))
    return a


# --- atleast_* -----------------------------------------------------------------------------------


def _one_or_tuple(res: list):
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    res = []
    for ary in arys:
        a = asarray(ary)
        res.append(reshape_array(a, (1,)) if a.ndim == 0 else a)
    return _one_or_tuple(res)


def atleast_2d(*arys):
    res = []
    for ary in arys:
        a = asarray(ary)
        if a.ndim == 0:
            a = reshape_array(a, (1, 1))
        elif a.ndim == 1:
            a = _view(a, (None, slice(None)))
        res.append(a)
    return _one_or_tuple(res)


def atleast_3d(*arys):
    res = []
    for ary in arys:
        a = asarray(ary)
        if a.ndim == 0:
            a = reshape_array(a, (1, 1, 1))
        elif a.ndim == 1:
            a = _view(a, (None, slice(None), None))
        elif a.ndim == 2:
            a = _view(a, (slice(None), slice(None), None))
        res.append(a)
    return _one_or_tuple(res)


# --- take ----------------------------------------------------------------------------------------


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, ndarray) else _np.shape(x)


def _take_shape(src_shape: tuple, axis: int, index_shape: tuple) -> tuple:
    return tuple(src_shape[:axis]) + tuple(index_shape) + tuple(src_shape[axis + 1 :])


def _valid_axis(axis, ndim: int) -> int | None:
    """``axis`` normalized, or None where NumPy raises for it."""
    try:
        return normalize_axis_index(axis, ndim)
    except (TypeError, _np.exceptions.AxisError):
        return None


def _take_probe(a: ndarray, indices, axis, out, mode) -> None:
    """NumPy's errors for this take. Host and computed indices are checked against the whole
    axis now; the bounds of pending numloom indices are checked when the GATHER runs."""
    index = indices
    if isinstance(indices, ndarray):
        index = _small_stand_in(indices) if indices._storage.pending else indices.get()
    src_shape = (a.size,) if axis is None else (a.shape or (1,))  # NumPy takes 0-d as 1-d
    ax = 0 if axis is None else _valid_axis(axis, len(src_shape))
    if ax is None:
        _np.take(_zero_stride(_cut(a.shape), a.dtype), index, axis, mode=mode)
        raise AssertionError(f"numloom and NumPy disagree about take's axis {axis!r}")
    shape = list(_cut(src_shape))
    shape[ax] = src_shape[ax]
    out_probe = None
    if out is not None:
        if out.shape != _take_shape(src_shape, ax, _shape_of(indices)):
            out_probe = _zero_stride(out.shape, out.dtype)  # NumPy raises before writing
        else:
            out_probe = _np.zeros(_take_shape(shape, ax, _np.shape(index)), out.dtype)
    _np.take(_zero_stride(tuple(shape), a.dtype), index, axis, out=out_probe, mode=mode)


def _index_array(indices, device) -> ndarray:
    """The indices as an intp array (converted as NumPy's take converts them)."""
    if not isinstance(indices, ndarray):
        indices = asarray(_np.asarray(indices), device=device)
    return indices if indices.dtype == _np.intp else indices.astype(_np.intp)


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None): a
    GATHER; mode 'wrap' and 'clip' first map the indices into range."""
    a = asarray(a)
    _take_probe(a, indices, axis, out, mode)
    src = _ravel(a) if axis is None or a.ndim == 0 else a
    ax = 0 if axis is None else normalize_axis_index(axis, src.ndim)
    n = src.shape[ax]
    index = _index_array(indices, src.device)
    if mode == "wrap" and n:
        index = _api.remainder(index, n)
    elif mode == "clip" and n:
        index = _api.clip(index, 0, n - 1)
    idx = index._node()
    shape = _take_shape(src.shape, ax, idx.shape)
    pending = isinstance(indices, ndarray) and indices._storage.pending
    where = _dag.user_line() if pending and mode == "raise" else None  # checked when it runs
    gathered = node(Op.GATHER, (src._node(), idx), ax, shape, src.dtype, where=where)
    return _finish(gathered, out, src.device)


# --- data-dependent shapes: evaluated, computed on the host --------------------------------------


def nonzero(a):
    """Indices of the non-zero elements, one array per axis. The result's shape is data, so
    ``a`` is evaluated here (a sync point) and NumPy finds them on the host."""
    a = asarray(a)
    if a.ndim:
        flat = device_true_positions(a)  # on a GPU, found there
        if flat is not None:
            return tuple(unravel_positions(flat, a.shape))
    return tuple(from_host(i, a.device) for i in _np.nonzero(a.get()))


def flatnonzero(a):
    return nonzero(_ravel(asarray(a)))[0]


def argwhere(a):
    """Indices of the non-zero elements, one row each: a sync point, like ``nonzero``."""
    a = asarray(a)
    if a.ndim:
        flat = device_true_positions(a)  # on a GPU, found there
        if flat is not None:
            return _stack_columns(unravel_positions(flat, a.shape), flat.shape[0])
    return from_host(_np.argwhere(a.get()), a.device)


def _stack_columns(columns: list, rows: int):
    """The (rows, len(columns)) array whose columns are ``columns``."""
    return concatenate([c.reshape(rows, 1) for c in columns], axis=1)


# --- triangles -----------------------------------------------------------------------------------


def _tri_mask(m: ndarray, k):
    """True where ``col - row <= k`` over m's last two axes: two IOTAs, no host data."""
    if m.ndim == 0:
        _np.tril(_np.zeros((), m.dtype))  # NumPy's error
    rows_n, cols_n = m.shape[-2:] if m.ndim >= 2 else (m.shape[0], m.shape[0])
    rows = reshape_array(arange(rows_n, device=m.device), (rows_n, 1))
    cols = reshape_array(arange(cols_n, device=m.device), (1, cols_n))
    return _api.less_equal(_api.subtract(cols, rows), k)


def tril(m, k=0):
    """``m`` with the elements above the k-th diagonal zeroed."""
    m = asarray(m)
    return _api.where(_tri_mask(m, k), m, m.dtype.type(0))


def triu(m, k=0):
    """``m`` with the elements below the k-th diagonal zeroed."""
    m = asarray(m)
    return _api.where(_tri_mask(m, k - 1), m.dtype.type(0), m)


def _ndim(a) -> int:
    """NumPy's ``ndim`` of an array or of what ``asarray`` would make of ``a``."""
    return a.ndim if isinstance(a, ndarray) else _np.ndim(a)


class _Grid:
    """``numpy.mgrid`` and ``numpy.ogrid`` with numloom arrays: NumPy makes each axis' values
    (ogrid's 1-d pieces, small); numloom holds them and broadcasts them into mgrid's dense grid
    lazily, so the grid costs no host memory and no copy."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        if not self.sparse and type(key) is tuple and small_grid(_grid_size(key)):
            return as_numloom(_np.mgrid[key])  # (a loop's small grid: NumPy's, made now)
        pieces = _np.ogrid[key]  # NumPy's errors, dtypes and values
        if isinstance(pieces, _np.ndarray):  # a lone slice: one 1-d array for both
            return from_host(pieces, get_device())
        arrays = tuple(from_host(p, get_device()) for p in pieces)
        return arrays if self.sparse else stack(broadcast_arrays(*arrays))

    def __repr__(self) -> str:
        return f"numloom.{'ogrid' if self.sparse else 'mgrid'}"


def _grid_size(key: tuple) -> int:
    """The elements of ``mgrid[key]``, as NumPy's ``nd_grid`` counts them (0 where a part of
    ``key`` is not a slice of numbers: the lazy path then asks NumPy)."""
    total = len(key)
    try:
        for part in key:
            if type(part) is not slice:
                return 0
            start = 0 if part.start is None else part.start
            step = 1 if part.step is None else part.step
            if isinstance(step, (complex, _np.complexfloating)):
                total *= int(abs(step))
            else:
                total *= max(0, int(-((start - part.stop) // step)))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return 0
    return total


class _Concatenator:
    """``numpy.r_`` and ``numpy.c_`` returning numloom arrays (NumPy builds the result)."""

    def __init__(self, name: str):
        self.name = name

    def __getitem__(self, key):
        out = getattr(_np, self.name)[to_numpy(key)]
        return from_host(out, get_device()) if type(out) is _np.ndarray else out

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"numloom.{self.name}"


mgrid, ogrid = _Grid(sparse=False), _Grid(sparse=True)
r_, c_ = _Concatenator("r_"), _Concatenator("c_")

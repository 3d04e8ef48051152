"""NumPy's functions that write into their first argument (put, place, putmask, copyto,
fill_diagonal, put_along_axis), as numloom writes: each is a ``setitem`` on the target, so the
write makes a new version of its storage that every view of it sees, recorded lazily and run
natively on every device. Where a position is written twice, the last value stays, as in NumPy.

NumPy checks the arguments first, on stand-ins that hold no data (empty or one-element arrays
of the real dtypes): the errors and casts are NumPy's. A target that is not a numloom array is
NumPy's own: the call is NumPy's. On the CPU, where nothing the call reads is pending, NumPy
writes straight into numloom's buffer (in place, as ``setitem`` stores there): that costs what
it costs in NumPy and evaluates nothing.
"""

from __future__ import annotations

import numpy as _np

from ..core import realize
from ..core.array import asarray, ndarray
from ..core.array_views import reshape_array
from . import elementwise as _ew
from .creation import arange, array
from .fallback import call_numpy
from .indexing import setitem, shape_str
from .joins import take
from .writes import arrays_in

__all__ = ["put", "place", "putmask", "copyto", "fill_diagonal", "put_along_axis"]


def _numpy_now(target, *args) -> bool:
    """Whether NumPy may write into ``target``'s CPU buffer now: a numloom array on the CPU,
    and nothing the call reads pending (or a target that is NumPy's own)."""
    if not isinstance(target, ndarray):
        return True
    if realize.TRACING or target._storage.device != "cpu":
        return False
    return not any(x._storage.pending for x in arrays_in((target, *args)))


def _cyclic(values: ndarray, count: int) -> ndarray:
    """``count`` values from flat ``values``, repeated from the start as often as needed."""
    if values.size == count:
        return values
    return take(values, _ew.remainder(arange(count, device=values.device), values.size))


def _write_flat(a: ndarray, positions: ndarray, values: ndarray) -> None:
    """``a.flat[positions] = values``: flat C-order positions (in range) turned into one
    index array per axis, then one scattered write."""
    if a.ndim == 1:
        setitem(a, positions, values)
        return
    if a.ndim == 0:
        setitem(a, (), values[-1])
        return
    coords, rest = [], positions
    for n in reversed(a.shape):
        coords.append(_ew.remainder(rest, n))
        rest = _ew.floor_divide(rest, n)
    setitem(a, tuple(reversed(coords)), values)


def _flat_values(values, dtype, device) -> ndarray:
    """``values`` cast to ``dtype`` as NumPy casts what it writes (Python integers out of
    range raise), flattened."""
    return array(values, dtype=dtype).reshape(-1) if not isinstance(values, ndarray) else \
        values.astype(dtype).reshape(-1)  # fmt: skip


def _safe_values(values, dtype) -> None:
    """NumPy's ``place`` and ``putmask`` take an array of values only where its dtype casts to
    ``dtype`` by the 'safe' rule (lists and scalars are cast as a write casts them)."""
    if isinstance(values, (ndarray, _np.ndarray)) and not _np.can_cast(values.dtype, dtype,
                                                                       "safe"):  # fmt: skip
        what = "scalar" if values.ndim == 0 else "array data"
        raise TypeError(f"Cannot cast {what} from {values.dtype!r} to {_np.dtype(dtype)!r} "
                        f"according to the rule 'safe'")  # fmt: skip


def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v``, ``v`` repeated as needed; out-of-range indices raise (mode
    'raise', when the write runs), wrap around ('wrap') or go to the ends ('clip')."""
    if _numpy_now(a, ind, v):
        return call_numpy("put", _np.put, a, ind, v, mode=mode)
    if a._readonly:
        raise ValueError("put: output array is read-only")
    _np.put(_np.zeros(1, a.dtype), _np.zeros(0, _np.intp), _np.zeros(0, a.dtype), mode=mode)
    ind = asarray(ind).reshape(-1).astype(_np.intp)
    v = _flat_values(v, a.dtype, a.device)
    if ind.size == 0 or v.size == 0:
        return None
    if a.size == 0:
        raise IndexError("cannot replace elements of an empty array")
    values = _cyclic(v, ind.size)
    if mode == "raise":
        n = a.size
        bad = (ind < -n) | (ind >= n)
        if bool(bad.any()):  # NumPy writes the values before the first bad index, then raises
            host = ind.get()
            first = int(_np.flatnonzero((host < -n) | (host >= n))[0])
            if first:
                _write_flat(a, _ew.remainder(ind[:first], n), values[:first])
            raise IndexError(f"index {host[first]} is out of bounds for axis 0 with size {n}")
    positions = take(arange(a.size, device=a.device), ind, mode=mode)
    _write_flat(a, positions, values)
    return None


def place(arr, mask, vals):
    """``arr[mask] = vals``, ``vals`` repeated as needed (reads how many elements the mask
    selects)."""
    if _numpy_now(arr, mask, vals):
        return call_numpy("place", _np.place, arr, mask, vals)
    mask = asarray(mask)
    if mask.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    mask = mask.reshape(arr.shape) != 0
    _safe_values(vals, arr.dtype)
    vals = _flat_values(vals, arr.dtype, arr.device)
    count = int(mask.sum())
    if count == 0:
        return None
    if vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    setitem(arr, mask, _cyclic(vals, count))
    return None


def putmask(a, mask, values):
    """``a[mask] = values`` where each selected element takes the value at its own flat
    position in ``values`` (repeated as needed): one fused select."""
    if _numpy_now(a, mask, values):
        return call_numpy("putmask", _np.putmask, a, mask, values)
    mask = asarray(mask)
    if mask.size != a.size:
        raise ValueError("putmask: mask and data must be the same size")
    _safe_values(values, a.dtype)
    values = _flat_values(values, a.dtype, a.device)
    if values.size == 0 or a.size == 0:
        return None
    full = _cyclic(values, a.size).reshape(a.shape)
    setitem(a, Ellipsis, _ew.where(mask.reshape(a.shape) != 0, full, a))
    return None


def _broadcast_check(what: str, shape: tuple, target: tuple) -> None:
    try:
        if _np.broadcast_shapes(shape, target) == target:
            return
    except ValueError:
        pass
    raise ValueError(f"could not broadcast {what} from shape {shape_str(shape)} into shape "
                     f"{shape_str(target)}")  # fmt: skip


def _one_element(x):
    """A NumPy stand-in of ``x`` with at most one element (Python scalars stay themselves)."""
    if isinstance(x, (ndarray, _np.ndarray)):
        return _np.zeros(tuple(min(n, 1) for n in x.shape), x.dtype)
    if isinstance(x, (list, tuple)):
        x = _np.asarray(x)
        return _np.zeros(tuple(min(n, 1) for n in x.shape), x.dtype)
    return x


def copyto(dst, src, casting="same_kind", where=True):
    """``dst[...] = src`` (broadcast, cast under ``casting``), only where ``where`` is true."""
    if _numpy_now(dst, src, where):
        return call_numpy("copyto", _np.copyto, dst, src, casting=casting, where=where)
    stand_in = _np.zeros(tuple(min(n, 1) for n in dst.shape), dst.dtype)
    _np.copyto(stand_in, _one_element(src), casting=casting)
    if not isinstance(src, (int, float, complex, bool)):
        _broadcast_check("input array", _np.shape(src), dst.shape)
    everywhere = where is True
    if not everywhere:
        where = asarray(where)
        if where.dtype != _np.bool_:
            _np.copyto(stand_in, stand_in, where=_one_element(where))
        _broadcast_check("where mask", where.shape, dst.shape)
    if dst._readonly:
        raise ValueError("assignment destination is read-only")
    value = asarray(src, device=dst.device).astype(dst.dtype)
    if everywhere:
        setitem(dst, Ellipsis, value)
    else:
        setitem(dst, Ellipsis, _ew.where(where, value, dst))
    return None


def fill_diagonal(a, val, wrap=False):
    """``val`` (repeated as needed) written along the main diagonal of ``a``; a tall 2-D
    array's diagonal restarts every N+1 rows when ``wrap``."""
    if _numpy_now(a, val):
        return call_numpy("fill_diagonal", _np.fill_diagonal, a, val, wrap)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = a.size
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:
            end = min(a.shape[1] * a.shape[1], a.size)
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(_np.cumprod(a.shape[:-1]).sum())
    val = _flat_values(val, a.dtype, a.device)
    if val.size == 0:
        return call_numpy("fill_diagonal", _np.fill_diagonal, a, val, wrap)
    positions = arange(0, end, step, device=a.device)
    if positions.size:
        _write_flat(a, positions, _cyclic(val, positions.size))
    return None


def put_along_axis(arr, indices, values, axis):
    """``arr`` written at ``indices`` along ``axis`` (matching indices as ``argsort``
    returns them). With ``axis=None`` NumPy writes into a flattened copy: ``arr`` is
    unchanged."""
    from numpy.lib.array_utils import normalize_axis_index


    if _numpy_now(arr, indices, values):
        return call_numpy("put_along_axis", _np.put_along_axis, arr, indices, values, axis)
    indices = asarray(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        key = _along_axis_index((arr.size,), indices, 0)
        if not arr.flags.c_contiguous:  # (NumPy writes into a read-only copy then)
            raise ValueError("assignment destination is read-only")
        setitem(reshape_array(arr, (arr.size,)), key, values)
        return None
    axis = normalize_axis_index(axis, arr.ndim)
    setitem(arr, _along_axis_index(arr.shape, indices, axis), values)
    return None


def _along_axis_index(arr_shape: tuple, indices: ndarray, axis: int) -> tuple:
    """The fancy index that picks ``indices`` along ``axis`` of an array of ``arr_shape``
    (``take_along_axis``, ``put_along_axis``)."""
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if len(arr_shape) != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    fancy = []
    for dim, n in enumerate(arr_shape):
        if dim == axis:
            fancy.append(indices)
        else:
            shape = (1,) * dim + (n,) + (1,) * (indices.ndim - dim - 1)
            fancy.append(arange(n, device=indices.device).reshape(shape))
    return tuple(fancy)

"""Shape functions that return views: reshape, transpose, squeeze, broadcast_to, diagonal...

Each runs NumPy's own function on a memoryless stand-in (``views.numpy_view``), so shapes,
axis handling and errors are NumPy's; the result shares the input's storage.
"""

from __future__ import annotations

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from .array import asarray, share
from .views import broadcast_shapes, broadcast_view, numpy_view, reshape_array


def _contiguous_stand_in(shape: tuple):
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, _np.int8), shape, (0,) * len(shape))


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """``a`` with a new shape: a view where NumPy gives one, else a copy."""
    a = asarray(a)
    shape = newshape if shape is None else shape
    if order not in ("C", "A", None):
        raise NotImplementedError("numloom reshapes in C order only")
    # NumPy resolves -1 and raises its errors; a zero-stride stand-in never copies.
    new_shape = _np.reshape(_contiguous_stand_in(a.shape), shape).shape
    out = reshape_array(a, new_shape)
    if copy is False and out._storage is not a._storage:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return out.copy() if copy else out


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    return numpy_view(asarray(a), _np.transpose, axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def matrix_transpose(x, /):
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    return numpy_view(asarray(a), _np.swapaxes, axis1, axis2)


def moveaxis(a, source, destination):
    return numpy_view(asarray(a), _np.moveaxis, source, destination)


def squeeze(a, axis=None):
    return numpy_view(asarray(a), _np.squeeze, axis)


def expand_dims(a, axis):
    a = asarray(a)
    axes = normalize_axis_tuple(axis, a.ndim + (len(axis) if isinstance(axis, tuple) else 1))
    shape = list(a.shape)
    for ax in sorted(axes):
        shape.insert(ax, 1)
    return reshape_array(a, tuple(shape))


def diagonal(a, offset=0, axis1=0, axis2=1):
    return numpy_view(asarray(a), _np.diagonal, offset, axis1, axis2)


def broadcast_to(array, shape, subok=False):
    """A read-only view of ``array`` broadcast to ``shape`` (NumPy's errors)."""
    a = asarray(array)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    _np.broadcast_to(_contiguous_stand_in(a.shape), shape)  # NumPy's errors
    return share(a, broadcast_view(a._view, shape), readonly=True)


def broadcast_arrays(*args, subok=False):
    arrays = [asarray(a) for a in args]
    shape = broadcast_shapes(*[a.shape for a in arrays])
    if shape is None:
        _np.broadcast_arrays(*[_contiguous_stand_in(a.shape) for a in arrays])
    return tuple(
        a if a.shape == shape else share(a, broadcast_view(a._view, shape), readonly=True)
        for a in arrays
    )


def view(a, dtype=None):
    a = asarray(a)
    if dtype is None or _np.dtype(dtype) == a.dtype:
        return share(a, a._view)
    raise NotImplementedError(
        f"numloom cannot reinterpret {a.dtype} data as {_np.dtype(dtype)}; use astype to convert"
    )


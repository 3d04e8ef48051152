"""Shape functions that return views: reshape, transpose, squeeze, broadcast_to, diagonal...

Each runs NumPy's own function on a memoryless stand-in (``views.numpy_view``), so shapes,
axis handling and errors are NumPy's; the result shares the input's storage.
"""

from __future__ import annotations

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from ..core.array import asarray, ndarray, plain, share
from ..core.array_views import numpy_view, reshape_array
from ..core.dag import View
from ..core.views import broadcast_shapes, broadcast_view, warn_on_first_write


def _contiguous_stand_in(shape: tuple):
    """A read-only int8 array of ``shape`` over one byte (zero strides): NumPy's shape
    functions run on it for their results and errors, and never copy."""
    return _np.ndarray(shape, _np.int8, _ONE_BYTE, 0, (0,) * len(shape))


_ONE_BYTE = bytes(1)


def _reshaped(old: tuple, shape, order) -> tuple:
    """NumPy's shape for ``reshape(a of shape old, shape)``: ints and one -1 resolved here,
    anything else (and every error) by NumPy on a stand-in."""
    if type(shape) is int:
        shape = (shape,)
    if type(shape) is tuple and order in ("C", "c", "F", "f", "A", "a"):
        size, known, unknown = 1, 1, -1
        for d in old:
            size *= d
        for k, d in enumerate(shape):
            if type(d) is not int or d < -1:
                break
            if d == -1:
                if unknown >= 0:
                    break
                unknown = k
            else:
                known *= d
        else:
            if unknown < 0 and known == size:
                return shape
            if unknown >= 0 and known and size % known == 0:
                return shape[:unknown] + (size // known,) + shape[unknown + 1 :]
    return _np.reshape(_contiguous_stand_in(old), shape, order=order).shape


def reshape(a, /, shape, order="C", *, copy=None):
    """``a`` with a new shape: a view where NumPy gives one, else a copy."""
    a = asarray(a)
    # NumPy resolves -1 and raises its errors; a zero-stride stand-in never copies.
    new_shape = _reshaped(a.shape, shape, order)
    if _fortran_order(a, order):
        # F order is C order on reversed axes: NumPy's own identity (its reshape does this).
        out = transpose(reshape_array(transpose(a), new_shape[::-1]))
    else:
        out = reshape_array(a, new_shape)
    if copy is False and out._storage is not a._storage:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return out.copy() if copy else out


def _fortran_order(a, order) -> bool:
    """Whether ``order`` reads ``a`` in Fortran order ('A': when a is F- but not C-contiguous)."""
    if order in ("F", "f"):
        return True
    if order in ("A", "a"):
        return not a._view.is_contiguous() and transpose(a)._view.is_contiguous()
    return False


def ravel(a, order="C"):
    """NumPy's ravel: a view when ``a`` is contiguous in the order asked for, else a copy
    (even where reshape could make a strided view, as NumPy's PyArray_Ravel)."""
    a = asarray(a)
    _np.ravel(_contiguous_stand_in(a.shape), order=order)  # NumPy's error for a bad order
    if order in ("K", "k"):
        a = transpose(a, _memory_axes(a._view))
    elif _fortran_order(a, order):
        a = transpose(a)
    flat = reshape_array(a, (a.size,))
    if a._view.is_contiguous() or flat._storage is not a._storage:
        return flat
    return flat.copy()


def _memory_axes(view) -> tuple:
    """The axes in the order memory runs (larger absolute stride first), as NumPy's 'K' order
    reads them; axes of length 1 or stride 0 keep their places (they say nothing of memory)."""
    axes = list(range(len(view.shape)))
    placed = [k for k in axes if view.shape[k] != 1 and view.strides[k] != 0]
    ordered = sorted(placed, key=lambda k: -abs(view.strides[k]))
    for at, k in zip(placed, ordered):
        axes[at] = k
    return tuple(axes)


def transpose(a, axes=None):
    if axes is None and isinstance(a, ndarray):  # (``a.T``: the axes reversed, a view)
        v = a._view
        if len(v.shape) < 2:
            return share(a, v)
        made = share(a, View(v.shape[::-1], v.strides[::-1], v.offset))
        h = a._host
        if h is not None and h[0]() is a._storage.version and made._host is None:
            # (a computed CPU array's host view, transposed: a loop's ``d.T.dot(d)`` runs now
            # on it, with no host view to make)
            made._host = (h[0], h[1].T, None, h[3])
        return made
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


def _of_class(x, subok: bool):
    """``x`` as a numloom array: of its own class with ``subok``, else a plain one on its
    memory (NumPy's ``array(x, copy=None, subok=subok)``)."""
    a = asarray(x)
    return a if subok else plain(a)


def broadcast_to(array, shape, subok=False):
    """A read-only view of ``array`` broadcast to ``shape`` (NumPy's errors)."""
    a = _of_class(array, subok)
    shape = _np.broadcast_to(_contiguous_stand_in(a.shape), shape).shape  # NumPy's errors; ints
    return share(a, broadcast_view(a._view, shape), readonly=True)


def broadcast_arrays(*args, subok=False):
    """NumPy 2's broadcast_arrays: writeable views that warn on their first write (NumPy says
    they will become read-only); an array of the broadcast shape is itself."""
    arrays = [_of_class(a, subok) for a in args]
    shape = broadcast_shapes(*[a.shape for a in arrays])
    if shape is None:
        _np.broadcast_arrays(*[_contiguous_stand_in(a.shape) for a in arrays])
    if all(a.shape == shape for a in arrays):
        return tuple(arrays)
    views = []
    for a in arrays:
        if a.shape != shape:  # (one of the broadcast shape is itself, as NumPy's)
            a = share(a, broadcast_view(a._view, shape))
            warn_on_first_write(a)
        views.append(a)
    return tuple(views)


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's ``lib.stride_tricks.sliding_window_view``: the windows as a view of ``x``'s
    memory (read-only unless ``writeable``, as NumPy's), never a copy of their whole size."""
    return numpy_view(_of_class(x, subok), _np.lib.stride_tricks.sliding_window_view,
                      window_shape, axis, writeable=writeable)  # fmt: skip


# NumPy's functions of ``numpy.lib.stride_tricks`` numloom has its own version of
STRIDE_TRICKS = {"sliding_window_view": sliding_window_view}


def view(a, dtype=None):
    """``a``'s memory seen as elements of ``dtype`` (NumPy's ``a.view(dtype)``): a view of its
    storage's bytes, with NumPy's shape, strides and errors."""
    from ..core.array import _check_dtype

    a = asarray(a)
    if dtype is None or _np.dtype(dtype) == a.dtype:
        return share(a, a._view)
    dtype = _np.dtype(dtype)
    _check_dtype(dtype)
    v, item = a._view, a.dtype.itemsize
    stand_in = _np.lib.stride_tricks.as_strided(
        _np.zeros(1, a.dtype), v.shape, tuple(s * item for s in v.strides)
    )
    picked = stand_in.view(dtype)  # NumPy's errors, shape and byte strides
    start = v.offset * item
    new_view = View(picked.shape, tuple(s // dtype.itemsize for s in picked.strides),
                    start // dtype.itemsize)  # fmt: skip
    storage_bytes = a._storage.version.size * a._storage.version.dtype.itemsize
    if any(b % dtype.itemsize for b in picked.strides + (start, storage_bytes)):
        raise NotImplementedError(
            f"numloom views memory as {dtype} only where its storage is whole elements of "
            f"{dtype.itemsize} bytes and each element of the view one of them; copy the array "
            f"first (a.copy().view(...))"
        )
    return share(a, new_view, dtype=dtype)


def complex_part(a, part: int):
    """The real (``part`` 0) or imaginary (1) parts of complex ``a``, as NumPy's ``z.real`` and
    ``z.imag``: a view of its storage as pairs of floats (offset*2 + part, strides*2)."""
    v = a._view
    parts = View(v.shape, tuple(2 * s for s in v.strides), 2 * v.offset + part)
    return share(a, parts, dtype=_np.dtype(f"f{a.dtype.itemsize // 2}"))

"""Array creation: host data in, constants, ranges and grids.

Constants (``zeros``, ``full``) are a broadcast 0-d CONST: they take no memory until something
is written into them or they are evaluated; ``arange`` is an IOTA node.
"""

from __future__ import annotations

import math
import operator

import numpy as _np

from .array import _check_dtype, _device_name, asarray, from_host, ndarray, result
from .dag import Op, View, node
from .device import get_device
from .ufuncs import scalar_node

_NO_VALUE = _np._NoValue


def _shape_arg(shape) -> tuple:
    """``shape`` as a tuple of ints, with NumPy's errors for bad shapes."""
    try:
        shape = (operator.index(shape),)
    except TypeError:
        shape = tuple(operator.index(s) for s in shape)
    for s in shape:
        if s < 0:
            raise ValueError("negative dimensions are not allowed")
    return shape


def _dtype_arg(dtype, default=float) -> _np.dtype:
    dtype = _np.dtype(default if dtype is None else dtype)
    _check_dtype(dtype)
    return dtype


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    """A new array of ``shape`` filled with ``fill_value`` (dtype inferred as NumPy does)."""
    shape = _shape_arg(shape)
    if isinstance(fill_value, ndarray):
        fill_value = fill_value.get()
    if dtype is None:
        dtype = _np.array(fill_value).dtype
    dtype = _dtype_arg(dtype)
    if _np.ndim(fill_value) != 0:
        return from_host(_np.full(shape, fill_value, dtype), _device_name(device))
    _np.full((), fill_value, dtype)  # NumPy's errors for values the dtype cannot hold
    value = scalar_node(fill_value, dtype)
    n = node(Op.VIEW, (value,), View(shape, (0,) * len(shape), 0), shape, dtype)
    return result(n if shape else value, _device_name(device))


def zeros(shape, dtype=float, order="C", *, device=None, like=None) -> ndarray:
    return full(shape, 0, _dtype_arg(dtype), device=device)


def ones(shape, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    return full(shape, 1, _dtype_arg(dtype), device=device)


def empty(shape, dtype=float, order="C", *, device=None, like=None) -> ndarray:
    """Like NumPy's ``empty``; numloom's empty arrays hold zeros."""
    return zeros(shape, dtype, device=device)


def _like_args(a, dtype, shape):
    a = asarray(a)
    return (a.shape if shape is None else shape), (a.dtype if dtype is None else dtype), a.device


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    shape, dtype, dev = _like_args(a, dtype, shape)
    return full(shape, 0, dtype, device=device or dev)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    shape, dtype, dev = _like_args(a, dtype, shape)
    return full(shape, 1, dtype, device=device or dev)


def empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    shape, dtype, dev = _like_args(a, dtype, shape)
    return full(shape, 0, dtype, device=device or dev)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dtype, dev = _like_args(a, dtype, shape)
    return full(shape, fill_value, dtype, device=device or dev)


def array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """A numloom array from any array-like (always a new array unless ``copy=False``)."""
    if isinstance(obj, ndarray):
        out = obj.astype(dtype) if dtype is not None else (obj.copy() if copy else obj)
    elif isinstance(obj, (list, tuple)) and any(isinstance(x, ndarray) for x in _flat_items(obj)):
        from .shapes import stack

        out = stack([array(x) for x in obj])
        out = out.astype(dtype) if dtype is not None else out
    else:
        out = asarray(_np.array(obj, dtype=dtype, ndmin=ndmin))
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def _flat_items(obj):
    for x in obj:
        if isinstance(x, (list, tuple)):
            yield from _flat_items(x)
        else:
            yield x


def asnumpy(a, stream=None, order="C", out=None) -> _np.ndarray:
    """``a`` as a NumPy array on the host; NumPy arrays and scalars are accepted as CuPy does."""
    if isinstance(a, ndarray):
        return a.get(out=out)
    host = _np.asarray(a, order=order)
    if out is not None:
        out[...] = host
        return out
    return host


def ascontiguousarray(a, dtype=None, *, like=None) -> ndarray:
    a = asarray(a, dtype=dtype)
    if a.ndim == 0:
        return a.reshape((1,))
    return a if a._view.is_contiguous() else a.copy()


def copy(a, order="K", subok=False) -> ndarray:
    return asarray(a).copy()


def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None) -> ndarray:
    """Evenly spaced values in [start, stop), with NumPy's length, dtype and errors."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    # NumPy's arange picks the default int, float or complex type whatever the scalar types.
    python_values = (v.item() if isinstance(v, _np.generic) else v for v in (start, stop, step))
    out_dtype = _np.dtype(dtype) if dtype is not None else _np.result_type(*python_values)
    _np.arange(start, start, step, dtype=out_dtype)  # NumPy's errors (step 0, bad types)
    length = max(int(math.ceil((stop - start) / step)), 0)
    n = node(Op.IOTA, (), (start, stop, step), (length,), out_dtype)
    return result(n, _device_name(device) or get_device())


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):  # fmt: skip
    host = _np.linspace(_host(start), _host(stop), num, endpoint, retstep, dtype, axis)
    if retstep:
        return from_host(host[0], _device_name(device)), host[1]
    return from_host(host, _device_name(device))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return from_host(_np.logspace(_host(start), _host(stop), num, endpoint, base, dtype, axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return from_host(_np.geomspace(_host(start), _host(stop), num, endpoint, dtype, axis))


def _host(x):
    return x.get() if isinstance(x, ndarray) else x


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None) -> ndarray:
    """Ones on the k-th diagonal: ``where(i - j == -k)`` over two IOTAs."""
    from .numpy_api import equal, subtract

    M = N if M is None else M
    dtype = _dtype_arg(dtype)
    rows = arange(N, device=device).reshape(N, 1)
    cols = arange(M, device=device).reshape(1, M)
    return equal(subtract(cols, rows), k).astype(dtype)


def identity(n, dtype=None, *, like=None) -> ndarray:
    return eye(n, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors, as NumPy's (broadcast views unless copy)."""
    from .shapes import broadcast_arrays

    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    grids = []
    for k, x in enumerate(xi):
        shape = [1] * ndim
        shape[k] = -1
        grids.append(asarray(x).reshape(shape))
    if indexing == "xy" and ndim > 1:
        grids[0] = grids[0].reshape((1, -1) + (1,) * (ndim - 2))
        grids[1] = grids[1].reshape((-1, 1) + (1,) * (ndim - 2))
    if not sparse:
        grids = list(broadcast_arrays(*grids))
    if copy:
        grids = [g.copy() for g in grids]
    return tuple(grids)

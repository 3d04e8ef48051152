"""numloom arrays handed to CUDA libraries (cuFFT, cuSOLVER) and numloom's fixed kernels:
operands as device pointers, results as new numloom arrays, all on numloom's stream.

A library call reads evaluated, contiguous device memory and writes memory nothing else holds
(buffers are immutable once made): ``operand`` evaluates an array and, where it is not
C-contiguous (or not of the dtype asked for), makes a contiguous copy on the device first;
``empty`` allocates an output and ``adopt`` makes it a numloom array.
"""

from __future__ import annotations

import numpy as np

from ..core import realize
from .cuda_device import _get
from .cuda_memory import DeviceArray


def operand(a, dtype=None):
    """``(pointer, holder)``: the device address of the elements of numloom array ``a`` (cast
    to ``dtype`` if given), C-contiguous; ``holder`` keeps that memory alive (hold it until
    the library's work is enqueued; stream order does the rest)."""
    if dtype is not None and a.dtype != np.dtype(dtype):
        a = a.astype(dtype)
    if not a._view.is_contiguous():
        a = a.copy()
    storage = a._storage
    realize.ensure(storage)
    if storage.error is not None:
        raise storage.error
    data = storage.version.arg.data
    return data.ptr + a._view.offset * a.dtype.itemsize, a


def empty(shape, dtype, device: str) -> DeviceArray:
    """New device memory for a C-contiguous result (contents undefined)."""
    return DeviceArray(tuple(shape), dtype, device)


def adopt(data: DeviceArray, device: str):
    """A numloom array whose value is device memory ``data`` (which nothing else writes)."""
    from ..core.array import result

    return result(realize.buffer_node(data, device), device)


def stream(device: str):
    """numloom's cuda.core stream on ``device`` (``int(stream.handle)`` for libraries)."""
    return _get(device).stream


def read_back(data: DeviceArray) -> np.ndarray:
    """A small device array's values on the host (after the stream's work so far)."""
    from .cuda_memory import to_host

    return to_host(realize.Buffer(data, data.device))

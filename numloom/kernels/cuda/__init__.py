"""``from numloom import cuda``: numba.cuda's kernel API, on the GPU and compiled on the CPU.

A Numba CUDA program runs after changing only its import::

    @cuda.jit
    def add_kernel(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            out[i] = x[i] + y[i]

    add_kernel[30, 128](x, y, out)

Kernels run on the device of their array arguments (the current device when all are NumPy
arrays): CUDA C++ through NVRTC on a GPU, C with OpenMP on the CPU, where blocks run in
parallel and each block's threads run in turn between barriers. Device arrays are numloom
arrays: ``to_device`` and ``device_array`` make them, ``copy_to_host`` brings them back.
"""

from __future__ import annotations

import time

import numpy as _np

from ...api import numpy_api as _api  # (the NumPy namespace: numloom.empty, ...)
from ...core.realize import sync

# numba.cuda's type names, as numba.cuda re-exports them (``from numba.cuda import float32``)
from .. import types  # noqa: F401, E402
from ..types import (  # noqa: F401, E402
    b1,
    bool_,
    boolean,
    c8,
    c16,
    complex64,
    complex128,
    double,
    f2,
    f4,
    f8,
    float16,
    float32,
    float64,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intc,
    intp,
    none,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    void,
)  # fmt: skip
from . import random  # noqa: F401, E402  (numba.cuda.random)
from .dispatcher import Dispatcher, jit  # noqa: F401
from .intrinsics import (  # noqa: F401
    WARPSIZE,
    atomic,
    blockDim,
    blockIdx,
    cg,
    grid,
    gridDim,
    gridsize,
    laneid,
    local,
    shared,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    syncthreads,
    syncwarp,
    threadfence,
    threadfence_block,
    threadIdx,
    warpsize,
)  # fmt: skip
from .reduce import Reduce, reduce  # noqa: F401

# --- memory -----------------------------------------------------------------------------------


def to_device(obj, stream=0, copy: bool = True, to=None):
    """A device copy of host data (a numloom array on the current device); with ``to``, the
    data copied into that existing device array."""
    if to is not None:
        to[...] = obj
        return to
    return _api.array(obj, copy=True)


def device_array(shape, dtype=_np.float64, strides=None, order="C", stream=0):
    """A new device array (numloom's arrays start as zeros)."""
    return _api.empty(shape, dtype)


def device_array_like(ary, stream=0):
    return _api.empty(ary.shape, ary.dtype)


def pinned_array(shape, dtype=_np.float64, strides=None, order="C"):
    """Host memory (NumPy's: numloom copies from it synchronously)."""
    return _np.empty(shape, dtype, order=order)


mapped_array = pinned_array
managed_array = device_array


def copy_to_host(ary, to=None, stream=0):
    """The device array's data as a NumPy array (into ``to`` when given)."""
    host = ary.get() if hasattr(ary, "get") else _np.asarray(ary)
    if to is not None:
        to[...] = host
        return to
    return host


def is_cuda_array(obj) -> bool:
    return isinstance(obj, _api.ndarray)


def as_cuda_array(obj):
    return _api.asarray(obj)


# --- synchronization ------------------------------------------------------------------------


def synchronize() -> None:
    """Run everything pending (kernels included) and wait for it."""
    sync()


class Stream:
    """numloom orders all work on a device in one stream: a stream object orders nothing
    more, and synchronizing it waits for everything."""

    def synchronize(self) -> None:
        synchronize()

    def auto_synchronize(self):
        import contextlib

        @contextlib.contextmanager
        def scope():
            yield self
            synchronize()

        return scope()

    def __repr__(self) -> str:
        return "<numloom.cuda stream>"


def stream() -> Stream:
    return Stream()


def default_stream() -> Stream:
    return Stream()


class Event:
    """A point in time after everything launched before ``record()`` has run."""

    def __init__(self, timing: bool = True):
        self.time = None

    def record(self, stream=0) -> None:
        synchronize()
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        synchronize()

    def wait(self, stream=0) -> None:
        synchronize()

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to ``end``."""
        return (end.time - self.time) * 1e3


def event(timing: bool = True) -> Event:
    return Event(timing)


def event_elapsed_time(start: Event, end: Event) -> float:
    return start.elapsed_time(end)


# --- devices ------------------------------------------------------------------------------------


def is_available() -> bool:
    """Kernels run on every numloom device (compiled for the CPU when there is no GPU)."""
    return True


def gpu_available() -> bool:
    """Whether a CUDA GPU is usable here."""
    from ...core.device import cuda_problem

    return cuda_problem() is None


def detect() -> bool:
    from ...core.device import describe_devices

    for line in describe_devices():
        print(line)
    return True


def select_device(device_id: int = 0):
    from ...core.device import set_device

    set_device(f"cuda:{device_id}")


def defer_cleanup():
    import contextlib

    return contextlib.nullcontext()

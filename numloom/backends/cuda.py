"""The CUDA backend: fused plans as CUDA kernels (NVRTC, cached by architecture), launched as
CUDA graphs on one stream per device through cuda.core.

Memory comes from cuda.core's stream-ordered pool (no preallocation; a buffer goes back to the
pool when its last array dies). Kernels the CUDA code generator does not handle yet run on the
host through NumPy, with the transfers counted in ``numloom.stats()``; matmul runs in cuBLAS.
Nothing here runs at ``import numloom``: CUDA is initialized on first use.

This module is what ``core.device.BACKENDS`` names; the work is split by job:

- ``cuda_device.py``: each GPU's context, stream and loaded kernels;
- ``cuda_memory.py``: device arrays, reuse of dead arrays' blocks, copies, shared memory;
- ``cuda_programs.py``: the pipeline's CUDA ``Target``, a plan's steps and segments;
- ``cuda_launch.py``: running a program: launches, CUDA graphs (``cuda_graph.py``),
  floating-point flags, cuBLAS, host steps;
- ``cuda_kernels.py``: kernels written in Python;
- ``cuda_nonzero.py``: where a mask is true (``a[mask]``, ``nonzero``), found on the device;
- ``cuda_sort.py``: sorting, searching and counting kernels (``sort``, ``unique``,
  ``searchsorted``, ``histogram``), which ``api/sorting.py`` finds here as ``sorting``.
"""

from __future__ import annotations

from . import cuda_device, cuda_memory
from . import cuda_sort as sorting  # noqa: F401
from .cuda_device import (  # noqa: F401  (the backend's entry points)
    ASYNCHRONOUS,
    problem,
)
from .cuda_launch import execute, read_deferred, run  # noqa: F401
from .cuda_memory import (  # noqa: F401
    DeviceArray,
    data_pointer,
    device_memory,
    from_device,
    memory_in_use,
    memory_peak,
    reset_peak,
    to_device,
    wait_for,
    wrap_pointer,
)
from .cuda_nonzero import true_positions  # noqa: F401
from .cuda_programs import TARGET, plan, program_for  # noqa: F401

# The device's waits: each first reads the flag words that evaluations left for it
# (cuda_launch._FlagReads.finish), so NumPy's warnings come out before the program sees a
# value, and before memory a deferred report reads can be written through an export.


def synchronize(device: str) -> None:
    cuda_device.synchronize(device)
    read_deferred(device)


def to_host(buffer):
    read_deferred(buffer.device)
    return cuda_memory.to_host(buffer)


def write_bytes(data, offset: int, address: int, nbytes: int) -> None:
    read_deferred(data.device)
    cuda_memory.write_bytes(data, offset, address, nbytes)


def make_wait(device: str, stream: int) -> None:
    read_deferred(device)
    cuda_memory.make_wait(device, stream)


def stream_handle(device: str) -> int:
    read_deferred(device)
    return cuda_memory.stream_handle(device)

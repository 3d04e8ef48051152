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

from . import cuda_sort as sorting  # noqa: F401
from .cuda_device import (  # noqa: F401  (the backend's entry points)
    ASYNCHRONOUS,
    problem,
    synchronize,
)
from .cuda_launch import execute, run  # noqa: F401
from .cuda_memory import (  # noqa: F401
    DeviceArray,
    data_pointer,
    device_memory,
    from_device,
    make_wait,
    memory_in_use,
    memory_peak,
    reset_peak,
    stream_handle,
    to_device,
    to_host,
    wait_for,
    wrap_pointer,
    write_bytes,
)
from .cuda_nonzero import true_positions  # noqa: F401
from .cuda_programs import TARGET, plan, program_for  # noqa: F401

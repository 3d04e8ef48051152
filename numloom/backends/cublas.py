"""Matrix products on the GPU through cuBLAS (nvmath-python's bindings), on numloom's stream.

cuBLAS is column-major and numloom row-major. A row-major ``C[M, N] = A[M, K] @ B[K, N]`` is the
column-major ``C^T = B^T @ A^T``, and a row-major matrix with unit column stride *is* its
transpose in column-major storage, so no operand is ever copied: a row-major operand goes in
as it is (``N``) and a transposed view of one (``x.T``, unit row stride) with ``T``. Batches
of matrices at a constant distance go to one strided-batched call. TF32 stays off unless
``NUMLOOM_ALLOW_TF32=1``: float32 products are as accurate as NumPy's.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from ..compile.blas import OP_N, OP_T, blas_matrix

_DEFAULT_MATH, _TF32_MATH = 0, 3  # cublasMath_t
_FUNCTIONS = {"f": "sgemm_strided_batched", "d": "dgemm_strided_batched",
              "F": "cgemm_strided_batched", "D": "zgemm_strided_batched"}  # fmt: skip


@dataclass(frozen=True)
class Operand:
    """A matrix (or a batch of them) in memory: element offset, shape and element strides."""

    offset: int
    shape: tuple  # (..., rows, cols)
    strides: tuple


@dataclass(frozen=True)
class Gemm:
    """One cuBLAS strided-batched call, in cuBLAS's (column-major) terms.

    ``first`` and ``second`` are element offsets of the cuBLAS A and B arguments (numloom's
    B and A); ``batch_offsets`` lists, per call, the element offsets added to (first, second,
    out) when the batch axes do not collapse into one stride.
    """

    trans_first: int
    trans_second: int
    m: int
    n: int
    k: int
    first: int
    ld_first: int
    stride_first: int
    second: int
    ld_second: int
    stride_second: int
    ldc: int
    stride_out: int
    batch: int
    batch_offsets: tuple = ((0, 0, 0),)


def _batch(shape: tuple, strides: list) -> tuple:
    """Batch axes as (count, per-operand strides of the innermost run of axes that collapse
    into one stride, per-operand offsets of each of the outer runs)."""
    keep = [i for i, n in enumerate(shape) if n != 1]
    shape = [shape[i] for i in keep]
    strides = [[s[i] for i in keep] for s in strides]
    if not shape:
        return 1, [0] * len(strides), [(0,) * len(strides)]
    k = len(shape) - 1
    count = shape[k]
    while k > 0 and all(s[k - 1] == s[k] * shape[k] for s in strides):
        k -= 1
        count *= shape[k]
    outer = [tuple(sum(i * s[j] for j, i in enumerate(index)) for s in strides)
             for index in np.ndindex(*shape[:k])]  # fmt: skip
    return count, [s[-1] for s in strides], outer


def plan_gemm(a: Operand, b: Operand, out_shape: tuple) -> Gemm | None:
    """The cuBLAS call computing row-major ``a @ b`` into a C-contiguous ``out_shape``; None
    when an operand's matrices are not BLAS-readable in place."""
    m_rows, k_inner = a.shape[-2:]
    n_cols = b.shape[-1]
    first = blas_matrix(k_inner, n_cols, b.strides[-2], b.strides[-1])  # cuBLAS A: our B
    second = blas_matrix(m_rows, k_inner, a.strides[-2], a.strides[-1])  # cuBLAS B: our A
    if first is None or second is None:
        return None
    out_strides = []
    step = m_rows * n_cols
    for n in reversed(out_shape[:-2]):
        out_strides.append(step)
        step *= n
    out_strides.reverse()
    count, inner, outer = _batch(out_shape[:-2], [b.strides[:-2], a.strides[:-2], out_strides])
    return Gemm(first[0], second[0], n_cols, m_rows, k_inner, b.offset, first[1], inner[0],
                a.offset, second[1], inner[1], n_cols, inner[2], count,
                tuple(outer))  # fmt: skip


def emulate(g: Gemm, first: np.ndarray, second: np.ndarray, out: np.ndarray) -> None:
    """What cuBLAS does for ``g`` over flat host arrays (column-major): for tests."""

    def col_major(flat, offset, rows, cols, ld, trans):
        stored = (cols, rows) if trans == OP_T else (rows, cols)
        view = np.lib.stride_tricks.as_strided(flat[offset:], stored,
                                               (flat.itemsize, ld * flat.itemsize))  # fmt: skip
        return view.T if trans == OP_T else view

    for fo, so, oo in g.batch_offsets:
        for j in range(g.batch):
            x = col_major(first, g.first + fo + j * g.stride_first, g.m, g.k, g.ld_first,
                          g.trans_first)  # fmt: skip
            y = col_major(second, g.second + so + j * g.stride_second, g.k, g.n, g.ld_second,
                          g.trans_second)  # fmt: skip
            c = col_major(out, oo + j * g.stride_out, g.m, g.n, g.ldc, OP_N)
            c[...] = x @ y


# --- the calls ------------------------------------------------------------------------------------

_handles: dict = {}
_SCALARS = {code: (np.ones((), code), np.zeros((), code)) for code in _FUNCTIONS}


def available() -> bool:
    try:
        from nvmath.bindings import cublas  # noqa: F401
    except Exception:  # noqa: BLE001 (not installed, or no cuBLAS library beside it)
        return False
    return True


def supports(dtype) -> bool:
    return np.dtype(dtype).char in _FUNCTIONS


def _handle(device: str) -> int:
    from nvmath.bindings import cublas

    handle = _handles.get(device)
    if handle is None:
        handle = _handles[device] = cublas.create()
        allow = os.environ.get("NUMLOOM_ALLOW_TF32", "0") == "1"
        cublas.set_math_mode(handle, _TF32_MATH if allow else _DEFAULT_MATH)
    return handle


def start(device: str, make_current) -> None:
    """Start cuBLAS for ``device`` on a thread (``make_current()`` makes the device's context
    current there), unless it is started: its library and handle take a few hundred
    milliseconds, which a program's first run spends compiling its other kernels meanwhile.
    The first ``gemm`` waits for it (and starts it itself if the thread failed)."""
    with _lock:
        if device in _calls or device in _starting:
            return
        thread = threading.Thread(target=_start, args=(device, make_current), daemon=True,
                                  name="numloom-cublas-start")  # fmt: skip
        _starting[device] = thread
    thread.start()


def _start(device: str, make_current) -> None:
    try:
        make_current()
        _calls_of(device)
    except Exception:  # noqa: BLE001 (the first gemm starts cuBLAS again, and raises there)
        pass


def _calls_of(device: str) -> _Calls:
    """The device's cuBLAS calls, made once (by the first thread to ask; others wait)."""
    call = _calls.get(device)
    if call is None:
        with _lock:
            thread = _starting.get(device)
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with _making:
            call = _calls.get(device)
            if call is None:
                call = _calls[device] = _Calls(device)
    return call


_lock = threading.Lock()  # guards _starting
_making = threading.Lock()  # one thread makes a device's handle
_starting: dict = {}  # device -> the thread starting its cuBLAS


def gemm(g: Gemm, dtype, first_ptr: int, second_ptr: int, out_ptr: int, stream: int,
         device: str) -> None:  # fmt: skip
    """Run ``g`` on ``stream``: pointers are the bases the Gemm's offsets count from."""
    call = _calls.get(device) or _calls_of(device)
    call.stream(stream)
    dtype = np.dtype(dtype)
    function, one, zero = call.functions[dtype.char]
    size = dtype.itemsize
    handle = call.handle
    for fo, so, oo in g.batch_offsets:
        function(handle, g.trans_first, g.trans_second, g.m, g.n, g.k, one,
                 first_ptr + (g.first + fo) * size, g.ld_first, g.stride_first,
                 second_ptr + (g.second + so) * size, g.ld_second, g.stride_second,
                 zero, out_ptr + oo * size, g.ldc, g.stride_out, g.batch)  # fmt: skip


class _Calls:
    """A device's cuBLAS handle, the stream it was last given, and per element type the
    strided-batched function with the addresses of its scalars (one and zero)."""

    def __init__(self, device: str):
        from nvmath.bindings import cublas

        self.handle = _handle(device)
        self.set_stream, self.last = cublas.set_stream, None
        self.functions = {code: (getattr(cublas, name), _SCALARS[code][0].ctypes.data,
                                 _SCALARS[code][1].ctypes.data)
                          for code, name in _FUNCTIONS.items()}  # fmt: skip

    def stream(self, stream: int) -> None:
        if stream != self.last:
            self.set_stream(self.handle, stream)
            self.last = stream


_calls: dict = {}  # device -> _Calls

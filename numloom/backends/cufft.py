"""Discrete Fourier transforms on the GPU through cuFFT (nvmath-python's bindings), on numloom's
stream.

``transform`` runs one batched cuFFT call over the innermost one to three axes of a
C-contiguous numloom array and returns a new numloom array: complex to complex (either
direction), real to complex (forward) or complex to real (inverse), unnormalized, as cuFFT
computes them. ``numloom.fft`` does the rest: axes, lengths, normalization and NumPy's dtypes.

A plan is made once per (device, type, lengths, batch) and kept; the ``PLANS_KEPT`` most
recently used are kept, and a plan dropped from them, like every plan at exit, is destroyed.
A plan's work area is not cuFFT's own: each call takes one from numloom's stream-ordered
memory, so a kept plan holds no large buffer. cuFFT's complex-to-real transform overwrites its
input, so that input is first copied into memory of the call's own.
"""

from __future__ import annotations

import atexit
import math
import threading
from collections import OrderedDict

import numpy as np

from . import cuda_library

PLANS_KEPT = 32

_FORWARD, _INVERSE = -1, 1  # CUFFT_FORWARD, CUFFT_INVERSE

# (kind, input dtype) -> (cufftType, the binding's function that executes it)
_TYPES = {
    ("C2C", np.dtype(np.complex64)): (0x29, "exec_c2c"),
    ("C2C", np.dtype(np.complex128)): (0x69, "exec_z2z"),
    ("R2C", np.dtype(np.float32)): (0x2A, "exec_r2c"),
    ("R2C", np.dtype(np.float64)): (0x6A, "exec_d2z"),
    ("C2R", np.dtype(np.complex64)): (0x2C, "exec_c2r"),
    ("C2R", np.dtype(np.complex128)): (0x6C, "exec_z2d"),
}

_plans: OrderedDict = OrderedDict()  # (device, type, lengths, batch) -> (plan, work area bytes)
_lock = threading.Lock()  # a plan's stream and work area are set just before it runs
_available: list = []


def available() -> bool:
    """Whether cuFFT can be called here (nvmath-python and the cuFFT library beside it)."""
    if not _available:
        try:
            from nvmath.bindings import cufft

            cufft.get_version()
        except Exception:  # noqa: BLE001 (not installed, or no cuFFT library to load)
            _available.append(False)
        else:
            _available.append(True)
    return _available[0]


def layout(dims: tuple, dtype, kind: str, last: int | None = None) -> tuple:
    """``(lengths, out_dims, out_dtype)`` of a ``kind`` transform of elements of ``dtype`` over
    trailing dimensions ``dims``: the transform's lengths, the result's trailing dimensions
    and its dtype. A complex-to-real transform names its last length (``last``), which its
    input (``last // 2 + 1`` long) leaves open. Kept per arguments (a loop's transforms)."""
    key = (dims, dtype, kind, last)
    found = _layouts.get(key)
    if found is None:
        found = _layout(dims, dtype, kind, last)
        if len(_layouts) >= 256:
            _layouts.clear()
        _layouts[key] = found
    return found


_layouts: dict = {}


def _layout(dims: tuple, dtype, kind: str, last: int | None) -> tuple:
    dtype = np.dtype(dtype)
    if (kind, dtype) not in _TYPES:
        raise TypeError(f"cuFFT has no {kind} transform of {dtype} elements")
    dims = tuple(int(d) for d in dims)
    if kind == "C2C":
        return dims, dims, dtype
    if kind == "R2C":
        return dims, dims[:-1] + (dims[-1] // 2 + 1,), np.result_type(dtype, np.complex64)
    if last is None or dims[-1] != last // 2 + 1:
        raise ValueError(f"a complex-to-real transform of length {last} reads "
                         f"{'?' if last is None else last // 2 + 1} elements, not {dims[-1]}")  # fmt: skip
    lengths = dims[:-1] + (int(last),)
    return lengths, lengths, np.finfo(dtype).dtype


def transform(x, rank: int, kind: str, forward: bool = True, last: int | None = None):
    """The unnormalized ``kind`` ("C2C", "R2C" or "C2R") transform of numloom array ``x`` (on
    a GPU, C-contiguous, complex64/complex128, or float32/float64 for "R2C") over its last
    ``rank`` (1 to 3) axes, batched over the others; ``forward`` picks the direction of "C2C"
    and ``last`` is the length of a "C2R" transform's last axis."""
    split = x.ndim - rank
    lengths, out_dims, out_dtype = layout(x.shape[split:], x.dtype, kind, last)
    device = x.device
    out = cuda_library.empty(x.shape[:split] + out_dims, out_dtype, device)
    batch = math.prod(x.shape[:split])
    if batch:
        _execute(x, out, kind, lengths, batch, forward)
    return cuda_library.adopt(out, device)


def _execute(x, out, kind: str, lengths: tuple, batch: int, forward: bool) -> None:
    from nvmath.bindings import cufft

    device = x.device
    code, function = _TYPES[kind, x.dtype]
    source, holder = cuda_library.operand(x)
    stream = cuda_library.stream(device)
    if kind == "C2R":  # cuFFT writes into its input: a copy of it, which nothing else reads
        holder = _copy(source, math.prod(x.shape) * x.dtype.itemsize, device, stream)
        source = holder.ptr
    with _lock:
        plan, work_bytes = _plan(device, code, lengths, batch)
        work = cuda_library.empty((max(work_bytes, 1),), np.uint8, device)
        cufft.set_stream(plan, int(stream.handle))
        cufft.set_work_area(plan, work.ptr)
        run = getattr(cufft, function)
        if kind == "C2C":
            run(plan, source, out.ptr, _FORWARD if forward else _INVERSE)
        else:
            run(plan, source, out.ptr)
    del holder, work  # (freed in stream order: later work on this stream may reuse them)


def _copy(source: int, nbytes: int, device: str, stream):
    """A new device buffer holding ``nbytes`` from address ``source`` (in stream order)."""
    from cuda.bindings import driver

    from .cuda_device import _check

    copy = cuda_library.empty((nbytes,), np.uint8, device)
    _check(driver.cuMemcpyDtoDAsync(copy.ptr, source, nbytes, stream.handle),
           "cuMemcpyDtoDAsync")  # fmt: skip
    return copy


def _plan(device: str, code: int, lengths: tuple, batch: int) -> tuple:
    """The kept plan for these lengths and batch (made now if there is none) and the bytes of
    work area it needs."""
    key = (device, code, lengths, batch)
    found = _plans.get(key)
    if found is not None:
        _plans.move_to_end(key)
        return found
    from nvmath.bindings import cufft

    while len(_plans) >= PLANS_KEPT:
        _destroy(*_plans.popitem(last=False))
    cuda_library.stream(device)  # (its context current)
    plan = cufft.create()
    try:
        cufft.set_auto_allocation(plan, 0)
        # basic layout (no embedding): contiguous transforms, one after the other
        work_bytes = cufft.make_plan_many64(plan, len(lengths), list(lengths), 0, 1, 0, 0, 1, 0,
                                            code, batch)  # fmt: skip
    except BaseException:
        cufft.destroy(plan)
        raise
    found = _plans[key] = (plan, int(work_bytes))
    return found


def _destroy(key: tuple, found: tuple) -> None:
    """Destroy a plan once the work already queued on its device's stream is done."""
    from nvmath.bindings import cufft

    cuda_library.stream(key[0]).sync()
    cufft.destroy(found[0])


@atexit.register
def _destroy_all() -> None:
    while _plans:
        try:
            _destroy(*_plans.popitem())
        except Exception:  # noqa: BLE001 (the process is ending: the driver frees the rest)
            pass


def emulate(x, rank: int, kind: str, forward: bool = True, last: int | None = None):
    """What ``transform`` computes, with NumPy on the host: for tests of ``numloom.fft``'s
    device path on machines without a GPU. A complex-to-real input must be Hermitian where
    cuFFT takes it to be (its zero-frequency plane, and for an even ``last`` its Nyquist
    plane): cuFFT's result is undefined otherwise, so this raises ValueError."""
    from ..core.array import from_host

    split = x.ndim - rank
    lengths, _, out_dtype = layout(x.shape[split:], x.dtype, kind, last)
    host = np.asarray(x.get())
    axes = tuple(range(split, x.ndim))
    if kind == "C2C":
        y = np.fft.fftn(host, axes=axes) if forward else np.fft.ifftn(host, axes=axes,
                                                                     norm="forward")  # fmt: skip
    elif kind == "R2C":
        y = np.fft.rfftn(host, axes=axes)
    else:
        _check_hermitian(host, axes, lengths[-1])
        y = np.fft.irfftn(host, s=lengths, axes=axes, norm="forward")
    return from_host(np.ascontiguousarray(y, dtype=out_dtype), x.device)


def _check_hermitian(host: np.ndarray, axes: tuple, last: int) -> None:
    if host.size == 0:
        return
    outer = axes[:-1]
    for index in (0, last // 2) if last % 2 == 0 else (0,):
        plane = np.take(host, [index], axis=axes[-1])
        mirrored = np.roll(np.flip(plane, outer), 1, outer) if outer else plane
        if not np.allclose(plane, np.conj(mirrored), rtol=1e-5, atol=1e-5 * np.abs(host).max()):
            raise ValueError(f"complex-to-real input is not Hermitian at index {index}")

"""The CUDA backend's memory: device arrays from cuda.core's stream-ordered pool, blocks of dead
arrays kept per size for reuse, copies to and from the host, and memory shared with other
libraries (DLPack, the CUDA array interface, their streams)."""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from ..core.dag import Op, node
from ..core.device import OutOfMemoryError
from ..core.realize import Buffer, count
from .cuda_device import _check, _Device, _get

# Device memory numloom's arrays hold now, and the most they held since reset_peak().
_memory = {"in_use": 0, "peak": 0}


def memory_in_use() -> int:
    """Bytes of device memory held by numloom arrays (and the temporaries of running plans)."""
    return _memory["in_use"]


def memory_peak() -> int:
    """The most device memory numloom held at once since the last ``reset_peak()``."""
    return _memory["peak"]


def reset_peak() -> None:
    _memory["peak"] = _memory["in_use"]


# (device, bytes) -> blocks of dead arrays, reused last-freed first by arrays of that size: all
# of numloom's work on a device is ordered on one stream, so a block freed after the kernels
# that read it were enqueued may be written by kernels enqueued later. A loop's arrays then
# alternate between two blocks, and a CUDA graph replays with pointers it has seen (the
# stream-ordered pool underneath hands blocks back in a rotation of its own). At most
# FREE_PER_SIZE blocks of a size and FREE_LIMIT bytes in all; dropped, back to that pool, when
# an allocation fails.
_free: dict = {}


FREE_PER_SIZE = 4  # blocks kept per size


FREE_LIMIT = 4 << 30  # bytes kept in all (more than this goes straight back to the pool)


_kept = {"bytes": 0}


class DeviceArray:
    """One C-contiguous array in device memory."""

    __slots__ = ("buffer", "ptr", "shape", "dtype", "device", "held")

    def __init__(self, shape: tuple, dtype, device: str):
        self.held = 0
        self.shape, self.dtype, self.device = tuple(shape), np.dtype(dtype), device
        nbytes = max(math.prod(self.shape) * self.dtype.itemsize, 1)
        blocks = _free.get((device, nbytes))
        if blocks:
            self.buffer = blocks.pop()
            _kept["bytes"] -= nbytes
        else:
            self.buffer = _allocate(_get(device), nbytes)
        self.ptr = int(self.buffer.handle)
        self.held = nbytes
        in_use = _memory["in_use"] = _memory["in_use"] + nbytes
        if in_use > _memory["peak"]:
            _memory["peak"] = in_use

    def __del__(self, memory=_memory, free=_free, kept=_kept, limit=FREE_LIMIT,
                per_size=FREE_PER_SIZE):
        # (Defaults are still bound at interpreter exit. Arrays that wrap memory numloom did
        # not allocate, from DLPack or CuPy, were made without __init__: they hold nothing.)
        held = getattr(self, "held", 0)
        if not held:
            return
        memory["in_use"] -= held
        blocks = free.setdefault((self.device, held), [])
        if len(blocks) < per_size and kept["bytes"] + held <= limit:
            blocks.append(self.buffer)  # reused by the next array of this size
            kept["bytes"] += held

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _allocate(state: _Device, nbytes: int):
    import gc

    try:
        return state.device.allocate(nbytes, stream=state.stream)
    except Exception:  # noqa: BLE001 (out of memory: free what Python still holds, retry once)
        if state.deferred and RELEASE_DEFERRED[0] is not None:
            RELEASE_DEFERRED[0](state)  # (inputs kept for flag reads left for a later sync)
        gc.collect()
        _free.clear()  # the blocks of dead arrays numloom kept for reuse
        _kept["bytes"] = 0
        state.stream.sync()
        try:
            return state.device.allocate(nbytes, stream=state.stream)
        except Exception as e:
            free = _free_memory()
            raise OutOfMemoryError(f"out of device memory: asked for {nbytes} bytes, "
                                   f"{free} bytes free ({e})") from None  # fmt: skip


# cuda_launch's read of a device's deferred flag words (given its state), which lets go of the
# inputs kept for them
RELEASE_DEFERRED: list = [None]


def release_cached(device: str) -> int:
    """Gives the device memory numloom holds for reuse back to the driver, as CuPy's
    ``free_all_blocks`` does for its pool: the blocks of dead arrays kept per size, and the
    stream-ordered pool's free memory, which cuda.core's resource keeps (its release
    threshold is the largest) until another library in the process, CuPy, JAX or torch, finds
    the GPU full. Returns the bytes the pool gave back."""
    import gc

    from cuda.bindings import driver

    gc.collect()
    state = _get(device)
    for key in [k for k in _free if k[0] == device]:
        _kept["bytes"] -= key[1] * len(_free.pop(key))
    state.stream.sync()  # (blocks freed in stream order are free once the stream is done)
    dev = driver.CUdevice(state.device.device_id)
    pool = _check(driver.cuDeviceGetMemPool(dev), "cuDeviceGetMemPool")[1]
    reserved = driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT

    def held() -> int:
        return int(_check(driver.cuMemPoolGetAttribute(pool, reserved), "cuMemPoolGetAttribute")[1])

    before = held()
    _check(driver.cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo")
    return before - held()


def device_memory(device: str) -> int | None:
    """The device's total memory in bytes (None where it cannot be asked)."""
    try:
        _get(device)  # (the device's context current)
        return _memory_info()[1]
    except Exception:  # noqa: BLE001 (no usable device: the sync says why)
        return None


def _memory_info() -> tuple:
    """(free, total) bytes of the current device."""
    from cuda.bindings import driver

    _, free, total = _check(driver.cuMemGetInfo(), "cuMemGetInfo")
    return int(free), int(total)


def _free_memory() -> int:
    return _memory_info()[0]


def to_device(host: np.ndarray, device: str):
    """A BUFFER node holding a device copy of ``host``."""
    from cuda.bindings import driver

    host = np.ascontiguousarray(host)
    array = DeviceArray(host.shape, host.dtype, device)
    state = _get(device)
    if host.nbytes:
        _check(driver.cuMemcpyHtoDAsync(array.ptr, host.ctypes.data, host.nbytes,
                                        state.stream.handle), "cuMemcpyHtoDAsync")  # fmt: skip
        state.stream.sync()  # host memory may be freed as soon as we return
    count("host_to_device_bytes", host.nbytes)
    return node(Op.BUFFER, (), Buffer(array, device), host.shape, host.dtype)


def upload(host: np.ndarray, device: str) -> DeviceArray:
    """A device copy of ``host`` (a small table), in stream order, without waiting for the
    device. A copy from pageable memory waits for the stream's queued work before it starts;
    the bytes go through page-locked memory here instead, kept (for the next upload of that
    size) once an event says the copy has run. Dask's chunks each draw from a stream of their
    own, whose table was uploaded after a wait for every chunk before it: 105 ms of 375 for
    Black-Scholes over 40 chunks on an H200."""
    from cuda.bindings import driver

    host = np.ascontiguousarray(host)
    array = DeviceArray(host.shape, host.dtype, device)
    nbytes = host.nbytes
    if not nbytes:
        return array
    stream = _get(device).stream.handle
    with _staging_lock:
        busy = _staging_busy.setdefault(device, [])
        _reap(busy, device)
        free = _staging_free.get((device, nbytes))
        pinned = free.pop() if free else None
    if pinned is None:
        err, pinned = driver.cuMemHostAlloc(nbytes, 0)
        _check(err, "cuMemHostAlloc")
    ctypes.memmove(int(pinned), host.ctypes.data, nbytes)
    _check(driver.cuMemcpyHtoDAsync(array.ptr, pinned, nbytes, stream), "cuMemcpyHtoDAsync")
    err, event = driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    _check(err, "cuEventCreate")
    _check(driver.cuEventRecord(event, stream), "cuEventRecord")
    with _staging_lock:
        busy.append((event, nbytes, pinned))
    count("host_to_device_bytes", nbytes)
    return array


# upload's page-locked buffers: (device, bytes) -> free ones; device -> those in flight, each
# with the event after its copy
_staging_free: dict = {}
_staging_busy: dict = {}
_staging_lock = threading.Lock()
STAGING_PER_SIZE = 4


def _reap(busy: list, device: str) -> None:
    from cuda.bindings import driver

    done = []
    for item in busy:
        (err,) = driver.cuEventQuery(item[0])
        if err == driver.CUresult.CUDA_ERROR_NOT_READY:
            continue
        _check(err, "cuEventQuery")
        done.append(item)
    for item in done:
        busy.remove(item)
        event, nbytes, pinned = item
        _check(driver.cuEventDestroy(event), "cuEventDestroy")
        free = _staging_free.setdefault((device, nbytes), [])
        if len(free) < STAGING_PER_SIZE:
            free.append(pinned)
        else:
            _check(driver.cuMemFreeHost(pinned), "cuMemFreeHost")


def from_device(buffer: Buffer, offset: int, shape: tuple, device: str):
    """A BUFFER node on ``device`` holding a copy of ``shape`` elements of another GPU's
    ``buffer`` from element ``offset`` on: one copy GPU to GPU (peer to peer where the GPUs
    allow it, else staged by the driver), never through numloom's host memory."""
    from cuda.bindings import driver

    source = buffer.data
    array = DeviceArray(shape, source.dtype, device)
    nbytes = array.nbytes
    if nbytes:
        _get(source.device).stream.sync()  # (the source's pending writes)
        source_context = _context()
        state = _get(device)
        # (a peer copy names both contexts: pool memory needs no peer access for it)
        _check(driver.cuMemcpyPeerAsync(array.ptr, _context(), source.ptr + offset *
                                        source.dtype.itemsize, source_context, nbytes,
                                        state.stream.handle), "cuMemcpyPeerAsync")  # fmt: skip
        state.stream.sync()  # (the source may be freed, or written, once we return)
    count("device_to_device_bytes", nbytes)
    return node(Op.BUFFER, (), Buffer(array, device), tuple(shape), source.dtype)


def _context():
    """The calling thread's current CUDA context (the one ``_get`` made current)."""
    from cuda.bindings import driver

    err, context = driver.cuCtxGetCurrent()
    _check(err, "cuCtxGetCurrent")
    return context


def to_host(buffer: Buffer) -> np.ndarray:
    """The contents of a device buffer as a new host array."""
    from cuda.bindings import driver

    array = buffer.data
    state = _get(array.device)
    host = np.empty(array.shape, array.dtype)
    state.stream.sync()
    if host.nbytes:
        _check(driver.cuMemcpyDtoH(host.ctypes.data, array.ptr, host.nbytes), "cuMemcpyDtoH")
    count("device_to_host_bytes", host.nbytes)
    return host


def write_bytes(data: DeviceArray, offset: int, address: int, nbytes: int) -> None:
    """Copy ``nbytes`` of host memory at ``address`` into device memory ``data`` at byte
    ``offset``, in stream order (pageable memory is staged before the call returns)."""
    from cuda.bindings import driver

    state = _get(data.device)
    _check(driver.cuMemcpyHtoDAsync(data.ptr + offset, address, nbytes,
                                    state.stream.handle), "cuMemcpyHtoDAsync")  # fmt: skip
    count("host_to_device_bytes", nbytes)


def device_copy(array: DeviceArray, device: str, shape=None, dtype=None) -> DeviceArray:
    """A new device array holding ``array``'s bytes (in stream order), read as ``shape`` and
    ``dtype`` where given (a bitcast: the same number of bytes)."""
    from cuda.bindings import driver

    out = DeviceArray(array.shape if shape is None else shape,
                      array.dtype if dtype is None else dtype, device)  # fmt: skip
    if out.nbytes:
        _check(driver.cuMemcpyDtoDAsync(out.ptr, array.ptr, out.nbytes, _get(device).stream.handle),
               "cuMemcpyDtoDAsync")  # fmt: skip
    return out


def data_pointer(data: DeviceArray) -> int:
    return data.ptr


def stream_handle(device: str) -> int:
    return int(_get(device).stream.handle)


def wrap_pointer(ptr: int, shape: tuple, dtype, device: str, owner) -> DeviceArray:
    """A DeviceArray over memory another library owns (kept alive through ``owner``)."""
    array = DeviceArray.__new__(DeviceArray)
    array.buffer, array.ptr = owner, int(ptr)
    array.shape, array.dtype, array.device = tuple(shape), np.dtype(dtype), device
    return array


def _event_between(first: int, then: int) -> None:
    """Work enqueued on stream ``then`` from now on waits for what ``first`` has enqueued."""
    from cuda.bindings import driver

    err, event = driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    _check(err, "cuEventCreate")
    _check(driver.cuEventRecord(event, driver.CUstream(first)), "cuEventRecord")
    _check(driver.cuStreamWaitEvent(driver.CUstream(then), event, 0), "cuStreamWaitEvent")
    _check(driver.cuEventDestroy(event), "cuEventDestroy")


def make_wait(device: str, stream: int) -> None:
    """A consumer's ``stream`` waits for numloom's work (exports)."""
    ours = stream_handle(device)
    if int(stream) != ours:
        _event_between(ours, int(stream))


def wait_for(device: str, stream: int) -> None:
    """numloom's stream waits for a producer's ``stream`` (imports)."""
    ours = stream_handle(device)
    if int(stream) != ours:
        _event_between(int(stream), ours)


def _zero(array: DeviceArray, device: str) -> None:
    from cuda.bindings import driver

    _check(driver.cuMemsetD8Async(array.ptr, 0, array.nbytes, _get(device).stream.handle),
           "cuMemsetD8Async")  # fmt: skip

"""Device-wide radix sorts through CUB, from NVIDIA's cuda-cccl package (``cuda.compute``).

``cuda_sort.sort_rows`` hands a large one-row sort of 4- or 8-byte keys here: CUB's onesweep
radix sort orders the encoded keys (and their positions, or the elements' bits) in about half
the time of numloom's own 8-bit passes. The keys are numloom's (``cuda_sort.nl_encode``), so
the order is NumPy's whatever CUB does with floats.

``cuda.compute`` compiles each sort (key and value types, GPU architecture) at run time, which
takes seconds. So a sort is built once per machine: in a background thread at its first use,
while that call and those after it run on numloom's own kernels, then kept in numloom's compile
cache (``cuda.compute.serialize``), from which later processes load it in milliseconds.
``NUMLOOM_CUB``: ``1`` (the default) as just said, ``wait`` builds at first use and waits, ``0``
keeps numloom's own sorts. Where cuda-cccl is missing or a build fails, numloom's own sorts run.

A built sort is not safe to call from two threads at once, so each thread deserializes its own.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ..compile import cache
from ..core import config
from .cuda_device import _get

MIN_ELEMENTS = 1 << 20  # smaller sorts stay on numloom's kernels (a few launches, no build)

_lock = threading.Lock()
_blobs: dict = {}  # (arch, key dtype, value dtype) -> a serialized sort, or "building", "failed"
_builders: dict = {}  # spec -> the thread building it
_local = threading.local()  # .sorts: spec -> this thread's deserialized sort
errors: dict = {}  # spec -> why its build failed


def mode() -> str:
    """``NUMLOOM_CUB``: "1", "wait" or "0"."""
    value = config.env("NUMLOOM_CUB", "1").strip().lower()
    return value if value in ("0", "wait") else "1"


@functools.cache
def _compute():
    """The ``cuda.compute`` module, or None where cuda-cccl is missing or cannot run here."""
    try:
        import cuda.compute as compute
    except Exception:
        return None
    return compute if getattr(compute, "_BINDINGS_AVAILABLE", False) else None


class _Span:
    """``nbytes`` bytes at ``ptr`` as a 1-D device array of ``typestr`` for ``cuda.compute``
    (``__cuda_array_interface__``): a numloom buffer read as unsigned keys, say."""

    def __init__(self, ptr: int, length: int, typestr: str):
        self.nbytes = length * np.dtype(typestr).itemsize
        self.__cuda_array_interface__ = {"shape": (length,), "typestr": typestr,
                                         "data": (int(ptr), False), "version": 3,
                                         "strides": None}  # fmt: skip


def _spec(device: str, key, value) -> tuple:
    return (_get(device).arch, np.dtype(key).str, "" if value is None else np.dtype(value).str)


def _cache_key(spec: tuple) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("cuda-cccl")
    except PackageNotFoundError:
        installed = ""
    return cache.make_key("cub radix sort", installed, *spec)


def _build(device: str, spec: tuple, buffers: list) -> bytes | None:
    """Compile the sort of ``spec`` (seconds) and serialize it; None where that fails.
    ``buffers``: a device buffer of one element for each of its arrays (keys in and out,
    values in and out). (``cuda.compute``'s types-only ``ProxyArray`` builds a sort that leaves
    the values unsorted: real buffers, however small, build one that moves them.)"""
    compute = _compute()
    if compute is None:
        return None
    arch, key, value = spec
    spans = [None if b is None else _Span(b.ptr, 1, t)
             for b, t in zip(buffers, (key, key, value, value))]  # fmt: skip
    try:
        _get(device)  # (the device's context, current in this thread)
        built = compute.make_radix_sort(
            d_in_keys=spans[0], d_out_keys=spans[1], d_in_values=spans[2],
            d_out_values=spans[3], order=compute.SortOrder.ASCENDING,
            compute_capability=[int("".join(c for c in arch if c.isdigit()))])
        blob = compute.serialize(built)
    except Exception as error:  # noqa: BLE001 (numloom's own sort runs instead)
        errors[spec] = f"{type(error).__name__}: {error}"
        return None
    cache.put(_cache_key(spec), blob)
    return blob


def _built(device: str, spec: tuple, buffers: list) -> None:
    blob = _build(device, spec, buffers)
    with _lock:
        _blobs[spec] = blob if blob is not None else "failed"
        _builders.pop(spec, None)


def _buffers(device: str, spec: tuple) -> list:
    from .cuda_memory import DeviceArray

    _, key, value = spec
    return [DeviceArray((1,), t, device) if t else None for t in (key, key, value, value)]


def sort_for(device: str, key, value=None):
    """This thread's CUB radix sort of ``key`` keys (unsigned, 4 or 8 bytes) carrying ``value``
    values (None: keys only), or None while it is being built, or where CUB cannot sort here."""
    how = mode()
    if how == "0":
        return None
    spec = _spec(device, key, value)
    sorts = getattr(_local, "sorts", None)
    if sorts is None:
        sorts = _local.sorts = {}
    found = sorts.get(spec)
    if found is not None:
        return found
    with _lock:
        blob = _blobs.get(spec)
    if blob is None:
        compute = _compute()
        if compute is None:
            return None
        blob = cache.get(_cache_key(spec))
        if blob is None:
            if how == "wait":
                _built(device, spec, _buffers(device, spec))
            else:
                _start(device, spec)
            with _lock:
                blob = _blobs.get(spec)
        else:
            with _lock:
                _blobs.setdefault(spec, blob)
    if not isinstance(blob, bytes):
        return None  # (building, or failed)
    try:
        found = sorts[spec] = _compute().deserialize(blob)
    except Exception:  # (a stale or damaged cache entry: build it again next time)
        cache.discard(_cache_key(spec))
        with _lock:
            _blobs.pop(spec, None)
        return None
    return found


def _start(device: str, spec: tuple) -> None:
    with _lock:
        if spec in _blobs or spec in _builders:
            return
        _blobs[spec] = "building"
        thread = _builders[spec] = threading.Thread(
            target=_built, args=(device, spec, _buffers(device, spec)),
            name="numloom-cub-build", daemon=True)
    thread.start()


def wait(timeout: float | None = None) -> None:
    """Wait for the sorts being built in the background (benchmarks and tests)."""
    with _lock:
        threads = list(_builders.values())
    for thread in threads:
        thread.join(timeout)


def sort(found, stream, keys: tuple, values: tuple | None, length: int, key_dtype,
         value_dtype=None, temp=None) -> int:
    """Run sort ``found`` (``sort_for``) on ``stream`` over ``length`` keys in buffer
    ``keys[0]``, with ``keys[1]`` the other buffer of a double buffer (and ``values`` likewise):
    the index (0 or 1) of the buffers that hold the sorted keys and values. ``temp(nbytes)``
    gives the scratch memory (a buffer with ``.ptr``), kept until the sort has run."""
    compute = _compute()
    key_dtype = np.dtype(key_dtype)
    key_buffer = compute.DoubleBuffer(*(_Span(b.ptr, length, key_dtype.str) for b in keys))
    value_buffer = None
    if values is not None:
        value_str = np.dtype(value_dtype).str
        value_buffer = compute.DoubleBuffer(*(_Span(b.ptr, length, value_str) for b in values))
    arguments = dict(d_in_keys=key_buffer, d_out_keys=None, d_in_values=value_buffer,
                     d_out_values=None, num_items=length, stream=stream)  # fmt: skip
    nbytes = found(temp_storage=None, **arguments)
    scratch = temp(max(int(nbytes), 1))
    found(temp_storage=_Span(scratch.ptr, max(int(nbytes), 1), "|u1"), **arguments)
    return key_buffer.selector

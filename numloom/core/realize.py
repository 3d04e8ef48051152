"""Evaluation: the pending storages, sync points, and running plans on a backend.

A ``Storage`` whose version is not a ``BUFFER`` node is pending. A sync evaluates every live
pending storage of a device together, so shared work runs once and intermediates that no live
Python object holds are never written to memory. Plans come from ``schedule.schedule``; the
device's backend runs them and hands back one ``Buffer`` per output.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
import weakref

import numpy as _np

from . import config
from .dag import Node, Op, buffer_of, contiguous_strides, node, prod, snapshot_items, toposort
from .ranges import phase, tracing


class Buffer:
    """Computed data: an immutable, C-contiguous block on one device.

    Buffers are never written after they are made, so storages and nodes may share them;
    a write to an array makes a new version (``SCATTER``) instead.
    """

    __slots__ = ("data", "device", "release", "exports", "__weakref__")

    def __init__(self, data, device: str = "cpu", release=None):
        if device == "cpu":
            data = _np.ascontiguousarray(data)
            data.setflags(False)  # (read-only; a third of ``flags.writeable = False``'s cost)
        self.data = data
        self.device = device
        self.release = release  # gives the memory back to its backend's pool when this dies
        self.exports = None  # weak references to the NumPy arrays sharing this memory

    def _shared(self) -> bool:
        return any(ref() is not None for ref in self.exports)

    def export(self, dtype, view, writable: bool = False) -> _np.ndarray:
        """A NumPy array of this (CPU) buffer's elements that ``view`` selects, sharing its
        memory; ``writable`` only where one storage's version alone holds the buffer
        (``owns_buffer``), whose value its writes then change. While it or any view of it
        lives, the memory stays out of the pool. Every NumPy view of it keeps one anchor
        alive: an array whose base is a memoryview (NumPy collapses a view's base to the first
        array whose base is not an array)."""
        if 0 in view.shape:
            return _np.empty(view.shape, dtype)
        data = self.data
        if writable:
            data.flags.writeable = True  # (the memoryview keeps it; the buffer's own view not)
        try:
            anchor = _np.frombuffer(memoryview(data.reshape(-1)).cast("B"), _np.uint8)
        finally:
            data.flags.writeable = False
        item = _np.dtype(dtype).itemsize
        host = _np.ndarray(view.shape, dtype, buffer=anchor, offset=view.offset * item,
                           strides=tuple(s * item for s in view.strides))  # fmt: skip
        if self.exports is None:
            self.exports = []
        elif len(self.exports) >= 8:  # (a loop's exports die at once: forget them)
            self.exports = [ref for ref in self.exports
                            if type(ref) is not weakref.ref or ref() is not None]  # fmt: skip
        self.exports.append(weakref.ref(anchor))
        return host

    def writable(self, dtype, view) -> _np.ndarray:
        """A writable NumPy view of this (CPU) buffer's elements that ``view`` selects: only
        for a buffer that one storage's version alone holds (``owns_buffer``)."""
        from .dag import strided

        data = self.data
        data.flags.writeable = True
        try:
            if data.shape == view.shape and data.dtype == dtype and view.offset == 0:
                if view.strides == contiguous_strides(view.shape):
                    return data.view()  # (the whole buffer: no strided view to make)
            return strided(data.reshape(-1).view(dtype), view)
        finally:
            data.flags.writeable = False

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def __repr__(self) -> str:
        return f"Buffer({self.data.shape}, {self.data.dtype}, {self.device})"


class PooledBuffer(Buffer):
    """A buffer whose memory a backend's pool lent (``release`` gives it back as the buffer
    dies, unless NumPy arrays still share it). Other buffers have no finalizer: a loop's small
    arrays, made and dropped each step, pay no Python call as they die."""

    __slots__ = ()

    def __del__(self):
        if self.release is not None and not (self.exports and self._shared()):
            self.release()


def buffer_node(data, device: str = "cpu") -> Node:
    buf = Buffer(data, device)
    return buffer_of(buf, buf.data.shape, buf.data.dtype)


_SEQ = itertools.count(1)  # creation order of storages: plans list their outputs in it


class Storage:
    """The memory behind an array and all of its views: its current version is a node."""

    __slots__ = ("version", "device", "error", "seq", "mirror", "eager", "__weakref__")

    def __init__(self, version: Node, device: str):
        self.version = version
        self.device = device
        self.error = None
        self.seq = next(_SEQ)
        self.mirror = None  # on a GPU: (weak reference to a version, its host copy)
        # Made by data-dependent work on the CPU (a mask's compaction, or ufuncs on such
        # arrays): small ufunc calls on it run now through NumPy (api/ufuncs.py's ``_eager``)
        self.eager = False
        if version.op is not _BUFFER:
            register(self)

    @property
    def pending(self) -> bool:
        return self.version.op is not _BUFFER


_BUFFER = Op.BUFFER  # (a global is found faster than an Enum member)
_REDUCE, _MATMUL = Op.REDUCE, Op.MATMUL
_MAIN_THREAD = threading.main_thread()


def owns_buffer(storage: Storage, version: Node) -> bool:
    """Whether ``storage``'s computed ``version`` (its current one) and its buffer are held by
    nothing else: no other storage, no pending node reading it, not the memory of another
    program (``from_dlpack``). Its memory may then be written in place without any other
    array seeing the write; NumPy arrays exported from it (``numpy.asarray(x)``) see it, as
    NumPy's views of an array do."""
    # The references counted: the storage's, the caller's and this function's, getrefcount's.
    if version.op is not _BUFFER or sys.getrefcount(version) > 4:
        return False
    buffer = version.arg
    if sys.getrefcount(buffer) > 3:
        return False
    return not foreign(buffer)


def computed_on_cpu(storage: Storage) -> bool:
    """Whether ``storage`` holds a computed value on the CPU, without error: NumPy can run on
    its memory now (a loop's calls, ``api/eager.py``)."""
    return storage.device == "cpu" and storage.version.op is _BUFFER and storage.error is None


def large_computed(storage: Storage) -> bool:
    """Whether ``storage`` is computed on the CPU, without error, and larger than a loop's small
    array may be (``config.EAGER_ELEMENTS``): small updates and gathers of it run at once
    through NumPy on its memory (a sieve over a large array). (A function of its own: a
    reference to the version held in the caller's frame across a write would look like another
    reader, and the write would copy the whole buffer first.)"""
    return computed_on_cpu(storage) and prod(storage.version.shape) > config.EAGER_ELEMENTS


def keep_exports(storage: Storage, old: Node) -> None:
    """After a write gave ``storage`` a new version: where NumPy arrays share the memory of its
    old one (``numpy.asarray(x)``, which a library keeps, as matplotlib's ``Path`` keeps its
    vertices), evaluate the write now and store it into that memory, as a NumPy view would
    see it. Only on the CPU (a GPU's exports are copies), outside ``numloom.jit``'s tracing,
    and where no other array's value is that memory."""
    buffer = old.arg
    if storage.device != "cpu" or TRACING or not _exported(buffer):
        return
    # (no other storage's value is this memory: an export's is its own, array.copyable)
    if storage.pending:
        ensure(storage)  # (with everything pending, so nothing reads the old values later)
    new = storage.version
    if storage.error is not None or new.op is not _BUFFER or new.arg is buffer:
        return
    data = buffer.data
    data.flags.writeable = True
    try:
        data[...] = new.arg.data
    finally:
        data.flags.writeable = False
    storage.version = old


def foreign(buffer: Buffer) -> bool:
    """Whether ``buffer`` is another program's memory (``from_dlpack``), which numloom never
    writes in place: its exports start with a reference that never dies (api/interop.py)."""
    exports = buffer.exports
    return bool(exports) and type(exports[0]) is not weakref.ref


def _exported(buffer: Buffer) -> bool:
    """Whether NumPy arrays ``__array__`` made share ``buffer``'s memory: live exports, not
    the memory from_dlpack shares (its writes leave that alone). Where every export has died,
    the buffer forgets them (element writes take their fast path again, ``_speedups.c``)."""
    exports = buffer.exports
    if not exports:
        return False
    foreign = False
    for ref in exports:
        if type(ref) is not weakref.ref:
            foreign = True
        elif ref() is not None:
            return True
    if not foreign:
        buffer.exports = None
    return False


def settle_readers(storage: Storage) -> None:
    """Before a write into the memory of ``storage``'s computed version (an element write, a
    NumPy function writing an argument): where NumPy arrays share that memory, compute first
    what is pending (readers of the old values), so that the memory is the storage's alone
    and the write goes into it, where the exports see it."""
    if storage.device != "cpu" or TRACING:
        return
    version = storage.version
    if version.op is _BUFFER and version.arg.exports and _exported(version.arg):
        del version  # (a reference held here would look like another reader)
        evaluate_device("cpu")


def own_buffer(storage: Storage) -> Node:
    """Give ``storage`` (computed, on the CPU) a buffer of its own: a copy of the one it
    shares. Returns its new version."""
    storage.version = buffer_node(_np.array(storage.version.arg.data, copy=True))
    return storage.version


def host_mirror(storage: Storage) -> _np.ndarray:
    """A host copy of a computed device storage, made once per version."""
    mirror = storage.mirror
    version = storage.version
    if mirror is not None and mirror[0]() is version:
        return mirror[1]
    host = to_host(version.arg)
    host.flags.writeable = False
    storage.mirror = (weakref.ref(version), host)
    return host


def write_through(storage: Storage, offset: int, nbytes: int) -> None:
    """Bytes ``[offset, offset + nbytes)`` of a device storage's host mirror were just written
    (an element write in a Python loop): they reach the device buffer before anything reads
    it. The buffer becomes an ``_Uploading`` one until then, remembering the range written
    (one copy for a loop of writes, made when a kernel, a copy to the host or an export next
    takes the buffer's data)."""
    buffer = storage.version.arg
    with _UPLOAD_LOCK:
        if type(buffer) is _Uploading:
            entry = _UPLOADS[buffer]
            entry[1] = min(entry[1], offset)
            entry[2] = max(entry[2], offset + nbytes)
        else:
            _UPLOADS[buffer] = [storage.mirror[1], offset, offset + nbytes]
            buffer.__class__ = _Uploading


class _Uploading(Buffer):
    """A device buffer whose host mirror holds writes the device has not: taking its data
    copies them to the device first (in stream order), and it is a plain ``Buffer`` again."""

    __slots__ = ()

    @property
    def data(self):
        with _UPLOAD_LOCK:
            if type(self) is _Uploading:  # (another thread may have copied them meanwhile)
                mirror, start, stop = _UPLOADS.pop(self)
                _backend(self.device).write_bytes(_DATA(self), start, mirror.ctypes.data + start,
                                                  stop - start)  # fmt: skip
                self.__class__ = Buffer  # (after the copy is queued: other threads wait here)
        return _DATA(self)


_DATA = Buffer.__dict__["data"].__get__  # a Buffer's own data slot
_UPLOADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # buffer -> [mirror, start, stop]
_UPLOAD_LOCK = threading.RLock()


def value_read() -> None:
    """Python reads an array's value: under ``numloom.jit`` tracing, the traced function then
    needs values while it runs and is called every time instead of replayed."""
    if TRACING:
        _STATS["values_read"] += 1


# --- statistics ----------------------------------------------------------------------------

_STATS = {
    "kernels_launched": 0,
    "kernels_through_numpy": 0,  # CPU kernels run node by node through NumPy (not compiled)
    "writes_in_place": 0,  # CPU writes through a view into their old version's memory
    # kernels whose floating-point flag was set, run again through NumPy for its warnings
    "fp_reruns": 0,
    "kernels_compiled": 0,
    "compile_cache_hits": 0,
    "plans_evaluated": 0,
    "plan_cache_hits": 0,
    # new sizes of a known structure whose plan runs through NumPy: its plan serves them too
    "plans_reused": 0,
    # new sizes of a structure planned before, planned by its template (compile/symbolic.py):
    # no scheduling, lowering or rendering; the kernels compiled for the old sizes serve them
    "plans_from_templates": 0,
    "plans_cached": 0,  # programs the backends' plan caches hold now (counted by stats())
    "plan_cache_evictions": 0,
    "graphs_launched": 0,
    "device_to_device_bytes": 0,  # copies between GPUs (asarray(x, device="cuda:1"))
    "graphs_built": 0,
    "graph_updates": 0,
    "host_to_device_bytes": 0,
    "device_to_host_bytes": 0,
    "device_compactions": 0,  # masks whose true positions a GPU found (a[mask], nonzero)
    "device_random_draws": 0,  # draws of NumPy's random streams made on a GPU
    "cub_sorts": 0,  # sorts on a GPU by CUB's radix sort (backends/cuda_cub.py)
    "auto_flushes": 0,
    "values_read": 0,
}
_FALLBACKS: dict = {}


_plan_caches: weakref.WeakSet = weakref.WeakSet()  # every PlanCache: stats() counts their programs


def register_plan_cache(cache) -> None:
    """Count a backend's plan cache (compile.pipeline.PlanCache) in ``stats()``."""
    _plan_caches.add(cache)


_COUNTING = threading.Lock()  # (kernels compile on several threads at once)


def count(name: str, n: int = 1) -> None:
    with _COUNTING:
        _STATS[name] += n


def count_fallback(name: str) -> None:
    _FALLBACKS[name] = _FALLBACKS.get(name, 0) + 1


def stats() -> dict:
    """A snapshot of numloom's counters (a new dict each call; subtract two to measure)."""
    snapshot = dict(_STATS)
    snapshot["plans_cached"] = sum(len(c) for c in list(_plan_caches))
    snapshot["fallbacks"] = dict(_FALLBACKS)
    return snapshot


# --- pending work and sync points ------------------------------------------------------------


class _Pending:
    """The storages with pending versions, held weakly: ``add``, ``discard``, iteration.

    Every traced operation adds one, so adding is a weak reference in a dict (no callback when
    the storage dies, unlike a WeakSet); dead entries are dropped when iterating and, in long
    runs without a sync, every few thousand adds.
    """

    def __init__(self):
        self.refs: dict = {}
        self.adds = 0

    def add(self, storage) -> None:
        self.refs[id(storage)] = weakref.ref(storage)
        self.adds += 1
        if self.adds & 4095 == 0:
            self._sweep()

    def _sweep(self) -> list:
        """Drop dead entries in place (another thread may be adding: the dict is never
        replaced) and return the live storages."""
        if SWEEP[0] is not None:  # (the same, in C: _speedups.sweep)
            return SWEEP[0](self.refs)
        live = []
        for key, ref in snapshot_items(self.refs):
            storage = ref()
            if storage is None:
                if self.refs.get(key) is ref:
                    self.refs.pop(key, None)
            else:
                live.append(storage)
        return live

    def clear(self) -> None:
        self.refs.clear()

    def discard(self, storage) -> None:
        ref = self.refs.get(id(storage))
        if ref is not None and ref() is storage:
            self.refs.pop(id(storage), None)

    def __iter__(self):
        return iter(self._sweep())


SWEEP = [None]  # the compiled sweep, once numloom's API is bound (array._install_tracing)
_pending = _Pending()
_flushing = False
# Held while a plan is evaluated: threads trace on their own, and evaluate one at a time
# (a sync in one thread may evaluate another thread's pending arrays, as it would its own).
LOCK = threading.RLock()


def register(storage: Storage) -> None:
    """Record a storage with a new pending version; flush when its graph grows too deep."""
    _pending.add(storage)
    register_limits(storage)


def register_limits(storage: Storage) -> None:
    """After a storage was registered: flush when its graph grows too deep or too many arrays
    are pending (the compiled path registers the storages it makes and calls this only when
    a limit is passed)."""
    if storage.version.depth > config.FLUSH_DEPTH and not _flushing:
        count("auto_flushes")
        _flush_marking(storage.device)
    elif len(_pending.refs) > config.FLUSH_WIDTH and not _flushing and not TRACING:
        live = _pending._sweep()  # (live ones, not dead entries)
        waiting = [s for s in live if s.pending]
        if len(waiting) < len(live):  # (entries of storages computed since: forgotten, so
            for s in live:  # that many computed arrays kept alive check nothing per new one)
                if not s.pending:
                    _pending.discard(s)
        if len(waiting) > config.FLUSH_WIDTH:
            count("auto_flushes")
            evaluate_device(storage.device)


def _flush_marking(device: str) -> None:
    """An evaluation because a loop's graph grew too deep, or because Python reads a small
    array's value (``ensure_read``): on the CPU, the small arrays it computes are marked
    (``Storage.eager``): the loop's next steps on them run at once through NumPy
    (api/eager.py), as a loop over a few thousand elements runs fastest."""
    global _marking
    _marking = device == "cpu" and not TRACING
    try:
        evaluate_device(device)
    finally:
        _marking = False


def ensure_read(storage: Storage) -> None:
    """``ensure`` for a value Python reads (an element, ``float``, ``tolist``, an ``if``): a
    small CPU array's read marks the small arrays its evaluation computes, as a loop that
    tests a value each step (a convergence check) wants."""
    if storage.pending and storage.device == "cpu" and prod(storage.version.shape) <= (
            config.EAGER_ELEMENTS):  # fmt: skip
        _flush_marking("cpu")
    ensure(storage)


_marking = False  # (set while _flush_marking evaluates)


# The functions ``numloom.jit`` is tracing: nothing evaluates early under them (a replay feeds
# new buffers to the traced program, so nothing it launches may count on holding its inputs).
TRACING: list = []


# Writes that replaced most of an array since the last evaluation: {id: weakref} and bytes.
_writes: dict = {}
_written = {"bytes": 0}


def written(storage: Storage, nbytes: int) -> None:
    """After a write of ``nbytes`` into ``storage``. On a device that runs on its own (a GPU),
    writes that replace most of their arrays (the time steps of a stencil) start evaluating
    once they add up to ``config.START_BYTES``, so the device computes them while Python traces
    on, instead of idling until the sync. Starting costs about as much host time as moving that
    many bytes costs the device, so sweeps over a large grid start every few writes.

    Only the written arrays are evaluated: the value written is usually a temporary whose
    statement has not ended yet, and other pending arrays are often dead by the next sync.
    A write whose value can fail waits for the sync, where its error belongs."""
    version = storage.version
    if 2 * nbytes < version.dtype.itemsize * prod(version.shape):
        return  # a small part of the array: its writes fuse into one pass, left pending
    if not _may_start(storage):
        return
    _writes[id(storage)] = weakref.ref(storage)
    _written["bytes"] += nbytes
    if _written["bytes"] < config.START_BYTES:
        return
    device = storage.device
    storages = [s for s in (r() for r in _writes.values())
                if s is not None and s.device == device and s.pending and not s.version.fallible]  # fmt: skip
    _writes.clear()
    _written["bytes"] = 0
    if storages:
        _evaluate(storages, device, start=True)


# True while an evaluation starts before the program waits for a value (writes, ``written``;
# Dask's chunk results as their tasks end): a GPU evaluation then need not wait for its kernels
# to report NumPy's warnings (backends/cuda_launch._FlagReads)
STARTING = [False]


def _may_start(storage: Storage) -> bool:
    if config.START_BYTES <= 0 or _flushing or TRACING or storage.error is not None:
        return False
    if threading.current_thread() is not _MAIN_THREAD:
        # (threads' writes, as Dask's tasks make them, would start in an order set by timing:
        # plans, and kernels to compile, that differ from run to run)
        return False
    version = storage.version
    if version.op is _BUFFER or version.fallible:
        return False
    return getattr(_backend(storage.device), "ASYNCHRONOUS", False)


def evaluate_device(device: str) -> None:
    """Evaluate every live pending storage on ``device``."""
    if _writes:
        _writes.clear()
        _written["bytes"] = 0
    storages = [s for s in list(_pending) if s.device == device and s.pending]
    if storages:
        _evaluate(storages, device)


def ensure(storage: Storage) -> None:
    """Evaluate ``storage`` (with every live pending array of its device) if it is pending."""
    if storage.pending:
        evaluate_device(storage.device)
        if storage.pending and storage.error is None:  # a version another thread just made
            _evaluate([storage], storage.device)


def sync() -> None:
    """Evaluate everything pending on every device and wait for it to finish."""
    for device in sorted({s.device for s in list(_pending)}):
        evaluate_device(device)
    for device in _devices_used:
        _backend(device).synchronize(device)


def evaluate(*arrays) -> None:
    """Evaluate these arrays now (and every other live pending array on their devices)."""
    devices = {a._storage.device for a in arrays if hasattr(a, "_storage")}
    for device in sorted(devices):
        evaluate_device(device)


_devices_used: set = set()


def to_device(data, device: str):
    """A BUFFER node holding a copy of host array ``data`` on ``device``."""
    return _backend(device).to_device(data, device)


def to_host(buffer: Buffer):
    """A host NumPy copy of a device buffer."""
    return _backend(buffer.device).to_host(buffer)


_backends: dict = {}  # device -> its backend module


def _backend(device: str):
    backend = _backends.get(device)
    if backend is None:
        from .device import load_backend as load

        backend = _backends[device] = load(device)
    return backend


class DataError(Exception):
    """Raised by a backend when a node's data is invalid (out-of-bounds fancy index).

    ``node`` is the failing node and ``error`` the exception to show the user.
    """

    def __init__(self, failing: Node, error: BaseException):
        super().__init__(str(error))
        self.node = failing
        self.error = error


def reduced_bytes(version: Node, factor: int = 8, floor: int = 1 << 20) -> int:
    """The bytes of the largest array pending ``version`` reduces (sums, a matrix product)
    where that array is at least ``factor`` times its size and of ``floor`` bytes or more;
    else 0. Leaving such a result pending holds that array's inputs; evaluating it lets them
    go. (A slice or a gather of a large pending array is not one: the array it reads is
    usually held elsewhere too.) Only the small side of the graph is walked, the nodes below
    the reduction's size, and only its first 16 nodes (the reduction is at or near the top:
    Dask asks this of every task's result), so a long pending graph costs nothing."""
    if version.op is _BUFFER:
        return 0
    big = max(factor * prod(version.shape), floor // max(version.dtype.itemsize, 1))
    seen, stack, found = set(), [version], 0
    while stack and len(seen) < 16:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        op = n.op
        if op is _BUFFER:
            continue
        reduces = op is _REDUCE or op is _MATMUL
        for src in n.srcs:
            size = prod(src.shape)
            if size < big:
                stack.append(src)
            elif reduces:
                found = max(found, size * src.dtype.itemsize)
    return found


def evaluate_storages(storages: list, start: bool = False) -> None:
    """Evaluate these storages' pending versions (and nothing else pending), device by device
    (``start``: before the program waits for a value, as ``STARTING`` says)."""
    for device in sorted({s.device for s in storages}):
        _evaluate([s for s in storages if s.device == device], device, start)


def _evaluate(storages: list, device: str, start: bool = False) -> None:
    with LOCK:
        storages = [s for s in storages if s.pending and s.error is None]
        if storages:
            before, STARTING[0] = STARTING[0], start
            try:
                _evaluate_locked(storages, device)
            finally:
                STARTING[0] = before


def _evaluate_locked(storages: list, device: str) -> None:
    global _flushing
    _flushing = True
    tracing(False)
    try:
        # Sorting keeps the plan's structure, and so its cache key, deterministic: the deepest
        # graph first, then by creation. The walk from the deepest root goes down its chain of
        # writes first, so two arrays written in turn (``X[i] = row; y[i] = f(X[i])``) are
        # ordered as the program wrote them, and each write of X can go into X's memory: from
        # a shallower root (``f(X[i])``, pending as the sync starts), X's whole chain came
        # first, each old version kept for y's reads, a copy of X per write.
        storages.sort(key=lambda s: (-s.version.depth, s.seq))
        # (another thread may give a storage a newer version meanwhile: that one stays)
        evaluated = [(s, s.version) for s in storages]
        roots = list({id(v): v for _, v in evaluated}.values())
        backend = _backend(device)
        _devices_used.add(device)
        start = time.perf_counter()
        try:
            with phase("numloom: evaluate"):
                results = backend.run(roots, device)
        except DataError as failure:
            _quarantine(storages, failure)
            remaining = [s for s in storages if s.error is None and s.pending]
            if remaining:
                try:
                    _evaluate(remaining, device)
                except Exception:  # noqa: BLE001 (recorded on its arrays; the first error wins)
                    pass
            raise failure.error from None
        except Exception as error:
            _isolate(storages, device, error)
            raise
        if config.DEBUG >= 1:
            took = (time.perf_counter() - start) * 1e3
            print(
                f"numloom: evaluated {len(roots)} arrays on {device} in {took:.3f} ms",
                file=sys.stderr,
            )
        count("plans_evaluated")
        small = config.EAGER_ELEMENTS if _marking else 0
        for s, v in evaluated:
            if s.version is v:
                s.version = results[id(v)]
                _pending.discard(s)
                if small and prod(v.shape) <= small:
                    s.eager = True
    finally:
        _flushing = False
        tracing(True)


def plan_for(roots: list, device: str):
    """The plan the device's backend would run for ``roots``."""
    return _backend(device).plan(roots)


def _retryable(error: BaseException) -> bool:
    """Whether a failed evaluation may succeed when tried again: a compiler that failed or
    timed out, memory or a file that was missing. The pending work then stays pending."""
    from .device import CompileError

    return isinstance(error, (CompileError, MemoryError, OSError))


def _isolate(storages: list, device: str, error: BaseException) -> None:
    """After an unexpected failure of a whole plan: evaluate each array on its own, so the
    ones that do not fail get their values. The ones that do keep the error and raise it
    again when used (later syncs do not retry them), unless the failure may pass (a compile
    that failed or timed out, memory): those stay pending, and the next sync tries again."""
    global _flushing
    _flushing = False
    if len(storages) > 1:
        for s in storages:
            try:
                _evaluate([s], device)
            except Exception:  # noqa: BLE001 (recorded on the storage below)
                pass
    if _retryable(error):
        return
    for s in storages:
        if s.pending:
            s.error = error
            _pending.discard(s)


def _quarantine(storages: list, failure: DataError) -> None:
    """After a data error, give every storage the value it has when the bad op is skipped.

    A write whose values or positions come from the bad op never happened (NumPy raised before
    writing): each such SCATTER or SCATTER_AT is replaced by the version it wrote over, so
    arrays computed from the storage afterwards see its old contents. An array computed from
    the bad op itself has no value: it keeps the error and raises it again when used.
    """
    rebuilt = _without_failed_writes([s.version for s in storages], failure.node)
    for s in storages:
        v = rebuilt[id(s.version)]
        if v is None:
            s.error = failure.error
            _pending.discard(s)
            continue
        s.version = v
        if not s.pending:
            _pending.discard(s)


def _without_failed_writes(roots: list, bad: Node) -> dict:
    """``{id(node): node rebuilt without the writes that depend on bad}`` for every node
    reachable from ``roots``; None for a node whose value depends on ``bad`` itself."""
    rebuilt: dict = {}
    for n in toposort(roots):
        srcs = [rebuilt[id(s)] for s in n.srcs]
        old = _written_over(n)
        if n is bad and old is not None:  # the failing op is a write: it never happened
            rebuilt[id(n)] = srcs[old]
        elif n is bad:
            rebuilt[id(n)] = None
        elif old is not None and any(s is None for k, s in enumerate(srcs) if k != old):
            rebuilt[id(n)] = srcs[old]  # the write never happened
        elif any(s is None for s in srcs):
            rebuilt[id(n)] = None
        elif all(s is old for s, old in zip(srcs, n.srcs)):
            rebuilt[id(n)] = n
        else:
            rebuilt[id(n)] = node(n.op, tuple(srcs), n.arg, n.shape, n.dtype, where=n.where)
    return rebuilt


def _written_over(n: Node) -> int | None:
    """For a write, which of its sources is the version it writes over (None: not a write):
    a kernel written in Python writes over storage ``arg[1]`` among its sources."""
    if n.op is Op.KERNEL:
        return n.arg[1]
    return 0 if n.op in (Op.SCATTER, Op.SCATTER_AT) else None

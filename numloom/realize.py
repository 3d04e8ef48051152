"""Evaluation: the pending storages, sync points, and running plans on a backend.

A ``Storage`` whose version is not a ``BUFFER`` node is pending. A sync evaluates every live
pending storage of a device together, so shared work runs once and intermediates that no live
Python object holds are never written to memory. Plans come from ``schedule.schedule``; the
device's backend runs them and hands back one ``Buffer`` per output.
"""

from __future__ import annotations

import sys
import time
import weakref

import numpy as _np

from . import config
from .dag import Node, Op, node, toposort


class Buffer:
    """Computed data: an immutable, C-contiguous block on one device.

    Buffers are never written after they are made, so storages and nodes may share them;
    a write to an array makes a new version (``SCATTER``) instead.
    """

    __slots__ = ("data", "device", "release", "__weakref__")

    def __init__(self, data, device: str = "cpu", release=None):
        if device == "cpu":
            data = _np.ascontiguousarray(data)
            if data.flags.writeable:
                data.flags.writeable = False
        self.data = data
        self.device = device
        self.release = release  # gives the memory back to its backend's pool when this dies

    def __del__(self):
        if self.release is not None:
            self.release()

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def __repr__(self) -> str:
        return f"Buffer({self.data.shape}, {self.data.dtype}, {self.device})"


def buffer_node(data, device: str = "cpu") -> Node:
    buf = Buffer(data, device)
    return node(Op.BUFFER, (), buf, buf.data.shape, buf.data.dtype)


class Storage:
    """The memory behind an array and all of its views: its current version is a node."""

    __slots__ = ("version", "device", "error", "seq", "__weakref__")
    _created = 0

    def __init__(self, version: Node, device: str):
        self.version = version
        self.device = device
        self.error = None
        Storage._created += 1
        self.seq = Storage._created
        if version.op is not Op.BUFFER:
            register(self)

    @property
    def pending(self) -> bool:
        return self.version.op is not Op.BUFFER


# --- statistics ----------------------------------------------------------------------------

_STATS = {
    "kernels_launched": 0,
    "kernels_compiled": 0,
    "compile_cache_hits": 0,
    "plans_evaluated": 0,
    "plan_cache_hits": 0,
    "graphs_launched": 0,
    "graph_updates": 0,
    "host_to_device_bytes": 0,
    "device_to_host_bytes": 0,
    "auto_flushes": 0,
}
_FALLBACKS: dict = {}


def count(name: str, n: int = 1) -> None:
    _STATS[name] += n


def count_fallback(name: str) -> None:
    _FALLBACKS[name] = _FALLBACKS.get(name, 0) + 1


def stats() -> dict:
    """A snapshot of numloom's counters (a new dict each call; subtract two to measure)."""
    snapshot = dict(_STATS)
    snapshot["fallbacks"] = dict(_FALLBACKS)
    return snapshot


# --- pending work and sync points ------------------------------------------------------------

_pending: weakref.WeakSet = weakref.WeakSet()
_flushing = False


def register(storage: Storage) -> None:
    """Record a storage with a new pending version; flush when its graph grows too deep."""
    _pending.add(storage)
    if storage.version.depth > config.FLUSH_DEPTH and not _flushing:
        count("auto_flushes")
        evaluate_device(storage.device)


def evaluate_device(device: str) -> None:
    """Evaluate every live pending storage on ``device``."""
    storages = [s for s in list(_pending) if s.device == device and s.pending]
    if storages:
        _evaluate(storages, device)


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


def _backend(device: str):
    from .backends import load

    return load(device)


class DataError(Exception):
    """Raised by a backend when a node's data is invalid (out-of-bounds fancy index).

    ``node`` is the failing node and ``error`` the exception to show the user.
    """

    def __init__(self, failing: Node, error: BaseException):
        super().__init__(str(error))
        self.node = failing
        self.error = error


def _evaluate(storages: list, device: str) -> None:
    global _flushing
    _flushing = True
    try:
        # Sorting by creation keeps the plan's structure, and so its cache key, deterministic.
        storages.sort(key=lambda s: s.seq)
        roots = list({id(s.version): s.version for s in storages}.values())
        backend = _backend(device)
        _devices_used.add(device)
        start = time.perf_counter()
        try:
            results = backend.run(roots, device)
        except DataError as failure:
            _quarantine(storages, failure)
            remaining = [s for s in storages if s.error is None and s.pending]
            if remaining:
                _evaluate(remaining, device)
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
        for s in storages:
            s.version = results[id(s.version)]
            _pending.discard(s)
    finally:
        _flushing = False


def plan_for(roots: list, device: str):
    """The plan the device's backend would run for ``roots``."""
    return _backend(device).plan(roots)


def _isolate(storages: list, device: str, error: BaseException) -> None:
    """After an unexpected failure of a whole plan: evaluate each array on its own, so the
    ones that do not fail get their values; the ones that do keep the error and raise it
    again when used. Later syncs do not retry them."""
    global _flushing
    _flushing = False
    if len(storages) > 1:
        for s in storages:
            try:
                _evaluate([s], device)
            except Exception:  # noqa: BLE001 (recorded on the storage below)
                pass
    for s in storages:
        if s.pending:
            s.error = error
            _pending.discard(s)


def _quarantine(storages: list, failure: DataError) -> None:
    """After a data error, put every storage back to a value it had before the bad op.

    A write through a bad index never happened (the storage keeps its older version); an array
    computed from a bad index has no value and raises the error again when used.
    """
    bad = failure.node
    tainted: set = set()
    for n in toposort([s.version for s in storages]):
        if n is bad or any(id(src) in tainted for src in n.srcs):
            tainted.add(id(n))
    for s in storages:
        v = s.version
        while id(v) in tainted and v.op in (Op.SCATTER, Op.SCATTER_AT, Op.KERNEL):
            v = v.srcs[v.arg[1] if v.op is Op.KERNEL else 0]
        if id(v) in tainted:
            s.error = failure.error
            _pending.discard(s)
        s.version = v
        if not s.pending:
            _pending.discard(s)

"""A kernel launch as nodes of the lazy DAG.

A launch reads the current version of each array argument's storage and makes a new version of
each storage the kernel writes: one ``KERNEL`` node per written storage, all sharing their
sources and their ``Launch`` (the scheduler runs them as one kernel). Scalars and the launch
shape are constant sources, so a loop that launches the same kernel with new values reuses
its plan. Pending array work feeding an argument runs first; work reading an argument's old
version still sees the old version.

NumPy arrays passed to a kernel are copied to the device and, when the kernel writes them,
copied back after it runs, as Numba does; numloom arrays stay on their device. On a GPU the
plan holding the launch is evaluated at once (asynchronously, with what was pending before it),
so the device works while Python goes on; on the CPU, inside ``numloom.jit`` and for
bounds-checked kernels (whose errors surface at the next sync), the launch stays pending.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np

from ...core import realize
from ...core.array import from_host, ndarray
from ...core.dag import Op, View, node
from ...core.device import get_device
from ...core.jit import TRACING
from .. import ktypes
from ..kerrors import ArgumentError


@dataclass(frozen=True)
class Launch:
    """What a launch runs. Equal launches (same kernel, argument layouts) share a plan."""

    kernel: object  # dispatcher.Specialization
    arrays: tuple  # per parameter: (storage index, View) for arrays, None for scalars
    storages: int  # how many distinct storages the arguments view
    written: tuple  # storage indices the kernel writes
    donated: tuple  # per written storage: its old buffer may be overwritten in place
    scalars: int  # how many scalar constants follow the storages among the sources

    def __repr__(self) -> str:
        return f"Launch({self.kernel.name}{self.kernel.signature()})"


def launch(spec, args: tuple, grid: tuple, block: tuple, shared: int, where) -> None:
    devices = {a.device for a in args if isinstance(a, ndarray)}
    if len(devices) > 1:
        raise ArgumentError(f"kernel {spec.name}: arguments on several devices "
                            f"({', '.join(sorted(devices))})", where,
                            "move them to one device first")  # fmt: skip
    device = devices.pop() if devices else get_device()
    storages, arrays, hosts = [], [], []
    for a, t in zip(args, spec.arg_types):
        if not isinstance(t, ktypes.Array):
            arrays.append(None)
            continue
        if isinstance(a, np.ndarray):
            hosts.append((a, from_host(a, device), len(arrays)))
            a = hosts[-1][1]
        index = next((i for i, s in enumerate(storages) if s is a._storage), None)
        if index is None:
            storages.append(a._storage)
            index = len(storages) - 1
        arrays.append((index, a._view))
    written = _written(spec, arrays)
    if _prints(spec):  # its output is due at the next sync, whoever holds its arrays then
        marker = from_host(np.zeros(1, np.int8), device)
        storages.append(marker._storage)
        written += (len(storages) - 1,)
        _effects[:] = [m for m in _effects if m._storage.pending] + [marker]
    # A bounds-checked kernel may fail: its arrays then keep their old versions intact. A traced
    # function (numloom.jit) replays on other buffers: they are not the launch's to overwrite.
    donated = tuple(_sole_holder(storages[i]) and not spec.ir.checks and not TRACING
                    for i in written)  # fmt: skip
    versions = [s.version for s in storages]
    scalars = [_scalar(a, t) for a, t in zip(args, spec.arg_types)
               if not isinstance(t, ktypes.Array)]  # fmt: skip
    dims = [_int(v) for v in grid + block + (shared,)]
    info = Launch(spec, tuple(arrays), len(storages), written, donated, len(scalars))
    srcs = tuple(versions) + tuple(scalars) + tuple(dims)
    line = (where.filename, where.line) if where is not None else None
    for i in written:
        v = versions[i]
        storages[i].version = node(Op.KERNEL, srcs, (info, i), v.shape, v.dtype, where=line)
        realize.register(storages[i])
    if device != "cpu" and not TRACING and not spec.ir.checks:
        # On a GPU the launch starts now, as Numba's and CuPy's do: the device runs it (and the
        # pending work before it) while Python goes on, where a launch left pending would keep
        # the GPU idle until the next sync. Nothing waits for it here.
        realize.evaluate_device(device)
    for host, array, k in hosts:
        if spec.ir.params[k].written:
            host[...] = array.get()


def _written(spec, arrays: list) -> tuple:
    out = []
    for param, entry in zip(spec.ir.params, arrays):
        if entry is not None and param.written and entry[0] not in out:
            out.append(entry[0])
    return tuple(sorted(out))


_effects: list = []  # markers of pending launches that print: kept alive until they run


@functools.lru_cache(maxsize=256)
def _prints(spec) -> bool:
    """Whether the kernel prints (then it runs at the next sync even if it writes nothing, or
    nothing holds what it writes: a marker array stands for its output)."""
    ir = spec.ir
    return "NL_PRINTF" in repr(ir.body) + repr(ir.functions)


def _scalar(value, t):
    from ...api.ufuncs import scalar_node

    return scalar_node(value, t.dtype)


@functools.lru_cache(maxsize=1024)
def _int(v: int):
    """A launch-shape constant (cached: the same few values come back launch after launch)."""
    return node(Op.CONST, (), np.int64(v), (), np.int64)


def _references(storage) -> tuple:
    """How many references the storage's buffer node, its Buffer and its data have."""
    v = storage.version
    return sys.getrefcount(v), sys.getrefcount(v.arg), sys.getrefcount(v.arg.data)


_baseline: list = []


def _sole_holder(storage) -> bool:
    """Whether the storage's buffer is referenced by nothing but the storage (no other array,
    no pending work, no view of its memory): then a kernel writing it may write it in place,
    since nobody can see the old values. Counting references is CPython's way of asking (as
    NumPy's ``ndarray.resize`` does), compared with a buffer known to be held once; anything
    unexpected holding the buffer only costs a copy."""
    if storage.version.op is not Op.BUFFER:
        return False
    if not _baseline:
        fresh = realize.Storage(realize.buffer_node(np.zeros(1)), "cpu")
        _baseline.append(_references(fresh))
    return _references(storage) == _baseline[0]


def views(launch_info: Launch) -> tuple:
    return tuple(a for a in launch_info.arrays if a is not None)


__all__ = ["Launch", "launch", "View"]

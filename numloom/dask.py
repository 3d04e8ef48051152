"""numloom arrays as Dask's chunks: the ``"numloom"`` array backend, Dask's dispatch for them,
and their serialization between workers.

    import dask, dask.array as da
    with dask.config.set({"array.backend": "numloom"}):
        x = da.random.default_rng(0).standard_normal((10**8,), chunks=10**7)  # numloom chunks
    y = (x * 2 + 1).sum().compute()                                           # a numloom array

``da.from_array(numloom_array, chunks=...)`` makes the same collection from an array the user
holds. Every chunk operation Dask runs is numloom's own (NumPy's dispatch protocols send Dask's
``np.*`` calls on numloom chunks to numloom), and numloom is lazy: a task returns a pending
array and the next task goes on tracing it, so a chain of blockwise tasks over one chunk becomes
one numloom kernel, evaluated where Dask needs a value (a ``compute``, a transfer between worker
processes). numloom is thread-safe, so Dask's threaded scheduler runs chunks concurrently.
Tasks whose results are much smaller than what they read (a chunk's reduction) are evaluated
as they end, a few chunks' worth at a time (``settle``), so their chunks' memory goes and a
computation larger than the device streams through it.

Dask finds this module through the ``dask.array.backends`` entry point numloom installs, or on
``import numloom.dask``; importing it registers the lookups Dask dispatches on chunk types
(concatenate, tensordot, einsum, take, empty, percentile, element counts) and serializers that send a
chunk's buffer between workers as a frame, without pickling the data.
"""

from __future__ import annotations

import os
import threading
import weakref

import numpy as _np
from dask.array.backends import ArrayBackendEntrypoint, _nannumel, _numel_arraylike
from dask.array.chunk_types import register_chunk_type
from dask.array.dispatch import (
    concatenate_lookup,
    einsum_lookup,
    empty_lookup,
    nannumel_lookup,
    numel_lookup,
    percentile_lookup,
    take_lookup,
    tensordot_lookup,
    to_numpy_dispatch,
)
from dask.array.percentile import _percentile
from dask.callbacks import Callback
from dask.sizeof import sizeof
from dask.utils import Dispatch

import numloom as _nl
from numloom.core import realize as _realize

to_numloom_dispatch = Dispatch("to_numloom_dispatch")


@to_numloom_dispatch.register(_np.ndarray)
def _from_numpy(data, **kwargs):
    return _nl.asarray(data, **kwargs)


@to_numloom_dispatch.register(_nl.ndarray)
def _from_numloom(data, **kwargs):
    return data if not kwargs else _nl.asarray(data, **kwargs)


@to_numpy_dispatch.register(_nl.ndarray)
def _to_numpy(data, **kwargs):
    return data.get()


class PCG64(_np.random.PCG64):
    """NumPy's PCG64, named for numloom: Dask draws a chunk with the generator of the library
    its bit generator's type comes from, so chunks of this one are numloom's (on a GPU, drawn
    on the device: NumPy's stream, bit for bit)."""

    __module__ = "numloom.dask"


class NumloomBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's ``"numloom"`` array backend: creation functions and random draws make numloom
    chunks."""

    @classmethod
    def to_backend_dispatch(cls):
        return to_numloom_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, _nl.ndarray):
            return data
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)

    @property
    def RandomState(self):  # noqa: N802 (Dask's name)
        return _nl.random.RandomState

    @property
    def default_bit_generator(self):
        return PCG64

    @staticmethod
    def ones(*args, **kwargs):
        return _with_numloom_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_numloom_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_numloom_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_numloom_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, **kwargs):
        return _with_numloom_meta("arange", *args, **kwargs)


def _with_numloom_meta(name: str, *args, meta=None, **kwargs):
    """Dask's own creation function ``name`` with a numloom ``meta``: its chunks come from
    numloom (``np.ones_like(meta, ...)`` and the like dispatch to numloom)."""
    import dask
    import dask.array as da

    meta = _nl.empty((0,)) if meta is None else meta  # (0-d: indexing it gives a scalar)
    with dask.config.set({"array.backend": "numpy"}):
        if name == "arange":
            return da.arange(*args, like=meta, **kwargs)
        return getattr(da, name)(*args, meta=meta, **kwargs)


def _register_backend() -> None:
    """The backend by name, also where numloom runs from a checkout (no installed entry point)."""
    from dask.array.backends import array_creation_dispatch

    array_creation_dispatch.register_backend("numloom", NumloomBackendEntrypoint())


_register_backend()

# A numloom array meeting a Dask array in an operation (``dask_array - numloom_array``, a
# ufunc of both) joins the collection, as a NumPy array does, instead of computing it.
register_chunk_type(_nl.ndarray)
concatenate_lookup.register(_nl.ndarray, _nl.concatenate)
tensordot_lookup.register(_nl.ndarray, _nl.tensordot)
einsum_lookup.register(_nl.ndarray, _nl.einsum)
take_lookup.register(_nl.ndarray, _nl.take)
empty_lookup.register(_nl.ndarray, _nl.empty)
percentile_lookup.register(_nl.ndarray, _percentile)  # (Dask's: np.percentile, numloom's here)
numel_lookup.register(_nl.ndarray, _numel_arraylike)
sizeof.register(_nl.ndarray)(lambda x: x.nbytes)  # (a worker's memory accounting and spilling)
nannumel_lookup.register(_nl.ndarray, _nannumel)


# --- evaluation at task boundaries --------------------------------------------------------------


SETTLE_BYTES = None  # the reduced bytes held pending before they are evaluated (None: auto)
GPU_SETTLE_BYTES = 256 << 20  # (settle_bytes' default on a GPU)
_held: list = []  # weak references to the pending reduced results not yet evaluated
_held_bytes = [0]
_held_lock = threading.Lock()


def settle(value, now: bool = False) -> None:
    """Evaluate tasks' pending numloom results where keeping them pending holds far more
    memory than they are (a chunk reduced: its sum, a matrix product of it, reading arrays 8
    times its size or more), once such results hold ``settle_bytes()`` of reduced data
    between them (``now``: at once). Their chunks' data is then let go, so a computation
    larger than the device's memory streams through it a few chunks at a time, and the
    results gathered evaluate as one plan (a chunk's two sums of one chain share its work).
    Results the size of their chunks stay pending and go on fusing with the next task.
    Dask's intermediate values (tuples, lists and dicts of chunks) are looked into."""
    found = []
    _collect(value, found, 2)
    reduced = [(s, _realize.reduced_bytes(s.version)) for s in found
               if s.pending and s.error is None]  # fmt: skip
    reduced = [(s, n) for s, n in reduced if n]
    if not reduced and not now:
        return
    with _held_lock:
        _held.extend(weakref.ref(s) for s, _ in reduced)
        _held_bytes[0] += sum(n for _, n in reduced)
        if not now and _held_bytes[0] < settle_bytes(reduced[0][0].device):
            return
        batch = [s for s in (r() for r in _held) if s is not None and s.pending]
        _held.clear()
        _held_bytes[0] = 0
    _evaluate_quietly(batch)


def _evaluate_quietly(storages: list) -> None:
    """Evaluate these pending storages; an error is recorded on their arrays and raised where
    they are used, not in Dask's scheduler. The evaluation starts before anything waits for
    its values: a GPU computes a chunk while Python goes on with the next task, and NumPy's
    warnings come out at the next wait for the device, as for a stencil's started sweeps."""
    if storages:
        try:
            _realize.evaluate_storages(storages, start=True)
        except Exception:  # noqa: BLE001 (recorded on the arrays)
            pass


def settle_bytes(device: str) -> int:
    """``SETTLE_BYTES``, or on the CPU a sixteenth of the host's memory; on a GPU 256 MiB.

    On a GPU, holding more keeps it idle while Python traces the held tasks, then hands it
    one large plan: Black-Scholes over 4e9 float32 on an H200 took 4.7 s holding a sixteenth
    of its memory (8.8 GB), 1.26 s holding 1 GiB and 1.17 s holding 256 MiB (CuPy: 1.88 s)."""
    if SETTLE_BYTES is not None:
        return SETTLE_BYTES
    known = _settle_bytes.get(device)
    if known is None:
        known = _settle_bytes[device] = _default_settle_bytes(device)
    return known


_settle_bytes: dict = {}  # device -> its default (asked once)


def _default_settle_bytes(device: str) -> int:
    if device != "cpu":
        return GPU_SETTLE_BYTES
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return max(total // 16, 64 << 20)


def _collect(value, found: list, depth: int) -> None:
    if isinstance(value, _nl.ndarray):
        found.append(value._storage)
    elif depth and isinstance(value, (tuple, list)):
        for item in value:
            _collect(item, found, depth - 1)
    elif depth and isinstance(value, dict):
        for item in value.values():
            _collect(item, found, depth - 1)


class _Settle(Callback):
    """Dask's local schedulers (threads, processes, sync) call ``settle`` on each task's
    result as the task ends."""

    def _posttask(self, key, result, dsk, state, worker_id):
        settle(result)

    def _finish(self, dsk, state, errored):
        settle(None, now=True)  # (what is held: the computation's last results)


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # (Dask without distributed)
    _WorkerPlugin = object


class SettlePlugin(_WorkerPlugin):
    """On the workers of a ``distributed`` cluster: each task's pending numloom results are
    evaluated as the task ends (``client.register_plugin(numloom.dask.SettlePlugin())``).
    Dask fuses a chunk's chain of blockwise operations into one task, so this keeps the chain's
    fusion; what it gives up, fusion across tasks, would cost more there: a pending chunk that
    moves to another worker is evaluated as it is serialized, in the worker's event loop, its
    transfer waiting on it (Black-Scholes on 2 worker processes: 4.2 s lazy, 1.6 s evaluated
    at task ends)."""

    name = "numloom-settle"

    def setup(self, worker):
        self.worker = worker

    def transition(self, key, start, finish, **kwargs):
        if finish == "memory":
            data = self.worker.data
            if key in getattr(data, "fast", data):
                found = []
                _collect(data[key], found, 2)
                _evaluate_quietly([s for s in found if s.pending and s.error is None])


_Settle().register()


# --- one task a chunk -------------------------------------------------------------------------


def optimize(dsk, keys, **kwargs):
    """Dask's array optimization, then, where the chunks are numloom's, ``fuse_chunks``.
    numloom installs it as Dask's ``array_optimize`` on import (unless the user set one);
    ``dask.config.set({"numloom.fuse-chunks": False})`` turns the second step off."""
    from dask.array.optimization import optimize as dask_optimize

    dsk = dask_optimize(dsk, keys, **kwargs)
    if isinstance(dsk, dict) and _fuses(dsk):
        dsk = fuse_chunks(dsk, keys)
    return dsk


def _fuses(dsk: dict) -> bool:
    import dask

    wanted = dask.config.get("numloom.fuse-chunks", "auto")
    if wanted != "auto":
        return bool(wanted)
    if dask.config.get("array.backend", "numpy") == "numloom":
        return True
    from dask._task_spec import DataNode

    return any(isinstance(t, DataNode) and isinstance(t.value, _nl.ndarray)
               for t in dsk.values())  # fmt: skip (da.from_array of a numloom array)


def _outputs(*values):
    return values


def fuse_chunks(dsk: dict, keys) -> dict:
    """One task for each chunk's own work: the tasks of one chunk index (``(name, i, j)``)
    that together depend on nothing else (the chunk's draws or data, the operations on it, its
    reductions), fused into one task, so that a worker runs a chunk's whole graph and numloom
    traces it as one plan.

    Dask fuses linear chains only. A chunk's graph with shared values (Black-Scholes: ``d1``
    read by two ``cnd`` calls and a put) stays a dozen tasks per chunk, and on a cluster the
    scheduler places them on different workers: each such task's chunk then crosses between
    workers (400 MB each on two GPUs), and each is evaluated as its own plan at its task's end.
    A group's values that other tasks (or the computation's keys) need come out of the fused
    task as a tuple, read by one ``getitem`` task each (on the same worker: its only input)."""
    from collections import defaultdict
    from operator import getitem

    from dask._task_spec import GraphNode, Task, TaskRef
    from dask.base import tokenize
    from dask.core import flatten, toposort

    wanted = set(flatten(keys)) if isinstance(keys, list) else {keys}
    dependents = defaultdict(list)
    for key, task in dsk.items():
        for d in task.dependencies:
            dependents[d].append(key)
    # the chunk index of each task all of whose inputs are tasks of its own index
    index: dict = {}
    parent: dict = {}

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for key in toposort(dsk, dependencies={k: t.dependencies for k, t in dsk.items()}):
        task = dsk[key]
        if not (isinstance(key, tuple) and len(key) > 1 and isinstance(task, GraphNode)):
            continue
        own = key[1:]
        deps = task.dependencies
        if any(index.get(d) != own for d in deps):
            continue
        index[key] = own
        parent[key] = key
        for d in deps:
            a, b = root(d), root(key)
            if a != b:
                parent[a] = b
    groups = defaultdict(list)
    for key in index:
        groups[root(key)].append(key)
    out = dict(dsk)
    for members in groups.values():
        if len(members) < 2:
            continue
        inside = set(members)
        exits = [k for k in members
                 if k in wanted or any(d not in inside for d in dependents.get(k, ()))]  # fmt: skip
        tasks = [dsk[k] for k in members]
        if len(exits) == 1:
            made = {exits[0]: _fused(Task, tasks, exits[0])}
        else:
            own = index[members[0]]
            name = "numloom-chunk-" + tokenize(sorted(map(str, members)))
            pack = Task((name + "-outputs", *own), _outputs, *(TaskRef(k) for k in exits))
            fused = (name, *own)
            made = {fused: _fused(Task, [*tasks, pack], fused)}
            made.update((k, Task(k, getitem, TaskRef(fused), j)) for j, k in enumerate(exits))
        if None in made.values():
            continue  # (Dask's fuse declined: the group stays as Dask made it)
        for k in members:
            del out[k]
        out.update(made)
    return out


def _fused(task_type, tasks: list, key):
    """One task named ``key`` that runs ``tasks`` (a subgraph with a single output) in an
    order found here, once; None where they are not such a subgraph.

    Dask's ``Task.fuse`` makes a task that orders its subgraph with ``dask.order`` at each
    run, and so does each of the linear chains Dask fused before (a Black-Scholes chunk holds
    16): 7-11 ms of host time a chunk, more than the chunk's kernels take on a GPU. Here the
    chains are opened and the whole chunk is one list of steps."""
    from dask._task_spec import TaskRef

    leaves = {t.key for t in tasks} - {d for t in tasks for d in t.dependencies}
    if len(leaves) != 1:
        return None
    flat: list = []
    made: set = set()
    for task in tasks:
        _flatten(task, flat, made, {})
    wanted, steps = set(leaves), []
    for step in reversed(flat):  # (the steps the output needs: not an alias read by none)
        if step[0].key in wanted:
            steps.append(step)
            wanted.update(key for _, key in step[1])
    steps.reverse()
    made = {node.key for node, _ in steps}
    inputs = tuple(sorted(wanted - made, key=hash))
    last = {}  # a value's last reader
    for i, (_, reads) in enumerate(steps):
        for _, key in reads:
            last[key] = i
    frees = [[] for _ in steps]
    for key, i in last.items():
        if key in made:
            frees[i].append(key)
    plan = _ChunkSteps(tuple((node, reads, tuple(f)) for (node, reads), f in zip(steps, frees)),
                       inputs, leaves.pop())  # fmt: skip
    return task_type(key, _run_steps, plan, *(TaskRef(k) for k in inputs),
                     _data_producer=any(t.data_producer for t in tasks))  # fmt: skip


def _flatten(task, steps: list, made: set, names: dict) -> None:
    """Append ``task``'s steps, each after its inputs, as ``(node, reads)``: ``reads`` pairs
    each key the node reads with the key of the value it is in the whole chunk. A fused
    subgraph of Dask's is opened into its own tasks; its inputs' names inside it (blockwise's
    ``"__dask_blockwise__0"``, its own in each subgraph) are ``names``' keys; an input that is
    a value (a scalar operand) becomes a step of its own; the subgraph's key is an alias of
    its output."""
    from dask._task_spec import Alias, DataNode, GraphNode, TaskRef, _execute_subgraph

    if getattr(task, "func", None) is _execute_subgraph:
        inner, outkey, inkeys = task.args[0], task.args[1], task.args[2]
        own = {}
        for name, d in zip(inkeys, task.args[3:]):
            if isinstance(d, TaskRef):
                own[name] = names.get(d.key, d.key)
            else:
                own[name] = (task.key, name)
                value = (d.substitute({}, key=own[name]) if isinstance(d, GraphNode)
                         else DataNode(own[name], d))  # fmt: skip
                _flatten(value, steps, made, {})
        for node in _toposorted(inner):
            _flatten(node, steps, made, own)
        if task.key != outkey:
            _flatten(Alias(task.key, outkey), steps, made, {})
        return
    if task.key in made:  # (an alias of a value made already, under its own name)
        return
    steps.append((task, tuple((k, names.get(k, k)) for k in task.dependencies)))
    made.add(task.key)


def _toposorted(inner: dict) -> list:
    done, order = set(), []

    def visit(key):
        if key in done or key not in inner:
            return
        done.add(key)
        for d in inner[key].dependencies:
            visit(d)
        order.append(inner[key])

    for key in inner:
        visit(key)
    return order


class _ChunkSteps:
    """A fused chunk's steps (each a node, the keys it reads with the keys of their values,
    and the values it reads last, let go after it), its inputs' keys, and its output's key."""

    __slots__ = ("steps", "inputs", "output")

    def __init__(self, steps: tuple, inputs: tuple, output):
        self.steps, self.inputs, self.output = steps, inputs, output

    def __reduce__(self):
        return _ChunkSteps, (self.steps, self.inputs, self.output)

    def __dask_tokenize__(self):
        return ("numloom-chunk-steps", self.output, self.inputs,
                tuple(node.key for node, _, _ in self.steps))  # fmt: skip


def _run_steps(plan: _ChunkSteps, *values):
    cache = dict(zip(plan.inputs, values))
    for node, reads, frees in plan.steps:
        cache[node.key] = node({name: cache[key] for name, key in reads})
        for key in frees:
            del cache[key]
    return cache[plan.output]


def _install_optimize() -> None:
    import dask

    if dask.config.get("array_optimize", None) is None:
        dask.config.set({"array_optimize": optimize})


_install_optimize()


# --- arg-reductions ------------------------------------------------------------------------------


def _arg_chunk(func, argfunc, x, axis, offset_info):
    """Dask's ``arg_chunk`` (each chunk's extreme values and their positions in the whole
    array) for numloom chunks: the pair as a dict of two numloom arrays, as Dask keeps CuPy's.
    Dask's own makes a NumPy structured array, which numloom holds through NumPy: every chunk
    would leave the device, and the reduction would go on in NumPy."""
    if not isinstance(x, _ndarray()):
        return _DASK_ARG[0](func, argfunc, x, axis, offset_info)
    arg_axis = None if len(axis) == x.ndim or x.ndim == 1 else axis[0]
    vals = func(x, axis=arg_axis, keepdims=True)
    arg = argfunc(x, axis=arg_axis, keepdims=True)
    if x.ndim > 0:
        if arg_axis is None:  # (the chunk's flat position to the whole array's, traced: no
            offset, total_shape = offset_info  # value is read here)
            total, inner, outer = arg * 0, 1, 1
            for n, o, whole in zip(reversed(x.shape), reversed(offset), reversed(total_shape)):
                total = total + ((arg // inner) % n + o) * outer
                inner, outer = inner * n, outer * whole
            arg = total
        else:
            arg = arg + offset_info
    return {"vals": vals, "arg": arg}


def _arg_combine(argfunc, data, axis=None, **kwargs):
    """Dask's ``arg_combine`` for the pairs ``_arg_chunk`` makes (dicts of numloom arrays)."""
    if not _numloom_pair(data):
        return _DASK_ARG[1](argfunc, data, axis=axis, **kwargs)
    arg, vals = _arg_merge(data, axis, argfunc, keepdims=True)
    return {"vals": vals, "arg": arg}


def _arg_merge(data, axis, argfunc, keepdims=False):
    """Dask's ``_arg_combine`` (the pairs' extreme along ``axis``, and its position), for
    numloom pairs by ``take_along_axis``: Dask's indexes with ``np.ogrid``'s host arrays of the
    whole chunk (on a GPU, copied to the device at every chunk)."""
    if not _numloom_pair(data):
        return _DASK_ARG[2](data, axis, argfunc, keepdims=keepdims)
    import numloom

    vals, arg = data["vals"], data["arg"]
    axis = None if len(axis) == vals.ndim or vals.ndim == 1 else axis[0]
    if axis is None:
        local = argfunc(vals, axis=None, keepdims=keepdims)
        return arg.ravel()[local], vals.ravel()[local]
    local = numloom.expand_dims(argfunc(vals, axis=axis), axis)
    vals = numloom.take_along_axis(vals, local, axis)
    arg = numloom.take_along_axis(arg, local, axis)
    if not keepdims:
        vals, arg = vals.squeeze(axis), arg.squeeze(axis)
    return arg, vals


def _numloom_pair(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("vals"), _ndarray())


def _ndarray():
    import numloom

    return numloom.ndarray


_DASK_ARG: list = []  # Dask's own arg_chunk, arg_combine and _arg_combine, for other chunks


def _install_arg_reductions() -> None:
    """``da.argmin`` and friends build their tasks from ``dask.array.reductions``' module-level
    ``arg_chunk`` and ``arg_combine`` at each call, and those and ``arg_agg`` call its
    ``_arg_combine``: numloom's stand in front of them, for numloom chunks only."""
    from dask.array import reductions

    if reductions.arg_chunk is not _arg_chunk:
        _DASK_ARG[:] = [reductions.arg_chunk, reductions.arg_combine, reductions._arg_combine]
        reductions.arg_chunk, reductions.arg_combine = _arg_chunk, _arg_combine
        reductions._arg_combine = _arg_merge  # (arg_agg's and nanarg_agg's, too)


_install_arg_reductions()


# --- serialization between worker processes --------------------------------------------------


IPC_STAGING = True  # a GPU chunk sent by UCX goes through a copy in RMM's memory (_ipc_frame)


def _register_serializers() -> None:
    """A chunk goes between workers as a header and its host buffer (a frame Dask sends as it
    is, not pickled); it arrives as a numloom array on the receiving worker's device."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
        from distributed.protocol.numpy import deserialize_numpy_ndarray, serialize_numpy_ndarray
    except ImportError:  # (Dask without distributed: nothing goes between processes)
        return

    @dask_serialize.register(_nl.ndarray)
    def _serialize(x):
        header, frames = serialize_numpy_ndarray(_np.ascontiguousarray(_np.asarray(x)))
        header["numloom-device"] = x.device
        return header, frames

    @dask_deserialize.register(_nl.ndarray)
    def _deserialize(header, frames):
        device = header.pop("numloom-device", "cpu")
        host = deserialize_numpy_ndarray(header, frames)
        return _nl.asarray(host, device=device if device == "cpu" else None)


    try:
        from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    except ImportError:
        return

    @cuda_serialize.register(_nl.ndarray)
    def _cuda_serialize(x):
        """A chunk on a GPU as one device frame of its bytes (``__cuda_array_interface__``):
        a transport that moves device memory (UCX) sends it GPU to GPU, never through the
        host. A chunk on the CPU is not for this family (Dask goes on to the next)."""
        if x.device == "cpu":
            raise NotImplementedError("a numloom array on the CPU goes by the 'dask' serializer")
        x = _nl.ascontiguousarray(x)
        header = {"shape": x.shape, "typestr": x.dtype.str, "lengths": [x.nbytes]}
        return header, [_ipc_frame(x)]

    def _ipc_frame(x):
        """The chunk's bytes in memory UCX's CUDA IPC transport can map in another process:
        numloom's memory comes from a stream-ordered pool, which legacy CUDA IPC cannot
        export, so UCX would stage it through the host. A copy into RMM's memory (cudaMalloc,
        as the receiving side's transport allocates it) goes GPU to GPU at NVLink speed.
        Without RMM (or with ``IPC_STAGING`` off), the chunk itself is the frame."""
        try:
            import rmm
        except ImportError:
            rmm = None
        if rmm is None or not IPC_STAGING or x.nbytes == 0:
            return x.reshape(-1).view(_np.uint8)
        from cuda.bindings import driver

        from .backends import cuda_memory

        source = x.__cuda_array_interface__["data"][0]  # (evaluated; numloom's stream waits)
        frame = rmm.DeviceBuffer(size=x.nbytes)
        stream = cuda_memory.stream_handle(x.device)
        cuda_memory._check(driver.cuMemcpyDtoDAsync(frame.ptr, source, x.nbytes, stream),
                           "cuMemcpyDtoDAsync")  # fmt: skip
        cuda_memory._check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize")
        _realize.count("device_to_device_bytes", x.nbytes)
        return frame

    @cuda_deserialize.register(_nl.ndarray)
    def _cuda_deserialize(header, frames):
        """A device frame (any object with ``__cuda_array_interface__``: a numloom array, or
        the buffer a transport allocated) viewed as the chunk, without a copy: its memory
        taken as the chunk's elements (``_Received``). (Viewed as bytes and reinterpreted,
        each received chunk was a bitcast that ran through the host: a k-means on two GPUs
        copied 2.8 GB a worker through it.)"""
        (frame,) = frames
        device = None if _nl.get_device() != "cpu" else "cuda"
        if not header["lengths"][0]:
            return _nl.empty(tuple(header["shape"]), _np.dtype(header["typestr"]), device=device)
        return _nl.asarray(_Received(frame, header), device=device)


class _Received:
    """A received frame's device memory as a chunk's elements: the frame's
    ``__cuda_array_interface__`` with the chunk's shape and element type, the frame kept alive
    by the numloom array that views it."""

    def __init__(self, frame, header):
        given = frame.__cuda_array_interface__
        self.frame = frame
        self.__cuda_array_interface__ = {
            "shape": tuple(header["shape"]), "typestr": header["typestr"], "strides": None,
            "data": (given["data"][0], False), "version": 3, "stream": given.get("stream")}


_register_serializers()

__all__ = ["NumloomBackendEntrypoint", "PCG64", "SettlePlugin", "settle", "settle_bytes",
           "to_numloom_dispatch"]

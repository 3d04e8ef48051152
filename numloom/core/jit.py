"""``numloom.jit``: trace a function once per input signature, then replay its plan.

The first call with a given signature (shapes, dtypes, views, devices and the values of the other
arguments) runs the function normally, building its DAG, and evaluates it. Later calls skip
Python tracing: the cached program runs again with the new inputs' buffers in place of the
traced ones, and the function's writes to its inputs are applied to the new inputs.

A function that needs a value during tracing (``float(x)``, printing, a data-dependent shape, a
NumPy fallback) evaluates in the middle of its trace; such a function is simply called every
time. Arrays made inside the function from host data (``np.asarray(list)``, random draws) are
constants of the trace, as in JAX.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, replace

import numpy as _np

from . import config, realize
from .array import _adopt, ndarray
from .dag import Op, node, toposort
from .realize import TRACING, Buffer, Storage  # TRACING: the functions being traced


@dataclass
class _Trace:
    """What replaying a traced call needs."""

    program: object
    order: list  # the traced DAG, sources first
    roots: list
    device: str
    leaves: tuple  # (argument index, position of its buffer in ``order``)
    outputs: object  # the result's structure, arrays replaced by _Out
    writes: tuple  # (argument index, root index): the function wrote into that argument


def jit(fn=None, *, static_argnums=()):
    """Compile ``fn`` once per input signature and replay its plan on later calls."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums)
    traces: dict = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = _signature(args, kwargs)
        trace = traces.get(key) if key is not None else None
        if trace is not None:
            return _replay(trace, args)
        if config.DEBUG >= 1 and key is not None:
            why = _why_new(key, list(traces)) if traces else "first call"
            print(f"numloom.jit: tracing {fn.__name__} for {_describe(args)} ({why})",
                  file=sys.stderr)  # fmt: skip
        result, trace = _trace(fn, args, kwargs)
        if trace is not None and key is not None:
            traces[key] = trace
        return result

    wrapper.traces = traces
    wrapper.py_func = fn  # numba.jit's name for the undecorated function
    return wrapper


def _why_new(key: tuple, seen: list) -> str:
    """What differs between a call's signature and the closest one traced before."""
    closest = min(
        seen, key=lambda old: sum(a != b for a, b in zip(old, key)) + abs(len(old) - len(key))
    )
    if len(closest) != len(key):
        return f"{len(key)} arguments instead of {len(closest)}"
    for k, (old, new) in enumerate(zip(closest, key)):
        if old == new:
            continue
        if old[0] == new[0] == "array":
            for what, i in (("shape", 1), ("dtype", 3), ("device", 4)):
                a = old[i].shape if what == "shape" else old[i]
                b = new[i].shape if what == "shape" else new[i]
                if a != b:
                    return f"argument {k}: {what} {a} before, {b} now"
            return f"argument {k}: another view of its memory"
        return f"argument {k}: {_shown(old)} before, {_shown(new)} now"
    return "a new signature"


def _shown(part: tuple) -> str:
    return f"a {part[3]} array" if part[0] == "array" else repr(part[2])


def _signature(args: tuple, kwargs: dict):
    """The cache key of a call, or None when an argument cannot be part of one."""
    parts, storages = [], {}
    for a in list(args) + sorted(kwargs.items()):
        if isinstance(a, ndarray):
            first = storages.setdefault(id(a._storage), len(storages))
            version = a._storage.version
            parts.append(("array", a._view, version.shape, a.dtype, a.device, first))
            continue
        try:
            hash(a)
        except TypeError:
            return None
        parts.append(("value", type(a), a))
    return tuple(parts)


def _describe(args: tuple) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, ndarray) else repr(a)
                     for a in args)  # fmt: skip


_backend = realize._backend  # (one cache of backend modules by device)


def _array_args(args: tuple) -> list:
    return [(i, a) for i, a in enumerate(args) if isinstance(a, ndarray)]


def _trace(fn, args: tuple, kwargs: dict):
    # Under the evaluation lock throughout: a sync in another thread would evaluate this call's
    # pending results between the call and the trace's bookkeeping, and the trace would then
    # take them for constants (every replay in every thread returning this call's values).
    with realize.LOCK:
        return _trace_locked(fn, args, kwargs)


def _trace_locked(fn, args: tuple, kwargs: dict):
    realize.sync()  # inputs are computed buffers: the trace reads them as leaves
    arrays = _array_args(args)
    before = {id(a._storage): a._storage.version for _, a in arrays}
    counters = realize.stats()
    evaluated = (counters["plans_evaluated"], counters["values_read"])
    TRACING.append(fn)  # kernels launched now must not write their inputs in place
    try:
        result = fn(*args, **kwargs)
    finally:
        TRACING.pop()
    handles = _flatten(result)
    counters = realize.stats()
    if (counters["plans_evaluated"], counters["values_read"]) != evaluated or not handles:
        return result, None  # it evaluated or read a value while tracing: call it every time
    devices = {h.device for h in handles} | {a.device for _, a in arrays}
    if len(devices) != 1:
        return result, None
    (device,) = devices
    written = [(i, a) for i, a in arrays if a._storage.version is not before[id(a._storage)]]
    computed = [h for h in handles if h._storage.pending]
    roots = list({id(h._storage.version): h._storage.version for h in computed}.values())
    for _, a in written:
        if all(a._storage.version is not r for r in roots):
            roots.append(a._storage.version)
    if not roots:
        return result, None  # nothing computed: nothing to replay
    backend = _backend(device)
    order = toposort(roots)
    program = backend.program_for(order, roots, device)
    pos = {id(n): i for i, n in enumerate(order)}
    leaves = tuple((i, pos[id(before[id(a._storage)])]) for i, a in arrays
                   if id(before[id(a._storage)]) in pos)  # fmt: skip
    trace = _Trace(
        program,
        order,
        roots,
        device,
        leaves,
        _structure(result, arrays, roots),
        tuple((i, _root_index(roots, a._storage.version)) for i, a in written),
    )
    _apply(trace, args, _execute(backend, program, order, roots, device), handles)
    return result, _without_inputs(trace)


def _execute(backend, program, order: list, roots: list, device: str, leaves=None) -> dict:
    """Run a traced program; bad data (an index out of bounds) raises what NumPy raises."""
    try:
        return backend.execute(program, order, roots, device, leaves)
    except realize.DataError as failure:
        raise failure.error from None


def _without_inputs(trace: _Trace) -> _Trace:
    """The trace with its arguments' buffers left out (empty stand-ins at their positions, the
    DAG rebuilt over them): a replay gets them from its own call, and the first call's arrays
    may go when the program drops them."""
    if not trace.leaves:
        return trace
    leaf_positions = {p for _, p in trace.leaves}
    rebuilt: dict = {}
    order = []
    for p, n in enumerate(trace.order):
        if p in leaf_positions:
            stand_in = Buffer(_np.empty(0, n.dtype) if trace.device == "cpu" else None,
                              trace.device)  # fmt: skip
            m = node(Op.BUFFER, (), stand_in, n.shape, n.dtype)
        elif n.op is Op.BUFFER or not n.srcs:
            m = n
        else:
            m = node(n.op, tuple(rebuilt[id(s)] for s in n.srcs), n.arg, n.shape, n.dtype,
                     n.where)  # fmt: skip
            m.call = n.call  # (the traced call's error state: fperrors.py)
        rebuilt[id(n)] = m
        order.append(m)
    roots = [rebuilt[id(r)] for r in trace.roots]
    return replace(trace, order=order, roots=roots)


def _flatten(result) -> list:
    if isinstance(result, ndarray):
        return [result]
    if isinstance(result, (tuple, list)):
        return [h for r in result for h in _flatten(r)]
    return []


@dataclass(frozen=True)
class _Out:
    """An array of the result: a view of input ``index`` or of new root ``index``."""

    kind: str  # "input" or "new"
    index: int
    view: object
    readonly: bool
    dtype: object  # the handle's (its view may read its storage's bytes as other elements)


@dataclass(frozen=True)
class _Value:
    value: object


def _root_index(roots: list, version) -> int:
    return next(k for k, r in enumerate(roots) if r is version)


def _structure(result, arrays: list, roots: list):
    """The result with each array replaced by how to rebuild it on replay."""
    if isinstance(result, ndarray):
        for i, a in arrays:
            if a._storage is result._storage:
                return _Out("input", i, result._view, result._readonly, result.dtype)
        if not result._storage.pending:  # an array the function did not compute
            return _Value(result)
        index = _root_index(roots, result._storage.version)
        return _Out("new", index, result._view, result._readonly, result.dtype)
    if isinstance(result, (tuple, list)):
        return type(result)(_structure(r, arrays, roots) for r in result)
    return _Value(result)


def _apply(trace: _Trace, args: tuple, results: dict, handles: list) -> None:
    """After the traced call's evaluation: every storage gets its computed buffer."""
    by_version = {id(r): results[id(r)] for r in trace.roots}
    for h in handles:
        if id(h._storage.version) in by_version:
            h._storage.version = by_version[id(h._storage.version)]
            realize._pending.discard(h._storage)
    for i, k in trace.writes:
        storage = args[i]._storage
        storage.version = results[id(trace.roots[k])]
        realize._pending.discard(storage)


def _replay(trace: _Trace, args: tuple):
    arrays = dict(_array_args(args))
    for a in arrays.values():
        if a._storage.pending:
            realize.evaluate_device(a.device)
    leaves = {p: arrays[i]._storage.version.arg.data for i, p in trace.leaves}
    backend = _backend(trace.device)
    with realize.LOCK:  # one replay at a time: threads share the trace's program
        results = _execute(backend, trace.program, trace.order, trace.roots, trace.device,
                           leaves)  # fmt: skip
    buffers = [results[id(r)] for r in trace.roots]
    for i, k in trace.writes:
        arrays[i]._storage.version = buffers[k]
    storages: dict = {}
    return _rebuild(trace.outputs, args, buffers, storages, trace.device)


def _rebuild(spec, args: tuple, buffers: list, storages: dict, device: str):
    if isinstance(spec, _Value):
        return spec.value
    if isinstance(spec, _Out):
        if spec.kind == "input":
            storage = args[spec.index]._storage
        else:
            storage = storages.get(spec.index)
            if storage is None:
                storage = storages[spec.index] = Storage(buffers[spec.index], device)
        return _adopt(ndarray.__new__(ndarray), storage, spec.view, spec.readonly, spec.dtype)
    return type(spec)(_rebuild(s, args, buffers, storages, device) for s in spec)

"""The CUDA device: fused plans as CUDA kernels (NVRTC, cached by architecture), launched in
order on one stream through cuda.core.

Memory comes from cuda.core's stream-ordered pool (no preallocation; a buffer goes back to the
pool when its last array dies). Kernels the CUDA code generator does not handle yet (scans,
gathers, joins) and matmul run on the host through NumPy, with the transfers counted in
``numloom.stats()``. Nothing here runs at ``import numloom``: CUDA is initialized on first use.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from ..compile import pipeline
from ..compile.lower import const_value
from ..compile.render_cuda import NARROW, has_narrow
from ..compile.schedule import Plan
from ..core import config, fperrors
from ..core.dag import Op, node, structure, toposort
from ..core.device import CudaError, OutOfMemoryError
from ..core.realize import Buffer, count
from . import cublas, reference
from .cpu import positions
from .cuda_graph import Launch, run_eagerly, run_segment

THREADS = 256
ASYNCHRONOUS = True  # a plan runs on the device's stream while Python goes on (realize.written)
SHORT_REDUCTION = 64  # a reduction this short gets a thread per output, not a block


# --- the device -------------------------------------------------------------------------------


@dataclass
class _Device:
    device: object  # cuda.core.Device
    stream: object
    arch: str
    sms: int
    graphs: dict = field(default_factory=dict)  # structure -> cuda_graph.SegmentGraph
    functions: dict = field(default_factory=dict)  # kernel symbol -> its functions by role
    # floating-point error flag words (fperrors.py), host memory the kernels write through
    # the bus: (host address, device address) of the word a sync reads, then of a word for
    # kernels whose calls ignore every error (never read)
    fp_words: tuple = ()


_devices: dict = {}
_creating = threading.Lock()


def problem() -> str | None:
    """Why CUDA cannot be used here, or None. Initializes the driver, so call it lazily."""
    try:
        from cuda.bindings import driver
        from cuda.core import Device  # noqa: F401
    except ImportError as e:
        return f"cuda.core is not installed ({e}); pip install numloom[cuda12] or [cuda13]"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return f"the CUDA driver did not initialize ({err.name})"
        err, n = driver.cuDeviceGetCount()
    except Exception as e:  # noqa: BLE001 (no driver library at all)
        return f"no usable CUDA driver ({e})"
    if err != driver.CUresult.CUDA_SUCCESS or n == 0:
        return "no CUDA device is visible"
    return None


_current = threading.local()  # .device: the device whose context is current in this thread


def _get(device: str) -> _Device:
    """The device's state, its context made current in the calling thread (each thread, and
    each switch between devices, needs that before a driver call)."""
    state = _devices.get(device)
    if state is not None:
        if getattr(_current, "device", None) != device:
            state.device.set_current()
            _current.device = device
        return state
    with _creating:
        return _create(device)


def _create(device: str) -> _Device:
    state = _devices.get(device)
    if state is None:
        from cuda.core import Device

        index = int(device.split(":")[1]) if ":" in device else 0
        dev = Device(index)
        dev.set_current()
        major, minor = dev.compute_capability
        sms = dev.properties.multiprocessor_count
        state = _devices[device] = _Device(dev, dev.create_stream(), f"sm_{major}{minor}", sms)
        from ..core import realize

        realize._devices_used.add(device)  # np.sync() waits for it, whatever ran there
        _load_pipeline(state.arch)
    else:
        state.device.set_current()
    _current.device = device
    return state


def _load_pipeline(arch: str) -> None:
    """Load what every first evaluation needs with the context, not inside the user's first
    call: numloom's compiler modules, the graph runner and NVRTC (which the compile cache's
    keys name)."""
    from ..compile import compiler, lower, render_cuda  # noqa: F401
    from . import cuda_graph  # noqa: F401

    try:
        compiler.cuda_target(arch)
    except Exception:  # noqa: BLE001 (no NVRTC: the first compile says so, with the fix)
        pass


def synchronize(device: str) -> None:
    if device in _devices:
        _devices[device].stream.sync()


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

    def __del__(self, memory=_memory, free=_free, kept=_kept, limit=FREE_LIMIT):
        # (Defaults are still bound at interpreter exit. Arrays that wrap memory numloom did
        # not allocate, from DLPack or CuPy, were made without __init__: they hold nothing.)
        held = getattr(self, "held", 0)
        if not held:
            return
        memory["in_use"] -= held
        blocks = free.setdefault((self.device, held), [])
        if len(blocks) < FREE_PER_SIZE and kept["bytes"] + held <= limit:
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


def _check(result, call: str, kernel: str = ""):
    from cuda.bindings import driver

    err = result[0] if isinstance(result, tuple) else result
    if err != driver.CUresult.CUDA_SUCCESS:
        where = f" (kernel {kernel})" if kernel else ""
        raise CudaError(f"{call} failed with {err.name}{where}")
    return result


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


def write_bytes(buffer: Buffer, offset: int, address: int, nbytes: int) -> None:
    """Copy ``nbytes`` of host memory at ``address`` into a device buffer at byte ``offset``,
    in stream order (pageable memory is staged before the call returns)."""
    from cuda.bindings import driver

    state = _get(buffer.device)
    _check(driver.cuMemcpyHtoDAsync(buffer.data.ptr + offset, address, nbytes,
                                    state.stream.handle), "cuMemcpyHtoDAsync")  # fmt: skip
    count("host_to_device_bytes", nbytes)


# --- sharing memory with other libraries ---------------------------------------------------------


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


# --- plans -------------------------------------------------------------------------------------


@dataclass
class Step:
    kernel: object  # schedule.Kernel (with its CUDA source when compiled)
    functions: dict  # name -> cuda.core Kernel, or empty to run on the host
    ir: object  # kir.Kernel
    nodes: tuple
    inputs: tuple
    outputs: tuple
    params: tuple
    consts: tuple
    layout: tuple
    checks: tuple = ()  # (position of a node, k) that flags each error slot
    declared: tuple = (0, ())  # (sizes, offsets of constants) the kernel's signature takes
    in_graph: bool = False  # a kernel written in Python that launches inside the plan's graph
    fp: bool = False  # the kernel checks for floating-point errors (fperrors.py)
    fp_outputs: bool = False  # a reduction whose float results must be finite (fperrors.py)


def declared_arguments(ir) -> tuple:
    """(how many sizes, which constants by offset) the rendered CUDA signature of kernel ``ir``
    declares: sizes and constants its code never reads are left out of it, so they must be
    left out of the launch's arguments too (the arguments after them would shift)."""
    from ..compile.render_cuda import kernel_constants, kernel_params

    return kernel_params(ir), tuple(off for off, _ in kernel_constants(ir))


@dataclass
class Program:
    plan: Plan
    steps: tuple
    segments: tuple = ()  # runs of step indices: all CUDA kernels (one graph), or one host step
    waits: tuple = ()  # per step, the steps whose outputs it reads (the plan's dependencies)
    recipes: dict = field(default_factory=dict)  # step -> Recipe, or a matmul's cuBLAS plan
    frees: tuple = ()  # per segment: positions of intermediates no later segment reads
    roots: tuple = ()  # positions of the roots in the DAG order
    buffers: tuple | None = None  # positions of the DAG's BUFFER nodes (found on first use)
    reuse: dict = field(default_factory=dict)  # step -> per output, the block it takes over


@dataclass(frozen=True)
class Recipe:
    """How to launch one CUDA step, fixed for its program: everything but the pointers and the
    values of the constants."""

    launches: tuple  # (function, grid, scratch role: "" | "part" | "final")
    sizes: tuple  # np.int64 size arguments
    consts: tuple  # (position, part, dtype) of each constant argument, in signature order
    outputs: tuple  # (position, shape, dtype) of each output
    aligned: tuple = ()  # launches to use instead when every buffer is 16-byte aligned
    parts: int = 0  # partial results per output of a reduction in two passes
    scratch: int = 0  # length of the partial-result arrays (outputs x parts)
    acc: object = None  # the accumulator dtype of those arrays
    # the constant nodes of the last launch and their values as arguments: a loop that
    # traces the same program again reads the same interned constants
    memo: list = field(default_factory=lambda: [None, None, None], compare=False)
    narrow: bool = False  # launch the 32-bit index variants (sizes then as np.int32)
    # this recipe among all (no two share one): with the pointers and constants, it names a
    # launch for the graph instances, which programs of other sizes may share
    token: int = field(default=0, compare=False)
    # aligned -> per launch (function, grid, role, name), found on first use
    resolved: dict = field(default_factory=dict, compare=False)


_tokens = itertools.count(1)


PLAN_CACHE_SIZE = 1024  # programs kept (least recently used dropped first)


class _Target(pipeline.Target):
    """The GPU's part of the pipeline: CUDA C++ compiled by NVRTC and loaded with cuda.core,
    launched as CUDA graphs by ``execute``."""

    name = "cuda"
    plans = pipeline.PlanCache(lambda: PLAN_CACHE_SIZE)

    def special(self, k, device: str):
        if k.kind == "library":  # matmul: cuBLAS
            return pipeline.Compiled()
        if k.kind == "kernel":  # kernels written in Python compile per launch (cuda_kernels.py)
            return pipeline.Compiled(source=k.outputs[0].arg[0].kernel.source("cuda")[1])
        return None

    def render(self, ir) -> tuple:
        return _source(ir)

    def load(self, source: str, symbol: str, device: str):
        # no functions where CUDA is not usable: the plan is only shown
        # (``numloom.explain(..., target="cuda")``)
        return _load(source, symbol, device) if _usable() else None

    def program(self, plan: Plan, compiled: list, order: list, roots: list, device: str):
        pos = {id(n): i for i, n in enumerate(order)}
        steps, kernels = [], []
        for k, c in zip(plan.kernels, compiled):
            lowered = c.lowered
            kernels.append(replace(k, source=c.source))
            steps.append(Step(
                kernel=kernels[-1], functions=c.code or {},
                ir=lowered.kernel if lowered else None, nodes=tuple(pos[id(n)] for n in k.nodes),
                inputs=tuple(pos[id(n)] for n in k.inputs),
                outputs=tuple(pos[id(n)] for n in k.outputs),
                params=tuple(lowered.params) if lowered else (),
                consts=tuple((pos[id(n)], part) for n, part in lowered.consts) if lowered else (),
                layout=tuple(lowered.const_layout) if lowered else (),
                checks=tuple((pos[id(n)], j) for n, j in lowered.checks) if lowered else (),
                declared=declared_arguments(lowered.kernel) if lowered else (0, ()),
                in_graph=k.kind == "kernel" and not k.outputs[0].arg[0].kernel.ir.checks,
                fp=bool(lowered.kernel.fp) if lowered else False,
                fp_outputs=lowered.kernel.fp_outputs if lowered else False,
            ))  # fmt: skip
        waits = [[] for _ in steps]
        for i, j in plan.dependencies():
            waits[j].append(i)
        segments = _segments(steps)
        frees = _frees(steps, segments, {pos[id(r)] for r in roots})
        return Program(replace(plan, kernels=tuple(_explain_splits(kernels, steps))),
                       tuple(steps), segments, tuple(map(tuple, waits)), frees=frees,
                       roots=tuple(pos[id(r)] for r in roots),
                       reuse=_reuse(steps, segments, waits, frees, order))  # fmt: skip


TARGET = _Target()
_programs = TARGET.plans


def plan(roots: list, device: str = "cuda:0") -> Plan:
    """The plan (with kernel sources and nodes) that evaluating ``roots`` runs."""
    order = toposort(roots)
    _program(order, roots, device)  # (compiled and cached as an evaluation would)
    return _build(order, roots, device).plan


def _program(order: list, roots: list, device: str, signature=None) -> Program:
    """The program evaluating ``roots``, cached by the DAG's structure without its nodes."""
    return pipeline.program(order, roots, device, TARGET, signature)


def _build(order: list, roots: list, device: str) -> Program:
    return pipeline.build(order, roots, device, TARGET)


def _on_gpu(step: Step) -> bool:
    """Whether a step runs as CUDA kernels in the plan's graph (it has CUDA code, or is a
    kernel written in Python); else on the host, in cuBLAS, or (a bounds-checked Python kernel,
    whose error slots are read after it) as its own launch."""
    return step.ir is not None or step.in_graph


def _segments(steps: list) -> tuple:
    """Consecutive CUDA-kernel steps form one segment (one graph); a step that runs on the host
    or in cuBLAS is a segment of its own, between graphs on the same stream."""
    segments, run = [], []
    for i, step in enumerate(steps):
        if _on_gpu(step):
            run.append(i)
            continue
        if run:
            segments.append(tuple(run))
            run = []
        segments.append((i,))
    if run:
        segments.append(tuple(run))
    return tuple(segments)


def _explain_splits(kernels: list, steps: list) -> list:
    """Say, for each kernel that runs outside a CUDA graph, why the graph is split there."""
    out = []
    for k, step in zip(kernels, steps):
        if not _on_gpu(step):
            where = {"library": "in cuBLAS", "kernel": "as its own launch"}.get(
                k.kind, "on the host (no CUDA code for it)"
            )
            k = replace(k, reason=f"{k.reason}; runs {where}, between CUDA graphs")
        out.append(k)
    return out


@functools.lru_cache(maxsize=4096)
def _source(ir) -> tuple:
    """(CUDA source, symbol) of kernel ``ir`` (named KERNEL; IRs are frozen, so hashable):
    rendered once per IR, so the same code over arrays of other sizes (the same IR: sizes are
    its parameters) renders nothing."""
    from ..compile.render_cuda import render_cuda

    return pipeline.symbol_of(render_cuda(ir))


def _load(source: str, symbol: str, device: str) -> dict:
    """Compile (through the cache) and load a kernel source: its functions by role, loaded
    once per device (programs of the same code over other sizes launch the same functions, so
    their graphs are one)."""
    from cuda.core import ObjectCode

    from ..compile.compiler import compile_cuda, cuda_code_kind

    state = _get(device)
    functions = state.functions.get(symbol)
    if functions is not None:
        return functions
    code = compile_cuda(source, state.arch, name_hint=symbol)
    if cuda_code_kind(code) == "cubin":
        module = ObjectCode.from_cubin(code)
    else:
        module = ObjectCode.from_ptx(code)
    functions = state.functions[symbol] = {
        name.replace(symbol, "KERNEL"): module.get_kernel(name) for name in _function_names(source)
    }
    return functions


@functools.cache
def _usable() -> bool:
    return problem() is None


def _function_names(source: str) -> list:
    import re

    return re.findall(r"__launch_bounds__\(\d+\) (\w+)\(", source)


# --- running -----------------------------------------------------------------------------------


def program_for(order: list, roots: list, device: str = "cuda:0") -> Program:
    return _program(order, roots, device)


def run(roots: list, device: str = "cuda:0") -> dict:
    """Evaluate ``roots`` on the device; returns ``{id(root): BUFFER node}``."""
    order, pos, signature = structure(roots)
    return execute(_program(order, roots, device, signature), order, roots, device, pos=pos)


def execute(program: Program, order: list, roots: list, device: str, leaves=None,
            pos=None) -> dict:  # fmt: skip
    """Run ``program`` over the DAG ``order``, some BUFFER positions replaced by ``leaves``;
    ``pos`` is ``{id(node): position}`` when the caller has it (made here once if needed)."""
    buffers = program.buffers
    if buffers is None:
        buffers = program.buffers = tuple(i for i, n in enumerate(order) if n.op is Op.BUFFER)
    values = {i: order[i].arg.data for i in buffers}
    if leaves:
        values.update(leaves)
    for index, segment in enumerate(program.segments):
        start = time.perf_counter() if config.DEBUG >= 1 else 0.0
        first = program.steps[segment[0]]
        if _on_gpu(first):
            _run_kernels(program, segment, order, values, device, pos)
        elif first.kernel.kind == "library" and _matmul_library() is not None:
            _matmul(program, segment[0], order, values, device)
        else:
            pos = pos if pos is not None else positions(order)
            if first.kernel.kind == "kernel":  # a bounds-checked kernel written in Python
                from . import cuda_kernels

                cuda_kernels.run(first, order, values, pos, device, program, roots)
            else:
                _on_host(first, order, values, pos, device)
        for p in program.frees[index]:  # freed in stream order, after the segment
            values.pop(p, None)
        if config.DEBUG >= 1:
            _debug_segment(program, segment, device, start)
    count("kernels_launched", len(program.steps))
    results = {}
    for r, p in zip(roots, program.roots):
        if r.op is Op.BUFFER:
            results[id(r)] = r
        else:
            results[id(r)] = node(Op.BUFFER, (), Buffer(values[p], device), r.shape, r.dtype)
    return results


def _debug_segment(program: Program, segment: tuple, device: str, start: float) -> None:
    _get(device).stream.sync()
    took = (time.perf_counter() - start) * 1e3
    names = ", ".join(program.steps[i].kernel.name for i in segment)
    how = "as a CUDA graph" if _on_gpu(program.steps[segment[0]]) else "on the host or in cuBLAS"
    print(f"numloom: {names} {how} {took:.3f} ms", file=sys.stderr)


def _frees(steps: list, segments: tuple, keep: set) -> tuple:
    """Per segment, the positions of intermediates no later segment reads."""
    last: dict = {}
    for index, segment in enumerate(segments):
        for i in segment:
            for p in steps[i].inputs + steps[i].outputs:
                last[p] = index
    frees = [[] for _ in segments]
    for p, index in last.items():
        if p not in keep:
            frees[index].append(p)
    return tuple(map(tuple, frees))


def _reuse(steps: list, segments: tuple, waits: list, frees: tuple, order: list) -> dict:
    """``{step: positions}``: per output of a step, the intermediate whose memory it takes
    over (None: a new block). Within one graph, a step may write over an intermediate of the
    same shape and dtype that its own segment made and nothing after the segment reads, once
    every step that reads it is among the step's ancestors (so they are done). A chain of
    sweeps then cycles through a few blocks instead of a new one per sweep.

    Intermediates read by a kernel written in Python, or by a step that checks its indices
    (its inputs are read again to name an error), are never taken over."""
    reuse: dict = {}
    for index, segment in enumerate(segments):
        if len(segment) < 3:
            continue
        local = {i: k for k, i in enumerate(segment)}
        freed = set(frees[index])
        made = {p for i in segment for p in steps[i].outputs} & freed
        readers: dict = {}
        for k, i in enumerate(segment):
            for p in steps[i].inputs:
                if p in made:
                    readers.setdefault(p, []).append(k)
        for i in segment:
            step = steps[i]
            if step.in_graph or step.checks:
                made.difference_update(step.inputs)
        ancestors: list = []  # per local step, a bit mask of the local steps before it
        pool: dict = {}  # (shape, dtype) -> [(position, mask of the steps that must be done)]
        for k, i in enumerate(segment):
            mask = 0
            for j in waits[i]:
                if j in local:
                    mask |= ancestors[local[j]] | (1 << local[j])
            ancestors.append(mask)
            step = steps[i]
            if not step.in_graph:
                taken = []
                for p in step.outputs:
                    blocks = pool.get((order[p].shape, order[p].dtype), [])
                    q = next((b for b in blocks if b[1] & ~mask == 0), None)
                    if q is not None:
                        blocks.remove(q)
                    taken.append(None if q is None else q[0])
                if any(q is not None for q in taken):
                    reuse[i] = tuple(taken)
            for p in set(step.inputs) | set(step.outputs):
                if p in made and max(readers.get(p, [k])) == k:  # its last reader, or unread
                    done = 1 << k
                    for r in readers.get(p, ()):
                        done |= 1 << r
                    pool.setdefault((order[p].shape, order[p].dtype), []).append((p, done))
    return reuse


def _run_kernels(program: Program, segment: tuple, order: list, values: dict,
                 device: str, pos: dict | None) -> None:  # fmt: skip
    """Allocate the segment's outputs and launch its kernels (one graph, or one by one)."""
    state = _get(device)
    launches, last, checks, held = [], {}, [], []  # last: step -> its last launch's index
    reporting = False  # a kernel's floating-point flag is read after the segment
    reductions = []  # reductions whose results are checked after it (fperrors.py)
    for i in segment:
        step = program.steps[i]
        deps = tuple(sorted(last[j] for j in program.waits[i] if j in last))
        if step.in_graph:  # a kernel written in Python
            from . import cuda_kernels

            pos = pos if pos is not None else positions(order)
            cuda_kernels.graph_launches(step, order, values, pos, device, program, deps,
                                        launches)  # fmt: skip
            last[i] = len(launches) - 1
            continue
        recipe = program.recipes.get(i)
        if recipe is None:
            recipe = program.recipes[i] = _recipe(step, order, state.sms)
        flag = None
        if step.fp_outputs and fperrors.may_report(order[p] for p in step.nodes):
            reporting = True
            reductions.append(step)
        if step.fp:
            reports = fperrors.may_report(order[p] for p in step.nodes)
            reporting = reporting or reports
            flag = _fp_words(state)[0 if reports else 1][1]
        errors = _step_launches(step, recipe, order, values, device, deps, launches, held,
                                program.reuse.get(i), flag)  # fmt: skip
        last[i] = len(launches) - 1
        if errors is not None:
            checks.append((step, errors))
    try:
        if config.GRAPHS:
            run_segment(state.graphs, launches, state.stream)
        else:
            run_eagerly(launches, state.stream)
    except Exception as e:  # noqa: BLE001 (a CUDA failure, named with the kernels involved)
        names = ", ".join(launch.name for launch in launches)
        how = "building or launching the CUDA graph of" if config.GRAPHS else "launching"
        raise CudaError(f"{how} {names} failed: {e}") from e
    for step, errors in checks:  # a kernel flagged bad data: NumPy's rules name the error
        if to_host(Buffer(errors, device)).any():
            from .cpu import raise_data_error

            raise_data_error(step, partial(_on_host, step, order, values, positions(order),
                                           device))  # fmt: skip
    if reporting:
        state.stream.sync()
        word = ctypes.c_int64.from_address(_fp_words(state)[0][0])
        bad = any(not fperrors.finite([to_host(Buffer(values[p], device))])
                  for step in reductions for p in step.outputs)  # fmt: skip
        if word.value or bad:
            word.value = 0
            count("fp_reruns")
            _report_fp(program, segment, order, values, device)


def _fp_words(state: _Device) -> tuple:
    """The device's two floating-point flag words (see ``_Device.fp_words``), made once:
    page-locked host memory mapped into the device's address space, zero until a kernel finds
    a value that is not finite."""
    if not state.fp_words:
        from cuda.bindings import driver

        words = []
        for _ in range(2):
            err, host = driver.cuMemHostAlloc(8, driver.CU_MEMHOSTALLOC_DEVICEMAP)
            _check(err, "cuMemHostAlloc")
            ctypes.c_int64.from_address(host).value = 0
            err, dev = driver.cuMemHostGetDevicePointer(host, 0)
            _check(err, "cuMemHostGetDevicePointer")
            words.append((int(host), int(dev)))
        state.fp_words = tuple(words)
    return state.fp_words


def _report_fp(program: Program, segment: tuple, order: list, values: dict,
               device: str) -> None:  # fmt: skip
    """A kernel of the segment flagged a value that is not finite: run the segment's nodes
    again through NumPy on the host, from the segment's inputs, each operation under its
    call's error state, so NumPy's own warnings come out at the user's lines (none, for
    inputs that were not finite already) and its ``FloatingPointError`` fails the evaluation
    as a data error. The device's values stand. (The whole segment runs: its intermediates may
    have been written over by later kernels of the graph.)"""
    pos = positions(order)
    host: dict = {}
    local: dict = {}

    def value(s):
        if id(s) in local:
            return local[id(s)]
        p = pos[id(s)]
        if p not in host:
            v = values[p]
            host[p] = to_host(Buffer(v, device)) if isinstance(v, DeviceArray) else v
        return host[p]

    for i in segment:
        step = program.steps[i]
        for p in step.nodes:
            n = order[p]
            if n.op is Op.KERNEL:  # a kernel written in Python: its output as it ran
                local[id(n)] = value(n)
                continue
            local[id(n)] = _compute(n, [value(s) for s in n.srcs])


def _compute(n, srcs: list):
    """Node ``n`` through NumPy on the host, under its call's error state if it recorded one
    (fperrors.py), else with every floating-point error ignored."""
    if fperrors.recorded(n):
        return fperrors.compute(n, srcs, reference.compute)
    with np.errstate(all="ignore"):
        return reference.compute(n, srcs)


def _recipe(step: Step, order: list, sms: int) -> Recipe:
    """The fixed part of a step's launches on a device of ``sms`` multiprocessors: functions,
    grids, sizes, constants, outputs; in 32-bit indices where every index fits."""
    recipe = _wide_recipe(step, order, sms)
    if config.INDEX32 and _fits_32_bits(step, order, recipe):
        recipe = replace(recipe, narrow=True, sizes=tuple(np.int32(v) for v in recipe.sizes))
    return replace(recipe, token=next(_tokens))


def _fits_32_bits(step: Step, order: list, recipe: Recipe) -> bool:
    """Whether the step's kernels have 32-bit variants and every index they compute fits in
    one: an index is a sum of at most (dimensions + 2) terms (coordinate times stride,
    offsets), each under the largest of the sizes, strides, offsets, buffer lengths and loop
    counts; a grid-stride loop runs up to one stride past its count."""
    if not has_narrow(step.ir):
        return False
    nodes = [order[p] for p in step.inputs + step.outputs]
    ir = step.ir
    outer = math.prod(_extent(e, step.params) for e in ir.outer)
    inner = math.prod(_extent(e, step.params) for e in ir.inner)
    # the iterations of one loop: a scatter loops over the storage and over the written box
    # apart; any other kernel over its outer axes times its inner ones (may exceed 2**31)
    space = max(outer, inner) if ir.kind == "scatter" else outer * inner
    largest = max([abs(int(v)) for v in step.params] + [n.size for n in nodes]  # any buffer
                  + [space, recipe.scratch, recipe.parts], default=0)  # fmt: skip
    ndim = max([n.ndim for n in nodes], default=0)
    return (largest + (1 << 22)) * (ndim + 2) < 1 << 31


def _narrow_name(name: str, suffix: str) -> str:
    """``KERNEL_fused`` -> ``KERNEL32_fused``: a launch's function in its 32-bit variant."""
    return "KERNEL" + suffix + name[len("KERNEL") :]


def _wide_recipe(step: Step, order: list, sms: int) -> Recipe:
    ir = step.ir
    outer = math.prod(_extent(e, step.params) for e in ir.outer) if ir.outer else 1
    inner = math.prod(_extent(e, step.params) for e in ir.inner) if ir.inner else 1
    n_sizes, offsets = step.declared
    consts = tuple((p, part, dt) for (p, part), (off, dt) in
                   sorted(zip(step.consts, step.layout), key=lambda item: item[1][0])
                   if off in offsets)  # fmt: skip
    outputs = tuple((p, order[p].shape, order[p].dtype) for p in step.outputs)
    fixed = dict(sizes=tuple(np.int64(v) for v in step.params[:n_sizes]), consts=consts,
                 outputs=outputs)  # fmt: skip
    if ir.kind == "map" and "KERNEL_vec" in step.functions:  # 16-byte loads where aligned
        return Recipe(
            (("KERNEL", _grid(outer, THREADS, sms), ""),),
            **fixed,
            aligned=(("KERNEL_vec", _grid(-(-outer // 4), THREADS, sms), ""),),
        )
    if ir.kind in ("map", "scan"):
        return Recipe((("KERNEL", _grid(outer, THREADS, sms), ""),), **fixed)
    if ir.kind == "row":
        if ir.outer and inner <= SHORT_REDUCTION:
            return Recipe((("KERNEL_thread", _grid(outer, THREADS, sms), ""),), **fixed)
        return Recipe((("KERNEL", _grid(outer, 1, sms), ""),), **fixed)
    if ir.kind == "scatter" and ir.view_coords:  # one pass: old values or new ones
        return Recipe((("KERNEL_fused", _grid(outer, THREADS, sms), ""),), **fixed)
    if ir.kind == "scatter":
        return Recipe((("KERNEL_copy", _grid(outer, THREADS, sms), ""),
                       ("KERNEL_write", _grid(inner, THREADS, sms), "")), **fixed)  # fmt: skip
    acc = _ACC_DTYPE[ir.reduction.acc_type]
    if ir.outer:  # a reduction with kept axes
        if inner <= SHORT_REDUCTION:
            return Recipe((("KERNEL_thread", _grid(outer, THREADS, sms), ""),), **fixed)
        if outer < 2 * sms and inner >= 4 * THREADS:  # few long ones: several blocks each
            parts = max(1, min(-(-4 * sms // outer), inner // (4 * THREADS)))
            return Recipe((("KERNEL_split", _grid(outer * parts, 1, sms), "split"),
                           ("KERNEL_merge", _grid(outer, 1, sms), "split")), **fixed,
                          parts=parts, scratch=outer * parts, acc=acc)  # fmt: skip
        return Recipe((("KERNEL", _grid(outer, 1, sms), ""),), **fixed)
    # every axis reduced: partial results per block, then one block
    parts = _grid(inner, THREADS, sms, waves=4)
    return Recipe((("KERNEL_part", parts, "part"), ("KERNEL_final", 1, "final")), **fixed,
                  parts=parts, scratch=parts, acc=acc)  # fmt: skip


def _step_launches(step: Step, recipe: Recipe, order: list, values: dict, device: str,
                   deps: tuple, launches: list, held: list, reuse=None,
                   flag: int | None = None):  # fmt: skip
    """Append the launches of one plan kernel (two, chained, for a scatter or a full
    reduction) with its outputs allocated (or, per ``reuse``, taken over from a finished
    intermediate) and recorded in ``values``; return its error slots if it checks indices.

    This runs for every step of every evaluation (a ``numloom.jit`` replay is little else):
    a launch gets its key (pointers, constants, the recipe) and makes its arguments only if
    a graph instance needs them. ``flag``: the device address of the floating-point flag word
    a kernel that checks gets after its buffers."""
    if reuse is None:
        outs = [DeviceArray(shape, dtype, device) for _, shape, dtype in recipe.outputs]
    else:
        outs = [DeviceArray(shape, dtype, device) if q is None else values[q]
                for (_, shape, dtype), q in zip(recipe.outputs, reuse)]  # fmt: skip
    addresses = [values[p].ptr for p in step.inputs]
    for (p, _, _), o in zip(recipe.outputs, outs):
        addresses.append(o.ptr)
        values[p] = o
    if recipe.consts:
        nodes = tuple([order[p] for p, _, _ in recipe.consts])
        memo = recipe.memo
        if memo[0] == nodes:  # (Nodes compare by identity)
            consts, consts_key = memo[1], memo[2]
        else:
            consts = [_scalar(const_value(order[p], part), dt) for p, part, dt in recipe.consts]
            consts_key = b"".join([c.tobytes() for c in consts])  # -0.0 is not 0.0; NaN is NaN
            memo[:] = nodes, consts, consts_key
    else:
        consts, consts_key = (), b""
    if step.checks:  # error slots of indirect loads, zeroed before the kernels run
        errors = DeviceArray((2 * len(step.checks),), np.int64, device)
        _zero(errors, device)
        addresses.append(errors.ptr)
    else:
        errors = None
    aligned = bool(recipe.aligned) and all(a % 16 == 0 for a in addresses)
    if flag is not None:
        addresses.append(flag)
    pointers = len(addresses)
    if recipe.scratch:
        n = (recipe.scratch,)
        arrays = [DeviceArray(n, recipe.acc, device), DeviceArray(n, np.int64, device),
                  DeviceArray(n, np.bool_, device)]  # fmt: skip
        held.extend(arrays)  # alive until the launches are enqueued; freed in stream order
        addresses.extend(a.ptr for a in arrays)
    # What a graph instance compares to know it has this launch: the sizes and grids are the
    # recipe's, so its token, the pointers and the constants suffice.
    key = (tuple(addresses), consts_key, recipe.token)
    templates = recipe.resolved.get(aligned)
    if templates is None:
        templates = recipe.resolved[aligned] = _templates(step, recipe, aligned)
    for function, grid, role, name in templates:
        make = partial(_arguments, addresses, pointers, recipe, consts, role)
        launches.append(Launch(function, grid, THREADS, None, deps, name, key=key, make=make))
        deps = (len(launches) - 1,)
    return errors


def _templates(step: Step, recipe: Recipe, aligned: bool) -> tuple:
    """Per launch of a step: (function, grid, scratch role, name for errors)."""
    out = []
    for name, grid, role in recipe.aligned if aligned else recipe.launches:
        if recipe.narrow:
            name = _narrow_name(name, NARROW)
        out.append((step.functions[name], grid, role, f"{step.kernel.name} ({name})"))
    return tuple(out)


def _arguments(addresses: list, pointers: int, recipe: Recipe, consts, role: str) -> tuple:
    """A launch's arguments: the buffers' pointers, the scratch arrays' (by role), the sizes and
    the constants."""
    ptrs = [np.uint64(a) for a in addresses[:pointers]]
    if role == "":
        return (*ptrs, *recipe.sizes, *consts)
    scratch = [np.uint64(a) for a in addresses[pointers:]]
    if role != "part":
        scratch.append(np.int64(recipe.parts))
    return (*ptrs, *scratch, *recipe.sizes, *consts)


def _zero(array: DeviceArray, device: str) -> None:
    from cuda.bindings import driver

    _check(driver.cuMemsetD8Async(array.ptr, 0, array.nbytes, _get(device).stream.handle),
           "cuMemsetD8Async")  # fmt: skip


def _scalar(value, dtype):
    return np.asarray(value, dtype=dtype)[()]


def _extent(expr: str, params: tuple) -> int:
    import re

    return math.prod(params[int(m)] for m in re.findall(r"P\[(\d+)\]", expr))


def _grid(items: int, per_block: int, sms: int, waves: int = 32) -> int:
    return max(1, min(-(-items // per_block), sms * waves))


_ACC_DTYPE = {
    "double": np.float64, "float": np.float32, "bool": np.bool_, "int8_t": np.int8,
    "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64, "uint8_t": np.uint8,
    "uint16_t": np.uint16, "uint32_t": np.uint32, "uint64_t": np.uint64,
}  # fmt: skip


def _on_host(step: Step, order: list, values: dict, pos: dict, device: str) -> None:
    """Run a kernel's nodes through NumPy on host copies of its inputs; copy the outputs back."""
    host = {}
    for p in step.inputs:
        if p not in host:
            host[p] = (
                to_host(Buffer(values[p], device))
                if isinstance(values[p], DeviceArray)
                else values[p]
            )
    local: dict = {}
    for p in step.nodes:
        n = order[p]
        srcs = [local[id(s)] if id(s) in local else host[pos[id(s)]] for s in n.srcs]
        local[id(n)] = _compute(n, srcs)
    for p in step.outputs:
        values[p] = to_device(np.asarray(local[id(order[p])]), device).arg.data


# --- matmul --------------------------------------------------------------------------------------


def _matmul_library():
    """cuBLAS through nvmath-python when it is installed, else None (matmul then runs on the
    host through NumPy)."""
    return cublas if cublas.available() else None


def _matmul(program: Program, i: int, order: list, values: dict, device: str) -> None:
    """``a @ b`` in cuBLAS on numloom's stream, reading the operands where they lie (a
    transposed view folds into the call) and writing a new C-contiguous array. The call's
    plan depends on the program only: made once, kept with the program's recipes."""
    step = program.steps[i]
    if i not in program.recipes:
        program.recipes[i] = _gemm_recipe(step, order)
    gemm, a_pos, b_pos = program.recipes[i]
    if gemm is None:  # integer or half products, or operands BLAS cannot read in place
        return _on_host(step, order, values, {id(n): p for p, n in enumerate(order)}, device)
    (out_pos,) = step.outputs
    root = order[out_pos]
    out = DeviceArray(root.shape, root.dtype, device)
    if root.size:
        if gemm.k == 0:
            _zero(out, device)
        else:
            cublas.gemm(gemm, root.dtype, values[b_pos].ptr, values[a_pos].ptr, out.ptr,
                        int(_get(device).stream.handle), device)  # fmt: skip
    values[out_pos] = out


def _gemm_recipe(step: Step, order: list) -> tuple:
    """(the cuBLAS call or None, positions of the memory under a and under b)."""
    root = order[step.outputs[0]]
    (a, a_pos), (b, b_pos) = (_operand(n, order, step) for n in root.srcs)
    gemm = cublas.plan_gemm(a, b, root.shape) if cublas.supports(root.dtype) else None
    return gemm, a_pos, b_pos


def _operand(n, order: list, step: Step):
    """A matmul operand as (cublas.Operand, the position of the array under it): a computed
    array, or a view of one (a transpose, a broadcast batch)."""
    from ..core.dag import contiguous_strides
    from .cublas import Operand

    pos = {id(order[p]): p for p in step.inputs}
    if id(n) in pos:
        return Operand(0, n.shape, contiguous_strides(n.shape)), pos[id(n)]
    if n.op is Op.VIEW and id(n.srcs[0]) in pos:
        v = n.arg
        return Operand(v.offset, v.shape, v.strides), pos[id(n.srcs[0])]
    raise NotImplementedError(f"matmul operand {n}")

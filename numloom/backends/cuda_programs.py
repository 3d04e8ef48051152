"""The CUDA backend's programs: the ``Target`` it gives the pipeline (CUDA C++ through NVRTC,
loaded with cuda.core) and the steps, segments (one CUDA graph each), dependencies and memory
reuse of a plan."""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..compile import pipeline
from ..compile.schedule import Plan
from ..core.dag import Op, toposort
from .cuda_device import _get, problem


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
    fenv: bool = False  # (a C kernel's IEEE flags: not on a GPU)


def declared_arguments(ir) -> tuple:
    """(how many sizes, which constants by offset) the rendered CUDA signature of kernel ``ir``
    declares: sizes and constants its code never reads are left out of it, so they must be
    left out of the launch's arguments too (the arguments after them would shift)."""
    found = _DECLARED.get(id(ir))
    if found is not None and found[0] is ir:  # (the same IR: a template's, at each new size)
        return found[1]
    from ..compile.render_cuda import kernel_constants, kernel_params

    declared = kernel_params(ir), tuple(off for off, _ in kernel_constants(ir))
    if len(_DECLARED) >= 1024:
        _DECLARED.clear()
    _DECLARED[id(ir)] = (ir, declared)
    return declared


_DECLARED: dict = {}  # id(ir) -> (ir, its declared arguments): the IR is kept, its id unique


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
    python: frozenset | None = None  # segments that launch kernels written in Python (same)
    reuse: dict = field(default_factory=dict)  # step -> per output, the block it takes over
    prepared: bool = False  # its first run worked out its launches and compiled their functions


@dataclass(frozen=True)
class Recipe:
    """How to launch one CUDA step, fixed for its program: everything but the pointers and the
    values of the constants."""

    launches: tuple  # (function, grid, scratch role: "" | "part" | "split" | "final" | "claim")
    sizes: tuple  # np.int64 size arguments
    consts: tuple  # (position, part, dtype) of each constant argument, in signature order
    outputs: tuple  # (position, shape, dtype) of each output
    aligned: tuple = ()  # launches to use instead when every buffer is 16-byte aligned
    parts: int = 0  # partial results per output of a reduction in two passes
    scratch: int = 0  # length of the partial-result arrays (outputs x parts), or of the claims
    acc: object = None  # the accumulator dtype of those arrays (None: a write's claims)
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
            ir = c.lowered.kernel if c.lowered else None
            kernels.append(replace(k, source=c.source))
            steps.append(Step(
                kernel=kernels[-1], functions=c.code or {}, ir=ir,
                declared=declared_arguments(ir) if ir else (0, ()),
                in_graph=k.kind == "kernel" and not k.outputs[0].arg[0].kernel.ir.checks,
                **pipeline.bindings(k, c, pos),
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


def whole_bitcast(nodes, inputs) -> bool:
    """Whether a kernel of ``nodes`` reading ``inputs`` is one bitcast of the whole of its one
    input: a copy of its bytes on the device (``cuda_launch.bitcast_on_device``)."""
    return (len(nodes) == 1 and nodes[0].op is Op.BITCAST and len(inputs) == 1
            and inputs[0].size * inputs[0].dtype.itemsize
            == nodes[0].size * nodes[0].dtype.itemsize)  # fmt: skip


def _explain_splits(kernels: list, steps: list) -> list:
    """Say, for each kernel that runs outside a CUDA graph, why the graph is split there."""
    out = []
    for k, step in zip(kernels, steps):
        if not _on_gpu(step):
            where = {"library": "in cuBLAS", "kernel": "as its own launch"}.get(
                k.kind, "on the host (no CUDA code for it)"
            )
            if whole_bitcast(k.nodes, k.inputs):
                where = "as a copy of its bytes on the device"  # (cuda_launch.bitcast_on_device)
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


def _load(source: str, symbol: str, device: str) -> Functions:
    """A kernel source's functions by role, made once per device (programs of the same code
    over other sizes launch the same functions, so their graphs are one); each compiles
    (through the cache) and loads when first needed."""
    state = _get(device)
    functions = state.functions.get(symbol)
    if functions is None:
        functions = state.functions.setdefault(symbol, Functions(source, symbol, state.arch))
    return functions


class Functions(Mapping):
    """The ``__global__`` functions of one rendered kernel by role (``KERNEL``,
    ``KERNEL_vec``, ``KERNEL32_thread``, ...), each its own NVRTC program: a kernel's variants
    (16-byte loads, 32-bit indices, a thread or a block per row) compile only for the sizes
    that launch them, and those a new program needs compile at once on threads, before its
    first run (``cuda_launch._prepare``; the target's ``precompile`` does nothing). NVRTC's
    time is per function, so a variant no launch takes costs nothing."""

    def __init__(self, source: str, symbol: str, arch: str):
        self.arch = arch
        self.sources = {name.replace(symbol, "KERNEL"): (part, name)
                        for name, part in split_functions(source)}  # fmt: skip
        self.loaded: dict = {}
        self.lock = threading.Lock()

    def __getitem__(self, role: str):
        kernel = self.loaded.get(role)
        if kernel is None:
            part, name = self.sources[role]  # (KeyError: no such function)
            with self.lock:
                kernel = self.loaded.get(role)
                if kernel is None:
                    kernel = self.loaded[role] = _load_function(part, name, self.arch)
        return kernel

    def __contains__(self, role) -> bool:
        return role in self.sources

    def __iter__(self):
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)

    def missing(self, roles) -> list:
        """``(source, function name)`` of the roles not yet loaded."""
        return [self.sources[r] for r in dict.fromkeys(roles)
                if r in self.sources and r not in self.loaded]  # fmt: skip


def split_functions(source: str) -> list:
    """``[(function name, source)]``: per ``__global__`` function of a rendered kernel, what
    precedes the first (the header, shared device functions) and that function's text."""
    starts = [m.start() for m in _GLOBAL.finditer(source)]
    if not starts:
        return []
    prelude = source[: starts[0]]
    ends = starts[1:] + [len(source)]
    return [(_GLOBAL.match(source, a)[1], prelude + source[a:b]) for a, b in zip(starts, ends)]


_GLOBAL = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\(')


def _load_function(source: str, name: str, arch: str):
    """Compile (through the cache) and load one function's program."""
    from cuda.core import ObjectCode

    from ..compile.compiler import compile_cuda, cuda_code_kind

    code = compile_cuda(source, arch, name_hint=name)
    if cuda_code_kind(code) == "cubin":
        module = ObjectCode.from_cubin(code)
    else:
        module = ObjectCode.from_ptx(code)
    return module.get_kernel(name)


@functools.cache
def _usable() -> bool:
    return problem() is None


def program_for(order: list, roots: list, device: str = "cuda:0") -> Program:
    return _program(order, roots, device)


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

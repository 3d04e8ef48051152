"""The CPU device: fused plans compiled to C with OpenMP, run through ctypes.

A plan is cached by the structure of the DAG it evaluates (ops, shapes, views; not buffer
contents or constant values), so a Python loop that builds the same structure again reuses it:
no scheduling, no lowering, no compiling. Kernels the code generator does not handle (scans,
gathers, joins, BLAS calls) run node by node through NumPy, as does everything when no C
compiler is installed (said once).
"""

from __future__ import annotations

import ctypes
import functools
import sys
import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from ..compile import pipeline
from ..compile.schedule import Plan
from ..core import config, fperrors
from ..core.array import _speedups
from ..core.dag import Op, buffer_of, strided, structure, toposort, warn_at_user
from ..core.realize import Buffer, PooledBuffer, count
from . import reference
from .cpu_memory import POOL

ASYNCHRONOUS = False  # a plan runs to its end before Python goes on


def problem() -> str | None:
    """Why this backend cannot run here (None: it always can, compiled or not)."""
    return None


def synchronize(device: str) -> None:
    """Host execution is synchronous: nothing to wait for."""


def data_pointer(data: np.ndarray) -> int:
    return data.ctypes.data


@dataclass
class Step:
    """One kernel of a cached plan, bound to positions in the DAG's topological order."""

    kernel: object  # schedule.Kernel, with its source when compiled
    fn: object  # the compiled C function, or None to run the nodes through NumPy
    nodes: tuple  # positions of the kernel's nodes (for NumPy execution)
    inputs: tuple
    outputs: tuple
    params: np.ndarray  # int64 sizes, strides, offsets
    consts: tuple  # (position, part) of each constant-block entry
    layout: tuple  # (offset, dtype) of each constant-block entry
    checks: tuple = ()  # (position of a node, k) that flags each error slot
    fp: bool = False  # the kernel checks for floating-point errors (fperrors.py)
    fp_outputs: bool = False  # a reduction whose float results must be finite (fperrors.py)
    fenv: bool = False  # the kernel ORs the IEEE flags it raised into its flag word
    frees: tuple = ()  # positions no later step reads: released after this one
    # a write through a box view that may run in place (``_in_place``): (index of its old
    # version among the inputs, position of the write, positions of the views reading the
    # old version)
    inplace: tuple | None = None
    # run through NumPy: the position of a write's old version that the write may overwrite
    # (``_overwritten``; False until looked at)
    overwrites: int | None | bool = False
    # the constant nodes of the last launch and their block: a loop that traces the same
    # program again reads the same interned constants
    memo: list = field(default_factory=lambda: [None, None], compare=False)

    @functools.cached_property
    def params_address(self) -> int:
        """Where ``params`` lies (NumPy's ``.ctypes`` costs microseconds a call)."""
        return self.params.ctypes.data

    @functools.cached_property
    def fn_address(self) -> int:
        """Where the compiled function lies (``_speedups.launch`` calls it there)."""
        return ctypes.cast(self.fn, ctypes.c_void_p).value




@dataclass
class Program:
    plan: Plan
    steps: tuple
    buffers: tuple | None = None  # positions of the DAG's BUFFER nodes (found on first use)
    # seconds its kernels ran through NumPy, waiting to compile (None: compiled; tier_up), and
    # how many kernels wait
    interpreted: float | None = None
    waiting: int = 0
    # a copy for new sizes of a program whose kernels compiled (``_Target.for_size``): they
    # load at once, so it compiles after ``REPLAN_MS`` through NumPy
    loaded: bool = False


PLAN_CACHE_SIZE = 1024  # programs kept (least recently used dropped first)
_warned_no_compiler = False
_ready: dict = {}  # (NUMLOOM_BACKEND, NUMLOOM_CC, CC, PATH) -> a working compiler was found
_NUMPY_BACKEND = ("numpy", b"numpy")  # (the variable's value as the environment holds it)


def _compiler_ready() -> bool:
    global _warned_no_compiler
    setting = (config.env_raw("NUMLOOM_BACKEND"), config.env_raw("NUMLOOM_CC"),
               config.env_raw("CC"), config.env_raw("PATH"))  # fmt: skip
    if setting[0] in _NUMPY_BACKEND:
        return False
    if _ready.get(setting):  # (every sync asks: a compiler found once for this environment)
        return True
    from ..compile.compiler import has_c_compiler

    if has_c_compiler():
        if len(_ready) >= 64:
            _ready.clear()
        _ready[setting] = True
        return True
    if not _warned_no_compiler:
        _warned_no_compiler = True
        warn_at_user("numloom found no C compiler (set NUMLOOM_CC or CC): CPU kernels run "
                     "through NumPy, node by node", RuntimeWarning)  # fmt: skip
    return False


class _Target(pipeline.Target):
    """The CPU's part of the pipeline: C with OpenMP, compiled by the system's C compiler and
    loaded with ctypes, launched by ``execute``."""

    plans = pipeline.PlanCache(lambda: PLAN_CACHE_SIZE)

    def variant(self) -> bool:
        return _compiler_ready()

    def special(self, k, device: str):
        if not _compiler_ready():  # every kernel runs through NumPy, node by node
            return pipeline.Compiled()
        if k.kind == "kernel":  # kernels written in Python compile per launch (cpu_kernels.py)
            from .cpu_kernels import source

            return pipeline.Compiled(source=source(k))
        return None

    def render(self, ir) -> tuple:
        from ..compile.render import render

        return pipeline.symbol_of(render(ir))

    def precompile(self, sources: dict, device: str) -> None:
        from ..compile.compiler import c_compiler, c_loaded, compile_all, compile_c

        c_compiler()  # (found once, before the threads)
        new = [(src, symbol) for symbol, src in sources.items() if not c_loaded(src)]
        if len(new) > 1:
            compile_all(lambda src, symbol: compile_c(src, name_hint=symbol, symbol=symbol), new)

    def load(self, source: str, symbol: str, device: str):
        from ..compile.compiler import compile_c

        library = compile_c(source, name_hint=symbol, symbol=symbol)
        fn = getattr(library, symbol)
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        return fn

    def interprets(self, order: list, kernels: int) -> bool:
        # (a compiled gufunc through NumPy is NumPy's Python loop: it compiles at once)
        return (config.COMPILE_AFTER_MS > 0 and _compiler_ready() and _small(order, kernels)
                and not any(n.op is Op.GUFUNC for n in order))  # fmt: skip

    def available(self, source: str) -> bool:
        from ..compile.compiler import c_available

        return c_available(source)

    def tier_up(self, program, order: list) -> bool:
        after = REPLAN_MS if program.loaded else config.COMPILE_AFTER_MS * program.waiting
        return program.interpreted * 1e3 >= after or not _small(order, program.waiting)

    def any_size(self, program) -> bool:
        # (a kernel written in Python compiles per launch; every other step can run through
        # NumPy from the DAG's own nodes, which carry the sizes)
        return all(s.kernel.kind != "kernel" for s in program.steps)

    def for_size(self, program, order: list):
        if config.COMPILE_AFTER_MS <= 0 and _compiler_ready():
            return None  # (compiled at once: each size is planned)
        compiled = sum(s.fn is not None for s in program.steps)
        if not _small(order, 1, REUSE_ELEMENTS if compiled else
                      INTERPRET_ELEMENTS * max(program.waiting, 1)):  # fmt: skip
            return None  # (planned for its sizes, its kernels compiled or loaded)
        steps = tuple(_through_numpy(s) for s in program.steps)
        if compiled:  # (planned for these sizes too, its kernels loaded, once they repeat)
            return replace(program, steps=steps, interpreted=0.0, waiting=compiled, loaded=True)
        return replace(program, steps=steps, interpreted=None if program.interpreted is None
                       else 0.0)  # fmt: skip

    def program(self, plan: Plan, compiled: list, order: list, roots: list, device: str):
        pos = {id(n): i for i, n in enumerate(order)}
        steps, kernels = [], []
        for k, c in zip(plan.kernels, compiled):
            kernels.append(replace(k, source=c.source))
            fields = pipeline.bindings(k, c, pos)
            fields["params"] = np.array(fields["params"], dtype=np.int64)
            steps.append(Step(kernel=kernels[-1], fn=c.code, **fields))
            if c.lowered is not None and c.lowered.kernel.inplace is not None:
                steps[-1].inplace = _in_place_readers(k, pos)
        if any(s.fn is None or s.kernel.kind == "kernel" for s in steps):
            # (a step NumPy runs, or a kernel written in Python, may leave an array that is a
            # view of another's memory: only compiled kernels' fresh outputs are overwritten)
            for s in steps:
                s.inplace = None
        _add_frees(steps, {pos[id(r)] for r in roots})
        return Program(replace(plan, kernels=tuple(kernels)), tuple(steps))


def _through_numpy(step: Step) -> Step:
    """A copy of ``step`` run through NumPy (``dataclasses.replace`` costs 8 us a step)."""
    copy = Step.__new__(Step)
    copy.__dict__.update(step.__dict__)
    copy.fn, copy.inplace, copy.overwrites, copy.memo = None, None, False, [None, None]
    return copy


TARGET = _Target()
# The elements a plan's nodes may make together, per kernel it would compile, for it to run
# through NumPy first: NumPy makes 8M elements in 10-40 ms, about what a kernel takes to compile
INTERPRET_ELEMENTS = 1 << 23


REPLAN_MS = 1.0  # (about what planning a size again costs, three times over)
# The elements a plan's nodes may make together for a new size of a structure whose kernels
# compiled to run through NumPy (``_Target.for_size``) rather than be planned again (~0.3 ms)
REUSE_ELEMENTS = 1 << 16


def _small(order: list, kernels: int, bound: int | None = None) -> bool:
    """Whether the nodes of the DAG ``order`` make few elements together for ``kernels``
    kernels to compile (its data need not be small: a slice of a large array reads a few of
    its elements), or at most ``bound`` elements where it is given."""
    total, bound = 0, INTERPRET_ELEMENTS * kernels if bound is None else bound
    for n in order:
        if n.op is not Op.BUFFER:
            size = 1
            for d in n.shape:
                size *= d
            total += size
            if total > bound:
                return False
    return True


def _overwritten(step: Step, order: list, values: dict) -> int | None:
    """For a kernel run through NumPy that writes through a view (a loop's ``X[i] = row``),
    the position of the old version it may write into instead of copying it whole (a copy
    per write made a loop of row writes quadratic): an intermediate of this plan that an
    earlier write made (so NumPy's memory of numloom's own, C-contiguous), that no later step
    reads and that nothing in this kernel reads but the write. None otherwise."""
    found = step.overwrites
    if found is False:
        found = step.overwrites = _overwrite_candidate(step, order)
    if found is None:
        return None
    old = values.get(found)
    if type(old) is not np.ndarray or not old.flags.c_contiguous:
        return None
    memory = old if old.base is None else old.base  # (a write's value: its flat copy, reshaped)
    if (memory.base is not None or memory.size != old.size or not memory.flags.writeable
            or not memory.flags.c_contiguous):  # fmt: skip
        return None
    return found


def _overwrite_candidate(step: Step, order: list) -> int | None:
    root = order[step.outputs[0]] if len(step.outputs) == 1 else None
    if root is None or root.op is not Op.SCATTER or root.call is not None:
        return None
    old = root.srcs[0]
    if old.op is not Op.SCATTER or root.srcs[1] is old:
        return None
    p = next((q for q in step.inputs if order[q] is old), None)
    if p is None or p not in step.frees:
        return None
    for q in step.nodes:
        n = order[q]
        if n is not root and any(s is old for s in n.srcs):
            return None
    return p


def _in_place_readers(k, pos: dict) -> tuple | None:
    """``Step.inplace`` of plan kernel ``k``, a write through a view (``SCATTER``) whose old
    version is one of its inputs: None where the kernel reads that old version otherwise than
    through views (which ``_in_place`` checks are clear of the written elements)."""
    (root,) = k.outputs
    old = root.srcs[0]
    views = []
    for n in k.nodes:
        if n is root:
            if root.srcs[1] is old:
                return None
        elif any(s is old for s in n.srcs):
            if n.op is not Op.VIEW:
                return None
            views.append(pos[id(n)])
    held = next(j for j, n in enumerate(k.inputs) if n is old)
    return held, pos[id(root)], tuple(views)


def _in_place(step: Step, order: list, blocks: dict) -> int | None:
    """The position of the old version a write through a view may overwrite: an
    intermediate of this plan (memory of the plan's pool) that no later step reads, whose
    elements the new values read are none of those written. NumPy computes the new values
    first, so reading a written element (a shifted stencil) needs the copy."""
    held, at, views = step.inplace
    p = step.inputs[held]
    if p not in blocks or p not in step.frees:
        return None
    written = order[at].arg
    key = (written, order[p].shape, tuple(order[q].arg for q in views))
    clear = _CLEAR.get(key)
    if clear is None:
        from ..compile.lower import _box

        shape = order[p].shape
        box = _box(written, shape)
        read = [_box(order[q].arg, shape) for q in views]
        clear = box is not None and all(r is not None and _apart(box, r) for r in read)
        if len(_CLEAR) >= 1024:
            _CLEAR.clear()
        _CLEAR[key] = clear
    return p if clear else None


_CLEAR: dict = {}  # (written view, shape, read views) -> whether no read element is written


def _apart(a: tuple, b: tuple) -> bool:
    """Whether boxes ``a`` and ``b`` (per axis: start, step, count) share no element: on some
    axis their ranges do not meet, or they step alike through other residues."""
    for (s1, st1, c1), (s2, st2, c2) in zip(a, b):
        if s1 + (c1 - 1) * st1 < s2 or s2 + (c2 - 1) * st2 < s1:
            return True
        if st1 == st2 and c1 > 1 and c2 > 1 and (s1 - s2) % st1:
            return True
    return False


def _add_frees(steps: list, keep: set) -> None:
    """Release each intermediate after the last step that reads it."""
    last: dict = {}
    for i, s in enumerate(steps):
        for p in s.inputs + s.outputs:
            last[p] = i
    freed: dict = {}
    for p, j in last.items():
        if p not in keep:
            freed.setdefault(j, []).append(p)
    for i, s in enumerate(steps):
        s.frees = tuple(freed.get(i, ()))


def plan(roots: list) -> Plan:
    """The plan (with kernel sources and nodes) that evaluating ``roots`` runs."""
    order = toposort(roots)
    program_for(order, roots)  # (compiled and cached as an evaluation would)
    return pipeline.build(order, roots, "cpu", TARGET).plan  # (kernels: from the compile cache)


def program_for(order: list, roots: list, device: str = "cpu", signature=None,
                interpret: bool = False) -> Program:  # fmt: skip
    """The compiled program evaluating ``roots`` (cached by the DAG's structure, without the
    DAG's nodes: ``schedule.skeleton``). ``interpret``: a new plan of few elements runs
    through NumPy, node by node, until its runs have taken ``NUMLOOM_COMPILE_AFTER_MS`` for
    each kernel it would compile, then compiles (a Python loop whose plans change each step
    compiles none of them; a loop that runs one plan again and again compiles it)."""
    return pipeline.program(order, roots, "cpu", TARGET, signature, interpret)


def run(roots: list, device: str = "cpu") -> dict:
    """Evaluate ``roots``; returns ``{id(root): BUFFER node}``."""
    order, pos, signature = structure(roots)
    program = program_for(order, roots, signature=signature, interpret=True)
    if program.interpreted is None:
        return execute(program, order, roots, device, pos=pos, at=signature[1])
    start = time.perf_counter()
    try:
        return execute(program, order, roots, device, pos=pos, at=signature[1])
    finally:
        program.interpreted += time.perf_counter() - start


def execute(program: Program, order: list, roots: list, device: str, leaves=None,
            pos=None, at=None) -> dict:  # fmt: skip
    """Run ``program`` over the DAG ``order``; ``leaves`` replaces the data of some BUFFER
    positions (``numloom.jit`` replays a traced DAG on new inputs this way). ``pos`` is
    ``{id(node): position}`` and ``at`` the roots' positions, when the caller has them."""
    if at is None:
        pos = pos if pos is not None else positions(order)
        at = [pos[id(r)] for r in roots]
    buffers = program.buffers
    if buffers is None:
        buffers = program.buffers = tuple(i for i, n in enumerate(order) if n.op is Op.BUFFER)
    values = {i: order[i].arg.data for i in buffers}
    values.update(leaves or {})
    blocks: dict = {}  # position -> pool block, for outputs of compiled kernels
    for step in program.steps:
        start = time.perf_counter() if config.DEBUG >= 1 else 0.0
        if step.fn is not None and step.kernel.kind != "kernel":
            _launch(step, order, values, blocks)  # compiled C: NumPy's error state plays no part
        else:
            with np.errstate(all="ignore"):
                pos = pos if pos is not None else positions(order)
                if step.kernel.kind == "kernel":  # a kernel written in Python (numloom.cuda)
                    from . import cpu_kernels

                    cpu_kernels.run(step, order, values, blocks, pos)
                else:
                    count("kernels_through_numpy")
                    pooled = any(p in blocks for p in step.inputs)
                    _interpret(step, order, values, pos, pooled,
                               None if pooled else _overwritten(step, order, values))  # fmt: skip
        if config.DEBUG >= 1:
            how = (
                "through NumPy" if step.fn is None and step.kernel.kind != "kernel" else "compiled"
            )
            took = (time.perf_counter() - start) * 1e3
            print(f"numloom: {step.kernel.name} [{step.kernel.kind}] {how} {took:.3f} ms",
                  file=sys.stderr)  # fmt: skip
        for p in step.frees:
            values.pop(p, None)
            if p in blocks:
                POOL.give(blocks.pop(p))
    count("kernels_launched", len(program.steps))
    return {id(r): r if r.op is Op.BUFFER else _result(r, values[p], blocks.get(p), device)
            for r, p in zip(roots, at)}  # fmt: skip


def _result(root, data, block, device: str):
    """A BUFFER node owning ``data``: pooled memory goes back to the pool when it dies; an
    array that may alias another buffer (a NumPy view) is copied first."""
    if block is not None:
        buffer = PooledBuffer(data, device, release=partial(POOL.give, block))
    else:
        buffer = Buffer(data if data.base is None else data.copy(), device)
    return buffer_of(buffer, root.shape, root.dtype)


def _launch(step: Step, order: list, values: dict, blocks: dict) -> None:
    arrays = [np.ascontiguousarray(values[p]) for p in step.inputs]
    outs = []
    held = _in_place(step, order, blocks) if step.inplace is not None else None
    if held is not None:  # the write goes into its old version's memory (the kernel skips
        # its copy): that memory is the new version's now
        (p,) = step.outputs
        outs.append(values[held])
        blocks[p] = blocks.pop(held)
        count("writes_in_place")
    else:
        for p in step.outputs:
            out, blocks[p] = POOL.array(order[p].shape, order[p].dtype)
            outs.append(out)
    errors = [np.zeros(2 * len(step.checks), np.int64)] if step.checks else []
    flags = [np.zeros(1, np.int64)] if step.fp or step.fenv else []
    if _LAUNCH is not None:  # (the same call, in C)
        _LAUNCH(step.fn_address, arrays + outs + errors + flags, step.params_address,
                _constants(step, order))  # fmt: skip
    else:
        pointers = (ctypes.c_void_p * (len(arrays) + len(outs) + len(errors) + len(flags)))(
            *[a.ctypes.data for a in arrays + outs + errors + flags]
        )
        step.fn(pointers, step.params_address, _constants(step, order))
    if errors and errors[0].any():
        with np.errstate(all="ignore"):
            raise_data_error(step, partial(_interpret, step, order, values, positions(order)))
    bits = int(flags[0][0]) if flags else 0  # NumPy's categories raised (fperrors.BITS)
    if bits and fperrors.may_report((order[p] for p in step.nodes), bits):
        # A value NumPy's error flags concern (not finite): NumPy's loops, run again under
        # each operation's error state, say what they would have said (nothing, for inputs
        # that were not finite already).
        count("fp_reruns")
        _interpret(step, order, values, positions(order))
        return
    for p, a in zip(step.outputs, outs):
        values[p] = a


_LAUNCH = None if _speedups is None else _speedups.launch


def raise_data_error(step: Step, rerun) -> None:
    """A kernel flagged bad data: raise the error NumPy raises for it. ``rerun`` runs the
    kernel's nodes again through NumPy's rules on the same inputs, which raise the error NumPy
    names (the first index out of bounds, in C order, of the first index array that has one)."""
    rerun()
    raise RuntimeError(f"numloom: kernel {step.kernel.name} flagged bad data that NumPy's rules "
                       f"do not find (a numloom bug: please report it)")  # fmt: skip


def positions(order: list) -> dict:
    """``{id(node): position}`` in the DAG's topological order."""
    return {id(n): i for i, n in enumerate(order)}


def _constants(step: Step, order: list) -> bytes:
    """The constant block: each constant's bytes at its offset (8-byte aligned block)."""
    nodes = tuple([order[p] for p, _ in step.consts])
    memo = step.memo
    if memo[0] == nodes:  # (Nodes compare by identity)
        return memo[1]
    from ..compile.lower import const_value

    size = max((off + dt.itemsize for off, dt in step.layout), default=8)
    block = bytearray(-(-size // 8) * 8)
    for (p, part), (off, dt) in zip(step.consts, step.layout):
        value = const_value(order[p], part)
        same = isinstance(value, np.generic) and value.dtype == dt
        raw = value.tobytes() if same else np.asarray(value, dtype=dt).tobytes()
        block[off : off + dt.itemsize] = raw
    memo[0], memo[1] = nodes, bytes(block)
    return memo[1]


def _interpret(step: Step, order: list, values: dict, pos: dict, pooled: bool = False,
               overwrite: int | None = None) -> None:  # fmt: skip
    """Run a kernel's nodes one by one through NumPy (the reference executor's rules).

    ``pooled``: some inputs are pool blocks, which go back to the pool after their last
    reader; an output that is a NumPy view of one (a VIEW, a BITCAST) is copied to outlive it.
    ``overwrite``: the position of a write's old version to write into (``_overwritten``).
    The operations that can set floating-point error flags run under their call's error state,
    warning or raising as NumPy would there.
    """
    local: dict = {}

    def value_of(m):
        return local[id(m)] if id(m) in local else values.get(pos.get(id(m)))

    with np.errstate(all="ignore"):  # (what numloom made itself raises nothing: fperrors)
        for p in step.nodes:
            n = order[p]
            srcs = [local[id(s)] if id(s) in local else values[pos[id(s)]] for s in n.srcs]
            if overwrite is not None and n.op is Op.SCATTER and pos[id(n.srcs[0])] == overwrite:
                old = values[overwrite]
                strided(old.reshape(-1), n.arg)[...] = srcs[1]
                local[id(n)] = old.reshape(n.shape)
                count("writes_in_place")
                continue
            if n.call is None:
                local[id(n)] = reference.compute(n, srcs)
            else:
                local[id(n)] = fperrors.compute(n, srcs, reference.compute, value_of)
    for p in step.outputs:
        out = local[id(order[p])]
        values[p] = out.copy() if pooled and getattr(out, "base", None) is not None else out

"""The CUDA backend's launches: a program run over a DAG's buffers, each segment of kernels as
one CUDA graph on the device's stream (``cuda_graph.py``), the launch arguments and grids
(``Recipe``), floating-point error flags, matmul in cuBLAS and the steps that run on the host."""

from __future__ import annotations

import atexit
import ctypes
import math
import sys
import time
from dataclasses import replace
from functools import partial

import numpy as np

from ..compile.compiler import compile_all, compile_cuda
from ..compile.lower import const_value
from ..compile.render_cuda import NARROW, TILE_X, has_narrow
from ..core import config, fperrors
from ..core.dag import Op, buffer_of, structure
from ..core.device import CudaError
from ..core.ranges import phase
from ..core.realize import LOCK, STARTING, Buffer, count
from . import cublas, cuda_memory, reference
from .cpu import positions
from .cuda_device import SHORT_REDUCTION, THREADS, _check, _Device, _get, fixed_functions
from .cuda_graph import Launch, run_eagerly, run_segment
from .cuda_memory import DeviceArray, _zero, to_device, to_host
from .cuda_programs import (
    Functions,
    Program,
    Recipe,
    Step,
    _on_gpu,
    _program,
    _tokens,
    whole_bitcast,
)


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
    if not program.prepared:
        _prepare(program, order, values, device)
    flags = _FlagReads(program, order, device)
    try:
        _run_segments(program, order, values, roots, device, pos, flags)
    except BaseException:
        flags.read()  # (the earlier segments' warnings come first, as NumPy's would)
        raise
    flags.finish()
    count("kernels_launched", len(program.steps))
    results = {}
    for r, p in zip(roots, program.roots):
        if r.op is Op.BUFFER:
            results[id(r)] = r
        else:
            results[id(r)] = buffer_of(Buffer(values[p], device), r.shape, r.dtype)
    return results


def _run_segments(program: Program, order: list, values: dict, roots: list, device: str,
                  pos: dict | None, flags: _FlagReads) -> None:  # fmt: skip
    """Launch each segment in turn: a graph of kernels, a cuBLAS call or a step on the host."""
    python = program.python
    if python is None:  # segments with kernels written in Python in their graph
        python = program.python = frozenset(
            k for k, segment in enumerate(program.segments)
            if any(program.steps[i].in_graph for i in segment))  # fmt: skip
    for index, segment in enumerate(program.segments):
        start = time.perf_counter() if config.DEBUG >= 1 else 0.0
        first = program.steps[segment[0]]
        if index in python:  # (a kernel written in Python may write in place into arrays an
            flags.read()  # earlier segment's check would read again)
        if _on_gpu(first):
            with phase("numloom: launch"):
                _run_kernels(program, segment, order, values, device, pos, flags)
        elif first.kernel.kind == "library" and _matmul_library() is not None:
            _matmul(program, segment[0], order, values, device, flags)
        else:
            flags.read()  # (NumPy's own warnings of a host step come after the earlier ones)
            pos = pos if pos is not None else positions(order)
            if first.kernel.kind == "kernel":  # a bounds-checked kernel written in Python
                from . import cuda_kernels

                cuda_kernels.run(first, order, values, pos, device, program, roots)
            elif not bitcast_on_device(first, order, values, device):
                _on_host(first, order, values, pos, device)
        for p in program.frees[index]:  # freed in stream order, after the segment
            values.pop(p, None)
        if config.DEBUG >= 1:
            _debug_segment(program, segment, device, start)


def _prepare(program: Program, order: list, values: dict, device: str) -> None:
    """At a program's first run: work out each GPU step's launches for its sizes (its
    ``Recipe``) and compile the functions they take that no earlier program loaded, at once
    on threads (NVRTC needs no context and releases the GIL); they load when launched. A map
    takes its 16-byte-load variant where its input buffers are aligned (what the program
    computes comes from the pool, aligned), as the launch will find them; a later launch that
    takes the other variant compiles it then."""
    program.prepared = True
    state = _get(device)
    if any(step.kernel.kind == "library" for step in program.steps) and _matmul_library():
        cublas.start(device, partial(_get, device))  # (while the kernels compile)
    needed = []
    for i, step in enumerate(program.steps):
        functions = step.functions
        if not isinstance(functions, Functions) or not _on_gpu(step) or step.in_graph:
            continue
        recipe = program.recipes.get(i)
        if recipe is None:
            recipe = program.recipes[i] = _recipe(step, order, state.sms)
        aligned = recipe.aligned and all(getattr(values.get(p), "ptr", 0) % 16 == 0
                                         for p in step.inputs)  # fmt: skip
        roles = [name for name, _, _ in (recipe.aligned if aligned else recipe.launches)]
        if recipe.narrow:
            roles = [_narrow_name(role, NARROW) for role in roles]
        needed += functions.missing(roles)
    needed = list(dict.fromkeys(needed))
    if len(needed) > 1:
        compile_all(lambda src, name: compile_cuda(src, state.arch, name_hint=name), needed)


def _debug_segment(program: Program, segment: tuple, device: str, start: float) -> None:
    _get(device).stream.sync()
    took = (time.perf_counter() - start) * 1e3
    names = ", ".join(program.steps[i].kernel.name for i in segment)
    how = "as a CUDA graph" if _on_gpu(program.steps[segment[0]]) else "on the host or in cuBLAS"
    print(f"numloom: {names} {how} {took:.3f} ms", file=sys.stderr)


def _run_kernels(program: Program, segment: tuple, order: list, values: dict,
                 device: str, pos: dict | None, flags: _FlagReads) -> None:  # fmt: skip
    """Allocate the segment's outputs and launch its kernels (one graph, or one by one)."""
    state = _get(device)
    launches, last, checks, held = [], {}, [], []  # last: step -> its last launch's index
    reporting = False  # a kernel's floating-point flag is read after the segment
    rerun = False  # the segment runs again on the host: its state looks at underflow
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
        if step.fp or step.fp_outputs:  # (fperrors.py)
            bits = fperrors.reported_at(order, step.nodes)
            reports = bool(bits & fperrors.NOT_FINITE)
            reporting = reporting or reports
            # a GPU cannot see an underflow: where the state warns or raises on one, NumPy
            # runs the segment again on the host (rare: NumPy ignores underflow by default)
            rerun = rerun or bool(bits & UNDER)
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
    if reporting or rerun:
        flags.add(segment, rerun, values)


UNDER = fperrors.BITS["under"]


class _FlagReads:
    """The segments of one evaluation whose kernels write the floating-point flag word, read
    once for all of them: at the end of the evaluation, before a segment that runs on the host
    or launches a kernel written in Python, or when the inputs held for them grow past
    ``hold_bytes``. Each such segment keeps its inputs (``values`` drops them as the program
    frees them) so that, where a kernel found a value that is not finite (or a segment's state
    looks at underflow, which a GPU cannot see), the segment runs again on the host from them
    and NumPy reports what it would, segment by segment in order. No later GPU segment writes
    into them: a graph's steps write new memory or take over intermediates of their own
    segment, and memory held here goes back to the pool only after the read.

    One wait for the evaluation replaces one per segment: a plan split by cuBLAS calls (a
    matmul between two kernels, whose result is checked for overflow) no longer waits for the
    device between its parts. An evaluation that writes start before a sync (a stencil's
    sweeps, ``realize.written``), whose calls' error states at most warn, does not wait at
    all (``finish``): its reads join the device's ``deferred`` ones, read at the
    device's next wait (an evaluation's read, a sync, a copy to or from the host, an export),
    so the device computes while Python traces on; the warnings come out then, at the users'
    lines, as they would at that sync."""

    __slots__ = ("program", "order", "device", "pending", "held")

    def __init__(self, program: Program | None, order: list | None, device: str):
        self.program, self.order, self.device = program, order, device
        self.pending: list = []  # (segment, rerun, {position: value of an input})
        self.held = 0

    def add(self, segment: tuple, rerun: bool, values: dict) -> None:
        steps = self.program.steps
        kept = {p: values[p] for i in segment
                for p in (steps[i].inputs + steps[i].outputs if steps[i].in_graph
                          else steps[i].inputs)}  # (a Python kernel's outputs: as it ran)
        self.pending.append((segment, rerun, kept))
        self.held += sum(getattr(v, "held", 0) for v in kept.values())
        if self.held > hold_bytes(self.device):
            self.read()

    def finish(self) -> None:
        """The evaluation's end: read now, or leave the read to the device's next wait."""
        if self.pending and STARTING[0] and self._may_wait():
            state = _get(self.device)
            if not _AT_EXIT:  # (a program that ends without a sync still gets its warnings)
                _AT_EXIT.append(atexit.register(_read_all_deferred))
            state.deferred.append((self.program, self.order, self.pending))
            state.deferred_bytes += self.held
            self.pending, self.held = [], 0
            if state.deferred_bytes <= hold_bytes(self.device):
                return
        self.read()

    def _may_wait(self) -> bool:
        if any(rerun for _, rerun, _ in self.pending):
            return False
        steps = self.program.steps
        nodes = tuple(p for segment, _, _ in self.pending for i in segment for p in steps[i].nodes)
        return fperrors.warning_states_at(self.order, nodes)

    def read(self) -> None:
        """Wait for the pending segments' kernels (and the device's deferred ones) and read
        the flag word they write; where one found a value that is not finite (or one's state
        looks at underflow), report what NumPy would, oldest first."""
        state = _get(self.device)
        if not self.pending and not state.deferred:
            return
        groups = state.deferred
        if self.pending:
            groups.append((self.program, self.order, self.pending))
        state.deferred, state.deferred_bytes = [], 0
        self.pending, self.held = [], 0
        state.stream.sync()
        word = ctypes.c_int64.from_address(_fp_words(state)[0][0])
        if word.value or any(rerun for _, _, pending in groups for _, rerun, _ in pending):
            word.value = 0
            count("fp_reruns")
            for program, order, pending in groups:
                for segment, _, kept in pending:
                    _report_fp(program, segment, order, kept, self.device)


HOLD_BYTES = None  # the inputs held for flag reads not yet made (None: hold_bytes' default)
_hold_bytes: dict = {}  # device -> its default


def hold_bytes(device: str) -> int:
    """``HOLD_BYTES``, or a sixteenth of the device's memory and at least 1 GiB: the inputs
    that evaluations not yet read may hold. Dask's chunks of Black-Scholes over 1e8 elements
    hold 2.4 GB each (their drawn inputs); holding 1 GiB, each chunk's evaluation waited for
    the device, and the GPU idled while Python traced the next chunk (16 ms a chunk on an
    H200 against 5 ms in one process)."""
    if HOLD_BYTES is not None:
        return HOLD_BYTES
    known = _hold_bytes.get(device)
    if known is None:
        total = cuda_memory.device_memory(device) or 0
        known = _hold_bytes[device] = max(1 << 30, total // 16)
    return known


_AT_EXIT: list = []


def _read_all_deferred() -> None:
    from .cuda_device import _devices

    for device in list(_devices):
        try:
            read_deferred(device)
        except Exception:  # noqa: BLE001 (at exit, CUDA may be gone already)
            pass


def read_deferred(device: str) -> None:
    """Read the flag word of the device's evaluations that left it for later (the device's
    next wait: a sync, a copy to or from the host, an export)."""
    from .cuda_device import _devices

    state = _devices.get(device)
    if state is not None and state.deferred:
        with LOCK:
            _FlagReads(None, None, device).read()


def _read_deferred_of(state: _Device) -> None:
    """``read_deferred`` for the device of ``state`` (memory ran out: the inputs the reads
    keep go back to the pool)."""
    from .cuda_device import _devices

    for device, s in list(_devices.items()):
        if s is state:
            read_deferred(device)


cuda_memory.RELEASE_DEFERRED[0] = _read_deferred_of


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

    def value_of(m):  # (a where= mask: None where the segment has no value of it)
        return value(m) if id(m) in local or values.get(pos.get(id(m))) is not None else None

    for i in segment:
        step = program.steps[i]
        for p in step.nodes:
            n = order[p]
            if n.op is Op.KERNEL:  # a kernel written in Python: its output as it ran
                local[id(n)] = value(n)
                continue
            local[id(n)] = fperrors.compute(n, [value(s) for s in n.srcs], reference.compute,
                                            value_of)  # fmt: skip


def _recipe(step: Step, order: list, sms: int) -> Recipe:
    """The fixed part of a step's launches on a device of ``sms`` multiprocessors: functions,
    grids, sizes, constants, outputs; in 32-bit indices where every index fits."""
    recipe = _wide_recipe(step, order, sms)
    if config.INDEX32 and _fits_32_bits(step, order, recipe, sms):
        recipe = replace(recipe, narrow=True, sizes=tuple(np.int32(v) for v in recipe.sizes))
    return replace(recipe, token=next(_tokens))


def _fits_32_bits(step: Step, order: list, recipe: Recipe, sms: int) -> bool:
    """Whether the step's kernels have 32-bit variants and every index they compute fits in
    one: an index is a sum of at most (dimensions + 2) terms (coordinate times stride,
    offsets), each under the largest of the sizes, strides, offsets, buffer lengths and loop
    counts; a grid-stride loop runs up to one stride (every thread of the grid, at most
    ``reach``) past its count."""
    reach = max(1 << 22, sms * TILE_WAVES * THREADS * TILE_X)
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
    return (largest + reach) * (ndim + 2) < 1 << 31


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
    if ir.kind == "map" and "KERNEL_vec" in step.functions and outer >= VEC_MIN:
        return Recipe(  # 16-byte loads where aligned
            (("KERNEL", _grid(outer, THREADS, sms), ""),),
            **fixed,
            aligned=(("KERNEL_vec", _grid(-(-outer // 4), THREADS, sms), ""),),
        )
    if ir.kind == "map":
        return Recipe((("KERNEL", _tile(ir.outer, step.params, sms), ""),), **fixed)
    if ir.kind == "scan":
        return Recipe((("KERNEL", _grid(outer, THREADS, sms), ""),), **fixed)
    if ir.kind == "row":
        if ir.outer and inner <= SHORT_REDUCTION:
            return Recipe((("KERNEL_thread", _grid(outer, THREADS, sms), ""),), **fixed)
        return Recipe((("KERNEL", _grid(outer, 1, sms), ""),), **fixed)
    if ir.kind == "scatter" and ir.view_coords:  # one pass: old values or new ones
        return Recipe((("KERNEL_fused", _tile(ir.outer, step.params, sms), ""),), **fixed)
    if ir.kind == "scatter" and ir.last_wins:  # positions may repeat: a claim per element
        return Recipe((("KERNEL_copy", _grid(outer, THREADS, sms), "claim"),
                       ("KERNEL_claim", _grid(inner, THREADS, sms), "claim"),
                       ("KERNEL_write", _grid(inner, THREADS, sms), "claim")), **fixed,
                      scratch=outer)  # fmt: skip
    if ir.kind == "scatter":
        return Recipe((("KERNEL_copy", _tile(ir.outer, step.params, sms), ""),
                       ("KERNEL_write", _tile(ir.inner, step.params, sms), "")), **fixed)  # fmt: skip
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
        if recipe.acc is None:  # a write's claims (render_cuda._scatter_last_wins)
            arrays = [DeviceArray(n, np.int64, device)]
        else:
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
    for function, grid, block, role, name in templates:
        make = partial(_arguments, addresses, pointers, recipe, consts, role)
        launches.append(Launch(function, grid, block, None, deps, name, key=key, make=make))
        deps = (len(launches) - 1,)
    return errors


def _templates(step: Step, recipe: Recipe, aligned: bool) -> tuple:
    """Per launch of a step: (function, grid, block, scratch role, name for errors); a
    recipe's grid is a count of blocks of ``THREADS``, or ``(grid, block)`` (``_tile``)."""
    out = []
    for name, grid, role in recipe.aligned if aligned else recipe.launches:
        if recipe.narrow:
            name = _narrow_name(name, NARROW)
        grid, block = grid if isinstance(grid, tuple) else (grid, THREADS)
        out.append((step.functions[name], grid, block, role, f"{step.kernel.name} ({name})"))
    return tuple(out)


def _arguments(addresses: list, pointers: int, recipe: Recipe, consts, role: str) -> tuple:
    """A launch's arguments: the buffers' pointers, the scratch arrays' (by role), the sizes and
    the constants."""
    ptrs = [np.uint64(a) for a in addresses[:pointers]]
    if role == "":
        return (*ptrs, *recipe.sizes, *consts)
    scratch = [np.uint64(a) for a in addresses[pointers:]]
    if role not in ("part", "claim"):
        scratch.append(np.int64(recipe.parts))
    return (*ptrs, *scratch, *recipe.sizes, *consts)


def _scalar(value, dtype):
    return np.asarray(value, dtype=dtype)[()]


def _extent(expr: str, params: tuple) -> int:
    import re

    return math.prod(params[int(m)] for m in re.findall(r"P\[(\d+)\]", expr))


def _tile(extents: tuple, params: tuple, sms: int):
    """The grid of a kernel that loops over every coordinate of ``extents`` (size
    expressions): a count of blocks of ``THREADS`` for one axis, else ``(grid, block)``, both
    3-D, for ``render_cuda._tiled``'s loops. A block spans the last axis along x (32 threads
    of ``TILE_X`` elements each, or fewer where the axis is shorter), the axis before along y
    and the others along z, each widened where the axes before it are short. The grid starts
    up to ``TILE_WAVES`` blocks of 256 threads per multiprocessor, fewer along z first, then
    y, then x (the loops stride over the rest): threads that take several rows or images
    compute their setup once for them, and enough blocks keep the memory busy."""
    sizes = [_extent(e, params) for e in extents]
    if len(sizes) < 2:
        return _grid(math.prod(sizes), THREADS, sms)
    across, rows, rest = -(-sizes[-1] // TILE_X), sizes[-2], math.prod(sizes[:-2])
    bx = min(32, _pow2(across))
    by = min(THREADS // bx, _pow2(rows))
    bz = min(64, THREADS // (bx * by), _pow2(rest))
    bx = min(THREADS // (by * bz), max(bx, _pow2(across)))
    want = [max(1, -(-n // b)) for n, b in zip((across, rows, rest), (bx, by, bz))]
    cap = sms * TILE_WAVES * THREADS // (bx * by * bz)
    gx, gy, gz = (min(w, most) for w, most in zip(want, GRID_LIMITS))
    gz = min(gz, max(1, cap // (gx * gy)))
    gy = min(gy, max(1, cap // (gx * gz)))
    gx = min(gx, max(1, cap // (gy * gz)))
    return (gx, gy, gz), (bx, by, bz)


# A flat map over fewer elements launches its one-element-a-thread function where aligned
# buffers would allow its 16-byte twin: as fast at that size (its time is the launch, not
# the loads), and half the compile for a first call (Black-Scholes' twin, four lanes of
# its body: 275 ms of NVRTC on an H200's host against 160 for the plain function).
VEC_MIN = 1 << 20

GRID_LIMITS = (2**31 - 1, 65535, 65535)  # blocks along x, y and z
TILE_WAVES = 64


def _pow2(n: int) -> int:
    """The least power of two at least ``n`` (1 for 0)."""
    return 1 << max(0, n - 1).bit_length()


def _grid(items: int, per_block: int, sms: int, waves: int = 32) -> int:
    return max(1, min(-(-items // per_block), sms * waves))


_ACC_DTYPE = {
    "double": np.float64, "float": np.float32, "bool": np.bool_, "int8_t": np.int8,
    "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64, "uint8_t": np.uint8,
    "uint16_t": np.uint16, "uint32_t": np.uint32, "uint64_t": np.uint64,
}  # fmt: skip


def bitcast_on_device(step: Step, order: list, values: dict, device: str) -> bool:
    """A step that is one bitcast of a whole array in device memory (``x.view(np.uint32) + 1``,
    a chunk received as bytes) as a copy of its bytes on the device, taken as the new
    elements; False for any other step (it runs through NumPy on the host: a bitcast ran there,
    its bytes copied to the host and back)."""
    if len(step.outputs) != 1 or not whole_bitcast([order[p] for p in step.nodes],
                                                   [order[p] for p in step.inputs]):  # fmt: skip
        return False
    n, source = order[step.nodes[0]], values.get(step.inputs[0])
    if not isinstance(source, DeviceArray) or source.nbytes != n.size * n.dtype.itemsize:
        return False
    values[step.outputs[0]] = cuda_memory.device_copy(source, device, n.shape, n.dtype)
    count("device_to_device_bytes", source.nbytes)
    return True


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

    def value_of(m):
        return local[id(m)] if id(m) in local else host.get(pos.get(id(m)))

    for p in step.nodes:
        n = order[p]
        srcs = [local[id(s)] if id(s) in local else host[pos[id(s)]] for s in n.srcs]
        local[id(n)] = fperrors.compute(n, srcs, reference.compute, value_of)
    for p in step.outputs:
        values[p] = to_device(np.asarray(local[id(order[p])]), device).arg.data


def _matmul_library():
    """cuBLAS through nvmath-python when it is installed, else None (matmul then runs on the
    host through NumPy)."""
    return cublas if cublas.available() else None


def _matmul(program: Program, i: int, order: list, values: dict, device: str,
            flags: _FlagReads) -> None:  # fmt: skip
    """``a @ b`` in cuBLAS on numloom's stream, reading the operands where they lie (a
    transposed view folds into the call) and writing a new C-contiguous array. The call's
    plan depends on the program only: made once, kept with the program's recipes."""
    step = program.steps[i]
    if i not in program.recipes:
        program.recipes[i] = _gemm_recipe(step, order)
    gemm, a_pos, b_pos = program.recipes[i]
    if gemm is None:  # integer or half products, or operands BLAS cannot read in place
        flags.read()
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
    bits = fperrors.reported([root]) if root.size else 0
    if bits & fperrors.NOT_FINITE:  # "overflow encountered in matmul"
        state = _get(device)
        if gemm.k:
            _check_finite(out, _fp_words(state)[0][1], device)
        flags.add((i,), bool(bits & UNDER), values)


_FINITE_SOURCE = r"""
typedef long long int64_t;
template <typename T> __device__ void nl_finite(const T *x, int64_t n, int64_t *w) {
    T s = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * (int64_t)blockDim.x) {
        s = fma(x[i], (T)0, s);
    }
    if (s != s) *w = 1;
}
extern "C" __global__ void nl_finite_f(const float *x, int64_t n, int64_t *w) { nl_finite(x, n, w); }
extern "C" __global__ void nl_finite_d(const double *x, int64_t n, int64_t *w) { nl_finite(x, n, w); }
"""


def _check_finite(out: DeviceArray, word: int, device: str) -> None:
    """Set the flag word at device address ``word`` if a float32 or float64 array holds an inf
    or a NaN (a matrix product's result: cuBLAS has no flags)."""
    from cuda.core import LaunchConfig, launch

    state = _get(device)
    functions = fixed_functions(device, "nl_finite", _FINITE_SOURCE, ("nl_finite_f", "nl_finite_d"))
    single = out.dtype in (np.float32, np.complex64)  # (a complex value: two floats)
    n = math.prod(out.shape) * (2 if out.dtype.kind == "c" else 1)
    grid = max(1, min(-(-n // THREADS), 4 * state.sms))
    launch(state.stream, LaunchConfig(grid=grid, block=THREADS),
           functions["nl_finite_f" if single else "nl_finite_d"], np.uint64(out.ptr), np.int64(n),
           np.uint64(word))  # fmt: skip


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

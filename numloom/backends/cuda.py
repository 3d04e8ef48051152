"""The CUDA device: fused plans as CUDA kernels (NVRTC, cached by architecture), launched in
order on one stream through cuda.core.

Memory comes from cuda.core's stream-ordered pool (no preallocation; a buffer goes back to the
pool when its last array dies). Kernels the CUDA code generator does not handle yet (scans,
gathers, joins) and matmul run on the host through NumPy, with the transfers counted in
``numloom.stats()``. Nothing here runs at ``import numloom``: CUDA is initialized on first use.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from .. import config
from ..dag import Op, node, toposort
from ..realize import Buffer, count
from ..schedule import Plan, schedule
from . import reference

THREADS = 256
SHORT_REDUCTION = 64  # a reduction this short gets a thread per output, not a block


class CudaError(RuntimeError):
    """A CUDA call failed; the message names the call and the kernel."""


class OutOfMemoryError(MemoryError):
    """The device has too little free memory for an allocation, even after numloom freed its
    cached blocks and retried."""


# --- the device -------------------------------------------------------------------------------


@dataclass
class _Device:
    device: object  # cuda.core.Device
    stream: object
    arch: str
    sms: int


_devices: dict = {}


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


def _get(device: str) -> _Device:
    state = _devices.get(device)
    if state is None:
        from cuda.core import Device

        index = int(device.split(":")[1]) if ":" in device else 0
        dev = Device(index)
        dev.set_current()
        major, minor = dev.compute_capability
        sms = dev.properties.multiprocessor_count
        state = _devices[device] = _Device(dev, dev.create_stream(), f"sm_{major}{minor}", sms)
    return state


def synchronize(device: str) -> None:
    if device in _devices:
        _devices[device].stream.sync()


class DeviceArray:
    """One C-contiguous array in device memory."""

    __slots__ = ("buffer", "ptr", "shape", "dtype", "device")

    def __init__(self, shape: tuple, dtype, device: str):
        state = _get(device)
        self.shape, self.dtype, self.device = tuple(shape), np.dtype(dtype), device
        nbytes = max(math.prod(self.shape) * self.dtype.itemsize, 1)
        self.buffer = _allocate(state, nbytes)
        self.ptr = int(self.buffer.handle)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _allocate(state: _Device, nbytes: int):
    import gc

    try:
        return state.device.allocate(nbytes, stream=state.stream)
    except Exception:  # noqa: BLE001 (out of memory: free what Python still holds, retry once)
        gc.collect()
        state.stream.sync()
        try:
            return state.device.allocate(nbytes, stream=state.stream)
        except Exception as e:
            free = _free_memory()
            raise OutOfMemoryError(f"out of device memory: asked for {nbytes} bytes, "
                                   f"{free} bytes free ({e})") from None  # fmt: skip


def _free_memory() -> int:
    from cuda.bindings import driver

    err, free, _ = driver.cuMemGetInfo()
    return int(free)


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
    checks: tuple = ()  # (position of a gather, index k) of each error slot


@dataclass
class Program:
    plan: Plan
    steps: tuple


_programs: dict = {}


def _signature(order: list, roots: list) -> tuple:
    from .cpu import _signature as structure

    return structure(order, roots)


def plan(roots: list, device: str = "cuda:0") -> Plan:
    order = toposort(roots)
    return _program(order, roots, device).plan


def _program(order: list, roots: list, device: str) -> Program:
    key = (device, _signature(order, roots))
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = _build(order, roots, device)
    else:
        count("plan_cache_hits")
    return program


def _build(order: list, roots: list, device: str) -> Program:
    plan = schedule(roots, device)
    pos = {id(n): i for i, n in enumerate(order)}
    steps, kernels = [], []
    for k in plan.kernels:
        functions, source, lowered = _compile(k, device)
        kernels.append(replace(k, source=source))
        steps.append(Step(
            kernel=kernels[-1], functions=functions, ir=lowered.kernel if lowered else None,
            nodes=tuple(pos[id(n)] for n in k.nodes),
            inputs=tuple(pos[id(n)] for n in k.inputs),
            outputs=tuple(pos[id(n)] for n in k.outputs),
            params=tuple(lowered.params) if lowered else (),
            consts=tuple((pos[id(n)], part) for n, part in lowered.consts) if lowered else (),
            layout=tuple(lowered.const_layout) if lowered else (),
            checks=tuple((pos[id(n)], j) for n, j in lowered.checks) if lowered else (),
        ))  # fmt: skip
    program = Program(replace(plan, kernels=tuple(kernels)), tuple(steps))
    if config.DEBUG >= 2:
        print(str(program.plan), file=sys.stderr)
    return program


def _compile(k, device: str):
    from cuda.core import ObjectCode

    from ..compiler import compile_cuda, cuda_code_kind
    from ..lower import Unsupported, lower
    from ..render_cuda import render_cuda

    if k.kind == "library":
        return {}, None, None
    if k.kind == "kernel":  # kernels written in Python compile per launch (cuda_kernels.py)
        return {}, k.outputs[0].arg[0].kernel.source("cuda")[1], None
    try:
        lowered = lower(k)
    except Unsupported as why:
        if config.DEBUG >= 2:
            print(f"numloom: {k.name} runs on the host: {why}", file=sys.stderr)
        return {}, None, None
    body = render_cuda(replace(lowered.kernel, name="KERNEL"))
    symbol = "nl_" + hashlib.sha256(body.encode()).hexdigest()[:16]
    source = body.replace("KERNEL", symbol)
    code = compile_cuda(source, _get(device).arch, name_hint=symbol)
    if cuda_code_kind(code) == "cubin":
        module = ObjectCode.from_cubin(code)
    else:
        module = ObjectCode.from_ptx(code)
    names = [m for m in _function_names(source)]
    functions = {name.replace(symbol, "KERNEL"): module.get_kernel(name) for name in names}
    return functions, source, lowered


def _function_names(source: str) -> list:
    import re

    return re.findall(r"__launch_bounds__\(\d+\) (\w+)\(", source)


# --- running -----------------------------------------------------------------------------------


def program_for(order: list, roots: list, device: str = "cuda:0") -> Program:
    return _program(order, roots, device)


def run(roots: list, device: str = "cuda:0") -> dict:
    """Evaluate ``roots`` on the device; returns ``{id(root): BUFFER node}``."""
    order = toposort(roots)
    return execute(_program(order, roots, device), order, roots, device)


def execute(program: Program, order: list, roots: list, device: str, leaves=None) -> dict:
    """Run ``program`` over the DAG ``order``, some BUFFER positions replaced by ``leaves``."""
    pos = {id(n): i for i, n in enumerate(order)}
    values = {i: n.arg.data for i, n in enumerate(order) if n.op is Op.BUFFER}
    values.update(leaves or {})
    for step in program.steps:
        start = time.perf_counter()
        if step.kernel.kind == "kernel":  # a kernel written in Python (numloom.cuda)
            from . import cuda_kernels

            cuda_kernels.run(step, order, values, pos, device, program, roots)
        elif step.functions:
            _launch(step, order, values, device)
        elif step.kernel.kind == "library" and _cupy() is not None:
            _matmul_cupy(step, order, values, device)
        else:
            _on_host(step, order, values, pos, device)
        if config.DEBUG >= 1:
            _get(device).stream.sync()
            took = (time.perf_counter() - start) * 1e3
            where = "on the GPU" if step.functions else "on the host"
            print(
                f"numloom: {step.kernel.name} [{step.kernel.kind}] {where} {took:.3f} ms",
                file=sys.stderr,
            )
    count("kernels_launched", len(program.steps))
    results = {}
    for r in roots:
        if r.op is Op.BUFFER:
            results[id(r)] = r
        else:
            results[id(r)] = node(Op.BUFFER, (), Buffer(values[pos[id(r)]], device), r.shape,
                                  r.dtype)  # fmt: skip
    return results


def _scalar(value, dtype):
    return np.asarray(value, dtype=dtype)[()]


def _arguments(step: Step, order: list, values: dict, outs: list) -> list:
    """Pointers, then sizes, then constants, as the rendered signature lists them."""
    from ..lower import const_value

    args = [np.uint64(values[p].ptr) for p in step.inputs] + [np.uint64(o.ptr) for o in outs]
    sizes = [np.int64(v) for v in step.params]
    consts = [_scalar(const_value(order[p], part), dt)
              for (p, part), (_, dt) in sorted(zip(step.consts, step.layout),
                                               key=lambda item: item[1][0])]  # fmt: skip
    return args, sizes, consts


def _extent(expr: str, params: tuple) -> int:
    import re

    return math.prod(params[int(m)] for m in re.findall(r"P\[(\d+)\]", expr))


def _grid(items: int, per_block: int, device: str, waves: int = 32) -> int:
    return max(1, min(-(-items // per_block), _get(device).sms * waves))


def _launch(step: Step, order: list, values: dict, device: str) -> None:
    from cuda.core import LaunchConfig, launch

    state = _get(device)
    outs = [DeviceArray(order[p].shape, order[p].dtype, device) for p in step.outputs]
    ptrs, sizes, consts = _arguments(step, order, values, outs)
    errors = None
    if step.checks:  # error slots of indirect loads, zeroed on the device
        errors = to_device(np.zeros(2 * len(step.checks), np.int64), device).arg.data
        ptrs.append(np.uint64(errors.ptr))
    ir = step.ir
    outer = math.prod(_extent(e, step.params) for e in ir.outer) if ir.outer else 1
    inner = math.prod(_extent(e, step.params) for e in ir.inner) if ir.inner else 1

    def go(name: str, grid: int, extra: tuple = ()):
        try:
            launch(state.stream, LaunchConfig(grid=grid, block=THREADS), step.functions[name],
                   *ptrs, *extra, *sizes, *consts)  # fmt: skip
        except Exception as e:  # noqa: BLE001 (re-raised with the kernel's name)
            raise CudaError(f"launching {step.kernel.name} ({name}) failed: {e}") from e

    if ir.kind == "map":
        go("KERNEL", _grid(outer, THREADS, device))
    elif ir.kind == "row":
        go("KERNEL", _grid(outer, 1, device))
    elif ir.kind == "scan":
        go("KERNEL", _grid(outer, THREADS, device))
    elif ir.kind == "scatter":
        go("KERNEL_copy", _grid(outer, THREADS, device))
        go("KERNEL_write", _grid(inner, THREADS, device))
    elif ir.outer:  # a reduction with kept axes
        if inner <= SHORT_REDUCTION:
            go("KERNEL_thread", _grid(outer, THREADS, device))
        else:
            go("KERNEL", _grid(outer, 1, device))
    else:  # every axis reduced: partial results per block, then one block
        parts = _grid(inner, THREADS, device, waves=4)
        acc = DeviceArray((parts,), _ACC_DTYPE[ir.reduction.acc_type], device)
        arg = DeviceArray((parts,), np.int64, device)
        nan = DeviceArray((parts,), np.bool_, device)
        scratch = (np.uint64(acc.ptr), np.uint64(arg.ptr), np.uint64(nan.ptr))
        go("KERNEL_part", parts, scratch)
        go("KERNEL_final", 1, scratch + (np.int64(parts),))
    for p, o in zip(step.outputs, outs):
        values[p] = o
    if errors is not None:
        from .cpu import raise_index_errors

        raise_index_errors(step.checks, to_host(Buffer(errors, device)), order)


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
    with np.errstate(all="ignore"):
        for p in step.nodes:
            n = order[p]
            srcs = [local[id(s)] if id(s) in local else host[pos[id(s)]] for s in n.srcs]
            local[id(n)] = reference.compute(n, srcs)
    for p in step.outputs:
        values[p] = to_device(np.asarray(local[id(order[p])]), device).arg.data


# --- matmul --------------------------------------------------------------------------------------


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def _as_cupy(array: DeviceArray, shape: tuple, strides: tuple):
    """A CuPy view of device memory numloom owns (no copy)."""
    cupy = _cupy()
    memory = cupy.cuda.UnownedMemory(array.ptr, array.nbytes, array)
    pointer = cupy.cuda.MemoryPointer(memory, 0)
    return cupy.ndarray(shape, array.dtype, pointer, strides=strides)


def _matmul_cupy(step: Step, order: list, values: dict, device: str) -> None:
    """cuBLAS through CuPy, on numloom's stream, reading and writing numloom's memory."""
    cupy = _cupy()
    (out_pos,) = step.outputs
    root = order[out_pos]
    a_node, b_node = root.srcs
    state = _get(device)
    with cupy.cuda.ExternalStream(int(state.stream.handle)):
        a = _operand(a_node, order, values, step)
        b = _operand(b_node, order, values, step)
        out = DeviceArray(root.shape, root.dtype, device)
        target = _as_cupy(out, root.shape, tuple(s * root.dtype.itemsize for s in
                                                 _contiguous(root.shape)))  # fmt: skip
        cupy.matmul(a, b, out=target)
    values[out_pos] = out


def _contiguous(shape: tuple) -> tuple:
    from ..dag import contiguous_strides

    return contiguous_strides(shape)


def _operand(n, order: list, values: dict, step: Step):
    """A matmul operand as a CuPy view: a computed array, or a strided view of one (a
    transpose folds into the cuBLAS call)."""
    pos = {id(order[p]): p for p in step.inputs}
    if id(n) in pos:
        array = values[pos[id(n)]]
        return _as_cupy(array, n.shape, tuple(s * n.dtype.itemsize for s in
                                              _contiguous(n.shape)))  # fmt: skip
    if n.op is Op.VIEW and id(n.srcs[0]) in pos:
        array = values[pos[id(n.srcs[0])]]
        v = n.arg
        base = _as_cupy(array, (array.nbytes // n.dtype.itemsize,), (n.dtype.itemsize,))
        return cupy_strided(base, v, n.dtype.itemsize)
    raise NotImplementedError(f"matmul operand {n}")


def cupy_strided(base, v, itemsize: int):
    cupy = _cupy()
    return cupy.lib.stride_tricks.as_strided(
        base[v.offset :], v.shape, tuple(s * itemsize for s in v.strides)
    )

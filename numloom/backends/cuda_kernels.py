"""Kernels written in Python (``numloom.cuda``) on a CUDA device: the rendered CUDA C++
(``render_user.render_user_kernel_cuda``) compiled with NVRTC once per architecture, launched
with cuda.core's ``launch`` on numloom's stream, in the plan's order.

As on the CPU, each storage the kernel writes starts as its old version: the old device buffer
itself when nothing else can see it, else a device-to-device copy.
"""

from __future__ import annotations

import numpy as np

from ..compile.render_user import user_kernel_signature
from ..core.dag import Op
from ..core.device import CudaError
from ..core.realize import Buffer, DataError
from .cuda_device import _get
from .cuda_memory import DeviceArray, device_copy, to_device, to_host


def run(step, order: list, values: dict, pos: dict, device: str, program, roots: list) -> None:
    """Launch kernel step ``step`` on its own; its outputs (device arrays) go to ``values``."""
    first = order[step.outputs[0]]
    launch = first.arg[0]
    spec = launch.kernel
    buffers, copies = _buffers(step, order, values, pos, program, {pos[id(r)] for r in roots})
    for i, old in copies:
        buffers[i] = device_copy(old, device)
    scalars, dims = _scalars_and_dims(first, launch)
    err = to_device(np.zeros(4, np.int64), device).arg.data if spec.ir.checks else None
    _launch(spec, launch, buffers, scalars, dims, err, device)
    if err is not None:
        slots = to_host(Buffer(err, device))
        if slots[0]:
            from .cpu_kernels import index_error

            raise DataError(first, index_error(spec, slots))
    for p in step.outputs:
        values[p] = buffers[order[p].arg[1]]


def graph_launches(step, order: list, values: dict, pos: dict, device: str, program,
                   deps: tuple, launches: list) -> None:  # fmt: skip
    """Append kernel step ``step`` to a segment's graph launches, after ``deps``: a copy first
    for each array it writes whose old contents a later reader still needs, then the kernel.
    Its outputs (device arrays) go to ``values``."""
    from .cuda_graph import Launch

    first = order[step.outputs[0]]
    launch = first.arg[0]
    spec = launch.kernel
    buffers, copies = _buffers(step, order, values, pos, program, set(program.roots))
    after = list(deps)
    for i, old in copies:
        new = DeviceArray(old.shape, old.dtype, device)
        buffers[i] = new
        if new.nbytes:
            launches.append(_copy_launch(old, new, device, deps))
            after.append(len(launches) - 1)
    scalars, dims = _scalars_and_dims(first, launch)
    signature = spec.layouts.get("cuda") or spec.layouts.setdefault(
        "cuda", user_kernel_signature(spec.ir)
    )
    args = tuple(_argument(source, spec, launch, buffers, scalars, dims, None)
                 for _, source in signature)  # fmt: skip
    launches.append(Launch(_function(spec, device), tuple(dims[0:3]), tuple(dims[3:6]), args,
                           tuple(sorted(set(after))), spec.name, shmem=dims[6]))  # fmt: skip
    for p in step.outputs:
        values[p] = buffers[order[p].arg[1]]


def _buffers(step, order: list, values: dict, pos: dict, program, kept: set) -> tuple:
    """The device arrays the kernel runs on, and ``(index, old array)`` for each written one
    that must be a copy: the old buffer itself is written when nothing else can see it."""
    first = order[step.outputs[0]]
    launch = first.arg[0]
    srcs = first.srcs
    buffers = [values[pos[id(s)]] for s in srcs[: launch.storages]]
    taken: set = set()
    copies = []
    for k, i in enumerate(launch.written):
        q = pos[id(srcs[i])]
        free = order[q].op is not Op.BUFFER and q not in kept and _last_reader(program, step, q)
        mine = order[q].op is Op.BUFFER and order[q].arg.data is buffers[i]  # not a replay's
        if q not in taken and (free or (launch.donated[k] and mine)):
            taken.add(q)
            if order[q].op is Op.BUFFER:  # the old version is gone (see cpu_kernels.py)
                order[q].arg.data = None
        else:
            copies.append((i, buffers[i]))
    return buffers, copies


def _scalars_and_dims(first, launch) -> tuple:
    srcs = first.srcs
    scalars = srcs[launch.storages : launch.storages + launch.scalars]
    dims = [int(s.arg) for s in srcs[launch.storages + launch.scalars :]]
    return scalars, dims


_COPY = """extern "C" __global__ void __launch_bounds__(256) nl_copy_bytes(
        const unsigned char *__restrict__ src, unsigned char *__restrict__ dst, const long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * (long long)blockDim.x)
        dst[i] = src[i];
}
"""
_copy_kernels: dict = {}


def _copy_launch(old, new, device: str, deps: tuple):
    """A graph launch copying device array ``old`` into ``new`` (same size)."""
    from .cuda_graph import Launch

    state = _get(device)
    fn = _copy_kernels.get(state.arch)
    if fn is None:
        from cuda.core import ObjectCode

        from ..compile.compiler import compile_cuda, cuda_code_kind

        code = compile_cuda(_COPY, state.arch, name_hint="nl_copy_bytes")
        module = (ObjectCode.from_cubin(code) if cuda_code_kind(code) == "cubin"
                  else ObjectCode.from_ptx(code))  # fmt: skip
        fn = _copy_kernels[state.arch] = module.get_kernel("nl_copy_bytes")
    blocks = max(1, min(-(-new.nbytes // 256), 8 * state.sms))
    args = (np.uint64(old.ptr), np.uint64(new.ptr), np.int64(new.nbytes))
    return Launch(fn, blocks, 256, args, tuple(deps), "copy")


def _last_reader(program, step, q: int) -> bool:
    """Whether no step after ``step`` reads position ``q``."""
    after = False
    for s in program.steps:
        if s is step:
            after = True
        elif after and q in s.inputs:
            return False
    return True


def _function(spec, device: str):
    state = _get(device)
    key = ("cuda", state.arch)
    fn = spec.compiled.get(key)
    if fn is None:
        from cuda.core import ObjectCode

        from ..compile.compiler import compile_cuda, cuda_code_kind

        symbol, text = spec.source("cuda")
        code = compile_cuda(text, state.arch, name_hint=symbol)
        module = (ObjectCode.from_cubin(code) if cuda_code_kind(code) == "cubin"
                  else ObjectCode.from_ptx(code))  # fmt: skip
        fn = spec.compiled[key] = module.get_kernel(symbol)
    return fn


def _launch(spec, launch, buffers: list, scalars: tuple, dims: list, err, device: str) -> None:
    from cuda.core import LaunchConfig
    from cuda.core import launch as cuda_launch

    signature = spec.layouts.get("cuda") or spec.layouts.setdefault(
        "cuda", user_kernel_signature(spec.ir)
    )
    args = [_argument(source, spec, launch, buffers, scalars, dims, err)
            for _, source in signature]  # fmt: skip
    config = LaunchConfig(grid=tuple(dims[0:3]), block=tuple(dims[3:6]), shmem_size=dims[6])
    stream = _get(device).stream
    try:
        cuda_launch(stream, config, _function(spec, device), *args)
    except Exception as e:  # noqa: BLE001 (re-raised with the kernel's name)
        raise CudaError(f"launching kernel {spec.name} failed: {e}") from e


def _argument(source: tuple, spec, launch, buffers, scalars, dims, err):
    """One kernel argument as cuda.core passes it (a sized NumPy scalar)."""
    kind = source[0]
    if kind == "ptr":
        j = source[1]
        i, view = launch.arrays[j]
        return np.uint64(buffers[i].ptr + view.offset * buffers[i].dtype.itemsize)
    if kind == "size":
        entry = source[1]
        if entry[0] == "launch":
            return np.int64(dims[entry[1]])
        _, j, d = entry
        view = launch.arrays[j][1]
        return np.int64(view.shape[d] if entry[0] == "shape" else view.strides[d])
    if kind == "err":
        return np.uint64(err.ptr if err is not None else 0)
    _, j, part = source
    k = sum(1 for a in launch.arrays[:j] if a is None)
    value = np.asarray(scalars[k].arg, dtype=spec.arg_types[j].dtype)[()]
    if part is not None:
        return getattr(value, part)
    if value.dtype == np.bool_:
        return np.int32(value)
    if value.dtype == np.float16:
        return np.float32(value)
    return value

"""Kernels written in Python (``numloom.cuda``) on the CPU device: compiled to C with OpenMP
(``render.render_user_kernel_c``) and called through ctypes, one call per launch.

A launch writes new versions of the storages its kernel writes. Each starts as the old
version: the old buffer itself when nothing else can see it (an intermediate of this plan read
by nothing later, or a buffer only the written array held at the launch), else a copy.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..compile.cfamily import arguments
from ..core.dag import Op
from ..core.realize import DataError
from .cpu_memory import POOL


def source(k) -> str:
    """The C source a plan's kernel step runs (for ``explain``)."""
    launch = k.outputs[0].arg[0]
    return launch.kernel.source("c")[1]


def run(step, order: list, values: dict, blocks: dict, pos: dict) -> None:
    """Run the launch of kernel step ``step``; its outputs go to ``values`` (and their pool
    blocks to ``blocks``)."""
    first = order[step.outputs[0]]
    launch = first.arg[0]
    spec = launch.kernel
    srcs = first.srcs
    buffers = [values[pos[id(s)]] for s in srcs[: launch.storages]]
    owners: dict = {}
    taken: set = set()
    for k, i in enumerate(launch.written):
        q = pos[id(srcs[i])]
        buffers[i], owners[i] = _writable(order, values, blocks, step, q, launch.donated[k], taken)
    scalars = srcs[launch.storages : launch.storages + launch.scalars]
    dims = [int(s.arg) for s in srcs[launch.storages + launch.scalars :]]
    err = np.zeros(4, np.int64)
    _call(spec, launch, buffers, scalars, dims, err)
    if err[0]:
        raise DataError(first, index_error(spec, err))
    for p in step.outputs:
        i = order[p].arg[1]
        values[p] = buffers[i]
        if owners.get(i) is not None:
            blocks[p] = owners[i]


def _writable(order, values, blocks, step, q: int, donated: bool, taken: set):
    """``(array, pool block or None)``: memory holding storage version ``q`` that the kernel
    may write."""
    data = values[q]
    node = order[q]
    if q not in taken:
        if node.op is not Op.BUFFER and q in step.frees and q in blocks:
            taken.add(q)
            return data, blocks.pop(q)
        if donated and node.op is Op.BUFFER and node.arg.data is data:
            taken.add(q)
            buffer = node.arg
            # The old version is gone: a cached plan holding its node must not hold the memory
            # (nor count as a reference to it when the next launch asks).
            buffer.data = None
            if buffer.release is not None:  # a pooled block: it now belongs to the output
                buffer.release = None
                return data, data.base
            return data, None
    out, block = POOL.array(data.shape, data.dtype)
    np.copyto(out, data)
    return out, block


def _compiled(spec):
    fn = spec.compiled.get("cpu")
    if fn is None:
        from ..compile.compiler import compile_c

        symbol, text = spec.source("c")
        fn = getattr(compile_c(text, name_hint=symbol, symbol=symbol), symbol)
        fn.restype = None
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        spec.compiled["cpu"] = fn
    return fn


def _call(spec, launch, buffers: list, scalars: tuple, dims: list, err: np.ndarray) -> None:
    ir = spec.ir
    args = spec.layouts.get("c") or spec.layouts.setdefault("c", arguments(ir))
    arrays = [a for a in launch.arrays if a is not None]
    pointers = [buffers[i].ctypes.data + view.offset * buffers[i].itemsize for i, view in arrays]
    pointers.append(err.ctypes.data if ir.checks else 0)
    sizes = np.array([_size(entry, dims, launch) for entry in args.sizes], np.int64)
    block = np.zeros(args.block, np.uint8)
    for (j, _, off), const in zip(args.scalars, scalars):
        raw = np.asarray(const.arg, dtype=spec.arg_types[j].dtype).tobytes()
        block[off : off + len(raw)] = np.frombuffer(raw, np.uint8)
    fn = _compiled(spec)
    fn((ctypes.c_void_p * len(pointers))(*pointers), sizes.ctypes.data, block.ctypes.data)


def _size(entry: tuple, dims: list, launch) -> int:
    if entry[0] == "launch":
        return dims[entry[1]]
    kind, j, d = entry
    view = launch.arrays[j][1]
    return view.shape[d] if kind == "shape" else view.strides[d]


def index_error(spec, err) -> IndexError:
    """NumPy's IndexError for the first index a bounds-checked kernel found out of bounds,
    naming the kernel, the array and the user's line."""
    array, axis, where = spec.checks[int(err[1])]
    error = IndexError(f"index {int(err[2])} is out of bounds for axis {axis} with size "
                       f"{int(err[3])} (kernel {spec.name}, array '{array}')")  # fmt: skip
    error.add_note(where.show())
    return error

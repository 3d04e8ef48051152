"""``reduce`` and ``accumulate`` of a binary ``numloom.vectorize`` function: kernels written in
Python (``numloom.cuda``) folding each line along the axis in NumPy's order, one thread per
line, the user's function compiled into them as a device function."""

from __future__ import annotations

import numpy as np

from ..api import numpy_api as _api  # (the NumPy namespace: numloom.empty, ...)
from .cuda import intrinsics as cuda
from .cuda.dispatcher import jit

_THREADS = 128


def _fold_kernel(fn, dtype):
    op = jit(device=True)(fn)
    cast = np.dtype(dtype).type

    def fold(a, out, init, start):
        r = cuda.grid(1)
        if r < a.shape[0]:
            acc = cast(init) if start == 0 else cast(a[r, 0])
            for k in range(start, a.shape[1]):
                acc = cast(op(acc, a[r, k]))
            out[r] = acc

    return jit(fold)


def _scan_kernel(fn, dtype):
    op = jit(device=True)(fn)
    cast = np.dtype(dtype).type

    def scan(a, out):
        r = cuda.grid(1)
        if r < a.shape[0]:
            acc = cast(a[r, 0])
            out[r, 0] = acc
            for k in range(1, a.shape[1]):
                acc = cast(op(acc, a[r, k]))
                out[r, k] = acc

    return jit(scan)


def _kernel(vf, which: str, dtype):
    cache = vf.__dict__.setdefault("_method_kernels", {})
    key = (which, np.dtype(dtype))
    if key not in cache:
        make = _fold_kernel if which == "reduce" else _scan_kernel
        cache[key] = make(vf.pyfunc, dtype)
    return cache[key]


def _result_dtype(vf, dtype) -> np.dtype:
    """The dtype ``f(a, b)`` gives for two elements of ``dtype`` (the accumulator's)."""
    if vf.signatures:
        return vf._loop([_scalar(dtype)] * 2)[0].dtype
    if vf._otypes:
        return vf._otypes[0]
    from .translate import translate_scalar

    spec, _ = translate_scalar(vf.pyfunc, (_scalar(dtype), _scalar(dtype)))
    return spec.ret.dtype


def _scalar(dtype):
    from .ktypes import Scalar

    return Scalar(np.dtype(dtype))


def _lines(array, axis):
    """The array as (lines, n): each row one line along ``axis``."""
    moved = _api.moveaxis(array, axis, -1)
    n = moved.shape[-1]
    return moved.reshape(int(np.prod(moved.shape[:-1])), n), moved.shape[:-1], n


def _check_binary(vf, method: str) -> None:
    params = [p for p in __import__("inspect").signature(vf.pyfunc).parameters]
    if len(params) != 2:
        raise ValueError(f"{method} only supported for binary functions")


def reduce(vf, array, axis, dtype, out, keepdims, initial):
    _check_binary(vf, "reduce")
    array = _api.asarray(array)
    if dtype is not None:
        array = array.astype(dtype)
    if axis is None:
        array, axis = array.reshape(-1), 0
    axis = axis + array.ndim if axis < 0 else axis
    lines, kept, n = _lines(array, axis)
    acc = _result_dtype(vf, array.dtype)
    if initial is np._NoValue and vf.identity is not None:
        initial = vf.identity if n == 0 else np._NoValue
    if n == 0 and initial is np._NoValue:
        raise ValueError(f"zero-size array to reduction operation {vf.__name__} which has no "
                         "identity")  # fmt: skip
    result = _api.empty(lines.shape[0], acc)
    if lines.shape[0]:
        start = 0 if initial is not np._NoValue else 1
        init = acc.type(0 if initial is np._NoValue else initial)
        _kernel(vf, "reduce", acc).forall(lines.shape[0], _THREADS)(lines, result, init, start)
    result = result.reshape(kept)
    if keepdims:
        result = _api.expand_dims(result, axis)
    if out is not None:
        out[...] = result
        return out
    return result


def accumulate(vf, array, axis, dtype, out):
    _check_binary(vf, "accumulate")
    array = _api.asarray(array)
    if dtype is not None:
        array = array.astype(dtype)
    axis = axis + array.ndim if axis < 0 else axis
    moved = _api.moveaxis(array, axis, -1)
    lines = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    acc = _result_dtype(vf, array.dtype)
    result = _api.empty(lines.shape, acc)
    if lines.size:
        _kernel(vf, "accumulate", acc).forall(lines.shape[0], _THREADS)(lines, result)
    result = _api.moveaxis(result.reshape(moved.shape), -1, axis)
    if out is not None:
        out[...] = result
        return out
    return result

"""``cuda.reduce``: reduce an array with a user's binary function, as numba.cuda's ``Reduce``.

The reduction is itself a numloom kernel written in Python: each block folds a grid-strided
share of the array per thread, then combines its threads' values in shared memory in a fixed
tree order; a second launch of one block combines the blocks' values and ``init``. The order
is the same on every device, so results are too.
"""

from __future__ import annotations

import numpy as np

from ...api import numpy_api as _api  # (the NumPy namespace: numloom.empty, ...)
from . import intrinsics as cuda
from .dispatcher import jit

_THREADS = 256


def _reduction_kernel(fn, dtype):
    op = jit(device=True)(fn)
    cast = np.dtype(dtype).type

    def reduce_blocks(arr, out, init, use_init):
        sm = cuda.shared.array(_THREADS, dtype)
        tid = cuda.threadIdx.x
        first = cuda.blockIdx.x * _THREADS
        i = first + tid
        n = arr.shape[0]
        if i < n:
            acc = arr[i]
            for j in range(i + cuda.gridDim.x * _THREADS, n, cuda.gridDim.x * _THREADS):
                acc = cast(op(acc, arr[j]))
            sm[tid] = acc
        cuda.syncthreads()
        valid = min(_THREADS, n - first)
        s = _THREADS // 2
        while s > 0:
            if tid < s and tid + s < valid:
                sm[tid] = cast(op(sm[tid], sm[tid + s]))
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            if use_init:
                out[cuda.blockIdx.x] = cast(op(sm[0], init))
            else:
                out[cuda.blockIdx.x] = sm[0]

    return jit(reduce_blocks)


class Reduce:
    """A reduction by a binary function: ``Reduce(f)(array, size=None, res=None, init=0)``."""

    def __init__(self, functor):
        self._functor = functor
        self._kernels: dict = {}
        self.__name__ = getattr(functor, "__name__", "reduce")
        self.__doc__ = getattr(functor, "__doc__", None)

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        if arr.ndim != 1:
            raise TypeError("only support 1D array")
        if size is not None:
            arr = arr[:size]
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        if arr.shape[0] < 1:
            if res is not None:
                res[0] = init
                return None
            return init
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = _reduction_kernel(self._functor, dtype)
        blocks = min(_THREADS, -(-arr.shape[0] // _THREADS))
        partials = _api.empty(blocks, dtype)
        kernel[blocks, _THREADS](arr, partials, init, blocks == 1)
        if blocks > 1:
            kernel[1, _THREADS](partials, partials, init, True)
        if res is not None:
            res[0] = partials[0]
            return None
        return dtype.type(partials[:1].get()[0])


def reduce(fn) -> Reduce:
    """``@cuda.reduce`` on a binary function of two elements."""
    return Reduce(fn)

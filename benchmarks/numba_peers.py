"""CPU peers for ``python -m numloom bench``: hand-written Numba loops.

What a Numba user writes instead of the NumPy code: one ``@njit(parallel=True)`` function with
a ``prange`` loop, allocating its outputs (as the NumPy code does). Only Black-Scholes and Sobel
have one; the other rows leave the column empty. Compiling happens in the first call, which the
benchmark times apart.

A peer has ``name``, ``setup(case, inputs) -> call or None`` and ``to_numpy(x)``, where
``call()`` runs the workload once and returns when its results are complete.
"""

import math

import numpy as np

try:
    from numba import njit, prange

    UNAVAILABLE = []
except Exception as error:  # not installed, or built for another NumPy: the column stays empty
    UNAVAILABLE = [f"numba ({type(error).__name__}: {error})"]
    prange = range

    def njit(*args, **kwargs):
        return lambda fn: fn


# Arithmetic stays in float32, as a Numba user tuning this would write it: Python float
# constants would promote every operation to float64 and keep LLVM from vectorizing.
f32 = np.float32


@njit(inline="always")
def _cnd(d):
    """The cumulative normal distribution, as workloads.cnd computes it."""
    K = f32(1.0) / (f32(1.0) + f32(0.2316419) * abs(d))
    poly = f32(1.330274429)
    for a in (f32(-1.821255978), f32(1.781477937), f32(-0.356563782), f32(0.31938153)):
        poly = a + K * poly
    ret = f32(0.39894228040143267794) * math.exp(f32(-0.5) * d * d) * (K * poly)
    return f32(1.0) - ret if d > 0 else ret


@njit(parallel=True)
def blackscholes(S, X, T):
    r, v = f32(0.02), f32(0.30)
    call = np.empty_like(S)
    put = np.empty_like(S)
    for i in prange(S.shape[0]):
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (r + f32(0.5) * v * v) * T[i]) / (v * sqrtT)
        d2 = d1 - v * sqrtT
        cndd1 = _cnd(d1)
        cndd2 = _cnd(d2)
        expRT = math.exp(-r * T[i])
        call[i] = S[i] * cndd1 - X[i] * expRT * cndd2
        put[i] = X[i] * expRT * (f32(1.0) - cndd2) - S[i] * (f32(1.0) - cndd1)
    return call, put


@njit(parallel=True)
def sobel(imgs):
    batch, h, w = imgs.shape
    out = np.empty((batch, h - 2, w - 2), dtype=imgs.dtype)
    two = f32(2.0)
    # one parallel loop over every output row of every image: batches are often small
    for row in prange(batch * (h - 2)):
        b, i = row // (h - 2), row % (h - 2)
        # row views: plain 1-D indexing in the inner loop lets LLVM vectorize it
        up, mid, down, o = imgs[b, i], imgs[b, i + 1], imgs[b, i + 2], out[b, i]
        for j in range(w - 2):
            gx = (up[j + 2] + two * mid[j + 2] + down[j + 2]) - (up[j] + two * mid[j] + down[j])
            gy = (down[j] + two * down[j + 1] + down[j + 2]) - (up[j] + two * up[j + 1] + up[j + 2])
            o[j] = math.sqrt(gx * gx + gy * gy)
    return out


KERNELS = {"blackscholes": blackscholes, "sobel": sobel}


class NumbaPeer:
    name = "numba"

    def setup(self, case, inputs):
        kernel = KERNELS.get(case.name)
        if kernel is None:
            return None
        args = tuple(np.ascontiguousarray(a) for a in inputs)
        return lambda: kernel(*args)

    def to_numpy(self, x):
        return np.array(x, copy=True)


def available_peers() -> list:
    return [] if UNAVAILABLE else [NumbaPeer()]

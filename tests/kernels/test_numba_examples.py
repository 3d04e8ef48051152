"""numba-cuda's documented examples (its ``tests/doc_examples``), run with numloom's import in
place of Numba's, on the device numloom uses: the shared-memory reduction, Monte Carlo
integration and the 3-D grid of xoroshiro128+ draws (``numloom.cuda.random``). Sizes are
smaller where the example's would take minutes on a CPU; the kernels are the examples' own."""

from __future__ import annotations

import numpy as np
import pytest

import numloom as nl
from numloom import cuda
from numloom.cuda.random import (
    create_xoroshiro128p_states,
    init_xoroshiro128p_states,
    xoroshiro128p_dtype,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

M64 = (1 << 64) - 1


def test_ex_reduction():
    from numloom.types import int32

    a = nl.asarray(np.arange(1024))
    nelem = len(a)

    @cuda.jit
    def array_sum(data):
        tid = cuda.threadIdx.x
        size = len(data)
        if tid < size:
            i = cuda.grid(1)

            # Declare an array in shared memory
            shr = cuda.shared.array(nelem, int32)
            shr[tid] = data[i]

            # Ensure writes to shared memory are visible
            # to all threads before reducing
            cuda.syncthreads()

            s = 1
            while s < cuda.blockDim.x:
                if tid % (2 * s) == 0:
                    # Stride by `s` and add
                    shr[tid] += shr[tid + s]
                s *= 2
                cuda.syncthreads()

            # After the loop, the zeroth  element contains the sum
            if tid == 0:
                data[tid] = shr[tid]

    array_sum[1, nelem](a)
    np.testing.assert_equal(a.get()[0], sum(np.arange(1024)))


def test_ex_montecarlo():
    nsamps = 100000  # (the example's 1e6 on a GPU; a tenth here)

    @cuda.jit(device=True)  # (the example's @numba.jit: a device function here)
    def func(x):
        return 1.0 / x

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        size = len(out)
        gid = cuda.grid(1)
        if gid < size:
            # draw a sample between 0 and 1 on this thread
            samp = xoroshiro128p_uniform_float32(rng_states, gid)
            # normalize this sample to the limit range
            samp = samp * (upper_lim - lower_lim) + lower_lim
            y = func(samp)
            out[gid] = y

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    def mc_integrate(lower_lim, upper_lim, nsamps):
        out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)
        mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
        factor = (upper_lim - lower_lim) / (nsamps - 1)
        return sum_reduce(out) * factor

    np.testing.assert_allclose(mc_integrate(1, 2, nsamps), 0.69315, atol=0.003)
    np.testing.assert_allclose(mc_integrate(2, 3, nsamps), 0.4055, atol=0.003)


def test_ex_3d_grid():
    @cuda.jit
    def random_3d(arr, rng_states):
        # Per-dimension thread indices and strides
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)

        # Linearized thread index
        tid = (startz * stridey * stridex) + (starty * stridex) + startx

        # Use strided loops over the array to assign a random value to each entry
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    X, Y, Z = 70, 90, 71  # (the example's 701 x 900 x 719 on a GPU)
    bx, by, bz = 8, 8, 8
    gx, gy, gz = 4, 4, 4
    nthreads = bx * by * bz * gx * gy * gz
    rng_states = create_xoroshiro128p_states(nthreads, seed=1)
    arr = nl.zeros((X, Y, Z), dtype=np.float32)
    random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)
    host_arr = arr.get()
    assert 0.49 < np.mean(host_arr) < 0.51
    assert np.all(host_arr <= 1.0) and np.all(host_arr >= 0.0)


# --- numloom.cuda.random against an independent transcription of Numba's generators ----------


def _splitmix(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & M64


def _step(s0: int, s1: int) -> tuple:
    """xoroshiro128+ (55, 14, 36): (result, s0, s1)."""
    result = (s0 + s1) & M64
    s1 ^= s0
    return result, _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64), _rotl(s1, 36)


def _jumped(s0: int, s1: int) -> tuple:
    a = b = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for k in range(64):
            if word >> k & 1:
                a, b = a ^ s0, b ^ s1
            _, s0, s1 = _step(s0, s1)
    return a, b


def _states(n: int, seed: int, start: int = 0) -> list:
    s = (_splitmix(seed),) * 2
    for _ in range(start):
        s = _jumped(*s)
    out = [s]
    for _ in range(n - 1):
        out.append(_jumped(*out[-1]))
    return out


@pytest.mark.parametrize("seed,start", [(42, 0), (1, 0), (12345678901234, 3)])
def test_states_are_numbas_streams(seed, start):
    states = create_xoroshiro128p_states(9, seed=seed, subsequence_start=start)
    assert states.dtype == np.uint64 and states.shape == (9, 2) and isinstance(states, nl.ndarray)
    want = np.array(_states(9, seed, start), dtype=np.uint64)
    np.testing.assert_array_equal(states.get(), want)
    record = np.zeros(9, xoroshiro128p_dtype)  # (Numba's own layout, on the host)
    init_xoroshiro128p_states(record, seed, start)
    np.testing.assert_array_equal(record["s0"], want[:, 0])
    np.testing.assert_array_equal(record["s1"], want[:, 1])


def test_states_without_a_c_compiler_are_the_same(monkeypatch):
    from numloom.compile import compiler

    def no_compiler(*args, **kwargs):
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(compiler, "compile_c", no_compiler)
    states = create_xoroshiro128p_states(5, seed=99, subsequence_start=1)
    np.testing.assert_array_equal(states.get(), np.array(_states(5, 99, 1), dtype=np.uint64))


def test_kernel_draws_are_the_generators_numbers():
    """Each draw inside a kernel is Numba's: the uniform conversions, and the Box-Muller normals
    from two float32 uniforms; the states advance in the array."""
    n = 300

    @cuda.jit
    def draw(u32, u64, n32, n64, states):
        i = cuda.grid(1)
        if i < u32.size:
            u32[i] = xoroshiro128p_uniform_float32(states, i)
            u64[i] = xoroshiro128p_uniform_float64(states, i)
            n32[i] = xoroshiro128p_normal_float32(states, i)
            n64[i] = xoroshiro128p_normal_float64(states, i)

    states = create_xoroshiro128p_states(n, seed=7)
    outs = [nl.zeros(n, np.float32), nl.zeros(n), nl.zeros(n, np.float32), nl.zeros(n)]
    draw.forall(n)(*outs, states)
    u32, u64, n32, n64, after = [], [], [], [], []
    for s in _states(n, 7):
        draws = []
        for _ in range(6):
            r, *s = _step(*s)
            draws.append(r)
        u = [(d >> 11) * (1.0 / 2.0**53) for d in draws]
        u32.append(np.float32(u[0]))
        u64.append(u[1])
        a, b = np.float32(u[2]), np.float32(u[3])
        n32.append(np.sqrt(np.float32(-2.0) * np.log(a)) * np.cos(np.float32(2 * np.pi) * b))
        a, b = np.float32(u[4]), np.float32(u[5])
        n64.append(np.sqrt(-2.0 * np.float64(np.log(a))) * np.cos(2 * np.pi * np.float64(b)))
        after.append(s)
    np.testing.assert_array_equal(outs[0].get(), np.array(u32, np.float32))
    np.testing.assert_array_equal(outs[1].get(), np.array(u64))
    # (float32 log and cos: the device's within an ulp or two of NumPy's)
    np.testing.assert_allclose(outs[2].get(), np.array(n32, np.float32), rtol=4e-7, atol=1e-6)
    np.testing.assert_allclose(outs[3].get(), np.array(n64), rtol=4e-7, atol=1e-6)
    np.testing.assert_array_equal(states.get(), np.array(after, dtype=np.uint64))
    from numloom.compile import compiler

    if compiler.nvrtc_available():  # (the same kernel as CUDA C++, through NVRTC: no GPU needed)
        sources = [spec.source("cuda")[1] for spec in draw.specializations.values()]
        assert sources and "nl_xoro_normal_f64" in sources[0]
        logs = compiler.check_cuda_sources(sources, "sm_90", ptx=False)
        assert logs == [None] * len(sources), "\n".join(log for log in logs if log)


def test_host_calls_draw_the_same_numbers():
    states = create_xoroshiro128p_states(4, seed=3)
    host = states.get().copy()
    s = _states(4, 3)[2]
    r, *_ = _step(*s)
    assert xoroshiro128p_uniform_float64(host, 2) == (r >> 11) * (1.0 / 2.0**53)
    assert xoroshiro128p_uniform_float32(states, 2) == np.float32((r >> 11) / 2.0**53)


def test_bad_states_say_what_to_pass():
    @cuda.jit
    def draw(out, states):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    with pytest.raises(Exception, match="create_xoroshiro128p_states"):
        draw.forall(4)(nl.zeros(4, np.float32), nl.zeros(4, np.float32))
    with pytest.raises(TypeError, match=r"\(n, 2\) uint64"):
        init_xoroshiro128p_states(nl.zeros((4, 3), np.uint64), 1)


def test_the_random_module_is_one_module_under_both_names():
    """``numloom.cuda.random`` and the module the kernel translator knows are one object, in
    whatever order they were imported (two copies would make the draws unknown in kernels)."""
    import sys

    import numloom.cuda.random as public

    assert public is sys.modules["numloom.kernels.cuda.random"]
    assert public.xoroshiro128p_uniform_float32 is xoroshiro128p_uniform_float32

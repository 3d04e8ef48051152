"""numba-cuda's documented examples (its ``tests/doc_examples`` and the random-number page),
run with numloom's import in place of Numba's, on the device numloom uses (the CPU here, the GPU
under NUMLOOM_DEVICE=cuda): vector addition, the naive and shared-memory matrix products, the
shared-memory reduction, a function shared by CPU and GPU code, a ufunc called in a kernel,
Monte Carlo integration, the Monte Carlo estimate of pi and the 3-D grid of xoroshiro128+ draws
(``numloom.cuda.random``); and a shared-memory prefix sum written as Numba users write it. The
histogram with shared-memory atomics is test_kernels.py's. The examples that synchronize the
whole grid (``cuda.cg.this_grid().sync()``: sessionization, the heat equation) are expected to
fail: numloom has no grid-wide barrier. Sizes are smaller where the example's would take
minutes on a CPU; the kernels are the examples' own."""

from __future__ import annotations

import math

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
from numloom.kernels.kerrors import UnsupportedError

M64 = (1 << 64) - 1


def test_ex_vecadd():
    @cuda.jit
    def f(a, b, c):
        # like threadIdx.x + (blockIdx.x * blockDim.x)
        tid = cuda.grid(1)
        size = len(c)

        if tid < size:
            c[tid] = a[tid] + b[tid]

    # Seed RNG for test repeatability
    np.random.seed(1)

    N = 100000
    a = cuda.to_device(np.random.random(N))
    b = cuda.to_device(np.random.random(N))
    c = cuda.device_array_like(a)

    f.forall(len(a))(a, b, c)
    np.testing.assert_equal(c.copy_to_host(), a.copy_to_host() + b.copy_to_host())

    c = cuda.device_array_like(a)  # (a fresh output, so the second launch is checked too)
    # Enough threads per block for several warps per block
    nthreads = 256
    # Enough blocks to cover the entire vector depending on its length
    nblocks = (len(a) // nthreads) + 1
    f[nblocks, nthreads](a, b, c)

    np.testing.assert_equal(c.copy_to_host(), a.copy_to_host() + b.copy_to_host())


def test_ex_matmul():
    from numloom.cuda import float32

    @cuda.jit
    def matmul(A, B, C):
        """Perform square matrix multiplication of C = A * B."""
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp

    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])

    x_d = cuda.to_device(x_h)
    y_d = cuda.to_device(y_h)
    z_d = cuda.to_device(z_h)

    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.copy_to_host()
    assert np.all(z_h == x_h @ y_h), "matmul incorrect"

    # Controls threads per block and shared memory usage.
    # The computation will be done on blocks of TPB x TPB elements.
    # TPB should not be larger than 32 in this example
    TPB = 16

    @cuda.jit
    def fast_matmul(A, B, C):
        """
        Perform matrix multiplication of C = A * B using CUDA shared memory.

        Reference: https://stackoverflow.com/a/64198479/13697228 by @RobertCrovella
        """
        # Define an array in the shared memory
        # The size and type of the arrays must be known at compile time
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

        x, y = cuda.grid(2)

        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x  # blocks per grid

        # Each thread computes one element in the result matrix.
        # The dot product is chunked into dot products of TPB-long vectors.
        tmp = float32(0.0)
        for i in range(bpg):
            # Preload data into shared memory
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * TPB]
            if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * TPB, x]

            # Wait until all threads finish preloading
            cuda.syncthreads()

            # Computes partial product on the shared memory
            for j in range(TPB):
                tmp += sA[ty, j] * sB[j, tx]

            # Wait until all threads finish computing
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = np.zeros([4, 4])

    x_d = cuda.to_device(x_h)
    y_d = cuda.to_device(y_h)
    z_d = cuda.to_device(z_h)

    threadsperblock = (TPB, TPB)
    blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.copy_to_host()
    assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, square case."

    x_h = np.arange(115).reshape([5, 23])
    y_h = np.ones([23, 7])
    z_h = np.zeros([5, 7])

    x_d = cuda.to_device(x_h)
    y_d = cuda.to_device(y_h)
    z_d = cuda.to_device(z_h)

    threadsperblock = (TPB, TPB)
    grid_y_max = max(x_h.shape[0], y_h.shape[0])
    grid_x_max = max(x_h.shape[1], y_h.shape[1])
    blockspergrid_x = math.ceil(grid_x_max / threadsperblock[0])
    blockspergrid_y = math.ceil(grid_y_max / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)

    fast_matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    z_h = z_d.copy_to_host()
    assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, non-square case."


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


def test_ex_cpu_gpu_compat():
    from math import pi

    import numloom as numba

    X = cuda.to_device([1, 10, 234])
    Y = cuda.to_device([2, 2, 4014])
    Z = cuda.to_device([3, 14, 2211])
    results = cuda.to_device([0.0, 0.0, 0.0])

    @numba.jit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * pi)

    assert business_logic(1, 2, 3) == -126.79644737231007

    @cuda.jit
    def f(res, xarr, yarr, zarr):
        tid = cuda.grid(1)
        if tid < len(xarr):
            # The function decorated with numba.jit may be directly reused
            res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

    f.forall(len(X))(results, X, Y, Z)
    # [-126.79644737231007, 416.28324559588634, -218912930.2987788]

    expect = [business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]
    np.testing.assert_equal(expect, results.copy_to_host())
    x, y, z = (np.array(v) for v in ([1, 10, 234], [2, 2, 4014], [3, 14, 2211]))
    np.testing.assert_equal(results.copy_to_host(), 4 * z * (2 * x - (4 * y) / 2 * np.pi))


def test_ex_cuda_ufunc_call():
    # A kernel calling a ufunc (sin, in this case)
    @cuda.jit
    def f(r, x):
        # Compute sin(x) with result written to r
        np.sin(x, r)

    # Declare input and output arrays
    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)

    # Launch kernel that calls the ufunc
    f[1, 1](r, x)

    # A quick sanity check demonstrating equality of the sine computed by
    # the sin ufunc inside the kernel, and NumPy's sin ufunc
    np.testing.assert_allclose(r, np.sin(x))


def test_ex_montecarlo():
    import numloom as numba

    nsamps = 100000  # (the example's 1e6 on a GPU; a tenth here)

    @numba.jit
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


def _uniform_float32_streams(states: np.ndarray):
    """xoroshiro128p_uniform_float32 of every state's stream, in NumPy: one array of all the
    streams' next values per step."""
    s0, s1 = states[:, 0].copy(), states[:, 1].copy()
    while True:
        result = s0 + s1
        s1 ^= s0
        s0 = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14)
        s1 = (s1 << 36) | (s1 >> 28)
        yield ((result >> 11) * (1.0 / 2.0**53)).astype(np.float32)


def test_ex_compute_pi():
    """The random-number page's example: pi from the draws inside the unit circle."""
    from numloom.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def compute_pi(rng_states, iterations, out):
        """Find the maximum value in values and store in result[0]"""
        thread_id = cuda.grid(1)

        # Compute pi by drawing random (x, y) points and finding what
        # fraction lie inside a unit circle
        inside = 0
        for i in range(iterations):  # noqa: B007
            x = xoroshiro128p_uniform_float32(rng_states, thread_id)
            y = xoroshiro128p_uniform_float32(rng_states, thread_id)
            if x**2 + y**2 <= 1.0:
                inside += 1

        out[thread_id] = 4.0 * inside / iterations

    threads_per_block = 64
    blocks = 24
    rng_states = create_xoroshiro128p_states(threads_per_block * blocks, seed=1)
    out = np.zeros(threads_per_block * blocks, dtype=np.float32)

    start = rng_states.get().copy()  # (for the NumPy reference below)

    compute_pi[blocks, threads_per_block](rng_states, 10000, out)
    draws, inside = _uniform_float32_streams(start), 0
    for _ in range(10000):
        x, y = next(draws), next(draws)
        inside += x**2 + y**2 <= 1.0
    np.testing.assert_array_equal(out, (4.0 * inside / 10000).astype(np.float32))
    assert abs(out.mean() - np.pi) < 0.01


# --- a prefix sum: each block scans its elements in shared memory, then the blocks' totals -----

SCAN_TPB = 128


@cuda.jit
def scan_blocks(x, out, block_sums):
    """Hillis-Steele inclusive scan of each block's elements in shared memory; each block's
    total into block_sums."""
    temp = cuda.shared.array(SCAN_TPB, nl.int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        temp[tid] = x[i]
    else:
        temp[tid] = 0
    cuda.syncthreads()
    offset = 1
    while offset < cuda.blockDim.x:
        if tid >= offset:
            v = temp[tid - offset]
        cuda.syncthreads()  # (every thread read before any writes)
        if tid >= offset:
            temp[tid] += v
        cuda.syncthreads()
        offset *= 2
    if i < x.size:
        out[i] = temp[tid]
    if tid == cuda.blockDim.x - 1:
        block_sums[cuda.blockIdx.x] = temp[tid]


@cuda.jit
def add_block_offsets(out, scanned_sums):
    """Each element after the first block plus the sum of all the blocks before its own."""
    i = cuda.grid(1)
    b = cuda.blockIdx.x
    if b > 0 and i < out.size:
        out[i] += scanned_sums[b - 1]


def prefix_sum(x):
    blocks = (x.size + SCAN_TPB - 1) // SCAN_TPB
    out = cuda.device_array_like(x)
    block_sums = cuda.device_array(blocks, x.dtype)
    scan_blocks[blocks, SCAN_TPB](x, out, block_sums)
    if blocks > 1:  # the second pass: the block totals' own scan, then their offsets added
        add_block_offsets[blocks, SCAN_TPB](out, prefix_sum(block_sums))
    return out


@pytest.mark.parametrize("n", [1, 100, 128, 129, 5000, 20_000])  # (20000: three levels)
def test_prefix_sum(n):
    x = np.random.default_rng(n).integers(-1000, 1000, n)
    out = prefix_sum(cuda.to_device(x))
    np.testing.assert_array_equal(out.copy_to_host(), np.cumsum(x))


# --- the examples that synchronize the whole grid (numloom has no grid-wide barrier) ----------

grid_sync = pytest.mark.xfail(raises=UnsupportedError, strict=True,
                              reason="cuda.cg.this_grid().sync(): no grid-wide barrier")  # fmt: skip


@grid_sync
def test_ex_sessionize():
    # Set the timeout to one hour
    session_timeout = np.int64(np.timedelta64("3600", "s"))

    # Generate data
    ids = cuda.to_device(np.array([1] * 6 + [2] * 3 + [3] * 10 + [4] * 9))
    sec = cuda.to_device(
        np.array(
            [1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001, 10002, 10003,
             15000, 150001, 1, 5000, 50001, 15000, 20000, 25000, 25001, 25002, 25003],
            dtype="datetime64[ns]",
        ).astype("int64")  # Cast to int64 for compatibility
    )  # fmt: skip
    # Create a vector to hold the results
    results = cuda.to_device(np.zeros(len(ids)))

    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)

        if gid >= size:
            return

        # Determine session boundaries
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = timestamp[gid] - timestamp[gid - 1] > session_timeout
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True

        # Determine session labels
        if is_sess_boundary:
            # This thread marks the start of a session
            results[gid] = gid

            # Make sure all session boundaries are written
            # before populating the session id
            grid = cuda.cg.this_grid()
            grid.sync()

            look_ahead = 1
            # Check elements 'forward' of this one
            # until a new session boundary is found
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1
                # Avoid out-of-bounds accesses by the last thread
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break

    sessionize.forall(len(ids))(ids, sec, results)

    expect = [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 11, 11, 13, 13, 13, 13, 17, 18, 19, 20, 21, 21,
              23, 24, 24, 24, 24]  # fmt: skip
    np.testing.assert_equal(expect, results.copy_to_host())


@grid_sync
def test_ex_laplace():
    # Use an odd problem size.
    # This is so there can be an element truly in the "middle" for symmetry.
    size = 1001
    data = np.zeros(size)

    # Middle element is made very hot
    data[500] = 10000
    buf_0 = cuda.to_device(data)

    # This extra array is used for synchronization purposes
    buf_1 = cuda.device_array_like(buf_0)

    niter = 10000

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)

        # Don't continue if our index is outside the domain
        if i >= len(buf_0):
            return

        # Prepare to do a grid-wide synchronization later
        grid = cuda.cg.this_grid()

        for step in range(timesteps):
            # Select the buffer from the previous timestep
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0

            # Get the current temperature associated with this point
            curr_temp = data[i]

            # Apply formula from finite difference equation
            if i == 0:
                # Left wall is held at T = 0
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                # Right wall is held at T = 0
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                # Interior points are a weighted average of their neighbors
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])

            # Write new value to the next buffer
            next_data[i] = next_temp

            # Wait for every thread to write before moving on
            grid.sync()

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)

    results = buf_1.copy_to_host()
    # Integral over the domain should be equal to its initial value.
    np.testing.assert_allclose(results.sum(), 10000)
    t = data.copy()  # (the same steps in NumPy: buf_1 holds the state after niter - 1)
    for _ in range(niter - 1):
        left, right = np.r_[0.0, t[:-1]], np.r_[t[1:], 0.0]
        t = t + 0.25 * (left - (2 * t) + right)
    np.testing.assert_allclose(results, t, rtol=1e-12, atol=1e-9)


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

"""Kernels written in Python (``numloom.cuda``) against their peers, on numloom's device.

On the CPU device: the tiled shared-memory transpose of an N x N float32 matrix against NumPy's
``a.T.copy()``, and a histogram with shared-memory atomics against ``np.bincount``.

On a GPU: the transpose (with the bandwidth it achieves, and a device-to-device copy's), the
histogram, SAXPY and numba-cuda's shared-memory matmul example against the same kernels
written in CUDA C++ for CuPy's ``RawKernel``; a loop of array code and a kernel (its time and
CUDA graphs an iteration); and the first-call time of a small kernel (translate, render,
NVRTC, load, launch). On the CPU the matmul's peer is NumPy's BLAS product.

    python benchmarks/kernels.py                        # the default device (CPU here)
    python benchmarks/kernels.py --device cuda --size 8192 --repeat 20

Kernels are timed as GPU programs run them: ``--repeat`` launches in a row, then one
``cuda.synchronize()`` (the launches queue while earlier ones run); a row shows the median,
over five such batches, of the time per launch. NumPy's calls are timed one by one. Results
are checked against NumPy before timing.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's numloom
import numloom as nl  # noqa: E402
from numloom import cuda  # noqa: E402

TILE = 32
ROWS = 8
BINS = 256
THREADS = 256


@cuda.jit
def tile_transpose(a_in, a_out):
    tile = cuda.shared.array((TILE, TILE + 1), np.float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a_in[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        a_out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]


@cuda.jit
def histogram(data, bins):
    local = cuda.shared.array(BINS, np.int32)
    t = cuda.threadIdx.x
    for b in range(t, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    for b in range(t, BINS, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local[b])


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = a * x[i] + y[i]


TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    """numba-cuda's documented shared-memory matmul (docs: "Matrix multiplication"), as is."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = np.float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


# The same kernels in CUDA C++, for CuPy's RawKernel.
CUPY_SOURCE = r"""
extern "C" __global__ void tile_transpose(const float *a_in, float *a_out, long long n) {
    __shared__ float tile[32][33];
    long long x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = a_in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) a_out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
extern "C" __global__ void histogram(const int *data, int *bins, long long n) {
    __shared__ int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[data[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
extern "C" __global__ void fast_matmul(const float *A, const float *B, float *C, long long n) {
    __shared__ float sA[16][16], sB[16][16];
    long long x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float tmp = 0.0f;
    for (int i = 0; i < gridDim.x; i++) {
        sA[ty][tx] = 0;
        sB[ty][tx] = 0;
        if (y < n && tx + i * 16 < n) sA[ty][tx] = A[y * n + tx + i * 16];
        if (x < n && ty + i * 16 < n) sB[ty][tx] = B[(ty + i * 16) * n + x];
        __syncthreads();
        for (int j = 0; j < 16; j++) tmp += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    if (y < n && x < n) C[y * n + x] = tmp;
}
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def median_time(call, repeat: int, sync=None, batches: int = 5) -> float:
    """Seconds per call: batches of ``repeat`` calls, each batch ending with ``sync()``."""
    sync = sync or (lambda: None)
    call()  # first call apart: compiles, allocates
    sync()
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        sync()
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times)


def histogram_blocks(n: int, device: str) -> int:
    """Eight elements per thread: on the CPU a block's threads run in turn, and short strided
    loops keep each block's reads within the caches."""
    return max(1, n // (THREADS * 8))


# --- numloom ----------------------------------------------------------------------------------


def numloom_cases(size: int, count: int, device: str):
    """(name, numloom call, result getter, NumPy reference) per kernel."""
    rng = np.random.default_rng(0)
    a_host = rng.random((size, size), np.float32)
    data_host = rng.integers(0, BINS, count).astype(np.int32)
    a = nl.asarray(a_host)
    out = nl.zeros((size, size), np.float32)
    data = nl.asarray(data_host)
    x, y = nl.asarray(rng.random(count, np.float32)), nl.asarray(rng.random(count, np.float32))

    def transpose():
        tile_transpose[(size // TILE, size // TILE), (TILE, ROWS)](a, out)

    bins = nl.zeros(BINS, np.int32)

    def hist():  # counts add up over the launches, each reading the one before
        histogram[histogram_blocks(count, device), THREADS](data, bins)

    def axpy():
        saxpy.forall(count, THREADS)(np.float32(2.0), x, y)

    m = matmul_size(device)
    ma, mb = rng.integers(-4, 4, (m, m)).astype(np.float32), rng.integers(-4, 4, (m, m)).astype(
        np.float32)  # (small integers: every order of the sums is exact)
    A, B, C = nl.asarray(ma), nl.asarray(mb), nl.zeros((m, m), np.float32)

    def matmul():
        fast_matmul[(m // TPB, m // TPB), (TPB, TPB)](A, B, C)

    reference = np.bincount(data_host, minlength=BINS)
    cases = [
        ("transpose", transpose, lambda: out.get(), a_host.T),
        ("histogram", hist, lambda: bins.get(), reference),
        ("saxpy", axpy, None, None),
        ("matmul", matmul, lambda: C.get(), ma @ mb),
    ]
    return cuda.synchronize, cases, (a_host, data_host, x, y, ma, mb)


def matmul_size(device: str) -> int:
    return 2048 if device.startswith("cuda") else 256


def mixed_loop(count: int, iterations: int = 100) -> tuple:
    """A loop mixing array code and a Python kernel (``y = y * 0.5 + x``, then SAXPY on y):
    seconds per iteration and CUDA graphs launched per iteration (a launch and the pending
    work it reads run as one graph)."""
    rng = np.random.default_rng(1)
    xh = rng.random(count, np.float32)
    x, y = nl.asarray(xh), nl.zeros(count, np.float32)
    yh = np.zeros(count, np.float32)

    def step(y):
        y = y * np.float32(0.5) + x
        saxpy.forall(count, THREADS)(np.float32(2.0), x, y)
        return y

    y = step(y)  # (compiles)
    nl.sync()
    for _ in range(2):
        yh = yh * np.float32(0.5) + xh
        yh = np.float32(2.0) * xh + yh
    before, start = nl.stats()["graphs_launched"], time.perf_counter()
    for _ in range(iterations):
        y = step(y)
    nl.sync()
    seconds = (time.perf_counter() - start) / iterations
    graphs = (nl.stats()["graphs_launched"] - before) / iterations
    for _ in range(iterations):
        yh = yh * np.float32(0.5) + xh
        yh = np.float32(2.0) * xh + yh
    ok = np.allclose(y.get(), yh, rtol=1e-5)
    return seconds, graphs, ok


def first_call_compile() -> float:
    """Seconds from the first launch of a kernel never seen before to its result."""
    seed = random.randrange(1 << 30)
    namespace = {"cuda": cuda, "SEED": seed}
    source = "def fresh(x):\n    i = cuda.grid(1)\n    if i < x.shape[0]:\n        x[i] = x[i] * 2 + SEED\n"
    path = f"/tmp/numloom_bench_kernel_{seed}.py"
    with open(path, "w") as f:
        f.write(source)
    exec(compile(source, path, "exec"), namespace)
    kernel = cuda.jit(namespace["fresh"])
    x = nl.zeros(1024, np.float32)
    start = time.perf_counter()
    kernel[4, THREADS](x)
    cuda.synchronize()
    return time.perf_counter() - start


# --- peers --------------------------------------------------------------------------------------


def numpy_peers(host):
    a_host, data_host, x, y, ma, mb = host
    xh, yh = x.get(), y.get()
    return {
        "transpose": lambda: a_host.T.copy(),
        "histogram": lambda: np.bincount(data_host, minlength=BINS),
        "saxpy": lambda: np.add(np.float32(2.0) * xh, yh, out=yh),
        "matmul": lambda: ma @ mb,
    }


def cupy_peers(host, size: int, count: int):
    import cupy as cp

    module = cp.RawModule(code=CUPY_SOURCE)
    a_host, data_host, _, _, ma, mb = host
    m = ma.shape[0]
    A, B, C = cp.asarray(ma), cp.asarray(mb), cp.zeros((m, m), cp.float32)

    def matmul():
        module.get_function("fast_matmul")((m // TPB, m // TPB), (TPB, TPB),
                                           (A, B, C, np.int64(m)))  # fmt: skip

    a, out = cp.asarray(a_host), cp.empty((size, size), cp.float32)
    data = cp.asarray(data_host)
    x, y = cp.asarray(np.random.random(count).astype(np.float32)), cp.zeros(count, cp.float32)

    def transpose():
        module.get_function("tile_transpose")((size // TILE, size // TILE), (TILE, ROWS),
                                              (a, out, np.int64(size)))  # fmt: skip

    bins = cp.zeros(BINS, cp.int32)

    def hist():
        module.get_function("histogram")((histogram_blocks(count, "cuda"),), (THREADS,),
                                         (data, bins, np.int64(count)))  # fmt: skip

    def axpy():
        module.get_function("saxpy")((-(-count // THREADS),), (THREADS,),
                                     (np.float32(2.0), x, y, np.int64(count)))  # fmt: skip

    def copy():
        cp.copyto(out, a)

    calls = {"transpose": transpose, "histogram": hist, "saxpy": axpy, "copy": copy,
             "matmul": matmul}  # fmt: skip
    return calls, cp.cuda.get_current_stream().synchronize


# --- the table ----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default: numloom's default")
    parser.add_argument("--size", type=int, help="transpose size N (default 4096; 8192 on a GPU)")
    parser.add_argument("--count", type=int, help="histogram and SAXPY elements")
    parser.add_argument("--repeat", type=int, default=10, help="launches per timed batch")
    args = parser.parse_args()
    if args.device:
        nl.set_device(args.device)
    device = nl.get_device()
    gpu = device.startswith("cuda")
    size = args.size or (8192 if gpu else 4096)
    count = args.count or (1 << 28 if gpu else 1 << 24)
    sync, cases, host = numloom_cases(size, count, device)
    peers, peer_sync = cupy_peers(host, size, count) if gpu else (numpy_peers(host), None)
    peer_name = "CuPy RawKernel" if gpu else "NumPy"
    print(f"numloom {nl.config.VERSION} kernels on {device}: transpose {size}x{size} float32, "
          f"histogram and SAXPY of {count} elements; per launch, batches of {args.repeat}")  # fmt: skip
    print(f"{'kernel':<12} {'numloom ms':>11} {peer_name + ' ms':>18} {'ratio':>7}  note")
    failed = False
    for name, call, result, want in cases:
        if want is not None:
            call()
            ok = np.array_equal(result(), want)
            failed |= not ok
        else:
            ok = True
        ours = median_time(call, args.repeat, sync)
        theirs = median_time(peers[name], args.repeat, peer_sync) if name in peers else None
        note = "" if ok else "RESULT DIFFERS"
        if name == "transpose":
            note += f" {2 * size * size * 4 / ours / 1e9:.1f} GB/s"
            if "copy" in peers:
                copy = median_time(peers["copy"], args.repeat, peer_sync)
                note += f" (device copy {2 * size * size * 4 / copy / 1e9:.1f} GB/s)"
        ratio = f"{theirs / ours:7.2f}" if theirs else "      -"
        peer = f"{theirs * 1e3:18.3f}" if theirs else f"{'-':>18}"
        print(f"{name:<12} {ours * 1e3:11.3f} {peer} {ratio}  {note.strip()}")
    seconds, graphs, ok = mixed_loop(count // 16)
    failed |= not ok
    print(f"loop of array code and a kernel (SAXPY of {count // 16}): {seconds * 1e3:.3f} ms "
          f"an iteration, {graphs:g} CUDA graphs an iteration{'' if ok else ' RESULT DIFFERS'}")
    print(f"first call of a new small kernel (translate, compile, launch): "
          f"{first_call_compile() * 1e3:.0f} ms")  # fmt: skip
    print("ratio: the peer's time over numloom's (above 1: numloom is faster)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Where a boolean device array is true, found on the device: ``a[mask]``, ``nonzero``,
``flatnonzero`` and ``argwhere`` on a GPU, without copying the mask to the host.

The mask is cut into tiles of ``TILE`` elements, one block each. Three launches, in stream order:

1. ``nl_true_counts``: each block counts its tile's true elements;
2. ``nl_true_offsets``: one block turns the counts into each tile's first output position
   (an exclusive scan) and the total, which is copied to the host: the result's length;
3. ``nl_true_positions``: each block writes the flat positions of its tile's true elements,
   in order, from its tile's offset. Within a tile the threads read 256 consecutive bytes per
   round (coalesced) and rank them with warp ballots.

The length is the only value that goes to the host (8 bytes); the positions stay on the device,
as ``int64``, for the gather or scatter that uses them.
"""

from __future__ import annotations

import numpy as np

from ..core.realize import count
from .cuda_device import _check, _get, fixed_functions
from .cuda_memory import DeviceArray

THREADS = 256
ROUNDS = 8
TILE = THREADS * ROUNDS
SCAN_THREADS = 1024

# The tiles both kinds of compaction share, and the writing of a tile's kept elements: the
# threads read 256 consecutive elements a round and rank the kept ones with warp ballots.
TILES = r"""
#define NL_THREADS 256
#define NL_ROUNDS 8
#define NL_TILE (NL_THREADS * NL_ROUNDS)
#define NL_WARPS (NL_THREADS / 32)

template <typename Out, typename Keep, typename Value>
__device__ __forceinline__ void nl_compact_tile(const long long n,
                                                const long long *__restrict__ offsets,
                                                Out *__restrict__ out, Keep keep, Value value) {
    __shared__ int s_warp[NL_WARPS];
    const long long base = (long long)blockIdx.x * NL_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned below = (1u << lane) - 1u;
    long long next = offsets[blockIdx.x];
    for (int r = 0; r < NL_ROUNDS; r++) {
        const long long i = base + r * NL_THREADS + threadIdx.x;
        const bool flag = i < n && keep(i);
        const unsigned ballot = __ballot_sync(0xffffffffu, flag);
        if (lane == 0) s_warp[warp] = __popc(ballot);
        __syncthreads();
        int before = 0, round_total = 0;
        for (int w = 0; w < NL_WARPS; w++) {
            const int c = s_warp[w];
            before += w < warp ? c : 0;
            round_total += c;
        }
        if (flag) out[next + before + __popc(ballot & below)] = value(i);
        next += round_total;
        __syncthreads();
    }
}
"""

SOURCE = TILES + r"""

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_true_counts(
        const unsigned char *__restrict__ mask, const long long n, int *__restrict__ counts) {
    const long long base = (long long)blockIdx.x * NL_TILE;
    int total = 0;
    for (int r = 0; r < NL_ROUNDS; r++) {
        const long long i = base + r * NL_THREADS + threadIdx.x;
        total += __syncthreads_count(i < n && mask[i] != 0);
    }
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(1024) nl_true_offsets(
        const int *__restrict__ counts, const long long tiles, long long *__restrict__ offsets,
        long long *__restrict__ total) {
    __shared__ long long s[1024];
    const long long per = (tiles + 1023) / 1024;
    const long long first = threadIdx.x * per;
    long long mine = 0;
    for (long long t = first; t < first + per && t < tiles; t++) mine += counts[t];
    s[threadIdx.x] = mine;
    __syncthreads();
    for (int step = 1; step < 1024; step *= 2) {  // inclusive scan of the per-thread sums
        const long long add = threadIdx.x >= step ? s[threadIdx.x - step] : 0;
        __syncthreads();
        s[threadIdx.x] += add;
        __syncthreads();
    }
    long long run = s[threadIdx.x] - mine;
    for (long long t = first; t < first + per && t < tiles; t++) {
        offsets[t] = run;
        run += counts[t];
    }
    if (threadIdx.x == 1023) total[0] = s[1023];
}

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_true_positions(
        const unsigned char *__restrict__ mask, const long long n,
        const long long *__restrict__ offsets, long long *__restrict__ out) {
    nl_compact_tile(n, offsets, out, [&](long long i) { return mask[i] != 0; },
                    [&](long long i) { return i; });
}
"""


# The first element of each run of equal elements of a sorted array (``unique``'s values): the
# same tiles and ballots, an element's flag being that it differs from the one before it.
RUNS_SOURCE = TILES + r"""

__device__ __forceinline__ bool nl_starts_run(const NL_T *__restrict__ a, const long long i,
                                              const int equal_nan) {
    if (i == 0) return true;
    const NL_T x = a[i], y = a[i - 1];
#if NL_FLOAT
    return !(x == y || (equal_nan && x != x && y != y));
#else
    return x != y;
#endif
}

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_run_counts(
        const NL_T *__restrict__ a, const long long n, const int equal_nan,
        int *__restrict__ counts) {
    const long long base = (long long)blockIdx.x * NL_TILE;
    int total = 0;
    for (int r = 0; r < NL_ROUNDS; r++) {
        const long long i = base + r * NL_THREADS + threadIdx.x;
        total += __syncthreads_count(i < n && nl_starts_run(a, i, equal_nan));
    }
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_run_firsts(
        const NL_T *__restrict__ a, const long long n, const int equal_nan,
        const long long *__restrict__ offsets, NL_T *__restrict__ out) {
    nl_compact_tile(n, offsets, out, [&](long long i) { return nl_starts_run(a, i, equal_nan); },
                    [&](long long i) { return a[i]; });
}
"""

_RUN_TYPES = {"b1": "unsigned char", "i1": "signed char", "u1": "unsigned char", "i2": "short",
              "u2": "unsigned short", "i4": "int", "u4": "unsigned int", "i8": "long long",
              "u8": "unsigned long long", "f4": "float", "f8": "double"}  # fmt: skip


def runs_source(dtype) -> str | None:
    """``RUNS_SOURCE`` for elements of ``dtype``, or None for a dtype it does not compare
    (float16, complex, extended precision)."""
    dtype = np.dtype(dtype)
    ctype = _RUN_TYPES.get(f"{dtype.kind}{dtype.itemsize}")
    if ctype is None:
        return None
    return f"#define NL_T {ctype}\n#define NL_FLOAT {int(dtype.kind == 'f')}\n" + RUNS_SOURCE


def _functions(device: str) -> dict:
    return fixed_functions(device, "nl_true_positions", SOURCE,
                           ("nl_true_counts", "nl_true_offsets", "nl_true_positions"))  # fmt: skip


def true_positions(mask: DeviceArray, offset: int, n: int, device: str) -> DeviceArray:
    """The flat positions (``int64``, in order) of the true elements of the ``n`` bytes of
    ``mask`` from element ``offset`` on, as a new device array."""
    functions = _functions(device)
    start = np.uint64(mask.ptr + offset)
    return _compacted(device, n, np.int64, functions["nl_true_counts"], (start, np.int64(n)),
                      functions["nl_true_positions"], (start, np.int64(n)))  # fmt: skip


def run_firsts(pointer: int, dtype, n: int, device: str, equal_nan: bool = True):
    """The first element of each run of equal elements among the ``n`` elements of ``dtype``
    of a sorted array at device address ``pointer`` (``unique``'s values; with ``equal_nan``
    every NaN is one run), in order, as a new device array; None for a dtype ``runs_source``
    does not take."""
    source = runs_source(dtype)
    if source is None:
        return None
    dtype = np.dtype(dtype)
    functions = fixed_functions(device, f"nl_runs_{dtype.kind}{dtype.itemsize}", source,
                                ("nl_run_counts", "nl_run_firsts"))  # fmt: skip
    args = (np.uint64(pointer), np.int64(n), np.int32(bool(equal_nan)))
    return _compacted(device, n, dtype, functions["nl_run_counts"], args,
                      functions["nl_run_firsts"], args)  # fmt: skip


def _compacted(device: str, n: int, dtype, counter, counter_args: tuple, writer,
               writer_args: tuple) -> DeviceArray:
    """A compaction of ``n`` elements in three launches: ``counter`` counts each tile's kept
    elements into ``counts``, a scan makes each tile's first output position and the total
    (read back: the result's length), ``writer`` writes the kept elements (its arguments,
    then the offsets and the output)."""
    from cuda.bindings import driver
    from cuda.core import LaunchConfig, launch

    stream = _get(device).stream
    tiles = max(1, -(-n // TILE))
    counts = DeviceArray((tiles,), np.int32, device)
    offsets = DeviceArray((tiles,), np.int64, device)
    total = DeviceArray((1,), np.int64, device)
    launch(stream, LaunchConfig(grid=tiles, block=THREADS), counter, *counter_args,
           np.uint64(counts.ptr))  # fmt: skip
    launch(stream, LaunchConfig(grid=1, block=SCAN_THREADS), _functions(device)["nl_true_offsets"],
           np.uint64(counts.ptr), np.int64(tiles), np.uint64(offsets.ptr),
           np.uint64(total.ptr))  # fmt: skip
    found = np.zeros(1, np.int64)
    stream.sync()
    _check(driver.cuMemcpyDtoH(found.ctypes.data, total.ptr, 8), "cuMemcpyDtoH")
    count("device_to_host_bytes", 8)
    out = DeviceArray((int(found[0]),), dtype, device)
    if found[0]:
        launch(stream, LaunchConfig(grid=tiles, block=THREADS), writer, *writer_args,
               np.uint64(offsets.ptr), np.uint64(out.ptr))  # fmt: skip
    count("device_compactions")
    return out

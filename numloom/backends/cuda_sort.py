"""Sorting, searching and counting on the GPU with numloom's own kernels: ``sort``, ``argsort``,
``searchsorted``, ``histogram`` and ``bincount`` of numloom arrays on a CUDA device, on numloom's
stream, nothing copied to the host.

Sorting is an LSD radix sort over 8-bit digits. Each element's key is its bits mapped to an
unsigned integer that orders as NumPy sorts (``encode``): integers with their sign bit flipped,
floats with the sign trick (negative: all bits flipped, else the sign bit) and every NaN last.
Each digit is one pass of three launches:

1. ``nl_sort_count``: each block counts the digits of its tile of ``TILE`` elements;
2. ``nl_sort_scan``: one block per digit turns that digit's counts into each tile's offset
   within the digit (an exclusive scan), and the digit's total;
3. ``nl_sort_scatter``: each block ranks its tile's elements stably by digit (warp-level
   multisplit: ``__match_any_sync`` finds a lane's peers, per-warp digit counters in shared
   memory), reorders the tile in shared memory and writes it out digit run by digit run, so
   the writes to global memory are coalesced.

The first pass reads the input and encodes it on the fly, the last decodes into the output, so
a sort of ``n`` float32 reads and writes the keys once per pass and nothing more. ``argsort``
carries each element's position as a value (``uint32``, written as ``int64`` by the last pass).
Rows of an N-D array (sorting along the last axis) are segments: after the key passes, stable
passes over each element's row number (its position divided by the row length) put the rows
back in order, each one sorted.

Searching (``nl_search``) is a binary search per needle over the encoded keys; a histogram
(``nl_histogram``) finds each element's bin by binary search over the edges and counts it with
shared-memory atomics (one private histogram per block when the bins fit, else global atomics);
``nl_bincount`` counts non-negative integers the same way.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.realize import count
from . import cuda_cub
from . import cuda_library as lib
from .cuda_device import _get, fixed_functions

THREADS = 256
ITEMS = 16
TILE = THREADS * ITEMS
RADIX_BITS = 8
SCAN_THREADS = 1024
SHARED_BINS = 1024  # histograms with at most this many bins count in shared memory first
MAX_ELEMENTS = 2**32 - 1  # positions and offsets are 32-bit

_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}

COMMON = r"""
typedef NL_T T;                      // the elements' bits
typedef NL_U U;                      // a key: the bits mapped to an order-preserving unsigned
typedef unsigned int V;              // a value carried with a key: a position (or raw bits)
#define NL_THREADS 256
#define NL_ITEMS 16
#define NL_TILE (NL_THREADS * NL_ITEMS)
#define NL_WARPS (NL_THREADS / 32)
#define NL_FULL 0xffffffffu
#define NL_SHARED_BINS 1024

__device__ __forceinline__ U nl_encode(T x) {
#if NL_FLOAT
    const T sign = (T)((T)1 << (NL_BITS - 1));
    const T magnitude = (T)(x & (T)~sign);
    if (magnitude > (T)NL_EXP_MASK) return NL_MERGED ? (U)(T)~(T)0 : (U)(T)(magnitude ^ sign);
    if (NL_MERGED && magnitude == 0) return (U)sign;   // -0.0 sorts as 0.0
    return (U)(T)((x & sign) ? (T)~x : (T)(x ^ sign));
#elif NL_SIGNED
    return (U)(T)(x ^ (T)((T)1 << (NL_BITS - 1)));
#else
    return (U)x;
#endif
}

__device__ __forceinline__ T nl_decode(U key) {
    const T k = (T)key;
#if NL_FLOAT
    const T sign = (T)((T)1 << (NL_BITS - 1));
    return (k & sign) ? (T)(k ^ sign) : (T)~k;
#elif NL_SIGNED
    return (T)(k ^ (T)((T)1 << (NL_BITS - 1)));
#else
    return k;
#endif
}

// the digit of an element in a pass: of its key, or (segments > 0) of its row number
__device__ __forceinline__ unsigned nl_digit(U key, V value, int shift, unsigned segment) {
    if (segment) return ((value / segment) >> shift) & 255u;
    return (unsigned)(key >> shift) & 255u;
}

__device__ __forceinline__ U nl_load_key(const void *in, int first, long long i) {
    return first ? nl_encode(((const T *)in)[i]) : ((const U *)in)[i];
}

__device__ __forceinline__ V nl_load_value(const void *in, const V *values, int mode,
                                           long long i) {
    if (mode == 1) return values[i];
    if (mode == 2) return (V)i;
    if (mode == 3) return (V)((const T *)in)[i];
    return 0;
}

// exclusive scan of one value per thread over the block (NL_THREADS threads)
__device__ unsigned nl_block_scan(unsigned x, unsigned *s_warp) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned inclusive = x;
    for (int step = 1; step < 32; step *= 2) {
        const unsigned up = __shfl_up_sync(NL_FULL, inclusive, step);
        if (lane >= step) inclusive += up;
    }
    __syncthreads();
    if (lane == 31) s_warp[warp] = inclusive;
    __syncthreads();
    unsigned before = 0;
    for (int w = 0; w < warp; w++) before += s_warp[w];
    return before + inclusive - x;
}

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_sort_count(
        const void *__restrict__ keys, const int first, const long long n, const int shift,
        const V *__restrict__ values, const unsigned segment, unsigned *__restrict__ counts,
        const int tiles) {
    __shared__ unsigned s_count[256];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    s_count[threadIdx.x] = 0;
    __syncthreads();
    const long long base = (long long)blockIdx.x * NL_TILE + warp * (32 * NL_ITEMS) + lane;
    for (int j = 0; j < NL_ITEMS; j++) {
        const long long i = base + j * 32;
        unsigned d = 256;
        if (i < n) d = nl_digit(segment ? 0 : nl_load_key(keys, first, i),
                                segment ? values[i] : 0, shift, segment);
        const unsigned peers = __match_any_sync(NL_FULL, d);
        if (d < 256 && lane == 31 - __clz(peers)) atomicAdd(&s_count[d], __popc(peers));
    }
    __syncthreads();
    counts[(long long)threadIdx.x * tiles + blockIdx.x] = s_count[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(1024) nl_sort_scan(
        unsigned *__restrict__ counts, const int tiles, unsigned *__restrict__ totals) {
    __shared__ unsigned s[1024];
    unsigned *row = counts + (long long)blockIdx.x * tiles;
    const int per = (tiles + 1023) / 1024;
    const int begin = threadIdx.x * per;
    const int end = min(begin + per, tiles);
    unsigned mine = 0;
    for (int t = begin; t < end; t++) mine += row[t];
    s[threadIdx.x] = mine;
    __syncthreads();
    for (int step = 1; step < 1024; step *= 2) {
        const unsigned add = threadIdx.x >= step ? s[threadIdx.x - step] : 0;
        __syncthreads();
        s[threadIdx.x] += add;
        __syncthreads();
    }
    unsigned run = s[threadIdx.x] - mine;
    for (int t = begin; t < end; t++) {
        const unsigned c = row[t];
        row[t] = run;
        run += c;
    }
    if (threadIdx.x == 1023) totals[blockIdx.x] = s[1023];
}

// mode: values 0 none, 1 loaded, 2 positions, 3 the input's bits; wide: write values as int64
extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_sort_scatter(
        const void *__restrict__ keys, const int first, const int last, const long long n,
        const int shift, const V *__restrict__ values, const int mode, const unsigned segment,
        const unsigned *__restrict__ offsets, const unsigned *__restrict__ totals,
        const int tiles, void *__restrict__ keys_out, void *__restrict__ values_out,
        const int wide) {
    __shared__ unsigned s_rank[NL_WARPS][256];
    __shared__ unsigned s_base[256];
    __shared__ unsigned s_warp[NL_WARPS];
    __shared__ unsigned char s_digit[NL_TILE];
    __shared__ __align__(16) unsigned char s_exchange[NL_TILE * (sizeof(U) > sizeof(V) ? sizeof(U) : sizeof(V))];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned below = (1u << lane) - 1u;
    const long long tile = (long long)blockIdx.x * NL_TILE;
    const int valid = (int)min((long long)NL_TILE, n - tile);
    for (int w = 0; w < NL_WARPS; w++) s_rank[w][threadIdx.x] = 0;
    __syncthreads();

    U key[NL_ITEMS];
    V value[NL_ITEMS];
    unsigned rank[NL_ITEMS];
    const long long base = tile + warp * (32 * NL_ITEMS) + lane;
    for (int j = 0; j < NL_ITEMS; j++) {
        const long long i = base + j * 32;
        key[j] = 0;
        value[j] = 0;
        if (i < n) {
            key[j] = nl_load_key(keys, first, i);
            value[j] = nl_load_value(keys, values, mode, i);
        }
    }
    for (int j = 0; j < NL_ITEMS; j++) {  // stable ranks within each warp, in element order
        const bool inside = base + j * 32 < n;
        const unsigned d = inside ? nl_digit(key[j], value[j], shift, segment) : 255u;
        const unsigned peers = __match_any_sync(NL_FULL, d);
        const unsigned before = s_rank[warp][d];
        __syncwarp();
        rank[j] = before + __popc(peers & below);
        if (lane == 31 - __clz(peers)) s_rank[warp][d] = before + __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    unsigned run = 0;  // thread t: digit t, its warps' starts, then the tile's digit starts
    for (int w = 0; w < NL_WARPS; w++) {
        const unsigned c = s_rank[w][threadIdx.x];
        s_rank[w][threadIdx.x] = run;
        run += c;
    }
    const unsigned start = nl_block_scan(run, s_warp);
    const unsigned digit_base = nl_block_scan(totals[threadIdx.x], s_warp);
    for (int w = 0; w < NL_WARPS; w++) s_rank[w][threadIdx.x] += start;
    s_base[threadIdx.x] = digit_base + offsets[(long long)threadIdx.x * tiles + blockIdx.x] - start;
    __syncthreads();

    U *s_key = (U *)s_exchange;
    for (int j = 0; j < NL_ITEMS; j++) {
        const bool inside = base + j * 32 < n;
        const unsigned d = inside ? nl_digit(key[j], value[j], shift, segment) : 255u;
        rank[j] += s_rank[warp][d];
        if (keys_out) s_key[rank[j]] = key[j];
        s_digit[rank[j]] = (unsigned char)d;
    }
    __syncthreads();
    if (keys_out) {
        for (int r = 0; r < NL_ITEMS; r++) {
            const int p = r * NL_THREADS + threadIdx.x;
            if (p < valid) {
                const long long to = (long long)(unsigned)(s_base[s_digit[p]] + p);
                if (last) ((T *)keys_out)[to] = nl_decode(s_key[p]);
                else ((U *)keys_out)[to] = s_key[p];
            }
        }
        __syncthreads();
    }
    if (values_out) {
        V *s_value = (V *)s_exchange;
        for (int j = 0; j < NL_ITEMS; j++) s_value[rank[j]] = value[j];
        __syncthreads();
        for (int r = 0; r < NL_ITEMS; r++) {
            const int p = r * NL_THREADS + threadIdx.x;
            if (p < valid) {
                const long long to = (long long)(unsigned)(s_base[s_digit[p]] + p);
                if (wide) ((long long *)values_out)[to] = (long long)s_value[p];
                else ((V *)values_out)[to] = s_value[p];
            }
        }
    }
}

// the position of each needle in the sorted haystack: the first element >= it (or > it)
extern "C" __global__ void nl_search(
        const T *__restrict__ sorted, const long long n, const T *__restrict__ needles,
        const long long m, const int right, long long *__restrict__ out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const U key = nl_encode(needles[i]);
    long long lo = 0, hi = n;
    while (lo < hi) {
        const long long mid = lo + ((hi - lo) >> 1);
        const U at = nl_encode(sorted[mid]);
        if (right ? at <= key : at < key) lo = mid + 1;
        else hi = mid;
    }
    out[i] = lo;
}

// the bin of a key among bins edges[0..bins] (the last one closed), or -1 outside them
__device__ __forceinline__ int nl_bin(U key, const U *edges, int bins) {
    if (key < edges[0] || key > edges[bins]) return -1;
    int lo = 0, hi = bins;
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (edges[mid] <= key) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Counting into bins: in shared memory where `bins` fit there (then added to the global bins
// once a block), else straight into the global bins. With `weights`, sums of the weights.
static __device__ __forceinline__ void nl_tally_clear(const bool shared, const long long bins,
        unsigned *s_count, double *s_sum) {
    if (!shared) return;
    for (int b = threadIdx.x; b < bins; b += NL_THREADS) {
        s_count[b] = 0;
        s_sum[b] = 0.0;
    }
}

static __device__ __forceinline__ void nl_tally(const bool shared, const long long b,
        const double *__restrict__ weights, const long long i, unsigned *s_count, double *s_sum,
        unsigned long long *__restrict__ counts, double *__restrict__ sums) {
    if (shared) {
        if (weights) atomicAdd(&s_sum[b], weights[i]);
        else atomicAdd(&s_count[b], 1u);
    } else {
        if (weights) atomicAdd(&sums[b], weights[i]);
        else atomicAdd(&counts[b], 1ull);
    }
}

static __device__ __forceinline__ void nl_tally_flush(const bool shared, const long long bins,
        const double *__restrict__ weights, const unsigned *s_count, const double *s_sum,
        unsigned long long *__restrict__ counts, double *__restrict__ sums) {
    if (!shared) return;
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += NL_THREADS) {
        if (weights) {
            if (s_sum[b] != 0.0) atomicAdd(&sums[b], s_sum[b]);
        } else if (s_count[b]) {
            atomicAdd(&counts[b], (unsigned long long)s_count[b]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_histogram(
        const T *__restrict__ x, const long long n, const T *__restrict__ edges, const int bins,
        const double *__restrict__ weights, unsigned long long *__restrict__ counts,
        double *__restrict__ sums) {
    __shared__ U s_edges[NL_SHARED_BINS + 1];
    __shared__ unsigned s_count[NL_SHARED_BINS];
    __shared__ double s_sum[NL_SHARED_BINS];
    const bool shared = bins <= NL_SHARED_BINS;
    if (shared) {
        for (int b = threadIdx.x; b <= bins; b += NL_THREADS) s_edges[b] = nl_encode(edges[b]);
    }
    nl_tally_clear(shared, bins, s_count, s_sum);
    __syncthreads();
    const long long stride = (long long)gridDim.x * NL_THREADS;
    for (long long i = (long long)blockIdx.x * NL_THREADS + threadIdx.x; i < n; i += stride) {
        const U key = nl_encode(x[i]);
        int b;
        if (shared) {
            b = nl_bin(key, s_edges, bins);
        } else {  // (edges in global memory: a binary search over encoded loads)
            b = -1;
            if (key >= nl_encode(edges[0]) && key <= nl_encode(edges[bins])) {
                int lo = 0, hi = bins;
                while (hi - lo > 1) {
                    const int mid = (lo + hi) >> 1;
                    if (nl_encode(edges[mid]) <= key) lo = mid;
                    else hi = mid;
                }
                b = lo;
            }
        }
        if (b < 0) continue;
        nl_tally(shared, b, weights, i, s_count, s_sum, counts, sums);
    }
    nl_tally_flush(shared, bins, weights, s_count, s_sum, counts, sums);
}

// each element's bin among edges[0..bins] (the last closed), or -1
extern "C" __global__ void nl_bin_index(
        const T *__restrict__ x, const long long n, const T *__restrict__ edges, const int bins,
        long long *__restrict__ out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const U key = nl_encode(x[i]);
    long long b = -1;
    if (key >= nl_encode(edges[0]) && key <= nl_encode(edges[bins])) {
        int lo = 0, hi = bins;
        while (hi - lo > 1) {
            const int mid = (lo + hi) >> 1;
            if (nl_encode(edges[mid]) <= key) lo = mid;
            else hi = mid;
        }
        b = lo;
    }
    out[i] = b;
}

// counts (or sums of weights) of the non-negative integers below `bins` (others skipped)
extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_bincount(
        const long long *__restrict__ x, const long long n, const long long bins,
        const double *__restrict__ weights, unsigned long long *__restrict__ counts,
        double *__restrict__ sums) {
    __shared__ unsigned s_count[NL_SHARED_BINS];
    __shared__ double s_sum[NL_SHARED_BINS];
    const bool shared = bins <= NL_SHARED_BINS;
    nl_tally_clear(shared, bins, s_count, s_sum);
    __syncthreads();
    const long long stride = (long long)gridDim.x * NL_THREADS;
    for (long long i = (long long)blockIdx.x * NL_THREADS + threadIdx.x; i < n; i += stride) {
        const long long b = x[i];
        if (b < 0 || b >= bins) continue;
        nl_tally(shared, b, weights, i, s_count, s_sum, counts, sums);
    }
    nl_tally_flush(shared, bins, weights, s_count, s_sum, counts, sums);
}

extern "C" __global__ void nl_zero(unsigned long long *__restrict__ out, const long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0ull;
}

// a CUB sort's input (cuda_cub.py): each element's key, and (mode 2) its position or (mode 3)
// its bits as the value carried with it
extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_cub_encode(
        const T *__restrict__ in, U *__restrict__ keys, V *__restrict__ values, const int mode,
        const long long n) {
    const long long stride = (long long)gridDim.x * NL_THREADS;
    for (long long i = (long long)blockIdx.x * NL_THREADS + threadIdx.x; i < n; i += stride) {
        const T x = in[i];
        keys[i] = nl_encode(x);
        if (mode == 2) values[i] = (V)i;
        else if (mode == 3) values[i] = (V)x;
    }
}

// a CUB sort's output: the elements of sorted keys (in place), or positions as int64
extern "C" __global__ void __launch_bounds__(NL_THREADS) nl_cub_decode(
        U *__restrict__ keys, long long *__restrict__ positions, const V *__restrict__ values,
        const long long n) {
    const long long stride = (long long)gridDim.x * NL_THREADS;
    for (long long i = (long long)blockIdx.x * NL_THREADS + threadIdx.x; i < n; i += stride) {
        if (keys) ((T *)keys)[i] = nl_decode(keys[i]);
        if (positions) positions[i] = (long long)values[i];
    }
}
"""

KERNELS = ("nl_sort_count", "nl_sort_scan", "nl_sort_scatter", "nl_search", "nl_histogram",
           "nl_bin_index", "nl_bincount", "nl_zero", "nl_cub_encode", "nl_cub_decode")  # fmt: skip

_EXPONENT_MASKS = {2: "0x7C00", 4: "0x7F800000u", 8: "0x7FF0000000000000ull"}


def source(dtype, merged: bool) -> str:
    """The kernels' CUDA source for elements of ``dtype``. ``merged``: keys as NumPy compares
    (-0.0 equal to 0.0, every NaN one key, last), for ranks, searches and bins; else keys that
    decode back to the elements (-0.0 before 0.0; a NaN comes back without its sign)."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    float_ = dtype.kind == "f"
    lines = [
        f"#define NL_T {_UNSIGNED[size]}",
        f"#define NL_U {_UNSIGNED[max(size, 4)]}",
        f"#define NL_BITS {8 * size}",
        f"#define NL_FLOAT {int(float_)}",
        f"#define NL_SIGNED {int(dtype.kind == 'i')}",
        f"#define NL_MERGED {int(merged)}",
        f"#define NL_EXP_MASK {_EXPONENT_MASKS.get(size, '0') if float_ else '0'}",
    ]
    return "\n".join(lines) + "\n" + COMMON


def _functions(dtype, merged: bool, device: str) -> dict:
    dtype = np.dtype(dtype)
    merged = merged and dtype.kind == "f"  # (integers: the same keys either way)
    name = f"nl_sort_{dtype.kind}{dtype.itemsize}{'m' if merged else ''}"
    return fixed_functions(device, name, source(dtype, merged), KERNELS)


def _launch(device: str, function, grid: int, block: int, *args) -> None:
    from cuda.core import LaunchConfig, launch

    launch(lib.stream(device), LaunchConfig(grid=grid, block=block), function, *args)


def _ptr(x) -> np.uint64:
    return np.uint64(0 if x is None else x.ptr if hasattr(x, "ptr") else x)


def supports(dtype, size: int) -> bool:
    """Whether these kernels sort and search ``size`` elements of ``dtype`` (not complex, nor
    extended precision: keys of at most 8 bytes)."""
    dtype = np.dtype(dtype)
    return dtype.kind in "biuf" and dtype.itemsize <= 8 and size <= MAX_ELEMENTS


def _key_bits(dtype) -> int:
    dtype = np.dtype(dtype)
    return 8 if dtype.kind == "b" else 8 * dtype.itemsize


def sort_rows(a, keys: bool = True, indices: bool = False, exact: bool = False):
    """Each row of numloom array ``a`` (its last axis) sorted, stably: ``(sorted, positions)``,
    ``sorted`` of ``a``'s shape and dtype (None unless ``keys``) and ``positions`` the flat
    ``int64`` positions in ``a`` of the sorted elements (None unless ``indices``). ``exact``:
    equal floats (-0.0 and 0.0, NaNs) keep their order and bits, as NumPy's stable sort."""
    device, dtype, shape = a.device, a.dtype, a.shape
    n = math.prod(shape)
    row = shape[-1] if shape else 1
    rows = n // row if row else 0
    merged = (indices or exact) and dtype.kind == "f"
    if n == 0:
        return (lib.adopt(lib.empty(shape, dtype, device), device) if keys else None,
                lib.adopt(lib.empty(shape, np.int64, device), device) if indices else None)  # fmt: skip
    pointer, holder = lib.operand(a)
    if rows == 1 and dtype.kind in "iuf" and dtype.itemsize >= 4 and n >= cuda_cub.MIN_ELEMENTS:
        found = _cub_sort(a, pointer, dtype, device, keys, indices, merged)
        if found is not None:
            return found
    segment_passes = -(-(rows - 1).bit_length() // RADIX_BITS) if rows > 1 else 0
    raw_values = merged and not indices and rows == 1 and dtype.itemsize == 4
    positions = indices or segment_passes > 0 or (merged and not raw_values)
    key_size = max(dtype.itemsize, 4)
    passes = [(shift, 0) for shift in range(0, _key_bits(dtype), RADIX_BITS)]
    passes += [(RADIX_BITS * k, row) for k in range(segment_passes)]
    functions = _functions(dtype, merged, device)
    tiles = -(-n // TILE)
    counts = lib.empty((256 * tiles,), np.uint32, device)
    totals = lib.empty((256,), np.uint32, device)
    sorted_keys = lib.empty(shape, dtype, device)
    out_positions = lib.empty(shape, np.int64, device) if indices else None
    key_buffers = [lib.empty((n,), np.dtype(f"u{key_size}"), device) for _ in range(2)]
    value_buffers = ([lib.empty((n,), np.uint32, device) for _ in range(2)]
                     if positions or raw_values else None)  # fmt: skip
    decoded_keys = keys and not merged
    key_in, value_in = pointer, None
    mode = 2 if positions else 3 if raw_values else 0
    for k, (shift, segment) in enumerate(passes):
        first, last = k == 0, k == len(passes) - 1
        if last:
            key_out = sorted_keys if decoded_keys else None
            value_out = (out_positions if indices else
                         sorted_keys if raw_values else
                         value_buffers[k % 2] if keys and not decoded_keys else None)  # fmt: skip
        else:
            key_out = key_buffers[k % 2]
            value_out = value_buffers[k % 2] if value_buffers else None
        _launch(device, functions["nl_sort_count"], tiles, THREADS, _ptr(key_in),
                np.int32(first), np.int64(n), np.int32(shift), _ptr(value_in),
                np.uint32(segment), _ptr(counts), np.int32(tiles))  # fmt: skip
        _launch(device, functions["nl_sort_scan"], 256, SCAN_THREADS, _ptr(counts),
                np.int32(tiles), _ptr(totals))  # fmt: skip
        _launch(device, functions["nl_sort_scatter"], tiles, THREADS, _ptr(key_in),
                np.int32(first), np.int32(last), np.int64(n), np.int32(shift),
                _ptr(value_in), np.int32(mode), np.uint32(segment), _ptr(counts),
                _ptr(totals), np.int32(tiles), _ptr(key_out), _ptr(value_out),
                np.int32(last and indices))  # fmt: skip
        key_in, value_in, mode = key_out, value_out, 0 if value_out is None else 1
    del holder
    got_positions = lib.adopt(out_positions, device) if indices else None
    if not keys:
        return None, got_positions
    if decoded_keys or raw_values:
        return lib.adopt(sorted_keys, device), got_positions
    # floats ranked as NumPy compares them: the elements themselves, gathered
    flat = got_positions if indices else lib.adopt(value_in, device).astype(np.int64)
    return a.reshape(-1)[flat.reshape(-1)].reshape(shape), got_positions


def _cub_sort(a, pointer, dtype, device: str, keys: bool, indices: bool, merged: bool):
    """``sort_rows`` of one row of 4- or 8-byte elements by CUB's radix sort (``cuda_cub``):
    numloom's keys sorted with the positions (or, for 4-byte floats kept exactly, the elements'
    bits) they carry. None while CUB's sort is not built, or where it cannot run."""
    shape, n = a.shape, a.size
    raw_values = merged and not indices and dtype.itemsize == 4
    positions = indices or (merged and not raw_values)
    carried = np.dtype(np.uint32) if positions or raw_values else None
    key_dtype = np.dtype(f"u{dtype.itemsize}")
    found = cuda_cub.sort_for(device, key_dtype, carried)
    if found is None:
        return None
    count("cub_sorts")
    functions = _functions(dtype, merged, device)
    grid = _grid(n, device)
    key_buffers = [lib.empty(shape, dtype, device) for _ in range(2)]  # (keys, then elements)
    value_buffers = ([lib.empty(shape, dtype if raw_values else carried, device)
                      for _ in range(2)] if carried else None)  # fmt: skip
    _launch(device, functions["nl_cub_encode"], grid, THREADS, _ptr(pointer),
            _ptr(key_buffers[0]), _ptr(value_buffers[0] if carried else None),
            np.int32(3 if raw_values else 2 if positions else 0), np.int64(n))  # fmt: skip
    which = cuda_cub.sort(found, lib.stream(device), key_buffers, value_buffers, n, key_dtype,
                          carried, temp=lambda nbytes: lib.empty((nbytes,), np.uint8, device))  # fmt: skip
    sorted_keys, values = key_buffers[which], value_buffers[which] if carried else None
    decoded = keys and not merged
    out_positions = lib.empty(shape, np.int64, device) if indices else None
    if decoded or indices:
        _launch(device, functions["nl_cub_decode"], grid, THREADS,
                _ptr(sorted_keys if decoded else None), _ptr(out_positions), _ptr(values),
                np.int64(n))  # fmt: skip
    got_positions = lib.adopt(out_positions, device) if indices else None
    if not keys:
        return None, got_positions
    if decoded:
        return lib.adopt(sorted_keys, device), got_positions
    if raw_values:
        return lib.adopt(values, device), got_positions
    # 8-byte floats ranked as NumPy compares them: the elements themselves, gathered
    flat = got_positions if indices else lib.adopt(values, device).astype(np.int64)
    return a.reshape(-1)[flat.reshape(-1)].reshape(shape), got_positions


def search(sorted_, needles, right: bool):
    """``searchsorted`` of numloom arrays of one dtype: for each needle, the first position in
    1-D ``sorted_`` whose element is >= it (``right``: > it), as ``int64`` of ``needles``'
    shape. NaN sorts last, -0.0 equals 0.0, as in NumPy."""
    device = needles.device
    out = lib.empty(needles.shape, np.int64, device)
    m = needles.size
    if m:
        functions = _functions(sorted_.dtype, True, device)
        haystack, held = lib.operand(sorted_)
        pointer, holder = lib.operand(needles)
        _launch(device, functions["nl_search"], -(-m // THREADS), THREADS, _ptr(haystack),
                np.int64(sorted_.size), _ptr(pointer), np.int64(m), np.int32(right),
                _ptr(out))  # fmt: skip
        del held, holder
    return lib.adopt(out, device)


def _grid(n: int, device: str) -> int:
    return max(1, min(-(-n // THREADS), _get(device).sms * 8))


def _zeroed(length: int, dtype, device: str):
    out = lib.empty((length,), dtype, device)
    if length:
        functions = _functions(np.int64, True, device)
        _launch(device, functions["nl_zero"], -(-length // THREADS), THREADS, _ptr(out),
                np.int64(length))  # fmt: skip
    return out


def histogram(x, edges, weights=None):
    """Counts (``int64``; with ``weights``, sums of the ``float64`` weights) of the elements of
    numloom array ``x`` in the bins between consecutive ``edges`` (a 1-D numloom array of
    ``x``'s dtype, increasing), each bin closed on the left, the last one on both sides."""
    device, bins = x.device, edges.size - 1
    out = _zeroed(bins, np.float64 if weights is not None else np.int64, device)
    if x.size and bins > 0:
        functions = _functions(x.dtype, True, device)
        pointer, holder = lib.operand(x)
        edge_pointer, held = lib.operand(edges)
        weight_pointer, kept = lib.operand(weights) if weights is not None else (None, None)
        counts, sums = (None, out) if weights is not None else (out, None)
        _launch(device, functions["nl_histogram"], _grid(x.size, device), THREADS,
                _ptr(pointer), np.int64(x.size), _ptr(edge_pointer), np.int32(bins),
                _ptr(weight_pointer), _ptr(counts), _ptr(sums))  # fmt: skip
        del holder, held, kept
    return lib.adopt(out, device)


def bin_index(x, edges):
    """Each element's bin among ``edges`` (as in ``histogram``), ``int64``, -1 outside."""
    device = x.device
    out = lib.empty(x.shape, np.int64, device)
    if x.size:
        functions = _functions(x.dtype, True, device)
        pointer, holder = lib.operand(x)
        edge_pointer, held = lib.operand(edges)
        _launch(device, functions["nl_bin_index"], -(-x.size // THREADS), THREADS,
                _ptr(pointer), np.int64(x.size), _ptr(edge_pointer), np.int32(edges.size - 1),
                _ptr(out))  # fmt: skip
        del holder, held
    return lib.adopt(out, device)


def bincount(x, length: int, weights=None):
    """How often each integer in ``[0, length)`` occurs in numloom ``int64`` array ``x``
    (``int64``; with ``weights``, the sums of their ``float64`` weights)."""
    device = x.device
    out = _zeroed(length, np.float64 if weights is not None else np.int64, device)
    if x.size and length:
        functions = _functions(np.int64, True, device)
        pointer, holder = lib.operand(x)
        weight_pointer, kept = lib.operand(weights) if weights is not None else (None, None)
        counts, sums = (None, out) if weights is not None else (out, None)
        _launch(device, functions["nl_bincount"], _grid(x.size, device), THREADS,
                _ptr(pointer), np.int64(x.size), np.int64(length), _ptr(weight_pointer),
                _ptr(counts), _ptr(sums))  # fmt: skip
        del holder, kept
    return lib.adopt(out, device)


def true_positions(mask):
    """The flat positions (``int64``) where boolean numloom array ``mask`` is true."""
    from ..api.indexing import device_true_positions

    return device_true_positions(mask)


def run_firsts(sorted_, equal_nan: bool = True):
    """The first element of each run of equal elements of sorted one-axis numloom array
    ``sorted_`` (``unique``'s values, with ``equal_nan`` every NaN one run): three launches
    over the sorted elements, no mask or positions of their own; None for a dtype whose
    elements these kernels do not compare (float16)."""
    from . import cuda_nonzero

    pointer, holder = lib.operand(sorted_)
    found = cuda_nonzero.run_firsts(pointer, sorted_.dtype, sorted_.size, sorted_.device,
                                    equal_nan)  # fmt: skip
    del holder
    return None if found is None else lib.adopt(found, sorted_.device)

"""NumPy's random streams drawn on a GPU: ``Generator(PCG64)`` samples, bit for bit.

Every thread starts PCG64 where its samples begin by jumping ahead (``random_streams.jumps``):
by powers of two, or, within a tile, by one step from the tile's first draw.

- ``random`` and ``uniform`` take one draw per sample: thread ``g`` of ``G`` draws positions
  ``g, g + G, ...`` (a jump by ``G`` is one step), so writes are coalesced.
- The ziggurat samplers (``standard_normal``, ``standard_exponential``) take a variable number
  of draws: about 1% of attempts take more than one, or start over. Where each sample starts
  is worked out in parallel, tile by tile (``nl_tiles``): a block computes the attempt at every
  position of its tile and of a halo around it. A position is *sure* when no attempt in the
  ``NL_HALO`` positions before it can take draws past it: the chain of attempts from the start
  of the stream passes through every sure position. Each tile runs the chain from its first
  sure position to the next tile's, so tiles need no other tile's result. A small kernel
  jumps the stream to each tile's first draw (``nl_tile_bases``), a first pass counts each
  tile's samples, a scan turns counts into offsets, and a second pass writes the samples: each
  tile ranks its samples with a block scan, gathers them in order in shared memory and writes
  them out together. The position after the last sample comes back to the host (8 bytes): the
  number of draws taken, by which the host generator moves on.

A tile that cannot finish this way (an attempt longer than ``NL_HALO`` draws, more rare
positions than a tile can list: never seen in practice) flags the call, and the host draws it
with NumPy instead, from the same state: the numbers are the same.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..api import random_streams
from ..core.realize import count
from . import cuda_memory, cuda_nonzero
from .cuda_device import _check, _get, fixed_functions
from .cuda_memory import DeviceArray

FILL_THREADS = 256
FILL_LOG_GRID = 18  # 2**18 threads draw a fill, each every 2**18-th position
TILE_THREADS = 256
TILE = 4096  # positions a tile's chain covers (NL_TP)
SCAN_THREADS = cuda_nonzero.SCAN_THREADS
NEAR = 4352  # the jumps by 0 .. NEAR-1 draws a tile's threads take from its first (NL_SPAN)

# samplers with a variable number of draws: kind -> (kernel suffix, 32-bit draws?, draws per sample
# (an upper bound of the mean))
ZIGGURAT = {"normal64": (0, False, 1.03), "normal32": (1, True, 1.03),
            "exponential64": (2, False, 1.04), "exponential32": (3, True, 1.04)}  # fmt: skip

KERNELS = r"""
#define NL_TT 256
#define NL_TP 4096
#define NL_HALO 64
#define NL_TR 17
#define NL_SPAN (NL_TT * NL_TR)
#define NL_MAXSP 1024
#define NL_WARPS (NL_TT / 32)

/* each kind's sample type, draw size, and the tables its fast path reads (k and w, adjacent) */
template <int KIND> struct nl_kind {
    typedef double V; typedef V O; enum { unit32 = 0, fast_at = 0, fast_bytes = 4096 }; };
template <> struct nl_kind<1> {
    typedef float V; typedef V O; enum { unit32 = 1, fast_at = 12288, fast_bytes = 2048 }; };
template <> struct nl_kind<2> {
    typedef double V; typedef V O; enum { unit32 = 0, fast_at = 6144, fast_bytes = 4096 }; };
template <> struct nl_kind<3> {
    typedef float V; typedef V O; enum { unit32 = 1, fast_at = 15360, fast_bytes = 2048 }; };
/* integers: the bounded value (V), then offset into the output type (O) */
template <> struct nl_kind<4> {
    typedef nl_u64 V; typedef long long O; enum { unit32 = 1, fast_at = 0, fast_bytes = 0 }; };
template <> struct nl_kind<5> {
    typedef nl_u64 V; typedef long long O; enum { unit32 = 0, fast_at = 0, fast_bytes = 0 }; };
template <> struct nl_kind<6> {
    typedef nl_u64 V; typedef int O; enum { unit32 = 1, fast_at = 0, fast_bytes = 0 }; };
#define NL_FAST_BYTES 4096

template <int KIND>
static __device__ __forceinline__ int nl_fast(nl_u64 first, const unsigned char *t,
                                              typename nl_kind<KIND>::V *v, nl_u64 excl,
                                              nl_u64 threshold) {
    if (KIND == 4 || KIND == 6) return nl_lemire32((nl_u32)first, excl, threshold, (nl_u64 *)v);
    if (KIND == 5) return nl_lemire64(first, excl, threshold, (nl_u64 *)v);
    if (KIND == 0) return nl_normal64_fast(first, t, (double *)v);
    if (KIND == 1) return nl_normal32_fast((nl_u32)first, t, (float *)v);
    if (KIND == 2) return nl_exponential64_fast(first, t, (double *)v);
    return nl_exponential32_fast((nl_u32)first, t, (float *)v);
}

/* the stream at draw ``p`` of a call that starts at (s0, has0, buf0): its first draw, and
   ``r`` right after it */
static __device__ __forceinline__ nl_u64 nl_place(nl_src *r, nl_u128 s0, nl_u128 sb,
        long long jb, nl_u128 inc, const nl_u64 *jumps, long long p, int unit32, int has0,
        nl_u32 buf0) {
    r->inc = inc; r->used = 0; r->has = 0;
    if (unit32 && has0 && p == 0) { r->s = s0; return buf0; } /* the half the generator kept */
    const long long q = unit32 ? p - has0 : p;
    r->s = nl_near(sb, jumps, (unit32 ? q >> 1 : q) - jb);
    const nl_u64 drawn = nl_raw64(r);
    if (!unit32) return drawn;
    if (q & 1) return drawn >> 32;
    r->has = 1;
    r->buf = (nl_u32)(drawn >> 32);
    return drawn & 0xffffffffULL;
}

template <int KIND>
static __device__ __forceinline__ int nl_attempt(nl_u64 first, nl_src *r,
        const unsigned char *t, typename nl_kind<KIND>::V *v, nl_u64 excl, nl_u64 threshold) {
    if (KIND >= 4) return nl_fast<KIND>(first, t, v, excl, threshold); /* (one draw, always) */
    if (KIND == 0) return nl_normal64_from(first, r, t, (double *)v);
    if (KIND == 1) return nl_normal32_from((nl_u32)first, r, t, (float *)v);
    if (KIND == 2) return nl_exponential64_from(first, r, t, (double *)v);
    return nl_exponential32_from((nl_u32)first, r, t, (float *)v);
}

/* the first 64-bit draw of the tile whose first position is ``base`` */
static __device__ __forceinline__ long long nl_tile_draw(long long base, int unit32, int has0) {
    const long long pb = base < 0 ? 0 : base;
    return !unit32 ? pb : pb - has0 < 0 ? 0 : (pb - has0) >> 1;
}

template <int KIND, int WRITE>
static __device__ __forceinline__ void nl_tile(nl_u64 s0hi, nl_u64 s0lo, nl_u64 inchi,
        nl_u64 inclo, const nl_u64 *__restrict__ jumps, int has0, nl_u32 buf0,
        const unsigned char *__restrict__ t, long long n, int *__restrict__ counts,
        const long long *__restrict__ offsets, typename nl_kind<KIND>::O *__restrict__ out,
        long long *__restrict__ info, int mode, double loc, double scale, nl_u64 excl,
        nl_u64 threshold, nl_u64 off, const nl_u64 *__restrict__ bases) {
    typedef typename nl_kind<KIND>::V V;
    typedef typename nl_kind<KIND>::O O;
    __shared__ unsigned char s_c[NL_SPAN];    /* draws the attempt takes, 0x80: it accepts */
    __shared__ __align__(16) unsigned char s_t[NL_FAST_BYTES]; /* the kind's first tables */
    __shared__ V s_v[WRITE ? NL_SPAN : 1];
    __shared__ short s_sp[NL_MAXSP];          /* positions of the rare attempts, in order */
    __shared__ int s_cnt[NL_WARPS];           /* samples each warp gives */
    __shared__ int s_lo, s_hi, s_nsp;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long base = (long long)blockIdx.x * NL_TP - NL_HALO;
    const int unit32 = nl_kind<KIND>::unit32;
    /* the stream where this thread's positions are: one step a 64-bit draw */
    nl_src g = nl_src_at(s0hi, s0lo, inchi, inclo, jumps, 0);
    const nl_u128 s0 = g.s;
    long long have = -2; /* the 64-bit draw ``drawn`` is (g is right after it) */
    nl_u64 drawn = 0;
    const int i0 = threadIdx.x * NL_TR; /* this thread's positions: i0 .. i0 + NL_TR - 1 */
    const int fast_at = nl_kind<KIND>::fast_at, fast_bytes = nl_kind<KIND>::fast_bytes;
    for (int q = threadIdx.x; q < fast_bytes / 4; q += NL_TT)
        ((unsigned *)s_t)[q] = ((const unsigned *)(t + fast_at))[q];
    /* the stream at the tile's first 64-bit draw (nl_tile_bases); threads go on from there */
    const long long jb = nl_tile_draw(base, unit32, has0);
    nl_u128 sb;
    sb.hi = bases[2 * blockIdx.x];
    sb.lo = bases[2 * blockIdx.x + 1];
    __syncthreads(); /* (the tables in shared memory) */
    const unsigned char *tf = s_t - fast_at; /* (the fast path reads its tables from here) */
    unsigned rare_bits = 0; /* bit k: the attempt at position i0 + k is rare */
    for (int k = 0; k < NL_TR; k++) { /* the attempts accepted at once (the rest: below) */
        const int i = i0 + k;
        const long long p = base + i;
        unsigned char c = 0x81; /* one draw, accepted (before the stream: never output) */
        if (p >= 0) {
            nl_u64 first;
            if (unit32 && has0 && p == 0) {
                first = buf0;
            } else {
                const long long q = unit32 ? p - has0 : p;
                const long long j = unit32 ? q >> 1 : q;
                if (have != j) {
                    if (have + 1 != j) g.s = nl_near(sb, jumps, j - jb);
                    drawn = nl_raw64(&g);
                    have = j;
                }
                first = !unit32 ? drawn : (q & 1) ? (drawn >> 32) : (drawn & 0xffffffffULL);
            }
            V v = 0;
            if (!nl_fast<KIND>(first, tf, &v, excl, threshold)) {
                c = KIND >= 4 ? 0x01 : 0; /* (integers: rejected; else rare, finished below) */
                rare_bits |= 1u << k;
            }
            if (WRITE) s_v[i] = v;
        }
        s_c[i] = c;
    }
    __syncthreads();
    if (KIND >= 4) { /* integers: an attempt is one draw, so every position is sure */
        if (threadIdx.x == 0) { s_nsp = 0; s_lo = NL_HALO; s_hi = NL_HALO + NL_TP; }
    } else { /* the rare attempts, listed in order: a scan of each thread's count */
        const int mine = __popc(rare_bits);
        int scan = mine;
        for (int d = 1; d < 32; d *= 2) {
            const int add = __shfl_up_sync(0xffffffffu, scan, d);
            if (lane >= d) scan += add;
        }
        if (lane == 31) s_cnt[warp] = scan;
        __syncthreads();
        int at = scan - mine, nsp = 0;
        for (int w = 0; w < NL_WARPS; w++) {
            at += w < warp ? s_cnt[w] : 0;
            nsp += s_cnt[w];
        }
        for (unsigned bits = rare_bits; bits; bits &= bits - 1, at++)
            if (at < NL_MAXSP) s_sp[at] = (short)(i0 + __ffs(bits) - 1);
        if (threadIdx.x == 0) {
            if (nsp > NL_MAXSP) { info[2] = 1; nsp = NL_MAXSP; }
            s_nsp = nsp;
        }
    }
    __syncthreads();
    const int nsp = s_nsp;
    for (int s = threadIdx.x; s < nsp; s += NL_TT) { /* the rare attempts, one a thread */
        const int i = s_sp[s];
        nl_src r;
        const nl_u64 first = nl_place(&r, s0, sb, jb, g.inc, jumps, base + i, unit32, has0,
                                      buf0);
        V v = 0;
        const int ok = nl_attempt<KIND>(first, &r, t, &v, excl, threshold);
        long long used = 1 + r.used;
        if (used >= NL_HALO) { info[2] = 1; used = NL_HALO - 1; }
        s_c[i] = (unsigned char)used | (ok ? 0x80 : 0);
        if (WRITE) s_v[i] = v;
    }
    __syncthreads();
    if (KIND < 4 && threadIdx.x == 0) { /* the chain through the tile */
        int bounds[2] = {NL_HALO, NL_HALO + NL_TP};
        for (int b = 0; b < 2; b++) { /* the first sure position from bounds[b] on */
            int q = bounds[b];
            for (bool moved = true; moved;) {
                moved = false;
                for (int s = 0; s < nsp; s++) {
                    const int v = s_sp[s];
                    if (v >= q) break;
                    const int end = v + (s_c[v] & 0x3f);
                    if (v >= q - NL_HALO && end > q) { q = end; moved = true; }
                }
            }
            if (q > NL_SPAN - 1) { info[2] = 1; q = NL_SPAN - 1; }
            bounds[b] = q;
        }
        int cur = bounds[0];
        for (int s = 0; s < nsp; s++) { /* draws inside the chain's attempts are skipped */
            const int v = s_sp[s];
            if (v >= bounds[1]) break;
            if (v < cur) continue;
            const int end = v + (s_c[v] & 0x3f);
            for (int q = v + 1; q < end; q++) s_c[q] |= 0x40; /* (skipped) */
            cur = end;
        }
        s_lo = bounds[0];
        s_hi = bounds[1];
    }
    __syncthreads();
    const int lo = s_lo, hi = s_hi;
    unsigned taken = 0; /* bit k: this thread's position i0 + k gives a sample */
    for (int k = 0; k < NL_TR; k++) {
        const int i = i0 + k;
        if (i >= lo && i < hi && (s_c[i] & 0xc0) == 0x80) taken |= 1u << k;
    }
    const int mine = __popc(taken);
    int scan = mine; /* inclusive scan over the warp, then over the warps */
    for (int d = 1; d < 32; d *= 2) {
        const int add = __shfl_up_sync(0xffffffffu, scan, d);
        if (lane >= d) scan += add;
    }
    if (lane == 31) s_cnt[warp] = scan;
    __syncthreads();
    int before = scan - mine, total = 0;
    for (int w = 0; w < NL_WARPS; w++) {
        before += w < warp ? s_cnt[w] : 0;
        total += s_cnt[w];
    }
    if (!WRITE) {
        if (threadIdx.x == 0) counts[blockIdx.x] = total;
        return;
    }
    /* the samples moved to the front of s_v in order (each thread's first into registers: a
       sample's place is at or before its position), then written out together */
    const long long first_rank = offsets[blockIdx.x];
    V kept[NL_TR];
#pragma unroll
    for (int k = 0; k < NL_TR; k++) kept[k] = s_v[i0 + k];
    __syncthreads();
    int at = before;
#pragma unroll
    for (int k = 0; k < NL_TR; k++) {
        if (!((taken >> k) & 1u)) continue;
        const int i = i0 + k;
        s_v[at] = kept[k];
        if (first_rank + at == n - 1) info[1] = base + i + (s_c[i] & 0x3f);
        at++;
    }
    __syncthreads();
    const int count = (int)(n - first_rank < total ? (n - first_rank > 0 ? n - first_rank : 0)
                                                   : total);
    for (int q = threadIdx.x; q < count; q += NL_TT) {
        const V v = s_v[q];
        const long long rank = first_rank + q;
        if (KIND >= 4) out[rank] = (O)(off + v); /* (NumPy's unsigned wrap) */
        else if (mode == 1) out[rank] = (O)NL_DADD(loc, NL_DMUL(scale, (double)v));
        else if (mode == 2) out[rank] = (O)NL_DMUL(scale, (double)v);
        else out[rank] = (O)v;
    }
}


#define NL_TILE_KERNELS(KIND)                                                                     \
extern "C" __global__ void __launch_bounds__(NL_TT) nl_count_##KIND(nl_u64 a, nl_u64 b,           \
        nl_u64 c, nl_u64 d, const nl_u64 *jumps, int has0, nl_u32 buf0, const unsigned char *t,   \
        long long n, int *counts, long long *info, nl_u64 excl, nl_u64 threshold,                 \
        const nl_u64 *bases) {                                                                    \
    nl_tile<KIND, 0>(a, b, c, d, jumps, has0, buf0, t, n, counts, 0, 0, info, 0, 0.0, 0.0, excl, \
                     threshold, 0, bases);                                                       \
}                                                                                                 \
extern "C" __global__ void __launch_bounds__(NL_TT) nl_write_##KIND(nl_u64 a, nl_u64 b,           \
        nl_u64 c, nl_u64 d, const nl_u64 *jumps, int has0, nl_u32 buf0, const unsigned char *t,   \
        long long n, const long long *offsets, nl_kind<KIND>::O *out, long long *info, int mode,  \
        double loc, double scale, nl_u64 excl, nl_u64 threshold, nl_u64 off,                      \
        const nl_u64 *bases) {                                                                    \
    nl_tile<KIND, 1>(a, b, c, d, jumps, has0, buf0, t, n, 0, offsets, out, info, mode, loc,     \
                     scale, excl, threshold, off, bases);                                         \
}
/* each tile's stream at its first 64-bit draw: a jump from the call's start, a thread a tile */
extern "C" __global__ void __launch_bounds__(256) nl_tile_bases(nl_u64 a, nl_u64 b,
        const nl_u64 *__restrict__ jumps, int has0, int unit32, long long tiles,
        nl_u64 *__restrict__ bases) {
    const long long tile = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tile >= tiles) return;
    nl_u128 s;
    s.hi = a; s.lo = b;
    s = nl_jump(s, jumps, nl_tile_draw(tile * NL_TP - NL_HALO, unit32, has0));
    bases[2 * tile] = s.hi;
    bases[2 * tile + 1] = s.lo;
}

NL_TILE_KERNELS(0)
NL_TILE_KERNELS(1)
NL_TILE_KERNELS(2)
NL_TILE_KERNELS(3)
NL_TILE_KERNELS(4)
NL_TILE_KERNELS(5)
NL_TILE_KERNELS(6)

/* one draw per sample: ``random`` (mode 0) and ``uniform`` (mode 1: low + range * u) */
extern "C" __global__ void __launch_bounds__(256) nl_fill64(nl_u64 a, nl_u64 b, nl_u64 c,
        nl_u64 d, const nl_u64 *__restrict__ jumps, long long n, double *__restrict__ out,
        int mode, double low, double range, int log_grid) {
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    nl_src r = nl_src_at(a, b, c, d, jumps, g);
    for (long long i = g; i < n; i += 1LL << log_grid) {
        nl_u128 here = r.s;
        double u = nl_next_double(&r);
        out[i] = mode == 1 ? NL_DADD(low, NL_DMUL(range, u)) : u;
        r.s = nl_jump_by(here, jumps + 4 * log_grid);
    }
}

/* ``random(dtype=float32)``: two samples a 64-bit draw (after the half ``has0`` keeps) */
extern "C" __global__ void __launch_bounds__(256) nl_fill32(nl_u64 a, nl_u64 b, nl_u64 c,
        nl_u64 d, const nl_u64 *__restrict__ jumps, int has0, nl_u32 buf0, long long n,
        float *__restrict__ out, int log_grid) {
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g == 0 && has0 && n > 0) out[0] = nl_float_of(buf0);
    const long long draws = (n - has0 + 1) / 2;
    if (g >= draws) return;
    nl_src r = nl_src_at(a, b, c, d, jumps, g);
    for (long long q = g; q < draws; q += 1LL << log_grid) {
        nl_u128 here = r.s;
        const nl_u64 v = nl_raw64(&r);
        const long long i = has0 + 2 * q;
        out[i] = nl_float_of((nl_u32)v);
        if (i + 1 < n) out[i + 1] = nl_float_of((nl_u32)(v >> 32));
        r.s = nl_jump_by(here, jumps + 4 * log_grid);
    }
}
"""

_NAMES = (["nl_fill64", "nl_fill32", "nl_tile_bases"]
          + [f"nl_{what}_{k}" for k in range(7) for what in ("count", "write")])  # fmt: skip


def _functions(device: str) -> dict:
    source = random_streams.LOG1M + random_streams.SAMPLERS + KERNELS
    return fixed_functions(device, "nl_random", source, tuple(_NAMES))


_device_tables: dict = {}


_tables_lock = threading.Lock()  # (generators draw in several threads at once: Dask's chunks)


def _tables(device: str, inc: int):
    """(ziggurat tables, PCG64 jumps for stream ``inc``) in device memory, kept per device."""
    with _tables_lock:
        kept = _device_tables.get(device)
        if kept is None:
            data = random_streams.ziggurat_tables()
            kept = _device_tables[device] = {
                "tables": _upload(np.frombuffer(data, np.uint8), device)}
        jumps = kept.get(inc)
        if jumps is None:
            if len(kept) > 8:  # (the tables and a few streams' jumps)
                for key in [k for k in kept if k != "tables"]:
                    del kept[key]
            jumps = kept[inc] = _upload(random_streams.jumps(inc, NEAR), device)
        return kept["tables"], jumps


def _upload(host: np.ndarray, device: str) -> DeviceArray:
    # (in stream order: the memory may be a freed table's that a queued draw still reads)
    return cuda_memory.upload(host, device)


def _words(state: dict) -> tuple:
    s, inc = state["state"]["state"], state["state"]["inc"]
    m = (1 << 64) - 1
    return (np.uint64(s >> 64), np.uint64(s & m), np.uint64(inc >> 64), np.uint64(inc & m))


def available() -> bool:
    """Whether the installed NumPy's ziggurat tables can be read (else NumPy draws on the host)."""
    return random_streams.ziggurat_tables() is not None


def fill(state: dict, shape: tuple, dtype, device: str, low: float = 0.0,
         span: float | None = None):
    """Samples of ``random`` (``span`` None) or ``uniform`` (``low + span * u``) from PCG64
    ``state``, C order: (a new device array of ``shape``, the draws taken)."""
    from cuda.core import LaunchConfig, launch

    dtype, n = np.dtype(dtype), math.prod(shape)
    functions = _functions(device)
    _, jumps = _tables(device, state["state"]["inc"])
    out = DeviceArray(shape, dtype, device)
    stream = _get(device).stream
    words = _words(state)
    if dtype == np.float64:
        grid = min(1 << FILL_LOG_GRID, max(n, 1))
        if n:
            launch(stream, LaunchConfig(grid=-(-grid // FILL_THREADS), block=FILL_THREADS),
                   functions["nl_fill64"], *words, np.uint64(jumps.ptr), np.int64(n),
                   np.uint64(out.ptr), np.int32(span is not None), np.float64(low),
                   np.float64(span or 0.0), np.int32(FILL_LOG_GRID))  # fmt: skip
    else:
        has = int(state["has_uint32"])
        draws = (n - has + 1) // 2
        grid = min(1 << FILL_LOG_GRID, max(draws, 1))
        if n:
            launch(stream, LaunchConfig(grid=-(-grid // FILL_THREADS), block=FILL_THREADS),
                   functions["nl_fill32"], *words, np.uint64(jumps.ptr), np.int32(has),
                   np.uint32(state["uinteger"]), np.int64(n), np.uint64(out.ptr),
                   np.int32(FILL_LOG_GRID))  # fmt: skip
    count("device_random_draws")
    return out, n


def ziggurat(kind: str, state: dict, shape: tuple, device: str, mode: int = 0,
             loc: float = 0.0, scale: float = 1.0):
    """Samples of ziggurat sampler ``kind`` (``ZIGGURAT``) from PCG64 ``state``, with
    ``loc + scale * x`` (mode 1) or ``scale * x`` (mode 2) applied, C order: (a new device array
    of ``shape``, the draws taken), or None where the device cannot finish it (the host draws
    it then)."""
    k, unit32, per_sample = ZIGGURAT[kind]
    dtype = np.float32 if unit32 else np.float64
    return _tiles(k, unit32, per_sample, dtype, state, shape, device,
                  (np.int32(mode), np.float64(loc), np.float64(scale)), (0, 0, 0))  # fmt: skip


def integers(state: dict, shape: tuple, dtype, device: str, low: int, span: int):
    """``Generator.integers`` of ``dtype`` (int64 or int32) from ``low`` to ``low + span``
    inclusive, as NumPy draws it (Lemire's method on 32-bit draws where the range fits, else on
    64-bit ones): (a new device array, the draws taken), or None as ``ziggurat``. ``span`` is
    neither 0 nor the largest of its width (NumPy draws those without bounding)."""
    dtype = np.dtype(dtype)
    wide = span > 0xFFFFFFFF
    bits = 64 if wide else 32
    excl = span + 1
    threshold = ((1 << bits) - excl) % excl
    per_sample = 1.02 / (1.0 - threshold / 2.0**bits) + 0.01
    kind = 5 if wide else (6 if dtype == np.int32 else 4)
    off = low % (1 << 64)
    return _tiles(kind, not wide, per_sample, dtype, state, shape, device,
                  (np.int32(0), np.float64(0.0), np.float64(1.0)),
                  (excl, threshold, off))  # fmt: skip


def _tiles(k: int, unit32: bool, per_sample: float, dtype, state: dict, shape: tuple,
           device: str, scaling: tuple, bounds: tuple):
    """The count, offsets and write passes of tile kernel ``k`` (module docstring)."""
    from cuda.bindings import driver
    from cuda.core import LaunchConfig, launch

    n = math.prod(shape)
    functions = _functions(device)
    tables, jumps = _tables(device, state["state"]["inc"])
    stream = _get(device).stream
    tiles = max(1, math.ceil(n * per_sample / TILE) + 2)
    counts = DeviceArray((tiles,), np.int32, device)
    offsets = DeviceArray((tiles,), np.int64, device)
    info = DeviceArray((3,), np.int64, device)  # total, draws taken, flagged
    out = DeviceArray(shape, dtype, device)
    _check(driver.cuMemsetD8Async(info.ptr, 0, 24, stream.handle), "cuMemsetD8Async")
    common = (*_words(state), np.uint64(jumps.ptr), np.int32(state["has_uint32"]),
              np.uint32(state["uinteger"]), np.uint64(tables.ptr), np.int64(n))  # fmt: skip
    excl, threshold, off = (np.uint64(v) for v in bounds)
    bases = DeviceArray((2 * tiles,), np.uint64, device)
    launch(stream, LaunchConfig(grid=-(-tiles // 256), block=256), functions["nl_tile_bases"],
           *_words(state)[:2], np.uint64(jumps.ptr), np.int32(state["has_uint32"]),
           np.int32(unit32), np.int64(tiles), np.uint64(bases.ptr))  # fmt: skip
    config = LaunchConfig(grid=tiles, block=TILE_THREADS)
    launch(stream, config, functions[f"nl_count_{k}"], *common, np.uint64(counts.ptr),
           np.uint64(info.ptr), excl, threshold, np.uint64(bases.ptr))  # fmt: skip
    scan = cuda_nonzero._functions(device)["nl_true_offsets"]  # (info[0]: the total)
    launch(stream, LaunchConfig(grid=1, block=SCAN_THREADS), scan, np.uint64(counts.ptr),
           np.int64(tiles), np.uint64(offsets.ptr), np.uint64(info.ptr))  # fmt: skip
    launch(stream, config, functions[f"nl_write_{k}"], *common, np.uint64(offsets.ptr),
           np.uint64(out.ptr), np.uint64(info.ptr), *scaling, excl, threshold, off,
           np.uint64(bases.ptr))  # fmt: skip
    found = np.zeros(3, np.int64)
    stream.sync()
    _check(driver.cuMemcpyDtoH(found.ctypes.data, info.ptr, 24), "cuMemcpyDtoH")
    count("device_to_host_bytes", 24)
    total, taken, flagged = (int(v) for v in found)
    if flagged or total < n:
        return None
    count("device_random_draws")
    return out, taken

/* numloom_kernels.h: what kernels written in Python (numloom.cuda, numloom.vectorize) need
 * beyond numloom.h's NumPy-exact scalar helpers: where a thread is, bounds-checked indexing,
 * Python's slices, atomics and shuffles (complex numbers are numloom.h's). Shared by the C
 * (OpenMP) and CUDA dialects; fused kernels that call no such function do not include it.
 */
#ifndef NUMLOOM_KERNELS_H
#define NUMLOOM_KERNELS_H

#include "numloom.h"

/* A global NumPy array a kernel reads, compiled in (read-only device memory on a GPU). */
#ifdef __CUDACC_RTC__
#define NL_TABLE static __device__ const
#else
#define NL_TABLE static const
#endif

/* Where a thread is: CUDA's threadIdx, blockIdx, blockDim and gridDim, and the error buffer of
 * bounds-checked kernels. The C dialect fills it in its loops over blocks and threads. */
typedef struct {
    int64_t tx, ty, tz, bx, by, bz, bdx, bdy, bdz, gdx, gdy, gdz;
    int64_t *err;
} nl_ctx;

NL_FN int64_t nl_lane(nl_ctx c) { return ((c.tz * c.bdy + c.ty) * c.bdx + c.tx) & 31; }

/* A negative index counts from the end, as in Python. */
NL_FN int64_t nl_wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

/* Python's slice bounds: start or stop clamped to the axis (negative ones count from the end),
 * and the number of elements from start to stop by step. */
NL_FN int64_t nl_slice_bound(int64_t i, int64_t n, int64_t step) {
    if (i < 0) { i += n; if (i < 0) i = step < 0 ? -1 : 0; }
    else if (i >= n) i = step < 0 ? n - 1 : n;
    return i;
}
NL_FN int64_t nl_slice_len(int64_t start, int64_t stop, int64_t step) {
    if (step < 0) return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    return start < stop ? (stop - start - 1) / step + 1 : 0;
}

/* print() in kernels: printf; on the CPU flushed at once, so that the output is there when the
 * kernel returns. */
#ifdef __CUDACC_RTC__
#define NL_PRINTF(...) printf(__VA_ARGS__)
#else
#include <stdio.h>
#define NL_PRINTF(...) (printf(__VA_ARGS__), fflush(stdout))
#endif

#ifdef __CUDACC_RTC__
#define nl_threadfence() __threadfence()
#else
#define nl_threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* A bounds-checked index: out of bounds, the first failure's (code, index, size) is recorded
 * in err[1..3] (err[0] flags it) for the backend to raise IndexError, and element 0 is used. */
NL_FN int64_t nl_check(int64_t i, int64_t n, int64_t *err, int64_t code) {
    if (i >= 0 && i < n) return i;
#ifdef __CUDACC_RTC__
    if (atomicCAS((unsigned long long *)err, 0ull, 1ull) == 0ull) {
#else
    int64_t zero = 0;
    if (__atomic_compare_exchange_n(err, &zero, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
#endif
        err[1] = code;
        err[2] = i;
        err[3] = n;
    }
    return 0;
}

/* Atomics: the old value of *p, after *p = op(*p, v). On the CPU, a block's threads run on one
 * core in turn, so shared-memory "atomics" (nl_satomic_*) are plain read-modify-writes. */
#ifdef __CUDACC_RTC__
#define NL_CUDA_ATOMIC(T, U, NAME, CALL)                                              \
    NL_FN T nl_atomic_##NAME##_##T(T *p, T v) { return (T)CALL((U *)p, (U)v); }        \
    NL_FN T nl_satomic_##NAME##_##T(T *p, T v) { return (T)CALL((U *)p, (U)v); }
#define NL_CUDA_INT_ATOMICS(T, U, M)                                                  \
    NL_CUDA_ATOMIC(T, U, add, atomicAdd)                                              \
    NL_CUDA_ATOMIC(T, M, max, atomicMax)                                              \
    NL_CUDA_ATOMIC(T, M, min, atomicMin)                                              \
    NL_CUDA_ATOMIC(T, U, and, atomicAnd)                                              \
    NL_CUDA_ATOMIC(T, U, or, atomicOr)                                                \
    NL_CUDA_ATOMIC(T, U, xor, atomicXor)                                              \
    NL_CUDA_ATOMIC(T, U, exch, atomicExch)                                            \
    NL_FN T nl_atomic_sub_##T(T *p, T v) { return (T)atomicAdd((U *)p, (U)(0 - (U)v)); } \
    NL_FN T nl_satomic_sub_##T(T *p, T v) { return nl_atomic_sub_##T(p, v); }          \
    NL_FN T nl_atomic_cas_##T(T *p, T e, T d) { return (T)atomicCAS((U *)p, (U)e, (U)d); } \
    NL_FN T nl_satomic_cas_##T(T *p, T e, T d) { return nl_atomic_cas_##T(p, e, d); }
NL_CUDA_INT_ATOMICS(int32_t, int, int)
NL_CUDA_INT_ATOMICS(uint32_t, unsigned int, unsigned int)
NL_CUDA_INT_ATOMICS(int64_t, unsigned long long, long long)
NL_CUDA_INT_ATOMICS(uint64_t, unsigned long long, unsigned long long)

/* Integers ignore no values: nanmax and nanmin are max and min. */
#define NL_CUDA_INT_NAN_ATOMICS(T)                                                    \
    NL_FN T nl_atomic_nanmax_##T(T *p, T v) { return nl_atomic_max_##T(p, v); }       \
    NL_FN T nl_atomic_nanmin_##T(T *p, T v) { return nl_atomic_min_##T(p, v); }       \
    NL_FN T nl_satomic_nanmax_##T(T *p, T v) { return nl_atomic_max_##T(p, v); }      \
    NL_FN T nl_satomic_nanmin_##T(T *p, T v) { return nl_atomic_min_##T(p, v); }
NL_CUDA_INT_NAN_ATOMICS(int32_t)
NL_CUDA_INT_NAN_ATOMICS(uint32_t)
NL_CUDA_INT_NAN_ATOMICS(int64_t)
NL_CUDA_INT_NAN_ATOMICS(uint64_t)

/* Wrapping counters (CUDA's atomicInc and atomicDec): inc stores old >= v ? 0 : old + 1, dec
 * stores (old == 0 || old > v) ? v : old - 1. 64-bit ones through compare-and-swap. */
NL_FN uint32_t nl_atomic_inc_uint32_t(uint32_t *p, uint32_t v) {
    return atomicInc((unsigned int *)p, v);
}
NL_FN uint32_t nl_atomic_dec_uint32_t(uint32_t *p, uint32_t v) {
    return atomicDec((unsigned int *)p, v);
}
#define NL_CUDA_CAS_LOOP(T, NAME, NEW)                                                \
    NL_FN T nl_atomic_##NAME##_##T(T *p, T v) {                                        \
        T old = *p;                                                                   \
        for (;;) {                                                                    \
            T got = (T)atomicCAS((unsigned long long *)p, (unsigned long long)old,    \
                                 (unsigned long long)(NEW));                          \
            if (got == old) return old;                                               \
            old = got;                                                                \
        }                                                                             \
    }
NL_CUDA_CAS_LOOP(uint64_t, inc, old >= v ? (uint64_t)0 : old + 1)
NL_CUDA_CAS_LOOP(uint64_t, dec, (old == 0 || old > v) ? v : old - 1)
#define NL_CUDA_SHARED_WRAP(T)                                                        \
    NL_FN T nl_satomic_inc_##T(T *p, T v) { return nl_atomic_inc_##T(p, v); }          \
    NL_FN T nl_satomic_dec_##T(T *p, T v) { return nl_atomic_dec_##T(p, v); }
NL_CUDA_SHARED_WRAP(uint32_t)
NL_CUDA_SHARED_WRAP(uint64_t)

/* Floats: add natively; the rest through compare-and-swap on the bits. NL_CUDA_FLOAT_CAS stores
 * v while WHEN (of old and v) holds. NaN is a missing value for nanmax and nanmin (Numba's): a
 * NaN v changes nothing, a NaN stored is replaced. */
#define NL_CUDA_FLOAT_CAS(T, B, TO_BITS, FROM_BITS, NAME, WHEN)                        \
    NL_FN T nl_atomic_##NAME##_##T(T *p, T v) {                                        \
        T old = *p;                                                                   \
        while (WHEN) {                                                                \
            B got = atomicCAS((B *)p, (B)TO_BITS(old), (B)TO_BITS(v));                 \
            if (got == (B)TO_BITS(old)) break;                                        \
            old = FROM_BITS(got);                                                     \
        }                                                                             \
        return old;                                                                   \
    }
#define NL_CUDA_FLOAT_ATOMICS(T, B, TO_BITS, FROM_BITS)                               \
    NL_FN T nl_atomic_add_##T(T *p, T v) { return atomicAdd(p, v); }                   \
    NL_FN T nl_atomic_sub_##T(T *p, T v) { return atomicAdd(p, -v); }                  \
    NL_FN T nl_atomic_cas_##T(T *p, T e, T d) {                                        \
        return FROM_BITS(atomicCAS((B *)p, (B)TO_BITS(e), (B)TO_BITS(d)));             \
    }                                                                                 \
    NL_FN T nl_atomic_exch_##T(T *p, T v) {                                            \
        return FROM_BITS(atomicExch((B *)p, (B)TO_BITS(v)));                           \
    }                                                                                 \
    NL_CUDA_FLOAT_CAS(T, B, TO_BITS, FROM_BITS, max, old < v)                         \
    NL_CUDA_FLOAT_CAS(T, B, TO_BITS, FROM_BITS, min, old > v)                         \
    NL_CUDA_FLOAT_CAS(T, B, TO_BITS, FROM_BITS, nanmax, v == v && (old < v || old != old)) \
    NL_CUDA_FLOAT_CAS(T, B, TO_BITS, FROM_BITS, nanmin, v == v && (old > v || old != old)) \
    NL_FN T nl_satomic_nanmax_##T(T *p, T v) { return nl_atomic_nanmax_##T(p, v); }    \
    NL_FN T nl_satomic_nanmin_##T(T *p, T v) { return nl_atomic_nanmin_##T(p, v); }    \
    NL_FN T nl_satomic_add_##T(T *p, T v) { return nl_atomic_add_##T(p, v); }          \
    NL_FN T nl_satomic_sub_##T(T *p, T v) { return nl_atomic_sub_##T(p, v); }          \
    NL_FN T nl_satomic_max_##T(T *p, T v) { return nl_atomic_max_##T(p, v); }          \
    NL_FN T nl_satomic_min_##T(T *p, T v) { return nl_atomic_min_##T(p, v); }          \
    NL_FN T nl_satomic_exch_##T(T *p, T v) { return nl_atomic_exch_##T(p, v); }        \
    NL_FN T nl_satomic_cas_##T(T *p, T e, T d) { return nl_atomic_cas_##T(p, e, d); }
NL_CUDA_FLOAT_ATOMICS(float, int, __float_as_int, __int_as_float)
NL_CUDA_FLOAT_ATOMICS(double, unsigned long long, __double_as_longlong, __longlong_as_double)
#else
#define NL_CAS_LOOP(T, NAME, NEW)                                                     \
    NL_FN T nl_atomic_##NAME##_##T(T *p, T v) {                                        \
        T old, want;                                                                  \
        __atomic_load(p, &old, __ATOMIC_RELAXED);                                     \
        do { want = (NEW); } while (!__atomic_compare_exchange(p, &old, &want, 1,     \
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED));             \
        return old;                                                                   \
    }
#define NL_PLAIN(T, NAME, NEW)                                                        \
    NL_FN T nl_satomic_##NAME##_##T(T *p, T v) { T old = *p; *p = (NEW); return old; }
#define NL_COMMON_ATOMICS(T)                                                          \
    NL_CAS_LOOP(T, max, old < v ? v : old) NL_PLAIN(T, max, old < v ? v : old)         \
    NL_CAS_LOOP(T, min, old > v ? v : old) NL_PLAIN(T, min, old > v ? v : old)         \
    NL_FN T nl_atomic_exch_##T(T *p, T v) {                                           \
        T old; __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED); return old;            \
    }                                                                                 \
    NL_PLAIN(T, exch, v)                                                              \
    NL_FN T nl_atomic_cas_##T(T *p, T e, T d) {                                        \
        __atomic_compare_exchange(p, &e, &d, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);   \
        return e;                                                                     \
    }                                                                                 \
    NL_FN T nl_satomic_cas_##T(T *p, T e, T d) { T old = *p; if (old == e) *p = d; return old; }
#define NL_INT_ATOMICS(T)                                                             \
    NL_COMMON_ATOMICS(T)                                                              \
    NL_FN T nl_atomic_add_##T(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \
    NL_FN T nl_atomic_sub_##T(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); } \
    NL_FN T nl_atomic_and_##T(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
    NL_FN T nl_atomic_or_##T(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); } \
    NL_FN T nl_atomic_xor_##T(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); } \
    NL_PLAIN(T, add, (T)(old + v)) NL_PLAIN(T, sub, (T)(old - v))                      \
    NL_PLAIN(T, and, old & v) NL_PLAIN(T, or, old | v) NL_PLAIN(T, xor, old ^ v)
#define NL_FLOAT_ATOMICS(T)                                                           \
    NL_COMMON_ATOMICS(T)                                                              \
    NL_CAS_LOOP(T, add, old + v) NL_CAS_LOOP(T, sub, old - v)                         \
    NL_PLAIN(T, add, old + v) NL_PLAIN(T, sub, old - v)
/* nanmax, nanmin: a NaN v changes nothing, a NaN stored is replaced (for integers, max, min). */
#define NL_NAN_ATOMICS(T)                                                             \
    NL_CAS_LOOP(T, nanmax, (v == v && (old < v || old != old)) ? v : old)             \
    NL_PLAIN(T, nanmax, (v == v && (old < v || old != old)) ? v : old)                \
    NL_CAS_LOOP(T, nanmin, (v == v && (old > v || old != old)) ? v : old)             \
    NL_PLAIN(T, nanmin, (v == v && (old > v || old != old)) ? v : old)
/* Wrapping counters (CUDA's atomicInc, atomicDec) on unsigned integers. */
#define NL_WRAP_ATOMICS(T)                                                            \
    NL_CAS_LOOP(T, inc, old >= v ? (T)0 : (T)(old + 1))                               \
    NL_PLAIN(T, inc, old >= v ? (T)0 : (T)(old + 1))                                  \
    NL_CAS_LOOP(T, dec, (old == 0 || old > v) ? v : (T)(old - 1))                     \
    NL_PLAIN(T, dec, (old == 0 || old > v) ? v : (T)(old - 1))
NL_INT_ATOMICS(int32_t)
NL_INT_ATOMICS(uint32_t)
NL_INT_ATOMICS(int64_t)
NL_INT_ATOMICS(uint64_t)
NL_FLOAT_ATOMICS(float)
NL_FLOAT_ATOMICS(double)
NL_NAN_ATOMICS(int32_t)
NL_NAN_ATOMICS(uint32_t)
NL_NAN_ATOMICS(int64_t)
NL_NAN_ATOMICS(uint64_t)
NL_NAN_ATOMICS(float)
NL_NAN_ATOMICS(double)
NL_WRAP_ATOMICS(uint32_t)
NL_WRAP_ATOMICS(uint64_t)
#endif

#ifndef __CUDACC_RTC__
/* The thread a shuffle reads on the CPU (kind 0 idx, 1 up, 2 down, 3 xor, as __shfl_*_sync):
 * a lane of the same warp of 32, or the thread itself where CUDA returns its own value. */
NL_FN int64_t nl_shfl_source(int kind, int64_t t, int64_t arg, int64_t n) {
    const int64_t lane = t & 31, base = t - lane;
    const int64_t src = kind == 0 ? (arg & 31) : kind == 1 ? lane - arg
                      : kind == 2 ? lane + arg : (lane ^ arg);
    return (src < 0 || src > 31 || base + src >= n) ? t : base + src;
}
#endif

#ifdef __CUDACC_RTC__
NL_FN nl_ctx nl_cuda_ctx(int64_t *err) {
    nl_ctx c;
    c.tx = threadIdx.x; c.ty = threadIdx.y; c.tz = threadIdx.z;
    c.bx = blockIdx.x; c.by = blockIdx.y; c.bz = blockIdx.z;
    c.bdx = blockDim.x; c.bdy = blockDim.y; c.bdz = blockDim.z;
    c.gdx = gridDim.x; c.gdy = gridDim.y; c.gdz = gridDim.z;
    c.err = err;
    return c;
}
#endif

/* numba.cuda.random's xoroshiro128+ generators: a state is two uint64 words (s0, s1), one row
 * of the states array create_xoroshiro128p_states makes. Numba's conversions and its
 * Box-Muller normals (float32 uniforms for both widths). */
NL_FN uint64_t nl_xoro_next(uint64_t *s) {
    const uint64_t s0 = s[0], r = s0 + s[1], s1 = s[1] ^ s0;
    s[0] = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14);
    s[1] = (s1 << 36) | (s1 >> 28);
    return r;
}
NL_FN double nl_xoro_f64(uint64_t *s) {
    return (double)(nl_xoro_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
NL_FN float nl_xoro_f32(uint64_t *s) { return (float)nl_xoro_f64(s); }
NL_FN float nl_xoro_normal_f32(uint64_t *s) {
    const float u1 = nl_xoro_f32(s), u2 = nl_xoro_f32(s);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831855f * u2);
}
NL_FN double nl_xoro_normal_f64(uint64_t *s) {
    const float u1 = nl_xoro_f32(s), u2 = nl_xoro_f32(s);
    return sqrt(-2.0 * (double)logf(u1)) * cos(6.283185307179586 * (double)u2);
}

#endif /* NUMLOOM_KERNELS_H */

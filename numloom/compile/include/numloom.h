/* numloom.h: NumPy-exact scalar helpers shared by the C (OpenMP) and CUDA dialects.
 *
 * Every generated kernel includes this header. Each helper reproduces NumPy's scalar loop for
 * one operation (numpy/_core/src/npymath and umath/loops), so compiled kernels give NumPy's
 * results: integer division by zero gives 0, floor division and remainder take the divisor's
 * sign, maximum/minimum propagate NaN, shifts past the bit width give 0 (or -1).
 */
#ifndef NUMLOOM_H
#define NUMLOOM_H

#ifdef __CUDACC_RTC__
#define NL_FN static __device__ __forceinline__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#ifdef NL_HALF /* (compiler.nvrtc_source: a kernel that names nl_half) */
#include <cuda_fp16.h>
typedef __half nl_half;
#endif
#define NAN __int_as_float(0x7fc00000)
#define INFINITY __int_as_float(0x7f800000)
#define M_PI 3.14159265358979323846
#else
#include <fenv.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#define NL_FN static inline
typedef _Float16 nl_half;
/* NumPy's floating-point error state (numloom/core/fperrors.py): a kernel holding operations
 * that can raise clears the IEEE flags of each thread as its share of a parallel loop starts
 * and ORs them into the flag word when it ends, as NumPy's categories (fperrors.BITS). The
 * thread that called the kernel keeps what it raised before the loop. */
#define NL_FE_ALL (FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID | FE_UNDERFLOW)
NL_FN int64_t nl_fe_bits(int e) {
    return (e & FE_DIVBYZERO ? 1 : 0) | (e & FE_OVERFLOW ? 2 : 0) | (e & FE_INVALID ? 4 : 0) |
           (e & FE_UNDERFLOW ? 8 : 0);
}
#ifdef _OPENMP
#define NL_FE_CALLER (omp_get_thread_num() == 0)
#else
#define NL_FE_CALLER 1
#endif
#define NL_FE_ENTER                                                                    \
    const int nl_fe_kept = NL_FE_CALLER ? fetestexcept(NL_FE_ALL) : 0;                 \
    feclearexcept(NL_FE_ALL);
#define NL_FE_LEAVE(w)                                                                 \
    {                                                                                  \
        const int64_t nl_fe_b = nl_fe_bits(fetestexcept(NL_FE_ALL) | nl_fe_kept);     \
        if (nl_fe_b) {                                                                 \
            _Pragma("omp atomic") (w)[0] |= nl_fe_b;                                   \
        }                                                                              \
    }
/* glibc's vector math library (libmvec) has SIMD versions of these functions, as accurate as
 * NumPy's own SIMD loops (a few ulp): declaring them lets `omp simd` loops call them. glibc
 * declares them itself only under -ffast-math, which numloom never uses. */
#if defined(__GLIBC__) && defined(__x86_64__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define NL_SIMD_MATH(name) \
    __attribute__((__simd__("notinbranch"))) double name(double); \
    __attribute__((__simd__("notinbranch"))) float name##f(float);
#define NL_SIMD_MATH2(name) \
    __attribute__((__simd__("notinbranch"))) double name(double, double); \
    __attribute__((__simd__("notinbranch"))) float name##f(float, float);
NL_SIMD_MATH(sin) NL_SIMD_MATH(cos) NL_SIMD_MATH(tan) NL_SIMD_MATH(exp) NL_SIMD_MATH(exp2)
NL_SIMD_MATH(expm1) NL_SIMD_MATH(log) NL_SIMD_MATH(log2) NL_SIMD_MATH(log10)
NL_SIMD_MATH(log1p) NL_SIMD_MATH(asin) NL_SIMD_MATH(acos) NL_SIMD_MATH(atan)
NL_SIMD_MATH(sinh) NL_SIMD_MATH(cosh) NL_SIMD_MATH(tanh) NL_SIMD_MATH(asinh)
NL_SIMD_MATH(acosh) NL_SIMD_MATH(atanh) NL_SIMD_MATH(cbrt)
NL_SIMD_MATH2(atan2) NL_SIMD_MATH2(hypot)
#endif
#endif

#ifdef __CUDACC_RTC__
/* A warp shuffle of any value of at most 8 bytes (reductions combine (acc, arg, nan) triples
 * of every type in registers once one warp is left). */
template <typename T> __device__ __forceinline__ T nl_shfl_down(T v, int s) {
    if constexpr (sizeof(T) == 8) {
        long long x;
        memcpy(&x, &v, 8);
        x = __shfl_down_sync(0xffffffffu, x, s);
        memcpy(&v, &x, 8);
    } else {
        int x = 0;
        memcpy(&x, &v, sizeof(T));
        x = __shfl_down_sync(0xffffffffu, x, s);
        memcpy(&v, &x, sizeof(T));
    }
    return v;
}
#endif

/* Notes of the values where a floating-point error would show (numloom/core/fperrors.py,
 * compile/lower.py's ``notes``). A GPU has no IEEE flags: each noted float value is folded
 * into a per-thread sum as v * 0 (NaN once any value is an inf or a NaN; one fused multiply-
 * add), an integer division's divisor and a float-to-integer cast's source are tested, and the
 * kernel stores 1 into its flag word at its end if any was bad. On the CPU the IEEE flags of
 * each thread say all this, so the notes are the values themselves. */
#ifdef __CUDACC_RTC__
NL_FN float nl_fe_note_f(float v, float &s) {
    s = fmaf(v, 0.0f, s);
    return v;
}
NL_FN double nl_fe_note_d(double v, double &s) {
    s = fma(v, 0.0, s);
    return v;
}
template <typename T> __device__ __forceinline__ T nl_fe_note_i(T v, bool bad, int &s) {
    s |= bad;
    return v;
}
#define NL_FE_F(v) nl_fe_note_f((v), nl_fe_f)
#define NL_FE_D(v) nl_fe_note_d((v), nl_fe_d)
#define NL_FE_DIV0(v, d) nl_fe_note_i((v), (d) == 0, nl_fe_i)
#define NL_FE_CAST(v, x, b) nl_fe_note_i((v), !(fabs((double)(x)) < (b)), nl_fe_i)
#else
#define NL_FE_F(v) (v)
#define NL_FE_D(v) (v)
#define NL_FE_DIV0(v, d) (v)
#define NL_FE_CAST(v, x, b) (v)
#endif

/* hypot without undue overflow: glibc's on the CPU; on the GPU, CUDA's own overflows near the
 * largest double (hypot(DBL_MAX, 1) is inf there), so the larger side is scaled to [1, 2) by a
 * power of two first (exact), and float sides are summed in double. */
#ifdef __CUDACC_RTC__
NL_FN double nl_hypot(double x, double y) {
    x = fabs(x);
    y = fabs(y);
    if (isinf(x) || isinf(y)) return INFINITY; /* even beside a NaN, as C99 says */
    if (isnan(x) || isnan(y)) return NAN;
    const double a = fmax(x, y), b = fmin(x, y);
    if (a == 0) return 0;
    const int e = ilogb(a);
    const double sa = scalbn(a, -e), sb = scalbn(b, -e);
    return scalbn(sqrt(fma(sa, sa, sb * sb)), e);
}
NL_FN float nl_hypotf(float x, float y) {
    if (isinf(x) || isinf(y)) return INFINITY;
    const double dx = x, dy = y;
    return (float)sqrt(fma(dx, dx, dy * dy));
}
#else
NL_FN double nl_hypot(double x, double y) { return hypot(x, y); }
NL_FN float nl_hypotf(float x, float y) { return hypotf(x, y); }
#endif

/* float16 values are computed in float and rounded to half after every operation, as NumPy's
 * half loops do. */
#if !defined(__CUDACC_RTC__) || defined(NL_HALF)
NL_FN float nl_round_half(float x) { return (float)(nl_half)x; }
#endif

/* --- floating point: NumPy's npy_divmod, floor_divide, remainder --------------------------- */
#define NL_FLOAT_DIVMOD(T, SUF)                                                        \
    NL_FN T nl_divmod_##SUF(T a, T b, T *modulus) {                                   \
        T mod = fmod##SUF(a, b);                                                      \
        if (!b) { *modulus = mod; return a / b; }                                     \
        T div = (a - mod) / b;                                                        \
        if (mod) {                                                                    \
            if ((b < 0) != (mod < 0)) { mod += b; div -= (T)1; }                      \
        } else {                                                                      \
            mod = copysign##SUF((T)0, b);                                             \
        }                                                                             \
        T floordiv;                                                                   \
        if (div) {                                                                    \
            floordiv = floor##SUF(div);                                               \
            if (div - floordiv > (T)0.5) floordiv += (T)1;                            \
        } else {                                                                      \
            floordiv = copysign##SUF((T)0, a / b);                                    \
        }                                                                             \
        *modulus = mod;                                                               \
        return floordiv;                                                              \
    }                                                                                 \
    NL_FN T nl_floor_divide_##SUF(T a, T b) {                                         \
        T mod;                                                                        \
        if (!b) return a / b;                                                         \
        return nl_divmod_##SUF(a, b, &mod);                                           \
    }                                                                                 \
    NL_FN T nl_remainder_##SUF(T a, T b) {                                            \
        T mod;                                                                        \
        if (!b) return fmod##SUF(a, b);                                               \
        nl_divmod_##SUF(a, b, &mod);                                                  \
        return mod;                                                                   \
    }                                                                                 \
    NL_FN T nl_max_##SUF(T a, T b) { return (a >= b || a != a) ? a : b; }             \
    NL_FN T nl_min_##SUF(T a, T b) { return (a <= b || a != a) ? a : b; }             \
    NL_FN T nl_sign_##SUF(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == 0 ? (T)0 : a)); } \
    NL_FN T nl_logaddexp_##SUF(T x, T y) {                                            \
        if (x == y) return x + (T)0.693147180559945309417232121458176568;             \
        T t = x - y;                                                                  \
        if (t > 0) return x + log1p##SUF(exp##SUF(-t));                               \
        if (t <= 0) return y + log1p##SUF(exp##SUF(t));                               \
        return t;                                                                     \
    }                                                                                 \
    NL_FN T nl_logaddexp2_##SUF(T x, T y) {                                           \
        if (x == y) return x + (T)1;                                                  \
        T t = x - y;                                                                  \
        const T LOG2E = (T)1.442695040888963407359924681001892137;                    \
        if (t > 0) return x + LOG2E * log1p##SUF(exp2##SUF(-t));                      \
        if (t <= 0) return y + LOG2E * log1p##SUF(exp2##SUF(t));                      \
        return t;                                                                     \
    }                                                                                 \
    NL_FN T nl_heaviside_##SUF(T x, T h0) {                                           \
        if (x != x) return x;                                                         \
        return x == 0 ? h0 : (x < 0 ? (T)0 : (T)1);                                   \
    }

NL_FLOAT_DIVMOD(float, f)
NL_FLOAT_DIVMOD(double, )

/* --- data errors ---------------------------------------------------------------------------- */

/* Records bad data (an index out of bounds, a negative integer power) in an error slot of the
 * kernel's ``err`` buffer: a flag and the value. The backend then raises NumPy's error for it;
 * the kernel goes on with 0 in place of the bad value. */
NL_FN int64_t nl_flag(int64_t *err, int64_t value) {
    err[0] = 1;
    err[1] = value;
    return 0;
}

/* --- integers: NumPy's division, remainder, shifts and powers ------------------------------ */
#define NL_SIGNED(T, MIN, BITS)                                                       \
    NL_FN T nl_floor_divide_##T(T a, T b) {                                           \
        if (b == 0) return 0;                                                         \
        if (a == MIN && b == -1) return MIN;                                          \
        T q = a / b;                                                                  \
        if (((a > 0) != (b > 0)) && q * b != a) q--;                                  \
        return q;                                                                     \
    }                                                                                 \
    NL_FN T nl_remainder_##T(T a, T b) {                                              \
        if (b == 0 || (a == MIN && b == -1)) return 0;                                \
        T r = a % b;                                                                  \
        if (r != 0 && ((b > 0) != (r > 0))) r += b;                                   \
        return r;                                                                     \
    }                                                                                 \
    NL_FN T nl_fmod_##T(T a, T b) {                                                   \
        if (b == 0 || (a == MIN && b == -1)) return 0;                                \
        return a % b;                                                                 \
    }                                                                                 \
    NL_FN T nl_lshift_##T(T a, T b) {                                                 \
        return ((uint64_t)(int64_t)b < (uint64_t)BITS) ? (T)((uint64_t)a << b) : (T)0; \
    }                                                                                 \
    NL_FN T nl_rshift_##T(T a, T b) {                                                 \
        if ((uint64_t)(int64_t)b < (uint64_t)BITS) return a >> b;                     \
        return a < 0 ? (T)-1 : (T)0;                                                  \
    }                                                                                 \
    NL_FN T nl_power_##T(T a, T b) {                                                  \
        if (b < 0) return 0;                                                          \
        T out = 1;                                                                    \
        while (b > 0) { if (b & 1) out *= a; a *= a; b >>= 1; }                       \
        return out;                                                                   \
    }                                                                                 \
    /* NumPy raises for a negative exponent: flagged for the backend to raise it */   \
    NL_FN T nl_power_checked_##T(T a, T b, int64_t *err) {                            \
        return b < 0 ? (T)nl_flag(err, b) : nl_power_##T(a, b);                       \
    }                                                                                 \
    NL_FN T nl_abs_##T(T a) { return a < 0 ? (T)-a : a; }                             \
    NL_FN T nl_sign_##T(T a) { return (T)((a > 0) - (a < 0)); }

#define NL_UNSIGNED(T, BITS)                                                          \
    NL_FN T nl_floor_divide_##T(T a, T b) { return b == 0 ? 0 : a / b; }              \
    NL_FN T nl_remainder_##T(T a, T b) { return b == 0 ? 0 : a % b; }                 \
    NL_FN T nl_fmod_##T(T a, T b) { return b == 0 ? 0 : a % b; }                      \
    NL_FN T nl_lshift_##T(T a, T b) { return b < BITS ? (T)((uint64_t)a << b) : (T)0; } \
    NL_FN T nl_rshift_##T(T a, T b) { return b < BITS ? (T)(a >> b) : (T)0; }         \
    NL_FN T nl_power_##T(T a, T b) {                                                  \
        T out = 1;                                                                    \
        while (b > 0) { if (b & 1) out *= a; a *= a; b >>= 1; }                       \
        return out;                                                                   \
    }                                                                                 \
    NL_FN T nl_abs_##T(T a) { return a; }                                             \
    NL_FN T nl_sign_##T(T a) { return (T)(a > 0); }

NL_SIGNED(int8_t, (-128), 8)
NL_SIGNED(int16_t, (-32767 - 1), 16)
NL_SIGNED(int32_t, (-2147483647 - 1), 32)
NL_SIGNED(int64_t, (-9223372036854775807LL - 1), 64)
NL_UNSIGNED(uint8_t, 8)
NL_UNSIGNED(uint16_t, 16)
NL_UNSIGNED(uint32_t, 32)
NL_UNSIGNED(uint64_t, 64)

/* Float to integer conversions as NumPy computes them on x86-64. Signed targets: the C cast
 * (cvttsd2si), where NaN and out-of-range values give the "integer indefinite" INT_MIN of the
 * width; types below 32 bits go through int32 and wrap. Unsigned 32 and 64 bits: values from
 * 2**(bits-1) up are shifted down, converted signed and the top bit flipped back, as the
 * compiler's SSE2 sequence does. A GPU saturates and AVX-512 has unsigned conversions with
 * other results, so every path spells the x86 result out. */
NL_FN int64_t nl_f2int64(double x) {
    return (x != x || x >= 9223372036854775808.0 || x < -9223372036854775808.0)
        ? (int64_t)(-9223372036854775807LL - 1) : (int64_t)x;
}
NL_FN int32_t nl_f2int32(double x) {
    return (x != x || x >= 2147483648.0 || x < -2147483648.0) ? (int32_t)(-2147483647 - 1)
                                                              : (int32_t)x;
}
NL_FN uint64_t nl_f2uint64(double x) {
    if (x >= 9223372036854775808.0)
        return (uint64_t)nl_f2int64(x - 9223372036854775808.0) ^ 9223372036854775808ULL;
    return (uint64_t)nl_f2int64(x);
}
NL_FN uint32_t nl_f2uint32(double x) {
    if (x >= 2147483648.0) return (uint32_t)nl_f2int32(x - 2147483648.0) ^ 2147483648u;
    return (uint32_t)nl_f2int32(x);
}
NL_FN int8_t nl_f2int8(double x) { return (int8_t)nl_f2int32(x); }
NL_FN int16_t nl_f2int16(double x) { return (int16_t)nl_f2int32(x); }
NL_FN uint8_t nl_f2uint8(double x) { return (uint8_t)nl_f2int32(x); }
NL_FN uint16_t nl_f2uint16(double x) { return (uint16_t)nl_f2int32(x); }

/* An index into an axis of ``n`` elements, wrapped when negative; out of bounds, it is
 * flagged in ``err`` for the backend to raise NumPy's IndexError, and element 0 is read. */
NL_FN int64_t nl_index(int64_t i, int64_t n, int64_t *err) {
    const int64_t j = i < 0 ? i + n : i;
    return (j < 0 || j >= n) ? nl_flag(err, i) : j;
}

/* Exact comparison of a signed and an unsigned 64-bit integer (NumPy's mixed loops): <0, 0, >0. */
NL_FN int nl_cmp_su(int64_t a, uint64_t b) {
    return a < 0 ? -1 : ((uint64_t)a < b ? -1 : ((uint64_t)a > b ? 1 : 0));
}

/* Integer max/min (no NaN). */
#define NL_IMAX(a, b) ((a) >= (b) ? (a) : (b))
#define NL_IMIN(a, b) ((a) <= (b) ? (a) : (b))

/* Complex numbers as NumPy lays them out (real part, then imaginary part), with NumPy's
 * arithmetic (npymath's division, power by repeated multiplication for small integers). Where
 * the machine has FMA, NumPy's SIMD loops multiply and take absolute values with it; so do these.
 * The division keeps its exact operations: GCC's if-conversion without trapping math rounds some
 * quotients differently, and NVRTC would contract them into FMAs. */
#ifdef __CUDACC_RTC__
#define NL_HAS_FMA 1
#define NL_STRICT_FP
/* Rounded once each, never contracted into an FMA (NVRTC contracts a * b + c by default). */
NL_FN float nl_mul_rn(float a, float b) { return __fmul_rn(a, b); }
NL_FN double nl_mul_rn(double a, double b) { return __dmul_rn(a, b); }
NL_FN float nl_add_rn(float a, float b) { return __fadd_rn(a, b); }
NL_FN double nl_add_rn(double a, double b) { return __dadd_rn(a, b); }
#define NL_MUL(a, b) nl_mul_rn(a, b)
#define NL_ADD(a, b) nl_add_rn(a, b)
#define NL_SUB(a, b) nl_add_rn(a, -(b))
#else
#define NL_MUL(a, b) ((a) * (b))
#define NL_ADD(a, b) ((a) + (b))
#define NL_SUB(a, b) ((a) - (b))
#ifdef __FMA__
#define NL_HAS_FMA 1
#else
#define NL_HAS_FMA 0
#endif
#define NL_STRICT_FP __attribute__((optimize("trapping-math")))
#endif
typedef struct { float re, im; } nl_complex64;
typedef struct { double re, im; } nl_complex128;

#define NL_COMPLEX(C, T, SUF)                                                          \
    NL_FN C C##_make(T re, T im) { C z; z.re = re; z.im = im; return z; }              \
    NL_FN C C##_add(C a, C b) { return C##_make(a.re + b.re, a.im + b.im); }           \
    NL_FN C C##_sub(C a, C b) { return C##_make(a.re - b.re, a.im - b.im); }           \
    NL_FN C C##_neg(C a) { return C##_make(-a.re, -a.im); }                            \
    NL_FN C C##_conj(C a) { return C##_make(a.re, -a.im); }                            \
    NL_FN C C##_mul(C a, C b) {                                                        \
        if (NL_HAS_FMA)                                                               \
            return C##_make(fma##SUF(a.re, b.re, -(a.im * b.im)),                      \
                            fma##SUF(a.re, b.im, a.im * b.re));                        \
        return C##_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);         \
    }                                                                                 \
    NL_STRICT_FP NL_FN C C##_div(C a, C b) {                                           \
        T ar = fabs##SUF(b.re), ai = fabs##SUF(b.im);                                  \
        if (ar >= ai) {                                                               \
            if (ar == 0 && ai == 0) return C##_make(a.re / ar, a.im / ai);             \
            T rat = b.im / b.re, scl = (T)1.0 / NL_ADD(b.re, NL_MUL(b.im, rat));       \
            return C##_make(NL_MUL(NL_ADD(a.re, NL_MUL(a.im, rat)), scl),              \
                            NL_MUL(NL_SUB(a.im, NL_MUL(a.re, rat)), scl));             \
        }                                                                             \
        T rat = b.re / b.im, scl = (T)1.0 / NL_ADD(b.im, NL_MUL(b.re, rat));          \
        return C##_make(NL_MUL(NL_ADD(NL_MUL(a.re, rat), a.im), scl),                  \
                        NL_MUL(NL_SUB(NL_MUL(a.im, rat), a.re), scl));                 \
    }                                                                                 \
    NL_FN bool C##_eq(C a, C b) { return a.re == b.re && a.im == b.im; }               \
    NL_FN bool C##_finite(C a) { return isfinite(a.re) && isfinite(a.im); }            \
    /* Selects, not early returns, so that a loop taking absolute values vectorizes. */    \
    NL_FN T C##_abs(C a) {                                                             \
        if (!NL_HAS_FMA) return hypot##SUF(a.re, a.im);                                \
        T re = fabs##SUF(a.re), im = fabs##SUF(a.im);                                  \
        T big = re >= im ? re : im, small = re >= im ? im : re;                       \
        /* (no 0 / 0 or inf / inf: a flag NumPy would not raise, for a value not used) */ \
        T rat = small / (big == 0 || isinf(big) ? (T)1 : big);                        \
        T r = big * sqrt##SUF(fma##SUF(rat, rat, (T)1));                               \
        r = big == 0 ? (T)0 : r;                                                      \
        r = (re != re || im != im) ? (T)NAN : r;                                      \
        return (isinf(re) || isinf(im)) ? (T)INFINITY : r;                            \
    }                                                                                 \
    NL_FN C C##_square(C a) { return C##_mul(a, a); }                                  \
    NL_FN T C##_phase(C a) { return atan2##SUF(a.im, a.re); }                          \
    NL_FN C C##_exp(C a) {                                                             \
        T r = exp##SUF(a.re);                                                         \
        if (a.im == 0) return C##_make(r, a.im);                                      \
        return C##_make(r * cos##SUF(a.im), r * sin##SUF(a.im));                       \
    }                                                                                 \
    NL_FN C C##_log(C a) { return C##_make(log##SUF(C##_abs(a)), C##_phase(a)); }      \
    NL_FN C C##_sqrt(C a) {                                                            \
        if (a.re == 0 && a.im == 0) return C##_make((T)0, a.im);                      \
        if (isinf(a.im)) return C##_make((T)INFINITY, a.im);                          \
        T t = sqrt##SUF((fabs##SUF(a.re) + C##_abs(a)) * (T)0.5);                      \
        if (a.re >= 0) return C##_make(t, a.im / (2 * t));                            \
        return C##_make(fabs##SUF(a.im) / (2 * t), copysign##SUF(t, a.im));            \
    }                                                                                 \
    NL_FN C C##_sin(C a) {                                                             \
        return C##_make(sin##SUF(a.re) * cosh##SUF(a.im), cos##SUF(a.re) * sinh##SUF(a.im)); \
    }                                                                                 \
    NL_FN C C##_cos(C a) {                                                             \
        return C##_make(cos##SUF(a.re) * cosh##SUF(a.im), -sin##SUF(a.re) * sinh##SUF(a.im)); \
    }                                                                                 \
    NL_FN C C##_sinh(C a) {                                                            \
        return C##_make(sinh##SUF(a.re) * cos##SUF(a.im), cosh##SUF(a.re) * sin##SUF(a.im)); \
    }                                                                                 \
    NL_FN C C##_cosh(C a) {                                                            \
        return C##_make(cosh##SUF(a.re) * cos##SUF(a.im), sinh##SUF(a.re) * sin##SUF(a.im)); \
    }                                                                                 \
    NL_FN C C##_tanh(C a) {                                                            \
        if (fabs##SUF(a.re) > (T)20)                                                  \
            return C##_make(copysign##SUF((T)1, a.re),                                \
                            4 * sin##SUF(a.im) * cos##SUF(a.im) * exp##SUF(-2 * fabs##SUF(a.re))); \
        T d = cosh##SUF(2 * a.re) + cos##SUF(2 * a.im);                               \
        return C##_make(sinh##SUF(2 * a.re) / d, sin##SUF(2 * a.im) / d);             \
    }                                                                                 \
    NL_FN C C##_tan(C a) {                                                             \
        C t = C##_tanh(C##_make(-a.im, a.re));                                        \
        return C##_make(t.im, -t.re);                                                 \
    }                                                                                 \
    NL_FN C C##_pow(C a, C b) {                                                        \
        if (b.re == 0 && b.im == 0) return C##_make((T)1, (T)0);                      \
        if (a.re == 0 && a.im == 0) {                                                 \
            if (b.re > 0 && b.im == 0) return C##_make((T)0, (T)0);                   \
            return C##_make((T)NAN, (T)NAN);                                          \
        }                                                                             \
        if (b.im == 0 && b.re == (T)(int)b.re && b.re > -100 && b.re < 100) {         \
            int n = (int)b.re, m = n < 0 ? -n : n;                                    \
            C r = C##_make((T)1, (T)0), p = a;                                        \
            while (m) { if (m & 1) r = C##_mul(r, p); p = C##_mul(p, p); m >>= 1; }   \
            return n < 0 ? C##_div(C##_make((T)1, (T)0), r) : r;                      \
        }                                                                             \
        return C##_exp(C##_mul(b, C##_log(a)));                                       \
    }

NL_COMPLEX(nl_complex64, float, f)
NL_COMPLEX(nl_complex128, double, )

/* Notes of complex values (NL_FE_F above): both parts. */
#ifdef __CUDACC_RTC__
NL_FN nl_complex64 nl_fe_note_c64(nl_complex64 v, float &s) {
    s = fmaf(v.re, 0.0f, fmaf(v.im, 0.0f, s));
    return v;
}
NL_FN nl_complex128 nl_fe_note_c128(nl_complex128 v, double &s) {
    s = fma(v.re, 0.0, fma(v.im, 0.0, s));
    return v;
}
#define NL_FE_C64(v) nl_fe_note_c64((v), nl_fe_f)
#define NL_FE_C128(v) nl_fe_note_c128((v), nl_fe_d)
#else
#define NL_FE_C64(v) (v)
#define NL_FE_C128(v) (v)
#endif

#endif /* NUMLOOM_H */

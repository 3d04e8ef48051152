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
#include <cuda_fp16.h>
typedef __half nl_half;
#define NAN __int_as_float(0x7fc00000)
#define INFINITY __int_as_float(0x7f800000)
#define M_PI 3.14159265358979323846
#else
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#define NL_FN static inline
typedef _Float16 nl_half;
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

/* float16 values are computed in float and rounded to half after every operation, as NumPy's
 * half loops do. */
NL_FN float nl_round_half(float x) { return (float)(nl_half)x; }

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
 * recorded in ``err`` (flag, index) for the backend to raise NumPy's IndexError, and 0 is read. */
NL_FN int64_t nl_index(int64_t i, int64_t n, int64_t *err) {
    const int64_t j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) {
        err[0] = 1;
        err[1] = i;
        return 0;
    }
    return j;
}

/* Exact comparison of a signed and an unsigned 64-bit integer (NumPy's mixed loops): <0, 0, >0. */
NL_FN int nl_cmp_su(int64_t a, uint64_t b) {
    return a < 0 ? -1 : ((uint64_t)a < b ? -1 : ((uint64_t)a > b ? 1 : 0));
}

/* Integer max/min (no NaN). */
#define NL_IMAX(a, b) ((a) >= (b) ? (a) : (b))
#define NL_IMIN(a, b) ((a) <= (b) ? (a) : (b))

#endif /* NUMLOOM_H */

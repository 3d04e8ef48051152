"""NumPy's random streams, reproduced: PCG64 (the bit generator of ``default_rng``) and the
samplers of ``numpy.random.Generator`` that numloom draws on a GPU.

A seeded program draws the same numbers under numloom as under NumPy. For that, numloom needs:

- PCG64's step and output, and its jump-ahead: the state after ``k`` draws is ``A_k * s + C_k``
  (mod 2**128), so any thread can start at any position of the stream (``jumps``);
- the ``uint32`` stream as NumPy makes it: each 64-bit draw gives two, low half first, and a
  half left over is kept in the bit generator's state (``has_uint32``/``uinteger``);
- the samplers themselves, written as NumPy's C code is (``SAMPLERS``, C that compiles both as
  CUDA and as host C): ``random``, ``uniform``, and the ziggurat samplers of
  ``standard_normal``, ``normal`` and ``standard_exponential``/``exponential``;
- the ziggurat tables, read from the NumPy that is installed (its ``libnpyrandom.a``), so the
  constants are the very ones NumPy uses.

After a draw on the device, the host generator's state is moved on by the number of draws the
samples consumed, so drawing continues, on either device, where NumPy would continue.
"""

from __future__ import annotations

import functools
import os
import struct

import numpy as _np

MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341  # PCG64's 128-bit multiplier
_MASK128 = (1 << 128) - 1
_MASK64 = (1 << 64) - 1

# The ziggurat tables, 256 entries each, in the order the kernels find them (``SAMPLERS``)
TABLES = ("ki_double", "wi_double", "fi_double", "ke_double", "we_double", "fe_double",
          "ki_float", "wi_float", "fi_float", "ke_float", "we_float", "fe_float")  # fmt: skip


def step(state: int, inc: int) -> int:
    return (state * MULTIPLIER + inc) & _MASK128


def output(state: int) -> int:
    """PCG64's 64-bit output of a (stepped) state: XSL-RR."""
    x = ((state >> 64) ^ state) & _MASK64
    rot = state >> 122
    return ((x >> rot) | (x << ((64 - rot) & 63))) & _MASK64


def jump(steps: int, inc: int) -> tuple:
    """``(A, C)``: ``steps`` draws of the stream take state ``s`` to ``A * s + C``."""
    a, c = 1, 0  # the jump so far
    mult, plus = MULTIPLIER, inc  # the jump by the current power of two
    while steps:
        if steps & 1:
            a, c = (a * mult) & _MASK128, (c * mult + plus) & _MASK128
        plus = (plus * (mult + 1)) & _MASK128
        mult = (mult * mult) & _MASK128
        steps >>= 1
    return a, c


@functools.lru_cache(maxsize=16)
def jumps(inc: int, near: int = 0) -> _np.ndarray:
    """The jumps by 2**k draws, k = 0..63, then by d draws, d = 0..near-1, as ``uint64``
    words ``(A.hi, A.lo, C.hi, C.lo)``.

    ``A`` (the multiplier's power) does not depend on the stream, and ``C = inc * S`` where
    ``S`` is the jump's ``C`` for ``inc = 1``: both kept per ``near``, so a new stream (each
    of Dask's chunks draws from its own) costs one 128-bit product per jump, in NumPy, not
    the jumps' Python integer arithmetic (about 6 ms a stream)."""
    a_hi, a_lo, s_hi, s_lo = _unit_jumps(near)
    i_hi, i_lo = _np.uint64(inc >> 64), _np.uint64(inc & _MASK64)
    # inc * S mod 2**128: the low words' full product, and the cross terms' low words
    c_hi, c_lo = _mul_64x64(i_lo, s_lo)
    c_hi = c_hi + i_lo * s_hi + i_hi * s_lo  # (uint64: wraps mod 2**64)
    words = _np.empty((len(a_hi), 4), _np.uint64)
    words[:, 0], words[:, 1], words[:, 2], words[:, 3] = a_hi, a_lo, c_hi, c_lo
    return words.reshape(-1)


@functools.lru_cache(maxsize=4)
def _unit_jumps(near: int) -> tuple:
    """``jumps``' multipliers ``A`` and its ``C`` for ``inc = 1``, as (A.hi, A.lo, S.hi, S.lo)
    word arrays."""
    pairs = [jump(1 << k, 1) for k in range(64)]
    a, c = 1, 0
    for _ in range(near):
        pairs.append((a, c))
        a, c = (a * MULTIPLIER) & _MASK128, (c * MULTIPLIER + 1) & _MASK128
    return tuple(_np.array(words, _np.uint64) for words in (
        [a >> 64 for a, _ in pairs], [a & _MASK64 for a, _ in pairs],
        [c >> 64 for _, c in pairs], [c & _MASK64 for _, c in pairs]))  # fmt: skip


def _mul_64x64(x: _np.uint64, y: _np.ndarray) -> tuple:
    """``(hi, lo)`` words of the 128-bit products ``x * y`` (uint64), through 32-bit halves."""
    m32, k32 = _np.uint64(0xFFFFFFFF), _np.uint64(32)
    x0, x1, y0, y1 = x & m32, x >> k32, y & m32, y >> k32
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    middle = (p00 >> k32) + (p01 & m32) + (p10 & m32)
    hi = p11 + (p01 >> k32) + (p10 >> k32) + (middle >> k32)
    return hi, x * y


def advanced(state: dict, draws: int, unit32: bool) -> dict:
    """PCG64's ``state`` dict after ``draws`` draws of 64 bits (``unit32``: of 32 bits, as
    NumPy's ``next_uint32`` takes them, half a 64-bit draw each)."""
    s, inc = state["state"]["state"], state["state"]["inc"]
    has, buf = state["has_uint32"], state["uinteger"]
    if unit32:
        if has and draws:
            draws, has = draws - 1, 0
        whole, half = divmod(draws, 2)
        if whole + half:  # (NumPy keeps the last high half, taken or not)
            a, c = jump(whole + half, inc)
            s = (a * s + c) & _MASK128
            has, buf = half, output(s) >> 32
    elif draws:
        a, c = jump(draws, inc)
        s = (a * s + c) & _MASK128
    return {"bit_generator": "PCG64", "state": {"state": s, "inc": inc},
            "has_uint32": has, "uinteger": buf}  # fmt: skip


def _archive_members(data: bytes):
    """The files inside a Unix ``ar`` archive (a static library)."""
    if data[:8] != b"!<arch>\n":
        return
    pos = 8
    while pos + 60 <= len(data):
        size = int(data[pos + 48:pos + 58].decode().strip())
        yield data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)


def _elf_symbols(obj: bytes) -> dict:
    """The bytes of each defined, sized symbol of a 64-bit little-endian ELF object."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return {}
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize)
                for i in range(shnum)]  # fmt: skip
    found = {}
    for sec in sections:
        if sec[1] != 2:  # SHT_SYMTAB
            continue
        names = sections[sec[6]][4]
        for k in range(sec[5] // 24):
            name, _, _, where, value, size = struct.unpack_from("<IBBHQQ", obj, sec[4] + k * 24)
            if not size or not 0 < where < shnum or sections[where][1] == 8:  # (SHT_NOBITS)
                continue
            end = obj.index(b"\0", names + name)
            start = sections[where][4] + value
            found[obj[names + name:end].decode()] = obj[start:start + size]
    return found


@functools.cache
def ziggurat_tables() -> bytes | None:
    """NumPy's ziggurat tables (``TABLES``, 256 entries each, 8-byte then 4-byte entries) from
    the installed NumPy's ``libnpyrandom.a``; None where they cannot be read there."""
    path = os.path.join(os.path.dirname(_np.__file__), "random", "lib", "libnpyrandom.a")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    for obj in _archive_members(data):
        symbols = _elf_symbols(obj)
        if all(symbols.get(name) is not None for name in TABLES):
            sizes = [8 * 256] * 6 + [4 * 256] * 6
            if all(len(symbols[n]) == s for n, s in zip(TABLES, sizes)):
                return b"".join(symbols[name] for name in TABLES)
    return None


# NumPy's samplers as C that compiles as CUDA and as host C. A sampler draws from an
# ``nl_src`` (a PCG64 stream at some position, with NumPy's 32-bit buffering) and counts the
# draws it takes in ``used``; an *attempt* is one pass of NumPy's loop: it returns 1 with
# ``*out`` set when it accepts, 0 when NumPy would start over with new draws. Products and
# sums go through NL_MUL/NL_ADD so that the GPU never fuses them (NumPy's C does not).
def _constants() -> str:
    """C constants of ``nl_log``: ln 2 and 1/k! (k = 9 down to 1) as double-doubles."""
    import decimal
    import fractions
    import math

    decimal.getcontext().prec = 60
    ln2 = decimal.Decimal(2).ln()
    hi = float(ln2)
    lines = [f"#define NL_LN2_HI {hi!r}", f"#define NL_LN2_LO {float(ln2 - decimal.Decimal(hi))!r}",
             f"#define NL_INV_LN2 {float(1 / ln2)!r}"]  # fmt: skip
    facts = [fractions.Fraction(1, math.factorial(k)) for k in range(9, 0, -1)]
    his = [float(f) for f in facts]
    los = [float(f - fractions.Fraction(h)) for f, h in zip(facts, his)]
    lines.append(f"#define NL_INV_FACTS {len(facts)}")
    for name, values in (("HI", his), ("LO", los)):
        lines.append(f"NL_TABLE double NL_INV_FACT_{name}[] = {{{', '.join(map(repr, values))}}};")
    return "\n".join(lines) + "\n"


SAMPLERS = r"""
typedef unsigned long long nl_u64;
typedef unsigned int nl_u32;
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NL_FN static __device__ __forceinline__
#define NL_MULHI(a, b) __umul64hi(a, b)
#define NL_DMUL(a, b) __dmul_rn(a, b)
#define NL_DADD(a, b) __dadd_rn(a, b)
#define NL_FMUL(a, b) __fmul_rn(a, b)
#define NL_FADD(a, b) __fadd_rn(a, b)
#define NL_TABLE static __device__ const
#else
#include <math.h>
#define NL_FN static inline
#define NL_MULHI(a, b) ((nl_u64)(((unsigned __int128)(a) * (b)) >> 64))
#define NL_DMUL(a, b) ((a) * (b))
#define NL_DADD(a, b) ((a) + (b))
#define NL_FMUL(a, b) ((a) * (b))
#define NL_FADD(a, b) ((a) + (b))
#define NL_TABLE static const
#endif
#define NL_MULT_HI 2549297995355413924ULL
#define NL_MULT_LO 4865540595714422341ULL
#define NL_ZNOR_R 3.6541528853610087963519472518
#define NL_ZNOR_INV_R 0.27366123732975827203338247596
#define NL_ZEXP_R 7.6971174701310497140446280481
#define NL_ZNOR_R_F 3.6541528853610087963519472518f
#define NL_ZNOR_INV_R_F 0.27366123732975827203338247596f
#define NL_ZEXP_R_F 7.6971174701310497140446280481f

""" + _constants() + r"""
typedef struct { nl_u64 hi, lo; } nl_u128;
typedef struct { nl_u128 s, inc; nl_u32 buf; int has; long long used; } nl_src;

/* a * s + c, mod 2**128 */
NL_FN nl_u128 nl_muladd(nl_u128 a, nl_u128 s, nl_u128 c) {
    nl_u128 r;
    nl_u64 lo = a.lo * s.lo;
    nl_u64 hi = NL_MULHI(a.lo, s.lo) + a.hi * s.lo + a.lo * s.hi;
    r.lo = lo + c.lo;
    r.hi = hi + c.hi + (r.lo < lo);
    return r;
}

/* ``s`` moved on by the jump whose words (A.hi, A.lo, C.hi, C.lo) are at ``w`` */
NL_FN nl_u128 nl_jump_by(nl_u128 s, const nl_u64 *w) {
    nl_u128 a, c;
    a.hi = w[0]; a.lo = w[1]; c.hi = w[2]; c.lo = w[3];
    return nl_muladd(a, s, c);
}

/* the state ``d`` draws after ``s``, for d < the near jumps ``jumps`` holds after its 64 */
NL_FN nl_u128 nl_near(nl_u128 s, const nl_u64 *jumps, long long d) {
    return nl_jump_by(s, jumps + 4 * (64 + d));
}

/* the state ``pos`` draws after ``s`` (``jumps``: the jumps by 2**k draws, 4 words each) */
NL_FN nl_u128 nl_jump(nl_u128 s, const nl_u64 *jumps, long long pos) {
    for (int k = 0; pos; k++, pos >>= 1) {
        if (pos & 1) s = nl_jump_by(s, jumps + 4 * k);
    }
    return s;
}

NL_FN nl_u64 nl_raw64(nl_src *r) {
    nl_u128 m; m.hi = NL_MULT_HI; m.lo = NL_MULT_LO;
    r->s = nl_muladd(m, r->s, r->inc);
    nl_u64 x = r->s.hi ^ r->s.lo;
    unsigned rot = (unsigned)(r->s.hi >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

NL_FN nl_u64 nl_next64(nl_src *r) { r->used++; return nl_raw64(r); }

NL_FN nl_u32 nl_next32(nl_src *r) {
    r->used++;
    if (r->has) { r->has = 0; return r->buf; }
    nl_u64 v = nl_raw64(r);
    r->has = 1;
    r->buf = (nl_u32)(v >> 32);
    return (nl_u32)(v & 0xffffffffULL);
}

NL_FN double nl_next_double(nl_src *r) {
    return (double)(nl_next64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* a float in [0, 1) of a 32-bit draw, as NumPy's next_float */
NL_FN float nl_float_of(nl_u32 v) { return (float)(v >> 8) * (1.0f / 16777216.0f); }

NL_FN float nl_next_float(nl_src *r) { return nl_float_of(nl_next32(r)); }

/* a stream (s0 = (a, b), increment (c, d)) at its 64-bit draw ``pos`` */
NL_FN nl_src nl_src_at(nl_u64 a, nl_u64 b, nl_u64 c, nl_u64 d, const nl_u64 *jumps,
                       long long pos) {
    nl_src r;
    r.s.hi = a; r.s.lo = b; r.inc.hi = c; r.inc.lo = d; r.has = 0; r.buf = 0; r.used = 0;
    r.s = nl_jump(r.s, jumps, pos);
    return r;
}

/* log(x) for 0 < x <= 1, correctly rounded (as the C library's log is, but for the rarest
   ties): the device's log, within an ulp, refined by one Newton step against exp in
   double-double arithmetic (about 100 bits). Only tail samples take logarithms. */
typedef struct { double hi, lo; } nl_dd;

NL_FN nl_dd nl_dd_norm(double hi, double lo) {
    nl_dd r; r.hi = NL_DADD(hi, lo); r.lo = NL_DADD(lo, -NL_DADD(r.hi, -hi)); return r;
}

NL_FN nl_dd nl_dd_add(nl_dd a, nl_dd b) {
    double s = NL_DADD(a.hi, b.hi);
    double bb = NL_DADD(s, -a.hi);
    double e = NL_DADD(NL_DADD(a.hi, -NL_DADD(s, -bb)), NL_DADD(b.hi, -bb));
    return nl_dd_norm(s, NL_DADD(e, NL_DADD(a.lo, b.lo)));
}

NL_FN nl_dd nl_dd_mul(nl_dd a, nl_dd b) {
    double p = NL_DMUL(a.hi, b.hi);
    double e = fma(a.hi, b.hi, -p);
    e = NL_DADD(e, NL_DADD(NL_DMUL(a.hi, b.lo), NL_DMUL(a.lo, b.hi)));
    return nl_dd_norm(p, e);
}

NL_FN nl_dd nl_dd_of(double hi, double lo) { nl_dd r; r.hi = hi; r.lo = lo; return r; }

/* exp(y) in double-double */
NL_FN nl_dd nl_dd_exp(double y) {
    const double k = rint(NL_DMUL(y, NL_INV_LN2));
    double p = NL_DMUL(k, NL_LN2_HI);
    double pe = fma(k, NL_LN2_HI, -p);
    nl_dd r = nl_dd_add(nl_dd_of(NL_DADD(y, -p), 0.0), nl_dd_of(-pe, 0.0));
    double q = NL_DMUL(k, NL_LN2_LO);
    r = nl_dd_add(r, nl_dd_of(-q, -fma(k, NL_LN2_LO, -q)));
    r.hi = NL_DMUL(r.hi, 1.0 / 256.0); r.lo = NL_DMUL(r.lo, 1.0 / 256.0);
    nl_dd e = nl_dd_of(NL_INV_FACT_HI[0], NL_INV_FACT_LO[0]);  /* exp(s) - 1, Horner */
    for (int i = 1; i < NL_INV_FACTS; i++)
        e = nl_dd_add(nl_dd_mul(e, r), nl_dd_of(NL_INV_FACT_HI[i], NL_INV_FACT_LO[i]));
    e = nl_dd_mul(e, r);
    for (int i = 0; i < 8; i++) e = nl_dd_add(nl_dd_add(e, e), nl_dd_mul(e, e));
    e = nl_dd_add(e, nl_dd_of(1.0, 0.0));
    e.hi = ldexp(e.hi, (int)k); e.lo = ldexp(e.lo, (int)k);
    return e;
}

NL_FN double nl_log(double x) {
    const double y = log(x);
    const nl_dd e = nl_dd_exp(y);
    nl_dd d = nl_dd_add(nl_dd_of(x, 0.0), nl_dd_of(-e.hi, -e.lo));
    return NL_DADD(y, d.hi / e.hi);
}

#define NL_ZKI_D(t) ((const nl_u64 *)(t))
#define NL_ZWI_D(t) ((const double *)((t) + 2048))
#define NL_ZFI_D(t) ((const double *)((t) + 4096))
#define NL_ZKE_D(t) ((const nl_u64 *)((t) + 6144))
#define NL_ZWE_D(t) ((const double *)((t) + 8192))
#define NL_ZFE_D(t) ((const double *)((t) + 10240))
#define NL_ZKI_F(t) ((const nl_u32 *)((t) + 12288))
#define NL_ZWI_F(t) ((const float *)((t) + 13312))
#define NL_ZFI_F(t) ((const float *)((t) + 14336))
#define NL_ZKE_F(t) ((const nl_u32 *)((t) + 15360))
#define NL_ZWE_F(t) ((const float *)((t) + 16384))
#define NL_ZFE_F(t) ((const float *)((t) + 17408))

/* The first lines of each sampler: the sample of a first draw that is accepted at once (1),
   as about 99% are; 0 where the attempt needs more (``*_from`` then, the rest of NumPy's code). */
NL_FN int nl_normal64_fast(nl_u64 v, const unsigned char *t, double *out) {
    const int idx = (int)(v & 0xff);
    const nl_u64 rabs = (v >> 9) & 0x000fffffffffffffULL;
    double x = NL_DMUL((double)rabs, NL_ZWI_D(t)[idx]);
    if ((v >> 8) & 0x1) x = -x;
    *out = x;
    return rabs < NL_ZKI_D(t)[idx];
}

NL_FN int nl_normal32_fast(nl_u32 v, const unsigned char *t, float *out) {
    const int idx = (int)(v & 0xff);
    const nl_u32 rabs = (v >> 9) & 0x0007fffffu;
    float x = NL_FMUL((float)rabs, NL_ZWI_F(t)[idx]);
    if ((v >> 8) & 0x1) x = -x;
    *out = x;
    return rabs < NL_ZKI_F(t)[idx];
}

NL_FN int nl_exponential64_fast(nl_u64 v, const unsigned char *t, double *out) {
    const int idx = (int)((v >> 3) & 0xff);
    const nl_u64 ri = v >> 11;
    *out = NL_DMUL((double)ri, NL_ZWE_D(t)[idx]);
    return ri < NL_ZKE_D(t)[idx];
}

NL_FN int nl_exponential32_fast(nl_u32 v, const unsigned char *t, float *out) {
    const int idx = (int)((v >> 1) & 0xff);
    const nl_u32 ri = v >> 9;
    *out = NL_FMUL((float)ri, NL_ZWE_F(t)[idx]);
    return ri < NL_ZKE_F(t)[idx];
}

/* One attempt from its first draw ``v``, ``r`` the stream after it. */
NL_FN int nl_normal64_from(nl_u64 v, nl_src *r, const unsigned char *t, double *out) {
    if (nl_normal64_fast(v, t, out)) return 1;
    const int idx = (int)(v & 0xff);
    const nl_u64 rabs = (v >> 9) & 0x000fffffffffffffULL;
    const double x = *out;
    if (idx == 0) {
        for (;;) {
            double xx = NL_DMUL(-NL_ZNOR_INV_R, NL_LOG1M(nl_next_double(r)));
            double yy = -NL_LOG1M(nl_next_double(r));
            if (NL_DADD(yy, yy) > NL_DMUL(xx, xx)) {
                *out = ((rabs >> 8) & 0x1) ? -NL_DADD(NL_ZNOR_R, xx) : NL_DADD(NL_ZNOR_R, xx);
                return 1;
            }
        }
    }
    const double *fi = NL_ZFI_D(t);
    return NL_DADD(NL_DMUL(fi[idx - 1] - fi[idx], nl_next_double(r)), fi[idx])
           < exp(NL_DMUL(NL_DMUL(-0.5, x), x));
}

NL_FN int nl_normal32_from(nl_u32 v, nl_src *r, const unsigned char *t, float *out) {
    if (nl_normal32_fast(v, t, out)) return 1;
    const int idx = (int)(v & 0xff);
    const nl_u32 rabs = (v >> 9) & 0x0007fffffu;
    const float x = *out;
    if (idx == 0) {
        for (;;) {
            float xx = NL_FMUL(-NL_ZNOR_INV_R_F, NL_LOG1MF(nl_next_float(r)));
            float yy = -NL_LOG1MF(nl_next_float(r));
            if (NL_FADD(yy, yy) > NL_FMUL(xx, xx)) {
                *out = ((rabs >> 8) & 0x1) ? -NL_FADD(NL_ZNOR_R_F, xx) : NL_FADD(NL_ZNOR_R_F, xx);
                return 1;
            }
        }
    }
    const float *fi = NL_ZFI_F(t);
    return NL_FADD(NL_FMUL(fi[idx - 1] - fi[idx], nl_next_float(r)), fi[idx])
           < exp(NL_DMUL(NL_DMUL(-0.5, (double)x), (double)x));
}

NL_FN int nl_exponential64_from(nl_u64 v, nl_src *r, const unsigned char *t, double *out) {
    if (nl_exponential64_fast(v, t, out)) return 1;
    const int idx = (int)((v >> 3) & 0xff);
    if (idx == 0) { *out = NL_ZEXP_R - NL_LOG1P(nl_next_double(r)); return 1; }
    const double *fe = NL_ZFE_D(t);
    return NL_DADD(NL_DMUL(fe[idx - 1] - fe[idx], nl_next_double(r)), fe[idx]) < exp(-*out);
}

NL_FN int nl_exponential32_from(nl_u32 v, nl_src *r, const unsigned char *t, float *out) {
    if (nl_exponential32_fast(v, t, out)) return 1;
    const int idx = (int)((v >> 1) & 0xff);
    if (idx == 0) { *out = NL_ZEXP_R_F - NL_LOG1PF(nl_next_float(r)); return 1; }
    const float *fe = NL_ZFE_F(t);
    return NL_FADD(NL_FMUL(fe[idx - 1] - fe[idx], nl_next_float(r)), fe[idx]) < expf(-*out);
}

/* ``integers``: Lemire's bounded draws, as NumPy's ``random_bounded_uint64_fill`` and
   ``_uint32_fill`` make them (one draw an attempt; ``excl`` = the range + 1, accepted where the
   low word is at least ``threshold`` = (2**bits - excl) % excl). */
NL_FN int nl_lemire32(nl_u32 v, nl_u64 excl, nl_u64 threshold, nl_u64 *out) {
    const nl_u64 m = (nl_u64)v * excl;
    *out = m >> 32;
    return (m & 0xffffffffULL) >= threshold;
}

NL_FN int nl_lemire64(nl_u64 v, nl_u64 excl, nl_u64 threshold, nl_u64 *out) {
    *out = NL_MULHI(v, excl);
    return v * excl >= threshold;
}

/* the samplers from their first draw on (``*_from``: the first draw given, ``r`` after it) */
NL_FN int nl_normal64(nl_src *r, const unsigned char *t, double *out) {
    return nl_normal64_from(nl_next64(r), r, t, out);
}
NL_FN int nl_normal32(nl_src *r, const unsigned char *t, float *out) {
    return nl_normal32_from(nl_next32(r), r, t, out);
}
NL_FN int nl_exponential64(nl_src *r, const unsigned char *t, double *out) {
    return nl_exponential64_from(nl_next64(r), r, t, out);
}
NL_FN int nl_exponential32(nl_src *r, const unsigned char *t, float *out) {
    return nl_exponential32_from(nl_next32(r), r, t, out);
}
"""

# How the tail samplers take the logarithm of 1 - u. NumPy 2 writes ``log(1.0 - u)`` in the
# normal's and ``log1p(-u)`` in the exponential's; 1 - u is exact (u is a multiple of 2**-53,
# or 2**-24 in single precision), so both are the correctly rounded log of 1 - u, which
# ``nl_log`` computes on either device (single precision: rounded from double's).
LOG1M = ("#define NL_LOG1M(u) nl_log(1.0 - (u))\n"
         "#define NL_LOG1MF(u) ((float)nl_log((double)(1.0f - (u))))\n"
         "#define NL_LOG1P(u) nl_log(1.0 - (u))\n"
         "#define NL_LOG1PF(u) ((float)nl_log((double)(1.0f - (u))))\n")

"""``numloom.cuda.random``: numba.cuda.random's xoroshiro128+ generators, one per thread, on
both devices::

    from numloom.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def draw(out, states):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(n, seed=42)
    draw.forall(n)(out, states)

The streams are Numba's, number for number: state ``i`` is the seed's SplitMix64 state jumped
``subsequence_start + i`` times by 2**64 steps. A states array is a numloom ``uint64`` array of
shape ``(n, 2)`` (Numba's is a record array of fields ``s0`` and ``s1``; a NumPy record array of
``xoroshiro128p_dtype`` is accepted where states are initialized). The draw functions work
inside kernels, and on host arrays outside them (one number at a time).
"""

from __future__ import annotations

import ctypes

import numpy as _np

xoroshiro128p_dtype = _np.dtype([("s0", _np.uint64), ("s1", _np.uint64)], align=True)

_M64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)

_INIT = r"""
#include "numloom.h"
#include "numloom_kernels.h"
static void nl_jump(uint64_t *s) {
    static const uint64_t jump[2] = {0xBEAC0467EBA5FACBull, 0xD86B048B86AA9922ull};
    uint64_t a = 0, b = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 64; k++) {
            if (jump[i] & ((uint64_t)1 << k)) { a ^= s[0]; b ^= s[1]; }
            nl_xoro_next(s);
        }
    s[0] = a; s[1] = b;
}
void nl_xoroshiro128p_init(uint64_t *states, int64_t n, uint64_t seed, uint64_t start) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    if (n < 1) return;
    states[0] = z; states[1] = z;
    for (uint64_t j = 0; j < start; j++) nl_jump(states);
    for (int64_t i = 1; i < n; i++) {
        states[2 * i] = states[2 * i - 2]; states[2 * i + 1] = states[2 * i - 1];
        nl_jump(states + 2 * i);
    }
}
"""


def _next(s: list) -> int:
    s0, s1 = s
    result = (s0 + s1) & _M64
    s1 ^= s0
    s[0] = (((s0 << 55) | (s0 >> 9)) & _M64) ^ s1 ^ ((s1 << 14) & _M64)
    s[1] = ((s1 << 36) | (s1 >> 28)) & _M64
    return result


def _jump(s: list) -> None:
    a = b = 0
    for word in _JUMP:
        for k in range(64):
            if word >> k & 1:
                a ^= s[0]
                b ^= s[1]
            _next(s)
    s[0], s[1] = a, b


def _init_host(states: _np.ndarray, seed: int, subsequence_start: int) -> None:
    """Numba's ``init_xoroshiro128p_states_cpu`` into a C-contiguous ``(n, 2)`` uint64 array:
    compiled C where a C compiler is found, else the same steps in Python."""
    n = states.shape[0]
    seed, start = int(seed) & _M64, int(subsequence_start) & _M64
    try:
        from numloom.compile import compiler

        lib = compiler.compile_c(_INIT, name_hint="xoroshiro128p",
                                 symbol="nl_xoroshiro128p_init")  # fmt: skip
        fn = lib.nl_xoroshiro128p_init
        fn.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64)
        fn(states.ctypes.data, n, seed, start)
        return
    except Exception:  # noqa: BLE001 (no C compiler: Python, slower)
        pass
    if n < 1:
        return
    z = (seed + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    s = [z ^ (z >> 31)] * 2
    for _ in range(start):
        _jump(s)
    states[0] = s
    for i in range(1, n):
        _jump(s)
        states[i] = s


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0) -> None:
    """Numba's: initialize ``states`` (a numloom or NumPy ``(n, 2)`` uint64 array, or a NumPy
    record array of ``xoroshiro128p_dtype``) for ``n`` generators 2**64 steps apart."""
    if isinstance(states, _np.ndarray) and _records(states):
        words = _np.zeros((states.shape[0], 2), _np.uint64)
        _init_host(words, seed, subsequence_start)
        states["s0"], states["s1"] = words[:, 0], words[:, 1]
        return
    if states.dtype != _np.uint64 or states.ndim != 2 or states.shape[1] != 2:
        raise TypeError(f"xoroshiro128+ states are an (n, 2) uint64 array, not "
                        f"{states.dtype} of shape {states.shape}")  # fmt: skip
    words = _np.zeros(states.shape, _np.uint64)
    _init_host(words, seed, subsequence_start)
    states[...] = words


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """Numba's: a new states array (numloom, on the current device) for ``n`` generators."""
    from numloom.core.array import from_host

    if int(n) < 0:
        raise ValueError(f"create_xoroshiro128p_states: n must be >= 0, not {n}")
    words = _np.zeros((int(n), 2), _np.uint64)
    _init_host(words, seed, subsequence_start)
    return from_host(words)


def _records(states) -> bool:
    """Whether ``states`` is Numba's record layout (fields ``s0``, ``s1``), not ``(n, 2)``."""
    return getattr(states, "dtype", None) == xoroshiro128p_dtype


def _row(states, index) -> list:
    row = states[int(index)]
    if _records(states):
        return [int(row["s0"]), int(row["s1"])]
    return [int(v) for v in _np.asarray(row)]


def _store(states, index, s: list) -> None:
    states[int(index)] = (s[0], s[1]) if _records(states) else _np.array(s, _np.uint64)


def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``index`` (advancing it)."""
    s = _row(states, index)
    result = _next(s)
    _store(states, index, s)
    return _np.uint64(result)


def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0, 1) from generator ``index``."""
    return _np.float64(int(xoroshiro128p_next(states, index)) >> 11) * (1.0 / 2.0**53)


def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0, 1) from generator ``index``."""
    return _np.float32(xoroshiro128p_uniform_float64(states, index))


def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32 (Box-Muller, two steps of generator ``index``)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    with _np.errstate(all="ignore"):
        return (_np.sqrt(_np.float32(-2.0) * _np.log(u1))
                * _np.cos(_np.float32(2 * _np.pi) * u2))  # fmt: skip


def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64 (Box-Muller on two float32 uniforms, as Numba's)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    with _np.errstate(all="ignore"):
        return _np.float64(_np.sqrt(-2.0 * _np.float64(_np.log(u1)))
                           * _np.cos(_np.float64(2 * _np.pi) * _np.float64(u2)))  # fmt: skip


__all__ = ["create_xoroshiro128p_states", "init_xoroshiro128p_states", "xoroshiro128p_dtype",
           "xoroshiro128p_next", "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64",
           "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64"]

"""Philox4x32-10, the counter-based generator of Random123 (Salmon et al., SC'11), written as
numloom array operations: a draw is one fused kernel on either device, with no state but a key
and a counter.

numloom draws the legacy ``numpy.random`` functions and ``RandomState`` methods this way on a
GPU. Their NumPy stream (MT19937) cannot jump ahead cheaply, so on a GPU they draw other numbers
than NumPy, from the same seed every run (``NUMLOOM_RANDOM=numpy`` draws NumPy's on the host).
Block ``i`` of a stream is ``philox(counter=(i, 0), key=seed)``: four 32-bit words, two 53-bit
doubles. ``Stream`` keeps a stream's key and how many blocks it has used.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as _np

_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW = 0xFFFFFFFF
ROUNDS = 10


def blocks(xp, first: int, count: int, key: tuple):
    """Words ``(x0, x1, x2, x3)`` (uint64 arrays holding 32 bits each) of Philox blocks
    ``first .. first + count - 1`` under ``key`` (two 32-bit ints), computed with ``xp``
    (numloom, or NumPy for a reference)."""
    return blocks_of(xp, xp.arange(first, first + count, dtype=xp.uint64), key)


def blocks_of(xp, i, key: tuple):
    """The words of Philox blocks ``i`` (a uint64 array of block numbers) under ``key``."""
    c0, c1 = i & _LOW, i >> 32
    c2 = c3 = i * 0
    k0, k1 = key
    for _ in range(ROUNDS):
        p0, p1 = c0 * _M0, c2 * _M1
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _LOW, (p0 >> 32) ^ c3 ^ k1, p0 & _LOW
        k0, k1 = (k0 + _W0) & _LOW, (k1 + _W1) & _LOW
    return c0, c1, c2, c3


def doubles(xp, first: int, n: int, key: tuple):
    """``n`` doubles in [0, 1) (53 bits each, two a block) from block ``first`` on. Each
    element computes its own block (elementwise, so the draw fuses with what uses it)."""
    i = xp.arange(n, dtype=xp.uint64)
    c0, c1, c2, c3 = blocks_of(xp, (i >> 1) + first, key)
    bits = xp.where((i & 1) == 0, (c0 << 32) | c1, (c2 << 32) | c3) >> 11
    return bits.astype(xp.float64) * (1.0 / 9007199254740992.0)


def key_of(seed) -> tuple:
    """A Philox key from what ``numpy.random.seed`` takes (None: fresh entropy)."""
    if seed is None:
        value = int.from_bytes(os.urandom(8), "little")
    else:
        words = _np.asarray(seed).astype(_np.uint64, casting="unsafe").reshape(-1)
        value = 0
        for w in words.tolist():  # (a sequence of ints folds into one 64-bit key)
            value = (value * 0x9E3779B97F4A7C15 + w + 1) & ((1 << 64) - 1)
    return (value & _LOW, (value >> 32) & _LOW)


class Stream:
    """A Philox stream: its key and the next unused block (thread-safe)."""

    def __init__(self, seed=None):
        self.lock = threading.Lock()
        self.seed(seed)

    def seed(self, seed=None) -> None:
        with self.lock:
            self.key, self.used = key_of(seed), 0

    def take(self, n: int) -> tuple:
        """``(first block, key)`` for ``n`` doubles; the stream moves past them."""
        with self.lock:
            first = self.used
            self.used += max(1, math.ceil(n / 2))
            return first, self.key

"""Bit packing (packbits, unpackbits) from numloom's shifts, masks, sums and joins: one fused
kernel each, on every device, with NumPy's dtypes, padding and ``count`` rules.
"""

from __future__ import annotations

import operator

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from ..core.array import asarray
from . import elementwise as _ew
from . import reductions as _r
from .creation import zeros
from .joins import concatenate
from .shapes import moveaxis

__all__ = ["packbits", "unpackbits"]


def _bit_shifts(bitorder: str, device):
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = _np.arange(7, -1, -1) if bitorder == "big" else _np.arange(8)
    return asarray(shifts.astype(_np.uint8), device=device)


def packbits(a, /, axis=None, bitorder="big"):
    """The elements of integer or boolean ``a`` as bits (non-zero: 1), packed eight to a
    uint8 along ``axis`` (of the flattened ``a`` when None), the last byte padded with 0s."""
    a = asarray(a)
    _np.packbits(_np.zeros(1, a.dtype), bitorder=bitorder)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    bits = moveaxis(a != 0, axis, -1).astype(_np.uint8)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        zeros_shape = bits.shape[:-1] + (pad,)
        bits = concatenate((bits, zeros(zeros_shape, _np.uint8, device=a.device)), axis=-1)
    bits = bits.reshape(bits.shape[:-1] + ((n + pad) // 8, 8))
    packed = _r.sum(_ew.left_shift(bits, _bit_shifts(bitorder, a.device)), axis=-1,
                    dtype=_np.uint8)  # fmt: skip
    return moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of uint8 ``a``, one uint8 0/1 each, along ``axis`` (of the flattened ``a``
    when None); ``count`` keeps that many (negative: drops that many; past the end: pads 0s)."""
    a = asarray(a)
    _np.unpackbits(_np.zeros(1, a.dtype), bitorder=bitorder)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    moved = moveaxis(a, axis, -1)
    bits = _ew.bitwise_and(_ew.right_shift(moved[..., None], _bit_shifts(bitorder, a.device)), 1)
    n = moved.shape[-1] * 8
    bits = bits.reshape(moved.shape[:-1] + (n,)).astype(_np.uint8)
    if count is not None:
        count = operator.index(count)
        if count < -n:
            raise ValueError("-count larger than number of elements")
        keep = n + count if count < 0 else count
        if keep <= n:
            bits = bits[..., :keep]
        else:
            more = zeros(bits.shape[:-1] + (keep - n,), _np.uint8, device=a.device)
            bits = concatenate((bits, more), axis=-1)
    return moveaxis(bits, -1, axis)

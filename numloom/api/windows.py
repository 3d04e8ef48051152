"""Window functions (bartlett, blackman, hamming, hanning, kaiser) and the modified Bessel
function ``i0``, composed of numloom's ufuncs over an ``arange``: one fused map kernel each, on
every device. Each follows NumPy's own Python source operation for operation, so values and
dtypes are NumPy's.
"""

from __future__ import annotations

import numpy as _np
from numpy.lib._function_base_impl import _i0A, _i0B

from ..core.array import asarray
from . import elementwise as _ew
from .creation import arange, array, ones

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0"]


def _window_length(M):
    """``M`` as NumPy's windows see it: a float64 (or wider) NumPy scalar."""
    return _np.array([0.0, M])[1]


def _empty_or_one(M):
    """The window of fewer than two points (an empty one or ``[1.]``), else None."""
    if M < 1:
        return array([], dtype=M.dtype)
    if M == 1:
        return ones(1, dtype=M.dtype)
    return None


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points."""
    M = _window_length(M)
    short = _empty_or_one(M)
    if short is not None:
        return short
    n = arange(1 - M, M, 2)
    return _ew.where(_ew.less_equal(n, 0), 1 + n / (M - 1), 1 - n / (M - 1))


def blackman(M):
    """The Blackman window of ``M`` points."""
    M = _window_length(M)
    short = _empty_or_one(M)
    if short is not None:
        return short
    n = arange(1 - M, M, 2)
    return 0.42 + 0.5 * _ew.cos(_np.pi * n / (M - 1)) + 0.08 * _ew.cos(2.0 * _np.pi * n / (M - 1))


def hamming(M):
    """The Hamming window of ``M`` points."""
    M = _window_length(M)
    short = _empty_or_one(M)
    if short is not None:
        return short
    n = arange(1 - M, M, 2)
    return 0.54 + 0.46 * _ew.cos(_np.pi * n / (M - 1))


def hanning(M):
    """The Hann window of ``M`` points."""
    M = _window_length(M)
    short = _empty_or_one(M)
    if short is not None:
        return short
    n = arange(1 - M, M, 2)
    return 0.5 + 0.5 * _ew.cos(_np.pi * n / (M - 1))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    values = _np.array([0.0, M, beta])
    M, beta = values[1], values[2]
    if M == 1:
        return ones(1, dtype=values.dtype)
    n = arange(0, M)
    alpha = (M - 1) / 2.0
    return i0(beta * _ew.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / _np.i0(beta)


def _chbevl(x, vals):
    """The Chebyshev series with coefficients ``vals`` at ``x`` (Clenshaw's recurrence)."""
    b0 = vals[0]
    b1 = 0.0
    for i in range(1, len(vals)):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + vals[i]
    return 0.5 * (b0 - b2)


def i0(x):
    """The modified Bessel function of the first kind, order 0, elementwise (Cephes'
    Chebyshev approximations, as NumPy): float input keeps its dtype, other real input gives
    float64."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = x.astype(float)
    x = _ew.absolute(x)
    small = x <= 8.0
    near = _ew.where(small, x, x.dtype.type(0))  # (each branch sees only its own points)
    far = _ew.where(small, x.dtype.type(16), x)
    y1 = _ew.exp(near) * _chbevl(near / 2.0 - 2, _i0A)
    y2 = _ew.exp(far) * _chbevl(32.0 / far - 2.0, _i0B) / _ew.sqrt(far)
    return _ew.where(small, y1, y2).astype(x.dtype, copy=False)

"""Polynomial arithmetic on coefficient arrays (highest power first): polyadd, polysub,
polymul, polyder, polyint and polydiv, composed of numloom's concatenate, ufuncs and convolve,
following NumPy's own Python source. ``numpy.poly1d`` objects are NumPy's own: given one, the
call is NumPy's.
"""

from __future__ import annotations

import functools

import numpy as _np

from ..core.array import asarray
from . import elementwise as _ew
from .creation import arange, ones, zeros
from .joins import atleast_1d, concatenate

__all__ = ["polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv"]


def _or_poly1d(numpy_fn):
    """Decorator: the function, which runs NumPy's ``numpy_fn`` when given a ``poly1d``."""

    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if any(isinstance(v, _np.poly1d) for v in (*args, *kwargs.values())):
                return numpy_fn(*args, **kwargs)
            return fn(*args, **kwargs)

        return run

    return decorate


def _aligned(a1, a2):
    """The two coefficient arrays, the shorter padded with leading zeros of its own dtype."""
    a1, a2 = atleast_1d(a1), atleast_1d(a2)
    diff = len(a2) - len(a1)
    if diff > 0:
        a1 = concatenate((zeros(diff, a1.dtype, device=a1.device), a1))
    elif diff < 0:
        a2 = concatenate((zeros(-diff, a2.dtype, device=a2.device), a2))
    return a1, a2


@_or_poly1d(_np.polyadd)
def polyadd(a1, a2):
    """The sum of two polynomials."""
    a1, a2 = _aligned(a1, a2)
    return a1 + a2


@_or_poly1d(_np.polysub)
def polysub(a1, a2):
    """The difference of two polynomials (``a1 - a2``)."""
    a1, a2 = _aligned(a1, a2)
    return a1 - a2


@_or_poly1d(_np.polymul)
def polymul(a1, a2):
    """The product of two polynomials (the convolution of their coefficients)."""
    from .composed import convolve

    return convolve(a1, a2)


@_or_poly1d(_np.polyder)
def polyder(p, m=1):
    """The ``m``-th derivative of polynomial ``p``."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = asarray(p)
    for _ in range(m):
        n = len(p) - 1
        p = p[:-1] * arange(n, 0, -1, device=p.device)
    return p


@_or_poly1d(_np.polyint)
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of polynomial ``p``, with integration constants ``k``
    (a scalar or ``m`` values; zeros by default)."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    p = asarray(p)
    if k is None:
        k = zeros(m, float, device=p.device)
    k = atleast_1d(asarray(k, device=p.device))
    if len(k) == 1 and m > 1:
        k = k[0:1] * ones(m, float, device=p.device)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for j in range(m):
        p = concatenate((p / arange(len(p), 0, -1, device=p.device), k[j : j + 1]))
    return p


@_or_poly1d(_np.polydiv)
def polydiv(u, v):
    """The quotient and remainder of polynomial division ``u / v``. Leading remainder terms
    that are zero (to a relative 1e-14) are dropped: that reads them (a sync each)."""
    u = atleast_1d(u) + 0.0
    v = atleast_1d(v) + 0.0
    dtype = _np.result_type(u.dtype, v.dtype)
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0:1]
    q = []
    r = u.astype(dtype)
    for k in range(m - n + 1):
        d = scale * r[k : k + 1]
        q.append(d)
        r = concatenate((r[:k], r[k : k + n + 1] - d * v, r[k + n + 1 :]))
    q = concatenate(q).astype(dtype) if q else zeros(1, dtype, device=u.device)
    while r.shape[-1] > 1 and bool(_ew.isclose(r[0:1], 0, rtol=1e-14).all()):
        r = r[1:]
    return q, r

"""``numloom.linalg``: products run natively; the rest of ``numpy.linalg`` runs through NumPy."""

from __future__ import annotations

import numpy as _np

from .api.fallback import module_getattr
from .api.products import matmul, outer, tensordot, vdot  # noqa: F401
from .api.shapes import matrix_transpose  # noqa: F401

LinAlgError = _np.linalg.LinAlgError


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices over the last two axes (NumPy's ``linalg.diagonal``)."""
    from .api.shapes import diagonal as _diagonal

    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    from .api.products import trace as _trace

    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def __getattr__(name: str):
    return module_getattr("linalg", _np.linalg, name)

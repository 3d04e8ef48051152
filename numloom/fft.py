"""``numloom.fft``: NumPy's FFTs, run through NumPy on the host."""

from __future__ import annotations

import numpy as _np

from .api.fallback import module_getattr


def __getattr__(name: str):
    return module_getattr("fft", _np.fft, name)

"""numloom: NumPy programs, unchanged but for the import, fused and compiled for GPUs and CPUs.

``import numloom as np`` gives NumPy's namespace. Array operations are recorded lazily and run
at sync points (conversion to host, printing, ``np.sync()``); what numloom does not implement
natively runs through NumPy on the host and says so once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as _np
from numpy import (  # noqa: F401  (dtypes, scalar types and constants are NumPy's own)
    bool_, byte, cdouble, clongdouble, complex64, complex128, complexfloating, csingle, double,
    dtype, e, euler_gamma, finfo, float16, float32, float64, floating, generic, half, iinfo, inexact,
    inf, int8, int16, int32, int64, int_, intc, integer, intp, longdouble, longlong, nan, newaxis,
    number, pi, short, signedinteger, single, ubyte, uint, uint8, uint16, uint32, uint64, uintc,
    uintp, ulonglong, unsignedinteger, ushort, errstate, isdtype, promote_types, issubdtype,
)  # fmt: skip

from numpy import bool  # noqa: F401, A004

from .core.array import asarray, ndarray  # noqa: F401  (first: the array handle)
from . import api  # noqa: F401, I001  (the NumPy namespace, which binds into the handle)
from . import fft, linalg  # noqa: F401, I001
from numpy import __version__  # noqa: F401, I001  (the NumPy whose semantics numloom gives:
# programs compare it; numloom's own version is config.VERSION, show_config()'s)
from .core.config import show_config  # noqa: F401
from .core import config  # noqa: F401
from .core import device as device_module  # noqa: F401
from .core.device import CudaError, DeviceError, OutOfMemoryError  # noqa: F401
from .core.device import device, get_device, set_device  # noqa: F401
from .core.device import CompileError  # noqa: F401
from .core.jit import jit  # noqa: F401
from .api.fallback import NumloomFallbackWarning, module_getattr  # noqa: F401
from .api.numpy_api import *  # noqa: F403
from .api.other_dtypes import *  # noqa: F403, E402  (strings, datetimes, objects: NumPy's)
from .api.numpy_api import UFUNCS_BY_NAME  # noqa: F401
from .core.realize import evaluate, stats, sync  # noqa: F401
from .api.ufuncs import ufunc  # noqa: F401
from .api.other_dtypes import guard_namespace as _guard_namespace

_guard_namespace(globals(), _np)  # (NumPy's data and ndarray subclasses meet NumPy's functions)

from .api import libraries as _libraries  # noqa: E402

_libraries.install()  # (pandas, matplotlib's LightSource, SciPy's splu: numloom arrays as NumPy's)
# What a program may not use loads when first used, so ``import numloom`` costs little more
# than NumPy's import: the random module, numba.cuda's kernel API (``numloom.cuda``,
# ``vectorize``, ``numloom.types``: their modules, ``cuda.py`` and ``types.py`` here, stand
# for the kernels folder's), ``explain`` and ``visualize``.
_LAZY = {
    "random": ("numloom.random", None),
    "cuda": ("numloom.cuda", None),
    "types": ("numloom.types", None),
    "vectorize": ("numloom.kernels.vectorize", "vectorize"),
    "explain": ("numloom.tools.explain", "explain"),
    "visualize": ("numloom.tools.visualize", "visualize"),
}


if TYPE_CHECKING:  # (what the lazy names are, for readers of the source: the docs)
    from .tools.explain import explain  # noqa: F401
    from .tools.visualize import visualize  # noqa: F401


def __getattr__(name: str):
    lazy = _LAZY.get(name)
    if lazy is not None:
        import importlib

        value = importlib.import_module(lazy[0])
        if lazy[1] is not None:
            value = getattr(value, lazy[1])
        globals()[name] = value
        return value
    return module_getattr("", _np, name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(dir(_np)))

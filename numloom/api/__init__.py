"""The NumPy namespace: the functions a program calls (``numloom.exp``, ``numloom.sum``...)
trace nodes of the lazy graph (core/), checking shapes, dtypes and arguments at the call, and run
through NumPy what numloom does not implement. The ndarray's methods call these same functions:
this package binds itself into ``core.array`` as it loads."""

from __future__ import annotations

import sys

from ..core import array as _array
from . import creation, fallback, flags, interop, numpy_api, shapes, ufuncs  # noqa: F401

_array.bind_namespace(sys.modules[__name__])

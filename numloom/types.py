"""``numloom.types``: numba.types' names (``from numloom.types import float32``), which live in
``numloom/kernels/types.py``; this module stands for it (the import gives that module)."""

import sys

from .kernels import types as _types

sys.modules[__name__] = _types

"""``numloom.cuda``: numba.cuda's kernel API, which lives in ``numloom/kernels/cuda``; this
module stands for it (``import numloom.cuda`` gives that package itself, and
``numloom.cuda.random`` its random module: one module under both names, as the kernel
translator knows its draws by identity)."""

import sys

from .kernels import cuda as _cuda

sys.modules[__name__] = _cuda
sys.modules[__name__ + ".random"] = _cuda.random

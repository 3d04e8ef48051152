"""Settings read from ``NUMLOOM_*`` environment variables, in one place.

Every variable numloom reads is listed in ``VARIABLES`` so that ``np.show_config()`` can print
them all with their current values.
"""

from __future__ import annotations

import os

VERSION = "0.1.0"  # numloom's version (pyproject.toml's; numloom.__version__ is NumPy's)

VARIABLES = {
    "NUMLOOM_DEVICE": "default device: cpu, cuda or cuda:N (default: cuda when usable, else cpu)",
    "NUMLOOM_DEBUG": "1 launches and timings (and at exit, the functions that made device "
    "round trips, with the bytes they copied), 2 plans and kernel splits, 3 kernel IR, "
    "4 generated source, 5 PTX/assembly",
    "NUMLOOM_CACHE_DIR": "compile cache directory (default: $XDG_CACHE_HOME/numloom)",
    "NUMLOOM_CACHE_MAX_BYTES": "the compile cache's size limit; least recently used entries go "
    "first (default 1073741824)",
    "NUMLOOM_FLUSH_DEPTH": "evaluate pending work when a graph grows deeper than this (default 768)",
    "NUMLOOM_FLUSH_WIDTH": "evaluate pending work when more arrays than this are pending "
    "(default 4096)",
    "NUMLOOM_BACKEND": "cpu executor: 'compiled' (C + OpenMP) or 'numpy' (node by node)",
    "NUMLOOM_CC": "C compiler for CPU kernels (default: $CC, else cc)",
    "NUMLOOM_COMPILE_TIMEOUT": "seconds a C compile may take before it is stopped and raises "
    "CompileError (default 120; 0: no limit)",
    "NUMLOOM_BOUNDSCHECK": "1 checks every array index in kernels",
    "NUMLOOM_GRAPHS": "0 launches CUDA kernels one by one instead of as CUDA graphs (default 1)",
    "NUMLOOM_ALLOW_TF32": "1 lets cuBLAS use TF32 tensor cores for float32 matmul (default 0)",
    "NUMLOOM_START_BYTES": "on a GPU, writes replacing most of their arrays start evaluating once "
    "they add up to this many bytes (default 268435456; 0: at the sync)",
    "NUMLOOM_INDEX32": "0 keeps CUDA kernels on 64-bit indices even where 32 bits fit (default 1)",
    "NUMLOOM_RANDOM": "numpy draws random numbers with NumPy on the host, also for arrays on a "
    "GPU; philox draws the legacy np.random functions from Philox on the CPU too (default: on "
    "a GPU, default_rng draws NumPy's PCG64 stream and the legacy functions Philox's)",
    "NUMLOOM_EAGER_ELEMENTS": "on the CPU, arrays of at most this many elements that are made "
    "from host data or computed by a sync run later ufunc calls at once through NumPy, as do "
    "their results (default 2048; 0: only the arrays of data-dependent loops)",
    "NUMLOOM_COMPILE_AFTER_MS": "on the CPU, a new plan of few elements runs through NumPy, node "
    "by node, until its runs have taken this many milliseconds, then compiles (default 20; 0: "
    "every plan compiles at once)",
    "NUMLOOM_PLAN_TEMPLATES": "a structure planned at two sizes is planned at a new size from "
    "its template, not anew (default 1; 0: planned anew; check: both, raising where they "
    "differ)",
    "NUMLOOM_NVRTC_PCH": "0 keeps NVRTC from precompiling numloom's CUDA header once per process "
    "(NVRTC 12.8 and later; default 1)",
    "NUMLOOM_PURE_PYTHON": "1 runs the array handle and the traced operation in Python, not in the "
    "compiled numloom.core._speedups (default 0; used when the extension was not built)",
    "NUMLOOM_CUB": "on a GPU, large sorts run CUB's radix sort (cuda-cccl): 1 builds it in the "
    "background at first use and keeps it in the compile cache (default), wait builds it at "
    "first use and waits, 0 keeps numloom's own sort",
}


# CPython's os.environ keeps the process environment in a dict of bytes (on POSIX): read there,
# a variable costs a dict lookup, not os.environ's encoding of the name and decoding of the
# value (syncs read a few on every evaluation). It is the same dict os.environ writes.
_ENVIRON = getattr(os.environ, "_data", None) if os.name == "posix" else None
_ENV_KEYS: dict = {}


def env(name: str, default=None):
    """``os.environ.get(name, default)``, read from the environment's own dict where it can."""
    raw = env_raw(name)
    return default if raw is None else raw if type(raw) is str else os.fsdecode(raw)


def env_raw(name: str):
    """The value of environment variable ``name`` as the environment holds it (bytes on
    POSIX), or None: a cache key for what depends on the variable, without decoding it."""
    if type(_ENVIRON) is not dict:
        return os.environ.get(name)
    key = _ENV_KEYS.get(name)
    if key is None:
        key = _ENV_KEYS[name] = os.fsencode(name)
    return _ENVIRON.get(key)


def _int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


DEBUG = _int("NUMLOOM_DEBUG", 0)
FLUSH_DEPTH = _int("NUMLOOM_FLUSH_DEPTH", 768)
FLUSH_WIDTH = _int("NUMLOOM_FLUSH_WIDTH", 4096)
COMPILE_TIMEOUT = _int("NUMLOOM_COMPILE_TIMEOUT", 120)
GRAPHS = _int("NUMLOOM_GRAPHS", 1) != 0
INDEX32 = _int("NUMLOOM_INDEX32", 1) != 0
START_BYTES = _int("NUMLOOM_START_BYTES", 256 << 20)
PURE_PYTHON = _int("NUMLOOM_PURE_PYTHON", 0) != 0
EAGER_ELEMENTS = _int("NUMLOOM_EAGER_ELEMENTS", 2048)
COMPILE_AFTER_MS = _int("NUMLOOM_COMPILE_AFTER_MS", 20)


def show_config() -> None:
    """Print numloom's version, its environment variables and the devices it sees."""
    import numpy

    from .device import describe_devices

    print(f"numloom {VERSION} (numpy {numpy.__version__})")
    print("environment:")
    for name, what in VARIABLES.items():
        value = os.environ.get(name)
        print(f"  {name}={value if value is not None else ''}  # {what}")
    print("devices:")
    for line in describe_devices():
        print(f"  {line}")

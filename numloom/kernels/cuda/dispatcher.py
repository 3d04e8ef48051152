"""``cuda.jit``: kernels and device functions written in Python, compiled per argument types.

A ``Dispatcher`` holds the Python function and one ``Specialization`` per tuple of argument
types (``float32[::1]``, ``int64``...): its kernel IR, and its compiled code per device, made on
first use. ``kernel[blocks, threads](args)`` checks the launch shape and the arguments at the
user's line and records the launch in the lazy DAG (``launch.py``).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
import sys
from dataclasses import dataclass, field, replace

import numpy as np

from ...core import config
from .. import ktypes
from ..kerrors import ArgumentError, LaunchError, caller_line, caller_where

# Kernels cannot have more threads per block, or blocks per grid, than CUDA allows.
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
FORALL_THREADS = 256


def _boundscheck() -> bool:
    return os.environ.get("NUMLOOM_BOUNDSCHECK", "0") not in ("", "0")


@dataclass(eq=False)
class Specialization:
    """A kernel compiled for one tuple of argument types."""

    dispatcher: object
    arg_types: tuple
    ir: object  # kir.UserKernel
    checks: tuple  # (array, axis, Where) of each bounds-check code
    types: dict  # variable -> type, for inspect_types
    sources: dict = field(default_factory=dict)  # dialect -> (symbol, source)
    compiled: dict = field(default_factory=dict)  # device -> compiled function(s)
    layouts: dict = field(default_factory=dict)  # how arguments are passed, per dialect

    @property
    def name(self) -> str:
        return self.dispatcher.__name__

    def signature(self) -> str:
        return f"({', '.join(str(t) for t in self.arg_types)})"

    def source(self, dialect: str) -> tuple:
        """``(symbol, source)`` in "c" or "cuda": the symbol is a hash of the source, so a
        kernel compiles once however many dispatchers make it."""
        if dialect not in self.sources:
            from ...compile.lower import generated
            from ...compile.render import CUDA, C, render

            body = render(replace(self.ir, name="KERNEL"), CUDA if dialect == "cuda" else C)
            digest = hashlib.sha256(body.encode()).hexdigest()[:16]
            symbol = "nl_k_" + re.sub(r"\W", "_", self.name)[:40] + "_" + digest
            self.sources[dialect] = (symbol, body.replace("KERNEL", symbol))
            # The compile-only CUDA tests render every generated kernel for the GPU too.
            generated.setdefault(f"user:{self.name}:{digest}", replace(self.ir, name=symbol))
            if config.DEBUG >= 3:
                print(f"numloom: {self.name}{self.signature()}:\n{self.types_text()}",
                      file=sys.stderr)  # fmt: skip
        return self.sources[dialect]

    def types_text(self) -> str:
        lines = [f"{self.name} {self.signature()}"]
        lines += [f"    {name}: {t}" for name, t in self.types.items()]
        return "\n".join(lines)


class Dispatcher:
    """The result of ``cuda.jit``: a kernel (launch it with ``kernel[blocks, threads](...)``)
    or, with ``device=True``, a function other kernels call."""

    def __init__(self, py_func, signatures=None, device: bool = False, debug: bool = False,
                 **options):  # fmt: skip
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.device = device
        self.debug = debug
        self.options = options
        self.specializations: dict = {}
        self._launchers: dict = {}  # launch configuration of Python ints -> its Launcher
        self.params = list(inspect.signature(py_func).parameters)
        self.signatures = [_parse(s) for s in signatures] if signatures else []
        for sig in self.signatures:
            if not device:
                self.specialize(sig)

    def __repr__(self) -> str:
        kind = "device function" if self.device else "kernel"
        return f"<numloom.cuda {kind} {self.__name__}>"

    # -- calling --

    def __call__(self, *args, **kwargs):
        if self.device:
            return self.py_func(*args, **kwargs)
        raise LaunchError(
            f"kernel {self.__name__} was called without a launch configuration",
            caller_where(), f"launch it as {self.__name__}[blocks, threads_per_block](...) or "
            f"{self.__name__}.forall(n)(...)",
        )  # fmt: skip

    def __getitem__(self, config_):
        known = self._launchers.get(config_) if _plain(config_) else None
        if known is not None:  # (a loop's launches: checked once)
            return known
        if self.device:
            raise LaunchError(f"{self.__name__} is a device function: kernels call it",
                              caller_where())  # fmt: skip
        where = caller_where()
        if not isinstance(config_, tuple) or not 2 <= len(config_) <= 4:
            raise LaunchError(f"kernel {self.__name__}: the launch configuration must be "
                              f"[blocks, threads], [blocks, threads, stream] or [blocks, threads, "
                              f"stream, shared_bytes], not [{config_!r}]", where)  # fmt: skip
        grid, block = config_[0], config_[1]
        shared = config_[3] if len(config_) == 4 else 0
        launcher = Launcher(self, _dims(grid, "blocks", MAX_GRID, where, self.__name__),
                            _dims(block, "threads", MAX_BLOCK, where, self.__name__),
                            _shared_bytes(shared, where, self.__name__), where)  # fmt: skip
        if _plain(config_):
            if len(self._launchers) >= 64:
                self._launchers.clear()
            self._launchers[config_] = launcher
        return launcher

    def forall(self, ntasks: int, tpb: int = 0, stream=0, sharedmem: int = 0):
        """A launch with at least ``ntasks`` threads (CudaPy's "number of threads" call)."""
        where = caller_where()
        ntasks = _positive_int(ntasks, "forall's ntasks", where, self.__name__, allow_zero=True)
        threads = tpb or FORALL_THREADS
        blocks = max(1, -(-ntasks // threads))
        return Launcher(self, _dims(blocks, "blocks", MAX_GRID, where, self.__name__),
                        _dims(threads, "threads", MAX_BLOCK, where, self.__name__),
                        _shared_bytes(sharedmem, where, self.__name__), where)  # fmt: skip

    # -- compiling --

    def specialize(self, arg_types: tuple) -> Specialization:
        spec = self.specializations.get(arg_types)
        if spec is None:
            from ..translate import translate_kernel

            checked = self.debug or _boundscheck()
            ir, program, tr = translate_kernel(self.py_func, arg_types, checked, self.__name__)
            spec = Specialization(self, arg_types, ir, tuple(program.checks), tr.types())
            self.specializations[arg_types] = spec
        return spec

    def compile(self, signature):
        """Compile for a Numba signature string ahead of the first launch."""
        return self.specialize(_parse(signature))

    def inspect_types(self, file=None) -> None:
        """Print each specialization's variables and their types."""
        for spec in self.specializations.values():
            print(spec.types_text(), file=file or sys.stdout)

    def inspect_source(self, signature=None, device: str | None = None):
        """The generated C (``device="cpu"``) or CUDA (``"cuda"``) source, the Python line
        beside each statement: a dict by signature, or one source for ``signature``."""
        from ...core.device import get_device

        dialect = "cuda" if (device or get_device()).startswith("cuda") else "c"
        if signature is not None:
            types = _parse(signature) if isinstance(signature, str) else tuple(signature)
            return self.specialize(types).source(dialect)[1]
        return {spec.signature(): spec.source(dialect)[1]
                for spec in self.specializations.values()}  # fmt: skip


class Launcher:
    """``kernel[blocks, threads]``: call it with the kernel's arguments to launch."""

    def __init__(self, dispatcher: Dispatcher, grid: tuple, block: tuple, shared: int, where):
        self.dispatcher, self.grid, self.block, self.shared, self.where = (
            dispatcher,
            grid,
            block,
            shared,
            where,
        )
        threads = block[0] * block[1] * block[2]
        if threads > MAX_THREADS:
            raise LaunchError(f"kernel {dispatcher.__name__}: {threads} threads per block "
                              f"({' x '.join(map(str, block))}); CUDA allows at most "
                              f"{MAX_THREADS}", where, "use fewer threads per block and more "
                              "blocks")  # fmt: skip

    def __call__(self, *args):
        from .launch import launch

        where = caller_line()
        d = self.dispatcher
        types = _arg_types(d, args, where)
        spec = d.specialize(types)
        launch(spec, args, self.grid, self.block, self.shared, where)


def _plain(config_) -> bool:
    """Whether a launch configuration is a tuple of Python ints and tuples of them (whose
    checks, once passed, hold for every equal configuration: ``True`` equals 1 but is
    refused, so other types are checked each time)."""
    if type(config_) is not tuple:
        return False
    for c in config_:
        if type(c) is not int and not (type(c) is tuple and all(type(d) is int for d in c)):
            return False
    return True


def _arg_types(d: Dispatcher, args: tuple, where) -> tuple:
    params = d.params
    if len(args) != len(params):
        raise ArgumentError(f"kernel {d.__name__} takes {len(params)} arguments "
                            f"({', '.join(params)}) but {len(args)} were given",
                            caller_where())  # fmt: skip
    types = []
    for name, a in zip(params, args):
        t = ktypes.typeof(a)
        if t is None:
            raise ArgumentError(f"kernel {d.__name__}: argument '{name}' is a "
                                f"{type(a).__name__}, which kernels cannot take", caller_where(),
                                "pass NumPy or numloom arrays and scalars (bool, int, float, "
                                "complex)")  # fmt: skip
        types.append(t)
    types = tuple(types)
    if d.signatures:
        return _match_signature(d, types, params, where)
    return types


def _match_signature(d: Dispatcher, types: tuple, params: list, where) -> tuple:
    """The first declared signature the arguments fit (arrays by dtype and dimensions,
    scalars converting without changing kind)."""
    for sig in d.signatures:
        if all(_fits(t, s) for t, s in zip(types, sig)):
            return sig
    declared = "; ".join("(" + ", ".join(map(str, s)) + ")" for s in d.signatures)
    given = ", ".join(map(str, types))
    raise ArgumentError(f"kernel {d.__name__} was declared for {declared}, not for ({given})",
                        caller_where())  # fmt: skip


def _fits(t, s) -> bool:
    if isinstance(s, ktypes.Array):
        return (isinstance(t, ktypes.Array) and t.dtype == s.dtype and t.ndim == s.ndim
                and (s.layout == "A" or t.layout == "C"))  # fmt: skip
    return isinstance(t, ktypes.Scalar) and ktypes.fits(t, s)


def _parse(signature) -> tuple:
    if isinstance(signature, str):
        return ktypes.parse_signature(signature)[1]
    args = getattr(signature, "args", None)
    if args is not None:
        return tuple(getattr(a, "_numloom_type", a) for a in args)
    return tuple(signature)


def _positive_int(v, what: str, where, name: str, allow_zero=False) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise LaunchError(f"kernel {name}: {what} must be an integer, not {v!r}", where)
    if v < (0 if allow_zero else 1):
        raise LaunchError(f"kernel {name}: {what} must be {'>= 0' if allow_zero else 'positive'},"
                          f" not {v}", where)  # fmt: skip
    return int(v)


def _dims(v, what: str, limits: tuple, where, name: str) -> tuple:
    """A launch shape as (x, y, z): an int or a tuple of 1 to 3 positive ints."""
    dims = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"kernel {name}: {what} must be an int or a tuple of 1 to 3 ints, "
                          f"not {v!r}", where)  # fmt: skip
    dims = tuple(_positive_int(d, what, where, name) for d in dims) + (1,) * (3 - len(dims))
    for axis, d, limit in zip("xyz", dims, limits):
        if d > limit:
            raise LaunchError(f"kernel {name}: {d} {what} along {axis}; CUDA allows at most "
                              f"{limit}", where)  # fmt: skip
    return dims


def _shared_bytes(v, where, name: str) -> int:
    return _positive_int(v, "the dynamic shared memory size", where, name, allow_zero=True)


def jit(func_or_sig=None, device: bool = False, debug: bool = False, **options):
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``,
    ``@cuda.jit(["void(float32[:])", ...], debug=True)``."""
    if (
        callable(func_or_sig)
        and not isinstance(func_or_sig, (str, list, tuple))
        and not hasattr(func_or_sig, "args")
    ):
        return Dispatcher(func_or_sig, None, device, debug, **options)
    signatures = None
    if func_or_sig is not None:
        signatures = func_or_sig if isinstance(func_or_sig, (list, tuple)) else [func_or_sig]

    def decorate(fn):
        return Dispatcher(fn, signatures, device, debug, **options)

    return decorate

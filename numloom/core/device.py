"""Which device new arrays live on: ``set_device``, ``device(...)`` and ``NUMLOOM_DEVICE``.

Asking whether CUDA is usable loads the CUDA backend; ``import numloom`` never does, so the
default device is decided on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading

_current: str | None = None  # the process's default (set_device, NUMLOOM_DEVICE)
class _Blocks(threading.local):
    name = None  # (no block: read without the AttributeError a bare local's getattr makes)


_blocks = _Blocks()  # a thread's ``with device(...)``, as CuPy's Device context is


class DeviceError(RuntimeError):
    """The requested device does not exist or cannot be used on this machine."""


class CudaError(RuntimeError):
    """A CUDA call failed; the message names the call and the kernel."""


class OutOfMemoryError(MemoryError):
    """The device has too little free memory for an allocation, even after numloom freed its
    cached blocks and retried."""


class CompileError(Exception):
    """A kernel failed to compile: what failed, the command, the compiler's log, the source."""

    def __init__(self, what: str, command: str = "", log: str = "", source: str = ""):
        self.what, self.command, self.log, self.source = what, command, log, source
        super().__init__(self._message())

    def _message(self) -> str:
        lines = [self.what]
        if self.command:
            lines.append(f"command: {self.command}")
        if self.log:
            log = self.log.strip().splitlines()
            lines += ["compiler log:", "\n".join(f"  {line}".rstrip() for line in log)]
        if self.source:
            lines += ["source:", numbered(self.source)]
        return "\n".join(lines)

    def __reduce__(self):
        return (type(self), (self.what, self.command, self.log, self.source))


def numbered(source: str) -> str:
    """``source`` with 1-based line numbers, as compiler logs count them."""
    return "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), 1))


# The backends, one module each, in one table: device kind -> module implementing it
# (``run(roots, device)``, ``problem()``...). The core loads them by name, never imports them.
BACKENDS = {
    "cpu": "numloom.backends.cpu",
    "cuda": "numloom.backends.cuda",
}


def load_backend(kind: str):
    """The backend module for a device kind ("cpu", "cuda", or a device "cuda:1"); ImportError
    when it is missing."""
    kind = kind.split(":")[0]
    if kind not in BACKENDS:
        raise ImportError(f"numloom has no backend for device kind {kind!r}")
    return importlib.import_module(BACKENDS[kind])


def _normalize(name: str) -> str:
    name = str(name).strip().lower()
    if name == "cpu":
        return "cpu"
    if name == "cuda" or name == "gpu":
        return "cuda:0"
    if name.startswith("cuda:") and name[5:].isdigit():
        return name
    raise ValueError(f"unknown device {name!r}: use 'cpu', 'cuda' or 'cuda:N'")


def cuda_problem() -> str | None:
    """Why CUDA cannot be used here, or None when it can."""
    try:
        backend = load_backend("cuda")
    except ImportError as e:
        return f"the CUDA backend cannot be loaded ({e}); install numloom[cuda12] or [cuda13]"
    return backend.problem()


def _check(name: str) -> str:
    if name.startswith("cuda"):
        problem = cuda_problem()
        if problem is not None:
            raise DeviceError(f"cannot use device {name!r}: {problem}. The CPU device still works.")
    return name


def set_device(name: str) -> None:
    """Put new arrays on ``name`` ("cpu", "cuda", "cuda:1")."""
    global _current
    _current = _check(_normalize(name))


def get_device() -> str:
    """The device new arrays are created on: the thread's ``with device(...)`` block's, else
    the process's default."""
    global _current
    block = _blocks.name
    if block is not None:
        return block
    if _current is None:
        env = os.environ.get("NUMLOOM_DEVICE")
        if env:
            _current = _check(_normalize(env))
        else:
            _current = "cuda:0" if _cuda_default_usable() else "cpu"
    return _current


def _cuda_default_usable() -> bool:
    if _no_nvidia_driver():
        return False  # (loading the CUDA backend only to learn so costs ~150 ms at startup)
    try:
        return cuda_problem() is None
    except Exception:
        return False


def _no_nvidia_driver() -> bool:
    """Whether this machine plainly has no NVIDIA driver: Linux without the driver's files
    and device nodes (a container given GPUs has them; WSL has /dev/dxg), or macOS. Elsewhere
    the CUDA backend is asked."""
    if sys.platform == "darwin":
        return True
    if not sys.platform.startswith("linux"):
        return False
    return not any(os.path.exists(p) for p in ("/proc/driver/nvidia", "/dev/nvidiactl",
                                                "/dev/nvidia0", "/dev/dxg"))  # fmt: skip


@contextlib.contextmanager
def device(name: str):
    """``with numloom.device("cpu"): ...`` creates arrays on that device inside the block, in
    this thread only (other threads keep theirs, as with CuPy's ``Device``)."""
    previous = _blocks.name
    _blocks.name = _check(_normalize(name))
    try:
        yield
    finally:
        _blocks.name = previous


def describe_devices() -> list:
    lines = ["cpu: host memory, " + str(os.cpu_count()) + " cores"]
    problem = cuda_problem()
    lines.append("cuda: " + ("usable" if problem is None else f"not usable ({problem})"))
    return lines

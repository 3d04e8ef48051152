"""The CUDA backend's devices: a context, a stream and the loaded kernels per GPU, made on
first use (nothing runs at ``import numloom``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..core.device import CudaError

THREADS = 256


ASYNCHRONOUS = True  # a plan runs on the device's stream while Python goes on (realize.written)


SHORT_REDUCTION = 64  # a reduction this short gets a thread per output, not a block


@dataclass
class _Device:
    device: object  # cuda.core.Device
    stream: object
    arch: str
    sms: int
    graphs: dict = field(default_factory=dict)  # structure -> cuda_graph.SegmentGraph
    functions: dict = field(default_factory=dict)  # kernel symbol -> its functions by role
    # floating-point error flag words (fperrors.py), host memory the kernels write through
    # the bus: (host address, device address) of the word a sync reads, then of a word for
    # kernels whose calls ignore every error (never read)
    fp_words: tuple = ()
    context: int = 0  # the device's primary context (its handle), as cuCtxGetCurrent gives it
    # evaluations whose flag word is read at a later sync (cuda_launch._FlagReads.finish):
    # (program, order, [(segment, rerun, inputs kept)]), and the bytes of those inputs
    deferred: list = field(default_factory=list)
    deferred_bytes: int = 0


_devices: dict = {}


_creating = threading.Lock()


def problem() -> str | None:
    """Why CUDA cannot be used here, or None. Initializes the driver, so call it lazily."""
    try:
        from cuda.bindings import driver
        from cuda.core import Device  # noqa: F401
    except ImportError as e:
        return f"cuda.core is not installed ({e}); pip install numloom[cuda12] or [cuda13]"
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return f"the CUDA driver did not initialize ({err.name})"
        err, n = driver.cuDeviceGetCount()
    except Exception as e:  # noqa: BLE001 (no driver library at all)
        return f"no usable CUDA driver ({e})"
    if err != driver.CUresult.CUDA_SUCCESS or n == 0:
        return "no CUDA device is visible"
    return None


_current = threading.local()  # .device: the device whose context is current in this thread


def _get(device: str) -> _Device:
    """The device's state, its context made current in the calling thread (each thread, and
    each switch between devices, needs that before a driver call)."""
    state = _devices.get(device)
    if state is not None:
        if getattr(_current, "device", None) != device or _context() != state.context:
            # (another library in this thread, JAX or CuPy on another GPU, may have made its
            # device's context current since: numloom's launches would run there)
            state.device.set_current()
            _current.device = device
        return state
    with _creating:
        return _create(device)


def _context() -> int:
    """The handle of the context current in this thread (0: none)."""
    global _driver
    if _driver is None:
        from cuda.bindings import driver as _driver
    return int(_driver.cuCtxGetCurrent()[1])


_driver = None  # (cuda.bindings' driver module, once a device is used)


def _create(device: str) -> _Device:
    state = _devices.get(device)
    if state is None:
        from cuda.core import Device

        index = int(device.split(":")[1]) if ":" in device else 0
        dev = Device(index)
        dev.set_current()
        major, minor = dev.compute_capability
        sms = dev.properties.multiprocessor_count
        state = _devices[device] = _Device(dev, dev.create_stream(), f"sm_{major}{minor}", sms,
                                           context=_context())  # fmt: skip
        from ..core import realize

        realize._devices_used.add(device)  # np.sync() waits for it, whatever ran there
        _load_pipeline(state.arch)
    else:
        state.device.set_current()
    _current.device = device
    return state


def _load_pipeline(arch: str) -> None:
    """Load what every first evaluation needs with the context, not inside the user's first
    call: numloom's compiler modules, the graph runner and NVRTC (which the compile cache's
    keys name)."""
    from ..compile import compiler, lower, render_cuda  # noqa: F401
    from . import cuda_graph  # noqa: F401

    try:
        compiler.cuda_target(arch)
    except Exception:  # noqa: BLE001 (no NVRTC: the first compile says so, with the fix)
        pass


def fixed_functions(device: str, name: str, source: str, kernels: tuple) -> dict:
    """The ``__global__`` functions ``kernels`` of a fixed CUDA source (numloom's own, not
    generated: compaction, the product check), compiled once per device and kept by ``name``."""
    state = _get(device)
    functions = state.functions.get(name)
    if functions is None:
        from cuda.core import ObjectCode

        from ..compile.compiler import compile_cuda, cuda_code_kind

        code = compile_cuda(source, state.arch, name_hint=name)
        module = (ObjectCode.from_cubin(code) if cuda_code_kind(code) == "cubin"
                  else ObjectCode.from_ptx(code))  # fmt: skip
        functions = state.functions[name] = {k: module.get_kernel(k) for k in kernels}
    return functions


def synchronize(device: str) -> None:
    if device in _devices:
        _devices[device].stream.sync()


def _check(result, call: str, kernel: str = ""):
    from cuda.bindings import driver

    err = result[0] if isinstance(result, tuple) else result
    if err != driver.CUresult.CUDA_SUCCESS:
        where = f" (kernel {kernel})" if kernel else ""
        raise CudaError(f"{call} failed with {err.name}{where}")
    return result

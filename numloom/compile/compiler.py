"""Compile generated kernels: C with the system compiler into a loaded library, CUDA C++ with
NVRTC into a cubin (or PTX), both through the per-user disk cache (``cache.py``).

The scheduler/code generator hands over finished source text; this module owns the flags, the
cache keys and the error messages::

    lib = compile_c(src, name_hint="map_add")       # ctypes.CDLL, compiled once per source
    code = compile_cuda(src, "sm_90")               # bytes: cubin (b"\\x7fELF...") or PTX text

Flags keep NumPy's arithmetic (DESIGN.md §2): ``-fwrapv`` for wrapping integer overflow, and
never ``-ffast-math``/``--use_fast_math`` nor flush-to-zero. A compile that fails raises
``CompileError`` with the command, the compiler's log and the numbered source.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

from ..core import config
from ..core.dag import warn_at_user
from ..core.device import CompileError, numbered  # noqa: F401  (raised here, defined in core/)
from . import cache

# -std=c11 (not gnu11) and -ffp-contract=off: no FMA contraction, which rounds differently from
# NumPy. -fno-math-errno: kernels never read errno, and it lets sqrt etc. vectorize.
# _DEFAULT_SOURCE brings back what strict ISO mode hides from <math.h> (M_PI and friends).
# -fno-thread-jumps keeps loops full of selects (Mandelbrot's where) if-convertible, and
# -fno-trapping-math lets the compiler compute both arms of a select (a `where` over
# arithmetic) unconditionally, so they vectorize: values are IEEE's either way, only the
# floating-point exception flags (which kernels never read) may differ.
C_FLAGS = ("-O3", "-march=native", "-fopenmp", "-fwrapv", "-fno-math-errno", "-ffp-contract=off",
           "-fno-trapping-math", "-fno-thread-jumps", "-shared", "-fPIC", "-std=c11",
           "-D_DEFAULT_SOURCE")  # fmt: skip
C_LIBS = ("-lm",)


class NumloomCompilerWarning(UserWarning):
    """The compiler lacks something numloom uses (OpenMP): kernels still run, more slowly."""


def _safe_name(name_hint: str) -> str:
    # The hint names files and NVRTC programs; keep it a plain identifier.
    return re.sub(r"[^A-Za-z0-9_]", "_", name_hint)[:64] or "kernel"


@functools.cache
def include_dir() -> str | None:
    """numloom's own headers (``numloom/compile/include``), shared by the C compiler and NVRTC."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
    return path if os.path.isdir(path) else None


@functools.cache
def _headers() -> tuple[tuple[str, bytes], ...]:
    """numloom's headers as (name relative to ``include_dir()``, content), read once."""
    root = include_dir()
    if root is None:
        return ()
    headers = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                headers.append((os.path.relpath(path, root), f.read()))
    return tuple(headers)


def _include_digest(source: str) -> str:
    """A hash of numloom's headers when ``source`` includes one (a kernel is stale when they
    change), else "" so that kernels without them keep their entries across header edits.
    """
    headers = _headers()
    if not any(os.path.basename(name) in source for name, _ in headers):
        return ""
    return _headers_digest(headers)


@functools.lru_cache(maxsize=4)
def _headers_digest(headers: tuple) -> str:
    """The hash of the headers' names and contents (each plan's kernels ask: once per set)."""
    digest = hashlib.sha256()
    for name, content in headers:
        digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


# --- the C compiler ---------------------------------------------------------------------------

_versions: dict[str, str] = {}


@functools.lru_cache(maxsize=16)
def _which(name: str, search_path: str) -> str | None:
    """``shutil.which`` once per compiler name and PATH: every evaluation asks."""
    return shutil.which(name, path=search_path or None)


def c_compiler() -> tuple[str, str]:
    """The C compiler (``$NUMLOOM_CC``, else ``$CC``, else ``cc``) as (path, version line).

    Raises CompileError when it cannot be found or run.
    """
    name = os.environ.get("NUMLOOM_CC") or os.environ.get("CC") or "cc"
    path = _which(name, os.environ.get("PATH", ""))
    if path is None:
        raise CompileError(
            f"no C compiler: {name!r} is not an executable on PATH; install one (gcc or clang) "
            f"or point NUMLOOM_CC at it"
        )
    if path not in _versions:
        _versions[path] = _version_line(path)
    return path, _versions[path]


def _version_line(path: str) -> str:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompileError(f"the C compiler {path} does not run: {e}") from None
    if proc.returncode != 0:
        raise CompileError(
            f"the C compiler {path} failed `--version` (exit status {proc.returncode})",
            f"{path} --version",
            proc.stderr + proc.stdout,
        )
    return (proc.stdout.splitlines() or [""])[0].strip()


def has_c_compiler() -> bool:
    """Whether a working C compiler is configured (see ``c_compiler``)."""
    try:
        c_compiler()
    except CompileError:
        return False
    return True


@functools.cache
def host_cpu() -> str:
    """What ``-march=native`` compiles for: the CPU's model and feature flags."""
    wanted = ("vendor_id", "model name", "cpu family", "model", "flags", "Features", "CPU part")
    fields = []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor describes them all on the hosts we target
                name, _, value = line.partition(":")
                if name.strip() in wanted:
                    fields.append(f"{name.strip()}={value.strip()}")
    except OSError:
        pass
    if not fields:  # (no /proc/cpuinfo: Python's word for it, which Linux's takes from `uname -p`,
        fields.append(platform.processor())  # a process whose start resets warning registries)
    return "\n".join([platform.machine(), *fields])


# --- compiling C --------------------------------------------------------------------------

# cache key -> the library loaded for it; and (source, compiler, version) -> that library, a
# source's second load finding it without hashing the source
_loaded: dict = {}
_openmp: dict[str, bool] = {}


def compile_c(source: str, *, name_hint: str = "kernel", symbol: str | None = None) -> ctypes.CDLL:
    """Compile C ``source`` into a shared library and load it, through the compile cache.

    The same source in the same process returns the same loaded library; in a new process it
    is loaded from the disk cache without compiling. A cached library that does not load, or
    lacks ``symbol``, is a miss: its entry is removed and the source compiled again.
    """
    from ..core.realize import count

    cc, version = c_compiler()
    lib = _loaded.get((source, cc, version))
    if lib is not None:  # (loaded in this process: its key is not hashed again)
        count("compile_cache_hits")
        return lib
    _load_openmp_runtime()
    key = _c_key(source, cc, version)
    lib = _loaded.get(key)
    if lib is None:
        lib = _load_cached(key, name_hint)
        if lib is not None and symbol is not None and not hasattr(lib, symbol):
            cache.discard(key)  # (an entry that is not this source's library)
            lib = None
    if lib is not None:
        count("compile_cache_hits")
    else:
        data, lib = _build_c(cc, version, source, _safe_name(name_hint))
        cache.put(key, data)
        count("kernels_compiled")
    _loaded[key] = lib
    _loaded[(source, cc, version)] = lib
    return lib


def compile_all(compile_one, sources: list) -> None:
    """Run ``compile_one(source, symbol)`` for each ``(source, symbol)`` on threads, at most one
    a core (a C compiler runs as its own process and NVRTC releases the GIL, so several
    compile at once); the first error is raised."""
    from concurrent.futures import ThreadPoolExecutor

    if len(sources) < 2:
        for source, symbol in sources:
            compile_one(source, symbol)
        return
    with ThreadPoolExecutor(min(len(sources), os.cpu_count() or 1),
                            thread_name_prefix="numloom-compile") as pool:  # fmt: skip
        for _ in pool.map(lambda item: compile_one(*item), sources):
            pass


def c_loaded(source: str) -> bool:
    """Whether C ``source`` is compiled and loaded in this process already."""
    cc, version = c_compiler()
    return _c_key(source, cc, version) in _loaded


def c_available(source: str) -> bool:
    """Whether C ``source`` loads without compiling: loaded in this process, or in the compile
    cache."""
    cc, version = c_compiler()
    key = _c_key(source, cc, version)
    return key in _loaded or cache.current().has(key)


def _c_key(source: str, cc: str, version: str) -> str:
    return cache.make_key("c", source, cc, version, " ".join(C_FLAGS + C_LIBS), host_cpu(),
                          _include_digest(source))  # fmt: skip


_runtime_loaded = False

# OpenMP threads that spin while they wait steal the core another thread needs whenever the
# machine has more runnable threads than cores (two processes on a 2-core machine: each kernel
# then takes milliseconds, not microseconds). Waiting passively costs about 70 us per parallel
# loop to wake the workers, so small kernels run on one thread (render.PARALLEL_MIN).
OPENMP_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE"}


def _load_openmp_runtime() -> None:
    """Load GNU OpenMP before the first kernel, with ``OPENMP_ENVIRONMENT`` set just while it
    reads its settings (unless the user set one of them, or it is loaded already): the
    program's own environment is left as it was."""
    global _runtime_loaded
    if _runtime_loaded:
        return
    _runtime_loaded = True
    if any(k in os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        return
    if sys.platform != "linux" or _mapped("libgomp"):
        return
    os.environ.update(OPENMP_ENVIRONMENT)
    try:
        ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        pass  # another OpenMP runtime (or none): kernels load it themselves
    finally:
        for k in OPENMP_ENVIRONMENT:
            del os.environ[k]


def _mapped(name: str) -> bool:
    """Whether a shared library whose file name starts with ``name`` is loaded in this process."""
    try:
        with open("/proc/self/maps") as f:
            return any(f"/{name}" in line for line in f)
    except OSError:
        return True  # cannot tell: leave the runtime alone


def _load_cached(key: str, name_hint: str) -> ctypes.CDLL | None:
    data = cache.get(key)
    if data is None:
        return None
    with tempfile.TemporaryDirectory(prefix="numloom-so-") as tmp:
        path = os.path.join(tmp, f"{_safe_name(name_hint)}.so")
        with open(path, "wb") as f:
            f.write(data)
        try:
            lib = ctypes.CDLL(path)  # stays mapped after the file is removed
        except OSError:
            cache.discard(key)  # intact but unloadable (another libc?): rebuild it
            return None
    if config.DEBUG >= 2:
        print(f"numloom: C kernel {name_hint!r} loaded from the compile cache", file=sys.stderr)
    return lib


def _build_c(cc: str, version: str, source: str, name: str) -> tuple[bytes, ctypes.CDLL]:
    flags = list(C_FLAGS)
    if not _has_openmp(cc, version):
        flags.remove("-fopenmp")
    if include_dir() is not None:
        flags.append(f"-I{include_dir()}")
    if config.DEBUG >= 4:
        print(f"numloom: C source of {name!r}:\n{numbered(source)}", file=sys.stderr)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="numloom-cc-") as tmp:
        src, out = os.path.join(tmp, f"{name}.c"), os.path.join(tmp, f"{name}.so")
        with open(src, "w") as f:
            f.write(source)
        command = [cc, *flags, "-o", out, src, *C_LIBS]
        proc = _run(command, tmp)
        if proc.returncode != 0:
            raise CompileError(
                f"C compilation of kernel {name!r} failed (exit status {proc.returncode}, "
                f"{version})",
                subprocess.list2cmdline(command),
                proc.stderr + proc.stdout,
                source,
            )
        with open(out, "rb") as f:
            data = f.read()
        lib = ctypes.CDLL(out)
    if config.DEBUG >= 1:
        ms = (time.perf_counter() - start) * 1e3
        print(f"numloom: compiled C kernel {name!r} in {ms:.1f} ms", file=sys.stderr)
    return data, lib


def _run(command: list[str], cwd: str) -> subprocess.CompletedProcess:
    limit = config.COMPILE_TIMEOUT
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              timeout=limit if limit > 0 else None)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise CompileError(
            f"the C compiler did not finish within {limit} s and was stopped; a loaded machine "
            f"may need more: set NUMLOOM_COMPILE_TIMEOUT (seconds, 0 for no limit)",
            subprocess.list2cmdline(command),
        ) from None
    except OSError as e:
        raise CompileError(
            f"the C compiler could not be started: {e}", subprocess.list2cmdline(command)
        ) from None


_OPENMP_PROBE = """\
#include <omp.h>
int numloom_openmp_probe(void) {
    int n = 0;
    #pragma omp parallel reduction(+ : n)
    n += 1;
    return n + omp_get_max_threads();
}
"""


def _has_openmp(cc: str, version: str) -> bool:
    """Whether ``cc -fopenmp`` builds and links a shared library (tried once per compiler)."""
    if cc not in _openmp:
        with tempfile.TemporaryDirectory(prefix="numloom-omp-") as tmp:
            src, out = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe.so")
            with open(src, "w") as f:
                f.write(_OPENMP_PROBE)
            proc = _run([cc, "-fopenmp", "-shared", "-fPIC", "-o", out, src], tmp)
        _openmp[cc] = proc.returncode == 0
        if not _openmp[cc]:
            first = (proc.stderr.strip().splitlines() or ["no log"])[0]
            warn_at_user(
                f"numloom: {cc} ({version}) cannot build OpenMP code ({first}); CPU kernels are "
                f"compiled without -fopenmp and run on one core. Install OpenMP (libgomp for "
                f"gcc, libomp for clang) or point NUMLOOM_CC at a compiler that has it.",
                NumloomCompilerWarning,
            )
    return _openmp[cc]


# --- compiling CUDA with NVRTC ------------------------------------------------------------

_cuda_codes: dict[str, bytes] = {}


def _nvrtc_module():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        from cuda import nvrtc  # cuda-python before cuda-bindings was split out
    return nvrtc


@functools.cache
def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor); raises ImportError/OSError/RuntimeError when it is unusable."""
    nvrtc = _nvrtc_module()
    err, major, minor = nvrtc.nvrtcVersion()
    _check(nvrtc, err, "nvrtcVersion")
    return int(major), int(minor)


@functools.cache
def nvrtc_available() -> bool:
    """Whether NVRTC can be loaded here (it needs no GPU and no driver)."""
    try:
        nvrtc_version()
    except Exception:  # noqa: BLE001 (missing package, missing libnvrtc, odd build: all "no")
        return False
    return True


@functools.cache
def _supported_archs() -> tuple[int, ...]:
    nvrtc = _nvrtc_module()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    _check(nvrtc, err, "nvrtcGetSupportedArchs")
    return tuple(sorted(int(a) for a in archs))


def _check(nvrtc, err, call: str) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{call} failed: {err!r}")


def cuda_options(arch: str) -> list[str]:
    """NVRTC's options for ``arch`` (``sm_XX`` for a cubin, ``compute_XX`` for PTX).

    IEEE division and square root, denormals kept, and no FMA contraction: ``a * b + c`` rounds
    twice, as NumPy's (and the C kernels', built with -ffp-contract=off) does, so the GPU's
    arithmetic is NumPy's bit for bit.
    """
    options = [f"-arch={arch}", "--std=c++17", "--ftz=false", "--prec-div=true",
               "--prec-sqrt=true", "--fmad=false", "--device-as-default-execution-space"]  # fmt: skip
    if _nvrtc_at_least((12, 4)):  # no textures, device launches or runtime API types: none is used
        options.append("-minimal")
    options += [f"--include-path={path}" for path in _cuda_include_dirs()]
    return options


@functools.cache
def _nvrtc_at_least(version: tuple) -> bool:
    """Whether this NVRTC is ``version`` or later (False where NVRTC is missing: the compile
    says so)."""
    try:
        return nvrtc_version() >= version
    except Exception:  # noqa: BLE001
        return False


_HALF = re.compile(r"\bnl_(round_)?half\b")


def nvrtc_source(source: str) -> str:
    """``source`` as NVRTC compiles it: numloom.h includes CUDA's ``cuda_fp16.h`` (most of what
    a small kernel's program parses) only for a source that names ``nl_half``, as float16
    kernels do."""
    return "#define NL_HALF 1\n" + source if _HALF.search(source) else source


def _cuda_include_dirs() -> list[str]:
    header_dir, _ = cuda_header_dir()
    return [path for path in (include_dir(), header_dir) if path is not None]


@functools.cache
def cuda_header_dir() -> tuple[str | None, str]:
    """CUDA's own headers (``cuda_fp16.h``) for NVRTC, which ships none before 13.3, as
    (directory, CUDART_VERSION); found by cuda.pathfinder in the nvidia-cuda-runtime wheel,
    conda, ``$CUDA_HOME`` or /usr/local/cuda.
    """
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        path = find_nvidia_header_directory("cudart")
    except Exception:  # noqa: BLE001 (no pathfinder, or one without cudart: no headers)
        return None, ""
    if path is None:
        return None, ""
    try:
        with open(os.path.join(path, "cuda_runtime_api.h"), errors="replace") as f:
            version = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", f.read())
    except OSError:
        version = None
    return path, version[1] if version else ""


def cuda_target(arch: str) -> tuple[str, str]:
    """(target, NVRTC arch) for a GPU architecture like ``"sm_90"``: a cubin when this NVRTC
    knows the architecture, else PTX for the newest older one it knows (the driver JITs it).
    """
    match = re.fullmatch(r"sm_(\d+)([af]?)", arch)
    if match is None:
        raise ValueError(f"CUDA architecture must look like 'sm_90' or 'sm_90a', got {arch!r}")
    number = int(match[1])
    supported = _supported_archs()
    if number in supported:
        return "cubin", arch
    older = [a for a in supported if a <= number]
    if not older:
        major, minor = nvrtc_version()
        raise CompileError(
            f"NVRTC {major}.{minor} cannot compile for {arch}: it supports sm_"
            f"{', sm_'.join(map(str, supported))}; use an NVRTC release that still has {arch}"
        )
    return "ptx", f"compute_{older[-1]}"


def cuda_code_kind(code: bytes) -> str:
    """``"cubin"`` or ``"ptx"``: what ``compile_cuda`` returned (a cubin is an ELF file)."""
    return "cubin" if bytes(code[:4]) == b"\x7fELF" else "ptx"


def compile_cuda(source: str, arch: str, *, name_hint: str = "kernel") -> bytes:
    """Compile CUDA C++ ``source`` for ``arch`` (``"sm_90"``) with NVRTC, through the cache.

    Returns a cubin, or PTX when this NVRTC is older than ``arch`` (see ``cuda_code_kind``).
    Needs NVRTC only: no GPU, no driver.
    """
    from ..core.realize import count

    target, nvrtc_arch = cuda_target(arch)
    options = cuda_options(nvrtc_arch)
    major, minor = nvrtc_version()
    source = nvrtc_source(source)
    key = cache.make_key("cuda", source, arch, target, f"nvrtc {major}.{minor}",
                         " ".join(options), _include_digest(source),
                         f"cudart headers {cuda_header_dir()[1]}")  # fmt: skip
    code = _cuda_codes.get(key) or cache.get(key)
    if code is not None:
        count("compile_cache_hits")
    else:
        code = _build_cuda(source, target, options, _safe_name(name_hint))
        cache.put(key, code)
        count("kernels_compiled")
    _cuda_codes[key] = code
    return code


def check_cuda_sources(
    sources: list[str], arch: str, *, ptx: bool = False, batch: int = 48
) -> list[str | None]:
    """Compile many CUDA sources (each ``#include "numloom.h"`` and then its kernels, whose
    symbols must differ between sources) and return, for each, None or NVRTC's log.

    For checking, not for running: sources go to NVRTC in batches of ``batch`` (the headers are
    parsed once per batch, not once per kernel) on one thread per core; a batch that fails is
    split in halves until the failing sources stand alone. ``ptx=True`` stops at PTX
    (``compute_XX``), skipping the assembler. Nothing is cached.
    """
    from concurrent.futures import ThreadPoolExecutor

    target, nvrtc_arch = cuda_target(arch)
    if ptx or target == "ptx":
        target, nvrtc_arch = "ptx", nvrtc_arch.replace("sm_", "compute_")
    options = cuda_options(nvrtc_arch)
    prelude = '#include "numloom.h"\n'
    bodies = [s.replace(prelude, "", 1) for s in sources]
    logs: list[str | None] = [None] * len(sources)

    def check(indices: list[int]) -> None:
        source = nvrtc_source(prelude + "\n".join(bodies[i] for i in indices))
        code, log = _nvrtc_bindings(source, target, options, "check")
        if code is not None:
            return
        if len(indices) == 1:
            logs[indices[0]] = log
            return
        half = len(indices) // 2
        check(indices[:half])
        check(indices[half:])

    chunks = [list(range(i, min(i + batch, len(sources)))) for i in range(0, len(sources), batch)]
    with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        list(pool.map(check, chunks))
    return logs


def _build_cuda(source: str, target: str, options: list[str], name: str) -> bytes:
    if config.DEBUG >= 4:
        print(f"numloom: CUDA source of {name!r}:\n{numbered(source)}", file=sys.stderr)
    start = time.perf_counter()
    # cuda.core checks PTX against the installed driver, which a GPU-less machine lacks.
    how = "cuda.core" if target == "cubin" and _has_cuda_core() else "cuda.bindings"
    build = _nvrtc_core if how == "cuda.core" else _nvrtc_bindings
    # A process's first program parses the header; the next makes the precompiled one.
    first = os.getpid() not in _PCH_STARTED
    _PCH_STARTED.add(os.getpid())
    code, log = build(source, target, options + ([] if first else pch_options()), name)
    if code is None:
        major, minor = nvrtc_version()
        raise CompileError(
            f"NVRTC {major}.{minor} failed to compile CUDA kernel {name!r} to {target}",
            f"nvrtc ({how}) {' '.join(options)}",
            log,
            source,
        )
    if config.DEBUG >= 1:
        ms = (time.perf_counter() - start) * 1e3
        print(f"numloom: compiled CUDA kernel {name!r} to {target} in {ms:.1f} ms", file=sys.stderr)
    if config.DEBUG >= 5 and target == "ptx":
        print(code.decode(errors="replace"), file=sys.stderr)
    return code


def pch_options() -> list[str]:
    """NVRTC's automatic precompiled header (NVRTC 12.8 and later): a process's second program
    parses numloom's header once into a folder of the process's own, removed at exit, and
    later programs load it (about 4 of 40-90 ms a program here; more on a GPU host). The
    first program, most often all a first call waits for, parses the header itself: making
    the precompiled one costs more than that parse (8-28 ms). Not part of a kernel's cache
    key: the code is the same."""
    if config.env_raw("NUMLOOM_NVRTC_PCH") in (b"0", "0") or not _nvrtc_at_least((12, 8)):
        return []
    folder = _PCH.get(os.getpid())  # (a forked process makes its own)
    if folder is None or not os.path.isdir(folder):
        folder = _PCH[os.getpid()] = tempfile.mkdtemp(prefix="numloom-nvrtc-pch-")
        atexit.register(_remove_pch, folder, os.getpid())
    return ["--pch", f"--pch-dir={folder}"]


_PCH: dict = {}  # process id -> its PCH folder
_PCH_STARTED: set = set()  # the processes that compiled a program (a fork compiles its own)


def _remove_pch(folder: str, pid: int) -> None:
    if os.getpid() == pid:  # (not a forked child's exit)
        shutil.rmtree(folder, ignore_errors=True)


@functools.cache
def _has_cuda_core() -> bool:
    try:
        from cuda.core import Program, ProgramOptions  # noqa: F401
    except ImportError:
        return False
    return True


def _nvrtc_core(source: str, target: str, options: list[str], name: str):
    """(code, None) or (None, log) through cuda.core's Program."""
    from cuda.core import Program, ProgramOptions

    pch_dir = next((o.removeprefix("--pch-dir=") for o in options
                    if o.startswith("--pch-dir=")), None)  # fmt: skip
    fixed = dict(name=name, arch=options[0].removeprefix("-arch="), std="c++17", ftz=False,
                 prec_div=True, prec_sqrt=True, fma=False, device_as_default_execution_space=True,
                 include_path=_cuda_include_dirs() or None)  # fmt: skip
    newer = dict({"pch": True, "pch_dir": pch_dir} if pch_dir else {},
                 **({"minimal": True} if "-minimal" in options else {}))  # fmt: skip
    try:
        opts = ProgramOptions(**fixed, **newer)
    except TypeError:  # (a cuda.core without these options)
        opts = ProgramOptions(**fixed)
    program = Program(source, "c++", options=opts)
    try:
        return bytes(program.compile(target).code), None
    except Exception as e:  # noqa: BLE001 (cuda.core's NVRTCError carries the log in its text)
        text = str(e)
        return None, text.partition("compilation log:")[2].strip("\n\0 ") or text
    finally:
        program.close()


def _nvrtc_bindings(source: str, target: str, options: list[str], name: str):
    """(code, None) or (None, log) through cuda.bindings' raw NVRTC calls."""
    nvrtc = _nvrtc_module()
    err, program = nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], [])
    _check(nvrtc, err, "nvrtcCreateProgram")
    try:
        encoded = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return None, _nvrtc_read(nvrtc, program, "ProgramLog").decode(errors="replace")
        return _nvrtc_read(nvrtc, program, "CUBIN" if target == "cubin" else "PTX"), None
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _nvrtc_read(nvrtc, program, what: str) -> bytes:
    """One of NVRTC's outputs (``nvrtcGet{what}Size`` then ``nvrtcGet{what}``)."""
    err, size = getattr(nvrtc, f"nvrtcGet{what}Size")(program)
    _check(nvrtc, err, f"nvrtcGet{what}Size")
    buffer = b" " * size
    (err,) = getattr(nvrtc, f"nvrtcGet{what}")(program, buffer)
    _check(nvrtc, err, f"nvrtcGet{what}")
    return buffer.rstrip(b"\0") if what in ("PTX", "ProgramLog") else buffer

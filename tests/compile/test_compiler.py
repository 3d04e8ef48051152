"""The compilation and caching layer: C through the system compiler, CUDA through NVRTC, and the
per-user disk cache between them and the scheduler (DESIGN.md §6)."""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy
import pytest

import numloom
from numloom.compile import cache, compiler
from numloom.core import config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ADD = """\
void add(long n, const double* a, double* out) {
    #pragma omp parallel for
    for (long i = 0; i < n; i++) {
        out[i] = a[i] + 1.0;
    }
}
"""

CUDA_ADD = """\
extern "C" __global__ void add(long n, const double* a, double* out) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + 1.0;
}
"""

needs_cc = pytest.mark.skipif(not compiler.has_c_compiler(), reason="no C compiler (cc) here")
needs_nvrtc = pytest.mark.skipif(
    not compiler.nvrtc_available(),
    reason="NVRTC not importable: install numloom[cuda12] (cuda-core, cuda-bindings 12, "
    "nvidia-cuda-nvrtc-cu12) or numloom[cuda13]",
)


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Each test gets its own cache directory and forgets what this process loaded."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(directory))
    monkeypatch.setattr(cache, "_caches", {})
    monkeypatch.setattr(compiler, "_loaded", {})
    monkeypatch.setattr(compiler, "_cuda_codes", {})
    return directory


def counters(before: dict) -> tuple[int, int]:
    """(kernels compiled, compile cache hits) since ``before``."""
    now = numloom.stats()
    return (
        now["kernels_compiled"] - before["kernels_compiled"],
        now["compile_cache_hits"] - before["compile_cache_hits"],
    )


def call_add(lib: ctypes.CDLL, n: int = 1000) -> None:
    a = numpy.linspace(-3.0, 7.0, n)
    out = numpy.zeros_like(a)
    pointer = ctypes.c_void_p
    lib.add(ctypes.c_long(n), a.ctypes.data_as(pointer), out.ctypes.data_as(pointer))
    numpy.testing.assert_array_equal(out, a + 1.0)


def entries(directory) -> list:
    return [p for p in directory.iterdir() if not p.name.startswith(".")]


# --- the cache on its own ------------------------------------------------------------------


def test_cache_round_trip_and_keys(fresh_cache):
    key = cache.make_key("source", b"\x00bytes")
    assert len(key) == 64 and key != cache.make_key("sourc", b"e\x00bytes")
    assert cache.get(key) is None
    cache.put(key, b"payload")
    assert cache.get(key) == b"payload"
    assert stat.S_IMODE(os.stat(fresh_cache).st_mode) == 0o700
    assert not [p for p in fresh_cache.iterdir() if p.name.startswith(".tmp-")]
    with pytest.raises(ValueError, match="64 lowercase hex"):
        cache.get("../../etc/passwd")


def test_default_cache_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMLOOM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == str(tmp_path / "xdg" / "numloom")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == str(tmp_path / ".cache" / "numloom")


@pytest.mark.parametrize("blob", [b"", b"numloom-cache-v1\n", b"garbage" * 20])
def test_cache_rejects_what_is_not_an_entry(blob):
    assert cache.unpack(blob) is None
    assert cache.unpack(cache.pack(b"x" + blob)) == b"x" + blob


# --- compiling C ---------------------------------------------------------------------------


@needs_cc
def test_compile_c_runs_an_openmp_kernel():
    before = numloom.stats()
    call_add(compiler.compile_c(ADD, name_hint="add"))
    assert counters(before) == (1, 0)


@needs_cc
def test_second_compile_in_process_is_a_hit():
    first = compiler.compile_c(ADD)
    before = numloom.stats()
    assert compiler.compile_c(ADD) is first
    assert counters(before) == (0, 1)


@needs_cc
def test_new_process_loads_from_disk(fresh_cache):
    compiler.compile_c(ADD)
    script = textwrap.dedent(f"""
        import ctypes, numpy, numloom
        from numloom.compile import compiler
        lib = compiler.compile_c({ADD!r})
        a = numpy.arange(5.0); out = numpy.zeros(5)
        lib.add(ctypes.c_long(5), a.ctypes.data_as(ctypes.c_void_p),
                out.ctypes.data_as(ctypes.c_void_p))
        s = numloom.stats()
        print(s["kernels_compiled"], s["compile_cache_hits"], out.tolist())
    """)
    env = dict(os.environ, NUMLOOM_CACHE_DIR=str(fresh_cache), PYTHONPATH=REPO)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split(maxsplit=2) == ["0", "1", "[1.0, 2.0, 3.0, 4.0, 5.0]\n"]


def _truncate(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


def _flip_a_bit(blob: bytes) -> bytes:
    middle = len(blob) // 2
    return blob[:middle] + bytes([blob[middle] ^ 0x10]) + blob[middle + 1 :]


@needs_cc
@pytest.mark.parametrize("damage", [_truncate, _flip_a_bit, lambda blob: b""])
def test_damaged_entry_is_recompiled_silently(fresh_cache, monkeypatch, damage):
    compiler.compile_c(ADD)
    (entry,) = entries(fresh_cache)
    entry.write_bytes(damage(entry.read_bytes()))
    monkeypatch.setattr(compiler, "_loaded", {})  # as a new process would
    before = numloom.stats()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call_add(compiler.compile_c(ADD))
    assert counters(before) == (1, 0)
    assert cache.unpack(entry.read_bytes()) is not None  # rewritten whole


@needs_cc
@pytest.mark.parametrize("how", ["copied", "renamed", "symlinked"])
def test_an_entry_of_another_key_is_a_miss_and_is_repaired(fresh_cache, monkeypatch, how):
    """A cache entry put where another key's belongs (copied, renamed or linked over it) is
    not loaded: the kernel compiles again and its entry is written whole."""
    twice = ADD.replace("void add(", "void twice(").replace("a[i] + 1.0", "a[i] * 2.0")
    compiler.compile_c(ADD)
    (add_entry,) = entries(fresh_cache)
    compiler.compile_c(twice, symbol="twice")
    (twice_entry,) = [e for e in entries(fresh_cache) if e != add_entry]
    if how == "copied":
        twice_entry.write_bytes(add_entry.read_bytes())
    elif how == "renamed":
        add_entry.rename(twice_entry)
    else:
        twice_entry.unlink()
        twice_entry.symlink_to(add_entry)
    monkeypatch.setattr(compiler, "_loaded", {})  # as a new process would
    before = numloom.stats()
    lib = compiler.compile_c(twice, symbol="twice")
    a = numpy.arange(5.0)
    out = numpy.zeros(5)
    lib.twice(ctypes.c_long(5), a.ctypes.data_as(ctypes.c_void_p),
              out.ctypes.data_as(ctypes.c_void_p))  # fmt: skip
    numpy.testing.assert_array_equal(out, a * 2.0)
    assert counters(before) == (1, 0)
    assert not twice_entry.is_symlink()
    assert cache.unpack(twice_entry.read_bytes(), twice_entry.name) is not None


@needs_cc
def test_a_cached_library_without_its_symbol_is_a_miss(fresh_cache, monkeypatch):
    """Even an intact entry of the right key is compiled again when the library it holds
    lacks the function asked for."""
    lib = compiler.compile_c(ADD)
    key = next(k for k, v in compiler._loaded.items() if v is lib)
    cache.put(key, (fresh_cache / key).read_bytes()[:0] + _library_of("void other(void) {}"))
    monkeypatch.setattr(compiler, "_loaded", {})
    call_add(compiler.compile_c(ADD, symbol="add"))


def _library_of(source: str) -> bytes:
    """The shared object compiled from ``source`` (outside the cache)."""
    import subprocess
    import tempfile

    cc, _ = compiler.c_compiler()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "x.c"), os.path.join(tmp, "x.so")
        with open(src, "w") as f:
            f.write(source)
        subprocess.run([cc, "-shared", "-fPIC", "-o", out, src], check=True)
        with open(out, "rb") as f:
            return f.read()


@needs_cc
def test_unreadable_entry_is_a_miss(fresh_cache, monkeypatch):
    compiler.compile_c(ADD)
    (entry,) = entries(fresh_cache)
    real_open = open

    def failing_open(file, *args, **kwargs):
        if str(file) == str(entry):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    monkeypatch.setattr(compiler, "_loaded", {})
    before = numloom.stats()
    call_add(compiler.compile_c(ADD))
    assert counters(before) == (1, 0)


def _compile_twice_in_refused_dir(directory) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call_add(compiler.compile_c(ADD))
        call_add(compiler.compile_c(ADD))
    refusals = [w for w in caught if issubclass(w.category, cache.NumloomCacheWarning)]
    assert len(refusals) == 1, [str(w.message) for w in caught]
    assert entries(directory) == []  # nothing was written where others could tamper with it
    return [str(refusals[0].message)]


@needs_cc
def test_world_writable_cache_dir_is_refused(fresh_cache):
    fresh_cache.mkdir(mode=0o700)
    os.chmod(fresh_cache, 0o777)
    before = numloom.stats()
    (message,) = _compile_twice_in_refused_dir(fresh_cache)
    assert str(fresh_cache) in message and "mode 0777" in message
    assert f"chmod 700 {fresh_cache}" in message and "NUMLOOM_CACHE_DIR" in message
    assert counters(before) == (1, 1)  # the in-memory cache still serves this process


@needs_cc
def test_a_cache_dir_its_owner_cannot_use_is_reported_once(fresh_cache):
    fresh_cache.mkdir(mode=0o700)
    os.chmod(fresh_cache, 0o000)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call_add(compiler.compile_c(ADD))
            call_add(compiler.compile_c(ADD))
    finally:
        os.chmod(fresh_cache, 0o700)
    refusals = [w for w in caught if issubclass(w.category, cache.NumloomCacheWarning)]
    assert len(refusals) == 1, [str(w.message) for w in caught]
    message = str(refusals[0].message)
    assert "mode 0000" in message and "cannot read and write" in message
    assert refusals[0].filename == __file__  # the user's line, not numloom's
    assert entries(fresh_cache) == []


@needs_cc
def test_cache_dir_of_another_user_is_refused(fresh_cache, monkeypatch):
    fresh_cache.mkdir(mode=0o700)
    me = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: me + 1)
    (message,) = _compile_twice_in_refused_dir(fresh_cache)
    assert str(fresh_cache) in message and f"owner uid {me}" in message
    assert "another user" in message and "NUMLOOM_CACHE_DIR" in message


@needs_cc
def test_compile_error_shows_command_log_and_numbered_source():
    source = "double f(double x) {\n    return x + y;\n}\n"
    with pytest.raises(compiler.CompileError) as info:
        compiler.compile_c(source, name_hint="broken")
    message = str(info.value)
    assert "   2 |     return x + y;" in message  # the numbered source
    assert "undeclared" in message and "y" in info.value.log  # gcc's or clang's words
    assert "-O3 -march=native" in message and "-fwrapv" in message
    assert info.value.source == source


def test_no_compiler(monkeypatch):
    monkeypatch.setenv("NUMLOOM_CC", "/nonexistent")
    assert not compiler.has_c_compiler()
    with pytest.raises(compiler.CompileError, match="NUMLOOM_CC"):
        compiler.compile_c(ADD)


@needs_cc
def test_compiler_without_openmp_is_noted_once(tmp_path, monkeypatch):
    cc, _ = compiler.c_compiler()
    fake = tmp_path / "cc-without-openmp"
    fake.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do [ "$arg" = -fopenmp ] && echo "no OpenMP here" >&2 && exit 1; done\n'
        f'exec {cc} "$@"\n'
    )
    fake.chmod(0o700)
    monkeypatch.setenv("NUMLOOM_CC", str(fake))
    with pytest.warns(compiler.NumloomCompilerWarning, match="without -fopenmp") as caught:
        call_add(compiler.compile_c(ADD))
        call_add(compiler.compile_c(ADD.replace("1.0", "1.00")))
    assert len(caught) == 1


@needs_nvrtc
def test_a_process_first_program_makes_no_precompiled_header(monkeypatch):
    """Making NVRTC's precompiled header costs more than parsing the header once: a process's
    first program (most often all that a first call waits for) parses it, and the second
    makes the header that later programs load."""
    if compiler.nvrtc_version() < (12, 8):
        pytest.skip("NVRTC before 12.8 has no automatic precompiled header")
    seen = []
    build = compiler._nvrtc_bindings
    monkeypatch.setattr(compiler, "_has_cuda_core", lambda: False)
    monkeypatch.setattr(compiler, "_nvrtc_bindings",
                        lambda src, target, options, name: seen.append(options)
                        or build(src, target, options, name))  # fmt: skip
    monkeypatch.setattr(compiler, "_PCH_STARTED", set())
    monkeypatch.setattr(compiler, "_cuda_codes", {})
    monkeypatch.setattr(compiler.cache, "get", lambda key: None)
    for name in ("first", "second", "third"):
        source = '#include "numloom.h"\nextern "C" __global__ void %s(float *x) { x[0] = 1; }\n'
        compiler.compile_cuda(source % name, "sm_90", name_hint=name)
    assert ["--pch" in options for options in seen] == [False, True, True]


@needs_nvrtc
def test_a_kernel_without_float16_parses_no_cuda_fp16_header():
    """``cuda_fp16.h`` is most of what NVRTC parses for a small kernel: a source names
    ``nl_half`` (or rounds to it) to have it, and numloom.h includes it only then."""
    plain = '#include "numloom.h"\nextern "C" __global__ void k(float *x) { x[0] = 1; }\n'
    halves = ('#include "numloom.h"\n'
              'extern "C" __global__ void k(nl_half *x) { x[0] = (nl_half)nl_round_half(1); }\n')
    assert compiler.nvrtc_source(plain) == plain
    assert compiler.nvrtc_source(halves) == "#define NL_HALF 1\n" + halves
    assert compiler.cuda_code_kind(compiler.compile_cuda(halves, "sm_90", name_hint="h")) == "cubin"
    uses_half = plain.replace("x[0] = 1;", "__half h = __float2half(1.0f); x[0] = __half2float(h);")
    with pytest.raises(compiler.CompileError, match="__half"):
        compiler.compile_cuda(uses_half, "sm_90", name_hint="h2")
    x = numloom.asarray(numpy.arange(6, dtype=numpy.float16).reshape(2, 3))
    sources = [k.source for k in numloom.explain(x * 2 + x.sum(axis=1, keepdims=True),
                                                 target="cuda").kernels if k.source]  # fmt: skip
    assert sources and compiler.check_cuda_sources(sources, "sm_90") == [None] * len(sources)


@needs_nvrtc
def test_nvrtc_leaves_out_what_kernels_never_use():
    """``-minimal`` (NVRTC 12.4 and later): no textures, device-side launches or runtime API
    types, which no kernel of numloom's uses; each program parses less."""
    options = compiler.cuda_options("sm_90")
    assert ("-minimal" in options) == (compiler.nvrtc_version() >= (12, 4))


@needs_cc
def test_debug_output(monkeypatch, capsys):
    monkeypatch.setattr(config, "DEBUG", 4)
    compiler.compile_c(ADD, name_hint="add")
    err = capsys.readouterr().err
    assert "   3 |     for (long i = 0; i < n; i++) {" in err
    assert "compiled C kernel 'add' in" in err


# --- compiling CUDA with NVRTC (no GPU needed) ------------------------------------------------


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compile_cuda_to_cubin(arch):
    before = numloom.stats()
    code = compiler.compile_cuda(CUDA_ADD, arch, name_hint="add")
    assert compiler.cuda_code_kind(code) == "cubin" and code.startswith(b"\x7fELF")
    assert compiler.compile_cuda(CUDA_ADD, arch) == code
    assert counters(before) == (1, 1)


@needs_nvrtc
def test_cuda_disk_cache_and_damaged_entry(fresh_cache, monkeypatch):
    code = compiler.compile_cuda(CUDA_ADD, "sm_90")
    monkeypatch.setattr(compiler, "_cuda_codes", {})
    before = numloom.stats()
    assert compiler.compile_cuda(CUDA_ADD, "sm_90") == code
    assert counters(before) == (0, 1)
    (entry,) = entries(fresh_cache)
    entry.write_bytes(_flip_a_bit(entry.read_bytes()))
    monkeypatch.setattr(compiler, "_cuda_codes", {})
    assert compiler.compile_cuda(CUDA_ADD, "sm_90") == code
    assert counters(before) == (1, 1)


@needs_nvrtc
def test_cuda_through_raw_bindings(monkeypatch):
    monkeypatch.setattr(compiler, "_has_cuda_core", lambda: False)
    assert compiler.cuda_code_kind(compiler.compile_cuda(CUDA_ADD, "sm_80")) == "cubin"
    with pytest.raises(compiler.CompileError, match="cuda.bindings") as info:
        compiler.compile_cuda("__global__ void k() { undefined_thing(); }", "sm_80")
    assert "undefined_thing" in info.value.log and "   1 | __global__" in str(info.value)


@needs_nvrtc
def test_cuda_ptx_for_an_architecture_newer_than_nvrtc(monkeypatch):
    monkeypatch.setattr(compiler, "_supported_archs", lambda: (75, 80))
    code = compiler.compile_cuda(CUDA_ADD, "sm_90")
    assert compiler.cuda_code_kind(code) == "ptx" and b".target sm_80" in code


@needs_nvrtc
def test_cuda_compile_error():
    source = 'extern "C" __global__ void k(float* x) {\n    x[0] = missing;\n}\n'
    with pytest.raises(compiler.CompileError) as info:
        compiler.compile_cuda(source, "sm_90", name_hint="broken")
    message = str(info.value)
    assert "   2 |     x[0] = missing;" in message
    assert 'identifier "missing" is undefined' in message
    assert "--ftz=false" in message and "use_fast_math" not in message


@needs_nvrtc
def test_cuda_half_precision_headers():
    if compiler.cuda_header_dir()[0] is None:
        pytest.skip("no CUDA runtime headers for NVRTC: install nvidia-cuda-runtime-cu12 (cuda13: "
                    "nvidia-cuda-runtime, or NVRTC >= 13.3's bundled headers)")  # fmt: skip
    source = (
        "#include <cuda_fp16.h>\n"
        'extern "C" __global__ void k(__half* x) { x[0] = __hadd(x[0], x[1]); }\n'
    )
    assert compiler.cuda_code_kind(compiler.compile_cuda(source, "sm_90")) == "cubin"


@needs_cc
def test_cache_dir_removed_while_running(fresh_cache):
    call_add(compiler.compile_c(ADD))
    for entry in fresh_cache.iterdir():
        entry.unlink()
    fresh_cache.rmdir()
    call_add(compiler.compile_c(ADD.replace("1.0", "1.00")))  # compiles; the write just fails


def test_header_edits_change_only_the_keys_of_kernels_that_include_them(monkeypatch):
    monkeypatch.setattr(compiler, "_headers", lambda: (("numloom.h", b"/* v1 */"),))
    first = compiler._include_digest('#include "numloom.h"\n')
    assert compiler._include_digest(ADD) == ""
    monkeypatch.setattr(compiler, "_headers", lambda: (("numloom.h", b"/* v2 */"),))
    assert compiler._include_digest('#include "numloom.h"\n') not in ("", first)


def test_small_kernels_stay_vectorized_on_one_thread():
    """Under the one-thread size, an arithmetic kernel keeps its SIMD loop: the threshold names
    the parallel construct only (a bare ``if`` on ``parallel for simd`` is also the simd
    construct's). A loop calling vector math keeps the bare one: small arrays then get the C
    library's scalar results, which are NumPy's."""
    with numloom.device("cpu"):
        _check_small_kernels()


def _check_small_kernels():
    x = numloom.arange(1000, dtype=numpy.float32)
    arithmetic = x * 3 + 1
    (source,) = [k.source for k in numloom.explain(arithmetic).kernels]
    # (a kernel that reads the IEEE flags splits ``parallel for simd`` into a parallel region
    # around an ``omp for simd``: the threshold stays on the parallel construct alone)
    (line,) = [ln for ln in source.splitlines() if "omp parallel" in ln]
    assert "if (parallel:" in line and "simd" in source and "if (simd:" not in source
    values = numpy.array([1.0, 2.0, 3.0, 0.5, 7.25])
    (source,) = [k.source for k in numloom.explain(numloom.sin(numloom.asarray(values))).kernels]
    assert "if (simd:" in source  # vector math: small arrays get the scalar library's values
    numpy.testing.assert_array_equal(
        arithmetic.get(), numpy.arange(1000, dtype=numpy.float32) * 3 + 1
    )
    values = numpy.array([1.0, 2.0, 3.0, 0.5, 7.25])
    numpy.testing.assert_array_equal(numloom.sin(numloom.asarray(values)).get(), numpy.sin(values))


def test_a_new_plans_kernels_compile_together_once_each(monkeypatch):
    """A new plan's kernels compile at once, on threads (``compile_all``), each distinct
    source once; they load after, and the plan runs as NumPy computes."""
    batches = []
    original = compiler.compile_all

    def spy(compile_one, sources):
        batches.append([symbol for _, symbol in sources])
        return original(compile_one, sources)

    monkeypatch.setattr(compiler, "compile_all", spy)
    if numloom.get_device() != "cpu":  # (kernels an earlier test loaded in this process: gone)
        from numloom.backends import cuda_programs

        monkeypatch.setattr(cuda_programs._get(numloom.get_device()), "functions", {})
    host = numpy.random.default_rng(0).random((64, 48))
    x = numloom.asarray(host)
    before = numloom.stats()
    got = (numloom.exp(x) / numloom.exp(x).sum(axis=1, keepdims=True), x.cumsum(axis=0),
           x.argmax(axis=1), numloom.sqrt(x) @ x.T)  # fmt: skip
    numloom.evaluate(*got)
    compiled, _ = counters(before)
    if not batches:
        pytest.skip("no C compiler: kernels run through NumPy")
    assert len(batches) == 1 and len(batches[0]) == len(set(batches[0])) >= 3
    # (a GPU may also compile one of numloom's fixed kernels the first time a process needs
    # it, outside any plan: the matrix product's operand check)
    fixed = 1 if numloom.get_device() != "cpu" else 0
    assert len(batches[0]) <= compiled <= len(batches[0]) + fixed
    numpy.testing.assert_allclose(got[0].get(), numpy.exp(host) / numpy.exp(host).sum(
        axis=1, keepdims=True), rtol=1e-14)  # fmt: skip
    numpy.testing.assert_allclose(got[1].get(), host.cumsum(axis=0), rtol=1e-14)
    numpy.testing.assert_array_equal(got[2].get(), host.argmax(axis=1))
    numpy.testing.assert_allclose(got[3].get(), numpy.sqrt(host) @ host.T, rtol=1e-12)
    again = numloom.stats()
    numloom.evaluate(*(numloom.exp(x) / numloom.exp(x).sum(axis=1, keepdims=True),
                       x.cumsum(axis=0), x.argmax(axis=1), numloom.sqrt(x) @ x.T))  # fmt: skip
    assert counters(again)[0] == 0 and len(batches) == 1  # (cached: nothing compiles)


@needs_nvrtc
def test_nvrtc_compiles_on_several_threads_at_once():
    """The GPU's new kernels compile on threads (NVRTC needs no context); each source is
    compiled once and gives the code a lone compile gives."""
    sources = [(f'#include "numloom.h"\nextern "C" __global__ void k{i}(float *x) '
                f'{{ x[threadIdx.x] = {i}.0f * x[threadIdx.x]; }}\n', f"k{i}")
               for i in range(6)]  # fmt: skip
    codes = {}
    before = numloom.stats()

    def one(source, symbol):
        codes[symbol] = compiler.compile_cuda(source, "sm_90", name_hint=symbol)

    compiler.compile_all(one, sources)
    assert counters(before) == (6, 0) and len(codes) == 6
    compiler._cuda_codes.clear()
    assert compiler.compile_cuda(sources[2][0], "sm_90", name_hint="k2") == codes["k2"]


@needs_nvrtc
def test_nvrtc_precompiles_the_header_in_a_folder_of_the_process_removed_at_exit(tmp_path):
    """NVRTC 12.8+ parses numloom's header once per process (automatic PCH) into a folder of
    the process's own, not the user's working directory, and the folder goes at exit; the
    kernels' cache keys do not depend on it (a second process finds them in the cache)."""
    script = textwrap.dedent("""
        import os
        from numloom.compile import compiler
        source = '#include "numloom.h"\\nextern "C" __global__ void k(float *x) { x[0] = 1; }\\n'
        code = compiler.compile_cuda(source, "sm_90", name_hint="k")
        code = code and compiler.compile_cuda(source.replace("k(", "k2("), "sm_90", name_hint="k2")
        options = compiler.pch_options()
        folder = options[1].partition("=")[2] if options else ""
        print(bool(code), folder, sorted(os.listdir(folder)) if folder else [])
        import numloom
        print(numloom.stats()["kernels_compiled"], numloom.stats()["compile_cache_hits"])
    """)
    env = {**os.environ, "NUMLOOM_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           cwd=tmp_path, env=env) for _ in range(2)]  # fmt: skip
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (run.stdout.split("\n") for run in runs)
    made, folder, listed = first[0].split(" ", 2)
    assert made == "True" and first[1] == "2 0" and second[1] == "0 2"  # (the cache's key)
    if compiler.nvrtc_version() >= (12, 8):
        assert folder and ".pch" in listed and not os.path.exists(folder)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".pch")]

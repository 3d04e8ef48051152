"""What importing and running numloom leaves in the process: the recursion limit as it was,
no heavy modules loaded at import, a compile cache within its size."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy
import pytest

import numloom as nl


def test_import_and_a_deep_graph_leave_the_recursion_limit_alone():
    code = (
        "import sys; before = sys.getrecursionlimit(); import numloom as np\n"
        "after_import = sys.getrecursionlimit()\n"
        "x = np.arange(10.0)\n"
        "for _ in range(2000): x = x * 1.0001 + 1\n"
        "print(before, after_import, sys.getrecursionlimit(), float(x.sum()) > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after_import, after_run, ok = out.stdout.split()
    assert before == after_import == after_run and ok == "True"


HEAVY = ["numloom.backends.cpu", "numloom.backends.cuda", "numloom.compile.lower", "numloom.compile.render",
         "numloom.compile.render_cuda", "numloom.kernels.translate", "cuda.core", "cuda.bindings", "cupy",
         "nvmath", "dask", "jax", "torch", "matplotlib", "pandas", "scipy",
         # (what a program may never use: numloom.random, numba.cuda's API, explain)
         "numloom.random", "numpy.random", "numloom.kernels.cuda", "numloom.kernels.vectorize",
         "numloom.tools.explain", "numloom.compile.compiler"]  # fmt: skip


def test_lazy_public_names_load_when_used():
    code = (
        "import sys, numloom\n"
        "import numloom.cuda, numloom.cuda.random\n"
        "from numloom.types import float32\n"
        "print(numloom.cuda is numloom.kernels.cuda, numloom.cuda.random is numloom.kernels.cuda.random,\n"
        "      numloom.types is numloom.kernels.types, float32 is numloom.kernels.types.float32,\n"
        "      numloom.random.default_rng(0).random(2).shape, callable(numloom.explain),\n"
        "      numloom.vectorize is numloom.kernels.vectorize.vectorize, 'random' in dir(numloom))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True"] * 4 + ["(2,)", "True", "True", "True"]


def test_import_loads_no_backend_compiler_stage_or_peer_library():
    """``import numloom`` costs little more than NumPy's import: the pipeline's later stages,
    the backends and every optional library load when first used."""
    code = (
        "import sys, os\n"
        "import numloom\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
        "assert float((numloom.arange(300000.0) * 2).sum()) > 0  # (OpenMP loaded, run)\n"
        "print('OMP_WAIT_POLICY' in os.environ, 'GOMP_SPINCOUNT' in os.environ)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)  # fmt: skip
    loaded, environment = out.stdout.splitlines()
    assert loaded == "[]"
    assert environment == "False False"  # (OpenMP's settings were set only while it loaded)


def test_a_deep_graph_evaluates_in_this_process_and_restores_the_limit():
    limit = sys.getrecursionlimit()
    x = nl.arange(10.0)
    for _ in range(1500):
        x = x * 1.0 + 1
    numpy.testing.assert_array_equal(x.get(), numpy.arange(10.0) + 1500)
    assert sys.getrecursionlimit() == limit


def test_the_compile_cache_stays_under_its_limit_and_keeps_what_is_used(tmp_path, monkeypatch):
    import os
    import time

    from numloom.compile import cache

    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("NUMLOOM_CACHE_MAX_BYTES", "10000")
    c = cache.current()
    keys = [cache.make_key("entry", str(k)) for k in range(40)]
    used = keys[0]
    for k, key in enumerate(keys):
        c.put(key, bytes(1000))
        if k % 5 == 0:
            assert c.get(used) is not None  # kept in use: never the oldest
        time.sleep(0.002)
    files = [f for f in os.listdir(tmp_path / "c") if not f.startswith(".")]
    total = sum(os.path.getsize(tmp_path / "c" / f) for f in files)
    assert total <= 10000 and len(files) >= 5
    assert c.get(used) is not None and c.get(keys[-1]) is not None
    assert c.get(keys[1]) is None  # the least recently used went first


def test_the_compile_cache_counts_its_directory_off_the_callers_thread(tmp_path, monkeypatch):
    """A process's first write into the cache counts the directory's bytes (for the limit) on a
    thread of its own: with a cache of 27000 entries that count took 0.13 s of the first
    compile's caller, a first call's time."""
    import threading

    from numloom.compile import cache

    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("NUMLOOM_CACHE_MAX_BYTES", "5000")
    c = cache.current()
    counted = []
    entries = cache.Cache._entries
    monkeypatch.setattr(cache.Cache, "_entries",
                        lambda self: counted.append(threading.current_thread()) or entries(self))
    keys = [cache.make_key("entry", str(k)) for k in range(12)]
    c.put(keys[0], bytes(1000))
    c.wait_counted()
    assert counted and threading.main_thread() not in counted
    for key in keys[1:]:
        c.put(key, bytes(1000))
    files = [f for f in (tmp_path / "c").iterdir() if not f.name.startswith(".")]
    assert sum(f.stat().st_size for f in files) <= 5000 and c.get(keys[-1]) is not None


def test_a_librarys_warning_shown_once_stays_shown_once():
    """A library's warning shows once per place under Python's default filters; numloom's
    work between two calls (new ufunc loops, which NumPy checks on stand-ins; a first sync)
    does not make Python forget it was shown (``warnings.catch_warnings`` would: SciPy's
    FutureWarning of ``sparse.diags`` showed at every call of a program)."""
    code = (
        "import warnings, numloom as np\n"
        "def library():\n"
        "    warnings.warn('the output dtype will change', FutureWarning)\n"
        "for n in (3, 4):\n"
        "    library()\n"
        "    x = -np.ones(n, dtype=np.float32) * np.int16(n) + np.uint8(1)\n"
        "    print(float(x.sum()))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)  # fmt: skip
    assert out.stderr.count("FutureWarning") == 1, out.stderr


def test_a_librarys_warning_shown_once_per_place_stays_shown_once():
    """A library's warning under Python's default filter shows once per place (SciPy's
    FutureWarning of ``sparse.diags``); numloom running NumPy in between (a sort, its warnings
    recorded for the user's line) must not make Python forget it was shown."""
    import warnings

    shown = []

    def library():
        warnings.warn("a library's warning", FutureWarning, stacklevel=1)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *rest, **kw: shown.append(message)
        for _ in range(3):
            library()
            nl.sort(nl.arange(5.0)[::-1] * 1)  # (NumPy's sort, its warnings recorded)
            try:  # (NumPy's own call for 2-vectors: it warns, or from NumPy 2.5 raises)
                nl.cross(nl.ones(2), nl.ones(3))
            except ValueError:
                pass
    assert [type(w) for w in shown].count(FutureWarning) == 1


def test_threads_recording_numpys_warnings_leave_python_showing_warnings():
    """numloom records the warnings of NumPy calls it runs, per thread: threads doing so at
    once leave Python's display of warnings as it was (swapping it in and out, two threads
    could leave one's recorder installed, and every later warning swallowed)."""
    import threading
    import time
    import warnings

    from numloom.core.dag import recorded_warnings

    errors = []

    def work():
        for _ in range(200):
            with recorded_warnings() as caught:
                time.sleep(0)  # (another thread records meanwhile)
                warnings.warn("inside", RuntimeWarning, stacklevel=1)
            if [str(w.message) for w in caught] != ["inside"]:
                errors.append([str(w.message) for w in caught])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *rest, **kw: shown.append(str(message))
        warnings.warn("after", RuntimeWarning, stacklevel=1)
    assert shown == ["after"] and not errors


def test_a_machine_without_an_nvidia_driver_does_not_load_the_cuda_backend():
    """Choosing the default device on a machine with no NVIDIA driver (no driver files or
    device nodes) takes no CUDA import: loading the backend only to learn that cost ~150 ms
    of every program's start."""
    from numloom.core import device

    if not device._no_nvidia_driver():
        pytest.skip("this machine has an NVIDIA driver: the backend is asked")
    env = {k: v for k, v in os.environ.items() if k != "NUMLOOM_DEVICE"}
    code = ("import sys, numloom as np; x = np.arange(10.0) * 2; print(float(x.sum()), "
            "np.get_device(), 'cuda.core' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()  # fmt: skip
    assert out == ["90.0", "cpu", "False"]

"""Long-running programs stay healthy: cached plans hold no user data and the caches are
bounded (memory measured as the process's resident set), syncs stay linear in pending work."""

from __future__ import annotations

import gc
import os
import subprocess
import weakref

import numpy
import pytest

import numloom as nl
from numloom.core import realize


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="Linux /proc")


@needs_proc
def test_large_arrays_deleted_in_a_loop_are_freed():
    def step(i):
        a = nl.asarray(numpy.ones(2_000_000 + i))  # 16 MB, a new size (and plan) each time
        assert float((a * 2).sum()) == 2.0 * a.size
        del a

    for i in range(3):  # the kernels compiled, the pool warm
        step(i)
    gc.collect()
    before = _rss_mb()
    for i in range(3, 23):
        step(i)
    assert _rss_mb() - before < 80, "the inputs of earlier plans are still held"


def test_an_evaluation_leaves_no_reference_cycle_holding_data():
    """Buffers are freed when their last array goes, as NumPy's are, not at the next garbage
    collection: planning makes no reference cycle that holds nodes."""
    host = numpy.ones(5000)
    gc.collect()
    gc.disable()
    try:
        a = nl.asarray(host)
        held = weakref.ref(a._storage.version.arg)
        assert float((a * 2 + 1).sum()) == 15000.0
        del a
        assert held() is None
    finally:
        gc.enable()


def test_a_cached_plan_holds_no_input():
    host = numpy.arange(1000.0)
    a = nl.asarray(host)
    held = weakref.ref(a._storage.version.arg)  # (its Buffer: the data's only holder)
    float((a * 3 + 1).sum())
    del a
    gc.collect()
    assert held() is None, "a cached plan keeps the input's buffer alive"


@needs_proc
def test_thousands_of_distinct_shapes_keep_memory_flat():
    def run(lo, hi):
        for n in range(lo, hi):
            x = nl.asarray(numpy.full((n % 7 + 1, n), 0.5))
            assert float((x * x + 1).max()) == 1.25

    run(1, 300)
    gc.collect()
    before = _rss_mb()
    run(300, 2300)
    gc.collect()
    assert _rss_mb() - before < 40


def test_the_plan_cache_is_bounded_and_counted(monkeypatch):
    backend = realize._backend(nl.get_device())  # (the CPU's or the GPU's programs)
    monkeypatch.setattr(backend.TARGET.plans, "size", lambda: 16)
    before = nl.stats()["plan_cache_evictions"]
    for k in range(40):  # 40 structures: k + 1 chained additions
        x = nl.arange(5.0)
        for _ in range(k + 1):
            x = x + 1
        x.get()
    plans = backend.TARGET.plans
    assert len(plans) <= 16
    stats = nl.stats()
    others = sum(len(c) for c in list(realize._plan_caches) if c is not plans)
    assert stats["plans_cached"] == len(plans) + others
    assert stats["plan_cache_evictions"] - before >= 24


def test_many_live_pending_arrays_flush_on_their_own(monkeypatch):
    from numloom.core import config

    monkeypatch.setattr(config, "FLUSH_WIDTH", 64)
    base = nl.arange(10.0)
    before = nl.stats()["auto_flushes"]
    arrays = [base * k + 1 for k in range(300)]
    assert nl.stats()["auto_flushes"] - before >= 3
    assert sum(a._storage.pending for a in arrays) <= 64
    for k, a in enumerate(arrays):
        numpy.testing.assert_array_equal(a.get(), numpy.arange(10.0) * k + 1)


def test_a_sync_of_thousands_of_pending_arrays_frees_each_intermediate_once():
    """The bookkeeping of what each kernel frees is linear in the kernels (a plan of several
    thousand kernels plans in well under a second)."""
    from numloom.backends.cpu import Step, _add_frees

    class K:
        kind = "map"

    n = 20000
    steps = [Step(kernel=K(), fn=None, nodes=(), inputs=(i,), outputs=(i + 1,), params=None,
                  consts=(), layout=())
             for i in range(n)]  # fmt: skip
    _add_frees(steps, keep={n})
    assert [s.frees for s in steps[:3]] == [(0,), (1,), (2,)]
    assert steps[-1].frees == (n - 1,)  # (its output is kept)


def _numpys_error(shape, dtype=float):
    """The error NumPy raises for an array of ``shape`` on this machine (None: it allocates
    it, as a machine that overcommits memory does)."""
    try:
        numpy.empty(shape, dtype)  # (reserved, never touched)
    except (MemoryError, ValueError) as e:
        return e
    return None


@pytest.mark.parametrize("shape", [(10**6, 10**6), (2**62, 2**62), (2**40, 2**30)])
@pytest.mark.parametrize("make", ["ones", "zeros", "empty", "full", "ones_like"])
def test_impossible_sizes_raise_numpys_error_at_the_call(shape, make):
    def call(xp):
        if make == "full":
            return xp.full(shape, 2.0)
        if make == "ones_like":
            return xp.ones_like(xp.zeros(3), shape=shape)
        return getattr(xp, make)(shape)

    want = _numpys_error(shape)
    if nl.get_device() != "cpu" and not isinstance(want, ValueError):
        with pytest.raises(MemoryError, match="Unable to allocate"):  # (the GPU's memory)
            call(nl)
        return
    if want is None:
        pytest.skip("this machine's NumPy allocates it (overcommitted memory)")
    with pytest.raises(type(want)) as got:
        call(nl)  # not later, at the sync
    assert str(got.value) == str(want)


def test_an_impossible_arange_raises_at_the_call():
    want = _numpys_error((10**13,), numpy.int64)
    if want is None and nl.get_device() == "cpu":
        pytest.skip("this machine's NumPy allocates it (overcommitted memory)")
    with pytest.raises(MemoryError) as got:
        nl.arange(10**13)
    assert "Unable to allocate" in str(got.value)
    if nl.get_device() == "cpu":
        assert str(got.value) == str(want)


def test_a_compiler_that_fails_once_poisons_nothing(monkeypatch, tmp_path):
    """A compile that fails (a transient error) raises, and the same arrays evaluate once the
    compiler works again."""
    from numloom.compile import compiler

    if nl.get_device() != "cpu":
        pytest.skip("C kernels (the CPU's)")

    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path))  # (nothing compiled yet)
    monkeypatch.setattr(compiler, "_loaded", {})
    monkeypatch.setattr(nl.core.config, "COMPILE_AFTER_MS", 0)  # (compiled at once)
    run = compiler._run
    broken = [True]

    def failing_once(command, cwd):
        if broken[0] and "-O3" in command:  # (a kernel's build, not a probe)
            return subprocess.CompletedProcess(command, 1, "", "cc: out of memory (transient)")
        return run(command, cwd)

    monkeypatch.setattr(compiler, "_run", failing_once)
    a = nl.asarray(numpy.arange(6.0))
    b = nl.sin(a) * 3.25 - a  # a kernel nothing compiled before
    c = a + 1
    with pytest.raises(compiler.CompileError, match="transient"):
        b.get()
    broken[0] = False  # the compiler works again
    numpy.testing.assert_array_equal(c.get(), numpy.arange(6.0) + 1)
    numpy.testing.assert_array_equal(
        b.get(), numpy.sin(numpy.arange(6.0)) * 3.25 - numpy.arange(6.0)
    )


def test_a_compile_that_takes_too_long_is_stopped(monkeypatch, tmp_path):
    from numloom.compile import compiler
    from numloom.core import config

    slow = tmp_path / "slowcc"
    slow.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo slowcc 1.0; exit 0; fi\n'
                    'case "$*" in *probe.c*) exec cc "$@";; esac\nsleep 30\n')  # fmt: skip
    slow.chmod(0o755)
    monkeypatch.setenv("NUMLOOM_CC", str(slow))
    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(config, "COMPILE_TIMEOUT", 1)
    with pytest.raises(compiler.CompileError, match="did not finish within 1 s"):
        compiler.compile_c("void nl_slow_probe(void) {}\n")


def _broadcast_write():
    x, _ = nl.broadcast_arrays(nl.arange(3.0), nl.zeros((2, 1)))
    x[0, 0] = 1.0


def _uncompilable_vectorize():
    from numloom.core import config

    debug, config.DEBUG = config.DEBUG, 1  # (the CPU says why only when asked: no round trip)
    try:
        f = nl.vectorize(lambda v: {"a": v}["a"] + 1)  # (a dict: not compiled)
        return f(nl.arange(3.0))
    finally:
        config.DEBUG = debug


WARNINGS = {
    "var with ddof >= count": lambda: nl.var(nl.arange(2.0), ddof=2),
    "where without out": lambda: nl.add(nl.arange(3.0), 1, where=nl.arange(3) > 0),
    "write to a broadcast_arrays result": _broadcast_write,
    "vectorize that runs NumPy's loop": _uncompilable_vectorize,
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warnings_point_at_the_users_line(name):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        WARNINGS[name]()
    assert caught, "no warning"
    assert {w.filename for w in caught} == {__file__}, [(w.filename, w.lineno) for w in caught]


def test_device_memory_of_deleted_arrays_is_released():
    """On a GPU: no cached plan or CUDA graph keeps a deleted array's device memory in use."""
    if nl.get_device() == "cpu":
        pytest.skip("a GPU's memory")
    from numloom.backends import cuda_memory

    def step(i):
        a = nl.asarray(numpy.ones(2_000_000 + i))
        total = float((a * 2).sum())
        del a
        return total

    for i in range(3):
        step(i)
    gc.collect()
    nl.sync()
    before = cuda_memory._memory["in_use"]
    for i in range(3, 23):
        assert step(i) == 2.0 * (2_000_000 + i)
    gc.collect()
    nl.sync()
    assert cuda_memory._memory["in_use"] - before < 2 * 16 * 2**20


def test_a_jit_trace_holds_none_of_its_first_calls_arguments():
    f = nl.jit(lambda a, b: a * 2 + b)
    a = nl.asarray(numpy.arange(1000.0))
    held = weakref.ref(a._storage.version.arg)
    numpy.testing.assert_array_equal(f(a, 1.5).get(), numpy.arange(1000.0) * 2 + 1.5)
    del a
    gc.collect()
    assert held() is None, "the trace keeps the first call's input alive"
    before = nl.stats()["kernels_compiled"]
    got = f(nl.asarray(numpy.ones(1000)), 1.5)  # replayed, on new data
    numpy.testing.assert_array_equal(got.get(), numpy.full(1000, 3.5))
    assert nl.stats()["kernels_compiled"] == before
    assert len(f.traces) == 1

"""A new small plan on the CPU runs through NumPy, node by node, before it compiles.

A Python loop whose plans change each step (a sum over a growing list of pending arrays, a
boosting loop's predictions) would compile a kernel per step, each costing more than NumPy
takes for the whole step. Such a plan runs through NumPy until its runs have taken
``NUMLOOM_COMPILE_AFTER_MS`` for each kernel it would compile; a plan run often enough
compiles then, and a large plan, a kernel the compile cache holds (for a plan of few kernels)
and ``numloom.jit`` compile or load at once.
"""

from __future__ import annotations

import numpy
import pytest

import numloom as nl
from numloom.backends import cpu
from numloom.compile import compiler
from numloom.core import config


def _stats():
    s = nl.stats()
    return s["kernels_compiled"], s["kernels_through_numpy"]


def _predict(xp, parts: list):
    """A boosting loop's predictions: a sum over the models so far (one more each step)."""
    total = xp.zeros(parts[0].shape)
    for p in parts:
        total += 0.1 * xp.asarray(p)
    return xp.sign(total - 0.3)


def test_plans_that_change_each_step_compile_nothing(tiering):
    rng = numpy.random.default_rng(0)
    parts = [rng.random(150) for _ in range(12)]
    compiled, interpreted = _stats()
    for k in range(1, len(parts) + 1):
        got = _predict(nl, parts[:k])
        numpy.testing.assert_array_equal(got.get(), _predict(numpy, parts[:k]))
    after = _stats()
    assert after[0] == compiled  # (12 distinct plans: none worth compiling)
    assert after[1] >= interpreted + 12


def test_a_plan_run_often_compiles_once_then_runs_compiled(tiering, monkeypatch):
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 1)
    x = nl.asarray(numpy.linspace(0.0, 1.0, 300))
    want = numpy.sqrt(numpy.linspace(0.0, 1.0, 300) * 3.5 + 1.25)
    compiled, _ = _stats()
    for _ in range(2000):
        numpy.testing.assert_allclose((nl.sqrt(x * 3.5 + 1.25)).get(), want, rtol=1e-15)
        if _stats()[0] > compiled:
            break
    assert _stats()[0] == compiled + 1  # (compiled once its runs took a millisecond)
    before = _stats()
    for _ in range(5):
        numpy.testing.assert_allclose((nl.sqrt(x * 3.5 + 1.25)).get(), want, rtol=1e-15)
    assert _stats() == before  # (compiled: nothing compiles, nothing runs through NumPy)


def test_a_large_plan_compiles_at_once(tiering, monkeypatch):
    monkeypatch.setattr(cpu, "INTERPRET_ELEMENTS", 1 << 16)  # (the elements a kernel may make)
    x = nl.asarray(numpy.arange(200_000.0))
    compiled, interpreted = _stats()
    got = (x * 0.5 + 2.0).get()
    numpy.testing.assert_array_equal(got, numpy.arange(200_000.0) * 0.5 + 2.0)
    assert _stats() == (compiled + 1, interpreted)


def test_a_kernel_in_the_compile_cache_loads_at_once(tiering, monkeypatch):
    x = nl.asarray(numpy.arange(40.0))
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 0)
    (nl.cos(x) - 0.25).get()  # (compiled and cached)
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 20)
    compiler._loaded.clear()  # (as a new process finds it: in the cache alone)
    monkeypatch.setattr(cpu.TARGET.plans, "entries", {})  # (and its plan)
    monkeypatch.setattr(nl.compile.pipeline, "_ANY_SIZE", {})  # (also for other sizes)
    compiled, interpreted = _stats()
    hits = nl.stats()["compile_cache_hits"]
    numpy.testing.assert_array_equal((nl.cos(x) - 0.25).get(), numpy.cos(numpy.arange(40.0)) - 0.25)
    assert _stats() == (compiled, interpreted) and nl.stats()["compile_cache_hits"] == hits + 1


def test_a_plan_of_many_kernels_is_not_lowered_until_it_compiles(tiering, monkeypatch):
    lowered = []
    original = nl.compile.pipeline.lower
    monkeypatch.setattr(nl.compile.pipeline, "lower", lambda k: lowered.append(k) or original(k))
    monkeypatch.setattr(nl.compile.pipeline, "LOOKED_UP", 1)
    x = nl.asarray(numpy.arange(40.0))
    a, b = nl.cumsum(x) * 2, nl.cumsum(x[::-1]) + 1  # (two kernels)
    nl.evaluate(a, b)
    numpy.testing.assert_array_equal(a.get(), numpy.cumsum(numpy.arange(40.0)) * 2)
    assert lowered == []


def test_a_plan_of_many_alike_kernels_waits_for_its_distinct_sources(tiering, monkeypatch):
    """A plan of many kernels alike in structure (a chunked program's chunks, Dask's tasks)
    compiles each source once: it runs through NumPy until its runs have taken
    ``COMPILE_AFTER_MS`` for each distinct source, not for each kernel (a chunked Jacobi's
    406 kernels waited 8 s of runs, so its computes never compiled)."""
    monkeypatch.setattr(nl.compile.pipeline, "LOOKED_UP", 4)
    monkeypatch.setattr(cpu.TARGET.plans, "entries", {})
    chunks = [nl.asarray(numpy.arange(40.0) + k) for k in range(30)]
    ends = [nl.asarray(numpy.arange(7.0) + k) for k in range(30)]
    outs = [nl.cumsum(c) * 2 for c in chunks] + [nl.cumsum(e) - 1 for e in ends]
    nl.evaluate(*outs)
    for k in (0, 29):
        numpy.testing.assert_array_equal(outs[k].get(), numpy.cumsum(numpy.arange(40.0) + k) * 2)
        numpy.testing.assert_array_equal(outs[30 + k].get(),
                                         numpy.cumsum(numpy.arange(7.0) + k) - 1)  # fmt: skip
    (program,) = cpu.TARGET.plans.entries.values()
    assert len(program.steps) == 120  # (a scan and a map a chunk)
    assert program.waiting == 4  # (the scan and the map of each of two sizes)


def test_jit_compiles_at_once(tiering):
    @nl.jit
    def step(a):
        return nl.tanh(a) * 1.75 - a

    x = nl.asarray(numpy.arange(30.0) / 30)
    compiled, interpreted = _stats()
    numpy.testing.assert_allclose(step(x).get(), numpy.tanh(numpy.arange(30.0) / 30) * 1.75
                                  - numpy.arange(30.0) / 30, rtol=1e-14)  # fmt: skip
    assert _stats()[0] == compiled + 1 and _stats()[1] == interpreted


def test_interpreted_plans_warn_and_raise_as_numpy(tiering):
    x = nl.asarray(numpy.array([1.0, 0.0, -1.0]))
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):
        (1.0 / x * 2.0).get()
    with pytest.raises(IndexError, match="out of bounds"):
        nl.asarray(numpy.arange(5.0))[nl.asarray(numpy.array([0, 7]))].get()

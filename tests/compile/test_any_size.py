"""A new size of a structure planned before reuses its plan on the CPU.

A loop over growing or moving slices (a split search's ``x[:i]``, a window's ``x[i:i + k]``)
builds the same operations at new sizes or offsets each step. Plans are keyed by sizes, so each
step was a new plan: scheduled, lowered and rendered again (about 0.3 ms, against NumPy's few
microseconds). Now a structure planned once at any size serves its other sizes, its kernels run
through NumPy from the DAG's own nodes (which carry the sizes); a size that repeats compiles
(or loads its kernels, compiled once for every size) as a new plan does.
"""

from __future__ import annotations

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom as nl
from numloom.backends import cpu
from numloom.core import config


def _count(name: str) -> int:
    return nl.stats()[name]


def _split_score(xp, x, i):
    a = x[:i]
    return (a * 2.0 + 1.0).sum(axis=0)


def test_growing_slices_plan_once(tiering):
    data = numpy.random.default_rng(0).standard_normal((200, 4))
    x = nl.asarray(data) + 0.0
    x.get()
    reused, compiled = _count("plans_reused"), _count("kernels_compiled")
    for i in range(20, 60):
        numpy.testing.assert_array_equal(_split_score(nl, x, i).get(),
                                         _split_score(numpy, data, i))  # fmt: skip
    assert _count("plans_reused") - reused == 39  # (planned at 20; 21..59 take that plan)
    assert _count("kernels_compiled") == compiled


def test_a_compiled_structure_serves_new_sizes_then_each_size_compiles_when_it_repeats(
        tiering, monkeypatch):  # fmt: skip
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 1)
    data = numpy.linspace(0.0, 1.0, 400)
    x = nl.asarray(data) + 0.0
    x.get()
    compiled = _count("kernels_compiled")
    for _ in range(3000):  # size 300 runs until it compiles
        numpy.testing.assert_array_equal(nl.sqrt(x[:300] * 3.5 + 1.25).get(),
                                          numpy.sqrt(data[:300] * 3.5 + 1.25))  # fmt: skip
        if _count("kernels_compiled") > compiled:
            break
    assert _count("kernels_compiled") == compiled + 1
    reused, through = _count("plans_reused"), _count("kernels_through_numpy")
    got = nl.sqrt(x[:301] * 3.5 + 1.25).get()  # a new size: that plan, through NumPy
    numpy.testing.assert_array_equal(got, numpy.sqrt(data[:301] * 3.5 + 1.25))
    assert (_count("plans_reused"), _count("kernels_through_numpy")) == (reused + 1, through + 1)
    for _ in range(3000):  # the size repeats: planned for it, its kernel loaded (not compiled)
        numpy.testing.assert_array_equal(nl.sqrt(x[:301] * 3.5 + 1.25).get(),
                                          numpy.sqrt(data[:301] * 3.5 + 1.25))  # fmt: skip
        before = _count("kernels_through_numpy")
        nl.sqrt(x[:301] * 3.5 + 1.25).get()
        if _count("kernels_through_numpy") == before:
            break
    else:
        raise AssertionError("the repeated size never ran compiled")
    assert _count("kernels_compiled") == compiled + 1


def test_a_large_new_size_is_planned_and_compiled(tiering, monkeypatch):
    monkeypatch.setattr(cpu, "REUSE_ELEMENTS", 1000)
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 0)  # (the template compiles at once)
    data = numpy.arange(5000.0)
    x = nl.asarray(data) + 0.0
    x.get()
    (x[:100] * 2.0).get()
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 20)
    reused, through = _count("plans_reused"), _count("kernels_through_numpy")
    numpy.testing.assert_array_equal((x[:120] * 2.0).get(), data[:120] * 2.0)  # small: reused
    numpy.testing.assert_array_equal((x[:4000] * 2.0).get(), data[:4000] * 2.0)  # large: not
    assert _count("plans_reused") == reused + 1
    assert _count("kernels_through_numpy") == through + 1


def test_compiled_at_once_plans_each_size(monkeypatch):
    """``NUMLOOM_COMPILE_AFTER_MS=0`` (this suite's setting): every plan compiles at once."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's plans")
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 0)
    x = nl.asarray(numpy.arange(100.0)) + 0.0
    reused = _count("plans_reused")
    for i in range(10, 14):
        numpy.testing.assert_array_equal((x[:i] * 3.0).get(), numpy.arange(float(i)) * 3.0)
    assert _count("plans_reused") == reused


def _program(xp, a, b, i, j, k):
    """Slices at new offsets, lengths and steps, writes through views, broadcasts, reductions
    and gathers of one structure."""
    a = a.copy()
    w = a[i : i + k]
    w += b[j : j + k][::-1] * 2
    a[::3] = a[::3] - 1
    v = a[j : j + k].reshape(k, 1) * b[:3]
    pick = xp.asarray([0, k - 1, k // 2])
    return a, v.sum(axis=0), v.max(), w[pick], xp.cumsum(a[:k])


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 30)),
                      min_size=2, max_size=5),
       dtype=st.sampled_from(["float64", "float32", "int64", "int32"]))  # fmt: skip
def test_one_structure_at_many_sizes_matches_numpy(tiering_cpu, sizes, dtype):
    rng = numpy.random.default_rng(len(sizes))
    a = (rng.random(64) * 100).astype(dtype)
    b = (rng.random(64) * 100).astype(dtype)
    x, y = nl.asarray(a) + 0, nl.asarray(b) + 0
    for i, j, k in sizes:
        want = _program(numpy, a, b, i, j, k)
        got = _program(nl, x, y, i, j, k)
        for g, w in zip(got, want):
            g = g.get() if hasattr(g, "get") else g
            numpy.testing.assert_array_equal(g, w)
            assert numpy.asarray(g).dtype == w.dtype
        numpy.testing.assert_array_equal(x.get(), a)  # (the inputs keep their values)


@pytest.fixture(scope="module")
def tiering_cpu():
    """``tiering``'s settings for a hypothesis test (a function-scoped fixture is not reset
    between its examples): tiering on, the module's compile cache kept."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's plans")
    mp = pytest.MonkeyPatch()
    mp.setattr(config, "COMPILE_AFTER_MS", 20)
    yield
    mp.undo()


def test_reused_plans_over_writes_keep_every_write(tiering):
    """A sieve's loop: writes through slices at new offsets, each a new size of one plan."""
    n = 400
    want = numpy.ones(n, dtype=bool)
    got = nl.ones(n, dtype=bool)
    want[:2] = got[:2] = False
    reused = _count("plans_reused")
    for p in range(2, 20):
        want[p * p :: p] = False
        got[p * p :: p] = False
        numpy.testing.assert_array_equal((got[: p * 10] & True).get(), want[: p * 10])
    numpy.testing.assert_array_equal(got.get(), want)
    assert _count("plans_reused") > reused

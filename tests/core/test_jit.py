"""numloom.jit: one trace per input signature, replays that skip Python tracing."""

from __future__ import annotations

import os
import sys

import numpy
import pytest

import numloom as nl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import workloads as W  # noqa: E402

RNG = numpy.random.default_rng(3)


def test_replay_skips_tracing_and_matches_numpy():
    calls = []

    @nl.jit
    def bs(S, X, T):
        calls.append(1)
        return W.blackscholes(nl, S, X, T)

    for _ in range(4):
        host = W.blackscholes_inputs(500, RNG)
        before = nl.stats()["kernels_launched"]
        call, put = bs(*[nl.asarray(a) for a in host])
        assert nl.stats()["kernels_launched"] - before == 1
        want = W.blackscholes(numpy, *host)
        numpy.testing.assert_allclose(call.get(), want[0], rtol=1e-5, atol=1e-5)
        numpy.testing.assert_allclose(put.get(), want[1], rtol=1e-5, atol=1e-5)
    assert len(calls) == 1


def test_a_new_shape_or_dtype_traces_again():
    calls = []

    @nl.jit
    def f(x):
        calls.append(x.shape)
        return nl.exp(x) * 2

    for shape, dtype in [((4,), "f4"), ((4,), "f4"), ((5,), "f4"), ((5,), "f8"), ((5,), "f8")]:
        x = numpy.arange(numpy.prod(shape), dtype=dtype).reshape(shape)
        numpy.testing.assert_allclose(f(nl.asarray(x)).get(), numpy.exp(x) * 2, rtol=1e-6)
    assert len(calls) == 3
    assert len(f.traces) == 3


def test_writes_to_inputs_replay():
    step = nl.jit(lambda g: W.jacobi(nl, g, 1))
    host = RNG.random((16, 18))
    grid = nl.asarray(host)
    for _ in range(6):
        out = step(grid)
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host.copy(), 6), rtol=1e-12)
    assert out._storage is grid._storage


def test_a_function_that_syncs_is_called_every_time():
    calls = []

    @nl.jit
    def f(x):
        calls.append(1)
        return x * float(x.sum())

    x = nl.asarray(numpy.arange(3.0))
    for _ in range(3):
        numpy.testing.assert_array_equal(f(x).get(), numpy.arange(3.0) * 3.0)
    assert len(calls) == 3


def test_scalars_and_results_structure():
    @nl.jit
    def f(x, scale):
        return {"not": "an array"}, (x * scale, x.T)

    x = nl.asarray(numpy.arange(6.0).reshape(2, 3))
    for scale in (2.0, 2.0, 3.0):
        meta, (a, b) = f(x, scale)
        assert meta == {"not": "an array"}
        numpy.testing.assert_array_equal(a.get(), numpy.arange(6.0).reshape(2, 3) * scale)
        numpy.testing.assert_array_equal(b.get(), numpy.arange(6.0).reshape(2, 3).T)
    assert len(f.traces) == 2


@pytest.mark.parametrize("n", [3, 7])
def test_outputs_are_independent_arrays(n):
    f = nl.jit(lambda x: x + 1)
    x = nl.asarray(numpy.arange(float(n)))
    a = f(x)
    b = f(x)
    a[0] = 100
    assert b.get()[0] == 1.0


def test_a_retrace_says_what_changed(monkeypatch, capsys):
    from numloom.core import config

    monkeypatch.setattr(config, "DEBUG", 1)
    f = nl.jit(lambda a, s: a * s)
    f(nl.arange(4.0), 2)
    f(nl.arange(8.0), 2)
    f(nl.arange(8.0), 3)
    f(nl.arange(8, dtype="int32"), 3)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("numloom.jit")]
    assert lines[0].endswith("(first call)")
    assert lines[1].endswith("(argument 0: shape (4,) before, (8,) now)")
    assert lines[2].endswith("(argument 1: 2 before, 3 now)")
    assert lines[3].endswith("(argument 0: dtype float64 before, int32 now)")


def test_a_jitted_mask_index_follows_each_calls_mask():
    """``x[mask]`` reads the mask's values (the result's length is data): every call runs
    the function, so each call's mask selects."""

    @nl.jit
    def pick(x, mask):
        return x[mask] * 2

    x = nl.arange(10.0)
    for cut in (3, 5, 8, 3):
        numpy.testing.assert_array_equal(pick(x, x > cut).get(), numpy.arange(10.0)[
            numpy.arange(10.0) > cut] * 2)  # fmt: skip


@pytest.mark.parametrize("take", [False, True])
def test_a_jitted_index_out_of_bounds_raises_numpys_index_error_on_every_call(take):
    @nl.jit
    def pick(x, idx):
        return (nl.take(x, idx) if take else x[idx]) * 2

    x = nl.arange(10.0)
    numpy.testing.assert_array_equal(pick(x, nl.asarray([1, 2, -1])).get(), [2.0, 4.0, 18.0])
    numpy.testing.assert_array_equal(pick(x, nl.asarray([1, 2, 3])).get(), [2.0, 4.0, 6.0])
    for bad in ([1, 2, 30], [-11, 0, 0]):
        with pytest.raises(IndexError, match="is out of bounds for axis 0 with size 10"):
            pick(x, nl.asarray(bad))

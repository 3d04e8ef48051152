"""Data-dependent loops on the CPU: arrays a mask's compaction makes, and ufunc results on them,
run their small ufunc calls through NumPy at once (api/eager.py) with NumPy's values, warnings
and errors, and no sync or kernel per step."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import warnings

import numpy
import pytest
from conftest import assert_same

import numloom as nl
from numloom.api import eager

_spec = importlib.util.spec_from_file_location(
    "compaction", pathlib.Path(__file__).parents[2] / "benchmarks" / "compaction.py"
)
compaction = importlib.util.module_from_spec(_spec)  # (the benchmark's loops)
_spec.loader.exec_module(compaction)


@pytest.fixture(autouse=True)
def _on_the_cpu():
    """Eager calls are the CPU's (a GPU's compactions stay on the device): these tests run
    there whatever the default device."""
    device = nl.get_device()
    nl.set_device("cpu")
    yield
    nl.set_device(device)


def _compacted(values, dtype=None):
    """``values`` as the compaction of a numloom array (marked eager), and as NumPy's."""
    host = numpy.asarray(values, dtype=dtype)
    whole = nl.asarray(host)
    picked = whole[nl.asarray(numpy.ones(host.shape, bool))]
    assert picked._storage.eager
    return picked, host.reshape(-1).copy()


def _kernels():
    nl.sync()
    return nl.stats()["kernels_launched"]


def test_a_compaction_loop_launches_no_kernel_after_its_first_step():
    escape = compaction.escape_counts
    want = escape(numpy, 64, 30)
    escape(nl, 64, 3)  # (compiled once)
    before = _kernels()
    got = escape(nl, 64, 30)
    assert_same(numpy.asarray(got), want)
    assert _kernels() - before <= 6  # the first step's, not one set per step


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "complex64",
                                   "complex128", "bool"])  # fmt: skip
def test_eager_ufuncs_give_numpys_values_and_dtypes(dtype):
    rng = numpy.random.default_rng(5)
    values = rng.integers(-50, 50, 40) if dtype != "bool" else rng.integers(0, 2, 40)
    a, ha = _compacted(values, dtype)
    b, hb = _compacted(values[::-1], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [
            (lambda x, y: x + y), (lambda x, y: x * 3), (lambda x, y: -x if x.dtype != bool else ~x),
            (lambda x, y: x < y), (lambda x, y: abs(x)), (lambda x, y: x / 7),
            (lambda x, y: 2.5 * x), (lambda x, y: numpy.float32(2) * x),
        ]  # fmt: skip
        for case in cases:
            got, want = case(a, b), case(ha, hb)
            assert got._storage.eager
            assert_same(numpy.asarray(got), want)


def test_an_eager_call_writes_into_out_and_the_arrays_that_share_it():
    a, ha = _compacted(numpy.arange(10.0))
    view, exported = a[2:5], numpy.asarray(a)
    copy = a.copy()
    nl.multiply(a, a, a)
    a += 1
    numpy.multiply(ha, ha, ha)
    ha += 1
    assert_same(numpy.asarray(a), ha)
    assert_same(numpy.asarray(view), ha[2:5])
    assert_same(exported, ha)  # (NumPy's view of a's memory sees the write)
    assert_same(numpy.asarray(copy), numpy.arange(10.0))  # (a copy does not)


def test_an_eager_call_warns_at_the_users_line_as_numpy_does():
    a, ha = _compacted([1.0, 0.0, -1.0])
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide") as caught:
        got = 1.0 / a
    assert caught[0].filename == __file__
    with numpy.errstate(divide="ignore"):
        want = 1.0 / ha
    assert_same(numpy.asarray(got), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with nl.errstate(divide="ignore", invalid="ignore"):
            nl.log(a)  # nothing said
    with nl.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="invalid value"):
        nl.sqrt(a)


def test_an_eager_calls_errors_are_numpys_and_change_nothing():
    a, ha = _compacted(numpy.arange(4, dtype=numpy.int32))
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError):
        nl.add(a, 1.5, out=a)
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        a + nl.asarray(numpy.ones(3, numpy.int32))
    assert_same(numpy.asarray(a), ha)


def test_large_and_pending_operands_are_traced():
    big, _ = _compacted(numpy.arange(eager.EAGER_ELEMENTS + 1.0))
    assert not (big * 2)._storage.eager
    a, ha = _compacted(numpy.arange(5.0))
    pending = nl.arange(5.0) * 3
    made = a + pending
    assert not made._storage.eager and made._storage.pending
    assert_same(numpy.asarray(made), ha + numpy.arange(5.0) * 3)


def test_jit_traces_eager_arrays():
    a, ha = _compacted(numpy.arange(6.0))

    @nl.jit
    def f(x):
        return x * 2 + 1

    assert_same(numpy.asarray(f(a)), ha * 2 + 1)
    assert_same(numpy.asarray(f(a)), ha * 2 + 1)


def test_in_place_calls_spare_pending_readers_and_reach_views():
    a, ha = _compacted(numpy.arange(8.0))
    view = a[::2]
    for _ in range(3):  # (the first call makes the writable view; the next ones reuse it)
        nl.multiply(a, 2.0, a)
        nl.add(a, 1.0, a)
        ha = ha * 2.0 + 1.0
    total = nl.cumsum(a + nl.zeros(8) * 0.0)  # pending (traced): it reads a's current values
    assert total._storage.pending
    nl.add(a, 100.0, a)
    assert_same(numpy.asarray(total), numpy.cumsum(ha))
    assert_same(numpy.asarray(a), ha + 100.0)
    assert_same(numpy.asarray(view), (ha + 100.0)[::2])


def test_a_ufunc_of_two_outputs_on_a_loops_arrays_gives_two_arrays():
    """``divmod`` (and ``np.modf``, ``np.frexp``) on the small arrays a mask's compaction makes,
    run at once through NumPy: a tuple of two arrays, as NumPy's (they were stacked into one)."""
    for xp in (numpy, nl):
        x = xp.asarray(numpy.arange(-6, 6, dtype=numpy.int8))
        y = x[x != 0]
        both = divmod(y, 4)
        assert type(both) is tuple
        q, r = both
        m, e = xp.frexp(y.astype(xp.float32))
        got = [v.tolist() for v in (q, r, m, e)]
        if xp is numpy:
            want = got
    assert got == want and type(q) is nl.ndarray


# --- small arrays of loops that read values, build arrays from lists or run long -------------


def _phugoid(xp, steps, dt=0.02):
    """numerical-mooc's phugoid, Euler's method as published: an array of two values built from
    a list each step, and an element stored each step."""
    z0, b0, zt, g = 100.0, 10.0, 100.0, 9.81
    u = xp.array([z0, b0])
    z = xp.zeros(steps)
    z[0] = z0
    for n in range(1, steps):
        rhs = xp.array([u[1], g * (1 - u[0] / zt)])
        u = u + dt * rhs
        z[n] = u[0]
    return z


def test_a_loop_over_a_list_built_array_evaluates_nothing_per_step():
    """Small arrays made from a list of scalars are marked: the step's ufunc calls run at once
    through NumPy (NumPy's values, bit for bit), and the loop evaluates no plan."""
    _phugoid(nl, 5)
    before = nl.stats()["plans_evaluated"]
    got = _phugoid(nl, 300)
    assert_same(numpy.asarray(got), _phugoid(numpy, 300))
    assert nl.stats()["plans_evaluated"] - before <= 2  # (the zeros' first write, the end)
    assert nl.array([1.0, 2.0])._storage.eager and not nl.array(numpy.ones(4))._storage.eager


def _pressure(xp, steps, p, b, dx=0.05):
    """CFD Python's pressure Poisson iterations as published: a copy, a stencil written into
    a view, and the four edges written from their neighbours, each step."""
    for _ in range(steps):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dx**2 +
                          (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) / (4 * dx**2) -
                         dx**4 / (4 * dx**2) * b[1:-1, 1:-1])  # fmt: skip
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0
    return p


def test_a_long_loop_over_small_arrays_runs_at_once_after_its_first_flush(monkeypatch):
    """A loop over small arrays that never reads a value grows a graph until it flushes: the
    small arrays that flush computes are marked, and the loop's next steps (copies, ufunc calls
    on views, writes into the marked arrays) run at once through NumPy."""
    from numloom.core import config

    monkeypatch.setattr(config, "FLUSH_DEPTH", 40)
    host_b = numpy.random.default_rng(0).random((12, 12))
    want = _pressure(numpy, 60, numpy.zeros((12, 12)), host_b)
    p = nl.zeros((12, 12))
    b = nl.zeros((12, 12))
    b[...] = nl.asarray(host_b) * 1.0  # (a source term the loop's program computes)
    _pressure(nl, 20, p, b)
    assert p._storage.eager and not p._storage.pending and b._storage.eager
    before = nl.stats()["plans_evaluated"]
    got = _pressure(nl, 40, p, b)
    assert nl.stats()["plans_evaluated"] - before <= 2
    assert_same(numpy.asarray(got), want)


def test_a_write_into_a_marked_array_computes_the_pending_value_first():
    p = nl.array([0.0, 1.0, 2.0, 3.0])
    q = nl.arange(4.0) * 3  # (pending)
    p[1:3] = q[1:3] + 1
    assert not p._storage.pending and p.tolist() == [0.0, 4.0, 7.0, 3.0]
    copy = p.copy()
    assert copy._storage.eager
    copy[0] = 9.0
    assert p.tolist() == [0.0, 4.0, 7.0, 3.0]  # (the copy's write is its own)


def test_reductions_of_a_loops_arrays_run_at_once():
    """sum, prod, max, min, any and all of a marked array (CFD Python's channel flow tests
    ``(numpy.sum(u) - numpy.sum(un)) / numpy.sum(u)`` each step) run at once through NumPy:
    NumPy's values, no plan, results that print and compare as NumPy's scalars."""
    rows = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    a, ha = nl.array(rows), numpy.array(rows)  # (built from a list: marked)
    assert a._storage.eager
    before = nl.stats()["plans_evaluated"]
    got = [a.sum(), nl.sum(a, axis=0), a.max(axis=1, keepdims=True), nl.min(a), a.prod(),
           nl.any(a > 7), nl.all(a > 0)]  # fmt: skip
    want = [ha.sum(), numpy.sum(ha, axis=0), ha.max(axis=1, keepdims=True), numpy.min(ha),
            ha.prod(), numpy.any(ha > 7), numpy.all(ha > 0)]  # fmt: skip
    values = [numpy.asarray(g) for g in got]
    assert nl.stats()["plans_evaluated"] == before
    for g, v, w in zip(got, values, want):
        assert_same(v, numpy.asarray(w))
        assert str(g) == str(w) and repr(g) == repr(w)
    assert float((a.sum() - a.sum()) / a.sum()) == 0.0


def _relax(xp, u, tol=1e-7):
    """A loop that tests a value each step (CFD Python's channel flow, numerical-mooc's
    relaxations): a copy, a stencil written into a view, a scratch array like ``u``, and the
    relative change of the sum as its exit test."""
    steps, diff = 0, 1.0
    while diff > tol and steps < 500:
        un = u.copy()
        scratch = xp.zeros_like(u)
        scratch[1:-1] = un[:-2] + un[2:]
        u[1:-1] = 0.5 * scratch[1:-1]
        u[-1] = u[-2]
        diff = abs((xp.sum(u) - xp.sum(un)) / xp.sum(u))
        steps += 1
    return u, steps


def test_a_loop_that_tests_a_value_each_step_runs_at_once_after_its_first_test():
    """Reading a small array's value (the loop's exit test) marks the small arrays that read's
    evaluation computes; the steps after run at once through NumPy, NumPy's values exactly."""
    start = numpy.random.default_rng(1).random(50) + 1.0
    want, want_steps = _relax(numpy, start.copy())
    u = nl.zeros(50)
    u[...] = nl.asarray(start) * 1.0
    got, steps = _relax(nl, u)
    assert steps == want_steps and steps > 10
    assert_same(numpy.asarray(got), want)
    assert u._storage.eager and nl.zeros_like(u)._storage.eager
    assert not nl.zeros_like(nl.arange(3.0) * 2)._storage.eager  # (a traced array's stays lazy)
    before = nl.stats()["plans_evaluated"]
    _relax(nl, u, tol=0.0)  # (500 steps)
    assert nl.stats()["plans_evaluated"] == before


def test_ufuncs_of_a_loops_scalars_give_numpys_scalars():
    """numerical-mooc's relative L2 error of marked arrays, ``sqrt(sum((T - E)**2) / sum(E**2))``,
    prints as NumPy's float64 (a 0-d array printed ``array(0.24253563)``)."""
    results = []
    for xp in (numpy, nl):
        t, e = xp.array([1.0, 2.0, 4.0]), xp.array([1.5, 2.5, 3.0])
        error = xp.sqrt(xp.sum((t - e) ** 2) / xp.sum(e**2))
        results.append((repr(error), repr([error, t.max() * 2, -xp.min(e)]), str(error + 1)))
    assert results[1] == results[0]


def test_a_loops_scalars_are_numpys_scalars():
    """What a marked array's reductions and ufuncs of its scalars give is NumPy's scalar, type
    and all: a library handed one sees a float (pandas' aggregation with a function returning
    ``np.mean(x)`` makes a float64 column of them, an object column of 0-d arrays)."""
    for xp in (numpy, nl):
        t = xp.array([1.0, 2.0, 4.0])
        n = xp.array([3, 1, 2])
        got = [t.sum(), xp.mean(t), t.max(), xp.sqrt(t.sum()), t.sum() / 2, n.sum(), n.argmax(),
               xp.any(t > 3), t[0] * 2, xp.mean(n), xp.std(n), n.sum(dtype=xp.float32)]  # fmt: skip
        types = [type(g) for g in got]
        if xp is numpy:
            want = types
    assert types == want
    assert types[:4] == [numpy.float64] * 4 and types[5] is numpy.int64 and types[7] is numpy.bool


def test_ufuncs_of_small_numpy_arrays_run_at_once():
    """A small NumPy array is data a library gave (the state SciPy's solver hands the
    right-hand side it calls): numloom's ufuncs of it, with scalars or marked arrays, run at
    once through NumPy, NumPy's values, no plan; a large one or a pending operand is traced."""
    y = numpy.array([0.5, -1.25, 2.0])
    before = nl.stats()["plans_evaluated"]
    got = [nl.sin(y), nl.exp(-nl.asarray([1.0, 2.0, 3.0])) * y, nl.add(y, 1), nl.maximum(y, 0.0)]
    want = [numpy.sin(y), numpy.exp(-numpy.array([1.0, 2.0, 3.0])) * y, y + 1, numpy.maximum(y, 0.0)]
    assert all(g._storage.eager for g in got)
    for g, w in zip(got, want):
        assert_same(g.get(), w)
    assert nl.stats()["plans_evaluated"] == before
    assert not nl.sin(numpy.arange(5000.0))._storage.eager
    assert not nl.add(y, nl.asarray(numpy.ones(3)) * 2)._storage.eager  # (a pending operand)


def test_reductions_of_small_numpy_arrays_run_at_once():
    """A SciPy objective (``np.sum(x**2)`` over the state SciPy's minimizer hands it, the
    scientific-python-lectures' optimization chapter): numloom's sum, prod, max, min, any and
    all of a small NumPy array run at once through NumPy, NumPy's scalars, no plan, so the
    objective costs what it costs with NumPy; a large one is traced."""
    x = numpy.linspace(-1.0, 1.0, 100)
    before = nl.stats()["plans_evaluated"]
    got = [nl.sum(x**2), nl.sum(x, axis=0), nl.max(x), nl.min(x), nl.prod(x[:5]),
           nl.any(x > 0.5), nl.all(x > -2), nl.sum(x, dtype=numpy.float32), nl.argmax(x),
           nl.argmin(x)]  # fmt: skip
    want = [numpy.sum(x**2), numpy.sum(x, axis=0), numpy.max(x), numpy.min(x),
            numpy.prod(x[:5]), numpy.any(x > 0.5), numpy.all(x > -2),
            numpy.sum(x, dtype=numpy.float32), numpy.argmax(x), numpy.argmin(x)]  # fmt: skip
    assert nl.stats()["plans_evaluated"] == before
    for g, w in zip(got, want):
        assert type(g) is type(w) and repr(g) == repr(w)
    assert repr(nl.sum(x**2) ** 2 + nl.sum(x)) == repr(numpy.sum(x**2) ** 2 + numpy.sum(x))
    assert nl.stats()["plans_evaluated"] == before
    assert not nl.sum(numpy.arange(100_000.0), keepdims=True)._storage.eager


def test_the_mean_of_an_empty_slice_warns_as_numpy_once_at_the_users_line():
    """NumPy checks numloom's call on an empty stand-in, quietly: the mean of a loop's empty
    array gives NumPy's two warnings, each once, at the user's line."""
    def run(xp):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = xp.mean(xp.array([1.0, 2.0])[0:0])
        return repr(value), [(str(w.message), w.filename) for w in caught]

    got, want = run(nl), run(numpy)
    assert got[0] == want[0] == "np.float64(nan)"
    assert [m for m, _ in got[1]] == [m for m, _ in want[1]] == [
        "Mean of empty slice", "invalid value encountered in scalar divide"]
    assert {f for _, f in got[1]} == {__file__}


def test_a_loops_gathers_and_numpys_results_run_at_once():
    """QuantEcon's Schelling model: a draw (NumPy's result, small: marked), a distance, a sort
    and ``types[idx]`` each step run at once through NumPy, no plan; values are NumPy's."""
    def step(xp, locations, types, i):
        d = xp.linalg.norm(locations[i, :] - locations, axis=1)
        idx = xp.argsort(d)[1:11]
        return xp.sum(types[idx] == types[i]), types[[0, 2]], locations[idx, 0]

    rng = numpy.random.default_rng(3)
    locations, types = rng.uniform(size=(50, 2)), rng.integers(0, 2, 50)
    got_l, got_t = nl.asarray(locations), nl.asarray(types)
    got_l, got_t = got_l * 1, got_t + 0  # (traced: computed by the first step's read below)
    int(got_t[0])
    assert nl.random.default_rng(0).uniform(size=(5, 2))._storage.eager
    before = nl.stats()["plans_evaluated"]
    for i in range(5):
        got, want = step(nl, got_l, got_t, i), step(numpy, locations, types, i)
        for g, w in zip(got, want):
            assert_same(numpy.asarray(g), numpy.asarray(w))
    assert nl.stats()["plans_evaluated"] == before


FUNCTION_CALLS = {
    "mean": lambda xp, v, m: xp.mean(v),
    "std(ddof=1)": lambda xp, v, m: xp.std(v, ddof=1),
    "mean(axis=0)": lambda xp, v, m: xp.mean(m, axis=0),
    "median": lambda xp, v, m: xp.median(v),
    "cumsum": lambda xp, v, m: xp.cumsum(v),
    "diff": lambda xp, v, m: xp.diff(v),
    "diag": lambda xp, v, m: xp.diag(v),
    "outer": lambda xp, v, m: xp.outer(v, v),
    "cross": lambda xp, v, m: xp.cross(v[:3], v[1:4]),
    "einsum": lambda xp, v, m: xp.einsum("i,i", v, v),
    "tensordot (a 0-d array)": lambda xp, v, m: xp.tensordot(v, v, 1),
    "concatenate": lambda xp, v, m: xp.concatenate([v, v * 2]),
    "vstack": lambda xp, v, m: xp.vstack([v, v]),
    "append": lambda xp, v, m: xp.append(v, 1.5),
    "sort": lambda xp, v, m: xp.sort(-v),
    "argsort": lambda xp, v, m: xp.argsort(-v),
    "unique": lambda xp, v, m: xp.unique(xp.round(v), return_counts=True),
    "where": lambda xp, v, m: xp.where(v > 2, v, 0.0),
    "clip": lambda xp, v, m: xp.clip(v, 1, 3),
    "round": lambda xp, v, m: xp.round(v / 3, 2),
    "histogram": lambda xp, v, m: xp.histogram(v, 3),
    "allclose": lambda xp, v, m: xp.allclose(v, v + 1e-12),
    "nanmean": lambda xp, v, m: xp.nanmean(v),
    "nanmax(axis=1)": lambda xp, v, m: xp.nanmax(m, axis=1),
    "norm": lambda xp, v, m: xp.linalg.norm(v),
    "solve": lambda xp, v, m: xp.linalg.solve(m[:3, :3] * m[:3, :3].T + 7.0 * (m[:3, :3] > 2),
                                              v[:3]),
    "inv": lambda xp, v, m: xp.linalg.inv(m[:3, :3] * m[:3, :3].T + 7.0 * (m[:3, :3] > 2)),
    "det": lambda xp, v, m: xp.linalg.det(m[:3, :3]),
    "eigh": lambda xp, v, m: xp.linalg.eigh(m[:3, :3] + m[:3, :3].T),
    "full_like F": lambda xp, v, m: xp.full_like(m, 2.5, order="F"),
    "full_like A of F": lambda xp, v, m: xp.full_like(m.T, 7, shape=(3, 5), order="A"),
    "copy F": lambda xp, v, m: xp.copy(m * 2, order="F"),
    "full_like K of a permuted array": lambda xp, v, m: xp.full_like(
        xp.reshape(m, (2, 2, 4)).transpose(2, 0, 1), 1.5, order="K"),
}


@pytest.mark.parametrize("case", FUNCTION_CALLS)
def test_functions_of_small_marked_arrays_run_numpys_at_once(case):
    """A loop's small arrays (marked: ``v`` here is a compaction's) meet NumPy's functions at
    once, with NumPy's values and types (a scalar, a 0-d array, a named tuple), and nothing
    is traced: no kernel runs."""
    v, hv = _compacted(numpy.arange(6.0) * 1.5)
    m, hm = _compacted(numpy.arange(16.0).reshape(4, 4) ** 0.5)
    m = m.reshape(4, 4)
    hm = hm.reshape(4, 4)
    want = FUNCTION_CALLS[case](numpy, hv, hm)
    before = _kernels()
    got = FUNCTION_CALLS[case](nl, v, m)
    assert _kernels() == before
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):  # fmt: skip
        if isinstance(w, numpy.ndarray):
            assert type(g) is nl.ndarray and g._storage.eager
            assert_same(numpy.asarray(g), w)
            if w.ndim > 1 and not w.flags.c_contiguous:  # (NumPy's layout: Fortran order...)
                assert numpy.asarray(g).strides == w.strides
        else:
            assert type(g) is type(w) and g == w
    assert type(got) is type(want) or isinstance(want, numpy.ndarray)


def test_functions_of_unmarked_or_pending_arrays_are_traced_and_views_stay_views():
    a = nl.arange(6.0) * 2  # pending: traced
    assert nl.mean(a)._storage.pending if hasattr(nl.mean(a), "_storage") else False
    v, hv = _compacted(numpy.arange(6.0))
    t = nl.transpose(v.reshape(2, 3))  # a view of v: its memory
    v[0] = 100.0
    assert t[0, 0] == 100.0
    out = nl.zeros(6)
    nl.cumsum(v, out=out)  # (out=: the traced path, which writes out)
    assert out.tolist() == numpy.cumsum([100.0, 1, 2, 3, 4, 5]).tolist()


def test_a_nan_function_over_nans_warns_at_the_users_line():
    """A slice of NaNs alone is warned about by NumPy's nan-functions: such a call is traced,
    where the warning names the user's line (NumPy's run at once would name numloom's)."""
    v, _ = _compacted(numpy.array([numpy.nan, numpy.nan, 1.0]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nl.nanmean(v[:2])
    assert numpy.isnan(float(got))
    assert [w.filename for w in caught] == [__file__]


def test_reading_a_small_arrays_value_marks_it_however_it_was_made():
    """Python reading a small computed array's value marks it (the loop that reads values
    wants its next calls at once): arrays made at once by NumPy (a small ``zeros``), by a
    small plan run through NumPy and by a compiled plan alike."""
    for made in (nl.zeros(5), nl.arange(10.0), nl.arange(10.0) * 2 + 1, nl.ones((3, 3)) * 2):
        made.tolist()
        assert made._storage.eager
        assert type(nl.exp(made)) is nl.ndarray and nl.exp(made)._storage.eager


def test_another_librarys_small_data_runs_numpys_function_on_a_gpu_too(monkeypatch):
    """On a GPU, a group's ``np.average`` of pandas Series runs NumPy's function on the host:
    its value is NumPy's, bit for bit (the device's sum order gave another last bit), and a
    NumPy array or a numloom array among the arguments keeps the device's path."""
    pd = pytest.importorskip("pandas")
    monkeypatch.setattr(eager, "get_device", lambda: "cuda:0")
    d, w = pd.Series(numpy.arange(17.0) / 7), pd.Series(numpy.linspace(0.1, 1, 17))
    got = eager.functions_now(numpy.average, (d,), {"weights": w})
    want = numpy.average(d, weights=w)
    assert type(got) is type(want) and got == want
    assert type(eager.functions_now(numpy.sort, (d,), {})) is nl.ndarray
    assert eager.functions_now(numpy.average, (d,), {"weights": numpy.ones(17)}) is None
    assert eager.functions_now(numpy.average, (nl.ones(17),), {}) is None


def test_arithmetic_of_0d_arrays_runs_now_and_warns_at_once_as_numpys():
    """``np.array(1e300) * np.array(1e300)`` is NumPy's float64 inf, and its overflow
    warning is given as the line runs, though nothing reads the result (NumPy's own
    TestFloatExceptions); ``np.array(x)`` itself stays a 0-d array, indexing as an int."""
    for xp in (numpy, nl):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with xp.errstate(all="warn"):
                made = xp.array(1e300) * xp.array(1e300)
                assert len(w) == 1 and "overflow" in str(w[0].message)
                xp.array(numpy.inf) - xp.array(numpy.inf)
                assert len(w) == 2 and "invalid" in str(w[1].message)
        assert type(made) is numpy.float64 and made == numpy.inf
        zero_d = xp.array(1)
        assert type(zero_d) is xp.ndarray and repr(zero_d) == "array(1)"
        assert type(xp.arange(6).reshape(2, 3)[0, zero_d]) is numpy.int64


def test_computed_0d_results_compute_with_scalars_as_numpys_scalars_do():
    """A naive Bayes' likelihoods: Python scalar code on a column's mean and variance (0-d
    results, computed at a sync) runs now and gives NumPy's scalars, as NumPy's reductions'
    scalars would, with no evaluation per operation (an evaluation each made the loop 70x
    NumPy's time)."""
    import math

    if nl.get_device() != "cpu":
        pytest.skip("the CPU's eager calls")
    host = numpy.random.default_rng(5).random((50, 6))
    got, want = [], []
    for xp, out in ((nl, got), (numpy, want)):
        cols = xp.asarray(host).T
        params = [(c.mean(), c.var()) for c in cols]
        if xp is nl:
            nl.sync()
            before = nl.stats()["plans_evaluated"]
        for row in host[:5]:
            post = 1.0
            for x, (m, v) in zip(row, params):
                coeff = 1.0 / math.sqrt(2.0 * math.pi * v + 1e-4)
                post *= coeff * math.exp(-(math.pow(x - m, 2) / (2 * v + 1e-4)))
            out.append(post)
        if xp is nl:
            assert nl.stats()["plans_evaluated"] == before
            m, v = params[0]
            assert type(numpy.float64(1.0) - m) is numpy.float64 and type(2 * v) is numpy.float64
    assert got == want


def test_a_programs_scalar_arithmetic_on_a_pending_0d_result_runs_now():
    """A posterior made of a prior (a pending mean) times 64 likelihoods (Python floats): the
    program's first multiply evaluates the prior, and the rest is NumPy's scalar arithmetic,
    as NumPy's scalar would have it (traced, the chain was one plan of 64 nodes a class, run
    by NumPy node by node, and a new plan wherever two likelihoods were equal). numloom's own
    functions keep their 0-d results pending (``mean``'s sum over its count fuses)."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's eager calls")
    labels = numpy.random.default_rng(6).integers(0, 4, 500)
    likelihoods = numpy.random.default_rng(7).random(64).tolist()
    got, want = [], []
    for xp, out in ((nl, got), (numpy, want)):
        y = xp.asarray(labels)
        if xp is nl:
            nl.sync()
            before = nl.stats()["plans_evaluated"]
        for c in range(4):
            posterior = xp.mean(y == c)
            if xp is nl:
                assert posterior._storage.pending  # (numloom's mean: pending)
            for v in likelihoods:
                posterior *= v
            out.append(posterior)
        if xp is nl:
            assert nl.stats()["plans_evaluated"] - before == 4  # (each prior, once)
            assert all(type(p) is numpy.float64 for p in got)
    assert got == want


def test_a_loops_mean_runs_now_and_warns_as_numpys():
    """``np.mean`` of a loop's small array runs at once (NumPy's scalar, no plan); of an empty
    one, NumPy's warnings at the user's line (both come from the same calls)."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's eager calls")
    v, host = _compacted([1.0, 2.5, 4.0])
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    got = nl.mean(v)
    assert type(got) is numpy.float64 and got == numpy.mean(host)
    assert nl.stats()["plans_evaluated"] == before
    empty, _ = _compacted(numpy.zeros(0))
    for xp, x in ((nl, empty), (numpy, numpy.zeros(0))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert numpy.isnan(float(xp.mean(x)))
        assert [str(w.message) for w in caught] == ["Mean of empty slice",
                                                    "invalid value encountered in scalar divide"]
        if xp is nl:
            assert {w.filename for w in caught} == {__file__}


def test_a_loops_cast_runs_now_and_warns_as_numpys():
    """``row.astype(int)`` of a loop's small array runs at once (a random forest's vote over
    each row of its predictions made a plan per row, each at a new offset), with NumPy's
    values and its warning at the user's line."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's eager calls")
    v, host = _compacted([1.5, numpy.nan, 3.0])
    with numpy.errstate(invalid="ignore"):
        want = host.astype(numpy.int64).tolist()
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    for x in (v, host):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = x.astype(numpy.int64)
        assert [str(w.message) for w in caught] == ["invalid value encountered in cast"]
        assert [w.filename for w in caught] == [__file__]
        assert numpy.asarray(made).tolist() == want
    assert made.dtype == numpy.int64
    assert nl.stats()["plans_evaluated"] == before


def test_a_decision_trees_split_of_a_computed_array_runs_now():
    """A decision tree's split, ``np.array([s for s in Xy if s[i] >= t])``, of a computed
    array's rows is NumPy's array at once, marked: its labels' ``unique`` and the entropy's
    ``y[y == label]`` plan nothing (the rows were gathered lazily before, and each split's new
    count of rows was a new plan, scheduled and lowered again at the first read)."""
    host = numpy.random.default_rng(8).integers(0, 4, (14000, 5)).astype(float)  # (over
    # EAGER_ELEMENTS: Xy's own calls are traced; a split's rows are fewer)
    got, want = [], []
    for xp, out in ((nl, got), (numpy, want)):
        Xy = xp.asarray(host)
        if xp is nl:
            nl.sync()
            before = nl.stats()["plans_evaluated"]
        for threshold in (2.0, 3.0):
            Xy1 = xp.array([s for s in Xy if s[0] >= threshold])
            y1 = Xy1[:, 4:]
            counts = [len(y1[y1 == label]) for label in xp.unique(y1)]
            out.append((Xy1.shape, Xy1.dtype, counts, Xy1.sum()))
        if xp is nl:
            assert nl.stats()["plans_evaluated"] == before
            assert Xy1._storage.eager
            Xy1[0, 0] = -1.0  # (a new array: the rows' array keeps its values)
            assert Xy[int(numpy.argmax(host[:, 0] >= 3.0)), 0] == host[host[:, 0] >= 3.0][0, 0]
    assert got == want


@pytest.mark.parametrize("method", ["sum", "prod", "mean", "var", "std", "max", "min", "argmax",
                                    "argmin", "any", "all"])  # fmt: skip
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_a_loops_reduction_methods_run_now_as_numpys(method, axis):
    """``y.mean(0)``, ``x.sum()``, ``x.max(1)`` of a loop's small array run at once (a
    regression tree's variance, ``ones(shape(y)) * y.mean(0)`` at each split), with NumPy's
    values and result types (NumPy's scalar for a whole reduction), and plan nothing."""
    host = numpy.random.default_rng(9).random((7, 3)) - 0.25
    v = _compacted(host.ravel())[0].reshape(host.shape)
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    got = getattr(v, method)(axis)
    want = getattr(host, method)(axis)
    assert nl.stats()["plans_evaluated"] == before
    assert type(got) is type(want) if axis is None else (got.dtype, got.shape) == (want.dtype,
                                                                                    want.shape)
    numpy.testing.assert_array_equal(numpy.asarray(got), want)


@pytest.mark.parametrize("update", [
    lambda xp, w, g: w.__isub__(g),  # ``w -= g``
    lambda xp, w, g: xp.subtract(w, g, out=w),
    lambda xp, w, g: xp.subtract(w, g, out=(w,)),
    lambda xp, w, g: xp.multiply(w, 0.5, w),
    lambda xp, w, g: w.__imul__(numpy.float64(2.0)),
])  # fmt: skip
def test_a_loops_in_place_updates_run_now_as_numpys(update):
    """A gradient step's ``w -= lr * g`` (and ``np.subtract(w, g, out=w)``) on a loop's small
    array writes its memory at once through the compiled call: NumPy's values, the same
    array back, every view of it seeing the write, nothing planned."""
    start = numpy.linspace(-1.0, 1.0, 16)
    w, _ = _compacted(start)
    g, _ = _compacted(numpy.arange(16.0) / 8)
    head = w[:4]
    want = start.copy()
    want_back = update(numpy, want, numpy.arange(16.0) / 8)
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    back = update(nl, w, g)
    assert nl.stats()["plans_evaluated"] == before
    assert (back is w) if want_back is want else (back[0] is w)
    numpy.testing.assert_array_equal(w.get(), want)
    numpy.testing.assert_array_equal(head.get(), want[:4])


def test_a_loops_in_place_update_that_numpy_refuses_leaves_the_array():
    """``i -= 0.5`` of an integer loop array: NumPy's casting error at the call, the array as
    it was."""
    i, host = _compacted(numpy.arange(5))
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError) as caught:
        i -= 0.5
    with pytest.raises(type(caught.value), match=re.escape(str(caught.value))):
        host -= 0.5
    numpy.testing.assert_array_equal(i.get(), numpy.arange(5))


@pytest.mark.parametrize("update", [
    lambda a, i: a[i:i + 100].__iadd__(1),  # ``a[i:i+100] += 1`` (the view's part)
    lambda a, i: a[i:i + 700:7].__isub__(1),
    lambda a, i: a[i:i + 50].__imul__(a[i + 50:i + 100]),
])  # fmt: skip
def test_a_small_slice_of_a_large_array_is_updated_in_place_now(update):
    """A sieve's ``phi[i:j] -= phi[i:j] // p`` over a large computed array: the update of a
    small view runs now on the array's memory, as NumPy's does (traced, each update was a new
    version of the whole array, copied whole when a plan ran through NumPy: 0.7 ms an update
    of a 10^6-element array, NumPy 0.8 us), with NumPy's values and no plan."""
    host = numpy.arange(200_000, dtype=numpy.int64)
    a = nl.asarray(host)
    nl.evaluate(a)
    a.tolist()
    want = host.copy()
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    for i in range(3, 60, 7):
        update(a, i)
        update(want, i)
    assert not a._storage.pending  # (written, not recorded)
    assert nl.stats()["plans_evaluated"] == before
    numpy.testing.assert_array_equal(a.get(), want)
    assert not a._storage.eager  # (the large array is not a loop's small one)


def test_a_fancy_index_update_of_a_large_array_runs_now():
    """A sieve's ``phi[ind] -= phi[ind] // p`` over a large computed array: the gather of a
    few indices and the store back run now, as NumPy's do (the gather was lazy, and each store
    a new version of the whole array), with NumPy's values and its IndexError at the call."""
    host = numpy.arange(300_000, dtype=numpy.int64)
    phi = nl.asarray(host)
    nl.evaluate(phi)
    want = host.copy()
    for p in (2, 3, 5, 7):
        ind = numpy.arange(p, 3000, p)
        for xp, arr in ((nl, phi), (numpy, want)):
            arr[xp.asarray(ind)] -= arr[xp.asarray(ind)] // p
        assert not phi._storage.pending
    numpy.testing.assert_array_equal(phi.get(), want)
    with pytest.raises(IndexError, match="index 300000 is out of bounds"):
        phi[nl.asarray(numpy.array([1, 300_000]))]
    numpy.testing.assert_array_equal(phi.get(), want)


def test_a_programs_whole_reductions_of_new_slices_plan_nothing():
    """A split search's ``x[:i].sum()``, ``np.mean(x[i:])``, ``x[:i].argmax()`` for every ``i``
    over a computed array: NumPy's reductions now, NumPy's scalars (each new length or offset
    was a new plan, 0.3 ms each, where NumPy takes 1 us). Reductions along an axis, and
    numloom's own (``einsum``'s trace), keep the traced path."""
    host = numpy.random.default_rng(12).random(4000)
    x = nl.asarray(host)
    nl.evaluate(x)
    nl.sync()
    before = nl.stats()["plans_evaluated"]
    got = [(x[:i].sum(), nl.mean(x[i:]), x[:i].argmax(), nl.max(x[i:2 * i]))
           for i in range(10, 40)]  # fmt: skip
    assert nl.stats()["plans_evaluated"] == before
    want = [(host[:i].sum(), numpy.mean(host[i:]), host[:i].argmax(), numpy.max(host[i:2 * i]))
            for i in range(10, 40)]  # fmt: skip
    assert got == want and [type(v) for v in got[0]] == [type(v) for v in want[0]]
    square = nl.asarray(host[:3600].reshape(60, 60))
    nl.evaluate(square)
    assert isinstance(nl.einsum("ii", square), nl.ndarray)  # (numloom's own sum: traced)
    assert isinstance(square[:, 3:].sum(axis=1), nl.ndarray)
    assert square[:, 3:].sum(axis=1)._storage.pending


NEW_VALUE_CALLS = {
    "unique": lambda xp, a: xp.unique(a),
    "unique with indices": lambda xp, a: xp.unique(a, True),
    "sort": lambda xp, a: xp.sort(a),
    "sort along 0": lambda xp, a: xp.sort(a, 0),
    "argsort": lambda xp, a: xp.argsort(a),
    "cumsum": lambda xp, a: xp.cumsum(a),
    "cumprod along 0": lambda xp, a: xp.cumprod(a, 0),
    "argwhere": lambda xp, a: xp.argwhere(a),
    "flatnonzero": lambda xp, a: xp.flatnonzero(a),
    "outer": lambda xp, a: xp.outer(a, a),
    "copy": lambda xp, a: xp.copy(a),
}


@pytest.mark.parametrize("call", NEW_VALUE_CALLS.values(), ids=NEW_VALUE_CALLS.keys())
@pytest.mark.parametrize("values", [[3, 1, 2, 2, 0], [0.5, -1.0, 0.5, 2.0], [[4, 1], [0, 3]], [7]],
                         ids=["int", "float", "matrix", "one"])  # fmt: skip
def test_a_loops_new_value_functions_are_numpys_at_once(call, values):
    """NumPy's functions that make new arrays (``np.unique(y)`` in an entropy's loop) of a
    loop's small array run NumPy's call at once (in C): NumPy's values, dtypes and shapes,
    each result a marked numloom array, no plan."""
    a, host = nl.array(values), numpy.array(values)
    plans = nl.stats()["plans_evaluated"]
    got, want = call(nl, a), call(numpy, host)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is nl.ndarray and g._storage.eager
        assert_same(g.get(), w)
    assert nl.stats()["plans_evaluated"] == plans


def test_a_loops_bincount_raises_numpys_error_at_once():
    with pytest.raises(ValueError, match="must have no negative elements"):
        nl.bincount(nl.array([1, -1, 2]))
    numpy.testing.assert_array_equal(nl.bincount(nl.array([1, 3, 1])).get(), [0, 2, 0, 1])


def _automaton(xp, n=300, rule=110):
    """ThinkComplexity's Cell1D: each row from the last by a correlation and a table."""
    a = xp.zeros((n, n), dtype=xp.int8)
    a[0] = numpy.random.default_rng(19).random(n).round()
    table = xp.unpackbits(xp.array([rule], dtype=xp.uint8))[::-1]
    for i in range(1, n):
        c = xp.correlate(a[i - 1], [4, 2, 1], mode="same")
        a[i] = table[c]
    return a


def test_a_function_of_a_small_piece_of_a_large_computed_array_runs_now():
    """``np.correlate(a[i - 1], ...)`` of a row of a 300x300 grid that each step writes: NumPy's
    call on the row's memory now, its result a loop's small array, so the row written back is
    written at once and no graph grows (a 3000x3000 automaton: 1.16 s against NumPy's 0.04,
    flushed by depth every few hundred rows)."""
    want = _automaton(numpy)
    plans = nl.stats()["plans_evaluated"]
    got = _automaton(nl)
    numpy.testing.assert_array_equal(got.get(), want)
    assert nl.stats()["plans_evaluated"] - plans <= 1  # (the first rows, before a is computed)


def test_arithmetic_on_a_small_piece_of_a_large_computed_array_runs_now():
    """scientific-python-lectures' gradient descent: a cost function (Rosenbrock's) of each
    2-element column of a computed (2, 10000) grid, ``4 * x`` and the rest. Traced, each call
    was a plan and a sync (243 us a column, NumPy 9 us); an operator on a small piece (at most
    half, a loop's small array's size) of a large computed CPU array runs NumPy's call on its
    memory now, and its result is a loop's small array. Writes through the piece still reach
    the grid."""

    def costs(xp, grid):
        out = []
        for i in range(0, 300):
            x = grid[:, i]
            y = 4 * x
            y[0] += 1
            out.append(float(xp.sum(0.5 * (1 - y[:-1]) ** 2 + (y[1:] - y[:-1] ** 2) ** 2)))
        grid[:, 7] *= 2  # (a write through a piece: the grid's own memory)
        return out, grid

    host = numpy.mgrid[-1:2:100j, -1:1:100j].reshape(2, -1)
    want = costs(numpy, host.copy())
    grid = nl.asarray(host) * 1.0
    grid.get()
    plans = nl.stats()["plans_evaluated"]
    got = costs(nl, grid)
    assert got[0] == want[0]
    numpy.testing.assert_array_equal(got[1].get(), want[1])
    assert nl.stats()["plans_evaluated"] - plans <= 2


def test_a_gram_schmidt_loop_over_the_columns_of_a_computed_matrix_runs_now():
    """A textbook's QR decomposition (Gezerlis' ``qrdec``: Gram-Schmidt on the columns of a
    200x200 matrix, ``R[i, j] = Q[:, i] @ A[:, j]`` and ``Ap[:, j] -= R[i, j] * Q[:, i]``):
    traced, each column product was a pending value whose element read evaluated a plan, 215
    times NumPy's time. A column (a piece of fewer axes, up to 4096 elements) of a large
    computed array runs NumPy's calls now, and its writes go into the matrix's memory; a
    block of as many axes (a Dask chunk) keeps the traced path above 64 elements."""

    def qrdec(xp, A):
        n = A.shape[0]
        Ap, Q, R = xp.copy(A), xp.zeros((n, n)), xp.zeros((n, n))
        for j in range(n):
            for i in range(j):
                R[i, j] = Q[:, i] @ A[:, j]
                Ap[:, j] -= R[i, j] * Q[:, i]
            R[j, j] = xp.sqrt(xp.sum(Ap[:, j] * Ap[:, j]))
            Q[:, j] = Ap[:, j] / R[j, j]
        return Q, R

    host = numpy.random.default_rng(5).random((120, 120)) + 5 * numpy.eye(120)
    want = qrdec(numpy, host)
    A = nl.asarray(host) * 1.0
    A.get()
    plans = nl.stats()["plans_evaluated"]
    got = qrdec(nl, A)
    for g, w in zip(got, want):
        numpy.testing.assert_array_equal(g.get(), w)
    assert nl.stats()["plans_evaluated"] - plans <= 3  # (was one a column product: 7140)
    block = A[:60, :60]  # (a block: traced, its work fused)
    assert (block * 2 + 1)._storage.pending


def test_an_operator_in_place_on_a_column_stores_nothing_back():
    """``Ap[:, j] -= v``: Python runs the in-place operator on the column view, then assigns
    the view back to ``Ap[:, j]``, itself. That store of a view into the same elements is
    nothing to do (it was a write now of the column onto itself, half of the statement's time
    in a Gram-Schmidt loop); the values are NumPy's, and a store of a view into other
    elements, or of another dtype's view, still writes."""
    from numloom.api import indexing

    host = numpy.random.default_rng(9).random((200, 200))
    a, b = nl.asarray(host) * 1.0, nl.asarray(host) * 2.0
    nl.evaluate(a, b)
    writes = []
    real = indexing._write_now

    def counted(*args, **kwargs):
        writes.append(args[1])
        return real(*args, **kwargs)

    indexing._write_now = counted
    try:
        for j in range(3):
            a[:, j] -= b[:, 3] * 0.5
        a[:, 5] = a[:, 6]  # (other elements: written)
        a[7] = a[7]  # (a row onto itself)
    finally:
        indexing._write_now = real
    want, twice = host.copy(), host * 2.0
    for j in range(3):
        want[:, j] -= twice[:, 3] * 0.5
    want[:, 5] = want[:, 6]
    numpy.testing.assert_array_equal(a.get(), want)
    assert len(writes) == 1  # (only the column copied from another)


def test_a_small_computed_matrixs_pinv_in_a_loop_runs_now():
    """A mixture model's density for each sample of NumPy's data: ``pinv(covar)`` of a small
    computed (unmarked) matrix. Traced, each sample was a plan and a sync (0.25 ms, NumPy
    13 us); a small matrix's decomposition now runs LAPACK's call at once, and its operand is
    marked, so the loop plans nothing after the covariance itself."""
    import math

    samples = numpy.random.default_rng(0).standard_normal((200, 2))

    def densities(xp):
        mean, covar = samples[3], xp.cov(samples.T)
        return [math.exp(-0.5 * (s - mean).T.dot(xp.linalg.pinv(covar)).dot(s - mean))
                for s in samples]  # fmt: skip

    want = densities(numpy)
    plans = nl.stats()["plans_evaluated"]
    got = densities(nl)
    numpy.testing.assert_allclose(got, want, rtol=1e-13)
    assert nl.stats()["plans_evaluated"] - plans <= 2  # (the covariance, once)


def _euler(xp, f, x_end, y0, n):
    """Euler's method as a numerical-methods lecture writes it (IanHawke/NumericalMethods,
    lecture 13): the rows of a large solution array, each step's right-hand side a small array
    made with ``zeros_like`` of the row and written element by element."""
    h = x_end / n
    x = xp.linspace(0.0, x_end, n + 1)
    y = xp.zeros((n + 1, len(y0)))
    y[0, :] = y0
    for i in range(n):
        y[i + 1, :] = y[i, :] + h * f(xp, x[i], y[i, :])
    return y


def _circular_motion(xp, x, y):
    dfdt = xp.zeros_like(y)
    dfdt[0] = -y[1]
    dfdt[1] = y[0]
    return dfdt


def test_a_loop_over_the_rows_of_a_large_solution_evaluates_nothing_per_step():
    """``zeros_like`` of a row of a large computed array (a piece, as ufunc calls on it run
    now) is NumPy's array now, marked: the step's arithmetic on it runs now and its row write
    goes into the solution's memory. Each step evaluated a plan (100-180 us a step against
    NumPy's 4; the lecture's cell took 150 s against 2.3)."""
    if nl.get_device() != "cpu":
        pytest.skip("a loop's small arrays run at once on the CPU")
    y0 = numpy.array([1.0, 0.0])
    _euler(nl, _circular_motion, 50.0, nl.asarray(y0), 20)
    plans = nl.stats()["plans_evaluated"]
    got = _euler(nl, _circular_motion, 50.0, nl.asarray(y0), 3000)
    assert_same(got.get(), _euler(numpy, _circular_motion, 50.0, y0, 3000))
    assert nl.stats()["plans_evaluated"] - plans <= 4
    assert nl.zeros_like(nl.asarray(numpy.ones((5000, 2)))[7])._storage.eager


def _ftcs(xp, nx, steps, s=1.0 / 3.0):
    """The heat equation's FTCS steps as the lecture writes them (IanHawke/NumericalMethods,
    lecture 22): a slice write and two boundary elements each step, ``y = ynew`` after the
    first making both names one array."""
    x = xp.linspace(0.0, 1.0, nx + 2)
    y = xp.sin(xp.pi * x)
    ynew = xp.zeros_like(y)
    for _ in range(steps):
        ynew[1:-1] = (1 - 2.0 * s) * y[1:-1] + s * (y[2:] + y[:-2])
        ynew[0] = 0.0
        ynew[-1] = 0.0
        y = ynew
    return y


def test_a_small_array_written_by_slice_and_elements_each_step_runs_at_once():
    """The second element written into a small array's pending write evaluates it as a read
    does: the array is marked, so the loop's next steps run at once through NumPy. Evaluated
    without marking, each step evaluated a plan (85 us a step against NumPy's 2.6)."""
    if nl.get_device() != "cpu":
        pytest.skip("a loop's small arrays run at once on the CPU")
    _ftcs(nl, 80, 5)
    plans = nl.stats()["plans_evaluated"]
    got = _ftcs(nl, 80, 2000)
    assert_same(got.get(), _ftcs(numpy, 80, 2000))
    assert nl.stats()["plans_evaluated"] - plans <= 4


@pytest.mark.parametrize("call", [
    lambda xp, a, o: xp.divmod(a, 3, out=(o,)),  # (one entry for two outputs: NumPy's ValueError)
    lambda xp, a, o: xp.divmod(a, 3, out=o),  # (not a tuple: NumPy's TypeError)
    lambda xp, a, o: xp.add(a, 2, out=(o,)),
    lambda xp, a, o: xp.add(a, 2, out=o),
])  # fmt: skip
def test_out_of_a_marked_array_call_is_numpys(call):
    """A ufunc of a loop's marked array with ``out=`` runs NumPy's call now: a one-entry
    tuple is unpacked for a one-output ufunc only (``divmod``'s ``out=(o,)`` is NumPy's
    ValueError, not the TypeError of a lone array)."""
    outcomes = []
    for xp in (numpy, nl):
        a, o = xp.array([7.0, -7.0, 8.0]), xp.array([0.0, 0.0, 0.0])
        try:
            call(xp, a, o)
            outcomes.append(("ok", numpy.asarray(o).tolist()))
        except (TypeError, ValueError) as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]

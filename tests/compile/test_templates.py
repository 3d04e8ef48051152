"""Plans generic in sizes: a structure planned at two sizes plans every size from its template.

The template (compile/symbolic.py) is the structure planned once more with symbolic sizes: it
records every question the scheduler and the lowering ask of a size, strides and offsets, and
each kernel argument's expression. A new size that answers every question alike takes the
template's plan: nothing is scheduled, lowered, rendered or compiled. The test suite runs with
``NUMLOOM_PLAN_TEMPLATES=check`` (conftest.py): every plan a template makes is also made anew
and compared, so each test here (and every other test that meets a structure at a new size)
checks the template against the plan it replaces.
"""

from __future__ import annotations

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom as nl
from numloom.compile import pipeline, symbolic
from tests.compile.test_fusion import check_program, programs


def _count(name: str) -> int:
    return nl.stats()[name]


@pytest.fixture(autouse=True)
def _checked(monkeypatch):
    monkeypatch.setattr(pipeline, "TEMPLATES", "check")


def _blackscholes(xp, S, X, T):
    r, v = 0.02, 0.3
    d1 = (xp.log(S / X) + (r + 0.5 * v * v) * T) / (v * xp.sqrt(T))
    d2 = d1 - v * xp.sqrt(T)
    cnd = lambda d: 0.5 * (1 + xp.tanh(d * 0.7978845608))  # noqa: E731
    return S * cnd(d1) - X * xp.exp(-r * T) * cnd(d2)


def test_a_third_size_schedules_and_compiles_nothing():
    rng = numpy.random.default_rng(1)
    got = []
    for n in (1000, 1003, 1500, 77, 4096):
        S, X, T = (rng.uniform(50, 150, n), rng.uniform(50, 150, n), rng.uniform(0.5, 2, n))
        templated, compiled = _count("plans_from_templates"), _count("kernels_compiled")
        value = _blackscholes(nl, nl.asarray(S), nl.asarray(X), nl.asarray(T)).get()
        numpy.testing.assert_allclose(value, _blackscholes(numpy, S, X, T), rtol=1e-9,
                                   atol=1e-12)
        got.append((_count("plans_from_templates") - templated,
                    _count("kernels_compiled") - compiled))  # fmt: skip
    # the first size plans; the second makes the template (and plans from it); the rest take it
    assert got[2:] == [(1, 0)] * 3


def _stencil(xp, u):
    v = u.copy()
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return v, (v - u).max(), v.sum(axis=1)


def test_a_stencil_at_many_sizes():
    for n, m in ((8, 9), (12, 5), (30, 31), (31, 30), (64, 64), (7, 100)):
        data = numpy.arange(n * m, dtype=numpy.float64).reshape(n, m) % 7.0
        before = _count("plans_from_templates")
        got = _stencil(nl, nl.asarray(data))
        want = _stencil(numpy, data)
        for g, w in zip(got, want):
            numpy.testing.assert_array_equal(numpy.asarray(g), w)
    assert _count("plans_from_templates") > before


def test_a_size_that_answers_otherwise_is_planned_anew():
    # a broadcast column: a shape (n, 1) against (n, m) broadcasts; (n, m) with m == 1 or the
    # operand's length 1 takes other decisions: those sizes get plans (templates) of their own
    for n, m in ((5, 4), (6, 3), (7, 1), (1, 5), (8, 8), (1, 1), (9, 2)):
        a = numpy.arange(n * m, dtype=numpy.float32).reshape(n, m)
        b = numpy.arange(n, dtype=numpy.float32).reshape(n, 1)
        got = (nl.asarray(a) * nl.asarray(b) + 1.0).sum(axis=0)
        numpy.testing.assert_array_equal(got.get(), (a * b + 1.0).sum(axis=0))


def test_windows_move_along_an_array():
    data = numpy.random.default_rng(2).standard_normal(8000)  # (not small: traced, not eager)
    x = nl.asarray(data)
    before = _count("plans_from_templates")
    for i in range(0, 2000, 370):
        for k in (3000, 4100):
            w = x[i:i + k]
            got = ((w - w.mean()) ** 2).sum()
            want = ((data[i:i + k] - data[i:i + k].mean()) ** 2).sum()
            numpy.testing.assert_allclose(float(got), want, rtol=1e-12)
    assert _count("plans_from_templates") > before


def test_gathers_concatenations_and_writes_at_new_sizes():
    rng = numpy.random.default_rng(3)
    for n in (10, 11, 40, 41, 100):
        data = rng.standard_normal(n)
        idx = rng.integers(0, n, n // 2)
        x = nl.asarray(data)
        y = nl.concatenate([x[idx] * 2.0, x[: n // 3] + 1.0])
        z = x.copy()
        z[::2] = z[::2] * 3.0
        numpy.testing.assert_array_equal(y.get(), numpy.concatenate(
            [data[idx] * 2.0, data[: n // 3] + 1.0]))  # fmt: skip
        w = data.copy()
        w[::2] = w[::2] * 3.0
        numpy.testing.assert_array_equal(z.get(), w)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    step=st.integers(1, 3),
    dtype=st.sampled_from(["float64", "float32", "int64", "int32", "uint8"]),
    axis=st.integers(-1, 2),
    transpose=st.booleans(),
)
def test_one_structure_at_hypothesis_sizes(shape, step, dtype, axis, transpose):
    """One program over arrays of drawn shapes, steps, dtypes and layouts: each result as
    NumPy's, every template's plan checked against the plan made anew."""
    data = (numpy.arange(numpy.prod(shape) * step) % 11).astype(dtype)
    base = data[::step].reshape(shape)
    if transpose:
        base = base.T
    axis = min(axis, base.ndim - 1)

    def program(xp, a):
        b = a * 2 + 1
        c = b[..., ::-1] if b.ndim else b
        return (c - a).sum(axis=axis), (b * c).max(), xp.cumsum(a, axis=axis)

    got = program(nl, nl.asarray(base))
    for g, w in zip(got, program(numpy, base)):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)


def test_sym_records_each_question_and_each_expression():
    rec = symbolic.Recorder()
    n = symbolic.Sym(5, "N[0].shape[0]", rec)
    m = symbolic.Sym(5, "N[1].shape[0]", rec)
    assert n == m and not n < 2 and (n * m - 1).expr == "((N[0].shape[0] * N[1].shape[0]) - 1)"
    assert list(rec.guards) == ["N[0].shape[0] == N[1].shape[0]", "not (N[0].shape[0] < 2)"]
    assert f"{n}" == "5" and "N[0].shape[0] == 5" in rec.guards  # (text: the exact value)
    with pytest.raises(symbolic.Unfollowed):
        hash(n)  # (a dict that misses could hide a question: no template)
    holds = symbolic.function(list(rec.guards), "guard")

    class _N:
        def __init__(self, k):
            self.shape = (k,)

    assert holds([_N(5), _N(5)]) and not holds([_N(6), _N(6)]) and not holds([_N(5), _N(4)])


def test_templates_off_plans_each_size_anew(monkeypatch):
    monkeypatch.setattr(pipeline, "TEMPLATES", "0")
    before = _count("plans_from_templates")
    for n in (13, 14, 15, 16):
        x = nl.arange(n, dtype=nl.float64)
        numpy.testing.assert_array_equal((x * x + 1).get(), numpy.arange(n) ** 2 + 1.0)
    assert _count("plans_from_templates") == before


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_programs_at_three_sizes(steps):
    """test_fusion's random programs (views, writes, reductions, selects) at three base
    shapes (traced: not a loop's small arrays): the second and third plan each structure from
    its template, checked against the plan made anew, and every result is NumPy's."""
    for shape in ((60, 50), (70, 41), (90, 33)):
        check_program(steps, numpy.arange(float(numpy.prod(shape))).reshape(shape) / 700)

"""Writes through views into memory the plan owns (the CPU backend, ``cpu._in_place``): a
write whose old version is an intermediate of the same plan, read by no later kernel, goes into
that memory without copying the rest of the array, where its new values read none of the
elements it writes. A fluid solver's boundary conditions (``x[0, 1:-1] = -x[1, 1:-1]``, four
edges after each relaxation sweep) copied the whole grid for each edge before. Every result
here is NumPy's, bit for bit."""

from __future__ import annotations

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl

RNG = numpy.random.default_rng(5)
LINE, GRID = RNG.random(20), RNG.random((8, 9))
ON_CPU = nl.get_device() == "cpu"


def _edges(x, n):
    x[0, 1:-1] = -x[1, 1:-1]
    x[-1, 1:-1] = -x[n, 1:-1]
    x[1:-1, 0] = x[1:-1, 1]
    x[1:-1, -1] = x[1:-1, n]


def _sweep(x, x0, n):
    """One relaxation sweep of Stam's fluid solver, and its boundary conditions."""
    x[1:-1, 1:-1] = (x0[1:-1, 1:-1] + 0.1 * (x[:n, 1:-1] + x[2:, 1:-1] + x[1:-1, :n]
                                             + x[1:-1, 2:])) / 1.4  # fmt: skip
    _edges(x, n)
    return x


def _in_place(make):
    before = nl.stats()["writes_in_place"]
    got = make()
    nl.evaluate(got)
    return nl.stats()["writes_in_place"] - before, got


@pytest.mark.parametrize("n", [6, 30, 400])
def test_a_solvers_boundary_writes_after_a_sweep_go_in_place(n):
    h, h0 = RNG.random((n + 2, n + 2)), RNG.random((n + 2, n + 2))
    x, x0 = nl.asarray(h), nl.asarray(h0)
    nl.evaluate(x, x0)
    count, got = _in_place(lambda: _sweep(x, x0, n))
    numpy.testing.assert_array_equal(got.get(), _sweep(h.copy(), h0, n))
    if ON_CPU:
        assert count == 4  # (the sweep itself reads shifted elements: it copies)


WRITES = {
    # the new values read elements the write changes: NumPy computes them first (a copy)
    "shifted": lambda xp, y: y.__setitem__(slice(1, None), y[:-1] * 2),
    "the same elements": lambda xp, y: y.__setitem__(slice(2, 9), y[2:9] + 1),
    "a reversed read": lambda xp, y: y.__setitem__(slice(0, 5), y[4::-1]),
    "rows of other steps": lambda xp, y: y.reshape(4, 5).__setitem__(
        slice(0, 4, 3), y.reshape(4, 5)[0:3:2]),  # (rows 0 and 3 from rows 0 and 2)
    # the new values read none of the elements written (in place)
    "odd into even": lambda xp, y: y.__setitem__(slice(None, None, 2), y[1::2] * 3),
    "a far range": lambda xp, y: y.__setitem__(slice(0, 4), y[10:14]),
    # the old version is computed in the write's own kernel (nothing stored to write into)
    "a scalar": lambda xp, y: y.__setitem__(slice(3, 7), 5.0),
}
IN_PLACE = {"odd into even", "a far range"}


@pytest.mark.parametrize("what", list(WRITES))
@numpy_compare()
def test_a_write_reading_its_own_array_is_numpys(xp, what):
    y = xp.asarray(LINE) * 1  # (an intermediate: the write's old version)
    before = nl.stats()["writes_in_place"]
    WRITES[what](xp, y)
    if xp is nl:
        nl.evaluate(y)
        if ON_CPU:
            assert nl.stats()["writes_in_place"] - before == (what in IN_PLACE), what
    return y


@numpy_compare()
def test_an_old_version_read_after_the_write_is_kept(xp):
    """``v`` reads y's version before the writes: the writes copy it (a later kernel reads
    it), and ``v`` keeps the old values."""
    y = xp.asarray(LINE) * 1
    v = y + 1
    y[0] = 5.0
    y[3:6] = y[10:13]
    return v, y


@numpy_compare()
def test_a_view_taken_before_the_writes_sees_them(xp):
    """A view of y's storage (NumPy's view shares memory) sees every write, in place or not."""
    y = xp.asarray(GRID) * 1
    row = y[1]
    _edges(y, 6)
    y[2:4, 2:4] = -1.0
    return row, y


def test_the_first_write_to_a_computed_array_copies_it():
    """An array computed by an earlier plan is not the plan's memory (others may hold it):
    its first write copies; the writes after it, in the same plan, go in place."""
    h = RNG.random((10, 10))
    x = nl.asarray(h) * 2
    nl.evaluate(x)
    count, got = _in_place(lambda: (_edges(x, 8), x)[1])
    want = h * 2
    _edges(want, 8)
    numpy.testing.assert_array_equal(got.get(), want)
    if ON_CPU:
        assert count == 3


def _random_slice(rng, n):
    start = int(rng.integers(0, n))
    stop = int(rng.integers(start + 1, n + 1))
    return slice(start, stop, int(rng.integers(1, 3)))


def _writes(xp, host, plan):
    """Writes of slices of an intermediate from other (or the same) slices of it, in order."""
    y = xp.asarray(host) * 1
    for (a0, a1), (b0, b1), scale in plan:
        src = y[b0, b1]
        dst_shape = y[a0, a1].shape
        if src.shape != dst_shape:  # (broadcast a row of the source where shapes differ)
            src = src.reshape(-1)[:1].reshape((1,) * len(dst_shape)) if src.size else 0.0
        y[a0, a1] = src * scale + 1.0
    return y


@pytest.mark.parametrize("seed", range(40))
def test_random_writes_of_an_array_from_itself_are_numpys(seed):
    """Random chains of slice writes reading slices of the same array (disjoint, overlapping,
    equal, of other steps): NumPy's values, whichever go in place."""
    rng = numpy.random.default_rng(seed)
    n, m = int(rng.integers(3, 9)), int(rng.integers(3, 9))
    host = rng.random((n, m))
    plan = [((_random_slice(rng, n), _random_slice(rng, m)),
             (_random_slice(rng, n), _random_slice(rng, m)), float(rng.integers(1, 4)))
            for _ in range(int(rng.integers(1, 6)))]  # fmt: skip
    got = _writes(nl, host, plan)
    nl.evaluate(got)
    numpy.testing.assert_array_equal(got.get(), _writes(numpy, host, plan))


@pytest.mark.skipif(not ON_CPU, reason="the CPU backend's writes run through NumPy")
def test_two_arrays_written_in_turn_write_in_place_across_a_flush(monkeypatch):
    """A data generator's loop (``X[i] = row; y[i] = roll(X[i])``) past the graph's depth
    limit: the flush's plan runs the writes of X and y in the program's order, so that each
    write of X goes into X's memory; from the pending ``roll`` (the flush's shallowest root)
    X's whole chain came first, each old version kept for y's reads: a copy of X per write
    (30 s and 11 GB for 3000 rows of 10x61)."""
    from numloom.api import eager
    from numloom.core import config

    monkeypatch.setattr(config, "FLUSH_DEPTH", 40)
    # (the traced path: rows of X are no small pieces, written values no small values, which
    # run at once: test_a_data_generators_rows_are_written_at_once)
    monkeypatch.setattr(eager, "PIECE_ELEMENTS", 0)
    monkeypatch.setattr(eager, "EAGER_ELEMENTS", 0)
    rows = numpy.random.default_rng(8).random((100, 4, 6))
    got, before = _generated_rows(nl, rows)
    assert nl.stats()["auto_flushes"] - before["auto_flushes"] >= 2
    assert nl.stats()["writes_in_place"] - before["writes_in_place"] >= 190  # (of 200)
    for g, w in zip(got, _generated_rows(numpy, rows)[0]):
        numpy.testing.assert_array_equal(g, w)


def _generated_rows(xp, rows, each_row=None):
    """A data generator's loop (``X[i] = row; y[i] = roll(X[i])``) into arrays made and (on
    numloom) evaluated first: (X and y as NumPy arrays, numloom's stats before the loop);
    ``each_row(xp, X, y, i)`` runs after each row's writes."""
    X, y = xp.zeros(rows.shape), xp.zeros(rows.shape)
    before = None
    if xp is nl:
        nl.sync()
        before = nl.stats()
    for i in range(len(rows)):
        X[i] = xp.asarray(rows[i])
        y[i] = xp.roll(X[i], -1, axis=0)
        if each_row is not None:
            each_row(xp, X, y, i)
    return [numpy.asarray(X), numpy.asarray(y)], before


@pytest.mark.skipif(not ON_CPU, reason="the CPU backend's writes run through NumPy")
def test_a_data_generators_rows_are_written_at_once():
    """The same loop as it runs: a row written with host data goes into X's memory at once,
    ``roll`` of a row of the computed X (a small piece) is NumPy's at once, and its write into y
    too; y's write of a small pending value computes it and writes it, so y stays computed and
    the next rows run at once (before: traced, flushed every 40 writes; 301 against 135 ms for
    3000 rows of 10x61, NumPy 23-83)."""
    rows = numpy.random.default_rng(8).random((100, 4, 6))
    computed = []

    def each_row(xp, X, y, i):
        if i == 50:
            y[i] = xp.roll(X[i] * 2.0 + 1.0, 1, axis=1)  # (a pending value: computed, written)
        if xp is nl and i in (10, 50, 99):
            assert not X._storage.pending and not y._storage.pending, i
        if xp is nl and i == 99:
            computed.append(not X._storage.pending and not y._storage.pending)

    got, before = _generated_rows(nl, rows, each_row)
    assert nl.stats()["plans_evaluated"] - before["plans_evaluated"] <= 3
    assert computed == [True]
    for g, w in zip(got, _generated_rows(numpy, rows, each_row)[0]):
        numpy.testing.assert_array_equal(g, w)

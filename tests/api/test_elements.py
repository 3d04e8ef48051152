"""Element access from Python: a full integer index, iteration, ``tolist``, scalar conversions
and element writes behave as NumPy's (NumPy scalars, NumPy's errors), read a host view of the
computed value and write elements in place where nothing else holds the buffer."""

from __future__ import annotations

import sys
import threading
import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl
from numloom.core.dag import strided

DTYPES = ["bool", "int8", "uint8", "int32", "uint64", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip


def _values(xp, dtype, shape=(6,)):
    return xp.asarray((numpy.arange(numpy.prod(shape)) % 5).reshape(shape).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "key", [0, 3, -1, -6, numpy.int64(2), numpy.uint8(1), (4,)], ids=lambda k: repr(k)
)
def test_a_full_integer_index_gives_numpys_scalar(dtype, key):
    want = _values(numpy, dtype)[key]
    got = _values(nl, dtype)[key]
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize("key", [(1, 2), (-1, -1), (numpy.int32(0), 2), (1, numpy.int64(-2))])
def test_a_full_integer_index_of_a_2d_array_and_of_views(key):
    a = nl.arange(12.0).reshape(3, 4)
    w = numpy.arange(12.0).reshape(3, 4)
    for got, want in [(a, w), (a.T, w.T), (a[::-1, 1:], w[::-1, 1:]), (a * 2, w * 2)]:
        assert type(got[key]) is type(want[key]) and got[key] == want[key]
    assert type(nl.asarray(3.5)[()]) is numpy.float64


@numpy_compare()
def test_out_of_bounds_and_bad_integer_keys_raise_numpys_errors(xp):
    a = xp.arange(5.0)
    return a[5]


@numpy_compare()
def test_out_of_bounds_of_a_2d_array(xp):
    return xp.zeros((2, 3))[1, -4]


@numpy_compare()
def test_out_of_bounds_row(xp):
    return xp.zeros((2, 3))[-3]


@numpy_compare()
def test_too_many_integers(xp):
    return xp.zeros(3)[1, 2]


def test_rows_of_a_2d_array_are_views_that_see_and_make_writes():
    a = nl.zeros((3, 4))
    row = a[1]
    assert isinstance(row, nl.ndarray) and row.shape == (4,)
    row[2] = 5.0
    a[1, 3] = 7.0
    numpy.testing.assert_array_equal(a.get()[1], [0, 0, 5, 7])
    numpy.testing.assert_array_equal(row.get(), [0, 0, 5, 7])
    assert a[-1].shape == (4,) and a[2][3] == 0.0


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128", "bool"])
def test_iteration_gives_numpys_scalars_and_rows(dtype):
    for shape in [(7,), (3, 2), (2, 2, 2)]:
        want = list(_values(numpy, dtype, shape))
        got = list(_values(nl, dtype, shape))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            if isinstance(w, numpy.ndarray):
                assert isinstance(g, nl.ndarray)
                numpy.testing.assert_array_equal(g.get(), w)
            else:
                assert type(g) is type(w) and g == w


def test_iteration_sees_writes_made_in_the_loop():
    def run(xp):
        a = xp.arange(6.0)
        seen = []
        for i, v in enumerate(a):
            seen.append(float(v))
            if i + 1 < len(a):
                a[i + 1] = v * 10  # NumPy's iterator reads the element the loop just wrote
            a[:1] = -1  # and a write of a slice, a new version
        return seen

    assert run(nl) == run(numpy)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tolist_item_and_builtin_conversions(dtype):
    for xp_a, np_a in [(_values(nl, dtype, (2, 3)), _values(numpy, dtype, (2, 3)))]:
        assert xp_a.tolist() == np_a.tolist()
        assert type(xp_a.item(4)) is type(np_a.item(4)) and xp_a.item(4) == np_a.item(4)
        assert xp_a.item(1, 2) == np_a.item(1, 2)
        assert sum(xp_a[0]) == sum(np_a[0])
        assert len(xp_a) == len(np_a)
    one, np_one = _values(nl, dtype, (2,))[1, ...], _values(numpy, dtype, (2,))[1, ...]
    assert bool(one) == bool(np_one)
    if numpy.dtype(dtype).kind != "c":
        assert float(one) == float(np_one) and int(one) == int(np_one)
    assert complex(one) == complex(np_one)


@pytest.mark.parametrize(
    "value", [3, 3.0, 7, -1, numpy.float32(2), numpy.nan, 2 + 0j, "a"], ids=repr
)
def test_contains_as_numpy(value):
    a, w = nl.arange(6) % 4, numpy.arange(6) % 4
    assert (value in a) == (value in w)
    assert (nl.asarray([0, 1, 2]) in nl.arange(3).reshape(1, 3) + 0) is True


@numpy_compare()
def test_element_writes_in_a_loop(xp):
    a = xp.zeros(50)
    for i in range(1, 50):
        a[i] = a[i - 1] * 0.5 + i
    b = xp.ones((4, 5), dtype="int32")
    for i in range(4):
        for j in range(5):
            b[i, j] = b[i, j - 1] + i * j
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
def test_element_writes_of_every_dtype(dtype):
    def run(xp):
        a = xp.zeros(5, dtype=dtype)
        for i, v in enumerate([1, 2.5, True, numpy.float32(3), 0]):
            if numpy.dtype(dtype).kind in "biu" and isinstance(v, float) and v != int(v):
                v = 2
            a[i] = v
        a[-1] = a[0]
        return a

    numpy.testing.assert_array_equal(numpy.asarray(run(nl)), run(numpy))


def test_element_writes_keep_every_other_holder_of_the_old_value():
    a = nl.arange(6.0) * 1
    a[0] = 10.0  # pending work: fuses
    a[1] = 11.0  # the second evaluates, then writes in place
    copy = a.copy()  # shares the computed value: a write must not reach it
    exported = numpy.asarray(a)  # on the CPU a view of a's memory: it sees a's writes
    cpu = a.device == "cpu"  # (a GPU array's is a host copy, as CuPy's asnumpy)
    doubled = a * 2  # pending, reads the value before the write
    a[2] = 12.0
    a[3] = 13.0
    assert list(a.get()) == [10, 11, 12, 13, 4, 5]
    assert list(copy.get()) == [10, 11, 2, 3, 4, 5]
    assert list(exported) == ([10, 11, 12, 13, 4, 5] if cpu else [10, 11, 2, 3, 4, 5])
    assert list(doubled.get()) == [20, 22, 4, 6, 8, 10]
    view = a[1::2]
    view[0] = -1.0  # through a view: the array sees it
    a[5] = -5.0  # and the view sees the array's
    assert list(a.get()) == [10, -1, 12, 13, 4, -5]
    assert list(exported) == list(a.get()) or not cpu
    assert list(view.get()) == [-1, 13, -5]


def test_element_writes_after_a_loop_write_stay_in_place():
    a = nl.zeros(1000)
    a[0] = 1.0
    a[1] = 2.0
    before = nl.stats()
    for i in range(2, 1000):
        a[i] = a[i - 1] + a[i - 2]
    after = nl.stats()
    assert after["plans_evaluated"] == before["plans_evaluated"]  # no plan: in place
    want = numpy.zeros(1000)
    want[:2] = 1, 2
    for i in range(2, 1000):
        want[i] = want[i - 1] + want[i - 2]
    numpy.testing.assert_array_equal(a.get(), want)


def test_element_reads_in_a_loop_evaluate_once():
    a = nl.arange(100.0) * 2
    before = nl.stats()["plans_evaluated"]
    total = sum(a[i] for i in range(100)) + sum(a) + sum(a.tolist())
    assert total == 3 * 9900.0
    assert nl.stats()["plans_evaluated"] == before + 1


@pytest.mark.parametrize(
    "write", [lambda a: a.__setitem__(0, 300), lambda a: a.__setitem__(1, numpy.nan)],
    ids=["overflow", "nan"],
)  # fmt: skip
def test_bad_element_writes_raise_numpys_errors_and_keep_the_value(write):
    def run(xp):
        a = xp.arange(3, dtype="uint8")
        a[2] = 7
        a[1] = 9
        try:
            write(a)
        except Exception as e:  # noqa: BLE001 (compared below)
            return type(e), str(e), list(a.tolist())
        return None

    assert run(nl) == run(numpy)


@numpy_compare()
def test_read_only_arrays_refuse_element_writes(xp):
    a = xp.broadcast_to(xp.arange(3.0), (2, 3))
    a[0, 0] = 1.0


def test_element_writes_into_broadcast_arrays_warn_as_numpy():
    a, _ = nl.broadcast_arrays(nl.arange(3.0), nl.zeros((2, 1)))
    with pytest.warns(DeprecationWarning):
        a[0, 0] = 5.0


def test_a_jit_function_reading_an_element_is_called_every_time():
    f = nl.jit(lambda x: x * x[0])
    for first in [1.0, 2.0, 3.0]:
        x = nl.arange(4.0) + first
        x.get()  # computed: the element read needs no sync
        numpy.testing.assert_array_equal(f(x).get(), (numpy.arange(4.0) + first) * first)


def test_element_writes_under_jit_are_replayed():
    def step(x):
        x[0] = 5.0
        return x * 2

    f = nl.jit(step)
    for _ in range(3):
        x = nl.arange(4.0)
        x.get()
        numpy.testing.assert_array_equal(f(x).get(), [10.0, 2.0, 4.0, 6.0])
        numpy.testing.assert_array_equal(x.get(), [5.0, 1.0, 2.0, 3.0])


def test_threads_read_elements_of_one_shared_array():
    a = nl.arange(2000.0) * 3
    errors = []

    def read():
        try:
            for _ in range(3):
                if sum(a[i] for i in range(len(a))) != 3 * 1999 * 1000:
                    errors.append("wrong sum")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.gpu
def test_gpu_element_reads_copy_once_per_version():
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")
    with nl.device("cuda"):
        a = nl.arange(1000.0) * 2
        a.get()
        before = nl.stats()["device_to_host_bytes"]
        assert sum(a[i] for i in range(1000)) == 999000.0
        assert list(a)[:3] == [0.0, 2.0, 4.0] and a.tolist()[-1] == 1998.0
        assert nl.stats()["device_to_host_bytes"] - before == 8000
        a[0] = 5.0  # written into the mirror and the device: nothing to read again
        assert a[0] == 5.0 and a[1] == 2.0
        assert nl.stats()["device_to_host_bytes"] - before == 8000
        a[1:3] = 7.0  # a new version: read again, once
        assert a[1] == 7.0 and a[3] == 6.0 and a[0] == 5.0
        assert nl.stats()["device_to_host_bytes"] - before == 16000


@pytest.mark.parametrize(
    "make",
    [lambda xp: xp.arange(10.0).mean(), lambda xp: xp.arange(7).sum(),
     lambda xp: xp.arange(5, dtype="float32").max() * 2, lambda xp: xp.sqrt(xp.arange(4.0).sum())],
    ids=["mean", "int sum", "float32 max times 2", "ufunc of a scalar"],
)  # fmt: skip
def test_scalar_results_print_hash_and_round_as_numpys(make):
    got, want = make(nl), make(numpy)
    assert repr(got) == repr(want) and str(got) == str(want)
    assert f"{got}" == f"{want}" and f"{got:.2f}" == f"{want:.2f}"
    assert hash(got) == hash(want) and {got: 1} == {want: 1}
    assert round(got) == round(want) and type(round(got)) is type(round(want))
    assert round(got, 1) == round(want, 1) and type(round(got, 1)) is type(round(want, 1))
    assert repr([got, got]) == repr([want, want]) and nl.isscalar(got)


def test_in_place_operators_on_a_scalar_result_make_a_new_value():
    x = nl.arange(6.0)
    m = x.max()
    kept = m
    m += 1
    m *= 2
    assert float(m) == 12.0 and float(kept) == 5.0
    a = nl.max(x.reshape(2, 3), keepdims=True)  # an array (1, 1): written in place, as NumPy
    b = a
    a += 1
    assert float(b[0, 0]) == 6.0


def test_zero_dimensional_arrays_stay_arrays():
    for a, w in [(nl.zeros(()), numpy.zeros(())), (nl.asarray(2.5), numpy.asarray(2.5)),
                 (nl.arange(3.0).sum().copy(), numpy.float64(3.0).copy()),
                 (nl.copy(nl.arange(3.0).sum()), numpy.copy(numpy.arange(3.0).sum()))]:  # fmt: skip
        assert repr(a) == repr(w)


@pytest.mark.gpu
def test_gpu_element_writes_in_a_loop_land_and_keep_other_holders():
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")
    with nl.device("cuda"):
        a = nl.zeros(300)
        a[0], a[1] = 1.0, 1.0
        copy = a.copy()
        doubled = a * 2
        for i in range(2, 300):
            a[i] = (a[i - 1] + a[i - 2]) % 1000.0
        want = numpy.zeros(300)
        want[:2] = 1.0
        for i in range(2, 300):
            want[i] = (want[i - 1] + want[i - 2]) % 1000.0
        numpy.testing.assert_array_equal(a.get(), want)
        numpy.testing.assert_array_equal((a + 0).get(), want)  # the device has the writes
        assert copy.get()[2] == 0.0 and doubled.get()[1] == 2.0
        grid = nl.zeros((4, 5), dtype="int32")
        view = grid[1:, ::2]
        view[0, 1] = 7
        grid[3, 4] = 9
        grid[3, 4] = grid[3, 4] + 1
        assert grid.get()[1, 2] == 7 and int((grid * 1).get()[3, 4]) == 10
        with pytest.raises(OverflowError):
            nl.zeros(3, dtype="uint8")[1] = 300


def test_gpu_element_writes_reach_the_device_in_one_copy():
    """A loop of element writes copies its bytes to the device once, when a kernel next reads
    the array: the whole mirror of a small array, the range written of a large one; a write
    after that copy is copied again before the next read."""
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")
    with nl.device("cuda"):
        for n, first, stop, want_bytes in ((1000, 2, 1000, 8000), (20000, 100, 200, 800)):
            a = nl.zeros(n)
            a[0], a[1] = 1.0, 2.0
            a.get()  # (their copy to the device)
            before = nl.stats()["host_to_device_bytes"]
            for i in range(first, stop):
                a[i] = i * 0.5
            want = numpy.zeros(n)
            want[:2] = 1.0, 2.0
            want[first:stop] = numpy.arange(first, stop) * 0.5
            numpy.testing.assert_array_equal((a * 1).get(), want)
            assert nl.stats()["host_to_device_bytes"] - before == want_bytes
            a[first] = -1.0
            want[first] = -1.0
            numpy.testing.assert_array_equal((a + 0).get(), want)
            numpy.testing.assert_array_equal(a.get(), want)


# --- ufuncs on the scalars elements are: NumPy's scalars, at once -------------------------------

SCALAR_CALLS = {
    "sqrt": lambda xp, v: xp.sqrt(v),
    "add": lambda xp, v: xp.add(v, 2),
    "arctan2": lambda xp, v: xp.arctan2(v, 1.5),
    "maximum float32": lambda xp, v: xp.maximum(v, xp.float32(2)),
    "divmod": lambda xp, v: xp.divmod(v, 3),
    "isnan": lambda xp, v: xp.isnan(v),
    "dtype=": lambda xp, v: xp.add(v, 1, dtype=xp.complex64),
    "frexp": lambda xp, v: xp.frexp(v),
}
SCALARS = [2.5, -1, numpy.float32(3.5), numpy.int8(-7), True, 1j, numpy.uint64(5)]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
@pytest.mark.parametrize("call", SCALAR_CALLS.values(), ids=SCALAR_CALLS.keys())
def test_ufuncs_on_scalars_give_numpys_scalars(call, value):
    def run(xp):
        with numpy.errstate(all="ignore"):
            try:
                return call(xp, value)
            except TypeError as e:  # (no loop for these types: NumPy's error)
                return e

    want, got = run(numpy), run(nl)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want)
        return
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    assert [type(g) for g in got] == [type(w) for w in want]
    numpy.testing.assert_array_equal(numpy.array(got), numpy.array(want))


def test_a_ufunc_on_elements_runs_at_once_and_warns_at_the_users_line():
    x = nl.asarray([-1.0, 4.0])
    x[0]  # (computed)
    before = nl.stats()
    with pytest.warns(RuntimeWarning, match="invalid value encountered in sqrt") as caught:
        r = nl.sqrt(x[0])
    assert caught[0].filename == __file__ and numpy.isnan(r) and type(r) is numpy.float64
    assert nl.sqrt(x[1]) + 1 == 3.0 and nl.stats()["plans_evaluated"] == before["plans_evaluated"]
    with numpy.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        nl.sqrt(-1.0)


@numpy_compare()
def test_integers_for_leading_axes_give_a_view_that_writes_reach(xp):
    """``P[i, j]`` of a (57, 57, 2) grid in a Python loop (rougier's Bridson sampling): the
    cell's view, NumPy's errors out of bounds, and writes through it reach the grid."""
    P = xp.arange(60.0).reshape(3, 5, 4)
    cells = [P[1, 2].tolist(), P[-1, -5].tolist(), P[0, numpy.int64(3)].tolist()]
    P[2, 1][0] = -1.0
    cell = P[0, 4]
    cell += 100
    errors = []
    for key in ((3, 0), (0, 5), (-4, 0), (0, -6)):
        try:
            P[key]
        except IndexError as e:
            errors.append(str(e))
    return P, cells, errors, cell.base is P, P[1, 1].flags.owndata


def test_a_cell_of_a_computed_grid_reads_through_the_grids_host_view(monkeypatch):
    """``P[i, j][0]`` in a loop (Bridson's sampling reads 60000 cells): the cell's view takes
    its elements from the grid's NumPy view, made once, not a NumPy view of its own per cell;
    a write into the grid after is what a cell made before it reads."""
    from numloom.core import host

    if nl.get_device() != "cpu":
        pytest.skip("a CPU array's memory (a GPU array's cells read its host mirror)")
    P = nl.asarray(numpy.arange(60.0).reshape(3, 5, 4))
    assert P[0, 0][0] == 0.0  # (the grid's host view, made once)
    made = []
    monkeypatch.setattr(host, "strided", lambda *a: made.append(a) or strided(*a))
    values = [P[i, j][k] for i in range(3) for j in range(5) for k in range(4)]
    assert values == list(range(60)) and not made
    cell = P[1, 1]
    assert cell[0] == 24.0
    P[1, 1, 0] = 99.0
    assert cell[0] == 99.0 and cell.tolist() == [99.0, 25.0, 26.0, 27.0]
    cell[1] = -1.0
    assert P[1, 1, 1] == -1.0 and P[1, 1].tolist() == [99.0, -1.0, 26.0, 27.0]


# --- rows and columns written with a scalar in a loop (CFD Python's boundary conditions) -----


@numpy_compare()
def test_boundary_rows_and_columns_written_in_an_element_loop(xp):
    """CFD Python's step 5 as published: element updates and, inside the inner loop, the four
    edges set to 1 each time."""
    u = xp.ones((9, 9))
    u[2:5, 2:5] = 2
    for _ in range(3):
        un = u.copy()
        for j in range(1, 9):
            for i in range(1, 9):
                u[j, i] = un[j, i] - 0.2 * (un[j, i] - un[j, i - 1]) - 0.2 * (un[j, i] - un[j - 1, i])
                u[0, :] = 1
                u[-1, :] = 1
                u[:, 0] = 1
                u[:, -1] = 1
    return u, un


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [True, 3, -2, 2.5, 1e300, float("nan"), float("inf"), 1 + 2j,
                                   numpy.float32(1.5), numpy.int8(-3), numpy.float64(1e300)],
                         ids=repr)  # fmt: skip
def test_slice_writes_of_every_scalar_into_every_dtype(dtype, value):
    """A scalar stored into rows, columns and strided slices of a computed array, again and
    again (after the first, in place): NumPy's values, NumPy's errors, and NumPy's warnings at
    the user's line."""
    def run(xp):
        a = xp.zeros((4, 6), dtype=dtype)
        a[1, 1] = 1  # (computed, written in place: the host view is kept)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for key in [(0, slice(None)), (slice(None), -1), (slice(1, 3), slice(None, None, 2)),
                        (2,), (slice(None),)]:  # fmt: skip
                try:
                    a[key] = value
                except Exception as e:  # noqa: BLE001 (compared with NumPy's)
                    out.append((type(e), str(e)))
                out.append(a.tolist())
        return out, [(w.category, str(w.message), w.filename) for w in caught]

    got, want = run(nl), run(numpy)
    assert str(got[0]) == str(want[0])  # (NaN == NaN as text)
    assert got[1] == want[1]


def test_slice_writes_keep_every_other_holder_of_the_old_value():
    a = nl.arange(12.0).reshape(3, 4) * 1
    a[0, 0] = 5.0
    a[0, :] = 1.0  # (computed and alone: in place, and the next writes take the fast path)
    copy = a.copy()
    exported = numpy.asarray(a)  # a view of a's memory on the CPU: it sees a's writes
    cpu = a.device == "cpu"
    doubled = a * 2  # pending: reads the value before the writes
    row = a[2]
    a[1, :] = -1.0
    a[:, 3] = 7.0
    want = numpy.arange(12.0).reshape(3, 4)
    want[0, :], want[1, :], want[:, 3] = 1.0, -1.0, 7.0
    numpy.testing.assert_array_equal(a.get(), want)
    assert copy.get()[1].tolist() == [4, 5, 6, 7]
    assert doubled.get()[1].tolist() == [8, 10, 12, 14]
    assert row.tolist() == [8, 9, 10, 7.0]
    if cpu:
        numpy.testing.assert_array_equal(exported, want)
    row[:2] = 0  # through a view
    assert a.get()[2].tolist() == [0, 0, 10, 7]


def test_slice_writes_into_read_only_and_broadcast_arrays_as_numpy():
    a = nl.zeros((3, 3))
    a[0, :] = 1
    a.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        a[1, :] = 2
    b, _ = nl.broadcast_arrays(nl.arange(3.0), nl.zeros((2, 1)))
    with pytest.warns(DeprecationWarning):
        b[0, :] = 5.0


def test_element_writes_take_the_fast_path_again_once_exports_die():
    """A library's ``numpy.asarray(x)`` for the length of a call exports x's memory: once that
    export has died, the buffer forgets it, so the next element writes go straight into
    memory (the compiled handle's path), not through the path that settles exports."""
    from numloom.core import array

    if array._speedups is None and sys.version_info < (3, 12):
        pytest.skip("a Python class has the buffer protocol from Python 3.12 on (numpy.asarray "
                    "takes __array_interface__, kept while the array lives)")  # fmt: skip
    x = nl.arange(10.0, device="cpu") * 1  # (a GPU array's numpy.asarray is a host copy)
    x.tolist()
    numpy.sort(numpy.asarray(x))
    x[3] = 1.0
    assert x._storage.version.arg.exports is None
    held = numpy.asarray(x)
    x[4] = 2.0
    assert held[4] == 2.0 and x._storage.version.arg.exports


def test_rows_of_a_computed_array_read_and_write_as_numpys():
    """Iterating a computed 2-d array gives rows whose element reads come from the array's
    host view (a decision tree's ``[row for row in X if row[i] >= t]``); a write through a row,
    or into the array, is seen by every row read afterwards, as NumPy's views see it."""
    host = numpy.arange(12.0).reshape(4, 3)
    for xp in (nl, numpy):
        x = xp.asarray(host.copy())
        rows = list(x)
        assert [float(r[1]) for r in rows] == [1.0, 4.0, 7.0, 10.0]
        rows[2][1] = -7.0  # through a row
        x[3, 1] = -10.0  # into the array
        assert [float(r[1]) for r in rows] == [1.0, 4.0, -7.0, -10.0]
        assert [float(r[1]) for r in x] == [1.0, 4.0, -7.0, -10.0]
        picked = xp.array([r for r in x if r[1] >= 0])
        assert numpy.asarray(picked).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]

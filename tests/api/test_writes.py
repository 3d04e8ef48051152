"""What NumPy functions write into their arguments reaches numloom's arrays.

Every NumPy function that writes an argument (in-place functions, ``out=`` of functions that
run through NumPy, methods such as ``partition`` or ``resize``, ``ufunc.at``, random shuffles
and draws into ``out``) runs on numloom's memory: each case below runs on NumPy and numloom and
returns the written arrays (and views of them), which must agree.
"""

from __future__ import annotations

import io
import pickle
import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom
from numloom.api import fallback

ON_GPU = numloom.get_device() != "cpu"


def _grid(xp, dtype="float64"):
    return xp.arange(12, dtype=dtype).reshape(3, 4)


# --- in-place functions ------------------------------------------------------------------------


def put_basic(xp):
    a = xp.arange(10.0)
    xp.put(a, [0, 2, 5], [-1.0, -2.0, -3.0])
    return a


def put_modes(xp):
    a, b = xp.arange(5), xp.arange(5)
    xp.put(a, [7, -9], [10, 20], mode="clip")
    xp.put(b, [7, -9], [10, 20], mode="wrap")
    return a, b


def put_into_a_view(xp):
    a = xp.arange(10.0)
    xp.put(a[2:], [0, 1], [99.0, 98.0])
    xp.put(a[::3], [1], [-5.0])
    return a


def put_into_pending_work(xp):
    a = xp.arange(6.0) * 2 + 1
    view = a[1:4]
    xp.put(a, [2], [0.5])
    return a, view, view * 2


def put_values_from_itself(xp):
    a = xp.arange(8)
    xp.put(a, [0, 1, 2], a[5:])
    return a


def put_out_of_bounds(xp):
    a = xp.arange(5)
    xp.put(a, [1, 9], [7, 8])
    return a


def what_a_failed_write_leaves(xp):
    a, b, c = xp.arange(5), xp.arange(5.0), xp.zeros(3, dtype="int64")
    numloom.sync()
    errors = []
    for call in (lambda: xp.put(a, [1, 9], [7, 8]), lambda: xp.copyto(c, xp.ones(3)),
                 lambda: xp.put_along_axis(b, xp.asarray([0, 7]), 1.0, axis=0)):  # fmt: skip
        try:
            call()
        except (IndexError, TypeError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    return a, b, c, errors


def put_on_a_read_only_view(xp):
    a = xp.broadcast_to(xp.arange(3.0), (2, 3))
    xp.put(a, [0], [1.0])
    return a


def copyto_basic(xp):
    a = xp.zeros((2, 3))
    xp.copyto(a, xp.arange(3.0))
    return a


def copyto_where(xp):
    a = xp.zeros(6)
    xp.copyto(a, 7.0, where=xp.arange(6) % 2 == 0)
    return a


def copyto_a_strided_view(xp):
    a = xp.zeros(6, dtype="int32")
    xp.copyto(a[::2], [1, 2, 3])
    return a


def copyto_overlapping(xp):
    a = xp.arange(8.0)
    xp.copyto(a[1:], a[:-1])
    return a


def copyto_casting_error(xp):
    a = xp.zeros(3, dtype="int64")
    xp.copyto(a, xp.ones(3))
    return a


def copyto_unsafe_casting(xp):
    a = xp.zeros(3, dtype="int16")
    xp.copyto(a, xp.asarray([1.7, -2.2, 3.9]), casting="unsafe")
    return a


def copyto_from_numpy(xp):
    a = xp.zeros(4)
    xp.copyto(a, numpy.arange(4.0) + 0.5)
    return a


def fill_diagonal_basic(xp):
    a = xp.zeros((4, 4))
    xp.fill_diagonal(a, 5.0)
    return a


def fill_diagonal_wrap(xp):
    a = xp.zeros((7, 3), dtype="int8")
    xp.fill_diagonal(a, 4, wrap=True)
    return a


def fill_diagonal_reshape_view(xp):
    a = _grid(xp)
    xp.fill_diagonal(a.reshape(4, 3), -1.0)
    return a


def fill_diagonal_transposed_view(xp):
    a = _grid(xp)
    xp.fill_diagonal(a.T, [7.0, 8.0, 9.0])
    return a


def place_basic(xp):
    a = xp.arange(8)
    xp.place(a, a > 3, [40, 50])
    return a


def putmask_basic(xp):
    a = xp.arange(8.0)
    xp.putmask(a, a > 2, -a)
    return a


def putmask_repeats_values(xp):
    a = _grid(xp)
    xp.putmask(a[1:], a[1:] % 2 == 0, [100.0, 200.0])
    return a


def put_along_axis_basic(xp):
    a = _grid(xp)
    xp.put_along_axis(a, xp.asarray([[0], [2], [3]]), 0.5, axis=1)
    return a


def nan_to_num_in_place(xp):
    a = xp.asarray([1.0, xp.nan, xp.inf, -xp.inf, 2.0])
    view = a[1:]
    out = xp.nan_to_num(view, copy=False)
    return a, out


def writes_into_complex_parts(xp):
    z = xp.arange(4, dtype="complex128")
    xp.put(z.real, [0, 3], [5.0, 6.0])
    xp.copyto(z.imag[1:], 1.5)
    return z


# --- ufunc.at ----------------------------------------------------------------------------------


def add_at(xp):
    a = xp.zeros(5)
    xp.add.at(a, [0, 0, 1, 4, 4, 4], 1.0)
    return a


def multiply_at_a_view(xp):
    a = xp.arange(1.0, 9.0)
    xp.multiply.at(a[::2], [1, 1, 3], xp.asarray([2.0, 3.0, 10.0]))
    return a


def negative_at(xp):
    a = xp.arange(6)
    xp.negative.at(a, [0, 2, 2])
    return a


# --- out= of functions that run through NumPy --------------------------------------------------


def median_out(xp):
    a = _grid(xp)
    out = xp.zeros(4)
    got = xp.median(a, axis=0, out=out)
    return out, got is out


def nanmax_out_into_a_row(xp):
    a = _grid(xp)
    out = xp.zeros((2, 4))
    got = xp.nanmax(a, axis=0, out=out[1])
    return out, got.shape


def einsum_out(xp):
    a = _grid(xp)
    out = xp.zeros(4)
    got = xp.einsum("ij->j", a, out=out)
    return out, got is out


def percentile_out_into_a_strided_view(xp):
    a = _grid(xp)
    out = xp.zeros(6)
    xp.percentile(a, 50, axis=1, out=out[::2])
    return out


def choose_out(xp):
    out = xp.zeros(3, dtype="int64")
    got = xp.choose([0, 1, 0], [[1, 2, 3], [10, 20, 30]], out=out)
    return out, got is out


def fft_out(xp):
    out = xp.zeros(5, dtype="complex128")
    got = xp.fft.fft(xp.arange(5.0), out=out)
    return out, got is out


def ufunc_numloom_lacks_with_out(xp):
    a, b = xp.asarray([3.0, 4.0]), xp.asarray([1.0, 2.0])
    out = xp.zeros(2)
    got = xp.vecdot(xp.stack([a, b]), xp.stack([b, a]), out=out)
    return out, got is out


def out_of_the_wrong_shape(xp):
    out = xp.zeros(5)
    xp.median(_grid(xp), axis=0, out=out)
    return out


# --- methods -----------------------------------------------------------------------------------


def method_partition(xp):
    a = xp.asarray([7, 1, 5, 3, 9, 2])
    a.partition(2)
    return a[2], xp.sort(a[:2]), xp.sort(a[3:])


def method_partition_a_view(xp):
    a = xp.asarray([[9.0, 1.0, 5.0], [3.0, 8.0, 2.0]])
    a[1].partition(0)
    return a[1, 0], a[0]


def method_put(xp):
    a = _grid(xp)
    a[1].put([0, 3], [-1.0, -2.0])
    return a


def method_resize(xp):
    a = xp.arange(4.0)
    a.resize((2, 3), refcheck=False)
    b = xp.arange(6)
    b.resize(3, refcheck=False)
    return a, b


def method_resize_of_a_view(xp):
    a = xp.arange(6.0)
    a[:3].resize(5, refcheck=False)
    return a


def method_byteswap_in_place(xp):
    a = xp.arange(4, dtype="int32")
    b = a.byteswap()
    a.byteswap(inplace=True)
    return a, b


def method_setfield(xp):
    a = xp.zeros(3, dtype="int64")
    a.setfield(5, "int32", 0)
    return a


def method_setflags(xp):
    a = xp.arange(3.0)
    a.setflags(write=False)
    a[0] = 1.0
    return a


def method_sort_and_fill(xp):
    a = xp.asarray([3.0, 1.0, 2.0, 0.0])
    a[1:].sort()
    b = xp.zeros(4)
    b[::2].fill(5.0)
    return a, b


def methods_that_read(xp):
    a = xp.asarray([4, 1, 3, 2])
    s = xp.sort(a)
    return (a.argpartition(1)[:1], s.searchsorted(3), a.compress([True, False, True]),
            xp.asarray([0, 1, 0]).choose([[1, 2, 3], [4, 5, 6]]), a.getfield(a.dtype))  # fmt: skip


# --- random ------------------------------------------------------------------------------------


def generator_shuffle(xp):
    a = xp.arange(10)
    xp.random.default_rng(3).shuffle(a)
    return a


def generator_shuffle_rows_of_a_view(xp):
    a = _grid(xp)
    xp.random.default_rng(5).shuffle(a[1:])
    return a


def generator_shuffle_a_transposed_view(xp):
    a = _grid(xp)
    xp.random.default_rng(8).shuffle(a.T)
    return a


def legacy_shuffle(xp):
    xp.random.seed(7)
    a = xp.arange(9.0)
    view = a[::2]
    xp.random.shuffle(a)
    if ON_GPU:  # (Philox's order on a GPU, not MT19937's: the write reached a and its view)
        return xp.sort(a), bool((a[::2] == view).all()), bool((a != xp.arange(9.0)).any())
    return a, xp.random.rand(2)


def random_state_shuffle(xp):
    a = xp.arange(6)
    xp.random.RandomState(11).shuffle(a[::2])
    return a


def generator_permuted_out(xp):
    a = _grid(xp)
    got = xp.random.default_rng(2).permuted(a, axis=1, out=a)
    return a, got is a


def generator_draws_into_out(xp):
    rng = xp.random.default_rng(4)
    a, b, c = xp.zeros(5), xp.zeros((2, 2), dtype="float32"), xp.zeros(6)
    r = rng.random(out=a)
    rng.standard_normal(out=b, dtype="float32")
    rng.standard_exponential(out=c[1:4])
    try:
        rng.standard_exponential(out=c[::2])
    except ValueError as e:
        message = str(e)
    return a, b, c, r is a, message


WRITE_CASES = [
    put_basic, put_modes, put_into_a_view, put_into_pending_work, put_values_from_itself,
    put_out_of_bounds, what_a_failed_write_leaves, put_on_a_read_only_view, copyto_basic, copyto_where, copyto_a_strided_view,
    copyto_overlapping, copyto_casting_error, copyto_unsafe_casting, copyto_from_numpy,
    fill_diagonal_basic, fill_diagonal_wrap, fill_diagonal_reshape_view,
    fill_diagonal_transposed_view, place_basic, putmask_basic, putmask_repeats_values,
    put_along_axis_basic, nan_to_num_in_place, writes_into_complex_parts, add_at,
    multiply_at_a_view, negative_at, median_out, nanmax_out_into_a_row, einsum_out,
    percentile_out_into_a_strided_view, choose_out, fft_out, ufunc_numloom_lacks_with_out,
    out_of_the_wrong_shape, method_partition, method_partition_a_view, method_put, method_resize,
    method_resize_of_a_view, method_byteswap_in_place, method_setfield, method_setflags,
    method_sort_and_fill, methods_that_read, generator_shuffle, generator_shuffle_rows_of_a_view,
    generator_shuffle_a_transposed_view, legacy_shuffle, random_state_shuffle,
    generator_permuted_out, generator_draws_into_out,
]  # fmt: skip


@pytest.mark.parametrize("case", WRITE_CASES, ids=lambda f: f.__name__)
def test_writes_reach_the_array(case):
    numpy_compare()(case)()


# --- what numloom promises besides NumPy's results ---------------------------------------------


def test_writes_leave_other_holders_of_the_old_value_alone():
    """A buffer shared by another array or a pending node keeps its value; a NumPy export
    is a view of a's memory, which sees a's writes, as in NumPy."""
    a = numloom.arange(6.0)
    numloom.sync()
    b = a.copy()  # shares a's buffer until one of them is written
    exported = numpy.asarray(a)  # a's memory (its own: b's value is not it)
    doubled = a * 2  # pending work reading a's current value
    numloom.put(a, [0], [-1.0])
    numloom.copyto(b[1:], 9.0)
    numpy.testing.assert_array_equal(a.get(), [-1, 1, 2, 3, 4, 5])
    numpy.testing.assert_array_equal(b.get(), [0, 9, 9, 9, 9, 9])
    cpu = a.device == "cpu"  # (a GPU array's export is a host copy)
    numpy.testing.assert_array_equal(exported, [-1, 1, 2, 3, 4, 5] if cpu else numpy.arange(6.0))
    numpy.testing.assert_array_equal(doubled.get(), numpy.arange(6.0) * 2)


def test_an_unshared_buffer_is_written_in_place():
    if numloom.get_device() != "cpu":
        pytest.skip("CPU buffers")
    a = numloom.arange(1000.0) + 1
    numloom.sync()
    address = a._storage.version.arg.data.ctypes.data  # (holding the version would share it)
    numloom.put(a, [3], [0.0])
    assert a._storage.version.arg.data.ctypes.data == address and a[3] == 0.0 and a[4] == 5.0


def test_a_loop_of_row_writes_run_through_numpy_writes_in_place(monkeypatch):
    """A loop of row writes into a large array, each also read (an RNN's ``y[i] = X[i] * 2``):
    the plan's writes run through NumPy (few runs of each kernel), and each of y's writes goes
    into its old version's memory, which nothing reads afterwards, instead of a copy of the
    whole array per row (quadratic: 14 s for 1000 rows of 610 elements). The values are
    NumPy's, and the arrays a program still holds keep theirs."""
    if numloom.get_device() != "cpu":
        pytest.skip("the CPU's interpreted plans")
    from numloom.core import config

    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 10**6)  # (every kernel through NumPy)

    def rows(xp, n=120):
        X, y = xp.zeros([n, 10, 61]), xp.zeros([n, 10, 61])
        held = None
        for i in range(n):
            X[i] = numpy.full((10, 61), float(i))
            y[i] = X[i] * 2
            if i == 60:
                held = y.copy()  # (a later write must not reach it)
        return X, y, held

    before = numloom.stats()["writes_in_place"], numloom.stats()["kernels_through_numpy"]
    got = rows(numloom)
    numloom.sync()
    assert numloom.stats()["kernels_through_numpy"] - before[1] >= 200
    assert numloom.stats()["writes_in_place"] - before[0] >= 100
    for g, w in zip(got, rows(numpy)):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)


def test_element_reads_see_the_write():
    a = numloom.arange(5.0)
    assert a[1] == 1.0 and list(a)[1] == 1.0
    numloom.put(a, [1], [7.0])
    assert a[1] == 7.0 and list(a)[1] == 7.0 and a.tolist()[1] == 7.0


def test_round_trips_are_counted_and_say_what_they_did():
    """A writing function numloom runs through NumPy on a GPU (``byteswap(inplace=True)``)
    is a counted round trip whose warning says the write comes back."""
    fallback._warned.discard(("ndarray.byteswap", "numpy"))
    before = numloom.stats()["fallbacks"].get("ndarray.byteswap", 0)
    a = numloom.arange(4, dtype=numpy.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a.byteswap(inplace=True)
    numpy.testing.assert_array_equal(a.get(), numpy.arange(4, dtype=numpy.int32).byteswap())
    found = [w for w in caught if issubclass(w.category, numloom.NumloomFallbackWarning)]
    if numloom.get_device() == "cpu":  # NumPy on numloom's own memory: native, quiet
        assert numloom.stats()["fallbacks"].get("ndarray.byteswap", 0) == before and not found
        return
    assert numloom.stats()["fallbacks"]["ndarray.byteswap"] == before + 1
    (warning,) = found
    assert "writes come back into numloom's arrays" in str(warning.message)
    assert warning.filename == __file__


def test_numpy_on_the_cpu_copies_nothing():
    """On the CPU a function numloom runs through NumPy reads numloom's buffer in place and
    the new array it returns becomes numloom's memory: no copy either way, no warning, no
    count (the fallback count means a device round trip)."""
    if numloom.get_device() != "cpu":
        pytest.skip("on a GPU NumPy's inputs are host copies")
    a = numloom.arange(6.0) + 1
    seen = {}

    def twice(x):
        seen["in"], seen["out"] = x, x * 2
        return seen["out"]

    before = numloom.stats()["fallbacks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        got = fallback.call_numpy("sort_complex", twice, a)
    assert numloom.stats()["fallbacks"] == before
    assert numpy.shares_memory(seen["in"], a._storage.version.arg.data)
    assert numpy.shares_memory(seen["out"], got._storage.version.arg.data)
    numpy.testing.assert_array_equal(got.get(), (numpy.arange(6.0) + 1) * 2)
    given = numpy.zeros(6)
    kept = fallback.call_numpy("copyto", lambda x, out: numpy.multiply(x, 1, out=out), a, given)
    assert kept is given  # a NumPy array the caller passed stays theirs
    assert given.flags.writeable


def test_a_writer_numloom_does_not_know_writes_back():
    """A function outside numloom's table of writers first meets read-only arrays (so it
    cannot write where nobody looks), then runs on copies whose changes are written back."""

    def scale_first(x, factor):
        x[0] *= factor
        return x.sum()

    a = numloom.arange(1.0, 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        total = fallback.call_numpy("scale_first", scale_first, a[1:], 10.0)
    assert float(total) == 27.0
    numpy.testing.assert_array_equal(a.get(), [1.0, 20.0, 3.0, 4.0])


def test_a_draw_run_again_draws_the_same_numbers(monkeypatch):
    """Were shuffle unknown, its second run starts from the generator's first state."""
    monkeypatch.delitem(fallback.WRITES, "random.shuffle")
    a = numloom.arange(20)
    want = numpy.arange(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        rng = numloom.random.default_rng(9)
        rng.shuffle(a)
        following = rng.random(2)
    expected = numpy.random.default_rng(9)
    expected.shuffle(want)
    numpy.testing.assert_array_equal(a.get(), want)
    numpy.testing.assert_array_equal(following.get(), expected.random(2))


def test_a_read_only_array_refuses_the_write():
    a = numloom.arange(3.0)
    a.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        numloom.copyto(a, 1.0)
    numpy.testing.assert_array_equal(a.get(), [0.0, 1.0, 2.0])


def test_io_methods_write_numpys_bytes(tmp_path):
    a = numloom.arange(6, dtype="int16").reshape(2, 3)[:, 1:]
    want = numpy.arange(6, dtype="int16").reshape(2, 3)[:, 1:]
    assert a.tobytes() == want.tobytes()
    path = tmp_path / "a.bin"
    a.tofile(path)
    numpy.testing.assert_array_equal(numpy.fromfile(path, "int16"), want.ravel())
    buffer = io.BytesIO()
    a.dump(buffer)
    numpy.testing.assert_array_equal(pickle.loads(buffer.getvalue()), want)
    numpy.testing.assert_array_equal(pickle.loads(a.dumps()).get(), want)


# --- on a GPU (CuPy or none) -------------------------------------------------------------------

GPU_CASES = [put_basic, put_into_a_view, put_into_pending_work, copyto_where, copyto_a_strided_view,
             copyto_overlapping, fill_diagonal_reshape_view, putmask_repeats_values, add_at,
             median_out, nanmax_out_into_a_row, method_partition_a_view, method_resize,
             generator_shuffle_rows_of_a_view, generator_draws_into_out]  # fmt: skip


def _cuda_or_skip():
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda f: f.__name__)
def test_gpu_writes_reach_the_array(case):
    _cuda_or_skip()
    with numloom.device("cuda"):
        numpy_compare()(case)()


@pytest.mark.gpu
def test_gpu_writes_invalidate_host_copies_and_keep_other_holders():
    _cuda_or_skip()
    with numloom.device("cuda"):
        a = numloom.arange(8.0)
        assert a[2] == 2.0  # a host mirror of this version
        b = a.copy()
        numloom.put(a, [2], [-1.0])
        numloom.copyto(a[4:], 0.0)
        assert a[2] == -1.0 and a.tolist() == [0, 1, -1, 3, 0, 0, 0, 0]
        numpy.testing.assert_array_equal((a + 1).get(), [1, 2, 0, 4, 1, 1, 1, 1])
        numpy.testing.assert_array_equal(b.get(), numpy.arange(8.0))
        assert a.device == b.device and a.device.startswith("cuda")


def test_the_arrays_a_call_is_given_are_found_in_order_at_any_depth():
    """``arrays_in`` finds numloom's arrays in lists, tuples (named ones too) and dicts, in
    order, and nothing else (NumPy's arrays, scalars, strings)."""
    import collections

    from numloom.api.writes import arrays_in

    a, b, c, d = (numloom.asarray(numpy.arange(3.0) + i) for i in range(4))
    pair = collections.namedtuple("pair", "x y")
    given = ((a, [1, "s", (b, numpy.ones(2))], pair(c, 2.0)), {"out": (d,), "k": None})
    assert [id(x) for x in arrays_in(given)] == [id(a), id(b), id(c), id(d)]
    assert arrays_in(a) == [a] and arrays_in(([], {}, 3)) == [] and arrays_in({"x": [b]}) == [b]

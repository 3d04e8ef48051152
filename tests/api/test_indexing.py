"""``a[key]`` and ``a[key] = value`` against NumPy: every kind of key for reading and writing,
writes through views (and what every other view then sees), read-only views, NumPy's errors
with NumPy's messages, and out-of-bounds index arrays that are only known at a sync.

The tables run on the reference executor (NumPy node by node: exact, compiles nothing);
``test_compiled_*`` run the same kind of programs through the generated C.
"""

from __future__ import annotations

import re
import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom

SHAPE = (4, 5, 6)


pytestmark = pytest.mark.usefixtures("reference_executor")


def arange(xp, shape=SHAPE, dtype="int64"):
    return xp.asarray(numpy.arange(numpy.prod(shape)).reshape(shape).astype(dtype))


def on(xp, key):
    """``key`` with its lists made arrays of ``xp`` (numloom index arrays for numloom)."""
    entries = key if isinstance(key, tuple) else (key,)
    return tuple(xp.asarray(numpy.asarray(k)) if isinstance(k, list) else k for k in entries)


MASK_2D = numpy.arange(30).reshape(5, 6) % 3 == 0
MASK_3D = numpy.arange(120).reshape(SHAPE) % 7 < 3

# Keys for an array of shape (4, 5, 6), each valid: basic, advanced, mixed, boolean.
KEYS = [
    0, -1, 3, -4, (1, 2), (-1, -2, -3), (1, 2, 3), (),
    slice(None), slice(None, None, -1), slice(1, 3), slice(-3, None), slice(10, -10, -2),
    slice(-100, 100), slice(100, -100, -3), slice(5, 5), slice(None, None, 3), slice(3, 0, -2),
    (slice(None), slice(None, None, -2), slice(1, None, 4)), (slice(1, 3), slice(None), 0),
    (slice(None), None, 1), (None, Ellipsis, None), (Ellipsis, 1), (1, Ellipsis, 2),
    (Ellipsis, slice(None, None, -1)), Ellipsis, None, (0, None, slice(2, 4), None),
    [0, 2], [[0, 1], [2, 3]], [-1, 0, -4], ([0, -1], [1, 2]), ([0, 1], slice(None), [2, 3]),
    (slice(None), [0, 1], [2, 3]), (0, slice(None), [1, 2]), ([0, 1], 1, [2, 3]),
    (slice(1, 3), [[0], [1]], [0, 1, 2]), (None, [0, 1], None, [2, 3]), (Ellipsis, [0, -1]),
    ([0, 1], [[0], [1]], [0]), (slice(None), [[1, 0], [0, 1]], 0), ([0, 1], Ellipsis, [0, 1]),
    ([0, 1], None, [0, 1]), ([1, 1, 1],), ([], ), (slice(None, None, -1), [3, 0], slice(4, 0, -2)),
    (1, [2], slice(None), ), ([[[0]]], 1, [[1, 2]]),
    [True, False, True, False], (slice(None), [True, False, True, False, True]),
    (1, [True, False, True, False, True]), (MASK_3D,), (MASK_2D,), (1, MASK_2D),
    (Ellipsis, [True] * 6), (numpy.ones((4, 5), bool), 1),
    True, False, (True, 1), (Ellipsis, False), ([0, 1], True), (None, True, [1, 2]),
    numpy.array(1), (numpy.array(2), slice(None), numpy.array(-1)), numpy.int8(1),
    (numpy.uint64(2), numpy.int16(-1)), ((0, 1),), ((0, 1), (2, 3)), (range(2), 0),
]  # fmt: skip


@pytest.mark.parametrize("key", KEYS, ids=repr)
@numpy_compare()
def test_getitem(xp, key):
    return arange(xp)[key]


@pytest.mark.parametrize("key", KEYS, ids=repr)
@numpy_compare()
def test_getitem_with_array_indices_of_the_library(xp, key):
    return arange(xp)[on(xp, key)]


@pytest.mark.parametrize("key", KEYS, ids=repr)
@numpy_compare()
def test_setitem_scalar(xp, key):
    a = arange(xp)
    a[key] = -7
    return a


@pytest.mark.parametrize("key", KEYS, ids=repr)
@numpy_compare()
def test_setitem_array_of_the_result_shape(xp, key):
    a = arange(xp)
    shape = numpy.empty(SHAPE)[key].shape
    a[on(xp, key)] = xp.asarray(numpy.arange(numpy.prod(shape)).reshape(shape) + 1000)
    return a


@pytest.mark.parametrize("key", KEYS, ids=repr)
@numpy_compare()
def test_setitem_broadcast_value_with_leading_ones(xp, key):
    a = arange(xp)
    shape = numpy.empty(SHAPE)[key].shape
    last = shape[-1:] if shape else ()
    a[key] = xp.asarray(numpy.arange(numpy.prod(last)).reshape((1, 1) + last) - 50)
    return a


@pytest.mark.parametrize("key", KEYS[:30], ids=repr)
@numpy_compare()
def test_getitem_of_a_strided_view(xp, key):
    return arange(xp, (8, 5, 12))[::-2, :, 1::2][key]


@pytest.mark.parametrize("key", KEYS[:45], ids=repr)
@numpy_compare()
def test_setitem_through_a_transposed_view_changes_the_base(xp, key):
    base = arange(xp, (6, 5, 4))
    view = base.T
    view[key] = -1
    return base, view


# --- values and their casts ------------------------------------------------------------------

VALUES = [
    ("int8", 300), ("int8", -129), ("uint8", -1), ("int64", 2**63), ("uint64", 2**64 - 1),
    ("uint64", 2**64), ("int64", float("nan")), ("int32", float("inf")), ("int16", 2.7),
    ("int16", -2.7), ("bool", 5), ("float32", 1e300), ("float64", 1 + 2j), ("int8", "5"),
    ("int8", "x"), ("float16", numpy.float64(70000.0)), ("uint8", numpy.int64(-3)),
    ("complex64", numpy.complex128(1 + 1j)), ("int64", numpy.float32("nan")), ("bool", 0.0),
]  # fmt: skip


@pytest.mark.parametrize("dtype, value", VALUES, ids=repr)
@pytest.mark.parametrize("key", [1, slice(1, 3), [0, 2]], ids=repr)
@numpy_compare()
def test_setitem_converts_scalars_as_numpy(xp, dtype, value, key):
    """NaN or inf into integers raise ValueError, Python ints out of range OverflowError."""
    a = xp.zeros(4, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        a[key] = value
    return a


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "bool", "float16"])
@pytest.mark.parametrize("key", [slice(None), [0, 1, 2, 3]], ids=repr)
@numpy_compare()
def test_setitem_casts_arrays_unsafely(xp, dtype, key):
    a = xp.zeros(4, dtype)
    a[key] = xp.asarray([2.0**40 + 5.5, -1.5, 300.25, -129.0])
    b = xp.zeros(4, dtype)
    b[key] = xp.asarray([2**40 + 5, -1, 300, -129])
    return a, b


@numpy_compare()
def test_setitem_with_lists_and_numpy_values(xp):
    a = arange(xp, (3, 4))
    a[1] = [1, 2, 3, 4]
    a[:, 0] = [9, 8, 7]
    a[[0, 2], 1:3] = numpy.array([[1.5], [2.5]], numpy.float32)
    a[0] = numpy.int8(-5)
    return a


@pytest.mark.parametrize("value", [numpy.array(["1", "-2"]), numpy.array([b"3", b"4"]),
                                   numpy.array([5, 6], object), numpy.array("7"),
                                   numpy.array(["8", "x"])], ids=repr)  # fmt: skip
@pytest.mark.parametrize("key", [Ellipsis, slice(None, 2), [1, 0]], ids=repr)
@numpy_compare()
def test_setitem_parses_numpys_strings_and_objects(xp, value, key):
    """A NumPy array of strings or objects written into an array of numbers is converted as
    NumPy converts it (strings parsed, NumPy's ValueError for one that is no number), into a
    computed, a pending and a large array alike (the pending one raised numloom's OtherDtype)."""
    made = []
    for a in (xp.zeros(2, "int64"), xp.ones(2) * 3, xp.zeros(5000, "int16")[:2]):
        a[key] = value
        made.append(a)
    return made


@numpy_compare()
def test_setitem_duplicate_indices_last_wins(xp):
    a = arange(xp, (5,))
    a[[0, 0, 1, 0]] = xp.asarray([1, 2, 3, 4])
    b = arange(xp, (5,))
    b[[0, 0, 1]] += 10  # each element incremented once, as NumPy's buffered ufunc
    return a, b


@numpy_compare()
def test_setitem_zero_d(xp):
    a = arange(xp, ())
    a[()] = 5
    b = a[...]
    b[...] = 7
    return a, b, a[()], arange(xp, (3,))[1][()]


@numpy_compare()
def test_fill_of_a_view(xp):
    a = arange(xp, (3, 4))
    a[1].fill(3)
    a[:, ::3].fill(-1)
    return a


# --- writes through views: every view of the storage sees them ----------------------------------


@numpy_compare()
def test_shifted_add_reads_the_old_values(xp):
    a = arange(xp, (10,))
    a[1:] += a[:-1]
    b = arange(xp, (10,))
    b[:-1] += b[1:]
    c = arange(xp, (10,))
    c[1:] = c[:-1]
    d = arange(xp, (10,))
    d[::-1] = d
    return a, b, c, d


@numpy_compare()
def test_overlapping_two_dimensional_writes(xp):
    a = arange(xp, (5, 5), "float64")
    a[1:, 1:] = a[:-1, :-1] * 2
    b = arange(xp, (3, 3), "float64")
    b[...] = b.T
    c = arange(xp, (3, 3), "float64")
    c += c.T
    return a, b, c


@numpy_compare()
def test_jacobi_sweeps_through_a_center_view(xp):
    grid = xp.zeros((8, 8))
    grid[0, :] = 1.0
    grid[:, 0] = 2.0
    center = grid[1:-1, 1:-1]
    for _ in range(5):
        center[:] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])
    return grid, center


@numpy_compare()
def test_mask_assignment(xp):
    x = arange(xp, (4, 5), "float64") - 7
    x[x < 0] = 0
    y = arange(xp, (4, 5), "float64") - 7
    y[y > 5] = xp.asarray([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0])
    return x, y


@numpy_compare()
def test_mask_assignment_on_a_view_changes_the_base(xp):
    a = arange(xp, (4, 5), "float64") - 7
    x = a[1:, ::2]
    x[x < 5] = 0
    b = arange(xp, (4, 5), "float64") - 7
    y = b[::-1, 1:]
    mask = y < 5
    y[mask] = xp.arange(8) * 10.0
    return a, x, b, y


@numpy_compare()
def test_write_through_transpose(xp):
    a = arange(xp, (3, 4))
    v = a.T
    v[0] = 1
    v[1:, 1] = 99
    return a, v


@numpy_compare()
def test_write_through_reshape_and_ravel(xp):
    a = arange(xp, (3, 4))
    a.reshape(4, 3)[1] = -5
    a.reshape(-1)[::5] = 100
    a.ravel()[-1] = 7
    a[:, 1:].reshape(3, 3)[0, 0] = 42  # a copy: the base is unchanged
    return a


@numpy_compare()
def test_chained_views_of_views(xp):
    a = arange(xp, (6, 8))
    b = a[1:, ::2]
    c = b[::-2, 1:]
    d = c.T[1]
    d[:] = -1
    e = a[2:4]
    return a, b, c, d, e


@numpy_compare()
def test_write_a_view_then_read_the_base_and_an_overlapping_view(xp):
    a = arange(xp, (10,))
    v, w = a[2:7], a[5:]
    v[:] = 0
    w[::2] += 100
    return a, v, w


@numpy_compare()
def test_write_the_base_then_read_views(xp):
    a = arange(xp, (4, 4))
    v = a[::2, 1:]
    t = a.T
    a[...] = -a
    a[0, 1] = 1000
    return v, t


@numpy_compare()
def test_fancy_write_on_a_view_changes_the_base(xp):
    a = arange(xp, (4, 6))
    v = a[1:, ::2]
    v[[0, 2], 1] = -1
    v[:, [True, False, True]] *= 10
    return a, v


@numpy_compare()
def test_fancy_read_is_a_copy(xp):
    a = arange(xp, (4, 6))
    picked = a[[0, 2]]
    masked = a[a > 20]
    a[...] = 0
    return picked, masked


@pytest.mark.parametrize(
    "write",
    [
        lambda b: b.__setitem__(0, 1),
        lambda b: b.__setitem__((Ellipsis, 1), 1),
        lambda b: b.__setitem__([0], 1),
        lambda b: b.__setitem__(b > 0, 1),
        lambda b: b[0].__setitem__(1, 1),
        lambda b: b.T.__setitem__(0, 1),
        lambda b: b.reshape(3, 2).__setitem__(0, 1),
        lambda b: b.__iadd__(1),
        lambda b: b.fill(0),
    ],
)
@numpy_compare()
def test_broadcast_to_is_read_only(xp, write):
    b = xp.broadcast_to(arange(xp, (3,)), (2, 3))
    write(b)
    return b


@numpy_compare()
def test_diagonal_is_read_only(xp):
    d = arange(xp, (3, 3)).diagonal()
    d[0] = 5
    return d


# --- NumPy's errors, with NumPy's messages ---------------------------------------------------

BAD_KEYS = [
    (1, 2, 3, 4), (0, 0, 0, Ellipsis, 0), (Ellipsis, Ellipsis), 4, -5, (0, 5), (0, 0, -7),
    1.5, (1, 2.0), "x", (slice(None), "a"), [1.0], [0, 4], [[0, 1], [2, -5]], ([0, 1], [0, 1, 2]),
    ([0, 1], slice(None), [[0, 1, 2]]), [True, False], (slice(None), [True] * 6),
    numpy.ones((4, 4), bool), numpy.array([1.5]), numpy.array([1], numpy.float32), {1: 2},
    [0, slice(None)], (None, 7), [[[0]], [[9]]], object(),
]  # fmt: skip


def _key_id(key) -> str:
    """A test id that is the same in every process (an object's repr holds its address)."""
    return "object()" if type(key) is object else repr(key)


@pytest.mark.parametrize("key", BAD_KEYS, ids=_key_id)
@numpy_compare()
def test_getitem_errors(xp, key):
    return arange(xp)[key]


@pytest.mark.parametrize("key", BAD_KEYS, ids=_key_id)
@numpy_compare()
def test_setitem_errors(xp, key):
    a = arange(xp)
    a[key] = 1
    return a


@pytest.mark.parametrize("key", [[1.0], numpy.array([1.5]), [[True]], [0, 9]], ids=repr)
@numpy_compare()
def test_index_arrays_of_the_library_raise_at_the_call(xp, key):
    """A computed numloom index array is checked when it is used, as a NumPy one."""
    return arange(xp)[xp.asarray(numpy.asarray(key))]


VALUE_SHAPE_ERRORS = [
    (1, (3,)), (slice(0, 2), (3, 5, 6)), (slice(None), (2, 1, 6)), ((0, 0), (5,)),
    (Ellipsis, (4, 5, 7)), ([0, 1], (3, 5, 6)), (([0, 1], [1, 2]), (3,)),
    ((slice(None), [0, 1]), (4, 3, 6)), ([[0], [1]], (2, 2, 5, 5)),
    ((1, [True, False, True, False, True]), (4,)), ((slice(None), [True] * 5), (2, 6)),
]  # fmt: skip


@pytest.mark.parametrize("key, shape", VALUE_SHAPE_ERRORS, ids=repr)
@numpy_compare()
def test_value_shape_mismatch(xp, key, shape):
    a = arange(xp)
    a[key] = xp.ones(shape, "int64")
    return a


@pytest.mark.parametrize("shape", [(3,), (0,), (1, 1), (2, 4), (1, 40), (40, 1), (2,)])
@numpy_compare()
def test_boolean_mask_assignment_value_errors(xp, shape):
    """NumPy's own rule for one mask of the array's shape: the value is 0-d or 1-d, of one
    element or one per True."""
    a = arange(xp, (8, 10))
    a[a > 39] = xp.ones(shape, "int64")
    return a


@pytest.mark.parametrize("value", [numpy.ones(1), numpy.ones((1, 1)), [3], [[3]], "7"], ids=repr)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
@numpy_compare()
def test_one_element_takes_only_a_scalar(xp, value, dtype):
    """A full integer key stores one element: NumPy refuses any array or list for it."""
    a = xp.zeros((3, 4), dtype)
    a[1, 2] = value if isinstance(value, (list, str)) else xp.asarray(value)
    return a


# --- out-of-bounds index arrays known only at a sync -----------------------------------------


def pending(values):
    """An index array that is not computed yet (its bounds can only be checked when it is; a
    small array built from a list would compute at once, as NumPy's)."""
    zeros = numloom.asarray(numpy.zeros(numpy.shape(values), numpy.int64))
    return zeros + numloom.asarray(numpy.array(values))


def test_pending_out_of_bounds_index_raises_at_the_next_sync():
    a = numloom.arange(10) * 1.0
    idx = numloom.arange(5) * 3  # 12 is out of bounds
    b = a[idx]
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 10"):
        print(b)


def test_after_a_bad_index_every_other_array_keeps_its_value():
    a = numloom.arange(10) * 1.0
    keep = a + 1
    idx = numloom.arange(5) * 3
    b = a[idx]
    c = a * 2  # computed in the same batch
    d = numloom.arange(10) * 10
    d[idx] = -1  # written through the bad index: keeps its old value
    with pytest.raises(IndexError):
        numloom.sync()
    numpy.testing.assert_array_equal(keep.get(), numpy.arange(10) + 1.0)
    numpy.testing.assert_array_equal(c.get(), numpy.arange(10) * 2.0)
    numpy.testing.assert_array_equal(d.get(), numpy.arange(10) * 10)
    numpy.testing.assert_array_equal(idx.get(), numpy.arange(5) * 3)
    with pytest.raises(IndexError):
        b.get()
    numpy.testing.assert_array_equal((numloom.arange(3) + d[:3]).get(), [0, 11, 22])


def test_a_bad_write_through_a_view_leaves_the_base_alone():
    base = numloom.arange(10)
    view = base[2:]
    view[pending([0, 8])] += 1
    with pytest.raises(IndexError, match="index 8 is out of bounds for axis 0 with size 8"):
        numloom.sync()
    numpy.testing.assert_array_equal(base.get(), numpy.arange(10))
    numpy.testing.assert_array_equal(view.get(), numpy.arange(2, 10))


def test_a_pending_index_error_names_the_user_line():
    b = numloom.arange(4)[pending([4])]
    with pytest.raises(IndexError) as info:
        b.get()
    assert any("test_indexing.py" in note for note in getattr(info.value, "__notes__", []))


# Keys built by ``P`` (numpy.array for NumPy, ``pending`` for numloom) for an array (3, 4, 5).
PENDING_KEYS = [
    lambda P: P([0, 3]),
    lambda P: (slice(None), P([5])),
    lambda P: (None, slice(None), P([0, 4])),
    lambda P: (P([0, 1]), slice(None), P([0, 7])),
    lambda P: (1, slice(None), P([0, -8])),
    lambda P: (Ellipsis, P([-6])),
    lambda P: (None, P([1]), None, P([9])),
    lambda P: (P([1]), 1, P([9])),
    lambda P: (P([1, 1]), P([2, 2]), P([0, 5])),
    lambda P: (slice(None), slice(None), P([[0, 1], [2, -7]])),
    lambda P: (True, P([3])),
    lambda P: (slice(1, None), slice(None, None, -1), P([5])),
    lambda P: (P([0, 5]), P([9, 0])),
    lambda P: (P([[1, -4], [5, 0]]), slice(None), P([[0], [-7]])),
    lambda P: (P([1, 2]), P([[-5], [4], [9]])),
]


@pytest.mark.parametrize("key", PENDING_KEYS, ids=range(len(PENDING_KEYS)))
@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("backend", ["numpy", "compiled"])
def test_pending_out_of_bounds_errors_name_numpys_axis(key, write, backend, monkeypatch):
    """The message names the index and axis NumPy names at the call: the first index out of
    bounds, in C order, of the first index array that has one."""
    monkeypatch.setenv("NUMLOOM_BACKEND", backend)
    with pytest.raises(IndexError) as want:
        numpy.zeros((3, 4, 5))[key(numpy.array)]
    a = numloom.zeros((3, 4, 5))
    if write:
        a[key(pending)] = 1
    else:
        a = a[key(pending)]
    with pytest.raises(IndexError) as got:
        a.get()
    assert str(got.value) == str(want.value)


def test_good_pending_indices_read_and_write():
    a = numloom.arange(24).reshape(4, 6)
    rows, cols = pending([3, -4]), pending([[0], [-1]])
    got = a[rows, 1:][:, cols[:, 0]]
    a[rows, cols] = -1
    host = numpy.arange(24).reshape(4, 6)
    want = host[[3, -4], 1:][:, [0, -1]]
    host[numpy.array([3, -4]), numpy.array([[0], [-1]])] = -1
    numpy.testing.assert_array_equal(got.get(), want)
    numpy.testing.assert_array_equal(a.get(), host)


def test_an_array_computed_from_a_failed_write_sees_the_old_value():
    d = numloom.arange(10) * 10
    d[numloom.arange(5) * 3] = -1  # index 12: the write never happens
    e = d + 1
    with pytest.raises(IndexError):
        numloom.sync()
    numpy.testing.assert_array_equal(e.get(), numpy.arange(10) * 10 + 1)


def test_writes_after_a_failed_write_still_happen():
    """Only the failed write is skipped: the writes after it (and arrays computed from them)
    see the storage as if it had never been tried."""
    d = numloom.arange(10) * 10
    d[numloom.arange(5) * 3] = -1  # index 12
    d[0] = 5
    e = d * 2
    with pytest.raises(IndexError, match="index 12 is out of bounds"):
        numloom.sync()
    want = numpy.arange(10) * 10
    want[0] = 5
    numpy.testing.assert_array_equal(d.get(), want)
    numpy.testing.assert_array_equal(e.get(), want * 2)


def test_pending_error_names_the_first_bad_index():
    a = numloom.arange(5)
    b = a[pending([-7, 9])]
    with pytest.raises(IndexError, match="index -7 is out of bounds for axis 0 with size 5"):
        b.get()


def test_the_first_bad_index_of_a_long_index_array_is_named(compiled):
    """Many threads find bad indices; NumPy names the first in C order."""
    n = 200_000
    idx = numloom.arange(n) % 7
    idx[150_000] = -n
    idx[120_000] = 3 * n
    idx[190_000] = n
    with pytest.raises(IndexError, match=f"index {3 * n} is out of bounds for axis 0 with size 7"):
        numloom.arange(7.0)[idx].sum().get()


# --- the same programs through the generated C -----------------------------------------------


@pytest.mark.parametrize(
    "program",
    [
        test_shifted_add_reads_the_old_values,
        test_overlapping_two_dimensional_writes,
        test_jacobi_sweeps_through_a_center_view,
        test_mask_assignment_on_a_view_changes_the_base,
        test_chained_views_of_views,
        test_write_a_view_then_read_the_base_and_an_overlapping_view,
        test_fancy_write_on_a_view_changes_the_base,
        test_setitem_duplicate_indices_last_wins,
        test_pending_out_of_bounds_index_raises_at_the_next_sync,
        test_after_a_bad_index_every_other_array_keeps_its_value,
        test_an_array_computed_from_a_failed_write_sees_the_old_value,
        test_writes_after_a_failed_write_still_happen,
        test_pending_error_names_the_first_bad_index,
    ],
    ids=lambda f: f.__name__[5:],
)
def test_compiled(program, compiled):
    program()


@pytest.mark.parametrize("key", KEYS[::3], ids=repr)
def test_compiled_setitem_through_a_view(key, compiled):
    test_setitem_through_a_transposed_view_changes_the_base(key)


def test_compiled_scalar_write_after_an_in_place_op(compiled):
    """Two constants in one scatter kernel (its locals were once both named 'c1')."""
    a = numloom.asarray(numpy.arange(6).reshape(2, 3))
    a *= 3
    a[0, 0] = -9
    numpy.testing.assert_array_equal(a.get(), [[-9, 3, 6], [9, 12, 15]])


def test_compiled_float_into_small_integers_casts_as_numpy(compiled):
    """Through int32 as NumPy's C cast on x86: 2**40 + 5.5 gives 0, not its low bits."""
    a = numloom.zeros(2, "int8")
    a[:] = numloom.asarray([2.0**40 + 5.5, 300.25])
    numpy.testing.assert_array_equal(a.get(), numpy.array([2.0**40 + 5.5, 300.25]).astype("int8"))


def test_compiled_empty_fancy_write_is_a_no_op(compiled):
    a = numloom.arange(6) * 2
    a[numpy.array([], numpy.intp)] = 5
    a[[]] += 1
    numpy.testing.assert_array_equal(a.get(), numpy.arange(6) * 2)


@pytest.mark.skipif(numloom.get_device() == "cpu", reason="an index array on a GPU")
def test_a_device_index_array_stays_on_the_device():
    """An evaluated integer index on a GPU is checked by its minimum and maximum (two values
    read back), not copied to the host; one out of bounds gets NumPy's error at the call."""
    x = numloom.arange(100_000.0)
    idx = numloom.arange(99_999, -1, -7) - 3  # (negatives count from the end)
    numloom.evaluate(idx)
    before = numloom.stats()["device_to_host_bytes"]
    got = x[idx]
    assert numloom.stats()["device_to_host_bytes"] - before <= 64
    want = numpy.arange(100_000.0)[numpy.arange(99_999, -1, -7) - 3]
    numpy.testing.assert_array_equal(got.get(), want)
    bad = numloom.asarray(numpy.array([1, 100_000, 2]))
    numloom.evaluate(bad * 1)
    bad = bad * 1
    numloom.evaluate(bad)
    with pytest.raises(IndexError, match="index 100000 is out of bounds for axis 0 with size"):
        x[bad]
    numpy.testing.assert_array_equal(x[:3].get(), [0.0, 1.0, 2.0])  # (x keeps its value)


@pytest.mark.parametrize("shape, key, ats", [
    ((7, 5000), (slice(None), numpy.zeros(6000, numpy.intp)), [1]),
    ((7, 5000), (numpy.zeros((100, 50), numpy.intp),), [0]),
    ((3, 4, 5000), (1, None, Ellipsis, numpy.zeros((2, 3000), numpy.intp)), [3]),
    ((3, 4, 5000), (slice(1, 2), numpy.zeros(5000, numpy.intp), slice(None)), [1]),
    ((1, 1, 5000), (None, 0, numpy.zeros((1, 5000), numpy.intp), None), [2]),
    ((1000, 1000), (numpy.zeros(6000, numpy.intp), numpy.zeros(6000, numpy.uint32)), [0, 1]),
    ((9, 1000, 8), (numpy.zeros((6000, 1), numpy.intp), slice(None), numpy.zeros(3, numpy.intp)),
     [0, 2]),
    # NumPy's errors: indices that do not broadcast, too many indices
    ((1000, 1000), (numpy.zeros(6000, numpy.intp), numpy.zeros(5000, numpy.intp)), [0, 1]),
    ((7, 5000), (0, 0, numpy.zeros(6000, numpy.intp)), [2]),
])  # fmt: skip
def test_a_key_of_large_device_indices_is_checked_without_them(shape, key, ats):
    """Large index arrays on a GPU (only their shapes on the host) are checked as NumPy's
    indexing checks them, from small probes of their broadcast rank: the same error, or none."""
    from numloom.api import indexing

    stand_in = numpy.broadcast_to(numpy.zeros((), numpy.int8), shape)
    try:
        stand_in[key]
    except IndexError as e:
        with pytest.raises(IndexError, match=re.escape(str(e))):
            indexing._check_with_probes(stand_in, list(key), ats)
    else:
        indexing._check_with_probes(stand_in, list(key), ats)


# --- an integer result where NumPy gives a scalar indexes as that scalar: a view -----------------


@numpy_compare()
def test_an_index_by_a_reduction_result_is_a_view_that_writes_reach(xp):
    """``j = argmin(x); col = v[:, j]; col += 1`` (scientific-python-lectures' Markov chain):
    NumPy's j is a scalar, so col is a view of v and the write is v's."""
    v = xp.zeros((3, 4))
    j = xp.argmin(xp.asarray([5, 1, 7, 2]))
    col = v[:, j]
    col += 1
    k = xp.sum(xp.asarray([1, 1]))
    row = v[k]
    row[:] = 7
    v[k][0] = 5
    v[j, xp.argmax(xp.asarray([0, 3]))] = -1
    return v, col.base is v, int(j), int(k)


class _Index:
    """A program's integer: NumPy reads it through ``__index__``."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


@numpy_compare()
def test_an_object_with_index_is_an_integer_index(xp):
    """An object with ``__index__`` indexes as its int: a full integer index gives NumPy's
    scalar, also beside an index array or an object whose ``__array__`` gives one of ``xp``."""

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return xp.array(1)

    a = arange(xp, (2, 3))
    b = xp.zeros((2, 2))
    b[_Index(1), _Index(0)] = 5
    got = [a[_Index(1)], a[_Index(1), _Index(-1)], a[:, _Index(2)], b[_Index(1), xp.array(0)],
           a[_Index(0), ArrayLike()], a[_Index(0), [1, 2]]]  # fmt: skip
    return [(type(g).__name__ if numpy.ndim(g) == 0 else "", g) for g in got]


@pytest.mark.parametrize("key", [slice(None), Ellipsis])
def test_a_sweep_written_over_a_whole_view_is_numpys_and_a_failed_one_keeps_the_values(key):
    """``center[:] = expr`` (a stencil's sweep, which takes a short path) and ``center[...] =
    expr`` give NumPy's grid; a value that fails at the sync (an integer division by zero,
    with NumPy's error raised as errors) leaves the grid as it was."""
    grids = {}
    for xp in (numpy, numloom):
        g = xp.arange(36.0).reshape(6, 6)
        center, north, south = g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1]
        for _ in range(3):
            center[key] = 0.5 * (north + south)
        grids[xp] = numpy.asarray(g).tolist()
    assert grids[numloom] == grids[numpy]
    ints = numloom.arange(16).reshape(4, 4)
    inner = ints[1:-1, 1:-1]
    with numloom.errstate(divide="raise"), pytest.raises(FloatingPointError):
        inner[key] = inner // numloom.zeros((2, 2), int)
        numloom.sync()
    assert ints.tolist() == numpy.arange(16).reshape(4, 4).tolist()

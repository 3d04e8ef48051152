"""The view functions against NumPy: reshape, ravel, transpose, swapaxes, moveaxis, squeeze,
expand_dims, broadcast_to, broadcast_arrays, diagonal. Each is checked for its values and
errors, and for aliasing: a write through the view is seen by the base, a write to the base is
seen by the view (and a copy, where NumPy makes one, sees neither)."""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom

pytestmark = pytest.mark.usefixtures("reference_executor")


def arange(xp, shape=(2, 3, 4), dtype="int64"):
    return xp.asarray(numpy.arange(numpy.prod(shape)).reshape(shape).astype(dtype))


# Each entry: (name, how to make the input, the view function). Inputs are contiguous arrays,
# transposed arrays and strided slices, so that views of views are covered too.
INPUTS = {
    "c": lambda xp: arange(xp),
    "t": lambda xp: arange(xp).T,
    "s": lambda xp: arange(xp, (4, 3, 8))[::2, :, 1::2],
    "r": lambda xp: arange(xp)[::-1, :, ::-1],
    "ones": lambda xp: arange(xp, (1, 3, 1, 4)),
    "f": lambda xp: arange(xp, dtype="float64") / 7,
    "z": lambda xp: xp.asarray(numpy.arange(24).reshape(2, 3, 4) * (1 - 2j)),
    "zt": lambda xp: xp.asarray(numpy.arange(24).reshape(2, 3, 4) * (2 + 1j)).T,
    "zs": lambda xp: xp.asarray(numpy.arange(96).reshape(4, 3, 8) * (1 + 3j))[::2, :, 1::2],
    "z64": lambda xp: xp.asarray(numpy.arange(24).reshape(2, 3, 4) * (1 - 1j), "complex64"),
    "z0": lambda xp: xp.asarray(3 - 4j),
}

VIEWS = [
    ("reshape -1", "c", lambda xp, a: a.reshape(-1, 4)),
    ("reshape tuple", "c", lambda xp, a: a.reshape((4, -1))),
    ("reshape function", "c", lambda xp, a: xp.reshape(a, (3, 8))),
    ("reshape same", "c", lambda xp, a: a.reshape(2, 3, 4)),
    ("reshape split", "t", lambda xp, a: a.reshape(2, 2, 3, 2)),
    ("reshape of transpose", "t", lambda xp, a: a.reshape(-1)),
    ("reshape of slice", "s", lambda xp, a: a.reshape(2, 12)),
    ("reshape of reversed", "r", lambda xp, a: a.reshape(6, 4)),
    ("reshape keeps strided axes", "s", lambda xp, a: a.reshape(2, 3, 2, 2)),
    ("reshape drops ones", "ones", lambda xp, a: a.reshape(3, 4)),
    ("reshape adds ones", "c", lambda xp, a: a.reshape(1, 2, 1, 12, 1)),
    ("reshape order F", "c", lambda xp, a: a.reshape(4, 6, order="F")),
    ("reshape order F of transpose", "t", lambda xp, a: a.reshape(12, 2, order="F")),
    ("reshape order A", "t", lambda xp, a: a.reshape(-1, order="A")),
    ("reshape copy=False", "c", lambda xp, a: a.reshape(6, 4, copy=False)),
    ("reshape copy=True", "c", lambda xp, a: xp.reshape(a, (6, 4), copy=True)),
    ("ravel", "c", lambda xp, a: a.ravel()),
    ("ravel of transpose", "t", lambda xp, a: xp.ravel(a)),
    ("ravel order F", "t", lambda xp, a: a.ravel(order="F")),
    ("ravel order K", "t", lambda xp, a: a.ravel(order="K")),
    ("ravel order K reversed", "r", lambda xp, a: a.ravel(order="K")),
    ("ravel order A", "s", lambda xp, a: a.ravel(order="A")),
    ("ravel of a strided 1-d", "c", lambda xp, a: a.reshape(-1)[::2].ravel()),
    ("ravel of one column", "c", lambda xp, a: a[:, :, :1].ravel()),
    ("ravel of one row", "c", lambda xp, a: a[1:2].ravel()),
    ("ravel order F of a strided", "s", lambda xp, a: a.T.ravel(order="F")),
    ("flatten", "c", lambda xp, a: a.flatten()),
    ("T", "c", lambda xp, a: a.T),
    ("mT", "s", lambda xp, a: a.mT),
    ("transpose axes", "c", lambda xp, a: a.transpose(1, 0, 2)),
    ("transpose tuple", "s", lambda xp, a: a.transpose((2, 0, 1))),
    ("transpose negative", "c", lambda xp, a: xp.transpose(a, (-1, 0, 1))),
    ("permute_dims", "t", lambda xp, a: xp.permute_dims(a, (1, 2, 0))),
    ("swapaxes", "c", lambda xp, a: xp.swapaxes(a, 0, 2)),
    ("swapaxes negative", "r", lambda xp, a: a.swapaxes(-1, 1)),
    ("moveaxis", "c", lambda xp, a: xp.moveaxis(a, 0, -1)),
    ("moveaxis several", "s", lambda xp, a: xp.moveaxis(a, [0, 1], [-1, -2])),
    ("squeeze", "ones", lambda xp, a: a.squeeze()),
    ("squeeze axis", "ones", lambda xp, a: a.squeeze(axis=2)),
    ("squeeze axes", "ones", lambda xp, a: xp.squeeze(a, axis=(0, -2))),
    ("expand_dims", "c", lambda xp, a: xp.expand_dims(a, 1)),
    ("expand_dims negative", "t", lambda xp, a: xp.expand_dims(a, -1)),
    ("expand_dims tuple", "s", lambda xp, a: xp.expand_dims(a, (0, 4))),
    ("expand_dims tuple negative", "r", lambda xp, a: xp.expand_dims(a, (-1, 0, -3))),
    ("diagonal", "c", lambda xp, a: a.diagonal()),
    ("diagonal offset", "t", lambda xp, a: xp.diagonal(a, 1)),
    ("diagonal negative offset", "c", lambda xp, a: xp.diagonal(a, -1, 1, 2)),
    ("diagonal axes", "s", lambda xp, a: xp.diagonal(a, 0, 2, 0)),
    ("diagonal past the end", "c", lambda xp, a: xp.diagonal(a, 7, 1, 2)),
    ("basic index", "s", lambda xp, a: a[1, ::-1]),
    ("view", "t", lambda xp, a: a.view()),
    # views of the storage's bytes as another dtype: the parts of complex arrays, bit casts
    ("real", "z", lambda xp, a: a.real),
    ("imag", "z", lambda xp, a: a.imag),
    ("real of a transpose", "zt", lambda xp, a: xp.real(a)),
    ("imag of a strided", "zs", lambda xp, a: xp.imag(a)),
    ("imag of complex64", "z64", lambda xp, a: a.imag),
    ("real of 0-d", "z0", lambda xp, a: a.real),
    ("imag of 0-d", "z0", lambda xp, a: xp.imag(a)),
    ("slice of imag", "z", lambda xp, a: a.imag[1, ::-2]),
    ("imag of a slice", "zs", lambda xp, a: a[:, 1:].imag.T),
    ("real of real", "f", lambda xp, a: a.real),
    ("imag of real", "f", lambda xp, a: a.imag),
    ("view as floats", "z", lambda xp, a: a.view(xp.float64)),
    ("view complex64 as float32", "z64", lambda xp, a: a.view("float32")),
    ("view floats as int64", "f", lambda xp, a: a.view("int64")),
    ("view floats as bytes", "f", lambda xp, a: a.view(xp.uint8)),
    ("view floats as complex", "f", lambda xp, a: a.view("complex128")),
    ("view int64 as int32", "c", lambda xp, a: a.view("int32")),
    ("view of a view", "z", lambda xp, a: a.view("float64").view("int64")),
    ("real of a view", "f", lambda xp, a: a.view("complex128").real),
    ("view of a slice", "s", lambda xp, a: a.view("float64")),
    ("view of imag", "zs", lambda xp, a: a.imag.view("uint64")),
]


@pytest.mark.parametrize("name, base, fn", VIEWS, ids=[v[0] for v in VIEWS])
@numpy_compare()
def test_view_values(xp, name, base, fn):
    return fn(xp, INPUTS[base](xp))


@pytest.mark.parametrize("name, base, fn", VIEWS, ids=[v[0] for v in VIEWS])
@numpy_compare()
def test_write_through_the_view_is_seen_by_the_base(xp, name, base, fn):
    """Where NumPy copies (a reshape that cannot be a view, flatten) the base keeps its value;
    a read-only view (diagonal) raises NumPy's error."""
    a = INPUTS[base](xp)
    v = fn(xp, a)
    v[...] = -v - 1
    v.reshape(-1)[:1] = 1000  # a view or a copy of v, as NumPy decides
    return a, v


@pytest.mark.parametrize("name, base, fn", VIEWS, ids=[v[0] for v in VIEWS])
@numpy_compare()
def test_write_to_the_base_is_seen_by_the_view(xp, name, base, fn):
    a = INPUTS[base](xp)
    v = fn(xp, a)
    a[...] = a * 3
    a[(0,) * a.ndim] = -9
    return v


# --- errors ------------------------------------------------------------------------------------

ERRORS = [
    lambda xp, a: a.reshape(5, 5),
    lambda xp, a: a.reshape(-1, -1),
    lambda xp, a: a.reshape(-1, 5),
    lambda xp, a: a.reshape(-2, 12),
    lambda xp, a: a.reshape(2.0, 12),
    lambda xp, a: a.reshape(4, 6, order="X"),
    lambda xp, a: a.reshape(4, 6, order="K"),
    lambda xp, a: a.T.reshape(-1, copy=False),
    lambda xp, a: a.ravel(order="X"),
    lambda xp, a: xp.transpose(a, (0, 1)),
    lambda xp, a: xp.transpose(a, (0, 1, 1)),
    lambda xp, a: xp.transpose(a, (0, 1, 3)),
    lambda xp, a: a.swapaxes(0, 3),
    lambda xp, a: xp.swapaxes(a, -4, 0),
    lambda xp, a: xp.moveaxis(a, [0, 1], [0]),
    lambda xp, a: xp.moveaxis(a, 3, 0),
    lambda xp, a: xp.moveaxis(a, [0, 0], [1, 2]),
    lambda xp, a: a.squeeze(axis=1),
    lambda xp, a: a.squeeze(axis=4),
    lambda xp, a: xp.expand_dims(a, 5),
    lambda xp, a: xp.expand_dims(a, (1, 1)),
    lambda xp, a: xp.expand_dims(a, -6),
    lambda xp, a: xp.diagonal(a[0, 0]),
    lambda xp, a: xp.diagonal(a, 0, 1, 1),
    lambda xp, a: xp.diagonal(a, 0, 0, 3),
    lambda xp, a: xp.broadcast_to(a, (2, 3)),
    lambda xp, a: xp.broadcast_to(a, (2, 2, 3, 5)),
    lambda xp, a: xp.broadcast_to(a, (-1, 3, 4)),
    lambda xp, a: xp.broadcast_arrays(a, arange(xp, (3,)), arange(xp, (2, 1))),
    lambda xp, a: a.mT[0].mT,
    lambda xp, a: a.view("complex128"),
    lambda xp, a: a.T.view("int32"),
    lambda xp, a: a[0, 0, 0].view("int32"),
    lambda xp, a: a.copy().view("complex128"),
    lambda xp, a: a.view(float).imag.__setattr__("shape", (3, 2)),
    lambda xp, a: setattr(a.view(float), "imag", 1),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
@numpy_compare()
def test_view_errors(xp, fn):
    return fn(xp, arange(xp, (2, 3, 1, 4))[:, :, 0])


# --- broadcasting ------------------------------------------------------------------------------

BROADCASTS = [
    ((3, 1), (2, 3, 4)), ((1,), 5), ((4,), (3, 4)), ((), (2, 2)), ((3, 4), (3, 4)),
    ((1, 1), (0, 1)), ((2, 1), (2, 0)),
]  # fmt: skip


@pytest.mark.parametrize("shape, to", BROADCASTS, ids=repr)
@numpy_compare()
def test_broadcast_to(xp, shape, to):
    a = arange(xp, shape)
    b = xp.broadcast_to(a, to)
    a[...] = a + 100  # the broadcast view sees it
    return b


@numpy_compare()
def test_broadcast_to_of_views_and_host_data(xp):
    v = arange(xp)[:, ::2, 1:2]
    return (
        xp.broadcast_to(v, (3, 2, 2, 3)),
        xp.broadcast_to(v.T, (2, 1, 2, 2)).T,
        xp.broadcast_to([1, 2], (2, 2)),
        xp.broadcast_to(5, (2, 2)),
        xp.broadcast_to(arange(xp, (3,)), (2, 3))[1, ::-1],
        xp.broadcast_to(arange(xp, (3, 1)), (2, 3, 4)).reshape(6, 4),
        xp.broadcast_to(arange(xp, (1, 3)), (1, 2, 1, 3)).squeeze(),
    )


@numpy_compare()
def test_broadcast_to_shapes_given_as_numpy_integers(xp):
    b = xp.broadcast_to(arange(xp, (3,)), (numpy.int64(2), numpy.int32(3)))
    c = xp.broadcast_to(arange(xp, (1,)), numpy.int64(4))
    assert all(type(n) is int for n in b.shape + c.shape)
    return b + 1, c * 2, b.shape, c.shape


@numpy_compare()
def test_broadcast_to_flags(xp):
    b = xp.broadcast_to(arange(xp, (3,)), (2, 3))
    return b.flags["WRITEABLE"], b.T.flags["WRITEABLE"], b[0].flags["WRITEABLE"], b.strides


@pytest.mark.parametrize(
    "shapes",
    [[(3, 1), (4,)], [(3, 4), (3, 4)], [(2, 1, 3), (5, 1), ()], [(3,)], [], [(0, 1), (1, 4)]],
    ids=repr,
)
@numpy_compare()
def test_broadcast_arrays(xp, shapes):
    return xp.broadcast_arrays(*[arange(xp, s) for s in shapes])


@numpy_compare()
def test_broadcast_arrays_results_alias_their_inputs(xp):
    a, b = arange(xp, (3,)), arange(xp, (2, 1))
    ra, rb = xp.broadcast_arrays(a, b)
    a[0] = 50
    b[1, 0] = -50
    return ra, rb


def test_broadcast_arrays_are_writeable_with_numpys_warning(xp):
    """NumPy 2 still lets its results be written, warning once that they will be read-only."""
    a = arange(xp, (3,))
    ra, rb = xp.broadcast_arrays(a, arange(xp, (2, 1)))
    row = ra[1]
    with pytest.warns(DeprecationWarning, match="writing to an array with\noverlapping memory"):
        ra[0, 1] = 7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ra[0, 2] = 8  # once per array
    with pytest.warns(DeprecationWarning, match="from np.broadcast_arrays"):
        row[0] = -1  # a view of one warns too
    numpy.testing.assert_array_equal(numpy.asarray(a), [-1, 7, 8])
    numpy.testing.assert_array_equal(numpy.asarray(ra), [[-1, 7, 8], [-1, 7, 8]])


def test_broadcast_arrays_flags_and_windows_are_numpys(xp):
    """Of broadcast_arrays' results, an array of the broadcast shape is the argument itself,
    unflagged; a broadcast one warns (FutureWarning) when its writeable flag is read, and
    setting the flag ends its warnings, as NumPy's. ``sliding_window_view`` is a view of its
    argument, read-only unless ``writeable`` (it was a writeable copy), and the views of
    ``broadcast_to``, ``broadcast_arrays`` and the windows keep a subclass only with
    ``subok``."""
    a = arange(xp, (3,))
    zero, same = xp.broadcast_arrays(0, a)
    assert same is a
    if xp is numpy or numloom.get_device() == "cpu":  # (a GPU array's buffer is a read-only copy)
        assert not memoryview(same).readonly and memoryview(zero).readonly
    with pytest.warns(FutureWarning, match="will not create a writeable array"):
        assert zero.flags.writeable
    zero.flags.writeable = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert zero.flags.writeable
        if xp is numpy or numloom.get_device() == "cpu":
            assert not memoryview(zero).readonly
        zero[:] = 0
        same[0] = 5
    windows = xp.lib.stride_tricks.sliding_window_view(a, 2)
    assert not windows.flags.writeable and windows.shape == (2, 2)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        windows[0, 0] = 1
    written = xp.lib.stride_tricks.sliding_window_view(a, 2, writeable=True)
    written[0, 1] = -3
    assert a.tolist() == [5, -3, 2] and xp.shares_memory(written, a)

    class Sub(xp.ndarray):
        pass

    s = a.view(Sub)
    views = [xp.broadcast_to(s, (2, 3), subok=k) for k in (False, True)]
    views += [xp.broadcast_arrays(s, arange(xp, (2, 1)), subok=k)[0] for k in (False, True)]
    views += [xp.lib.stride_tricks.sliding_window_view(s, 2, subok=k) for k in (False, True)]
    assert [type(v) is Sub for v in views] == [False, True] * 3


# --- shape setters, copies, the flags ---------------------------------------------------------


@numpy_compare()
def test_shape_setter(xp):
    a = arange(xp)
    a.shape = (4, 6)
    a[0, 0] = 99
    return a


@numpy_compare()
def test_shape_setter_refuses_a_copy(xp):
    a = arange(xp).T
    a.shape = (24,)
    return a


@numpy_compare()
def test_copy_and_flatten_do_not_alias(xp):
    a = arange(xp)
    b, c = a.copy(), a.flatten()
    b[0] = 9
    c[0] = 9
    return a, b, c


@pytest.mark.parametrize("other", [
    lambda xp, a: a.copy(), lambda xp, a: a, lambda xp, a: a[1:], lambda xp, a: a[::2],
    lambda xp, a: a[1::2], lambda xp, a: a.T, lambda xp, a: a[::-1], lambda xp, a: a.view("u1"),
    lambda xp, a: a.reshape(3, 8)[:, 3:5], lambda xp, a: xp.array(a), lambda xp, a: a + 0,
    lambda xp, a: a.flatten(), lambda xp, a: a.astype("int64"), lambda xp, a: a[:0],
    lambda xp, a: numpy.array(a), lambda xp, a: [1, 2],
    pytest.param(lambda xp, a: numpy.asarray(a), marks=pytest.mark.skipif(
        numloom.get_device() != "cpu", reason="a GPU array's NumPy array is a host copy")),
])  # fmt: skip
@numpy_compare()
def test_shares_memory_answers_as_if_copies_were_made(xp, other):
    """``shares_memory`` and ``may_share_memory`` of an array and a view, a copy or NumPy's
    array of it are NumPy's answers (a copy shares its memory until one of them is written:
    it was True), also after one is written."""
    a = arange(xp, (4, 6))
    b = other(xp, a)
    before = (xp.shares_memory(a, b), xp.may_share_memory(a, b), xp.shares_memory(b, a[2:]),
              xp.may_share_memory(a[:1], b))  # fmt: skip
    a[0, 0] = 100
    return before, xp.shares_memory(a, b), xp.may_share_memory(b, a)


@pytest.mark.parametrize("fn", [lambda a: a, lambda a: a.T, lambda a: a[:, ::2], lambda a: a[1]])
@numpy_compare()
def test_contiguity_flag(xp, fn):
    return fn(arange(xp)).flags["C_CONTIGUOUS"]


@numpy_compare()
def test_atleast_and_expand_on_zero_d(xp):
    a = arange(xp, ())
    return xp.atleast_2d(a), xp.expand_dims(a, 0), a.reshape(1, 1), a.ravel(), a.T


# --- numpy_view reads back only views ------------------------------------------------------------


def test_numpy_view_of_a_function_that_returns_a_numpy_scalar():
    """An integer for every axis gives NumPy's scalar: the element's view is read instead."""
    from numloom.core.array_views import numpy_view

    a = numloom.asarray(numpy.arange(12.0).reshape(3, 4))
    picked = numpy_view(a.T, lambda s: s[1, 2])
    a[2, 1] = -1.0
    assert picked.shape == () and picked.get() == -1.0
    assert numpy_view(numloom.asarray(numpy.float64(3.0)), lambda s: s[()]).get() == 3.0


def test_numpy_view_refuses_a_copy():
    """A copy's address is unrelated memory: read back, it would be a garbage offset."""
    from numloom.core.array_views import numpy_view

    with pytest.raises(ValueError, match="made a copy, not a view"):
        numpy_view(numloom.arange(6), lambda s: s[[0, 2]])


# --- views as another dtype, through the generated C --------------------------------------------


@numpy_compare()
def _parts_program(xp):
    z = xp.asarray(numpy.arange(12).reshape(3, 4) * (1 - 2j))
    r, i = z.real, xp.imag(z.T)
    r[0] = 100
    i[1:, 0] += 5
    z.imag[2] *= -1
    z.real[[0, 2], 1] = -7
    z.imag[z.imag < -10] = 0
    bits = (xp.asarray(numpy.linspace(0, 1, 8)) * 3).view("int64")
    bits[1] += 1
    z.real = z.imag * 2 + r
    return z, r, i, bits, z.real.sum() + z.imag[::2].max(), (z * 1j).real, bits.view("float64")


def test_views_as_another_dtype_compiled(monkeypatch):
    """Reads and writes through them compile (the reinterpretation itself is a NumPy view)."""
    monkeypatch.setenv("NUMLOOM_BACKEND", "compiled")
    _parts_program()


def test_a_view_whose_elements_straddle_the_storage_is_refused():
    """numloom's views count whole elements of their dtype in the storage: a float64 array
    seen as complex from its second float has no such elements (NumPy allows it)."""
    with pytest.raises(NotImplementedError, match="copy the array first"):
        numloom.zeros(5)[1:].view("complex128")


def test_a_bitcast_of_a_dead_intermediate_outlives_its_memory(monkeypatch):
    """The bitcast is a NumPy view of the product's pooled block; the block goes back to the
    pool after its last reader, and the add reuses it while reading the bitcast reversed."""
    monkeypatch.setenv("NUMLOOM_BACKEND", "compiled")
    numpy_compare()(lambda xp: (xp.asarray(numpy.arange(100_000.0)) * 2).view("int64")[::-1] + 1)()


# --- base and OWNDATA: NumPy's answers for views, views of views and new arrays ---------------

BASES = {
    "slice": lambda a: [a[1:].base is a, a[1:][::2].base is a],
    "column": lambda a: [a.reshape(4, 6)[:, 2].base is a],
    "row": lambda a: [a.reshape(4, 6)[1].base is a, all(r.base is a for r in a.reshape(4, 6))],
    "transpose and reshape": lambda a: [a.reshape(4, 6).T.base is a, a.reshape(2, 12).base is a],
    "new arrays": lambda a: [a.base is None, a.copy().base is None, (a + 1).base is None],
    "owndata": lambda a: [a.flags.owndata, a[1:].flags.owndata, a.copy().flags.owndata],
}


@pytest.mark.parametrize("check", BASES.values(), ids=BASES.keys())
@numpy_compare()
def test_base_and_owndata_are_numpys(xp, check):
    return check(xp.arange(24.0))


@numpy_compare()
def test_fortran_ordered_new_arrays_own_their_data(xp):
    z = xp.zeros((3, 4))
    made = [xp.array(z, order="F"), xp.asfortranarray(z), xp.ones((3, 4), order="F")]
    return [[m.flags.owndata, m.base is None, m.flags.f_contiguous] for m in made]

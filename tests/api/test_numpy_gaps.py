"""Pieces of NumPy that public programs use, each against NumPy: in-place writes into keepdims
reductions, removed names' messages, linalg on the last two axes, cumulative sums with their
initial value, flags, flat, Fortran order, ufunc.reduceat and the array API namespace."""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl


@pytest.mark.parametrize("reduce", ["max", "sum", "min", "argmax", "any", "prod", "mean"])
@numpy_compare()
def test_in_place_writes_into_a_keepdims_full_reduction(xp, reduce):
    a = xp.arange(6.0).reshape(2, 3) - 2
    m = getattr(xp, reduce)(a, keepdims=True)
    m += 1
    n = getattr(xp, reduce)(a, keepdims=True)
    n[...] = 0
    n[0, 0] += 3
    return m, n


@numpy_compare()
def test_a_keepdims_reduction_written_through_a_view(xp):
    m = xp.sum(xp.ones((3, 4)), axis=(0, 1), keepdims=True)
    v = m.reshape(1)
    v[0] = 7
    return m


@pytest.mark.parametrize("name", ["float_", "alltrue", "Inf", "NaN", "asfarray", "cast",
                                  "round_", "sometrue", "product", "no_such_name"])  # fmt: skip
def test_a_removed_name_gets_numpys_message(name):
    with pytest.raises(AttributeError) as want:
        getattr(numpy, name)
    with pytest.raises(AttributeError) as got:
        getattr(nl, name)
    expected = str(want.value).replace("'numpy'", "'numloom'")
    assert str(got.value) == expected
    with pytest.raises(AttributeError, match="numloom.linalg"):
        nl.linalg.no_such_function  # noqa: B018


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "complex64", "bool"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@numpy_compare()
def test_cumulative_with_the_initial_value(xp, fn, dtype, axis):
    data = (numpy.arange(12) % 5).astype(dtype)
    x = xp.asarray(data if axis is None else data.reshape(3, 4))
    return getattr(xp, fn)(x, axis=axis, include_initial=True)


@numpy_compare()
def test_cumulative_with_the_initial_value_dtype_and_out(xp):
    x = xp.arange(1, 5, dtype="int16")
    out = xp.zeros(5, dtype="float64")
    r = xp.cumulative_prod(x, dtype="int64", include_initial=True)
    xp.cumulative_sum(x, out=out, include_initial=True)
    return r, out


@numpy_compare()
def test_cumulative_of_a_0d_array_raises(xp):
    return xp.cumulative_sum(xp.asarray(3.0), include_initial=True)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (2, 3, 4), (4, 2, 5, 5)])
@pytest.mark.parametrize("offset", [0, 1, -1])
@numpy_compare()
def test_linalg_works_on_the_last_two_axes(xp, shape, offset):
    x = xp.asarray(numpy.arange(numpy.prod(shape), dtype=float).reshape(shape))
    return (xp.linalg.diagonal(x, offset=offset), xp.linalg.trace(x, offset=offset),
            xp.linalg.matrix_transpose(x))  # fmt: skip


@numpy_compare()
def test_empty_tensordot_and_products(xp):
    a, b = xp.ones((0, 3)), xp.ones((3, 0))
    return (xp.tensordot(a, b, axes=1), xp.tensordot(xp.ones((2, 0)), xp.ones((0, 4)), axes=1),
            xp.tensordot(xp.ones((0, 2)), xp.ones((0, 2)), axes=([0], [0])),
            xp.dot(xp.ones((2, 0)), xp.ones((0, 3))), xp.ones((4, 0)) @ xp.ones(0),
            xp.inner(xp.ones((2, 0)), xp.ones((3, 0))), xp.outer(xp.ones(0), xp.ones(2)))  # fmt: skip


def test_the_array_api_namespace_is_numloom():
    x = nl.arange(3)
    assert x.__array_namespace__() is nl
    assert x.__array_namespace__(api_version="2023.12") is nl
    on_cpu = x.to_device("cpu")
    assert on_cpu.device == "cpu"
    numpy.testing.assert_array_equal(numpy.asarray(on_cpu), [0, 1, 2])
    assert x.to_device(x.device) is x  # already there: no copy


def test_asarray_copy_false_refuses_a_move_between_devices():
    x = nl.arange(3, device="cpu")
    with pytest.raises(ValueError, match="cannot move"):
        nl.asarray(x, device="cuda", copy=False)


FLAG_ARRAYS = {
    "c": lambda xp: xp.zeros((3, 4)),
    "transposed": lambda xp: xp.zeros((3, 4)).T,
    "strided": lambda xp: xp.zeros((3, 4))[:, ::2],
    "row": lambda xp: xp.zeros((1, 5)),
    "empty": lambda xp: xp.zeros((0, 3)),
    "view": lambda xp: xp.arange(12.0).reshape(3, 4)[1:],
}


@pytest.mark.parametrize("make", list(FLAG_ARRAYS))
def test_flags_as_numpys(make):
    got, want = FLAG_ARRAYS[make](nl).flags, FLAG_ARRAYS[make](numpy).flags
    for key in ["C_CONTIGUOUS", "C", "F_CONTIGUOUS", "F", "WRITEABLE", "W", "ALIGNED",
                "WRITEBACKIFCOPY", "BEHAVED", "CARRAY", "FARRAY", "FNC", "FORC"]:  # fmt: skip
        if not (key == "FARRAY" and make == "strided"):  # (NumPy's odd answer there)
            assert got[key] == want[key], key
    for name in ["c_contiguous", "f_contiguous", "writeable", "aligned", "behaved", "carray",
                 "farray", "fnc", "forc", "writebackifcopy", "contiguous", "fortran"]:  # fmt: skip
        if not (name == "farray" and make == "strided"):
            assert getattr(got, name) == getattr(want, name), name
    if make == "c":
        assert repr(got) == repr(want) and got.num == want.num
    with pytest.raises(KeyError):
        got["NOPE"]  # noqa: B018


@pytest.mark.parametrize(
    "write",
    [lambda xp, a: a.__setitem__(0, 1.0), lambda xp, a: a.__setitem__((0, 1), 1.0),
     lambda xp, a: a.__setitem__(slice(None), 2.0), lambda xp, a: a.__iadd__(1),
     lambda xp, a: xp.add(a, 1, out=a), lambda xp, a: a.fill(3.0),
     lambda xp, a: xp.copyto(a, 5.0), lambda xp, a: a.sort()],
)  # fmt: skip
@numpy_compare()
def test_a_read_only_array_refuses_writes(xp, write):
    a = xp.arange(8.0).reshape(2, 4)
    a[0, 0] = 5.0  # a write before (in place afterwards, on numloom)
    a[0, 1] = 6.0
    a.flags.writeable = False
    try:
        write(xp, a)
    except ValueError as e:
        return str(e), a
    return "no error", a


@numpy_compare()
def test_writeable_flag_set_back_and_setflags(xp):
    a = xp.zeros(4)
    a.flags["WRITEABLE"] = False
    v = a[1:]  # a view made now is read-only too
    a.flags.writeable = True
    a[0] = 1.0
    a.setflags(write=False)
    return a, a.flags.writeable, v.flags.writeable


FLAT_CASES = {
    "read": lambda xp, a: (
        a.flat[3],
        a.flat[-1],
        a.flat[2:9:3],
        a.flat[[1, 4]],
        a.flat[a.ravel() > 5],
        len(a.flat),
    ),  # fmt: skip
    "iterate": lambda xp, a: [v for v in a.flat],
    "write slice": lambda xp, a: (a.flat.__setitem__(slice(None, None, 2), 0), a)[1],
    "write fancy": lambda xp, a: (a.flat.__setitem__([1, 4], 5), a)[1],
    "write repeats": lambda xp, a: (a.flat.__setitem__(slice(2, 9), [1, 2]), a)[1],
    "assign": lambda xp, a: (setattr(a, "flat", [7, 8, 9]), a)[1],
    "asarray": lambda xp, a: numpy.asarray(a.flat),
    "read copies": lambda xp, a: (a.flat[1:4], a.flat[...], a.flat[()], a.flat[[True, 1]],
                                  a.flat[xp.asarray([[1, 2], [3, 4]])], a.flat[[]],
                                  a.flat[xp.asarray(a.ravel() > 5)], a.flat[xp.asarray([0, 5, 6]).flat],
                                  a.flat[xp.asarray(2)]),
    "write through a read": lambda xp, a: (a.flat[:3].__setitem__(0, -1), a)[1],
    "write a mask": lambda xp, a: (a.flat.__setitem__(xp.asarray(a.ravel() > 5), 0), a)[1],
    "read a list of bools": lambda xp, a: a.flat[[True, False, True]],
    "read a mask too long": lambda xp, a: a.flat[xp.zeros(13, bool)],
    "write a mask too long": lambda xp, a: a.flat.__setitem__(xp.zeros(13, bool), 1),
    "read newaxis": lambda xp, a: a.flat[None],
    "read two indices": lambda xp, a: a.flat[1, 2],
    "write a 0-d index": lambda xp, a: a.flat.__setitem__((), 1),
}


@pytest.mark.parametrize("case", list(FLAT_CASES))
@pytest.mark.parametrize("layout", ["c", "transposed"])
@numpy_compare()
def test_flat_reads_writes_and_iterates(xp, case, layout):
    base = xp.arange(12.0).reshape(3, 4)
    a = base if layout == "c" else base.T
    return FLAT_CASES[case](xp, a), base


@pytest.mark.parametrize("key", [True, False, [1.0, 2.0]])
def test_flat_indexing_warns_of_numpys_deprecations(key):
    """NumPy 2.4's deprecations of a flat iterator's 0-d boolean and non-array float indices:
    its warning, at the user's line, and its value (numloom gave none, and a[True])."""
    got = {}
    for xp in (numpy, nl):
        a = xp.arange(12.0).reshape(3, 4)
        with pytest.warns(DeprecationWarning) as caught:
            value = a.flat[key]
        with pytest.warns(DeprecationWarning):
            a.flat[key] = -1
        got[xp] = (numpy.asarray(value).tolist(), [(str(w.message), w.filename) for w in caught],
                   numpy.asarray(a).tolist())  # fmt: skip
    assert got[nl] == got[numpy]


@pytest.mark.parametrize("uf", ["add", "multiply", "maximum", "minimum", "logical_or"])
@numpy_compare()
def test_ufunc_reduceat(xp, uf):
    a = xp.arange(1, 13, dtype="int64").reshape(3, 4)
    f = getattr(xp, uf)
    out = xp.zeros((3, 3), dtype="int64") if uf != "logical_or" else xp.zeros((3, 3), bool)
    f.reduceat(a, [0, 2, 3], axis=1, out=out)
    return f.reduceat(xp.arange(8), [0, 4, 1, 5]), f.reduceat(a, [0, 2], axis=0), out


@numpy_compare()
def test_reduceat_of_a_unary_ufunc_raises(xp):
    return xp.negative.reduceat(xp.arange(4), [0, 2])


ORDERED = {
    "zeros F": lambda xp, a: xp.zeros((2, 3), order="F"),
    "ones F 3-d": lambda xp, a: xp.ones((2, 3, 4), dtype="int32", order="F"),
    "full F": lambda xp, a: xp.full((3, 2), 7.0, order="F"),
    "empty F": lambda xp, a: xp.empty((2, 2), order="F").fill(0) or xp.zeros((1, 1)),
    "zeros_like K": lambda xp, a: xp.zeros_like(a.T),
    "ones_like F": lambda xp, a: xp.ones_like(a, order="F"),
    "full_like A": lambda xp, a: xp.full_like(a.T, 2, order="A"),
    "array F": lambda xp, a: xp.array(a, order="F"),
    "asfortranarray": lambda xp, a: xp.asfortranarray(a),
    "np.copy K": lambda xp, a: xp.copy(a.T),
    "copy method": lambda xp, a: a.T.copy(),
    "copy method F": lambda xp, a: a.copy(order="F"),
    "reshape F": lambda xp, a: a.reshape((3, 2), order="F"),
    "ravel F": lambda xp, a: a.ravel(order="F"),
}


@pytest.mark.parametrize("case", list(ORDERED))
@numpy_compare()
def test_fortran_order_strides_and_flags(xp, case):
    a = xp.arange(6.0).reshape(2, 3)
    made = ORDERED[case](xp, a)
    return made, made.strides, made.flags["F_CONTIGUOUS"], made.flags["C_CONTIGUOUS"]


@numpy_compare()
def test_a_fortran_array_written_and_computed(xp):
    f = xp.zeros((3, 4), order="F")
    f[1] = 5.0
    f[:, 2] += 1
    return f, f * 2 + 1, f.sum(axis=0), f.T.strides


def test_from_dlpack_without_a_copy_shares_host_memory():
    host = numpy.arange(6.0)
    x = nl.from_dlpack(host, copy=False)
    assert numpy.shares_memory(numpy.asarray(x), host)
    host[0] = 10.0  # the producer's write shows, as with NumPy
    assert x[0] == 10.0 and float(x.sum()) == 25.0
    x[1] = -1.0  # numloom's own write makes a new version: the producer's data stays
    x[2] = -2.0
    assert list(x.get()[:3]) == [10.0, -1.0, -2.0] and host[1] == 1.0 and host[2] == 2.0
    copied = nl.from_dlpack(host, copy=True)
    host[3] = 99.0
    assert copied[3] == 3.0
    with pytest.raises(BufferError):
        nl.from_dlpack(numpy.arange(6.0)[::2], copy=False)


@pytest.mark.parametrize("xp", [numpy, nl])
def test_ndarray_subscripted_in_annotations(xp):
    # (TheAlgorithms' k-nearest neighbours annotates ``train_data: np.ndarray[float]``)
    assert xp.ndarray[float].__origin__ is xp.ndarray
    assert xp.ndarray[tuple, xp.dtype[xp.float64]].__args__ == (tuple, numpy.dtype[numpy.float64])
    for too_many_or_few in [(int, int, int), ()]:
        with pytest.raises(TypeError, match="Too (many|few) arguments for"):
            xp.ndarray[too_many_or_few]


PRODUCTS_OF_VECTORS = {
    "inner": lambda xp, x, m: xp.inner(x, x),
    "dot": lambda xp, x, m: xp.dot(x, x),
    "matmul": lambda xp, x, m: x @ x,
    "vdot": lambda xp, x, m: xp.vdot(x, x),
    "method dot": lambda xp, x, m: x.dot(x),
    "tensordot (a 0-d array)": lambda xp, x, m: xp.tensordot(x, x, 1),
    "tensordot of matrices": lambda xp, x, m: xp.tensordot(m, m, 2),
    "einsum i,i": lambda xp, x, m: xp.einsum("i,i", x, x),
    "einsum ij->": lambda xp, x, m: xp.einsum("ij->", m),
    "einsum ij->i": lambda xp, x, m: xp.einsum("ij->i", m),
}


@pytest.mark.parametrize("case", list(PRODUCTS_OF_VECTORS.values()), ids=list(PRODUCTS_OF_VECTORS))
@pytest.mark.parametrize("made", ["traced", "from a list"])
def test_products_print_as_numpys_scalars_or_arrays(case, made):
    """(Numerical Python's chapter 2 prints ``np.dot(x, x)``: NumPy's ``np.int64(5)``, where
    numloom printed ``array(5)``.) A marked array's products run at once through NumPy."""
    def run(xp):
        if made == "traced" and xp is nl:
            x, m = nl.arange(3), nl.arange(6.0).reshape(2, 3)
        else:
            x, m = xp.array([0, 1, 2]), xp.array([[0.0, 1, 2], [3, 4, 5]])
        return repr(case(xp, x, m))

    assert run(nl) == run(numpy)


SCALAR_CALLS = {
    "round 2": lambda xp, v: xp.round(v, 2), "around": lambda xp, v: xp.around(v),
    "sum": lambda xp, v: xp.sum(v), "prod": lambda xp, v: xp.prod(v),
    "mean": lambda xp, v: xp.mean(v), "std": lambda xp, v: xp.std(v), "var": lambda xp, v: xp.var(v),
    "max": lambda xp, v: xp.max(v), "amin": lambda xp, v: xp.amin(v),
    "argmax": lambda xp, v: xp.argmax(v), "ptp": lambda xp, v: xp.ptp(v),
    "all": lambda xp, v: xp.all(v), "any": lambda xp, v: xp.any(v),
    "clip": lambda xp, v: xp.clip(v, 0, 1), "real": lambda xp, v: xp.real(v),
    "imag": lambda xp, v: xp.imag(v), "angle": lambda xp, v: xp.angle(v),
    "nan_to_num": lambda xp, v: xp.nan_to_num(v), "nansum": lambda xp, v: xp.nansum(v),
    "average": lambda xp, v: xp.average(v), "median": lambda xp, v: xp.median(v),
    "isreal": lambda xp, v: xp.isreal(v), "sinc": lambda xp, v: xp.sinc(v),
    "count_nonzero": lambda xp, v: xp.count_nonzero(v),
}  # fmt: skip


@pytest.mark.parametrize("value", [56294995342131.5, 2.345, 3, True, 1 + 2j, -0.0,
                                   numpy.float32(2.5), numpy.complex128(complex("nan+infj")),
                                   numpy.int16(-7)])  # fmt: skip
@pytest.mark.parametrize("call", list(SCALAR_CALLS.values()), ids=list(SCALAR_CALLS))
def test_a_python_scalars_function_gives_numpys_scalar(call, value):
    """NumPy's docstring: ``np.round(56294995342131.5, 3)`` is ``np.float64(56294995342131.51)``.
    A function NumPy answers with a scalar for a Python or NumPy scalar gives that scalar (a
    ``float`` subclass, as ``isinstance`` and ``json.dumps`` expect), not a 0-d array: NumPy's
    TestNanToNum checks ``nan_to_num`` of a complex128."""
    try:
        want = call(numpy, value)
    except Exception as e:  # noqa: BLE001 (NumPy's error, raised alike)
        with pytest.raises(type(e)):
            call(nl, value)
        return
    got = call(nl, value)
    assert type(got) is type(want) or (isinstance(want, numpy.ndarray)
                                       and isinstance(got, nl.ndarray)), (got, want)  # fmt: skip
    numpy.testing.assert_array_equal(numpy.asarray(got), want)


def test_a_scalars_function_with_an_array_argument_stays_numloom():
    lo = nl.zeros(3)
    assert isinstance(nl.clip(2.5, lo, 1.0), nl.ndarray)
    out = nl.zeros(())
    assert nl.sum(2.5, out=out) is out and float(out) == 2.5


@pytest.mark.parametrize("shapes", [(3,), ((2, 1), 3), ((2,), (3,)), ((4, 1, 2), (3, 1)), ()])
@numpy_compare()
def test_broadcast_shapes_is_numpys(xp, shapes):
    """``broadcast_shapes`` takes ints as shapes and raises NumPy's ValueError for shapes that
    do not broadcast (numloom's own helper, which gave None, stood in its place)."""
    try:
        return xp.broadcast_shapes(*shapes)
    except ValueError as e:
        return str(e)


POLY_CALLS = {
    "polyval tensor": lambda xp, x, c: xp.polynomial.polynomial.polyval(x, c),
    "polyval flat": lambda xp, x, c: xp.polynomial.polynomial.polyval(x, c[:, :2], tensor=False),
    "chebval": lambda xp, x, c: xp.polynomial.chebyshev.chebval(x, c),
    "legval": lambda xp, x, c: xp.polynomial.legendre.legval(x, c),
    "hermval": lambda xp, x, c: xp.polynomial.hermite.hermval(x, c),
    "hermeval": lambda xp, x, c: xp.polynomial.hermite_e.hermeval(x, c),
    "lagval": lambda xp, x, c: xp.polynomial.laguerre.lagval(x, c),
    "polyval2d": lambda xp, x, c: xp.polynomial.polynomial.polyval2d(x, x, c),
    "polygrid2d": lambda xp, x, c: xp.polynomial.polynomial.polygrid2d(x[0], x[1], c),
    "chebgrid2d": lambda xp, x, c: xp.polynomial.chebyshev.chebgrid2d(x[0], x[1], c),
    "polyvalfromroots": lambda xp, x, c: xp.polynomial.polynomial.polyvalfromroots(x, [-1, 0, 1]),
    "fromroots 2-d": lambda xp, x, c: xp.polynomial.polynomial.polyvalfromroots(x, c),
    "fromroots flat": lambda xp, x, c: xp.polynomial.polynomial.polyvalfromroots(
        x[0], c, tensor=False),
    "fromroots error": lambda xp, x, c: xp.polynomial.polynomial.polyvalfromroots(
        x, c, tensor=False),
}  # fmt: skip


@pytest.mark.parametrize("call", list(POLY_CALLS.values()), ids=list(POLY_CALLS))
@numpy_compare()
def test_numpy_polynomial_evaluates_numloom_arrays_as_numpys(xp, call):
    """NumPy's docstring: ``polyvalfromroots(np.arange(4).reshape(2, 2), [-1, 0, 1])``.
    numpy.polynomial broadcasts multidimensional coefficients (or roots) over ``x`` only where
    ``isinstance(x, numpy.ndarray)``; numloom's arrays get the same."""
    x = xp.arange(4.0).reshape(2, 2) / 3
    c = numpy.arange(6.0).reshape(3, 2) - 2
    try:
        return call(xp, x, c)
    except ValueError as e:
        return str(e)


def test_numpy_testing_compares_numloom_arrays_as_numpys():
    """NumPy's docstrings: ``np.testing.assert_equal(np.array([1.0, 2.0, np.nan]), [1, 2,
    np.nan])`` passes, and ``assert_almost_equal`` of arrays that differ raises NumPy's
    AssertionError. They took a numloom array for a scalar ("The truth value of an array")."""
    nl.testing.assert_equal(nl.array([1.0, 2.0, nl.nan]), [1, 2, nl.nan])
    nl.testing.assert_equal({"a": nl.arange(3)}, {"a": [0, 1, 2]})
    with pytest.raises(AssertionError, match="not almost equal to 9 decimals"):
        nl.testing.assert_almost_equal(nl.array([1.0, 2.3333333333333]),
                                       nl.array([1.0, 2.33333334]), decimal=9)  # fmt: skip
    with pytest.raises(AssertionError):
        nl.testing.assert_equal(nl.array([1.0, 2.0]), [1, 3])
    numpy.testing.assert_array_almost_equal(nl.arange(3.0) / 3, numpy.arange(3.0) / 3)


def test_array_of_a_programs_subclass_is_of_the_base_class_unless_subok():
    """``np.array(s)`` of a subclass is a base-class array (``subok=True`` keeps the class,
    ``copy=False`` is a base-class view), with no ``__array_finalize__`` call: one that
    calls ``np.array(self)`` recursed without end (NumPy's TestSubclasses)."""
    for xp in (numpy, nl):

        class Sub(xp.ndarray):
            module = xp

            def __array_finalize__(self, old):
                self.status = self.module.array(self)
                self.old = old

        s = xp.arange(10).view(Sub)
        part = s[:3]
        assert type(part.status) is xp.ndarray and part.status.tolist() == [0, 1, 2]
        assert type(part.old) is Sub
        kinds = [type(xp.array(s, **k)) for k in ({}, {"subok": True}, {"copy": False})]
        assert kinds == [xp.ndarray, Sub, xp.ndarray]
        view = xp.array(s, copy=False)
        view[0] = 7
        assert s[0] == 7


def test_numpy_testings_raises_and_warns_call_with_the_programs_own_objects():
    """``assert_raises(TypeError, np.sum, x, keepdims=True)``: the function is called with
    the program's arguments as they are (numloom's arrays, a subclass whose ``sum`` takes no
    keepdims), as NumPy's calls it; they were handed over as NumPy's arrays, so a subclass's
    method was never called (NumPy's TestKeepdims)."""

    class Summed(nl.ndarray):
        def sum(self, axis=None, dtype=None, out=None):
            return nl.ndarray.sum(self, axis, dtype, out, keepdims=True)

    x = nl.arange(30).view(Summed)
    nl.testing.assert_raises(TypeError, nl.sum, x, keepdims=True)
    numpy.testing.assert_raises(TypeError, nl.sum, x, keepdims=True)
    seen = []

    def warned(a):
        seen.append(type(a))
        warnings.warn("w", stacklevel=2)

    nl.testing.assert_warns(UserWarning, warned, x)
    with nl.testing.assert_raises_regex(ValueError, "numloom's"):
        raise ValueError("numloom's")
    assert seen == [Summed]


@numpy_compare()
def test_the_buffer_of_an_array_as_its_data_and_frombuffer(xp):
    """scientific-python-lectures' "advanced NumPy": ``x.data`` is a memoryview of x's memory,
    ``frombuffer(x)`` a view of x's bytes whose base is x (a write into x shows in it, and one
    into it in x), and setting ``x.dtype`` reinterprets x's memory in place."""
    x = xp.array([1, 2, 3], dtype=xp.int32)
    data = x.data
    raw = bytes(x.data)
    y = xp.frombuffer(x, dtype=xp.int8)
    z = xp.frombuffer(x, dtype=xp.int16, count=2, offset=4)
    x[0] = 7
    y[8] = 5
    w = xp.array([1, 2, 3, 4], dtype=xp.uint8)
    w.dtype = "<i2"
    v = w.view("<i4")
    w[1] = 5
    b = b"1234"
    u = xp.frombuffer(b, dtype=xp.int8)
    # (on a GPU, x.data is a read-only host copy, as numpy.asarray(x) is there)
    assert data.readonly == (xp is not numpy and nl.get_device() != "cpu")
    return (data.format, data.shape, data.nbytes, raw, y, y.base is x, y.flags.owndata, z,
            z.base is x, x, w, v, u, u.base is b, u.flags.writeable, u.flags.owndata)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.frombuffer(x, dtype=xp.int32, offset=2),
    lambda xp, x: xp.frombuffer(x, dtype=xp.int32, offset=-1),
    lambda xp, x: xp.frombuffer(x, dtype=xp.int32, offset=13),
    lambda xp, x: xp.frombuffer(x, dtype=xp.int16, count=7),
    lambda xp, x: xp.frombuffer(x[::2], dtype=xp.int8),
    lambda xp, x: xp.frombuffer(x, dtype=xp.int8, offset=12),
    lambda xp, x: setattr(x, "dtype", xp.int64),
])  # fmt: skip
@numpy_compare()
def test_frombuffer_and_the_dtype_setter_raise_numpys_errors(xp, call):
    x = xp.array([1, 2, 3], dtype=xp.int32)
    return call(xp, x), x


@pytest.mark.parametrize("how", ["alone", "another name", "a view", "same size", "no check"])
@numpy_compare()
def test_resize_checks_references_as_numpy(xp, how):
    """``a.resize`` reallocates ``a`` in place, which NumPy refuses while another name or a view
    refers to it (its "refcheck"), unless the size stays or ``refcheck=False``
    (scientific-python-lectures' operations chapter)."""
    a = xp.arange(4)
    b = a if how == "another name" else a[1:] if how == "a view" else None
    if how == "same size":
        b = a
        a.resize((2, 2))
    elif how == "no check":
        b = a
        a.resize((6,), refcheck=False)
    else:
        a.resize((6,))
    del b
    return a


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.median(a, overwrite_input=True),
    lambda xp, a: xp.median(a, axis=0, overwrite_input=True),
    lambda xp, a: xp.percentile(a, [50], overwrite_input=True),
    lambda xp, a: xp.quantile(a, 0.3, axis=1, overwrite_input=True),
    lambda xp, a: xp.nanmedian(a, overwrite_input=True),
    lambda xp, a: xp.nanpercentile(a, 25, overwrite_input=True),
])  # fmt: skip
@pytest.mark.parametrize("size", [(2, 3), (60, 80)], ids=["small", "large"])
def test_order_statistics_that_may_overwrite_their_input(call, size):
    """``overwrite_input=True`` lets NumPy partition the input in place (its contents are then
    undefined); numloom's memory handed to NumPy is read-only, so numloom computes without it
    (NumPy's own tests: "partition array is read-only")."""
    host = (numpy.arange(numpy.prod(size)).reshape(size) * 7 % 11).astype(float)
    want = call(numpy, host.copy())
    for a in (nl.asarray(host.copy()), nl.array(host.tolist()).copy()):  # (a list's: eager)
        numpy.testing.assert_array_equal(numpy.asarray(call(nl, a)), want)


@pytest.mark.parametrize("call", [
    lambda xp: xp.piecewise(xp.array(3), xp.array(3) > 3, [4, 0]),
    lambda xp: xp.piecewise(xp.array(5.0), [xp.array(5.0) > 3], [lambda v: v * 2, 7.0]),
    lambda xp: xp.array(3)[0],
    lambda xp: xp.array(3.5)[1, 2],
])  # fmt: skip
@numpy_compare()
def test_zero_dimensional_arrays_in_piecewise_and_indexing(xp, call):
    """NumPy's own tests: ``piecewise`` of a 0-d array with its 0-d condition (a NumPy scalar
    there, a 0-d array here); indexing a 0-d array raises NumPy's IndexError."""
    return call(xp)


class _ArrayLike:
    """A program's class whose ``__array__`` makes its array with the program's ``np``: under
    numloom a numloom array (NumPy's own tests: ``bincount`` of such an object)."""

    def __init__(self, xp):
        self.xp = xp

    def __array__(self, dtype=None, copy=None):
        return self.xp.array([0, 1, 1, 3, 2, 1, 7], dtype=numpy.uint64)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.bincount(a),
    lambda xp, a: xp.sin(a),
    lambda xp, a: xp.add(a, 1),
    lambda xp, a: xp.sort(a),
    lambda xp, a: xp.mean(a),
    lambda xp, a: xp.concatenate([a, a]),
    lambda xp, a: xp.asarray(a),
    lambda xp, a: xp.intersect1d(a, [1, 7]),
    lambda xp, a: xp.union1d(a, [9]),
])  # fmt: skip
@numpy_compare()
def test_an_object_whose_array_is_the_programs(xp, call):
    return call(xp, _ArrayLike(xp))


@pytest.mark.parametrize("call", [
    lambda xp, c: c[0],
    lambda xp, c: c[1:, ::2],
    lambda xp, c: c[..., None],
    lambda xp, c: c.T,
    lambda xp, c: c.reshape(3, 2),
    lambda xp, c: c.ravel(),
    lambda xp, c: c.copy(),
    lambda xp, c: c + 1,
    lambda xp, c: xp.sin(c),
])  # fmt: skip
def test_views_and_copies_of_a_programs_subclass_keep_its_class(call):
    """A program's subclass of ``ndarray`` (``class Frame(np.ndarray)`` with methods of its
    own): its views (indexing, ``.T``, ``reshape``) and ``.copy()`` are of its class, their
    ``__array_finalize__`` called, as NumPy's are (they came back as plain arrays, which lack
    the subclass's methods); ufuncs kept it already."""
    got = {}
    for xp in (numpy, nl):
        class Frame(xp.ndarray):
            def __array_finalize__(self, obj):
                self.unit = getattr(obj, "unit", "m")

            def doubled(self):
                return self * 2

        c = xp.arange(6.0).reshape(2, 3).view(Frame)
        c.unit = "km"
        made = call(xp, c)
        got[xp] = (type(made) is Frame, getattr(made, "unit", None), made.doubled().tolist())
    assert got[nl] == got[numpy]


def test_a_subclass_whose_finalize_fills_or_reads_strides():
    """A program's subclass whose ``__array_finalize__`` calls ``self.fill`` or reads
    ``self.strides``: its views, writes into it and writes of it into another array work as
    NumPy's (``fill`` made a view of the subclass, finalized again: RecursionError), and
    ``Filled(shape)`` calls it with None, as NumPy's constructor does (it was not called)."""
    got = {}
    for xp in (numpy, nl):
        class Filled(xp.ndarray):
            def __array_finalize__(self, obj):
                self.fill(99)
                self.seen = self.strides

        a = xp.zeros((5, 5))
        s = a.copy().view(type=Filled)
        s.fill(1)
        a[[0, 1, 2, 3, 4], :] = s
        a[:, [0, 1, 2, 3, 4]] = s
        a[...] = s[::-1]
        v = s[1:, ::2]
        made = Filled((2, 3))
        got[xp] = (a.tolist(), s.tolist(), v.tolist(), v.seen, type(v).__name__, made.tolist(),
                   made.seen)  # fmt: skip
    assert got[nl] == got[numpy]


@pytest.mark.parametrize("call", [
    lambda xp, c: xp.zeros_like(c),
    lambda xp, c: xp.ones_like(c, dtype="int8"),
    lambda xp, c: xp.empty_like(c, shape=(4,)),
    lambda xp, c: xp.full_like(c, 7.5),
    lambda xp, c: xp.zeros_like(c, subok=False),
    lambda xp, c: xp.full_like(c, 7.5, subok=False),
    lambda xp, c: xp.resize(c, 5),
    lambda xp, c: xp.resize(c, (3, 3)),
    lambda xp, c: xp.resize(c, 0),
    lambda xp, c: xp.resize(c[:0], 4),
    lambda xp, c: xp.copy(c, subok=True),
    lambda xp, c: xp.copy(c, order="F", subok=True),
    lambda xp, c: xp.copy(c),
])  # fmt: skip
def test_functions_that_keep_a_programs_subclass(call):
    """The ``*_like`` functions (``subok=True``, their default), ``copy(subok=True)`` and
    ``resize`` give an array of a program's subclass, its ``__array_finalize__`` called, as
    NumPy's do (they gave plain arrays)."""
    got = {}
    for xp in (numpy, nl):
        class Frame(xp.ndarray):
            __array_priority__ = 1.0

            def __array_finalize__(self, obj):
                self.unit = getattr(obj, "unit", "m")

        c = xp.arange(6.0).reshape(2, 3).view(Frame)
        c.unit = "km"
        made = call(xp, c)
        got[xp] = (type(made).__name__, getattr(made, "unit", None), made.shape, made.dtype)
    assert got[nl] == got[numpy]


def test_a_reduction_calls_a_subclass_s_own_method():
    """``np.sum(x, keepdims=True)`` of a subclass that overrides ``sum`` calls that method with
    NumPy's arguments (its TypeError where it takes no ``keepdims``), as NumPy does."""
    results = []
    for xp in (numpy, nl):
        class Summed(xp.ndarray):
            def sum(self, axis=None, dtype=None, out=None):
                return type(self).__mro__[1].sum(self, axis, dtype, out, keepdims=True)

        x = xp.arange(6).reshape(2, 3).view(Summed)
        with pytest.raises(TypeError) as error:
            xp.sum(x, keepdims=True)
        results.append((str(error.value), xp.sum(x, axis=0).tolist(), xp.sum(x).shape))
    assert results[0] == results[1]


@pytest.mark.parametrize("x", [[1, 2], (1.5,), numpy.int64(10), numpy.float32(2.5), 3, 2.5,
                               numpy.arange(3)])  # fmt: skip
@numpy_compare()
def test_astype_takes_arrays_and_scalars_only(xp, x):
    """``np.astype`` of a list is NumPy's TypeError, of a NumPy scalar that scalar's own
    ``astype`` (a scalar), of a Python number NumPy's AttributeError (it gave arrays)."""
    made = xp.astype(x, numpy.float64)
    return type(made).__name__.replace("ndarray", "array"), made


@pytest.mark.parametrize("call", [
    lambda xp: xp.unravel_index(0, ()),
    lambda xp: xp.unravel_index(xp.asarray(0), ()),
    lambda xp: xp.unravel_index([0], ()),
    lambda xp: xp.unravel_index(1, ()),
    lambda xp: xp.unravel_index(5, (2, 3)),
])  # fmt: skip
@numpy_compare()
def test_unravel_index_of_a_zero_dimensional_shape(xp, call):
    """NumPy's own tests (gh-580): the one index of shape ``()`` unravels to ``()``."""
    return call(xp)


@pytest.mark.parametrize("call", [
    lambda xp: xp.unravel_index([1], ()),
    lambda xp: xp.unravel_index(xp.asarray([2, 0]), ()),
    lambda xp: xp.unravel_index([], (10, 3, 5)),
    lambda xp: xp.unravel_index((), (10, 3, 5)),
    lambda xp: xp.unravel_index(xp.asarray([]), (10, 3, 5)),
    lambda xp: xp.ravel_multi_index(([], []), (10, 3)),
    lambda xp: xp.ravel_multi_index(([], ["abc"]), (10, 3)),
    lambda xp: xp.ravel_multi_index((xp.asarray([]), xp.asarray([])), (5, 3)),
    lambda xp: xp.ravel_multi_index(xp.zeros((3, 0), "intp"), (2, 1, 0), mode="clip"),
    lambda xp: xp.ravel_multi_index(xp.zeros((3, 1), "intp"), (2, 1, 0), mode="clip"),
    lambda xp: xp.ravel_multi_index(xp.zeros((3, 1), "intp"), (2, 1, 0), mode="wrap"),
    lambda xp: xp.ravel_multi_index(xp.zeros((3, 1), "intp"), (2, 1, 0)),
])  # fmt: skip
@numpy_compare()
def test_index_conversions_raise_numpys_errors(xp, call):
    """NumPy's errors for an empty sequence (inferred as float), an index out of bounds of
    shape ``()`` (before its 0-d error) and a shape with a zero entry in 'clip' or 'wrap' mode."""
    return call(xp)


@pytest.mark.parametrize("call", [
    lambda xp, d, xy: xp.histogram(d),
    lambda xp, d, xy: xp.histogram(xy, bins=d),
    lambda xp, d, xy: xp.histogram2d(d, xy),
    lambda xp, d, xy: xp.histogram2d(xy, d),
    lambda xp, d, xy: xp.histogram2d(xy, xy, bins=d),
    lambda xp, d, xy: xp.histogram2d(xy, xy, bins=[d, 5]),
    lambda xp, d, xy: xp.histogram2d(xy, xy, weights=d),
    lambda xp, d, xy: xp.histogramdd([xy], weights=d),
])  # fmt: skip
def test_histograms_hand_another_librarys_array_its_call(call):
    """NEP 18: a histogram of an object that implements ``__array_function__`` is its answer,
    handed the arguments as the program gave them (numloom handed NumPy's function every
    default, positionally)."""

    class Dispatching:
        def __array_function__(self, function, types, args, kwargs):
            return function.__name__, types, args, kwargs

    d, xy = Dispatching(), [1, 2]
    assert call(nl, d, xy) == call(numpy, d, xy)


_OF_SUBCLASS = {  # a call of a program's ndarray subclass: its results are of that class
    "a.sum()": lambda xp, a: a.sum(), "a.sum(0)": lambda xp, a: a.sum(axis=0),
    "a.mean()": lambda xp, a: a.mean(), "a.std(0)": lambda xp, a: a.std(axis=0),
    "a.max(1)": lambda xp, a: a.max(axis=1), "a.any(0)": lambda xp, a: a.any(axis=0),
    "a.argmax(1)": lambda xp, a: a.argmax(axis=1), "a.argmax()": lambda xp, a: a.argmax(),
    "a.cumsum(0)": lambda xp, a: a.cumsum(axis=0), "a.astype": lambda xp, a: a.astype(int),
    "a.argsort()": lambda xp, a: a.argsort(), "a.take": lambda xp, a: a.take([0, 1]),
    "a.repeat": lambda xp, a: a.repeat(2), "a.dot": lambda xp, a: a.dot(a.T),
    "np.sum": lambda xp, a: xp.sum(a), "np.prod(0)": lambda xp, a: xp.prod(a, axis=0),
    "np.median": lambda xp, a: xp.median(a), "np.median(0)": lambda xp, a: xp.median(a, axis=0),
    "np.average(0)": lambda xp, a: xp.average(a, axis=0),
    "np.percentile": lambda xp, a: xp.percentile(a, 30, axis=1),
    "np.nanmean(0)": lambda xp, a: xp.nanmean(a, axis=0),
    "np.nanmax(0)": lambda xp, a: xp.nanmax(a, axis=0),
    "np.argmin(1)": lambda xp, a: xp.argmin(a, axis=1), "np.argmin": lambda xp, a: xp.argmin(a),
    "np.unique": lambda xp, a: xp.unique(a, return_counts=True),
    "np.sort": lambda xp, a: xp.sort(a), "np.roll": lambda xp, a: xp.roll(a, 1),
    "np.tile": lambda xp, a: xp.tile(a, 2), "np.insert": lambda xp, a: xp.insert(a, 1, 5.0),
    "np.delete": lambda xp, a: xp.delete(a, 1),
    "np.apply_along_axis": lambda xp, a: xp.apply_along_axis(lambda r: r * 2, 1, a),
    "np.clip": lambda xp, a: xp.clip(a, 1, 3), "np.cumprod": lambda xp, a: xp.cumprod(a, 0),
    "np.where": lambda xp, a: xp.where(a > 2, a, 0),  # (NumPy's: the base class)
    "np.nonzero": lambda xp, a: xp.nonzero(a),
}  # fmt: skip


@pytest.mark.parametrize("size", [6, 2**12])  # (small arrays run NumPy's call at once)
@pytest.mark.parametrize("call", list(_OF_SUBCLASS))
def test_results_from_a_programs_subclass_are_of_its_class_as_numpys(call, size):
    """Reductions, sorts, ``astype``, ``median``, the nan-functions, ``insert``/``delete`` and
    ``apply_along_axis`` of a program's ndarray subclass give results of that class, finalized
    from the array (its attributes carried), where NumPy's do; results NumPy gives as its
    base class or its scalars stay so."""

    def kinds(xp):
        class Tagged(xp.ndarray):
            def __array_finalize__(self, obj):
                self.tag = getattr(obj, "tag", None)

        a = xp.arange(float(size)).reshape(2, -1).view(Tagged)
        a.tag = "kept"
        made = _OF_SUBCLASS[call](xp, a)
        parts = made if isinstance(made, tuple) else (made,)
        return ([(type(p).__name__ if isinstance(p, (xp.ndarray, numpy.ndarray)) and (
                  p.ndim or type(p) not in (nl.ndarray, nl.core.array._Scalar)) else "scalar",
                  getattr(p, "tag", None)) for p in parts],  # (numloom's 0-d stand-ins: scalars)
                [numpy.asarray(p).tolist() for p in parts])  # fmt: skip

    assert kinds(nl) == kinds(numpy)


def test_apply_along_axis_gives_its_functions_subclass():
    """``apply_along_axis`` of a plain array whose function returns a program's subclass
    stacks the results as that class (NumPy's buffer is ``zeros_like`` of the first)."""
    for xp in (numpy, nl):

        class Rows(xp.ndarray):
            pass

        got = xp.apply_along_axis(lambda r: (r[::-1] * r[1:, None]).view(Rows), 0,
                                  xp.arange(18).reshape(6, 3))  # fmt: skip
        assert type(got) is Rows and got.shape == (5, 6, 3)

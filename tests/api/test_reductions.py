"""Reductions, scans and products against NumPy: every axis form, keepdims, dtype=, out=,
where=, initial=, ddof, every dtype, empty arrays, NaN, views as inputs; matmul, dot, vdot,
inner, outer, tensordot, trace with NumPy's shapes, dtypes and errors.

The tables run on the reference executor (NumPy node by node); ``test_compiled_*`` run the
generated C, where float sums are reordered: those compare within a tolerance.
"""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom

DTYPES = ("bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex64")
REDUCTIONS = (
    "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "count_nonzero", "ptp",
)  # fmt: skip
AXES = (None, 0, 1, -1, (0, 2), (-1, 0), (), (0, 1, 2), (2, 1))
SCANS = ("cumsum", "cumprod")
# Reordered float sums: a few ulps of the result's dtype (everything else is exact).
RTOL = {"float16": 2e-3, "float32": 1e-6, "complex64": 1e-6, "float64": 1e-13, "complex128": 1e-13}


pytestmark = pytest.mark.usefixtures("reference_executor")


def data(dtype: str, shape=(3, 4, 5), seed=0) -> numpy.ndarray:
    """Random values of ``dtype`` small enough that integer products and sums stay exact."""
    rng = numpy.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.4
    if dtype in ("int8", "uint8", "int64"):
        low = 0 if dtype == "uint8" else -3
        return rng.integers(low, 4, shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def rtol_for(result) -> float:
    """The tolerance for NumPy's result: the loosest of its float dtypes (0: exact)."""
    if isinstance(result, (tuple, list)):
        return max((rtol_for(r) for r in result), default=0.0)
    dtype = getattr(result, "dtype", None)
    return 0.0 if dtype is None else RTOL.get(dtype.name, 0.0)


def compare(fn, *args, **kwargs):
    """``numpy_compare`` with the tolerance of the dtypes NumPy's run returns."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rtol = rtol_for(fn(numpy, *args, **kwargs))
    except Exception:  # noqa: BLE001 (numpy_compare compares the errors)
        rtol = 0.0
    numpy_compare(rtol=rtol, atol=rtol)(fn)(*args, **kwargs)


def _reduce(xp, name, dtype, axis, keepdims, shape=(3, 4, 5)):
    kwargs = {} if name in SCANS else {"keepdims": keepdims}
    return getattr(xp, name)(xp.asarray(data(dtype, shape)), axis=axis, **kwargs)


@pytest.mark.parametrize(
    "name, keepdims",
    [(n, k) for n in REDUCTIONS for k in (False, True) if not (k and n in SCANS)],
)
@pytest.mark.parametrize("axis", AXES, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction(name, keepdims, dtype, axis):
    """Scans (no keepdims) and argmax/argmin take one axis or None: NumPy's errors else."""
    compare(_reduce, name, dtype, axis, keepdims)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_method(name):
    def body(xp):
        a = xp.asarray(data("int64"))
        if not hasattr(a, name):
            return None
        return getattr(a, name)(1), getattr(a, name)()

    compare(body)


# --- dtype= ------------------------------------------------------------------------------------

OUT_DTYPES = (None, "int8", "int32", "uint16", "float16", "float32", "float64", "complex128")


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("to", OUT_DTYPES + ("bool",))
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float16", "complex64"])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod"])
def test_dtype_argument(name, dtype, to, axis):
    """mean/var/std into integer dtypes truncate as NumPy's unsafe divide; std into an integer
    array raises NumPy's casting error (a 0-d result is cast instead)."""

    def body(xp):
        return getattr(xp, name)(xp.asarray(data(dtype, (3, 5))), axis=axis, dtype=to)

    truncates = to not in (None, "bool") and numpy.dtype(to).kind in "iu"
    if (
        truncates
        and dtype in ("float16", "complex64")
        and name in ("mean", "var", "std")
        and (numloom.get_device() != "cpu")
    ):
        # Each float term is truncated to the integer dtype: a GPU's summation order moves a
        # term that lies within an ulp of an integer to the other side of it.
        numpy_compare(atol=1)(body)()
        return
    compare(body)


@pytest.mark.parametrize("dtype", DTYPES)
@numpy_compare()
def test_mean_var_std_result_dtypes(xp, dtype):
    """Integers and bool give float64, float16 gives float16 (summed in float32)."""
    a = xp.asarray(data(dtype, (4, 5)))
    return tuple(getattr(xp, f)(a, axis=0).dtype for f in ("mean", "var", "std"))


# --- out= --------------------------------------------------------------------------------------


@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64", "int8", "bool", "complex64"])
@pytest.mark.parametrize("name", REDUCTIONS[:13] + ("ptp",))
def test_out_argument(name, out_dtype):
    """The result lands in out (returned), cast unsafely; argmax wants an integer out and std
    an inexact one, as NumPy."""

    def body(xp):
        a = xp.asarray(data("float64", (4, 5)))
        base = xp.zeros((2,) + ((4, 5) if name in SCANS else (5,)), out_dtype)
        out = base[1]
        got = getattr(xp, name)(a, axis=0, out=out)
        return got is out, base

    compare(body)


@pytest.mark.parametrize("shape", [(3,), (1, 5), (5, 1), (4, 5), ()], ids=repr)
@pytest.mark.parametrize("name", REDUCTIONS[:13] + ("ptp",))
@numpy_compare()
def test_out_of_the_wrong_shape(xp, name, shape):
    return getattr(xp, name)(xp.asarray(data("float64", (4, 5))), axis=0, out=xp.zeros(shape))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "argmin", "any", "var"])
@numpy_compare()
def test_out_with_keepdims_and_read_only_out(xp, name):
    a = xp.asarray(data("float64", (4, 5)))
    out = xp.zeros((1, 5), "int64" if name.startswith("arg") else "float64")
    getattr(xp, name)(a, axis=0, out=out, keepdims=True)
    getattr(xp, name)(a, axis=0, out=xp.broadcast_to(out, (3, 1, 5))[0], keepdims=True)
    return out


@pytest.mark.parametrize("name", ["sum", "mean", "std", "max", "cumsum", "argmax"])
def test_numpy_out_array_is_filled(name):
    a = data("float64", (4, 5))
    shape = (4, 5) if name in SCANS else (5,)
    want = numpy.zeros(shape, "int64" if name == "argmax" else "float64")
    got = numpy.zeros_like(want)
    getattr(numpy, name)(a, axis=0, out=want)
    assert getattr(numloom, name)(numloom.asarray(a), axis=0, out=got) is got
    numpy.testing.assert_allclose(got, want, rtol=1e-13)


@numpy_compare()
def test_mean_into_an_integer_out_divides_there(xp):
    """NumPy sums into out first, then divides out by the count (truncating twice)."""
    a = xp.asarray([[2.6, 0.9], [2.6, 0.9], [1.0, 0.9]])
    out = xp.zeros(2, "int64")
    xp.mean(a, axis=0, out=out)
    out16 = xp.zeros(2, "float16")
    xp.mean(xp.asarray(data("float16", (7, 2))), axis=0, out=out16)
    return out, out16


# --- where=, initial= ----------------------------------------------------------------------------

WHERE = numpy.array([[True, False, True, True, False]] * 2 + [[False] * 5, [True] * 5])


@pytest.mark.parametrize("dtype", ["int64", "float64", "bool", "float16", "complex64"])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all"])
def test_where_argument(name, dtype):
    """max and min need initial with where (NumPy's error names maximum/minimum); var and std
    count only the selected items (NaN where none is)."""

    def body(xp):
        a = xp.asarray(data(dtype, (4, 5)))
        fn = getattr(xp, name)
        out = [fn(a, where=xp.asarray(WHERE)), fn(a, axis=1, where=WHERE, keepdims=True)]
        if name in ("max", "min") and dtype != "complex64":
            out.append(fn(a, axis=0, where=WHERE[0], initial=0))
        return tuple(out)

    compare(body)


@pytest.mark.parametrize("name", ["sum", "max", "mean", "var", "any"])
@numpy_compare()
def test_where_that_does_not_broadcast(xp, name):
    kwargs = {"initial": 0} if name == "max" else {}
    return getattr(xp, name)(xp.asarray(data("float64", (4, 5))), where=xp.ones(3, bool), **kwargs)


@pytest.mark.parametrize("initial", [5, -3, 2.5, 100])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_initial_argument(name, dtype, initial):
    def body(xp):
        a = xp.asarray(data(dtype, (4, 5)))
        return getattr(xp, name)(a, axis=0, initial=initial), getattr(xp, name)(a, initial=initial)

    compare(body)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=repr)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nansum", "nanprod"])
@numpy_compare()
def test_where_and_initial_together(xp, name, axis):
    """``initial`` joins the result once; the elements outside ``where`` count as the
    reduction's identity (NumPy's own tests: ``nansum(a, where=w, initial=2)``; numloom filled
    them with ``initial``, a wrong sum)."""
    a = xp.arange(20.0).reshape(4, 5) / 4 - 2  # (sums exact in any order: docs/semantics.md)
    if name.startswith("nan"):
        a[0, :] = numpy.nan
    return getattr(xp, name)(a, axis=axis, where=WHERE, initial=2)


@pytest.mark.parametrize("axis", [None, 0, 1, ()], ids=repr)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@numpy_compare()
def test_initial_over_an_empty_axis(xp, name, axis):
    return getattr(xp, name)(xp.zeros((0, 3), "int16"), axis=axis, initial=3)


# --- ddof, mean=, correction= -------------------------------------------------------------------


@pytest.mark.parametrize("ddof", [0, 1, 2, 4, 5, 1.5])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "complex64", "float16", "bool"])
@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof(name, dtype, ddof):
    """ddof at or past the count gives inf or NaN, as NumPy (with its RuntimeWarning)."""

    def body(xp):
        a = xp.asarray(data(dtype, (4, 5)))
        return getattr(xp, name)(a, axis=0, ddof=ddof), getattr(xp, name)(a, ddof=ddof)

    compare(body)


@pytest.mark.parametrize("name", ["var", "std"])
@numpy_compare(rtol=1e-13)
def test_mean_and_correction_arguments(xp, name):
    a = xp.asarray(data("float64", (4, 5)))
    fn = getattr(xp, name)
    shifted = xp.mean(a, axis=1, keepdims=True) + 1.0  # not the mean: the result shows it
    return fn(a, axis=1, mean=shifted), fn(a, correction=1), fn(a, axis=0, ddof=0, correction=1)


@numpy_compare()
def test_ddof_and_correction_together(xp):
    return xp.var(xp.asarray(data("float64", (4, 5))), ddof=1, correction=1)


# --- empty arrays, NaN, zero-d, views -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
@pytest.mark.parametrize("axis", [None, 0, -1], ids=repr)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)], ids=repr)
@pytest.mark.parametrize("name", REDUCTIONS)
@numpy_compare()
def test_empty(xp, name, shape, axis, dtype):
    """max, min, argmax, argmin and ptp of nothing raise NumPy's errors; mean of nothing is NaN."""
    return getattr(xp, name)(xp.zeros(shape, dtype), axis=axis)


@pytest.mark.parametrize("name", REDUCTIONS)
@numpy_compare()
def test_empty_with_keepdims(xp, name):
    if name in SCANS:
        return getattr(xp, name)(xp.zeros((0, 3)), axis=0)
    return getattr(xp, name)(xp.zeros((0, 3)), axis=0, keepdims=True)


NAN_DATA = numpy.array(
    [[1.0, numpy.nan, 3.0], [numpy.nan] * 3, [2.0, 0.0, -1.0], [numpy.inf, -numpy.inf, 5.0]]
)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "ptp", "sum", "cumsum"])
@numpy_compare()
def test_nan_propagates(xp, name, dtype, axis):
    return getattr(xp, name)(xp.asarray(NAN_DATA.astype(dtype)), axis=axis)


ORDER_CASES = {
    "complex": [1 + 5j, 2 + 0j, 2 - 1j, 1 + 7j, 2 - 1j],
    "complex nan": [1 + 1j, complex(1, numpy.nan), 2 + 0j, complex(numpy.nan, 0)],
    "ties": [3, 1, 3, 1, 2, 2],
    "bool": [False, True, True, False],
    "signed zeros": [0.0, -0.0, 0.0, -0.0],
    "uint8 extremes": numpy.array([0, 255, 7], numpy.uint8),
    "int8 extremes": numpy.array([-128, 127, 7], numpy.int8),
}


@pytest.mark.parametrize("values", ORDER_CASES.values(), ids=ORDER_CASES.keys())
@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "ptp"])
@numpy_compare()
def test_ordering(xp, name, values):
    return getattr(xp, name)(xp.asarray(values))


@pytest.mark.parametrize("axis", [None, 0, -1, ()], ids=repr)
@pytest.mark.parametrize("name", REDUCTIONS)
@numpy_compare()
def test_zero_d_input(xp, name, axis):
    """NumPy accepts axis 0 and -1 for a 0-d array; scans of one give shape (1,)."""
    return getattr(xp, name)(xp.asarray(3.5), axis=axis)


@pytest.mark.parametrize("name", REDUCTIONS)
@numpy_compare()
def test_host_inputs_and_bad_axes(xp, name):
    fn = getattr(xp, name)
    a = xp.asarray(data("float64"))
    results = [fn([[1, 2], [3, 4]], axis=0), fn(5)]
    for axis in (3, (0, 0), 1.0, -4):
        try:
            results.append(fn(a, axis=axis))
        except Exception as e:  # noqa: BLE001 (each error compared by type and message)
            results.append(f"{type(e).__name__}: {e}")
    return tuple(results)


VIEW_INPUTS = {
    "transposed": lambda a: a.T,
    "strided": lambda a: a[1::2, ::3],
    "reversed": lambda a: a[::-1, ::-2],
    "broadcast": lambda a: numpy_or_numloom(a).broadcast_to(a[2], (3, 8)),
    "diagonal": lambda a: a.diagonal(),
    "3-d transposed": lambda a: a.reshape(2, 3, 8).transpose(2, 0, 1)[:, ::-1],
}


def numpy_or_numloom(a):
    return numloom if isinstance(a, numloom.ndarray) else numpy


@pytest.mark.parametrize("view", VIEW_INPUTS.values(), ids=VIEW_INPUTS.keys())
@pytest.mark.parametrize("name", REDUCTIONS)
def test_views_as_inputs(name, view):
    def body(xp):
        v = view(xp.asarray(data("float64", (6, 8))))
        fn = getattr(xp, name)
        return fn(v, axis=0), fn(v), fn(v, axis=-1)

    compare(body)


# --- count_nonzero, average ----------------------------------------------------------------------


@numpy_compare()
def test_count_nonzero(xp):
    a = xp.asarray(data("int8"))
    return (
        xp.count_nonzero(a),
        xp.count_nonzero(xp.asarray(data("float32")), axis=(0, 2)),
        xp.count_nonzero(xp.asarray(data("bool")), axis=1, keepdims=True),
        xp.count_nonzero(xp.asarray(data("bool")), keepdims=True),
        xp.count_nonzero(xp.asarray([0j, 1j, 0, 1 + 0j])),
        xp.count_nonzero(xp.asarray([numpy.nan, 0.0, -0.0])),
        xp.count_nonzero(a.T[::2], axis=-1),
    )


@numpy_compare()
def test_count_nonzero_of_everything_is_numpys_intp(xp):
    n = xp.count_nonzero(xp.asarray(data("int8")))
    return n.dtype, n.shape, int(n) + 1


AVERAGES = [
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), axis=1, weights=data("float64", (5,))),
    lambda xp: xp.average(xp.asarray(data("int64", (4, 5))), weights=xp.asarray(data("uint8", (4, 5)) + 1)),
    lambda xp: xp.average(xp.asarray(data("float32", (4, 5))), axis=0, weights=xp.asarray(data("float32", (4,))) + 3, returned=True),
    lambda xp: xp.average(xp.asarray(data("int64", (4, 5))), axis=0, returned=True),
    lambda xp: xp.average(xp.asarray(data("int64", (4, 5))), returned=True),
    lambda xp: xp.average(xp.asarray(data("int64", (4, 5))), axis=(0, 1), returned=True, keepdims=True),
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), axis=1, weights=xp.ones(4)),
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), weights=xp.ones(5)),
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), axis=-1, weights=xp.arange(5.0), keepdims=True),
    lambda xp: xp.average(xp.asarray(data("float64", (3, 4, 5))), axis=(0, 2), weights=xp.asarray(data("float64", (3, 5))) + 4),
    lambda xp: xp.average(xp.asarray(data("float64", (3, 4, 5))), axis=(2, 0), weights=xp.asarray(data("float64", (5, 3))) + 4),
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), axis=1, weights=xp.zeros(5)),
    lambda xp: xp.average(xp.asarray(data("complex64", (4, 5))), axis=1),
    lambda xp: xp.average(xp.asarray(data("float16", (4, 5))), axis=1, weights=xp.asarray(data("float16", (5,))) + 4),
    lambda xp: xp.average(xp.asarray(data("bool", (4, 5))), axis=1, weights=xp.asarray(data("int8", (5,))) + 4),
    lambda xp: xp.average(xp.asarray(data("float64", (4, 5))), axis=2),
]  # fmt: skip


@pytest.mark.parametrize("fn", AVERAGES, ids=range(len(AVERAGES)))
@numpy_compare(rtol=1e-6)
def test_average(xp, fn):
    """Weights along axes (a tuple too), returned scales broadcast, zero weights raise."""
    return fn(xp)


@numpy_compare()
def test_ptp(xp):
    return (
        xp.ptp(xp.asarray(numpy.array([-128, 127], numpy.int8))),
        xp.ptp(xp.asarray(data("int64")), axis=(0, 1), keepdims=True),
        xp.ptp(xp.asarray(data("int64")), axis=0, out=xp.zeros((4, 5), "int64")),
    )


# --- ufunc.reduce and accumulate go through the same code ------------------------------------


@pytest.mark.parametrize(
    "ufunc", ["add", "multiply", "maximum", "minimum", "logical_or", "logical_and"]
)
@numpy_compare()
def test_ufunc_reduce_and_accumulate(xp, ufunc):
    uf = getattr(xp, ufunc)
    a = xp.asarray(data("int64"))
    out = [uf.reduce(a), uf.reduce(a, axis=1), uf.reduce(a, axis=(0, 2), keepdims=True)]
    if ufunc in ("add", "multiply"):
        out += [uf.accumulate(a, axis=1), uf.reduce(a, axis=0, dtype="int8", initial=2)]
    return tuple(out)


# --- products ----------------------------------------------------------------------------------

PRODUCT_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (6, 3, 1)), ((2, 3), (4, 3)),
    ((3,), (4,)), ((), (3,)), ((5, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
    ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((2, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)),
    ((2, 3, 4), (2, 5, 3)), ((3, 1), (1, 4)),
]  # fmt: skip
PRODUCT_DTYPES = [
    ("float64", "float64"), ("float32", "float32"), ("int64", "int64"), ("int8", "int8"),
    ("bool", "bool"), ("float32", "int64"), ("complex64", "float32"), ("uint8", "int8"),
    ("float16", "float16"), ("int8", "float16"), ("complex64", "complex64"),
]  # fmt: skip
PRODUCTS = ["matmul", "dot", "inner", "outer", "vdot", "@"]


def _product(xp, name, a, b):
    if name == "@":
        return a @ b
    return getattr(xp, name)(a, b)


@pytest.mark.parametrize("dtypes", PRODUCT_DTYPES, ids="-".join)
@pytest.mark.parametrize("shapes", PRODUCT_SHAPES, ids=repr)
@pytest.mark.parametrize("name", PRODUCTS)
def test_product(name, shapes, dtypes):
    """Shapes, dtypes and NumPy's errors (mismatched dimensions, a 0-d operand of matmul)."""

    def body(xp):
        a, b = (xp.asarray(data(d, s, seed=k)) for k, (d, s) in enumerate(zip(dtypes, shapes)))
        return _product(xp, name, a, b)

    compare(body)


@pytest.mark.parametrize("name", PRODUCTS[:5])
def test_product_of_views_and_host_data(name):
    def body(xp):
        a, b = xp.asarray(data("float64", (4, 3))), xp.asarray(data("float64", (4, 6), seed=1))
        fn = getattr(xp, name)
        c = xp.broadcast_to(xp.asarray(data("float64", (3, 4))), (2, 3, 4))
        out = [fn(a.T, b[:, ::2]), fn(a[::-1].T, b[::-1, ::-2]), fn([[1, 2]], [[3, 4]])]
        if name in ("matmul", "dot"):
            out += [fn(c, b[:, :2]), fn(a.T[0], b[:, 1])]
        return tuple(out)

    compare(body)


MATMUL_OUTS = [
    ("float64", (2, 4), {}), ("float32", (2, 4), {}), ("int64", (2, 4), {}),
    ("int64", (2, 4), {"casting": "unsafe"}), ("complex64", (2, 4), {}), ("float64", (2, 5), {}),
    ("float64", (3, 2, 4), {}), ("float64", (4,), {}), ("float64", (4, 2), {}),
    ("float32", (2, 4), {"dtype": "float32"}), ("float64", (2, 4), {"dtype": "int8"}),
]  # fmt: skip


@pytest.mark.parametrize("out_dtype, shape, kwargs", MATMUL_OUTS, ids=repr)
@numpy_compare()
def test_matmul_out(xp, out_dtype, shape, kwargs):
    """out is cast same_kind (or as casting says); extra leading axes of out get copies."""
    out = xp.zeros(shape, out_dtype)
    got = xp.matmul(xp.asarray(data("float64", (2, 3))), xp.asarray(data("float64", (3, 4))),
                    out=out, **kwargs)  # fmt: skip
    return got is out, out


@pytest.mark.parametrize("kwargs", [{"dtype": "float32"}, {"dtype": "int8"},
                                    {"dtype": "float32", "casting": "no"}, {"dtype": bool}], ids=repr)  # fmt: skip
@numpy_compare()
def test_matmul_dtype(xp, kwargs):
    return xp.matmul(xp.asarray(data("int64", (2, 3))), xp.asarray(data("int64", (3, 4))), **kwargs)


@numpy_compare(rtol=1e-13)
def test_matmul_with_axes_runs_through_numpy(xp):
    """NumPy's gufunc ``axes=`` (numloom runs it through NumPy rather than ignore it)."""
    a, b = xp.asarray(data("float64", (3, 4))), xp.asarray(data("float64", (3, 4), seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        return xp.matmul(a, b, axes=[(0, 1), (1, 0), (0, 1)])


@numpy_compare()
def test_matmul_in_place(xp):
    a = xp.asarray(data("float64", (3, 3)))
    b = xp.asarray(data("float64", (3, 3)))
    xp.matmul(a, a, out=a)
    b @= xp.asarray(data("float64", (3, 3), seed=2))
    out = xp.zeros((2, 3, 3))
    xp.matmul(a, b, out=out[1])
    return a, b, out


DOT_OUTS = [
    ((2, 3), (3, 4), "float64", (2, 4)), ((2, 3), (3, 4), "float32", (2, 4)),
    ((2, 3), (3, 4), "float64", (4, 2)), ((2, 3), (3, 4), "float64", (8,)),
    ((3,), (3,), "float64", ()), ((), (3,), "float64", (3,)), ((), (3,), "int64", (3,)),
    ((2, 3, 4), (5, 4, 2), "float64", (2, 3, 5, 2)), ((2, 3, 4), (5, 4, 2), "float64", (2, 3, 10)),
]  # fmt: skip


@pytest.mark.parametrize("sa, sb, out_dtype, shape", DOT_OUTS, ids=repr)
@numpy_compare(rtol=1e-13)
def test_dot_out(xp, sa, sb, out_dtype, shape):
    """dot never casts: out must have the result's exact dtype and shape and be C-contiguous."""
    out = xp.zeros(shape, out_dtype)
    got = xp.dot(xp.asarray(data("float64", sa)), xp.asarray(data("float64", sb)), out=out)
    return got is out, out


@numpy_compare()
def test_dot_out_not_contiguous(xp):
    out = xp.zeros((4, 2))
    return xp.dot(
        xp.asarray(data("float64", (2, 3))), xp.asarray(data("float64", (3, 4))), out=out.T
    )


TENSORDOTS = [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4, 5), (5, 2), 1), ((3, 4), (4, 3), 0),
    ((3, 4, 5), (5, 4, 2), ([1, 2], [1, 0])), ((3, 4, 5), (3, 5), ((0, 2), (0, 1))),
    ((3, 4), (4, 5), ([1], [0])), ((3, 4), (4, 5), (1, 0)), ((3, 4), (4, 5), (-1, 0)),
    ((3, 4), (5, 4), 1), ((3, 4), (3, 4), ([0, 1], [1, 0])), ((3,), (3,), 1), ((), (), 0),
    ((3, 4), (4, 5), 3), ((2, 3), (3, 2), ([0], [0, 1])), ((3, 4), (4, 5), ([5], [0])),
    ((3, 4), (4, 5), ([-3], [0])), ((2, 3), (2, 3), 2),
]  # fmt: skip


@pytest.mark.parametrize("sa, sb, axes", TENSORDOTS, ids=repr)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "uint8")], ids="-".join)
def test_tensordot(sa, sb, axes, dtypes):
    def body(xp):
        a, b = xp.asarray(data(dtypes[0], sa)), xp.asarray(data(dtypes[1], sb, seed=1))
        return xp.tensordot(a, b, axes=axes), xp.tensordot(a, b, axes) if axes != 2 else 0

    compare(body)


TRACES = [
    ((4, 5), {}), ((4, 5), {"offset": 1}), ((4, 5), {"offset": -2}), ((4, 5), {"offset": 10}),
    ((3, 4, 5), {"axis1": 1, "axis2": 2}), ((3, 4, 5), {"axis1": 2, "axis2": 0, "offset": 1}),
    ((4,), {}), ((4, 4), {"dtype": "float32"}), ((4, 4), {"axis1": 0, "axis2": 0}),
]  # fmt: skip


@pytest.mark.parametrize("shape, kwargs", TRACES, ids=repr)
@pytest.mark.parametrize("dtype", ["int8", "bool", "float32", "uint8", "complex64"])
def test_trace(shape, kwargs, dtype):
    def body(xp):
        a = xp.asarray(data(dtype, shape))
        return xp.trace(a, **kwargs), a.trace(**kwargs)

    compare(body)


@numpy_compare()
def test_trace_out(xp):
    out = xp.zeros(5)
    xp.trace(xp.asarray(data("float64", (3, 4, 5))), out=out)
    return out


# --- the generated C -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", "float64", "bool"])
@pytest.mark.parametrize("name", ["sum", "mean", "var", "max", "argmin", "any", "cumsum", "prod"])
def test_compiled_reduction(name, dtype, compiled):
    def body(xp):
        a = xp.asarray(data(dtype, (6, 8)))
        fn = getattr(xp, name)
        kw = {} if name in SCANS else {"keepdims": True}
        return fn(a), fn(a, axis=0), fn(a.T[::2], axis=-1), fn(a[::-1], axis=1, **kw)

    compare(body)


@pytest.mark.parametrize("size", [100, 255, 5000])
def test_compiled_sums_into_bool(size, compiled):
    """NumPy adds bools as ``or`` and multiplies them as ``and``: the C sum of a bool
    accumulator gave False for 100 Trues and crashed for more (the reduction is now any/all)."""

    def body(xp):
        a = xp.asarray(numpy.arange(size) % 3 != 0)
        return (xp.sum(a, dtype=bool), xp.prod(a, dtype=bool), xp.mean(a, dtype=bool),
                xp.sum(a.reshape(-1, 1), axis=0, dtype=bool), xp.sum(a, dtype=bool, initial=0))  # fmt: skip

    compare(body)


def test_compiled_var_keepdims(compiled):
    """var's row kernel of a (1,) array once declared 'c2' twice and did not compile."""
    a = numloom.asarray(numpy.array([2], numpy.int8))
    numpy.testing.assert_array_equal(numloom.var(a, axis=0, keepdims=True).get(), [0.0])


@pytest.mark.parametrize("name", ["sum", "mean", "std", "max", "min", "argmax", "prod"])
def test_compiled_zero_d_and_no_axes(name, compiled):
    def body(xp):
        fn = getattr(xp, name)
        a = xp.asarray(data("float64", (3, 4)))
        return (
            fn(xp.asarray(2.5)),
            fn(xp.asarray(2.5), axis=0),
            fn(a, axis=()) if name != "argmax" else 0,
        )

    compare(body)


@pytest.mark.parametrize("name", ["matmul", "dot", "vdot", "tensordot", "trace"])
def test_compiled_products(name, compiled):
    def body(xp):
        a, b = xp.asarray(data("float32", (3, 4))), xp.asarray(data("float32", (4, 3), seed=1))
        if name == "trace":
            return xp.trace(a @ b), xp.trace(a[:, ::-1], offset=1)
        if name == "tensordot":
            return xp.tensordot(a, b.T, axes=([0, 1], [0, 1]))
        return getattr(xp, name)(a.T[::-1], b.T) if name != "vdot" else xp.vdot(a, b)

    compare(body)


def test_compiled_float32_sum_is_as_accurate_as_numpys(compiled):
    a = numpy.full(1 << 20, 0.1, numpy.float32)
    got = float(numloom.sum(numloom.asarray(a)))
    assert abs(got - float(a.astype(numpy.float64).sum())) <= 1e-6 * 2**20 * 0.1


@pytest.mark.parametrize("name", ["sum", "mean", "max", "argmin", "cumsum", "prod", "any"])
def test_compiled_empty(name, compiled):
    def body(xp):
        fn = getattr(xp, name)
        return fn(xp.zeros((0, 3)) + 1, axis=0), fn(xp.ones((3, 0)) * 2, axis=0)

    compare(body)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
@numpy_compare()
def test_a_good_axis_checked_once_does_not_let_an_equal_bad_one_through(xp, name):
    """NumPy's argument checks are remembered for arguments that passed them: ``axis=1.0``,
    equal to ``1`` as a key, still raises NumPy's TypeError after ``axis=1`` passed."""
    a = xp.asarray(data("float64"))
    results = [getattr(xp, name)(a, axis=1)]
    for axis in (1.0, (0, 1.0), True):
        try:
            results.append(getattr(xp, name)(a, axis=axis))
        except Exception as e:  # noqa: BLE001 (each error compared by type and message)
            results.append(f"{type(e).__name__}: {e}")
    return tuple(results)


@pytest.mark.parametrize("call", [lambda xp, a: a.mean(axis=(1, 2), dtype=xp.float64),
                                  lambda xp, a: xp.sum(a, axis=(0, 2), dtype=xp.float32),
                                  lambda xp, a: a.var(axis=(0, 1), dtype=xp.float64),
                                  lambda xp, a: xp.prod(a, axis=(2,), dtype=xp.int64)],
                         ids=["mean", "sum", "var", "prod"])  # fmt: skip
@pytest.mark.parametrize("shape", [(2, 7, 3), (300, 7, 3)])
@numpy_compare(rtol=1e-12)  # (a GPU sums in its own order: a variance's last digits)
def test_reductions_over_a_tuple_of_axes_with_a_dtype(xp, call, shape):
    """A tuple of axes with ``dtype=`` (``a.mean(axis=(1, 2), dtype=np.float64)``): the check of
    NumPy's errors called this module's ``all`` on the axes, which raised numloom's own
    OtherDtype."""
    a = xp.asarray(numpy.arange(numpy.prod(shape)).reshape(shape) % 11)
    return call(xp, a)

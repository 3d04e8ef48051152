"""NumPy functions composed of numloom operations against NumPy: the nan-functions, cov and
corrcoef, kron, cross, einsum, gradient, trapezoid, ediff1d, convolve, correlate, interp,
polyval, vander, tri, isin and array_equiv, with NumPy's dtypes, shapes, warnings and errors;
fusion claims as kernel counts; no fallback on a GPU."""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom

RNG = numpy.random.default_rng(0)
# Reordered float sums and products (BLAS, cuBLAS, tree sums): a few ulps of the dtype.
RTOL = {"float16": 3e-3, "float32": 2e-5, "complex64": 2e-5, "float64": 1e-12,
        "complex128": 1e-12}  # fmt: skip


def with_nans(dtype: str, shape=(4, 5), seed=0) -> numpy.ndarray:
    """Random data of ``dtype``; for float and complex dtypes, NaNs sprinkled in and one
    all-NaN row."""
    rng = numpy.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("int8", "int64", "uint8"):
        return rng.integers(0 if dtype == "uint8" else -3, 4, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    x[rng.random(shape) < 0.3] = numpy.nan
    if x.ndim >= 2:
        x[1] = numpy.nan
    return x


def rtol_of(dtype) -> float:
    return RTOL.get(numpy.dtype(dtype).name, 0.0)


# --- nan-functions ------------------------------------------------------------------------------

NAN_REDUCTIONS = ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                  "nanargmax", "nanargmin", "nancumsum", "nancumprod")  # fmt: skip
NAN_DTYPES = ("float32", "float64", "complex128", "int64", "bool", "float16")


@pytest.mark.parametrize("dtype", NAN_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_nan_functions(name, axis, dtype):
    """Values, dtypes and shapes as NumPy's; all-NaN rows give NaN (or NumPy's ValueError
    for the arg-functions over them)."""
    host = with_nans(dtype)

    @numpy_compare(rtol=rtol_of(dtype) * 4)
    def body(xp):
        return getattr(xp, name)(xp.asarray(host), axis=axis)

    body()


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
                                  "nanstd"])  # fmt: skip
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
@numpy_compare(rtol=1e-12)
def test_nan_functions_keepdims(xp, name, axis):
    return getattr(xp, name)(xp.asarray(with_nans("float64", (3, 4, 2))), axis=axis,
                             keepdims=True)  # fmt: skip


@pytest.mark.parametrize("ddof", [0, 1, 2, 5])
@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@numpy_compare(rtol=1e-12)
def test_nanvar_ddof(xp, name, ddof):
    return getattr(xp, name)(xp.asarray(with_nans("float64", (6, 5))), axis=0, ddof=ddof)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanprod", "nanvar"])
@numpy_compare(rtol=1e-12)
def test_nan_functions_where(xp, name):
    a = xp.asarray(with_nans("float64", (3, 4)))
    mask = xp.asarray(numpy.array([True, False, True, True]))
    return getattr(xp, name)(a, axis=1, where=mask)


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@numpy_compare()
def test_nanmax_initial_and_where(xp, name):
    a = xp.asarray(with_nans("float64", (3, 4)))
    mask = xp.asarray(numpy.array([True, False, True, True]))
    return (getattr(xp, name)(a, axis=0, initial=0.5),
            getattr(xp, name)(a, axis=1, initial=-0.5, where=mask))  # fmt: skip


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nancumsum", "nanstd"])
@numpy_compare(rtol=1e-6)
def test_nan_functions_out(xp, name):
    a = xp.asarray(with_nans("float64", (3, 4)))
    out = xp.zeros((3, 4) if name == "nancumsum" else (4,), numpy.float32)
    r = getattr(xp, name)(a, axis=None if name == "nancumsum" else 0, out=out.reshape(-1)
                          if name == "nancumsum" else out)  # fmt: skip
    return r, out


@numpy_compare(rtol=1e-12)
def test_nan_functions_dtype_argument(xp):
    a = xp.asarray(with_nans("float32", (3, 4)))
    return (xp.nansum(a, dtype=numpy.float64), xp.nanmean(a, axis=0, dtype=numpy.float64),
            xp.nanvar(a, axis=1, dtype=numpy.float64), xp.nancumprod(a, dtype=numpy.float64))  # fmt: skip


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, a: xp.nanmin(xp.zeros((0, 3))),
        lambda xp, a: xp.nanmax(a, axis=0, where=xp.asarray(numpy.ones(4, bool))),
        lambda xp, a: xp.nanmean(a, dtype=numpy.int64),
        lambda xp, a: xp.nanvar(a, out=xp.zeros((), numpy.int64)),
        lambda xp, a: xp.nanvar(a, ddof=1, correction=1),
        lambda xp, a: xp.nanargmax(a),
        lambda xp, a: xp.nanargmin(a, axis=1),
        lambda xp, a: xp.nanargmax(xp.zeros(0)),
        lambda xp, a: xp.nansum(a, axis=2),
        lambda xp, a: xp.nanmin(a, out=xp.zeros(3)),
    ],
)  # fmt: skip
def test_nan_function_errors(call):
    """NumPy's exception types and messages, all-NaN slices included."""
    host = numpy.full((3, 4), numpy.nan)
    host[0, 0] = 1.0
    numpy_compare()(lambda xp: call(xp, xp.asarray(host)))()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda xp, a: xp.nanmean(a, axis=1), "Mean of empty slice"),
        (lambda xp, a: xp.nanmax(a, axis=1), "All-NaN slice encountered"),
        (lambda xp, a: xp.nanmin(a), None),
        (lambda xp, a: xp.nanvar(a, axis=1, ddof=1), "Degrees of freedom <= 0 for slice."),
        (lambda xp, a: xp.nanstd(a[:1], axis=1), None),
    ],
)
def test_nan_function_warnings(xp, call, message):
    """An all-NaN slice warns as NumPy does (and a slice with values does not)."""
    host = numpy.array([[1.0, numpy.nan, 2.0], [numpy.nan] * 3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call(xp, xp.asarray(host))
        numpy.asarray(got)
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert messages == ([] if message is None else [message])


@given(st.lists(st.one_of(st.floats(-1e3, 1e3), st.just(float("nan"))), min_size=1,
                max_size=30), st.sampled_from(NAN_REDUCTIONS[:7]))  # fmt: skip
@settings(max_examples=40, deadline=None)
def test_nan_functions_hypothesis(values, name):
    numpy_compare(rtol=1e-9, atol=1e-9)(
        lambda xp: getattr(xp, name)(xp.asarray(numpy.array(values)))
    )()


# --- statistics ----------------------------------------------------------------------------------

COV_CALLS = [
    lambda xp, m, y, w: xp.cov(m),
    lambda xp, m, y, w: xp.cov(m, rowvar=False),
    lambda xp, m, y, w: xp.cov(m, bias=True),
    lambda xp, m, y, w: xp.cov(m, ddof=2),
    lambda xp, m, y, w: xp.cov(m, y),
    lambda xp, m, y, w: xp.cov(m[0]),
    lambda xp, m, y, w: xp.cov(m, fweights=w),
    lambda xp, m, y, w: xp.cov(m, aweights=w * 0.5),
    lambda xp, m, y, w: xp.cov(m, fweights=w, aweights=w * 0.25, ddof=1),
    lambda xp, m, y, w: xp.cov(m, dtype=numpy.float32),
    lambda xp, m, y, w: xp.cov(m.astype(numpy.complex128) * 1j + m),
    lambda xp, m, y, w: xp.corrcoef(m),
    lambda xp, m, y, w: xp.corrcoef(m, y, rowvar=True),
    lambda xp, m, y, w: xp.corrcoef(m.astype(numpy.complex128) * (1 + 2j)),
    lambda xp, m, y, w: xp.corrcoef(m[0]),
    lambda xp, m, y, w: xp.cov(m.reshape(1, 3, 6)),
    lambda xp, m, y, w: xp.cov(m, ddof=1.5),
    lambda xp, m, y, w: xp.cov(m, fweights=w * 0.5),
    lambda xp, m, y, w: xp.cov(m, fweights=-w),
    lambda xp, m, y, w: xp.cov(m, aweights=w[:-1]),
]


@pytest.mark.parametrize("k", range(len(COV_CALLS)))
def test_cov_corrcoef(k):
    host_m = RNG.standard_normal((3, 6))
    host_y = RNG.standard_normal((2, 6))
    weights = numpy.array([1, 2, 1, 3, 1, 1])

    single = "float32" in COV_CALLS[k].__code__.co_names
    # (in single precision NumPy's own sums differ by release and order: to float32's rounding)
    @numpy_compare(rtol=1e-5 if single else 1e-10, atol=1e-6 if single else 1e-12)
    def body(xp):
        return COV_CALLS[k](xp, xp.asarray(host_m), xp.asarray(host_y), xp.asarray(weights))

    body()


@numpy_compare(rtol=1e-12)
def test_cov_integer_data_and_a_single_observation(xp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.cov(xp.asarray(numpy.arange(12).reshape(3, 4))), xp.cov(xp.ones((2, 1)))


# --- products ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((3,), (2,)), ((2, 2), (3,)), ((3,), (2, 2)),
                                    ((), (2, 3)), ((2, 1, 3), (2, 2)), ((0, 2), (3, 1))])  # fmt: skip
@pytest.mark.parametrize("dtypes", [("int8", "int64"), ("float32", "float64"), ("bool", "bool"),
                                    ("complex64", "float32")])  # fmt: skip
@numpy_compare()
def test_kron(xp, shapes, dtypes):
    rng = numpy.random.default_rng(1)
    a = rng.integers(-3, 4, shapes[0]).astype(dtypes[0])
    b = rng.integers(-3, 4, shapes[1]).astype(dtypes[1])
    return xp.kron(xp.asarray(a), xp.asarray(b))


@pytest.mark.parametrize(
    "shapes, kwargs",
    [
        (((3,), (3,)), {}),
        (((5, 3), (5, 3)), {}),
        (((5, 3), (3,)), {}),
        (((3, 4), (4, 3)), {"axisa": 0, "axisc": 0}),
        (((2, 3, 4), (3, 4)), {"axis": -2}),
        (((5, 2), (5, 2)), {}),
        (((5, 2), (5, 3)), {}),
        (((5, 3), (5, 2)), {}),
        (((4, 3), (4, 3)), {"axisc": 0}),
        (((4, 4), (4, 3)), {}),
        (((3,), (3,)), {"axisa": 2}),
        (((3, 3), (3,)), {"axisc": 3}),
    ],
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool"])
def test_cross(shapes, kwargs, dtype):
    a = RNG.integers(0, 5, shapes[0]).astype(dtype)
    b = RNG.integers(0, 5, shapes[1]).astype(dtype)

    @numpy_compare()
    def body(xp):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return xp.cross(xp.asarray(a), xp.asarray(b), **kwargs)

    body()


EINSUM_CASES = [
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ijk->j", [(2, 3, 4)]),
    ("i", [(5,)]),
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ii,jj->ij", [(3, 3), (2, 2)]),
    ("ij,k->", [(2, 3), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...i,...i", [(1, 3), (2, 3)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    ("ij,i,j->", [(3, 4), (3,), (4,)]),
    ("i,i", [(1,), (3,)]),
    ("ij,jk", [(0, 3), (3, 2)]),
]


@pytest.mark.parametrize("optimize", [False, True, "optimal"])
@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "complex128", "bool"])
def test_einsum(subscripts, shapes, dtype, optimize):
    hosts = [RNG.integers(-3, 4, s).astype(dtype) for s in shapes]
    if dtype.startswith("float") or dtype.startswith("complex"):
        hosts = [h + RNG.random(h.shape).astype(dtype) for h in hosts]

    @numpy_compare(rtol=rtol_of(dtype) * 10, atol=1e-12)
    def body(xp):
        return xp.einsum(subscripts, *[xp.asarray(h) for h in hosts], optimize=optimize)

    body()


@numpy_compare(rtol=1e-12)
def test_einsum_interleaved_out_and_dtype(xp):
    a, b = (xp.asarray(RNG.random(s)) for s in ((3, 4), (4, 2)))
    out = xp.zeros((3, 2))
    r = xp.einsum(a, [0, 1], b, [1, 2], [0, 2], out=out)
    return (r, out, xp.einsum("ij,jk->ik", a, b, dtype=numpy.float32),
            xp.einsum(a, [Ellipsis, 1], [Ellipsis]))  # fmt: skip


@pytest.mark.parametrize("optimize", [False, True, "optimal"])
@numpy_compare()
def test_einsum_into_a_0d_integer_out(xp, optimize):
    """NumPy's gh-31350: a 0-d integer ``out`` of a float contraction is written (cast), with
    every ``optimize``."""
    a = xp.ones(7)
    out, zero = xp.array(0), xp.zeros((), numpy.int64)
    xp.einsum("i,i->", a, a, out=out, optimize=optimize)
    xp.einsum("i,i->", a, a * 2, out=zero, optimize=optimize)
    return out, zero


@pytest.mark.parametrize("subscripts, shape", [("ii->i", (3, 3)), ("ij->ji", (3, 4)),
                                               ("iji->ij", (3, 2, 3)), ("ijk->kji", (2, 3, 4))])  # fmt: skip
@numpy_compare()
def test_einsum_views_are_writeable_and_write_into_the_operand(xp, subscripts, shape):
    """NumPy's docstring: ``np.einsum('ii->i', a)[:] = 1`` writes a's diagonal (an einsum
    that only views its operand returns a writeable view)."""
    a = xp.zeros(shape)
    v = xp.einsum(subscripts, a)
    v[...] = 1
    return a, v.flags.writeable


@pytest.mark.parametrize("order", ["C", "F", "A", "f", "a"])
@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("layouts", ["FF", "FC", "CC"])
def test_einsum_lays_out_its_result_in_the_order_asked(order, optimize, layouts):
    """``einsum(..., order='F')`` is Fortran-ordered, 'A' where every operand is (it was
    C-ordered), as NumPy's."""
    def run(xp):
        a = xp.ones((2, 3, 5), order=layouts[0])
        b = xp.ones((4, 3), order=layouts[1])
        r = xp.einsum("...ft,mf->...mt", a, b, order=order, optimize=optimize)
        return r.shape, r.flags.c_contiguous, r.flags.f_contiguous

    assert run(numloom) == run(numpy)


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, a, b: xp.einsum("ij,jk", a, b.T),
        lambda xp, a, b: xp.einsum("ij,jk", a, b.T, optimize=True),
        lambda xp, a, b: xp.einsum("ii", a),
        lambda xp, a, b: xp.einsum("ij,jk->q", a, b),
        lambda xp, a, b: xp.einsum("ij->i", a, b),
        lambda xp, a, b: xp.einsum("ijk", a),
        lambda xp, a, b: xp.einsum("ij,jk->ik", a, b, out=xp.zeros((2, 2))),
        lambda xp, a, b: xp.einsum("ij,jk->ik", a, b, dtype=numpy.int8),
        lambda xp, a, b: xp.einsum(),
        lambda xp, a, b: xp.einsum("", 0, out="test"),
        lambda xp, a, b: xp.einsum("", 0, out="test", optimize=True),
        lambda xp, a, b: xp.einsum("ij->", a, out=[0.0]),
    ],
)  # fmt: skip
def test_einsum_errors(call):
    a, b = RNG.random((2, 3)), RNG.random((3, 4))
    numpy_compare()(lambda xp: call(xp, xp.asarray(a), xp.asarray(b)))()


# --- calculus ------------------------------------------------------------------------------------

GRADIENT_CALLS = [
    lambda xp, f: xp.gradient(f[0]),
    lambda xp, f: xp.gradient(f),
    lambda xp, f: xp.gradient(f, 0.5),
    lambda xp, f: xp.gradient(f, 2.0, 0.5),
    lambda xp, f: xp.gradient(f, axis=1),
    lambda xp, f: xp.gradient(f, axis=(-1,), edge_order=2),
    lambda xp, f: xp.gradient(f, edge_order=2),
    lambda xp, f: xp.gradient(f[0], xp.asarray(numpy.array([0.0, 1.0, 1.5, 3.5, 4.0, 6.0]))),
    lambda xp, f: xp.gradient(f[0], xp.asarray(numpy.array([0.0, 1.0, 1.5, 3.5, 4.0, 6.0])),
                              edge_order=2),
    lambda xp, f: xp.gradient(f[0], xp.asarray(numpy.arange(6) * 2)),
    lambda xp, f: xp.gradient(f.astype(numpy.int64)),
    lambda xp, f: xp.gradient(f.astype(numpy.float32), 2),
    lambda xp, f: xp.gradient(f[:, :2], edge_order=2),
    lambda xp, f: xp.gradient(f, 1, 2, 3),
    lambda xp, f: xp.gradient(f, edge_order=3),
    lambda xp, f: xp.gradient(f[0], xp.ones((2, 6))),
    lambda xp, f: xp.gradient(f[0], xp.ones(5)),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(GRADIENT_CALLS)))
def test_gradient(k):
    host = RNG.standard_normal((4, 6)) * 10

    @numpy_compare(rtol=1e-12, atol=1e-12)
    def body(xp):
        return GRADIENT_CALLS[k](xp, xp.asarray(host))

    body()


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, y: xp.trapezoid(y),
        lambda xp, y: xp.trapezoid(y, axis=0),
        lambda xp, y: xp.trapezoid(y, dx=0.5),
        lambda xp, y: xp.trapezoid(y, x=xp.asarray(numpy.array([0.0, 1, 3, 4, 7]))),
        lambda xp, y: xp.trapezoid(y, x=y),
        lambda xp, y: xp.trapezoid(y.astype(numpy.int64)),
        lambda xp, y: xp.trapezoid(y.astype(numpy.float32), axis=0),
        lambda xp, y: xp.ediff1d(y),
        lambda xp, y: xp.ediff1d(y, to_begin=-1, to_end=xp.asarray(numpy.array([7.0, 8.0]))),
        lambda xp, y: xp.ediff1d(y.astype(numpy.int64), to_end=[1, 2]),
        lambda xp, y: xp.ediff1d(y.astype(numpy.int64), to_begin=0.5),
    ],
)  # fmt: skip
@numpy_compare(rtol=1e-12)
def test_trapezoid_and_ediff1d(xp, call):
    return call(xp, xp.asarray(numpy.random.default_rng(2).standard_normal((3, 5))))


# --- signals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lengths", [(5, 3), (3, 5), (6, 6), (1, 4), (7, 1), (10, 4)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "int8"), ("int64", "float32"),
                                    ("complex128", "complex128"), ("bool", "bool"),
                                    ("float32", "float32")])  # fmt: skip
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_correlate(name, dtypes, mode, lengths):
    a = RNG.integers(-3, 4, lengths[0]).astype(dtypes[0])
    v = RNG.integers(-3, 4, lengths[1]).astype(dtypes[1])
    if dtypes[0].startswith("complex"):
        a, v = a + 1j * RNG.random(a.shape), v - 2j * RNG.random(v.shape)
    rtol = max(rtol_of(numpy.result_type(a, v)), 1e-6 if "float32" in dtypes else 0.0)

    @numpy_compare(rtol=rtol, atol=1e-12)
    def body(xp):
        return getattr(xp, name)(xp.asarray(a), xp.asarray(v), mode)

    body()


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_a_long_complex_convolution_holds_memory_of_its_length(name):
    """ThinkDSP's spectra convolved (``np.convolve`` of two complex spectra of 123904 values,
    ``mode="same"``): a complex reduction runs through NumPy node by node, which made the
    sliding window's products whole, 229 GiB, and raised MemoryError where NumPy takes 2 MB.
    A complex convolution or correlation is NumPy's function on the arrays' memory."""
    import tracemalloc

    n = 6000
    a = numpy.exp(1j * numpy.arange(n) * 1e-3)
    v = numpy.exp(-0.5j * numpy.arange(n) * 1e-3)
    x, y = numloom.asarray(a), numloom.asarray(v)
    numloom.evaluate(x, y)
    tracemalloc.start()
    got = getattr(numloom, name)(x, y, "same")
    got.get()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # (the products whole: 576 MB; on a GPU with CuPy, its first convolution's own host
    # memory, about 19 MB)
    assert peak < 64 << 20, peak
    want = getattr(numpy, name)(a, v, "same")
    # (on a GPU with CuPy, CuPy's convolution: by FFT at this length, errors of 1e-12 of the
    # largest value)
    numpy.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12 * abs(want).max())
    if x.device == "cpu":  # (a real one of computed arrays: NumPy's own, to the last bit)
        p, q = x.real * 1.0 + 0.5, y.imag * 1.0
        numloom.evaluate(p, q)
        real = getattr(numloom, name)(p, q, "full")
        numpy.testing.assert_array_equal(
            real.get(), getattr(numpy, name)(a.real + 0.5, v.imag, "full"))


@pytest.mark.parametrize(
    "call",
    [
        lambda xp: xp.convolve(xp.zeros(0), xp.ones(3)),
        lambda xp: xp.convolve(xp.ones(3), xp.zeros(0)),
        lambda xp: xp.correlate(xp.zeros(0), xp.ones(3)),
        lambda xp: xp.correlate(xp.ones(3), xp.zeros(0)),
        lambda xp: xp.correlate(xp.ones(3), xp.ones(2), "middle"),
        lambda xp: xp.correlate(xp.ones((3, 2)), xp.ones(2)),
        lambda xp: xp.convolve(xp.ones(3), xp.ones(2), 3),
        lambda xp: xp.convolve(2.0, xp.ones(3)),
    ],
)
@numpy_compare()
def test_convolve_correlate_errors(xp, call):
    return call(xp)


INTERP_CALLS = [
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp),
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp, left=-1.0, right=99.0),
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp.astype(numpy.complex128) * (1 - 1j)),
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp.astype(numpy.complex128), left=1j, right=2),
    lambda xp, x, xp_, fp: xp.interp(x, xp_[:1], fp[:1]),
    lambda xp, x, xp_, fp: xp.interp(x, xp_[:2], fp[:2]),
    lambda xp, x, xp_, fp: xp.interp(x.astype(numpy.float32), xp_.astype(numpy.int64),
                                     fp.astype(numpy.int64)),
    lambda xp, x, xp_, fp: xp.interp(x.reshape(2, -1), xp_, fp),
    lambda xp, x, xp_, fp: xp.interp(x[3], xp_, fp),
    # (periodic: NumPy sorts xp mod period, and the order of ties is its sort's; none here)
    lambda xp, x, xp_, fp: xp.interp(x, xp_[[0, 1, 2, 3, 4, 6, 7, 8, 9, 10]],
                                     fp[[0, 1, 2, 3, 4, 6, 7, 8, 9, 10]], period=7.3),
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp, period=0),
    lambda xp, x, xp_, fp: xp.interp(x, xp_[:0], fp[:0]),
    lambda xp, x, xp_, fp: xp.interp(x, xp_, fp[:-1]),
    lambda xp, x, xp_, fp: xp.interp(x, xp_.reshape(1, -1), fp),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(INTERP_CALLS)))
def test_interp(k):
    xp_host = numpy.array([-2.0, -1.0, 0.0, 0.5, 1.0, 1.0, 3.0, 4.5, 7.0, 8.0, 9.0])
    fp_host = numpy.array([3.0, 1.0, 0.0, -2.0, 5.0, 6.0, 6.0, numpy.inf, 2.0, 1.0, 4.0])
    x_host = numpy.concatenate([xp_host, [-5.0, 12.0, 0.25, 2.0, 5.5, numpy.nan, 8.5, 0.7, 9.0]])

    @numpy_compare(rtol=1e-14)
    def body(xp):
        return INTERP_CALLS[k](xp, xp.asarray(x_host), xp.asarray(xp_host), xp.asarray(fp_host))

    body()


@pytest.mark.parametrize("where", ["first", "last", "inside"])
@pytest.mark.parametrize("kind", ["real", "complex"])
@numpy_compare()
def test_interp_propagates_a_nan_among_the_points(xp, where, kind):
    """NumPy's own test: a NaN in ``xp`` or ``fp`` gives NaN where NumPy's search lands next to
    it (a NaN first in xp is not "below every x", so the left value does not stand in)."""
    at = {"first": 0, "last": 1, "inside": 1}[where]
    points = [0.0, 1.0] if where != "inside" else [0.0, 1.0, 2.0]
    values = [0.0, 10.0] + ([20.0] if where == "inside" else [])
    holed = list(points)
    holed[at] = numpy.nan
    dtype = float if kind == "real" else complex
    fp = xp.asarray(values, dtype=dtype)
    nan_fp = xp.asarray(values, dtype=dtype)
    nan_fp[at] = numpy.nan
    # (pending operands, many points: numloom's composition, not NumPy's call on small data)
    x = xp.concatenate([xp.asarray([0.5, -1.0, 3.0, 1.5]), xp.linspace(-1, 3, 4000)]) * 1
    holed, points, fp, nan_fp = (xp.asarray(v) * 1 for v in (holed, points, fp, nan_fp))
    return (xp.interp(x, holed, fp), xp.interp(x, points, nan_fp),
            xp.interp(xp.asarray(0.5) * 1, holed, fp))


@given(st.integers(1, 40), st.integers(0, 2**31))
@settings(max_examples=30, deadline=None)
def test_interp_hypothesis(points, seed):
    rng = numpy.random.default_rng(seed)
    xp_host = numpy.sort(rng.integers(-20, 20, points).astype(numpy.float64))
    fp_host = rng.standard_normal(points)
    x_host = rng.uniform(-25, 25, 50)
    x_host[:points] = xp_host
    numpy_compare(rtol=1e-13, atol=1e-13)(
        lambda xp: xp.interp(xp.asarray(x_host), xp.asarray(xp_host), xp.asarray(fp_host))
    )()


# --- polynomials, matrices, sets -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, x: xp.polyval([3, 0, -1, 2], x),
        lambda xp, x: xp.polyval(xp.asarray(numpy.array([1.5, -2.0, 0.25])), x),
        lambda xp, x: xp.polyval(xp.asarray(numpy.array([2, 1], numpy.int8)), x.astype(numpy.int8)),
        lambda xp, x: xp.polyval([1.0, 2.0], x.astype(numpy.float32)),
        lambda xp, x: xp.polyval(numpy.array([1.0, 2.0], numpy.float32), 3),
        lambda xp, x: xp.polyval([], x),
        lambda xp, x: xp.vander(x),
        lambda xp, x: xp.vander(x, 3, increasing=True),
        lambda xp, x: xp.vander(x.astype(numpy.int8), 4),
        lambda xp, x: xp.vander(x.astype(bool)),
        lambda xp, x: xp.vander(x, 0),
        lambda xp, x: xp.vander(x.reshape(1, -1)),
        lambda xp, x: xp.tri(3),
        lambda xp, x: xp.tri(3, 5, k=1, dtype=numpy.int32),
        lambda xp, x: xp.tri(4, 2, k=-1, dtype=bool),
        lambda xp, x: xp.tri(0, 3),
    ],
)  # fmt: skip
@numpy_compare(rtol=1e-12)
def test_polynomials_and_matrices(xp, call):
    return call(xp, xp.asarray(numpy.array([0.5, -1.0, 2.0, 3.0, 0.0])))


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, a: xp.isin(a, xp.asarray(numpy.array([1, 3, 7]))),
        lambda xp, a: xp.isin(a, [2, 2, -1], invert=True),
        lambda xp, a: xp.isin(a.astype(numpy.float64), xp.asarray(numpy.array([0.0, 3.0]))),
        lambda xp, a: xp.isin(a, 3),
        lambda xp, a: xp.isin(a, xp.arange(100)),
        lambda xp, a: xp.isin(a, [1, 2], kind="table"),
        lambda xp, a: xp.isin(a.astype(numpy.float64), [1.0], kind="table"),
        lambda xp, a: xp.isin(a, [1, 2], kind="hash"),
        lambda xp, a: xp.isin(a.astype("int16"), xp.asarray([-128, 0, 127], "int8"), kind="table"),
        lambda xp, a: xp.isin(a, xp.asarray([-1, 2**63 - 1]), kind="table"),
        lambda xp, a: xp.isin(a.astype("int32"), xp.asarray([-1, 2**31 - 1], "int32"),
                              kind="table"),
        lambda xp, a: xp.array_equiv(a, a[0:1]),
        lambda xp, a: xp.array_equiv(a[0], a[0:1]),
        lambda xp, a: xp.array_equiv(a, a[:, :2]),
        lambda xp, a: xp.array_equiv(a[0], xp.asarray(numpy.array([1, 5, 3, 0]))),
        lambda xp, a: xp.array_equiv(numpy.array(["ab", "c"]), numpy.array(["ab", "c"])),
        lambda xp, a: xp.isin(numpy.array(["ab", "c"]), ["c"]),
        lambda xp, a: xp.nanmax(numpy.array(["2020-01-01", "NaT"], "M8[D]")),
    ],
)  # fmt: skip
@numpy_compare()
def test_isin_and_array_equiv(xp, call):
    return call(xp, xp.asarray(numpy.random.default_rng(3).integers(0, 6, (3, 4))))


# --- fusion and the GPU ------------------------------------------------------------------------


def kernels_for(fn):
    numloom.sync()
    before = numloom.stats()["kernels_launched"]
    out = fn()
    numloom.evaluate(out)
    return numloom.stats()["kernels_launched"] - before, out


def test_nansum_of_an_expression_is_one_kernel():
    host = with_nans("float64", (64, 33))
    x = numloom.asarray(host)
    n, got = kernels_for(lambda: numloom.nansum(numloom.sqrt(x * x + 1.0), axis=1))
    assert n == 1, numloom.explain(got)
    numpy.testing.assert_allclose(got.get(), numpy.nansum(numpy.sqrt(host * host + 1.0), axis=1),
                                  rtol=1e-12)  # fmt: skip


def test_polyval_of_an_expression_and_trapezoid_are_one_kernel_each():
    host = RNG.standard_normal(1000)
    x = numloom.asarray(host)
    n, got = kernels_for(lambda: numloom.polyval([2.0, -1.0, 0.5, 3.0], numloom.exp(x) - 1))
    assert n == 1, numloom.explain(got)
    numpy.testing.assert_allclose(got.get(), numpy.polyval([2.0, -1.0, 0.5, 3.0],
                                                           numpy.exp(host) - 1), rtol=1e-12)  # fmt: skip
    t = numloom.asarray(numpy.linspace(0.0, 3.0, 1000))
    n, got = kernels_for(lambda: numloom.trapezoid(x, t))
    assert n == 1, numloom.explain(got)
    numpy.testing.assert_allclose(got.get(), numpy.trapezoid(host, t.get()), rtol=1e-12)


@pytest.mark.skipif(numloom.get_device() == "cpu", reason="the CPU runs NumPy natively")
def test_no_fallback_on_the_gpu():
    """Every function here runs on the GPU without a round trip through NumPy or CuPy."""
    before = dict(numloom.stats()["fallbacks"])
    a = numloom.asarray(with_nans("float64", (5, 6)))
    m = numloom.asarray(RNG.standard_normal((3, 8)))
    x = numloom.asarray(numpy.linspace(-1, 2, 7))
    results = [
        numloom.nansum(a, axis=0), numloom.nanprod(a), numloom.nanmax(a), numloom.nanmin(a, 1),
        numloom.nanmean(a, 0), numloom.nanvar(a), numloom.nanstd(a, 1), numloom.nancumsum(a),
        numloom.nancumprod(a, 0), numloom.cov(m), numloom.corrcoef(m), numloom.kron(m, m),
        numloom.cross(m.T, m.T), numloom.gradient(m), numloom.einsum("ij,kj->ik", m, m),
        numloom.einsum("ii", m[:, :3]), numloom.einsum("ij,jk,kl->il", m, m.T, m, optimize=True),
        numloom.interp(x, numloom.asarray([0.0, 1.0, 1.5]), numloom.asarray([1.0, 0.0, 2.0])),
        numloom.convolve(x, x[:3]), numloom.correlate(x, x[:3], "same"), numloom.trapezoid(m),
        numloom.polyval(x[:3], x), numloom.vander(x), numloom.tri(4),
        numloom.isin(x, x[:3]), numloom.ediff1d(x, to_begin=0.0),
    ]  # fmt: skip
    numloom.evaluate(*[r for r in results if isinstance(r, numloom.ndarray)])
    numloom.nanargmax(numloom.asarray(numpy.array([1.0, numpy.nan, 3.0])))
    assert numloom.array_equiv(x, x)
    assert dict(numloom.stats()["fallbacks"]) == before

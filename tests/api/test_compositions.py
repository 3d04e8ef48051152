"""NumPy functions composed of numloom operations (``compositions.py``, ``windows.py``,
``polynomials.py``, ``placing.py``) against NumPy: values, dtypes, shapes, views and writes,
errors; none runs through NumPy (``fallback.call_numpy``), and on a GPU none counts a fallback."""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom
from numloom.api import fallback

RNG = numpy.random.default_rng(0)
F = RNG.standard_normal((4, 5))
I = RNG.integers(-3, 7, (4, 5))
C = (RNG.standard_normal(6) + 1j * RNG.standard_normal(6)).astype(numpy.complex128)


def _ulps(dtype) -> float:
    return {"float32": 1e-6, "float16": 1e-3}.get(numpy.dtype(dtype).name, 1e-14)


# --- windows and i0 -----------------------------------------------------------------------------


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 8, 7.0])
@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@numpy_compare(rtol=1e-14, atol=1e-16)
def test_windows(xp, name, M):
    return getattr(xp, name)(M)


@pytest.mark.parametrize("M, beta", [(1, 3.0), (5, 0.0), (12, 14.0), (7, 2.5), (0, 1.0)])
@numpy_compare(rtol=1e-13)
def test_kaiser(xp, M, beta):
    return xp.kaiser(M, beta)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "bool"])
def test_i0(dtype):
    host = numpy.linspace(-12, 12, 49).astype(dtype)

    @numpy_compare(rtol=_ulps(dtype))
    def body(xp):
        return xp.i0(xp.asarray(host))

    body()


@numpy_compare()
def test_i0_complex_error(xp):
    return xp.i0(xp.asarray(C))


# --- polynomials --------------------------------------------------------------------------------

POLYS = [([1, 2, 3], [4, 5]), ([1.0, 2], [3, 4, 5, 6]), (numpy.array([1, 2], numpy.int8), [1.5]),
         ([3], [1, 1, 1]), ([1 + 1j, 2], [1.0])]  # fmt: skip


@pytest.mark.parametrize("a, b", POLYS)
@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul"])
@numpy_compare()
def test_poly_arithmetic(xp, name, a, b):
    return getattr(xp, name)(xp.asarray(a), b)


@pytest.mark.parametrize("m", [0, 1, 2, 4, -1])
@pytest.mark.parametrize("p", [[1, 2, 3, 4], [2.5, -1.0]])
@numpy_compare()
def test_polyder(xp, p, m):
    return xp.polyder(xp.asarray(p), m)


@pytest.mark.parametrize("k", [None, 3, [1, 2, 3], [1.0, 2.0, 3.0, 4.0, 5.0]])
@pytest.mark.parametrize("m", [0, 1, 3, -1])
@numpy_compare(rtol=1e-15)
def test_polyint(xp, m, k):
    return xp.polyint(xp.asarray([3, 2, 1]), m, k)


@pytest.mark.parametrize("u, v", [([1, 2, 3, 4], [1, 1]), ([1.0, 0, -1], [1, -1]),
                                  ([2, 3], [1, 2, 3]), ([4], [2])])  # fmt: skip
@numpy_compare(rtol=1e-15)
def test_polydiv(xp, u, v):
    return xp.polydiv(xp.asarray(u), xp.asarray(v))


# --- joins and rearrangements -------------------------------------------------------------------


@pytest.mark.parametrize("case", range(5))
@numpy_compare()
def test_block(xp, case):
    a, b = xp.asarray(F[:2, :2]), xp.asarray(I[:2, :3])
    return [
        lambda: xp.block([[a, b], [xp.asarray(F[:1, :5])]]),
        lambda: xp.block([a[0], b[0], 7]),
        lambda: xp.block([[[a]], [[a]]]),
        lambda: xp.block([[a, b], a]),
        lambda: xp.block([[a], [b]]),
    ][case]()


@numpy_compare()
def test_concat_and_row_stack(xp):
    a = xp.asarray(F)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        stacked = xp.row_stack([a[0], a[1]]) if hasattr(numpy, "row_stack") else None
    return xp.concat([a, a], axis=1), stacked


DELETES = [(1, None), (-1, 1), ([0, 2], 0), (slice(1, 4, 2), 1), (slice(None, None, -2), 1),
           (numpy.array([True, False, True, False]), 0), (5, 1), ([], 0), (9, None),
           (numpy.array([True, False]), 0), ([1.0], 0), (0, 3)]  # fmt: skip


@pytest.mark.parametrize("obj, axis", DELETES)
@numpy_compare()
def test_delete(xp, obj, axis):
    return xp.delete(xp.asarray(I), obj, axis)


INSERTS = [(1, 9, None), (2, [7, 8], 1), ([0, 2], [7, 8], 0), ([0, 2, 2, -1], 0, 1),
           (slice(0, 4, 2), 5, 1), (1, [[1], [2], [3], [4]], 1), ([1], [[1], [2], [3], [4]], 1),
           (-1, 2.7, 0), (9, 1, 1), (4, 1, 0), (1, [1, 2, 3], 1)]  # fmt: skip


@pytest.mark.parametrize("obj, values, axis", INSERTS)
@numpy_compare()
def test_insert(xp, obj, values, axis):
    return xp.insert(xp.asarray(I), obj, values, axis)


@pytest.mark.parametrize("shape", [7, (3, 4), (2, 0), (4, 5, 3), (-1, 2)])
@numpy_compare()
def test_resize(xp, shape):
    return xp.resize(xp.asarray(I[:2, :3]), shape)


@pytest.mark.parametrize("axis, start", [(2, 0), (0, 3), (1, 1), (-1, -3), (0, 4), (3, 0)])
@numpy_compare()
def test_rollaxis(xp, axis, start):
    return xp.rollaxis(xp.asarray(F.reshape(2, 5, 2)), axis, start).shape


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@numpy_compare()
def test_unstack(xp, axis):
    return xp.unstack(xp.asarray(I), axis=axis)


# --- diagonals and index builders ---------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, -2, 4])
@pytest.mark.parametrize("v", [F, F[0], I[:, 1], F[0, :1], C])
@numpy_compare()
def test_diag_and_diagflat(xp, v, k):
    return xp.diag(xp.asarray(v), k), xp.diagflat(xp.asarray(v), k)


def test_diag_is_a_read_only_view():
    a = numloom.asarray(F.copy())
    d = numloom.diag(a)
    with pytest.raises(ValueError):
        d[0] = 1
    a[0, 0] = 42.0
    assert float(d[0]) == 42.0


@numpy_compare()
def test_diag_errors(xp):
    return xp.diag(xp.asarray(F.reshape(2, 2, 5)))


@pytest.mark.parametrize("shape", [(3, 3), (2, 2, 2), (3, 4), (3,)])
@numpy_compare()
def test_diag_indices(xp, shape):
    a = xp.zeros(shape)
    return xp.diag_indices(4, 3), xp.diag_indices_from(a)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dims, dtype", [((2, 3), int), ((4,), numpy.float32), ((), int),
                                         ((2, 0, 3), numpy.int8)])  # fmt: skip
@numpy_compare()
def test_indices_and_fromfunction(xp, dims, dtype, sparse):
    out = xp.indices(dims, dtype=dtype, sparse=sparse)
    if not dims:
        return out
    return out, xp.fromfunction(lambda *ix: sum(i * (k + 2) for k, i in enumerate(ix)), dims,
                                dtype=dtype)  # fmt: skip


@numpy_compare()
def test_ix(xp):
    a = xp.asarray(I)
    rows, cols = xp.ix_([0, 2], xp.asarray([True, False, True, True, False]))
    return rows, cols, a[rows, cols], xp.ix_([], xp.asarray([1, 2], dtype=xp.int8))


@numpy_compare()
def test_ix_errors(xp):
    return xp.ix_([[0, 1]])


@pytest.mark.parametrize("n, k, m", [(4, 0, None), (4, 1, 6), (3, -1, 2), (5, 9, None),
                                     (0, 0, None)])  # fmt: skip
@numpy_compare()
def test_tri_indices(xp, n, k, m):
    a = xp.zeros((n, n if m is None else m))
    return (xp.tril_indices(n, k, m), xp.triu_indices(n, k, m), xp.tril_indices_from(a, k),
            xp.triu_indices_from(a, k), xp.mask_indices(n, xp.triu, k))  # fmt: skip


@numpy_compare()
def test_tri_indices_from_errors(xp):
    return xp.tril_indices_from(xp.zeros(3))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip", ("wrap", "clip")])
@pytest.mark.parametrize("rows", [[0, 2, 1], [3, -1, 0]])
@numpy_compare()
def test_ravel_multi_index(xp, rows, mode, order):
    return xp.ravel_multi_index((xp.asarray(rows), xp.asarray([1, 0, 3])), (3, 4), mode, order)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("idx", [[0, 5, 11], [[3, 7], [1, 2]], 4, [12], [-1], [1.0]])
@numpy_compare()
def test_unravel_index(xp, idx, order):
    return xp.unravel_index(xp.asarray(idx), (3, 4), order=order)


# --- elementwise tests --------------------------------------------------------------------------

SPECIAL = numpy.array([1.0, -numpy.inf, numpy.inf, numpy.nan, -0.0, 3.0])


@pytest.mark.parametrize("x", [SPECIAL, C, numpy.array([1 + 0j, 2 + 1e-20j]), I, 3.0])
@numpy_compare()
def test_complex_and_inf_tests(xp, x):
    a = xp.asarray(x)
    return xp.iscomplex(a), xp.isreal(a), xp.real_if_close(a), xp.real_if_close(a, tol=1e-30)


@pytest.mark.parametrize("x", [SPECIAL, I, SPECIAL.astype(numpy.float32), C])
@numpy_compare()
def test_isposinf_isneginf(xp, x):
    a = xp.asarray(x)
    out = xp.zeros(a.shape, bool)
    xp.isneginf(a, out)
    return xp.isposinf(a), xp.isneginf(a), out


# --- selection ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cond, axis", [([1, 0, 1], 0), ([0, 1, 1, 0, 1], 1), ([1, 0, 1], None),
                                        ([False, True, False, False, True], -1),
                                        ([[1, 0]], 0), ([0, 0, 0, 0, 1], 0)])  # fmt: skip
@numpy_compare()
def test_compress(xp, cond, axis):
    return xp.compress(xp.asarray(cond), xp.asarray(F), axis)


@numpy_compare()
def test_extract(xp):
    a = xp.asarray(I)
    return xp.extract(a % 3 == 0, a), xp.extract(xp.asarray([1, 0, 2]), a)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("idx", [[[0, 1, 2], [2, 1, 0]], [[0, 3, -1], [1, 1, 1]]])
@numpy_compare()
def test_choose(xp, idx, mode):
    choices = [xp.asarray(I[0, :3]), xp.asarray(F[:2, :3]), 7]
    out = xp.zeros((2, 3))
    xp.choose(xp.asarray(idx), choices, out=out, mode=mode)
    return xp.choose(xp.asarray(idx), choices, mode=mode), out


@numpy_compare()
def test_choose_shape_error(xp):
    return xp.choose(xp.asarray([0, 1]), [xp.asarray([1, 2, 3]), xp.asarray([1, 2, 3])])


@pytest.mark.parametrize("case", range(5))
@numpy_compare()
def test_select(xp, case):
    x = xp.asarray(F)
    i = xp.asarray(I)
    return [
        lambda: xp.select([x < -0.5, x > 0.5], [x, x * 2]),
        lambda: xp.select([i < 0, i > 3], [i, 2.5], default=-1),
        lambda: xp.select([i < 0], [1, 2]),
        lambda: xp.select([], []),
        lambda: xp.select([i], [i]),
    ][case]()


@numpy_compare()
def test_piecewise(xp):
    x = xp.asarray(F)
    return (xp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2]),
            xp.piecewise(x, [x < 0], [lambda v: v ** 2, 1.5]),
            xp.piecewise(x, x > 0, [3]))  # fmt: skip


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@numpy_compare()
def test_take_along_axis(xp, axis):
    a = xp.asarray(F)
    order = xp.argsort(a, axis=axis)
    return xp.take_along_axis(a, order, axis=axis)


@numpy_compare()
def test_take_along_axis_errors(xp):
    return xp.take_along_axis(xp.asarray(F), xp.asarray([0, 1]), axis=0)


# --- writers ------------------------------------------------------------------------------------
# Each writer runs on a target whose data is there (on the CPU, NumPy writes into its buffer) and
# on one still pending (the write is recorded: what a GPU always does).


def _target(xp, host, pending: bool):
    a = xp.asarray(host.copy())
    return a + xp.zeros((), a.dtype) if pending else a


PENDING = pytest.mark.parametrize("pending", [False, True], ids=["ready", "pending"])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("ind, v", [([0, 7, 7, -1], [1.5, 2, 3]), ([30, -30], 9), ([], [1]),
                                    ([2], []), ([[0, 1], [5, 6]], [4, 5, 6, 7])])  # fmt: skip
@PENDING
@numpy_compare()
def test_put(xp, ind, v, mode, pending):
    a = _target(xp, F, pending)
    view = a[1:, ::2]
    xp.put(view, xp.asarray(ind, dtype=xp.intp), v, mode=mode)
    return a


@PENDING
@numpy_compare()
def test_put_errors(xp, pending):
    a = _target(xp, numpy.arange(5), pending)
    errors = []
    for call in (lambda: xp.put(a, [1, 3, 9, 2], [7, 8, 6, 5]),
                 lambda: xp.put(a, [0], 1000.0 if pending else 2.0),
                 lambda: xp.put(xp.zeros(3, xp.int8), [0], 1000)):  # fmt: skip
        try:
            call()
        except (IndexError, OverflowError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    return a, errors


@pytest.mark.parametrize("vals", [[7, 8], [9], [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], []])
@PENDING
@numpy_compare()
def test_place(xp, vals, pending):
    a = _target(xp, I, pending)
    xp.place(a.T, a.T > 2, vals)
    return a


@numpy_compare()
def test_place_size_error(xp):
    return xp.place(xp.zeros(3), xp.asarray([True, False]), [1])


@pytest.mark.parametrize("values", [[7, 8], [9.5], [], list(range(20))])
@PENDING
@numpy_compare()
def test_putmask(xp, values, pending):
    a = _target(xp, I, pending)
    view = a[::-1]
    xp.putmask(view, view % 2 == 0, values)
    return a


@pytest.mark.parametrize("src, casting, where", [(F[0], "same_kind", True), (2, "unsafe", True),
                                                 (F[:, :1], "same_kind", I > 2),
                                                 (I, "safe", True), (F[0], "safe", [True, False]),
                                                 (F[0, :2], "same_kind", True)])  # fmt: skip
@PENDING
@numpy_compare()
def test_copyto(xp, src, casting, where, pending):
    a = _target(xp, F, pending)
    view = a[:, :]
    xp.copyto(view, xp.asarray(src), casting=casting,
              where=where if where is True else xp.asarray(where))  # fmt: skip
    return a


@numpy_compare()
def test_copyto_errors(xp):
    return xp.copyto(xp.zeros(3, xp.int64), 1.5)


@pytest.mark.parametrize("shape, val, wrap", [((4, 4), 7, False), ((7, 3), [1, 2], True),
                                              ((7, 3), 5, False), ((3, 3, 3), [1.5], False),
                                              ((3, 5), [1, 2, 3, 4], False), ((3,), 1, False),
                                              ((3, 3, 2), 1, False)])  # fmt: skip
@PENDING
@numpy_compare()
def test_fill_diagonal(xp, shape, val, wrap, pending):
    a = _target(xp, numpy.zeros(shape, numpy.int64), pending)
    xp.fill_diagonal(a, val, wrap)
    return a


@pytest.mark.parametrize("axis", [0, 1, None])
@PENDING
@numpy_compare()
def test_put_along_axis(xp, axis, pending):
    a = _target(xp, F, pending)
    view = a[1:]
    idx = xp.argsort(view, axis=axis)[:1] if axis is not None else xp.asarray([0, 3])
    xp.put_along_axis(view, idx, -1.0, axis=axis)
    return a


@numpy_compare()
def test_put_along_axis_flat_of_strided_view(xp):
    return xp.put_along_axis(xp.asarray(F)[:, ::2], xp.asarray([0, 3]), 1.0, None)


# --- data-sized results -------------------------------------------------------------------------


@pytest.mark.parametrize("trim", ["fb", "f", "b", "BF", "x"])
@pytest.mark.parametrize("x, axis", [([0, 0, 1, 2, 0, 3, 0], None), ([0, 0, 0], None),
                                     ([[0, 0, 0], [0, 1, 0], [0, 0, 2]], 0),
                                     ([[0, 0, 0], [0, 1, 0], [0, 0, 2]], None)])  # fmt: skip
@numpy_compare()
def test_trim_zeros(xp, x, trim, axis):
    return xp.trim_zeros(xp.asarray(x), trim, axis)


@pytest.mark.parametrize("x", [I[0], F[0], C, numpy.array([3, 1], numpy.int8)])
@numpy_compare()
def test_sort_complex(xp, x):
    return xp.sort_complex(xp.asarray(x))


SETS = [(I[0], I[1]), (F[0], F[0, ::-1]), ([1, 2, 2, 5], [2, 5, 7]), ([], [1.0])]


@pytest.mark.parametrize("a, b", SETS)
@numpy_compare()
def test_set_operations(xp, a, b):
    a, b = xp.asarray(a), xp.asarray(b)
    ua, ub = xp.unique(a), xp.unique(b)
    return (xp.setdiff1d(a, b), xp.setxor1d(a, b), xp.union1d(a, b), xp.intersect1d(a, b),
            xp.intersect1d(a, b, return_indices=True), xp.setdiff1d(ua, ub, assume_unique=True),
            xp.setxor1d(ua, ub, assume_unique=True),
            xp.intersect1d(ua, ub, assume_unique=True, return_indices=True))  # fmt: skip


@pytest.mark.parametrize("bins, rng", [(10, None), (4, (-1, 2)), ([0, 1, 5], None),
                                       ("auto", None), (0, None)])  # fmt: skip
@numpy_compare(rtol=1e-15)
def test_histogram_bin_edges(xp, bins, rng):
    return xp.histogram_bin_edges(xp.asarray(F), bins, rng)


@pytest.mark.parametrize("period", [2 * numpy.pi, 4, 5.5])
@pytest.mark.parametrize("axis", [-1, 0])
def test_unwrap(period, axis):
    host = numpy.cumsum(RNG.standard_normal((4, 6)) * 3, axis=axis)

    @numpy_compare(rtol=1e-13)
    def body(xp):
        return (xp.unwrap(xp.asarray(host), axis=axis, period=period),
                xp.unwrap(xp.asarray(numpy.array([0, 3, 6, 9, 1])), period=4))  # fmt: skip

    body()


# --- bits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@numpy_compare()
def test_packbits_unpackbits(xp, axis, bitorder):
    a = xp.asarray(I > 1)
    packed = xp.packbits(a, axis=axis, bitorder=bitorder)
    return (packed, xp.packbits(xp.asarray(I), axis=axis, bitorder=bitorder),
            xp.unpackbits(packed, axis=axis, bitorder=bitorder),
            xp.unpackbits(packed, axis=axis, count=3, bitorder=bitorder),
            xp.unpackbits(packed, axis=axis, count=-2, bitorder=bitorder),
            xp.unpackbits(packed, axis=axis, count=20, bitorder=bitorder))  # fmt: skip


@pytest.mark.parametrize("case", range(3))
@numpy_compare()
def test_bits_errors(xp, case):
    return [lambda: xp.packbits(xp.asarray(F)), lambda: xp.unpackbits(xp.asarray(I)),
            lambda: xp.packbits(xp.asarray(I), bitorder="middle")][case]()  # fmt: skip


# --- vector products ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(6))
@numpy_compare(rtol=1e-13)
def test_vector_products(xp, case):
    m, v = xp.asarray(F), xp.asarray(F[0])
    c, i = xp.asarray(C[:5]), xp.asarray(I)
    return [
        lambda: (xp.vecdot(m, v), xp.vecdot(c, c), xp.vecdot(i, i[0]), xp.vecdot(m, m, axis=0)),
        lambda: (xp.matvec(m, v), xp.matvec(i, i[1]), xp.matvec(m[None], m)),
        lambda: (xp.vecmat(xp.asarray(F[:, 0]), m), xp.vecmat(c[:4], m)),
        lambda: xp.matvec(m, xp.asarray(F[:, 0])),
        lambda: xp.vecdot(m, xp.asarray(F[:, 0])),
        lambda: xp.vecmat(xp.asarray(F[0]), m),
    ][case]()


# --- conversions and function application -------------------------------------------------------


@numpy_compare()
def test_asarray_chkfinite(xp):
    ok = xp.asarray_chkfinite(xp.asarray(F), dtype=xp.float32)
    return ok, xp.asanyarray(I, dtype=xp.int8), xp.asarray_chkfinite(xp.asarray(SPECIAL))


@numpy_compare(rtol=1e-14)
def test_apply_along_axis_and_over_axes(xp):
    a = xp.asarray(F.reshape(2, 5, 2))
    return (xp.apply_along_axis(lambda r: r * 2 + r.sum(), 1, a),
            xp.apply_along_axis(lambda r: xp.sum(r), 0, a),
            xp.apply_along_axis(lambda r: xp.outer(r, r), -1, a),
            xp.apply_over_axes(xp.sum, a, [0, 2]))  # fmt: skip


def test_apply_along_axis_of_a_numpy_function_fills_one_buffer():
    """scientific-python-lectures' gradient descent: ``np.apply_along_axis(f, 0, X)`` over a
    (2, 100, 100) grid, with ``f`` a NumPy function (a helper module NumPy keeps) returning a
    NumPy scalar for each of 10000 columns. The results were 10000 arrays concatenated in one
    plan (a kernel of thousands of inputs: two minutes to compile); they are NumPy's values,
    so they fill NumPy's buffer, of the first result's dtype, as NumPy's own loop does."""
    grid = numpy.mgrid[-1:2:100j, -1:1:100j]
    f = lambda v: numpy.sum(numpy.asarray(v) ** 2) * 0.33  # noqa: E731
    evaluated = numloom.stats()["plans_evaluated"]
    got = numloom.apply_along_axis(f, 0, numloom.asarray(grid))
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.apply_along_axis(f, 0, grid))
    assert numloom.stats()["plans_evaluated"] - evaluated <= 2
    ints = numloom.apply_along_axis(lambda v: numpy.int8(3) if v[0] > 0 else 2.75, 0,
                               numloom.asarray(grid))  # fmt: skip
    numpy.testing.assert_array_equal(numpy.asarray(ints), numpy.apply_along_axis(
        lambda v: numpy.int8(3) if v[0] > 0 else 2.75, 0, grid))  # fmt: skip


# --- native: no NumPy call ----------------------------------------------------------------------


def _workload(xp):
    a = xp.asarray(F.copy()) * 1.0  # (pending: the writers record their writes lazily)
    i = xp.asarray(I.copy()) + 0
    out = [xp.hanning(6), xp.kaiser(6, 2.0), xp.i0(a), xp.polymul(a[0], a[1]),
           xp.polyint(a[0]), xp.block([[a, a]]), xp.delete(a, [0, 2], 1), xp.insert(a, 1, 0.5),
           xp.diag(a[0]), xp.indices((2, 3)), xp.tril_indices(4)[1], xp.iscomplex(a),
           xp.isneginf(a), xp.compress(xp.asarray([True, False, True]), a, 0),
           xp.choose(i % 2, [a, -a]), xp.select([a > 0], [a]), xp.take_along_axis(a,
           xp.argsort(a, 1), 1), xp.setdiff1d(i, i[0]), xp.intersect1d(i[0], i[1]),
           xp.packbits(i > 0), xp.unpackbits(xp.asarray([3, 200], dtype=xp.uint8)),
           xp.matvec(a, a[0]), xp.vecdot(a, a), xp.vecdot(a, a, axis=0), xp.unravel_index(i[0] + 3, (4, 5)),
           xp.resize(a, (3, 7)), xp.unwrap(a), xp.sort_complex(a[0])]  # fmt: skip
    xp.put(a, [0, 3], [1.0, 2.0])
    xp.putmask(a, a > 1, 0.0)
    xp.copyto(a, 1.0, where=a < -1)
    xp.fill_diagonal(a, 5.0)
    xp.place(i, i > 3, [0])
    xp.put_along_axis(a, xp.argsort(a, 0)[:1], 9.0, 0)
    return out + [a, i]


def test_nothing_runs_through_numpy(monkeypatch):
    """Every function of the workload is numloom's own: a NumPy fallback would fail it."""
    want = _workload(numpy)

    def refuse(name, *args, **kwargs):
        raise AssertionError(f"{name} ran through NumPy")

    monkeypatch.setattr(fallback, "call_numpy", refuse)
    got = _workload(numloom)
    for g, w in zip(got, want):
        numpy.testing.assert_allclose(numloom.asnumpy(g), w, rtol=1e-6)


@pytest.mark.skipif(numloom.get_device() == "cpu", reason="the CPU runs NumPy natively")
def test_no_fallback_on_gpu():
    before = dict(numloom.stats()["fallbacks"])
    numloom.sync()
    _workload(numloom)
    numloom.sync()
    assert dict(numloom.stats()["fallbacks"]) == before


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, k: xp.delete(k, slice(60, None), axis=1),
        lambda xp, k: xp.delete(k, [1], axis=1),
        lambda xp, k: xp.delete(k, 1),
        lambda xp, k: xp.insert(k, 1, 7, axis=1),
        lambda xp, k: xp.insert(k, [0, 2], 7, axis=0),
        lambda xp, k: xp.delete(k.T.copy(), [0], axis=0),  # (C order stays C)
    ],
)
def test_delete_and_insert_keep_a_fortran_arrays_order(call):
    """NumPy's ``delete`` and ``insert`` lay their result out in Fortran order where the
    array is Fortran-ordered (and not C-ordered); NumPy's own tests check it (gh-7113)."""
    made = {}
    for xp in (numpy, numloom):
        m = call(xp, xp.arange(10).reshape(2, 5, order="F"))
        made[xp] = (m.flags.c_contiguous, m.flags.f_contiguous, numpy.asarray(m).tolist())
    assert made[numloom] == made[numpy]


@pytest.mark.parametrize("fn", ["place", "putmask"])
@pytest.mark.parametrize("vals", [F[0], F[0, 0], I[0].astype(numpy.int64), I[0] > 0, [1.5, 2.5],
                                  3.5, numpy.float64(2.0)],
                         ids=["float array", "float 0-d", "int64 array", "bool array", "list",
                              "float", "NumPy float"])  # fmt: skip
@PENDING
@numpy_compare()
def test_place_and_putmask_cast_arrays_of_values_safely(xp, fn, vals, pending):
    """NumPy's ``place`` and ``putmask`` cast an array of values by the 'safe' rule (a
    TypeError even where the mask selects nothing), a list or scalar as a write does."""
    a = _target(xp, I.astype(numpy.int32), pending)
    errors = []
    for mask in (a > 100, a > 2):
        values = xp.asarray(vals) if isinstance(vals, numpy.ndarray) and vals.ndim else vals
        try:
            getattr(xp, fn)(a, mask, values)
        except TypeError as e:
            errors.append(str(e))
    return a, errors

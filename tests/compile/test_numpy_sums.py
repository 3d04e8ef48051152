"""Float sums in NumPy's order: on the CPU, ``sum``, ``mean``, ``var`` and ``std`` give NumPy's
results bit for bit (a program printing ``x.mean()`` prints NumPy's digits), also fused with
the work around them. On a GPU they are within a few ulps."""

from __future__ import annotations

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom as nl

RNG = numpy.random.default_rng(7)

SIZES = [1, 5, 8, 9, 30, 127, 128, 129, 136, 255, 1000, 4097, 8193, 33000, 100003]

REDUCTIONS = {
    "sum": lambda xp, v: v.sum(),
    "np.sum": lambda xp, v: xp.sum(v),
    "mean": lambda xp, v: v.mean(),
    "std": lambda xp, v: v.std(),
    "var ddof=1": lambda xp, v: v.var(ddof=1),
    "fused": lambda xp, v: (v * 2 + 1).sum(),
    "nanmean-free mean of squares": lambda xp, v: (v * v).mean(),
}

AXES = {
    "all": lambda v: v.sum(),
    "last": lambda v: v.sum(axis=-1),
    "first": lambda v: v.sum(axis=0),
    "mean first": lambda v: v.mean(axis=0),
    "mean last": lambda v: v.mean(axis=-1),
    "std last": lambda v: v.std(axis=-1),
    "centred rows": lambda v: v - v.mean(axis=-1, keepdims=True),
    "transposed": lambda v: v.T.sum(axis=0),
    "fused all": lambda v: (v * v).sum(),
    "trailing axes": lambda v: v.sum(axis=tuple(range(1, v.ndim))),
    "a column view": lambda v: v[:, 1:].sum(axis=-1),
}

SHAPES = [(3, 50), (7, 300), (40, 1000), (3, 4, 500), (100, 100), (1000, 3), (5, 1), (1, 9)]


def _check(got, want):
    got = numpy.asarray(got)
    assert got.dtype == numpy.asarray(want).dtype
    if nl.get_device() == "cpu":
        numpy.testing.assert_array_equal(got, want)  # bit for bit
    else:
        rtol = 1e-5 if got.dtype != numpy.float64 else 1e-12
        numpy.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("what", list(REDUCTIONS))
def test_one_dimensional_float_reductions_equal_numpys(dtype, n, what):
    if dtype == "float16" and what in ("std", "var ddof=1"):
        pytest.skip("float16 var/std: NumPy's float32 deviations from the mean, cast back")
    host = (RNG.random(n) * 100 - 30).astype(dtype)
    fn = REDUCTIONS[what]
    want = fn(numpy, host)
    got = fn(nl, nl.asarray(host))
    _check(got, want)
    assert type(numpy.asarray(got)[()]) is type(want)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("what", list(AXES))
def test_float_reductions_over_axes_equal_numpys(dtype, shape, what):
    host = (RNG.random(shape) * 10 - 3).astype(dtype)
    if dtype == "float16" and what == "std last":
        pytest.skip("float16 std over an axis: NumPy's buffers of a float32 cast per row")
    if dtype == "float16" and nl.get_device() != "cpu":
        pytest.skip("a GPU adds float16 in float; NumPy rounds each addition along an axis")
    if what == "a column view" and shape[1] < 2:
        pytest.skip("no column to drop")
    _check(AXES[what](nl.asarray(host)), AXES[what](host))


WHOLE_SUMS = {  # a whole-array sum of data NumPy's iterator buffers (sum_order._buffered)
    "inner columns": lambda xp, a: a[:, 1:-1].sum(),
    "interior": lambda xp, a: a[1:-1, 1:-1].sum(),
    "every other": lambda xp, a: a[::2, ::2].sum(),
    "every third column": lambda xp, a: a[:, ::3].sum(),
    "mean of a window": lambda xp, a: a[10:, 5:-3].mean(),
    "var of columns": lambda xp, a: a[:, 1:].var(),
    "squares of the interior": lambda xp, a: xp.sum(a[1:-1, 1:-1] ** 2),
    "a computed value's view": lambda xp, a: (a * 2)[:, 1:-1].sum(),
    "a raveled view": lambda xp, a: a[:, 1:-1].ravel().sum(),
    "float64 sum of float32": lambda xp, a: a.astype(xp.float32).sum(dtype=xp.float64),
    "float64 sum of a float32 view": lambda xp, a: a.astype(xp.float32)[:, 1:].sum(
        dtype=xp.float64),
    "float64 mean of float32": lambda xp, a: a.astype(xp.float32).mean(dtype=xp.float64),
    "mean of float16 columns": lambda xp, a: a.astype(xp.float16)[:, :-1].mean(),
    "3-d inner rows": lambda xp, a: a.reshape(a.shape[0], -1, 2)[:, 1:, :].sum(),
}


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
@pytest.mark.parametrize("shape", [(1000, 100), (300, 300), (40, 5000), (5, 30000), (100, 6)],
                         ids=str)  # fmt: skip
@pytest.mark.parametrize("what", list(WHOLE_SUMS))
def test_whole_sums_of_strided_or_cast_data_take_numpys_buffers(shape, what):
    """NumPy (2.3 and later) sums data that are not one run, or that the sum casts, in
    buffers of at most 8192 elements (whole rows where they fit), each buffer pairwise, the
    buffers in turn: ``a[:, 1:-1].sum()`` of a (1000, 100) array adds 12 pairwise sums of 83
    rows, where adding the rows' pairwise sums in turn misses NumPy's last bit."""
    host = numpy.random.default_rng(11).random(shape) * 10 - 3
    want = WHOLE_SUMS[what](numpy, host)
    got = WHOLE_SUMS[what](nl, nl.asarray(host))
    _check(got, want)


def test_the_mean_of_random_numbers_prints_numpys_digits():
    if nl.get_device() != "cpu":
        pytest.skip("a GPU sums in its own order")
    numpy.random.seed(0)
    host = numpy.random.random(30)
    assert repr(nl.asarray(host).mean()) == repr(host.mean())
    assert str(nl.asarray(host).std()) == str(host.std())


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
@pytest.mark.parametrize("shape", [(9528, 5), (40000, 2), (3, 100000), (7, 13, 1001)])
@pytest.mark.parametrize(
    "make",
    [lambda xp, s: xp.full(s, 0.1), lambda xp, s: xp.ones(s) * 0.1,
     lambda xp, s: xp.broadcast_to(0.1, s), lambda xp, s: xp.full(s, 0.1, dtype="float32")],
    ids=["full", "ones times", "broadcast scalar", "full float32"],
)  # fmt: skip
def test_sums_of_fills_take_numpys_order(shape, make):
    """``np.full((9528, 5), 0.1).sum()`` is NumPy's 4763.999999999999, not 4764.0: a fill is
    memory in C order to NumPy, summed as one run (numpy-tutorials' air quality)."""
    for reduce in (lambda v: v.sum(), lambda v: v.mean(), lambda v: v.sum(axis=-1)):
        want, got = reduce(make(numpy, shape)), reduce(make(nl, shape))
        numpy.testing.assert_array_equal(numpy.asarray(got), want)


EINSUMS = {  # (spec, shapes, whether the values are NumPy's, and their sum)
    "batched 2-d rotations": ("ijk,ilk->ijl", (750, 4, 2), (750, 2, 2), True, False),
    "three terms": ("ij,jk->ik", (5, 3), (3, 4), True, True),
    # (NumPy's einsum picks its loop by the strides; for these its products' sums are
    # associated otherwise: the values are within a last bit)
    "batched matvec": ("bij,bj->bi", (40, 6, 3), (40, 3), False, False),
}


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
@pytest.mark.parametrize("case", EINSUMS.values(), ids=EINSUMS.keys())
def test_short_einsum_contractions_are_numpys(case):
    """rougier's boids rotate points with ``einsum('ijk,ilk->ijl', V, R)``: NumPy's einsum adds
    the two products in order, where a matrix product's multiply-add changed a last bit in a
    quarter of them. (A result numloom reads through a transposed view of an operand is summed
    in numloom's order, a last bit from NumPy's.)"""
    spec, sa, sb, exact, summed_as_numpy = case
    rng = numpy.random.default_rng(3)
    a, b = rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)
    want = numpy.einsum(spec, a, b)
    got = nl.einsum(spec, nl.asarray(a), nl.asarray(b))
    if exact:
        numpy.testing.assert_array_equal(got.get(), want)
    else:
        numpy.testing.assert_allclose(got.get(), want, rtol=1e-14, atol=1e-15)
    if summed_as_numpy:
        assert nl.einsum(spec, nl.asarray(a), nl.asarray(b)).sum() == want.sum()


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
@pytest.mark.parametrize("fn", ["log", "exp", "sin", "cos"])
def test_a_small_sum_of_math_is_numpys_fused_or_not(fn):
    """``np.log(q).sum()`` fused into one kernel gives what summing the stored ``np.log(q)``
    gives, NumPy's value: a small sum calls the C library's scalar functions, as a small map
    kernel does, not glibc's vector ones (a few ulp off)."""
    q = numpy.random.default_rng(0).random(300)
    want = getattr(numpy, fn)(q).sum()
    fused = getattr(nl, fn)(nl.asarray(q)).sum()
    stored = getattr(nl, fn)(nl.asarray(q))
    stored.get()
    assert fused == want == stored.sum()


TRANSPOSED = {
    "a transposed array": lambda xp, a, b: a.T.sum(),
    "a computation over transposed arrays": lambda xp, a, b: (a.T * 1.5 + b.T).sum(),
    "its mean": lambda xp, a, b: (a.T - b.T).mean(),
    "math over a transposed array": lambda xp, a, b: xp.sqrt(abs(a.T)).sum(),
    "a cast on the way": lambda xp, a, b: (a.T - 1).astype(numpy.float32).sum(),
    "a column broadcast": lambda xp, a, b: (a.T + b.T[:1]).sum(),  # (C and F: NumPy's C)
}


@pytest.mark.parametrize("shape", [(3, 50), (40, 1000), (129, 7), (3, 4, 500), (100, 100)])
@pytest.mark.parametrize("what", list(TRANSPOSED))
def test_whole_sums_over_transposed_data_take_numpys_memory_order(shape, what):
    # NumPy's temporary of a computation over transposed arrays is transposed (F order), and
    # its whole sum runs pairwise through memory in that order: numloom's takes the same order
    a, b = RNG.standard_normal(shape[::-1]), RNG.standard_normal(shape[::-1])
    want = TRANSPOSED[what](numpy, a, b)
    got = TRANSPOSED[what](nl, nl.asarray(a, device="cpu"), nl.asarray(b, device="cpu"))
    assert float(got) == float(want)



@pytest.mark.parametrize("make", [lambda v: v.sum(), lambda v: ((v - 1.5) ** 2).sum(),
                                  lambda v: (v[:, :50] * v[:, 50:100]).sum()])  # fmt: skip
def test_a_whole_sum_of_contiguous_data_is_one_flat_run(make):
    """NumPy adds a whole C-contiguous array (or a computed value, its C-ordered temporary) as
    one pairwise run: numloom's kernel loops over its flat position, with no per-element
    division of it into coordinates (``pw_q``) where the reads take the flat position as it is
    (a 101x101 sum took 75 us that way, against 19 us flat). Strided reads (the column slices)
    still divide, for their own coordinates; the sums are NumPy's, bit for bit (on the CPU)."""
    host = RNG.random((101, 103))
    got = make(nl.asarray(host))
    (kernel,) = nl.explain(got).kernels
    assert "pw_q" not in kernel.source
    _same_as_numpys([got], [make(host)])


def _steepest_descent_step(xp, p, b, dx=0.01):
    """One step of numerical-mooc's steepest descent for the 2D Poisson equation (lesson
    05_04), and its convergence test's norms."""
    def laplacian(q):
        return (-4.0 * q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[:-2, 1:-1]
                + q[2:, 1:-1]) / dx**2  # fmt: skip

    r, Ar = xp.zeros_like(p), xp.zeros_like(p)
    r[1:-1, 1:-1] = b[1:-1, 1:-1] - laplacian(p)
    Ar[1:-1, 1:-1] = laplacian(r)
    alpha = xp.sum(r * r) / xp.sum(r * Ar)
    new = p + alpha * r
    return new, alpha, xp.sqrt(xp.sum((new - p) ** 2)), xp.sqrt(xp.sum(p**2))


def test_a_solvers_whole_sums_fused_in_one_kernel_are_flat_runs_and_numpys():
    """The step's two sums and their quotient (``alpha``) are one kernel over the grid's flat
    position, as each whole sum is, and every value is NumPy's, bit for bit (on the CPU)."""
    p, b = RNG.random((101, 101)), RNG.random((101, 101))
    got = _steepest_descent_step(nl, nl.asarray(p), nl.asarray(b))
    kernels = nl.explain(*got).kernels
    assert not any("pw_q" in k.source for k in kernels)
    _same_as_numpys(got, _steepest_descent_step(numpy, p, b))


def _same_as_numpys(got, want):
    """NumPy's values: bit for bit on the CPU, whose sums add in NumPy's pairwise order; to
    an ulp or two of the sums on a GPU, whose threads add in a tree (docs/semantics.md)."""
    for g, w in zip(got, want):
        if nl.get_device() == "cpu":
            numpy.testing.assert_array_equal(numpy.asarray(g), w)
        else:
            numpy.testing.assert_allclose(numpy.asarray(g), w, rtol=1e-13, atol=0)


def test_a_whole_array_row_kernel_stores_every_element_at_its_flat_position():
    """A whole-array softmax is one row kernel (the max, the sum, then the quotient stored):
    over the flat position, every element is stored where it belongs. (The exponentials are
    glibc's vector functions here, within an ulp of NumPy's.)"""
    host = RNG.random((37, 41))
    x = nl.asarray(host)
    e = nl.exp(x - x.max())
    got = e / e.sum()
    (kernel,) = nl.explain(got).kernels
    assert "pw_q" not in kernel.source
    e = numpy.exp(host - host.max())
    rtol = 4e-16 if nl.get_device() == "cpu" else 1e-14  # (a GPU's exp, and its sum's order)
    numpy.testing.assert_allclose(numpy.asarray(got), e / e.sum(), rtol=rtol, atol=0)


@pytest.mark.parametrize("n, row_kernels, kernels", [(101, 3, 6), (300, 0, 10)])
def test_a_large_whole_arrays_reductions_are_not_one_row(n, row_kernels, kernels):
    """Whole-array reductions whose result goes back over the array (the step's ``alpha``)
    or only into scalar arithmetic (its norms, ``sqrt(sum(d**2))``) fuse with those uses as
    one row kernel only while the array is small: one row is one thread on the CPU and one
    block on a GPU. A 300x300 grid's sums are reduction kernels of their own, and each
    ``sqrt`` of a sum a kernel after it; the values are NumPy's either way."""
    p, b = RNG.random((n, n)), RNG.random((n, n))
    got = _steepest_descent_step(nl, nl.asarray(p), nl.asarray(b))
    for target in ("cpu", "cuda"):
        made = nl.explain(*got, target=target).kernels
        assert sum(" nl_row_" in k.source for k in made) == row_kernels, target
        assert len(made) == kernels, target
    _same_as_numpys(got, _steepest_descent_step(numpy, p, b))


@pytest.mark.parametrize("shape", [(3, 50), (40, 100), (129, 7), (100, 100)])
def test_a_small_whole_mean_over_transposed_data_broadcast_back_is_numpys(shape):
    """A whole mean fused with its use over the array (``x - x.mean()``) is a row kernel,
    which adds in C order; over transposed data NumPy adds in F order, so such a mean stays
    a reduction kernel of its own (which walks that order): NumPy's values, bit for bit."""
    a, b = RNG.standard_normal(shape), RNG.standard_normal(shape)
    x = nl.asarray(a, device="cpu").T - nl.asarray(b, device="cpu").T
    got = x - x.mean()
    numpy.testing.assert_array_equal(got.get(), (a.T - b.T) - (a.T - b.T).mean())


def test_a_norm_of_a_small_array_is_one_kernel():
    """``sqrt(sum(d * d))`` of a small array (a solver's convergence test) is one kernel: the
    square root is the reduction's epilogue, not a kernel of its own after it."""
    p, q = RNG.random((101, 101)), RNG.random((101, 101))
    norm = nl.sqrt(nl.sum((nl.asarray(p) - nl.asarray(q)) ** 2))
    for target in ("cpu", "cuda"):
        assert len(nl.explain(norm, target=target).kernels) == 1, target
    if nl.get_device() == "cpu":
        assert float(norm) == numpy.sqrt(numpy.sum((p - q) ** 2))
    else:
        assert float(norm) == pytest.approx(numpy.sqrt(numpy.sum((p - q) ** 2)), rel=1e-14)


def test_a_products_operand_written_in_another_layout_gives_numpys_bits(monkeypatch):
    """Gradient descent on a feature matrix with a column of ones put in front (``insert``):
    in a plan of 40 steps the matrix is written column by column, and BLAS given that layout
    rounds its sums otherwise than on NumPy's C-ordered matrix (a last-bit difference in
    ML-From-Scratch's ridge regression). The product reads it in NumPy's layout."""
    from numloom.core import config

    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 20)  # (the default: NumPy runs new plans)
    rng = numpy.random.default_rng(0)
    a, w = rng.random((120, 16)), rng.uniform(-0.25, 0.25, 17)

    def run(xp, steps):
        features = xp.asarray(a)
        x = xp.insert(features / xp.linalg.norm(features, 2, -1)[:, None], 0, 1, axis=1)
        ww, made = xp.asarray(w).copy(), []
        for _ in range(steps):
            made.append(x.dot(ww))
            ww -= 0.001 * (made[-1] - 1.0).dot(x)
        return [numpy.asarray(m) for m in made]

    for steps in (1, 3, 10, 40):  # (the shorter runs' plans: the long one's layout choices)
        got, want = run(nl, steps), run(numpy, steps)
        if nl.get_device() == "cpu":
            for g, w_ in zip(got, want):
                numpy.testing.assert_array_equal(g, w_)
        else:
            numpy.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
def test_a_sum_over_an_array_written_with_reversed_reads_is_numpys():
    """A written array is NumPy's memory, whatever its writes read: the sum of a product over
    it keeps NumPy's order (the order search went on into the writes, found a reversed read
    and summed in double, one ulp off in float32)."""
    rng = numpy.random.default_rng(2)
    a = (rng.random(64) * 100).astype("float32")
    b = (rng.random(64) * 100).astype("float32")

    def program(a, b):
        a = a.copy()
        a[21:39] += b[18:36][::-1] * 2
        a[::3] = a[::3] - 1
        v = a[18:36].reshape(18, 1) * b[:3]
        return v.sum(axis=0)

    want = program(a, b)
    got = program(nl.asarray(a), nl.asarray(b)).get()
    assert got.tobytes() == want.tobytes()


@pytest.mark.skipif(nl.get_device() != "cpu", reason="bit for bit on the CPU")
@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.integers(1, 40), min_size=1, max_size=3),
    starts=st.lists(st.integers(0, 3), min_size=3, max_size=3),
    steps=st.lists(st.integers(1, 3), min_size=3, max_size=3),
    dtype=st.sampled_from(["float64", "float32", "float16"]),
    cast=st.sampled_from([None, "float64"]),
    computed=st.booleans(),
    how=st.sampled_from(["sum", "mean"]),
)
def test_whole_sums_of_drawn_views_are_numpys(shape, starts, steps, dtype, cast, computed, how):
    """A whole-array sum (or mean) of a drawn view (starts, steps) of stored or computed data,
    with or without a cast: NumPy's value bit for bit, whatever its iterator buffers."""
    big = tuple(n * 4 + 8 for n in shape)  # (room for the starts and steps)
    host = (numpy.random.default_rng(len(shape)).random(big) * 10 - 3).astype(dtype)
    index = tuple(slice(s, s + n * k, k) for s, n, k in zip(starts, shape, steps))

    def run(xp, a):
        v = (a * 2)[index] if computed else a[index]
        return getattr(v, how)(dtype=cast)

    want = run(numpy, host)
    got = run(nl, nl.asarray(host))
    numpy.testing.assert_array_equal(numpy.asarray(got), want)

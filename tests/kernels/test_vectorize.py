"""``numloom.vectorize`` against NumPy's: same results and dtypes, compiled and fused into the
kernels around it; Numba's signature form; reduce, accumulate and outer."""

from __future__ import annotations

import contextlib
import functools
import math
import re
import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl


def kernels_for(fn, *args):
    nl.sync()
    before = nl.stats()["kernels_launched"]
    out = fn(*args)
    nl.sync()
    return nl.stats()["kernels_launched"] - before, out


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def clipped(x, lo, hi):
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x


def divmod_pair(a, b):
    return a // b, a % b


def power_of(x, p):
    return x**p


@numpy_compare()
def test_arithmetic_with_a_python_scalar(xp):
    return xp.vectorize(lambda a, b: a * b + 1)(xp.arange(6.0), 2)


@numpy_compare()
def test_float32_computes_as_python_floats_and_returns_float32(xp):
    # NumPy calls the function on Python floats and casts to the first call's float32
    x = xp.asarray(numpy.linspace(-2, 2, 99, dtype=numpy.float32) / 3)
    return xp.vectorize(lambda v: v * 2.5 - v / 7 + 1e-3)(x)


@numpy_compare(rtol=1e-15)
def test_math_functions_return_python_floats(xp):
    x = xp.asarray(numpy.linspace(0.5, 4, 8, dtype=numpy.float32))
    return xp.vectorize(lambda v: math.sqrt(v) + math.log(v))(x)


@numpy_compare()
def test_tuple_results_are_several_arrays(xp):
    a = xp.asarray(numpy.arange(-6, 6))
    return xp.vectorize(divmod_pair)(a, 4)


@numpy_compare()
def test_loops_and_branches(xp):
    return xp.vectorize(collatz_steps)(xp.arange(1, 40))


@numpy_compare()
def test_if_elif_else_with_broadcasting(xp):
    x = xp.asarray(numpy.linspace(-3, 3, 12).reshape(3, 4))
    return xp.vectorize(clipped)(x, xp.asarray([[-1.0], [0.0], [1.0]]), 2.0)


@numpy_compare()
def test_otypes(xp):
    return xp.vectorize(lambda v: v / 3, otypes=[numpy.float32])(xp.arange(7))


@numpy_compare()
def test_excluded_positional_and_keyword(xp):
    a = xp.vectorize(power_of, excluded={1})(xp.arange(5), 3)
    b = xp.vectorize(power_of, excluded={"p"})(xp.arange(5), p=2)
    return a, b


@numpy_compare()
def test_keyword_inputs(xp):
    return xp.vectorize(power_of)(x=xp.arange(4.0), p=xp.asarray([1.0, 2.0, 0.5, 3.0]))


@numpy_compare()
def test_scalar_inputs_give_a_0d_array(xp):
    return xp.vectorize(lambda a, b: a - b)(7, 2)


@numpy_compare()
def test_small_integers_compute_as_python_ints(xp):
    a = xp.asarray(numpy.array([100, -100, 27], numpy.int8))
    return xp.vectorize(lambda u, v: u * v // 100)(a, a)  # 100 * 100 does not wrap


@numpy_compare()
def test_decorator_with_keywords(xp):
    @xp.vectorize(otypes=[float], cache=True)
    def half(v):
        return v / 2

    return half(xp.arange(3))


@numpy_compare()
def test_gufunc_signature_runs_through_numpy(xp):
    dot = xp.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")
    return dot(xp.arange(6.0).reshape(2, 3), xp.arange(3.0))


def gaussian(x, mean, sigma):
    return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


def test_vectorize_feeding_a_sum_is_one_kernel():
    x = nl.asarray(numpy.linspace(-3, 3, 10_001, dtype=numpy.float32))
    n, total = kernels_for(lambda: nl.vectorize(gaussian)(x, 0.0, 1.0).sum())
    assert n == 1
    want = numpy.vectorize(gaussian)(x.get(), 0.0, 1.0).sum()
    numpy.testing.assert_allclose(float(total), want, rtol=1e-6)


def test_vectorize_fuses_with_the_expression_around_it():
    x = nl.asarray(numpy.arange(1.0, 100.0))
    vf = nl.vectorize(lambda v: v * v if v > 50 else -v)
    n, out = kernels_for(lambda: nl.sqrt(nl.abs(vf(x * 2) + 1)))
    assert n == 1
    h = numpy.arange(1.0, 100.0) * 2
    numpy.testing.assert_array_equal(
        out.get(), numpy.sqrt(numpy.abs(numpy.where(h > 50, h * h, -h) + 1))
    )


def test_reference_executor_runs_the_same_function(monkeypatch):
    monkeypatch.setenv("NUMLOOM_BACKEND", "numpy")
    x = nl.asarray(numpy.arange(-5, 5))
    q, r = nl.vectorize(divmod_pair)(x, 3)
    numpy.testing.assert_array_equal(q.get(), numpy.arange(-5, 5) // 3)
    numpy.testing.assert_array_equal(r.get(), numpy.arange(-5, 5) % 3)


def test_complex_functions():
    z = numpy.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
    got = nl.vectorize(lambda v: v * v.conjugate() + 1j)(z)
    numpy.testing.assert_array_equal(got.get(), z * z.conj() + 1j)


def test_numba_signatures_pick_the_first_loop_that_fits():
    @nl.vectorize(["int32(int32, int32)", "float64(float64, float64)"], target="cuda")
    def mul(a, b):
        return a * b

    ints = mul(numpy.arange(4, dtype=numpy.int16), numpy.int16(3))
    floats = mul(numpy.arange(4.0), 0.5)
    assert ints.dtype == numpy.int32 and floats.dtype == numpy.float64
    numpy.testing.assert_array_equal(ints.get(), numpy.arange(4) * 3)
    numpy.testing.assert_array_equal(floats.get(), numpy.arange(4.0) * 0.5)
    with pytest.raises(TypeError, match="no declared signature"):
        mul(numpy.arange(3, dtype=numpy.complex64), 1)


def test_numba_out_argument():
    add = nl.vectorize(["float32(float32, float32)"], target="cuda")(lambda x, y: x + y)
    out = nl.zeros(5, numpy.float32)
    assert add(numpy.arange(5, dtype=numpy.float32), numpy.ones(5, numpy.float32), out=out) is out
    numpy.testing.assert_array_equal(out.get(), numpy.arange(5) + 1.0)


def test_reduce_accumulate_outer():
    add = nl.vectorize(lambda a, b: a + b)
    a = numpy.arange(24).reshape(2, 3, 4)
    numpy.testing.assert_array_equal(add.reduce(a, axis=1).get(), numpy.add.reduce(a, axis=1))
    numpy.testing.assert_array_equal(add.reduce(a, axis=None).get(), a.sum())
    numpy.testing.assert_array_equal(add.reduce(a, axis=-1, keepdims=True).get(),
                                     a.sum(axis=-1, keepdims=True))  # fmt: skip
    numpy.testing.assert_array_equal(add.reduce(a, axis=0, initial=100).get(), a.sum(0) + 100)
    numpy.testing.assert_array_equal(add.accumulate(a, axis=2).get(), numpy.cumsum(a, axis=2))
    numpy.testing.assert_array_equal(add.outer(numpy.arange(3), numpy.arange(4)).get(),
                                     numpy.add.outer(numpy.arange(3), numpy.arange(4)))  # fmt: skip
    # a non-associative function folds in NumPy's order: ((a0 - a1) - a2) - ...
    sub = nl.vectorize(lambda x, y: x - y)
    x = numpy.array([10.0, 1.0, 2.0, 3.0])
    assert float(sub.reduce(x)) == numpy.subtract.reduce(x)
    with pytest.raises(ValueError, match="no identity"):
        sub.reduce(numpy.zeros(0))


def test_lambdas_on_one_line_are_told_apart():
    plus, times = nl.vectorize(lambda v: v + 1), nl.vectorize(lambda v: v * 10)
    numpy.testing.assert_array_equal(plus(nl.arange(3)).get(), [1, 2, 3])
    numpy.testing.assert_array_equal(times(nl.arange(3)).get(), [0, 10, 20])


# --- gufunc signatures: scalar outputs compiled, the rest through NumPy's loop -------------------


@contextlib.contextmanager
def no_fallback(xp):
    """In numloom, a fallback to NumPy's loop is an error (the call must compile)."""
    with warnings.catch_warnings():
        if xp is nl:
            warnings.simplefilter("error", nl.NumloomFallbackWarning)
        yield


def dot(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return s


def norm(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return math.sqrt(s)


def extremes(a):
    lo = a[0]
    hi = a[0]
    for i in range(1, len(a)):
        lo = min(lo, a[i])
        hi = max(hi, a[i])
    return lo, hi


def scaled_trace(m, k):
    t = 0
    for i in range(min(m.shape[0], m.shape[1])):
        t += m[i, i]
    return t * k


RNG = numpy.random.default_rng(11)
A32 = RNG.standard_normal((4, 1, 5)).astype(numpy.float32)
B32 = RNG.standard_normal((3, 5)).astype(numpy.float32)
I32 = RNG.integers(-50, 50, (6, 7)).astype(numpy.int32)
U8 = RNG.integers(0, 9, (2, 3, 4, 5)).astype(numpy.uint8)


@numpy_compare()
def test_gufunc_dot_broadcasts_loop_dimensions_in_float32(xp):
    with no_fallback(xp):
        return xp.vectorize(dot, signature="(n),(n)->()")(xp.asarray(A32), xp.asarray(B32))


@numpy_compare()
def test_gufunc_norm_of_integers_over_the_last_axis(xp):
    with no_fallback(xp):
        x = xp.asarray(numpy.arange(24, dtype=numpy.int16).reshape(2, 3, 4) - 7)
        f = xp.vectorize(norm, signature="(n)->()")
        return f(x), f(x[0, 0])


@numpy_compare()
def test_gufunc_two_scalar_outputs(xp):
    with no_fallback(xp):
        x = xp.asarray(I32)
        return xp.vectorize(extremes, signature="(n)->(),()")(x)


@numpy_compare()
def test_gufunc_matrix_core_and_a_scalar_core_with_otypes(xp):
    with no_fallback(xp):
        m = xp.asarray(U8)
        f = xp.vectorize(scaled_trace, otypes=[numpy.float32], signature="(i,j),()->()")
        return f(m, 0.5), f(m[0, 0], 3)


@numpy_compare()
def test_gufunc_mismatched_core_dimensions_raise_numpys_error(xp):
    return xp.vectorize(dot, signature="(n),(n)->()")(xp.ones((2, 4)), xp.ones((2, 5)))


@numpy_compare()
def test_gufunc_loop_dimensions_that_do_not_broadcast(xp):
    return xp.vectorize(dot, signature="(n),(n)->()")(xp.ones((2, 4)), xp.ones((3, 4)))


@numpy_compare()
def test_gufunc_missing_core_dimensions_and_argument_count(xp):
    f = xp.vectorize(dot, signature="(n),(n)->()")
    errors = []
    for args in ((xp.ones(3), 2.0), (xp.ones(3),)):
        try:
            f(*args)
        except (TypeError, ValueError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    return errors


@numpy_compare()
def test_gufunc_size_zero_loops(xp):
    with no_fallback(xp):
        f = xp.vectorize(dot, otypes=[numpy.float64], signature="(n),(n)->()")
        empty = f(xp.ones((0, 3)), xp.ones(3))
    try:
        xp.vectorize(dot, signature="(n),(n)->()")(xp.ones((0, 3)), xp.ones(3))
    except ValueError as e:
        return empty, str(e)


def test_gufunc_bad_signature_raises_at_construction():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        nl.vectorize(dot, signature="(n),(n)->")


@numpy_compare()
def test_gufunc_array_outputs_of_expressions_run_numpys_loop(xp):
    cumulative = xp.vectorize(lambda a: numpy.cumsum(a), signature="(n)->(n)")
    return cumulative(xp.arange(12.0).reshape(3, 4)), xp.vectorize(
        doubled, signature="(n)->(n)")(xp.arange(6.0).reshape(2, 3))  # fmt: skip


def doubled(a):
    return a * 2  # (an expression: NumPy's loop)


def scaled(a, k):
    out = numpy.empty_like(a)
    for i in range(len(a)):
        out[i] = a[i] * k
    return out


def matvec(A, x):
    y = numpy.zeros(A.shape[0])
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j]
    return y


def running_sum_and_peak(a):
    total = numpy.empty(len(a), dtype=numpy.float32)
    peak = numpy.full((1, 2), -1e30)
    s = 0.0
    for i in range(len(a)):
        s += a[i]
        total[i] = s
        peak[0, 0] = max(peak[0, 0], a[i])
    return total, peak


def outer_grid(a, b):
    g = numpy.ones((len(a), len(b)), dtype=numpy.int64)
    for i in range(len(a)):
        for j in range(len(b)):
            if (i + j) % 2:
                g[i, j] = a[i] * b[j]
    return g


A64 = RNG.standard_normal((4, 3, 5))
X64 = RNG.standard_normal(5)


@numpy_compare()
def test_gufunc_array_output_allocated_like_an_input(xp):
    """``out = np.empty_like(a)``, filled and returned: the output's core view at each loop
    point, written in place; its dtype is the allocation's (float32 here)."""
    with no_fallback(xp):
        f = xp.vectorize(scaled, signature="(n),()->(n)")
        return f(xp.asarray(A32), 2.5), f(xp.asarray(B32[0]), 3)


@numpy_compare()
def test_gufunc_matrix_vector_product_from_zeros(xp):
    with no_fallback(xp):
        return xp.vectorize(matvec, signature="(m,n),(n)->(m)")(xp.asarray(A64), xp.asarray(X64))


@numpy_compare()
def test_gufunc_two_array_outputs_one_with_core_dimensions_of_its_own(xp):
    """The second output's core dimensions (``(p,q)``) are not the inputs': as NumPy, their
    sizes come from the first call's result; ``np.full`` fills it before the loop writes."""
    with no_fallback(xp):
        f = xp.vectorize(running_sum_and_peak, signature="(n)->(n),(p,q)")
        return f(xp.asarray(I32))


@numpy_compare()
def test_gufunc_array_output_of_a_new_shape_from_ones(xp):
    with no_fallback(xp):
        f = xp.vectorize(outer_grid, signature="(n),(m)->(n,m)")
        return f(xp.asarray(I32[:, :3]), xp.asarray(U8[0, 0, :2, :4]))


def test_gufunc_scalar_output_is_one_kernel():
    """A scalar-output gufunc is its kernel alone: every loop point's result is stored, so the
    output is not zero-filled first (on a GPU, a kernel of its own)."""
    x = nl.asarray(RNG.standard_normal((5, 4, 6)))
    nl.evaluate(x)
    nl.sync()
    f = nl.vectorize(dot, signature="(n),(n)->()")

    def run():
        got = f(x, x)
        nl.evaluate(got)
        return got

    with no_fallback(nl):
        n, got = kernels_for(run)
    assert n == 1
    host = x.get()
    numpy.testing.assert_allclose(got.get(), numpy.einsum("ijk,ijk->ij", host, host), rtol=1e-13)


P64, Q64 = RNG.standard_normal((5, 6)), RNG.standard_normal((5, 6))


def _fused_dot(xp):
    def dot_of(a, b):
        s = 0.0
        for i in range(len(a)):
            s += a[i] * b[i]
        return s

    return xp.vectorize(dot_of, signature="(n),(n)->()")


@numpy_compare(rtol=1e-13)
def test_gufunc_results_fuse_with_the_arithmetic_around_them(xp):
    """A gufunc of scalar results is elementwise over its loop dimensions: its scalar
    operands' arithmetic and its results' consumers fuse into the kernel that calls it; its
    core operands are read in memory (strided, reversed, broadcast views of it as they are)."""
    a, b = xp.asarray(P64), xp.asarray(Q64)
    dot = _fused_dot(xp)
    scaled = xp.vectorize(scaled_trace, signature="(i,j),()->()")
    return (dot(a, b) * 3.0 + 1.0,
            dot(a[:, ::-1], b[::-1, :]) - a[:, 0],
            dot(a[:, None, :], b[None, :, :]).sum(axis=1),
            xp.sqrt(xp.abs(dot(a.T[:3], a.T[-3:]))),
            scaled(xp.stack([a, b]).reshape(2, 5, 6)[:, :, :5], xp.arange(2.0) * 0.5 + 1),
            dot(xp.ones((5, 6)), b), dot(xp.zeros(6) + 1, b), dot(xp.arange(6.0), a),
            dot(b.astype(numpy.float32), (a * 10).astype(numpy.int32)), dot(a > 0.5, b),
            dot(a[0], b[1]))  # fmt: skip


def test_gufunc_of_scalar_results_is_one_kernel_with_its_neighbours():
    """``dot(a, b) * 3 + 1`` and ``exp(dot(a, 2 * b))``: the gufunc's call and
    the arithmetic after it are one kernel; a core operand that is computed is written
    first (the function reads it along its core dimension)."""
    a, b = nl.asarray(P64), nl.asarray(Q64)
    nl.evaluate(a, b)
    dot = _fused_dot(nl)

    def after():
        got = dot(a, b) * 3.0 + 1.0
        nl.evaluate(got)
        return got

    with no_fallback(nl):
        n, got = kernels_for(after)
    assert n == 1
    numpy.testing.assert_allclose(got.get(), (P64 * Q64).sum(axis=1) * 3.0 + 1.0, rtol=1e-13)

    def computed():
        got = nl.exp(dot(a, 2.0 * b))
        nl.evaluate(got)
        return got

    with no_fallback(nl):
        n, got = kernels_for(computed)
    assert n == 2
    numpy.testing.assert_allclose(got.get(), numpy.exp((P64 * 2.0 * Q64).sum(axis=1)),
                                  rtol=1e-13)  # fmt: skip
    extremes_of = nl.vectorize(extremes, signature="(n)->(),()")

    def both():
        lo, hi = extremes_of(a)
        nl.evaluate(lo, hi)
        return lo, hi

    with no_fallback(nl):
        n, (lo, hi) = kernels_for(both)
    assert n == 1  # (the two results of one call: one kernel, the function called once)
    assert lo.tolist() == P64.min(axis=1).tolist() and hi.tolist() == P64.max(axis=1).tolist()
    plan = nl.explain(*extremes_of(a), target="cuda")
    (source,) = [k.source for k in plan.kernels]
    calls = re.findall(r"= nl_fn_extremes\w*\(", source)
    kernels = re.findall(r"__global__", source)
    assert len(calls) == len(kernels)  # (each variant of the kernel calls the function once)


def test_gufunc_array_output_is_one_kernel_and_its_first_point_is_found_once():
    """One kernel over the loop points; the first point's host call (NumPy's first call: the
    outputs' dtypes and sizes) is made once for these types and sizes, not at the next call."""
    f = nl.vectorize(scaled, signature="(n),()->(n)")
    # (the scalar as an array already computed: on a GPU, a Python scalar argument's array is
    # filled on the device by a kernel of its own, in the same plan)
    x, k = nl.asarray(A64), nl.asarray(2.0)
    nl.evaluate(x, k)
    nl.sync()
    before = nl.stats()["kernels_launched"]
    with no_fallback(nl):
        got = f(x, k)
        nl.evaluate(got)
        assert nl.stats()["kernels_launched"] - before == 1
        found = dict(f._specs)
        again = f(x * 2, 0.5)
    assert f._specs == found
    numpy.testing.assert_array_equal(got.get(), A64 * 2.0)
    numpy.testing.assert_array_equal(again.get(), A64)


@numpy_compare()
def test_gufunc_array_output_of_the_wrong_shape_raises_numpys_error(xp):
    def first_three(a):
        out = numpy.zeros(3)
        for i in range(3):
            out[i] = a[i]
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nl.NumloomFallbackWarning)
        try:
            xp.vectorize(first_three, signature="(n)->(n)")(xp.asarray(A64))
        except ValueError as e:
            return str(e)


def clamped(a):
    out = numpy.empty_like(a)
    for i in range(len(a)):
        a[i] = max(a[i], 0.0)
        out[i] = a[i]
    return out


ON_GPU = nl.get_device() != "cpu"


def _round_trip_warning(match: str):
    """On a GPU, NumPy's loop is a round trip through the host, warned about (with why numloom
    did not compile the function); on the CPU it runs on numloom's memory: no warning."""
    if ON_GPU:
        return pytest.warns(nl.NumloomFallbackWarning, match=match)
    return _no_fallback_warning()


@contextlib.contextmanager
def _no_fallback_warning():
    before = nl.stats()["fallbacks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", nl.NumloomFallbackWarning)
        yield
    assert nl.stats()["fallbacks"] == before


def test_gufunc_writing_its_input_runs_numpys_loop_and_raises_numpys_error():
    """NumPy's loop hands the function read-only broadcast views of its inputs: a write
    there raises, in NumPy and in numloom (whose compiler says why it did not compile it)."""
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        numpy.vectorize(clamped, signature="(n)->(n)")(A64.copy())
    with _round_trip_warning("writes to its array arguments"):
        with pytest.raises(ValueError, match="assignment destination is read-only"):
            nl.vectorize(clamped, signature="(n)->(n)")(nl.asarray(A64.copy()))


def test_numpys_loop_on_the_cpu_is_no_round_trip():
    """A function numloom cannot compile (defined where its source cannot be read: a
    notebook's cell, Python for Data Analysis' appendix A) runs NumPy's loop; on the CPU that
    loop reads numloom's memory, so nothing is warned or counted as a fallback, and the output
    is NumPy's."""
    namespace: dict = {}
    exec("def add_elements(x, y):\n    if x > 0: return x + y\n    return x", namespace)
    with _round_trip_warning("cannot read the source"):
        got = nl.vectorize(namespace["add_elements"])(nl.arange(8.0), nl.arange(8.0))
    want = numpy.vectorize(namespace["add_elements"])(numpy.arange(8.0), numpy.arange(8.0))
    numpy.testing.assert_array_equal(numpy.asarray(got), want)


def record(i, table):
    table[i] = i * 2 + 1
    return i


@numpy_compare()
def test_a_vectorized_function_writing_an_excluded_array_writes_the_callers_array(xp):
    """An excluded argument is passed as it is: NumPy's loop writes into the caller's array,
    and so into numloom's (the loop ran on a host copy, and the writes were lost)."""
    table = xp.zeros(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nl.NumloomFallbackWarning)
        got = xp.vectorize(record, excluded={1})(xp.arange(4), table)
    return got, table


def test_gufunc_fallback_warns_once():
    f = nl.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")
    with _round_trip_warning(r"\* is not defined for float64\[:\]"):
        f(nl.ones((2, 3)), nl.ones(3))
    with numpy.testing.assert_no_warnings():
        assert f(nl.ones((2, 3)), nl.ones(3)).tolist() == [3.0, 3.0]


def test_gufunc_loop_kernels_compile_for_cuda():
    from numloom.compile import compiler

    f = nl.vectorize(extremes, signature="(n)->(),()")
    lo, hi = f(nl.asarray(I32))
    assert lo.tolist() == I32.min(axis=1).tolist() and hi.tolist() == I32.max(axis=1).tolist()
    if not compiler.nvrtc_available():
        return
    # (scalar results: the function is called by the fused kernels of the plan)
    x = nl.asarray(I32)
    lo, hi = f(x[:, ::-1] * 2)
    plan = nl.explain(lo - hi + x[:, 0], target="cuda")
    sources = [k.source for k in plan.kernels if k.source and "nl_fn_extremes" in k.source]
    assert sources and compiler.check_cuda_sources(sources, "sm_80", ptx=True) == [None]
    g = nl.vectorize(running_sum_and_peak, signature="(n)->(n),(p,q)")
    g(nl.asarray(I32))
    sources = [s.source("cuda")[1] for k in g._gufunc_kernels.values()
               for s in k.specializations.values()]  # fmt: skip
    assert sources and compiler.check_cuda_sources(sources, "sm_80", ptx=True) == [None]


def test_a_string_argument_runs_numpys_loop_without_a_warning():
    """numpy-tutorials' air quality: ``np.vectorize(f)('PM2.5', arr)``: a string is NumPy's
    own data, so NumPy's loop runs it and nothing is reported as lost."""
    f = lambda name, v: len(name) + v  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nl.vectorize(f)("PM2.5", nl.arange(3))
        words = nl.vectorize(len)(numpy.array(["a", "bcd"]))
    want = numpy.vectorize(f)("PM2.5", numpy.arange(3))
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    assert words.tolist() == [1, 3]


def _no_arguments():
    return 1


def _plus(x, y):
    return x + y


@pytest.mark.parametrize("call", [
    lambda xp: xp.vectorize(math.cos)(xp.linspace(0, 6, 7)),
    lambda xp: xp.vectorize(functools.partial(_plus, 3))(xp.arange(4)),
    lambda xp: xp.vectorize(_no_arguments)(),
    lambda xp: _with_otypes(xp.vectorize(lambda x: x), "i")(xp.arange(5.0)),
    lambda xp: _with_otypes(xp.vectorize(lambda x: x), "i").otypes,
    lambda xp: xp.vectorize(lambda x: x, otypes=[numpy.float64, "i"]).otypes,
    lambda xp: xp.vectorize(lambda x: x)(xp.zeros((0, 5), dtype=int)),
    lambda xp: xp.vectorize(lambda x: x, otypes="d")(xp.zeros((0, 5), dtype=int)),
    lambda xp: xp.vectorize(pyfunc=3),
    lambda xp: xp.vectorize("string"),
])  # fmt: skip
@numpy_compare()
def test_vectorize_takes_what_numpys_takes(xp, call):
    """NumPy's own tests of ``vectorize``: a builtin (``math.cos``) and a ``functools.partial``
    run NumPy's loop (they have no Python source to compile), a function of no arguments is
    called once, ``otypes`` may be set afterwards as a string of type codes, a size-0 input
    needs ``otypes``, and a pyfunc that is not callable raises NumPy's TypeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nl.NumloomFallbackWarning)
        return call(xp)


def _with_otypes(f, otypes):
    f.otypes = otypes
    return f

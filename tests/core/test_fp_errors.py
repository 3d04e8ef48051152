"""NumPy's floating-point error state: the warnings and exceptions of each operation, as NumPy
gives them at the call, given by numloom at the sync with the call's error state and line."""

from __future__ import annotations

import warnings

import numpy
import pytest

import numloom as nl

X = numpy.array([1.0, 0.0, -1.0, 2.0, numpy.nan, numpy.inf])
BIG = numpy.array([1e308, -1e308, 3.0])
F32 = numpy.array([3e38, 1.0, 0.0], numpy.float32)
INTS = numpy.array([7, 0, -3])
CX = numpy.array([1e200 + 1e200j, 1 - 2j, 3e308 + 0j, 0j])

CASES = {
    "x / 0": lambda xp: xp.asarray(X) / 0,
    "0 / 0 only": lambda xp: xp.asarray(numpy.zeros(3)) / xp.asarray(numpy.zeros(3)),
    "log": lambda xp: xp.log(xp.asarray(X)),
    "log2 of 0": lambda xp: xp.log2(xp.asarray(X) * 0),
    "sqrt of negatives": lambda xp: xp.sqrt(xp.asarray(X)),
    "exp overflow": lambda xp: xp.exp(xp.asarray(X) * 1000),
    "multiply overflow": lambda xp: xp.asarray(BIG) * 10,
    "add overflow": lambda xp: xp.asarray(BIG) + xp.asarray(BIG),
    "float32 overflow": lambda xp: xp.asarray(F32) * 10,
    "arccos out of range": lambda xp: xp.arccos(xp.asarray(X) * 2),
    "arctanh of 1": lambda xp: xp.arctanh(xp.asarray(X)),
    "power overflow": lambda xp: xp.power(xp.asarray(BIG), 2.0),
    "reciprocal of 0": lambda xp: xp.reciprocal(xp.asarray(X)),
    "fmod by 0": lambda xp: xp.fmod(xp.asarray(X), 0.0),
    "integer floor_divide by 0": lambda xp: xp.asarray(INTS) // xp.asarray(INTS[::-1] * 0),
    "integer remainder by 0": lambda xp: xp.remainder(xp.asarray(INTS), 0),
    "fused: 1 / (1 / x)": lambda xp: 1 / (1 / xp.asarray(X)) + 1,
    "nothing raised": lambda xp: xp.asarray(X) * 2 + 1,
    "NaN operands raise nothing": lambda xp: xp.asarray(X[4:]) + 1,
    "divmod by 0": lambda xp: xp.divmod(xp.asarray(X[:4]), 0.0)[0],
    "float floor_divide by 0": lambda xp: xp.asarray(X[:4]) // 0.0,
    "sum overflow": lambda xp: xp.sum(xp.asarray(BIG[:1].repeat(2))),
    "float32 sum overflow": lambda xp: xp.sum(xp.asarray(F32[:1].repeat(2))),
    "prod overflow": lambda xp: xp.prod(xp.asarray(numpy.array([1e200, 1e200]))),
    "mean overflow": lambda xp: xp.mean(xp.asarray(BIG[:1].repeat(2))),
    "sum along an axis overflows": lambda xp: xp.asarray(numpy.array([[1e308, 1e308], [1, 2]])).sum(1),
    "astype int of NaN and inf": lambda xp: xp.asarray(X).astype(numpy.int64),
    "astype int8 out of range": lambda xp: xp.asarray(numpy.array([1.0, 3e9, -1.0])).astype("i1"),
    "astype uint32 of 3e9 says nothing": lambda xp: xp.asarray(numpy.array([3e9])).astype("u4"),
    "float32 cast overflow": lambda xp: xp.asarray(BIG).astype(numpy.float32),
    "var overflow": lambda xp: xp.var(xp.asarray(numpy.array([1e200, -1e200]))),
    "std of inf": lambda xp: xp.std(xp.asarray(numpy.array([numpy.inf, 1.0]))),
    "in-place divide by 0": lambda xp: _inplace_divide(xp),
    "complex square overflow": lambda xp: xp.asarray(CX) ** 2,
    "complex multiply overflow": lambda xp: xp.asarray(CX) * xp.asarray(CX[::-1]),
    "complex add overflow": lambda xp: xp.asarray(CX) + xp.asarray(CX),
    "complex absolute overflow": lambda xp: abs(xp.asarray(CX) * 1e100 + 1),
    "complex absolute of zeros": lambda xp: abs(xp.asarray(CX) * 0) + 1,
    "complex64 mandelbrot steps": lambda xp: _mandelbrot_steps(xp),
    "complex divide by 0": lambda xp: xp.asarray(CX) / xp.asarray(CX * 0),
    "complex exp overflow": lambda xp: xp.exp(xp.asarray(CX) * 1e10),
    "complex log of 0": lambda xp: xp.log(xp.asarray(CX) * 0),
    "NaN written into an int slice": lambda xp: _int_write(xp, slice(1, 4)),
    "inf written into a strided int view": lambda xp: _int_write(xp, slice(0, 6, 2)),
    # NumPy computes only the elements where= selects (TheAlgorithms' simplex method divides
    # by a column where it is positive), so only those can warn
    "divide where the divisor is not 0": lambda xp: _divide_where(xp, X[:4], X[:4] != 0),
    "divide where= selects a 0 divisor": lambda xp: _divide_where(xp, X[:4], X[:4] != 2),
    "divide where= a Python list": lambda xp: _divide_where(xp, X[:4], [True, False, True, True]),
    "log where= the operand is positive": lambda xp: xp.log(
        xp.asarray(X), out=xp.zeros(6), where=xp.asarray(X) > 0),
    "large divide where the divisor is not 0": lambda xp: _divide_where(
        xp, numpy.arange(5000.0) % 3, numpy.arange(5000) % 3 != 0),
    "large divide where= a divisor is 0": lambda xp: _divide_where(
        xp, numpy.arange(5000.0) % 3, numpy.arange(5000) != 4999),
    "NaN written at int positions": lambda xp: _int_write(xp, xp.asarray([5, 0, 2])),
    "NaN written through an int mask": lambda xp: _int_write(
        xp, xp.asarray(numpy.array([1, 0, 1, 0, 0, 1], bool))),
}


def _divide_where(xp, divisor, where):
    d = xp.asarray(divisor)
    out = xp.full(d.shape, numpy.nan)
    xp.divide(xp.ones(d.shape), d, out=out, where=where if isinstance(where, list) else xp.asarray(where))
    return out


def _mandelbrot_steps(xp):
    c = xp.asarray(CX.astype(numpy.complex64) * 1e-200 + 0.5j)
    z = c
    for _ in range(8):
        z = z**2 + c
    return z


def _int_write(xp, key):
    a = xp.zeros(6, numpy.int32) + 1  # (pending on numloom: the write fuses with it)
    a[key] = xp.asarray(X[3:]) * 1
    return a


def _inplace_divide(xp):
    a = xp.asarray(X[:4].copy())
    a /= 0
    return a


def _softmax(xp):
    e = xp.exp(xp.asarray(X[:4]).reshape(2, 2) * 1000)
    return e / e.sum(axis=1, keepdims=True)


def _write_slice(xp):
    a = xp.zeros(6)
    a[1:5] = 1 / xp.asarray(X[:4])
    return a


def _write_mask(xp):
    a = xp.zeros(4)
    a[xp.asarray([True, False, True, True])] = xp.log(xp.asarray(X[1:4]))
    return a


def _around_matmul(xp):
    # a plan cut in three on a GPU (kernels, cuBLAS, kernels), each part with its own errors:
    # sqrt of negatives and an overflow before the product, a division by 0 after it
    x = xp.asarray(X[:4]).reshape(2, 2)
    big = xp.asarray(numpy.full((2, 2), 1e200))
    return (xp.sqrt(x - 1) + big * 1e200 > 0) @ big + 1 / x


def _matmul_chain(xp):
    a = xp.asarray(numpy.array([[1e150, 1.0], [2.0, 3.0]]))
    return xp.exp((a @ a) @ a / 1e300) - 1 / (a - 1)


# Errors no output shows (a comparison, a reduction or a select hides them, or an underflow):
# a CPU kernel reads its IEEE flags, a GPU kernel checks each value where it is made
# (fperrors.py's notes), a GPU matrix product's result is checked after cuBLAS, and underflow
# runs a GPU segment again on the host where the state looks at it.
HIDDEN = {
    "comparison hides 1 / x": lambda xp: (1 / xp.asarray(X[:4])) > 0,
    "isinf hides 1 / x": lambda xp: xp.isinf(1 / xp.asarray(X[:4])),
    "argmax hides 1 / x": lambda xp: xp.argmax(1 / xp.asarray(X[:4])),
    "min hides an overflow": lambda xp: xp.min(xp.exp(xp.asarray(X[:4]) * 1000)),
    "any hides 1 / x": lambda xp: ((1 / xp.asarray(X[:4])) > 5).any(),
    "where hides an overflow": lambda xp: xp.where(xp.asarray(X[:4]) * 1e308 > 1, 0.0, 1.0),
    "where hides a complex overflow": lambda xp: xp.where(
        abs(xp.asarray(CX)) < 5, xp.asarray(CX) * xp.asarray(CX), 0),
    "a comparison hides a complex absolute's overflow": lambda xp: abs(xp.asarray(CX) * 1e100) > 1,
    "softmax's exp overflows (a row kernel)": _softmax,
    "cumsum of 1 / x (a scan)": lambda xp: xp.cumsum(1 / xp.asarray(X[:4])),
    "cumsum overflows": lambda xp: xp.cumsum(xp.asarray(BIG[:1].repeat(2))),
    "a write of 1 / x into a slice": _write_slice,
    "a write of log(x) through a mask": _write_mask,
    "matmul overflow": lambda xp: xp.asarray(numpy.full((2, 2), 1e200)) @ xp.asarray(
        numpy.full((2, 2), 1e200)),
    "dot overflow": lambda xp: xp.dot(xp.asarray(numpy.full((2, 2), 1e200)), xp.asarray(
        numpy.full((2, 2), 1e200))),
    "dot of a batch and a matrix overflows": lambda xp: xp.asarray(
        numpy.full((3, 2, 4), 1e200)).dot(xp.asarray(numpy.full((4, 5), 1e200))),
    "dot of inf and 0 is invalid": lambda xp: xp.dot(xp.asarray(numpy.array([[numpy.inf, 1.0]])),
                                                     xp.asarray(numpy.array([0.0, 2.0]))),
    "kernels around a matmul": lambda xp: _around_matmul(xp),
    "a matmul of a matmul overflows": lambda xp: _matmul_chain(xp),
    "exp underflow": lambda xp: xp.exp(xp.asarray(numpy.array([-1000.0, 0.0]))),
    "float32 multiply underflow": lambda xp: xp.asarray(
        numpy.array([1e-30, 1.0], numpy.float32)) * numpy.float32(1e-30),
}


def _run(fn, xp, state):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = None
        try:
            with numpy.errstate(**state):
                out = fn(xp)
            out = numpy.asarray(out)  # the sync, outside the errstate block
        except FloatingPointError as e:
            out, error = None, str(e)
    messages = sorted(str(w.message) for w in caught if w.category is RuntimeWarning)
    files = {w.filename for w in caught if w.category is RuntimeWarning}
    return out, error, messages, files


STATES = {
    "default": {},
    "ignore all": {"all": "ignore"},
    "raise divide": {"divide": "raise"},
    "raise all": {"all": "raise"},
    "ignore invalid": {"invalid": "ignore"},
}
UNDER = {"raise underflow": {"under": "raise"}, "warn all": {"all": "warn"}}


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("case", list(CASES))
def test_warnings_and_errors_are_numpys(case, state):
    got, got_error, got_messages, files = _run(CASES[case], nl, STATES[state])
    want, want_error, want_messages, _ = _run(CASES[case], numpy, STATES[state])
    assert got_error == want_error
    assert got_messages == want_messages
    if got_messages:
        assert files == {__file__}  # the user's line, not numloom's
    if want is not None:
        numpy.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("state", list(STATES) + list(UNDER))
@pytest.mark.parametrize("case", list(HIDDEN))
def test_errors_no_output_shows_are_numpys(case, state):
    """An error NumPy reports that no value of a kernel's output shows (a comparison, a
    reduction or a select hides it, or it is an underflow), in a row, scan or write kernel,
    or in a matrix product, is reported as NumPy reports it, on every device."""
    state = {**STATES, **UNDER}[state]
    got, got_error, got_messages, files = _run(HIDDEN[case], nl, state)
    want, want_error, want_messages, _ = _run(HIDDEN[case], numpy, state)
    assert (got_error, got_messages) == (want_error, want_messages)
    if got_messages:
        assert files == {__file__}
    if want is not None:
        numpy.testing.assert_array_equal(got, want)


def test_ordinary_data_sets_no_flag_in_any_kind_of_kernel():
    """Finite data gives no rerun in map, reduction, row, scan and write kernels (a flag
    raised by a kernel with nothing to report would cost a NumPy rerun)."""
    x = nl.asarray(numpy.linspace(0.5, 2.0, 200_001))
    m = x.reshape(1, -1)
    before = nl.stats()["fp_reruns"]
    a = nl.zeros(200_004)
    a[1:-2] = 1 / x
    out = [nl.log(x) / x, (1 / x).sum(), nl.exp(m) / nl.exp(m).sum(axis=1, keepdims=True),
           nl.cumsum(1 / x), a, (x * 3).astype(numpy.int32), (1 / x > 1).sum()]
    for o in out:
        numpy.asarray(o)
    assert nl.stats()["fp_reruns"] == before


def test_the_error_state_of_the_call_counts_not_the_syncs():
    x = nl.asarray(X)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        quiet = x / 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with numpy.errstate(all="raise"):  # (the sync's state plays no part)
            numpy.asarray(quiet)
    assert caught == []
    with numpy.errstate(divide="raise"):
        loud = x / 0
    with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
        numpy.asarray(loud)


def test_a_raised_error_spares_the_other_arrays():
    x = nl.asarray(X)
    y = x + 1
    with numpy.errstate(all="raise"):
        bad = x / 0
    z = bad + 1
    with pytest.raises(FloatingPointError):
        numpy.asarray(z)
    numpy.testing.assert_array_equal(numpy.asarray(y), X + 1)
    numpy.testing.assert_array_equal(numpy.asarray(x), X)
    with pytest.raises(FloatingPointError):  # (it has no value: it raises again)
        numpy.asarray(bad)


def test_seterr_raise_everywhere():
    old = numpy.seterr(all="raise")
    try:
        with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt"):
            numpy.asarray(nl.sqrt(nl.asarray(X[2:4])))
    finally:
        numpy.seterr(**old)


def test_large_kernels_check_on_every_thread():
    """A kernel split over OpenMP threads finds a flag in any thread's share."""
    host = numpy.ones(1_000_001)
    host[-1] = 0.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        numpy.asarray(1.0 / nl.asarray(host))
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


def test_a_jit_replay_warns_as_its_traced_call():
    f = nl.jit(lambda a: nl.log(a) + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        numpy.asarray(f(nl.asarray(numpy.array([1.0, 2.0]))))  # traced: nothing to say
        numpy.asarray(f(nl.asarray(numpy.array([1.0, 0.0]))))  # replayed
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]


def test_operations_record_their_calls_error_state():
    x = nl.arange(3.0)
    with numpy.errstate(divide="raise"):
        y = x / 2
    from numloom.core import fperrors

    state, where = fperrors._state(y._storage.version)
    assert state["divide"] == "raise" and where[0] == __file__


@pytest.mark.parametrize("state", list(STATES))
def test_the_where_idiom_warns_as_numpy(state):
    """np.where(x != 0, 1 / x, 0): NumPy computes 1 / x everywhere and warns; the select hides
    the infinity from the kernel's output, so the quotient itself is checked."""
    case = lambda xp: xp.where(xp.asarray(X[:4]) != 0, 1 / xp.asarray(X[:4]), 0.0)  # noqa: E731
    got, got_error, got_messages, _ = _run(case, nl, STATES[state])
    want, want_error, want_messages, _ = _run(case, numpy, STATES[state])
    assert (got_error, got_messages) == (want_error, want_messages)
    if want is not None:
        numpy.testing.assert_array_equal(got, want)


def test_finite_results_run_nothing_again():
    """The flag costs a rerun only when a value is not finite: a kernel of ordinary values
    runs once, compiled, under every error state."""
    x = nl.asarray(numpy.linspace(1.0, 2.0, 100_003))
    want = numpy.log(x.__array__()) / x.__array__() + 1
    before = nl.stats()["fp_reruns"]
    for state in (*STATES.values(), {"all": "raise", "under": "ignore"}):
        if state.get("under", state.get("all", "ignore")) != "ignore":
            continue
        with numpy.errstate(**state):
            y = nl.log(x) / x + 1
        numpy.testing.assert_allclose(numpy.asarray(y), want)
    assert nl.stats()["fp_reruns"] == before
    # A GPU cannot see an underflow: a state that looks at one runs the kernel's operations
    # again on the host (NumPy's default ignores underflow). A CPU kernel's flags show none.
    with numpy.errstate(all="raise"):
        y = nl.log(x) / x + 1
    numpy.testing.assert_allclose(numpy.asarray(y), want)
    reran = 0 if nl.get_device() == "cpu" else 1
    assert nl.stats()["fp_reruns"] == before + reran
    before += reran
    with numpy.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide by zero"):
        numpy.asarray(nl.log(x - 1))
    assert nl.stats()["fp_reruns"] == before + 1


@pytest.mark.parametrize("n", [3, 1_000_003])
def test_a_flag_in_any_block_or_lane_is_found(n):
    """One bad element anywhere (a GPU's last block, a vectorized lane, the tail) is found."""
    for where in (0, n // 2, n - 1):
        host = numpy.ones(n)
        host[where] = 0.0
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):
            out = numpy.asarray(1.0 / nl.asarray(host) + 1)
        assert numpy.isinf(out[where]) and numpy.isfinite(numpy.delete(out, where)).all()


REDUCTIONS = {
    "sum of 1 / x": lambda xp: (1 / xp.asarray(X[:4])).sum(),
    "mean of log": lambda xp: xp.log(xp.asarray(X[:4])).mean(),
    "sum along an axis": lambda xp: (1 / xp.asarray(X[:4]).reshape(2, 2)).sum(axis=0),
    "max of exp overflow": lambda xp: xp.exp(xp.asarray(X[:4]) * 1000).max(),
    "finite sum": lambda xp: (xp.asarray(X[:4]) * 2).sum(),
}


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("case", list(REDUCTIONS))
def test_reductions_of_raising_operations_warn_as_numpy(case, state):
    """An operation fused into a reduction warns or raises as NumPy does when the reduction's
    result shows it (not finite)."""
    fn = REDUCTIONS[case]
    out, error, messages, _ = _run(fn, nl, STATES[state])
    want_out, want_error, want_messages, _ = _run(fn, numpy, STATES[state])
    assert error == want_error
    assert messages == want_messages
    if want_error is None:
        numpy.testing.assert_array_equal(out, want_out)


def test_reported_gathers_the_categories_of_every_call_state():
    """What a GPU launch asks of its nodes' error states in one pass: the categories any of
    them warns or raises on (underflow among them: a GPU segment then runs on the host)."""
    from numloom.core import fperrors

    x = nl.asarray(numpy.ones(3))
    with numpy.errstate(all="ignore", under="raise"):
        a = x / 3
    with numpy.errstate(all="ignore", divide="warn"):
        b = a * 2
    nodes = [a._storage.version, b._storage.version]
    bits = fperrors.BITS
    assert fperrors.reported(nodes) == bits["under"] | bits["divide"]
    assert fperrors.reported(nodes[:1]) == bits["under"]
    with numpy.errstate(all="ignore"):
        c = x * 5
    assert fperrors.reported([c._storage.version]) == 0
    numpy.testing.assert_array_equal(numpy.asarray(b), numpy.full(3, 2 / 3))


def test_a_loops_warning_is_shown_once_per_line_as_numpy_shows_it():
    def run(xp):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(5):
                z = xp.asarray(CX) ** 2  # each step overflows (on numloom, at each sync)
                numpy.asarray(z)
        return [str(w.message) for w in caught if w.category is RuntimeWarning]

    got, want = run(nl), run(numpy)
    assert got == want == ["overflow encountered in square", "invalid value encountered in square"]


def test_a_warning_ignored_where_it_was_made_stays_ignored_at_a_later_sync():
    for xp in (nl, numpy):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                z = xp.asarray(CX) ** 2 + xp.asarray(X[:4])  # (numloom: evaluated below)
            numpy.asarray(z)
        assert [w for w in caught if w.category is RuntimeWarning] == []


def test_states_that_at_most_warn_are_told_from_raising_ones():
    """A GPU evaluation may leave its flag read for a later sync only where each call's
    state at most warns (its reports are then warnings, not exceptions) and no filter makes a
    warning an error."""
    from numloom.core import fperrors
    from numloom.core.dag import toposort

    def quiet(make):
        node = make()._node()
        order = toposort([node])
        return fperrors.warning_states_at(order, tuple(range(len(order))))

    x = nl.asarray(X)
    assert quiet(lambda: x / 3 + 1)  # NumPy's default state
    with numpy.errstate(all="warn"):
        assert quiet(lambda: x / 4 + 1)
    with numpy.errstate(all="ignore"):
        assert quiet(lambda: x / 5 + 1)
    with numpy.errstate(over="raise"):
        assert not quiet(lambda: x / 6 + 1)
    with numpy.errstate(divide="call", call=lambda *a: None):
        assert not quiet(lambda: x / 7 + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not quiet(lambda: x / 8 + 1)
    with numpy.errstate(all="raise"):  # (no state recorded: NumPy's default, not the sync's)
        assert fperrors._warns_only(None)


@pytest.mark.parametrize("first", ["raise", "warn", "ignore"])
@pytest.mark.parametrize("second", ["raise", "warn", "ignore"])
def test_one_operation_made_at_two_lines_reports_each_lines_call(first, second):
    """``x * 10`` at two lines is one node of the DAG; each line's call keeps its own error
    state: a warning at each line that warns, the raise at the first line that raises."""

    def run(xp):
        x = xp.full(50_000, 1e308)
        got = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with numpy.errstate(over=first):
                    a = x * 10
                with numpy.errstate(over=second):
                    b = x * 10
                numpy.asarray(a), numpy.asarray(b)
            except FloatingPointError as error:
                got.append(("raised", str(error)))
        lines = [w.lineno for w in caught if w.category is RuntimeWarning]
        return got, [line - min(lines, default=0) for line in lines], len(lines)

    assert run(nl) == run(numpy)

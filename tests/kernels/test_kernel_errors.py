"""Errors about kernels point at the user's code: file, line, column and a caret under the
construct, with the supported alternative. Bounds-checked kernels raise IndexError naming the
kernel, the array and the index."""

from __future__ import annotations

import collections
import inspect

import numpy
import pytest

import numloom as nl
from numloom import cuda
from numloom.kernels.kerrors import (
    ArgumentError,
    KernelError,
    LaunchError,
    TypingError,
    UnsupportedError,
)


def line_of(fn, text: str) -> int:
    """The file line of ``fn``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def check_points_at(error: KernelError, fn_or_file, text: str, column_text: str | None = None):
    filename = __file__
    line = line_of(fn_or_file, text) if callable(fn_or_file) else fn_or_file
    assert error.where.filename == filename
    assert error.where.line == line
    source_line = open(filename).read().splitlines()[line - 1]
    assert error.where.col == source_line.index(column_text or text)
    message = str(error)
    assert f'File "{filename}", line {line}, column {error.where.col + 1}' in message
    assert "^" in message.splitlines()[-1] or "^" in message


def comprehension(out):
    i = cuda.grid(1)
    out[i] = sum([v for v in range(3)])


def test_unsupported_construct():
    kernel = cuda.jit(comprehension)
    with pytest.raises(UnsupportedError) as e:
        kernel[1, 1](nl.zeros(1))
    check_points_at(e.value, comprehension, "[v for v", "[v for v")
    assert "list comprehension" in str(e.value) and "range(...)" in str(e.value)


def untyped(out):
    i = cuda.grid(1)
    if i == 0:
        acc = acc + 1  # noqa: F821 (the error under test)
        out[0] = acc


def test_untyped_variable():
    with pytest.raises(TypingError) as e:
        cuda.jit(untyped)[1, 1](nl.zeros(1))
    check_points_at(e.value, untyped, "acc = acc + 1", "acc + 1")
    assert "variable 'acc' has no type" in str(e.value)


def twice_typed(x, y, out):
    i = cuda.grid(1)
    v = x[i]
    v = y[i]
    out[i] = v


def test_twice_typed_variable():
    kernel = cuda.jit(twice_typed)
    with pytest.raises(TypingError) as e:
        kernel[1, 4](numpy.zeros(4, numpy.float32), numpy.zeros(4, numpy.int64), nl.zeros(4))
    check_points_at(e.value, twice_typed, "v = y[i]", "v = y[i]")
    text = str(e.value)
    assert "'v' is float32" in text and "int64" in text and "np.float32(...)" in text


def unknown_call(out):
    i = cuda.grid(1)
    out[i] = numpy.linalg.norm(out)


def test_unknown_function():
    with pytest.raises(TypingError) as e:
        cuda.jit(unknown_call)[1, 1](nl.zeros(1))
    check_points_at(e.value, unknown_call, "numpy.linalg.norm(out)")
    assert "unknown function" in str(e.value) and "cuda.jit(device=True)" in str(e.value)


@cuda.jit
def two_args(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]


def test_wrong_argument_count_at_launch():
    with pytest.raises(ArgumentError) as e:
        two_args[1, 4](nl.zeros(4))  # the launch line
    line = inspect.currentframe().f_lineno - 1
    check_points_at(e.value, line, "two_args[1, 4](nl.zeros(4))")
    assert "takes 2 arguments (x, out) but 1 were given" in str(e.value)


def test_wrong_argument_type_at_launch():
    with pytest.raises(ArgumentError) as e:
        two_args[1, 4]("text", nl.zeros(4))
    line = inspect.currentframe().f_lineno - 1
    check_points_at(e.value, line, 'two_args[1, 4]("text", nl.zeros(4))')
    assert "argument 'x' is a str" in str(e.value)


@pytest.mark.parametrize(
    "blocks, threads, words",
    [(0, 32, "must be positive"), (1, 2048, "allows at most 1024"), ((1, 2, 3, 4), 1, "1 to 3"),
     (1.5, 32, "must be an integer"), (1, (32, 32, 2), "2048 threads per block")],
)  # fmt: skip
def test_invalid_launch_shape(blocks, threads, words):
    with pytest.raises(LaunchError) as e:
        two_args[blocks, threads](nl.zeros(4), nl.zeros(4))
    line = inspect.currentframe().f_lineno - 1
    check_points_at(e.value, line, "two_args[blocks, threads]")
    assert words in str(e.value)


def test_a_launch_configuration_is_checked_once_and_equal_bad_ones_still_raise(monkeypatch):
    """A loop's launches check their configuration once (the checks and the user's line cost
    more than the launch); ``[True, 32]`` equals ``[1, 32]`` but is refused all the same."""
    from numloom.kernels.cuda import dispatcher

    two_args[2, 32](nl.zeros(4), nl.zeros(4))
    checked = []
    original = dispatcher._dims
    monkeypatch.setattr(dispatcher, "_dims", lambda *a: checked.append(a) or original(*a))
    for _ in range(3):
        two_args[2, 32](nl.zeros(4), nl.zeros(4))
    assert checked == []
    for bad in ((True, 32), (2, 32.0), (numpy.int64(0), 32)):
        with pytest.raises(LaunchError):
            two_args[bad](nl.zeros(4), nl.zeros(4))
    assert len(checked) >= 3


def test_launch_without_a_configuration():
    with pytest.raises(LaunchError) as e:
        two_args(nl.zeros(4), nl.zeros(4))
    assert "two_args[blocks, threads_per_block]" in str(e.value)


@cuda.jit(device=True)
def helper(a, b):
    return a + b


def calls_helper_badly(out):
    out[0] = helper(out[0])


def test_wrong_argument_count_of_a_device_function():
    with pytest.raises(TypingError) as e:
        cuda.jit(calls_helper_badly)[1, 1](nl.zeros(1))
    check_points_at(e.value, calls_helper_badly, "helper(out[0])")
    assert "bad call of helper" in str(e.value)


def overrun(out):
    i = cuda.grid(1)
    out[i + 1] = 1.0


def test_boundscheck_environment_variable(monkeypatch):
    monkeypatch.setenv("NUMLOOM_BOUNDSCHECK", "1")
    out = nl.zeros(8)
    cuda.jit(overrun)[1, 8](out)
    with pytest.raises(IndexError) as e:
        out.get()
    text = str(e.value)
    assert "index 8 is out of bounds for axis 0 with size 8" in text
    assert "kernel overrun" in text and "array 'out'" in text
    note = "\n".join(getattr(e.value, "__notes__", []))
    assert f"line {line_of(overrun, 'out[i + 1] = 1.0')}" in note
    numpy.testing.assert_array_equal(out.get(), numpy.zeros(8))  # the write never happened


def test_debug_kernels_check_bounds():
    out = nl.zeros(4)
    cuda.jit(debug=True)(overrun)[1, 4](out)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        out.get()


def uses_a_list(x):
    return [x, 1][0] * 2


@pytest.fixture
def says_why(monkeypatch):
    """NumPy's loop warns why numloom did not compile a function on a GPU (a round trip), and
    on the CPU with ``NUMLOOM_DEBUG=1``."""
    from numloom.core import config

    monkeypatch.setattr(config, "DEBUG", 1)


def test_vectorize_falls_back_with_one_warning(says_why):
    vf = nl.vectorize(uses_a_list)
    with pytest.warns(nl.NumloomFallbackWarning) as record:
        got = vf(nl.arange(5.0))
        again = vf(nl.arange(3.0))
    assert len(record) == 1
    text = str(record[0].message)
    assert "a list" in text and f"line {line_of(uses_a_list, '[x, 1]')}" in text
    numpy.testing.assert_array_equal(got.get(), numpy.vectorize(uses_a_list)(numpy.arange(5.0)))
    numpy.testing.assert_array_equal(again.get(), numpy.arange(3.0) * 2)


def signed_counter(x):
    cuda.atomic.inc(x, 0, 10)


def test_atomic_inc_on_a_signed_array_names_the_unsigned_dtypes():
    with pytest.raises(TypingError) as e:
        cuda.jit(signed_counter)[1, 1](nl.zeros(1, numpy.int32))
    check_points_at(e.value, signed_counter, "cuda.atomic.inc(x, 0, 10)")
    assert "cuda.atomic.inc on a int32 array" in str(e.value)
    assert "works on uint32, uint64 arrays" in str(e.value)


def print_with_sep(x):
    print(x[0], x[1], sep=", ")


def print_an_array(x):
    print("x is", x)


def test_print_errors_point_at_the_call():
    with pytest.raises(UnsupportedError) as e:
        cuda.jit(print_with_sep)[1, 1](nl.zeros(2))
    check_points_at(e.value, print_with_sep, 'print(x[0], x[1], sep=", ")')
    assert "keyword arguments" in str(e.value) and "separated by spaces" in str(e.value)
    with pytest.raises(UnsupportedError) as e:
        cuda.jit(print_an_array)[1, 1](nl.zeros(2))
    check_points_at(e.value, print_an_array, 'print("x is", x)', "x)")
    assert "print() of a value of type float64[::1]" in str(e.value)
    assert "elements of arrays" in str(e.value)


@cuda.jit(device=True)
def sync_and_leave_early(sm, t):
    sm[t] = t
    cuda.syncthreads()
    if t == 0:
        return sm[1]
    return sm[0]


def calls_sync_and_leave_early(out):
    sm = cuda.shared.array(4, numpy.int64)
    t = cuda.threadIdx.x
    out[t] = sync_and_leave_early(sm, t)


def test_an_early_return_from_a_synchronizing_device_function():
    with pytest.raises(UnsupportedError) as e:
        cuda.jit(calls_sync_and_leave_early)[1, 4](nl.zeros(4, numpy.int64))
    check_points_at(e.value, sync_and_leave_early.py_func, "return sm[1]")
    assert "a return before the end of sync_and_leave_early" in str(e.value)
    assert "return it in the function's last line" in str(e.value)


Model = collections.namedtuple("Model", ["a", "grid"])
MODEL = Model(2.0, numpy.linspace(0.0, 1.0, 500))


def scaled(x, model=MODEL):
    return x * model.a


def scaled_by(model, x):
    return x * model.a


def calls_with_a_model(x):
    return scaled_by(MODEL, x)


@pytest.mark.parametrize("fn", [scaled, calls_with_a_model])
def test_a_fallback_warning_names_an_object_without_printing_its_arrays(fn, says_why):
    """(QuantEcon's lectures vectorize functions of a model holding arrays: the warning
    printed every array of the model.)"""
    with pytest.warns(nl.NumloomFallbackWarning) as record:
        got = nl.vectorize(fn)(nl.arange(3.0))
    numpy.testing.assert_array_equal(got.get(), numpy.arange(3.0) * 2)
    text = str(record[0].message)
    assert len(text) < 600 and "0.5" not in text, text

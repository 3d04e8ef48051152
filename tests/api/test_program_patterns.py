"""Patterns public NumPy programs use (the Python Data Science Handbook, NumPy's user guide,
NumPy exercise collections), each against NumPy: what differed when they ran on numloom."""

from __future__ import annotations

import io
import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl


@numpy_compare()
def test_array_equal_of_two_dimensional_data(xp):
    return [xp.array_equal([[1, 2]], [[1, 2]]), xp.array_equal(xp.ones((2, 3)), xp.zeros((2, 3))),
            xp.array_equal([[1.0, float("nan")]], [[1.0, float("nan")]], equal_nan=True)]  # fmt: skip


def test_numpy_subclasses_a_function_returns_stay_numpys():
    """genfromtxt(usemask=True) gives a masked array, asmatrix a matrix: NumPy's own, so the
    mask and the matrix product are kept."""
    for xp in (numpy, nl):
        m = xp.genfromtxt(io.StringIO("1,2\n3,\n"), delimiter=",", usemask=True)
        assert type(m) is numpy.ma.MaskedArray and m.mean() == 2.0 and m.mask.tolist() == [
            [False, False], [False, True]]  # fmt: skip
        a = xp.asmatrix(xp.array([[1, 2], [3, 4]]))
        assert type(a) is numpy.matrix and (a * a).tolist() == [[7, 10], [15, 22]]


def test_a_users_array_method_returning_a_numloom_array():
    """A class whose __array__ returns np.array(...): run on numloom that is a numloom array,
    which NumPy's asarray refuses; numloom takes it."""

    class Data:
        def __array__(self, dtype=None, copy=None):
            return nl.array([1.0, 2.0])

    assert nl.mean(Data()) == 1.5 and nl.asarray(Data()).tolist() == [1.0, 2.0]


def test_scalar_methods_of_reduction_results():
    s = nl.array([1.5, 2.0]).sum()
    want = numpy.array([1.5, 2.0]).sum()
    assert (s.hex(), s.is_integer(), s.as_integer_ratio()) == (want.hex(), want.is_integer(),
                                                              want.as_integer_ratio())  # fmt: skip
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        s.nothing  # noqa: B018


@numpy_compare()
def test_same_value_casting(xp):
    if not hasattr(numpy, "__version__") or tuple(map(int, numpy.__version__.split(".")[:2])) < (
            2, 4):  # fmt: skip
        pytest.skip("casting='same_value' is NumPy 2.4's")
    fine = xp.arange(3.0).astype(xp.int64, casting="same_value")
    try:
        xp.asarray([1.5]).astype(xp.int64, casting="same_value")
    except ValueError as e:
        return fine, str(e)
    return fine, None


def test_an_array_over_a_buffer():
    data = bytearray(numpy.arange(4, dtype=numpy.int16).tobytes())
    got = nl.ndarray(shape=(2,), dtype=numpy.int16, buffer=data, offset=2)
    want = numpy.ndarray(shape=(2,), dtype=numpy.int16, buffer=data, offset=2)
    assert got.tolist() == want.tolist() and got.dtype == want.dtype
    with pytest.raises(NotImplementedError, match="not a numloom dtype"):
        nl.ndarray(shape=(2,), dtype=">i2", buffer=bytearray([0, 1, 3, 2]))


def test_numpys_warnings_in_a_function_numloom_runs_point_at_the_users_line():
    text = "1,2\n3,4,5\n6,7\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nl.genfromtxt(io.StringIO(text), delimiter=",", invalid_raise=False)
    assert got.tolist() == numpy.genfromtxt(io.StringIO(text), delimiter=",",
                                            invalid_raise=False).tolist()  # fmt: skip
    found = [w for w in caught if "Some errors were detected" in str(w.message)]
    assert found and all(w.filename == __file__ for w in found)


def test_a_removed_name_keeps_numpys_explanation():
    with pytest.raises(AttributeError) as raised:
        nl.str  # noqa: B018
    assert "module 'numloom' has no attribute 'str'" in str(raised.value)
    assert "deprecated alias" in str(raised.value)

"""Property tests against NumPy: shapes that broadcast (or not), every pair of dtypes through
binary ufuncs (the result dtype must be NumPy's, bit for bit), and Python scalars of any size
and kind (weak, NEP 50) on either side of an array."""

from __future__ import annotations

import os
import warnings

import hypothesis.extra.numpy as hnp
import numpy
import pytest
from conftest import numpy_compare
from hypothesis import given, settings
from hypothesis import strategies as st

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")  # fmt: skip
BINARY = ("add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
          "maximum", "fmin", "less", "not_equal", "logical_xor", "bitwise_and", "left_shift",
          "arctan2", "hypot", "copysign", "nextafter", "ldexp", "gcd", "heaviside",
          "float_power", "logaddexp", "divmod")  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def reference_executor():
    """Exact and compile-free (see test_ufuncs.py); module scope, as hypothesis asks."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMLOOM_BACKEND", os.environ.get("NUMLOOM_TEST_BACKEND", "compiled"))
        yield


def _values(dtype: str, shape: tuple, seed: int) -> numpy.ndarray:
    """Small values (and a NaN or two for floats) that keep powers and shifts in range."""
    rng = numpy.random.default_rng(seed)
    values = rng.integers(-5, 6, size=shape)
    if numpy.dtype(dtype).kind == "u":
        values = numpy.abs(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        out = values.astype(dtype)
    if out.dtype.kind in "fc" and out.size:
        out.flat[rng.integers(out.size)] = numpy.nan
    return out


def _non_negative_ints(values: numpy.ndarray) -> numpy.ndarray:
    return numpy.abs(values) if values.dtype.kind in "iu" else values


@settings(max_examples=150, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
    name=st.sampled_from(("add", "multiply", "less_equal", "maximum", "arctan2")),
    seed=st.integers(0, 2**16),
)
def test_shapes_that_broadcast(shapes, name, seed):
    first, second = (_values("float64", s, seed) for s in shapes.input_shapes)
    numpy_compare(rtol=1e-15)(lambda xp: getattr(xp, name)(xp.asarray(first), second))()


@settings(max_examples=100, deadline=None)
@given(
    shapes=st.lists(
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), min_size=2, max_size=2
    ),
    seed=st.integers(0, 2**16),
)
def test_shapes_that_may_not_broadcast(shapes, seed):
    """Mismatched shapes raise NumPy's ValueError with NumPy's message, at the call."""
    first, second = (_values("int16", tuple(s), seed) for s in shapes)

    @numpy_compare()
    def run(xp):
        return xp.add(xp.asarray(first), xp.asarray(second)), xp.asarray(first) < second

    run()


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(BINARY),
    first=st.sampled_from(DTYPES),
    second=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_dtype_pairs(name, first, second, seed):
    """Both operands arrays: result dtypes (and values) as NumPy's, or NumPy's error."""
    a, b = _values(first, (3, 1), seed), _values(second, (4,), seed + 1)
    if name in ("power", "left_shift", "ldexp"):
        b = _non_negative_ints(b)  # negative integer powers raise only at evaluation

    @numpy_compare(rtol=2e-3)
    def run(xp):
        with numpy.errstate(all="ignore"):
            return getattr(xp, name)(xp.asarray(a), xp.asarray(b))

    run()


def _scalars():
    return st.one_of(
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.sampled_from([0, 1, -1, 127, 128, 255, 256, -129, 2**31, 2**63 - 1, 2**63, 2**64 - 1]),
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.complex_numbers(allow_nan=True, allow_infinity=True),
    )


@settings(max_examples=400, deadline=None)
@given(
    name=st.sampled_from(
        (
            "add",
            "multiply",
            "subtract",
            "true_divide",
            "less",
            "equal",
            "maximum",
            "greater_equal",
            "bitwise_or",
        )
    ),
    dtype=st.sampled_from(DTYPES),
    scalar=_scalars(),
    scalar_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_python_scalars_are_weak(name, dtype, scalar, scalar_first, seed):
    """A Python scalar takes the array's dtype when its kind allows (NEP 50); integers beyond
    the dtype raise NumPy's OverflowError, except in comparisons, which are exact."""
    a = _values(dtype, (5,), seed)

    @numpy_compare(rtol=2e-3)
    def run(xp):
        x = xp.asarray(a)
        args = (scalar, x) if scalar_first else (x, scalar)
        with numpy.errstate(all="ignore"):
            return getattr(xp, name)(*args)

    run()


@settings(max_examples=100, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    scalar_type=st.sampled_from(
        ("bool_", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64", "complex64")
    ),
    value=st.integers(0, 100),
    seed=st.integers(0, 2**16),
)
def test_numpy_scalars_are_strong(dtype, scalar_type, value, seed):
    scalar = getattr(numpy, scalar_type)(value)
    a = _values(dtype, (4,), seed)
    numpy_compare(rtol=2e-3)(lambda xp: (xp.asarray(a) + scalar, scalar * xp.asarray(a)))()

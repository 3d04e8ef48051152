"""``reshape`` resolves ints and one -1 itself (the common case, without a NumPy call) and
leaves everything else, and every error, to NumPy: each shape against NumPy's, errors included."""

from __future__ import annotations

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom as nl

CASES = [
    ((12,), (3, 4)), ((12,), (-1, 4)), ((12,), (3, -1)), ((12,), -1), ((2, 3, 2), (-1,)),
    ((12,), 12), ((1,), ()), ((0,), (-1, 0)), ((0, 3), (-1,)), ((0,), (0, -1)), ((5, 0), (0, -1)),
    ((12,), (5, -1)), ((12,), (-1, -1)), ((12,), (-2, 6)), ((12,), (4, 3.0)), ((12,), (5, 3)),
    ((12,), (numpy.int64(3), 4)), ((12,), (True, 12)), ((6,), [2, 3]), ((6,), "23"),
]  # fmt: skip


def _outcome(xp, old, shape, order="C"):
    try:
        return xp.reshape(xp.zeros(old), shape, order=order).shape
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e), str(e)


@pytest.mark.parametrize("old, shape", CASES)
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_reshape_shapes_and_errors_are_numpys(old, shape, order):
    assert _outcome(nl, old, shape, order) == _outcome(numpy, old, shape, order)


dims = st.lists(st.integers(0, 4), min_size=0, max_size=4)


@settings(max_examples=200, deadline=None)
@given(old=dims, new=st.lists(st.integers(-2, 6), min_size=0, max_size=4))
def test_random_reshapes_match_numpy(old, new):
    assert _outcome(nl, tuple(old), tuple(new)) == _outcome(numpy, tuple(old), tuple(new))


@pytest.mark.parametrize(
    "call",
    [lambda xp, a: xp.reshape(a), lambda xp, a: xp.reshape(a, newshape=(3, 4)),
     lambda xp, a: xp.reshape(a, None), lambda xp, a: xp.reshape(a, shape=(3, 4), order="F")],
)  # fmt: skip
def test_reshape_signature_is_numpys(call):
    """``shape`` is required and ``newshape`` gone (NumPy 2.4); ``None`` keeps the shape."""
    assert _call_outcome(nl, call) == _call_outcome(numpy, call)


def _call_outcome(xp, call):
    try:
        return call(xp, xp.arange(12)).shape
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e), str(e)

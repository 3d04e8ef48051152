"""NumPy's ufunc overrides (NEP 13) through numloom's ufuncs: an operand of another library with
its own ``__array_ufunc__`` takes the call; ``__array_ufunc__ = None`` and every override
declining raise NumPy's errors, word for word."""

from __future__ import annotations

import numpy
import pytest

import numloom


class Declines:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def __repr__(self) -> str:
        return "Declines()"


class Refuses:
    __array_ufunc__ = None


class Takes:
    """Records the call and answers it (as a Dask array or a unit library would)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("taken", ufunc.__name__, method, len(inputs), sorted(kwargs))


CALLS = {
    "unary": lambda xp, o: xp.sin(o),
    "binary": lambda xp, o: xp.add(1.0, o),
    "out": lambda xp, o: xp.add(numpy.ones(2), o, out=numpy.ones(2)),
    "dtype where": lambda xp, o: xp.multiply(o, 2, dtype="float32", where=True),
}


def _outcome(call, xp, operand):
    try:
        return call(xp, operand)
    except Exception as error:  # noqa: BLE001 (compared with NumPy's)
        return type(error), str(error)


@pytest.mark.parametrize("operand", [Declines(), Refuses(), Takes()],
                         ids=["declines", "refuses", "takes"])  # fmt: skip
@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_overrides_are_numpys(call, operand):
    assert _outcome(call, numloom, operand) == _outcome(call, numpy, operand)


class RefusesButAdds:
    """``__array_ufunc__ = None`` with reflected operators: NumPy's operators defer to them."""

    __array_ufunc__ = None

    def __radd__(self, other):
        return "reflected add"

    def __rsub__(self, other):
        return "reflected subtract"


OPERATORS = {
    "add": lambda a, o: a + o,
    "subtract": lambda a, o: a - o,
    "reflected multiply": lambda a, o: o * a,
    "equal": lambda a, o: a == o,
}


@pytest.mark.parametrize("operand", [Declines(), Takes(), RefusesButAdds()],
                         ids=["declines", "takes", "refuses but adds"])  # fmt: skip
@pytest.mark.parametrize("op", list(OPERATORS.values()), ids=list(OPERATORS))
def test_operators_with_other_libraries_are_numpys(op, operand):
    host = numpy.arange(3.0)
    got = _outcome(lambda xp, o: op(xp.asarray(host), o), numloom, operand)
    want = _outcome(lambda xp, o: op(xp.asarray(host), o), numpy, operand)
    if isinstance(want, numpy.ndarray):
        numpy.testing.assert_array_equal(numpy.asarray(got), want)
    else:
        assert got == want

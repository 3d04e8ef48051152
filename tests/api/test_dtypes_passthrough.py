"""Arrays of dtypes numloom arrays do not hold are NumPy's own, and subclasses view storages.

Datetimes, timedeltas, strings, bytes, structured records, void and objects: numloom's creation
functions, functions and ufuncs handed such data (or asked for such a dtype) return what NumPy
returns, a NumPy array, without a fallback warning or count. Each case runs on NumPy and on
numloom and the results must agree.
"""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import numpy_compare

import numloom

DAYS = numpy.array(["2020-01-01", "2020-03-01", "2019-12-31"], dtype="datetime64[D]")
SPANS = numpy.array([1, -2, 30], dtype="timedelta64[D]")
WORDS = numpy.array(["pear", "apple", "fig"])
JANUARY, APRIL = numpy.datetime64("2020-01"), numpy.datetime64("2020-04")
RECORDS = numpy.array([(1, 2.5), (3, -1.0)], dtype=[("n", "i4"), ("x", "f8")])

CASES = {
    # creation
    "array of str": lambda xp: xp.array(["a", "bc"]),
    "asarray of a str list": lambda xp: xp.asarray(["x", "yz"]),
    "array of bytes": lambda xp: xp.array([b"ab", b"c"]),
    "array of objects": lambda xp: xp.array([1, "a", None], dtype=object),
    "array of mixed items": lambda xp: xp.array([1, "a"]),
    "array of records": lambda xp: xp.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
    "asarray of a datetime array": lambda xp: xp.asarray(DAYS),
    "zeros of str": lambda xp: xp.zeros(3, dtype="U3"),
    "zeros of records": lambda xp: xp.zeros(2, dtype=RECORDS.dtype),
    "zeros of void": lambda xp: xp.zeros(2, dtype="V4"),
    "ones of timedelta": lambda xp: xp.ones(2, dtype="m8[s]"),
    "full of str": lambda xp: xp.full(3, "x"),
    "full of a datetime": lambda xp: xp.full((2,), numpy.datetime64("2020-01-01")),
    "arange of dates": lambda xp: xp.arange("2020-01-01", "2020-01-05", dtype="M8[D]"),
    "arange of datetimes": lambda xp: xp.arange(JANUARY, APRIL),
    "zeros_like of str": lambda xp: xp.zeros_like(WORDS),
    "full_like of dates": lambda xp: xp.full_like(DAYS, "2021-01-01"),
    "ones_like as objects": lambda xp: xp.ones_like(xp.arange(3), dtype=object),
    "astype str": lambda xp: xp.arange(3).astype(str),
    "astype object": lambda xp: xp.arange(3.0).astype(object),
    "astype datetime": lambda xp: xp.arange(3).astype("M8[D]"),
    # functions
    "where with a numloom mask": lambda xp: xp.where(xp.arange(3) > 0, WORDS, "c"),
    "where of str": lambda xp: xp.where(numpy.array([True, False, True]), WORDS, "c"),
    "concatenate dates": lambda xp: xp.concatenate([DAYS, DAYS[:1]]),
    "stack str": lambda xp: xp.stack([WORDS, WORDS]),
    "unique str": lambda xp: xp.unique(WORDS),
    "unique with counts": lambda xp: xp.unique(numpy.array(["b", "a", "b"]), return_counts=True),
    "unique of a str list": lambda xp: xp.unique(["b", "a", "b"]),
    "sort str": lambda xp: xp.sort(WORDS),
    "sort dates": lambda xp: xp.sort(DAYS),
    "argsort dates": lambda xp: xp.argsort(DAYS),
    "reshape str": lambda xp: xp.reshape(WORDS, (3, 1)),
    "transpose records": lambda xp: xp.transpose(RECORDS.reshape(1, 2)),
    "flip dates": lambda xp: xp.flip(DAYS),
    "take str": lambda xp: xp.take(WORDS, [2, 0]),
    "repeat dates": lambda xp: xp.repeat(DAYS, 2),
    "roll str": lambda xp: xp.roll(WORDS, 1),
    "append str": lambda xp: xp.append(WORDS, "kiwi"),
    "max of dates": lambda xp: xp.max(DAYS),
    "argmax of dates": lambda xp: xp.argmax(DAYS),
    "diff of dates": lambda xp: xp.diff(DAYS),
    "isin of str": lambda xp: xp.isin(WORDS, ["fig"]),
    "isnat": lambda xp: xp.isnat(DAYS),
    "datetime_as_string": lambda xp: xp.datetime_as_string(DAYS),
    "char.upper": lambda xp: xp.char.upper(WORDS),
    "record field": lambda xp: xp.sum(xp.asarray(RECORDS)["x"]),
    # ufuncs
    "add datetime and timedelta": lambda xp: xp.add(DAYS, SPANS),
    "subtract datetimes": lambda xp: DAYS - xp.asarray(DAYS),
    "compare datetimes": lambda xp: xp.less(DAYS, DAYS[::-1]),
    "equal str": lambda xp: xp.equal(WORDS, "fig"),
    "timedelta times a numloom array": lambda xp: SPANS * xp.arange(3),
    "numloom array times a timedelta": lambda xp: xp.arange(3) * SPANS,
    "datetime plus numloom ints": lambda xp: xp.add(DAYS, xp.arange(3)),
    "maximum.reduce of dates": lambda xp: xp.maximum.reduce(DAYS),
    "add.accumulate of timedeltas": lambda xp: xp.add.accumulate(SPANS),
    "add with out": lambda xp: _add_into(xp),
    # (TheAlgorithms' Lorentz transformation: a float matrix @ a vector of SymPy symbols)
    "matrix @ objects": lambda xp: xp.eye(3) @ numpy.array([1, "a", 2.5], dtype=object)[[0, 2, 0]],
    "objects @ matrix": lambda xp: numpy.array([1, 2, 3], dtype=object) @ xp.eye(3),
    "matrix @= objects": lambda xp: _matmul_into(xp),
    "array * objects": lambda xp: xp.arange(3.0) * numpy.array([1, 2, 3], dtype=object),
    # (numpy-tutorials' masked-array tutorial deletes rows of a string table)
    "delete rows of str": lambda xp: xp.delete(WORDS.reshape(3, 1), 1, axis=0),
    "insert into str": lambda xp: xp.insert(WORDS, 1, "kiwi"),
    "resize of str": lambda xp: xp.resize(WORDS, (2, 2)),
    "compress of dates": lambda xp: xp.compress([True, False, True], DAYS),
    "choose among str": lambda xp: xp.choose([0, 1, 0], [WORDS, WORDS[::-1]]),
    "select of str": lambda xp: xp.select([WORDS == "fig"], [WORDS], "none"),
    # NumPy's errors
    "add datetimes": lambda xp: xp.add(DAYS, DAYS),
    "ints and dates concatenated": lambda xp: xp.concatenate([xp.arange(3), DAYS]),
    "sum of str": lambda xp: xp.sum(WORDS),
}


def _matmul_into(xp):
    a = xp.eye(2)
    a @= numpy.array([[1, 2], [3, 4]], dtype=object)
    return a


def _add_into(xp):
    out = numpy.empty(3, dtype="M8[D]")
    got = xp.add(DAYS, SPANS, out=out)
    return out, got is out


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_other_dtypes_as_numpy(case):
    numpy_compare()(case)()


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_other_dtypes_are_numpy_arrays_neither_counted_nor_warned(case):
    before = numloom.stats()["fallbacks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        try:
            got = case(numloom)
        except Exception as error:  # noqa: BLE001 (NumPy's own errors)
            assert not isinstance(error, numloom.NumloomFallbackWarning)
            got = None
    assert numloom.stats()["fallbacks"] == before
    for value in got if isinstance(got, tuple) else (got,):
        if isinstance(value, (numpy.ndarray, numloom.ndarray)) and value.dtype.kind not in "biufc":
            assert type(value) is numpy.ndarray


def test_a_view_as_another_dtype_is_numpys_read_only_view():
    a = numloom.arange(3, dtype="int64")
    seen = a.view("M8[ns]")
    assert type(seen) is numpy.ndarray and not seen.flags.writeable
    numpy.testing.assert_array_equal(seen, numpy.arange(3, dtype="int64").view("M8[ns]"))


# --- subclasses --------------------------------------------------------------------------------


def _info_class(xp):
    class Info(xp.ndarray):
        def __new__(cls, data, info=None):
            obj = xp.asarray(data).view(cls)
            obj.info = info
            return obj

        def __array_finalize__(self, obj):
            self.finalized_from = type(obj).__name__
            self.info = getattr(obj, "info", None)

    return Info


@numpy_compare()
def test_a_subclass_made_by_view(xp):
    Info = _info_class(xp)
    i = Info([1.0, 2.0, 3.0], info="meters")
    again = i.view(Info)
    return (type(i).__name__, isinstance(i, xp.ndarray), i.info, i.finalized_from, again.info,
            again.finalized_from, (i * 2).tolist(), i.shape, i.dtype)  # fmt: skip


@numpy_compare()
def test_a_subclass_view_shares_the_storage(xp):
    Info = _info_class(xp)
    base = xp.arange(4.0)
    i = base.view(type=Info)
    base[0] = 9.0
    i[1] = 7.0
    return base, i.tolist(), i.info, type(base.view(xp.ndarray)).__name__


@numpy_compare()
def test_numpys_subclassing_example(xp):
    """NumPy's own example (Subclassing ndarray: adding an extra attribute): slices and ufunc
    results of the subclass are of it and carry the attribute; writes through slices reach
    the original."""

    class InfoArray(xp.ndarray):
        def __new__(cls, input_array, info=None):
            obj = xp.asarray(input_array).view(cls)
            obj.info = info
            return obj

        def __array_finalize__(self, obj):
            if obj is None:
                return
            self.info = getattr(obj, "info", None)

    obj = InfoArray(xp.arange(5), info="information")
    v = obj[1:]
    v[0] = 10
    picked = obj[[0, 2]]
    summed = obj + 1
    rooted = xp.sqrt(obj)
    obj *= 2
    return (type(v).__name__, v.info, v.tolist(), obj.tolist(), type(picked).__name__,
            picked.info, obj[2], type(summed).__name__, summed.info, summed.tolist(),
            type(rooted).__name__, rooted.info, type(obj).__name__, obj.info)  # fmt: skip


@numpy_compare()
def test_a_view_with_dtype_and_type(xp):
    Info = _info_class(xp)
    i = xp.arange(4, dtype="int32").view("uint32", Info)
    return type(i).__name__, i.dtype, i.tolist()


@numpy_compare()
def test_a_view_as_a_numpy_subclass(xp):
    m = xp.arange(4.0).reshape(2, 2).view(numpy.matrix)
    return type(m).__name__, m.tolist()


@numpy_compare()
def test_a_view_as_something_else_is_refused(xp):
    return xp.arange(3).view(type=int)


def test_ndarray_still_constructs_arrays():
    a = numloom.ndarray((2, 3), dtype="int32")
    assert type(a) is numloom.ndarray and a.shape == (2, 3) and a.dtype == numpy.int32


def test_a_list_argument_is_not_taken_for_another_librarys(monkeypatch):
    """``np.array([x, y])`` and ``np.concatenate([a, b])`` of numloom's and NumPy's values run
    numloom's function: their lists hold nothing of another library (the check once called
    numloom's own ``any`` on a generator, which ran NumPy's on every such call)."""
    from numloom.api import fallback, other_dtypes

    def refuse(*args, **kwargs):
        raise AssertionError(f"NumPy ran: {args[0]}")

    monkeypatch.setattr(other_dtypes, "call_numpy_quietly", refuse)
    monkeypatch.setattr(fallback, "call_numpy_quietly", refuse)
    u = numloom.asarray([1.0, 2.0])
    assert not other_dtypes._foreign_in(([u[0], 2.5, numpy.float32(1)],))
    assert numloom.array([u[1], 9.81 * (1 - u[0] / 100.0)]).tolist() == [2.0, 9.81 * 0.99]
    assert numloom.concatenate([u, numloom.zeros(1)]).tolist() == [1.0, 2.0, 0.0]


def test_sympy_numbers_times_an_array_give_numpys_object_array():
    """numerical-mooc's traffic model multiplies arrays by coefficients SymPy solved for
    (``sympy.Float``): NumPy's arrays give an object array of SymPy numbers. numloom's arrays
    took SymPy's conversion path for other objects, ``float(x)``, which raises for an array."""
    sympy = pytest.importorskip("sympy")
    a_coef, x = sympy.Float(0.0146), sympy.Symbol("x")
    got, want = [], []
    for xp, out in ((numloom, got), (numpy, want)):
        rho = xp.linspace(0.0, 1.0, 4)
        flux = rho * 1.0 * (1.0 - a_coef * rho - a_coef * rho**2)
        out.append((type(flux).__name__, flux.dtype, [str(v) for v in flux]))
        out.append([str(v) for v in x * rho + rho * x])
    assert got == want

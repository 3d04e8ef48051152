"""Bad input: NumPy's exception type and exact message at the user's call (a data error, known
only when the data is, by the first sync), and every array the user holds keeps its value.

Each row of the tables is one bad call on arrays a program holds: evaluated ones, pending ones,
views, a pending write, a view of complex data as floats. The same row runs on NumPy and on
numloom; the error and every held array must agree afterwards.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy
import pytest
from conftest import _Raised, assert_same

import numloom


def held(xp):
    """The arrays a program holds when it makes the bad call."""
    h = SimpleNamespace()
    h.i = xp.asarray(numpy.arange(6))
    h.f = xp.asarray(numpy.arange(6.0).reshape(2, 3))
    h.b = xp.asarray(numpy.array([1, -2, 3], "int8"))
    h.z = xp.asarray(numpy.array([1 + 2j, 3 - 4j]))
    h.p = h.i * 2 + 1  # pending
    h.v = h.f[:, 1:]  # a view
    h.w = h.f * 1
    h.w[0, 0] = 7  # a pending write
    h.r = h.z.imag  # a view of complex data as floats
    return h


def pending(xp, values):
    """An index array numloom has not computed yet (its bounds are checked when it is; a
    small array built from a list would compute at once, as NumPy's)."""
    return xp.asarray(numpy.zeros(numpy.shape(values), numpy.int64)) + xp.asarray(numpy.array(values))


# (what, the bad call). Errors NumPy raises at the call, from the shapes, dtypes, axes or
# scalar values alone: numloom raises them at the call too, although evaluation is deferred.
AT_THE_CALL = [
    # (a 0-d result is NumPy's scalar, an int index: out of bounds at the call, as in NumPy)
    ("index by a 0-d result", lambda xp, h: h.i[h.i[5, ...] + 1]),
    # operands that do not broadcast
    ("broadcast", lambda xp, h: xp.add(h.i, h.f)),
    ("broadcast pending", lambda xp, h: h.p + h.f),
    ("broadcast new axis", lambda xp, h: h.f[:, None] + h.i),
    ("broadcast in place", lambda xp, h: h.f.__iadd__(h.v)),
    ("broadcast in place short", lambda xp, h: h.f.__iadd__(h.i[:2])),
    ("broadcast into out", lambda xp, h: h.f[0].__iadd__(h.f)),
    ("broadcast out=", lambda xp, h: xp.maximum(h.i, 1, out=h.f)),
    ("broadcast out= shape", lambda xp, h: xp.add(h.i, h.i, out=h.f)),
    ("broadcast where", lambda xp, h: xp.where(h.i > 2, h.f, 0)),
    ("broadcast clip", lambda xp, h: xp.clip(h.f, h.i, 2)),
    ("broadcast_to", lambda xp, h: xp.broadcast_to(h.f, (3, 3))),
    ("concatenate ndim", lambda xp, h: xp.concatenate([h.i, h.f])),
    ("stack shapes", lambda xp, h: xp.stack([h.i, h.p[:3]])),
    # axes
    ("axis sum", lambda xp, h: h.f.sum(axis=2)),
    ("axis cumsum", lambda xp, h: xp.cumsum(h.p, axis=-2)),
    ("axis cumprod", lambda xp, h: xp.cumprod(h.f, axis=2)),
    ("axis concatenate", lambda xp, h: xp.concatenate([h.f, h.w], axis=3)),
    ("axis stack", lambda xp, h: xp.stack([h.f, h.w], axis=3)),
    ("axis argmax", lambda xp, h: xp.argmax(h.i, axis=1)),
    ("axis argmin", lambda xp, h: h.i.argmin(axis=-2)),
    ("axis max of a view", lambda xp, h: xp.max(h.r, axis=1)),
    ("axis any pending", lambda xp, h: xp.any(h.p, axis=1)),
    ("axis std", lambda xp, h: xp.std(h.f, axis=-3)),
    ("axis var tuple", lambda xp, h: xp.var(h.f, axis=(0, 2))),
    ("axis count_nonzero", lambda xp, h: xp.count_nonzero(h.f, axis=2)),
    ("axis reduce", lambda xp, h: xp.add.reduce(h.f, axis=2)),
    ("axis accumulate", lambda xp, h: xp.add.accumulate(h.f, axis=2)),
    ("axis float", lambda xp, h: xp.sum(h.f, axis=1.0)),
    ("axis duplicate", lambda xp, h: xp.mean(h.w, axis=(0, 0))),
    ("axis expand_dims", lambda xp, h: xp.expand_dims(h.f, 4)),
    ("axis expand_dims twice", lambda xp, h: xp.expand_dims(h.f, (0, 0))),
    ("axis squeeze", lambda xp, h: xp.squeeze(h.f, axis=0)),
    ("axis moveaxis", lambda xp, h: xp.moveaxis(h.f, 0, 5)),
    ("axis swapaxes", lambda xp, h: h.f.swapaxes(0, 2)),
    ("axes transpose", lambda xp, h: h.v.transpose(0, 2)),
    ("axis flip", lambda xp, h: xp.flip(h.f, 2)),
    ("axis roll", lambda xp, h: xp.roll(h.f, 1, axis=3)),
    ("axis diff", lambda xp, h: xp.diff(h.f, axis=2)),
    ("axis take", lambda xp, h: xp.take(h.f, 0, axis=2)),
    ("axis split", lambda xp, h: xp.split(h.i, 2, axis=1)),
    ("axis repeat", lambda xp, h: xp.repeat(h.f, 2, axis=-3)),
    ("split unequal", lambda xp, h: xp.split(h.i, 4)),
    ("trace of 1-d", lambda xp, h: xp.trace(h.i)),
    # integer indices out of bounds, and keys NumPy refuses
    ("index", lambda xp, h: h.i[6]),
    ("index negative", lambda xp, h: h.f[0, -4]),
    ("index row", lambda xp, h: h.f[2]),
    ("index pending", lambda xp, h: h.p[10]),
    ("index pending negative", lambda xp, h: h.p[-7]),
    ("index of a view", lambda xp, h: h.r[5]),
    ("index numpy integer", lambda xp, h: h.i[numpy.int64(6)]),
    ("index 0-d array", lambda xp, h: h.i[xp.asarray(6)]),
    ("index write", lambda xp, h: h.v.__setitem__((2, 0), 1)),
    ("index write pending", lambda xp, h: h.w.__setitem__(5, 0)),
    ("index write complex", lambda xp, h: h.z.__setitem__(2, 0)),
    ("index write column", lambda xp, h: h.f.__setitem__((slice(None), 3), 1)),
    ("index too many", lambda xp, h: h.f[1, 2, 0]),
    ("index float", lambda xp, h: h.f[1.0]),
    ("index string", lambda xp, h: h.f["a"]),
    ("index float list", lambda xp, h: h.i[[1.5]]),
    ("index float array", lambda xp, h: h.i[h.f]),
    ("index item", lambda xp, h: h.i.item(7)),
    ("index item 2-d", lambda xp, h: h.f.item(2, 3)),
    ("index fancy", lambda xp, h: h.f[[0, 2]]),
    ("index fancy array", lambda xp, h: h.f[h.i]),
    ("index fancy second axis", lambda xp, h: h.f[0, h.i]),
    ("index fancy write", lambda xp, h: h.p.__setitem__([1, -7], 0)),
    ("index fancy +=", lambda xp, h: h.i.__setitem__([6], h.i[[0]] + 1)),
    ("index take", lambda xp, h: xp.take(h.i, 9)),
    ("index take list", lambda xp, h: xp.take(h.i, [0, 6], mode="raise")),
    ("index take array", lambda xp, h: xp.take(h.f, h.i, axis=1)),
    # casting: int_array += 1.5 and its relatives
    ("int += float", lambda xp, h: h.i.__iadd__(1.5)),
    ("int /= int", lambda xp, h: h.i.__itruediv__(2)),
    ("int **= float", lambda xp, h: h.i.__ipow__(0.5)),
    ("int *= float pending", lambda xp, h: h.p.__imul__(0.5)),
    ("int8 -= float 0-d", lambda xp, h: h.b.__isub__(h.f[0, 0])),
    ("int out= float", lambda xp, h: xp.add(h.i, 1.5, out=h.i)),
    ("int out= float unary", lambda xp, h: xp.negative(h.f, out=h.i)),
    ("int out= sqrt", lambda xp, h: xp.sqrt(h.i, out=h.i)),
    ("int8 out= floor_divide", lambda xp, h: xp.floor_divide(h.f, 2, out=h.b)),
    ("int8 out= int64", lambda xp, h: xp.add(h.i, 1, out=h.b)),
    ("casting no", lambda xp, h: xp.add(h.i, h.f[0, 0], out=h.i, casting="no")),
    ("int view += float", lambda xp, h: h.i[:3].__iadd__(0.5)),
    ("int += complex", lambda xp, h: h.b.__iadd__(1j)),
    ("int -= complex array", lambda xp, h: h.i.__isub__(h.z)),
    ("float view += complex", lambda xp, h: h.r.__iadd__(h.z)),
    ("float view *= complex", lambda xp, h: h.r.__imul__(1j)),
    ("int &= float", lambda xp, h: h.i.__iand__(1.5)),
    ("float &= int", lambda xp, h: h.f.__iand__(1)),
    ("float <<= int", lambda xp, h: h.f.__ilshift__(1)),
    ("astype safe", lambda xp, h: h.i.astype("int8", casting="safe")),
    ("astype same_kind", lambda xp, h: h.b.astype(bool, casting="same_kind")),
    # Python ints out of bounds for the dtype
    ("python int +", lambda xp, h: h.b + 300),
    ("python int *", lambda xp, h: h.b * 200),
    ("python int unsigned", lambda xp, h: xp.zeros(2, "uint8") + (-1)),
    ("python int maximum", lambda xp, h: xp.maximum(h.b, -1000)),
    ("python int int64", lambda xp, h: h.i + 2**64),
    ("python int huge", lambda xp, h: xp.subtract(h.b, 2**70)),
    ("python int power", lambda xp, h: xp.power(h.b, 200)),
    ("python int shift", lambda xp, h: xp.left_shift(h.b, 300)),
    ("python int where", lambda xp, h: xp.where(h.b > 0, h.b, 2**64)),
    ("python int +=", lambda xp, h: h.b.__iadd__(1000)),
    ("python int -", lambda xp, h: xp.arange(3, dtype="uint8") - 256),
    ("python int setitem", lambda xp, h: h.b.__setitem__(0, 128)),
    ("python int setitem all", lambda xp, h: h.b.__setitem__(Ellipsis, -200)),
    ("python int setitem list", lambda xp, h: h.b.__setitem__(slice(None), [1, 2, 300])),
    ("python int fancy", lambda xp, h: h.b.__setitem__([0, 1], 300)),
    ("python int mask", lambda xp, h: h.b.__setitem__(xp.asarray([True, False, True]), 1000)),
    ("python int fill", lambda xp, h: h.b.fill(-129)),
    ("python int full", lambda xp, h: xp.full(3, 300, dtype="int8")),
    ("python int full unsigned", lambda xp, h: xp.full((2,), -1, dtype="uint16")),
    ("python int full_like", lambda xp, h: xp.full_like(h.b, 1000)),
    ("python int asarray", lambda xp, h: xp.asarray([1, 256], dtype="uint8")),
    ("python int array nested", lambda xp, h: xp.array([[1, 2], [3, 400]], dtype="int8")),
    # reshapes
    ("reshape", lambda xp, h: h.i.reshape(4)),
    ("reshape pending", lambda xp, h: xp.reshape(h.p, (4, -1))),
    ("reshape pending 2-d", lambda xp, h: h.p.reshape((3, 3))),
    ("reshape complex", lambda xp, h: h.z.reshape(3)),
    ("reshape view", lambda xp, h: h.r.reshape(1, 3)),
    ("reshape unknown", lambda xp, h: h.f.reshape(7, -1)),
    ("reshape two unknowns", lambda xp, h: h.f.reshape(-1, -1)),
    ("reshape float", lambda xp, h: xp.reshape(h.i, 2.5)),
    ("reshape copy=False", lambda xp, h: h.v.reshape(4, copy=False)),
    ("ravel order", lambda xp, h: h.f.ravel(order="Q")),
    ("shape setter size", lambda xp, h: setattr(h.f, "shape", (4,))),
    ("shape setter copy", lambda xp, h: setattr(h.v, "shape", (4,))),
    # matrix products
    ("matmul", lambda xp, h: h.f @ h.w),
    ("matmul 1-d", lambda xp, h: h.i @ h.f),
    ("matmul view", lambda xp, h: h.v @ h.i),
    ("matmul complex", lambda xp, h: h.f @ h.z),
    ("matmul scalar", lambda xp, h: xp.matmul(h.i, 3)),
    ("matmul scalar operator", lambda xp, h: h.i @ 2),
    ("matmul in place", lambda xp, h: h.w.__imatmul__(h.f.T)),
    ("matmul out= dtype", lambda xp, h: xp.matmul(h.f, h.f.T, out=h.i)),
    ("matmul out= shape", lambda xp, h: xp.matmul(h.f, h.f.T, out=h.w)),
    ("dot", lambda xp, h: xp.dot(h.f, h.i)),
    ("dot 2-d", lambda xp, h: xp.dot(h.f, h.f)),
    ("dot out=", lambda xp, h: xp.dot(h.f, h.f.T, out=h.w)),
    ("inner", lambda xp, h: xp.inner(h.f, h.i)),
    ("inner 1-d", lambda xp, h: xp.inner(h.i, h.f[:, :2])),
    ("tensordot", lambda xp, h: xp.tensordot(h.f, h.w, axes=1)),
    ("tensordot axes", lambda xp, h: xp.tensordot(h.f, h.f, axes=([0], [1]))),
    ("vdot", lambda xp, h: xp.vdot(h.i, h.f[0])),
    # boolean indices of the wrong length
    ("mask length", lambda xp, h: h.i[xp.asarray([True, False])]),
    ("mask list", lambda xp, h: h.f[[True, False, True]]),
    ("mask 2-d", lambda xp, h: h.f[xp.asarray([[True, False, True]])]),
    ("mask of a view", lambda xp, h: h.r[xp.asarray([True])]),
    ("mask empty", lambda xp, h: h.z[[False]]),
    ("mask too many dimensions", lambda xp, h: h.p[h.f > 2]),
    ("mask shape", lambda xp, h: h.w[h.v > 0]),
    ("mask axis 1", lambda xp, h: h.f[:, xp.asarray([True, True])]),
    ("mask write pending", lambda xp, h: h.p.__setitem__(h.i[:4] > 1, 0)),
    ("mask write view", lambda xp, h: h.v.__setitem__(xp.asarray([True, False, True]), 0)),
    ("mask values", lambda xp, h: h.w.__setitem__(h.w > 100, h.i)),
    ("mask values count", lambda xp, h: h.i.__setitem__(h.i > 2, [1, 2])),
    ("mask values 2-d", lambda xp, h: h.w.__setitem__(h.w > 2, h.f)),
    ("mask values pending", lambda xp, h: h.p.__setitem__(h.p > 2, h.f[0])),
    ("mask values short", lambda xp, h: h.w.__setitem__(h.w > 2, h.f[0, :2])),
    # unknown dtypes
    ("dtype", lambda xp, h: xp.zeros(3, dtype="flaot")),
    ("dtype ones", lambda xp, h: xp.ones((2,), "i9")),
    ("dtype empty", lambda xp, h: xp.empty(2, dtype="floatx")),
    ("dtype full", lambda xp, h: xp.full(2, 1, dtype="complex7")),
    ("dtype eye", lambda xp, h: xp.eye(2, dtype="x")),
    ("dtype linspace", lambda xp, h: xp.linspace(0, 1, 3, dtype="fl")),
    ("dtype arange", lambda xp, h: xp.arange(3, dtype="bogus")),
    ("dtype asarray", lambda xp, h: xp.asarray([1, 2], dtype="complex512")),
    ("dtype asarray of an array", lambda xp, h: xp.asarray(h.f, dtype="bad")),
    ("dtype zeros_like", lambda xp, h: xp.zeros_like(h.f, dtype="bad")),
    ("dtype astype", lambda xp, h: h.i.astype("int128")),
    ("dtype ufunc", lambda xp, h: xp.add(h.f, 1, dtype="wat")),
    ("dtype sum", lambda xp, h: xp.sum(h.p, dtype="nope")),
    ("dtype mean", lambda xp, h: xp.mean(h.f, dtype="bad")),
    ("dtype cumsum", lambda xp, h: xp.cumsum(h.f, dtype="bad")),
    ("dtype view", lambda xp, h: h.f.view("float31")),
    # setitem values of the wrong shape
    ("setitem shape", lambda xp, h: h.i.__setitem__(slice(2), [1, 2, 3])),
    ("setitem array", lambda xp, h: h.f.__setitem__(0, h.f)),
    ("setitem column", lambda xp, h: h.f.__setitem__((slice(None), 0), h.i)),
    ("setitem transposed", lambda xp, h: h.f.__setitem__(Ellipsis, h.f.T)),
    ("setitem leading ones", lambda xp, h: h.p.__setitem__(slice(None), xp.ones((1, 2, 6)))),
    ("setitem fancy", lambda xp, h: h.p.__setitem__([0, 1], h.i[:3])),
    ("setitem fancy list", lambda xp, h: h.f.__setitem__(([0, 1], [0, 1]), [1, 2, 3])),
    ("setitem view", lambda xp, h: h.v.__setitem__(Ellipsis, h.f)),
    ("setitem view row", lambda xp, h: h.v.__setitem__(0, [1, 2, 3])),
    ("setitem float view", lambda xp, h: h.r.__setitem__(slice(None), h.f)),
    ("setitem nested", lambda xp, h: h.f.__setitem__(slice(None), [[1, 2], [3, 4]])),
    ("setitem element", lambda xp, h: h.i.__setitem__(0, [1, 2])),
    ("setitem complex element", lambda xp, h: h.z.__setitem__(0, [1, 2])),
    ("setitem string", lambda xp, h: h.f.__setitem__(0, "abc")),
    ("setitem imag", lambda xp, h: setattr(h.z, "imag", h.f)),
    # NaN (and infinity) into integer arrays
    ("nan setitem", lambda xp, h: h.i.__setitem__(0, float("nan"))),
    ("nan numpy scalar", lambda xp, h: h.i.__setitem__(0, numpy.float64("nan"))),
    ("nan int8", lambda xp, h: h.b.__setitem__(1, numpy.float32("nan"))),
    ("nan fill", lambda xp, h: h.i.fill(numpy.nan)),
    ("nan fill pending", lambda xp, h: h.p.fill(numpy.nan)),
    ("nan slice pending", lambda xp, h: h.p.__setitem__(slice(1, 3), numpy.nan)),
    ("nan fancy", lambda xp, h: h.b.__setitem__([0], numpy.nan)),
    ("nan fancy pending", lambda xp, h: h.p.__setitem__([0, 1], numpy.nan)),
    ("nan mask", lambda xp, h: h.b.__setitem__(h.b > 0, numpy.nan)),
    ("nan list", lambda xp, h: h.i.__setitem__(slice(3), [numpy.nan, 1, 2])),
    ("nan array", lambda xp, h: xp.array(numpy.nan, dtype="int64")),
    ("nan asarray", lambda xp, h: xp.asarray([1.0, numpy.nan], dtype="int32")),
    ("nan array list", lambda xp, h: xp.array([1, numpy.nan], dtype="int64")),
    ("nan into a copy", lambda xp, h: h.v.astype(int).__setitem__(0, numpy.nan)),
    ("inf setitem", lambda xp, h: h.i.__setitem__(slice(2), numpy.inf)),
    ("inf element", lambda xp, h: h.i.__setitem__(0, xp.inf)),
    ("inf mask", lambda xp, h: h.i.__setitem__(h.i > 2, -numpy.inf)),
]


def _attempt(xp, bad, sync: bool = False):
    """The error the bad call raised (None if none), then every held array's value."""
    h = held(xp)
    try:
        out = bad(xp, h)  # held until the sync: numloom never computes what nothing holds
        if sync and xp is numloom:
            numloom.sync()
        del out
        raised = None
    except Exception as e:  # noqa: BLE001 (compared with NumPy's below)
        raised = _Raised(e)
    return (raised, *_values(h))


def _values(h) -> list:
    return [a.get() if isinstance(a, numloom.ndarray) else a for a in vars(h).values()]


def _expected(bad) -> tuple:
    """NumPy's error, and the held arrays as they were before the call: whatever NumPy leaves
    behind (it can write part of a list before an item fails), numloom keeps every value."""
    want = _attempt(numpy, bad)
    assert want[0] is not None, "NumPy accepts this call: not a row for this table"
    return (want[0], *_values(held(numpy)))


@pytest.mark.parametrize("bad", [bad for _, bad in AT_THE_CALL], ids=[w for w, _ in AT_THE_CALL])
def test_bad_input_raises_numpys_error_at_the_call(bad):
    assert_same(_attempt(numloom, bad), _expected(bad))


# Errors that depend on data numloom has not computed at the call (index arrays, exponents):
# NumPy's error by the first sync, with a note naming the user's line that made the bad call.
BY_THE_FIRST_SYNC = [
    ("fancy read", lambda xp, h: h.f[0][pending(xp, [0, 5, -9])]),
    ("fancy write", lambda xp, h: h.w.__setitem__(pending(xp, [1, 2]), 0)),
    ("fancy two arrays", lambda xp, h: h.f[pending(xp, [1, -1]), pending(xp, [[0], [3]])]),
    ("fancy of a pending array", lambda xp, h: h.p[h.p]),
    ("fancy +=", lambda xp, h: h.p.__setitem__(pending(xp, [0, 6]), h.p[:2] + 1)),
    ("fancy into a view", lambda xp, h: h.r.__setitem__(pending(xp, [-3]), 1)),
    ("take", lambda xp, h: xp.take(h.i, pending(xp, [9]))),
    ("power", lambda xp, h: xp.power(h.i, h.i - 3)),
    ("power in place", lambda xp, h: h.p.__ipow__(h.i - 4)),
    ("power int8 in place", lambda xp, h: h.b.__ipow__(xp.asarray(numpy.array([1, -1, 2], "int8")) + 0)),
    ("power into a view", lambda xp, h: h.i.__setitem__(slice(1, 4), h.i[:3] ** (h.i[3:] - 5))),
]


@pytest.mark.parametrize(
    "bad", [bad for _, bad in BY_THE_FIRST_SYNC], ids=[w for w, _ in BY_THE_FIRST_SYNC]
)
@pytest.mark.parametrize("backend", ["numpy", "compiled"])
def test_bad_data_raises_numpys_error_by_the_first_sync(bad, backend, monkeypatch):
    monkeypatch.setenv("NUMLOOM_BACKEND", backend)
    got = _attempt(numloom, bad, sync=True)
    assert_same(got, _expected(bad))
    line = f"{__file__}:{bad.__code__.co_firstlineno}"
    assert any(line in note for note in getattr(got[0].error, "__notes__", [])), line

"""Sorting, searching and counting against NumPy: values, dtypes, shapes and errors.

Every case runs twice on the CPU: as numloom runs it there (NumPy over numloom's memory) and
through the GPU path's compositions with a NumPy model of the GPU kernels (``HostKernels``,
set as ``sorting.CPU_KERNELS``), so CI checks what a GPU runs around its kernels. With
``NUMLOOM_DEVICE=cuda`` the same cases run the real kernels.
"""

from __future__ import annotations

import warnings
import zlib

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom
from numloom.api import sorting
from tests.conftest import assert_same, numpy_compare

ON_GPU = numloom.get_device() != "cpu"
RNG = numpy.random.default_rng(7)
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]  # fmt: skip


class HostKernels:
    """What ``backends/cuda_sort.py``'s functions return, computed by NumPy on the host."""

    @staticmethod
    def supports(dtype, size):
        return numpy.dtype(dtype).kind in "biuf"

    @staticmethod
    def sort_rows(a, keys=True, indices=False, exact=False):
        host = a.get()
        if not host.size:
            return (numloom.asarray(host) if keys else None,
                    numloom.asarray(host.astype(numpy.int64)) if indices else None)  # fmt: skip
        rows = host.reshape(-1, host.shape[-1] if host.ndim else 1)
        order = numpy.argsort(rows, axis=-1, kind="stable")
        flat = (order + numpy.arange(rows.shape[0])[:, None] * rows.shape[1]).reshape(host.shape)
        got = numpy.take_along_axis(rows, order, -1).reshape(host.shape)
        return (numloom.asarray(got) if keys else None,
                numloom.asarray(flat.astype(numpy.int64)) if indices else None)  # fmt: skip

    @staticmethod
    def search(sorted_, needles, right):
        side = "right" if right else "left"
        return numloom.asarray(numpy.searchsorted(sorted_.get(), needles.get(), side).astype("q"))

    @staticmethod
    def bin_index(x, edges):
        x, e = x.get(), edges.get()
        index = numpy.searchsorted(e, x, "right") - 1
        index[x == e[-1]] = e.size - 2
        inside = (x >= e[0]) & (x <= e[-1])
        return numloom.asarray(numpy.where(inside, index, -1).astype(numpy.int64))

    @staticmethod
    def histogram(x, edges, weights=None):
        index = HostKernels.bin_index(x, edges)
        return HostKernels.bincount(index, edges.size - 1, weights)

    @staticmethod
    def bincount(x, length, weights=None):
        x = x.get()
        keep = (x >= 0) & (x < length)
        w = None if weights is None else weights.get()[keep]
        got = numpy.bincount(x[keep], w, minlength=length)
        return numloom.asarray(got.astype(numpy.float64 if weights is not None else numpy.int64))

    @staticmethod
    def true_positions(mask):
        return numloom.asarray(numpy.flatnonzero(mask.get()))


@pytest.fixture(params=["native", "device-model"])
def path(request, monkeypatch):
    """Each case as numloom runs it here, and (on the CPU) through the GPU compositions."""
    if request.param == "device-model":
        if ON_GPU:
            pytest.skip("the GPU runs its own kernels")
        monkeypatch.setattr(sorting, "CPU_KERNELS", HostKernels)
    return request.param


def data(dtype, shape, low=-50, high=50, nan=False, distinct=False):
    """Test data of ``dtype`` (distinct: no two elements equal), the same for the same
    arguments (a case builds its data once for NumPy and once for numloom)."""
    rng = numpy.random.default_rng(
        zlib.crc32(repr((dtype, shape, low, high, nan, distinct)).encode())
    )
    size = int(numpy.prod(shape))
    if distinct:
        values = rng.permutation(size) - size // 2
        if numpy.dtype(dtype).kind == "u":
            values = values + size
        return values.astype(dtype).reshape(shape)
    if numpy.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if numpy.dtype(dtype).kind == "u":
        low = 0
    values = rng.integers(low, high, shape).astype(dtype)
    if numpy.dtype(dtype).kind == "f":
        values = (values / 4).astype(dtype)
        if nan and size:
            values.reshape(-1)[rng.integers(0, size, max(1, size // 7))] = numpy.nan
    return values


def _x(dtype, shape, *args, **kw):
    host = data(dtype, shape, *args, **kw)
    return lambda xp: xp.asarray(host)


SORTS = {}
for _dt in DTYPES:
    SORTS[f"sort {_dt}"] = (_x(_dt, (300,), nan=True), lambda xp, a: xp.sort(a))
    SORTS[f"sort stable 2-d {_dt}"] = (_x(_dt, (7, 40), nan=True),
                                      lambda xp, a: xp.sort(a, axis=0, kind="stable"))  # fmt: skip
    SORTS[f"argsort stable {_dt}"] = (_x(_dt, (5, 3, 33), nan=True),
                                     lambda xp, a: xp.argsort(a, kind="stable"))  # fmt: skip
    SORTS[f"argsort distinct {_dt}"] = (_x(_dt, (2, 60), distinct=_dt not in ("bool", "int8")),
                                       lambda xp, a: xp.argsort(a, axis=None, stable=True))  # fmt: skip
    SORTS[f"unique {_dt}"] = (_x(_dt, (4, 50), nan=True),
                             lambda xp, a: xp.unique(a, return_index=True, return_inverse=True,
                                                     return_counts=True))  # fmt: skip
    SORTS[f"unique values {_dt}"] = (_x(_dt, (4, 50), nan=True), lambda xp, a: xp.unique(a))
SORTS.update({
    "unique values nan not equal": (_x("float32", (70,), nan=True),
                                    lambda xp, a: xp.unique(a, equal_nan=False)),
    "unique values one element": (_x("int64", (1,)), lambda xp, a: xp.unique(a)),
    "unique values of a view": (_x("float64", (9, 20), nan=True),
                                lambda xp, a: xp.unique(a[::2, 3:17])),
    "unique values signed zeros": (lambda xp: xp.asarray([0.0, -0.0, 1.0, -0.0, 0.0, -1.0]),
                                   lambda xp, a: xp.unique(a)),
    "sort axis None": (_x("float32", (3, 4, 5)), lambda xp, a: xp.sort(a, axis=None)),
    "sort middle axis": (_x("int32", (3, 4, 5)), lambda xp, a: xp.sort(a, axis=1)),
    "sort signed zeros stable": (lambda xp: xp.asarray([0.0, -0.0, 1.0, -0.0, 0.0, -1.0]),
                                 lambda xp, a: xp.signbit(xp.sort(a, kind="stable"))),
    "argsort signed zeros": (lambda xp: xp.asarray([0.0, -0.0, 1.0, -0.0, 0.0, numpy.nan]),
                             lambda xp, a: xp.argsort(a, kind="stable")),
    "sort infinities": (lambda xp: xp.asarray([numpy.inf, -numpy.inf, numpy.nan, 0.5, -2.0]),
                        lambda xp, a: xp.sort(a)),
    "sort empty": (lambda xp: xp.zeros((3, 0)), lambda xp, a: xp.sort(a)),
    "argsort empty": (lambda xp: xp.zeros((0, 4)), lambda xp, a: xp.argsort(a, axis=0)),
    "sort a view": (_x("float64", (8, 9)), lambda xp, a: xp.sort(a[::2, 1::3].T)),
    "sort large rows": (_x("int32", (3, 9000), low=-10**6, high=10**6),
                        lambda xp, a: xp.sort(a)),  # fmt: skip
    "sort many rows": (_x("float32", (700, 3)), lambda xp, a: xp.sort(a, kind="stable")),
    "sort big int64": (lambda xp: xp.asarray(numpy.array([2**62, -(2**62), 5, -5, 2**40])),
                       lambda xp, a: xp.sort(a)),  # fmt: skip
    "method sort": (_x("float32", (4, 30), nan=True), lambda xp, a: (a.sort(axis=0), a)[1]),
    "method argsort": (_x("int16", (30,), distinct=True), lambda xp, a: a.argsort()),
    "lexsort": (lambda xp: [xp.asarray(data("int8", (90,), -3, 3)), xp.asarray(data("float32", (90,)))],
                lambda xp, keys: xp.lexsort(keys)),  # fmt: skip
    "lexsort 2-d keys": (lambda xp: xp.asarray(data("int32", (3, 4, 25), -2, 2)),
                         lambda xp, keys: xp.lexsort(keys, axis=-1)),  # fmt: skip
    "lexsort axis 0": (lambda xp: [xp.asarray(data("int64", (20, 3), -2, 2)),
                                   xp.asarray(data("uint8", (20, 3), 0, 3))],
                       lambda xp, keys: xp.lexsort(keys, axis=0)),  # fmt: skip
    "unique empty": (lambda xp: xp.zeros(0, "int32"),
                     lambda xp, a: xp.unique(a, return_index=True, return_inverse=True,
                                             return_counts=True)),  # fmt: skip
    "unique nan not equal": (_x("float64", (60,), nan=True),
                             lambda xp, a: xp.unique(a, return_counts=True, equal_nan=False)),
    "unique 2-d inverse": (_x("int64", (6, 7), -4, 4),
                           lambda xp, a: xp.unique(a, return_inverse=True)),  # fmt: skip
    "unique values": (_x("float32", (90,), nan=True), lambda xp, a: xp.sort(xp.unique_values(a))),
    "unique counts": (_x("int16", (90,), -5, 5), lambda xp, a: tuple(xp.unique_counts(a))),
    "unique inverse": (_x("uint32", (9, 10), 0, 6), lambda xp, a: tuple(xp.unique_inverse(a))),
    "unique all": (_x("float64", (80,), -9, 9), lambda xp, a: tuple(xp.unique_all(a))),
    "unique all nan": (_x("float32", (40,), nan=True), lambda xp, a: tuple(xp.unique_all(a))),
})  # fmt: skip


@pytest.mark.parametrize("case", list(SORTS.values()), ids=list(SORTS))
def test_sorting_like_numpy(case, path):
    make, run = case
    numpy_compare()(lambda xp: run(xp, make(xp)))()


def _partition_holds(np_result, got, a, kth, axis):
    """``got`` (numloom's partition) has NumPy's elements at ``kth`` and partitions ``a``."""
    got, want = numpy.asarray(got), numpy.asarray(np_result)
    assert got.dtype == want.dtype and got.shape == want.shape
    moved = numpy.moveaxis(got, axis, -1)
    for k in numpy.atleast_1d(kth) % moved.shape[-1]:
        numpy.testing.assert_array_equal(moved[..., k], numpy.moveaxis(want, axis, -1)[..., k])
        pivot = moved[..., k : k + 1]
        assert (moved[..., :k] <= pivot).all() and (moved[..., k + 1 :] >= pivot).all()
    numpy.testing.assert_array_equal(numpy.sort(got, axis), numpy.sort(a, axis))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "float32", "float64"])
@pytest.mark.parametrize(("shape", "kth", "axis"), [((50,), 7, -1), ((6, 40), [0, 5, -1], -1),
                                                     ((30, 4), 29, 0), ((9,), -3, 0)])  # fmt: skip
def test_partition_and_argpartition(dtype, shape, kth, axis, path):
    host = data(dtype, shape)
    a = numloom.asarray(host)
    _partition_holds(numpy.partition(host, kth, axis), numloom.partition(a, kth, axis).get(),
                     host, kth, axis)  # fmt: skip
    picked = numpy.take_along_axis(host, numloom.argpartition(a, kth, axis).get(), axis)
    _partition_holds(numpy.partition(host, kth, axis), picked, host, kth, axis)
    a.partition(kth, axis)
    _partition_holds(numpy.partition(host, kth, axis), a.get(), host, kth, axis)


SEARCHES = {
    "searchsorted": (lambda xp: (xp.asarray(numpy.sort(data("float32", (90,), nan=True))),
                                 xp.asarray(data("float32", (5, 7), nan=True))),
                     lambda xp, a, v: (xp.searchsorted(a, v), xp.searchsorted(a, v, "right"))),
    "searchsorted scalar": (lambda xp: (xp.asarray(numpy.arange(10) * 3), 7),
                            lambda xp, a, v: xp.searchsorted(a, v, side="right")),
    "searchsorted mixed dtypes": (lambda xp: (xp.asarray(numpy.arange(10, dtype="int8")),
                                              xp.asarray(numpy.linspace(-2, 12, 9))),
                                  lambda xp, a, v: xp.searchsorted(a, v)),
    "searchsorted sorter": (lambda xp: (xp.asarray(data("int64", (40,), distinct=True)),
                                        xp.asarray(data("int64", (11,)))),
                            lambda xp, a, v: xp.searchsorted(a, v, sorter=xp.argsort(a))),
    "searchsorted method": (lambda xp: (xp.asarray(numpy.arange(8.0)), xp.asarray([2.5, -1])),
                            lambda xp, a, v: a.searchsorted(v, "left")),
    "searchsorted bad side": (lambda xp: (xp.asarray(numpy.arange(8.0)), 3.0),
                              lambda xp, a, v: xp.searchsorted(a, v, side="middle")),
    "searchsorted 2-d": (lambda xp: (xp.asarray(numpy.zeros((2, 3))), 3.0),
                         lambda xp, a, v: xp.searchsorted(a, v)),
    "digitize": (lambda xp: (xp.asarray(data("float64", (50,))), xp.asarray([-5.0, 0, 2.5, 8])),
                 lambda xp, x, b: (xp.digitize(x, b), xp.digitize(x, b, right=True))),
    "digitize falling": (lambda xp: (xp.asarray(data("int32", (50,))), [20, 3, 0, -7]),
                         lambda xp, x, b: (xp.digitize(x, b), xp.digitize(x, b, True))),
    "digitize not monotonic": (lambda xp: (xp.asarray(data("int32", (5,))), [1, 3, 2]),
                               lambda xp, x, b: xp.digitize(x, b)),
    "bincount": (lambda xp: (xp.asarray(data("int32", (300,), 0, 40)), None),
                 lambda xp, x, _: (xp.bincount(x), xp.bincount(x, minlength=100))),
    "bincount large": (lambda xp: (xp.asarray(data("int64", (3000,), 0, 5000)), None),
                       lambda xp, x, _: xp.bincount(x)),
    "bincount uint8": (lambda xp: (xp.asarray(data("uint8", (300,), 0, 200)), None),
                       lambda xp, x, _: xp.bincount(x)),
    "bincount weights": (lambda xp: (xp.asarray(data("int16", (200,), 0, 9)),
                                     xp.asarray(data("float32", (200,)))),
                         lambda xp, x, w: xp.bincount(x, w, minlength=3)),
    "bincount empty": (lambda xp: (xp.zeros(0, "int64"), None),
                       lambda xp, x, _: (xp.bincount(x), xp.bincount(x, minlength=4))),
    "bincount negative": (lambda xp: (xp.asarray([1, -1, 2]), None),
                          lambda xp, x, _: xp.bincount(x)),
    "bincount float": (lambda xp: (xp.asarray([1.0, 2.0]), None), lambda xp, x, _: xp.bincount(x)),
    "bincount 2-d": (lambda xp: (xp.asarray([[1, 2]]), None), lambda xp, x, _: xp.bincount(x)),
    "bincount minlength": (lambda xp: (xp.asarray([1, 2]), None),
                           lambda xp, x, _: xp.bincount(x, minlength=-1)),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SEARCHES.values()), ids=list(SEARCHES))
def test_searching_and_counting_like_numpy(case, path):
    make, run = case
    numpy_compare(rtol=1e-12)(lambda xp: run(xp, *make(xp)))()


HISTOGRAMS = {
    "histogram": lambda xp, a, w: xp.histogram(a),
    "histogram bins": lambda xp, a, w: xp.histogram(a, bins=7),
    "histogram range": lambda xp, a, w: xp.histogram(a, bins=5, range=(-3, 4)),
    "histogram edges": lambda xp, a, w: xp.histogram(a, bins=[-9, -1, 0, 0.5, 3, 12]),
    "histogram weights": lambda xp, a, w: xp.histogram(a, bins=6, weights=w),
    "histogram density": lambda xp, a, w: xp.histogram(a, bins=4, density=True),
    "histogram edges density": lambda xp, a, w: xp.histogram(a, [-20, 0, 1, 30], density=True),
    "histogram2d": lambda xp, a, w: xp.histogram2d(a[:60], a[60:120], bins=(3, 5)),
    "histogram2d weights": lambda xp, a, w: xp.histogram2d(a[:60], a[60:120], 4, weights=w[:60]),
    "histogram2d edges": lambda xp, a, w: xp.histogram2d(a[:50], a[50:100], [[-9, 0, 9], 3],
                                                         density=True),
    "histogram2d range": lambda xp, a, w: xp.histogram2d(a[:50], a[50:100], 3,
                                                         range=[[-2, 2], [0, 5]]),
    "histogramdd": lambda xp, a, w: xp.histogramdd(a[:198].reshape(66, 3)),
    "histogramdd bins": lambda xp, a, w: xp.histogramdd(a[:120].reshape(40, 3), bins=(2, 3, 4)),
    "histogramdd columns": lambda xp, a, w: xp.histogramdd([a[:70], a[70:140]], bins=4),
    "histogramdd weights density": lambda xp, a, w: xp.histogramdd(
        a[:100].reshape(50, 2), bins=3, weights=w[:50], density=True),
    "histogramdd edges range": lambda xp, a, w: xp.histogramdd(
        a[:150].reshape(50, 3), bins=[[-9, 0, 9], 2, [-50, 50]], range=[None, (-5, 5), None]),
    "histogramdd one axis": lambda xp, a, w: xp.histogramdd(a[:40].reshape(40, 1), bins=5),
}  # fmt: skip


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float16", "float32",
                                   "float64"])  # fmt: skip
@pytest.mark.parametrize("case", list(HISTOGRAMS.values()), ids=list(HISTOGRAMS))
def test_histograms_like_numpy(case, dtype, path):
    host, weights = data(dtype, (200,)), data("float64", (200,))
    numpy_compare(rtol=1e-6)(lambda xp: case(xp, xp.asarray(host), xp.asarray(weights)))()


@pytest.mark.parametrize("make", [
    lambda xp: xp.histogram(xp.asarray([1.0, numpy.nan])),
    lambda xp: xp.histogram(xp.asarray([1.0, 2.0]), bins=[3, 1]),
    lambda xp: xp.histogram(xp.zeros(0)),
    lambda xp: xp.histogram(xp.asarray([1, 2, 3]), bins=3, weights=xp.asarray([1, 2])),
    lambda xp: xp.histogram(xp.asarray([5.0, 5.0]), bins=2),
    lambda xp: xp.histogram(xp.asarray([1.0, 2.0, 9.0]), bins="auto"),
])  # fmt: skip
def test_histogram_edge_cases(make, path):
    numpy_compare()(make)()


@pytest.mark.parametrize("make", [
    lambda xp: xp.histogramdd(xp.asarray([[1.0, numpy.nan], [2.0, 3.0]])),
    lambda xp: xp.histogramdd(xp.asarray([[1.0, 2.0], [2.0, 3.0]]), bins=(2, 3, 4)),
    lambda xp: xp.histogramdd(xp.asarray([[1.0, 2.0], [2.0, 3.0]]), bins=[[3, 1], 2]),
    lambda xp: xp.histogramdd(xp.asarray([[1.0, 2.0], [2.0, 3.0]]), bins=0),
    lambda xp: xp.histogramdd(xp.asarray([[1.0, 2.0]]), weights=xp.asarray([1.0, 2.0])),
    lambda xp: xp.histogramdd(xp.zeros((0, 2)), bins=2),
    lambda xp: xp.histogramdd(xp.asarray([[5.0, 5.0], [5.0, 5.0]]), bins=2),
    lambda xp: xp.histogramdd(xp.asarray([[1, 2], [3, 4], [5, 6]]), bins=2,
                              range=[(0, 1), (9, 9)]),
])  # fmt: skip
def test_histogramdd_edge_cases_and_errors(make, path):
    numpy_compare()(make)()


def test_histogramdd_counts_on_numlooms_kernels(monkeypatch):
    """A histogram of numloom arrays counts with numloom's kernels (on a GPU, on the device:
    here the CPU's model of them), not through NumPy."""
    from numloom.api import fallback

    if not ON_GPU:
        monkeypatch.setattr(sorting, "CPU_KERNELS", HostKernels)
    monkeypatch.setattr(sorting, "call_numpy", None)  # (a call would raise)
    monkeypatch.setattr(fallback, "call_numpy", None)
    sample = data("float32", (300, 3))
    got, edges = numloom.histogramdd(numloom.asarray(sample), bins=(3, 4, 5))
    want, want_edges = numpy.histogramdd(sample, bins=(3, 4, 5))
    numpy.testing.assert_array_equal(got.get(), want)
    assert all(numpy.array_equal(e.get(), w) for e, w in zip(edges, want_edges))


QUANTILES = {
    "median": lambda xp, a: xp.median(a),
    "median axis": lambda xp, a: xp.median(a, axis=1),
    "median axes keepdims": lambda xp, a: xp.median(a, axis=(0, 2), keepdims=True),
    "median odd": lambda xp, a: xp.median(a[:, :3], axis=1),
    "percentile": lambda xp, a: xp.percentile(a, 30),
    "percentile axis": lambda xp, a: xp.percentile(a, [10, 50, 99], axis=-1),
    "percentile keepdims": lambda xp, a: xp.percentile(a, [[5], [95]], axis=0, keepdims=True),
    "quantile": lambda xp, a: xp.quantile(a, 0.3, axis=2),
    "quantile array q": lambda xp, a: xp.quantile(a, numpy.array([0.25, 0.5, 1.0]), axis=1),
    "quantile lower": lambda xp, a: xp.quantile(a, [0.1, 0.7], axis=0, method="lower"),
    "quantile higher": lambda xp, a: xp.quantile(a, 0.33, method="higher"),
    "quantile midpoint": lambda xp, a: xp.quantile(a, [0.2, 0.5], axis=1, method="midpoint"),
    "quantile nearest": lambda xp, a: xp.quantile(a, 0.45, axis=(1, 2), method="nearest"),
    "quantile hazen": lambda xp, a: xp.quantile(a, [0.3, 0.8], axis=2, method="hazen"),
    "quantile weibull": lambda xp, a: xp.quantile(a, 0.61, method="weibull"),
    "quantile inverted_cdf": lambda xp, a: xp.quantile(a, 0.61, axis=0, method="inverted_cdf"),
    "quantile bad q": lambda xp, a: xp.quantile(a, 1.5),
    "percentile bad q": lambda xp, a: xp.percentile(a, [-1, 50]),
    "quantile bad method": lambda xp, a: xp.quantile(a, 0.5, method="middle"),
    "median bad axis": lambda xp, a: xp.median(a, axis=3),
    "nanmedian": lambda xp, a: xp.nanmedian(a),
    "nanmedian axis": lambda xp, a: xp.nanmedian(a, axis=1),
    "nanmedian last axis": lambda xp, a: xp.nanmedian(a, axis=-1),
    "nanmedian axes keepdims": lambda xp, a: xp.nanmedian(a, axis=(0, 2), keepdims=True),
    "nanmedian odd": lambda xp, a: xp.nanmedian(a[:, :3], axis=1),
    "nanmedian out": lambda xp, a: _returns_out(xp, a, xp.nanmedian, (4, 6), axis=2),
    "nanquantile": lambda xp, a: xp.nanquantile(a, 0.3),
    "nanquantile axis": lambda xp, a: xp.nanquantile(a, [0.1, 0.5, 0.97], axis=1),
    "nanquantile last axis keepdims": lambda xp, a: xp.nanquantile(a, [0.25, 0.75], axis=-1,
                                                                   keepdims=True),
    "nanquantile axes": lambda xp, a: xp.nanquantile(a, 0.61, axis=(0, 2)),
    "nanquantile array q": lambda xp, a: xp.nanquantile(a, numpy.array([0.0, 0.5, 1.0]),
                                                        axis=2),
    "nanquantile lower": lambda xp, a: xp.nanquantile(a, [0.1, 0.7], axis=0, method="lower"),
    "nanquantile higher": lambda xp, a: xp.nanquantile(a, 0.33, axis=1, method="higher"),
    "nanquantile midpoint": lambda xp, a: xp.nanquantile(a, 0.4, axis=2, method="midpoint"),
    "nanquantile nearest": lambda xp, a: xp.nanquantile(a, [0.45, 0.5], axis=1,
                                                        method="nearest"),
    "nanquantile hazen": lambda xp, a: xp.nanquantile(a, [0.3, 0.8], axis=2, method="hazen"),
    "nanquantile weibull": lambda xp, a: xp.nanquantile(a, 0.61, axis=1, method="weibull"),
    "nanquantile inverted_cdf": lambda xp, a: xp.nanquantile(a, 0.61, axis=0,
                                                             method="inverted_cdf"),
    "nanquantile closest_observation": lambda xp, a: xp.nanquantile(
        a, [0.2, 0.9], axis=2, method="closest_observation"),
    "nanpercentile": lambda xp, a: xp.nanpercentile(a, 30, axis=1),
    "nanpercentile list": lambda xp, a: xp.nanpercentile(a, [5, 50, 95], axis=-1),
    "nanpercentile out": lambda xp, a: _returns_out(xp, a, xp.nanpercentile, (4, 5), q=40,
                                                    axis=1),
    "nanquantile bad q": lambda xp, a: xp.nanquantile(a, 1.5, axis=1),
    "nanpercentile bad q": lambda xp, a: xp.nanpercentile(a, [-1, 50]),
    "nanquantile bad method": lambda xp, a: xp.nanquantile(a, 0.5, method="middle"),
    "median out": lambda xp, a: _returns_out(xp, a, xp.median, (6, 5), axis=0),
    "median out int": lambda xp, a: _returns_out(xp, a, xp.median, (4, 5), "int32", axis=1),
    "median out of another shape": lambda xp, a: _returns_out(xp, a, xp.median, (5,), axis=0),
    "quantile out": lambda xp, a: _returns_out(xp, a, xp.quantile, (2, 4, 6), q=[0.2, 0.9],
                                               axis=2),
    "percentile out": lambda xp, a: _returns_out(xp, a, xp.percentile, (4, 5), q=40, axis=1),
}  # fmt: skip


def _returns_out(xp, a, fn, shape, dtype="float64", **kwargs):
    """``fn(a, out=out)``: the values written into ``out`` (a view of a larger array) and
    whether ``out`` itself came back, as NumPy returns it."""
    base = xp.full((2,) + shape, -1.0, dtype=dtype)
    out = base[1]
    if "q" in kwargs:
        got = fn(a, kwargs.pop("q"), out=out, **kwargs)
    else:
        got = fn(a, out=out, **kwargs)
    return base, got is out


@pytest.mark.parametrize("dtype", ["int16", "uint8", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("case", list(QUANTILES.values()), ids=list(QUANTILES))
def test_order_statistics_like_numpy(case, dtype, path):
    host = data(dtype, (4, 6, 5), nan=True)
    if dtype.startswith("float"):
        host[1, 2, :] = numpy.nan  # a slice all NaN, others with one or none
    # (float32 on a GPU: NVRTC fuses NumPy's lerp ``a + (b - a) * t`` into one FMA, one
    # rounding fewer than NumPy's: within an ulp)
    numpy_compare(rtol=1e-6 if dtype in ("float16", "float32") else 1e-12, atol=1e-13)(
        lambda xp: case(xp, xp.asarray(host))
    )()


ERRORS = {
    "sort axis": lambda xp, a: xp.sort(a, axis=2),
    "sort kind": lambda xp, a: xp.sort(a, kind="bogus"),
    "sort order": lambda xp, a: xp.sort(a, order="x"),
    "sort 0-d": lambda xp, a: xp.sort(a[0, 0]),
    "argsort axis": lambda xp, a: xp.argsort(a, axis=-3),
    "argsort stable and kind": lambda xp, a: xp.argsort(a, kind="quicksort", stable=True),
    "partition kth": lambda xp, a: xp.partition(a, 9),
    "partition negative kth": lambda xp, a: xp.partition(a, -10),
    "partition float kth": lambda xp, a: xp.partition(a, 1.5),
    "argpartition axis": lambda xp, a: xp.argpartition(a, 1, axis=5),
    "lexsort shapes": lambda xp, a: xp.lexsort([a[0], a[1, :3]]),
    "read-only sort": lambda xp, a: (setattr(a.flags, "writeable", False), a.sort()),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_like_numpy(case, path):
    host = data("float32", (3, 9))
    numpy_compare()(lambda xp: case(xp, xp.asarray(host)))()


@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    shape=st.sampled_from([(0,), (1,), (17,), (4097,), (3, 1000), (40, 7), (2, 3, 5)]),
    spread=st.sampled_from([2, 50, 10**9]),
    seed=st.integers(0, 2**16),
)
def test_sort_argsort_unique_hypothesis(dtype, shape, spread, seed):
    rng = numpy.random.default_rng(seed)
    host = rng.integers(-spread, spread, shape)
    if numpy.dtype(dtype).kind == "f":
        host = host / 8
    host = host.astype(dtype)
    a = numloom.asarray(host)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        assert_same(numloom.sort(a).get(), numpy.sort(host))
        assert_same(numloom.argsort(a, kind="stable").get(), numpy.argsort(host, kind="stable"))
        got = numloom.unique(a, return_inverse=True, return_counts=True)
        assert_same(tuple(g.get() for g in got),
                    numpy.unique(host, return_inverse=True, return_counts=True))  # fmt: skip
        if host.ndim == 1 and host.size:
            s = numpy.sort(host)
            assert_same(numloom.searchsorted(numloom.asarray(s), a).get(),
                        numpy.searchsorted(s, host))  # fmt: skip


CALLS = [
    lambda nl, a, i: nl.sort(a),
    lambda nl, a, i: nl.sort(a.reshape(8, -1), axis=0, kind="stable"),
    lambda nl, a, i: nl.argsort(a.reshape(4, -1)),
    lambda nl, a, i: (a.copy().sort(), a.argsort()),
    lambda nl, a, i: nl.lexsort([a, i]),
    lambda nl, a, i: (nl.partition(a, 3), nl.argpartition(a, [1, 5])),
    lambda nl, a, i: nl.unique(i, return_index=True, return_inverse=True, return_counts=True),
    lambda nl, a, i: (nl.unique_values(a), nl.unique_counts(i), nl.unique_all(a)),
    lambda nl, a, i: nl.unique_inverse(i),
    lambda nl, a, i: nl.searchsorted(nl.sort(a), a, side="right"),
    lambda nl, a, i: nl.digitize(a, nl.asarray([-1.0, 0.0, 2.0])),
    lambda nl, a, i: (nl.bincount(i), nl.bincount(i, weights=a, minlength=50)),
    lambda nl, a, i: (nl.histogram(a, 16), nl.histogram(a, [-3, 0, 1.5, 3], weights=a)),
    lambda nl, a, i: nl.histogram2d(a, a * 2, bins=4, density=True),
    lambda nl, a, i: nl.histogramdd(a.reshape(-1, 4), bins=(2, 3, 2, 3), weights=a[:1024]),
    lambda nl, a, i: (nl.median(a), nl.median(a.reshape(8, -1), axis=1)),
    lambda nl, a, i: (nl.percentile(a, [5, 50]), nl.quantile(a.reshape(8, -1), 0.3, axis=0)),
]


def _count_no_fallbacks():
    host = RNG.standard_normal(4096)
    a, i = numloom.asarray(host), numloom.asarray(RNG.integers(0, 40, 4096))
    before = numloom.stats()["fallbacks"]
    for call in CALLS:
        call(numloom, a, i)
    numloom.sync()
    assert numloom.stats()["fallbacks"] == before


@pytest.mark.skipif(not ON_GPU, reason="on the CPU these run NumPy's own functions")
def test_on_the_gpu_nothing_falls_back():
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        _count_no_fallbacks()


@pytest.mark.skipif(ON_GPU, reason="the GPU runs its own kernels")
def test_the_device_compositions_use_numloom_operations_only(monkeypatch):
    monkeypatch.setattr(sorting, "CPU_KERNELS", HostKernels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        _count_no_fallbacks()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nanmedian_of_large_slices_and_its_warning(dtype, path):
    host = data(dtype, (3, 700), nan=True)
    host[1] = numpy.nan  # an all-NaN slice: NaN, and NumPy's RuntimeWarning
    for axis in (1, None):
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered") if axis else (
                warnings.catch_warnings()):  # fmt: skip
            got = numloom.nanmedian(numloom.asarray(host), axis=axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = numpy.nanmedian(host, axis=axis)
        numpy.testing.assert_array_equal(numpy.asarray(got), want)
        assert numpy.asarray(got).dtype == want.dtype

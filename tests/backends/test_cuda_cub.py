"""Large sorts on a GPU through CUB (``backends/cuda_cub.py``): the sorting table of
tests/api/test_sorting.py again with CUB taking every one-row sort, whatever its size, and
large arrays with NumPy's tricky floats. Needs a GPU and cuda-cccl."""

from __future__ import annotations

import warnings

import numpy
import pytest

import numloom
from tests.api.test_sorting import SORTS
from tests.conftest import assert_same, numpy_compare

ON_GPU = numloom.get_device() != "cpu"


def _cub():
    if not ON_GPU:
        return None
    from numloom.backends import cuda_cub

    return cuda_cub if cuda_cub._compute() is not None else None


pytestmark = pytest.mark.skipif(_cub() is None, reason="needs a GPU and cuda-cccl")


@pytest.fixture(autouse=True)
def _cub_for_every_size(monkeypatch):
    cub = _cub()
    monkeypatch.setattr(cub, "MIN_ELEMENTS", 0)
    monkeypatch.setenv("NUMLOOM_CUB", "wait")  # (built at the first call, not in the background)


@pytest.mark.parametrize("case", list(SORTS.values()), ids=list(SORTS))
def test_the_sorting_table_with_cub(case):
    make, run = case
    numpy_compare()(lambda xp: run(xp, make(xp)))()


def _tricky(dtype, n: int, seed: int) -> numpy.ndarray:
    rng = numpy.random.default_rng(seed)
    dtype = numpy.dtype(dtype)
    if dtype.kind != "f":
        info = numpy.iinfo(dtype)
        host = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        host[rng.integers(0, n, n // 3)] = host[rng.integers(0, n, n // 3)]  # (ties)
        host[:4] = [info.min, info.max, 0, info.min]
        return host
    host = (rng.integers(-50, 50, n) / 4).astype(dtype)
    for value in (numpy.nan, -numpy.nan, 0.0, -0.0, numpy.inf, -numpy.inf):
        host[rng.integers(0, n, n // 50)] = value
    return host


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint32", "int64", "uint64"])
def test_cub_sorts_like_numpy(dtype):
    """sort (every NaN last, -0.0 and 0.0 as NumPy's stable sort leaves them), stable argsort,
    unique with its index, inverse and counts: NumPy's bits, and CUB ran them."""
    host = _tricky(dtype, 300_000, 3)
    a = numloom.asarray(host)
    before = numloom.stats().get("cub_sorts", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        got = numloom.sort(a).get()  # (the order of -0.0 and 0.0 is NumPy's to choose here)
        assert got.dtype == host.dtype
        numpy.testing.assert_array_equal(got, numpy.sort(host))
        assert_same(numloom.sort(a, kind="stable").get(), numpy.sort(host, kind="stable"))
        assert_same(numloom.argsort(a, kind="stable").get(), numpy.argsort(host, kind="stable"))
        got = numloom.unique(a, return_index=True, return_inverse=True, return_counts=True)
        want = numpy.unique(host, return_index=True, return_inverse=True, return_counts=True)
        assert_same(tuple(g.get() for g in got), want)
    assert numloom.stats().get("cub_sorts", 0) - before >= 4, _cub().errors


def test_the_first_large_sort_does_not_wait_for_cub(monkeypatch):
    """By default CUB's sort is built in the background: the call that starts the build sorts
    on numloom's kernels, with NumPy's result, and a later one, after the build, on CUB's."""
    cub = _cub()
    monkeypatch.setenv("NUMLOOM_CUB", "1")
    monkeypatch.setattr(cub, "_blobs", {})
    monkeypatch.setattr(cub, "_builders", {})
    monkeypatch.setattr(cub.cache, "get", lambda key: None)  # (as on a new machine)
    monkeypatch.setattr(cub, "_local", cub.threading.local())
    host = _tricky("int64", 5000, 4)
    before = numloom.stats().get("cub_sorts", 0)
    assert_same(numloom.sort(numloom.asarray(host)).get(), numpy.sort(host))
    assert numloom.stats().get("cub_sorts", 0) == before
    cub.wait()
    assert_same(numloom.sort(numloom.asarray(host)).get(), numpy.sort(host))
    assert numloom.stats().get("cub_sorts", 0) == before + 1, cub.errors

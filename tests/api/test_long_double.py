"""NumPy's extended precision (``longdouble``, ``clongdouble``: 80-bit x87 on x86-64) is one of
its dtypes, so it is numloom's too: arrays of it take every common operation, with NumPy's
values (NumPy's own tests run every nan-function on ``'g'`` and ``'G'``). numloom's kernels have
no such type, so these run through NumPy on numloom's memory."""

from __future__ import annotations

import numpy
import pytest
from conftest import numpy_compare

import numloom

# (On a GPU the table below is not checked yet: the suite's comparison there, in units of
# last place, takes no float128.)
ON_CPU = numloom.get_device() == "cpu"

OPS = {
    "arithmetic": lambda xp, a: (a * 2 + 1) / 3 - a**2,
    "ufuncs": lambda xp, a: (xp.sin(a), xp.exp(a / 4), xp.sqrt(xp.abs(a)), xp.floor(a * 3)),
    "sum and prod": lambda xp, a: (a.sum(), xp.sum(a, axis=0), xp.prod(a[:4] + 1)),
    "mean, var, std": lambda xp, a: (a.mean(), xp.var(a), xp.std(a, ddof=1), a.mean(axis=0)),
    "max, argmin": lambda xp, a: (a.max(), xp.argmin(a), xp.maximum(a, 0.5)),
    "cumsum": lambda xp, a: xp.cumsum(a),
    "nan-functions": lambda xp, a: (xp.nanmean(xp.where(a > 0.5, xp.nan, a)),
                                    xp.nanvar(xp.where(a > 0.5, xp.nan, a)),
                                    xp.nansum(xp.where(a > 0.5, xp.nan, a), axis=0)),
    "sort, unique": lambda xp, a: (xp.sort(a.reshape(-1)), xp.unique(xp.round(a * 4))),
    "products": lambda xp, a: (a @ a.T, xp.dot(a[0], a[1])),
    "where and casts": lambda xp, a: (xp.where(a > 0.3, a, -a), a.astype(xp.float64), (a > 0.5).sum()),
    "writes": lambda xp, a: _written(xp, a),
    "comparisons": lambda xp, a: (a == a[::-1], xp.isclose(a, a + 1e-20), xp.allclose(a, a)),
}  # fmt: skip


def _written(xp, a):
    b = a.copy()
    b[0] = 5
    b[1:, 0] += 1
    b[b > 0.9] = -1
    return b


@pytest.mark.skipif(not ON_CPU, reason="the GPU harness compares in ulps, not for float128")
@pytest.mark.parametrize("size", [(3, 4), (200, 120)], ids=["small", "large"])
@pytest.mark.parametrize("dtype", ["longdouble", "clongdouble"])
@pytest.mark.parametrize("name", list(OPS))
@numpy_compare()
def test_extended_precision_arrays_take_every_common_operation(xp, name, dtype, size):
    host = (numpy.arange(numpy.prod(size)).reshape(size) % 97 / 97).astype(dtype)
    if dtype == "clongdouble":
        host = host + 1j * host[::-1]
    return OPS[name](xp, xp.asarray(host))


def test_the_gpus_sort_leaves_extended_precision_to_numpy():
    """A GPU's radix sort has keys of at most 8 bytes: a sort of extended precision goes
    through NumPy (it raised KeyError: 16 on a GPU)."""
    from numloom.backends import cuda_sort

    assert cuda_sort.supports(numpy.float64, 10) and cuda_sort.supports(numpy.int8, 10)
    assert not cuda_sort.supports(numpy.longdouble, 10)
    assert not cuda_sort.supports(numpy.clongdouble, 10)

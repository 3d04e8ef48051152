"""Pieces of NumPy that public programs use, each against NumPy: in-place writes into keepdims
reductions, removed names' messages, linalg on the last two axes, cumulative sums with their
initial value, flags, flat, Fortran order, ufunc.reduceat and the array API namespace."""

from __future__ import annotations

import numpy
import pytest
from conftest import numpy_compare

import numloom as nl


@pytest.mark.parametrize("reduce", ["max", "sum", "min", "argmax", "any", "prod", "mean"])
@numpy_compare()
def test_in_place_writes_into_a_keepdims_full_reduction(xp, reduce):
    a = xp.arange(6.0).reshape(2, 3) - 2
    m = getattr(xp, reduce)(a, keepdims=True)
    m += 1
    n = getattr(xp, reduce)(a, keepdims=True)
    n[...] = 0
    n[0, 0] += 3
    return m, n


@numpy_compare()
def test_a_keepdims_reduction_written_through_a_view(xp):
    m = xp.sum(xp.ones((3, 4)), axis=(0, 1), keepdims=True)
    v = m.reshape(1)
    v[0] = 7
    return m

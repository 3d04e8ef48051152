"""Which values a GPU kernel checks for floating-point errors (compile/lower.py's ``notes``,
numloom.h's ``NL_FE_F``): every operation that can raise, unless everything taking its value
passes an inf or a NaN on to a checked value. Rendered for CUDA without a GPU; the sources
compile with NVRTC where it is installed."""

from __future__ import annotations

import re

import numpy
import pytest

import numloom as nl
from numloom.backends import cuda_launch
from numloom.compile.compiler import check_cuda_sources, nvrtc_available

needs_nvrtc = pytest.mark.skipif(not nvrtc_available(), reason="NVRTC is not installed: "
                                 "pip install numloom[cuda12] (or [cuda13])")  # fmt: skip

X = numpy.linspace(1.0, 2.0, 12, dtype=numpy.float32)
INTS = numpy.arange(1, 13)


def _sources(*arrays) -> list:
    plan = nl.explain(*arrays, target="cuda")
    return [k.source for k in plan.kernels if k.source]


def _first_function(source: str) -> str:
    """The kernel's first ``__global__`` function (a flat map also has a ``_vec`` twin)."""
    parts = source.split('extern "C" __global__')
    return parts[1]


def _noted(source: str) -> list:
    """The expressions noted in the kernel's first function."""
    return re.findall(r"NL_FE_[FD]\((.*)\);", _first_function(source))


def test_a_select_notes_the_quotient_it_may_hide():
    x = nl.asarray(X)
    (source,) = _sources(nl.where(x != 0, 1 / x, 0))
    (noted,) = _noted(source)
    assert "/" in noted


def test_arithmetic_that_passes_errors_on_is_not_noted():
    """``(a * b + c) * 2``: an overflow of the first multiply or the add shows in the output,
    which is noted: one note, not three."""
    a, b, c = (nl.asarray(X + k) for k in range(3))
    (source,) = _sources((a * b + c) * 2)
    assert len(_noted(source)) == 1
    assert "int64_t *__restrict__ fpw" in source and "*fpw = 1;" in source


def test_an_exponential_hides_minus_infinity_so_its_operand_is_noted():
    x = nl.asarray(X)
    (source,) = _sources(nl.exp(x * 2))
    assert len(_noted(source)) == 2  # x * 2 (exp(-inf) is 0) and the exponential itself


def test_a_sum_checks_where_it_stores_a_min_where_its_values_are_made():
    x = nl.asarray(X)
    (total,) = _sources((x * x).sum())
    assert "NL_FE_F" not in total and "*fpw = 1;" in total
    (least,) = _sources((x * x).min())
    assert len(_noted(least)) == 1


def test_black_scholes_notes_a_few_of_its_values():
    """The adds and multiplies between Black-Scholes' exponentials, logarithm and square root
    pass errors on: well under half of its raising operations carry a note."""
    rng = numpy.random.default_rng(0)
    s, k, t = (nl.asarray(rng.uniform(lo, hi, 64).astype(numpy.float32))
               for lo, hi in ((5, 30), (1, 100), (0.25, 10)))  # fmt: skip
    r, v = 0.02, 0.30
    sqrt_t = nl.sqrt(t)
    d1 = (nl.log(s / k) + (r + v * v / 2) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t

    def cnd(d):
        kk = 1 / (1 + 0.2316419 * nl.abs(d))
        poly = kk * (0.31938153 + kk * (-0.356563782 + kk * (1.781477937 + kk * (
            -1.821255978 + kk * 1.330274429))))  # fmt: skip
        w = 1 - 0.3989422804014327 * nl.exp(-d * d / 2) * poly
        return nl.where(d < 0, 1 - w, w)

    call = s * cnd(d1) - k * nl.exp(-r * t) * cnd(d2)
    (source,) = _sources(call)
    function = _first_function(source)
    noted = len(_noted(source))
    lets = len(re.findall(r"const float t\d+ =", function))
    assert 0 < noted < lets // 3, (noted, lets)


def test_scans_integer_divisions_and_casts_are_checked():
    x = nl.asarray(X)
    i = nl.asarray(INTS)
    (scan,) = _sources(nl.cumsum(x * 2))
    assert "NL_FE_F(acc)" in scan
    (division,) = _sources(i // (i - 1))
    assert "NL_FE_DIV0(" in division
    (cast,) = _sources((x * 3).astype(numpy.int32))
    assert "NL_FE_CAST(" in cast


def test_a_row_kernel_notes_its_hidden_values():
    """Softmax: the row's max is subtracted before an exponential (hides -inf), the row's sum
    divides (hides inf): both are noted, as is the output."""
    x = nl.asarray(X.reshape(3, 4))
    e = nl.exp(x - x.max(axis=1, keepdims=True))
    (source,) = _sources(e / e.sum(axis=1, keepdims=True))
    noted = " ".join(_noted(source))
    assert "row0" in noted and "row1" in noted


def test_kernels_without_raising_operations_take_no_flag_word():
    x = nl.asarray(X)
    (source,) = _sources(nl.where(x > 1.5, x, -x))
    assert "fpw" not in source and "NL_FE_" not in source


@needs_nvrtc
def test_noted_kernels_and_the_product_check_compile_for_cuda():
    x = nl.asarray(X)
    m = nl.asarray(X.reshape(3, 4))
    i = nl.asarray(INTS)
    e = nl.exp(m - m.max(axis=1, keepdims=True))
    sources = _sources(nl.where(x != 0, 1 / x, 0), nl.cumsum(nl.exp(x)), (x * x).min(),
                       e / e.sum(axis=1, keepdims=True), i // (i - 1),
                       (x * 3).astype(numpy.int32), nl.exp(x * 2).astype(numpy.float16))
    sources.append(cuda_launch._FINITE_SOURCE)
    logs = check_cuda_sources(sources, "sm_90")
    assert logs == [None] * len(sources), [log for log in logs if log][:1]

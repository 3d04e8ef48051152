"""Complex arithmetic in fused kernels: compiled (on the CPU: not node by node through NumPy) and
equal to NumPy's results bit for bit on the CPU, special values included (a GPU contracts
multiply-adds: within a few ulp there)."""

from __future__ import annotations

import warnings

import numpy
import pytest
from conftest import assert_same

import numloom as nl

SPECIAL = [0.0, -0.0, 1.0, -2.5, 1e-300, 3e300, numpy.inf, -numpy.inf, numpy.nan]


def _values(dtype, n=400):
    rng = numpy.random.default_rng(11)
    re = numpy.concatenate([rng.standard_normal(n), numpy.repeat(SPECIAL, len(SPECIAL))])
    im = numpy.concatenate([rng.standard_normal(n), numpy.tile(SPECIAL, len(SPECIAL))])
    with numpy.errstate(all="ignore"):
        return (re + 1j * im).astype(dtype)


def _through_numpy():
    nl.sync()
    return nl.stats()["kernels_through_numpy"]


UNARY = {
    "negative": lambda xp, a: -a,
    "conjugate": lambda xp, a: xp.conjugate(a),
    "square": lambda xp, a: xp.square(a),
    "absolute": lambda xp, a: xp.abs(a),
    "isnan": lambda xp, a: xp.isnan(a),
    "isinf": lambda xp, a: xp.isinf(a),
    "isfinite": lambda xp, a: xp.isfinite(a),
    "real part": lambda xp, a: xp.real(a * 1),
}

BINARY = {
    "add": lambda xp, a, b: a + b,
    "subtract": lambda xp, a, b: a - b,
    "multiply": lambda xp, a, b: a * b,
    "multiply by itself": lambda xp, a, b: (lambda c: xp.multiply(c, c, out=c))(a + 0),
    "divide": lambda xp, a, b: a / b,
    "equal": lambda xp, a, b: a == b,
    "not_equal": lambda xp, a, b: a != b,
    "where": lambda xp, a, b: xp.where(abs(a) < 1, a, b),
    "with a real": lambda xp, a, b: a * a.real.dtype.type(2.5) + xp.ones(a.shape) - 3j,
}


def _check(fn, *hosts):
    with numpy.errstate(all="ignore"):
        want = fn(numpy, *hosts)
        before = _through_numpy()
        got = fn(nl, *[nl.asarray(h) for h in hosts])
        got_host = numpy.asarray(got)
    assert _through_numpy() == before, "a complex kernel ran through NumPy"
    assert_same(got_host, want)  # (bit for bit on the CPU; within a few ulp on a GPU)


@pytest.mark.parametrize("dtype", [numpy.complex64, numpy.complex128])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_complex_kernels_are_compiled_and_exact(dtype, name):
    _check(UNARY[name], _values(dtype))


@pytest.mark.parametrize("dtype", [numpy.complex64, numpy.complex128])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_complex_kernels_are_compiled_and_exact(dtype, name):
    a = _values(dtype)
    _check(BINARY[name], a, numpy.roll(a, 7))


@pytest.mark.parametrize("src", ["float32", "float64", "int64", "uint8", "bool", "complex64",
                                 "complex128"])  # fmt: skip
@pytest.mark.parametrize("dst", ["complex64", "complex128", "float64", "int32", "bool"])
def test_casts_to_and_from_complex_are_numpys(src, dst):
    if "complex" not in src + dst:
        pytest.skip("no complex value")
    host = _values(numpy.complex128)[:400]
    if "complex" not in src:
        host = numpy.nan_to_num(host.real * 10, posinf=7, neginf=-7)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        host = host.astype(src)
        if "complex" in src and dst in ("int32",):
            host = host[numpy.isfinite(host)]  # (NaN to integers: the platform's value)
        _check(lambda xp, a: (a + a).astype(dst), host)


def test_the_mandelbrot_step_is_one_compiled_kernel():
    c = nl.asarray(_values(numpy.complex128)[:400])
    z = nl.zeros_like(c)
    nl.sync()
    before = nl.stats()
    z = z * z + c
    keep = nl.abs(z) < 2.0
    drop = ~keep
    nl.sync()
    after = nl.stats()
    assert after["kernels_launched"] - before["kernels_launched"] == 1
    assert after["kernels_through_numpy"] == before["kernels_through_numpy"]
    with numpy.errstate(all="ignore"):
        host_c = _values(numpy.complex128)[:400]
        numpy.testing.assert_array_equal(drop.get(), ~(numpy.abs(host_c) < 2.0))


def test_complex_sums_still_match_numpy():
    a = _values(numpy.complex128)[:400]
    a = a[numpy.isfinite(a)]
    numpy.testing.assert_allclose(nl.sum(nl.asarray(a) * 2).get(), numpy.sum(a * 2))


WRITES = {
    "strided view": lambda xp, a, b: _written(a, (slice(1, 4), slice(None, None, 2)),
                                              a[1:4, ::2] * b[1:4, ::2] + xp.abs(b[1:4, ::2])),
    "row": lambda xp, a, b: _written(a, 0, b[0] * 2 - 1j),
    "every other row": lambda xp, a, b: _written(xp.zeros_like(a), slice(None, None, 2),
                                                 b[::2] * a[::2]),
    "reshaped view": lambda xp, a, b: _into_reshaped(xp, a * b),
}


def _written(target, key, value):
    target = target * 1
    target[key] = value
    return target


def _into_reshaped(xp, c):
    c.shape = c.size  # (a view of the 2-d value, read by the write of a 1-d array)
    d = xp.zeros(c.size, c.dtype)
    xp.add(d, c, d)
    return d


@pytest.mark.parametrize("dtype", [numpy.complex64, numpy.complex128])
@pytest.mark.parametrize("name", list(WRITES))
def test_complex_writes_through_views_are_compiled_and_exact(dtype, name):
    a = _values(dtype)[:48].reshape(6, 8)
    _check(WRITES[name], a, numpy.roll(a, 5))

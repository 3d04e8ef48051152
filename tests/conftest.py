"""Shared test machinery: every test body runs on NumPy and on numloom and the two must agree.

``@numpy_compare()`` runs a test written against a namespace ``xp`` twice, once with NumPy and
once with numloom, and compares what the two runs return: dtypes exactly, shapes exactly, values
to a tolerance (exact by default). When NumPy raises, numloom must raise the same exception type
with the same message.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings

import numpy
import pytest

# Tests count compiled kernels: every plan compiles at once (a small new plan would otherwise
# run through NumPy first, as tests/compile/test_tiering.py checks)
os.environ.setdefault("NUMLOOM_COMPILE_AFTER_MS", "0")
# every plan a template makes for a new size is checked against the plan made anew
os.environ.setdefault("NUMLOOM_PLAN_TEMPLATES", "check")

import numloom  # noqa: E402


class _Raised:
    def __init__(self, error: BaseException):
        self.type = type(error)
        self.message = str(error)
        self.error = error


def _run(fn, xp, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            out = fn(xp, *args, **kwargs)
            if xp is numloom:
                out = _to_host(out)
            return out
    except Exception as e:  # noqa: BLE001 (compared against NumPy's below)
        return _Raised(e)


def _to_host(out):
    if isinstance(out, numloom.ndarray):
        return out.get()
    if isinstance(out, (tuple, list)):
        return type(out)(_to_host(o) for o in out)
    return out


def assert_same(got, want, rtol=0.0, atol=0.0, check_dtype=True, path="result"):
    """``got`` (numloom's, on the host) equals ``want`` (NumPy's)."""
    if isinstance(want, _Raised) or isinstance(got, _Raised):
        if not isinstance(want, _Raised):
            raise AssertionError(f"{path}: numloom raised but NumPy did not") from got.error
        if not isinstance(got, _Raised):
            raise AssertionError(
                f"{path}: NumPy raised {want.type.__name__}: {want.message} "
                f"but numloom returned {got!r}"
            )
        assert issubclass(got.type, want.type) or got.type.__name__ == want.type.__name__, (
            f"{path}: numloom raised {got.type.__name__} ({got.message}), "
            f"NumPy {want.type.__name__} ({want.message})"
        )
        assert got.message == want.message, f"{path}: message {got.message!r} != {want.message!r}"
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), f"{path}: {got!r}"
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, check_dtype, f"{path}[{k}]")
        return
    if isinstance(want, (numpy.ndarray, numpy.generic)):
        got_arr, want_arr = numpy.asarray(got), numpy.asarray(want)
        if check_dtype:
            assert got_arr.dtype == want_arr.dtype, (
                f"{path}: dtype {got_arr.dtype} != {want_arr.dtype}"
            )
        assert got_arr.shape == want_arr.shape, f"{path}: shape {got_arr.shape} != {want_arr.shape}"
        if rtol == 0 and atol == 0 and _gpu_math(got_arr, want_arr):
            _assert_within_ulp(got_arr, want_arr, path)
        elif rtol == 0 and atol == 0:
            numpy.testing.assert_array_equal(got_arr, want_arr, err_msg=path, strict=False)
        else:
            numpy.testing.assert_allclose(
                got_arr, want_arr, rtol=rtol, atol=atol, err_msg=path, equal_nan=True
            )
        return
    if isinstance(want, float) and want != want:
        assert got != got, f"{path}: {got!r} != nan"
        return
    assert got == want, f"{path}: {got!r} != {want!r}"


# CUDA's math library (exp, pow, hypot...) is accurate to a few ulp, not correctly rounded like
# most of glibc's: on a GPU, "exact" float results may differ from NumPy's by that much (CUDA
# Math API, maximum ulp errors). Integers, booleans, NaN and infinity positions stay exact.
GPU_MAX_ULP = 4


def _gpu_math(got, want) -> bool:
    return numloom.get_device() != "cpu" and got.dtype.kind in "fc" and want.dtype.kind in "fc"


def _assert_within_ulp(got, want, path: str) -> None:
    if got.dtype.kind == "c" or want.dtype.kind == "c":
        _assert_within_ulp(got.real.copy(), want.real.copy(), path + ".real")
        _assert_within_ulp(numpy.imag(got).copy(), numpy.imag(want).copy(), path + ".imag")
        return
    numpy.testing.assert_array_equal(numpy.isnan(got), numpy.isnan(want), err_msg=path + " nan")
    numpy.testing.assert_array_equal(numpy.where(numpy.isinf(got), got, 0),
                                     numpy.where(numpy.isinf(want), want, 0),
                                     err_msg=path + " inf")  # fmt: skip
    finite = numpy.isfinite(want) & numpy.isfinite(got)
    g, w = numpy.broadcast_arrays(got, want)
    if finite.any():
        numpy.testing.assert_array_max_ulp(g[finite], w[finite].astype(g.dtype), GPU_MAX_ULP)


def numpy_compare(rtol=0.0, atol=0.0, check_dtype=True):
    """Decorator: run the test body ``fn(xp, ...)`` on NumPy and numloom and compare results."""

    def decorate(fn):
        @functools.wraps(fn)
        def test(*args, **kwargs):
            want = _run(fn, numpy, args, kwargs)
            got = _run(fn, numloom, args, kwargs)
            assert_same(got, want, rtol, atol, check_dtype)

        sig = inspect.signature(fn)
        test.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
        return test

    return decorate


@pytest.fixture(params=["numpy", "numloom"])
def xp(request):
    """The namespace under test, for tests that check each library on its own."""
    return numpy if request.param == "numpy" else numloom


@pytest.fixture
def reference_executor(monkeypatch):
    """Evaluate through NumPy node by node (NUMLOOM_TEST_BACKEND=compiled: the compiler)."""
    monkeypatch.setenv("NUMLOOM_BACKEND", os.environ.get("NUMLOOM_TEST_BACKEND", "numpy"))
    yield
    try:
        numloom.sync()
    except Exception:  # noqa: BLE001 (the failing test reports it)
        numloom.core.realize._pending.clear()


@pytest.fixture
def compiled(monkeypatch):
    """Evaluate with the compiler (C kernels), whatever the module's default."""
    monkeypatch.setenv("NUMLOOM_BACKEND", "compiled")


@pytest.fixture
def tiering(monkeypatch, tmp_path):
    """Tiering on (the suite compiles at once), over an empty compile cache."""
    from numloom.compile import compiler
    from numloom.core import config

    if numloom.get_device() != "cpu":
        pytest.skip("the CPU's C kernels")
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 20)
    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_loaded", {})
    yield


@pytest.fixture(autouse=True)
def _settle():
    """Each test starts and ends with nothing pending, on the CPU device."""
    numloom.sync()
    yield
    numloom.sync()


def pytest_collection_modifyitems(config, items):
    """Tests marked ``last`` run after every other test (they look at what the others made)."""
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)

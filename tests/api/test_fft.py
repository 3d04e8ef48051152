"""numloom.fft against numpy.fft: values (to the precision of the result: cuFFT and pocketfft
round differently), dtypes, shapes, ``out=``, and NumPy's exceptions and messages for bad
arguments.

Each comparison runs twice: as the suite's device runs it (NumPy's FFT on numloom's memory on
the CPU, cuFFT on a GPU) and, on the CPU, through the GPU path with cuFFT emulated by NumPy
(``backends/cufft.emulate``), so that the cropping, padding, axis moves, casts, Hermitian
edges and scaling around the cuFFT call are checked on machines without a GPU too.
"""

from __future__ import annotations

import types
import warnings

import numpy
import pytest
from conftest import _Raised, assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import numloom
from numloom.backends import cufft

DTYPES = ("float32", "float64", "complex64", "complex128", "int64", "bool")
NORMS = (None, "backward", "ortho", "forward")
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn", "rfft2", "irfft2")
ON_CPU = numloom.get_device() == "cpu"


@pytest.fixture(autouse=True, scope="module")
def reference_executor():
    """Exact and compile-free on the CPU (see test_ufuncs.py); module scope, as hypothesis
    asks."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMLOOM_BACKEND", "numpy")
        yield


@pytest.fixture(params=["device", "emulated-cufft"])
def path(request, monkeypatch):
    """The device's own path, or (on the CPU) the GPU path with cuFFT emulated by NumPy."""
    if request.param == "emulated-cufft":
        if not ON_CPU:
            pytest.skip("the GPU runs cuFFT itself")
        library = types.SimpleNamespace(transform=cufft.emulate)
        monkeypatch.setattr(numloom.fft, "_library", lambda device: library)
    return request.param


def signal(xp, shape, dtype, seed=0):
    """Random values of ``dtype`` (complex ones with an imaginary part) as an ``xp`` array."""
    rng = numpy.random.default_rng(seed)
    values = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    dtype = numpy.dtype(dtype)
    if dtype.kind == "b":
        host = values.real > 0
    elif dtype.kind in "iu":
        host = numpy.round(values.real * 5).astype(dtype)
    elif dtype.kind == "f":
        host = values.real.astype(dtype)
    else:
        host = values.astype(dtype)
    return xp.asarray(host)


def _run(body, xp, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            got = body(xp, *args)
        return _host(got) if xp is numloom else got
    except Exception as e:  # noqa: BLE001 (compared against NumPy's)
        return _Raised(e)


def _host(value):
    if isinstance(value, numloom.ndarray):
        return value.get()
    if isinstance(value, tuple):
        return tuple(_host(v) for v in value)
    return value


def _tolerance(want) -> tuple:
    """(rtol, atol) for a result like ``want``: relative to its precision and magnitude."""
    arrays = [w for w in (want if isinstance(want, tuple) else (want,))
              if isinstance(w, (numpy.ndarray, numpy.generic)) and w.dtype.kind in "fc"]  # fmt: skip
    if not arrays:
        return 0.0, 0.0
    scale = max([1.0] + [float(numpy.abs(w).max()) for w in arrays if w.size])
    if any(w.dtype == numpy.float16 for w in arrays):
        return 2e-3, 2e-3 * scale
    if any(w.dtype in (numpy.float32, numpy.complex64) for w in arrays):
        return 1e-5, 1e-5 * scale
    return 1e-12, 1e-12 * scale


def same_as_numpy(body, *args):
    """``body(xp, *args)`` gives NumPy's result (or exception) with numloom too."""
    want = _run(body, numpy, args)
    got = _run(body, numloom, args)
    rtol, atol = (0.0, 0.0) if isinstance(want, _Raised) else _tolerance(want)
    assert_same(got, want, rtol, atol)


# --- one-dimensional transforms ---------------------------------------------------------------

SHAPES = ((1,), (2,), (7,), (8,), (3, 5), (4, 6), (2, 3, 5))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional(path, name, dtype, shape):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, shape, dtype)))


LENGTHS = [(None, -1), (None, 0), (5, -1), (12, -1), (1, 1), (3, 0), (9, 1), (2, -2)]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("n", "axis"), LENGTHS)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_lengths_axes_and_norms(path, name, n, axis, norm):
    dtype = "float64" if name in ("rfft", "ihfft") else "complex64"
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, (4, 6), dtype), n, axis, norm))


@pytest.mark.parametrize("dtype", ("float16", "int8", "uint16", "int32"))
@pytest.mark.parametrize("name", ONE_D)
def test_result_dtypes(path, name, dtype):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, (3, 6), dtype), norm="ortho"))


def test_irfft_reads_only_the_real_part_of_its_edge_terms(path):
    """NumPy's irfft ignores the imaginary part of the zero and Nyquist frequency terms; in
    several dimensions, of those terms once the other axes are transformed."""
    same_as_numpy(lambda xp: xp.fft.irfft(xp.asarray([1 + 5j, 2 - 1j, 3 + 7j])))
    same_as_numpy(lambda xp: xp.fft.irfft(xp.asarray([1 + 5j, 2 - 1j, 3 + 7j]), 5))
    same_as_numpy(lambda xp: xp.fft.irfftn(signal(xp, (3, 4, 5), "complex128")))
    same_as_numpy(lambda xp: xp.fft.irfft2(signal(xp, (4, 4), "complex64"), s=(5, 6)))


def test_irfft_leaves_its_input_as_it_was(path):
    def body(xp):
        x = signal(xp, (3, 5), "complex128")
        kept = x.copy()
        first = xp.fft.irfft2(x)
        return first, xp.fft.irfft2(x), x, kept

    same_as_numpy(body)


@pytest.mark.parametrize("name", ("fft", "ifft", "irfft", "fftn", "irfftn"))
def test_results_are_arrays_of_their_own(path, name):
    def body(xp):
        x = signal(xp, (4, 1), "complex128")
        y = (
            getattr(xp.fft, name)(x, axes=(1,))
            if name.endswith("n")
            else getattr(xp.fft, name)(x, 1)
        )
        y[...] = 0
        return x, y

    same_as_numpy(body)


# --- n-dimensional transforms --------------------------------------------------------------------

ND_CASES = [
    ((4, 6), None, None),
    ((3, 5), (4, 8), (0, 1)),
    ((3, 5), (2, 3), (1, 0)),
    ((2, 3, 5), None, None),
    ((2, 3, 5), None, (0, 2)),
    ((2, 3, 5), (4, 7), (2, 0)),
    ((2, 3, 4, 5), None, None),
    ((2, 3, 4, 5), (3, 2, 6, 4), (0, 1, 2, 3)),
    ((4, 5), None, (0, 0)),
    ((3, 4, 5), None, (1, 0, 1)),
    ((1, 5), None, None),
    ((4, 1, 5), (4, 1, 1), (0, 1, 2)),
    ((5,), None, None),
]


@pytest.mark.parametrize(("shape", "s", "axes"), ND_CASES)
@pytest.mark.parametrize("name", N_D)
def test_n_dimensional(path, name, shape, s, axes):
    dtype = "float32" if name.startswith("rfft") else "complex128"
    if name.endswith("2"):
        axes = (-2, -1) if axes is None else axes[-2:]
        s = None if s is None else s[-2:]
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, shape, dtype), s, axes))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", N_D)
def test_n_dimensional_dtypes_and_norms(path, name, dtype, norm):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, (3, 4, 6), dtype), norm=norm))


def test_deprecated_lengths_warn_as_numpy_does(path):
    x = numloom.asarray(signal(numpy, (3, 4), "float64"))
    with pytest.warns(DeprecationWarning, match="`axes` should not be `None`"):
        numloom.fft.fftn(x, s=(3, 4))
    with pytest.warns(DeprecationWarning, match="containing `None` values"):
        got = numloom.fft.fftn(x, s=(None, 6), axes=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = numpy.fft.fftn(x.get(), s=(None, 6), axes=(0, 1))
    numpy.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)


@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), data=st.data())
@settings(max_examples=40, deadline=None)
def test_hypothesis_fftn_and_irfftn(shape, data):
    ndim = len(shape)
    axes = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim))
    s = data.draw(st.lists(st.integers(1, 7), min_size=len(axes), max_size=len(axes)))
    dtype = data.draw(st.sampled_from(DTYPES))
    norm = data.draw(st.sampled_from(NORMS))
    name = data.draw(st.sampled_from(("fftn", "ifftn", "irfftn", "rfftn")))

    def body(xp):
        return getattr(xp.fft, name)(signal(xp, shape, dtype), s, axes, norm)

    same_as_numpy(body)
    if ON_CPU:
        with pytest.MonkeyPatch.context() as patch:
            library = types.SimpleNamespace(transform=cufft.emulate)
            patch.setattr(numloom.fft, "_library", lambda device: library)
            same_as_numpy(body)


# --- out= ---------------------------------------------------------------------------------------

OUTS = [
    ("fft", (4, 6), "complex128", {}),
    ("fft", (4, 6), "complex64", {}),
    ("ifft", (4, 5), "complex128", {"n": 5}),
    ("rfft", (4, 4), "complex128", {}),
    ("irfft", (4, 10), "float64", {}),
    ("ihfft", (4, 4), "complex128", {}),
    ("hfft", (4, 10), "float64", {}),
    ("fftn", (4, 6), "complex128", {}),
    ("ifft2", (4, 6), "complex128", {}),
    ("rfftn", (4, 4), "complex128", {}),
    ("irfftn", (4, 10), "float64", {}),
    ("irfft2", (4, 10), "float64", {}),
    ("fft", (4, 7), "complex128", {}),
    ("fft", (4, 6, 1), "complex128", {}),
    ("fft", (3, 6), "complex128", {}),
    ("fft", (4, 6), "float64", {}),
    ("irfft", (4, 10), "int64", {}),
    ("fftn", (5, 6), "complex128", {"s": (5, 6), "axes": (0, 1)}),
]


@pytest.mark.parametrize(("name", "shape", "dtype", "kwargs"), OUTS)
def test_out(path, name, shape, dtype, kwargs):
    def body(xp):
        out = xp.zeros(shape, dtype)
        got = getattr(xp.fft, name)(signal(xp, (4, 6), "float64"), out=out, **kwargs)
        return got, out, got is out

    same_as_numpy(body)


def test_out_larger_than_the_result_takes_it_broadcast(path):
    def body(xp):
        out = xp.zeros((3, 6), "complex128")
        return xp.fft.fft(signal(xp, (1, 6), "float64"), out=out), out

    same_as_numpy(body)


def test_out_that_is_no_array(path):
    same_as_numpy(lambda xp: xp.fft.fft(signal(xp, (6,), "float64"), out=[0] * 6))


# --- NumPy's errors -----------------------------------------------------------------------------

ERRORS = [
    ("fft", (6,), "float64", {"n": 0}),
    ("ifft", (6,), "float64", {"n": -2}),
    ("irfft", (1,), "complex128", {}),
    ("fft", (6,), "float64", {"axis": 1}),
    ("fft", (6,), "float64", {"n": 4, "axis": 1}),
    ("ifft", (2, 6), "float64", {"n": 4, "axis": -3}),
    ("fft", (6,), "float64", {"axis": 1.0}),
    ("fft", (6,), "float64", {"n": 2.0}),
    ("rfft", (6,), "float64", {"n": 3.5}),
    ("fft", (6,), "float64", {"norm": "sideways"}),
    ("ifft", (6,), "float64", {"norm": "sideways"}),
    ("hfft", (6,), "complex128", {"norm": "sideways"}),
    ("rfft", (6,), "complex128", {}),
    ("rfft", (5,), "complex64", {}),
    ("ihfft", (6,), "complex128", {}),
    ("fft", (), "float64", {}),
    ("fft", (), "float64", {"n": 4}),
    ("fftn", (3, 4), "float64", {"s": (3,), "axes": (0, 1)}),
    ("fftn", (3, 4), "float64", {"axes": (0, 2)}),
    ("fftn", (3, 4), "float64", {"axes": 1}),
    ("rfftn", (3, 4), "float64", {"axes": ()}),
    ("irfftn", (3, 4), "complex128", {"axes": ()}),
    ("fft2", (4,), "float64", {}),
    ("irfft2", (3, 1), "complex128", {}),
    ("fftn", (3, 4), "float64", {"s": (0, 4), "axes": (0, 1)}),
    ("fftn", (3, 4), "float64", {"axes": ()}),
    ("fft", (0, 4), "float64", {}),
    ("fft", (4, 0), "float64", {}),
    ("fftn", (4, 0), "float64", {"s": (4, 3), "axes": (0, 1)}),
    ("irfft", (0, 3), "complex64", {"n": 4}),
]


@pytest.mark.parametrize(("name", "shape", "dtype", "kwargs"), ERRORS)
def test_bad_arguments_and_empty_arrays(path, name, shape, dtype, kwargs):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, shape, dtype), **kwargs))


def test_a_checked_call_is_checked_again_with_arguments_of_other_types(path):
    """A loop's transforms check their arguments once (their checks are kept by shape, dtype
    and arguments); ``n=4.0`` after ``n=4``, equal as keys, still raises NumPy's TypeError."""
    for n in (4, 4.0, True, numpy.int64(4)):
        same_as_numpy(lambda xp, n=n: xp.fft.fft(signal(xp, (8,), "complex128"), n=n))
    for axis in (0, 0.0):
        same_as_numpy(lambda xp, a=axis: xp.fft.rfft(signal(xp, (8,), "float64"), axis=a))
    for n in (True, 2):
        same_as_numpy(lambda xp, n=n: xp.fft.rfft(signal(xp, (8,), "float64"), n=n))


def test_lists_and_numpy_arrays_are_taken(path):
    same_as_numpy(lambda xp: xp.fft.fft([1.0, 2.0, 0.5, -1.0]))
    same_as_numpy(lambda xp: xp.fft.rfft2(numpy.arange(12.0).reshape(3, 4)))


def test_numpy_functions_dispatch_to_numloom(path):
    x = numloom.asarray(signal(numpy, (4, 6), "complex64"))
    got = numpy.fft.fft2(x)
    assert isinstance(got, numloom.ndarray)
    numpy.testing.assert_allclose(got.get(), numpy.fft.fft2(x.get()), rtol=1e-5, atol=1e-4)


# --- frequencies and shifts ---------------------------------------------------------------------


@pytest.mark.parametrize("d", (1.0, 0.1, 3, numpy.float32(2.0), numpy.float64(0.25)))
@pytest.mark.parametrize("n", (1, 2, 5, 8, numpy.int64(9)))
@pytest.mark.parametrize("name", ("fftfreq", "rfftfreq"))
def test_frequencies(name, n, d):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(n, d))


@pytest.mark.parametrize("n", (0, -3, 4.0, "4"))
@pytest.mark.parametrize("name", ("fftfreq", "rfftfreq"))
def test_frequencies_bad_n(name, n):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(n))


SHIFTS = [((7,), None), ((8,), 0), ((3, 4), None), ((3, 4), 1), ((3, 4), (0,)), ((2, 3, 5), (2, 0)),
          ((3, 4), (1, 1)), ((0, 4), None), ((3,), 1), ((3,), 2), ((3, 4), (0, -3))]  # fmt: skip


@pytest.mark.parametrize(("shape", "axes"), SHIFTS)
@pytest.mark.parametrize("name", ("fftshift", "ifftshift"))
def test_shifts(name, shape, axes):
    same_as_numpy(lambda xp: getattr(xp.fft, name)(signal(xp, shape, "int64"), axes))


def test_shifting_frequencies_round_trips():
    same_as_numpy(lambda xp: xp.fft.ifftshift(xp.fft.fftshift(xp.fft.fftfreq(9, 0.5))))


# --- on a GPU -----------------------------------------------------------------------------------


@pytest.mark.skipif(ON_CPU, reason="on the CPU NumPy's FFT runs on numloom's own memory")
def test_on_a_gpu_nothing_falls_back_or_leaves_the_device():
    x = numloom.asarray(signal(numpy, (4, 6), "float32"))
    c = numloom.asarray(signal(numpy, (4, 6), "complex128"))
    out = numloom.zeros((4, 6), "complex128")
    before = dict(numloom.stats()["fallbacks"])
    results = [
        numloom.fft.fft(c), numloom.fft.ifft(x, 8), numloom.fft.rfft(x), numloom.fft.irfft(c),
        numloom.fft.hfft(c), numloom.fft.ihfft(x), numloom.fft.fft2(c), numloom.fft.ifft2(c),
        numloom.fft.fftn(x, axes=(0,)), numloom.fft.ifftn(c), numloom.fft.rfft2(x),
        numloom.fft.irfft2(c), numloom.fft.rfftn(x), numloom.fft.irfftn(c, norm="ortho"),
        numloom.fft.fftfreq(8), numloom.fft.rfftfreq(8), numloom.fft.fftshift(c),
        numloom.fft.ifftshift(x), numloom.fft.fft(c, out=out),
    ]  # fmt: skip
    numloom.sync()
    assert numloom.stats()["fallbacks"] == before
    assert all(r.device == x.device for r in results[:14] + results[16:])
    assert all(r.device != "cpu" for r in results)


@pytest.mark.skipif(ON_CPU, reason="cuFFT plans are made on a GPU only")
def test_plans_dropped_from_the_cache_are_destroyed(monkeypatch):
    monkeypatch.setattr(cufft, "PLANS_KEPT", 2)
    for n in (3, 4, 5, 6, 3):
        x = signal(numpy, (2, n), "complex64")
        numpy.testing.assert_allclose(numloom.fft.fft(numloom.asarray(x)).get(),
                                      numpy.fft.fft(x), rtol=1e-5, atol=1e-5)  # fmt: skip
    assert len(cufft._plans) <= 2

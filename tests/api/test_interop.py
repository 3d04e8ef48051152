"""Sharing memory with other libraries: DLPack (on every device) and the CUDA array interface,
CuPy, PyTorch and JAX (on a GPU)."""

from __future__ import annotations

import gc
import sys

import numpy
import pytest

import numloom as nl
from numloom.api import interop


class _Legacy:
    """Offers only an unversioned DLPack capsule, as older producers do."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,
        lambda a: a.T * 2,
        lambda a: a[1:, ::2],
        lambda a: a[::-1, 1],
        lambda a: (a > 3)[0],
        lambda a: a.astype(numpy.complex64)[2:],
        lambda a: a[0, 0, ...],
    ],
)
@pytest.mark.parametrize("versioned", [True, False])
def test_numpy_reads_numloom_arrays_through_dlpack(make, versioned):
    a = nl.arange(12.0, device="cpu").reshape(3, 4)
    want = make(a.get())
    x = make(a)
    got = numpy.from_dlpack(x if versioned else _Legacy(x))
    numpy.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    if versioned:
        assert not got.flags.writeable  # numloom's buffers are never written in place


def test_exported_memory_lives_while_the_consumer_holds_it():
    a = nl.arange(1000.0, device="cpu") * 3
    got = numpy.from_dlpack(a)
    del a
    gc.collect()
    numpy.testing.assert_array_equal(got, numpy.arange(1000.0) * 3)
    held = len(interop._exported)
    del got
    gc.collect()
    assert len(interop._exported) == held - 1


def test_an_unconsumed_capsule_frees_its_tensor():
    held = len(interop._exported)
    capsule = nl.arange(5.0, device="cpu").__dlpack__()
    assert len(interop._exported) == held + 1
    del capsule
    gc.collect()
    assert len(interop._exported) == held


def test_from_dlpack_of_host_data_and_errors():
    got = nl.from_dlpack(numpy.arange(6, dtype=numpy.int16).reshape(2, 3), device="cpu")
    assert isinstance(got, nl.ndarray) and got.dtype == numpy.int16
    numpy.testing.assert_array_equal(got.get(), numpy.arange(6).reshape(2, 3))
    on_cpu = nl.arange(3.0, device="cpu")
    assert on_cpu.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="numloom cannot export an array on cpu"):
        on_cpu.__dlpack__(dl_device=(2, 0))
    with pytest.raises(AttributeError, match="CPU has no __cuda_array_interface__"):
        on_cpu.__cuda_array_interface__  # noqa: B018


# --- on a GPU --------------------------------------------------------------------------------


def _cuda():
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")
    return nl.device("cuda")


def _pointer(x) -> int:
    return x.__cuda_array_interface__["data"][0]


@pytest.mark.gpu
def test_cupy_round_trip_without_copies():
    cupy = pytest.importorskip("cupy")
    with _cuda():
        a = nl.arange(24.0).reshape(4, 6) * 2
        c = cupy.asarray(a)  # __cuda_array_interface__
        assert c.data.ptr == _pointer(a)
        d = cupy.from_dlpack(a)
        assert d.data.ptr == _pointer(a)
        numpy.testing.assert_array_equal(cupy.asnumpy(c), a.get())
        back = nl.asarray(c * 3)
        e = c * 3
        assert _pointer(nl.asarray(e)) == e.data.ptr
        assert _pointer(nl.from_dlpack(e)) == e.data.ptr
        numpy.testing.assert_array_equal(back.get(), a.get() * 3)
        t = a.T  # a strided view travels as one
        numpy.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(t)), a.get().T)


@pytest.mark.gpu
def test_torch_round_trip_without_copies():
    torch = pytest.importorskip("torch")
    with _cuda():
        a = nl.linspace(0.0, 1.0, 1000, dtype=numpy.float32) ** 2
        t = torch.from_dlpack(a)
        assert t.data_ptr() == _pointer(a)
        u = torch.as_tensor(a, device="cuda")  # __cuda_array_interface__
        assert u.data_ptr() == _pointer(a)
        back = nl.from_dlpack(t * 2)
        numpy.testing.assert_allclose(back.get(), a.get() * 2)
        w = t + 1
        assert _pointer(nl.from_dlpack(w)) == w.data_ptr()
        assert _pointer(nl.asarray(w)) == w.data_ptr()


@pytest.mark.gpu
def test_jax_round_trip_without_copies():
    jax = pytest.importorskip("jax")
    with _cuda():
        a = nl.arange(64, dtype=numpy.float32) + 1
        j = jax.dlpack.from_dlpack(a)
        numpy.testing.assert_array_equal(numpy.asarray(j), a.get())
        k = j * 2
        back = nl.from_dlpack(k)
        assert _pointer(back) == k.unsafe_buffer_pointer()
        numpy.testing.assert_array_equal(back.get(), a.get() * 2)


@pytest.mark.gpu
def test_functions_numloom_lacks_run_in_cupy_on_the_gpu(monkeypatch):
    from numloom.api import fallback

    pytest.importorskip("cupy")
    monkeypatch.setattr(fallback, "_warned", set())
    # (polyfit: a function numloom has no device version of, handed to CuPy as the ones in
    # CUPY_FUNCTIONS without one are)
    monkeypatch.setattr(fallback, "CUPY_FUNCTIONS", fallback.CUPY_FUNCTIONS | {"polyfit"})
    with _cuda():
        host = numpy.random.default_rng(3).random(1000)
        x = nl.asarray(host) * 2
        y = x * 3 + 1
        before = nl.stats()["fallbacks"].get("polyfit", 0)
        with pytest.warns(nl.NumloomFallbackWarning, match="runs through CuPy on the GPU"):
            got = nl.polyfit(x, y, 2)
        assert nl.stats()["fallbacks"]["polyfit"] == before + 1
        assert isinstance(got, nl.ndarray) and got.device.startswith("cuda")
        want = numpy.polyfit(host * 2, host * 6 + 1, 2)
        numpy.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-9)


# --- numpy.asarray(x) is x's memory: x's writes reach it, as NumPy's views see them --------------


cpu_only = pytest.mark.skipif(nl.get_device() != "cpu",
                              reason="a GPU array's numpy.asarray is a host copy, as CuPy's")


@cpu_only
def test_a_library_keeping_numpy_asarray_sees_later_writes():
    """matplotlib's Path keeps ``np.asarray(vertices)``; an animation then writes the array
    (rougier's boids): every kind of write must reach what the library holds."""
    from matplotlib.path import Path

    def run(xp):
        v = xp.zeros((4, 2))
        path = Path(vertices=v)
        seen = []
        for write in (lambda: v.__setitem__(Ellipsis, 1.0), lambda: v.__iadd__(1.0),
                      lambda: v.__setitem__((0, 0), 10.0), lambda: xp.put(v, [7], -3.0),
                      lambda: xp.copyto(v[1], 5.0), lambda: v.__imul__(xp.arange(2.0) + 1)):
            write()
            seen.append(path.vertices.tolist())
        return seen

    assert run(nl) == run(numpy)


@cpu_only
def test_writes_reach_an_export_and_leave_earlier_copies_and_readers_alone():
    a = nl.arange(6.0) * 1
    copy = a.copy()  # (made before the export: its value is not the exported memory)
    h = numpy.asarray(a)
    doubled = a * 2  # pending, reads the value before the writes
    later = a.copy()
    a[0] = 10.0
    a[1:3] += 1
    assert h.tolist() == [10, 2, 3, 3, 4, 5] == a.tolist()
    assert copy.tolist() == later.tolist() == [0, 1, 2, 3, 4, 5]
    assert doubled.tolist() == [0, 2, 4, 6, 8, 10]
    assert h.flags.writeable  # (numpy.asarray of a NumPy array is that array: writable)


@cpu_only
def test_writes_into_an_export_reach_the_array_and_its_views_not_copies_or_earlier_work():
    """``numpy.asarray(x)`` is x's memory, as it is a NumPy array's: a library writing it
    (SciPy's ``output=``, a Cython memoryview) writes x. Work traced before the export and
    copies made before or after keep their values."""
    for xp in (nl, numpy):
        a = xp.arange(6.0) * 1
        row = a[2:5]
        before = a.copy()
        doubled = a * 2  # pending under numloom: reads the values before the write
        h = numpy.asarray(a)
        after = a.copy()
        h[0] = 10.0
        h[3] += 1
        assert a.tolist() == [10, 1, 2, 4, 4, 5] and row.tolist() == [2, 4, 4]
        assert before.tolist() == after.tolist() == [0, 1, 2, 3, 4, 5]
        assert doubled.tolist() == [0, 2, 4, 6, 8, 10]
        assert (a * 1).tolist() == [10, 1, 2, 4, 4, 5]
    ro = nl.broadcast_to(nl.arange(3.0), (2, 3))
    assert not numpy.asarray(ro).flags.writeable  # (read-only where x is, as NumPy's)
    frozen = nl.arange(3.0)
    frozen.flags.writeable = False
    assert not numpy.asarray(frozen).flags.writeable


def test_a_gpu_arrays_export_is_a_read_only_copy_and_copy_true_a_writable_one():
    """A write into ``numpy.asarray(x)`` of a GPU array could not reach the device: it raises
    NumPy's error instead of being lost. ``numpy.array(x)`` is the caller's own copy."""
    x = nl.arange(4.0) * 1
    h = numpy.asarray(x)
    if x.device != "cpu":
        with pytest.raises(ValueError, match="read-only"):
            h[0] = 5.0
    else:
        h[0] = 5.0
        assert x[0] == 5.0
    c = numpy.array(x)
    c[1] = 7.0
    assert x[1] == 1.0 and c.flags.writeable


@cpu_only
def test_memory_from_dlpack_is_left_as_it_was():
    host = numpy.arange(4.0)
    a = nl.from_dlpack(host, copy=False)
    a[0] = 9.0
    assert host[0] == 0.0 and a[0] == 9.0


def test_the_buffer_protocol_gives_the_arrays_memory():
    """``memoryview(x)``, ``bytes(x)`` and PIL's ``frombuffer`` (scientific-python-lectures'
    pilbuffer exercise) read a numloom array as they read a NumPy array."""
    from numloom.core import array

    if array._speedups is None and sys.version_info < (3, 12):
        pytest.skip("a Python class has the buffer protocol from Python 3.12 on")
    x = nl.arange(6.0).reshape(2, 3) * 2
    w = numpy.arange(6.0).reshape(2, 3) * 2
    m = memoryview(x)
    cpu = x.device == "cpu"  # (a GPU array's buffer is of a host copy)
    assert (m.format, m.shape, m.readonly) == ("d", (2, 3), not cpu)
    assert bytes(x) == bytes(w) and bytes(x[:, ::2]) == bytes(w[:, ::2])
    x[0, 0] = 7.0  # on the CPU the memory is x's: its writes reach the view
    assert m[0, 0] == (7.0 if cpu else 0.0)
    for dtype in ("bool", "int8", "uint16", "float16", "float32", "complex64"):
        h = numpy.asarray(nl.arange(4).astype(dtype))
        assert h.dtype == dtype and h.tolist() == numpy.arange(4).astype(dtype).tolist()
    Image = pytest.importorskip("PIL.Image")
    img = nl.zeros((4, 5), dtype=numpy.uint8) + 200
    assert Image.frombuffer("L", (5, 4), img, "raw", "L", 0, 1).getpixel((1, 2)) == 200


@cpu_only
def test_the_array_interface_gives_numpys_byte_bounds():
    """rougier's ``find_index`` locates a view in its base with ``byte_bounds``, which reads
    ``__array_interface__``: the view's offset and extent are NumPy's."""
    from numpy.lib.array_utils import byte_bounds

    def bounds(xp):
        a = xp.arange(24.0).reshape(4, 6)
        base = byte_bounds(a)[0]
        return [tuple(b - base for b in byte_bounds(v)) for v in (a, a[1:, ::2], a[:, 2], a.T)]

    assert bounds(nl) == bounds(numpy)
    a = nl.arange(3.0)
    face = a.__array_interface__
    assert (face["shape"], face["typestr"], face["strides"]) == ((3,), "<f8", None)


@cpu_only
def test_ctypes_gives_the_memory_to_c():
    import ctypes

    a = nl.arange(4.0) * 2
    c = a.ctypes
    assert c.data_as(ctypes.POINTER(ctypes.c_double))[3] == 6.0 and tuple(c.shape) == (4,)
    assert c.data == numpy.asarray(a).ctypes.data  # (a's memory itself, not a copy)


def _cluster_report(xp, pd):
    """TheAlgorithms' k-means report: a groupby aggregation whose functions call the array
    namespace on each group's Series."""
    frame = pd.DataFrame({"cluster": [1, 1, 2, 2, 2], "v": [1.0, 2.0, numpy.nan, 4.0, 8.0]})
    return frame.groupby("cluster")["v"].agg([
        ("mean_with_zeros", lambda x: xp.mean(xp.nan_to_num(x))),
        ("largest", lambda x: xp.max(xp.asarray(x))),
        ("spread", lambda x: xp.std(xp.array(x.dropna()))),
        ("mean", "mean"),
    ])  # fmt: skip


def test_pandas_aggregations_over_numloom_functions_give_numpys_frame():
    pd = pytest.importorskip("pandas")
    if nl.get_device() != "cpu":  # (the Series' data goes to the GPU: a mean there is a
        pytest.skip("device value until read, a 0-d array in pandas' object column")
    want, got = _cluster_report(numpy, pd), _cluster_report(nl, pd)
    assert list(got.dtypes) == list(want.dtypes) == [numpy.dtype(float)] * 4
    assert got.to_string() == want.to_string()
    series = pd.Series([1.0, 2.5, 4.0])
    assert type(nl.mean(nl.nan_to_num(series))) is numpy.float64
    assert type(nl.sum(nl.asarray(series))) is numpy.float64


@cpu_only
def test_pandas_takes_a_copy_it_may_write_as_of_numpys_arrays():
    """pandas copies a NumPy array it is given and writes what it holds (``s[2] = 42``); what
    numloom's ``__array__`` gives pandas is such a copy: writable, apart from the array."""
    pd = pytest.importorskip("pandas")

    def run(xp):
        a = xp.arange(5.0)
        s = pd.Series(a)
        s[2] = 42
        labelled = pd.Series(xp.ones(4), index=list("wxyz"))
        labelled[["x", "y"]] = numpy.nan
        frame = pd.DataFrame(xp.zeros((2, 3)), columns=list("abc"))
        frame.iloc[0, 0] = 7.0
        a[0] = 99.0  # (the Series has its own copy)
        return s.tolist(), labelled.isna().sum(), frame.values.tolist(), float(a[0])

    assert run(nl) == run(numpy)


@pytest.mark.parametrize("xp", [numpy, nl])
def test_a_writable_buffer_request_writes_the_array(xp):
    """``readinto`` (and Cython's memoryviews) ask for a writable buffer: what they write is
    x's values, on a GPU too (its host copy goes back to the device at the buffer's release)."""
    import io

    x = xp.zeros(5)
    row = x[1:3]
    assert io.BytesIO(numpy.arange(4.0).tobytes()).readinto(x) == 32
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0] and row.tolist() == [1.0, 2.0]
    frozen = xp.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises((TypeError, BufferError, ValueError)):
        io.BytesIO(b"\0" * 16).readinto(frozen)

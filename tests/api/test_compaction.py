"""Loops whose arrays shrink with a boolean mask each step (data-dependent shapes): NumPy's
results, and sizes that change every step compile nothing new."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy
import pytest
from conftest import assert_same

import numloom as nl

_spec = importlib.util.spec_from_file_location(
    "compaction", pathlib.Path(__file__).parents[2] / "benchmarks" / "compaction.py"
)
compaction = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compaction)


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple)
                    else (want,)):  # fmt: skip
        assert_same(numpy.asarray(g), numpy.asarray(w))


@pytest.mark.parametrize("n, itermax", [(30, 20), (64, 40)])
def test_the_rougier_mandelbrot_gives_numpys_result(n, itermax):
    args = (-2.25, 0.75, -1.25, 1.25, n, n, itermax)
    _same(compaction.mandelbrot_rougier(nl, *args), compaction.mandelbrot_rougier(numpy, *args))


@pytest.mark.parametrize("n", [1, 17, 80])
def test_escape_counts_give_numpys_result(n):
    _same(compaction.escape_counts(nl, n, 30), compaction.escape_counts(numpy, n, 30))


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
@pytest.mark.parametrize("mask", ["some", "none", "all", "2-d"])
def test_compaction_steps_of_every_dtype(dtype, mask):
    def run(xp):
        x = xp.asarray((numpy.arange(48) % 7).astype(dtype).reshape(6, 8))
        out = []
        for step in range(4):
            if mask == "2-d":
                keep = (x != 0) if step % 2 else xp.ones(x.shape, bool)
                flat = x[keep]
                out.append(flat)
                x = xp.concatenate([flat, flat])[: x.size].reshape(x.shape)
            else:
                v = x.ravel()
                keep = {"some": v != 1, "none": v != v, "all": v == v}[mask]
                x = v[keep].reshape(-1, 1) if v[keep].size else v[:0].reshape(0, 1)
                out.append(x)
        return out

    for g, w in zip(run(nl), run(numpy)):
        _same(g, w)


def test_new_sizes_of_a_compaction_loop_compile_nothing():
    compaction.escape_counts(nl, 40, 20)  # every kernel the loop needs, compiled once
    before = nl.stats()["kernels_compiled"]
    compaction.escape_counts(nl, 57, 20)  # other sizes at every step
    assert nl.stats()["kernels_compiled"] == before


# --- the CPU's compaction and advanced writes, run by NumPy on the evaluated buffers -------------

MASKED = {
    "1-d": (lambda xp: xp.arange(12.0) * 3, lambda xp, a: (a % 2) == 0),
    "2-d mask": (lambda xp: xp.arange(12).reshape(3, 4), lambda xp, a: a > 4),
    "row mask": (lambda xp: xp.arange(12).reshape(3, 4), lambda xp, a: xp.asarray([True, False, True])),
    "transposed": (lambda xp: xp.arange(12.0).reshape(3, 4).T, lambda xp, a: a < 6),
    "host mask": (lambda xp: xp.arange(5) + 1, lambda xp, a: numpy.array([1, 0, 1, 1, 0], bool)),
    "0-d true": (lambda xp: xp.arange(3.0) + 1, lambda xp, a: xp.asarray(True)),
    "empty": (lambda xp: xp.arange(4) * 2, lambda xp, a: a > 100),
}  # fmt: skip


@pytest.mark.parametrize("name", list(MASKED))
def test_mask_compaction_is_numpys(name):
    make, mask = MASKED[name]
    a, want_a = make(nl), make(numpy)
    got, want = a[mask(nl, a)], want_a[mask(numpy, want_a)]
    _same(got, want)
    got[...] = -1  # the result is a copy: the source keeps its value
    _same(a, want_a)


def test_a_compacted_array_keeps_its_value_when_the_source_changes():
    a = nl.arange(6.0)
    picked = a[a > 2]
    a[nl.asarray([3, 4])] = 0
    a += 1
    _same(picked, numpy.array([3.0, 4.0, 5.0]))
    _same(a, numpy.array([1.0, 2.0, 3.0, 1.0, 1.0, 6.0]))


def test_a_mask_of_the_wrong_shape_raises_numpys_error():
    a = nl.arange(6.0)
    with pytest.raises(IndexError, match="boolean index did not match indexed array"):
        a[nl.ones(4, bool)]
    _same(a, numpy.arange(6.0))


def test_advanced_writes_reach_views_and_spare_copies():
    a = nl.zeros((3, 4))
    row, snapshot, before = a[1], a.copy(), numpy.asarray(a)
    a[nl.asarray([1, 1]), nl.asarray([0, 3])] = nl.asarray([5.0, 6.0])
    a[[0], [2]] = 7
    want = numpy.zeros((3, 4))
    want[[1, 1], [0, 3]] = [5.0, 6.0]
    want[[0], [2]] = 7
    _same(a, want)
    _same(row, want[1])
    _same(snapshot, numpy.zeros((3, 4)))
    # (on the CPU numpy.asarray(a) is a's memory, which sees a's writes; a GPU's is a copy)
    _same(before, want if a.device == "cpu" else numpy.zeros((3, 4)))


def test_a_bad_advanced_write_raises_and_changes_nothing():
    a = nl.arange(5.0)
    a.sum()  # evaluated
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
        a[nl.asarray([1, 9])] = 3.0
    with pytest.raises(ValueError, match="shape mismatch"):
        a[[0, 1, 2]] = nl.asarray([1.0, 2.0])
    _same(a, numpy.arange(5.0))


def test_repeated_indices_and_casts_as_numpy_writes_them():
    for xp in (nl, numpy):
        a = xp.zeros(4, dtype=xp.int16)
        a[xp.asarray([1, 1, 2])] = xp.asarray([1.9, 2.7, -3.2])
        if xp is nl:
            got = a
        else:
            want = a
    _same(got, want)


def test_a_jitted_compaction_follows_its_inputs():
    @nl.jit
    def keep_big(x, limit):
        return x[x > limit] * 2

    for n in (10, 25, 25, 40):
        host = numpy.linspace(0, 1, n)
        _same(keep_big(nl.asarray(host), 0.5), host[host > 0.5] * 2)


def test_a_chain_of_live_elementwise_results_is_one_kernel():
    x = nl.asarray(numpy.linspace(-1, 1, 50))
    nl.sync()
    before = nl.stats()["kernels_launched"]
    y = x * x + 1
    z = nl.sqrt(y) - x
    w = z > 0.5
    nl.sync()
    assert nl.stats()["kernels_launched"] - before == 1
    h = numpy.linspace(-1, 1, 50)
    _same(w, numpy.sqrt(h * h + 1) - h > 0.5)
    _same(y, h * h + 1)


@pytest.mark.parametrize("shape", [(0,), (1,), (2047,), (2048,), (2049,), (1_000_003,),
                                   (3, 700, 5), (64, 0)])  # fmt: skip
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_true_positions_are_numpys_across_tiles(shape, density):
    """Masks cross the device's tiles of 2048 elements at every boundary; ``a[mask]``,
    ``nonzero``, ``flatnonzero`` and ``argwhere`` agree with NumPy's."""
    rng = numpy.random.default_rng(sum(shape) + int(density * 100))
    host_mask = rng.random(shape) < density
    values = rng.random(shape).astype(numpy.float32)
    mask, a = nl.asarray(host_mask), nl.asarray(values)
    assert_same(a[mask].get(), values[host_mask])
    assert_same(nl.nonzero(mask), numpy.nonzero(host_mask))
    assert_same(nl.flatnonzero(mask).get(), numpy.flatnonzero(host_mask))
    assert_same(nl.argwhere(mask).get(), numpy.argwhere(host_mask))
    assert_same(nl.nonzero(a > 0.5), numpy.nonzero(values > 0.5))


def test_masks_that_are_views_of_other_layouts_select_as_numpy():
    host = numpy.arange(4000).reshape(40, 100) % 3 == 0
    values = numpy.arange(4000.0).reshape(40, 100)
    mask, a = nl.asarray(host), nl.asarray(values)
    assert_same(a.T[mask.T].get(), values.T[host.T])
    assert_same(a[::2][mask[1::2]].get(), values[::2][host[1::2]])
    assert_same(a[:, 7][mask[:, 7]].get(), values[:, 7][host[:, 7]])
    as_bytes = nl.asarray(host.view(numpy.uint8))
    assert_same(nl.flatnonzero(as_bytes).get(), numpy.flatnonzero(host))


def test_one_mask_compacts_several_arrays_with_one_sync_on_a_gpu():
    """On a GPU the positions stay there: compacting three arrays with one mask copies 8
    bytes to the host (the count), once; a mask changed in place is looked at again."""
    if nl.get_device() == "cpu":
        pytest.skip("the CPU compacts with NumPy on its own buffers")
    host = numpy.arange(100_000) % 7 != 0
    x, y, z = (nl.asarray(numpy.arange(100_000.0) * k) for k in (1, 2, 3))
    mask = nl.asarray(host)
    nl.sync()
    before = nl.stats()
    picked = [x[mask], y[mask], z[mask]]
    nl.sync()
    after = nl.stats()
    assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == 8
    assert after["device_compactions"] - before["device_compactions"] == 1
    for k, p in enumerate(picked, 1):
        assert_same(p.get(), (numpy.arange(100_000.0) * k)[host])
    nl.logical_not(mask, out=mask)
    assert_same(x[mask].get(), numpy.arange(100_000.0)[~host])


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int8", "bool"])
def test_the_last_of_repeated_positions_stays_at_any_size(dtype):
    """``a[idx] = values`` with positions repeated many times, from many threads or blocks:
    the last value of each position stays, as in NumPy."""
    rng = numpy.random.default_rng(7)
    target = (rng.random(5000) * 100).astype(dtype)
    idx = rng.integers(0, 5000, 300_000)
    values = (rng.random(300_000) * 100).astype(dtype)
    want = target.copy()
    want[idx] = values
    a = nl.asarray(target) + nl.zeros((), dtype)  # pending: the write is compiled
    a[nl.asarray(idx)] = nl.asarray(values)
    assert_same(a.get(), want)
    b = nl.asarray(target) + nl.zeros((), dtype)
    b[nl.asarray(idx) % 7] = values[0]
    want = target.copy()
    want[idx % 7] = values[0]
    assert_same(b.get(), want)


def test_a_loop_of_advanced_writes_into_fresh_zeros_stores_each_now():
    # the first write into a fresh zeros is recorded (it fuses with the fill); the next ones
    # store into the evaluated buffer, as NumPy does, not as a chain of scatter kernels
    rng = numpy.random.default_rng(3)
    rows, cols = rng.integers(0, 100, (2, 40, 25))  # (a zeros larger than an eager one)
    # (on the CPU, whatever the default device: a GPU launches a kernel per write)
    keys = [(nl.asarray(r, device="cpu"), nl.asarray(c, device="cpu")) for r, c in zip(rows, cols)]
    nl.sync()
    before = nl.stats()["kernels_launched"]
    got = nl.zeros((100, 100), numpy.uint32, device="cpu")
    want = numpy.zeros((100, 100), numpy.uint32)
    for i, (r, c) in enumerate(keys):
        got[r, c] = i + 1
        want[rows[i], cols[i]] = i + 1
    nl.sync()
    assert nl.stats()["kernels_launched"] - before <= 5  # (not one per write)
    _same(got, want)


def test_an_advanced_write_whose_cast_warns_warns_at_the_users_line():
    a = nl.zeros(3, numpy.int32)
    a.sum()  # evaluated
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast") as caught:
        a[nl.asarray([0, 2])] = nl.asarray([numpy.nan, 2.0])
        nl.sync()  # (a GPU's write is evaluated here, its warning given for the line above)
    assert caught[0].filename == __file__
    want = numpy.zeros(3, numpy.int32)
    with numpy.errstate(invalid="ignore"):
        want[[0, 2]] = numpy.array([numpy.nan, 2.0])
    _same(a, want)

"""The CUDA backend: cuBLAS call planning and plan graphs (on any machine), CUDA graphs, cuBLAS,
memory and errors (on a GPU: tests marked ``gpu`` run when CUDA is usable)."""

from __future__ import annotations

import collections
import itertools
import os
import re
import sys
import warnings
from dataclasses import replace

import numpy
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import numloom as nl
from numloom.backends.cublas import Operand, emulate, plan_gemm
from numloom.compile.blas import blas_readable

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import workloads as W  # noqa: E402

RNG = numpy.random.default_rng(7)


def _operand(x, base):
    """An Operand (element offset, shape, strides) for NumPy view ``x`` of flat ``base``."""
    offset = x.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return Operand(offset // x.itemsize, x.shape, tuple(s // x.itemsize for s in x.strides))


def _views(batch, rows, cols, transposed, base):
    """A (batch..., rows, cols) view of ``base``: C-ordered, or the transpose of C-ordered."""
    n = int(numpy.prod(batch + (rows, cols)))
    if not transposed:
        return base[:n].reshape(batch + (rows, cols))
    return numpy.swapaxes(base[:n].reshape(batch + (cols, rows)), -1, -2)


@pytest.mark.parametrize("m, k, n", [(3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (1, 1, 1)])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3), (1, 3)])
@pytest.mark.parametrize("ta, tb", list(itertools.product([False, True], repeat=2)))
def test_gemm_plan_computes_row_major_matmul(m, k, n, batch, ta, tb):
    a_base, b_base = RNG.standard_normal(200), RNG.standard_normal(200)
    a, b = _views(batch, m, k, ta, a_base), _views(batch, k, n, tb, b_base)
    gemm = plan_gemm(_operand(a, a_base), _operand(b, b_base), batch + (m, n))
    out = numpy.zeros(int(numpy.prod(batch + (m, n))))
    emulate(gemm, b_base, a_base, out)
    numpy.testing.assert_allclose(out.reshape(batch + (m, n)), a @ b, rtol=1e-12)


def test_gemm_plan_broadcast_and_uneven_batches():
    a_base, b_base = RNG.standard_normal(200), RNG.standard_normal(200)
    a = numpy.broadcast_to(a_base[:12].reshape(3, 4), (5, 3, 4))  # batch stride 0
    b = b_base[:40].reshape(5, 4, 2)
    gemm = plan_gemm(_operand(a, a_base), _operand(b, b_base), (5, 3, 2))
    assert gemm.batch == 5 and gemm.stride_second == 0
    out = numpy.zeros(30)
    emulate(gemm, b_base, a_base, out)
    numpy.testing.assert_allclose(out.reshape(5, 3, 2), a @ b)
    a = a_base[:72].reshape(2, 3, 3, 4)[:, ::2]  # batch axes that do not collapse
    b = numpy.broadcast_to(b_base[:8].reshape(4, 2), (2, 2, 4, 2))
    gemm = plan_gemm(_operand(a, a_base), _operand(b, b_base), (2, 2, 3, 2))
    assert (gemm.batch, len(gemm.batch_offsets)) == (2, 2)
    out = numpy.zeros(24)
    emulate(gemm, b_base, a_base, out)
    numpy.testing.assert_allclose(out.reshape(2, 2, 3, 2), a @ b)


def test_blas_reads_transposes_but_not_other_strides():
    assert blas_readable((4, 3), (3, 1)) and blas_readable((4, 3), (1, 4))
    assert not blas_readable((4, 3), (6, 2))  # every other column
    assert not blas_readable((4,), (1,))


def test_matmul_of_a_transpose_reads_the_buffer_in_place():
    w = nl.asarray(RNG.standard_normal((6, 5)).astype(numpy.float32))
    x = nl.asarray(RNG.standard_normal(6).astype(numpy.float32))
    y = w.T.dot(nl.maximum(x, 0))
    plan = nl.explain(y)
    (library,) = [k for k in plan.kernels if k.kind == "library"]
    assert any(n is w._storage.version for n in library.inputs)  # no copy of w.T
    numpy.testing.assert_allclose(y.get(), w.get().T @ numpy.maximum(x.get(), 0), rtol=1e-5)


def test_independent_chains_are_independent_in_the_plan():
    a = nl.asarray(RNG.random((64, 64)))
    b = nl.asarray(RNG.random(1000))
    left = (a * 2).sum(axis=0)  # a reduction, then work on its result
    left2 = nl.exp(left) + left[::-1]
    right = nl.cumsum(b * 3)  # a scan chain that shares nothing with the left one
    plan = nl.explain(left2, right)
    deps = plan.dependencies()
    producers = {}
    for i, j in deps:
        producers.setdefault(j, set()).add(i)

    def ancestors(j):
        found = set(producers.get(j, ()))
        for i in list(found):
            found |= ancestors(i)
        return found

    outputs = {o: j for j, k in enumerate(plan.kernels) for o in map(id, k.outputs)}
    left_k, right_k = outputs[id(left2._storage.version)], outputs[id(right._storage.version)]
    assert left_k != right_k
    assert left_k not in ancestors(right_k) and right_k not in ancestors(left_k)
    assert ancestors(left_k)  # the left chain has a kernel before its last one


def test_flag_reads_left_for_a_later_wait_report_oldest_first(monkeypatch):
    """The bookkeeping of ``cuda_launch._FlagReads`` with a stand-in device: an evaluation
    that starts at its writes, under states that at most warn, leaves its read to the device's
    next wait; that wait reads once and reruns every waiting segment, oldest first; a state
    that raises, an underflow rerun or held inputs past the bound read at once; memory that
    runs out reads them (their inputs go back to the pool) before the allocation is retried."""
    import ctypes
    import types

    from numloom.backends import cuda_device, cuda_launch, cuda_memory
    from numloom.core import realize
    from numloom.core.dag import toposort

    x = nl.asarray(numpy.arange(4.0), device="cpu")  # (made before the device is stood in for)
    word = ctypes.c_int64(0)
    waits = []
    state = types.SimpleNamespace(
        deferred=[], deferred_bytes=0, fp_words=((ctypes.addressof(word), 0), (0, 0)),
        stream=types.SimpleNamespace(sync=lambda: waits.append(1)))
    monkeypatch.setattr(cuda_launch, "_get", lambda device: state)
    monkeypatch.setattr(cuda_device, "_devices", {"cuda:0": state})
    monkeypatch.setattr(cuda_launch, "HOLD_BYTES", 1 << 30)  # (else a part of the GPU's memory)
    reports = []
    monkeypatch.setattr(cuda_launch, "_report_fp",
                        lambda program, segment, order, kept, device: reports.append(
                            (program.name, segment, sorted(kept))))  # fmt: skip

    def evaluation(name, make, rerun=False, starting=True, held=8):
        node = make()._node()
        order = toposort([node])
        step = types.SimpleNamespace(inputs=(0,), outputs=(len(order) - 1,), in_graph=False,
                                     nodes=tuple(range(len(order))))  # fmt: skip
        program = types.SimpleNamespace(name=name, steps=(step,))
        flags = cuda_launch._FlagReads(program, order, "cuda:0")
        monkeypatch.setattr(realize, "STARTING", [starting])
        monkeypatch.setattr(cuda_launch, "STARTING", realize.STARTING)
        flags.add((0,), rerun, {0: types.SimpleNamespace(held=held)})
        flags.finish()

    evaluation("a", lambda: x / 3)
    evaluation("b", lambda: x * 2)
    assert waits == [] and len(state.deferred) == 2  # left for the next wait
    word.value = 1  # a kernel found a value that is not finite
    evaluation("c", lambda: x + 1, starting=False)  # an evaluation a sync asked for
    assert len(waits) == 1 and word.value == 0 and state.deferred == []  # one wait
    assert [r[0] for r in reports] == ["a", "b", "c"]  # all of them, oldest first
    reports.clear()
    evaluation("d", lambda: x - 1)
    cuda_launch.read_deferred("cuda:0")  # a sync, a copy to the host, an export
    assert len(waits) == 2 and reports == []  # the word was clear: nothing ran again
    with numpy.errstate(over="raise"):
        evaluation("e", lambda: x * 5)
    evaluation("f", lambda: x * 6, rerun=True)
    evaluation("g", lambda: x * 7, held=2 << 30)
    assert len(waits) == 5 and state.deferred == []  # each read at once
    evaluation("h", lambda: x * 8)
    calls = []

    class Device:
        def allocate(self, nbytes, stream=None):
            calls.append(len(state.deferred))
            if len(calls) == 1:
                raise MemoryError("out of memory")
            return "block"

    state.device = Device()
    assert cuda_memory._allocate(state, 64) == "block"
    assert calls == [1, 0]  # the retry found the deferred reads done


# --- on a GPU --------------------------------------------------------------------------------


gpu = pytest.mark.gpu


def _on_cuda():
    from numloom.core.device import cuda_problem

    if cuda_problem() is not None:
        pytest.skip(f"CUDA is not usable here: {cuda_problem()}")
    return nl.device("cuda")


def flag_waits(monkeypatch) -> list:
    """A list that gets, at each wait for the device to read the floating-point flag word
    (``cuda_launch._FlagReads.read`` with something to read), the number of evaluations whose
    reads were left for it."""
    from numloom.backends import cuda_launch
    from numloom.backends.cuda_device import _get

    waits = []
    read = cuda_launch._FlagReads.read

    def counted(self):
        if self.pending or _get(self.device).deferred:
            waits.append(len(_get(self.device).deferred))
        read(self)

    monkeypatch.setattr(cuda_launch._FlagReads, "read", counted)
    return waits


@gpu
def test_uploads_go_through_page_locked_buffers_kept_once_their_copies_ran():
    """A small table (a random stream's jumps) goes to the device in stream order without a
    wait: its bytes are staged in page-locked memory at the call (the host array may change
    at once), and the staging buffer serves the next upload of its size once its copy ran."""
    from numloom.backends import cuda_memory
    from numloom.core.realize import Buffer

    with _on_cuda():
        device = nl.get_device()
        host = numpy.arange(3000, dtype=numpy.uint64)
        first = cuda_memory.upload(host, device)
        host[:] = 7  # (after the call: the copy has its bytes already)
        second = cuda_memory.upload(host, device)
        nl.sync()
        numpy.testing.assert_array_equal(cuda_memory.to_host(Buffer(first, device)),
                                         numpy.arange(3000))  # fmt: skip
        numpy.testing.assert_array_equal(cuda_memory.to_host(Buffer(second, device)), 7)
        third = cuda_memory.upload(host + 1, device)  # (both copies ran: their buffers kept)
        assert len(cuda_memory._staging_free[(device, host.nbytes)]) == 1
        numpy.testing.assert_array_equal(cuda_memory.to_host(Buffer(third, device)), 8)
        rng = nl.random.default_rng(3)
        draws = [nl.random.default_rng(seed).random(5000) for seed in range(20)]
        want = [numpy.random.default_rng(seed).random(5000) for seed in range(20)]
        for got, expected in zip(draws, want):  # (each seed's jumps uploaded without a wait)
            numpy.testing.assert_array_equal(got.get(), expected)
        assert rng.random(3).shape == (3,)


@gpu
def test_a_loop_of_jacobi_sweeps_replays_one_graph():
    with _on_cuda():
        host = RNG.random((130, 130))
        grid = nl.asarray(host)
        for _ in range(3):  # the graph, and its instances for the two blocks the grid takes
            W.jacobi(nl, grid, 1)
            nl.sync()
        before = nl.stats()
        for _ in range(100):
            W.jacobi(nl, grid, 1)
            nl.sync()
        after = nl.stats()
        assert after["kernels_compiled"] == before["kernels_compiled"]
        assert after["graphs_built"] == before["graphs_built"]
        assert after["graphs_launched"] - before["graphs_launched"] == 100
        assert after["graph_updates"] == before["graph_updates"]  # each sweep's pointers known
        numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 103), rtol=1e-12)


@gpu
def test_large_sweeps_start_at_their_writes_and_replay_one_graph(monkeypatch):
    from numloom.core import config

    with _on_cuda():
        host = RNG.random((1100, 1100)).astype(numpy.float32)
        monkeypatch.setattr(config, "START_BYTES", 2 * host[1:-1, 1:-1].nbytes)  # 2 sweeps
        grid = nl.asarray(host)
        W.jacobi(nl, grid, 6)
        nl.sync()
        before = nl.stats()
        W.jacobi(nl, grid, 20)
        during = nl.stats()
        assert during["plans_evaluated"] - before["plans_evaluated"] == 10  # before the sync
        assert during["graphs_launched"] - before["graphs_launched"] == 10
        assert during["graphs_built"] == before["graphs_built"]
        assert during["kernels_compiled"] == before["kernels_compiled"]
        numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 26), rtol=1e-5)


@gpu
def test_started_sweeps_leave_their_flag_read_to_the_sync(monkeypatch):
    """Sweeps that start at their writes (under NumPy's default error state) do not wait for
    the device to read the floating-point flag word: the reads wait for the sync, which reads
    once for all of them, so the GPU computes while Python traces the next sweeps."""
    from numloom.core import config

    waits = flag_waits(monkeypatch)
    with _on_cuda():
        host = RNG.random((600, 600))
        monkeypatch.setattr(config, "START_BYTES", 2 * host[1:-1, 1:-1].nbytes)  # 2 sweeps
        grid = nl.asarray(host)
        nl.sync()
        before = nl.stats()["plans_evaluated"]
        W.jacobi(nl, grid, 10)
        assert nl.stats()["plans_evaluated"] - before == 5 and waits == []
        nl.sync()
        assert waits == [5]  # one wait, for the five evaluations
        numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 10), rtol=1e-12)
        waits.clear()
        with numpy.errstate(over="raise"):  # a state that raises: read at the evaluation
            W.jacobi(nl, grid, 4)
        assert waits == [0, 0]


@gpu
@pytest.mark.parametrize("read", ["sync", "get", "element", "export"])
def test_warnings_of_started_writes_come_out_at_the_next_wait(monkeypatch, read):
    """A write that started before the sync and overflowed warns as NumPy does, at the user's
    line, by the time the program sees a value (a sync, a copy to the host, an element, an
    export to another library), and only once."""
    from numloom.core import config

    def steps(xp, a):
        for _ in range(3):
            a[:] = a * 1e100  # overflows at the third step
        return a

    with _on_cuda():
        host = numpy.full((300, 300), 1e100)
        monkeypatch.setattr(config, "START_BYTES", host.nbytes)  # each write starts
        grid = nl.asarray(host)
        nl.sync()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            steps(nl, grid)
            if read == "sync":
                nl.sync()
            elif read == "get":
                grid.get()
            elif read == "element":
                float(grid[0, 0])
            else:
                assert grid.__cuda_array_interface__["data"][0]
        with warnings.catch_warnings(record=True) as expected:
            warnings.simplefilter("always")
            want = steps(numpy, host.copy())
        assert [str(w.message) for w in caught] == [str(w.message) for w in expected]
        assert {w.filename for w in caught} == {__file__}
        numpy.testing.assert_array_equal(grid.get(), want)


@gpu
@pytest.mark.parametrize(
    ("shape", "program"),
    [
        ((70_001, 40), lambda xp, a: a * 2 + a[::-1]),  # many short rows
        ((33, 1000), lambda xp, a: xp.sqrt(a[:, ::-1]) - a),
        ((6, 7, 300), lambda xp, a: a.transpose(1, 0, 2)[:, ::2] * 3 + 1),
        ((3, 5, 4, 65), lambda xp, a: a[:, 1:, ::-1, 2:] - a[:, :-1, :, :-2]),
        ((200, 301), lambda xp, a: W.jacobi(xp, a, 2)),
        ((9000, 1, 3), lambda xp, a: a[::-1] * a[:, :, ::-1]),  # short last axes
        ((3, 2, 1, 50_000), lambda xp, a: xp.exp(a[:, ::-1]) + a[::-1]),  # few, long rows
        ((70_000, 2), lambda xp, a: a[:, ::-1] - a[::-1] ** 2),
        ((5, 300, 300), lambda xp, a: W.sobel(xp, a)),
    ],
)
def test_strided_kernels_over_several_axes_match_numpy_on_a_gpu(shape, program):
    with _on_cuda():
        host = RNG.random(shape)
        got = program(nl, nl.asarray(host))
        numpy.testing.assert_allclose(got.get(), program(numpy, host.copy()), rtol=1e-12)


@gpu
@pytest.mark.parametrize(
    ("shape", "dtype", "program"),
    [
        ((3, 5000), numpy.float32, lambda xp, x, y: W.softmax(xp, x)),  # longer than the cache
        ((6, 1027), numpy.float32, lambda xp, x, y: W.softmax(xp, x)),  # rows 4 bytes apart
        ((5, 334), numpy.float64, lambda xp, x, y: W.softmax(xp, x[:, 1:])),  # 8 bytes in
        ((4, 70), numpy.float32, lambda xp, x, y: W.softmax(xp, x[:, 2:] * 2)),  # 8 bytes in
        ((7, 3000), numpy.float64, lambda xp, x, y: W.softmax(xp, x[:, ::-1])),
        (
            (9, 700),
            numpy.float32,
            lambda xp, x, y: (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True),
        ),  # fmt: skip
        (
            (4, 6000),  # a kept x - mean past the cache's length, of rows read backwards
            numpy.float32,
            lambda xp, x, y: (x[:, ::-1] - x.mean(axis=1, keepdims=True)) / x.std(axis=1,
                                                                                  keepdims=True),
        ),  # fmt: skip
        (
            (5, 4100),
            numpy.float64,
            lambda xp, x, y: (
                x / x.sum(axis=1, keepdims=True) + y - (x * y).max(axis=1, keepdims=True)
            ),
        ),  # fmt: skip
        (
            (4, 64),
            numpy.float32,
            lambda xp, x, y: xp.exp(x - x.max(axis=1, keepdims=True)) * (y > 0.5),
        ),  # fmt: skip
    ],
)
def test_row_kernels_match_numpy_on_a_gpu(shape, dtype, program):
    with _on_cuda():
        x, y = RNG.random(shape).astype(dtype), RNG.random(shape).astype(dtype)
        got = program(nl, nl.asarray(x), nl.asarray(y))
        # (x - mean cancels: float32 results near zero are good to an ulp of x, not of them)
        tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == numpy.float32 else {"rtol": 1e-12}
        numpy.testing.assert_allclose(got.get(), program(numpy, x, y), **tol)


@gpu
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
@pytest.mark.parametrize("width", [65, 127, 1024, 4095, 4099, 6000])
def test_rows_of_every_width_and_offset_are_copied_on_chip_exactly(width, offset, dtype):
    """A row kernel's copy into shared memory (one by one up to a 16-byte boundary, then 16
    bytes a load, then the rest; rows longer than the cache read their tail from memory)
    over rows that start at every alignment."""
    with _on_cuda():
        host = RNG.standard_normal((5, width + offset)).astype(dtype)
        x = nl.asarray(host)[:, offset:]
        got = W.softmax(nl, x) * (x - x.mean(axis=1, keepdims=True))
        view = host[:, offset:]
        want = W.softmax(numpy, view) * (view - view.mean(axis=1, keepdims=True))
        # (x - mean cancels: results near zero are good to an ulp of x times the softmax)
        tol = {"rtol": 1e-5, "atol": 1e-9} if dtype == numpy.float32 else {"rtol": 1e-12,
                                                                          "atol": 1e-15}  # fmt: skip
        numpy.testing.assert_allclose(got.get(), want, **tol)


@gpu
def test_independent_chains_run_as_parallel_branches_of_one_graph():
    from numloom.backends import cuda_device

    with _on_cuda():
        a = nl.asarray(RNG.random((256, 256)))
        b = nl.asarray(RNG.random(4096))
        nl.sync()
        cuda_device._get("cuda:0").graphs.clear()
        left = nl.exp((a * 2).sum(axis=0)) + 1
        right = nl.sqrt(nl.cumsum(b * 3)) * 2
        before = nl.stats()
        nl.evaluate(left, right)
        assert nl.stats()["graphs_launched"] - before["graphs_launched"] == 1
        (graph,) = cuda_device._get("cuda:0").graphs.values()
        edges = graph.edges()
        reach = {k: set() for k in range(len(graph.nodes))}
        for i, j in sorted(edges):
            reach[j] |= {i} | reach[i]
        roots = [k for k in reach if not reach[k]]
        assert len(roots) >= 2  # two chains start at once
        last = len(graph.nodes) - 1
        assert not all(r in reach[last] for r in roots)  # and stay apart
        numpy.testing.assert_allclose(left.get(), numpy.exp((a.get() * 2).sum(axis=0)) + 1)
        numpy.testing.assert_allclose(right.get(), numpy.sqrt(numpy.cumsum(b.get() * 3)) * 2)


@gpu
def test_the_same_code_over_other_sizes_updates_its_graph_in_place():
    from numloom.backends import cuda_device

    def program(xp, a, b):
        return xp.exp(-(a * a)) * 0.5 + xp.sqrt(b) - a[::-1] * b

    with _on_cuda():
        cuda_device._get("cuda:0").graphs.clear()
        hosts = {n: (RNG.random(n), RNG.random(n)) for n in (1000, 30_000, 7)}
        got_once = False
        for n in (1000, 30_000, 7, 1000):
            a, b = map(nl.asarray, hosts[n])
            before = nl.stats()
            got = program(nl, a, b)
            nl.evaluate(got)
            after = nl.stats()
            numpy.testing.assert_allclose(got.get(), program(numpy, *hosts[n]), rtol=1e-12)
            assert after["graphs_built"] - before["graphs_built"] == (n == 1000 and not got_once)
            got_once = True
            if n != 1000:  # a new size: the same graph, its nodes updated in place
                assert after["graph_updates"] > before["graph_updates"]
                assert after["kernels_compiled"] == before["kernels_compiled"]
        assert len(cuda_device._get("cuda:0").graphs) == 1


@gpu
def test_kmeans_on_a_gpu_runs_its_skinny_products_as_reductions():
    """k-means' ``onehot.T @ pts`` per iteration is a fused reduction on a GPU, not cuBLAS:
    the plan of ten iterations has no library call, and the centers are NumPy's."""
    with _on_cuda():
        # (its own generator: the labels of points near a tie depend on the data, and the
        # suite's shared one gives each worker other data)
        host = numpy.random.default_rng(11).random((20_000, 4)).astype(numpy.float32)
        pts, centers = nl.asarray(host), nl.asarray(host[:8].copy())
        got, labels = W.kmeans(nl, pts, centers, 10)
        assert "library" not in [k.kind for k in nl.explain(got).kernels]
        want, want_labels = W.kmeans(numpy, host, host[:8].copy(), 10)
        numpy.testing.assert_allclose(got.get(), want, rtol=1e-3, atol=1e-4)
        assert (labels.get() != want_labels).mean() < 1e-3  # (ties may round either way)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_cublas_matmul_with_folded_transposes(dtype):
    with _on_cuda():
        a_host = RNG.standard_normal((3, 40, 30)).astype(dtype)
        b_host = RNG.standard_normal((30, 20)).astype(dtype)
        a, b = nl.asarray(a_host), nl.asarray(b_host)
        tol = 1e-4 if dtype in ("float32", "complex64") else 1e-12  # BLAS sums in its order
        scale = numpy.abs(a_host).max() * numpy.abs(b_host).max() * 30
        for got, want in [(a @ b, a_host @ b_host), (b.T @ a[0].T, b_host.T @ a_host[0].T),
                          (nl.dot(a[1], b), a_host[1] @ b_host)]:  # fmt: skip
            assert got.dtype == want.dtype
            numpy.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol * scale)


@gpu
def test_a_plan_cut_by_cublas_reads_the_flag_word_once(monkeypatch):
    """A dense layer (a kernel, cuBLAS with its overflow check, a kernel after it) checks
    for floating-point errors in each part, and waits for the device once, at the end of the
    evaluation, not after each part; an overflow in any part is still reported."""
    from numloom.backends import cuda_launch

    waits = []
    read = cuda_launch._FlagReads.read

    def counted(self):
        waits.append(len(self.pending))
        read(self)

    monkeypatch.setattr(cuda_launch._FlagReads, "read", counted)
    with _on_cuda():
        if cuda_launch._matmul_library() is None:
            pytest.skip("no cuBLAS (nvmath-python) here")
        w_host, a_host = RNG.random((64, 48)), RNG.random(64) - 0.5
        w, a = nl.asarray(w_host), nl.asarray(a_host)
        for scale in (1.0, 1e200):
            waits.clear()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = W.dense(nl, w * scale * scale, a, a[:48]).get()
            with warnings.catch_warnings(record=True) as expected:
                warnings.simplefilter("always")
                want = W.dense(numpy, w_host * scale * scale, a_host, a_host[:48])
            numpy.testing.assert_allclose(out, want, rtol=1e-12)
            assert len([n for n in waits if n]) == 1 and max(waits) >= 2  # parts, one wait
            assert sorted(str(m.message) for m in caught) == sorted(
                str(m.message) for m in expected)
            assert expected or scale == 1.0


def test_the_same_code_over_another_size_renders_no_cuda_source(monkeypatch):
    """Sizes are kernel parameters: a program over arrays of a new size has the kernels
    (the same sources) of the last one, rendered once."""
    from numloom.backends import cuda_programs
    from numloom.compile import render_cuda
    from numloom.core.dag import toposort

    def programs(n):
        x = nl.asarray(RNG.random((n, 7)).astype(numpy.float32))
        y = W.softmax(nl, x) + x.sum(axis=0)
        roots = [y._node()]
        return cuda_programs._program(toposort(roots), roots, "cuda:0")

    first = programs(5)
    rendered = []
    original = render_cuda.render_cuda
    monkeypatch.setattr(render_cuda, "render_cuda", lambda k: rendered.append(k) or original(k))
    second = programs(9)
    assert second is not first
    assert rendered == []
    assert [s.kernel.source for s in second.steps] == [s.kernel.source for s in first.steps]


class _ModelGraph:
    """A CUDA graph as the driver keeps one (for ``cuda_graph`` on a machine without a GPU):
    a definition's kernel nodes, instantiated into executables whose nodes are updated in
    place; launching one records what its nodes would run."""

    ran: list = []

    class Node:
        def __init__(self, graph, config, kernel, args, deps):
            self.graph, self.deps = graph, deps
            self.params = (config, kernel, args)

        def launch(self, config, kernel, *args):
            return self.graph.add(config, kernel, args, (self,))

        def update(self, config, kernel, args):
            self.params = (config, kernel, args)

    class Executable:
        def __init__(self, nodes):
            self.params = {id(n): n.params for n in nodes}
            self.order = [id(n) for n in nodes]

        def __getitem__(self, node):
            executable = self

            class View:
                def update(self, config, kernel, args):
                    executable.params[id(node)] = (config, kernel, tuple(args))

            return View()

        def launch(self, stream):
            _ModelGraph.ran.append([self.params[i] for i in self.order])

        def update(self, definition):  # every node's parameters from the definition
            self.params = {id(n): n.params for n in definition.nodes}

    def __init__(self):
        self.nodes = []

    def add(self, config, kernel, args, deps):
        self.nodes.append(self.Node(self, config, kernel, tuple(args), deps))
        return self.nodes[-1]

    def launch(self, config, kernel, *args):
        return self.add(config, kernel, args, ())

    def join(self, *deps):
        return self.Node(self, None, None, (), deps)

    def instantiate(self):
        return self.Executable(self.nodes)


@pytest.mark.parametrize("views", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_graphs_run_exactly_their_launches_through_sizes_pointers_and_constants(monkeypatch, seed,
                                                                                 views):  # fmt: skip
    """Evaluations of two programs (one code over two sizes, so other grids and sizes) with
    pointers alternating between blocks and constants changing: one graph, every launch runs
    with exactly its kernel, grid and arguments, and an instance that has them is not
    updated; also where executable nodes cannot be updated one by one (``views=False``: the
    definition is updated, then the instance from it)."""
    import cuda.core.graph

    from numloom.backends import cuda_graph as G

    monkeypatch.setattr(cuda.core.graph, "GraphDefinition", _ModelGraph)
    if not views:
        monkeypatch.delattr(_ModelGraph.Executable, "__getitem__")
    monkeypatch.setattr(G, "_config", lambda launch: (launch.grid, launch.block, launch.shmem))
    monkeypatch.setattr(_ModelGraph, "ran", [])
    kernels = [object(), object(), object()]  # a kernel, its 16-byte variant, a second kernel
    rng = numpy.random.default_rng(seed)
    cache, expected = {}, []
    before = nl.stats()
    for _ in range(40):
        n, block, constant, wider = (int(v) for v in rng.integers([1, 0, 0, 0], [4, 2, 3, 2]))
        first = kernels[int(rng.integers(2))]  # the variant follows the pointers' alignment
        ptrs = (numpy.uint64(4096 * block), numpy.uint64(8192 + 4096 * block))
        sizes = (numpy.int64(1000 * n),)
        launches = [
            G.Launch(first, 4 * n + wider, 256, (*ptrs, *sizes, numpy.float64(constant))),
            G.Launch(kernels[2], n, 256, (ptrs[1], *sizes), deps=(0,)),
        ]
        G.run_segment(cache, launches, stream=None)
        expected.append([((x.grid, x.block, x.shmem), x.kernel, x.args) for x in launches])
    after = nl.stats()
    assert _ModelGraph.ran == expected
    assert len(cache) == 2  # one per first kernel: sizes, grids, pointers and constants update
    assert after["graphs_built"] - before["graphs_built"] == 2
    assert after["graphs_launched"] - before["graphs_launched"] == 40
    updates = after["graph_updates"] - before["graph_updates"]
    assert 0 < updates < 80


@gpu
def test_importing_numloom_leaves_cuda_alone():
    """``import numloom`` loads neither the CUDA driver bindings nor the CUDA backend, so it
    initializes nothing on a machine with or without a GPU."""
    import subprocess

    code = ("import sys, numloom\n"
            "print(sorted(m for m in sys.modules if m.startswith(('cuda.', 'nvmath'))\n"
            "             or m == 'numloom.backends.cuda'))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "NUMLOOM_DEVICE": "cpu"})  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_a_failed_cuda_call_raises_cuda_error_naming_the_call_and_the_kernel():
    driver = pytest.importorskip("cuda.bindings.driver")
    from numloom.backends import cuda_device

    bad = (driver.CUresult.CUDA_ERROR_INVALID_VALUE,)
    with pytest.raises(nl.CudaError, match=r"cuMemsetD8Async failed with "
                       r"CUDA_ERROR_INVALID_VALUE \(kernel k3_add\)"):  # fmt: skip
        cuda_device._check(bad, "cuMemsetD8Async", "k3_add")
    ok = (driver.CUresult.CUDA_SUCCESS, 5)
    assert cuda_device._check(ok, "cuMemGetInfo") is ok


@pytest.mark.parametrize(("allow", "mode"), [(None, 0), ("0", 0), ("1", 3)])
def test_cublas_keeps_tf32_off_unless_allowed(monkeypatch, allow, mode):
    """float32 matmul in cuBLAS's default math (as accurate as NumPy's) unless the user sets
    NUMLOOM_ALLOW_TF32=1 (checked on a stand-in for nvmath's cuBLAS binding)."""
    import types

    from numloom.backends import cublas

    modes = []
    fake = types.SimpleNamespace(create=lambda: 11, set_math_mode=lambda h, m: modes.append((h, m)))
    bindings = types.ModuleType("nvmath.bindings")
    bindings.cublas = fake
    monkeypatch.setitem(sys.modules, "nvmath", types.ModuleType("nvmath"))
    monkeypatch.setitem(sys.modules, "nvmath.bindings", bindings)
    monkeypatch.setattr(cublas, "_handles", {})
    if allow is None:
        monkeypatch.delenv("NUMLOOM_ALLOW_TF32", raising=False)
    else:
        monkeypatch.setenv("NUMLOOM_ALLOW_TF32", allow)
    assert cublas._handle("cuda:0") == 11
    assert cublas._handle("cuda:0") == 11  # one handle per device, set up once
    assert modes == [(11, mode)]


def test_cublas_starts_once_on_a_thread_while_gemms_wait_for_it(monkeypatch):
    """A program's first run starts cuBLAS on a thread (its start takes a few hundred ms,
    which the kernels' compile overlaps); the first products wait for that start, and the
    handle is made once, with the device's context current in the thread that makes it."""
    import threading
    import time

    from numloom.backends import cublas

    made, current = [], []

    class Slow:
        def __init__(self, device):
            time.sleep(0.05)
            made.append((device, threading.current_thread().name))

    monkeypatch.setattr(cublas, "_Calls", Slow)
    monkeypatch.setattr(cublas, "_calls", {})
    monkeypatch.setattr(cublas, "_starting", {})
    cublas.start("cuda:7", lambda: current.append(threading.current_thread().name))
    cublas.start("cuda:7", lambda: current.append("again"))  # started: nothing more
    got = []
    waiters = [threading.Thread(target=lambda: got.append(cublas._calls_of("cuda:7")))
               for _ in range(4)]  # fmt: skip
    for t in waiters:
        t.start()
    for t in waiters:
        t.join()
    assert made == [("cuda:7", "numloom-cublas-start")]
    assert current == ["numloom-cublas-start"]
    assert len(got) == 4 and all(g is got[0] for g in got)


def test_cublas_calls_set_the_stream_only_when_it_changes(monkeypatch):
    """Each gemm runs on the stream it is given: the handle is told of a stream once, until
    another one comes (checked on a stand-in for nvmath's cuBLAS binding)."""
    import types

    from numloom.backends import cublas

    calls = []
    fake = types.SimpleNamespace(
        create=lambda: 11, set_math_mode=lambda h, m: None,
        set_stream=lambda h, s: calls.append(("stream", h, s)),
        **{name: (lambda *args, name=name: calls.append((name, *args)))
           for name in cublas._FUNCTIONS.values()},
    )  # fmt: skip
    bindings = types.ModuleType("nvmath.bindings")
    bindings.cublas = fake
    monkeypatch.setitem(sys.modules, "nvmath", types.ModuleType("nvmath"))
    monkeypatch.setitem(sys.modules, "nvmath.bindings", bindings)
    monkeypatch.setattr(cublas, "_handles", {})
    monkeypatch.setattr(cublas, "_calls", {})
    a = numpy.zeros((2, 3), numpy.float32)
    b = numpy.zeros((3, 4), numpy.float32)
    g = plan_gemm(_operand(a, a.ravel()), _operand(b, b.ravel()), (2, 4))
    for stream in (5, 5, 7, 5):
        cublas.gemm(g, numpy.float64, 1000, 2000, 3000, stream, "cuda:0")
    assert [c for c in calls if c[0] == "stream"] == [("stream", 11, 5), ("stream", 11, 7),
                                                      ("stream", 11, 5)]  # fmt: skip
    gemms = [c for c in calls if c[0] != "stream"]
    assert len(gemms) == 4 and {c[0] for c in gemms} == {"dgemm_strided_batched"}
    one, zero = cublas._SCALARS["d"]
    assert gemms[0][7] == one.ctypes.data and gemms[0][14] == zero.ctypes.data
    assert gemms[0][8] == 1000 + g.first * 8 and gemms[0][15] == 3000


def test_out_of_device_memory_is_a_memory_error_and_arrays_survive():
    with _on_cuda():
        x = nl.arange(10.0)
        with pytest.raises(nl.OutOfMemoryError, match="Unable to allocate 64. TiB|65536. GiB"):
            nl.zeros((1 << 46,), numpy.uint8)  # 64 TiB: refused at the call, as NumPy does
        row = nl.ones((1 << 23,), numpy.uint8)
        huge = row + row[:, None]  # 64 TiB, known only when the sum is written to memory
        with pytest.raises(nl.OutOfMemoryError, match=r"asked for \d+ bytes, \d+ bytes free"):
            nl.sync()
        del huge
        assert isinstance(nl.OutOfMemoryError("x"), MemoryError)
        numpy.testing.assert_array_equal((x + 1).get(), numpy.arange(10.0) + 1)


@gpu
def test_a_dead_arrays_device_memory_goes_to_the_next_array_of_its_size():
    """Blocks of dead arrays are reused last-freed first (a loop's arrays alternate between
    two blocks, so its CUDA graph replays with pointers it has seen)."""
    from numloom.backends import cuda as backend

    with _on_cuda():
        x = nl.arange(1000.0)
        y = x * 2
        nl.sync()
        ptr, held = y._storage.version.arg.data.ptr, backend.memory_in_use()
        del y
        assert backend.memory_in_use() == held - 8000
        z = x * 3
        nl.sync()
        assert z._storage.version.arg.data.ptr == ptr
        numpy.testing.assert_array_equal(z.get(), numpy.arange(1000.0) * 3)


@gpu
def test_release_cached_gives_dead_arrays_memory_back_to_the_driver():
    """``cuda_memory.release_cached``: what dead arrays held (kept per size, and in the
    stream-ordered pool) goes back to the driver, for another library in the process; live
    arrays keep their memory and values."""
    from numloom.backends import cuda_memory

    with _on_cuda():
        kept = nl.arange(1000.0)
        dead = [nl.arange(float(n)) * 2 for n in (2**24, 2**24 + 8, 2**25)]
        nl.sync()
        held = cuda_memory.memory_in_use()
        del dead
        device = kept.device if isinstance(kept.device, str) else str(kept.device)
        assert cuda_memory.release_cached(device) >= (2**24 + 2**24 + 8 + 2**25) * 8 // 2
        assert cuda_memory.memory_in_use() < held
        assert cuda_memory.release_cached(device) == 0  # (nothing more to give)
        numpy.testing.assert_array_equal((kept + 1).get(), numpy.arange(1000.0) + 1)


@gpu
def test_sync_waits_for_work_that_only_numloom_jit_launched():
    """A device that ran only jit replays (no plan of its own) is still waited for."""
    from numloom.core import realize

    with _on_cuda():
        f = nl.jit(lambda a: nl.sqrt(a) * 2)
        x = nl.asarray(numpy.arange(1_000_000.0))  # the CUDA context exists from here on
        assert any(d.startswith("cuda") for d in realize._devices_used)
        r = f(x)
        nl.sync()
        numpy.testing.assert_allclose(r.get(), numpy.sqrt(numpy.arange(1_000_000.0)) * 2)


@gpu
def test_blackscholes_holds_only_its_inputs_and_outputs_in_device_memory():
    """Peak device memory while Black-Scholes runs: its inputs and two outputs (plus 5%)."""
    import gc

    from numloom.backends import cuda as backend

    with _on_cuda():
        n = 1_000_000
        S, X, T = W.blackscholes_inputs(n, RNG)
        s, x, t = nl.asarray(S), nl.asarray(X), nl.asarray(T)
        nl.sync()
        gc.collect()
        held = backend.memory_in_use()
        backend.reset_peak()
        call, put = W.blackscholes(nl, s, x, t)
        nl.sync()
        extra = backend.memory_peak() - held  # the outputs and any temporary
        assert extra <= 1.05 * 2 * n * 4 + 4096, (extra, 2 * n * 4)
        assert backend.memory_in_use() - held >= 2 * n * 4  # the two outputs are held
        numpy.testing.assert_allclose(
            call.get(), W.blackscholes(numpy, S, X, T)[0], rtol=1e-4, atol=1e-3
        )


@pytest.mark.parametrize("n, vector", [(10_000, False), ((1 << 20) - 4, False),
                                         (1 << 20, True), (3 << 20, True)])  # fmt: skip
def test_only_large_maps_take_their_16_byte_variant(n, vector):
    """A flat map over fewer than ``VEC_MIN`` elements launches its one-element-a-thread
    function, as fast at that size, so a first call compiles that one (its 16-byte twin
    is twice NVRTC's time: Black-Scholes' 275 against 160 ms on an H200's host); a large
    one reads 16 bytes at a time (planned for CUDA on any machine: nothing runs)."""
    from numloom.backends import cuda_launch, cuda_programs
    from numloom.core.dag import toposort

    assert cuda_launch.VEC_MIN == 1 << 20
    x = nl.asarray(numpy.ones(n, numpy.float32))
    roots = [(nl.exp(x) * 2.0 + x)._storage.version]
    order = toposort(roots)
    (step,) = [s for s in cuda_programs._build(order, roots, "cuda:0").steps if s.ir is not None]
    symbol = re.search(r"nl_\w*?_[0-9a-f]{16}", step.kernel.source)[0]
    functions = cuda_programs.Functions(step.kernel.source, symbol, "sm_90")  # (loads nothing)
    step = replace(step, functions=functions)
    assert "KERNEL_vec" in step.functions
    recipe = cuda_launch._recipe(step, order, sms=132)
    assert [name for name, _, _ in recipe.launches] == ["KERNEL"]
    assert [name for name, _, _ in recipe.aligned] == (["KERNEL_vec"] if vector else [])


@pytest.mark.parametrize(
    "make",
    [
        lambda x: nl.pad(x, ((2, 7), (5, 1))),  # a clamped select with an unused size
        lambda x: nl.pad(x, 1, mode="reflect", reflect_type="odd"),
        lambda x: nl.concatenate([x * 2, x[:, ::-1] + 0.5], axis=1).sum(axis=0),
    ],
)
def test_cuda_launch_arguments_match_the_rendered_signatures(make):
    """Every size and constant a CUDA launch passes is one the kernel's signature declares
    (planned for CUDA on any machine: nothing is compiled or launched)."""
    import re

    from numloom.backends import cuda_launch, cuda_programs
    from numloom.core.dag import toposort

    y = make(nl.asarray(numpy.arange(12.0).reshape(3, 4)))
    roots = [y._storage.version]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    for step in program.steps:
        if step.ir is None:
            continue
        recipe = cuda_launch._recipe(step, order, sms=132)
        assert recipe.narrow == (step.ir.kind != "map" or not step.ir.flat)
        size_type = "int32_t" if recipe.narrow else "int64_t"
        assert {type(v) for v in recipe.sizes} <= {getattr(numpy, size_type[:-2])}
        pattern = r"__global__ void __launch_bounds__\(\d+\) (\w+)\(([^)]*)\)"
        launched = {cuda_launch._narrow_name(name, "32") if recipe.narrow else name
                    for name, _, _ in recipe.launches + recipe.aligned}  # fmt: skip
        symbol = re.search(r"nl_\w*?_[0-9a-f]{16}", step.kernel.source)[0]  # (nl_<hint>_<hash>)
        heads = dict(re.findall(pattern, step.kernel.source))
        for name in launched:
            head = heads[name.replace("KERNEL", symbol)]
            assert len(re.findall(rf"const {size_type} p\d+", head)) == len(recipe.sizes)
            assert len(re.findall(r" k\d+\b", head)) == len(recipe.consts), step.kernel.name


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_long_arg_reductions_break_ties_by_the_first_index(kind):
    """Partial results of interleaved stretches (GPU blocks, CPU threads) still give NumPy's
    first index of the extreme value, over every axis and over a long column."""
    values = numpy.zeros(1_000_000, numpy.float32)
    extreme = 5.0 if kind == "argmax" else -5.0
    values[[700_001, 300_007, 999_999]] = extreme
    x = nl.asarray(values)
    assert getattr(x, kind)().item() == 300_007
    columns = values.reshape(-1, 8)  # 8 long columns: a few outputs, split over blocks
    got = getattr(nl.asarray(columns), kind)(axis=0).get()
    numpy.testing.assert_array_equal(got, getattr(columns, kind)(axis=0))
    with_nan = values.copy()
    with_nan[[900_000, 400_000]] = numpy.nan
    assert getattr(nl.asarray(with_nan), kind)().item() == 400_000


@pytest.mark.parametrize("cols", [65, 2500, 4096, 4097])
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_row_kernels_of_many_lengths(cols, dtype):
    """Softmax and a standardization, a block per row, around the lengths where launch
    shapes change."""
    x_host = RNG.standard_normal((37, cols)).astype(dtype)
    x = nl.asarray(x_host)
    tol = dict(rtol=1e-5, atol=1e-7) if dtype == numpy.float32 else dict(rtol=1e-12, atol=1e-15)
    numpy.testing.assert_allclose(W.softmax(nl, x).get(), W.softmax(numpy, x_host), **tol)
    centered = x - x.mean(axis=1, keepdims=True)
    z = centered / nl.sqrt((centered * centered).mean(axis=1, keepdims=True))
    c = x_host - x_host.mean(axis=1, keepdims=True)
    expected = c / numpy.sqrt((c * c).mean(axis=1, keepdims=True))
    numpy.testing.assert_allclose(z.get(), expected, rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)


@pytest.mark.parametrize("rows, cols", [(100_000, 8), (50, 3000), (3, 200_000)])
def test_row_and_column_reductions_of_many_shapes(rows, cols):
    x_host = RNG.standard_normal((rows, cols)).astype(numpy.float32)
    x = nl.asarray(x_host)
    soft = W.softmax(nl, x).get()
    numpy.testing.assert_allclose(soft, W.softmax(numpy, x_host), rtol=1e-5, atol=1e-7)
    if x.device == "cpu":  # NumPy's order: its float32 column sum, drift and all
        numpy.testing.assert_array_equal(x.sum(axis=0).get(), x_host.sum(axis=0))
    else:
        exact = x_host.astype(numpy.float64).sum(axis=0)  # NumPy's float32 column sum drifts
        numpy.testing.assert_allclose(x.sum(axis=0).get(), exact, rtol=1e-5, atol=1e-3)
    numpy.testing.assert_array_equal(x.max(axis=0).get(), x_host.max(axis=0))
    numpy.testing.assert_array_equal(x.argmin(axis=1).get(), x_host.argmin(axis=1))


def _blocks_of(program, order) -> list:
    """Per step output, the block it writes: a new one, or the one ``reuse`` hands it."""
    block, made = {}, []
    for i, step in enumerate(program.steps):
        taken = program.reuse.get(i, (None,) * len(step.outputs))
        for p, q in zip(step.outputs, taken):
            if q is None:
                made.append(p)
            block[p] = p if q is None else block[q]
    return made


def _check_reuse(program, order) -> None:
    """A step takes over only an intermediate of its shape and dtype, made in its own graph,
    that no later graph nor the result needs, once every step reading it is done."""
    for i, taken in program.reuse.items():
        segment = next(s for s in program.segments if i in s)
        index = program.segments.index(segment)
        ancestors, todo = set(), list(program.waits[i])
        while todo:
            j = todo.pop()
            if j not in ancestors:
                ancestors.add(j)
                todo.extend(program.waits[j])
        for p, q in zip(program.steps[i].outputs, taken):
            if q is None:
                continue
            assert (order[p].shape, order[p].dtype) == (order[q].shape, order[q].dtype)
            assert q in program.frees[index] and q not in program.roots
            assert any(q in program.steps[j].outputs for j in segment)
            for j in segment:
                if j != i and q in program.steps[j].inputs:
                    assert j in ancestors, (i, j, q)


def test_a_chain_of_sweeps_in_one_graph_cycles_through_two_blocks():
    """Ten Jacobi sweeps planned as one graph (planned only: nothing is launched): each sweep
    writes over the grid two sweeps back, not a new block per sweep."""
    from numloom.backends import cuda_programs
    from numloom.core.dag import toposort

    grid = nl.asarray(RNG.random((40, 40)))
    W.jacobi(nl, grid, 10)
    roots = [grid._storage.version]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    assert len(program.steps) == 10 and len(program.segments) == 1
    assert len(_blocks_of(program, order)) == 2
    _check_reuse(program, order)


@pytest.mark.parametrize(
    ("make", "takes"),
    [
        (lambda x: [nl.cumsum(x * k, axis=1) for k in range(4)], False),  # independent
        (
            lambda x: [(y := nl.exp(x).sum(axis=0)) + 1, y * x.max(axis=1)[:, None].sum(axis=0)],
            True,
        ),  # fmt: skip
        (
            lambda x: (
                nl.cumsum(nl.cumsum(nl.cumsum(x, axis=0) * 2, axis=1), axis=0)
                + nl.cumsum(x, axis=1)
            ),
            True,
        ),  # fmt: skip
        (lambda x: [nl.cumsum(nl.cumsum(x * k, axis=0), axis=1) + k for k in (1, 2, 3)], None),
        (lambda x: (x[:, None, :] * x[None, :, :]).sum(axis=2).argmax(axis=1), None),
    ],
)
def test_blocks_are_taken_over_only_once_their_readers_are_done(make, takes):
    from numloom.backends import cuda_programs
    from numloom.core.dag import toposort

    out = make(nl.asarray(RNG.random((24, 24))))
    roots = [y._storage.version for y in (out if isinstance(out, list) else [out])]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    _check_reuse(program, order)
    if takes is not None:
        assert bool(program.reuse) == takes


@pytest.mark.parametrize(("rows", "narrow"), [(2**10, True), (2**14, True), (2**16, False)])
def test_cuda_kernels_take_32_bit_indices_only_where_every_index_fits(rows, narrow):
    """A strided kernel launches its 32-bit index variant while every size, stride, offset
    and buffer length stays far under 2**31, and its 64-bit one past that (planned only)."""
    from numloom.backends import cuda_launch, cuda_programs
    from numloom.core.dag import toposort

    x = nl.zeros((rows, 2**14), numpy.float32)  # nothing is allocated: the plan is only made
    y = x.T[::-1] * 2
    roots = [y._storage.version]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    steps = [s for s in program.steps if s.ir is not None and not s.ir.flat]  # strided
    assert steps
    for step in steps:
        assert cuda_launch._recipe(step, order, sms=132).narrow == narrow, step.kernel.name


def test_a_row_kernel_reads_its_input_once_and_keeps_it_on_chip():
    """Softmax passes over each row three times (max, sum, outputs): a contiguous row is
    copied into shared memory first, mostly 16 bytes a load, and the max and sum passes read
    it there; the sum pass keeps its exponentials in the same slots, and the output pass
    divides those (no exp computed twice, no load but past the cache). A row read backwards
    is kept there by the first pass (rendered only)."""
    x = nl.asarray(RNG.random((64, 300)).astype(numpy.float32))
    plan = nl.explain(W.softmax(nl, x), target="cuda")
    (kernel,) = plan.kernels
    block = kernel.source.split("_thread(")[0]  # the block-per-row function
    assert block.count("const float4 q = reinterpret_cast<const float4 *>(row + head)[v];") == 1
    assert block.count("s_cache0[g] = row[g]") == 2  # up to a 16-byte boundary, and the rest
    assert block.count("? s_cache0[g] : (float)in0[") == 2  # the max and sum passes
    assert block.count("if (g < 4096) s_cache0[g] = ") == 1  # the exponentials
    assert block.count("? s_cache0[g] : expf(") == 1  # the outputs' pass
    assert block.count("expf(") == 2 and "s_cache1" not in block
    plan = nl.explain(W.softmax(nl, x[:, 3:]), target="cuda")  # rows from an offset: copied
    block = plan.kernels[0].source.split("_thread(")[0]
    assert block.count("const float4 q = reinterpret_cast<const float4 *>(row + head)[v];") == 1
    assert "row = in0 + (i0 * p2 + p3);" in block
    plan = nl.explain(W.softmax(nl, x[:, ::-1]), target="cuda")
    block = plan.kernels[0].source.split("_thread(")[0]
    assert "reinterpret_cast" not in block
    assert block.count("if (g < 4096) s_cache0[g] = ") == 2  # x (max pass), exp (sum pass)
    assert block.count("? s_cache0[g] : (float)in0[") == 1
    assert block.count("? s_cache0[g] : expf(") == 1


def test_a_row_kernel_computes_a_value_of_two_passes_once():
    """Standardizing rows computes x - mean in the variance pass and keeps it, in x's slots,
    for the outputs' pass (rendered only)."""
    x = nl.asarray(RNG.random((64, 300)).astype(numpy.float32))
    y = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    block = nl.explain(y, target="cuda").kernels[0].source.split("_thread(")[0]
    assert block.count("if (g < 4096) s_cache0[g] = ") == 1 and "s_cache1" not in block
    outputs = block.split("? s_cache0[g] : ")[-1]
    assert outputs.startswith("((float)(((float)in0[") and "- (" in outputs.split(";")[0]


def test_a_large_box_write_keeps_32_bit_indices():
    """A Jacobi sweep over a 4096x4096 grid loops over the grid once (each element old or
    new), not over the grid times the written box: its indices fit in 32 bits (planned
    only)."""
    from numloom.backends import cuda_launch, cuda_programs
    from numloom.core.dag import toposort

    grid = nl.zeros((4096, 4096), numpy.float32)  # nothing is allocated: only planned
    W.jacobi(nl, grid, 1)
    roots = [grid._storage.version]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    (step,) = [s for s in program.steps if s.ir is not None and s.ir.kind == "scatter"]
    assert cuda_launch._recipe(step, order, sms=132).narrow


def _planned_steps(root_arrays):
    from numloom.backends import cuda_programs
    from numloom.core.dag import toposort

    roots = [x._storage.version for x in root_arrays]
    order = toposort(roots)
    return cuda_programs._build(order, roots, "cuda:0"), order


def test_stencils_loop_on_a_3d_grid_with_no_division_per_element():
    """A Sobel filter over a batch of images and a Jacobi sweep index their elements along a
    3-D grid of 32x8 blocks (the last axis along x, two neighbours a thread, each image along
    z): no coordinate is a division of a flat index, and the neighbours' loads share their
    strides (planned and rendered only)."""
    from numloom.backends import cuda_launch

    imgs = nl.zeros((64, 600, 600), numpy.float32)
    grid = nl.zeros((4096, 4096), numpy.float32)
    W.jacobi(nl, grid, 1)
    for root, role, space in ((W.sobel(nl, imgs), "KERNEL", (598, 598, 64)),
                              (grid, "KERNEL_fused", (4096, 4096, 1))):  # fmt: skip
        program, order = _planned_steps([root])
        (step,) = [s for s in program.steps if s.ir is not None and not s.ir.flat]
        recipe = cuda_launch._recipe(step, order, sms=132)
        (launch,) = [entry for entry in recipe.launches if entry[0] == role]
        (gx, gy, gz), block = launch[1]
        assert block == (32, 8, 1)
        assert gx == -(-space[0] // 64) and gy <= -(-space[1] // 8) and gz <= space[2]
        assert gx * gy * gz <= 132 * 64  # (blocks that take more rows keep them all busy)
        symbol = re.search(r"nl_\w*?_[0-9a-f]{16}", step.kernel.source)[0]
        name = role.replace("KERNEL", symbol + "32")
        function = step.kernel.source.split(name + "(")[1].split("\n}\n")[0]
        assert "%" not in function and "/" not in function, function
        loads = re.findall(r"in0\[([^\]]*)\]", function)
        strides = set(re.findall(r"\* (p\d+)", " ".join(loads)))  # one per axis but the last
        assert len(strides) == len(space) - 1 - (space[2] == 1), loads


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=2, max_size=4).filter(
    lambda e: numpy.prod(e) <= 4000), st.booleans())
@example([6, 11, 1, 1], False)
def test_a_3d_grid_covers_every_coordinate_once(extents, small):
    """``cuda_launch._tile``'s grid and blocks, stepped through ``render_cuda._tiled``'s
    grid-stride loops, visit each coordinate of any extents exactly once, with at most 256
    threads a block (64 along z), also where the grid's limits make the loops stride."""
    import math
    from unittest import mock

    from numloom.backends import cuda_launch

    limits = (3, 2, 2) if small else cuda_launch.GRID_LIMITS
    with mock.patch.object(cuda_launch, "GRID_LIMITS", limits):
        (gx, gy, gz), (bx, by, bz) = cuda_launch._tile(
            tuple(f"P[{k}]" for k in range(len(extents))), tuple(extents), 132)
    assert bx * by * bz <= 256 and bz <= 64 and gy <= 65535 and gz <= 65535
    pairs = -(-extents[-1] // 2)
    # a block is full, or holds all the work, or is capped by CUDA's 64 threads along z (the
    # last two axes short: (6, 11, 1, 1) has 66 images of one element)
    assert (bx * by * bz == 256 or bx * by * bz >= min(256, pairs * math.prod(extents[:-1]))
            or (bz == 64 and bx * by == cuda_launch._pow2(pairs) * cuda_launch._pow2(extents[-2])))
    inner, rows, rest = extents[-1], extents[-2], math.prod(extents[:-2])
    seen = collections.Counter()
    for z0 in range(gz * bz):
        for y0 in range(gy * by):
            for x0 in range(gx * bx):
                for z in range(z0, rest, gz * bz):
                    for y in range(y0, rows, gy * by):
                        for xb in range(2 * x0, inner, 2 * gx * bx):
                            for x in (xb, xb + 1):
                                if x < inner:
                                    seen[z, y, x] += 1
    assert len(seen) == math.prod(extents) and set(seen.values()) <= {1}


def test_a_kernel_looping_past_2_to_the_31_over_small_arrays_keeps_64_bit_indices():
    """An outer product summed loops over every pair: 2.5e9 iterations over two arrays of
    50000 elements, which no 32-bit loop counter holds."""
    from numloom.backends import cuda_launch, cuda_programs
    from numloom.core.dag import toposort

    x = nl.zeros(50_000, numpy.float32)
    y = (x[:, None] * x[None, :]).sum()
    roots = [y._storage.version]
    order = toposort(roots)
    program = cuda_programs._build(order, roots, "cuda:0")
    reduction = [s for s in program.steps if s.ir is not None and s.ir.kind == "reduce"]
    assert reduction
    for step in reduction:
        assert not cuda_launch._recipe(step, order, sms=132).narrow


@gpu
@pytest.mark.parametrize("index32", [True, False])
def test_strided_kernels_give_numpys_results_with_either_index_width(index32, monkeypatch):
    """The suite runs CUDA kernels on their 32-bit index variants (its arrays are small); the
    64-bit ones, which large arrays take, give the same results."""
    from numloom.backends import cuda, cuda_programs
    from numloom.compile import pipeline
    from numloom.core import config

    monkeypatch.setattr(config, "INDEX32", index32)
    monkeypatch.setattr(cuda.TARGET, "plans", pipeline.PlanCache(lambda: 1024))  # (made otherwise)
    host = RNG.random((37, 53))
    programs = {
        "sobel": lambda xp, a: W.sobel(xp, a.reshape(1, 37, 53)),
        "softmax": lambda xp, a: W.softmax(xp, a[::-1, 3:]),
        "column sums": lambda xp, a: a.T.sum(axis=1),
        "argmax": lambda xp, a: a[:, ::2].argmax(axis=0),
        "cumsum": lambda xp, a: xp.cumsum(a[1:, :-1], axis=1),
        "mean of all": lambda xp, a: a[::3].mean(),
    }
    with _on_cuda():
        for name, program in programs.items():
            got = program(nl, nl.asarray(host))
            numpy.testing.assert_allclose(got.get(), program(numpy, host), rtol=1e-12,
                                          err_msg=name)  # fmt: skip
        grid = nl.asarray(host)
        W.jacobi(nl, grid, 3)
        numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host.copy(), 3), rtol=1e-12)
        recipes = [r for p in cuda.TARGET.plans.values() for r in p.recipes.values()
                   if isinstance(r, cuda_programs.Recipe)]  # fmt: skip
        assert any(r.narrow for r in recipes) == index32


def test_device_blocks_of_dead_arrays_are_kept_per_size_within_limits(monkeypatch):
    """The reuse of dead arrays' device memory (its bookkeeping runs here on stand-in blocks):
    last freed first, at most FREE_PER_SIZE blocks a size, FREE_LIMIT bytes in all."""
    from numloom.backends import cuda_memory as memory

    class Block:
        def __init__(self, nbytes):
            self.handle = id(self)

    allocated = []
    monkeypatch.setattr(memory, "_allocate", lambda state, n: allocated.append(n) or Block(n))
    monkeypatch.setattr(memory, "_get", lambda device: None)
    saved_free, saved_kept = dict(memory._free), dict(memory._kept)
    saved_memory = dict(memory._memory)
    memory._free.clear()
    memory._kept["bytes"] = 0
    try:
        a = memory.DeviceArray((1000,), numpy.float64, "cuda:99")
        first = a.ptr
        del a
        b = memory.DeviceArray((1000,), numpy.float64, "cuda:99")
        assert b.ptr == first and allocated == [8000]  # reused, nothing allocated
        many = [memory.DeviceArray((10,), numpy.int32, "cuda:99") for _ in range(6)]
        del many
        assert len(memory._free[("cuda:99", 40)]) == memory.FREE_PER_SIZE
        huge = memory.DeviceArray((memory.FREE_LIMIT + 1,), numpy.uint8, "cuda:99")
        del huge
        assert ("cuda:99", memory.FREE_LIMIT + 1) not in memory._free or not memory._free[
            ("cuda:99", memory.FREE_LIMIT + 1)]  # fmt: skip
        assert memory._kept["bytes"] == memory.FREE_PER_SIZE * 40
        del b
    finally:
        memory._free.clear()
        memory._free.update(saved_free)
        memory._kept.update(saved_kept)
        memory._memory.update(saved_memory)


def test_a_bitcast_of_a_device_array_is_a_copy_on_the_device_in_the_plan():
    """``x.view(np.uint32) + 1`` of a GPU array: the bitcast is a copy of the bytes on the
    device (it ran through NumPy on the host, its bytes copied both ways)."""
    x = nl.arange(8, dtype=numpy.float32) * 2
    nl.evaluate(x)
    plan = nl.explain(x.view(numpy.uint32).reshape(2, 4) + 1, target="cuda")
    bitcast = [k for k in plan.kernels if k.name.endswith("bitcast")]
    assert len(bitcast) == 1 and "a copy of its bytes on the device" in bitcast[0].reason


@gpu
@pytest.mark.parametrize("dtype", ["uint32", "int16", "uint8"])
def test_a_bitcast_of_a_device_array_runs_on_the_device(dtype):
    """A GPU array's bytes read as other elements (``x.view(np.uint32) + 1``) with NumPy's
    values, no byte through the host and nothing run through NumPy."""
    with _on_cuda():
        host = RNG.random(64).astype(numpy.float32)
        x = nl.asarray(host) * 2
        nl.evaluate(x)
        before = nl.stats()
        got = x.view(dtype).reshape(8, -1) + 1
        nl.evaluate(got)
        after = nl.stats()
        for name in ("device_to_host_bytes", "host_to_device_bytes", "kernels_through_numpy"):
            assert after[name] == before[name], name
        numpy.testing.assert_array_equal(got.get(), (host * 2).view(dtype).reshape(8, -1) + 1)

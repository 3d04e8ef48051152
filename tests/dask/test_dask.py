"""numloom arrays as Dask's chunks (``numloom/dask.py``): the ``"numloom"`` array backend, Dask's
operations on numloom chunks against the same operations on NumPy chunks, fusion of a chunk's
task chain into one kernel, the threaded and synchronous schedulers, and worker processes."""

from __future__ import annotations

import os

import numpy
import pytest

import numloom

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
import numloom.dask  # noqa: E402,F401 (the lookups and serializers)

HOST = numpy.random.default_rng(7).random((60, 40))


def _pair(chunks=(15, 10)):
    """The same data as a Dask array of numloom chunks and one of NumPy chunks."""
    return (da.from_array(numloom.asarray(HOST), chunks=chunks),
            da.from_array(HOST.copy(), chunks=chunks))  # fmt: skip


def _same(got, want, rtol=1e-13):
    assert isinstance(got, numloom.ndarray), type(got)
    numpy.testing.assert_allclose(numpy.asarray(got), want, rtol=rtol, atol=1e-13)


OPERATIONS = {
    "blockwise": lambda x: (x * 2 + 1) ** 2 - x / 3,
    "map_blocks": lambda x: x.map_blocks(lambda b: numpy.sin(b) + b.max()),
    "map_overlap": lambda x: x.map_overlap(
        lambda b: (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:]) / 4
        if b.shape[0] > 2 and b.shape[1] > 2 else b, depth=1, boundary="reflect",
        trim=False).sum(),
    "sum": lambda x: x.sum(),
    "mean axis": lambda x: x.mean(axis=0),
    "var std": lambda x: da.stack([x.var(axis=1), x.std(axis=1)]),
    "max argmax": lambda x: da.stack([x.max(axis=0), x.argmax(axis=0).astype(float)]),
    "cumsum": lambda x: x.cumsum(axis=1),
    "rechunk": lambda x: x.rechunk((20, 40)) + 1,
    "slicing": lambda x: x[5:47:3, ::-2],
    "fancy": lambda x: x[[3, 1, 50, 2]],
    "concatenate": lambda x: da.concatenate([x, x * 2], axis=1),
    "stack": lambda x: da.stack([x, -x], axis=0),
    "matmul": lambda x: x @ x.T,
    "tensordot": lambda x: da.tensordot(x, x, axes=((0,), (0,))),
    "einsum": lambda x: da.einsum("ij,ij->i", x, x),
    "transpose reshape": lambda x: x.T.reshape(40 * 60),
    "where": lambda x: da.where(x > 0.5, x, -x),
    "percentile": lambda x: da.percentile(x[:, 0], [10, 50, 90]),
}


@pytest.mark.parametrize("op", list(OPERATIONS.values()), ids=list(OPERATIONS))
def test_operations_on_numloom_chunks_are_numpys(op):
    mine, theirs = _pair()
    got = op(mine)
    # (a 0-d result's meta is Dask's ``meta[()]``: a NumPy scalar, as NumPy's indexing gives)
    assert got.ndim == 0 or isinstance(got._meta, numloom.ndarray)
    _same(got.compute(scheduler="sync"), op(theirs).compute(scheduler="sync"))


@pytest.mark.parametrize("make", [
    lambda: da.ones((50, 30), chunks=(20, 10)),
    lambda: da.zeros(77, chunks=20, dtype="int32"),
    lambda: da.full((9, 9), 2.5, chunks=4),
    lambda: da.empty((5, 3), chunks=2) * 0,
    lambda: da.arange(3, 50, 4, chunks=5),
    lambda: da.arange(10, chunks=3, dtype="float32"),
])  # fmt: skip
def test_the_numloom_backend_makes_numloom_chunks(make):
    with dask.config.set({"array.backend": "numloom"}):
        made = make()
    want = make().compute()  # (the NumPy backend)
    assert isinstance(made._meta, numloom.ndarray)
    got = made.compute()
    assert got.dtype == want.dtype
    _same(got, want, rtol=0)


def test_the_backends_random_draws_are_numloom_chunks_of_numpys_streams():
    with dask.config.set({"array.backend": "numloom"}):
        rng = da.random.default_rng(42)
        state = da.random.RandomState(3)
    x = rng.standard_normal((1000, 10), chunks=(250, 10))
    y = state.uniform(-1.0, 1.0, size=(400,), chunks=100)
    assert isinstance(x._meta, numloom.ndarray) and isinstance(y._meta, numloom.ndarray)
    want = da.random.default_rng(42).standard_normal((1000, 10), chunks=(250, 10)).compute()
    _same(x.compute(), want, rtol=0)  # (each chunk: NumPy's stream of its spawned seed)
    values = numpy.asarray(y.compute())
    assert values.shape == (400,) and -1 <= values.min() and values.max() < 1


def test_to_backend_moves_a_collection_to_numloom_and_back():
    theirs = da.from_array(HOST, chunks=20)
    mine = theirs.to_backend("numloom")
    assert isinstance(mine._meta, numloom.ndarray)
    _same(mine.sum().compute(), HOST.sum())
    back = mine.to_backend("numpy")
    assert isinstance(back.compute(), numpy.ndarray)


def test_a_chunks_task_chain_is_one_kernel():
    """Tasks return pending arrays and the next task traces on: computing a chain of
    blockwise operations runs nothing, and its plan is one kernel per chunk (the whole chain,
    fused) and one that joins them."""
    host = numpy.random.default_rng(0).random(400_000)
    source = numloom.asarray(host)
    numloom.evaluate(source)
    x = da.from_array(source, chunks=100_000)
    chain = ((x * 2.0 + 1.0) ** 2 - x) / 3.0
    before = numloom.stats()["kernels_launched"]
    got = chain.compute(scheduler="sync")
    assert numloom.stats()["kernels_launched"] == before  # (lazy: the tasks only traced)
    plan = numloom.explain(got)
    per_chunk = [k for k in plan.kernels if "divide" in str(k).split()[0]]
    assert len(per_chunk) == x.numblocks[0]  # one kernel a chunk: its whole chain
    assert len(plan.kernels) == x.numblocks[0] + 1  # and the join
    numloom.evaluate(got)
    numpy.testing.assert_allclose(got.get(), ((host * 2 + 1) ** 2 - host) / 3, rtol=1e-15)


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_reduced_chunks_are_evaluated_as_their_tasks_end(scheduler, monkeypatch):
    """Tasks that reduce their chunks are evaluated as they end once they hold
    ``settle_bytes`` of reduced data (here: at each task), so the chunks' memory goes before the
    next chunks are drawn; only the join of the partial sums is left pending."""
    monkeypatch.setattr(numloom.dask, "SETTLE_BYTES", 1)
    host = numpy.random.default_rng(2).random(1_000_000)
    source = numloom.asarray(host)
    numloom.evaluate(source)
    x = da.from_array(source, chunks=250_000)
    before = numloom.stats()
    got = ((x * 2.0 + 1.0) ** 2).sum().compute(scheduler=scheduler)
    after = numloom.stats()
    assert after["plans_evaluated"] - before["plans_evaluated"] >= x.numblocks[0]
    numpy.testing.assert_allclose(float(got), ((host * 2 + 1) ** 2).sum(), rtol=1e-12)


def test_reductions_held_under_the_budget_evaluate_together_at_the_end():
    """Under ``settle_bytes`` the reduced results wait, and the compute's end evaluates them as
    one plan: a chunk's two sums of one chain (Black-Scholes' calls and puts) share its work."""
    host = numpy.random.default_rng(5).random(1_000_000)
    source = numloom.asarray(host)
    numloom.evaluate(source)
    x = da.from_array(source, chunks=250_000)
    y = da.exp(-x) * 3
    sums = da.stack([y.sum(), (y * y).sum()])  # (Dask evaluates its meta here)
    before = numloom.stats()
    got = sums.compute(scheduler="sync")
    after = numloom.stats()
    assert after["plans_evaluated"] - before["plans_evaluated"] == 1
    want = numpy.exp(-host) * 3
    numpy.testing.assert_allclose(got.get(), [want.sum(), (want * want).sum()], rtol=1e-12)


def test_settle_leaves_chunk_sized_results_pending_and_evaluates_reductions():
    a, big = numloom.asarray(HOST), numloom.asarray(numpy.ones((600, 600)))
    numloom.evaluate(a, big)
    chunk_sized, reduced = a * 2 + 1, (a * 2).sum(axis=0)
    big_sum = {"total": (big * 3).sum(axis=1), "n": 7}  # (Dask's partial results: dicts)
    big_slice = (big + 1)[::30, ::30]
    numloom.dask.settle((chunk_sized, reduced, big_slice, big_sum), now=True)
    assert chunk_sized._storage.pending  # (goes on fusing with the next task)
    assert reduced._storage.pending  # (under 1 MiB read)
    assert big_slice._storage.pending  # (a slice: its chunk is held elsewhere too)
    assert not big_sum["total"]._storage.pending  # (a 2.9 MB chunk, reduced: evaluated)
    numpy.testing.assert_array_equal(big_sum["total"].get(), numpy.full(600, 1800.0))


def test_the_backend_is_found_by_name_on_import():
    """``import numloom.dask`` registers the backend itself, also where numloom runs from a
    checkout without its installed entry point."""
    from dask.array.backends import array_creation_dispatch

    assert isinstance(array_creation_dispatch.dispatch("numloom"),
                      numloom.dask.NumloomBackendEntrypoint)  # fmt: skip


@pytest.mark.skipif(numloom.get_device() == "cpu", reason="a chunk on a GPU")
def test_a_gpu_chunk_serializes_as_a_device_frame():
    """Dask's ``cuda`` serializers (what UCX sends GPU to GPU): the frame is the chunk's device
    memory, and it arrives as a numloom array on the GPU, without a copy through the host."""
    from distributed.protocol import deserialize, serialize

    x = (numloom.asarray(HOST) * 2)[::2]  # (a strided view: sent as its contiguous copy)
    numloom.evaluate(x)
    before = numloom.stats()
    header, frames = serialize(x, serializers=("cuda",))
    assert header["serializer"] == "cuda"
    assert [hasattr(f, "__cuda_array_interface__") for f in frames] == [True]
    back = deserialize(header, frames)
    numloom.evaluate(back + 1)  # (its elements read on the device: no bitcast through the host)
    after = numloom.stats()
    for name in ("device_to_host_bytes", "host_to_device_bytes", "kernels_through_numpy"):
        assert after[name] == before[name], name
    assert isinstance(back, numloom.ndarray) and back.device == x.device and back.dtype == x.dtype
    numpy.testing.assert_array_equal(back.get(), (HOST * 2)[::2])
    host = numloom.asarray(HOST, device="cpu")  # (a CPU chunk goes by the 'dask' serializer)
    assert serialize(host, serializers=("cuda", "dask"))[0]["serializer"] == "dask"


def test_chunk_results_evaluated_at_task_ends_start_before_a_wait(monkeypatch):
    """Each chunk's reduced result is evaluated as its task ends; that evaluation is one that
    starts before the program waits for a value (``realize.STARTING``), as a stencil's sweeps
    do: on a GPU it leaves its flag read to the next wait for the device."""
    import dask

    from numloom.core import realize

    seen = []
    evaluate = realize._evaluate_locked

    def recorded(storages, device):
        seen.append(realize.STARTING[0])
        return evaluate(storages, device)

    monkeypatch.setattr(realize, "_evaluate_locked", recorded)
    monkeypatch.setattr(numloom.dask, "SETTLE_BYTES", 1)  # (each chunk's result at its end)
    with dask.config.set({"array.backend": "numloom"}):
        x, y = _drawn(4 * 200_000, 200_000)  # (chunks of 1.6 MB: settled at their ends)
        result = _shared_chain(x, y)
        seen.clear()  # (building the graph reads its parts' metadata: ordinary evaluations)
        got = result.compute(scheduler="sync")
    assert len(seen) >= 4 and all(seen), seen
    assert realize.STARTING[0] is False
    seen.clear()
    got.get()
    assert seen == [] or not any(seen)  # (the result read by the program: an ordinary wait)


@pytest.mark.skipif(numloom.get_device() == "cpu", reason="chunks on a GPU")
@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_gpu_chunks_leave_their_flag_reads_to_the_wait_for_the_result(monkeypatch, scheduler):
    """On a GPU, a chunk's evaluation at its task's end does not wait for the device to read
    the floating-point flag word: the GPU computes the chunk while Python traces the next, and
    one wait, for the result, reads the flags of all. An overflow in a chunk still warns as
    NumPy's would, by the time the result is read."""
    import warnings

    import dask

    from tests.backends.test_cuda_backend import flag_waits

    waits = flag_waits(monkeypatch)
    monkeypatch.setattr(numloom.dask, "SETTLE_BYTES", 1)  # (each chunk's result at its end)
    big = 8 * 200_000
    with dask.config.set({"array.backend": "numloom"}):
        x, y = _drawn(big, 200_000)
        result = _shared_chain(x, y)
        want = result.compute(scheduler="sync").get()
        numloom.sync()
        waits.clear()
        got = result.compute(scheduler=scheduler)
        during = list(waits)
        values = got.get()
        assert during == [] and len(waits) == 1 and waits[0] >= 8, (during, waits)
        numpy.testing.assert_allclose(values, want, rtol=1e-12)
        hot = da.from_array(numloom.asarray(numpy.full(big, 800.0)), chunks=200_000)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            total = da.exp(hot).sum().compute(scheduler=scheduler)
            assert numpy.isinf(total.get())
    assert any(issubclass(w.category, RuntimeWarning) and "overflow" in str(w.message)
               for w in caught), [str(w.message) for w in caught]  # fmt: skip


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_schedulers_compute_numloom_chunks_as_numpys(scheduler):
    """Dask's threaded scheduler runs numloom tasks in several threads at once."""
    host = numpy.random.default_rng(1).random((400, 300))
    mine = da.from_array(numloom.asarray(host), chunks=(50, 60))
    theirs = da.from_array(host, chunks=(50, 60))

    def program(x):
        y = da.exp(-x) * 3 + x.mean(axis=0)
        return (y @ y.T).sum(axis=1) + y.std()

    for _ in range(3):
        got = program(mine).compute(scheduler=scheduler)
        _same(got, program(theirs).compute(scheduler="sync"), rtol=1e-12)


def test_a_chunk_serializes_as_its_buffer():
    """Between worker processes a chunk travels as a header and a frame of its bytes (not
    pickled data), and arrives as a numloom array."""
    from distributed.protocol import deserialize, serialize

    x = numloom.asarray(HOST) * 2
    header, frames = serialize(x, serializers=("dask",))
    assert header["serializer"] == "dask"
    assert sum(memoryview(f).nbytes for f in frames) >= HOST.nbytes
    back = deserialize(header, frames)
    assert isinstance(back, numloom.ndarray)
    numpy.testing.assert_array_equal(back.get(), HOST * 2)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)  # fmt: skip
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_worker_processes_compute_numloom_chunks(client):
    mine, theirs = _pair(chunks=(20, 40))
    got = client.compute((mine * 3 + 1).sum(axis=0)).result()
    _same(got, (theirs * 3 + 1).sum(axis=0).compute())


def test_workers_settle_reduced_chunks(client):
    """``SettlePlugin`` on each worker: a task's numloom results are evaluated as it ends there
    (a chunk that moves to another worker is then already computed)."""
    client.register_plugin(numloom.dask.SettlePlugin())
    host = numpy.random.default_rng(4).random((1000, 600))
    x = da.from_array(numloom.asarray(host), chunks=(250, 600))
    partial = x.map_blocks(lambda b: (b * 2).sum(axis=1), drop_axis=1, dtype=float)
    futures = client.compute(partial.to_delayed().ravel().tolist())
    __import__("distributed").wait(futures)

    def pending_results(dask_worker):
        return [(isinstance(v, numloom.ndarray), v._storage.pending)
                for v in dask_worker.data.values() if isinstance(v, numloom.ndarray)]  # fmt: skip

    held = [entry for entries in client.run(pending_results).values() for entry in entries]
    assert len(held) >= x.numblocks[0]  # (the results, held by their futures on the workers)
    got = numpy.concatenate([numpy.asarray(f.result()) for f in futures])
    numpy.testing.assert_allclose(got, (host * 2).sum(axis=1), rtol=1e-13)
    assert not any(pending for _, pending in held)


def test_a_worker_that_dies_mid_computation_is_recovered(client, tmp_path):
    """A worker process dies while running a task; Dask retries it on a new worker and
    numloom recomputes its chunk."""
    marker, here = tmp_path / "died-once", os.getpid()

    def dies_once(block):
        if os.getpid() != here and not marker.exists():  # (Dask may call it here for a meta)
            marker.write_text("x")
            os._exit(1)
        return block * 2

    mine, theirs = _pair(chunks=(30, 40))
    future = client.compute(mine.map_blocks(dies_once, meta=numloom.empty((0, 0))).sum(),
                            retries=2)  # fmt: skip
    _same(future.result(timeout=120), (theirs * 2).sum().compute())
    assert marker.exists()


def test_the_dask_benchmark_runs_and_checks_its_results(capsys):
    """``python -m numloom bench --dask`` at its small sizes: every workload on Dask with
    NumPy chunks and with numloom chunks, numloom's results checked against NumPy's."""
    from numloom.tools import bench

    assert bench.main(["--dask", "--sizes", "small", "--repeat", "1", "--plain"]) == 0
    table = capsys.readouterr().out
    for name in ("blackscholes", "jacobi", "softmax", "kmeans"):
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} "))
        assert row.rstrip().endswith("| OK |")


def test_a_numloom_array_meeting_a_dask_array_joins_the_collection():
    """``dask_array - numloom_array`` and the reverse are Dask arrays, as with a NumPy array
    (numloom arrays are a chunk type Dask knows), not a computation of the Dask array."""
    mine, theirs = _pair()
    row = numloom.asarray(HOST[0])
    for got, want in ((mine - row, theirs - HOST[0]), (row - mine, HOST[0] - theirs),
                      (row[None, :] == mine, HOST[0][None, :] == theirs),
                      (numloom.maximum(row, mine), numpy.maximum(HOST[0], theirs))):  # fmt: skip
        assert isinstance(got, da.Array) and isinstance(got._meta, numloom.ndarray)
        _same(got.compute(), want.compute(), rtol=0)


def test_bad_input_gives_dasks_and_numpys_errors():
    """Chunks that do not line up, and numloom functions called on Dask arrays: the errors
    and results Dask and NumPy give."""
    mine, theirs = _pair()
    others = {"mine": da.from_array(numloom.asarray(numpy.ones((60, 30))), chunks=(15, 10)),
              "theirs": da.from_array(numpy.ones((60, 30)), chunks=(15, 10))}  # fmt: skip
    errors = []
    for x, y in ((mine, others["mine"]), (theirs, others["theirs"])):
        with pytest.raises(ValueError) as raised:
            (x + y).compute()
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "could not be broadcast" in errors[0]
    # a numloom ufunc on a Dask array hands the call to Dask (NEP 13), as NumPy's does: lazy
    got = numloom.sin(mine) + numloom.multiply(mine, 2, dtype="float32")
    assert isinstance(got, da.Array) and isinstance(got._meta, numloom.ndarray)
    want = numpy.sin(theirs) + numpy.multiply(theirs, 2, dtype="float32")
    assert isinstance(want, da.Array) and got.dtype == want.dtype
    _same(got.compute(), want.compute(), rtol=1e-7)
    # a function Dask does not implement: Dask's warning, then NumPy's result of its data
    with pytest.warns(FutureWarning, match="not implemented by Dask array"):
        eig = numloom.linalg.eigvals(da.from_array(numloom.asarray(numpy.diag([1.0, 2, 3])),
                                                   chunks=2))  # fmt: skip
    numpy.testing.assert_allclose(numpy.sort(numpy.asarray(eig)), [1.0, 2, 3])


def test_a_gpu_holds_256_mib_of_reduced_work_and_a_cpu_a_sixteenth_of_its_memory():
    """On a GPU a large hold keeps it idle while the held tasks are traced (Black-Scholes 4e9
    on an H200: 4.7 s holding 8.8 GB, 1.17 s holding 256 MiB)."""
    from numloom import dask as nd

    assert nd.settle_bytes("cuda:0") == nd.GPU_SETTLE_BYTES == 256 << 20
    host = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert nd.settle_bytes("cpu") == max(host // 16, 64 << 20)


def test_numloom_functions_hand_dask_arrays_to_dask():
    """NEP 18, as NumPy's functions do (NumPy's interoperability guide): ``np.mean(x)`` of a
    Dask array is Dask's lazy mean, not a computed numloom array."""
    x = da.arange(12.0, chunks=4)
    for got, want in [(numloom.mean(x), 5.5), (numloom.sum(x.reshape(3, 4), axis=0), [12, 15, 18, 21]),
                      (numloom.concatenate([x, x]).sum(), 132.0)]:  # fmt: skip
        assert isinstance(got, da.Array)
        numpy.testing.assert_array_equal(numpy.asarray(got.compute()), want)


def _shared_chain(x, y):
    """A chunk's graph with shared values, as Black-Scholes has (``d`` read twice): Dask's
    linear fusion leaves it several tasks a chunk."""
    d = da.log(x / y) + 0.5 * y
    return da.stack([(da.exp(-d) * x).sum(), (d * d - y).sum(dtype=numpy.float64)])


def _drawn(n=400_000, chunks=100_000):
    rng = da.random.default_rng(11)
    return rng.uniform(1.0, 2.0, n, chunks=chunks), rng.uniform(1.0, 2.0, n, chunks=chunks)


def test_each_chunks_own_tasks_are_fused_into_one():
    """The tasks of one chunk that depend on nothing outside it (its draws, the operations on
    them, its two reductions) become one task; its two partial sums come out of it as a
    tuple, one getitem task each. Turned off, Dask's graph keeps five tasks a chunk."""
    import dask

    with dask.config.set({"array.backend": "numloom"}):
        x, y = _drawn()
        result = _shared_chain(x, y)
        (fused,) = dask.optimize(result)
        with dask.config.set({"numloom.fuse-chunks": False}):
            (unfused,) = dask.optimize(result)
            want = result.compute(scheduler="sync")
        got = result.compute(scheduler="sync")
    graph, plain = dict(fused.__dask_graph__()), dict(unfused.__dask_graph__())

    chunks = x.numblocks[0]
    whole = [k for k in graph if k[0].startswith("numloom-chunk-")]
    assert len(whole) == chunks
    assert all(not graph[k].dependencies for k in whole)  # (nothing from outside the chunk)
    joins = 4  # (the stack's two sums of the partial sums, and its two parts)
    assert len(graph) == 3 * chunks + joins  # a chunk: its task, and a getitem for each sum
    assert len(plain) >= 5 * chunks + joins  # (draws, the shared value, the two sums)
    numpy.testing.assert_allclose(got.get(), want.get(), rtol=1e-12)
    xs = numpy.concatenate([numpy.asarray(b) for b in dask.compute(*x.to_delayed(),
                                                                   scheduler="sync")])  # fmt: skip
    ys = numpy.concatenate([numpy.asarray(b) for b in dask.compute(*y.to_delayed(),
                                                                   scheduler="sync")])  # fmt: skip
    d = numpy.log(xs / ys) + 0.5 * ys
    numpy.testing.assert_allclose(got.get(), [(numpy.exp(-d) * xs).sum(), (d * d - ys).sum()],
                                  rtol=1e-10)  # fmt: skip


def test_a_fused_chunk_task_runs_its_tasks_without_ordering_them_at_each_run(monkeypatch):
    """A chunk's fused task runs its tasks in an order found once, when the graph is
    optimized: Dask's own fused subgraphs call ``dask.order`` at each run (about 17 times a
    Black-Scholes chunk, 7 ms of host time a chunk on a GPU's host)."""
    import dask
    import dask.order

    calls = []
    real = dask.order.order

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    counts = {}
    for n in (4, 8):
        with dask.config.set({"array.backend": "numloom"}):
            x, y = _drawn(n * 10_000, 10_000)
            (opt,) = dask.optimize(_shared_chain(x, y))
            want = _shared_chain(x, y).compute(scheduler="sync")
            monkeypatch.setattr(dask.order, "order", counted)
            calls.clear()
            got = opt.compute(scheduler="sync", optimize_graph=False)
            monkeypatch.setattr(dask.order, "order", real)
        counts[n] = len(calls)
        numpy.testing.assert_array_equal(got.get(), want.get())
    assert counts[8] == counts[4], counts  # (the scheduler's own order, not one a chunk)


def test_chunk_fusion_leaves_numpy_chunks_and_tasks_with_outside_inputs_alone():
    """NumPy chunks keep Dask's graph; a chunk task that reads its neighbours (map_overlap)
    is not fused with the chunk's own (a fused task never waits on another chunk's task)."""
    import dask

    theirs = da.from_array(HOST.copy(), chunks=(15, 10))
    (same,) = dask.optimize((theirs * 2 + 1).sum(axis=0))
    assert not any(str(k[0]).startswith("numloom-chunk-") for k in dict(same.__dask_graph__()))
    mine = da.from_array(numloom.asarray(HOST), chunks=(15, 10))
    stencil = (mine * 2).map_overlap(lambda b: b * 0.5 + b.mean(), depth=1, boundary="none")
    (opt,) = dask.optimize(stencil.sum())
    graph = dict(opt.__dask_graph__())
    fused = [k for k in graph if str(k[0]).startswith("numloom-chunk-")]
    assert all(not graph[k].dependencies for k in fused)
    theirs_stencil = (theirs * 2).map_overlap(lambda b: b * 0.5 + b.mean(), depth=1,
                                              boundary="none")  # fmt: skip
    _same(stencil.sum().compute(), theirs_stencil.sum().compute())


def test_on_worker_processes_a_chunk_is_one_plan(client):
    """On a cluster each task's numloom results are evaluated as it ends: one task a chunk
    makes one plan a chunk (and its data never moves to the other worker); Dask's graph
    unfused made a plan for each of its dozen tasks."""
    import dask

    client.register_plugin(numloom.dask.SettlePlugin())

    def plans(dask_worker=None):
        return numloom.stats()["plans_evaluated"]

    counts = []
    for fuse in (True, False):
        with dask.config.set({"array.backend": "numloom", "numloom.fuse-chunks": fuse}):
            x, y = _drawn()
            before = sum(client.run(plans).values())
            got = client.compute(_shared_chain(x, y)).result()
            counts.append(sum(client.run(plans).values()) - before)
        if fuse:
            want = got
    numpy.testing.assert_allclose(got.get(), want.get(), rtol=1e-12)
    chunks = x.numblocks[0]
    assert counts[0] <= chunks + 4  # (a plan a chunk, and the joins of its partial sums)
    assert counts[1] >= 3 * chunks


def test_the_transfer_probe_moves_a_chunk_between_two_workers(client):
    """``bench --dask --workers N``'s first line: one chunk's move between two workers, and
    the bytes numloom copied through the host (none for CPU chunks: their buffers are sent)."""
    from numloom.tools.bench_dask import transfer_probe

    line = transfer_probe(client, nbytes=1 << 20, repeat=2)
    assert "a 1 MiB chunk from one worker to the other" in line
    # the workers' default device (cpu, or cuda:0 where the tests run on a GPU), asked of a
    # worker: a test before this one in the same process may have left this process's default
    device = client.submit(lambda: str(numloom.empty(1).device), pure=False).result()
    assert f"arrived as {device} 1048576" in line
    if device == "cpu":
        assert "sender 0 device to host, receiver 0 host to device" in line
    else:  # (CPU worker processes over TCP: a GPU chunk is sent through the host, both ways)
        assert "sender 2097152 device to host, receiver 2097152 host to device" in line


def test_each_workers_device_and_work_are_reported(client):
    """``bench --dask --workers N``'s last table: a row a worker, with numloom's device there,
    the GPU it is and the kernels numloom ran on it (each worker its own, after a compute)."""
    from numloom.tools.bench_dask import worker_devices

    x = da.from_array(numloom.arange(64.0), chunks=16)
    (x * 2 + 1).sum().compute()
    lines = worker_devices(client)
    rows = lines[2:]
    assert len(rows) == len(client.scheduler_info()["workers"]) == 2
    device = client.submit(lambda: str(numloom.empty(1).device), pure=False).result()
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2] == device and (cells[3] == "-") == (device == "cpu")
        assert int(cells[4]) >= 0 and cells[6].endswith("GiB")
    assert sum(int(row.split("|")[5]) for row in rows) >= 1  # (kernels, on some worker)


@pytest.mark.parametrize("name", ["argmin", "argmax", "nanargmin", "nanargmax"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_arg_reductions_of_numloom_chunks_keep_numloom_arrays(name, axis):
    """Dask's arg-reductions carry each chunk's values and positions as a NumPy structured
    array, which numloom holds through NumPy (on a GPU: a round trip through the host for every
    chunk). For numloom chunks they are a pair of numloom arrays, as for CuPy's."""
    data = HOST.copy()
    data[7, 3] = data[40, 22] = numpy.nan if name.startswith("nan") else 2.0
    mine = da.from_array(numloom.asarray(data), chunks=(15, 10))
    before = dict(numloom.stats()["fallbacks"])
    got = getattr(da, name)(mine, axis=axis).compute(scheduler="sync")
    assert numloom.stats()["fallbacks"] == before
    # (a whole-array position is one number: small data on the CPU gives NumPy's scalar, as
    # numloom's own reductions of it do)
    assert isinstance(got, numloom.ndarray) or (axis is None and isinstance(got, numpy.intp))
    numpy.testing.assert_array_equal(numpy.asarray(got), getattr(numpy, name)(data, axis=axis))
    # each chunk's task gives numloom arrays (also where the result is one number)
    from dask.array import chunk, reductions

    axes = (0, 1) if axis is None else (axis,)
    offset = ((15, 10), data.shape) if axis is None else 15
    pair = reductions.arg_chunk(chunk.min, chunk.argmin, numloom.asarray(data[15:30, 10:20]),
                                axes, offset)  # fmt: skip
    assert {type(v) for v in pair.values()} == {numloom.ndarray}


@pytest.mark.parametrize("shape, chunks, axis", [((50,), 7, None), ((50,), 7, 0),
                                                 ((6, 5, 4), (4, 2, 3), None),
                                                 ((6, 5, 4), (4, 2, 3), 2)])  # fmt: skip
def test_arg_reductions_of_numloom_chunks_of_one_and_three_axes(shape, chunks, axis):
    """The whole array's flat position from each chunk's (``unravel``/``ravel_multi_index``,
    traced on numloom's arrays) and a picked axis: NumPy's answer."""
    data = numpy.random.default_rng(4).random(shape)
    mine = da.from_array(numloom.asarray(data), chunks=chunks)
    for name in ("argmax", "argmin"):
        got = getattr(da, name)(mine, axis=axis).compute(scheduler="sync")
        numpy.testing.assert_array_equal(numpy.asarray(got), getattr(numpy, name)(data, axis=axis))


def test_the_task_profile_names_each_kind_of_task_and_the_sampled_stacks(client):
    """``bench --dask --profile``: one compute's wall time, the workers' time by kind of task
    (Black-Scholes' chunk tasks fused into one, ``numloom-chunk``), and the sampled stacks."""
    from numloom.tools.bench_dask import SIZES, _programs, task_profile

    _, program = _programs(SIZES["small"])["blackscholes"]
    lines = task_profile(client, "blackscholes", program)
    assert lines[0].startswith("blackscholes: task stream of one compute: ")
    assert any("compute  numloom-chunk" in line for line in lines[1:])
    assert any(line.startswith("  sampled: ") for line in lines)

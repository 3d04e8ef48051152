"""The evaluation model: sync points, evaluating everything pending together, dead
intermediates never stored, automatic flushes in long loops, data-dependent errors, fallbacks."""

from __future__ import annotations

import gc
import os
import sys
import threading
import tracemalloc
import warnings

import numpy
import pytest

import numloom as nl
from numloom.api import fallback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import workloads as W  # noqa: E402


def _pending_outputs(*arrays) -> int:
    return len(nl.explain(*arrays).outputs)


def test_nothing_runs_before_a_sync_point():
    before = nl.stats()["plans_evaluated"]
    a = nl.arange(10.0)
    b = nl.sin(a) * 2 + 1
    assert nl.stats()["plans_evaluated"] == before
    assert b._storage.pending
    numpy.testing.assert_allclose(b.get(), numpy.sin(numpy.arange(10.0)) * 2 + 1)
    assert not b._storage.pending


@pytest.mark.parametrize(
    "sync",
    [
        lambda x: x.get(),
        lambda x: numpy.asarray(x),
        lambda x: repr(x),
        lambda x: x.tolist(),
        lambda x: float(x.sum()),
        lambda x: nl.sync(),
        lambda x: nl.evaluate(x),
    ],
)
def test_sync_points_evaluate(sync):
    x = nl.arange(4.0) + 1
    sync(x)
    assert not x._storage.pending


def test_a_sync_evaluates_all_live_pending_arrays_together():
    a = nl.arange(6.0)
    call, put = a * 2, a * 3
    before = nl.stats()["plans_evaluated"]
    call.get()
    assert nl.stats()["plans_evaluated"] == before + 1
    assert not put._storage.pending  # evaluated by the same sync


def test_dead_intermediates_are_never_outputs():
    a = nl.asarray(numpy.arange(8.0))
    t = a + 1
    u = t * 2
    del t
    gc.collect()
    plan = nl.explain()
    assert all(n.shape == (8,) for n in plan.outputs)
    assert _pending_outputs(u) == 1
    assert len(plan.outputs) == 1


def test_evaluate_keeps_values_and_results_match_numpy():
    a = nl.asarray(numpy.arange(12.0).reshape(3, 4))
    b = (a.T * 2)[1:]
    nl.evaluate(b)
    numpy.testing.assert_array_equal(b.get(), (numpy.arange(12.0).reshape(3, 4).T * 2)[1:])


def test_long_loop_flushes_and_stays_bounded():
    """10,000 iterations of ``x = x * 0.5 + 1``: the pending graph stays bounded."""
    x = nl.zeros(64)
    flushes = nl.stats()["auto_flushes"]
    tracemalloc.start()
    for i in range(10_000):
        x = x * 0.5 + 1
        if i == 2_000:
            gc.collect()
            early, _ = tracemalloc.get_traced_memory()
    gc.collect()
    late, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert nl.stats()["auto_flushes"] > flushes
    assert late < early + 2_000_000  # no growth with the iteration count
    numpy.testing.assert_allclose(x.get(), numpy.full(64, 2.0))


def test_long_loop_of_writes_flushes():
    a = nl.zeros(100, dtype=nl.int64)
    for i in range(3_000):
        a[i % 100] += 1
    assert a._storage.version.depth < 1_000
    numpy.testing.assert_array_equal(a.get(), numpy.full(100, 30))


@pytest.fixture
def asynchronous_device(monkeypatch):
    """The CPU backend taken for one that runs plans on its own, as a GPU does, with every
    write large enough to start at once."""
    from numloom.backends import cpu
    from numloom.core import config

    monkeypatch.setattr(cpu, "ASYNCHRONOUS", True)
    monkeypatch.setattr(config, "START_BYTES", 1)


def test_a_large_write_starts_at_once_and_each_sweep_replays_one_plan(asynchronous_device):
    host = numpy.random.default_rng(0).random((34, 34))
    grid = nl.asarray(host)
    W.jacobi(nl, grid, 2)
    before = nl.stats()
    W.jacobi(nl, grid, 10)
    after = nl.stats()
    assert not grid._storage.pending  # started at the write, before any sync
    assert after["plans_evaluated"] - before["plans_evaluated"] == 10
    assert after["plan_cache_hits"] - before["plan_cache_hits"] == 10
    assert after["kernels_launched"] - before["kernels_launched"] == 10
    assert after["kernels_compiled"] == before["kernels_compiled"]
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 12), rtol=1e-12)


def test_large_writes_start_once_they_add_up(asynchronous_device, monkeypatch):
    from numloom.core import config

    host = numpy.random.default_rng(3).random((30, 30))
    monkeypatch.setattr(config, "START_BYTES", 3 * host[1:-1, 1:-1].nbytes)  # 3 sweeps
    grid = nl.asarray(host)
    before = nl.stats()["plans_evaluated"]
    W.jacobi(nl, grid, 10)
    assert nl.stats()["plans_evaluated"] - before == 3  # after sweeps 3, 6 and 9
    assert grid._storage.pending  # the tenth waits
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host.copy(), 10), rtol=1e-12)
    W.jacobi(nl, grid, 2)
    nl.sync()  # a sync starts the count again
    before = nl.stats()["plans_evaluated"]
    W.jacobi(nl, grid, 2)
    assert nl.stats()["plans_evaluated"] == before
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 14), rtol=1e-12)


def test_a_started_write_leaves_the_value_and_other_arrays_pending(asynchronous_device):
    a = nl.arange(12.0)
    kept = a * 3  # pending, reads the version the write replaces
    value = a[::-1] + 1
    a[:] = value
    assert not a._storage.pending
    assert value._storage.pending and kept._storage.pending  # not stored: maybe never needed
    numpy.testing.assert_array_equal(kept.get(), numpy.arange(12.0) * 3)
    numpy.testing.assert_array_equal(value.get(), numpy.arange(12.0)[::-1] + 1)
    numpy.testing.assert_array_equal(a.get(), numpy.arange(12.0)[::-1] + 1)


def test_small_or_failing_writes_wait_for_the_sync(asynchronous_device, monkeypatch):
    from numloom.core import config

    a = nl.arange(100.0) * 0  # (pending: a small zeros is made at once)
    a[3] = 1.0  # a small part of the array: its writes fuse
    assert a._storage.pending
    a[:] = 2.0
    assert not a._storage.pending
    b = nl.arange(5) * 10
    b[:] = b[nl.arange(5) * 2]  # 6 and 8 are out of bounds: the error belongs to the sync
    assert b._storage.pending
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        b.get()
    numpy.testing.assert_array_equal(b.get(), numpy.arange(5) * 10)
    monkeypatch.setattr(config, "START_BYTES", 0)
    a[:] = nl.arange(100.0) * 0 + 3.0  # (a pending value: host data is written at once)
    assert a._storage.pending


def test_a_traced_write_never_starts_early(asynchronous_device):
    step = nl.jit(lambda g: W.jacobi(nl, g, 2))
    host = numpy.random.default_rng(1).random((18, 18))
    grid = nl.asarray(host)
    for _ in range(3):
        step(grid)
    assert len(step.traces) == 1  # the trace evaluated nothing before its end: it replays
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 6), rtol=1e-12)


def test_pending_out_of_bounds_index_raises_at_sync_and_keeps_state():
    a = nl.arange(5) * 10
    idx = nl.arange(4) * 2  # 6 is out of bounds, known only when idx runs
    b = a + 1
    c = a[idx]
    a[idx] = 7
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 5"):
        c.get()
    numpy.testing.assert_array_equal(a.get(), numpy.arange(5) * 10)
    numpy.testing.assert_array_equal(b.get(), numpy.arange(5) * 10 + 1)
    with pytest.raises(IndexError):
        c.get()
    numpy.testing.assert_array_equal((a + 1).get(), numpy.arange(5) * 10 + 1)


def test_the_error_points_at_the_users_line():
    idx = nl.arange(3) * 5
    a = nl.arange(4)
    c = a[idx]
    with pytest.raises(IndexError) as info:
        c.get()
    assert any(__file__ in note for note in info.value.__notes__)


def test_round_trip_is_counted_and_warns_once_at_the_users_line():
    fallback._warned.discard(("roots", "numpy"))
    before = nl.stats()["fallbacks"].get("roots", 0)
    x = nl.asarray([1.0, -3.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        u = nl.roots(x)
        nl.roots(x)
    fallback_warnings = [w for w in caught if issubclass(w.category, nl.NumloomFallbackWarning)]
    assert isinstance(u, nl.ndarray)
    numpy.testing.assert_allclose(u.get(), [2.0, 1.0])
    if nl.get_device() == "cpu":  # NumPy on numloom's own buffer: native, not a round trip
        assert not fallback_warnings and nl.stats()["fallbacks"].get("roots", 0) == before
        return
    assert len(fallback_warnings) == 1
    assert fallback_warnings[0].filename == __file__
    assert nl.stats()["fallbacks"]["roots"] == before + 2


def test_numpy_functions_on_numloom_arrays_stay_in_numloom():
    x = nl.arange(5.0)
    assert isinstance(numpy.sin(x), nl.ndarray)
    assert isinstance(numpy.concatenate([x, x]), nl.ndarray)
    assert isinstance(numpy.sum(x), nl.ndarray)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nl.NumloomFallbackWarning)
        norm = numpy.linalg.norm(x[None, :] * nl.ones((3, 1)))  # (native: a 0-d array, as sum)
        assert isinstance(norm, nl.ndarray) and norm.shape == ()
        assert float(norm) == numpy.linalg.norm(numpy.arange(5.0)[None, :] * numpy.ones((3, 1)))
        q = numpy.fft.fft(x)
    assert isinstance(q, nl.ndarray)


def test_random_draws_match_numpy_seeded():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nl.NumloomFallbackWarning)
        got = nl.random.default_rng(7).standard_normal(5)
    want = numpy.random.default_rng(7).standard_normal(5)
    assert isinstance(got, nl.ndarray)
    numpy.testing.assert_array_equal(got.get(), want)


def test_explain_lists_kernels_with_kinds_and_reasons():
    a = nl.arange(6.0).reshape(2, 3)
    s = nl.exp(a).sum(axis=1)
    plan = nl.explain(s)
    kinds = {k.kind for k in plan.kernels}
    assert "reduce" in kinds
    for k in plan.kernels:
        assert k.name and k.reason and k.outputs
    assert "reduce" in str(plan)


def test_stats_is_a_snapshot():
    s = nl.stats()
    s["kernels_launched"] = -1
    assert nl.stats()["kernels_launched"] >= 0
    assert set(s) >= {"kernels_launched", "kernels_compiled", "compile_cache_hits",
                      "graphs_launched", "graph_updates", "host_to_device_bytes",
                      "device_to_host_bytes", "fallbacks"}  # fmt: skip


def test_set_device_cpu_and_unusable_cuda(monkeypatch):
    monkeypatch.setattr(nl.device_module, "_current", nl.get_device())  # (restored after)
    nl.set_device("cpu")
    assert nl.get_device() == "cpu"
    with nl.device("cpu"):
        assert nl.zeros(2).device == "cpu"
    with pytest.raises(ValueError, match="unknown device"):
        nl.set_device("tpu")
    monkeypatch.setattr(nl.device_module, "cuda_problem", lambda: "no CUDA driver found")
    with pytest.raises(nl.DeviceError, match="no CUDA driver found"):
        nl.set_device("cuda")
    assert nl.get_device() == "cpu"


def test_show_config_lists_every_variable(capsys):
    nl.show_config()
    out = capsys.readouterr().out
    for name in nl.config.VARIABLES:
        assert name in out


@pytest.fixture
def on_cpu():
    """Zero-copy numpy.asarray is a CPU feature (a GPU array is copied to the host)."""
    with nl.device("cpu"):
        yield


def test_numpy_asarray_shares_the_computed_data(on_cpu):
    """numpy.asarray(x) of a CPU array costs nothing: it is the computed buffer, and x's later
    writes reach it, as they reach a NumPy array's views, as its writes reach x;
    numpy.array(x) is a writable copy."""
    x = nl.arange(12.0).reshape(3, 4) * 2
    h = numpy.asarray(x)
    assert numpy.shares_memory(h, numpy.asarray(x))
    assert h.flags.writeable
    h[0, 0] = 1.0
    assert x[0, 0] == 1.0
    col = numpy.asarray(x[:, 1])  # a view of the array is a view of the same data
    assert numpy.shares_memory(col, h)
    numpy.testing.assert_array_equal(col, [2.0, 10.0, 18.0])
    copied = numpy.array(x)
    assert copied.flags.writeable and not numpy.shares_memory(copied, h)
    assert numpy.asarray(x, dtype=numpy.float32).dtype == numpy.float32
    x[0, 0] = 100.0  # written into the memory h views, as NumPy's view would see it
    x[1] += 1
    assert h[0, 0] == 100.0 and x[0, 0] == 100.0 and col[1] == 11.0 and copied[0, 0] == 1.0


@pytest.mark.parametrize("keep", ["the array", "a view of it"])
def test_memory_shared_with_numpy_is_not_reused_while_numpy_holds_it(keep, on_cpu):
    a = nl.arange(100_000.0) + 1  # a compiled kernel's output: a pool block
    h = numpy.asarray(a)
    if keep == "a view of it":
        h = h[10:][::2]
    expected = (numpy.arange(100_000.0) + 1)[10:][::2] if keep != "the array" else None
    del a
    gc.collect()
    for _ in range(4):  # new outputs of the same size would take a freed block
        b = nl.arange(100_000.0) * 7
        numpy.asarray(b)
        del b
    if expected is None:
        expected = numpy.arange(100_000.0) + 1
    numpy.testing.assert_array_equal(h, expected)


def test_reading_results_with_numpy_asarray_lets_the_pool_reuse_their_memory(on_cpu):
    from numloom.backends.cpu_memory import POOL

    def step():
        out = nl.arange(100_000.0) * 3
        assert numpy.asarray(out)[5] == 15.0
        return out.__array__().__array_interface__["data"][0]

    step()
    gc.collect()
    # the second and later outputs reuse the first one's block: no fresh memory each call
    assert len({step() for _ in range(5)}) == 1
    assert POOL.held >= 0


@pytest.mark.parametrize("depth", [10, 300])
def test_plan_structure_is_toposort_order_at_any_depth(depth):
    """Plans are keyed by ``dag.structure``: by recursion for shallow DAGs, with an explicit
    stack for deep ones; both give toposort's order, its positions and the same key."""
    from numloom.core import dag

    a = nl.asarray(numpy.arange(6.0))
    b = nl.asarray(numpy.ones(6))
    x, y = a, b
    for k in range(depth):
        x, y = x * 2.0 + y[::-1], x if k % 3 else y - x
    roots = [x._node(), y._node(), x._node()]
    assert (max(r.depth for r in roots) > dag._RECURSIVE_DEPTH) == (depth == 300)
    order, pos, key = dag.structure(roots)
    expected = dag.toposort(roots)
    assert order == expected
    expected_pos, expected_key = dag.structure_key(expected, roots)
    assert key == expected_key
    assert pos is None or pos == expected_pos  # (the compiled walk leaves them to its callers)
    assert len(order) == len(set(map(id, order)))


def test_sliced_windows_of_other_layouts_read_their_own_elements():
    """``a[key]`` views are cached by layout and key: the same key on other layouts, offsets
    and dtypes still reads NumPy's elements."""
    host = numpy.arange(7 * 9 * 5, dtype=numpy.float32).reshape(7, 9, 5)
    a = nl.asarray(host)
    for x, ref in [(a, host), (a[1:], host[1:]), (a[:, ::-1], host[:, ::-1]),
                   (a.transpose(2, 0, 1), host.transpose(2, 0, 1))]:  # fmt: skip
        for key in [(slice(1, -1), slice(2, None)), (0, slice(None, -2)), (Ellipsis, 1),
                    (None, slice(None, None, 2)), (-1,)]:  # fmt: skip
            numpy.testing.assert_array_equal(numpy.asarray(x[key]), ref[key])
    with pytest.raises(IndexError, match="too many indices"):
        a[1:][0, 0, 0, 0]
    a[1, 2], a.transpose(1, 0, 2)  # cached: equal keys of other types are still NumPy's errors
    with pytest.raises(IndexError, match="only integers"):
        a[1, 2.0]
    with pytest.raises(TypeError):
        a.transpose(1.0, 0, 2)
    with pytest.raises(TypeError, match="an integer is required"):
        a.transpose(True, 0, 2)  # True == 1 as a key


def test_an_evaluated_version_is_freed_at_once_without_the_garbage_collector():
    """Nothing an evaluation builds keeps the DAG it ran in a reference cycle: a loop's old
    buffers go back to the memory pool as soon as the next version replaces them."""
    import weakref

    def sweep(grid):  # Jacobi's listing: a stencil written through a view
        center = grid[1:-1, 1:-1]
        center[:] = 0.2 * (center + grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2]
                           + grid[1:-1, 2:])  # fmt: skip

    grid = nl.asarray(numpy.random.default_rng(0).random((34, 34)))
    sweep(grid)
    nl.sync()
    gc.collect()
    gc.disable()
    try:
        old = weakref.ref(grid._storage.version.arg)
        for _ in range(2):
            sweep(grid)
            nl.sync()
            assert old() is None
            old = weakref.ref(grid._storage.version.arg)
    finally:
        gc.enable()


def test_numloom_debug_prints_the_round_trips_at_exit():
    """``NUMLOOM_DEBUG=1``: at exit, each function that made a device round trip, how often,
    and the bytes it copied."""
    import os
    import subprocess
    import sys

    script = ("import numloom\n"
              "from numloom.api import fallback\n"
              "fallback._warn_once('roots'); fallback._warn_once('roots')\n"
              "fallback._BYTES['roots'] = 4096\n")  # fmt: skip
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                         text=True, env={**os.environ, "NUMLOOM_DEBUG": "1"})  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "functions that ran through NumPy or CuPy" in run.stderr
    assert "  roots: 2 call(s), 4,096 bytes" in run.stderr
    quiet = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                           text=True, env={**os.environ, "NUMLOOM_DEBUG": "0"})  # fmt: skip
    assert "functions that ran through" not in quiet.stderr


def test_phases_are_nvtx_ranges_where_nvtx_is_installed(monkeypatch):
    """With the ``nvtx`` package, planning, compiling and evaluating are NVTX ranges of the
    domain ``numloom`` (Nsight Systems shows them beside the kernels)."""
    import contextlib

    from numloom.core import ranges

    seen = []

    class FakeNvtx:
        @staticmethod
        def annotate(message, domain):
            seen.append((message, domain))
            return contextlib.nullcontext()

        @staticmethod
        def start_range(message, domain):
            seen.append((message, domain))
            return len(seen)

        @staticmethod
        def end_range(handle):
            seen.append(("end", handle))

    monkeypatch.setattr(ranges, "_nvtx", FakeNvtx)
    monkeypatch.setattr(ranges, "_tracing", None)
    x = nl.asarray(numpy.arange(37.0))
    nl.evaluate(nl.sin(x) * 3.25 - nl.cos(x) / 7.5)  # (a new plan: planned and compiled)
    nl.evaluate(nl.sin(x) * 2.0)
    names = [m for m, d in seen if d == "numloom"]
    assert {"numloom: plan", "numloom: compile", "numloom: evaluate"} <= set(names)
    traces = [i + 1 for i, (m, _) in enumerate(seen) if m == "numloom: trace"]
    assert len(traces) >= 2 and ("end", traces[0]) in seen  # (tracing between evaluations)
    monkeypatch.setattr(ranges, "_nvtx", None)
    assert ranges.phase("numloom: evaluate") is ranges.phase("numloom: plan")  # (one no-op)


def test_a_round_trip_warning_is_one_line_naming_the_function_and_its_cost():
    fallback._warned.discard(("roots", "numpy"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback._warn_once("roots", "numpy", 3_200_000)
    (warning,) = [w for w in caught if issubclass(w.category, nl.NumloomFallbackWarning)]
    text = str(warning.message)
    assert "\n" not in text and len(text) < 160
    assert text.startswith("numloom.roots runs through NumPy on the host: 3.2 MB copied "
                           "device -> host -> device")  # fmt: skip


def test_nvtx_is_imported_only_where_a_profiler_records_its_ranges(tmp_path):
    """Without Nsight (no ``NVTX_INJECTION64_PATH``), a program's first evaluation does not
    import ``nvtx`` (about 15 ms of a first call on a GPU host); with it, it does."""
    import subprocess

    (tmp_path / "nvtx.py").write_text("def annotate(*a, **k):\n    import contextlib\n"
                                      "    return contextlib.nullcontext()\n"
                                      "start_range = lambda **k: 1\nend_range = lambda h: None\n")  # fmt: skip
    script = ("import sys, numloom as nl\nx = nl.arange(5.0) * 2\nnl.evaluate(x)\n"
              "print('nvtx' in sys.modules)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    for injected, imported in (("", "False"), ("/opt/nsight/libinjection.so", "True")):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env={**env, "NVTX_INJECTION64_PATH": injected})  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == imported


def test_a_device_block_is_its_threads_own(monkeypatch):
    """``with numloom.device(...)`` is the thread's own, as CuPy's ``Device`` context is: a
    thread inside one does not move another thread's new arrays, and blocks that end in any
    order leave the process's default as it was."""
    monkeypatch.setattr(nl.device_module, "_check", lambda name: name)  # (no GPU needed)
    before = nl.get_device()
    inside, leave = threading.Event(), threading.Event()
    seen = {}

    def block(name):
        with nl.device(name):
            seen[name] = nl.get_device()
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=block, args=("cuda:7",))
    other.start()
    assert inside.wait(5)
    assert nl.get_device() == before  # (this thread is outside any block)
    with nl.device("cuda:3"):
        assert nl.get_device() == "cuda:3"
        leave.set()  # (the other block ends first)
        other.join(5)
        assert nl.get_device() == "cuda:3"
    assert seen == {"cuda:7": "cuda:7"}
    assert nl.get_device() == before



def test_many_computed_arrays_kept_alive_flush_nothing():
    """A filter's history, ``xs.append(x.copy())`` of a small computed state each step: copies
    of computed arrays are computed, not pending. The compiled path registered them as
    pending, so past ``NUMLOOM_FLUSH_WIDTH`` (4096) kept arrays every new array swept and
    scanned all of them (8000 steps: 1.65 s, NumPy 0.01 s)."""
    from numloom.core import config, realize

    if nl.get_device() != "cpu":
        pytest.skip("a loop's small arrays run at once on the CPU (a GPU's are traced)")
    x, f = nl.ones((2, 1)), nl.array([[1.0, 1.0], [0.0, 1.0]])
    keep = []
    flushes = nl.stats()["auto_flushes"]
    for _ in range(config.FLUSH_WIDTH + 1500):
        x = nl.dot(f, x)
        keep.append(x.copy())
    assert nl.stats()["auto_flushes"] == flushes
    assert len(realize._pending.refs) < config.FLUSH_WIDTH
    assert float(keep[-1][0, 0]) == float(config.FLUSH_WIDTH + 1501)

"""Threads are users too: independent numloom work in several threads gives NumPy's results,
and threads may read one shared array, as with NumPy (Dask's threaded scheduler relies on it)."""

from __future__ import annotations

import threading
import traceback

import numpy

import numloom as nl


def _run_threads(work, count: int = 4) -> list:
    errors = []

    def run(k):
        try:
            work(k)
        except Exception as e:  # noqa: BLE001 (reported by the test)
            errors.append(f"thread {k}: {type(e).__name__}: {e}\n{traceback.format_exc()}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_independent_work_in_threads_gives_numpys_results():
    def work(k):
        host = numpy.arange(500.0) + k
        x = nl.asarray(host)
        want = host.copy()
        for i in range(60):
            x[1:] += 1  # a write through a view
            want[1:] += 1
            x[x > 400 + k] = 0  # a masked write, synced for its mask
            want[want > 400 + k] = 0
            x[i] = i * 0.5  # an element write
            want[i] = i * 0.5
            total = float((x * 2).sum())
            assert total == float((want * 2).sum()), (k, i)
            assert x[i + 1] == want[i + 1]
        m = nl.asarray(numpy.ones((20, 20)) * k)
        numpy.testing.assert_allclose((m @ m).get(), numpy.ones((20, 20)) * k * k * 20)
        numpy.testing.assert_array_equal(x.get(), want)

    assert _run_threads(work) == []


def test_threads_share_one_read_only_array():
    shared = nl.arange(3000.0) * 2
    want = numpy.arange(3000.0) * 2

    def work(k):
        for _ in range(20):
            assert float(shared.sum()) == want.sum()
            numpy.testing.assert_array_equal(numpy.asarray(shared[k::4]), want[k::4])
            assert shared[100 * k] == want[100 * k]
            assert (shared + k).get()[5] == want[5] + k

    assert _run_threads(work) == []


def test_a_jit_function_called_from_threads():
    f = nl.jit(lambda a, b: a * b + 1)

    def work(k):
        a = nl.asarray(numpy.arange(100.0) + k)
        for _ in range(30):
            numpy.testing.assert_array_equal(f(a, a).get(), (numpy.arange(100.0) + k) ** 2 + 1)

    assert _run_threads(work) == []


def test_a_sync_in_another_thread_during_a_trace_leaves_the_trace_whole(monkeypatch):
    """A sync elsewhere while a jit function is traced must not evaluate the call's results
    under the trace (which would then replay them as constants in every later call)."""
    import importlib

    jit_module = importlib.import_module("numloom.core.jit")
    structure = jit_module._structure

    def structure_while_another_thread_syncs(*args):
        other = threading.Thread(target=nl.sync)
        other.start()
        other.join(0.3)  # (it waits for the trace to finish)
        return structure(*args)

    monkeypatch.setattr(jit_module, "_structure", structure_while_another_thread_syncs)
    f = nl.jit(lambda a: a * 2)
    numpy.testing.assert_array_equal(f(nl.arange(3.0)).get(), [0.0, 2.0, 4.0])
    monkeypatch.setattr(jit_module, "_structure", structure)
    numpy.testing.assert_array_equal(f(nl.arange(3.0) + 10).get(), [20.0, 22.0, 24.0])

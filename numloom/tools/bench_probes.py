"""Probes beside the benchmark's table: the device's copy bandwidth, a first call in a new
process, plans for new sizes and peak memory."""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .bench_report import _as_tuple, _count

# ---------------------------------------------------------------------------------------------
# Probes beside the table: copy bandwidth, first call in a new process, peak device memory


def copy_bandwidth(numloom, device: str) -> float:
    """Bytes per second a device-to-device copy of 1 GiB moves (read plus write), the best of
    numloom's negation and CuPy's copy: the rate of the memory floor. NaN on the CPU."""
    if device == "cpu":
        return float("nan")
    n = 1 << 28  # float32 elements: 1 GiB
    rates = []
    x = numloom.ones(n, np.float32)
    numloom.sync()
    times = []
    for _ in range(11):
        t0 = time.perf_counter()
        y = -x  # a real kernel: a copy of an array nobody writes may share its buffer
        numloom.sync()
        times.append(time.perf_counter() - t0)
        del y
    rates.append(2 * 4 * n / statistics.median(times))
    del x
    try:
        import cupy as cp

        a, b = cp.ones(n, cp.float32), cp.empty(n, cp.float32)
        stream = cp.cuda.get_current_stream()
        times = []
        for _ in range(11):
            stream.synchronize()
            t0 = time.perf_counter()
            cp.copyto(b, a)
            stream.synchronize()
            times.append(time.perf_counter() - t0)
        rates.append(2 * 4 * n / statistics.median(times))
        del a, b
    except Exception:  # noqa: BLE001 (no CuPy: numloom's copy alone)
        pass
    gc.collect()
    return max(rates)


FIRST_CALL = """
import json, sys, time
import numpy
import numloom as nl
sys.path.insert(0, {folder!r})
import workloads as wl
nl.set_device({device!r})
inputs = wl.blackscholes_inputs({n}, numpy.random.default_rng(0))
t0 = time.perf_counter()
args = [nl.asarray(a) for a in inputs]
nl.sync()
t1 = time.perf_counter()
call, put = wl.blackscholes(nl, *args)
nl.sync()
t2 = time.perf_counter()
print(json.dumps({{"setup_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3}}))
"""


def first_call_probe(folder: Path, device: str, n: int = 1_000_000) -> list[str]:
    """Black-Scholes' first call (trace, compile, run) in a new process, with an empty compile
    cache and then with the cache that run filled; the upload of its inputs (and on a GPU the
    CUDA context) is timed apart."""
    script = FIRST_CALL.format(folder=str(folder), device=device, n=n)
    lines = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMLOOM_CACHE_DIR=cache)
        for label in ("empty compile cache", "warm compile cache"):
            run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                 text=True, timeout=600)  # fmt: skip
            if run.returncode != 0:
                last = (run.stderr.strip().splitlines() or ["no output"])[-1]
                lines.append(f"blackscholes {_count(n)} first-call probe failed: {last}")
                break
            got = json.loads(run.stdout.strip().splitlines()[-1])
            setup = "CUDA context and upload" if device != "cpu" else "upload"
            lines.append(f"blackscholes {_count(n)} first call in a new process, {label}: "
                         f"{got['first_ms']:.0f} ms (trace, compile, run; {setup} "
                         f"{got['setup_ms']:.0f} ms before it)")  # fmt: skip
    return lines


def new_size_probe(numloom, wl, n: int = 100_000, sizes: int = 20) -> str:
    """Black-Scholes over ``sizes`` sizes it has not run at (``n`` plus multiples of 1024),
    one call each after warming up at ``n``: the time of a call at a new size (trace, plan,
    run) against a call at a size it has run, and what the new sizes built."""
    rng = np.random.default_rng(0)

    def timed(size: int) -> float:
        inputs = wl.blackscholes_inputs(size, rng)
        args = [numloom.asarray(a) for a in inputs]
        numloom.sync()
        t0 = time.perf_counter()
        out = wl.blackscholes(numloom, *args)
        numloom.sync()
        took = (time.perf_counter() - t0) * 1e3
        want = wl.blackscholes(np, *inputs)
        for o, w in zip(out, want):
            np.testing.assert_allclose(np.asarray(o), w, rtol=1e-4, atol=1e-4)
        return took

    for _ in range(3):
        timed(n)
    again = statistics.median([timed(n) for _ in range(sizes)])
    before = numloom.stats()
    new = statistics.median([timed(n + 1024 * (k + 1)) for k in range(sizes)])
    after = numloom.stats()
    built = {k: after.get(k, 0) - before.get(k, 0)
             for k in ("kernels_compiled", "graphs_built", "graph_updates",
                       "plans_from_templates")}  # fmt: skip
    return (
        f"blackscholes {_count(n)} at {sizes} new sizes: {new:.2f} ms a call, against "
        f"{again:.2f} ms at a size it has run (medians); the new sizes compiled "
        f"{built['kernels_compiled']} kernels, built {built['graphs_built']} CUDA graphs, "
        f"updated {built['graph_updates']} graph nodes in place, took "
        f"{built['plans_from_templates']} plans from their structure's template"
    )


def peak_memory_probe(numloom, case, inputs: tuple) -> str:
    """Device memory numloom holds at its peak during one call, over the inputs and outputs."""
    from numloom.backends import cuda as backend

    args = tuple(numloom.asarray(a) for a in inputs)
    numloom.sync()
    gc.collect()
    held = backend.memory_in_use()
    backend.reset_peak()
    out = _as_tuple(case.run(numloom, *args))
    numloom.sync()
    extra = backend.memory_peak() - held
    in_bytes = sum(a.nbytes for a in inputs)
    out_bytes = sum(int(np.prod(o.shape)) * o.dtype.itemsize for o in out)
    del out, args
    ratio = (in_bytes + extra) / (in_bytes + out_bytes)
    return (f"{case.name} {case.size}: peak device memory {(in_bytes + extra) / 1e6:.0f} MB, "
            f"{ratio:.3f}x its inputs and outputs ({(in_bytes + out_bytes) / 1e6:.0f} MB)")  # fmt: skip


def host_peak_memory_probe(numloom, case, inputs: tuple) -> str:
    """Host memory at its peak while numloom copies the inputs in and makes one call (traced
    allocations, with the memory pool emptied first so the call allocates what it uses),
    over the inputs and outputs."""
    import tracemalloc

    from numloom.backends.cpu_memory import POOL

    numloom.sync()
    gc.collect()
    POOL.clear()
    tracemalloc.start()
    try:
        args = tuple(numloom.asarray(a) for a in inputs)
        out = _as_tuple(case.run(numloom, *args))
        numloom.sync()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    in_bytes = sum(a.nbytes for a in inputs)
    out_bytes = sum(int(np.prod(o.shape)) * o.dtype.itemsize for o in out)
    del out, args
    ratio = peak / (in_bytes + out_bytes)
    return (f"{case.name} {case.size}: peak host memory {peak / 1e6:.0f} MB, {ratio:.3f}x its "
            f"inputs and outputs ({(in_bytes + out_bytes) / 1e6:.0f} MB)")  # fmt: skip

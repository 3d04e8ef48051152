"""What numloom's host side costs a program: a traced operation, a sync whose plan is cached,
and small workloads run unchanged (where the host time is all there is), against NumPy's eager
run (and a hand-written Numba parallel loop, where Numba is installed).

    python benchmarks/host_path.py [--device cpu|cuda] [--repeat 7]

Prints a Markdown table of medians. Results are checked equal to NumPy's before timing. Set
``NUMLOOM_PURE_PYTHON=1`` to measure the pure-Python path instead of the compiled one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy

import numloom

sys.path.insert(0, os.path.dirname(__file__))
import workloads  # noqa: E402


def _median(fn, repeat: int, inner: int) -> float:
    """Median seconds per ``fn()`` over ``repeat`` batches of ``inner`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def traced_ops(x, y, ops: int = 200):
    """``ops`` traced elementwise operations (array-scalar and array-array), not evaluated."""
    z = x
    for _ in range(ops // 2):
        z = z * 1.0001 + y
    return z


def small_graph(xp, x, y):
    a = x * 2.0 + y
    b = a * a - 1.0
    return b / 3.0 + a


def per_operation(device: str, repeat: int) -> float:
    x = numloom.asarray(numpy.random.default_rng(0).random(100), device=device)
    y = numloom.asarray(numpy.random.default_rng(1).random(100), device=device)
    numloom.evaluate(traced_ops(x, y))  # (loops resolved, constants made)
    times = []
    for _ in range(repeat * 5):
        start = time.perf_counter()
        z = traced_ops(x, y)
        times.append((time.perf_counter() - start) / 200)
        numloom.evaluate(z)  # (each chain evaluated: no flush mid-chain)
    return statistics.median(times)


def cached_sync(device: str, repeat: int) -> float:
    """A sync of six traced operations whose plan is cached: the evaluation alone."""
    x = numloom.asarray(numpy.random.default_rng(0).random(100), device=device)
    y = numloom.asarray(numpy.random.default_rng(1).random(100), device=device)
    for _ in range(50):
        numloom.evaluate(small_graph(numloom, x, y))
    times = []
    for _ in range(repeat * 200):
        c = small_graph(numloom, x, y)
        start = time.perf_counter()
        numloom.evaluate(c)
        if device != "cpu":
            numloom.sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _done(result) -> None:
    """Wait until a result is complete (its values on the host)."""
    for r in result if isinstance(result, tuple) else (result,):
        numpy.asarray(r)


def workload_rows(device: str, repeat: int) -> list:
    rng = numpy.random.default_rng(0)
    rows = []
    cases = [
        ("Black-Scholes, 100 elements", workloads.blackscholes,
         workloads.blackscholes_inputs(100, rng, numpy.float64)),
        ("Sobel 16x300x246", workloads.sobel,
         (rng.random((16, 300, 246)).astype(numpy.float32),)),
    ]  # fmt: skip
    for name, fn, inputs in cases:
        mine = tuple(numloom.asarray(a, device=device) for a in inputs)
        expected = fn(numpy, *inputs)
        got = fn(numloom, *mine)
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):  # fmt: skip
            numpy.testing.assert_allclose(numpy.asarray(g), e, rtol=1e-5, atol=1e-6)
        def eager(fn=fn, inputs=inputs):
            return fn(numpy, *inputs)

        def lazy(fn=fn, mine=mine):
            return _done(fn(numloom, *mine))

        inner = max(1, int(0.02 / max(_median(eager, 1, 3), 1e-7)))
        base = _median(eager, repeat, inner)
        ours = _median(lazy, repeat, inner)
        peer = _numba(name, inputs, repeat, inner)
        rows.append((name, base, ours, peer))
    return rows


def _numba(name: str, inputs, repeat: int, inner: int):
    """The hand-written Numba parallel loop's median, where Numba is installed."""
    try:
        import numba_peers
    except ImportError:
        return None
    kernel = numba_peers.KERNELS.get("blackscholes" if "Black" in name else "sobel")
    if kernel is None or numba_peers.UNAVAILABLE:
        return None
    kernel(*inputs)  # (compiled first)
    return _median(lambda: kernel(*inputs), repeat, inner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from numloom.core import array

    path = "pure Python" if array._speedups is None else "compiled"
    print(f"device {args.device}, {path} path, numpy {numpy.__version__}\n")
    op = per_operation(args.device, args.repeat)
    sync = cached_sync(args.device, args.repeat)
    print("| measure | numloom |")
    print("|---|---|")
    print(f"| traced elementwise operation | {op * 1e6:.2f} us |")
    print(f"| sync of a cached plan (6 operations, 100 elements) | {sync * 1e6:.1f} us |")
    print()
    print("| workload, unchanged | NumPy | numloom | numloom / NumPy | Numba parallel |")
    print("|---|---|---|---|---|")
    for name, base, ours, peer in workload_rows(args.device, args.repeat):
        numba = "-" if peer is None else f"{peer * 1e3:.3f} ms"
        print(f"| {name} | {base * 1e3:.3f} ms | {ours * 1e3:.3f} ms | {ours / base:.2f}x | "
              f"{numba} |")  # fmt: skip


if __name__ == "__main__":
    main()

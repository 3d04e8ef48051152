"""The cost of NumPy's floating-point error state when nothing raises: each workload under
NumPy's default state (``warn``: kernels check their values and, on a GPU, the evaluation waits
for its kernels to read the flag) against ``np.errstate(all="ignore")`` (no check is read),
alternated in one process.

    python benchmarks/fp_cost.py [--device cpu|cuda] [--repeat 30] [--only dense,jacobi]

Each figure is the median milliseconds of a call that ends with a sync ("call + sync"), as
unchanged code and under ``numloom.jit``, and of a ``numloom.jit`` call in a pipelined loop of 20
calls with one sync at the end ("pipelined", per call; a jit call evaluates at once, where
unchanged code would leave the unused results of the first 19 unevaluated). Results are
checked against NumPy first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as wl  # noqa: E402

import numloom  # noqa: E402

PIPELINE = 20
# NumPy's default state (underflow ignored; a GPU runs a segment again on the host where the
# state looks at underflow, which it cannot see) and one that ignores every error.
STATES = {"warn": dict(divide="warn", over="warn", invalid="warn", under="ignore"),
          "ignore": dict(all="ignore")}  # fmt: skip


def cases(device: str) -> list:
    rng = numpy.random.default_rng(0)
    big = 10**7 if device == "cpu" else 10**8
    cases = []
    for n in (10**4, big):
        inputs = wl.blackscholes_inputs(n, rng)
        cases.append((f"blackscholes {n:.0e} f32", lambda xp, S, X, T: wl.blackscholes(xp, S, X, T)[0],
                      inputs))  # fmt: skip
    x = rng.standard_normal(big).astype(numpy.float32)
    cases.append((f"gaussian_pdf {big:.0e} f32", wl.gaussian_pdf, (x,)))
    images = rng.random((16, 300, 246)).astype(numpy.float32)
    cases.append(("sobel 16x300x246", wl.sobel, (images,)))
    # a plan cut by cuBLAS (its overflow check is read once per evaluation), the same with a
    # loop, and sweeps that start evaluating at their writes (on a GPU their reads wait for
    # the sync)
    m = 8192 if device != "cpu" else 2048
    W, a = rng.random((m, m)).astype(numpy.float32), rng.random(m).astype(numpy.float32) - 0.5
    cases.append((f"dense {m}x{m} matvec", wl.dense, (W, a, a.copy())))
    points = 10**6 if device != "cpu" else 10**5
    pts = rng.random((points, 4)).astype(numpy.float32)
    cases.append((f"kmeans {points:.0e}x4 k=8 x10", lambda xp, p, c: wl.kmeans(xp, p, c, 10)[0],
                  (pts, pts[:8].copy())))  # fmt: skip
    n, sweeps = (4096, 100) if device != "cpu" else (512, 20)
    grid = rng.random((n, n)).astype(numpy.float32)
    cases.append((f"jacobi {n}x{n} x{sweeps}", lambda xp, g: wl.jacobi(
        xp, g.copy() if xp is numpy else g, sweeps), (grid,)))
    return cases


def timed(call, sync, repeat: int) -> tuple:
    each, piped = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sync(call())
        each.append(time.perf_counter() - t0)
    for _ in range(max(3, repeat // 5)):
        t0 = time.perf_counter()
        for _ in range(PIPELINE - 1):
            call()
        sync(call())
        piped.append((time.perf_counter() - t0) / PIPELINE)
    return statistics.median(each) * 1e3, statistics.median(piped) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", help="comma-separated workloads, e.g. dense,jacobi")
    args = parser.parse_args()
    numloom.set_device(args.device)

    def sync(out):
        numloom.evaluate(out)
        numloom.sync()

    rows = []
    for name, fn, host in cases(args.device):
        if args.only and name.split()[0] not in args.only.split(","):
            continue
        arrays = [numloom.asarray(a) for a in host]
        want = fn(numpy, *host)
        got = numpy.asarray(fn(numloom, *arrays))
        numpy.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)
        jitted = numloom.jit(lambda *a, fn=fn: fn(numloom, *a))
        figures = {}
        calls = (("unchanged", lambda fn=fn, a=arrays: fn(numloom, *a)),
                 ("jit", lambda f=jitted, a=arrays: f(*a)))  # fmt: skip
        for how, call in calls:
            for state in ("warn", "ignore", "warn", "ignore"):  # alternated
                with numpy.errstate(**STATES[state]):
                    sync(call())  # (compiled and traced under this state)
                    figures.setdefault((how, state), []).append(timed(call, sync, args.repeat))
        rows.append((name, figures))
    print(f"device: {numloom.get_device()}; median ms per call; NumPy's default state (warn) / "
          "all ignored, two alternations")
    print()
    print("| workload | unchanged: call + sync | jit: call + sync | jit: pipelined |")
    print("| --- | ---: | ---: | ---: |")
    for name, figures in rows:
        cells = []
        for how, k in (("unchanged", 0), ("jit", 0), ("jit", 1)):
            warn = ", ".join(f"{f[k]:.3f}" for f in figures[(how, "warn")])
            ignore = ", ".join(f"{f[k]:.3f}" for f in figures[(how, "ignore")])
            cells.append(f"{warn} / {ignore}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""A program at sizes it has not run at: the time of a call at a new size (trace, plan, run)
against a call at a size it has run, with the plans generic in sizes (templates: compile/
symbolic.py) and without them (``NUMLOOM_PLAN_TEMPLATES=0``: each new size planned anew).

    python benchmarks/new_sizes.py [--device cpu|cuda] [--sizes 30]

Every result is checked against NumPy's first. Prints a Markdown table of medians (ms).
On the CPU, small new sizes run through NumPy (``plans_reused``); the programs here are large
enough to be planned, as a GPU plans every size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy

import numloom
from numloom.compile import pipeline

sys.path.insert(0, os.path.dirname(__file__))
import workloads  # noqa: E402


def _blackscholes(xp, n, rng):
    return workloads.blackscholes_inputs(n, rng), workloads.blackscholes


def _stencil(xp, n, rng):
    u = rng.standard_normal((n // 256, 256)).astype(numpy.float32)

    def run(xp, u):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return v, xp.abs(v - u).max()

    return (u,), run


def _softmax(xp, n, rng):
    x = rng.standard_normal((n // 512, 512)).astype(numpy.float32)

    def run(xp, x):
        e = xp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return (x,), run


PROGRAMS = {"blackscholes": _blackscholes, "stencil": _stencil, "softmax": _softmax}


def _call(make, n: int, rng, device: str, check: bool) -> float:
    inputs, run = make(numpy, n, rng)
    args = [numloom.asarray(a, device=device) for a in inputs]
    numloom.sync()
    start = time.perf_counter()
    out = run(numloom, *args)
    out = out if isinstance(out, tuple) else (out,)
    numloom.sync()
    took = (time.perf_counter() - start) * 1e3
    if check:
        want = run(numpy, *inputs)
        want = want if isinstance(want, tuple) else (want,)
        for o, w in zip(out, want):
            numpy.testing.assert_allclose(numpy.asarray(o), w, rtol=1e-4, atol=1e-5)
    return took


def measure(name: str, n: int, device: str, sizes: int, templates: str) -> tuple:
    pipeline.TEMPLATES = templates
    make, rng = PROGRAMS[name], numpy.random.default_rng(0)
    for _ in range(3):
        _call(make, n, rng, device, True)
    again = statistics.median([_call(make, n, rng, device, False) for _ in range(sizes)])
    base = n + 512 * (100 if templates == "1" else 200)  # (sizes neither run has met)
    for k in range(2):  # (the structure planned at a second size: its template made)
        _call(make, base + 512 * k, rng, device, True)
    before = numloom.stats()
    new = [_call(make, base + 512 * (k + 2), rng, device, k < 3) for k in range(sizes)]
    after = numloom.stats()
    built = {k: after[k] - before[k] for k in ("plans_from_templates", "kernels_compiled")}
    return statistics.median(new), again, built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sizes", type=int, default=30)
    parser.add_argument("--n", type=int, default=1 << 20)
    args = parser.parse_args()
    print(f"device {args.device}; {args.sizes} new sizes per row, near {args.n} elements\n")
    print("| program | new size, planned anew | new size, from the template | size it has run "
          "| new sizes from the template | kernels compiled |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for name in PROGRAMS:
        anew, _, _ = measure(name, args.n, args.device, args.sizes, "0")
        new, again, built = measure(name, args.n, args.device, args.sizes, "1")
        print(f"| {name} | {anew:.3f} | {new:.3f} | {again:.3f} | "
              f"{built['plans_from_templates']} | {built['kernels_compiled']} |")  # fmt: skip


if __name__ == "__main__":
    main()

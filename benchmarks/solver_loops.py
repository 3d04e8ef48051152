"""Solver loops of a numerical-methods course (numerical-mooc's lessons), unchanged, on NumPy and
on numloom: Euler steps of a 2-element state, Jacobi relaxation and steepest descent on a grid,
each iteration ending in a convergence test that reads a value (a sync on numloom).

    python benchmarks/solver_loops.py [--device cpu|cuda] [--grid 101] [--iterations 500]

Prints a Markdown table of the median time an iteration (or a step) on each, and the ratio.
The final states are checked equal (NumPy's bits on the CPU, 1e-12 apart on a GPU) first.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def phugoid(xp, steps: int, dt: float = 0.001):
    """Lesson 01_02: the phugoid's elevation by Euler's method, a state of two numbers."""
    z0, b0, zt, g = 100.0, 10.0, 100.0, 9.81
    u = xp.array([z0, b0])
    z = xp.empty(steps)
    z[0] = z0
    for n in range(1, steps):
        rhs = xp.array([u[1], g * (1 - u[0] / zt)])
        u = u + dt * rhs
        z[n] = u[0]
    return z


def _l2_norm(xp, p, p_ref):
    l2_diff = xp.sqrt(xp.sum((p - p_ref) ** 2))
    l2_ref = xp.sqrt(xp.sum(p_ref**2))
    if l2_ref > 1e-12:
        return l2_diff / l2_ref
    return l2_diff


def _poisson(xp, n: int):
    x = xp.linspace(0.0, 1.0, n)
    y = xp.linspace(-0.5, 0.5, n)
    X, Y = xp.meshgrid(x, y)
    b = -2.0 * xp.pi**2 * xp.sin(xp.pi * X) * xp.cos(xp.pi * Y)
    return xp.zeros((n, n)), b, 1.0 / (n - 1)


def jacobi(xp, iterations: int, n: int):
    """Lesson 05_02: Jacobi relaxation of the 2D Poisson equation, the relative L2 change
    tested each iteration."""
    p, b, d = _poisson(xp, n)
    diff, ite = 1.0, 0
    while diff > 0.0 and ite < iterations:
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, :-2] + pn[1:-1, 2:]) * d**2
                          + (pn[:-2, 1:-1] + pn[2:, 1:-1]) * d**2
                          - b[1:-1, 1:-1] * d**2 * d**2) / (2.0 * (d**2 + d**2)))  # fmt: skip
        diff = _l2_norm(xp, p, pn)
        ite += 1
    return p


def steepest_descent(xp, iterations: int, n: int):
    """Lesson 05_04: steepest descent for the same system."""
    p, b, d = _poisson(xp, n)

    def laplacian(q):
        return (-4.0 * q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[:-2, 1:-1]
                + q[2:, 1:-1]) / d**2  # fmt: skip

    r, Ar = xp.zeros_like(p), xp.zeros_like(p)
    diff, ite = 1.0, 0
    while diff > 0.0 and ite < iterations:
        pk = p.copy()
        r[1:-1, 1:-1] = b[1:-1, 1:-1] - laplacian(p)
        Ar[1:-1, 1:-1] = laplacian(r)
        alpha = xp.sum(r * r) / xp.sum(r * Ar)
        p = pk + alpha * r
        diff = _l2_norm(xp, p, pk)
        ite += 1
    return p


def _host(v) -> numpy.ndarray:
    return v.get() if isinstance(v, numloom.ndarray) else numpy.asarray(v)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--grid", type=int, default=101)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.device:
        numloom.set_device(args.device)
    n, its = args.grid, args.iterations
    loops = {
        "phugoid, Euler steps of 2 numbers": (lambda xp: phugoid(xp, 20 * its), 20 * its),
        f"Jacobi relaxation {n}x{n}": (lambda xp: jacobi(xp, its, n), its),
        f"steepest descent {n}x{n}": (lambda xp: steepest_descent(xp, its, n), its),
    }
    print(f"numloom {numloom.config.VERSION} on {numloom.get_device()}; median of {args.repeat} runs, "
          f"us an iteration\n")  # fmt: skip
    print("| loop | NumPy | numloom | numloom / NumPy |")
    print("| --- | ---: | ---: | ---: |")
    for name, (run, count) in loops.items():
        want, got = run(numpy), _host(run(numloom))
        # (the Poisson problems' right-hand side takes sin and cos: a compiled kernel's are
        # glibc's, an ulp from NumPy's SIMD ones in places, docs/semantics.md)
        numpy.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        times = {}
        for xp in (numpy, numloom):
            samples = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                _host(run(xp))
                samples.append((time.perf_counter() - start) / count * 1e6)
            times[xp] = statistics.median(samples)
        print(f"| {name} | {times[numpy]:.1f} | {times[numloom]:.1f} | "
              f"{times[numloom] / times[numpy]:.2f}x |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

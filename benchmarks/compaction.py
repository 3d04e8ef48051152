"""Loops whose arrays shrink with a boolean mask each step, on NumPy and on numloom: the
Mandelbrot escape loop of N. Rougier's "From Python to NumPy" (its code as published) and a
shorter variant.

    python benchmarks/compaction.py [--device cpu|cuda] [--repeat 5]

Prints a Markdown table of median times (NumPy's and numloom's runs alternated); results are
checked equal before timing.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def mandelbrot_rougier(np, xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    # From Python to NumPy, section 5 (BSD license), unchanged but for `np` as an argument and
    # np.logical_not for the np.negative of booleans that NumPy 2 refuses
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    Xi, Yi = Xi.astype(np.uint32), Yi.astype(np.uint32)
    X = np.linspace(xmin, xmax, xn, dtype=np.float32)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float32)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.uint32)
    Z_ = np.zeros(C.shape, dtype=np.complex64)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex64)
    for i in range(itermax):
        if not len(Z):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        I = np.abs(Z) > horizon  # noqa: E741 (the book's name)
        N_[Xi[I], Yi[I]] = i + 1
        Z_[Xi[I], Yi[I]] = Z[I]
        np.logical_not(I, I)
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_, N_


def escape_counts(np, n, itermax):
    xs = np.linspace(-2.25, 0.75, n)
    ys = np.linspace(-1.25, 1.25, n)
    c = (xs[None, :] + 1j * ys[:, None]).ravel()
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    idx = np.arange(c.size)
    for i in range(itermax):
        z = z * z + c
        keep = np.abs(z) < 2.0
        counts[idx[~keep]] = i
        z, c, idx = z[keep], c[keep], idx[keep]
    return counts


CASES = [
    (
        "rougier 200x200 x50",
        lambda np: mandelbrot_rougier(np, -2.25, 0.75, -1.25, 1.25, 200, 200, 50),
    ),
    (
        "rougier 1000x1000 x100",
        lambda np: mandelbrot_rougier(np, -2.25, 0.75, -1.25, 1.25, 1000, 1000, 100),
    ),
    ("escape 200x200 x50", lambda np: escape_counts(np, 200, 50)),
    ("escape 1000x1000 x200", lambda np: escape_counts(np, 1000, 200)),
]


def _host(v):
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    return numpy.asarray(v)


def _times(fn, repeat: int) -> tuple:
    """Median seconds of ``fn(numpy)`` and ``fn(numloom)``, their runs alternated (a shared
    host's slow spells then fall on both)."""
    times: dict = {numpy: [], numloom: []}
    for _ in range(repeat):
        for xp in (numpy, numloom):
            start = time.perf_counter()
            _host(fn(xp))
            times[xp].append(time.perf_counter() - start)
    return statistics.median(times[numpy]), statistics.median(times[numloom])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=None, help="a substring of the cases to run")
    args = parser.parse_args(argv)
    if args.device:
        numloom.set_device(args.device)
    print("| loop | NumPy ms | numloom ms | numloom / NumPy |")
    print("| --- | ---: | ---: | ---: |")
    for name, fn in CASES:
        if args.only and args.only not in name:
            continue
        want, got = _host(fn(numpy)), _host(fn(numloom))
        numpy.testing.assert_equal(got, want)
        t_np, t_nl = _times(fn, args.repeat)
        print(f"| {name} | {t_np * 1e3:.1f} | {t_nl * 1e3:.1f} | {t_nl / t_np:.2f}x |")


if __name__ == "__main__":
    main()

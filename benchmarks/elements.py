"""Python code that touches elements, on NumPy and on numloom: ``x[i]`` loops, iteration,
builtin ``sum``, ``tolist``, scalar conversions, ``in`` and element writes.

    python benchmarks/elements.py [--device cpu|cuda] [--n 5000] [--repeat 7]

Prints a Markdown table: each pattern's median time on NumPy and on numloom and their ratio.
Results are checked equal before timing. The arrays are computed before each pattern is timed
(a first read of a pending array is a sync, which the workload benchmark measures).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def read_loop(xp, x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def iterate(xp, x):
    s = 0.0
    for v in x:
        s += v
    return s


def builtin_sum(xp, x):
    return sum(x)


def tolist(xp, x):
    return x.tolist()


def float_of_elements(xp, x):
    return [float(x[i]) for i in range(0, len(x), 4)]


def contains(xp, x):
    return [v in x for v in (3.0, -1.0, 7.5)]


def write_loop(xp, x):
    y = x.copy()
    for i in range(len(y)):
        y[i] = i * 0.5
    return y


def recurrence(xp, x):
    y = xp.zeros(len(x))
    for i in range(1, len(y)):
        y[i] = y[i - 1] * 0.5 + x[i]
    return y


def grid_loop(xp, x):
    g = x.reshape(50, -1)
    s = 0.0
    for i in range(g.shape[0]):
        for j in range(g.shape[1]):
            s += g[i, j]
    return s


def scalar_math(xp, x):
    inside = 0
    for i in range(0, len(x) - 1, 2):
        if xp.sqrt(x[i] ** 2 + x[i + 1] ** 2) < 2000.0 and xp.isfinite(x[i]):
            inside += 1
    return inside


def rows(xp, x):
    return [r.shape for r in x.reshape(50, -1)]


PATTERNS = {
    "x[i] read loop": read_loop,
    "for v in x": iterate,
    "builtin sum(x)": builtin_sum,
    "x.tolist()": tolist,
    "float(x[i]) every 4th": float_of_elements,
    "v in x (3 values)": contains,
    "x[i] = v write loop": write_loop,
    "y[i] = f(y[i-1], x[i])": recurrence,
    "g[i, j] read loop (2-d)": grid_loop,
    "for row in g (2-d)": rows,
    "np.sqrt(x[i]**2 + ...) < r": scalar_math,
}


def _host(v):
    if isinstance(v, numloom.ndarray):
        return v.get()
    if isinstance(v, list):
        return [_host(e) for e in v]
    return v


def _time(fn, xp, x, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        if xp is numloom:
            numloom.sync()
        start = time.perf_counter()
        out = fn(xp, x)
        if xp is numloom and isinstance(out, numloom.ndarray):
            out.get()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    if args.device:
        numloom.set_device(args.device)
    host = numpy.arange(args.n, dtype=numpy.float64) % 13
    arrays = {numpy: host, numloom: numloom.asarray(host) * 1.0}
    arrays[numloom].get()
    print(f"| pattern (n={args.n}) | NumPy ms | numloom ms | numloom / NumPy |")
    print("| --- | ---: | ---: | ---: |")
    for name, fn in PATTERNS.items():
        want, got = fn(numpy, arrays[numpy]), _host(fn(numloom, arrays[numloom]))
        numpy.testing.assert_equal(got, want)
        t_np = _time(fn, numpy, arrays[numpy], args.repeat)
        t_nl = _time(fn, numloom, arrays[numloom], args.repeat)
        print(f"| {name} | {t_np * 1e3:.3f} | {t_nl * 1e3:.3f} | {t_nl / t_np:.2f}x |")


if __name__ == "__main__":
    main()

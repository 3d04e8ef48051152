"""Sorting and counting on a device: numloom against CuPy (where importable) and NumPy.

    python benchmarks/device_sort.py [--device cpu|cuda] [--size-scale 1.0] [--repeat 5]

Workloads (at scale 1): sort and argsort of 1e8 float32, unique of 1e7 int32, a histogram of
1e8 float32 into 256 bins. Each result is checked against NumPy's first; then each library
runs ``--repeat`` times, synchronized, and the table shows median milliseconds and numloom's
time relative to each other library (``0.9x``: numloom takes 0.9 of its time). NumPy runs
once (the check's run is its time).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def _cupy():
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 (not installed, or no GPU)
        return None
    return cupy


WORKLOADS = {
    "sort float32": (1e8, lambda xp, a: xp.sort(a)),
    "argsort float32": (1e8, lambda xp, a: xp.argsort(a, kind="stable")),
    "unique int32": (1e7, lambda xp, a: xp.unique(a)),
    "histogram 256 bins": (1e8, lambda xp, a: xp.histogram(a, bins=256, range=(0.0, 1.0))[0]),
}


def _data(name: str, n: int) -> numpy.ndarray:
    rng = numpy.random.default_rng(0)
    if "int32" in name:
        return rng.integers(0, n // 4 + 1, n, dtype=numpy.int32)
    return rng.random(n, dtype=numpy.float32)


def _timed(run, xp, data, sync, repeat: int) -> float:
    """Median milliseconds of ``run(xp, data)`` (synchronized) over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        out = run(xp, data)
        sync()
        del out
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size-scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    args = parser.parse_args()
    numloom.set_device(args.device)
    cupy = _cupy() if args.device.startswith("cuda") else None
    print(f"device {args.device}, scale {args.size_scale}, median of {args.repeat} runs (ms)\n")
    print("| workload | n | numloom | CuPy | NumPy | vs CuPy | vs NumPy | sorted by |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, (size, run) in WORKLOADS.items():
        if args.only not in name:
            continue
        n = max(1, int(size * args.size_scale))
        host = _data(name, n)
        start = time.perf_counter()
        want = run(numpy, host)
        base = 1e3 * (time.perf_counter() - start)  # (NumPy once: it takes seconds)
        x = numloom.asarray(host)
        numpy.testing.assert_array_equal(run(numloom, x).get(), want)  # (compiles, too)
        if args.device.startswith("cuda"):  # (CUB's sorts, built at the first call: checked too)
            from numloom.backends import cuda_cub

            cuda_cub.wait()
            numpy.testing.assert_array_equal(run(numloom, x).get(), want)
        before = numloom.stats().get("cub_sorts", 0)
        ours = _timed(run, numloom, x, numloom.sync, args.repeat)
        cub = numloom.stats().get("cub_sorts", 0) > before
        theirs = "-"
        if cupy is not None:
            c = cupy.asarray(host)
            numpy.testing.assert_array_equal(cupy.asnumpy(run(cupy, c)), want)
            sync = cupy.cuda.get_current_stream().synchronize
            theirs = _timed(run, cupy, c, sync, args.repeat)
        vs_cupy = f"{ours / theirs:.2f}x" if cupy is not None else "-"
        theirs = f"{theirs:.2f}" if cupy is not None else "-"
        print(f"| {name} | {n:.0e} | {ours:.2f} | {theirs} | {base:.1f} | {vs_cupy} | "
              f"{ours / base:.3f}x | {'CUB' if cub else 'numloom'} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

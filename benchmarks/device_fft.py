"""FFTs on numloom's device against NumPy on the host (and CuPy, where it is installed): the
``fft`` of 2**24 complex64 values and the ``rfft2`` of a 4096 x 4096 float32 image.

    python benchmarks/device_fft.py [--device cpu|cuda] [--repeat 10] [--small]

Prints a Markdown table of medians. Each engine's result is checked against NumPy's before it
is timed; a timed call ends when its result is complete on the device (numloom: ``sync``,
CuPy: the device synchronized). Inputs are on each engine's device before timing; the first
call (planning, compiling) is timed apart. ``--small`` runs 2**20 and 1024 x 1024 instead.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _host_median(enqueue, wait, repeat: int) -> float:
    """Median seconds the host takes to hand one call to the device (``enqueue``), the device
    idle before it (``wait`` after each): what a loop that waits for each result pays on top
    of the device's time."""
    times = []
    for _ in range(repeat):
        wait()
        start = time.perf_counter()
        enqueue()
        times.append(time.perf_counter() - start)
    wait()
    return statistics.median(times)


def _first(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _check(name: str, got, want) -> None:
    """``got`` equals NumPy's ``want`` to single precision (relative to its largest value)."""
    got = numpy.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
    scale = float(numpy.abs(want).max())
    numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=name)


def cases(small: bool) -> list:
    """(name, function name, host input) of each case."""
    rng = numpy.random.default_rng(0)
    n = 1 << (20 if small else 24)
    side = 1024 if small else 4096
    signal = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(numpy.complex64)
    image = rng.standard_normal((side, side)).astype(numpy.float32)
    return [
        (f"fft, 2^{n.bit_length() - 1} complex64", "fft", signal),
        (f"rfft2, {side} x {side} float32", "rfft2", image),
    ]


def _numloom_row(function: str, host, want, device: str, repeat: int) -> tuple:
    x = numloom.asarray(host, device=device)
    numloom.sync()
    fn = getattr(numloom.fft, function)
    before = sum(numloom.stats()["fallbacks"].values())

    def call():
        numloom.evaluate(fn(x))
        numloom.sync()

    first = _first(call)
    _check(f"numloom {function}", fn(x).get(), want)
    median = _median(call, repeat)
    host = _host_median(lambda: numloom.evaluate(fn(x)), numloom.sync, repeat)
    fallbacks = sum(numloom.stats()["fallbacks"].values()) - before
    return first, median, fallbacks, host


def _cupy_row(function: str, host, want, repeat: int):
    """CuPy's first and median times, or None without CuPy (or a GPU for it)."""
    try:
        import cupy

        x = cupy.asarray(host)
    except Exception:  # noqa: BLE001 (not installed, or no device it can use)
        return None
    fn = getattr(cupy.fft, function)

    def call():
        fn(x)
        cupy.cuda.runtime.deviceSynchronize()

    first = _first(call)
    _check(f"CuPy {function}", fn(x).get(), want)
    host = _host_median(lambda: fn(x), cupy.cuda.runtime.deviceSynchronize, repeat)
    return first, _median(call, repeat), host


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    repeat = max(args.repeat, 10)
    print(f"device {args.device}, numpy {numpy.__version__}, median of {repeat} calls\n")
    print("| case | NumPy (host) | numloom | numloom first call | CuPy | NumPy / numloom | "
          "CuPy / numloom | fallbacks | host part: numloom | CuPy |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, function, host in cases(args.small):
        numpy_fn = getattr(numpy.fft, function)
        want = numpy_fn(host)
        base = _median(lambda f=numpy_fn, x=host: f(x), repeat)
        first, ours, fallbacks, ours_host = _numloom_row(function, host, want, args.device,
                                                         repeat)  # fmt: skip
        peer = _cupy_row(function, host, want, repeat) if args.device != "cpu" else None
        cupy_time = "-" if peer is None else f"{peer[1] * 1e3:.3f} ms"
        cupy_ratio = "-" if peer is None else f"{peer[1] / ours:.2f}x"
        cupy_host = "-" if peer is None else f"{peer[2] * 1e6:.0f} us"
        print(f"| {name} | {base * 1e3:.3f} ms | {ours * 1e3:.3f} ms | {first * 1e3:.1f} ms | "
              f"{cupy_time} | {base / ours:.2f}x | {cupy_ratio} | {fallbacks} | "
              f"{ours_host * 1e6:.0f} us | {cupy_host} |")  # fmt: skip


if __name__ == "__main__":
    main()

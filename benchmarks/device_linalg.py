"""Dense linear algebra on the device: ``linalg.solve`` and ``linalg.svd`` in numloom (cuSOLVER
on a GPU, NumPy's LAPACK on the CPU) against CuPy (where importable) and NumPy on the host.

    python benchmarks/device_linalg.py [--device cpu|cuda] [--repeat 5] [--solve 4096]
                                       [--svd 2048]

Prints a Markdown table of median times. Each result is checked first: the solve's relative
residual, the singular values against NumPy's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom


def _median(fn, sync, repeat: int) -> float:
    """Median seconds of ``fn()`` followed by ``sync()`` (after one untimed run)."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 (installed, but no GPU it can use)
        return None
    return cupy


def _residual(a, x, b) -> float:
    """``|a x - b| / (|a| |x|)`` in float64 on the host."""
    a, x, b = (numpy.asarray(v, numpy.float64) for v in (a, x, b))
    return float(numpy.linalg.norm(a @ x - b) / (numpy.linalg.norm(a) * numpy.linalg.norm(x)))


def solve_row(n: int, dtype, device: str, repeat: int, cupy) -> tuple:
    rng = numpy.random.default_rng(0)
    a = (rng.standard_normal((n, n)) + n**0.5 * numpy.eye(n)).astype(dtype)
    b = rng.standard_normal((n, 4)).astype(dtype)
    limit = 1e-4 if dtype == numpy.float32 else 1e-12
    mine_a, mine_b = numloom.asarray(a, device=device), numloom.asarray(b, device=device)
    got = numloom.linalg.solve(mine_a, mine_b)
    assert _residual(a, got.get(), b) < limit, "numloom's solve is wrong"
    ours = _median(lambda: numloom.linalg.solve(mine_a, mine_b).get(), lambda: None, repeat)
    host = _median(lambda: numpy.linalg.solve(a, b), lambda: None, repeat)
    peer = None
    if cupy is not None:
        ca, cb = cupy.asarray(a), cupy.asarray(b)
        assert _residual(a, cupy.linalg.solve(ca, cb).get(), b) < limit, "CuPy's solve is wrong"
        peer = _median(lambda: cupy.linalg.solve(ca, cb), cupy.cuda.Device().synchronize, repeat)
    return f"solve {n}x{n} {numpy.dtype(dtype).name}, 4 right-hand sides", host, ours, peer


def svd_row(n: int, dtype, device: str, repeat: int, cupy) -> tuple:
    rng = numpy.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(dtype)
    want = numpy.linalg.svd(a, compute_uv=False)
    mine = numloom.asarray(a, device=device)
    u, s, vh = numloom.linalg.svd(mine)
    numpy.testing.assert_allclose(s.get(), want, rtol=1e-3, atol=1e-3 * want[0])
    ours = _median(lambda: numloom.evaluate(*numloom.linalg.svd(mine)), numloom.sync, repeat)
    host = _median(lambda: numpy.linalg.svd(a), lambda: None, repeat)
    peer = None
    if cupy is not None:
        ca = cupy.asarray(a)
        numpy.testing.assert_allclose(cupy.linalg.svd(ca)[1].get(), want, rtol=1e-3,
                                      atol=1e-3 * want[0])  # fmt: skip
        peer = _median(lambda: cupy.linalg.svd(ca), cupy.cuda.Device().synchronize, repeat)
    return f"svd {n}x{n} {numpy.dtype(dtype).name} (U, S, Vh)", host, ours, peer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=numloom.get_device())
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--solve", type=int, default=4096, help="order of the solved matrix")
    parser.add_argument("--svd", type=int, default=2048, help="order of the SVD's matrix")
    args = parser.parse_args()
    cupy = _cupy() if args.device != "cpu" else None
    print(f"device {args.device}, numpy {numpy.__version__}, "
          f"CuPy {cupy.__version__ if cupy else 'absent'}, {time.strftime('%Y-%m-%d')}\n")  # fmt: skip
    rows = [solve_row(args.solve, numpy.float64, args.device, args.repeat, cupy),
            solve_row(args.solve, numpy.float32, args.device, args.repeat, cupy),
            svd_row(args.svd, numpy.float32, args.device, args.repeat, cupy)]  # fmt: skip
    print("| operation | NumPy (host) | numloom | CuPy | NumPy / numloom |")
    print("|---|---|---|---|---|")
    for name, host, ours, peer in rows:
        cupy_time = "-" if peer is None else f"{peer * 1e3:.2f} ms"
        print(f"| {name} | {host * 1e3:.2f} ms | {ours * 1e3:.2f} ms | {cupy_time} | "
              f"{host / ours:.2f}x |")  # fmt: skip


if __name__ == "__main__":
    main()

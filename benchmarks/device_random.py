"""Random numbers on a GPU: numloom's draws of NumPy's own PCG64 stream against CuPy, JAX and
torch (each with its own generator) and NumPy on the host, and against the write floor (a
device memset of the same bytes).

    python benchmarks/device_random.py [--device cuda] [--size 100000000] [--repeat 10]

numloom's draws are checked equal to NumPy's (same seed) before timing (but for the last bit of
rare tail samples, see ``numloom/random.py``). Prints a Markdown
table of medians in milliseconds and numloom's share of the write floor.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import numloom

CASES = [  # (name, numloom/NumPy call, dtype)
    ("standard_normal float32", lambda g, n: g.standard_normal(n, dtype=numpy.float32), "float32"),
    ("standard_normal float64", lambda g, n: g.standard_normal(n), "float64"),
    ("random float32", lambda g, n: g.random(n, dtype=numpy.float32), "float32"),
    ("uniform float64", lambda g, n: g.uniform(-1.0, 1.0, n), "float64"),
    ("exponential float64", lambda g, n: g.exponential(2.0, n), "float64"),
    ("integers int64 [0, 1000)", lambda g, n: g.integers(0, 1000, n), "int64"),
    ("lognormal float64", lambda g, n: g.lognormal(0.0, 0.5, n), "float64"),
    ("gumbel float64", lambda g, n: g.gumbel(1.0, 2.0, n), "float64"),
    ("choice int64 of 1000", lambda g, n: g.choice(1000, n), "int64"),
]


def _median_ms(fn, sync, repeat: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _peers(size: int):
    """{peer: {case name: callable}} for the peers installed here."""
    peers = {}
    try:
        import cupy

        g = cupy.random.default_rng(0)
        peers["CuPy"] = (cupy.cuda.Device().synchronize, {
            "standard_normal float32": lambda: g.standard_normal(size, dtype=cupy.float32),
            "standard_normal float64": lambda: g.standard_normal(size),
            "random float32": lambda: g.random(size, dtype=cupy.float32),
            "uniform float64": lambda: g.uniform(-1.0, 1.0, size),
            "exponential float64": lambda: g.exponential(2.0, size),
            "integers int64 [0, 1000)": lambda: g.integers(0, 1000, size),
            # (CuPy's Generator lacks these: its legacy RandomState draws them)
            "lognormal float64": lambda: cupy.random.lognormal(0.0, 0.5, size),
            "gumbel float64": lambda: cupy.random.gumbel(1.0, 2.0, size),
            "choice int64 of 1000": lambda: cupy.random.choice(1000, size),
        })  # fmt: skip
    except Exception:  # noqa: BLE001 (a peer that is not here is left out)
        pass
    try:
        import jax
        import jax.numpy as jnp

        key = jax.random.key(0)
        normal32 = jax.jit(lambda k: jax.random.normal(k, (size,), jnp.float32))
        uniform32 = jax.jit(lambda k: jax.random.uniform(k, (size,), jnp.float32))
        peers["JAX"] = (lambda: None, {
            "standard_normal float32": lambda: normal32(key).block_until_ready(),
            "random float32": lambda: uniform32(key).block_until_ready(),
        })  # fmt: skip
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch

        if torch.cuda.is_available():
            peers["torch"] = (torch.cuda.synchronize, {
                "standard_normal float32": lambda: torch.randn(size, device="cuda"),
                "standard_normal float64": lambda: torch.randn(size, device="cuda",
                                                               dtype=torch.float64),
                "random float32": lambda: torch.rand(size, device="cuda"),
                "integers int64 [0, 1000)": lambda: torch.randint(0, 1000, (size,),
                                                                  device="cuda"),
            })  # fmt: skip
    except Exception:  # noqa: BLE001
        pass
    return peers


def _write_floor_ms(nbytes: int, device: str, repeat: int) -> float:
    from cuda.bindings import driver

    from numloom.backends.cuda_device import _get
    from numloom.backends.cuda_memory import DeviceArray

    buf = DeviceArray((nbytes // 4,), numpy.uint32, device)
    stream = _get(device).stream

    def fill():
        driver.cuMemsetD32Async(buf.ptr, 7, nbytes // 4, stream.handle)

    return _median_ms(fill, stream.sync, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", type=int, default=100_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    numloom.set_device(args.device)
    n = args.size
    check = 1_000_003
    for _name, call, _ in CASES:  # the same numbers as NumPy's, first
        got = call(numloom.random.default_rng(11), check).get()
        want = call(numpy.random.default_rng(11), check)
        # (tail samples go through a correctly rounded log, the C library's nearly so)
        if got.dtype == numpy.float32:
            numpy.testing.assert_array_max_ulp(got, want, maxulp=2)
        elif got.dtype.kind == "f":  # (the samplers' exp and log: the device's, to a few ulps)
            numpy.testing.assert_allclose(got, want, rtol=2e-15, atol=1e-15)
        else:
            assert (got != want).mean() < 1e-4
    peers = _peers(n)
    names = ["numloom", *peers, "NumPy (host)"]
    print(f"\n{n:,} samples, device {args.device}, median ms of {args.repeat}\n")
    print("| draw | " + " | ".join(names) + " | write floor | floor / numloom |")
    print("|---" * (len(names) + 3) + "|")
    mine = numloom.random.default_rng(0)
    host = numpy.random.default_rng(0)
    for name, call, dtype in CASES:
        # (a sampler's formula is numloom operations: evaluated, as its use would)
        row = [_median_ms(lambda call=call: numloom.evaluate(call(mine, n)), numloom.sync,
                          args.repeat)]  # fmt: skip
        for sync, calls in peers.values():
            fn = calls.get(name)
            row.append(_median_ms(fn, sync, args.repeat) if fn else None)
        row.append(_median_ms(lambda call=call: call(host, n), lambda: None, max(2, args.repeat // 4)))
        floor = _write_floor_ms(n * numpy.dtype(dtype).itemsize, args.device, args.repeat)
        cells = ["-" if t is None else f"{t:.3f}" for t in row]
        print(f"| {name} | " + " | ".join(cells) + f" | {floor:.3f} | {100 * floor / row[0]:.0f}% |")


if __name__ == "__main__":
    main()

"""How close the memory-bound workloads' kernels come to the device's memory floor.

For each workload under ``numloom.jit`` (and torch.compile's, where torch is installed, on the
same inputs), two times:
- a call: the call, then a sync (as ``python -m numloom bench`` times it, host included);
- queued: 20 calls queued, then one sync, per call (the device's time, the host's hidden,
  where a call does not wait for its kernels: one that reads its floating-point flag word
  does, and then this is the call's whole time; Nsight Compute gives the kernel's).

Each is put against the floor: the bytes the workload must read and write, at the device's
copy bandwidth measured in the same run. ``--ncu`` runs each workload once, for Nsight
Compute (``ncu -k regex:nl_ python benchmarks/floors.py --device cuda --ncu``).

    python benchmarks/floors.py --device cuda [--only jacobi,sobel,softmax] [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402
from kernels import median_time  # noqa: E402


def _cases(rng):
    """name: (inputs as NumPy arrays, function of (xp, *inputs), bytes moved, check size)."""
    grid = rng.random((4096, 4096), dtype=numpy.float32)
    imgs = rng.random((64, 600, 600), dtype=numpy.float32)
    rows = rng.random((8192, 4096), dtype=numpy.float32)
    return {
        # each sweep reads the grid and writes its new version
        "jacobi": ((grid,), lambda xp, g: W.jacobi(xp, g, 100), 100 * 2 * grid.nbytes),
        "sobel": ((imgs,), W.sobel, imgs.nbytes + 64 * 598 * 598 * 4),
        "softmax": ((rows,), W.softmax, 2 * rows.nbytes),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--only")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--ncu", action="store_true", help="run each workload once, no timing")
    parser.add_argument("--no-torch", action="store_true", help="leave torch.compile out")
    args = parser.parse_args(argv)
    import numloom
    from numloom.tools.bench_probes import copy_bandwidth

    numloom.set_device(args.device)
    rng = numpy.random.default_rng(0)
    cases = _cases(rng)
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only.split(",")}
    bandwidth = float("nan") if args.ncu else copy_bandwidth(numloom, args.device)
    print(f"device copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)")
    print("| workload | numloom.jit call ms | queued ms | GB/s | of the floor | torch.compile "
          "queued ms | torch of the floor |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, (inputs, fn, moved) in cases.items():
        if args.ncu and name == "jacobi":  # (two sweeps: a profiler replays every launch)
            fn = lambda xp, g: W.jacobi(xp, g, 2)  # noqa: E731
        _row(numloom, name, inputs, fn, moved, bandwidth, args)
    return 0


def _row(numloom, name, inputs, fn, moved, bandwidth, args) -> None:
    """Time one workload (or, for ``--ncu``, run it once) and print its row."""
    arrays = [numloom.asarray(a) for a in inputs]
    fresh = name == "jacobi"  # (a sweep writes its grid: each call sweeps a copy)

    def jitted_fn(*xs):
        return fn(numloom, *[x.copy() if fresh else x for x in xs])

    jitted = numloom.jit(jitted_fn)
    if args.ncu:
        jitted(*arrays)
        numloom.sync()
        return
    small = (lambda xp, g: W.jacobi(xp, g, 2)) if fresh else fn
    want = small(numpy, *[a.copy() for a in inputs])
    check = numloom.jit(lambda *xs: small(numloom, *[x.copy() for x in xs]))(*arrays)
    numpy.testing.assert_allclose(numloom.asnumpy(check), want, rtol=1e-4, atol=1e-6)
    del check
    call = median_time(lambda: jitted(*arrays), 1, numloom.sync, batches=args.repeat)
    kernel = median_time(lambda: jitted(*arrays), 20, numloom.sync, batches=max(3, args.repeat // 4))
    floor = moved / bandwidth
    torch_kernel = float("nan") if args.no_torch else _torch(name, fn, inputs, args.repeat)
    print(f"| {name} | {call * 1e3:.3f} | {kernel * 1e3:.3f} | {moved / kernel / 1e9:.0f} | "
          f"{floor / kernel:.0%} | {torch_kernel * 1e3:.3f} | {floor / torch_kernel:.0%} |",
          flush=True)  # fmt: skip


def _torch(name, fn, inputs, repeat) -> float:
    """torch.compile's kernel time per call on the same inputs (NaN without torch)."""
    try:
        import torch
    except ImportError:
        return float("nan")
    xs = [torch.from_numpy(a).cuda() for a in inputs]
    if name == "jacobi":
        compiled = torch.compile(lambda g: W.jacobi(torch, g.clone(), 100))
    else:
        compiled = torch.compile(lambda *a: fn(torch, *a))
    try:
        for _ in range(3):
            compiled(*xs)
    except Exception as e:  # noqa: BLE001 (torch spells some NumPy calls otherwise)
        print(f"torch.compile: {name}: {type(e).__name__}", file=sys.stderr)
        return float("nan")
    return median_time(lambda: compiled(*xs), 20, torch.cuda.synchronize, max(3, repeat // 4))


if __name__ == "__main__":
    sys.exit(main())

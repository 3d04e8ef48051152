"""Black-Scholes' two whole-array sums (calls and puts) over one chunk, unchunked: the chain's
shared values stored once and read back by both sums, against each sum computing the chain again
from its inputs (``schedule.REDUCED_RECOMPUTE_LIMIT``; a GPU recomputes, a CPU stores).

    python benchmarks/shared_chain.py --device cuda [--n 400000000] [--repeat 10]

Each setting runs in a process of its own (plans are cached per process); the settings
alternate twice. Prints the median ms of each run and the kernels a call launches."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
import numloom
import numloom.compile.schedule as schedule
from numloom.tools.bench_dask import _Plain, _host, blackscholes
device, n, repeat, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
numloom.set_device(device)
schedule.REDUCED_RECOMPUTE_LIMIT = limit
plain = _Plain()
first = _host(blackscholes(plain, n, None))
times = []
for _ in range(repeat):
    before = numloom.stats()["kernels_launched"]
    start = time.perf_counter()
    got = _host(blackscholes(plain, n, None))
    times.append(1e3 * (time.perf_counter() - start))
    kernels = numloom.stats()["kernels_launched"] - before
print(json.dumps({"ms": statistics.median(times), "kernels": kernels, "sums": got.tolist()}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=4 * 10**8)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print(f"Black-Scholes over {args.n:.0e} float32 options drawn on {args.device}, two sums; "
          f"median of {args.repeat} calls after the first (ms)\n")  # fmt: skip
    print("| shared chain | ms | kernels a call | sums |")
    print("|---|---|---|---|")
    from numloom.compile import schedule

    for limit in [schedule.REDUCED_RECOMPUTE_LIMIT, 0] * 2:
        out = subprocess.run([sys.executable, "-c", CHILD, args.device, str(args.n),
                              str(args.repeat), str(limit)],  # fmt: skip
                             capture_output=True, text=True, check=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        how = "recomputed by each sum" if limit else "stored, read back"
        print(f"| {how} | {got['ms']:.2f} | {got['kernels']} | {got['sums'][0]:.6g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

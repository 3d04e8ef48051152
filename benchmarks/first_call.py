"""First calls: how long a workload's first call takes in a process that has not run it
(trace, plan, compile, load, launch, wait), with an empty or a warm compile cache, beside
``jax.jit``'s first call of the same function.

    python benchmarks/first_call.py [--device cuda] [--sizes large] [--only a,b] [--jax]
                                    [--cold] [--profile NAME]

Every workload runs its first call in this process, one after another, as in ``python -m
numloom bench``'s "first call" column; set ``NUMLOOM_CACHE_DIR`` to an empty folder for a cold
cache. "compiling ms" sums the compilers' time over the threads they ran on (a first call
that compiles on threads waits for less). ``--cold`` also keeps NVRTC's own cache (CUDA 12.9 and later keep one across processes)
from answering, by adding an empty function of a new name to each program it compiles. Results
are checked against NumPy's. ``--profile NAME`` prints where NAME's first call
spent its time (cProfile, cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import workloads  # noqa: E402

import numloom as nl  # noqa: E402
from numloom.tools import bench  # noqa: E402

_COMPILING = [0.0]  # seconds NVRTC (or the C compiler) spent, summed over threads


def _timed_builds() -> None:
    """Sum the time of every compile (``_build_cuda``, ``_build_c``) into ``_COMPILING``."""
    from numloom.compile import compiler

    def timed(build):
        def run(*args):
            start = time.perf_counter()
            try:
                return build(*args)
            finally:
                _COMPILING[0] += time.perf_counter() - start

        return run

    compiler._build_cuda = timed(compiler._build_cuda)
    compiler._build_c = timed(compiler._build_c)


def _first(case, device: str, profile: bool) -> tuple:
    """(first call ms, compile ms, second call ms, kernels compiled) of ``case``."""
    inputs = case.make(np.random.default_rng(0))
    args = tuple(nl.asarray(a.copy(), device=device) for a in inputs)
    nl.sync()
    before = nl.stats()["kernels_compiled"]
    _COMPILING[0] = 0.0
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    out = case.run(nl, *args)
    nl.sync()
    if profiler:
        profiler.disable()
    first = (time.perf_counter() - start) * 1e3
    compiled = nl.stats()["kernels_compiled"] - before
    compiling = _COMPILING[0] * 1e3
    got = tuple(np.array(np.asarray(x)) for x in bench._as_tuple(out))  # (a later call may
    del out  # write into its inputs: Jacobi's grid)
    start = time.perf_counter()
    case.run(nl, *args)
    nl.sync()
    second = (time.perf_counter() - start) * 1e3
    problems = bench.compare(case, bench._as_tuple(case.run(np, *inputs)), got)
    if problems:
        raise AssertionError(f"{case.name} {case.size}: {problems}")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return first, compiling, second, compiled


def _cold() -> None:
    """Every CUDA program numloom compiles gets an empty function of a new name: neither
    numloom's compile cache nor NVRTC's has it."""
    import itertools

    from numloom.compile import compiler

    build, salt = compiler._build_cuda, itertools.count()

    def salted(source, *args):
        fresh = f"{os.getpid()}_{time.time_ns()}_{next(salt)}"
        return build(source + f'\nextern "C" __global__ void nl_cold_{fresh}() {{}}\n', *args)

    compiler._build_cuda = salted


def _jax_first(case) -> float | None:
    """jax.jit's first call of the same workload (trace, compile, run, wait), ms."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    inputs = tuple(jnp.asarray(a) for a in case.make(np.random.default_rng(0)))
    jax.block_until_ready(inputs)
    fn = jax.jit(lambda *a: case.run(jnp, *a))
    start = time.perf_counter()
    try:
        jax.block_until_ready(fn(*inputs))
    except Exception:  # noqa: BLE001 (a workload that writes into its arrays: not JAX's)
        return None
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=nl.get_device())
    parser.add_argument("--sizes", default="large")
    parser.add_argument("--only", default=None)
    parser.add_argument("--jax", action="store_true")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--profile", default=None)
    args = parser.parse_args()
    if args.cold:
        _cold()
    _timed_builds()
    nl.set_device(args.device)
    only = args.only.split(",") if args.only else None
    cases = bench.build_cases(workloads, args.sizes, only)
    nl.sync()
    print(f"device {args.device}, compile cache {os.environ.get('NUMLOOM_CACHE_DIR', '(default)')}")
    print("\n| workload | size | first call ms | kernels compiled | compiling ms | second call ms "
          "| jax.jit first ms |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|")
    for case in cases:
        first, compiling, second, compiled = _first(case, args.device, args.profile == case.name)
        jax_ms = _jax_first(case) if args.jax else None
        jax_text = "-" if jax_ms is None else f"{jax_ms:.0f}"
        print(f"| {case.name} | {case.size} | {first:.0f} | {compiled} | {compiling:.0f} | "
              f"{second:.2f} | {jax_text} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

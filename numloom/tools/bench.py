"""``python -m numloom bench``: the seed workloads on NumPy, numloom and their peers, in one run.

Every workload of ``benchmarks/workloads.py`` runs unchanged, first with ``xp = numpy`` and then
with ``xp = numloom``; numloom's results are checked against NumPy's (dtype, shape, values). On
the CPU, hand-written Numba loops (``benchmarks/numba_peers.py``) run beside them when Numba is
installed; on a GPU, CuPy, ``jax.jit`` and ``torch.compile`` (``benchmarks/gpu_peers.py``).

Each engine gets its own copy of the inputs, already on its device, and a timed call ends when
the results are complete (``numloom.sync()``, a stream synchronize, ``block_until_ready``).
The first call is timed apart: it includes tracing and compiling.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .bench_probes import (
    copy_bandwidth,
    first_call_probe,
    host_peak_memory_probe,
    new_size_probe,
    peak_memory_probe,
)
from .bench_report import (
    JIT_NAME,
    LEGEND,
    _as_tuple,
    _count,
    append_markdown,
    describe_device,
    notes,
    plot,
    render_text,
    table_rows,
)

# ---------------------------------------------------------------------------------------------
# Workloads and their sizes


@dataclass(frozen=True)
class Case:
    """One row of the table: a workload at one size."""

    name: str
    size: str
    make: Callable[[np.random.Generator], tuple]  # the NumPy inputs
    run: Callable[..., Any]  # run(xp, *inputs) -> array or tuple of arrays
    params: dict = field(default_factory=dict)  # static arguments, for peers that rewrite it
    # Integer results of chaotic float iterations (Mandelbrot counts, k-means labels on ties)
    # flip where a last-bit rounding difference (an FMA) crosses a threshold: allow a few.
    int_mismatch: float = 0.0
    # Memory floor: the least time is ``passes`` times moving the inputs and outputs once at
    # the device's copy bandwidth (0: bound by arithmetic, no floor shown).
    passes: int = 0


# Sizes per preset, as arguments of the builders below. "default" finishes in about 2 minutes
# on a 2-core CPU; "large" is for GPUs.
SIZES = {
    "small": {
        "blackscholes": [10_000],
        "gaussian_pdf": [100_000],
        "saxpy": [100_000],
        "sobel": [(4, 64, 64), (8, 120, 96)],
        "softmax": [(256, 256)],
        "jacobi": [(128, 10)],
        "kmeans": [(10_000, 4, 8, 5)],
        "dense": [(256, 128)],
        "mandelbrot": [(128, 20)],
        "matmul": [(128, 256, 64)],
    },
    "default": {
        "blackscholes": [1_000_000],
        "gaussian_pdf": [10_000_000],
        "saxpy": [10_000_000],
        "sobel": [(16, 300, 246), (64, 600, 600)],
        "softmax": [(4096, 4096)],
        "jacobi": [(1024, 100)],
        "kmeans": [(100_000, 4, 8, 10)],
        "dense": [(4096, 4096)],
        "mandelbrot": [(1024, 50)],
        "matmul": [(1024, 2048, 512)],
    },
    "large": {
        "blackscholes": [10_000, 100_000_000],
        "gaussian_pdf": [100_000_000],
        "saxpy": [100_000_000],
        "sobel": [(16, 300, 246), (64, 600, 600)],
        "softmax": [(8192, 4096)],
        "jacobi": [(4096, 100)],
        "kmeans": [(1_000_000, 4, 8, 10)],
        "dense": [(8192, 8192)],
        "mandelbrot": [(2048, 50)],
        "matmul": [(1024, 2048, 512)],
    },
}

F32 = np.float32




def _uniform(rng, low, high, shape):
    return rng.uniform(low, high, shape).astype(F32)


def _normal(rng, shape):
    return rng.standard_normal(shape, dtype=F32)


def _blackscholes(wl, n: int) -> Case:
    inputs = lambda rng: wl.blackscholes_inputs(n, rng)
    return Case("blackscholes", f"{_count(n)} f32", inputs, wl.blackscholes, passes=1)


def _gaussian_pdf(wl, n: int) -> Case:
    inputs = lambda rng: (_uniform(rng, -3, 3, n),)
    return Case("gaussian_pdf", f"{_count(n)} f32", inputs, wl.gaussian_pdf, passes=1)


def _saxpy(wl, n: int) -> Case:
    inputs = lambda rng: (_normal(rng, n), _normal(rng, n))
    run = lambda xp, X, Y: wl.saxpy(xp, 2.0, X, Y)
    return Case("saxpy", f"{_count(n)} f32", inputs, run, passes=1)


def _sobel(wl, *shape: int) -> Case:
    inputs = lambda rng: (_uniform(rng, 0, 1, shape),)
    return Case("sobel", "x".join(map(str, shape)), inputs, wl.sobel, passes=1)


def _softmax(wl, *shape: int) -> Case:
    inputs = lambda rng: (_normal(rng, shape),)
    return Case("softmax", "x".join(map(str, shape)), inputs, wl.softmax, passes=1)


def _jacobi(wl, n: int, sweeps: int) -> Case:
    inputs = lambda rng: (_uniform(rng, 0, 1, (n, n)),)
    run = lambda xp, grid: wl.jacobi(xp, grid, sweeps)
    # each sweep reads the grid and writes its interior: the inputs and outputs once
    size = f"{n}x{n} x{sweeps}"
    return Case("jacobi", size, inputs, run, {"iterations": sweeps}, passes=sweeps)


def _kmeans(wl, n: int, dims: int, k: int, iterations: int) -> Case:
    def inputs(rng):
        pts = _uniform(rng, 0, 1, (n, dims))
        return pts, pts[:k].copy()  # the first k points start as centers, as users seed it

    run = lambda xp, pts, centers: wl.kmeans(xp, pts, centers, iterations)
    size = f"{_count(n)}x{dims} k={k} x{iterations}"
    return Case("kmeans", size, inputs, run, {"iterations": iterations}, int_mismatch=1e-3)


def _dense(wl, n_in: int, n_out: int) -> Case:
    def inputs(rng):
        W = _normal(rng, (n_in, n_out)) / np.sqrt(F32(n_in))
        return W, _normal(rng, n_in), _normal(rng, n_out)

    return Case("dense", f"{n_in}x{n_out} matvec", inputs, wl.dense)


def _mandelbrot(wl, n: int, iterations: int) -> Case:
    def inputs(rng):
        re = np.linspace(-2.0, 1.0, n, dtype=F32)
        im = np.linspace(-1.5, 1.5, n, dtype=F32)
        return tuple(np.meshgrid(re, im))

    run = lambda xp, cr, ci: wl.mandelbrot(xp, cr, ci, iterations)
    size = f"{n}x{n} x{iterations}"
    return Case("mandelbrot", size, inputs, run, {"iterations": iterations}, int_mismatch=1e-3)


def _matmul(wl, m: int, k: int, n: int) -> Case:
    inputs = lambda rng: (_normal(rng, (m, k)), _normal(rng, (k, n)))
    return Case("matmul", f"{m}x{k} @ {k}x{n} f32", inputs, wl.matmul)


# workload name -> builder(wl, *size); the order of the table
BUILDERS = {
    "blackscholes": _blackscholes,
    "gaussian_pdf": _gaussian_pdf,
    "saxpy": _saxpy,
    "sobel": _sobel,
    "softmax": _softmax,
    "jacobi": _jacobi,
    "kmeans": _kmeans,
    "dense": _dense,
    "mandelbrot": _mandelbrot,
    "matmul": _matmul,
}


def _build(wl, name: str, size) -> Case:
    return BUILDERS[name](wl, *(size if isinstance(size, tuple) else (size,)))


def build_cases(wl, sizes: str, only: list[str] | None) -> list[Case]:
    table = SIZES[sizes]
    unknown = sorted(set(only or ()) - set(table))
    if unknown:
        raise SystemExit(
            f"bench: unknown workload(s) {', '.join(unknown)}; choose from {', '.join(table)}"
        )
    return [
        _build(wl, name, size) for name in table if not only or name in only for size in table[name]
    ]


# ---------------------------------------------------------------------------------------------
# Engines: NumPy and numloom here; peers come from benchmarks/*_peers.py with the same methods




class NumpyEngine:
    name = "numpy"

    def setup(self, case: Case, inputs: tuple):
        args = tuple(a.copy() for a in inputs)  # Jacobi writes into its grid
        return lambda: case.run(np, *args)

    def to_numpy(self, x):
        return np.array(x, copy=True)


class NumloomEngine:
    name = "numloom"

    def __init__(self, numloom, device: str):
        self.nl = numloom
        self.on_cpu = device == "cpu"

    def setup(self, case: Case, inputs: tuple):
        nl = self.nl
        args = tuple(nl.asarray(a.copy()) for a in inputs)
        nl.sync()  # the upload is not part of the timed call

        def call():
            out = case.run(nl, *args)
            nl.sync()
            if self.on_cpu:
                # On the CPU, reading the results is free and proves they exist. On a GPU the
                # peers keep results on the device, so a host copy would not compare like with like.
                for x in _as_tuple(out):
                    np.asarray(x)
            return out

        return call

    def to_numpy(self, x):
        return np.array(np.asarray(x), copy=True)

    def counters(self) -> dict:
        return self.nl.stats()


class NumloomJitEngine(NumloomEngine):
    """The same unchanged workload wrapped in ``numloom.jit``: replays skip Python tracing."""

    name = JIT_NAME

    def setup(self, case: Case, inputs: tuple):
        nl = self.nl
        args = tuple(nl.asarray(a.copy()) for a in inputs)
        nl.sync()
        run = nl.jit(lambda *a: case.run(nl, *a))

        def call():
            out = run(*args)
            nl.sync()
            if self.on_cpu:
                for x in _as_tuple(out):
                    np.asarray(x)
            return out

        return call


# ---------------------------------------------------------------------------------------------
# Timing and checking


@dataclass
class Timing:
    first_ms: float = float("nan")
    median_ms: float = float("nan")
    outputs: tuple = ()
    kernels_per_run: float | None = None
    fallbacks: dict = field(default_factory=dict)
    error: str | None = None


def _ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


# Fast calls are timed more often: at least ``repeat`` calls and MIN_TIMED_MS in all (up to
# MAX_CALLS), so a median of sub-millisecond calls is not five samples of a noisy host.
MIN_TIMED_MS, MAX_CALLS = 300.0, 200


def measure(engine, case: Case, inputs: tuple, repeat: int) -> Timing | None:
    """First call, then the median of at least ``repeat`` calls (more for fast ones: see
    MIN_TIMED_MS); None when the engine lacks the case."""
    try:
        call = engine.setup(case, inputs)
        if call is None:
            return None
        counters = getattr(engine, "counters", dict)
        before = counters()
        t0 = time.perf_counter()
        out = call()
        timing = Timing(first_ms=_ms_since(t0))
        # copy now: a later call may overwrite the buffers (Jacobi updates its grid in place)
        timing.outputs = tuple(engine.to_numpy(x) for x in _as_tuple(out))
        del out
        after_first = counters()
        times = []
        while len(times) < repeat or (sum(times) < MIN_TIMED_MS and len(times) < MAX_CALLS):
            t0 = time.perf_counter()
            call()
            times.append(_ms_since(t0))
        timing.median_ms = statistics.median(times)
        _count_work(timing, before, after_first, counters(), len(times))
        return timing
    except Exception as error:  # one broken engine or workload must not end the benchmark
        print(f"  {engine.name} raised on {case.name} {case.size}:", file=sys.stderr)
        traceback.print_exc()
        return Timing(error=f"{type(error).__name__}: {error}")


def _count_work(timing: Timing, before: dict, after_first: dict, end: dict, repeat: int) -> None:
    if "kernels_launched" in end:
        launched = end["kernels_launched"] - after_first.get("kernels_launched", 0)
        timing.kernels_per_run = launched / repeat
    old = before.get("fallbacks", {})
    timing.fallbacks = {
        k: n - old.get(k, 0) for k, n in end.get("fallbacks", {}).items() if n - old.get(k, 0)
    }


RTOL = {
    np.float16: 1e-2,
    np.float32: 1e-4,
    np.float64: 1e-9,
    np.complex64: 1e-4,
    np.complex128: 1e-9,
}


def compare(case: Case, expected: tuple, got: tuple, strict_dtype: bool = True) -> list[str]:
    """What differs between NumPy's results and another engine's; empty when they agree."""
    if len(expected) != len(got):
        return [f"{len(got)} outputs, NumPy gives {len(expected)}"]
    problems = []
    for i, (want, have) in enumerate(zip(expected, got)):
        where = f"output {i}" if len(expected) > 1 else "output"
        if strict_dtype and want.dtype != have.dtype:
            problems.append(f"{where}: dtype {have.dtype}, NumPy gives {want.dtype}")
        if want.shape != have.shape:
            problems.append(f"{where}: shape {have.shape}, NumPy gives {want.shape}")
            continue
        problem = _compare_values(case, want, have)
        if problem:
            problems.append(f"{where}: {problem}")
    return problems


def _compare_values(case: Case, want: np.ndarray, have: np.ndarray) -> str | None:
    if want.dtype.kind in "fc":
        rtol = RTOL.get(want.dtype.type, 1e-4)
        # absolute slack scaled to the data: values near zero come out of cancellations
        finite = np.abs(want[np.isfinite(want)])
        atol = rtol * float(np.max(finite, initial=0.0))
        bad = ~np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
        allowed = 0
    else:
        bad = have != want
        allowed = int(case.int_mismatch * want.size)
    count = int(np.count_nonzero(bad))
    if count <= allowed:
        return None
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), want.shape))
    return (
        f"{count} of {want.size} values differ; first at {list(first)}: "
        f"{have[first].item()!r}, NumPy gives {want[first].item()!r}"
    )


# ---------------------------------------------------------------------------------------------
# One row of the table


@dataclass
class Row:
    case: Case
    numpy: Timing
    numloom: Timing
    problems: list[str]  # numloom's; empty means OK
    peers: dict[str, Timing | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    io_bytes: int = 0  # the inputs' and NumPy's outputs' bytes
    floor_ms: float = float("nan")  # the memory floor (Case.passes), when the bandwidth is known

    @property
    def ok(self) -> bool:
        return not self.problems and self.numloom.error is None and self.numpy.error is None


def bench_case(case: Case, numloom_engine, jit_engine, repeat: int) -> Row:
    """NumPy, numloom and numloom.jit on one case (the peers come later: ``bench_peers``)."""
    print(f"  {case.name} {case.size} ...", file=sys.stderr, flush=True)
    inputs = case.make(np.random.default_rng(0))
    ref = measure(NumpyEngine(), case, inputs, repeat)
    mine = measure(numloom_engine, case, inputs, repeat)
    problems = []
    if ref.error is None and mine.error is None:
        problems = compare(case, ref.outputs, mine.outputs)
    row = Row(case, ref, mine, problems)
    row.io_bytes = sum(a.nbytes for a in inputs) + sum(np.asarray(o).nbytes for o in ref.outputs)
    if jit_engine is not None:
        _measure_peer(row, jit_engine, inputs, repeat)
    mine.outputs = ()  # free the arrays: large sizes hold gigabytes (NumPy's stay, to check)
    _progress(row)
    return row


def bench_peers(row: Row, peers: list, repeat: int) -> None:
    """The peers on a case NumPy and numloom ran, each checked against NumPy's result."""
    if peers:
        print(f"  {row.case.name} {row.case.size}: peers ...", file=sys.stderr, flush=True)
        inputs = row.case.make(np.random.default_rng(0))  # the same inputs again
        for peer in peers:
            _measure_peer(row, peer, inputs, repeat)
        _progress(row)
    row.numpy.outputs = ()
    for timing in row.peers.values():
        if timing is not None:
            timing.outputs = ()


def _measure_peer(row: Row, peer, inputs: tuple, repeat: int) -> None:
    timing = measure(peer, row.case, inputs, repeat)
    row.peers[peer.name] = timing
    if timing is not None and timing.error is None and row.numpy.error is None:
        for problem in compare(row.case, row.numpy.outputs, timing.outputs, strict_dtype=False):
            row.notes.append(f"{peer.name} differs from NumPy: {problem}")
    if timing is not None:
        timing.outputs = ()


def _progress(row: Row) -> None:
    """The row's times as soon as they are known (a run cut short still shows them)."""
    times = [("numpy", row.numpy), ("numloom", row.numloom), *row.peers.items()]
    text = ", ".join(f"{name} {t.median_ms:.3f} ms" for name, t in times
                     if t is not None and t.error is None)  # fmt: skip
    status = "OK" if not row.problems else "FAIL"
    print(f"    {text} [{status}]", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The benchmarks/ folder: workloads and peers live beside the package, in the source checkout


def find_benchmarks_dir() -> Path:
    candidates = [Path(__file__).resolve().parents[2] / "benchmarks", Path.cwd() / "benchmarks"]
    for folder in candidates:
        if (folder / "workloads.py").is_file():
            return folder
    raise SystemExit(
        "bench: benchmarks/workloads.py not found (looked in "
        + ", ".join(map(str, candidates))
        + "). Run it from a numloom source checkout: python -m pip install -e ."
    )


def load_module(path: Path, name: str):
    """Import a file as a module of its own name, without putting benchmarks/ on sys.path."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


def load_peers(folder: Path, device: str) -> list:
    """CPU peers on the CPU device, GPU peers on a GPU; those whose library imports."""
    filename = "numba_peers.py" if device == "cpu" else "gpu_peers.py"
    if not (folder / filename).is_file():
        return []
    module = load_module(folder / filename, "numloom_bench_" + filename[:-3])
    peers = module.available_peers()
    for line in getattr(module, "UNAVAILABLE", []):
        print(f"  peer skipped: {line}", file=sys.stderr)
    return peers


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m numloom bench",
        description="Time the seed workloads on NumPy and numloom (and peers) and check results.",
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default: numloom's default")
    parser.add_argument("--only", help="comma-separated workloads, e.g. saxpy,sobel")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed calls after the first, at least (5; calls under 60 ms "
                             "repeat until 300 ms)")  # fmt: skip
    parser.add_argument("--sizes", choices=list(SIZES), default="default")
    parser.add_argument("--append-md", metavar="FILE", help="append the table to a markdown log")
    parser.add_argument("--plot", metavar="FILE.png", help="bar chart of speedups (matplotlib)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (see "
                        "write_json for the schema)")  # fmt: skip
    parser.add_argument("--no-probes", action="store_true",
                        help="skip Black-Scholes' first call in new processes and peak memory")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def _number(x):
    """A float for JSON: NaN (not measured) as null."""
    return None if x is None or x != x else round(float(x), 6)


def _timing(t: Timing | None) -> dict | None:
    if t is None:
        return None
    return {"first_ms": _number(t.first_ms), "median_ms": _number(t.median_ms),
            "kernels_per_run": _number(t.kernels_per_run), "fallbacks": dict(t.fallbacks),
            "error": t.error}  # fmt: skip


def write_json(path: str, rows: list, peer_names: list, device_text: str, argv: list,
               footnotes: list) -> None:  # fmt: skip
    """The run as JSON: ``{"numloom", "numpy", "device", "command", "notes", "rows": [{
    "workload", "size", "ok", "problems", "numpy", "numloom", "peers": {name: timing},
    "floor_ms"}]}``, each timing ``{"first_ms", "median_ms", "kernels_per_run", "fallbacks",
    "error"}`` (null where not measured; ``numloom.jit`` is a peer)."""
    import json

    import numloom

    document = {
        "numloom": numloom.config.VERSION, "numpy": np.__version__, "device": device_text,
        "command": ["python", "-m", "numloom", "bench", *argv], "notes": list(footnotes),
        "rows": [{
            "workload": r.case.name, "size": r.case.size, "ok": r.ok,
            "problems": list(r.problems), "numpy": _timing(r.numpy),
            "numloom": _timing(r.numloom),
            "peers": {name: _timing(r.peers.get(name)) for name in peer_names},
            "floor_ms": _number(r.floor_ms),
        } for r in rows],
    }  # fmt: skip
    with open(path, "w") as f:
        json.dump(document, f, indent=1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dask" in argv:  # the chunked workloads on Dask (``tools/bench_dask.py``)
        from .bench_dask import main as dask_main

        return dask_main(argv)
    args = parse_args(argv)
    import numloom

    if args.device:
        try:
            numloom.set_device(args.device)
        except Exception as error:  # DeviceError: no GPU, or no CUDA backend installed
            print(f"bench: {error}", file=sys.stderr)
            return 2
    device = numloom.get_device()  # 'cpu' or 'cuda:N'
    folder = find_benchmarks_dir()
    wl = load_module(folder / "workloads.py", "numloom_bench_workloads")
    only = [name.strip() for name in args.only.split(",")] if args.only else None
    cases = build_cases(wl, args.sizes, only)
    device_text = describe_device(device)
    print(
        f"numloom bench on {device_text}; numpy {np.__version__}; sizes {args.sizes}; "
        f"median of at least {args.repeat} calls after the first ({MIN_TIMED_MS:.0f} ms of "
        f"calls, up to {MAX_CALLS}, for fast ones)",
        flush=True,
    )
    kind = "cpu" if device == "cpu" else "cuda"
    jit = NumloomJitEngine(numloom, kind)
    # NumPy and numloom run every case before the peers are imported: once CuPy, JAX and
    # torch are loaded (their threads and runtimes), the host side of the other Python code in
    # the process is slower, by 0.1 to 0.6 ms per call of numloom on the H100's host even with
    # their objects frozen out of the garbage collector. The peers run after, in the same
    # process, on the same inputs.
    rows = [bench_case(case, NumloomEngine(numloom, kind), jit, args.repeat) for case in cases]
    peers = load_peers(folder, device)
    gc.collect()
    gc.freeze()  # the imports' objects: no timed call pays to scan them
    for row in rows:
        bench_peers(row, peers, args.repeat)
    peers.insert(0, jit)
    # after the cases: its gigabytes, allocated and freed, would disturb the first case
    bandwidth = copy_bandwidth(numloom, device)
    if bandwidth == bandwidth:
        print(f"device copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)", flush=True)
    for row in rows:
        if row.case.passes:
            row.floor_ms = row.case.passes * row.io_bytes / bandwidth * 1e3
    peer_names = [p.name for p in peers if any(r.peers.get(p.name) for r in rows)]
    lines = table_rows(rows, peer_names)
    footnotes = notes(rows)
    if bandwidth == bandwidth:
        footnotes.append(f"device copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write)")
    if any(c.name == "blackscholes" for c in cases) and not args.no_probes:
        footnotes += first_call_probe(folder, device)
        footnotes.append(new_size_probe(numloom, wl))
        if device != "cpu":
            case = [c for c in cases if c.name == "blackscholes"][-1]  # the largest size
            footnotes.append(peak_memory_probe(numloom, case, case.make(np.random.default_rng(0))))
        else:
            case = _blackscholes(wl, 10_000_000)  # the fusion goal's size
            footnotes.append(host_peak_memory_probe(numloom, case,
                                                    case.make(np.random.default_rng(0))))  # fmt: skip
    print()
    print(render_text(lines))
    print(LEGEND)
    for line in footnotes:
        print(f"  {line}")
    if args.append_md:
        append_markdown(args.append_md, lines, footnotes, device_text, argv)
    if args.plot:
        plot(args.plot, rows, peer_names, f"numloom bench, {device_text}")
    if args.json:
        write_json(args.json, rows, peer_names, device_text, argv, footnotes)
    failed = [f"{r.case.name} {r.case.size}" for r in rows if not r.ok]
    if failed:
        print(f"numloom FAILED on: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0

"""``python -m numloom bench --dask``: chunked workloads on Dask, with NumPy chunks, numloom
chunks and (on a GPU, where CuPy is installed) CuPy chunks, in one run.

Each workload is one Dask program, run unchanged on each backend (``dask.config.set({"array.
backend": ...})``); its inputs are drawn inside the graph, chunk by chunk, so a size larger
than the device's memory streams through it. numloom's results are checked against the NumPy
backend's (Dask's own chunks, same seeds, same task graph). The table gives the median wall
time of the computes after a first one, with Dask's threaded scheduler.

Workloads: Black-Scholes (reduced to the sums of calls and puts), a Jacobi stencil through
``map_overlap``, a row softmax, and k-means (centers computed each iteration).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

SIZES = {  # per workload: the problem and its chunks, by --sizes
    "small": {"blackscholes": (10**6, 2.5 * 10**5), "jacobi": (512, 256, 5),
              "softmax": ((4096, 256), 1024), "kmeans": (10**5, 2.5 * 10**4, 5)},
    "default": {"blackscholes": (2 * 10**7, 5 * 10**6), "jacobi": (2048, 1024, 10),
                "softmax": ((65536, 512), 8192), "kmeans": (2 * 10**6, 5 * 10**5, 5)},
    "large": {"blackscholes": (4 * 10**9, 10**8), "jacobi": (16384, 4096, 10),
              "softmax": ((10**6, 1024), 10**5), "kmeans": (10**8, 10**7, 5)},
}  # fmt: skip


def _cnd(da, d):
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    w = 1.0 - 1.0 / np.sqrt(2 * np.pi) * da.exp(-d * d / 2.0) * (
        a1 * k + a2 * k**2 + a3 * k**3 + a4 * k**4 + a5 * k**5)  # fmt: skip
    return da.where(d < 0, 1.0 - w, w)


def blackscholes(da, n, chunk, r=0.02, v=0.30):
    """Black-Scholes over ``n`` float32 options drawn in the graph: the sums of the calls
    and of the puts (a result that fits anywhere)."""
    rng = da.random.default_rng(1)
    S = rng.uniform(5.0, 30.0, n, chunks=chunk).astype(np.float32)
    X = rng.uniform(1.0, 100.0, n, chunks=chunk).astype(np.float32)
    T = rng.uniform(0.25, 10.0, n, chunks=chunk).astype(np.float32)
    sqrt_t = da.sqrt(T)
    d1 = (da.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1, c2 = _cnd(da, d1), _cnd(da, d2)
    exp_rt = da.exp(-r * T)
    call = S * c1 - X * exp_rt * c2
    put = X * exp_rt * (1.0 - c2) - S * (1.0 - c1)
    return da.stack([call.sum(dtype=np.float64), put.sum(dtype=np.float64)])


def _jacobi_step(block):
    out = block.copy()
    out[1:-1, 1:-1] = 0.2 * (block[1:-1, 1:-1] + block[:-2, 1:-1] + block[2:, 1:-1]
                             + block[1:-1, :-2] + block[1:-1, 2:])  # fmt: skip
    return out


def jacobi(da, n, chunk, iterations):
    """Jacobi sweeps over an ``n`` x ``n`` grid with a hot edge; ``map_overlap`` brings each
    chunk its neighbours' rows and columns (the grid's own edges stay fixed)."""
    grid = da.zeros((n, n), chunks=chunk, dtype=np.float64)
    grid = da.concatenate([da.ones((1, n), chunks=(1, chunk)), grid[1:]], axis=0)
    for _ in range(iterations):
        grid = grid.map_overlap(_jacobi_step, depth=1, boundary="none")
    return grid[:: max(1, n // 64), :: max(1, n // 64)]


def softmax(da, shape, chunk):
    """A row softmax of a ``shape`` float32 matrix drawn in the graph, rows in chunks: its
    column sums (every row's probabilities, summed)."""
    x = da.random.default_rng(2).standard_normal(shape, chunks=(chunk, shape[1]),
                                                 dtype=np.float32)  # fmt: skip
    e = da.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).sum(axis=0)


def kmeans(da, n, chunk, iterations, k=8, dims=4):
    """k-means over ``n`` float32 points in ``dims`` dimensions drawn in the graph; each
    iteration computes the ``k`` centers (small) and broadcasts them to every chunk."""
    pts = da.random.default_rng(3).random((n, dims), chunks=(chunk, dims), dtype=np.float32)
    centers = pts[:k].compute()  # (an array of the backend's: NumPy, numloom or CuPy)
    ids = da.arange(k, chunks=k)
    for _ in range(iterations):
        d = ((pts[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = d.argmin(axis=1)
        onehot = (labels[:, None] == ids[None, :]).astype(np.float32)
        counts, sums = da.compute(onehot.sum(axis=0), onehot.T @ pts)
        centers = sums / np.maximum(counts, 1)[:, None]
    return centers


def _programs(sizes: dict) -> dict:
    b, j, s, m = sizes["blackscholes"], sizes["jacobi"], sizes["softmax"], sizes["kmeans"]
    return {
        "blackscholes": (f"{b[0]:.0e} f32", lambda da: blackscholes(da, b[0], int(b[1]))),
        "jacobi": (f"{j[0]}^2 x{j[2]}", lambda da: jacobi(da, j[0], j[1], j[2])),
        "softmax": (f"{s[0][0]}x{s[0][1]} f32", lambda da: softmax(da, s[0], s[1])),
        "kmeans": (f"{m[0]:.0e}x4 k=8 x{m[2]}", lambda da: kmeans(da, m[0], int(m[1]), m[2])),
    }


class _Plain:
    """numloom itself in the place of ``dask.array``: a workload unchunked, on one chunk's
    worth of data (``chunks=`` is dropped)."""

    def __init__(self):
        import numloom

        self._nl = numloom
        self.random = self

    def default_rng(self, seed):
        generator = self._nl.random.default_rng(seed)

        class Unchunked:
            def __getattr__(self, name):
                method = getattr(generator, name)
                return lambda *args, chunks=None, **kwargs: method(*args, **kwargs)

        return Unchunked()

    def __getattr__(self, name):
        return getattr(self._nl, name)


DRAWN = {"blackscholes", "softmax", "kmeans"}  # workloads whose inputs are random draws

def _plain_blackscholes(sizes: dict):
    n, chunk = sizes["blackscholes"]
    return (lambda xp: blackscholes(xp, int(chunk), None)), n / chunk


def _plain_softmax(sizes: dict):
    (rows, cols), chunk = sizes["softmax"]
    return (lambda xp: softmax(xp, (int(chunk), cols), None)), rows / chunk


# workload -> (its program on one chunk, unchunked, where the data fits; the number of chunks)
PLAIN = {"blackscholes": _plain_blackscholes, "softmax": _plain_softmax}


def _plain_share(name: str, sizes: dict, dask_ms: float, repeat: int) -> str:
    """Dask+numloom's throughput over plain numloom's at the same chunk size: elements per
    second of the whole chunked run against those of one chunk, unchunked."""
    if name not in PLAIN:
        return "-"
    (program, chunks), plain = PLAIN[name](sizes), _Plain()
    _host(program(plain))
    times = []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        _host(program(plain))
        times.append(1e3 * (time.perf_counter() - start))
    return f"{chunks * statistics.median(times) / dask_ms:.0%}"


def _host(x) -> np.ndarray:
    if hasattr(x, "get") and not isinstance(x, np.ndarray):
        return np.asarray(x.get())
    return np.asarray(x)


def _run(program, backend: str, repeat: int, scheduler: str | None = "threads"):
    """``(result on the host, median ms, first ms)`` of ``program`` on Dask's ``backend``
    (``scheduler=None``: the cluster of the client in use)."""
    import dask
    import dask.array as da

    def once():
        settings = {"array.backend": backend}
        if scheduler:
            settings["scheduler"] = scheduler
        with dask.config.set(settings):
            made = program(da)
            result = made.compute() if hasattr(made, "compute") else made
        return _host(result)  # (the wait: a value on the host)

    start = time.perf_counter()
    result = once()
    first = 1e3 * (time.perf_counter() - start)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        once()
        times.append(1e3 * (time.perf_counter() - start))
    return result, statistics.median(times) if times else first, first


def _release(backend: str, device: str) -> None:
    """The GPU memory ``backend``'s pool keeps after its runs, given back to the driver: the
    next library in this process (each peer keeps what its arrays held) would find the GPU
    full."""
    if device == "cpu":
        return
    if backend == "numloom":
        from numloom.backends import cuda_memory

        cuda_memory.release_cached(device)
    elif backend == "cupy":
        import gc

        import cupy

        gc.collect()
        cupy.get_default_memory_pool().free_all_blocks()


def _backends(device: str) -> list:
    found = ["numpy", "numloom"]
    if device != "cpu":
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            found.append("cupy")
        except Exception:  # noqa: BLE001 (CuPy not installed, or no GPU for it)
            pass
    return found


def _cluster(workers: int, device: str, protocol: str = "tcp"):
    """A client of a local cluster: ``workers`` single-threaded processes on the CPU, or
    dask-cuda's one worker a GPU (``protocol="ucx"``: chunks go GPU to GPU through UCX, over
    NVLink or CUDA IPC where the GPUs have them); each worker evaluates its reduced chunks as
    their tasks end (``numloom.dask.SettlePlugin``)."""
    from distributed import Client, LocalCluster

    import numloom.dask

    if device == "cpu":  # (each process: one Dask thread, numloom's kernels on one core)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=50,
                               env={"OMP_NUM_THREADS": "1"})  # fmt: skip
    else:
        from dask_cuda import LocalCUDACluster

        # (UCX: RMM's memory, which numloom stages chunks in for CUDA IPC, from a pool: a
        # buffer freed and allocated again at the same address is not mapped again by the
        # receiver's IPC cache, which UCX reports as "resource already mapped")
        pool = {"rmm_pool_size": RMM_POOL} if protocol == "ucx" else {}
        cluster = LocalCUDACluster(dashboard_address=":0", silence_logs=50,
                                   protocol=protocol, **pool)  # (every visible GPU)
    client = Client(cluster)
    client.register_plugin(numloom.dask.SettlePlugin())
    return client


RMM_POOL = "2GB"  # a GPU worker's RMM pool over UCX


def _counters() -> dict:  # (run on each worker)
    import numloom

    stats = numloom.stats()
    return {k: stats[k] for k in ("device_to_host_bytes", "host_to_device_bytes")}


def _chunk(nbytes: int):  # (run on a worker: a chunk in its device's memory)
    import numloom

    x = numloom.arange(nbytes // 4, dtype=np.float32)
    numloom.evaluate(x)
    return x


def _device_of(x) -> str:  # (run on the receiving worker: nothing read back)
    return f"{x.device} {x.nbytes}"


def _worker_device() -> dict:  # (run on each worker)
    import os

    import numloom

    device = numloom.get_device()
    found = {"visible": os.environ.get("CUDA_VISIBLE_DEVICES", "-"), "device": device,
             "gpu": "-", "peak": 0}  # fmt: skip
    if device != "cpu":
        from numloom.backends import cuda_device, cuda_memory

        state = cuda_device._devices.get(device)
        if state is not None:
            dev = state.device
            found["gpu"] = str(getattr(dev, "pci_bus_id", None) or getattr(dev, "uuid", "?"))
        found["peak"] = cuda_memory.memory_peak()
    stats = numloom.stats()
    found.update(kernels=stats["kernels_launched"], graphs=stats["graphs_launched"],
                 host_bytes=stats["device_to_host_bytes"] + stats["host_to_device_bytes"])
    return found


def worker_devices(client) -> list:
    """Lines of a table: each worker's visible GPUs, numloom's device there, the physical GPU
    that device is (its PCI bus id), and what numloom did on it over the run (kernels, CUDA
    graphs, the most device memory held at once, bytes between device and host): the workers'
    work stays each on its own GPU."""
    lines = ["| worker | CUDA_VISIBLE_DEVICES | numloom device | GPU | kernels | graphs | "
             "peak device memory | device<->host bytes |", "|---|---|---|---|---|---|---|---|"]
    for worker, f in sorted(client.run(_worker_device).items()):
        lines.append(f"| {worker} | {f['visible']} | {f['device']} | {f['gpu']} | "
                     f"{f['kernels']} | {f['graphs']} | {f['peak'] / 2**30:.2f} GiB | "
                     f"{f['host_bytes']} |")  # fmt: skip
    return lines


def transfer_probe(client, nbytes: int = 80 * 2**20, repeat: int = 5) -> str:
    """One chunk moved from one worker to another: the median time of ``repeat`` moves (each
    a new chunk) and the bytes numloom copied between device and host on either side. A move
    GPU to GPU (UCX over NVLink or CUDA IPC) copies none through numloom; Dask's TCP transport
    takes the chunk's host copy, so the sender counts its bytes device to host and the
    receiver host to device."""
    from distributed import wait

    workers = sorted(client.scheduler_info()["workers"])
    if len(workers) < 2:
        return "transfer probe: one worker, nothing to move"
    sender, receiver = workers[:2]
    times, moved = [], None
    before = client.run(_counters)
    for _ in range(repeat):
        chunk = client.submit(_chunk, nbytes, workers=[sender], pure=False)
        wait(chunk)
        start = time.perf_counter()
        moved = client.submit(_device_of, chunk, workers=[receiver], pure=False).result()
        times.append(1e3 * (time.perf_counter() - start))
        del chunk
    after = client.run(_counters)
    sent = {k: after[sender][k] - before[sender][k] for k in after[sender]}
    got = {k: after[receiver][k] - before[receiver][k] for k in after[receiver]}
    ms = statistics.median(times)
    return (f"transfer probe: a {nbytes / 2**20:.0f} MiB chunk from one worker to the other in "
            f"{ms:.2f} ms (median of {repeat}; {nbytes / ms / 1e6:.1f} GB/s; arrived as {moved}); "
            f"bytes through the host, {repeat} moves: sender {sent['device_to_host_bytes']} "
            f"device to host, receiver {got['host_to_device_bytes']} host to device")


def task_profile(client, name: str, program, top: int = 8) -> list:
    """One Dask+numloom compute of ``program`` on ``client``'s cluster under Dask's task
    stream: its wall time, and the workers' time by kind of task (a key's name without its
    token) and by action (compute, transfer, disk), the largest first."""
    import dask
    import dask.array as da
    from distributed import get_task_stream

    start, since = time.perf_counter(), time.time()
    with get_task_stream(client) as stream, dask.config.set({"array.backend": "numloom"}):
        made = program(da)
        _host(made.compute() if hasattr(made, "compute") else made)
    wall = 1e3 * (time.perf_counter() - start)
    spent: dict = {}
    for record in stream.data:
        key = record["key"]
        kind = (key[0] if isinstance(key, tuple) else str(key)).rsplit("-", 1)[0]
        for part in record["startstops"]:
            entry = spent.setdefault((kind, part["action"]), [0, 0.0])
            entry[0] += 1
            entry[1] += 1e3 * (part["stop"] - part["start"])
    total = sum(ms for _, ms in spent.values())
    lines = [f"{name}: task stream of one compute: {wall:.1f} ms wall, {len(stream.data)} tasks, "
             f"{total:.1f} ms on the workers"]  # fmt: skip
    for (kind, action), (count, ms) in sorted(spent.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"  {ms:9.1f} ms  {count:5d}x {action:8s} {kind[:70]}")
    return lines + _sampled(client.profile(start=since), top)


def _sampled(tree: dict, top: int) -> list:
    """The workers' sampled call stacks (Dask's statistical profiler, ``client.profile``):
    the functions with the most samples in themselves, and numloom's with the most in all."""
    own: dict = {}
    total: dict = {}

    def walk(node, path):
        d = node["description"]
        name = f"{d['filename'].rsplit('site-packages/', 1)[-1]}:{d['line_number']} {d['name']}"
        inner = sum(c["count"] for c in node["children"].values())
        own[name] = own.get(name, 0) + node["count"] - inner
        if name not in path:
            total[name] = total.get(name, 0) + node["count"]
        for child in node["children"].values():
            walk(child, path | {name})

    for child in tree["children"].values():
        walk(child, frozenset())
    count = max(tree["count"], 1)
    lines = [f"  sampled: {tree['count']} samples of the workers' threads; most in themselves:"]
    lines += [f"    {n / count:6.1%}  {name[-90:]}"
              for name, n in sorted(own.items(), key=lambda kv: -kv[1])[:top]]  # fmt: skip
    lines.append("  numloom's functions, with what they call:")
    mine = [(name, n) for name, n in total.items() if "numloom/" in name]
    lines += [f"    {n / count:6.1%}  {name[-90:]}" for name, n in sorted(mine, key=lambda kv: -kv[1])[:top]]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numloom bench --dask",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--dask", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default: numloom's default")
    parser.add_argument("--sizes", choices=list(SIZES), default="default")
    parser.add_argument("--only", help="comma-separated workloads, e.g. jacobi,kmeans")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-numpy", action="store_true",
                        help="leave out Dask on NumPy chunks (its large sizes take minutes)")
    parser.add_argument("--skip-cupy", action="store_true", help="leave out Dask on CuPy chunks")
    parser.add_argument("--workers", type=int, default=0,
                        help="run on a local cluster of this many worker processes (on the CPU "
                             "one core each: one Dask thread, OMP_NUM_THREADS=1; on GPUs, "
                             "dask-cuda's LocalCUDACluster, one worker a GPU); default: Dask's "
                             "threaded scheduler in this process")
    parser.add_argument("--protocol", choices=["tcp", "ucx"], default="tcp",
                        help="the cluster's transport on GPUs (--workers): ucx moves chunks GPU "
                             "to GPU (needs distributed-ucxx)")
    parser.add_argument("--plain", action="store_true",
                        help="add Dask+numloom's throughput as a share of plain numloom's on one "
                             "chunk (Black-Scholes, softmax)")
    parser.add_argument("--profile", action="store_true",
                        help="with --workers: after each workload, one more Dask+numloom compute "
                             "under Dask's task stream, its time on the workers by kind of task")
    args = parser.parse_args(argv)
    try:
        import dask  # noqa: F401
    except ImportError:
        print("bench --dask needs Dask: pip install 'numloom[dask]'", file=sys.stderr)
        return 2
    import numloom
    import numloom.dask  # noqa: F401 (Dask's lookups for numloom chunks)

    if args.device:
        numloom.set_device(args.device)
    device = numloom.get_device()
    backends = _backends(device)
    if args.skip_numpy:
        backends.remove("numpy")
    if args.skip_cupy and "cupy" in backends:
        backends.remove("cupy")
    programs = _programs(SIZES[args.sizes])
    only = set(args.only.split(",")) if args.only else set(programs)
    client = _cluster(args.workers, device, args.protocol) if args.workers else None
    where = (f"a local cluster of {len(client.scheduler_info()['workers'])} worker processes "
             f"({args.protocol})" if client else "Dask's threaded scheduler")  # fmt: skip
    print(f"numloom bench --dask on {device}; sizes {args.sizes}; {where}; "
          f"median of {args.repeat} computes after the first (ms)\n")  # fmt: skip
    if client:
        print(transfer_probe(client) + "\n", flush=True)
    header = ["workload", "size", *[f"Dask+{b}" for b in backends]]
    others = [b for b in backends if b != "numloom"]
    header += [f"numloom vs {b}" for b in others] + ["numloom first"]
    header += ["of plain numloom"] * args.plain + ["check"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    failed, profiles = [], []
    for name, (size, program) in programs.items():
        if name not in only:
            continue
        results, medians, first = {}, {}, None
        for backend in backends:
            try:
                results[backend], medians[backend], started = _run(
                    program, backend, args.repeat, None if client else "threads")
            except Exception as error:  # noqa: BLE001 (a peer out of memory: say so, go on)
                if backend == "numloom":
                    raise
                print(f"Dask+{backend} failed on {name}: {type(error).__name__}: "
                      f"{str(error)[:200]}", file=sys.stderr)  # fmt: skip
                results[backend], medians[backend] = None, float("nan")
            else:
                if backend == "numloom":
                    first = started
            _release(backend, device)  # (after the error, and the arrays its frames held, went)
        # (NumPy's chunks draw numloom's streams; CuPy's draw their own: a check only where
        # nothing is drawn)
        reference = results.get("numpy", None if name in DRAWN else results.get("cupy"))
        if reference is None and client:  # (the cluster's result against the threaded
            reference = _run(program, "numloom", 0, "threads")[0]  # scheduler's, here)
            checked_by = " (threaded)"
        else:
            checked_by = ""
        ok = reference is None or np.allclose(results["numloom"], reference, rtol=2e-4,
                                                atol=1e-6 * float(np.abs(reference).max()))  # fmt: skip
        if not ok:
            failed.append(name)
        cells = [name, size, *[f"{medians[b]:.1f}" if results[b] is not None else "failed"
                               for b in backends]]  # fmt: skip
        cells += [f"{medians['numloom'] / medians[b]:.2f}x" if results[b] is not None else "-"
                  for b in others]  # fmt: skip
        cells += [f"{first:.0f}"]
        if args.plain:
            cells += [_plain_share(name, SIZES[args.sizes], medians["numloom"], args.repeat)]
        cells += ["unchecked" if reference is None else ("OK" if ok else "DIFFERS") + checked_by]
        print("| " + " | ".join(cells) + " |", flush=True)
        if client and args.profile:
            profiles.append(task_profile(client, name, program))
    for lines in profiles:
        print("\n" + "\n".join(lines))
    if client:
        print("\nWhere the work ran:\n" + "\n".join(worker_devices(client)))
        client.close()
    if failed:
        print(f"numloom's results differ from NumPy's on: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

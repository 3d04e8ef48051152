"""The benchmark's outputs: its table (text and Markdown), notes, the device it ran on, the
Markdown log and the plot (``bench.py`` measures)."""

from __future__ import annotations

import datetime
import importlib.util
import os
import platform
import shlex

import numpy as np

# ---------------------------------------------------------------------------------------------
# The table

JIT_NAME = "numloom.jit"  # the column of numloom under numloom.jit (bench.NumloomJitEngine)


def _ms(value: float) -> str:
    if value != value:  # NaN: not measured
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _kernels(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _peer_cell(timing) -> str:
    if timing is None:
        return ""
    return "error" if timing.error else _ms(timing.median_ms)


def table_rows(rows: list, peer_names: list[str]) -> list[list[str]]:
    header = [
        "workload",
        "size",
        "numpy ms",
        "numloom ms",
        "numpy/numloom",
        "first call ms",
        "kernels/run",
        "check",
    ] + [f"{name} ms" for name in peer_names]
    others = [name for name in peer_names if name != JIT_NAME]
    compare_peers = bool(others)
    compare_floor = any(row.floor_ms == row.floor_ms for row in rows)
    if compare_peers:
        header += ["best peer", "numloom/best", "jit/best"]
    if compare_floor:
        header += ["floor ms", "floor/numloom", "floor/jit"]
    lines = [header]
    for row in rows:
        ref, mine = row.numpy, row.numloom
        ratio = ref.median_ms / mine.median_ms if mine.median_ms > 0 else float("nan")
        check = "OK" if row.ok else ("ERROR" if mine.error or ref.error else "FAIL")
        cells = [
            row.case.name,
            row.case.size,
            _ms(ref.median_ms),
            _ms(mine.median_ms),
            "-" if ratio != ratio else f"{ratio:.2f}x",
            _ms(mine.first_ms),
            _kernels(mine.kernels_per_run),
            check,
        ]
        cells += [_peer_cell(row.peers.get(name)) for name in peer_names]
        jit = _median(row.peers.get(JIT_NAME))
        if compare_peers:
            best = min(others, key=lambda name: _median(row.peers.get(name), float("inf")))
            best_ms = _median(row.peers.get(best))
            cells += ["-" if best_ms != best_ms else best,
                      _ratio(mine.median_ms, best_ms), _ratio(jit, best_ms)]  # fmt: skip
        if compare_floor:
            floor = row.floor_ms
            cells += [_ms(floor), _percent(floor, mine.median_ms), _percent(floor, jit)]
        lines.append(cells)
    return lines


def _median(timing, missing: float = float("nan")) -> float:
    if timing is None or timing.error or timing.median_ms != timing.median_ms:
        return missing
    return timing.median_ms


def _ratio(ms: float, best_ms: float) -> str:
    """How many times the best peer's time ``ms`` is: at most 1.00x is at least as fast."""
    if ms != ms or best_ms != best_ms or best_ms <= 0:
        return "-"
    return f"{ms / best_ms:.2f}x"


def _percent(floor_ms: float, ms: float) -> str:
    if floor_ms != floor_ms or ms != ms or ms <= 0:
        return "-"
    return f"{100 * floor_ms / ms:.0f}%"


def render_text(lines: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for n, line in enumerate(lines):
        # names left, numbers right
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def render_markdown(lines: list[list[str]]) -> str:
    out = ["| " + " | ".join(lines[0]) + " |"]
    out.append("| " + " | ".join("---" if i < 2 else "---:" for i in range(len(lines[0]))) + " |")
    out += ["| " + " | ".join(line) + " |" for line in lines[1:]]
    return "\n".join(out)


def notes(rows: list) -> list[str]:
    """Mismatches, errors, fallbacks and peers' first calls, one line each."""
    out = []
    for row in rows:
        label = f"{row.case.name} {row.case.size}"
        for engine in (row.numpy, row.numloom):
            if engine.error:
                out.append(
                    f"{label}: {'numpy' if engine is row.numpy else 'numloom'} "
                    f"raised {engine.error}"
                )
        out += [f"{label}: numloom MISMATCH: {p}" for p in row.problems]
        if row.numloom.fallbacks:
            used = ", ".join(f"{k} x{n}" for k, n in sorted(row.numloom.fallbacks.items()))
            out.append(f"{label}: numloom fell back to NumPy for {used}")
        for name, timing in row.peers.items():
            if timing is not None and timing.error:
                out.append(f"{label}: {name} raised {timing.error}")
            elif timing is not None:
                out.append(f"{label}: {name} first call {_ms(timing.first_ms)} ms")
        out += [f"{label}: {note}" for note in row.notes]
    return out


LEGEND = (
    "numpy/numloom > 1: numloom is faster. Times are medians after a first call;\n"
    "'first call' includes tracing and compiling (unless the compile cache had the kernels).\n"
    "numloom/best, jit/best: numloom's time (unchanged code, and under numloom.jit) over the\n"
    "fastest peer's (numloom.jit not counted as a peer); at most 1.00x is at least as fast.\n"
    "floor: the inputs and outputs moved once per pass at the measured copy bandwidth;\n"
    "floor/numloom is the fraction of that floor reached."
)


# ---------------------------------------------------------------------------------------------
# Where it ran


def describe_cpu() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def describe_gpu(device: str) -> str:
    index = int(device.split(":")[1]) if ":" in device else 0
    for module in ("cuda.core", "cuda.core.experimental"):
        try:
            return str(importlib.import_module(module).Device(index).name)
        except Exception:  # missing module or driver: try the next way
            continue
    return f"CUDA device {index}"


def describe_device(device: str) -> str:
    if device.startswith("cuda"):
        return f"{device}: {describe_gpu(device)} (host: {describe_cpu()})"
    return f"cpu: {describe_cpu()}"


# ---------------------------------------------------------------------------------------------
# Outputs: markdown log and plot


def append_markdown(path: str, lines, footnotes, device_text: str, argv: list[str]) -> None:
    import numloom

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = [
        f"\n## {now}: {device_text}\n",
        f"- command: `{shlex.join(['python', '-m', 'numloom', 'bench', *argv])}`",
        f"- numpy {np.__version__}, numloom {numloom.config.VERSION}, "
        f"Python {platform.python_version()}\n",
        render_markdown(lines),
        "",
        LEGEND,
    ]
    if footnotes:
        text += [""] + [f"- {line}" for line in footnotes]
    with open(path, "a") as f:
        f.write("\n".join(text) + "\n")
    print(f"appended the table to {path}")


def plot(path: str, rows: list, peer_names: list[str], title: str) -> None:
    """Speedup over NumPy per workload, numloom and each peer, on a log scale."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            f"--plot: matplotlib is not installed (pip install 'numloom[viz]'); {path} not written"
        )
        return
    labels = [f"{r.case.name}\n{r.case.size}" for r in rows]
    series = {"numloom": [_speedup(r.numpy, r.numloom) for r in rows]}
    for name in peer_names:
        series[name] = [_speedup(r.numpy, r.peers.get(name)) for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(rows)), 5))
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(rows))], values, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speedup over NumPy (median)")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))], labels, fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def _speedup(ref, timing) -> float:
    if timing is None or timing.error or not timing.median_ms > 0:
        return float("nan")
    return ref.median_ms / timing.median_ms


def _count(n: int) -> str:
    """1000000 -> '1e6' (the way the workload figures are written), 300 -> '300'."""
    exponent = len(str(n)) - 1
    return f"1e{exponent}" if n == 10**exponent and exponent >= 4 else str(n)


def _as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)

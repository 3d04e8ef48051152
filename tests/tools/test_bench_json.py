"""``python -m numloom bench --json FILE``: the run as JSON, in the documented schema."""

from __future__ import annotations

import json

from numloom.tools import bench

TIMING = {"first_ms", "median_ms", "kernels_per_run", "fallbacks", "error"}


def test_the_json_has_every_row_and_timing(tmp_path, capsys):
    path = tmp_path / "bench.json"
    code = bench.main(["--sizes", "small", "--only", "saxpy,softmax", "--repeat", "1",
                       "--no-probes", "--json", str(path)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    document = json.loads(path.read_text())
    assert set(document) == {"numloom", "numpy", "device", "command", "notes", "rows"}
    assert document["command"][:4] == ["python", "-m", "numloom", "bench"]
    assert [r["workload"] for r in document["rows"]] == ["saxpy", "softmax"]
    for row in document["rows"]:
        assert set(row) == {"workload", "size", "ok", "problems", "numpy", "numloom", "peers",
                            "floor_ms"}  # fmt: skip
        assert row["ok"] is True and row["problems"] == []
        for timing in (row["numpy"], row["numloom"], *row["peers"].values()):
            assert timing is None or set(timing) == TIMING
        assert row["numloom"]["median_ms"] > 0 and row["numloom"]["kernels_per_run"] >= 1
        assert "numloom.jit" in row["peers"]


def test_the_plot_is_a_png_of_the_speedups(tmp_path, capsys):
    """``--plot FILE.png``: log-scale bars of each engine's speedup over NumPy (matplotlib,
    the [viz] extra)."""
    import pytest

    pytest.importorskip("matplotlib")
    path = tmp_path / "bench.png"
    assert bench.main(["--sizes", "small", "--only", "saxpy", "--repeat", "1", "--no-probes",
                       "--plot", str(path)]) == 0  # fmt: skip
    assert f"wrote {path}" in capsys.readouterr().out
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000

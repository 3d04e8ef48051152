"""The coverage table: each public NumPy callable in one row, classified by how numloom runs it."""

from __future__ import annotations

import numpy

from numloom.tools import coverage


def test_every_public_callable_has_one_row():
    rows = coverage.rows()
    keys = [(namespace, name) for namespace, name, _ in rows]
    assert len(keys) == len(set(keys))
    assert {kind for _, _, kind in rows} <= set(coverage.KINDS)
    names = {name for namespace, name, _ in rows if namespace == "numpy"}
    assert {"add", "sort", "concatenate", "loadtxt"} <= names
    assert all(hasattr(numpy, name) for name in names)


def test_rows_say_how_numloom_runs_each_function():
    kind = {(namespace, name): k for namespace, name, k in coverage.rows()}
    assert kind[("numpy", "add")] == "fused"  # a ufunc: numloom's kernels
    assert kind[("numpy", "nansum")] == "fused"
    assert kind[("numpy", "sort")] == "library"  # numloom's radix sort on a GPU
    assert kind[("fft", "fft")] == "library" and kind[("fft", "fftshift")] == "fused"
    assert kind[("linalg", "solve")] == "library"
    assert kind[("random.Generator", "standard_normal")] == "library"
    assert kind[("random.Generator", "integers")] == "library"
    assert kind[("random.Generator", "gamma")] == "NumPy"
    assert kind[("numpy", "loadtxt")] == "NumPy's own"  # files are the host's
    assert kind[("numpy", "finfo")] == "NumPy's own"


def test_the_summary_and_the_markdown_agree():
    rows = coverage.rows()
    counts = coverage.summary(rows)
    native, total = counts[None]
    assert 0 < native <= total == sum(t for k, (_, t) in counts.items() if k is not None)
    text = coverage.markdown(rows)
    assert f"| all | {native} ({100 * native / total:.0f}%) | {total} |" in text
    assert text.count("\n| `") == len(rows)


def test_the_command_prints_the_summary(capsys):
    from numloom.tools import runner

    assert runner.main(["coverage"]) == 0
    assert "native on a GPU" in capsys.readouterr().out

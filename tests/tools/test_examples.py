"""The programs in ``examples/`` run at small sizes, with numloom and with NumPy, and agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SMALL = {
    "monte_carlo_option": ["--paths", "200000"],
    "heat": ["--size", "96", "--steps", "30"],
    "kmeans": ["--points", "20000", "--iterations", "8"],
    "image_filters": ["--size", "256"],
    "nbody": ["--bodies", "256", "--steps", "3"],
}


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"numloom_example_{name}",
                                                  EXAMPLES / f"{name}.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _host(x):
    if isinstance(x, tuple):
        return tuple(_host(v) for v in x)
    return numpy.asarray(x)


def test_every_example_is_tested():
    assert {p.stem for p in EXAMPLES.glob("*.py")} == set(SMALL)


@pytest.mark.parametrize("name", list(SMALL))
def test_an_example_runs_with_numloom_as_with_numpy(name, capsys):
    module = _load(name)
    mine = _host(module.main(SMALL[name]))
    theirs = _host(module.main(SMALL[name] + ["--numpy"]))
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2 and all(line for line in printed)
    if name == "image_filters":
        assert (mine != theirs).mean() < 1e-3  # (float32 pixels on the threshold may differ)
        assert theirs.sum() > 0
    elif name == "kmeans":
        numpy.testing.assert_allclose(mine[0], theirs[0], rtol=1e-4, atol=1e-4)
        assert (mine[1] != theirs[1]).mean() < 1e-3
    elif name == "nbody":  # (the kernel sums each body's pulls in another order)
        for g, w in zip(mine, theirs):
            numpy.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    else:
        numpy.testing.assert_allclose(mine, theirs, rtol=1e-12)

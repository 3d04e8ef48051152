"""The documentation site (``mkdocs.yml``, ``docs/``) builds, strictly: every page in the nav,
no broken link, the API reference rendered from numloom's docstrings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_build_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    reference = (tmp_path / "site" / "reference" / "index.html").read_text()
    for name in ("numloom.explain", "numloom.visualize", "numloom.jit", "numloom.dask"):
        assert name in reference
    coverage = (tmp_path / "site" / "COVERAGE" / "index.html").read_text()
    assert "native on a GPU" in coverage
    import numpy

    assert f"NumPy {numpy.__version__}" in coverage  # (generated as the site builds)

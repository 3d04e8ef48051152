"""Fixtures of the compile tests."""

from __future__ import annotations

import pytest

import numloom as nl
from numloom.compile import compiler
from numloom.core import config


@pytest.fixture
def tiering(monkeypatch, tmp_path):
    """Tiering on (the suite compiles at once), over an empty compile cache."""
    if nl.get_device() != "cpu":
        pytest.skip("the CPU's C kernels")
    monkeypatch.setattr(config, "COMPILE_AFTER_MS", 20)
    monkeypatch.setenv("NUMLOOM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_loaded", {})
    yield

"""The CPU device: plans run on the host (node by node through NumPy for now)."""

from __future__ import annotations

from .reference import run  # noqa: F401


def problem() -> str | None:
    """Why this backend cannot run here (None: it always can)."""
    return None


def synchronize(device: str) -> None:
    """Host execution is synchronous: nothing to wait for."""

"""The backends, one module each, listed in one table. The core never imports them directly."""

from __future__ import annotations

import importlib

# device kind -> module implementing it (``run(plan, inputs) -> outputs`` and ``problem()``)
BACKENDS = {
    "cpu": "numloom.backends.cpu",
    "cuda": "numloom.backends.cuda",
}


def load(kind: str):
    """The backend module for a device kind ("cpu", "cuda"); ImportError when it is missing."""
    kind = kind.split(":")[0]
    if kind not in BACKENDS:
        raise ImportError(f"numloom has no backend for device kind {kind!r}")
    return importlib.import_module(BACKENDS[kind])

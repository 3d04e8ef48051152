"""NVTX ranges around numloom's phases: planning, compiling, evaluating, and each launch of a
CUDA graph. Where the ``nvtx`` package is installed, Nsight Systems shows them on its timeline
beside the kernels they launch (domain ``numloom``); without it nothing is recorded and a phase
costs one shared, empty context."""

from __future__ import annotations

import contextlib

_NULL = contextlib.nullcontext()
_nvtx: object = False  # the nvtx module, None where it is not installed (False: not looked)


def phase(name: str):
    """A context marking phase ``name`` ("numloom: compile", ...) on Nsight's timeline."""
    global _nvtx
    if _nvtx is False:
        try:
            import nvtx
        except ImportError:
            nvtx = None
        _nvtx = nvtx
    if _nvtx is None:
        return _NULL
    return _nvtx.annotate(name, domain="numloom")

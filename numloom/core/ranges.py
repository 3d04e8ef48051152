"""NVTX ranges around numloom's phases: tracing (from one evaluation to the next), planning,
compiling, evaluating, and each launch of a CUDA graph. Where the ``nvtx`` package is installed
and a profiler records them (Nsight Systems and Nsight Compute name their library in
``NVTX_INJECTION64_PATH``), Nsight shows them on its timeline beside the kernels they launch
(domain ``numloom``); otherwise nothing is recorded, nvtx is not imported (about 15 ms of a
program's first evaluation), and a phase costs one shared, empty context."""

from __future__ import annotations

import contextlib
import os

_NULL = contextlib.nullcontext()
_nvtx: object = False  # the nvtx module, None where it is not installed (False: not looked)


def _module():
    global _nvtx
    if _nvtx is False:
        nvtx = None
        if os.environ.get("NVTX_INJECTION64_PATH"):  # (a profiler records the ranges)
            try:
                import nvtx
            except ImportError:
                pass
        _nvtx = nvtx
    return _nvtx


def phase(name: str):
    """A context marking phase ``name`` ("numloom: compile", ...) on Nsight's timeline."""
    nvtx = _module()
    if nvtx is None:
        return _NULL
    return nvtx.annotate(name, domain="numloom")


_tracing = None  # the open "numloom: trace" range


def tracing(start: bool) -> None:
    """End the open tracing range (an evaluation begins), or start one (it ended): Python's
    tracing of operations shows between the evaluations."""
    global _tracing
    nvtx = _module()
    if nvtx is None:
        return
    if _tracing is not None:
        nvtx.end_range(_tracing)
        _tracing = None
    if start:
        _tracing = nvtx.start_range(message="numloom: trace", domain="numloom")

"""The compile-only CUDA tier: every kernel the test suite generated also compiles as CUDA C++
with NVRTC, for sm_80 and sm_90, on a machine without a GPU."""

from __future__ import annotations

import pytest

import numloom as nl
from numloom import lower
from numloom.compiler import compile_cuda, nvrtc_available
from numloom.render import CUDA, render

needs_nvrtc = pytest.mark.skipif(not nvrtc_available(), reason="NVRTC is not installed: "
                                 "pip install numloom[cuda12] (or [cuda13])")  # fmt: skip


@needs_nvrtc
@pytest.mark.last
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_generated_kernel_compiles_for_cuda(arch):
    x = nl.arange(1000.0).reshape(10, 100)
    nl.evaluate(nl.exp(x) / nl.exp(x).sum(axis=1, keepdims=True), x.argmax(), x.sum())
    kernels = list(lower.generated.values())
    assert kernels
    failures = []
    for k in kernels:
        try:
            compile_cuda(render(k, CUDA), arch, name_hint=k.name)
        except Exception as e:  # noqa: BLE001 (collected and reported together)
            failures.append(f"{k.name}: {str(e)[:2000]}")
    assert not failures, f"{len(failures)} of {len(kernels)} kernels failed:\n" + "\n".join(
        failures[:3]
    )

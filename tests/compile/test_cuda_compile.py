"""The compile-only CUDA tier: every kernel the test suite generated also compiles as CUDA C++
with NVRTC on a machine without a GPU: all of them to PTX for sm_90, a stride of them to a
cubin for sm_90 and to PTX for sm_80."""

from __future__ import annotations

from dataclasses import replace

import numpy
import pytest

import numloom as nl
from numloom.compile import lower
from numloom.compile.compiler import check_cuda_sources, nvrtc_available
from numloom.compile.render import CUDA, render

needs_nvrtc = pytest.mark.skipif(not nvrtc_available(), reason="NVRTC is not installed: "
                                 "pip install numloom[cuda12] (or [cuda13])")  # fmt: skip


@needs_nvrtc
@pytest.mark.last
@pytest.mark.parametrize("arch, ptx, every", [("sm_90", True, 1), ("sm_90", False, 7),
                                               ("sm_80", True, 5)])  # fmt: skip
def test_every_generated_kernel_compiles_for_cuda(arch, ptx, every):
    """Every kernel to PTX for sm_90 (NVRTC's whole front end and optimizer); a stride of them
    on to a cubin (the assembler too) and to PTX for sm_80, so the suite stays in CI's time."""
    x = nl.arange(1000.0).reshape(10, 100)
    nl.evaluate(nl.exp(x) / nl.exp(x).sum(axis=1, keepdims=True), x.argmax(), x.sum())
    kernels = list(lower.generated.values())[::every]
    assert kernels
    # Distinct names, so that many kernels compile as one NVRTC program.
    sources = [render(replace(k, name=f"c{i}_{k.name}"), CUDA) for i, k in enumerate(kernels)]
    logs = check_cuda_sources(sources, arch, ptx=ptx)
    failures = [f"{k.name}:\n{log[:2000]}\n{src}" for k, src, log in zip(kernels, sources, logs)
                if log is not None]  # fmt: skip
    assert not failures, f"{len(failures)} of {len(kernels)} kernels failed:\n" + "\n".join(
        failures[:3]
    )


@needs_nvrtc
def test_a_failing_kernel_is_found_in_its_batch():
    good = '#include "numloom.h"\nextern "C" __global__ void ok%d(float *x) { x[0] = 1.0f; }\n'
    bad = '#include "numloom.h"\nextern "C" __global__ void broken(float *x) { x[0] = y; }\n'
    sources = [good % i for i in range(5)] + [bad] + [good % i for i in range(5, 9)]
    logs = check_cuda_sources(sources, "sm_90", ptx=True, batch=4)
    assert [i for i, log in enumerate(logs) if log is not None] == [5]
    assert 'identifier "y" is undefined' in logs[5]


@needs_nvrtc
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
def test_row_kernels_of_every_element_type_compile_for_cuda(dtype):
    """Row kernels read their rows into shared memory in the loaded type (a float16 row is
    read as float16 and widened after)."""
    x = nl.asarray((numpy.arange(6 * 300) % 7).reshape(6, 300).astype(dtype))
    plans = [nl.explain(x.var(axis=-1), target="cuda"),
             nl.explain(x - x.max(axis=1, keepdims=True) * x.sum(axis=1, keepdims=True),
                        target="cuda")]  # fmt: skip
    sources = [k.source for plan in plans for k in plan.kernels if k.source]
    assert any("s_cache0" in s for s in sources)
    sources = list(dict.fromkeys(sources))  # (one symbol per source in a batch)
    logs = check_cuda_sources(sources, "sm_90")
    assert logs == [None] * len(sources), [log for log in logs if log][:1]


@needs_nvrtc
def test_floating_point_checks_compile_for_cuda():
    """Map kernels that check for floating-point errors (flat, vectorized, strided, 32-bit
    indices, float and integer checks) take the flag word after their buffers and compile."""
    x = nl.asarray(numpy.arange(1.0, 13.0).reshape(3, 4))
    f = nl.asarray(numpy.arange(1.0, 13.0, dtype=numpy.float32))
    i = nl.asarray(numpy.arange(1, 13))
    plans = [nl.explain(nl.log(x) / x, target="cuda"),
             nl.explain(nl.log(x.T) / x.T + 1, target="cuda"),
             nl.explain(nl.exp(f) * 2, target="cuda"),
             nl.explain(i // (i - 1), target="cuda")]  # fmt: skip
    sources = list(dict.fromkeys(k.source for p in plans for k in p.kernels if k.source))
    assert all("int64_t *__restrict__ fpw" in s and "*fpw = 1;" in s for s in sources)
    assert any("_vec(" in s for s in sources) and any("nl_fe_i" in s for s in sources)
    logs = check_cuda_sources(sources, "sm_90")
    assert logs == [None] * len(sources), [log for log in logs if log]


@needs_nvrtc
def test_reductions_of_raising_operations_check_their_results_in_cuda():
    """A reduction that folds operations that can raise flags a result that is not finite in
    the kernel (every variant: a block or a thread per output, split and merged, two passes)."""
    x = nl.asarray(numpy.arange(1.0, 13.0).reshape(3, 4))
    plans = [nl.explain(y, target="cuda") for y in ((1 / x).sum(), (1 / x).sum(axis=0),
                                                   nl.exp(x).max(axis=1))]  # fmt: skip
    sources = list(dict.fromkeys(k.source for p in plans for k in p.kernels if k.source))
    for source in sources:
        functions = source.count('extern "C" __global__')
        assert source.count("int64_t *__restrict__ fpw") == functions
        assert "*fpw = 1;" in source
    logs = check_cuda_sources(sources, "sm_90")
    assert logs == [None] * len(sources), [log for log in logs if log]


@needs_nvrtc
@pytest.mark.parametrize("arch, ptx", [("sm_90", False), ("sm_80", True)])
def test_the_device_compaction_kernels_compile_for_cuda(arch, ptx):
    """``a[mask]`` and ``nonzero`` on a GPU find the true elements with these three kernels;
    ``unique``'s values are the first elements of the runs of a sorted array, for each
    element type the run kernels compare (float16 and complex take the mask)."""
    from numloom.backends.cuda_nonzero import SOURCE, runs_source

    types = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float32", "float64"]  # fmt: skip
    runs = [runs_source(numpy.dtype(t)) for t in types]
    assert None not in runs and runs_source(numpy.float16) is None
    assert check_cuda_sources([SOURCE, *runs], arch, ptx=ptx, batch=1) == [None] * (
        len(runs) + 1)  # (one program each, as each dtype's compiles on a GPU)


@needs_nvrtc
@pytest.mark.parametrize("arch, ptx", [("sm_90", False), ("sm_80", True)])
def test_the_device_random_kernels_compile_for_cuda(arch, ptx):
    """NumPy's PCG64 samplers on a GPU: fills, the ziggurat's tile passes and their scan."""
    from numloom.api.random_streams import LOG1M, SAMPLERS
    from numloom.backends.cuda_random import _NAMES, KERNELS

    source = LOG1M + SAMPLERS + KERNELS
    assert all(f"{name}(" in source or name[:-2] in source for name in _NAMES)
    assert check_cuda_sources([source], arch, ptx=ptx) == [None]


@needs_nvrtc
@pytest.mark.parametrize("dtype, merged", [("float32", False), ("float64", True), ("int64", False),
                                           ("uint8", False), ("bool", False)])  # fmt: skip
def test_the_device_sorting_kernels_compile_for_cuda(dtype, merged):
    """Sort, search, histogram and bincount kernels on a GPU, for each key width."""
    from numloom.backends.cuda_sort import KERNELS, source

    text = source(numpy.dtype(dtype), merged)
    assert all(name in text for name in KERNELS)
    assert check_cuda_sources([text], "sm_90") == [None]


@needs_nvrtc
def test_writes_at_repeated_positions_compile_for_cuda():
    """``a[idx] = values`` on a GPU: the copy, claim and write kernels (the last value of a
    repeated position stays), and the two-kernel write of one value everywhere."""
    a = nl.arange(50.0) * 0  # (pending: the writes join its plan)
    idx = nl.asarray(numpy.array([3, 7, 7, 40]))
    a[idx] = nl.asarray(numpy.arange(4.0))
    a[idx + 1] = 2.5
    sources = [k.source for k in nl.explain(a, target="cuda").kernels if k.source]
    claims = [s for s in sources if "atomicMax(claim" in s]
    assert len(claims) == 1 and "_write" in claims[0]
    assert any("_write" in s and "claim" not in s for s in sources)
    assert check_cuda_sources(list(dict.fromkeys(sources)), "sm_90") == [None] * len(
        set(sources))


@needs_nvrtc
@pytest.mark.last
def test_each_function_of_a_generated_kernel_compiles_as_its_own_program():
    """A GPU compiles each ``__global__`` function of a kernel (its variants: 16-byte loads,
    32-bit indices, a thread or a block per row) as its own NVRTC program, those its launches
    need (``cuda_programs.Functions``): every function of a stride of the generated kernels
    compiles alone, with only the header and shared device functions before it."""
    from numloom.backends.cuda_programs import Functions, split_functions

    x = nl.arange(1000.0).reshape(10, 100)
    nl.evaluate(nl.exp(x) / nl.exp(x).sum(axis=1, keepdims=True), x.argmax(), x.sum())
    kernels = list(lower.generated.values())[::13]
    sources = [render(replace(k, name=f"s{i}_{k.name}"), CUDA) for i, k in enumerate(kernels)]
    # (the plan's kernels; a kernel written in Python compiles as one program, cuda_kernels)
    sources = [s for s in sources if "__launch_bounds__(" in s]
    parts = []
    for source in sources:
        split = split_functions(source)
        assert len(split) == source.count("__global__") >= 1
        for name, part in split:
            assert part.count("__global__") == 1 and f" {name}(" in part
        parts += [part for _, part in split]
    logs = check_cuda_sources(parts, "sm_90", ptx=True)
    failures = [f"{log[:2000]}\n{src}" for src, log in zip(parts, logs) if log is not None]
    assert not failures, f"{len(failures)} of {len(parts)} failed:\n" + "\n".join(failures[:2])
    # (by role, as the launcher names them; nothing compiles until one is taken)
    planned = next(k for k in kernels if k.kind != "kernel")  # (not one written in Python)
    source = render(replace(planned, name="KERNEL"), CUDA).replace("KERNEL", "nl_f00d")
    functions = Functions(source, "nl_f00d", "sm_90")
    roles = list(functions)
    assert roles and all(r.startswith("KERNEL") and r in functions for r in roles)
    assert functions.missing(roles + ["KERNEL_none"]) == [functions.sources[r] for r in roles]


def test_a_map_of_many_operations_per_element_has_no_16_byte_variant():
    """A memory-bound flat map gets a 16-byte-load twin (``_vec``); a map whose time is its
    arithmetic (an escape loop of many steps) does not: four lanes of its body would quadruple
    what NVRTC compiles for no faster kernel."""
    x = nl.asarray(numpy.linspace(-2.0, 1.0, 64, dtype=numpy.float32))
    z = x * 1
    for _ in range(100):
        z = z * z + x
    small = nl.explain(x * 2.0 + 1.0, target="cuda").kernels[0].source
    large = nl.explain(z, target="cuda").kernels[0].source
    assert "_vec(" in small and "__global__" in large and "_vec(" not in large


@needs_nvrtc
def test_the_gpus_multiply_add_rounds_twice_as_numpys():
    """NVRTC contracts ``a * b + c`` into one FMA (rounded once) unless told not to; NumPy, and
    the C kernels (-ffp-contract=off), round the product and the sum each: a steepest-descent
    step's ``p + alpha * r`` was an ulp off NumPy's in 46% of its elements on an H200. The
    generated PTX multiplies and then adds (its one ``fma`` is the NaN check's explicit
    ``fma(v, 0.0, s)``, whose product is exact)."""
    from numloom.compile.compiler import _nvrtc_bindings, cuda_options

    x, y, z = (nl.asarray(numpy.arange(1.0, 9.0) * k) for k in (1, 2, 3))
    source = nl.explain(x * y + z, target="cuda").kernels[0].source
    ptx, log = _nvrtc_bindings(source, "ptx", cuda_options("compute_90"), "muladd")
    assert log is None, log
    ptx = ptx.decode()
    assert "mul.rn.f64" in ptx and "add.rn.f64" in ptx

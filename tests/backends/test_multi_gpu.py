"""Two GPUs in one process: ``set_device("cuda:1")``, arrays and CUDA graphs on each device,
and arrays moved between them GPU to GPU. Skipped where fewer than two GPUs are visible."""

from __future__ import annotations

import numpy
import pytest

import numloom


def _gpus() -> int:
    if numloom.device_module.cuda_problem():
        return 0
    from cuda.bindings import driver

    driver.cuInit(0)
    return driver.cuDeviceGetCount()[1]


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_gpus() < 2, reason="needs two CUDA GPUs")]  # fmt: skip

HOST = numpy.random.default_rng(11).random((512, 300))


def test_each_device_keeps_its_arrays_kernels_and_memory():
    with numloom.device("cuda:0"):
        a = numloom.asarray(HOST)
        on_0 = (numloom.exp(-a) * 2 + a).sum(axis=0)
    with numloom.device("cuda:1"):
        b = numloom.asarray(HOST)
        on_1 = (numloom.exp(-b) * 2 + b).sum(axis=0)
    assert (a.device, on_0.device, b.device, on_1.device) == ("cuda:0", "cuda:0", "cuda:1", "cuda:1")
    before = numloom.stats()
    numloom.evaluate(on_0, on_1)  # (a plan, and its CUDA graph, on each device)
    assert numloom.stats()["graphs_launched"] - before["graphs_launched"] >= 2
    want = (numpy.exp(-HOST) * 2 + HOST).sum(axis=0)
    numpy.testing.assert_allclose(on_0.get(), want, rtol=1e-12)
    numpy.testing.assert_allclose(on_1.get(), want, rtol=1e-12)


def _free_bytes(index: int) -> int:
    from cuda.bindings import driver
    from cuda.core import Device


    Device(index).set_current()  # (as another library does: numloom notices, see below)
    return driver.cuMemGetInfo()[1]


def test_memory_is_taken_on_the_arrays_own_gpu():
    """An array made on cuda:1 takes cuda:1's memory, not cuda:0's. (Pool memory's pointer
    attributes name device 0 on every device, so the memory is counted instead.)"""
    size = 1 << 30
    before = _free_bytes(0), _free_bytes(1)
    with numloom.device("cuda:1"):
        x = numloom.zeros(size // 8)
        numloom.evaluate(x)
    after = _free_bytes(0), _free_bytes(1)
    assert before[1] - after[1] >= size * 0.9
    assert abs(before[0] - after[0]) < size * 0.1


def test_another_library_making_its_gpu_current_leaves_numloom_on_its_own():
    """JAX or CuPy working on GPU 1 leave GPU 1's context current in the thread; numloom's next
    launch on cuda:0 still runs on cuda:0 (it ran on GPU 1 with GPU 0's pointers: an illegal
    address, and every later CUDA call in the process failed)."""
    from cuda.core import Device

    with numloom.device("cuda:0"):
        a = numloom.arange(64, dtype=numpy.float32) + 1
        numloom.evaluate(a)
        Device(1).set_current()
        b = a * 2 + 1
        numloom.evaluate(b)
        numpy.testing.assert_array_equal(b.get(), (numpy.arange(64) + 1) * 2 + 1)


@pytest.mark.parametrize("view", [lambda x: x, lambda x: x[::3, 10:200], lambda x: x.T])
def test_an_array_moves_between_gpus_without_the_host(view):
    with numloom.device("cuda:0"):
        a = view(numloom.asarray(HOST) * 3)
    before = numloom.stats()
    moved = numloom.asarray(a, device="cuda:1")
    after = numloom.stats()
    assert moved.device == "cuda:1"
    assert after["device_to_host_bytes"] == before["device_to_host_bytes"]
    assert after["device_to_device_bytes"] - before["device_to_device_bytes"] == a.nbytes
    with numloom.device("cuda:1"):
        result = moved + 1  # (traced and run on cuda:1)
    numpy.testing.assert_array_equal(result.get(), view(HOST * 3) + 1)
    back = result.to_device("cuda:0")
    assert back.device == "cuda:0"
    numpy.testing.assert_array_equal(back.get(), view(HOST * 3) + 1)

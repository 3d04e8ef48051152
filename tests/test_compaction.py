"""Loops whose arrays shrink with a boolean mask each step (data-dependent shapes): NumPy's
results, and sizes that change every step compile nothing new."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy
import pytest

import numloom as nl

_spec = importlib.util.spec_from_file_location(
    "compaction", pathlib.Path(__file__).parent.parent / "benchmarks" / "compaction.py"
)
compaction = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compaction)


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple)
                    else (want,)):  # fmt: skip
        g = numpy.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        numpy.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n, itermax", [(30, 20), (64, 40)])
def test_the_rougier_mandelbrot_gives_numpys_result(n, itermax):
    args = (-2.25, 0.75, -1.25, 1.25, n, n, itermax)
    _same(compaction.mandelbrot_rougier(nl, *args), compaction.mandelbrot_rougier(numpy, *args))


@pytest.mark.parametrize("n", [1, 17, 80])
def test_escape_counts_give_numpys_result(n):
    _same(compaction.escape_counts(nl, n, 30), compaction.escape_counts(numpy, n, 30))


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
@pytest.mark.parametrize("mask", ["some", "none", "all", "2-d"])
def test_compaction_steps_of_every_dtype(dtype, mask):
    def run(xp):
        x = xp.asarray((numpy.arange(48) % 7).astype(dtype).reshape(6, 8))
        out = []
        for step in range(4):
            if mask == "2-d":
                keep = (x != 0) if step % 2 else xp.ones(x.shape, bool)
                flat = x[keep]
                out.append(flat)
                x = xp.concatenate([flat, flat])[: x.size].reshape(x.shape)
            else:
                v = x.ravel()
                keep = {"some": v != 1, "none": v != v, "all": v == v}[mask]
                x = v[keep].reshape(-1, 1) if v[keep].size else v[:0].reshape(0, 1)
                out.append(x)
        return out

    for g, w in zip(run(nl), run(numpy)):
        _same(g, w)


def test_new_sizes_of_a_compaction_loop_compile_nothing():
    compaction.escape_counts(nl, 40, 20)  # every kernel the loop needs, compiled once
    before = nl.stats()["kernels_compiled"]
    compaction.escape_counts(nl, 57, 20)  # other sizes at every step
    assert nl.stats()["kernels_compiled"] == before

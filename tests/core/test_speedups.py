"""The compiled array handle (numloom/core/_speedups.c: element access, rows, ``shape``/``dtype``/
``ndim`` in C) and the pure-Python one (``NUMLOOM_PURE_PYTHON=1``) give NumPy's results; the
compiled one is what ``pip install`` builds and what numloom uses."""

from __future__ import annotations

import os
import subprocess
import sys
import weakref

import numpy
import pytest

import numloom as nl
from numloom.core import array, config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_compiled_handle_is_built_and_used():
    """``pip install -e .`` builds numloom.core._speedups with the system C compiler; numloom's
    arrays are its handles unless NUMLOOM_PURE_PYTHON=1."""
    if config.PURE_PYTHON:
        assert array._speedups is None
        pytest.skip("NUMLOOM_PURE_PYTHON=1: the Python handle is in use")
    assert array._speedups is not None, "numloom.core._speedups was not built: pip install -e ."
    assert isinstance(nl.zeros(3), array._speedups.Handle)


def test_deleting_elements_or_the_shape_raises_numpys_errors():
    for xp in (numpy, nl):
        a = xp.zeros((2, 3))
        with pytest.raises(ValueError, match="cannot delete array elements"):
            del a[0, 1]
        with pytest.raises(AttributeError, match="Cannot delete array shape"):
            del a.shape


def test_shape_dtype_and_ndim_follow_the_view():
    a = nl.arange(12.0)
    b = a.reshape(3, 4)
    assert (b.shape, b.ndim, b.dtype) == ((3, 4), 2, numpy.dtype(float))
    b.shape = (4, 3)
    assert b.shape == (4, 3) and b[3, 2] == 11.0
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape"):
        b.shape = (5, 5)
    assert b.shape == (4, 3)


def test_an_element_write_does_not_reach_a_version_someone_holds():
    """A pending result that reads the array, a view and a row keep NumPy's values through
    writes that would otherwise go in place."""
    x = nl.arange(6.0)
    x[0] = 1.0  # (a first write: the next ones go in place)
    held = x * 1
    view = x[2:]
    row = x.reshape(2, 3)[1]
    x[0] = 7.0
    x[3] = 9.0
    assert held.tolist() == [1.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert view.tolist() == [2.0, 9.0, 4.0, 5.0]
    assert row.tolist() == [9.0, 4.0, 5.0]
    assert x.tolist() == [7.0, 1.0, 2.0, 9.0, 4.0, 5.0]


def test_rows_are_handles_on_the_storage():
    g = nl.asarray(numpy.arange(12.0).reshape(3, 4))
    rows = list(g)
    assert [type(r) for r in rows] == [nl.ndarray] * 3
    assert rows[2]._view.offset == 8 and hash(rows[2]._view) == hash(tuple(rows[2]._view))
    rows[1][0] = -1.0
    assert g[1, 0] == -1.0
    dead = weakref.ref(rows.pop())
    assert dead() is None  # (a row is collected like any handle)


def test_the_pure_python_handle_passes_the_element_tests():
    """The pure-Python path, run as NUMLOOM_PURE_PYTHON=1 selects it (in a new process)."""
    env = {**os.environ, "NUMLOOM_PURE_PYTHON": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
         "tests/api/test_elements.py", "tests/core/test_speedups.py::"
         "test_an_element_write_does_not_reach_a_version_someone_holds",
         "tests/core/test_speedups.py::test_the_compiled_handle_is_built_and_used",
         "tests/core/test_speedups.py::test_deleting_elements_or_the_shape_raises_numpys_errors"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout

"""What importing and running numloom leaves in the process: the recursion limit as it was,
no heavy modules loaded at import, a compile cache within its size."""

from __future__ import annotations

import subprocess
import sys

import numpy

import numloom as nl


def test_import_and_a_deep_graph_leave_the_recursion_limit_alone():
    code = (
        "import sys; before = sys.getrecursionlimit(); import numloom as np\n"
        "after_import = sys.getrecursionlimit()\n"
        "x = np.arange(10.0)\n"
        "for _ in range(2000): x = x * 1.0001 + 1\n"
        "print(before, after_import, sys.getrecursionlimit(), float(x.sum()) > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after_import, after_run, ok = out.stdout.split()
    assert before == after_import == after_run and ok == "True"


def test_a_deep_graph_evaluates_in_this_process_and_restores_the_limit():
    limit = sys.getrecursionlimit()
    x = nl.arange(10.0)
    for _ in range(1500):
        x = x * 1.0 + 1
    numpy.testing.assert_array_equal(x.get(), numpy.arange(10.0) + 1500)
    assert sys.getrecursionlimit() == limit

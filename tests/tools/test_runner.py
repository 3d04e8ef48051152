"""``python -m numloom script.py`` runs a NumPy script as ``python script.py`` does, on numloom.

Each test writes a small script, runs it with plain Python and through numloom in subprocesses,
and compares exit status and output. Scripts print plain Python values (``tolist()``,
``float``), so the comparison is about the runner, not about array printing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from numloom.tools.runner import NumpyRedirect

REPO = Path(__file__).resolve().parents[2]


def python(*args: str, cwd: Path, pythonpath: tuple = (), warnings: str = "ignore"):
    # the repo goes on PYTHONPATH so the tests also run from a checkout that is not installed
    path = os.pathsep.join([*map(str, pythonpath), str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "PYTHONWARNINGS": warnings}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def plain_and_numloom(tmp_path: Path, source: str, *args: str, **kw):
    write(tmp_path / "script.py", source)
    plain = python("script.py", *args, cwd=tmp_path, **kw)
    loom = python("-m", "numloom", "script.py", *args, cwd=tmp_path, **kw)
    return plain, loom


def assert_same(plain, loom) -> None:
    assert (loom.returncode, loom.stdout) == (plain.returncode, plain.stdout), loom.stderr


def test_argv_and_main_guard(tmp_path):
    plain, loom = plain_and_numloom(
        tmp_path,
        """
        import sys
        import numpy as np
        print(sys.argv, __name__, __file__ == __import__("os").path.abspath(__file__))
        if __name__ == "__main__":
            print("main", np.arange(int(sys.argv[1])).tolist())
        """,
        "4",
        "--flag",
    )
    assert plain.returncode == 0, plain.stderr
    assert_same(plain, loom)
    assert "['script.py', '4', '--flag']" in loom.stdout


def test_every_import_form(tmp_path):
    plain, loom = plain_and_numloom(
        tmp_path,
        """
        import numpy
        import numpy as np
        import numpy.linalg
        import numpy.linalg as la
        from numpy import arange, float32, linalg
        from numpy.random import default_rng

        a = arange(12, dtype=float32).reshape(3, 4)
        print(a.sum(axis=0).tolist(), str(a.dtype))
        print(round(float(numpy.linalg.norm(np.ones(4))), 6), round(float(la.norm(a)), 4))
        print(round(float(linalg.norm(np.ones(9))), 6))
        print(default_rng(0).random(3).shape)
        """,
    )
    assert plain.returncode == 0, plain.stderr
    assert_same(plain, loom)


def test_script_really_gets_numloom(tmp_path):
    source = """
        import numpy as np
        import numpy.linalg
        from numpy import zeros
        print(np.__name__, type(zeros(3)).__module__.split(".")[0], numpy.linalg.__name__)
        """
    plain, loom = plain_and_numloom(tmp_path, source)
    assert plain.stdout.split() == ["numpy", "numpy", "numpy.linalg"]
    assert loom.stdout.split() == ["numloom", "numloom", "numloom.linalg"], loom.stderr


def test_the_script_sees_numpys_version(tmp_path):
    """Programs compare ``np.__version__`` (PDSH's first cell prints it; NumPy's docstring:
    ``if NumpyVersion(np.__version__) < '1.7.0'``): the NumPy version whose semantics numloom
    gives, under ``python -m numloom`` and under ``import numloom as np`` alike. numloom's own
    is ``show_config()``'s and ``python -m numloom --version``'s."""
    plain, loom = plain_and_numloom(tmp_path, "import numpy as np\nprint(np.__version__)\n")
    assert loom.stdout == plain.stdout, loom.stderr
    import numloom
    from numloom.core import config

    assert numloom.__version__ == __import__("numpy").__version__
    with NumpyRedirect(str(tmp_path)):
        assert numloom.__version__ == __import__("numpy").__version__
    version = subprocess.run([sys.executable, "-m", "numloom", "--version"], capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
    assert version.strip() == f"numloom {config.VERSION}"


def test_a_missing_name_is_reported_as_numpys(tmp_path):
    """``np.asscalar`` and ``np.str`` (NumPy exercise collections): NumPy's messages, naming
    numpy, with the explanation of where a removed alias went."""
    source = """
        import numpy as np
        for name in ("asscalar", "str", "no_such_name"):
            try:
                getattr(np, name)
            except AttributeError as e:
                print(e)
        """
    plain, loom = plain_and_numloom(tmp_path, source)
    assert "module 'numpy' has no attribute 'asscalar'" in plain.stdout
    assert loom.stdout == plain.stdout, loom.stderr


def test_libraries_keep_real_numpy(tmp_path):
    """Only the script's own tree gets numloom; a library, or a venv inside the tree, does not."""
    project = tmp_path / "project"
    write(tmp_path / "libs" / "thirdparty.py", "import numpy\nNAME = numpy.__name__\n")
    venv = project / ".venv" / "lib" / "python3" / "site-packages"
    write(venv / "vendored.py", "import numpy\nNAME = numpy.__name__\n")
    write(project / "helper.py", "import numpy as np\nNAME = np.__name__\n")
    write(
        project / "script.py",
        """
        import thirdparty, vendored, helper
        import numpy as np
        print(thirdparty.NAME, vendored.NAME, helper.NAME, np.__name__)
        """,
    )
    loom = python("-m", "numloom", "script.py", cwd=project, pythonpath=(tmp_path / "libs", venv))
    assert loom.stdout.split() == ["numpy", "numpy", "numloom", "numloom"], loom.stderr


def test_exit_status(tmp_path):
    plain, loom = plain_and_numloom(
        tmp_path, "import sys\nimport numpy as np\nprint('before')\nsys.exit(3)\n"
    )
    assert plain.returncode == 3
    assert_same(plain, loom)
    plain, loom = plain_and_numloom(tmp_path, "import sys\nsys.exit('bye')\n")
    assert (loom.returncode, loom.stderr.strip()) == (1, "bye")


def test_uncaught_exception_prints_python_traceback(tmp_path):
    plain, loom = plain_and_numloom(
        tmp_path,
        """
        import numpy as np
        def fail():
            raise ValueError("boom")
        print("before")
        fail()
        """,
    )
    assert plain.returncode == 1
    assert_same(plain, loom)
    # the same traceback: the user's frames only, no runner frames
    assert loom.stderr.endswith(plain.stderr), loom.stderr
    assert "runner.py" not in loom.stderr


def test_an_error_numloom_raises_ends_at_the_users_line(tmp_path):
    # numpy-100's exercise 43: NumPy's C code adds no frames, so neither may numloom's Python
    plain, loom = plain_and_numloom(
        tmp_path,
        """
        import numpy as np
        Z = np.zeros(10)
        Z.flags.writeable = False
        try:
            Z[0] = 1
        except ValueError as e:
            raise RuntimeError("again") from e
        """,
    )
    assert plain.returncode == 1 and "read-only" in plain.stderr
    assert (loom.returncode, loom.stderr) == (plain.returncode, plain.stderr)


def test_numpy_core_is_numpys_deprecated_alias(tmp_path):
    # numpy-100's exercise 91 (np.core.records), and the module forms, warning as NumPy warns
    plain, loom = plain_and_numloom(
        tmp_path,
        """
        import numpy as np
        from numpy.core import records
        import numpy.core.numeric as numeric
        R = np.core.records.fromarrays(np.array([[1.5, 2.5], [3, 4]]).T, names="a, b")
        print(R, records.fromarrays([np.arange(2)]), numeric.zeros(2).tolist())
        """,
        warnings="default",
    )
    assert "numpy._core.records" in plain.stderr
    assert (loom.returncode, loom.stdout, loom.stderr) == (
        plain.returncode, plain.stdout, plain.stderr)  # fmt: skip


def test_syntax_error_and_missing_file(tmp_path):
    plain, loom = plain_and_numloom(tmp_path, "x = (\n")
    assert (loom.returncode, loom.stderr) == (plain.returncode, plain.stderr)
    loom = python("-m", "numloom", "missing.py", cwd=tmp_path)
    assert loom.returncode == 2 and "can't open file" in loom.stderr


def test_dash_c_and_help(tmp_path):
    code = "import sys, numpy as np; print(np.__name__, sys.argv)"
    loom = python("-m", "numloom", "-c", code, "x", cwd=tmp_path)
    assert loom.stdout.strip() == "numloom ['-c', 'x']", loom.stderr
    helped = python("-m", "numloom", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "python -m numloom script.py" in helped.stdout


@pytest.mark.parametrize(
    "path, expected",
    [
        ("project/script.py", True),
        ("project/sub/helper.py", True),
        ("project/.venv/lib/python3.11/site-packages/lib.py", False),
        ("elsewhere/lib.py", False),
    ],
)
def test_redirect_decides_by_file(tmp_path, path, expected):
    redirect = NumpyRedirect(str(tmp_path / "project"))
    assert redirect.is_user_code({"__file__": str(tmp_path / path)}) is expected


def test_redirect_leaves_libraries_and_numloom_alone(tmp_path):
    import numloom

    redirect = NumpyRedirect("/")  # even when the script's tree holds everything
    assert not redirect.is_user_code({"__file__": os.__file__})
    assert not redirect.is_user_code({"__file__": numloom.__file__})
    assert not redirect.is_user_code(None)
    assert redirect.is_user_code({"__name__": "__main__"})  # code given with -c


def test_bench_runs_and_checks(tmp_path):
    # --device cpu: on a GPU machine the peers' compiles (torch.compile) would take long
    args = ["bench", "--only", "saxpy", "--repeat", "2", "--sizes", "small", "--device", "cpu"]
    bench = python("-m", "numloom", *args, cwd=REPO)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    rows = [line.split() for line in bench.stdout.splitlines() if line.startswith("saxpy")]
    assert len(rows) == 1 and "OK" in rows[0], bench.stdout
    assert "numpy/numloom" in bench.stdout


def test_a_warning_a_library_gives_as_it_is_imported_names_the_users_line(tmp_path):
    """A library that warns as it is imported (``from scipy import misc``: a DeprecationWarning
    with ``stacklevel=2``) names the importing line: under the default filters Python shows it
    for code in ``__main__``. The runner's ``__import__`` adds no frame of its own."""
    lib = tmp_path / "lib"
    write(lib / "oldlib.py", """
        import warnings
        warnings.warn("oldlib is deprecated", DeprecationWarning, stacklevel=2)
        """)
    plain, loom = plain_and_numloom(
        tmp_path / "prog",
        """
        import numpy as np
        import oldlib
        print(np.ones(2).sum())
        """,
        pythonpath=(lib,),
        warnings="",
    )
    assert "script.py:3: DeprecationWarning: oldlib is deprecated" in plain.stderr, plain.stderr
    assert_same(plain, loom)
    assert plain.stderr == loom.stderr


def test_a_scripts_annotations_are_evaluated_as_python_evaluates_them(tmp_path):
    """A module-level annotation is evaluated when its line runs (QuantEcon's lectures, as
    scripts, keep a cell's ``tags: [hide-input]``: NameError), not deferred by the runner's
    own ``from __future__ import annotations``."""
    plain, loom = plain_and_numloom(tmp_path, (
        "import numpy as np\n"
        "try:\n"
        "    tags: [hide_input]\n"
        "except NameError as e:\n"
        "    print('NameError', e)\n"
        "x: np.ndarray = np.zeros(2)\n"
        "print(__annotations__['x'] is np.ndarray)\n"
    ))  # fmt: skip
    assert plain.stdout == "NameError name 'hide_input' is not defined\nTrue\n"
    assert_same(plain, loom)

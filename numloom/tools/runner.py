"""Run an unmodified NumPy program on numloom: ``python -m numloom script.py [args]``.

The script's own ``import numpy`` statements get numloom; every other module (matplotlib, scipy,
the standard library, numloom itself) keeps the real NumPy. Replacing ``sys.modules["numpy"]``
would be simpler, but it would hand numloom arrays to libraries whose C code needs real ones.
So the redirect wraps ``builtins.__import__`` and looks at who is importing: a module whose file
lies in the script's directory tree, outside site-packages, the standard library and numloom.

Everything else behaves as ``python script.py`` does: ``sys.argv``, ``__name__ == "__main__"``,
``sys.path[0]``, exit codes and tracebacks of uncaught exceptions.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import os
import site
import sys
import sysconfig
import types

USAGE = """\
usage: python -m numloom script.py [args ...]   run a NumPy script on numloom
       python -m numloom -c CODE [args ...]      run NumPy code given as a string
       python -m numloom bench [options]         the workload benchmark (see: bench --help)
       python -m numloom coverage [--markdown]   which NumPy functions run natively where
       python -m numloom --version | --help

The script's `import numpy`, `from numpy import ...`, `numpy.linalg`, `numpy.random` and
`numpy.fft` get numloom; the libraries it imports (matplotlib, scipy, ...) keep the real NumPy.
Pending work is evaluated before the program exits."""


def _inside(path: str, directory: str) -> bool:
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:  # different drives, or one relative path
        return False


def _library_dirs() -> list[str]:
    """Directories whose modules must keep the real NumPy: numloom, the stdlib, site-packages."""
    dirs = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}  # (numloom/)
    paths = sysconfig.get_paths()
    dirs.update(
        paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths
    )
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except AttributeError:  # site is minimal in some embedded or virtualenv setups
        pass
    return sorted({os.path.realpath(d) for d in dirs if d})


class NumpyRedirect:
    """While active, ``import numpy...`` made by the user's own code returns numloom.

    ``root`` is the script's directory: modules whose file lies under it are the user's, unless
    they also lie in a library directory (a ``.venv`` inside the project, for instance).
    Code without a file (``-c``, ``exec`` in the main namespace) counts as the user's.
    """

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        self.library_dirs = _library_dirs()
        self._is_user = {}  # __file__ -> bool; the wrapper runs on every import statement
        self._original = None

    def __enter__(self) -> NumpyRedirect:
        from numloom.api import fallback

        self._original = builtins.__import__
        builtins.__import__ = self._import
        from numloom.core import array

        if array._speedups is not None and hasattr(array._speedups, "redirect_import"):
            # (the same in C: other imports then pass through no frame of numloom's, so a
            # warning a module gives as it is imported names the user's line)
            array._speedups.install_import(self._original, self._import)
            builtins.__import__ = array._speedups.redirect_import
        fallback.AS_NUMPY[0] = True  # (errors for a missing name say numpy, as NumPy's do)
        return self

    def __exit__(self, *exc_info) -> None:
        from numloom.api import fallback

        builtins.__import__ = self._original
        fallback.AS_NUMPY[0] = False

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "numpy" or name.startswith("numpy.")):
            if self.is_user_code(globals):
                return _numloom_import(name, fromlist)
        return self._original(name, globals, locals, fromlist, level)

    def is_user_code(self, module_globals) -> bool:
        if not isinstance(module_globals, dict):
            return False
        path = module_globals.get("__file__")
        if path is None:
            return module_globals.get("__name__") == "__main__"
        decision = self._is_user.get(path)
        if decision is None:
            decision = self._is_user[path] = self._is_user_file(path)
        return decision

    def _is_user_file(self, path: str) -> bool:
        real = os.path.realpath(path)
        if not _inside(real, self.root):
            return False
        if any(_inside(real, d) for d in self.library_dirs):
            return False
        parts = real.split(os.sep)
        return "site-packages" not in parts and "dist-packages" not in parts


def _numloom_import(name: str, fromlist):
    """What ``__import__(name, fromlist=...)`` returns when ``numpy`` means numloom.

    ``import numpy.linalg`` binds the top-level name, so it returns numloom itself (and makes
    sure numloom.linalg is loaded); ``from numpy.random import default_rng`` needs the
    submodule. A submodule numloom lacks (``numpy.typing``) comes from the real NumPy.
    """
    import numloom

    module = _numloom_submodule(name)
    return module if fromlist else numloom


def _numloom_submodule(name: str):
    import numloom

    if name.startswith("numpy.core."):  # NumPy's deprecated modules, which warn as they are used
        return importlib.import_module(name)
    obj = numloom
    for part in name.split(".")[1:]:
        sub = getattr(obj, part, None)
        if sub is None:
            try:
                sub = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                # importlib bypasses builtins.__import__, so this is the real NumPy module
                return importlib.import_module(name)
        obj = sub
    return obj


def _first_frame_in(tb, filename: str):
    """The traceback from the user's first frame on: Python shows no runner frames either."""
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return tb


def _without_numloom_frames(tb):
    """The traceback without numloom's own frames, as NumPy's C code shows none: an error
    raised inside ``x[0] = 1`` ends at the user's line. ``NUMLOOM_DEBUG=1`` keeps them."""
    from numloom.core import config

    if config.DEBUG:
        return tb
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kept = []
    while tb is not None:
        if not _inside(os.path.abspath(tb.tb_frame.f_code.co_filename), package):
            kept.append(tb)
        tb = tb.tb_next
    for first, second in zip(kept, kept[1:]):
        first.tb_next = second
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def _user_traceback(error: BaseException, filename: str) -> None:
    """Give ``error`` and the errors chained to it the traceback Python would print."""
    # (the uncaught one starts at the user's first frame; those it chains were caught there)
    error.__traceback__ = _first_frame_in(error.__traceback__, filename)
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        error.__traceback__ = _without_numloom_frames(error.__traceback__)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)


def _run_main(run, filename: str) -> int:
    """Run the user's code, then evaluate what is pending; return the exit status.

    SystemExit and KeyboardInterrupt pass through unchanged, so ``sys.exit(3)`` exits 3.
    Any other uncaught exception is printed through ``sys.excepthook`` as Python prints it
    (a SyntaxError without a traceback header) and gives status 1. An error that evaluation
    raises at the final sync is reported the same way: NumPy would have raised it earlier.
    """
    import numloom

    try:
        try:
            run()
        except SystemExit:
            numloom.sync()
            raise
        numloom.sync()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:
        # the default hook prints error.__traceback__, whatever tb it is given
        _user_traceback(error, filename)
        sys.excepthook(type(error), error, error.__traceback__)
        return 1
    return 0


def _exec_as_main(code_text: str | bytes, filename: str) -> None:
    """Run code as the ``__main__`` module, as ``python script.py`` and ``python -c`` do.

    Not ``runpy.run_path``: it sets ``sys.argv[0]`` to the path it is given, where Python
    keeps the path as typed and makes ``__file__`` absolute.
    """
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    if filename != "<string>":
        main.__file__ = filename
        main.__cached__ = None
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    sys.modules["__main__"] = main  # classes defined by the script pickle as __main__.X
    exec(compile(code_text, filename, "exec", dont_inherit=True), vars(main))  # (not this module's futures)


def run_script(path: str, args: list[str]) -> int:
    """``python script.py args`` with the script's NumPy imports served by numloom."""
    script = os.path.abspath(path)
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as error:
        reason = f"[Errno {error.errno}] {error.strerror}"
        print(f"python -m numloom: can't open file {script!r}: {reason}", file=sys.stderr)
        return 2
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(script)  # as `python script.py` sets it (not the cwd)
    with NumpyRedirect(os.path.dirname(script)):
        return _run_main(lambda: _exec_as_main(source, script), script)


def run_code(code: str, args: list[str]) -> int:
    """``python -c code args`` with the code's NumPy imports served by numloom."""
    sys.argv = ["-c", *args]
    sys.path[0] = ""
    with NumpyRedirect(os.getcwd()):
        return _run_main(lambda: _exec_as_main(code, "<string>"), "<string>")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m numloom`` and of the ``numloom`` command."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    first, rest = argv[0], argv[1:]
    if first in ("-h", "--help"):
        print(USAGE)
        return 0
    if first in ("-V", "--version"):
        from numloom.core import config

        print(f"numloom {config.VERSION}")
        return 0
    if first == "bench":
        from numloom.tools import bench

        return bench.main(rest)
    if first == "coverage":
        from numloom.tools import coverage

        return coverage.main(rest)
    if first == "-c":
        if not rest:
            print("Argument expected for the -c option\n" + USAGE, file=sys.stderr)
            return 2
        return run_code(rest[0], rest[1:])
    if first.startswith("-"):
        print(f"unknown option: {first}\n{USAGE}", file=sys.stderr)
        return 2
    return run_script(first, rest)

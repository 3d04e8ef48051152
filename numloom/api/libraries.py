"""Other libraries handed numloom arrays where they take NumPy's only.

Most libraries take any array through ``numpy.asarray``, which gives them numloom's memory
(``core/host.py``). A few ask ``isinstance(x, numpy.ndarray)`` and read anything else as
something else, or take nothing but NumPy's own type in compiled code:

- pandas reads a numloom boolean mask in ``df[mask]``, ``.loc`` and ``.iloc`` as labels (or as
  positions 0 and 1), and a numloom array handed to ``groupby`` as a function;
- matplotlib's ``LightSource`` makes its results with ``.view(type(elevation))``;
- SciPy's ``SuperLU.solve`` (``splu``, ``spilu``, ``factorized``) takes NumPy's arrays only;
- OpenCV's functions (``cv2.GaussianBlur``, ``cv2.imwrite``) take NumPy's arrays only;
- ``json`` writes NumPy's float64 scalar (a float), and numloom's 0-d stand-in for it not.

For these, the library's entry points are wrapped when the library is imported (or at once,
if it is already): numloom arrays among their arguments reach them as NumPy arrays, as a NumPy
program would hand them. Nothing else about the library changes.
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as _np

from ..core.array import ndarray


def _host(x, copy: bool):
    """A numloom array as NumPy's: its memory (a GPU array's host copy), or a copy of it."""
    return x.__array__(copy=True) if copy else _np.asarray(x)


def _converted(x, copy: bool, depth: int = 0):
    """``x`` with numloom arrays as NumPy's, also inside lists and tuples (``df.loc[mask,
    "a"]``, ``groupby([a, b])``)."""
    if isinstance(x, ndarray):
        return _host(x, copy)
    t = type(x)
    if (t is tuple or t is list) and depth < 2:
        items = [_converted(v, copy, depth + 1) for v in x]
        if any(a is not b for a, b in zip(items, x)):
            return t(items)
    return x


def numpy_arguments(fn, copy: bool = False):
    """``fn``, handed NumPy arrays for the numloom arrays among its arguments; ``copy``: copies
    of them (for a library that may keep and write what it is handed)."""
    if getattr(fn, "_numloom_arguments", False):
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        args = tuple(_converted(a, copy) for a in args)
        if kwargs:
            kwargs = {k: _converted(v, copy) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    run._numloom_arguments = True
    return run


def _wrap(cls, names, copy: bool = False) -> None:
    for name in names:
        fn = cls.__dict__.get(name)
        if fn is not None:
            setattr(cls, name, numpy_arguments(fn, copy))


def _pandas(pandas) -> None:
    from pandas.core import indexing

    # (pandas may keep what it is handed as an index or grouping: copies, as it copies
    # NumPy's arrays it takes as its own)
    for cls in (pandas.DataFrame, pandas.Series):
        _wrap(cls, ("__getitem__", "__setitem__", "groupby", "set_index", "where", "mask"),
              copy=True)  # fmt: skip
    _wrap(indexing._LocationIndexer, ("__getitem__", "__setitem__"), copy=True)
    _wrap(pandas.Index, ("__getitem__",), copy=True)


def _matplotlib_colors(colors) -> None:
    _wrap(colors.LightSource, ("hillshade", "shade", "shade_rgb", "shade_normals",
                               "blend_hsv", "blend_soft_light", "blend_overlay"))  # fmt: skip


class _SuperLU:
    """SciPy's ``SuperLU`` factorization, whose ``solve`` takes numloom arrays too."""

    def __init__(self, lu):
        self._lu = lu

    def solve(self, rhs, trans="N"):
        return self._lu.solve(_converted(rhs, False), trans)

    def __getattr__(self, name):
        return getattr(self._lu, name)

    def __repr__(self) -> str:
        return repr(self._lu)


def _factorizing(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        return _SuperLU(fn(*args, **kwargs))

    run._numloom_arguments = True
    return run


def _scipy_sparse_linalg(module) -> None:
    from scipy.sparse.linalg._dsolve import linsolve

    for owner in (module, linsolve):
        for name in ("splu", "spilu"):
            fn = getattr(owner, name, None)
            if fn is not None and not getattr(fn, "_numloom_arguments", False):
                setattr(owner, name, _factorizing(fn))


def _opencv(cv2) -> None:
    """OpenCV's functions take NumPy's arrays only (its bindings check the type): each takes
    numloom's as NumPy's (their memory, so ``cv2.rectangle(img, ...)`` draws into img)."""
    modules = [cv2] + [m for m in vars(cv2).values() if isinstance(m, types.ModuleType)
                       and m.__name__.startswith("cv2.")]  # fmt: skip
    for module in modules:
        for name, fn in list(vars(module).items()):
            if isinstance(fn, types.BuiltinFunctionType) and not name.startswith("_"):
                setattr(module, name, numpy_arguments(fn))


def _json(json) -> None:
    """``json.dumps`` of a float64 0-d array (``np.mean(x)``, which NumPy gives as its float64,
    a subclass of Python's float that json writes): the float, as NumPy's is written. Other
    dtypes stay unwritable, as NumPy's float32 and int64 scalars are."""
    default = json.JSONEncoder.default
    if getattr(default, "_numloom_arguments", False):
        return

    @functools.wraps(default)
    def numloom_default(self, o):
        if isinstance(o, ndarray) and o.ndim == 0 and o.dtype == _np.float64:
            return float(o)
        return default(self, o)

    numloom_default._numloom_arguments = True
    json.JSONEncoder.default = numloom_default


# module -> what makes its entry points take numloom arrays, run once it is imported
HOOKS = {
    "pandas": _pandas,
    "matplotlib.colors": _matplotlib_colors,
    "scipy.sparse.linalg": _scipy_sparse_linalg,
    "cv2": _opencv,
    "json": _json,
}
_DONE: set = set()


def _patch(name: str, module) -> None:
    if name in _DONE:
        return
    _DONE.add(name)
    try:
        HOOKS[name](module)
    except Exception:  # noqa: BLE001 (another version of the library: left as it is)
        pass


class _Loader:
    """A module's loader, which runs its hook once the module has run."""

    def __init__(self, loader, name: str):
        self._loader, self._name = loader, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _patch(self._name, module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder:
    """On ``sys.meta_path``: finds nothing itself, but gives the modules of ``HOOKS`` a
    loader that runs their hook after them."""

    def find_spec(self, name, path, target=None):
        if name not in HOOKS or name in _DONE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, name)
                return spec
        return None


def install() -> None:
    """Run the hooks of the libraries already imported, and of the others when they are."""
    for name in HOOKS:
        module = sys.modules.get(name)
        if module is not None:
            _patch(name, module)
    if not any(type(f) is _Finder for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())

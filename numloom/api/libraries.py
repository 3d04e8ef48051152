"""Other libraries handed numloom arrays where they take NumPy's only.

Most libraries take any array through ``numpy.asarray``, which gives them numloom's memory
(``core/host.py``). A few ask ``isinstance(x, numpy.ndarray)`` and read anything else as
something else, or take nothing but NumPy's own type in compiled code:

- pandas reads a numloom boolean mask in ``df[mask]``, ``.loc`` and ``.iloc`` as labels (or as
  positions 0 and 1), and a numloom array handed to ``groupby`` as a function;
- matplotlib's ``LightSource`` makes its results with ``.view(type(elevation))``;
- SciPy's ``SuperLU.solve`` (``splu``, ``spilu``, ``factorized``) takes NumPy's arrays only;
- OpenCV's functions (``cv2.GaussianBlur``, ``cv2.imwrite``) take NumPy's arrays only;
- Numba's compiled functions (``@njit``) type a numloom array as a plain buffer (no
  ``.shape``) and unbox NumPy's arrays only;
- scikit-learn's functions check their arguments' types first (``img_to_graph(img,
  mask=mask)``: "must be None or an instance of 'numpy.ndarray'"), and so do its parameter
  grids (``GridSearchCV(model, {"degree": np.arange(21)})``);
- SciPy's solvers (``scipy.optimize.minimize``, ``least_squares``, ``solve_ivp``...) hand what
  the user's objective, gradient, Hessian and constraints return to compiled code that takes
  NumPy's arrays only (L-BFGS-B, SLSQP, LSODA): those functions' numloom results reach them as
  NumPy's;
- ``json`` writes NumPy's float64 scalar (a float), and numloom's 0-d stand-in for it not;
  pandas' constructors and Python's ``statistics`` infer from a list of NumPy's scalars what
  they cannot from numloom's 0-d results (a float column; a result of the items' type).

For these, the library's entry points are wrapped when the library is imported (or at once,
if it is already): numloom arrays among their arguments reach them as NumPy arrays, as a NumPy
program would hand them. Nothing else about the library changes.
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as _np

from ..core import config
from ..core.array import ndarray
from .writes import at_user


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
    elif t is dict and depth < 2:  # (scikit-learn's parameter grids: {"degree": np.arange(21)})
        items = {k: _converted(v, copy, depth + 1) for k, v in x.items()}
        if any(items[k] is not v for k, v in x.items()):
            return items
    return x


def numpy_arguments(fn, copy: bool = False):
    """``fn``, handed NumPy arrays for the numloom arrays among its arguments; ``copy``: copies
    of them (for a library that may keep and write what it is handed).

    The wrapper is C (``_speedups.ArgsWrapper``), so no Python frame of numloom's stands
    between the user's line and the library's function: a library's warning
    (``warnings.warn(..., stacklevel=3)``, pandas' deprecations) points at the user's line
    as it would unwrapped (attributed to numloom, Python's filters hid it). Without the
    compiled module the warnings are caught and issued again at the user's line."""
    if getattr(fn, "_numloom_arguments", False):
        return fn

    def convert(args, kwargs):
        args = tuple(_converted(a, copy) for a in args)
        if kwargs:
            kwargs = {k: _converted(v, copy) for k, v in kwargs.items()}
        return args, kwargs

    return _entry_point(fn, convert, _HOLDERS)  # (convert runs where an argument may hold one)


def _entry_point(fn, convert, kinds: tuple):
    """``fn`` called with ``convert(args, kwargs)`` where an argument is of ``kinds``: in C
    where the compiled module is (no frame of numloom's between the caller and ``fn``), else
    in Python, its warnings issued again at the user's line."""
    if _ArgsWrapper is not None:
        run = functools.update_wrapper(_ArgsWrapper(fn, convert, kinds), fn)
    else:

        @functools.wraps(fn)
        def run(*args, **kwargs):
            return at_user(fn, *convert(args, kwargs))

    run._numloom_arguments = True
    return run


try:
    if config.PURE_PYTHON:
        raise ImportError("NUMLOOM_PURE_PYTHON=1")
    from ..core._speedups import ArgsWrapper
except ImportError:  # (the compiled module not built, or not wanted: the Python wrapper)
    _ArgsWrapper = None
else:

    def _ArgsWrapper(fn, convert, kinds):
        """The library's function, wrapped in C: it prints as the function and pickles as a
        reference to where it lives (as the function did)."""
        return ArgsWrapper(fn, convert, kinds, _lookup)


_HOLDERS = (ndarray, list, tuple, dict)  # (what _converted looks into)


def _lookup(module: str, qualname: str):
    import importlib

    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _scalars(items):
    """A list (or tuple) with numloom's 0-d arrays as NumPy's scalars (what NumPy's reductions
    give: ``[np.mean(a), np.std(a)]``), as pandas infers a float column from NumPy's; nested
    once (a list of rows, of dicts). Long lists are judged by their first item."""
    t = type(items)
    if t is dict:
        made = {k: _scalar_item(v) for k, v in items.items()}
        return made if any(made[k] is not items[k] for k in items) else items
    if t is not list and t is not tuple or not items:
        return items
    if len(items) > 10_000 and not _holds_scalars(items[0]):
        return items
    made = [_scalar_item(v) for v in items]
    return t(made) if any(a is not b for a, b in zip(made, items)) else items


def _holds_scalars(v) -> bool:
    if isinstance(v, ndarray):
        return v.ndim == 0
    if type(v) is dict:
        return any(isinstance(x, ndarray) and x.ndim == 0 for x in v.values())
    return type(v) in (list, tuple) and bool(v) and isinstance(v[0], ndarray) and v[0].ndim == 0


def _scalar_item(v):
    if isinstance(v, ndarray):
        return v[()] if v.ndim == 0 else v
    t = type(v)
    return _scalars(v) if t is dict or t is list or t is tuple else v


def _with_scalars(init):
    """pandas' ``DataFrame(data)`` and ``Series(data)``: numloom's 0-d results in the data
    (lists, dicts, lists of dicts) as NumPy's scalars."""
    if getattr(init, "_numloom_arguments", False):
        return init

    @functools.wraps(init)
    def run(self, data=None, *args, **kwargs):
        t = type(data)
        if t is list or t is tuple or t is dict:
            data = _scalars(data)
        return init(self, data, *args, **kwargs)

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
    for cls in (pandas.DataFrame, pandas.Series):
        cls.__init__ = _with_scalars(cls.__init__)
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


def _sklearn_validation(module) -> None:
    """scikit-learn's ``validate_params`` decorates its public functions (as their modules
    are imported, after this one): each function it makes takes numloom arrays as NumPy's."""
    original = module.validate_params

    @functools.wraps(original)
    def validate_params(*args, **kwargs):
        decorate = original(*args, **kwargs)

        @functools.wraps(decorate)
        def decorator(func):
            return numpy_arguments(decorate(func))

        return decorator

    module.validate_params = validate_params


def _sklearn_search(module) -> None:
    """scikit-learn's parameter grids and samplers (``GridSearchCV``'s ``param_grid``) take a
    value's numloom array as NumPy's."""
    for name in ("ParameterGrid", "ParameterSampler"):
        cls = getattr(module, name, None)
        if cls is not None:
            _wrap(cls, ("__init__",))


def _numba_dispatcher(module) -> None:
    """Numba's ``@jit``/``@njit`` functions take numloom arrays as NumPy's: on the CPU their
    memory, so what the compiled function writes is in the numloom array. And in a script run
    on numloom, the ``np`` a compiled function names is numloom: Numba types numloom's module
    and functions as NumPy's (``np.empty``, ``np.sqrt``, ``np.linalg.norm`` inside ``@njit``)."""
    from numba.core.typing.context import BaseContext

    cls = module.Dispatcher
    if "__call__" not in cls.__dict__:
        cls.__call__ = numpy_arguments(module._dispatcher.Dispatcher.__call__)
    original = BaseContext._get_global_type

    def _get_global_type(self, gv):
        return original(self, _numpy_twin(gv))

    BaseContext._get_global_type = _get_global_type


def _numpy_twin(value):
    """NumPy's module or function of numloom's ``value`` (numloom, numloom.linalg, ...,
    ``numloom.empty``, ``numloom.sqrt``), else ``value``."""
    pairs = [(sys.modules.get("numloom" + part), theirs) for part, theirs in
             (("", _np), (".linalg", _np.linalg), (".random", _np.random), (".fft", _np.fft))]
    pairs = [(mine, theirs) for mine, theirs in pairs if mine is not None]  # fmt: skip
    for mine, theirs in pairs:
        if value is mine:
            return theirs
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        for mine, theirs in pairs:
            if getattr(mine, name, None) is value:
                return getattr(theirs, name, value)
    return value


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


def _matrix(defmatrix) -> None:
    """``np.matrix(x)`` of numloom's array ``x``: NumPy's matrix of NumPy's array of it, as for
    NumPy's own arrays. NumPy's ``matrix`` copies an ndarray it is given in C order, but an
    object it converts keeps that object's order: a Fortran-ordered array (a pandas frame's
    values) made a Fortran-ordered matrix, whose BLAS products differ from NumPy's in the last
    bit."""
    matrix = defmatrix.matrix
    new = matrix.__new__
    if getattr(new, "_numloom_arguments", False):
        return

    @functools.wraps(new)
    def numloom_new(subtype, data, dtype=None, copy=True):
        if isinstance(data, ndarray):
            data = _np.asarray(data)
        return new(subtype, data, dtype=dtype, copy=copy)

    numloom_new._numloom_arguments = True
    matrix.__new__ = staticmethod(numloom_new)


def _statistics(statistics) -> None:
    """Python's ``statistics`` of a list of numloom's 0-d results (``statistics.mean([np.mean(a),
    ...])``): NumPy's scalars, whose type it converts its result to (numloom's 0-d array it
    cannot be made from a Fraction)."""
    for name in ("mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low",
                 "median_high", "median_grouped", "mode", "multimode", "quantiles", "pstdev",
                 "pvariance", "stdev", "variance"):  # fmt: skip
        fn = getattr(statistics, name, None)
        if fn is not None and not getattr(fn, "_numloom_arguments", False):
            setattr(statistics, name, _first_as_scalars(fn))


def _first_as_scalars(fn):
    @functools.wraps(fn)
    def run(data, *args, **kwargs):
        if type(data) is list or type(data) is tuple:
            data = _scalars(data)
        return fn(data, *args, **kwargs)

    run._numloom_arguments = True
    return run


def _tensor_val(fn):
    """NumPy's ``polyval`` (``chebval``, ...) for numloom's ``x`` too: NumPy's broadcasts a
    multidimensional ``c`` over ``x`` (``tensor=True``) only where ``isinstance(x,
    numpy.ndarray)``, which a numloom array is not; the coefficients are reshaped here as
    there, and the evaluation stays numloom's (on its device)."""

    @functools.wraps(fn)
    def val(x, c, tensor=True):
        if tensor and isinstance(x, ndarray):
            c = _np.array(c, ndmin=1, copy=None)
            return fn(x, c.reshape(c.shape + (1,) * x.ndim), tensor=False)
        return fn(x, c, tensor=tensor)

    return val


def _from_roots(fn):
    """NumPy's ``polyvalfromroots`` for numloom's ``x`` too (``_tensor_val``'s reason)."""

    @functools.wraps(fn)
    def polyvalfromroots(x, r, tensor=True):
        if isinstance(x, ndarray):
            r = _np.array(r, ndmin=1, copy=None)
            if tensor:
                r = r.reshape(r.shape + (1,) * x.ndim)
            elif x.ndim >= r.ndim:
                raise ValueError("x.ndim must be < r.ndim when tensor == False")
        return fn(x, r, tensor=tensor)

    return polyvalfromroots


_VALS = {"polynomial": "polyval", "chebyshev": "chebval", "legendre": "legval",
         "hermite": "hermval", "hermite_e": "hermeval", "laguerre": "lagval"}  # fmt: skip


def _polynomial(module) -> None:
    name = _VALS[module.__name__.rsplit(".", 1)[1]]
    setattr(module, name, _tensor_val(getattr(module, name)))
    if hasattr(module, "polyvalfromroots"):
        module.polyvalfromroots = _from_roots(module.polyvalfromroots)


def _numpy_testing(testing) -> None:
    """numpy.testing's assertions compare numloom's arrays as NumPy's: ``assert_equal`` and
    ``assert_almost_equal`` take their array path only for ``isinstance(x, numpy.ndarray)``,
    and compared a numloom array to a list as scalars ("The truth value of an array ...").
    Patched where they are defined too, so their own recursion (a dict's items) is wrapped."""
    from numpy.testing._private import utils

    for name in [n for n in testing.__all__ if n.startswith("assert") and n not in _CALLING]:
        fn = getattr(testing, name, None)
        if callable(fn) and not isinstance(fn, type):
            wrapped = numpy_arguments(fn)
            setattr(testing, name, wrapped)
            if getattr(utils, name, None) is fn:
                setattr(utils, name, wrapped)


# numpy.testing's assertions that call the program's function with its arguments: as they are
_CALLING = frozenset({"assert_raises", "assert_raises_regex", "assert_warns",
                      "assert_no_warnings", "assert_no_gc_cycles"})  # fmt: skip


def _returned(x, depth: int = 0):
    """What a user's function returned, for a library: numloom arrays as NumPy's (their
    memory), a 0-d one as NumPy's scalar, also inside a tuple or list (``(f, grad)``)."""
    if isinstance(x, ndarray):
        host = _np.asarray(x)
        return host[()] if host.ndim == 0 else host
    t = type(x)
    if (t is tuple or t is list) and depth < 1:
        items = [_returned(v, depth + 1) for v in x]
        if any(a is not b for a, b in zip(items, x)):
            return t(items)
    return x


_CALLABLES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
              functools.partial)  # fmt: skip


def _returning_numpy(fn):
    """A user's function (an objective, its gradient) that gives a library NumPy's arrays."""
    if getattr(fn, "_numloom_returns", False) or not isinstance(fn, _CALLABLES):
        return fn

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return _returned(fn(*args, **kwargs))

    run._numloom_returns = True
    return run


def _with_callbacks(x, depth: int = 0):
    """An argument of a solver: a function wrapped by ``_returning_numpy``, and so the
    functions in a dict (SciPy's constraint ``{"type": "ineq", "fun": ..., "jac": ...}``) or a
    list of them; anything else as it is."""
    if isinstance(x, _CALLABLES):
        return _returning_numpy(x)
    t = type(x)
    if t is dict and depth < 2:
        return {k: _with_callbacks(v, depth + 1) for k, v in x.items()}
    if (t is list or t is tuple) and depth < 1 and any(type(v) is dict for v in x):
        return t(_with_callbacks(v, depth + 1) for v in x)
    return x


def _solver(fn):
    """A library's solver (``scipy.optimize.minimize``): the functions it is handed return NumPy's
    arrays to it, as a NumPy program's would (its compiled code takes nothing else: L-BFGS-B's
    "argument 7 must be numpy.ndarray"), and numloom arrays among its arguments are NumPy's.
    Wrapped in C as ``numpy_arguments`` is, so the solver's warnings point at the user's line."""
    if getattr(fn, "_numloom_arguments", False):
        return fn

    def convert(args, kwargs):
        args = tuple([_with_callbacks(_converted(a, False)) for a in args])
        if kwargs:
            kwargs = {k: _with_callbacks(_converted(v, False)) for k, v in kwargs.items()}
        return args, kwargs

    return _entry_point(fn, convert, _HOLDERS + _CALLABLES)


def _solvers(module) -> None:
    """SciPy's optimizers, root finders and integrators, and the classes that hold a user's
    functions for them (``NonlinearConstraint``, ``ode``)."""
    for name in getattr(module, "__all__", ()):
        fn = getattr(module, name, None)
        if isinstance(fn, type):
            if "__init__" in fn.__dict__ and name in _HOLDERS_OF_FUNCTIONS:
                fn.__init__ = _solver(fn.__init__)
        elif isinstance(fn, types.FunctionType):
            setattr(module, name, _solver(fn))


_HOLDERS_OF_FUNCTIONS = frozenset(["NonlinearConstraint", "ode", "complex_ode"])


# module -> what makes its entry points take numloom arrays, run once it is imported
HOOKS = {
    "scipy.optimize": _solvers,
    "scipy.integrate": _solvers,
    "numpy.testing": _numpy_testing,
    **{f"numpy.polynomial.{m}": _polynomial for m in _VALS},
    "pandas": _pandas,
    "matplotlib.colors": _matplotlib_colors,
    "scipy.sparse.linalg": _scipy_sparse_linalg,
    "sklearn.utils._param_validation": _sklearn_validation,
    "sklearn.model_selection._search": _sklearn_search,
    "cv2": _opencv,
    "numba.core.dispatcher": _numba_dispatcher,
    "json": _json,
    "numpy.matrixlib.defmatrix": _matrix,
    "statistics": _statistics,
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

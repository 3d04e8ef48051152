"""numloom's functions on data of dtypes numloom arrays do not hold: NumPy's own.

Arrays of datetimes, timedeltas, strings, bytes, structured records and objects stay NumPy
arrays. A numloom function handed one (or asked for one: ``zeros(3, dtype="U5")``) meets it
where it converts its arguments (``asarray`` raises ``OtherDtype``) and runs NumPy's function
of the same name instead, on the host: neither counted nor warned about as a fallback, since
nothing numloom could do is lost. The numloom namespace holds these versions; numloom's own
code calls the plain ones.
"""

from __future__ import annotations

import functools
import types

import numpy as _np

from ..core.array import OtherDtype, ndarray, of_class, programs_subclass
from . import eager
from . import numpy_api as _api
from .fallback import call_numpy_quietly
from .ufuncs import _KNOWN, _exported


def _passing(fn, numpy_fn):
    """``fn``, which runs ``numpy_fn`` where it meets data of another dtype, and hands the call
    to an argument of another library that implements ``__array_function__`` (NEP 18), as
    NumPy's function would: ``np.mean(dask_array)`` is Dask's lazy mean."""
    return _wrapped(fn, numpy_fn, True)


def guarded(fn, numpy_fn):
    """``fn``, which runs ``numpy_fn`` where it meets data numloom arrays do not hold (strings,
    objects, ...) or a NumPy ndarray subclass (a masked array, ``np.matrix``)."""
    now = numpy_fn in eager.FUNCTIONS
    if getattr(fn, "_numpy_guard", False) and (not now or getattr(fn, "_now", False)) and (
            numpy_fn.__name__ not in KEEPS_CLASS or getattr(fn, "_keeps", None)):  # fmt: skip
        return fn
    return _wrapped(fn, numpy_fn, False)


def _wrapped(fn, numpy_fn, dispatching: bool):
    """``fn`` in front of NumPy's ``numpy_fn``: small computed arrays a loop works on run
    NumPy's at once (``eager.FUNCTIONS``); with ``dispatching``, other libraries' arrays take
    the call (NEP 18) and their objects' methods answer as NumPy's function calls them; data
    of other dtypes and NumPy's subclasses run NumPy's."""
    now = numpy_fn in eager.FUNCTIONS
    scalar_in = numpy_fn in eager.SCALAR_INPUTS
    method = _METHODS.get(numpy_fn.__name__) if dispatching else None
    keeps = KEEPS_CLASS.get(numpy_fn.__name__)
    at = 2 if numpy_fn.__name__ == "apply_along_axis" else 0  # (the array among the arguments)
    small_matrix = numpy_fn in eager.SMALL_MATRIX_CALLS

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if args and type(args[0]) is ndarray and _simple(args, kwargs):
            # the common call: numloom's arrays (none a loop's marked one, that NumPy runs now)
            # and Python's or NumPy's scalars, dtypes: nothing of another library's
            if small_matrix:  # (a small computed matrix's decomposition: LAPACK's call now)
                made = eager.functions_now(numpy_fn, args, kwargs)
                if made is not None:
                    return classed(made, args, kwargs)
            try:
                return fn(*args, **kwargs)
            except OtherDtype:
                return call_numpy_quietly(numpy_fn, args, kwargs)
        if scalar_in and args and (type(args[0]) in _PY_SCALARS or isinstance(args[0], _np.generic)):
            # (``np.round(2.345, 2)``, ``np.nan_to_num(np.complex128(v))``: NumPy's scalar)
            made = eager.scalar_call(numpy_fn, args, kwargs)
            if made is not None:
                return made
        if now:  # (small computed arrays a loop works on: NumPy's call, at once)
            made = eager.functions_now(numpy_fn, args, kwargs)
            if made is not None:
                return classed(made, args, kwargs)
        if dispatching and (_foreign_in(args) or (kwargs and _foreign_in(kwargs.values()))):
            handled = _handed_over(numpy_fn, args, kwargs)
            if handled is not _NOT_HANDED:
                return handled
        if method is not None and args and _has_method(args[0], method):
            # (NumPy's function calls the method of an object of another library that has
            # one: ``np.sum(df, axis=0)`` is the DataFrame's sum, a Series)
            return numpy_fn(args[0], *_exported(args[1:]), **dict(zip(kwargs,
                                                               _exported(kwargs.values()))))
        if method is not None and args and _overrides(args[0], method):
            # (a program's subclass's own ``sum``: NumPy's function calls it, its way)
            return numpy_fn._implementation(*args, **kwargs)
        try:
            made = fn(*args, **kwargs)
        except OtherDtype:
            made = call_numpy_quietly(numpy_fn, args, kwargs)
        return classed(made, args, kwargs)

    def classed(made, args: tuple, kwargs: dict):
        """``made`` of the array argument's class, where that is a program's subclass and
        NumPy's result keeps it (``KEEPS_CLASS``)."""
        if keeps and len(args) > at and programs_subclass(args[at]) and kwargs.get("out") is None:
            return of_class(made, args[at], keeps)
        return made

    run._numpy_guard, run._now, run._keeps = True, now, keeps
    return run


# NumPy's functions whose result is of their array argument's ndarray subclass (they take it
# as it is, ``asanyarray``, and call its methods or ufuncs), and which of the result is: "all"
# its arrays, "first" (unique's values, not its indices), "shaped" (an index array, not the
# index of the whole array, which is NumPy's scalar)
KEEPS_CLASS = dict.fromkeys((
    "sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "any", "all", "cumsum",
    "cumprod", "ptp", "median", "average", "percentile", "quantile", "nansum", "nanprod",
    "nanmean", "nanstd", "nanvar", "nanmax", "nanmin", "nanmedian", "nanpercentile",
    "nanquantile", "nancumsum", "nancumprod", "sort", "argsort", "take", "repeat", "tile",
    "roll", "insert", "delete", "apply_along_axis", "round", "around", "clip"), "all")  # fmt: skip
KEEPS_CLASS.update(dict.fromkeys(("argmax", "argmin", "nanargmax", "nanargmin"), "shaped"),
                   unique="first")  # fmt: skip


def guard_namespace(namespace: dict, numpy_module) -> None:
    """Every public function of numloom's in ``namespace`` that NumPy's ``numpy_module`` also
    has, ``guarded`` by NumPy's: what NumPy's own data and subclasses mean stays NumPy's."""
    for name, value in list(namespace.items()):
        if name.startswith("_") or not isinstance(value, types.FunctionType):
            continue
        if not value.__module__.startswith("numloom"):
            continue
        numpy_fn = getattr(numpy_module, name, None)
        if callable(numpy_fn) and not isinstance(numpy_fn, type) and numpy_fn is not value:
            namespace[name] = guarded(value, numpy_fn)


_NOT_HANDED = object()

# NumPy's functions that call the method of that name of an object that is not a NumPy array
# (``_wrapfunc``, ``_wrapreduction`` in numpy/_core/fromnumeric.py): function -> method
_METHODS = {name: name for name in (
    "sum", "prod", "max", "min", "any", "all", "mean", "std", "var", "cumsum", "cumprod",
    "argmax", "argmin", "round", "clip", "ptp", "take", "repeat", "nonzero", "compress",
    "squeeze", "swapaxes", "transpose", "reshape", "choose")}  # fmt: skip
_METHODS.update(amax="max", amin="min", around="round")


def _simple(args: tuple, kwargs: dict) -> bool:
    """Whether every argument is a numloom array that no loop has marked to run now (nor a
    small piece of a large computed array, which ufunc calls take as marked: ``roll(X[i])``
    of a data generator's row), a Python or NumPy scalar, None, a string, a type or a dtype."""
    for a in args:
        t = type(a)
        if t is ndarray:
            if a._storage.eager or eager.small_piece(a):
                return False
        elif t not in _SIMPLE and not isinstance(a, _np.dtype):
            return False
    return not kwargs or _simple(tuple(kwargs.values()), {})


def _has_method(x, method: str) -> bool:
    """Whether ``x`` is another library's object (not an array, scalar or sequence NumPy
    knows) with the method ``method``, which NumPy's function calls."""
    t = type(x)
    return (t not in _PLAIN and t is not list and t is not tuple and not isinstance(x, _KNOWN)
            and hasattr(t, method))  # fmt: skip


def _overrides(x, method: str) -> bool:
    """Whether ``x`` is of a program's subclass of numloom's ndarray that defines ``method``
    itself, which NumPy's function calls (an ndarray's own it would not)."""
    t = type(x)
    return t is not ndarray and isinstance(x, ndarray) and getattr(t, method, None) is not (
        getattr(ndarray, method, None))


def _foreign_in(values) -> bool:
    """Whether an argument (or an item of a list or tuple argument: concatenate's arrays) is
    of another library (cheap: most calls have none)."""
    for v in values:
        t = type(v)
        if t in _PLAIN:
            continue
        if t is list or t is tuple:
            # (the items' types, found at C speed: a split's hundreds of rows are one type)
            for k in {*map(type, v)} - _NOT_FOREIGN:
                if _foreign_type(k):
                    return True
        elif _foreign(v):
            return True
    return False


def _foreign(v) -> bool:
    return _foreign_type(type(v))


def _foreign_type(t: type) -> bool:
    return not issubclass(t, _KNOWN) and hasattr(t, "__array_function__")


def _handed_over(numpy_fn, args: tuple, kwargs: dict):
    """NumPy's dispatch (NEP 18): each other library's type, in argument order, gets
    ``__array_function__(numpy_fn, types, args, kwargs)`` until one answers."""
    found: dict = {}  # type -> its first argument
    for v in list(args) + list(kwargs.values()):
        for x in (v if type(v) in (list, tuple) else (v,)):
            if _foreign(x):
                found.setdefault(type(x), x)
    if not found:
        return _NOT_HANDED
    types = tuple(found)
    for t, x in found.items():
        result = t.__array_function__(x, numpy_fn, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"no implementation found for 'numpy.{numpy_fn.__name__}' on types that "
                    f"implement __array_function__: {list(types)}")  # fmt: skip


_PY_SCALARS = frozenset([int, float, complex, bool])
_PLAIN = frozenset([int, float, complex, bool, str, type(None)] + [
    _np.dtype(c).type for c in "?bhilqBHILQefdFD"])  # (NumPy's scalars: no other library's)
_SIMPLE = _PLAIN | {type}
_NOT_FOREIGN = _PLAIN | {ndarray, _np.ndarray}  # (a list's items: a split's rows)


all = _passing(_api.all, _np.all)
allclose = _passing(_api.allclose, _np.allclose)
amax = _passing(_api.amax, _np.amax)
amin = _passing(_api.amin, _np.amin)
angle = _passing(_api.angle, _np.angle)
any = _passing(_api.any, _np.any)
append = _passing(_api.append, _np.append)
arange = _passing(_api.arange, _np.arange)
argmax = _passing(_api.argmax, _np.argmax)
argmin = _passing(_api.argmin, _np.argmin)
argwhere = _passing(_api.argwhere, _np.argwhere)
around = _passing(_api.around, _np.around)
array = _passing(_api.array, _np.array)
array_equal = _passing(_api.array_equal, _np.array_equal)
array_split = _passing(_api.array_split, _np.array_split)
asarray = _passing(_api.asarray, _np.asarray)
ascontiguousarray = _passing(_api.ascontiguousarray, _np.ascontiguousarray)
astype = _passing(_api.astype, _np.astype)
atleast_1d = _passing(_api.atleast_1d, _np.atleast_1d)
atleast_2d = _passing(_api.atleast_2d, _np.atleast_2d)
atleast_3d = _passing(_api.atleast_3d, _np.atleast_3d)
average = _passing(_api.average, _np.average)
broadcast_arrays = _passing(_api.broadcast_arrays, _np.broadcast_arrays)
broadcast_to = _passing(_api.broadcast_to, _np.broadcast_to)
choose = _passing(_api.choose, _np.choose)
clip = _passing(_api.clip, _np.clip)
column_stack = _passing(_api.column_stack, _np.column_stack)
compress = _passing(_api.compress, _np.compress)
concatenate = _passing(_api.concatenate, _np.concatenate)
copy = _passing(_api.copy, _np.copy)
count_nonzero = _passing(_api.count_nonzero, _np.count_nonzero)
cumprod = _passing(_api.cumprod, _np.cumprod)
cumsum = _passing(_api.cumsum, _np.cumsum)
cumulative_prod = _passing(_api.cumulative_prod, _np.cumulative_prod)
cumulative_sum = _passing(_api.cumulative_sum, _np.cumulative_sum)
delete = _passing(_api.delete, _np.delete)
diagonal = _passing(_api.diagonal, _np.diagonal)
diff = _passing(_api.diff, _np.diff)
dot = _passing(_api.dot, _np.dot)
dsplit = _passing(_api.dsplit, _np.dsplit)
dstack = _passing(_api.dstack, _np.dstack)
empty = _passing(_api.empty, _np.empty)
empty_like = _passing(_api.empty_like, _np.empty_like)
expand_dims = _passing(_api.expand_dims, _np.expand_dims)
eye = _passing(_api.eye, _np.eye)
fix = _passing(_api.fix, _np.fix)
flatnonzero = _passing(_api.flatnonzero, _np.flatnonzero)
flip = _passing(_api.flip, _np.flip)
fliplr = _passing(_api.fliplr, _np.fliplr)
flipud = _passing(_api.flipud, _np.flipud)
full = _passing(_api.full, _np.full)
full_like = _passing(_api.full_like, _np.full_like)
geomspace = _passing(_api.geomspace, _np.geomspace)
histogram = _passing(_api.histogram, _np.histogram)
histogram2d = _passing(_api.histogram2d, _np.histogram2d)
histogramdd = _passing(_api.histogramdd, _np.histogramdd)
hsplit = _passing(_api.hsplit, _np.hsplit)
hstack = _passing(_api.hstack, _np.hstack)
identity = _passing(_api.identity, _np.identity)
imag = _passing(_api.imag, _np.imag)
inner = _passing(_api.inner, _np.inner)
insert = _passing(_api.insert, _np.insert)
isclose = _passing(_api.isclose, _np.isclose)
linspace = _passing(_api.linspace, _np.linspace)
logspace = _passing(_api.logspace, _np.logspace)
matmul = _passing(_api.matmul, _np.matmul)
matrix_transpose = _passing(_api.matrix_transpose, _np.matrix_transpose)
max = _passing(_api.max, _np.max)
mean = _passing(_api.mean, _np.mean)
meshgrid = _passing(_api.meshgrid, _np.meshgrid)
min = _passing(_api.min, _np.min)
moveaxis = _passing(_api.moveaxis, _np.moveaxis)
nan_to_num = _passing(_api.nan_to_num, _np.nan_to_num)
nonzero = _passing(_api.nonzero, _np.nonzero)
ones = _passing(_api.ones, _np.ones)
ones_like = _passing(_api.ones_like, _np.ones_like)
outer = _passing(_api.outer, _np.outer)
pad = _passing(_api.pad, _np.pad)
permute_dims = _passing(_api.permute_dims, _np.permute_dims)
prod = _passing(_api.prod, _np.prod)
ptp = _passing(_api.ptp, _np.ptp)
ravel = _passing(_api.ravel, _np.ravel)
real = _passing(_api.real, _np.real)
repeat = _passing(_api.repeat, _np.repeat)
reshape = _passing(_api.reshape, _np.reshape)
resize = _passing(_api.resize, _np.resize)
roll = _passing(_api.roll, _np.roll)
rot90 = _passing(_api.rot90, _np.rot90)
round = _passing(_api.round, _np.round)
select = _passing(_api.select, _np.select)
sinc = _passing(_api.sinc, _np.sinc)
split = _passing(_api.split, _np.split)
squeeze = _passing(_api.squeeze, _np.squeeze)
stack = _passing(_api.stack, _np.stack)
std = _passing(_api.std, _np.std)
sum = _passing(_api.sum, _np.sum)
swapaxes = _passing(_api.swapaxes, _np.swapaxes)
take = _passing(_api.take, _np.take)
tensordot = _passing(_api.tensordot, _np.tensordot)
tile = _passing(_api.tile, _np.tile)
trace = _passing(_api.trace, _np.trace)
transpose = _passing(_api.transpose, _np.transpose)
tril = _passing(_api.tril, _np.tril)
triu = _passing(_api.triu, _np.triu)
var = _passing(_api.var, _np.var)
vdot = _passing(_api.vdot, _np.vdot)
vsplit = _passing(_api.vsplit, _np.vsplit)
vstack = _passing(_api.vstack, _np.vstack)
where = _passing(_api.where, _np.where)
zeros = _passing(_api.zeros, _np.zeros)
zeros_like = _passing(_api.zeros_like, _np.zeros_like)

__all__ = [
    "all",
    "allclose",
    "amax",
    "amin",
    "angle",
    "any",
    "append",
    "arange",
    "argmax",
    "argmin",
    "argwhere",
    "around",
    "array",
    "array_equal",
    "array_split",
    "asarray",
    "ascontiguousarray",
    "astype",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "broadcast_arrays",
    "broadcast_to",
    "choose",
    "clip",
    "column_stack",
    "compress",
    "concatenate",
    "copy",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "delete",
    "diagonal",
    "diff",
    "dot",
    "dsplit",
    "dstack",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "fix",
    "flatnonzero",
    "flip",
    "fliplr",
    "flipud",
    "full",
    "full_like",
    "geomspace",
    "histogram",
    "histogram2d",
    "histogramdd",
    "hsplit",
    "hstack",
    "identity",
    "imag",
    "inner",
    "insert",
    "isclose",
    "linspace",
    "logspace",
    "matmul",
    "matrix_transpose",
    "max",
    "mean",
    "meshgrid",
    "min",
    "moveaxis",
    "nan_to_num",
    "nonzero",
    "ones",
    "ones_like",
    "outer",
    "pad",
    "permute_dims",
    "prod",
    "ptp",
    "ravel",
    "real",
    "repeat",
    "reshape",
    "resize",
    "roll",
    "rot90",
    "round",
    "select",
    "sinc",
    "split",
    "squeeze",
    "stack",
    "std",
    "sum",
    "swapaxes",
    "take",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "tril",
    "triu",
    "var",
    "vdot",
    "vsplit",
    "vstack",
    "where",
    "zeros",
    "zeros_like",
]

"""Ufunc calls run now by NumPy, for the small arrays of data-dependent loops on the CPU.

A loop that compacts its arrays with a mask each step (``z, c = z[keep], c[keep]``, the
Mandelbrot escape loop) needs every mask's value at once: traced, each step would cost a sync
(planning, launching, adopting results: tens of microseconds) for a few microseconds of work.
Arrays such a step makes are marked (``Storage.eager``: a compaction's result, and the results
of ufuncs on them); a ufunc call on them whose array operands are all computed, on the CPU and
of at most ``EAGER_ELEMENTS`` elements runs NumPy's ufunc now on their memory, so a step costs
what it costs in NumPy. Larger arrays, pending operands and ``numloom.jit``'s tracing take the
traced path (where kernels fuse).

NumPy's floating-point warnings point at the user's line, as the traced path's do: under
NumPy's default error state the call runs with the categories NumPy warns on set to ``call``,
and what was called is warned again at the user's line.
"""

from __future__ import annotations

import math
import sys
import weakref

import numpy as _np
from numpy._core._ufunc_config import _extobj_contextvar

from ..core import config, fperrors, realize
from ..core.array import _Scalar, adopt_host, asarray, ndarray
from ..core.dag import Op, prod, warn_at_user
from ..core.device import get_device
from .writes import at_user, owned_version

EAGER_ELEMENTS = 1 << 16  # the largest operand (elements) a call runs now with

_BUFFER = realize._BUFFER
_MAP = Op.MAP
_HOST_SCALARS = (bool, int, float, complex)
_KINDS = frozenset("biufc")
# the scalars a call run now takes as they are: Python's, and NumPy's of numloom's kinds
SCALAR_TYPES = frozenset(_HOST_SCALARS) | {
    t for t in _np.sctypeDict.values() if issubclass(t, _np.generic) and _np.dtype(t).kind in _KINDS
}
ADOPT = [None]  # numloom.core._speedups.adopt, once numloom's API is bound
_caught = fperrors.CAUGHT  # the categories NumPy's error state called about, per thread
_CALLING = fperrors.CALLING  # NumPy's default state, its warnings as calls

_DEFAULT = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_is_default: dict = {}  # NumPy's error-state object -> whether it is NumPy's default state
# NumPy's default error-state object, as the process starts (the compiled call compares it)
DEFAULT_STATE = _extobj_contextvar.get()
if _np.geterr() != _DEFAULT or _np.geterrcall() is not None:
    DEFAULT_STATE = object()  # (a program that changed it before importing numloom)


def wants(args: tuple) -> bool:
    """Whether an array among ``args`` is marked, or is a small NumPy array (data a library
    gave: ``np.sin(y)`` in the right-hand side SciPy's solver calls), the check every eager
    call starts with."""
    for x in args:
        t = type(x)
        if (t is ndarray or t is _Scalar) and (x._storage.eager or small_piece(x)):
            return True
        if t is _np.ndarray and _small_numpy(x):
            return True
    return scalar_math(args)


def small_piece(x) -> bool:
    """Whether numloom's array ``x`` is a small piece (at most ``PIECE_ELEMENTS``, and at most
    half) of a large computed CPU array: a point of a grid that a cost function is called on
    (``4 * x`` for each of 10000 columns of 2: traced, a plan and a sync each). An operator on
    it runs NumPy's call on the array's memory now (``_tracing.c``'s ``piece_of_large``). A
    larger piece (a Dask chunk, a row) keeps the traced path, where its work fuses."""
    return 0 < x.size <= PIECE_ELEMENTS and _piece_of_large(x, x._storage)


PIECE_ELEMENTS = 4096  # (_tracing.c's PIECE_ELEMENTS)
BLOCK_ELEMENTS = 64  # (_tracing.c's BLOCK_ELEMENTS)


def scalar_math(args: tuple) -> bool:
    """Whether ``args`` are scalars and 0-d results on the CPU (at least one): the scalars
    NumPy's reductions give, whose arithmetic runs now and gives NumPy's scalar, as NumPy's
    scalar arithmetic does. In a program's call (``users_call``), a pending one that is
    itself arithmetic of scalars (a mean: a sum over a count; a product of them) is evaluated
    first; a reduction's own pending result stays pending, as it fuses with its uses (a
    solver's ``sum(r * r) / sum(r * Ar)`` and the step that uses it, one kernel). (A naive
    Bayes' likelihoods from each column's mean and variance, its posterior a prior times 64 of
    them: traced, each operation cost an evaluation, or a node in a plan run by NumPy node by
    node.)"""
    found = pending = False
    for x in args:
        t = type(x)
        if t is _Scalar:
            s = x._storage
            if s.device != "cpu" or s.error is not None:
                return False
            op = s.version.op
            if op is not _BUFFER:
                if op is not _MAP:
                    return False
                pending = True
            found = True
        elif t not in SCALAR_TYPES:
            return False
    if pending and found:
        if realize.TRACING or not users_call():
            return False
        for x in args:
            if type(x) is _Scalar and x._storage.version.op is not _BUFFER:
                realize.ensure(x._storage)
    return found


def _small_numpy(x: _np.ndarray) -> bool:
    """Whether NumPy's array ``x`` is data a call may run on now: small, of numloom's kinds."""
    return x.size <= config.EAGER_ELEMENTS and x.dtype.kind in _KINDS


def _host(x):
    """``x`` as NumPy's ufunc takes it now: a computed small CPU array's memory, a scalar as
    it is; None where the call is traced instead."""
    t = type(x)
    if t is ndarray or t is _Scalar:
        storage = x._storage
        version = storage.version
        if version.op is not _BUFFER or storage.device != "cpu" or storage.error is not None:
            return None
        h = x._host
        host = h[1] if h is not None and h[0]() is version else x._host_view()
        return host if host.size <= EAGER_ELEMENTS else None
    if t in _HOST_SCALARS or (isinstance(x, _np.generic) and x.dtype.kind in _KINDS):
        return x
    if t is _np.ndarray and _small_numpy(x):
        return x
    return None


def operand_now(x):
    """``x`` (a numloom array, a NumPy array or a list of integers) as NumPy's data for a call
    run now: a computed small CPU array's memory; None where it is not one."""
    if type(x) is list:
        x = _np.asarray(x)
        return x if _small_numpy(x) else None
    h = _host(x)
    return h if isinstance(h, _np.ndarray) else None


# numloom's modules between a program's call of an operator or ufunc and ``scalar_math``
DISPATCH = frozenset({"numloom.api.eager", "numloom.api.ufuncs", "numloom.core.methods",
                      "numloom.core.array", "numloom.core.host"})  # fmt: skip


def users_call() -> bool:
    """Whether the call being made is a program's: its nearest frame past numloom's dispatch
    (``DISPATCH``) is not numloom's own. A pending 0-d result of numloom's own functions
    (``mean``'s sum divided by its count) stays pending: it fuses with what uses it."""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") in DISPATCH:
        f = f.f_back
    return f is None or not f.f_globals.get("__name__", "").startswith("numloom")


def operands(uf, *args):
    """``call(uf, args)``, called from numloom.core._speedups's plain call (``scalar_math``
    first: its pending 0-d results are evaluated)."""
    scalar_math(args)
    return call(uf, args)


def into(uf, *args):
    """``call(uf, inputs, out)`` for ``uf(*inputs, out)``, from numloom.core._speedups."""
    return call(uf, args[:-1], args[-1])


def call(uf, args: tuple, out: ndarray | None = None):
    """``uf(*args)`` (into ``out``, a numloom array) run now by NumPy where it applies (see
    the module's docstring): its result (``out`` itself), or None (the call is traced)."""
    host = _operands(args, out is not None)
    if host is None:
        return None
    if out is None:
        made = _numpy(uf._np, host, None)
        return made_now(made)
    target = writable(out)
    if target is None:
        return None
    _numpy(uf._np, host, target)
    return out


def function_now(np_fn, args: tuple):
    """NumPy's function ``np_fn(*args)`` (a product: ``dot``, ``matmul``) run now where a
    ufunc call of ``args`` would be (a marked array among them, all computed, small and on the
    CPU): its result as NumPy gives it (``np.dot(x, x)``: NumPy's scalar); None where the call
    is traced instead."""
    if FUNCTION_NOW[0] is not None:  # (the common case, in C)
        made = FUNCTION_NOW[0](np_fn, args)
        if made is not None:
            return made
    host = _operands(args, False) if wants(args) else None
    if host is None:
        return None
    return made_now(_run(lambda: np_fn(*host), np_fn.__name__))


FUNCTION_NOW = [None]  # numloom.core._speedups.function_now, once numloom's API is bound


_LINALG = _np.linalg
# NumPy's functions that run now, as ufunc calls do (a marked array among their arguments, all
# computed, small, on the CPU: ``functions_now``): functions that write no argument and make
# new arrays. Functions that return views (``reshape``, ``transpose``, ``diagonal``) are traced:
# their memory must stay their argument's.
FUNCTIONS = frozenset([
    _np.mean, _np.std, _np.var, _np.median, _np.percentile, _np.quantile, _np.average,
    _np.ptp, _np.cumsum, _np.cumprod, _np.diff, _np.ediff1d, _np.gradient, _np.trapezoid,
    _np.diag, _np.diagflat, _np.outer, _np.inner, _np.kron, _np.cross, _np.einsum, _np.trace,
    _np.tensordot, _np.vdot,
    _np.concatenate, _np.stack, _np.vstack, _np.hstack, _np.column_stack, _np.dstack,
    _np.append, _np.insert, _np.delete, _np.tile, _np.repeat, _np.roll, _np.pad,
    _np.tril, _np.triu, _np.sort, _np.argsort, _np.searchsorted, _np.unique, _np.bincount,
    _np.histogram, _np.digitize, _np.interp, _np.convolve, _np.correlate, _np.polyval,
    _np.where, _np.clip, _np.round, _np.around, _np.nonzero, _np.argwhere,
    _np.flatnonzero, _np.count_nonzero, _np.isclose, _np.allclose, _np.array_equal,
    _np.meshgrid, _np.copy, _np.zeros_like, _np.ones_like, _np.full_like,
    _np.nanmean, _np.nansum, _np.nanprod, _np.nanmax, _np.nanmin, _np.nanmedian,
    _np.nanargmax, _np.nanargmin, _np.nanstd, _np.nanvar, _np.nancumsum,
    _LINALG.solve, _LINALG.inv, _LINALG.det, _LINALG.slogdet, _LINALG.norm, _LINALG.eig,
    _LINALG.eigh, _LINALG.eigvals, _LINALG.eigvalsh, _LINALG.svd, _LINALG.qr,
    _LINALG.cholesky, _LINALG.lstsq, _LINALG.pinv, _LINALG.matrix_power, _LINALG.matrix_rank,
    _LINALG.cond,
])  # fmt: skip


# NumPy's functions that give a scalar for a Python scalar (``np.round(2.345, 2)``,
# ``np.sum(3)``, ``np.real(2.5)``): called with one and no array, they are NumPy's calls,
# whose scalar (a ``float`` subclass, as ``json.dumps`` and ``isinstance`` expect) is the
# result, not a 0-d array standing for it.
SCALAR_INPUTS = frozenset([
    _np.all, _np.any, _np.amax, _np.amin, _np.max, _np.min, _np.argmax, _np.argmin, _np.angle,
    _np.around, _np.round, _np.average, _np.clip, _np.corrcoef, _np.count_nonzero, _np.flip,
    _np.imag, _np.real, _np.isneginf, _np.isposinf, _np.isreal, _np.mean, _np.median,
    _np.nan_to_num, _np.nanargmax, _np.nanargmin, _np.nanmax, _np.nanmean, _np.nanmin,
    _np.nanprod, _np.nanstd, _np.nansum, _np.nanvar, _np.prod, _np.ptp, _np.sinc, _np.std,
    _np.sum, _np.var,
])  # fmt: skip
_SCALAR_ARGS = (int, float, complex, bool, str, type(None), _np.generic, _np.dtype, type)


def scalar_call(np_fn, args: tuple, kwargs: dict):
    """``np_fn(*args, **kwargs)`` as NumPy's own call where its first argument is a Python
    scalar and no argument is an array (``SCALAR_INPUTS``): NumPy's scalar result as it is
    (an array it gives, numloom's); None where numloom's function runs instead."""
    if realize.TRACING:  # (the caller checked that args[0] is a Python scalar)
        return None
    for v in (*args[1:], *kwargs.values()):
        if not (isinstance(v, _SCALAR_ARGS)
                or (type(v) is tuple and all(type(k) is int for k in v))):  # fmt: skip
            return None
    made = _run(lambda: np_fn(*args, **kwargs), np_fn.__name__)
    return _result_now(made, get_device() == "cpu")


def _nan_in(args, kwargs) -> bool:
    """Whether a nan-function's array holds a NaN (an all-NaN slice is warned about)."""
    x = args[0] if args else kwargs.get("a")
    h = _host(x) if isinstance(x, ndarray) else x
    return isinstance(h, _np.ndarray) and h.dtype.kind in "fc" and bool(_np.isnan(h).any())


def _ddof(args, kwargs) -> bool:
    return kwargs.get("ddof", 0) != 0 or len(args) > 4


def _tolerance_not_finite(args, kwargs) -> bool:
    """Whether ``isclose``'s ``rtol`` or ``atol`` is not finite (NumPy warns of it)."""
    tolerances = [*args[2:4], kwargs.get("rtol", 0.0), kwargs.get("atol", 0.0)]
    return not all(bool(_np.isfinite(_host(t) if isinstance(t, ndarray) else t).all())
                   for t in tolerances)  # fmt: skip


# Calls of these that NumPy warns about other than by its error state (its warning would
# point at numloom's line, not the user's): traced instead
_WARNS = {
    _np.std: _ddof,
    _np.var: _ddof,
    _np.cross: lambda args, kwargs: any(_np.shape(a)[-1:] != (3,) for a in args[:2]),
}
_WARNS.update({fn: _tolerance_not_finite for fn in (_np.isclose, _np.allclose)})
_WARNS.update({fn: _nan_in for fn in (_np.nanmean, _np.nansum, _np.nanprod, _np.nanmax,
                                      _np.nanmin, _np.nanmedian, _np.nanargmax,
                                      _np.nanargmin, _np.nancumsum)})  # fmt: skip
_WARNS.update({fn: lambda args, kwargs: _ddof(args, kwargs) or _nan_in(args, kwargs)
               for fn in (_np.nanstd, _np.nanvar)})  # fmt: skip


# Functions of ``FUNCTIONS`` whose call with arrays alone makes new values (NumPy's scalar for a
# whole reduction, a new array otherwise: never a view, nor a 0-d array) and warns through
# NumPy's error state alone where its arrays are not empty: the compiled call runs them.
_NEW_VALUES = frozenset([_np.mean, _np.unique, _np.sort, _np.argsort, _np.cumsum, _np.cumprod,
                         _np.bincount, _np.argwhere, _np.flatnonzero, _np.outer, _np.copy])


def functions_now(np_fn, args: tuple, kwargs: dict):
    """NumPy's function ``np_fn`` (one of ``FUNCTIONS``) run now where a ufunc call of its
    arrays would be: its result as NumPy gives it (a 0-d result NumPy's scalar, arrays marked);
    None where the call is traced instead (no marked array, an operand pending, large, empty
    or on a GPU, an ``out=``, or a result that is a view of an argument)."""
    if realize.TRACING or "out" in kwargs:
        return None
    if not kwargs and np_fn in _NEW_VALUES and FUNCTION_NOW[0] is not None:
        made = FUNCTION_NOW[0](np_fn, args)  # (the common call, ``np.mean(x)``, in C)
        if made is not None:
            return made
    values = list(args) + list(kwargs.values()) if kwargs else args
    on_cpu = get_device() == "cpu"
    runs = _runs_now(values, 0, on_cpu)
    if runs is None and np_fn in SMALL_MATRIX_CALLS and _all_small_computed(values):
        runs = True  # (a small matrix's decomposition: LAPACK's call now, traced or not)
    if runs is not True:
        return None
    warns = _WARNS.get(np_fn)
    if warns is not None and warns(args, kwargs):
        return None
    if np_fn is _np.diag and args and _np.ndim(args[0]) == 2:
        return None  # (a matrix's diagonal: NumPy's view of it, which the traced path makes)
    host_args = [_now_value(x) for x in args]
    host_kwargs = {k: _now_value(v) for k, v in kwargs.items()}
    if host_kwargs.get("overwrite_input"):  # (median's: numloom's memory is handed read-only,
        host_kwargs["overwrite_input"] = False  # and NumPy may leave its input as it likes)
    made = _run(lambda: np_fn(*host_args, **host_kwargs), np_fn.__name__)
    if _views_an_operand(made, host_args):
        return None
    return _result_now(made, on_cpu)


def _result_now(made, on_cpu: bool = True):
    """What NumPy's function gave, as numloom gives it: NumPy's new arrays as marked numloom
    arrays (a 0-d one stays an array: ``tensordot`` of vectors; on a GPU, the device's
    arrays), anything else as it is (a scalar, a named tuple's items, a pandas Series, a
    masked array)."""
    if isinstance(made, tuple):
        items = [_result_now(m, on_cpu) for m in made]
        return type(made)(*items) if hasattr(made, "_fields") else type(made)(items)
    if type(made) is not _np.ndarray or made.dtype.kind not in _KINDS:
        return made
    if not on_cpu:
        return asarray(made)
    if made.ndim == 0:
        a = adopt_host(_np.array(made))
        a._storage.eager = True
        return a
    return adopted(made)


def _runs_now(values, depth: int, on_cpu: bool = True):
    """Whether a call of these arguments runs now: True where a marked array (or a small
    NumPy array) is among them and every array is computed, small, non-empty and on the CPU;
    None where none is marked; False where the call is traced. On a GPU (not ``on_cpu``),
    only another library's small data runs now (a pandas Series in a groupby's function:
    NumPy's values, bit for bit; a few elements are not worth a device); numloom's and
    NumPy's arrays are the device's to work on."""
    marked = None
    for x in values:
        t = type(x)
        if (t is ndarray or t is _Scalar or t is _np.ndarray) and not on_cpu:
            return False
        if t is ndarray or t is _Scalar:
            storage = x._storage
            if not (realize.computed_on_cpu(storage) and 0 < x.size <= EAGER_ELEMENTS):
                return False
            if storage.eager or _piece_of_large(x, storage):
                marked = True
        elif t is _np.ndarray:
            if not x.size or not _small_numpy(x):
                return False
            marked = True  # (NumPy's data: a library gave it)
        elif (t is list or t is tuple) and depth == 0:
            inner = _runs_now(x, 1, on_cpu)
            if inner is False:
                return False
            marked = marked or inner
        elif isinstance(x, (ndarray, _np.ndarray)) or (callable(x) and not isinstance(x, type)):
            return False  # (a subclass, NumPy's own; a function: the traced path's)
        elif hasattr(t, "__array__") and not isinstance(x, type):
            # another library's small data (a pandas Series in a groupby's function): NumPy's
            # function as NumPy calls it (a Series' own methods)
            size = getattr(x, "size", None)
            if type(size) is not int or not 0 < size <= EAGER_ELEMENTS:
                return False
            marked = True
    return marked


# NumPy's linear algebra on a small computed matrix runs now even where no operand is marked
# (a mixture model's ``pinv(covar)`` for each sample of NumPy's data: traced, a plan and its
# sync each call, 0.25 ms where NumPy takes 13 us); its operands are then marked, so the
# loop's arithmetic around it runs now too.
SMALL_MATRIX_CALLS = frozenset([_LINALG.solve, _LINALG.inv, _LINALG.det, _LINALG.slogdet,
                                 _LINALG.pinv, _LINALG.eigh, _LINALG.eigvalsh, _LINALG.svd,
                                 _LINALG.cholesky, _LINALG.qr, _LINALG.lstsq])  # fmt: skip


def _all_small_computed(values) -> bool:
    """Whether the arrays among ``values`` are numloom's computed CPU arrays of at most
    ``config.EAGER_ELEMENTS`` elements (at least one), marked as they are read now."""
    arrays = [x for x in values if type(x) is ndarray]
    if not all(realize.computed_on_cpu(x._storage) and 0 < x.size <= config.EAGER_ELEMENTS
               for x in arrays):  # fmt: skip
        return False
    for x in arrays:
        x._storage.eager = True
    return bool(arrays)


def _piece_of_large(x, storage) -> bool:
    """Whether ``x`` is a small piece (at most half) of a large computed CPU array: a cellular
    automaton's previous row, whose ``np.correlate`` runs NumPy's call on its memory now, its
    result a loop's small array (traced, each row's write made the graph grow until a flush);
    a Gram-Schmidt loop's columns (``Q[:, i] @ A[:, j]``, each a plan and a sync traced: 215
    times NumPy's time). A piece of as many axes as the array (a block: a Dask chunk) is one
    only up to ``BLOCK_ELEMENTS``; larger blocks keep the traced path, where their work fuses.
    A whole array keeps it too."""
    shape = storage.version.shape
    return (realize.large_computed(storage) and 2 * x.size <= prod(shape)
            and (x.size <= BLOCK_ELEMENTS or x.ndim < len(shape)))  # fmt: skip


def _now_value(x):
    """An argument of a call run now as NumPy's function takes it (arrays as host views)."""
    t = type(x)
    if t is ndarray or t is _Scalar:
        return _host(x)
    if t is list or t is tuple:
        return t([_now_value(v) for v in x])
    return x


def _views_an_operand(made, operands: list) -> bool:
    """Whether an array NumPy made shares memory with an operand (a view: traced instead)."""
    if isinstance(made, tuple):
        return any(_views_an_operand(m, operands) for m in made)
    if not isinstance(made, _np.ndarray) or made.base is None:
        return False
    hosts = [o for o in operands if isinstance(o, _np.ndarray)]
    for o in operands:
        if type(o) is list or type(o) is tuple:
            hosts.extend(v for v in o if isinstance(v, _np.ndarray))
    return any(_np.may_share_memory(made, h) for h in hosts)


def _operands(args: tuple, into_numloom: bool):
    """The host operands of a call run now (``_host`` of each), or None where it is traced:
    an operand is not, numloom is tracing, or the operands are NumPy's data alone while the
    device is a GPU (``into_numloom``: the call writes into a numloom array)."""
    if realize.TRACING:
        return None
    host, numloom_operand = [], into_numloom
    for x in args:
        h = _host(x)
        if h is None:
            return None
        host.append(h)
        numloom_operand = numloom_operand or h is not x
    if not numloom_operand and get_device() != "cpu":  # (NumPy's data alone: the device's)
        return None
    return host


def writable(out):
    """A writable NumPy view of ``out``'s memory (a computed small CPU array), its buffer
    held by its storage alone (copied first where other arrays share it); None where the
    write is traced instead. Kept in the handle's host view (``_host[2]``) for the next one."""
    storage = out._storage
    if (type(out) is not ndarray or out._readonly or storage.version.op is not _BUFFER
            or storage.device != "cpu" or storage.error is not None):  # fmt: skip
        return None
    version = owned_version(storage)
    h = out._host
    if h is not None and h[2] is not None and h[0]() is version:
        return h[2]
    target = version.arg.writable(out._dtype, out._view)
    if target.size > EAGER_ELEMENTS:
        return None
    host = target.view()
    host.flags.writeable = False
    out._host = (weakref.ref(version), host, target, host.ndim)
    return target


def made_now(made):
    """What NumPy's call run now gives, as NumPy gives it: a 0-d result is NumPy's scalar (the
    work is done: a library handed it, as pandas' aggregation, sees a float), an array
    ``adopted``, each of a tuple so. (Also numloom.core._tracing's, for what it does not
    adopt itself.)"""
    if isinstance(made, tuple):
        items = [made_now(m) for m in made]
        return type(made)(*items) if hasattr(made, "_fields") else type(made)(items)
    if isinstance(made, _np.generic) or type(made) in _HOST_SCALARS:
        return made  # (NumPy's scalar; allclose's Python bool)
    if not isinstance(made, _np.ndarray):
        made = _np.asarray(made)
    return made[()] if made.ndim == 0 else adopted(made)


def adopted(made: _np.ndarray, scalar: bool = True) -> ndarray:
    """NumPy's new array ``made`` (of data-dependent work) as a marked numloom array, its
    memory uncopied, its host view ready (the next call reads it). A ufunc's several outputs
    (``divmod``) are adopted each. A 0-d one stands for NumPy's scalar, unless not ``scalar``
    (``np.array(1.5)``, an array)."""
    if type(made) is tuple:
        return tuple([adopted(m) for m in made])
    if not isinstance(made, _np.ndarray):  # (0-d operands alone give NumPy's scalar)
        made = _np.asarray(made)
    if made.ndim > 1 and not made.flags.c_contiguous:
        # NumPy's layout of its axes kept (Fortran order: ``full_like(a, v, order='F')``, or
        # ``order='K'`` of a transposed array): the memory in that order, C-ordered, seen
        # through the axes' permutation back
        axes = sorted(range(made.ndim), key=lambda k: -made.strides[k])
        lying = made.transpose(axes)
        if lying.flags.c_contiguous:
            return adopted(_np.array(lying, order="C")).transpose(_np.argsort(axes))
    if not made.flags.c_contiguous or not made.flags.owndata:
        made = _np.array(made, order="C")
    if ADOPT[0] is not None and made.ndim and type(made) is _np.ndarray:
        return ADOPT[0](made)  # (the same, in C)
    a = adopt_host(made)
    a._storage.eager = True
    if made.ndim == 0 and scalar:
        a.__class__ = _Scalar  # (NumPy's ufuncs and reductions give a scalar: numloom's
        # stands for it, printing as NumPy's does)
    version = a._storage.version
    if a._identity:
        host = version.arg.data.view()
        a._host = (weakref.ref(version), host, None, host.ndim)
    return a


def cast_now(x, dtype):
    """``x.astype(dtype)`` of a marked array run now on its memory, where it is computed, small
    and on the CPU (a random forest's ``row.astype(int)`` of each row of its predictions, a
    plan each at the row's offset otherwise): a marked array, NumPy's warnings of the cast at
    the user's line; None where the cast is traced instead."""
    if realize.TRACING:
        return None
    host = operand_now(x)
    if host is None:
        return None
    return adopted(_run(lambda: host.astype(dtype), "cast"))


def reduce_now(np_fn, a, axis, keepdims: bool, dtype=None):
    """``np_fn(a, axis=axis, keepdims=keepdims)`` (NumPy's sum, prod, max, min, any or all;
    with ``dtype`` where given) run now on a marked array's memory, where it is computed,
    small and on the CPU: the result as NumPy gives it (a 0-d result is NumPy's scalar), an
    array marked; None where the reduction is traced instead. NumPy's warnings point at the
    user's line."""
    if realize.TRACING:
        return None
    host = _host(a)
    if host is None:
        return None
    given = {} if dtype is None else {"dtype": dtype}  # (argmax and argmin take none)
    return made_now(_run(lambda: np_fn(host, axis=axis, keepdims=keepdims, **given), "reduce"))


def _run(call, name: str, operands=()):
    """``call()`` (NumPy's function on host data) with its warnings at the user's line: under
    NumPy's default error state the categories it warns on are set to ``call`` and warned again
    here; another state runs the call as it is (``at_user`` where it reports anything)."""
    state = _extobj_contextvar.get()
    default = _is_default.get(state)
    if default is None:
        default = _is_default[state] = _np.geterr() == _DEFAULT and _np.geterrcall() is None
        if len(_is_default) > 256:  # (states of finished errstate blocks: forget them)
            _is_default.clear()
    if not default:
        if not fperrors._reports(state):  # (every category ignored: nothing to point at)
            return call()
        return at_user(call, (), {})
    _caught.kinds = kinds = []
    token = _extobj_contextvar.set(_CALLING)
    try:
        made = call()
    finally:
        _extobj_contextvar.reset(token)
    warn(kinds, name, operands)
    return made


def _numpy(np_ufunc, host: list, out):
    """NumPy's ufunc on host operands, its warnings at the user's line."""
    if out is None:
        return _run(lambda: np_ufunc(*host), np_ufunc.__name__, host)
    return _run(lambda: np_ufunc(*host, out=out), np_ufunc.__name__, host)


def warn(kinds: list, name: str, operands=()) -> None:
    """NumPy's warnings for the error categories ``kinds`` its ufunc ``name`` called about.
    An overflow of a Python number cast to the arrays' type (``float16_array * 70000``) is
    NumPy's "overflow encountered in cast"."""
    arrays = [x for x in operands if isinstance(x, _np.ndarray)]
    for kind in kinds:
        cast = kind == "overflow" and bool(arrays) and any(
            overflows_in_cast(x, arrays[0].dtype) for x in operands)  # fmt: skip
        warn_at_user(f"{kind} encountered in {'cast' if cast else name}", RuntimeWarning)


def overflows_in_cast(x, dtype) -> bool:
    """Whether ``x`` is a finite Python number that is infinite in the float or complex
    ``dtype`` NumPy casts it to (``float16_array * 70000``: "overflow encountered in cast")."""
    if type(x) not in (int, float) or _np.dtype(dtype).kind not in "fc":
        return False
    try:
        if not math.isfinite(x):
            return False
    except OverflowError:  # (an int beyond any float: NumPy's own rules, elsewhere)
        return False
    with _np.errstate(all="ignore"):
        return bool(_np.isinf(_np.array(float(x)).astype(dtype)))

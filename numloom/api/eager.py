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

import weakref

import numpy as _np
from numpy._core._ufunc_config import _extobj_contextvar

from ..core import config, fperrors, realize
from ..core.array import _Scalar, adopt_host, ndarray
from ..core.dag import warn_at_user
from ..core.device import get_device
from .writes import at_user, owned_version

EAGER_ELEMENTS = 1 << 16  # the largest operand (elements) a call runs now with

_BUFFER = realize._BUFFER
_HOST_SCALARS = (bool, int, float, complex)
_KINDS = frozenset("biufc")
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
        if (t is ndarray or t is _Scalar) and x._storage.eager:
            return True
        if t is _np.ndarray and _small_numpy(x):
            return True
    return False


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


def operands(uf, *args):
    """``call(uf, args)``, called from numloom.core._speedups's plain call."""
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
    host = _operands(args, False) if wants(args) else None
    if host is None:
        return None
    return made_now(_run(lambda: np_fn(*host), np_fn.__name__))


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
    if type(made) is tuple:
        return tuple([made_now(m) for m in made])
    if isinstance(made, _np.generic):
        return made
    if not isinstance(made, _np.ndarray):
        made = _np.asarray(made)
    return made[()] if made.ndim == 0 else adopted(made)


def adopted(made: _np.ndarray) -> ndarray:
    """NumPy's new array ``made`` (of data-dependent work) as a marked numloom array, its
    memory uncopied, its host view ready (the next call reads it). A ufunc's several outputs
    (``divmod``) are adopted each."""
    if type(made) is tuple:
        return tuple([adopted(m) for m in made])
    if not isinstance(made, _np.ndarray):  # (0-d operands alone give NumPy's scalar)
        made = _np.asarray(made)
    if not made.flags.c_contiguous or not made.flags.owndata:
        made = _np.array(made, order="C")
    if ADOPT[0] is not None and made.ndim and type(made) is _np.ndarray:
        return ADOPT[0](made)  # (the same, in C)
    a = adopt_host(made)
    a._storage.eager = True
    if made.ndim == 0:
        a.__class__ = _Scalar  # (NumPy's ufuncs and reductions give a scalar: numloom's
        # stands for it, printing as NumPy's does)
    version = a._storage.version
    if a._identity:
        host = version.arg.data.view()
        a._host = (weakref.ref(version), host, None, host.ndim)
    return a


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


def _run(call, name: str):
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
    warn(kinds, name)
    return made


def _numpy(np_ufunc, host: list, out):
    """NumPy's ufunc on host operands, its warnings at the user's line."""
    if out is None:
        return _run(lambda: np_ufunc(*host), np_ufunc.__name__)
    return _run(lambda: np_ufunc(*host, out=out), np_ufunc.__name__)


def warn(kinds: list, name: str) -> None:
    """NumPy's warnings for the error categories ``kinds`` its ufunc ``name`` called about."""
    for kind in kinds:
        warn_at_user(f"{kind} encountered in {name}", RuntimeWarning)

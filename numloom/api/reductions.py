"""Reductions and scans: sum, prod, max, min, any, all, argmax, argmin, mean, var, std,
cumsum, cumprod, count_nonzero, and the ufuncs' ``reduce`` and ``accumulate``.

Each reduction is one REDUCE node over normalized axes, in the dtype NumPy would use; mean, var
and std follow NumPy's own formulas (``numpy/_core/_methods.py``) so results match NumPy's.
Dtypes and errors come from NumPy run on a stand-in of at most one element per axis.
"""

from __future__ import annotations

import builtins
import sys

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple

from ..core import dag as _dag
from ..core import fperrors, realize
from ..core.array import _RESULT_TYPES, _whole, asarray, ndarray, result, share
from ..core.array_views import reshape_array
from ..core.dag import Op, node, quiet_warnings, warn_at_user
from ..core.dag import prod as _size_of
from ..core.device import get_device
from ..core.views import reshape_view
from . import eager
from .eager import reduce_now
from .ufuncs import bind_reductions
from .writes import at_user

_NO_VALUE = _np._NoValue
_INTEGERS_AND_BOOL = "biu"


def _stand_in(a: ndarray):
    """Zeros of a's dtype with each axis cut to at most one element (zero-size kept)."""
    return _np.zeros(tuple(builtins.min(n, 1) for n in a.shape), a.dtype)


def _numpy_errors(np_fn, a: ndarray, axis, dtype) -> None:
    """NumPy's errors for these arguments (a bad axis or dtype), from ``np_fn`` on a stand-in
    (numloom warns itself); arguments that raised nothing are remembered by what the errors
    depend on (which axes are empty, the dtypes, the axis), and not checked again."""
    key = None
    exact_axis = axis is None or type(axis) is int or (
        type(axis) is tuple and builtins.all(type(k) is int for k in axis))  # fmt: skip
    if exact_axis and (dtype is None or type(dtype) in (type, str) or isinstance(dtype, _np.dtype)):
        # (arguments of exact types only: an axis of 1.0 equals 1 in a dict, and raises)
        key = (np_fn, tuple(n > 0 for n in a.shape), a.dtype, axis, dtype)
        if key in _NO_ERRORS:
            return
    with quiet_warnings(), _np.errstate(all="ignore"):
        np_fn(_stand_in(a), axis=axis, dtype=dtype)
    if key is not None:
        if len(_NO_ERRORS) >= 4096:
            _NO_ERRORS.clear()
        _NO_ERRORS[key] = True


_NO_ERRORS: dict = {}
_EXACT_COUNTS = (_np.dtype(_np.float64), _np.dtype(_np.complex128))


def _axes(axis, ndim: int) -> tuple:
    """The reduced axes, sorted. A 0-d array has none, whatever axis NumPy accepted for it
    (0, -1 or an empty tuple: the caller's NumPy probe has already raised for the others)."""
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def _reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if k in axes else s for k, s in enumerate(shape))
    return tuple(s for k, s in enumerate(shape) if k not in axes)


def _zero_strided(shape: tuple, dtype):
    """A stand-in of any shape without memory, for NumPy's checks that run before its loop."""
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def _check_out(np_fn, a: ndarray, axis, keepdims: bool, out, **kwargs) -> None:
    """NumPy's errors for an ``out`` of the wrong shape or dtype, or a read-only one."""
    if out is None:
        return
    shape = _reduced_shape(a.shape, _axes(axis, a.ndim), keepdims)
    kwargs["keepdims"] = keepdims
    if tuple(out.shape) != shape:
        np_fn(_zero_strided(a.shape, a.dtype), axis=axis,
              out=_zero_strided(out.shape, out.dtype), **kwargs)  # fmt: skip
        raise ValueError(f"output array of shape {out.shape} for a result of shape {shape}")
    probe = _np.zeros(tuple(builtins.min(s, 1) for s in shape), out.dtype)
    probe.flags.writeable = not (isinstance(out, ndarray) and out._readonly)
    np_fn(_stand_in(a), axis=axis, out=probe, **kwargs)


def deliver(r: ndarray, out):
    """``r``, or ``r`` written into ``out`` (cast unsafely, as NumPy's reductions, scans and
    products do once their checks pass; a NumPy ``out`` is filled from the host)."""
    if out is None:
        return r
    if isinstance(out, ndarray):
        if out._readonly:
            raise ValueError("output array is read-only")
        out._assign(r._node())
    else:
        out[...] = r.get()
    return out


def _finish(n, a: ndarray, axes: tuple, keepdims: bool, out):
    """Wrap a reduced node as an array; restore reduced axes as 1s for keepdims; fill out."""
    r = result(n, a.device)
    if keepdims:
        r = reshape_array(r, _reduced_shape(a.shape, axes, keepdims))
    return deliver(r, out)


_NOW = frozenset(["sum", "prod", "max", "min", "any", "all"])  # (run at once on marked arrays)


def _numpy_now(a: _np.ndarray) -> bool:
    """Whether a reduction of NumPy's array ``a`` runs now through NumPy: small data a library
    handed the program (the state a SciPy minimizer passes its objective), on the CPU."""
    return eager._small_numpy(a) and get_device() == "cpu"


_PASSING = eager.DISPATCH | {"numloom.api.reductions", "numloom.api.other_dtypes"}


def _split_sum(a) -> bool:
    """Whether a whole reduction of ``a`` is a program's reduction of a small slice of a
    computed CPU array (a split search's ``x[:i].sum()``, ``np.mean(y[i:])`` for each ``i``):
    NumPy's, now, its scalar the answer, where each new length or offset was a new plan
    (0.3 ms; NumPy 1 us). numloom's own functions (einsum's diagonal) keep the traced path."""
    if a._identity or not (realize.computed_on_cpu(a._storage)
                           and 0 < a.size <= eager.EAGER_ELEMENTS):  # fmt: skip
        return False
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__") in _PASSING:
        f = f.f_back
    return f is None or not f.f_globals.get("__name__", "").startswith("numloom")


def _reduce(kind: str, a, axis, dtype, out, keepdims, where, np_fn, initial=_NO_VALUE):
    """One REDUCE node; NumPy's ``np_fn`` on a stand-in gives the dtype and raises errors."""
    plain_call = out is None and where is True and initial is _NO_VALUE
    whole = plain_call and type(a) in _RESULT_TYPES
    if kind in _NOW and ((whole and (a._storage.eager  # (a small array of a loop: NumPy's, now)
                                     or (axis is None and not keepdims and _split_sum(a))))
                         or (plain_call and type(a) is _np.ndarray and _numpy_now(a))):
        made = reduce_now(np_fn, a, axis, keepdims, dtype)
        if made is not None:
            return made
    plain = whole and dtype is None
    if plain:  # the common call, as a loop makes it again: its nodes from what the last one found
        try:
            key = (kind, np_fn, a._dtype, a._view.shape, type(axis), axis, keepdims)
            known = _plans.get(key)
        except TypeError:  # (an unhashable axis: a list)
            plain, known = False, None
        if known is not None:
            return _planned(known, a)
    a = asarray(a)
    kwargs = {} if initial is _NO_VALUE else {"initial": initial}
    if dtype is not None:
        kwargs["dtype"] = dtype
    out_dtype, axes = _probe(np_fn, a, axis, kwargs)
    _check_out(np_fn, a, axis, keepdims, out, **kwargs)
    if where is not True:
        _check_where(np_fn, a, axis, where, kwargs)
    if initial is not _NO_VALUE and _count(a, axes) == 0:
        return _finish(_filled(initial, _reduced_shape(a.shape, axes, False), out_dtype), a,
                       axes, keepdims, out)  # fmt: skip
    if out_dtype.kind == "b" and kind in ("sum", "prod"):
        kind = _BOOL_KINDS[kind]  # NumPy's add and multiply on bools are or and and
    src = a._node()
    cast = None  # the dtype the source is cast to first, if any
    if kind in ("any", "all") and src.dtype != bool:
        cast = _np.dtype(bool)
    elif kind in ("sum", "prod") and src.dtype != out_dtype:
        cast = out_dtype
    if where is True and initial is _NO_VALUE:
        planned = _Planned(kind, axes, _reduced_shape(a.shape, axes, False), cast,
                           cast or src.dtype, out_dtype,
                           _reduced_shape(a.shape, axes, True) if keepdims else None)  # fmt: skip
        if plain and 0 not in a.shape:  # (a loop's next call starts from here)
            if len(_plans) >= 1024:
                _plans.clear()
            _plans[key] = planned
        return deliver(_planned(planned, a), out)
    if cast is not None:  # (NumPy's iterator casts in its buffers: sum_order.py)
        src = fperrors.record_if_raising(node(Op.CAST, (src,), "reduce" if where is True
                                              else None, src.shape, cast))  # fmt: skip
    if where is not True:
        src = _masked(src, where, kind, initial)
    # Over no axes a reduction is its elementwise part (cast, mask, initial): no REDUCE node.
    n = fperrors.record_if_raising(node(Op.REDUCE, (src,), (kind, axes),
                                        _reduced_shape(a.shape, axes, False), src.dtype)
                                   ) if axes else src  # fmt: skip
    if initial is not _NO_VALUE:
        n = _with_initial(kind, n, initial)
    if n.dtype != out_dtype:
        n = fperrors.record_if_raising(node(Op.CAST, (n,), None, n.shape, out_dtype))
    return _finish(n, a, axes, keepdims, out)


class _Planned:
    """The nodes a reduction without ``where`` or ``initial`` makes, as NumPy's probe found
    them: a plain call (no out or dtype) of one dtype, shape and axis keeps it, and the next
    ones build their nodes from it without asking NumPy."""

    __slots__ = ("kind", "axes", "shape", "cast", "raising", "out_dtype", "kept")

    def __init__(self, kind, axes, shape, cast, loop, out_dtype, kept):
        self.kind, self.axes, self.shape, self.cast = kind, axes, shape, cast
        # keepdims: the view of the reduced result with its axes kept as 1s
        self.kept = None if kept is None else reshape_view(_whole(shape), kept)
        self.out_dtype = out_dtype
        # the REDUCE node's error state, as fperrors.can_raise says for it ("overflow
        # encountered in reduce")
        self.raising = kind in ("sum", "prod") and loop.kind == "f"


def _planned(p: _Planned, a: ndarray):
    """The reduction's nodes over ``a`` and its result, from a ``_Planned``."""
    src = a._node()
    if p.cast is not None:  # (NumPy's iterator casts in its buffers: sum_order.py)
        src = fperrors.record_if_raising(node(Op.CAST, (src,), "reduce", src.shape, p.cast))
    n = node(Op.REDUCE, (src,), (p.kind, p.axes), p.shape, src.dtype) if p.axes else src
    if p.axes and p.raising:
        fperrors.record(n, _dag.user_line())
    if n.dtype != p.out_dtype:
        n = fperrors.record_if_raising(node(Op.CAST, (n,), None, n.shape, p.out_dtype))
    r = result(n, a._storage.device)
    return r if p.kept is None else share(r, p.kept)


_plans: dict = {}  # (kind, function, dtype, shape, axis's type, axis, keepdims) -> _Planned
_BOOL_KINDS = {"sum": "any", "prod": "all"}

# (function, dtype, stand-in shape, axis, dtype=, initial=) -> (result dtype, reduced axes): a
# program reduces the same few layouts the same few ways, and NumPy's probe costs more than
# the rest of the call. Types are part of the key (axis=True is not axis=1 to NumPy).
_probes: dict = {}


def _probe(np_fn, a: ndarray, axis, kwargs: dict) -> tuple:
    """NumPy's result dtype for the reduction (raising NumPy's error for a bad call) and the
    sorted reduced axes."""
    dtype, initial = kwargs.get("dtype"), kwargs.get("initial", _NO_VALUE)
    key = (np_fn, a.dtype, tuple(builtins.min(n, 1) for n in a.shape), type(axis), axis,
           type(dtype), dtype, type(initial), initial)  # fmt: skip
    try:
        found = _probes.get(key) if 0 not in a.shape else None  # (empty: NumPy may warn)
    except TypeError:  # an unhashable axis (a list): NumPy decides, every time
        key, found = None, None
    if found is None:
        with quiet_warnings(), _np.errstate(all="ignore"):  # (of an empty stand-in)
            probe = np_fn(_stand_in(a), axis=axis, **kwargs)
        found = (_np.asarray(probe).dtype, _axes(axis, a.ndim))
        if key is not None and 0 not in a.shape:
            if len(_probes) >= 4096:
                _probes.clear()
            _probes[key] = found
    return found


def _check_where(np_fn, a: ndarray, axis, where, kwargs) -> None:
    """NumPy's error for a ``where`` mask that does not broadcast to a's shape."""
    from ..core.views import broadcast_shapes

    shape = _np.shape(where)
    if broadcast_shapes(shape, a.shape) != a.shape:
        np_fn(_zero_strided(a.shape, a.dtype), axis=axis, where=_zero_strided(shape, bool),
              **kwargs)  # fmt: skip


def _filled(value, shape: tuple, dtype):
    """``value`` broadcast to ``shape``: a reduction over nothing is its ``initial``."""
    from ..core.views import broadcast_node

    return broadcast_node(node(Op.CONST, (), _np.asarray(value, dtype)[()], (), dtype), shape)


def _masked(src, where, kind, initial):
    """Elements outside ``where`` replaced by the reduction's identity (max and min have none:
    ``initial`` then, which the result includes anyway)."""
    from .elementwise import where as select

    identity = {"sum": 0, "prod": 1, "any": False, "all": True}.get(kind)
    if identity is None and initial is not _NO_VALUE:
        identity = initial
    if identity is None:
        name = {"max": "maximum", "min": "minimum"}[kind]
        raise ValueError(f"reduction operation '{name}' does not have an identity, so to use "
                         f"a where mask one has to specify 'initial'")  # fmt: skip
    picked = select(where, result(src), src.dtype.type(identity))
    return picked._node()


def _with_initial(kind, n, initial):
    from .elementwise import UFUNCS_BY_NAME
    from .ufuncs import apply

    names = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
             "any": "logical_or", "all": "logical_and"}  # fmt: skip
    combined = apply(UFUNCS_BY_NAME[names[kind]], (result(n), n.dtype.type(initial)), None, True,
                     "same_kind", None)  # fmt: skip
    return combined._node()


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("sum", a, axis, dtype, out, keepdims, where, _np.sum, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("prod", a, axis, dtype, out, keepdims, where, _np.prod, initial)


def max(a, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("max", a, axis, None, out, keepdims, where, _np.max, initial)


def min(a, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    return _reduce("min", a, axis, None, out, keepdims, where, _np.min, initial)


amax = max
amin = min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("any", a, axis, None, out, keepdims, where, _np.any)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("all", a, axis, None, out, keepdims, where, _np.all)


def _arg_reduce(kind: str, a, axis, out, keepdims, np_fn):
    if out is None and ((type(a) in _RESULT_TYPES and (
            a._storage.eager or (axis is None and not keepdims and _split_sum(a))))
                        or (type(a) is _np.ndarray and _numpy_now(a))):  # (NumPy's, at once)
        made = reduce_now(np_fn, a, axis, keepdims)
        if made is not None:
            return made
    a = asarray(a)
    _probe(np_fn, a, axis, {})  # NumPy's errors (empty sequences, bad axis)
    _check_out(np_fn, a, axis, keepdims, out)
    if axis is None or a.ndim == 0:
        flat = reshape_array(a, (a.size,))
        n = node(Op.REDUCE, (flat._node(),), (kind, (0,)), (), _np.intp)
        axes = tuple(range(a.ndim))
    else:
        axes = _axes(axis, a.ndim)
        shape = _reduced_shape(a.shape, axes, False)
        n = node(Op.REDUCE, (a._node(),), (kind, axes), shape, _np.intp)
    return _finish(n, a, axes, keepdims, out)


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmax", a, axis, out, keepdims, _np.argmax)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmin", a, axis, out, keepdims, _np.argmin)


def _count(a: ndarray, axes: tuple) -> int:
    return _size_of(a.shape[k] for k in axes)


def _count_items(a: ndarray, axis, keepdims: bool, where):
    """NumPy's ``_count_reduce_items``: an intp scalar, or with a ``where`` mask an intp array
    of the number of selected items of each result."""
    if where is True:
        return _np.intp(_count(a, _axes(axis, a.ndim)))
    from .shapes import broadcast_to

    return sum(broadcast_to(asarray(where), a.shape), axis, _np.intp, None, keepdims)


def _divide_by_count(total, count, out, dtype=None, keepdims_shape=None):
    """NumPy's ``true_divide(total, count, out=total, casting='unsafe')``: the division runs in
    the loop NumPy picks for (total's dtype, count's), then is cast back to total's dtype (and
    to ``dtype``; a 0-d result goes there directly, as NumPy's scalar path does)."""
    from .elementwise import divide

    if isinstance(count, ndarray) and keepdims_shape is not None:
        count = reshape_array(count, keepdims_shape)
    if (out is None and dtype is None and type(count) is _np.intp and count > 0
            and isinstance(total, ndarray) and total.dtype in _EXACT_COUNTS):  # fmt: skip
        # the common mean: a float64 (complex128) total over a count it holds exactly, so
        # dividing by it as a Python int (weak) is NumPy's (float64, int64) loop (traced
        # as a plain ufunc call)
        return divide(total, int(count))
    if out is not None:
        return divide(total, count, out=total, casting="unsafe")
    if isinstance(total, _np.generic):  # (a loop's small array, summed at once: NumPy's
        # scalar division, its warnings at the user's line)
        r = at_user(lambda: total.dtype.type(total / count), (), {})
        return r if dtype is None else r.astype(dtype)
    r = divide(total, count)
    if dtype is not None and total.ndim == 0:
        return r.astype(dtype)
    r = r.astype(total.dtype, copy=False)  # (the division's own array where it is that dtype)
    return r if dtype is None else r.astype(dtype)


def _warn_if_few(count, ddof, where, message: str) -> None:
    """NumPy's RuntimeWarning when ``count <= ddof`` (only where the count is known at the
    call: a ``where`` mask makes it data)."""
    if where is True and ddof >= count:
        warn_at_user(message, RuntimeWarning)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """NumPy's ``_mean``: a sum in float64 for integers (float32 for float16), divided by the
    count in the sum's dtype (or into ``out``)."""
    a = asarray(a)
    _numpy_errors(_np.mean, a, axis, dtype)
    count = _count_items(a, axis, keepdims, where)
    _warn_if_few(count, 0, where, "Mean of empty slice")
    is_float16 = dtype is None and a.dtype == _np.float16
    if dtype is None and a.dtype.kind in _INTEGERS_AND_BOOL:
        dtype = _np.float64
    elif is_float16:
        dtype = _np.float32
    total = sum(a, axis, dtype, out, keepdims, where=where)
    return _divide_by_count(total, count, out, _np.float16 if is_float16 else None)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NO_VALUE):  # fmt: skip
    """NumPy's ``_var``: the mean, the sum of squared deviations from it, divided by
    ``max(count - ddof, 0)``."""
    from .elementwise import maximum

    a = asarray(a)
    ddof = _ddof(ddof, correction)
    _numpy_errors(_np.var, a, axis, dtype)
    count = _count_items(a, axis, keepdims, where)
    _warn_if_few(count, ddof, where, "Degrees of freedom <= 0 for slice")
    if dtype is None and a.dtype.kind in _INTEGERS_AND_BOOL:
        dtype = _np.float64
    if mean is None:
        mean = sum(a, axis, dtype, None, True, where=where)
        mean = _divide_by_count(mean, count, None, keepdims_shape=mean.shape)
    total = sum(_squared_deviations(a, mean), axis, dtype, out, keepdims, where=where)
    return _divide_by_count(total, maximum(count - ddof, 0), out)


def _ddof(ddof, correction):
    if correction is _NO_VALUE:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _squared_deviations(a: ndarray, mean):
    """``|a - mean|**2`` as NumPy's ``_var`` computes it (re**2 + im**2 for complex)."""
    from .elementwise import add, conjugate, imag, multiply, real, square, subtract

    x = subtract(a, mean)
    if a.dtype.kind in "iuf":
        return square(x)
    if x.dtype.kind == "c":
        return add(square(real(x)), square(imag(x)))
    return real(multiply(x, conjugate(x)))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NO_VALUE):  # fmt: skip
    """NumPy's ``_std``: the square root of var, in var's result (so an integer ``out`` or
    ``dtype`` raises NumPy's casting error, except for a 0-d result, which NumPy casts)."""
    from .elementwise import sqrt

    r = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    if out is None and r.ndim == 0:
        return sqrt(r).astype(r.dtype)
    return sqrt(r, out=r)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Count of non-zero values, an intp array (0-d for ``axis=None``: NumPy's ``np.intp``)."""
    a = asarray(a)
    return sum(a.astype(bool), axis, _np.intp, None, keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """NumPy's ``_ptp``: the max goes into ``out`` first, so the subtraction reads it there."""
    from .elementwise import subtract

    return subtract(max(a, axis, out, keepdims), min(a, axis, None, keepdims), out=out)


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NO_VALUE):
    """NumPy's average: the mean, or ``sum(a * w) / sum(w)`` in the weights' result dtype."""
    from .elementwise import divide, equal, multiply
    from .shapes import broadcast_to

    a = asarray(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    kwargs = {} if keepdims is _NO_VALUE else {"keepdims": keepdims}
    if weights is None:
        avg = mean(a, axis, **kwargs)
        scl = avg.dtype.type(a.size / avg.size)
    else:
        w = _weights(asarray(weights), a, axis)
        extra = ["f8"] if a.dtype.kind in _INTEGERS_AND_BOOL else []
        dtype = _np.result_type(a.dtype, w.dtype, *extra)
        scl = sum(w, axis, dtype, **kwargs)
        if any(equal(scl, 0.0)):  # (this module's any) a sync: NumPy checks the data here
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = divide(sum(multiply(a, w, dtype=dtype), axis, **kwargs), scl)
    if not returned:
        return avg
    if _np.shape(scl) != avg.shape:
        scl = broadcast_to(scl, avg.shape).copy()
    return avg, scl


def _weights(w: ndarray, a: ndarray, axis):
    """NumPy's ``_weights_are_valid``: weights of a's shape, or of its ``axis`` lengths made
    to broadcast along those axes."""
    from .shapes import transpose

    if w.shape == a.shape:
        return w
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if w.shape != tuple(a.shape[ax] for ax in axis):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")  # fmt: skip
    w = transpose(w, tuple(int(k) for k in _np.argsort(axis)))
    return reshape_array(w, tuple(s if k in axis else 1 for k, s in enumerate(a.shape)))


# --- scans -----------------------------------------------------------------------------------


def _scan(kind: str, a, axis, dtype, out, np_fn):
    a = asarray(a)
    probe = np_fn(_stand_in(a), axis=axis, dtype=dtype)
    if out is not None and tuple(out.shape) != _scan_shape(a, axis):
        np_fn(_zero_strided(a.shape, a.dtype), axis=axis, dtype=dtype,
              out=_zero_strided(out.shape, out.dtype))  # fmt: skip
    if axis is None or a.ndim == 0:  # NumPy scans a 0-d array as one of shape (1,)
        a = reshape_array(a, (a.size,))
        axis = 0
    (axis,) = normalize_axis_tuple(axis, a.ndim)
    src = a._node()
    if src.dtype != probe.dtype:
        src = fperrors.record_if_raising(node(Op.CAST, (src,), None, src.shape, probe.dtype))
    scan = fperrors.record_if_raising(node(Op.SCAN, (src,), (kind, axis), src.shape, src.dtype))
    r = result(scan, a.device)
    return deliver(r, out)


def _scan_shape(a: ndarray, axis) -> tuple:
    return (a.size,) if axis is None or a.ndim == 0 else a.shape


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("cumsum", a, axis, dtype, out, _np.cumsum)


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("cumprod", a, axis, dtype, out, _np.cumprod)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(cumsum, 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(cumprod, 1, x, axis, dtype, out, include_initial)


def _cumulative(scan, initial, x, axis, dtype, out, include_initial):
    """NumPy's ``cumulative_sum``/``cumulative_prod``: the scan, after ``initial`` (the sum's
    0, the product's 1) when ``include_initial``."""
    x = asarray(x)
    if axis is None and x.ndim > 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                         "is required.")  # fmt: skip
    if not include_initial:
        return scan(x, axis, dtype, out)
    from .creation import full
    from .indexing import setitem
    from .joins import concatenate

    numpy_fn = _np.cumulative_sum if initial == 0 else _np.cumulative_prod
    numpy_fn(_np.zeros((0,) * x.ndim, x.dtype), axis=axis, dtype=dtype, include_initial=True)
    scanned = scan(x, axis, dtype)  # (NumPy's errors above)
    axis = (0 if axis is None else axis) % scanned.ndim
    first = list(scanned.shape)
    first[axis] = 1
    made = concatenate([full(tuple(first), initial, scanned.dtype), scanned], axis=axis)
    if out is not None:
        setitem(out, Ellipsis, made)
        return out
    return made


# --- ufunc.reduce and ufunc.accumulate --------------------------------------------------------

_REDUCE_KINDS = {
    "add": (sum, True),
    "multiply": (prod, True),
    "maximum": (max, False),
    "minimum": (min, False),
    "logical_or": (any, False),
    "logical_and": (all, False),
}


def ufunc_reduce(uf, array, axis, dtype, out, keepdims, initial, where):
    entry = _REDUCE_KINDS.get(uf.__name__)
    if entry is None or (uf.__name__ in ("logical_or", "logical_and") and dtype is not None):
        from .fallback import call_numpy

        return call_numpy(f"{uf.__name__}.reduce", uf._np.reduce, array, axis=axis, dtype=dtype,
                          out=out, keepdims=keepdims, initial=initial, where=where)  # fmt: skip
    fn, takes_dtype = entry
    kwargs = {"where": where}
    if initial is not _NO_VALUE:
        kwargs["initial"] = initial
    if takes_dtype:
        return fn(array, axis, dtype, out, keepdims, **kwargs)
    return fn(array, axis, out, keepdims, **kwargs)


def ufunc_accumulate(uf, array, axis, dtype, out):
    if uf.__name__ == "add":
        return cumsum(array, axis, dtype, out)
    if uf.__name__ == "multiply":
        return cumprod(array, axis, dtype, out)
    from .fallback import call_numpy

    return call_numpy(f"{uf.__name__}.accumulate", uf._np.accumulate, array, axis=axis,
                      dtype=dtype, out=out)  # fmt: skip


bind_reductions(ufunc_reduce, ufunc_accumulate)

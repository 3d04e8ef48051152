"""numloom's ufuncs: NumPy's type resolution, broadcasting and errors, recorded as MAP nodes.

Each call checks its operands exactly as NumPy would (raising NumPy's exception and message at
the user's call) and returns a lazy array. Dtype resolution runs once per combination of operand
dtypes: NumPy itself resolves the loop, on 0-d stand-ins, so promotion (NEP 50, weak Python
scalars) and casting errors are NumPy's by construction. Errors that depend on a scalar's value
(``uint8_array + 300``, ``int_array ** -1``) are NumPy's too: NumPy runs again on the values.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as _np

from ..compile.ufunc_table import COMPARISONS
from ..core import dag as _dag
from ..core import fperrors
from ..core.array import (
    _SUPPORTED_KINDS,
    SUBCLASSES,
    OtherDtype,
    OtherSubclass,
    _as_subclass,
    _check_dtype,
    _Scalar,
    _speedups,
    asarray,
    ndarray,
    result,
)
from ..core.array_views import reshape_array
from ..core.dag import Node, Op, map_node, node, quiet_warnings, recorded_warnings, warn_at_user
from ..core.views import broadcast_node, broadcast_shapes, broadcast_view, view_node
from . import eager
from .writes import at_user

_PY_SCALARS = (bool, int, float, complex)
_NO_VALUE = _np._NoValue
_NOT_GIVEN = object()  # ``out`` not passed at all: NumPy warns about ``where`` without it
_INT64 = _np.iinfo(_np.int64)


# ``ufunc.reduce`` and ``ufunc.accumulate`` are reductions (reductions.py), which build on the
# ufuncs here: reductions.py binds them as it loads (``bind_reductions``).
_REDUCTIONS: dict = {}


def bind_reductions(reduce, accumulate) -> None:
    _REDUCTIONS.update(reduce=reduce, accumulate=accumulate)


class ufunc(object if _speedups is None else _speedups.UfuncBase):
    """A NumPy ufunc that records its work lazily (``numloom.add``, ``numloom.sin``...)."""

    def __init__(self, np_ufunc):
        self._np = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.__doc__ = np_ufunc.__doc__
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout
        self.nargs = np_ufunc.nargs
        self.ntypes = np_ufunc.ntypes
        self.types = np_ufunc.types
        self.identity = np_ufunc.identity
        self.signature = np_ufunc.signature

    def __repr__(self) -> str:
        return f"<numloom ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        if _scalars_only(args, kwargs):  # ``np.sqrt(x[i])`` in a loop: NumPy's scalar, now
            return at_user(self._np, args, kwargs)  # (NumPy's warnings at the user's line)
        if not kwargs and len(args) == self.nin:
            made = _plain_call(self, args)  # the common call: operators, np.exp(x)...
            if made is not None:
                return made
        elif self.nout == 1:  # an output given, ``np.add(a, b, a)`` or ``out=a``: a loop's step
            if not kwargs and len(args) == self.nin + 1:
                out = args[-1]
            elif len(kwargs) == 1 and len(args) == self.nin:
                out = kwargs.get("out")
                out = out[0] if type(out) is tuple and len(out) == 1 else out
            else:
                out = None
            if plain_into(self, args[: self.nin], out):
                return out
        handled = _handed_over(self, args, kwargs)
        if handled is not _NOT_GIVEN:
            return handled
        return self._call(*args, **kwargs)

    def _call(self, *args, out=_NOT_GIVEN, where=True, casting="same_kind", dtype=None,
              signature=None, **kwargs):  # fmt: skip
        args, out = _split_positional_out(self, args, out)
        _check_kwargs(self.__name__, kwargs)
        if where is not True and out is _NOT_GIVEN:
            warn_at_user(
                "'where' used without 'out', expect unitialized memory in output. "
                "If this is intentional, use out=None.",
                UserWarning,
            )
        out = None if out is _NOT_GIVEN else out
        if out is Ellipsis:  # NumPy 2's ``out=...``: arrays, a 0-d result not a scalar
            return _as_arrays(self._call(*args, where=where, casting=casting, dtype=dtype,
                                         signature=signature, **kwargs))  # fmt: skip
        try:
            made = apply(self, args, out, where, casting, dtype, signature)
            if SUBCLASSES and out is None:  # (a program that made ndarray subclasses)
                return _of_subclass(made, args)
            return made
        except OtherDtype:  # strings, datetimes, objects: NumPy's data, NumPy's ufunc
            given = dict(kwargs, casting=casting)
            for name, value in (("out", out), ("where", where), ("dtype", dtype),
                                ("signature", signature)):  # fmt: skip
                if value is not None and value is not True:
                    given[name] = value
            return _numpy_quietly(self._np, args, given)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
               where=True):  # fmt: skip
        _check_method_arity(self, "reduce")
        try:
            return _REDUCTIONS["reduce"](self, array, axis, dtype, out, keepdims, initial, where)
        except OtherDtype:
            given = dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
            if initial is not _NO_VALUE:
                given["initial"] = initial
            return _numpy_quietly(self._np.reduce, (array,), given)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        ufunc_accumulate = _REDUCTIONS["accumulate"]
        _check_method_arity(self, "accumulate")
        try:
            array = asarray(array)
        except OtherDtype:
            given = dict(axis=axis, dtype=dtype, out=out)
            return _numpy_quietly(self._np.accumulate, (array,), given)
        return ufunc_accumulate(self, array, _accumulate_axis(array, axis), dtype, out)

    def outer(self, A, B, /, **kwargs):
        if self.nin != 2:
            raise ValueError("outer product only supported for binary functions")
        try:
            a, b = asarray(A), asarray(B)  # NumPy makes Python scalars arrays: they are strong
        except OtherDtype:
            return _numpy_quietly(self._np.outer, (A, B), kwargs)
        return self(reshape_array(a, a.shape + (1,) * b.ndim), b, **kwargs)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """NumPy's ``ufunc.reduceat``, run through NumPy (its result, or ``out`` written)."""
        from .fallback import call_numpy

        _check_method_arity(self, "reduceat")
        return call_numpy(f"{self.__name__}.reduceat", self._np.reduceat, array, indices,
                          axis=axis, dtype=dtype, out=out)  # fmt: skip

    def at(self, a, indices, b=None, /):
        """NumPy's unbuffered in-place ``ufunc.at``, run on the host and written back into ``a``."""
        from . import fallback, writes

        extra = () if b is None else (b,)
        if not isinstance(a, ndarray):
            return self._np.at(a, fallback.to_numpy(indices), *fallback.to_numpy(extra))
        if a.device != "cpu":
            fallback._warn_once(f"{self.__name__}.at")
        writes.run(self._np.at, (a, indices, *extra), {}, (0,), a.device)


def _as_arrays(made):
    """A ufunc's result(s) as arrays: a 0-d stand-in for NumPy's scalar, or NumPy's scalar
    (a call run now), as a 0-d array of its value."""
    if isinstance(made, tuple):
        return tuple(_as_arrays(m) for m in made)
    if type(made) is _Scalar:  # (the call's own new result: retyped in place)
        made.__class__ = ndarray
    if isinstance(made, _np.generic):
        return asarray(made)
    return made


def plain_into(uf: ufunc, args: tuple, out) -> bool:
    """``uf(*args, out=out)`` for one output, done by the plain call where that is NumPy's
    answer: ``out`` a writable numloom array whose dtype and shape the call's result already
    has (its node is written into ``out``). False where the whole call must run. Loops update
    arrays this way on every step (``a += b``, ``np.add(a, b, a)``)."""
    if type(out) is not ndarray or out._readonly:
        return False
    if (out._storage.eager or eager.wants(args)) and eager.call(uf, args, out) is not None:
        return True
    made = _plain_call(uf, args)
    if made is None or made._dtype is not out._dtype or made._view.shape != out._view.shape:
        return False
    out._assign(made._storage.version)
    return True


if _speedups is not None:
    # The compiled base calls the plain path itself and this for the rest (the class's own
    # __call__ steps aside for its C slot).
    ufunc._python_call = ufunc.__call__
    del ufunc.__call__


def _of_subclass(made, args: tuple):
    """A ufunc's results as instances of its first input's ndarray subclass, if any (as
    NumPy's: ``__array_finalize__`` sees that input)."""
    for x in args:
        if type(x) in SUBCLASSES:
            if isinstance(made, tuple):
                return tuple(_as_subclass(m, x) for m in made)
            return _as_subclass(made, x)
    return made


def _numpy_quietly(fn, args: tuple, kwargs: dict):
    """NumPy's ufunc (or one of its methods) on data of dtypes numloom does not hold."""
    from .fallback import call_numpy_quietly

    return call_numpy_quietly(fn, args, kwargs)


def _split_positional_out(uf: ufunc, args: tuple, out) -> tuple:
    """``uf(x, y, out0, ...)``: the inputs, and ``out`` from the keyword or the extra args."""
    given = len(args)
    if not uf.nin <= given <= uf.nargs:
        verb = "was" if given == 1 else "were"
        raise TypeError(f"{uf.__name__}() takes from {uf.nin} to {uf.nargs} positional "
                        f"arguments but {given} {verb} given")  # fmt: skip
    if given == uf.nin:
        return args, out
    if out is not _NOT_GIVEN:
        raise TypeError("cannot specify 'out' as both a positional and keyword argument")
    extra = args[uf.nin :]
    return args[: uf.nin], extra + (None,) * (uf.nout - len(extra))


def _check_kwargs(name: str, kwargs: dict) -> None:
    for key in kwargs:
        if key not in ("order", "subok"):
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")


def _check_method_arity(uf: ufunc, method: str) -> None:
    if uf.nin != 2:
        raise ValueError(f"{method} only supported for binary functions")
    if uf.nout != 1:
        raise ValueError(f"{method} only supported for functions returning a single value")


def _accumulate_axis(array: ndarray, axis):
    """NumPy's checks on accumulate's axis: one axis of an array that is not 0-d."""
    if array.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is None and array.ndim == 1:
        axis = 0
    if axis is None or isinstance(axis, tuple):
        raise ValueError("accumulate does not allow multiple axes")
    return axis


# --- operands ------------------------------------------------------------------------------


def _as_input(x):
    """An input as numloom keeps it: arrays, Python scalars (weak) and NumPy scalars (strong).

    Anything else becomes a numloom array; data numloom cannot hold (strings, objects) is kept
    as it is, for NumPy to raise its own error about it.
    """
    if isinstance(x, ndarray) or type(x) in _PY_SCALARS:
        return x
    if isinstance(x, _np.generic) and x.dtype.kind in _SUPPORTED_KINDS:
        return x
    if isinstance(x, _np.ndarray) and type(x) is not _np.ndarray:
        raise OtherSubclass(type(x))  # (a masked array, np.matrix: NumPy's ufunc keeps them)
    try:
        host = _np.asarray(x)  # subclasses of Python scalars (IntEnum) are strong, as in NumPy
    except ValueError:  # (a program's class whose __array__ makes a numloom array)
        return asarray(x)
    return asarray(host) if host.dtype.kind in _SUPPORTED_KINDS else x


def _is_supported(x) -> bool:
    if isinstance(x, _np.generic):
        return x.dtype.kind in _SUPPORTED_KINDS
    return isinstance(x, ndarray) or type(x) in _PY_SCALARS


def _out_arrays(out, nout: int) -> tuple:
    """``out`` as one entry per output: None, or the array (numloom or NumPy) to write."""
    if out is None:
        return (None,) * nout
    if not isinstance(out, tuple):
        if nout > 1:
            raise TypeError("'out' must be a tuple of arrays")
        out = (out,)
    if len(out) != nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    for o in out:
        if o is not None and not isinstance(o, (ndarray, _np.ndarray)):
            raise TypeError("return arrays must be of ArrayType")
        if (isinstance(o, ndarray) and o._readonly) or (
            isinstance(o, _np.ndarray) and not o.flags.writeable
        ):
            raise ValueError("output array is read-only")
    return out


def _as_mask(where):
    """``where=`` as a numloom array: arrays keep their dtype (NumPy checks it casts safely to
    bool); lists and scalars are converted to bool as NumPy converts them."""
    if isinstance(where, ndarray):
        return where
    if isinstance(where, _np.ndarray):
        return asarray(where)
    return asarray(_np.asarray(where, dtype=bool))


# --- dtype resolution ----------------------------------------------------------------------

_resolved: dict = {}


def _type_key(x):
    """What decides the loop: a dtype, or a Python scalar type (weak, NEP 50)."""
    if isinstance(x, (ndarray, _np.ndarray, _np.generic)):
        return x.dtype
    if type(x) is bool:
        return _np.dtype(bool)
    if type(x) in _PY_SCALARS:
        return type(x)
    return None  # data NumPy has to look at (lists of objects, strings): never cached


def _stand_in(x, key):
    """A 0-d NumPy value with x's dtype; Python scalars and unsupported data as they are."""
    if isinstance(key, _np.dtype):
        return x if isinstance(x, _np.generic) else _np.zeros((), key)
    return x


def _signature(uf: ufunc, dtype, signature):
    """``dtype=`` is NumPy's shorthand for a signature fixing every output's dtype."""
    if dtype is not None:
        return (None,) * uf.nin + (_np.dtype(dtype),) * uf.nout
    if isinstance(signature, (tuple, list)):
        return tuple(None if s is None else _np.dtype(s) for s in signature)
    return signature


class _Call:
    """What besides the inputs decides a call's loop: outputs, mask, casting, dtype, signature."""

    def __init__(self, uf, out_dtypes, mask, casting, dtype, signature):
        self.uf, self.out_dtypes, self.casting = uf, out_dtypes, casting
        self.mask_dtype = None if mask is None else mask.dtype
        self.mask_shape = None if mask is None else (1,) * builtins.min(mask.ndim, 1)
        self.dtype, self.signature = dtype, signature

    def key(self, keys: tuple) -> tuple:
        dtype = None if self.dtype is None else _np.dtype(self.dtype)
        sig = _signature(self.uf, None, self.signature)
        return (self.uf.__name__, keys, self.out_dtypes, self.mask_dtype, self.casting, dtype, sig)

    def run_numpy(self, stand_ins) -> None:
        """Call NumPy's ufunc on 0-d stand-ins: it raises NumPy's error for a bad call."""
        kwargs = {"casting": self.casting}
        if self.dtype is not None:
            kwargs["dtype"] = self.dtype
        if self.signature is not None:
            kwargs["signature"] = self.signature
        if any(d is not None for d in self.out_dtypes):
            # 1-element outputs: a mask of shape (1,) broadcasts into them
            kwargs["out"] = tuple(None if d is None else _np.zeros(1, d) for d in self.out_dtypes)
        if self.mask_dtype is not None:
            # NumPy's message names 0-d masks "scalar" and others "array data"
            kwargs["where"] = _np.ones(self.mask_shape, self.mask_dtype)
        with _np.errstate(all="ignore"), quiet_warnings():
            self.uf._np(*stand_ins, **kwargs)

    def loop(self, keys: tuple) -> tuple:
        slots = tuple(keys) + self.out_dtypes
        sig = _signature(self.uf, self.dtype, self.signature)
        kwargs = {"casting": self.casting} if sig is None else {"casting": self.casting,
                                                                 "signature": sig}  # fmt: skip
        return tuple(self.uf._np.resolve_dtypes(slots, **kwargs))


def resolve(call: _Call, inputs: tuple) -> tuple:
    """``(loop, inputs)``: the loop dtypes ``(in..., out...)`` and the inputs to feed it.

    Raises NumPy's error for a bad call. Inputs change only for comparisons with Python ints
    outside the loop's range, whose answer NumPy knows from the sign alone (see below).
    """
    keys = tuple(_type_key(x) for x in inputs)
    # ``is``: a dtype equals None (np.dtype(None) is float64)
    cache_key = None if any(k is None for k in keys) else call.key(keys)
    loop = _resolved.get(cache_key)
    if loop is None:
        call.run_numpy([_stand_in(x, k) for x, k in zip(inputs, keys)])
        for x in inputs:
            if not _is_supported(x):
                _check_dtype(_np.asarray(x).dtype)  # NumPy accepted it; numloom cannot hold it
        loop = call.loop(keys)
        if cache_key is not None:
            _resolved[cache_key] = loop
    if _value_matters(call.uf, inputs, loop):
        call.run_numpy([x if _is_scalar(x) else _stand_in(x, k) for x, k in zip(inputs, keys)])
        if call.uf.__name__ in COMPARISONS:
            return _compare_out_of_range(call, inputs, loop)
    return loop, inputs


def _is_scalar(x) -> bool:
    return type(x) in _PY_SCALARS or isinstance(x, _np.generic)


def _value_matters(uf: ufunc, inputs: tuple, loop: tuple) -> bool:
    """Whether a scalar's value can make NumPy raise (or compare specially) for this loop."""
    for x, dtype in zip(inputs, loop):
        if type(x) is int and not _fits(x, dtype):
            return True
    if uf.__name__ == "power" and loop[1].kind in "iu":
        exponent = inputs[1]
        return _is_scalar(exponent) and not isinstance(exponent, complex) and exponent < 0
    return False


def _raises_for_data(uf: ufunc, inputs: tuple, loop: tuple) -> bool:
    """Whether the call can raise when it runs (a signed integer array to powers held in an
    array, some maybe negative): its node remembers the user's line for the error."""
    return uf.__name__ == "power" and loop[1].kind == "i" and isinstance(inputs[1], ndarray)


def _fits(value: int, dtype) -> bool:
    low, high = _int_range(dtype) if dtype.kind in "iu" else (_INT64.min, _INT64.max)
    return low <= value <= high


@functools.cache
def _int_range(dtype) -> tuple:
    info = _np.iinfo(dtype)
    return int(info.min), int(info.max)


def _compare_out_of_range(call: _Call, inputs: tuple, loop: tuple) -> tuple:
    """NumPy compares a Python int outside an integer loop's range exactly: the answer follows
    from its sign (``int8_array < 1000`` is all True). An infinity of that sign gives the same
    answers in a float64 loop, which every integer converts to without changing its order."""
    fixed = tuple(
        (math.inf if x > 0 else -math.inf)
        if type(x) is int and d.kind in "iu" and not _fits(x, d)
        else x
        for x, d in zip(inputs, loop)
    )
    if fixed == inputs:
        return loop, inputs
    return resolve(call, fixed)


# --- building the nodes --------------------------------------------------------------------


def scalar_node(value, dtype) -> Node:
    """A 0-d constant of ``dtype`` holding a Python or NumPy scalar, converted as NumPy does."""
    dtype = _np.dtype(dtype)
    if type(value) is float and dtype.kind == "f" and dtype.itemsize >= 4:
        with _np.errstate(over="ignore"):  # (an overflow is the caller's: _overflow_in_cast)
            return node(Op.CONST, (), dtype.type(value), (), dtype)  # rounded as NumPy
    with _np.errstate(all="ignore"):
        if type(value) is int and dtype.kind in "fc":
            v = _np.array(value, dtype=dtype)[()]  # as NumPy packs it: 2**1000 is inf, no error
        else:
            v = _np.asarray(value).astype(dtype)[()]
    return node(Op.CONST, (), v, (), dtype)


def as_loop_node(x, dtype, shape) -> Node:
    """Operand ``x`` as a node of ``dtype`` broadcast to ``shape`` (on every traced call)."""
    if (type(x) is ndarray and x._identity and x._dtype is dtype and x._view.shape == shape
            and x._storage.error is None):  # fmt: skip
        return x._storage.version  # the common case: a whole array, as the loop reads it
    if isinstance(x, ndarray):
        if not x._identity and x._dtype == dtype and x._view.shape != shape:
            if x._storage.error is not None:
                raise x._storage.error
            return view_node(x._base(), broadcast_view(x._view, shape))  # one VIEW node
        n = x._node()
        if n.dtype != dtype:
            n = node(Op.CAST, (n,), None, n.shape, dtype)
        return broadcast_node(n, shape)
    t = type(x)
    if t is float or t is int or t is bool:
        return _python_scalar(x, dtype, shape)
    return broadcast_node(scalar_node(x, dtype), shape)


# (dtype, shape, type, value) -> the broadcast constant: the scalars of a program (0.5, 2, 1.0)
# come back on every traced call. Floats are keyed by their hex form (0.0 and -0.0 differ).
_scalars: dict = {}


def _python_scalar(x, dtype, shape) -> Node:
    t = type(x)
    key = (dtype, shape, t, x.hex() if t is float and (x == 0.0 or x != x) else x)
    n = _scalars.get(key)
    if n is None:
        constant = scalar_node(x, dtype)
        n = broadcast_node(constant, shape)
        if eager.overflows_in_cast(x, dtype):
            _overflow_in_cast(x, dtype)  # (each call: such a constant is not kept)
            return n
        if len(_scalars) >= 4096:
            _scalars.clear()
        _scalars[key] = n
    return n


def _overflow_in_cast(x, dtype) -> None:
    """NumPy's floating-point error for a Python number that overflows ``dtype``, under the
    caller's error state: a warning at the user's line, a FloatingPointError, the handler."""
    with recorded_warnings() as caught:
        _np.array(float(x)).astype(dtype)
    for w in caught:
        warn_at_user(w.message, w.category)


def _shape(x) -> tuple:
    return x.shape if isinstance(x, (ndarray, _np.ndarray)) else ()


def _zero_strided(x):
    """A NumPy stand-in with x's shape and dtype that takes no memory."""
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, x.dtype), x.shape, (0,) * x.ndim)


def _broadcast_shape(uf, inputs, outs, mask) -> tuple:
    """The call's shape; for operands that do not broadcast, NumPy's own error."""
    out_shapes = [o.shape for o in outs if o is not None]
    mask_shapes = [] if mask is None else [mask.shape]
    shape = broadcast_shapes(*[_shape(x) for x in inputs], *out_shapes, *mask_shapes)
    if shape is not None and all(s == shape for s in out_shapes):
        return shape
    stand_ins = [_zero_strided(x) if isinstance(x, ndarray) else x for x in inputs]
    kwargs = {"out": tuple(None if o is None else _zero_strided(o) for o in outs)}
    if mask is not None:
        kwargs["where"] = _zero_strided(mask)
    with _np.errstate(all="ignore"):
        uf._np(*stand_ins, **kwargs)
    raise AssertionError("numloom and NumPy disagree about broadcasting")  # pragma: no cover


def _device_of(values) -> str | None:
    for v in values:
        if isinstance(v, ndarray):
            return v.device
    return None


class _Plain:
    """What a plain call of one ufunc on one combination of operand types needs: its loop,
    and whether a scalar's value can still send the call to ``apply``."""

    __slots__ = ("loop", "check", "slow", "names", "raising", "bounds")

    def __init__(self, uf: ufunc, loop: tuple, keys: tuple):
        self.loop = loop
        self.check = any(k is int for k in keys) or uf.__name__ == "power"
        # what ``_value_matters`` checks, for the compiled path: the range each Python int
        # operand must lie in (None: a power, whose exponent's sign matters, checks in Python)
        self.bounds = None if uf.__name__ == "power" else tuple(
            (_int_range(d) if d.kind in "iu" else (int(_INT64.min), int(_INT64.max)))
            if k is int else None
            for k, d in zip(keys, loop)
        )  # fmt: skip
        self.slow = (
            uf.__name__ == "power" and loop[1].kind == "i" and isinstance(keys[1], _np.dtype)
        )
        self.names = (
            (uf.__name__,) if uf.nout == 1 else tuple(f"{uf.__name__}.{k}" for k in range(uf.nout))
        )
        self.raising = fperrors.raising(self.names[0], loop[0])  # (records its error state)


_ARRAY_TYPES = (ndarray, _Scalar)

# (ufunc, operand type keys) -> _Plain, for calls with no out/where/dtype/casting.
_plain_loops: dict = {}


_HOST_SCALARS = frozenset(_PY_SCALARS) | {
    t for t in _np.sctypeDict.values() if issubclass(t, _np.generic)
}


def _scalars_only(args: tuple, kwargs: dict) -> bool:
    """Whether a ufunc call has scalars for operands (Python's or NumPy's, as ``x[i]`` gives)
    and no numloom array among its keywords. NumPy computes it at once, as it would: a NumPy
    scalar back in well under a microsecond, its warnings at the call, where a traced 0-d
    result would be a node to plan and, once read, a sync."""
    if not args:
        return False
    for a in args:
        if type(a) not in _HOST_SCALARS:
            return False
    for v in kwargs.values():
        if isinstance(v, ndarray) or (type(v) is tuple and any(isinstance(o, ndarray) for o in v)):
            return False
    return True


def _plain_call(uf: ufunc, args: tuple):
    """``uf(*args)`` for arrays and scalars with nothing else given: the common call of every
    operator, on a short path (a cached loop, no stand-ins). None when the call needs
    ``apply``: other operand types, a shape NumPy must check, a value that matters.

    Every traced operation comes here: kept short."""
    if eager.wants(args):  # (an array of a data-dependent loop: NumPy's call, now)
        made = eager.call(uf, args)
        if made is not None:
            return made
    if len(args) == 2:
        x, y = args
        tx, ty = type(x), type(y)
        if tx is _Scalar:  # (a 0-d result: an array here)
            tx = ndarray
        if ty is _Scalar:
            ty = ndarray
        kx = x._dtype if tx is ndarray else _SCALAR_KEYS.get(tx)
        ky = y._dtype if ty is ndarray else _SCALAR_KEYS.get(ty)
        if kx is None or ky is None:
            return None
        keys = (uf, kx, ky)
    elif len(args) == 1:
        x = args[0]
        kx = x._dtype if type(x) in _ARRAY_TYPES else _SCALAR_KEYS.get(type(x))
        if kx is None:
            return None
        keys = (uf, kx)
    else:
        keys = [uf]
        for x in args:
            k = x._dtype if type(x) in _ARRAY_TYPES else _SCALAR_KEYS.get(type(x))
            if k is None:
                return None
            keys.append(k)
        keys = tuple(keys)
    plain = _plain_loops.get(keys)
    if plain is None:
        call = _Call(uf, (None,) * uf.nout, None, "same_kind", None, None)
        loop, inputs = resolve(call, args)  # NumPy's errors for a bad call
        if inputs is not args:
            return None
        plain = _plain_loops[keys] = _Plain(uf, loop, keys[1:])
    elif plain.check and _value_matters(uf, args, plain.loop):
        return None
    if plain.slow:
        return None  # apply records the user's line for the error (_raises_for_data)
    loop = plain.loop
    if len(args) == 2:
        if tx is ndarray:
            shape, device = x._view.shape, x._storage.device
            if ty is ndarray and y._view.shape != shape:
                shape = broadcast_shapes(shape, y._view.shape)
                if shape is None:
                    return None  # apply raises NumPy's broadcast error
        elif ty is ndarray:
            shape, device = y._view.shape, y._storage.device
        else:
            shape, device = (), None
        srcs = (as_loop_node(x, loop[0], shape), as_loop_node(y, loop[1], shape))
    elif len(args) == 1:
        if type(x) in _ARRAY_TYPES:
            shape, device = x._view.shape, x._storage.device
        else:
            shape, device = (), None
        srcs = (as_loop_node(x, loop[0], shape),)
    else:
        shape, device = None, None
        for x in args:
            if type(x) in _ARRAY_TYPES:
                if shape is None:
                    shape, device = x._view.shape, x._storage.device
                elif x._view.shape != shape:
                    shape = broadcast_shapes(*[_shape(y) for y in args])
                    if shape is None:
                        return None  # apply raises NumPy's broadcast error
                    break
        if shape is None:
            shape = ()
        srcs = tuple([as_loop_node(x, d, shape) for x, d in zip(args, loop)])
    names = plain.names
    if len(names) == 1:
        n = map_node(srcs, names[0], shape, loop[-1])
        if plain.raising:
            fperrors.record(n, _dag.user_line())
        return result(n, device)
    nin = len(args)
    nodes = [map_node(srcs, name, shape, loop[nin + k]) for k, name in enumerate(names)]
    if plain.raising:
        line = _dag.user_line()
        for n in nodes:
            fperrors.record(n, line)
    return tuple(result(n, device) for n in nodes)


_SCALAR_KEYS = {float: float, int: int, complex: complex, bool: _np.dtype(bool)}


_BOOL = _np.dtype(bool)


_OWN_TYPES = frozenset({int, float, complex, bool, str, type(None), list, tuple})
_KNOWN = (ndarray, _np.ndarray, _np.generic)


def _foreign(x) -> bool:
    """Whether ``x`` is an object of another library (not numloom's, NumPy's or Python's)."""
    return type(x) not in _OWN_TYPES and not isinstance(x, _KNOWN)


def _handed_over(uf: ufunc, args: tuple, given: dict):
    """NumPy's ufunc override (NEP 13) for operands of other libraries: an operand whose type
    has its own ``__array_ufunc__`` (a Dask array, an xarray object) takes the call, handed
    NumPy's ufunc (whose work on numloom data comes back to numloom) and the keywords the
    caller gave, outputs as a tuple. ``_NOT_GIVEN`` where no operand takes it."""
    out = given.get("out", _NOT_GIVEN)
    if len(args) > uf.nin:  # (positional outputs: handed over as ``out=``)
        args, out = args[: uf.nin], tuple(args[uf.nin :])
    outs = [] if out is _NOT_GIVEN or out is None else list(out) if type(out) is tuple else [out]
    operands = list(args) + outs
    foreign = [x for x in operands if _foreign(x)]
    if not foreign:
        return _NOT_GIVEN
    kwargs = dict(given)
    if out is not _NOT_GIVEN:
        kwargs["out"] = out if type(out) is tuple else (out,)
    tried = []
    for x in foreign:
        t = type(x)
        override = getattr(t, "__array_ufunc__", _NOT_GIVEN)
        if override is _NOT_GIVEN or t in tried:
            continue
        if override is None:
            raise TypeError(f"operand '{t.__name__}' does not support ufuncs "
                            "(__array_ufunc__=None)")  # fmt: skip
        tried.append(t)
        result = override(x, uf._np, "__call__", *args, **kwargs)
        if result is NotImplemented and any(isinstance(a, ndarray) for a in operands):
            # (a library that knows NumPy's arrays only, pandas' Series, defers to numloom's:
            # it gets them as NumPy arrays, the memory numloom's exports share, and answers
            # as it answers NumPy, with a Series)
            exported, kw = _exported(args), dict(kwargs)
            if "out" in kw:
                kw["out"] = _exported(kw["out"])
            result = override(x, uf._np, "__call__", *exported, **kw)
        if result is not NotImplemented:
            return result
    if tried:  # (NumPy's message: the call, then every operand's type)
        shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        names = ", ".join(repr(type(x).__name__) for x in operands)
        raise TypeError(f"operand type(s) all returned NotImplemented from __array_ufunc__("
                        f"{uf._np!r}, '__call__', {', '.join(shown)}): {names}")  # fmt: skip
    return _NOT_GIVEN


NOT_OVERRIDDEN = _NOT_GIVEN
_TEXT = (str, bytes)


def _exported(values) -> tuple:
    """``values`` with numloom arrays as NumPy's (``numpy.asarray``: on the CPU their memory)."""
    return tuple(_np.asarray(v) if isinstance(v, ndarray) else v for v in values)


class _Function:
    """A NumPy function that is not a ufunc (``matmul`` is one in NumPy, not in numloom) as
    ``_handed_over`` and ``operator_override`` take it."""

    def __init__(self, fn, nin: int):
        self._np, self.nin, self.__name__ = fn, nin, fn.__name__


MATMUL = _Function(_np.matmul, 2)


def operator_override(uf: ufunc, a, b):
    """NumPy's operators with an operand of another library: a forward operator returns
    ``NotImplemented`` where the other operand's ``__array_ufunc__`` is None (Python then calls
    its reflected method); otherwise the ufunc call goes to the ``__array_ufunc__`` that takes
    it (``_handed_over``: NumPy's errors where none does). ``NOT_OVERRIDDEN``: numloom's own."""
    if uf._np is _np.multiply and (type(a) in _TEXT or type(b) in _TEXT):
        other = b if type(a) in _TEXT else a
        if isinstance(other, ndarray) and other.ndim == 0 and other.dtype.kind in "iub":
            return NotImplemented  # ("ab" * np.sum(n): Python's repetition, as of NumPy's int)
    if type(b) is not _np.ndarray and isinstance(b, _np.ndarray):
        # A NumPy ndarray subclass (np.matrix, a masked array) takes the operator as NumPy's
        # arrays let it, being their subclass (Python calls its reflected method first):
        # ``x * m`` is np.matrix's product
        return NotImplemented
    foreign_b = _foreign(b)
    if not foreign_b and not _foreign(a):
        return NOT_OVERRIDDEN  # (the common case, at once)
    if foreign_b and getattr(type(b), "__array_ufunc__", _NOT_GIVEN) is None:
        return NotImplemented
    return _handed_over(uf, (a, b), {})


def apply(uf: ufunc, args: tuple, out, where, casting: str, dtype, signature=None):
    """Record ``uf(*args)`` and return its lazy result(s), written into ``out`` if given."""
    inputs = tuple(_as_input(a) for a in args)
    targets = _out_arrays(out, uf.nout)
    outs = tuple(None if t is None else asarray(t) for t in targets)
    mask = None if where is True else _as_mask(where)
    out_dtypes = tuple(None if o is None else o.dtype for o in outs)
    call = _Call(uf, out_dtypes, mask, casting, dtype, signature)
    loop, inputs = resolve(call, inputs)
    shape = _broadcast_shape(uf, inputs, outs, mask)
    srcs = tuple(as_loop_node(x, d, shape) for x, d in zip(inputs, loop))
    names = [uf.__name__] if uf.nout == 1 else [f"{uf.__name__}.{k}" for k in range(uf.nout)]
    where_from = _dag.user_line() if _raises_for_data(uf, inputs, loop) else None
    nodes = [node(Op.MAP, srcs, name, shape, loop[uf.nin + k], where=where_from)
             for k, name in enumerate(names)]  # fmt: skip
    keep = None if mask is None else as_loop_node(mask, _np.dtype(bool), shape)
    if fperrors.raising(names[0], loop[0]):  # NumPy's error state at this call, for the sync
        line = where_from or _dag.user_line()
        for n in nodes:
            fperrors.record(n, line, keep)
    if keep is not None:
        nodes = _apply_where(keep, nodes, outs, shape)
    device = _device_of(inputs + outs)
    results = tuple(_deliver(n, o, t, device) for n, o, t in zip(nodes, outs, targets))
    return results[0] if uf.nout == 1 else results


def _deliver(n: Node, o, target, device):
    """The output: a new array, or ``n`` written into ``out`` (copied back to a NumPy out)."""
    if o is None:
        return result(n, device)
    o._assign(n)
    if target is not o:
        target[...] = o.get()
    return target


def _apply_where(keep: Node, nodes, outs, shape):
    """Where the mask ``keep`` is False an output keeps its old value (zeros when no ``out``
    is given: NumPy leaves that memory uninitialized)."""
    kept = []
    for n, o in zip(nodes, outs):
        if o is not None:  # select in out's dtype, as NumPy casts before it writes
            old = o._node()
            if n.dtype != old.dtype:
                n = node(Op.CAST, (n,), None, n.shape, old.dtype)
        else:
            old = scalar_node(0, n.dtype)
        kept.append(node(Op.MAP, (keep, n, broadcast_node(old, shape)), "where", shape, n.dtype))
    return kept

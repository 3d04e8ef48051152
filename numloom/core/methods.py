"""The ndarray's operators and NumPy methods: each calls the namespace function of the same
name (``a + b`` is ``numloom.add(a, b)``, ``a.sum()`` is ``numloom.sum(a)``), so they are NumPy's
signatures over numloom's functions. ``ndarray`` (``array.py``) inherits them. The namespace is
``api/``, above this folder: it binds itself here as it loads (``array.bind_namespace``)."""

from __future__ import annotations

import pickle as _pickle

import numpy as _np

from . import realize as _realize

_namespace = None  # the numloom.api package: its modules (fallback, ...)
_api = None  # numloom.api.numpy_api: the namespace's functions
_plain_call = None  # numloom.api.ufuncs._plain_call: a ufunc call's fast path


def bind(api) -> None:
    global _namespace, _api, _plain_call
    _namespace, _api, _plain_call = api, api.numpy_api, api.ufuncs._plain_call


def _binary(uf, a, b):
    """``uf(a, b)`` for an operator: the plain call first (most operators are one), else the
    ufunc's whole call (``uf._call``), without going through ``uf.__call__``. An operand of
    another library takes the call as NumPy's operators let it (``ufuncs.operator_override``:
    a Dask array's ``__array_ufunc__``, or ``NotImplemented`` for Python's reflected method)."""
    made = _plain_call(uf, (a, b))
    if made is not None:
        return made
    made = _namespace.ufuncs.operator_override(uf, a, b)
    return made if made is not _namespace.ufuncs.NOT_OVERRIDDEN else uf._call(a, b)


def _reduced_now(np_fn, a, axis, dtype=None, out=None, keepdims=False, kw=None, ddof=0):
    """``np_fn(a, axis)`` (NumPy's reduction, its other arguments at their defaults) run now by
    NumPy, for a loop's small marked array on the CPU (api/eager.py: ``x.mean(0)`` of a tree's
    split costs what NumPy's does), with NumPy's result (a scalar for a whole reduction); None
    where the method takes its traced path (an array not marked, pending or large, an axis not
    one int, another argument given)."""
    if (not a._storage.eager or dtype is not None or out is not None or keepdims or kw
            or ddof != 0):  # fmt: skip
        return None
    now = _namespace.eager.FUNCTION_NOW[0]
    if now is None:
        return None
    if axis is None:
        return now(np_fn, (a,))
    return now(np_fn, (a, axis)) if type(axis) is int else None


def _matmul(a, b):
    """``a @ b``: numloom's, unless an operand of another library takes it as it takes NumPy's
    (a DataFrame's ``__array_ufunc__``, or ``NotImplemented`` for Python's reflected method)."""
    ufuncs = _namespace.ufuncs
    made = ufuncs.operator_override(ufuncs.MATMUL, a, b)
    return made if made is not ufuncs.NOT_OVERRIDDEN else _namespace.other_dtypes.matmul(a, b)


_IN_PLACE_OPERANDS = (int, float, complex, _np.generic)  # (with numloom's arrays)


def _inplace(uf, a, b):
    """``a op= b``, NumPy's ``uf(a, b, out=a)``: by the plain call where that is NumPy's answer
    (``ufuncs.plain_into``), else the ufunc's whole call with ``out``. A loop's small array
    (api/eager.py) with a numloom array or a scalar takes the compiled call ``uf(a, b, a)``,
    which updates its memory at once (``w -= lr * grad``: 2.3 us through Python, 0.8 there)."""
    ufuncs = _namespace.ufuncs
    if type(a) is ufuncs.ndarray and (type(b) is ufuncs.ndarray or type(b) is ufuncs._Scalar
                                      or isinstance(b, _IN_PLACE_OPERANDS)):  # fmt: skip
        storage = a._storage
        if storage.eager:
            uf(a, b, a)
            return a
        if (_realize.large_computed(storage) and a.size <= _namespace.eager.EAGER_ELEMENTS
                and _namespace.eager.call(uf, (a, b), a) is not None):  # fmt: skip
            # (a small view of a large computed array, updated by a scalar or a computed array:
            # NumPy's call on its memory now, as a sieve's ``phi[i:j] -= 1`` wants; traced,
            # each update was a new version of the whole array. Small arrays keep the traced
            # path, where their work fuses, until a loop marks them)
            return a
    return a if ufuncs.plain_into(uf, (a, b), a) else uf._call(a, b, out=a)


def _call_method(a, name: str, *args, **kwargs):
    """NumPy's method ``name`` run over the array's memory (what it writes is written)."""
    return _namespace.fallback.call_method(a, name, *args, **kwargs)


def _numpy_message(fn) -> str:
    """The message of the error NumPy raises for ``fn()`` (it changes between versions)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (only the text is wanted)
        return str(e)
    return ""


_NO_IMAGINARY_PART = _numpy_message(lambda: setattr(_np.zeros(1), "imag", 1))


class Methods:
    """NumPy's operators and methods of ``ndarray``, over the namespace's functions."""

    __slots__ = ()

    # --- operators -------------------------------------------------------------------------------

    def __add__(self, o): return _binary(_api.add, self, o)
    def __radd__(self, o): return _binary(_api.add, o, self)
    def __iadd__(self, o): return _inplace(_api.add, self, o)
    def __sub__(self, o): return _binary(_api.subtract, self, o)
    def __rsub__(self, o): return _binary(_api.subtract, o, self)
    def __isub__(self, o): return _inplace(_api.subtract, self, o)
    def __mul__(self, o): return _binary(_api.multiply, self, o)
    def __rmul__(self, o): return _binary(_api.multiply, o, self)
    def __imul__(self, o): return _inplace(_api.multiply, self, o)
    def __truediv__(self, o): return _binary(_api.divide, self, o)
    def __rtruediv__(self, o): return _binary(_api.divide, o, self)
    def __itruediv__(self, o): return _inplace(_api.divide, self, o)
    def __floordiv__(self, o): return _binary(_api.floor_divide, self, o)
    def __rfloordiv__(self, o): return _binary(_api.floor_divide, o, self)
    def __ifloordiv__(self, o): return _inplace(_api.floor_divide, self, o)
    def __mod__(self, o): return _binary(_api.remainder, self, o)
    def __rmod__(self, o): return _binary(_api.remainder, o, self)
    def __imod__(self, o): return _inplace(_api.remainder, self, o)
    def __divmod__(self, o): return _api.divmod(self, o)
    def __rdivmod__(self, o): return _api.divmod(o, self)
    def __pow__(self, o, mod=None): return _api.power_operator(self, o)
    def __rpow__(self, o): return _api.power(o, self)
    def __ipow__(self, o): return _api.power_operator(self, o, out=self)
    def __matmul__(self, o): return _matmul(self, o)
    def __rmatmul__(self, o): return _matmul(o, self)
    def __imatmul__(self, o): return _namespace.other_dtypes.matmul(self, o, out=self)
    def __and__(self, o): return _binary(_api.bitwise_and, self, o)
    def __rand__(self, o): return _binary(_api.bitwise_and, o, self)
    def __iand__(self, o): return _inplace(_api.bitwise_and, self, o)
    def __or__(self, o): return _binary(_api.bitwise_or, self, o)
    def __ror__(self, o): return _binary(_api.bitwise_or, o, self)
    def __ior__(self, o): return _inplace(_api.bitwise_or, self, o)
    def __xor__(self, o): return _binary(_api.bitwise_xor, self, o)
    def __rxor__(self, o): return _binary(_api.bitwise_xor, o, self)
    def __ixor__(self, o): return _inplace(_api.bitwise_xor, self, o)
    def __lshift__(self, o): return _binary(_api.left_shift, self, o)
    def __rlshift__(self, o): return _binary(_api.left_shift, o, self)
    def __ilshift__(self, o): return _inplace(_api.left_shift, self, o)
    def __rshift__(self, o): return _binary(_api.right_shift, self, o)
    def __rrshift__(self, o): return _binary(_api.right_shift, o, self)
    def __irshift__(self, o): return _inplace(_api.right_shift, self, o)
    def __neg__(self): return _api.negative(self)
    def __pos__(self): return _api.positive(self)
    def __abs__(self): return _api.absolute(self)
    def __invert__(self): return _api.invert(self)
    def __lt__(self, o): return _api.compare(_api.less, self, o)
    def __le__(self, o): return _api.compare(_api.less_equal, self, o)
    def __gt__(self, o): return _api.compare(_api.greater, self, o)
    def __ge__(self, o): return _api.compare(_api.greater_equal, self, o)
    def __eq__(self, o): return _api.compare(_api.equal, self, o)
    def __ne__(self, o): return _api.compare(_api.not_equal, self, o)


    @property
    def T(self): return _api.transpose(self)
    @property
    def mT(self): return _api.matrix_transpose(self)
    @property
    def real(self): return _api.real(self)
    @real.setter
    def real(self, value): _api.setitem(_api.real(self), Ellipsis, value)
    @property
    def imag(self): return _api.imag(self)
    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError(_NO_IMAGINARY_PART)
        _api.setitem(_api.imag(self), Ellipsis, value)
    def copy(self, order="C"): return _api.copy(self, order)
    def fill(self, value): _api.setitem(self, Ellipsis, value)
    def reshape(self, *shape, order="C", copy=None):
        return _api.reshape(self, shape[0] if len(shape) == 1 else shape, order=order, copy=copy)
    def ravel(self, order="C"): return _api.ravel(self, order)
    def flatten(self, order="C"): return _api.ravel(self, order).copy()
    def transpose(self, *axes):
        return _api.transpose(self, axes[0] if len(axes) == 1 else (axes or None))
    def swapaxes(self, axis1, axis2): return _api.swapaxes(self, axis1, axis2)
    def squeeze(self, axis=None): return _api.squeeze(self, axis)
    def conj(self): return _api.conjugate(self) if self.dtype.kind == "c" else self
    def conjugate(self): return _api.conjugate(self) if self.dtype.kind == "c" else self
    def clip(self, min=None, max=None, out=None, **kw): return _api.clip(self, min, max, out, **kw)
    def round(self, decimals=0, out=None): return _api.round(self, decimals, out)
    def nonzero(self): return _api.nonzero(self)
    def take(self, indices, axis=None, out=None, mode="raise"):
        return _api.take(self, indices, axis, out, mode)
    def repeat(self, repeats, axis=None): return _api.repeat(self, repeats, axis)
    def diagonal(self, offset=0, axis1=0, axis2=1): return _api.diagonal(self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return _api.trace(self, offset, axis1, axis2, dtype, out)
    def dot(self, b, out=None): return _api.dot(self, b, out)
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.sum, self, axis, dtype, out, keepdims, kw)
        return made if made is not None else _api.sum(self, axis, dtype, out, keepdims, **kw)
    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.prod, self, axis, dtype, out, keepdims, kw)
        return made if made is not None else _api.prod(self, axis, dtype, out, keepdims, **kw)
    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.mean, self, axis, dtype, out, keepdims, kw)
        return made if made is not None else _api.mean(self, axis, dtype, out, keepdims, **kw)
    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        made = _reduced_now(_np.var, self, axis, dtype, out, keepdims, kw, ddof)
        return made if made is not None else _api.var(self, axis, dtype, out, ddof, keepdims,
                                                      **kw)  # fmt: skip
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        made = _reduced_now(_np.std, self, axis, dtype, out, keepdims, kw, ddof)
        return made if made is not None else _api.std(self, axis, dtype, out, ddof, keepdims,
                                                      **kw)  # fmt: skip
    def max(self, axis=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.max, self, axis, None, out, keepdims, kw)
        return made if made is not None else _api.max(self, axis, out, keepdims, **kw)
    def min(self, axis=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.min, self, axis, None, out, keepdims, kw)
        return made if made is not None else _api.min(self, axis, out, keepdims, **kw)
    def argmax(self, axis=None, out=None, *, keepdims=False):
        made = _reduced_now(_np.argmax, self, axis, None, out, keepdims)
        return made if made is not None else _api.argmax(self, axis, out, keepdims=keepdims)
    def argmin(self, axis=None, out=None, *, keepdims=False):
        made = _reduced_now(_np.argmin, self, axis, None, out, keepdims)
        return made if made is not None else _api.argmin(self, axis, out, keepdims=keepdims)
    def any(self, axis=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.any, self, axis, None, out, keepdims, kw)
        return made if made is not None else _api.any(self, axis, out, keepdims, **kw)
    def all(self, axis=None, out=None, keepdims=False, **kw):
        made = _reduced_now(_np.all, self, axis, None, out, keepdims, kw)
        return made if made is not None else _api.all(self, axis, out, keepdims, **kw)
    def cumsum(self, axis=None, dtype=None, out=None): return _api.cumsum(self, axis, dtype, out)
    def cumprod(self, axis=None, dtype=None, out=None): return _api.cumprod(self, axis, dtype, out)
    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        _api.sort_inplace(self, axis, kind, order, stable)
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return _api.argsort(self, axis, kind, order, stable=stable)
    def partition(self, kth, axis=-1, kind="introselect", order=None):
        _api.partition_inplace(self, kth, axis, kind, order)
    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return _api.argpartition(self, kth, axis, kind, order)
    def searchsorted(self, v, side="left", sorter=None):
        return _api.searchsorted(self, v, side, sorter)
    # NumPy's methods, run through NumPy (what they write is written into this array)
    def put(self, indices, values, mode="raise"):
        _call_method(self, "put", indices, values, mode)
    def compress(self, condition, axis=None, out=None):
        return _call_method(self, "compress", condition, axis, out=out)
    def choose(self, choices, out=None, mode="raise"):
        return _call_method(self, "choose", choices, out=out, mode=mode)
    def byteswap(self, inplace=False):
        if not inplace:
            return _api.asarray(_np.asarray(self).byteswap(), device=self.device)
        return _call_method(self, "byteswap", True)
    def setfield(self, val, dtype, offset=0): _call_method(self, "setfield", val, dtype, offset)
    def getfield(self, dtype, offset=0):
        return _api.asarray(_np.asarray(self).getfield(dtype, offset), device=self.device)
    def setflags(self, write=None, align=None, uic=None):
        if write is not None:
            self.flags.writeable = write
    def to_device(self, device, /, *, stream=None): return _api.asarray(self, device=device)
    def tobytes(self, order="C"): return _np.asarray(self).tobytes(order)
    def tofile(self, fid, sep="", format="%s"): _np.asarray(self).tofile(fid, sep, format)
    def dumps(self): return _pickle.dumps(self)
    def dump(self, file): _np.asarray(self).dump(file)

"""``numloom.ndarray``: a lazy handle on a view of a storage.

An array is a ``Storage`` (whose current version is a DAG node) seen through a ``View``. Views
share the storage, so a write through any of them (a new version of the storage) is seen by all.
A handle's dtype may differ from its storage's (``z.real`` of a complex ``z``, ``a.view(dtype)``):
its view then counts elements of its own dtype in the storage's bytes (a ``BITCAST``).
Reading an array builds a VIEW of the storage's current version; nothing is computed until a
sync point (conversion to host, ``repr``, ``numloom.sync()``...).
"""

from __future__ import annotations

import functools
import sys
import types as _types
import warnings
from sys import getrefcount as _getrefcount

import numpy as _np

from . import config, fperrors, host, methods, realize
from . import dag as _dag
from .dag import Node, Op, View, node, prod
from .device import get_device
from .host import (
    _INTEGERS,
    _SCALARS,
    HostAccess,
    _full_integer,
    _int_prefix,
    _is_identity,
    _row,
    quiet_store,
)
from .methods import Methods, _numpy_message
from .realize import Storage, buffer_node
from .views import (
    bitcast_node,
    view_node,
)


def _handle_base():
    """The handle's base: ``numloom.core._speedups.Handle`` (its storage, flags and host view, and
    element access in C) unless it was not built or ``NUMLOOM_PURE_PYTHON=1``; else the same
    slots in Python."""
    if not config.PURE_PYTHON:
        try:
            from . import _speedups

            if all(hasattr(_speedups, name) for name in _COMPILED_NAMES):
                return _speedups
            # (an extension built from older sources: pip install -e . builds it again)
        except ImportError:
            pass
    return None


_COMPILED_NAMES = ("Handle", "UfuncBase", "install", "install_tracing", "plain_call", "structure",
                   "intern", "result", "map_result", "sweep", "call_states", "launch",
                   "slice_view", "install_views")  # fmt: skip
_speedups = _handle_base()


def _base_of(a):
    """``a._base_array``, None where unset (the compiled ``base_of`` makes no AttributeError
    for an array whose slot is empty)."""
    return getattr(a, "_base_array", None)


if _speedups is not None and hasattr(_speedups, "base_of"):
    _base_of = _speedups.base_of  # noqa: F811 (the same, compiled)


class _PythonHandle:
    __slots__ = ("_storage", "_readonly", "_host", "_view", "_dtype", "_identity")


class ndarray(_PythonHandle if _speedups is None else _speedups.Handle, HostAccess, Methods):
    """An N-dimensional array whose operations are recorded lazily and run fused."""

    __slots__ = ("__weakref__", "_base_array")  # (the array a view's memory is: ``base``)
    __array_priority__ = 100.0
    # SymPy's protocol for other libraries' arrays: above its expressions' 10.0, ``Float(2) * x``
    # asks ``x.__rmul__`` (an object array, as with NumPy's arrays) instead of converting x
    # with ``float(x)``, which raises for more than one element
    _op_priority = 10.005

    def __init__(self, *args, **kwargs):
        if getattr(self, "_storage", None) is not None:
            return  # a subclass's __new__ made it (``asarray(x).view(cls)``): NumPy's does nothing
        _construct(self, *args, **kwargs)
        if type(self).__array_finalize__ is not ndarray.__array_finalize__:
            self.__array_finalize__(None)  # (``ndarray.__new__(cls, shape)``: NumPy's call)

    def __array_finalize__(self, obj, /) -> None:
        """Called on a new view as a subclass (``a.view(cls)``); subclasses override it."""

    def __init_subclass__(cls, **kwargs):
        """A program's subclass: the methods NumPy's give results of the subclass from
        (``KEEPS_CLASS_METHODS``) give them here too, where the subclass does not define them
        itself (numloom's own subclasses and the plain class pay nothing)."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("numloom."):
            return
        for name, keeps in KEEPS_CLASS_METHODS.items():
            method = getattr(cls, name, None)
            if method is not None and method is getattr(ndarray, name, None):
                setattr(cls, name, _keeping_class(method, keeps))

    def __class_getitem__(cls, item, /):
        """``np.ndarray[Any, np.dtype[np.float64]]`` in annotations: a generic alias, as NumPy's
        (one or two arguments: shape type and dtype)."""
        count = len(item) if type(item) is tuple else 1
        if count not in (1, 2):
            raise TypeError(f"Too {'many' if count > 2 else 'few'} arguments for {cls.__qualname__}")
        return _types.GenericAlias(cls, item)

    # --- what the array is -------------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        return self._view.shape

    @shape.setter
    def shape(self, value) -> None:
        from .views import reshape_view

        stand_in = _namespace.shapes._contiguous_stand_in(self.shape)
        new_shape = _np.reshape(stand_in, value).shape  # NumPy's errors
        view = reshape_view(self._view, new_shape)
        if view is None:
            raise AttributeError(
                "Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                "with the desired shape."
            )
        self._view, self._identity = view, _is_identity(self._storage, view, self._dtype)
        self._host = None

    @shape.deleter
    def shape(self) -> None:
        raise AttributeError("Cannot delete array shape")

    @property
    def dtype(self) -> _np.dtype:
        return self._dtype

    @dtype.setter
    def dtype(self, value) -> None:
        _set_dtype(self, value)

    @property
    def data(self) -> memoryview:
        """NumPy's ``a.data``: a memoryview of the array's memory (on a GPU, of a read-only
        host copy, as ``numpy.asarray(a)`` is there)."""
        if _speedups is None:  # (the Python handle exports no buffer: its host memory's)
            return memoryview(_np.asarray(self))
        return memoryview(self)

    @property
    def ndim(self) -> int:
        return len(self._view.shape)

    @property
    def size(self) -> int:
        return prod(self._view.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        if self.size == 0:  # NumPy 2 gives empty arrays zero strides
            return (0,) * self.ndim
        return tuple(s * self.dtype.itemsize for s in self._view.strides)

    @property
    def device(self) -> str:
        return self._storage.device

    @property
    def flags(self):
        """NumPy's flags object: ``a.flags.writeable = False`` makes writes raise."""
        return _namespace.flags.flagsobj(self)

    @property
    def flat(self):
        """NumPy's flat iterator: ``a.flat[k]``, ``a.flat[::2] = 0``, ``for v in a.flat``."""
        return _namespace.flags.flatiter(self)

    @flat.setter
    def flat(self, value) -> None:
        self.flat[...] = value

    @property
    def base(self):
        """NumPy's ``base``: for a view, the array whose memory it shares (the one that owns
        it, as NumPy collapses a view of a view); None for an array that owns its memory."""
        return _base_of(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # --- the node of the current value --------------------------------------------------------

    def _node(self) -> Node:
        storage = self._storage
        if storage.error is not None:
            raise storage.error
        if self._identity:
            return storage.version
        version, view = storage.version, self._view
        if version.op is not _VIEW and version.dtype == self._dtype:
            # (the common view, ``x[1, 1:-1]``: a view of the version itself, which is not its
            # identity (else ``_identity``), as ``view_node`` makes it without its checks)
            return _dag.checked_node(_VIEW, (version,), view, view.shape, version.dtype)
        return view_node(self._base(), view)

    def _base(self) -> Node:
        """The storage's current version as elements of this handle's dtype: when the dtypes
        differ, a flat run of them (the view's strides and offset count those elements)."""
        version = self._storage.version
        return version if version.dtype == self._dtype else bitcast_node(version, self._dtype)

    def _new_version(self, new: Node) -> None:
        """Make ``new`` (elements of this handle's dtype) the storage's current version."""
        storage = self._storage
        old = storage.version
        new = copyable(new)
        storage.version = bitcast_node(new, old.dtype, old.shape)
        if storage.version.op is not Op.BUFFER:
            realize.register(storage)
        if old.op is Op.BUFFER and old.arg.exports:  # (``numpy.asarray(x)`` held somewhere)
            realize.keep_exports(storage, old)

    def _write(self, view: View, value: Node) -> None:
        """Replace the elements ``view`` selects in this storage with ``value`` (same dtype)."""
        if self._readonly:
            raise ValueError("assignment destination is read-only")
        if self._storage.error is not None:
            raise self._storage.error
        old = self._base()
        # A value that can fail at the sync stays a SCATTER over the old version, so a failed
        # write leaves the old version in place (realize._quarantine).
        if view.is_identity(old.shape) and value.shape == old.shape and not value.fallible:
            self._new_version(value)
        else:
            self._new_version(node(Op.SCATTER, (old, value), view, old.shape, old.dtype))
        realize.written(self._storage, view.size * self._dtype.itemsize)

    def _write_at(self, positions: Node, value: Node) -> None:
        """Replace the elements at flat ``positions`` of this storage with ``value``."""
        if self._readonly:
            raise ValueError("assignment destination is read-only")
        old = self._base()
        self._new_version(node(Op.SCATTER_AT, (old, value, positions), None, old.shape, old.dtype))

    def _assign(self, value: Node) -> None:
        """``self[...] = value`` for a node already of self's shape (cast unsafely as needed)."""
        if value.dtype != self.dtype:
            value = fperrors.record_if_raising(node(Op.CAST, (value,), None, value.shape,
                                                    self.dtype))  # fmt: skip
        self._write(self._view, value)

    __hash__ = None

    # --- NumPy interoperability -----------------------------------------------------------------

    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        ours = _api.UFUNCS_BY_NAME.get(np_ufunc.__name__)
        if ours is None:
            return _namespace.fallback.call_numpy_ufunc(np_ufunc, method, inputs, kwargs)
        if method == "__call__":
            made = ours(*inputs, **kwargs)
            # NumPy's own code calling NumPy's ufunc (``_lerp``'s ``add(a, b, out=...)``,
            # whose ``out=...`` NumPy drops here) gets numloom's 0-d stand-in for a scalar
            # result run now: an array it can write into, printing as the scalar. A program's
            # call (``np.float64(x) - m`` of a 0-d ``m``) gets NumPy's scalar, as from NumPy.
            if isinstance(made, _np.generic) and _called_from_numpy():
                return _stand_in(made)
            return made
        return getattr(ours, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _namespace.fallback.dispatch_array_function(func, args, kwargs)

    def __array_namespace__(self, *, api_version=None):
        """The array API namespace of numloom arrays: numloom itself."""
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"Version \"{api_version}\" of the Array API Standard is not "
                             "supported.")  # fmt: skip
        return sys.modules[__name__.split(".")[0]]  # (the package: numloom)

    def __dlpack_device__(self) -> tuple:
        return _namespace.interop.dlpack_device(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule viewing this array's memory (evaluated first), ordered after
        numloom's work on the consumer's ``stream``."""
        return _namespace.interop.dlpack(self, stream, max_version, dl_device, copy)

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA array interface, for arrays on a CUDA device (evaluated first;
        the ``stream`` entry is numloom's stream, which consumers wait for)."""
        return _namespace.interop.cuda_array_interface(self)

    # fmt: off
    # --- indexing ---------------------------------------------------------------------------

    def __getitem__(self, key):
        t = type(key)
        if t is int or t is tuple:  # a full integer index gives NumPy's scalar, read on the host
            h = self._host
            if h is not None and not _TRACING and h[0]() is self._storage.version:
                host = h[1]
                if t is int:
                    if host.ndim == 1:
                        return host[key]
                elif len(key) == host.ndim:
                    for k in key:
                        if type(k) is not int and type(k) not in _INTEGERS:
                            break
                    else:
                        return host[key]
            elif t is int:
                if len(self._view.shape) == 1:
                    return self._host_view()[key]
            elif not (key and type(key[0]) is slice) and _full_integer(key, len(self._view.shape)):
                return self._host_view()[key]  # (a slice first: the common view, no scan)
            if t is int:
                row = _row(self, key)
                return row if type(self) in _RESULT_TYPES else _as_subclass(row, self)
            if (0 < len(key) < len(self._view.shape) and type(self) in _RESULT_TYPES
                    and all(type(k) is int for k in key)):  # fmt: skip
                return _int_prefix(self, key)
        elif isinstance(key, _np.integer) and len(self._view.shape) == 1:
            return self._host_view()[key]
        elif t is ndarray and type(self) is ndarray and key._dtype is _BOOL:
            picked = _namespace.indexing._compact_now(self, key)  # (a loop's ``z[keep]``)
            if picked is not None:
                return picked
        if type(self) not in _RESULT_TYPES:  # a subclass's views are of its class, as NumPy's
            return _as_subclass(_api.getitem(self, key), self)
        return _api.getitem(self, key)

    def __setitem__(self, key, value=None, *deleting):
        if deleting:  # (``del a[key]``: the compiled handle passes a third argument)
            _delitem(self, key)
        if type(value) in _SCALARS:
            t = type(key)
            if t is int or t is tuple:
                h = self._host
                if h is not None and h[2] is not None:  # written in place before: again
                    host = h[2]
                    version = h[0]()
                    if (
                        version is self._storage.version
                        and _getrefcount(version) <= 3
                        and _getrefcount(version.arg) <= 2
                        and (len(h) < 5 or type(version.arg) is h[4])  # (a device's mirror)
                        and not version.arg.exports
                        and not _TRACING
                        and not self._readonly
                        and ((t is int and host.ndim == 1) or
                             (t is tuple and (_full_integer(key, host.ndim) or
                                              quiet_store(key, host.ndim, value, host.dtype))))
                    ):  # fmt: skip
                        host[key] = value  # (a row or column of a grid: ``u[0, :] = 1``)
                        return
                    version = None  # (a reference held here would look like another holder)
                ndim = len(self._view.shape)
                if ((t is int and ndim == 1) or (t is tuple and _full_integer(key, ndim))) and (
                    self._set_element(key, value)
                ):
                    return
        _api.setitem(self, key, value)

    # --- methods that need the handle's internals (the rest: core/methods.py) -------------

    def copy(self, order="C"):
        made = Methods.copy(self, order)  # (a program's subclass: the copy is of its class)
        return made if type(self) in _RESULT_TYPES else _as_subclass(made, self)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        try:
            made = _api._cast(self, dtype, casting=casting, copy=copy)
        except OtherDtype:  # strings, datetimes, objects: NumPy's array
            return _np.asarray(self).astype(dtype, order, casting, subok, copy)
        if made is self:  # (copy=False: a copy only where the order asks another layout)
            if order in ("K", "k") or self._view.is_contiguous() and order in ("C", "c", "A", "a"):
                return made
            flags = self.flags
            fits = {"C": flags.c_contiguous, "F": flags.f_contiguous,
                    "A": flags.c_contiguous or flags.f_contiguous}.get(order.upper())  # fmt: skip
            return made if fits else self.copy(order)
        if self.ndim < 2 or (order in ("K", "A") and (self._identity or
                                                      self._view.is_contiguous())):
            return made
        return _namespace.creation.in_order(made, order, self)  # (laid out as order says)
    def view(self, dtype=None, type=None): return _view(self, dtype, type)
    def resize(self, *new_shape, refcheck=True): _resize(self, new_shape, refcheck)


_TRACING = realize.TRACING  # (the list itself: numloom.jit appends while it traces)


def _set_dtype(a: ndarray, value) -> None:
    """``a.dtype = value``: ``a`` becomes its own view as ``value`` (NumPy's ``a.view(value)``,
    with its errors), in place."""
    if value is None:
        raise TypeError("Cannot convert None to a dtype")  # (NumPy: not "view as the same")
    new = a.view(value)
    a._view, a._dtype = new._view, new._dtype
    a._identity, a._host = _is_identity(a._storage, new._view, new._dtype), None


def _delitem(self, key):
    raise ValueError("cannot delete array elements")


ndarray.__delitem__ = _delitem
if _speedups is not None:
    # The compiled handle reads and writes elements itself where the host view is current and
    # calls these for the rest: the class's own methods step aside for its C slots.
    getitem_slow, setitem_slow = ndarray.__getitem__, ndarray.__setitem__
    shape_setter = ndarray.shape.fset
    del ndarray.__getitem__, ndarray.__setitem__, ndarray.__delitem__
    del ndarray.shape, ndarray.dtype, ndarray.ndim  # (read from the slots in C)
    _speedups.install(getitem_slow, setitem_slow, _TRACING, _SCALARS, _INTEGERS, shape_setter,
                      quiet_store, host.QUIET_MASKS)
    _speedups.install_dtype_setter(_set_dtype)
    from . import views as _views

    _speedups.install_views(ndarray, View, _views._WARN_ON_WRITE, _is_identity,
                            host.views_host)
    host._ROW[0] = _speedups.row


def _construct(a: ndarray, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    """``numloom.ndarray(shape, dtype)``: a new array (of zeros); with ``buffer``, an array over
    that memory, as NumPy's (numloom reads it; its own writes make a new version)."""
    if buffer is None and strides is None and not offset:
        made = _api.empty(shape, dtype)
        _adopt(a, made._storage, made._view)
        return
    host = _np.ndarray(shape, dtype, buffer, offset, strides, order)  # NumPy's checks
    if host.dtype.kind not in _SUPPORTED_KINDS or not host.dtype.isnative:
        raise NotImplementedError(
            f"numloom.ndarray(buffer=...) of dtype {host.dtype} (not a numloom dtype): use "
            f"numpy.ndarray(..., buffer=...) for it")  # fmt: skip
    if not host.flags.c_contiguous:
        host = host.copy()  # (numloom shares C-ordered blocks only)
    made = _namespace.interop.share_host(host)
    _adopt(a, made._storage, made._view)



def _view(a: ndarray, dtype, cls):
    """NumPy's ``a.view(dtype, type)``: ``dtype`` may be the type, as in NumPy. A numloom
    subclass shares a's storage (its ``__array_finalize__`` called with ``a``); a NumPy
    subclass views a's host memory (read-only: numloom's buffers are never written)."""
    if cls is None and isinstance(dtype, type) and issubclass(dtype, (ndarray, _np.ndarray)):
        dtype, cls = None, dtype
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, (ndarray, _np.ndarray))):
        raise ValueError(_NOT_SUBTYPE)
    if cls is not None and issubclass(cls, _np.ndarray):
        host = _read_only_host(a)
        return host.view(cls) if dtype is None else host.view(dtype, cls)
    try:
        out = _api.view(a, dtype)
    except OtherDtype:  # a view as strings or datetimes: of the host memory, read-only
        return _read_only_host(a).view(dtype)
    if cls is None or cls is ndarray:
        return out
    return _as_subclass(out, a, cls)


# The ndarray subclasses a program has made instances of (ufunc results keep their class).
SUBCLASSES: set = set()


def _as_subclass(out, a: ndarray, cls=None):
    """``out`` (a numloom array made from ``a``) as an instance of ``cls`` (a's class) on the
    same storage, its ``__array_finalize__`` called with ``a`` as NumPy calls it."""
    if not isinstance(out, ndarray):
        return out
    cls = type(a) if cls is None else cls
    if type(out) is cls:  # (a view share() made of a's class already: finalized once)
        return out
    SUBCLASSES.add(cls)
    made = _adopt(ndarray.__new__(cls), out._storage, out._view, out._readonly, out._dtype)
    base = _base_of(out)
    if base is not None:
        made._base_array = base
    if cls.__array_finalize__ is not ndarray.__array_finalize__:
        made.__array_finalize__(a)
    return made


if hasattr(sys, "_getframemodulename"):

    def _called_from_numpy() -> bool:
        """Whether the code that called NumPy's ufunc (the frame out of ``__array_ufunc__``:
        NumPy's ufunc and scalar operators are C) is NumPy's own."""
        return (sys._getframemodulename(2) or "").startswith("numpy.")

else:  # (Python 3.11)

    def _called_from_numpy() -> bool:
        return sys._getframe(2).f_globals.get("__name__", "").startswith("numpy.")


def programs_subclass(x) -> bool:
    """Whether ``x`` is of a program's own subclass of numloom's ndarray."""
    t = type(x)
    return t is not ndarray and t not in _RESULT_TYPES and isinstance(x, ndarray)


def of_class(made, a, keeps: str = "all"):
    """``made`` (a function's or method's result from ``a``) with its numloom arrays of the
    base class as instances of ``a``'s class, finalized from ``a``, as NumPy gives them.
    ``keeps``: which of them, "all", "first" (``unique``'s values, not its indices) or
    "shaped" (``argmax`` along an axis; of the whole array, NumPy's scalar)."""
    if isinstance(made, tuple):
        if keeps == "first":
            return (of_class(made[0], a),) + made[1:]
        kept = [of_class(m, a, keeps) for m in made]
        return type(made)(*kept) if hasattr(made, "_fields") else tuple(kept)
    if isinstance(made, _np.generic) and keeps == "all":  # (NumPy's scalar: a 0-d array)
        made = asarray(made)
    if type(made) not in _RESULT_TYPES or (keeps == "shaped" and made.ndim == 0):
        return made
    return _as_subclass(made, a)


# ndarray's methods whose result is of the array's subclass, as NumPy's (``of_class``)
KEEPS_CLASS_METHODS = dict.fromkeys((
    "sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "cumsum", "cumprod",
    "astype", "argsort", "take", "repeat", "round", "clip", "dot", "compress"), "all")  # fmt: skip
KEEPS_CLASS_METHODS.update(argmax="shaped", argmin="shaped")


def _keeping_class(method, keeps: str):
    @functools.wraps(method)
    def kept(self, *args, **kwargs):
        made = method(self, *args, **kwargs)
        return made if kwargs.get("out") is not None else of_class(made, self, keeps)

    kept._keeps_class = True
    return kept


def priority_subclass(out, arrays):
    """``out``, joined from ``arrays``, of the class NumPy's joins give: the class of the
    subclass of highest ``__array_priority__`` above ndarray's 0 (finalized with None)."""
    cls, priority = None, 0.0
    for x in arrays:
        if type(x) is not ndarray and isinstance(x, ndarray):
            p = _priority(type(x))
            if p > priority:
                cls, priority = type(x), p
    return out if cls is None else _as_subclass(out, None, cls)


def _priority(cls) -> float:
    """A subclass's ``__array_priority__`` as NumPy reads it: 0 unless the program's class sets
    one (numloom's ndarray has its own, for its operators; NumPy's ndarray has 0)."""
    for c in cls.__mro__:
        if c is ndarray:
            return 0.0
        if "__array_priority__" in c.__dict__:
            return float(c.__dict__["__array_priority__"])
    return 0.0


def _read_only_host(a: ndarray) -> _np.ndarray:
    """a's value as a read-only NumPy array (on the CPU its buffer itself; on a GPU a copy,
    read-only too, so that a write into it raises instead of being lost)."""
    host = _np.asarray(a)
    host.flags.writeable = False
    return host


_RESIZE_REFERENCES = 4


def _resize(a: ndarray, new_shape: tuple, refcheck: bool) -> None:
    """NumPy's in-place ``a.resize(new_shape)``: a's data in C order, cut or padded with zeros,
    in a new storage of the new shape (views of the old one keep the old data)."""
    if len(new_shape) == 1 and not isinstance(new_shape[0], (int, _np.integer)):
        new_shape = new_shape[0]
    if not a._view.is_contiguous():
        raise ValueError("resize only works on single-segment arrays")
    if not a._identity:
        raise ValueError("cannot resize this array: it does not own its data")
    host = a.get()
    size = host.size
    host.resize(new_shape, refcheck=False)  # NumPy's shape errors
    # NumPy reallocates a's memory for a new size only where nothing else refers to a: its
    # count of references is the caller's name and the method's (here also this function's
    # argument and getrefcount's own)
    if refcheck and host.size != size and sys.getrefcount(a) > _RESIZE_REFERENCES:
        raise ValueError("cannot resize an array that references or is referenced\nby another "
                         "object in this way.\nUse the np.resize function to get a new resized "
                         "copy or\n set refcheck=False to disable this check")  # fmt: skip
    made = from_host(host, a.device)
    _adopt(a, made._storage, made._view, a._readonly)


_SCALAR_ONLY = frozenset({"hex", "is_integer", "as_integer_ratio", "bit_count"})


def _stand_in(value: _np.generic) -> ndarray:
    """NumPy's scalar ``value`` as numloom's 0-d stand-in for it (``_Scalar``)."""
    made = asarray(value)
    made.__class__ = _Scalar
    return made


class _Scalar(ndarray):
    """A 0-d result where NumPy gives a scalar (a reduction, a ufunc of scalars): lazy like any
    array, but it prints, hashes and rounds as NumPy's scalar does, and in-place operators
    make a new value (``m = x.max(); m += 1`` leaves other names of the maximum alone)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(self._host_view()[()])

    def __hash__(self) -> int:
        return hash(self._host_view()[()])

    def __round__(self, ndigits=None):
        return round(self._host_view()[()], ndigits)

    def copy(self, order="C"):
        return marked_copy(self, result(copyable(self._node()), self.device))

    def __getattr__(self, name: str):
        # (methods NumPy's scalars have and arrays do not: ``x.sum().hex()``)
        if name in _SCALAR_ONLY:
            return getattr(self._host_view()[()], name)
        raise AttributeError(f"'ndarray' object has no attribute {name!r}")

    # fmt: off
    def __iadd__(self, o): return self + o
    def __isub__(self, o): return self - o
    def __imul__(self, o): return self * o
    def __itruediv__(self, o): return self / o
    def __ifloordiv__(self, o): return self // o
    def __imod__(self, o): return self % o
    def __ipow__(self, o): return self**o
    def __imatmul__(self, o): return self @ o
    def __iand__(self, o): return self & o
    def __ior__(self, o): return self | o
    def __ixor__(self, o): return self ^ o
    def __ilshift__(self, o): return self << o
    def __irshift__(self, o): return self >> o
    # fmt: on


_BOOL = _np.dtype(bool)
_VIEW = Op.VIEW
_Scalar.__name__ = _Scalar.__qualname__ = "ndarray"  # (in messages, as every numloom array)
_RESULT_TYPES = (_Scalar, ndarray)  # by the result's rank: 0-d results are scalars' stand-ins


def as_scalar_result(r, *inputs):
    """``r``, a function's new 0-d result where NumPy's function gives a scalar (``dot`` of two
    vectors, ``einsum('i,i', a, b)``), as numloom's stand-in for that scalar (a view made by
    reshaping would print as a 0-d array); other results, and an input given back, as they
    are."""
    if type(r) is ndarray and not r._view.shape and all(r is not x for x in inputs):
        r.__class__ = _Scalar
    return r


def _adopt(a: ndarray, storage: Storage, view: View, readonly: bool = False,
           dtype=None) -> ndarray:  # fmt: skip
    """Make ``a`` a handle on ``storage`` through ``view``, its elements of ``dtype`` (by
    default the storage's)."""
    a._storage, a._view, a._readonly, a._host = storage, view, readonly, None
    a._dtype = storage.version.dtype if dtype is None else _np.dtype(dtype)
    a._identity = _is_identity(storage, view, a._dtype)
    return a


def result(n: Node, device: str | None = None) -> ndarray:
    """A new array (with its own storage) whose value is node ``n``: the whole of it, so the
    handle is its storage's identity (every traced operation makes one: kept short)."""
    if _RESULT[0] is not None:  # (the same, in C: the storage registered there too)
        return _RESULT[0](n, device or get_device())
    a = ndarray.__new__(_RESULT_TYPES[len(n.shape) > 0])
    a._storage = Storage(n, device or get_device())
    a._view, a._readonly, a._dtype, a._identity = _whole(n.shape), False, n.dtype, True
    a._host = None
    return a


_RESULT = [None]  # _speedups.result, once numloom's API is bound (_install_tracing)


def array_result(n: Node, device: str | None = None) -> ndarray:
    """``result`` as an array also when 0-d (``np.zeros(())``, a copy): what NumPy gives as a
    0-d array, not as a scalar."""
    a = result(n, device)
    a.__class__ = ndarray
    return a


@functools.lru_cache(maxsize=4096)
def _whole(shape: tuple) -> View:
    return View.contiguous(shape)


def marked_copy(a: ndarray, made: ndarray) -> ndarray:
    """``made``, a computed copy of ``a``, marked as ``a`` is (``Storage.eager``: a loop's
    ``un = u.copy()`` runs its calls at once, as ``u``'s do, api/eager.py)."""
    if a._storage.eager and not made._storage.pending:
        made._storage.eager = True
    return made


def copyable(n: Node) -> Node:
    """``n`` as the value of another storage (a copy: ``x.copy()``, ``y[...] = x``), which may
    share it, as computed buffers never change; except a CPU buffer NumPy arrays share
    (``numpy.asarray(x)``), which ``x``'s writes reach (realize.keep_exports): that is copied
    now, so the memory stays ``x``'s alone."""
    if n.op is Op.BUFFER and n.arg.exports and n.arg._shared():
        return buffer_node(_np.array(n.arg.data, copy=True))
    return n


def share(a: ndarray, view: View, readonly: bool | None = None, dtype=None) -> ndarray:
    """A new handle on ``a``'s storage through ``view``: what NumPy calls a view of ``a``;
    with ``dtype``, a view of a's bytes as other elements (``view`` then counts those)."""
    ro = a._readonly if readonly is None else readonly
    made = _adopt(ndarray.__new__(ndarray), a._storage, view, ro, dtype or a._dtype)
    h = a._host
    if h is not None and view is a._view and made._dtype is a._dtype:  # (``x.T`` of 1-d: the
        made._host = (h[0], h[1], None, h[3])  # same elements, the host view already made)
    owner = _base_of(a)
    made._base_array = a if owner is None else owner
    if type(a) not in _RESULT_TYPES:  # (a program's subclass: its views are of its class)
        return _as_subclass(made, a)
    return made


def plain(a: ndarray) -> ndarray:
    """``a``, or for a program's subclass a plain handle on its storage through its view:
    what numloom's own work on ``a`` (the view a write goes through) uses, so that it calls
    no ``__array_finalize__`` that NumPy would not (one that calls ``self.fill`` recursed)."""
    if type(a) in _RESULT_TYPES:
        return a
    made = _adopt(ndarray.__new__(ndarray), a._storage, a._view, a._readonly, a._dtype)
    owner = _base_of(a)
    made._base_array = a if owner is None else owner
    return made


def from_host(data, device: str | None = None) -> ndarray:
    """A new array holding a copy of host data (a NumPy array of a numloom dtype)."""
    device = device or get_device()
    data = _np.array(data, copy=True, order="C")
    if device == "cpu":
        n = buffer_node(data)
    else:
        n = realize.to_device(data, device)
    return _adopt(ndarray.__new__(ndarray), Storage(n, device), View.contiguous(data.shape))


_ADOPT: list = [None]  # numloom.core._speedups.adopt, where the handle is compiled


def adopt_host(data: _np.ndarray) -> ndarray:
    """A new CPU array whose memory is ``data`` itself, without a copy: a fresh C-contiguous
    NumPy array that nothing else holds (a result NumPy just made)."""
    if (_ADOPT[0] is not None and type(data) is _np.ndarray and data.ndim
            and data.flags.c_contiguous and data.dtype.kind in _SUPPORTED_KINDS):  # fmt: skip
        a = _ADOPT[0](data, False)  # (the same, in C)
        a._host = None  # (its first read makes the host view, and marks it: host.py)
        return a
    n = buffer_node(data)
    a = ndarray.__new__(ndarray)  # (the whole storage: its identity; compactions make many)
    a._storage = Storage(n, "cpu")
    a._view, a._readonly, a._dtype, a._host = _whole(data.shape), False, n.dtype, None
    a._identity = n.shape == data.shape  # (0-d data is held 1-d: Buffer's ascontiguousarray)
    return a


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None) -> ndarray:
    """``a`` as a numloom array: numloom arrays are returned as they are (or cast)."""
    if isinstance(a, ndarray):
        target = _device_name(device)
        if target is not None and target != a.device:  # a move between devices copies
            if copy is False:
                raise ValueError(
                    f"asarray(copy=False) cannot move an array from {a.device!r} to {target!r}; "
                    "pass copy=None or copy=True"
                )
            if a.device != "cpu" and target != "cpu":
                moved = _between_devices(a, target)
                return moved if dtype is None else moved.astype(dtype)
            return from_host(_np.asarray(a, dtype=dtype), target)
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(_namespace.creation._NO_COPY)
            keep = order is None or order in ("A", "a", "K", "k")  # (a cast keeps the layout)
            return a.astype(dtype, order="K" if keep else order)
        if order is not None:  # ('C' or 'F' that a is not laid out in: a copy)
            made = a.copy(order=order) if copy else a
            return _namespace.creation.laid_out(made, order, copy)
        return a.copy() if copy else a
    target = _device_name(device) or get_device()
    if target != "cpu" and hasattr(a, "__cuda_array_interface__"):
        imported = _namespace.interop.from_cuda_array_interface(a, target)  # no copy: the memory is shared
        return imported if dtype is None else asarray(imported, dtype, copy=copy)
    if isinstance(a, _np.ndarray) and type(a) is not _np.ndarray:
        raise OtherSubclass(type(a))
    try:
        host = _np.asarray(a, dtype=dtype)
    except ValueError:
        # a class of the user's whose __array__ returns np.array(...), which a program run
        # on numloom makes a numloom array (NumPy wants its own): that array is the value
        made = getattr(a, "__array__", None)
        made = made() if made is not None else None
        if not isinstance(made, ndarray):
            raise
        return asarray(made, dtype, device=device, copy=copy)
    _check_dtype(host.dtype)
    if (target == "cpu" and type(a) is not _np.ndarray and 0 < host.ndim
            and host.size <= config.EAGER_ELEMENTS and not _TRACING):  # fmt: skip
        # another library's small data (a pandas Series handed to np.nan_to_num in an
        # aggregation): marked, so what is computed from it is NumPy's at once (api/eager.py)
        made = _namespace.eager.adopted(_np.array(host, copy=True, order="C"))
    else:
        made = from_host(host, target)
    if made.ndim > 1 and (order is not None or not host.flags.c_contiguous):
        # (NumPy's data, laid out as NumPy lays it out)
        made = _namespace.creation.in_order(made, "K" if order is None else order, host)
    if host is a and copy is not True and not host.flags.writeable:
        # NumPy's asarray is the read-only array itself: writes through it are refused
        made._readonly = True
    return made


def _between_devices(a: ndarray, target: str) -> ndarray:
    """A copy of ``a`` (on one GPU) on GPU ``target``: its contiguous data, copied device to
    device."""
    a = a if a._view.is_contiguous() else a.copy()
    realize.ensure(a._storage)
    if a._storage.error is not None:
        raise a._storage.error
    data = realize._backend(target).from_device(a._storage.version.arg, a._view.offset,
                                                a.shape, target)  # fmt: skip
    return _adopt(ndarray.__new__(ndarray), Storage(data, target), View.contiguous(a.shape))


def _device_name(device) -> str | None:
    if device is None:
        return None
    from .device import _normalize

    return _normalize(device)


_SUPPORTED_KINDS = frozenset("biufc")


class OtherDtype(TypeError):
    """Data of a dtype numloom arrays do not hold (strings, datetimes, structured, objects):
    the public function that meets it runs NumPy instead (``other_dtypes.py``)."""


class OtherSubclass(OtherDtype):
    """A NumPy ndarray subclass (a masked array, ``np.matrix``, a user's subclass): its
    methods and ufunc hooks are its meaning (a mask, ``*`` as the matrix product), so a public
    function that meets one runs NumPy's, which keeps them, as ``OtherDtype`` does."""

    def __init__(self, cls):
        super().__init__(f"{cls.__module__}.{cls.__qualname__} is a NumPy ndarray subclass: "
                         "NumPy's functions keep its meaning; numpy.asarray(x) is its data")


def _check_dtype(dtype) -> None:
    if dtype.kind not in _SUPPORTED_KINDS:
        raise OtherDtype(
            f"numloom arrays hold bool, integer, float and complex data, not {dtype}; "
            f"keep {dtype} data in a NumPy array"
        )


def operand(x, for_output: bool = False):
    """An argument of an array function: numloom arrays and Python scalars pass through;
    NumPy arrays, NumPy scalars of 0-d and nested sequences become numloom arrays."""
    if isinstance(x, ndarray):
        return x
    if type(x) in (bool, int, float, complex):
        return x
    if isinstance(x, _np.generic) and not for_output:
        return x
    if for_output and isinstance(x, _np.ndarray):
        return asarray(x)  # written back by the caller
    return asarray(x)


def _normalize_shape(shape, size: int | None = None) -> tuple:
    if isinstance(shape, (int, _np.integer)) or hasattr(shape, "__index__"):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    return shape


# The NumPy namespace the methods and operators call (numloom.api). api/ builds on core/, so it
# binds itself here as it loads (``bind_namespace``); core/ never imports it.
_namespace = None  # the numloom.api package: its modules (flags, fallback, interop, ...)
_api = None  # numloom.api.numpy_api: the namespace's functions


def bind_namespace(api) -> None:
    """Give the ndarray methods the NumPy namespace (the ``numloom.api`` package)."""
    global _namespace, _api
    _namespace, _api = api, api.numpy_api
    methods.bind(api)
    if _speedups is not None:
        _install_tracing(api)


def _install_tracing(api) -> None:
    """Hand the compiled traced operation (``_speedups``' _tracing.c) what it works with: the
    classes whose slots it fills, the dicts it shares with the Python path, and the Python
    functions it calls for the rest. The operators of ``Handle`` and every ufunc call then
    take the compiled path first, and a sync's walk of the DAG is done in C."""
    from . import dag

    ufuncs, np_api = api.ufuncs, api.numpy_api
    python_plain_call = ufuncs._plain_call
    _speedups.install_tracing({
        "Node": Node, "Storage": Storage, "Plain": ufuncs._Plain, "ndarray": ndarray,
        "Scalar": _Scalar, "numpy_ndarray": _np.ndarray,
        "sids": dag._sids, "interned": dag._interned, "dag_sweep": dag._sweep, "MAP": Op.MAP,
        "MAP_ID": dag._MAP_ID, "sid_counter": dag._sid_counter, "user_line": dag.user_line,
        "plain_loops": ufuncs._plain_loops, "scalar_keys": ufuncs._SCALAR_KEYS,
        "scalars": ufuncs._scalars, "as_loop_node": ufuncs.as_loop_node,
        "plain_call": python_plain_call,
        "seq": realize._SEQ, "pending_refs": realize._pending.refs,
        "pending_sweep": realize._pending._sweep, "register_limits": realize.register_limits,
        "config": config, "extobj": fperrors._extobj_contextvar, "whole": _whole,
        "binary": methods._binary, "compare": np_api.compare, "package": _PACKAGE,
        "host_scalars": ufuncs._HOST_SCALARS, "eager": api.eager.operands,
        "eager_into": api.eager.into,
        "Buffer": realize.Buffer, "PooledBuffer": realize.PooledBuffer, "BUFFER": Op.BUFFER, "BUFFER_ID": dag._BUFFER_ID, "cpu": "cpu",
        "bool": _BOOL, "tracing": _TRACING, "eager_elements": api.eager.EAGER_ELEMENTS,
        "eager_default": api.eager.DEFAULT_STATE, "eager_calling": api.eager._CALLING,
        "eager_caught": api.eager._caught, "eager_warn": api.eager.warn,
        "eager_adopted": api.eager.made_now, "warnings": warnings, "merge_calls": fperrors.merge,
        "eager_scalars": api.eager.SCALAR_TYPES, "dispatch_modules": api.eager.DISPATCH,
        "users_call": api.eager.users_call,
        "ufuncs": {name: getattr(np_api, name) for name in _OPERATOR_UFUNCS},
    })  # fmt: skip
    ufuncs._plain_call = methods._plain_call = _speedups.plain_call
    api.eager.ADOPT[0] = _ADOPT[0] = _speedups.adopt
    dag._STRUCTURE[0] = _speedups.structure
    api.eager.FUNCTION_NOW[0] = _speedups.function_now
    dag._intern = _speedups.intern  # (every node numloom makes: node(), map_node, buffer_of)
    _RESULT[0] = _speedups.result
    realize.SWEEP[0] = dag.SWEEP[0] = _speedups.sweep
    fperrors.CALL_STATES[0] = _speedups.call_states
    host._ELEMENTS[0] = _speedups.elements
    # (the user's line of an operation that can raise: in C, its line looked up by code and
    # instruction; every caller asks for ``dag.user_line`` as it calls)
    dag.user_line = _speedups.user_line


_PACKAGE = __name__.split(".")[0]
_OPERATOR_UFUNCS = (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "negative", "positive",
    "absolute", "invert", "less", "less_equal", "equal", "not_equal", "greater",
    "greater_equal",
)  # fmt: skip


_NOT_SUBTYPE = _numpy_message(lambda: _np.zeros(1).view(type=int))


host.bind(ndarray, asarray)

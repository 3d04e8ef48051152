"""The ndarray's values on the host: ``get``, ``__array__``, element reads and writes (a host
mirror of the storage's version, kept while nothing changes it), conversion to Python scalars,
iteration and pickling. ``ndarray`` (``array.py``) inherits them, and binds itself here
(``bind``): rows are made as plain ndarrays."""

from __future__ import annotations

import itertools
import sys
import threading
import weakref

import numpy as _np

from . import config, realize
from .dag import Op, View, prod, strided
from .realize import Storage
from .views import _WARN_ON_WRITE, _warns_on_write, warn_on_first_write

# Libraries that copy a NumPy array they are handed (pandas' Series and DataFrame, under its
# copy-on-write) but take what another object's ``__array__`` gives as their own, and write it:
# numpy.asarray(x) called from their modules gives them a copy, as they would have made.
_COPYING = ("pandas.",)


def _copying_caller(depth: int) -> bool:
    """Whether the Python code ``depth`` frames above the caller is a ``_COPYING`` library's."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:  # (no Python caller there: C code asked)
        return False
    return frame.f_globals.get("__name__", "").startswith(_COPYING)

_TRACING = realize.TRACING  # (the list itself: numloom.jit appends while it traces)
_NDARRAY: list = [None]  # numloom's ndarray class (array.py binds it)
# A device array's host mirror up to this size is copied whole after a loop of element writes
# (``_set_device_element``); a larger one copies the range written.
WHOLE_UPLOAD = 1 << 16


class _NEVER:
    """No buffer is of this class: a host view whose writes must each go through Python."""


# id(array) -> {id: NumPy view}: the views whose pointers __array_interface__ handed out, kept
# while the array lives
_INTERFACES: dict = {}
# thread -> (storage, error): an evaluation error the buffer protocol raised, for the
# ``__array__`` call NumPy makes next (HostAccess._buffer_host)
_FAILED_EXPORTS: dict = {}
# id(host copy) -> host copy: a GPU array's writable buffers the Python handle's buffer
# protocol exported, copied back at their release
_WRITEBACKS: dict = {}
_ROW: list = [None]  # numloom.core._speedups.row where the handle is compiled (array.py binds it)
_ASARRAY: list = [None]  # numloom's asarray (unpickling)


def bind(ndarray, asarray) -> None:
    _NDARRAY[0], _ASARRAY[0] = ndarray, asarray


# Python and NumPy scalar types an element write takes on its fast path.
_SCALARS = frozenset({int, float, complex, bool, _np.float64, _np.float32, _np.float16,
                      _np.int64, _np.int32, _np.int16, _np.int8, _np.uint64, _np.uint32,
                      _np.uint16, _np.uint8, _np.bool_, _np.complex128, _np.complex64})  # fmt: skip


# Python's and NumPy's integer types: a key made of these alone is a full integer index.
_INTEGERS = frozenset([int] + [_np.dtype(c).type for c in _np.typecodes["AllInteger"]])


def _full_integer(key: tuple, ndim: int) -> bool:
    """Whether ``key`` is one integer per axis (``x[i, j]`` of a 2-d array)."""
    return len(key) == ndim and _INTEGERS.issuperset(map(type, key))


_SLICING = frozenset({int, slice})
_F32_MAX, _INF = float(_np.finfo(_np.float32).max), float("inf")


def quiet_store(key: tuple, ndim: int, value, dtype) -> bool:
    """Whether ``a[key] = value`` with this tuple of integers and slices and this scalar can
    run as NumPy's own store with no warning to give: NumPy warns from within the store (an
    overflow or NaN in the cast), and a warning given in numloom's code would name numloom's
    line, not the user's (those writes take the traced path, which warns at the user's line).
    """
    if len(key) > ndim or not _SLICING.issuperset(map(type, key)):
        return False
    return quiet_value(value, dtype)


def quiet_value(value, dtype) -> bool:
    """Whether NumPy stores the scalar ``value`` into an array of ``dtype`` with no warning."""
    t = type(value)
    if t is bool or t is _np.bool_:
        return True
    mask = QUIET_MASKS.get(dtype, 0)
    if t is int:
        return bool(mask & 1)  # (an integer out of the dtype's range raises: no warning)
    if t is float:
        return bool(mask & 2) or bool(mask & 4) and not (abs(value) > _F32_MAX and
                                                        abs(value) != _INF)  # fmt: skip
    if t is complex:
        return bool(mask & 8)
    return isinstance(value, _np.generic) and _np.can_cast(value.dtype, dtype)


def _quiet_mask(dtype) -> int:
    """Which Python scalars ``quiet_store`` takes for ``dtype``: 1 int, 2 float, 4 float within
    float32's range, 8 complex."""
    kind, size = dtype.kind, dtype.itemsize
    mask = 1 if kind in "iuc" or (kind == "f" and size >= 4) else 0
    if dtype in (_np.float64, _np.complex128):
        mask |= 2
    elif dtype in (_np.float32, _np.complex64):
        mask |= 4
    return mask | (8 if dtype == _np.complex128 else 0)


QUIET_MASKS = {_np.dtype(c): _quiet_mask(_np.dtype(c)) for c in "?bhilqBHILQefdFD"}


_new_view = tuple.__new__  # View's fields without NamedTuple's checks


def _is_identity(storage: Storage, view: View, dtype) -> bool:
    """Whether a handle sees its whole storage as it is (its value is the storage's version)."""
    version = storage.version
    return dtype == version.dtype and view.is_identity(version.shape)


def _row(a, i: int):
    """``a[i]`` of an array of two or more axes: the view of row ``i`` (a loop over rows)."""
    view = a._view
    if not view.shape:
        raise IndexError("too many indices for array: array is 0-dimensional, but 1 were "
                         "indexed")  # fmt: skip
    n = view.shape[0]
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
    if i < 0:
        i += n
    return next(_rows(a, i, i + 1))


def _int_prefix(a, key: tuple):
    """``a[i, j]`` with integers for some leading axes of more (a grid's cell of a (57, 57, 2)
    array, Bridson's sampling): the view, its offset found here, NumPy's IndexError for an
    index out of bounds."""
    view = a._view
    offset = view.offset
    for axis, i in enumerate(key):
        n = view.shape[axis]
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        offset += (i + n if i < 0 else i) * view.strides[axis]
    k = len(key)
    storage, dtype = a._storage, a._dtype
    shape, strides = view.shape[k:], view.strides[k:]
    out = _NDARRAY[0].__new__(_NDARRAY[0])
    out._storage, out._readonly, out._dtype, out._host = storage, a._readonly, dtype, None
    out._view = _new_view(View, (shape, strides, int(offset)))
    out._identity = _is_identity(storage, out._view, dtype)
    base = a.base
    out._base_array = a if base is None else base
    if _WARN_ON_WRITE and _warns_on_write(a):
        warn_on_first_write(out)
    else:
        h = views_host(a)
        if h is not None:
            out._host = (h[0], h[1][key], None, h[3] - k)
    return out


def views_host(a):
    """The host view tuple of a computed CPU array, made if it is missing, for the views taken
    of it to read their elements from (``a[i, j]``, ``a[1:-1]``; the compiled handle's views
    too): a loop that takes a cell of a grid and reads it (Bridson's sampling, 60000 cells)
    made a NumPy view of each cell's own. None for pending work, a GPU's or under
    ``numloom.jit``. Unlike ``_host_view`` this is no read of a value: it marks nothing."""
    storage = a._storage
    if _TRACING or storage.device != "cpu" or storage.error is not None:
        return None
    version = storage.version
    if version.op is not Op.BUFFER:
        return None
    h = a._host
    if h is not None and h[0]() is version:
        return h
    _keep_host(a, version, version.arg.data)
    return a._host


def _keep_host(a, version, data) -> _np.ndarray:
    """``a``'s read-only NumPy view of ``data`` (its version's memory, or a GPU's host mirror),
    kept in ``a._host`` while the storage keeps ``version``."""
    if a._identity and data.shape == a._view.shape and data.dtype == a._dtype:
        host = data.view()  # (the whole buffer: no strided view to make)
    else:
        host = strided(data.reshape(-1).view(a._dtype), a._view)
    host.flags.writeable = False
    a._host = (weakref.ref(version), host, None, host.ndim)
    return host


def _rows(a, start: int = 0, stop: int | None = None):
    """The views of rows ``start`` to ``stop`` of an array of two or more axes, in turn
    (iteration, and ``a[i]`` through ``_row``)."""
    view, storage, readonly, dtype = a._view, a._storage, a._readonly, a._dtype
    shape, strides, step = view.shape[1:], view.strides[1:], view.strides[0]
    n = view.shape[0]
    # (a row is the whole storage only when it is the only row)
    identity = n == 1 and _is_identity(storage, _new_view(View, (shape, strides, view.offset)),
                                       dtype)  # fmt: skip
    warns = bool(_WARN_ON_WRITE) and _warns_on_write(a)
    ndarray = _NDARRAY[0]
    rows = range(start, n if stop is None else stop)
    base = a.base
    base = a if base is None else base  # (each row's ``base``, as NumPy's)
    # A computed CPU array's rows read their elements from its host view's rows (a decision
    # tree's ``[row for row in X if row[i] >= t]``: each row's view was made per row)
    computed = (storage.device == "cpu" and storage.version.op is Op.BUFFER
                and storage.error is None)  # fmt: skip
    if _ROW[0] is not None and not warns:  # (numloom.core._speedups: the same, in C)
        parts = (ndarray, storage, readonly, dtype, identity, View, shape, strides, view.offset,
                 step, base)  # fmt: skip
        if computed:
            host = a._host_view()
            parts += (a._host[0], host, host.ndim - 1)
        return map(_ROW[0], itertools.repeat(parts), rows)
    made = _python_rows(ndarray, storage, readonly, dtype, identity, warns, shape, strides,
                        view.offset, step, rows, base)  # fmt: skip
    if not computed:
        return made
    return _with_host_rows(made, a._host_view(), a._host[0], rows.start)


def _with_host_rows(made, host, ref, start: int):
    ndim = host.ndim - 1
    for i, row in enumerate(made, start):
        row._host = (ref, host[i], None, ndim)
        yield row


def _python_rows(ndarray, storage, readonly, dtype, identity, warns, shape, strides, offset,
                 step, rows, base):  # fmt: skip
    new = ndarray.__new__
    for i in rows:
        out = new(ndarray)
        out._storage, out._readonly, out._dtype, out._host = storage, readonly, dtype, None
        out._view = _new_view(View, (shape, strides, offset + i * step))
        out._identity = identity
        out._base_array = base
        if warns:
            warn_on_first_write(out)
        yield out


def _elements(a):
    """Iteration over a 1-d array: NumPy scalars read from its host view, read again when a
    write in the loop's body makes a new version (in C where the handle is compiled)."""
    storage = a._storage
    if _ELEMENTS[0] is not None:
        return _ELEMENTS[0](storage, a._host_view(), a._host_view)
    return _python_elements(a, storage)


_ELEMENTS = [None]  # _speedups.elements, once the traced operation's C half is installed


def _python_elements(a, storage):
    host = a._host_view()
    version = storage.version
    for i in range(len(host)):
        if storage.version is not version:
            host = a._host_view()
            version = storage.version
        yield host[i]


class HostAccess:
    """The host side of ``ndarray``."""

    __slots__ = ()

    # --- to the host ----------------------------------------------------------------------------

    def get(self, stream=None, out=None, order="C", blocking=True) -> _np.ndarray:
        """The value as a new NumPy array on the host (evaluating what is pending)."""
        storage = self._storage
        if realize.TRACING:  # (the traced function reads values: it cannot be replayed)
            realize.value_read()
        realize.ensure(storage)
        if storage.error is not None:
            raise storage.error
        data = storage.version.arg.data
        if storage.device != "cpu":
            data = realize.to_host(storage.version.arg)
        from .dag import strided

        host = _np.array(strided(data.reshape(-1).view(self._dtype), self._view), copy=True)
        if out is not None:
            out[...] = host
            return out
        return host

    def copy_to_host(self, ary=None, stream=0) -> _np.ndarray:
        """numba.cuda's name for ``get()``: the data as a NumPy array (into ``ary`` if given)."""
        return self.get(out=ary)

    def copy_to_device(self, ary, stream=0) -> None:
        """numba.cuda's in-place copy of host (or device) data into this array."""
        self[...] = ary

    def __buffer__(self, flags: int) -> memoryview:
        """The buffer protocol (``memoryview(x)``, ``bytes(x)``) on Python 3.12 and later where
        the handle is Python's (the compiled handle has it in C): NumPy's view's buffer."""
        writable = bool(flags & 1)  # (inspect.BufferFlags.WRITABLE)
        host = self._buffer_host(writable)
        if writable and self._storage.device != "cpu":
            _WRITEBACKS[id(host)] = host  # (until __release_buffer__)
        return memoryview(host)

    def __release_buffer__(self, view: memoryview) -> None:
        host = _WRITEBACKS.pop(id(view.obj), None)
        if host is not None:
            self._buffer_released(host)

    def _buffer_released(self, host) -> None:
        """A writable buffer (a Cython memoryview's) is released: a GPU array's host copy goes
        back to the device, since a write into it is a write into the array (on the CPU the
        buffer is the array's memory)."""
        if self._storage.device != "cpu":
            self[...] = host

    @property
    def __array_interface__(self) -> dict:
        """NumPy's array interface of a CPU array's memory (``np.lib.array_utils.byte_bounds``,
        rougier's ``find_index``): that of its ``__array__()`` view, kept alive by the array so
        the pointer stays valid while the array lives. A GPU array has none (as CuPy's)."""
        if self._storage.device != "cpu":
            raise AttributeError("a numloom array on a GPU has no __array_interface__: use "
                                 "__cuda_array_interface__, or numpy.asarray(x) for a copy")  # fmt: skip
        host = self.__array__()
        held = _INTERFACES.get(id(self))
        if held is None:
            held = _INTERFACES[id(self)] = {}
            weakref.finalize(self, _INTERFACES.pop, id(self), None)
        held[id(self._storage.version.arg)] = host  # (one kept per memory the array has had)
        return host.__array_interface__

    @property
    def ctypes(self):
        """NumPy's ``ctypes`` view of a CPU array's memory (its ``data`` pointer, shape and
        strides for a C function), which keeps that memory alive while it lives."""
        if self._storage.device != "cpu":
            raise AttributeError("a numloom array on a GPU has no host memory for ctypes: use "
                                 "numpy.asarray(x).ctypes on a copy")  # fmt: skip
        return self.__array__().ctypes

    def _buffer_host(self, writable: bool = False) -> _np.ndarray:
        """What the buffer protocol exports: ``__array__()``; for a request of a writable
        buffer on a GPU array, a writable host copy (copied back at its release,
        ``_buffer_released``). NumPy's ``asarray`` tries the buffer protocol first and drops
        its error for ``__array__``: an error the evaluation raised here (bad indices,
        ``errstate(all="raise")``) is kept for that call."""
        try:
            if writable and self._storage.device != "cpu" and not self._readonly:
                return self.get()
            return self._array(None, True if _copying_caller(1) else None)
        except Exception as error:
            _FAILED_EXPORTS[threading.get_ident()] = (self._storage, error)
            raise

    def __array__(self, dtype=None, copy=None):
        """NumPy's view of the value. On the CPU, without ``copy=True``, it is the computed
        data itself, as ``numpy.asarray`` of a NumPy array is that array: it costs nothing,
        later writes to ``x`` are stored into it (``realize.keep_exports``), so a library that
        keeps it (matplotlib's ``Path``) sees them, and a library writing it (SciPy's
        ``output=`` arguments, Cython's memoryviews) writes ``x``. It is read-only where ``x``
        is. Pending work that reads ``x`` is computed first; numloom work traced later that
        reads ``x`` is computed when its result is used, so a write through the export before
        then reaches it (docs/semantics.md).

        ``copy=True`` gives a new array, as does a library that copies a NumPy array it is
        given and takes what ``__array__`` gives as its own (``_COPYING``: ``pd.Series(x)``,
        which it then writes). A GPU array's is a copy on the host, read-only: a write into
        it could not reach the device, so it raises instead of being lost."""
        if _FAILED_EXPORTS:
            failed = _FAILED_EXPORTS.pop(threading.get_ident(), None)
            if failed is not None and failed[0] is self._storage:
                raise failed[1]
        return self._array(dtype, True if copy is None and _copying_caller(1) else copy)

    def _array(self, dtype, copy):
        """``__array__`` once the caller is known (``_COPYING``: ``copy`` True)."""
        if copy or self._storage.device != "cpu":
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.\n"
                                 "A numloom array on a GPU has no host memory to share: "
                                 "use copy=None (numpy.asarray) to copy it to the host.")  # fmt: skip
            host = self.get()
            if dtype is not None:
                host = host.astype(dtype, copy=False)
            if not copy:
                host.flags.writeable = False  # (a GPU array's: its writes would be lost)
            return host
        storage = self._storage
        realize.ensure(storage)
        if storage.error is not None:
            raise storage.error
        version = storage.version
        writable = not self._readonly and not (_WARN_ON_WRITE and _warns_on_write(self))
        if writable and realize.foreign(version.arg):
            writable = False  # (another program's memory, from_dlpack: x keeps sharing it)
        if sys.getrefcount(version) > 3 or writable and not realize.owns_buffer(
                storage, version):  # fmt: skip
            # another array's value is this memory too (``y = x.copy()`` shares it until a
            # write, pending work reads it): the export gets memory of this array's own,
            # which its writes then reach
            del version
            version = realize.own_buffer(storage)
        host = version.arg.export(self._dtype, self._view, writable)
        if dtype is None or _np.dtype(dtype) == host.dtype:
            return host
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return host.astype(dtype)

    def _host_view(self) -> _np.ndarray:
        """The value as a read-only NumPy array, kept while the storage keeps its version:
        element reads, iteration and ``tolist`` read it. On the CPU it is the computed buffer
        itself; on a GPU, a view of the storage's host mirror (copied once per version)."""
        h = self._host
        storage = self._storage
        if h is not None and h[0]() is storage.version:
            if realize.TRACING:
                realize.value_read()
            return h[1]
        realize.ensure_read(storage)
        if storage.error is not None:
            raise storage.error
        version = storage.version
        if storage.device == "cpu" and not realize.TRACING and prod(version.shape) <= (
                config.EAGER_ELEMENTS):  # fmt: skip
            storage.eager = True  # (Python reads a small array's value: ufunc calls on it
            # run at once through NumPy, api/eager.py, as a loop that reads values wants)
        # Not an export (``__array__``): this view is read only while the version is current.
        data = version.arg.data if storage.device == "cpu" else realize.host_mirror(storage)
        host = _keep_host(self, version, data)
        realize.value_read()
        return host

    def _set_element(self, key, value) -> bool:
        """``self[key] = value`` for a full integer ``key`` and a scalar ``value``, written
        into the CPU buffer in place when nothing but this storage's version holds it (after
        a copy of the buffer when something does): the fast path of element writes in a
        Python loop. The first write into pending work traces as usual (it fuses with it);
        the second evaluates. False where it does not apply."""
        storage = self._storage
        if self._readonly or _TRACING or storage.error is not None:
            return False
        if _WARN_ON_WRITE and _warns_on_write(self):
            return False
        if storage.pending:
            version = storage.version
            if version.op is not Op.SCATTER or version.arg.size != 1 or version.fallible:
                return False  # one element written into pending work fuses with it
            # the second: a loop writing elements, evaluated as a read is (a small array is
            # marked: the loop's next steps on it run at once through NumPy)
            realize.ensure_read(storage)
            if storage.error is not None:
                raise storage.error
        if storage.device != "cpu":
            version = storage.version
            return realize.owns_buffer(storage, version) and self._set_device_element(key, value)
        realize.settle_readers(storage)  # (memory NumPy arrays share: the write goes into it)
        version = storage.version
        if not realize.owns_buffer(storage, version):
            version = realize.own_buffer(storage)
        self._writable(version)[key] = value
        return True

    def _writable(self, version) -> _np.ndarray:
        """A writable NumPy view of the elements this handle sees in ``version``'s CPU buffer
        (the storage's current version, which it alone holds), kept in the handle's host view:
        the writes that follow (``__setitem__``'s fast path, core/_speedups.c) take it as long
        as the version stays the storage's alone."""
        h = self._host
        if h is None or h[2] is None or h[0]() is not version:
            writable = version.arg.writable(self._dtype, self._view)
            host = writable.view()
            host.flags.writeable = False
            h = self._host = (weakref.ref(version), host, writable, host.ndim)
        return h[2]

    def _set_device_element(self, key, value) -> bool:
        """An element write into a computed GPU array that nothing else holds: into its host
        mirror (NumPy's casts and errors); the bytes written reach the device before anything
        next reads its buffer (``realize.write_through``: one copy for a loop of writes).

        A mirror of at most ``WHOLE_UPLOAD`` bytes is marked written as a whole, and the
        writable view is kept in the handle's host view (``_host[2]``, with the buffer class
        that must still hold, ``realize._Uploading``): the next writes go straight into the
        mirror (core/_speedups.c, or ``__setitem__``'s fast path) until the device takes the
        buffer's data, which copies the mirror once. A larger mirror has each write's range
        marked, in Python."""
        storage = self._storage
        mirror = realize.host_mirror(storage)
        version = storage.version
        h = self._host
        if h is None or h[2] is None or h[0]() is not version:
            mirror.flags.writeable = True
            try:
                writable = strided(mirror.reshape(-1).view(self._dtype), self._view)
            finally:
                mirror.flags.writeable = False
            host = writable.view()
            host.flags.writeable = False
            whole = mirror.nbytes <= WHOLE_UPLOAD
            h = self._host = (weakref.ref(version), host, writable, host.ndim,
                              realize._Uploading if whole else _NEVER)  # fmt: skip
        h[2][key] = value
        if h[4] is not _NEVER:
            realize.write_through(storage, 0, mirror.nbytes)
            return True
        view = self._view
        offset = view.offset
        for i, n, stride in zip((key,) if type(key) is int else key, view.shape, view.strides):
            offset += (i + n if i < 0 else i) * stride
        realize.write_through(storage, offset * self._dtype.itemsize, self._dtype.itemsize)
        return True

    def tolist(self):
        return self._host_view().tolist()

    def item(self, *args):
        return self._host_view().item(*args)

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.get())

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self._host_view().reshape(()))
        if self.size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        raise ValueError(
            "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
            "that an array is not empty."
        )

    def _scalar(self, kind: str):
        if self.ndim != 0:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return self._host_view().item()

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def __format__(self, spec: str) -> str:
        host = self.get()
        return format(host[()] if host.ndim == 0 else host, spec)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1:
            return _elements(self)
        return _rows(self)

    def __contains__(self, value) -> bool:
        if isinstance(value, HostAccess):
            value = value._host_view()
        return value in self._host_view()

    def __reduce__(self):
        return (_ASARRAY[0], (self.get(),))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

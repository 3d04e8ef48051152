"""NumPy and CuPy functions run over numloom's memory, with their writes kept.

A function numloom runs through NumPy sees each numloom argument as a NumPy array. What it
writes (the arguments it is known to write, ``out=``) it writes into the storage itself:

- on the CPU, into the storage's buffer in place when nothing else holds that buffer, else into
  a copy that becomes the storage's version; every argument viewing a written storage is a view
  of that same memory, so aliasing is NumPy's;
- on a GPU, into a host copy that goes back to the device as the storage's new version (or, in
  ``run_cupy``, into the device buffer itself).

Every other argument is a read-only array (on the CPU the buffer itself, without a copy), so a
function that writes where numloom does not expect it raises instead of losing the write: it
then runs again over writable copies, and what changed is written back.
"""

from __future__ import annotations

import threading

import numpy as _np

from ..core import config, realize
from ..core.dag import Op, node

_SUPPORTED_KINDS = frozenset("biufc")


def _ndarray():
    global _ndarray_type
    from ..core.array import ndarray as _ndarray_type

    return _ndarray_type


_ndarray_type = None


def walk(x, fn):
    """``x`` with ``fn`` applied to every leaf inside lists, tuples and dicts."""
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(walk(v, fn) for v in x)
    if isinstance(x, tuple):  # named tuples
        return type(x)(*(walk(v, fn) for v in x))
    if isinstance(x, dict):
        return {k: walk(v, fn) for k, v in x.items()}
    return fn(x)


def arrays_in(x) -> list:
    """The numloom arrays inside ``x`` (lists, tuples, dicts), in order. (Visited in place,
    not rebuilt as ``walk`` does: every call NumPy runs for numloom asks, a random draw of a
    list's elements too.)"""
    found = []
    _visit(x, found, _ndarray_type or _ndarray())
    return found


def _visit(x, found: list, ndarray) -> None:
    if isinstance(x, (list, tuple)):
        for v in x:
            if isinstance(v, ndarray):
                found.append(v)
            elif isinstance(v, (list, tuple, dict)):
                _visit(v, found, ndarray)
    elif isinstance(x, dict):
        _visit(tuple(x.values()), found, ndarray)
    elif isinstance(x, ndarray):
        found.append(x)


def written_arrays(args: tuple, kwargs: dict, written) -> list:
    """The numloom arrays a call writes: the arguments at positions or names in ``written``,
    and every array of ``out=``."""
    ndarray = _ndarray_type or _ndarray()
    picked = []
    for w in written:
        v = args[w] if isinstance(w, int) and w < len(args) else kwargs.get(w)
        if isinstance(v, ndarray):
            picked.append(v)
    out = kwargs.get("out")
    picked.extend(arrays_in(out if isinstance(out, (tuple, list)) else (out,)))
    return picked


def _evaluated(arrays: list) -> None:
    for device in sorted({a._storage.device for a in arrays if a._storage.pending}):
        realize.evaluate_device(device)
    for a in arrays:
        if a._storage.error is not None:
            raise a._storage.error
    if arrays:
        realize.value_read()


def owned_version(storage):
    """The storage's version, its buffer now held by it alone (copied first if shared, or if
    its memory may be a view of another array's: neither fresh nor a block of numloom's pool)."""
    realize.settle_readers(storage)  # (memory NumPy arrays share: the write goes into it)
    version = storage.version
    if realize.owns_buffer(storage, version) and (
        version.arg.data.base is None or version.arg.release is not None
    ):
        return version
    return realize.own_buffer(storage)


class _HostMemory:
    """Host arrays for the numloom arguments of one call."""

    def __init__(self, written: list):
        self.flat: dict = {}  # id(storage) -> writable flat host array of the storage
        self.storages: dict = {}
        for a in written:
            storage = a._storage
            if id(storage) in self.flat:
                continue
            self.storages[id(storage)] = storage
            if storage.device == "cpu":
                version = owned_version(storage)
                data = version.arg.data
                data.flags.writeable = True
                try:
                    flat = data.reshape(-1).view()
                finally:
                    data.flags.writeable = False
            else:
                flat = _np.ascontiguousarray(realize.to_host(storage.version.arg)).reshape(-1)
                flat.flags.writeable = True
            self.flat[id(storage)] = flat
        self.written = {id(a) for a in written}

    def host(self, a):
        """``a`` as a NumPy array: writable where the call writes it, else read-only."""
        from ..core.dag import strided

        storage = a._storage
        flat = self.flat.get(id(storage))
        if flat is not None:
            host = strided(flat.view(a._dtype), a._view)
            if id(a) not in self.written or a._readonly:
                host.flags.writeable = False
            return host
        if storage.device == "cpu":
            return storage.version.arg.export(a._dtype, a._view)
        mirror = realize.host_mirror(storage)
        host = strided(mirror.reshape(-1).view(a._dtype), a._view)
        host.flags.writeable = False
        return host

    def finish(self) -> None:
        """Device storages take their written host copies as new versions."""
        storages, self.storages = self.storages, {}
        for key, storage in storages.items():
            if storage.device != "cpu":
                version = storage.version
                data = self.flat[key].reshape(version.shape)
                storage.version = realize.to_device(data, storage.device)
                storage.mirror = None


def run(fn, args: tuple, kwargs: dict, written=(), device=None, before_retry=None):
    """``fn(*args, **kwargs)`` run by NumPy over numloom's memory (see the module's docstring).

    ``written``: positions and names of the arguments ``fn`` writes (``out=`` always counts).
    Array results come back as numloom arrays on ``device`` (an argument's array that ``fn``
    returns, such as ``out``, as that very numloom array). ``before_retry`` runs before a call is
    repeated over writable copies (a random generator puts its state back)."""
    arrays = arrays_in((args, kwargs))
    _evaluated(arrays)
    memory = _HostMemory(written_arrays(args, kwargs, written))
    handed: dict = {}

    def to_host(v):
        if isinstance(v, _ndarray_type):
            host = memory.host(v)
            handed[id(host)] = (host, v)
            return host
        return v

    try:
        try:
            out = at_user(fn, walk(args, to_host), walk(kwargs, to_host))
        except ValueError as error:
            if "__array__ method not producing an array" not in str(error):
                raise
            # (a program's object whose __array__ made a numloom array: that array's memory)
            out = at_user(fn, walk(args, lambda v: _programs_array(to_host(v))),
                          walk(kwargs, lambda v: _programs_array(to_host(v))))  # fmt: skip
    except ValueError as error:
        if "read-only" not in str(error) or not arrays:
            memory.finish()
            raise
        if before_retry is not None:
            before_retry()
        return _run_on_copies(fn, args, kwargs, memory, device)
    except BaseException:
        memory.finish()  # (what NumPy wrote before it raised stays written, as in NumPy)
        raise
    memory.finish()
    given: set = set()  # NumPy arrays the caller passed: theirs, never adopted
    walk((args, kwargs), lambda v: given.add(id(v)) if isinstance(v, _np.ndarray) else None)
    return walk(out, lambda x: _back(x, handed, device, given))


def _programs_array(v):
    """An object of the program's whose ``__array__`` makes its array with the program's
    ``np`` (under numloom a numloom array, which NumPy refuses as ``__array__``'s result): that
    array's host memory; anything else as it is."""
    if type(v) in _PLAIN or isinstance(v, (_np.ndarray, _np.generic)):
        return v
    make = getattr(type(v), "__array__", None)
    if make is None:
        return v
    try:
        made = v.__array__()
    except Exception:  # noqa: BLE001 (NumPy calls it again, and raises what it raises)
        return v
    return _np.asarray(made) if isinstance(made, _ndarray_type) else v


_PLAIN = frozenset([int, float, complex, bool, str, bytes, list, tuple, dict, type(None)])


def at_user(fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)``, NumPy's warnings in it pointing at the user's line, as they
    would from NumPy's function called there (in the main thread: catching warnings changes
    the process's filters, which other threads share)."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    from ..core.dag import recorded_warnings, warn_at_user

    out = error = None
    with recorded_warnings() as caught:
        try:
            out = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 (raised again below, after the warnings)
            error = e
    for w in caught:  # (re-emitted with the user's filters back: they judge them)
        warn_at_user(w.message, w.category)
    if error is not None:
        raise error
    return out


def _back(x, handed: dict, device, given=frozenset()):
    """A result of NumPy's as numloom returns it (on the CPU, an array NumPy made for it
    becomes numloom's memory without a copy)."""
    mine = handed.get(id(x))
    if mine is not None and mine[0] is x:
        return mine[1]
    if id(x) in given:
        return x  # a NumPy array the caller passed (``out=``), returned as NumPy does
    # (a subclass of NumPy's stays NumPy's own: a masked array's mask, a matrix's product)
    if type(x) is _np.ndarray and x.dtype.kind in _SUPPORTED_KINDS:
        from ..core.array import adopt_host, from_host
        from ..core.device import get_device

        device = device or get_device()  # (None: the current device, a GPU's too)
        if device == "cpu" and _fresh(x):
            a = adopt_host(x)  # NumPy's new array becomes numloom's memory, uncopied
            if 0 < x.size <= config.EAGER_ELEMENTS and x.ndim and not realize.TRACING:
                # (small: marked, so a loop's work on NumPy's result, a draw or a sort, runs
                # at once through NumPy too: api/eager.py)
                a._storage.eager = True
            return a
        return from_host(x, device)
    return x


def as_numloom(x: _np.ndarray):
    """A new NumPy array, of NumPy's making, as a numloom array on the current device."""
    return _back(x, {}, None)


def _fresh(x: _np.ndarray) -> bool:
    """Whether NumPy's result ``x`` is new memory that nothing else holds or views."""
    return x.base is None and x.flags.c_contiguous and x.flags.writeable and x.flags.owndata


def _run_on_copies(fn, args, kwargs, memory: _HostMemory, device):
    """Run ``fn`` again with writable copies of the arguments it was not expected to write;
    what it changed in them is written back into their arrays."""
    copies: dict = {}

    def to_host(v):
        if not isinstance(v, _ndarray_type):
            return v
        if id(v._storage) in memory.flat or v._readonly:
            host = memory.host(v)
            copies[id(host)] = (host, v, None)
            return host
        host = v.get()
        copies[id(host)] = (host, v, host.copy())
        return host

    try:
        out = fn(*walk(args, to_host), **walk(kwargs, to_host))
    finally:
        memory.finish()
    for host, a, before in copies.values():
        if before is not None and host.tobytes() != before.tobytes():
            a[...] = host  # (the handle's own write: ndarray.__setitem__)
    return walk(out, lambda x: _back(x, copies, device))


def run_cupy(fn, device: str, args: tuple, kwargs: dict, written=()):
    """``fn`` (CuPy's) on CuPy views of numloom's device memory; the storages it writes own
    their buffers first and take new versions after (their host mirrors go stale)."""
    import cupy

    from ..core.array import _SUPPORTED_KINDS as kinds
    from ..core.array import asarray

    targets = written_arrays(args, kwargs, written)
    if any(a._readonly for a in targets):  # CuPy's arrays are all writable: NumPy says no
        raise ValueError("a read-only numloom array is not handed to CuPy")
    arrays = arrays_in((args, kwargs))
    _evaluated(arrays)
    storages = {id(a._storage): a._storage for a in targets}
    for storage in storages.values():
        _own_device_buffer(storage, cupy)
    handed: dict = {}

    def to_cupy(x):
        if isinstance(x, _ndarray_type):
            c = cupy.asarray(x)
            handed[id(c)] = (c, x)
            return c
        return cupy.asarray(x) if isinstance(x, _np.ndarray) else x

    def back(x):
        mine = handed.get(id(x)) or _same_memory(x, handed.values())
        if mine is not None and mine[0] is x:
            return mine[1]
        if isinstance(x, cupy.ndarray) and x.ndim == 0:
            return x.get()[()]  # NumPy's functions give scalars where CuPy's give 0-d arrays
        if isinstance(x, cupy.ndarray) and x.dtype.kind in kinds:
            return asarray(x, device=device)
        return x

    with cupy.cuda.Device(int(device.partition(":")[2] or 0)):
        try:
            out = fn(*walk(args, to_cupy), **walk(kwargs, to_cupy))
        finally:
            if storages:
                stream = cupy.cuda.get_current_stream().ptr
                realize._backend(device).wait_for(device, stream)
                for storage in storages.values():
                    _renew(storage)
        target = kwargs.get("out")
        if isinstance(target, _ndarray_type) and isinstance(out, cupy.ndarray):
            return target  # NumPy returns ``out`` (CuPy sometimes another array of its values)
        return walk(out, back)


def _same_memory(x, handed):
    """The handed (CuPy array, numloom array) pair whose view ``x`` is exactly: CuPy returns
    ``out=`` as a new CuPy array over the same memory."""
    for c, a in handed:
        if (type(x) is type(c) and x.data.ptr == c.data.ptr and x.shape == c.shape
                and x.strides == c.strides and x.dtype == c.dtype):  # fmt: skip
            return (x, a)
    return None


def _own_device_buffer(storage, cupy) -> None:
    """Give a device storage a buffer that nothing else holds (a device copy if shared)."""
    version = storage.version
    if realize.owns_buffer(storage, version):
        return
    from ..core.array import _adopt, ndarray
    from ..core.dag import View

    whole = _adopt(ndarray.__new__(ndarray), storage, View.contiguous(version.shape))
    copy = cupy.asarray(whole).copy()
    backend = realize._backend(storage.device)
    data = backend.wrap_pointer(copy.data.ptr, version.shape, version.dtype, storage.device, copy)
    buffer = realize.Buffer(data, storage.device)
    storage.version = node(Op.BUFFER, (), buffer, version.shape, version.dtype)


def _renew(storage) -> None:
    """A new version node over the same (written) device memory: what was read from the old
    version (host mirrors, element caches) is no longer current."""
    version = storage.version
    buffer = realize.Buffer(version.arg.data, storage.device)
    storage.version = node(Op.BUFFER, (), buffer, version.shape, version.dtype)
    storage.mirror = None

"""Array creation: host data in, constants, ranges and grids.

Constants (``zeros``, ``full``) are a broadcast 0-d CONST: they take no memory until something
is written into them or they are evaluated; ``arange`` is an IOTA node.
"""

from __future__ import annotations

import builtins
import functools
import math
import operator

import numpy as _np

from ..core import config
from ..core.array import (
    _ADOPT,
    _RESULT_TYPES,
    _adopt,
    _as_subclass,
    _check_dtype,
    _device_name,
    _speedups,
    adopt_host,
    array_result,
    asarray,
    copyable,
    from_host,
    marked_copy,
    ndarray,
    result,
    share,
)
from ..core.dag import Op, View, node
from ..core.device import get_device
from ..core.realize import TRACING
from .ufuncs import _PY_SCALARS, scalar_node, ufunc

_NO_VALUE = _np._NoValue


_MAX_DIM = _np.iinfo(_np.intp).max
_BIG = 2**62  # (a range of Python ints within this is NumPy's int64 range)


def _shape_arg(shape) -> tuple:
    """``shape`` as a tuple of ints, with NumPy's errors for bad shapes."""
    try:
        try:
            dims = (operator.index(shape),)
        except TypeError:
            dims = tuple(operator.index(s) for s in shape)
    except TypeError:
        dims = None
    if dims is None or any(not 0 <= s <= _MAX_DIM for s in dims):
        _np.empty(shape, _np.int8)  # NumPy's error (never allocates: the shape is invalid)
    return dims


def _dtype_arg(dtype, default=float) -> _np.dtype:
    dtype = _np.dtype(default if dtype is None else dtype)
    _check_dtype(dtype)
    return dtype


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    """A new array of ``shape`` filled with ``fill_value`` (dtype inferred as NumPy does)."""
    shape = _shape_arg(shape)
    if isinstance(fill_value, ndarray):
        fill_value = fill_value.get()
    if dtype is None:
        dtype = _np.array(fill_value).dtype
    dtype = _dtype_arg(dtype)
    if type(fill_value) not in _PY_SCALARS and _np.ndim(fill_value) != 0:
        return from_host(_np.full(shape, fill_value, dtype), _device_name(device))
    target = _device_name(device) or get_device()
    if target == "cpu" and math.prod(shape) * dtype.itemsize <= EAGER_BYTES and not TRACING:
        # (a small array is filled at once: a loop's ``np.zeros(3)`` costs what NumPy's
        # does, and its element writes go straight into memory)
        return in_order(adopt_host(_np.full(shape, fill_value, dtype)), order)
    _np.full((), fill_value, dtype)  # NumPy's errors for values the dtype cannot hold
    return in_order(_filled(shape, dtype, fill_value, target), order)


# CPU arrays up to this size are made at once by ``full``, ``zeros``, ``ones`` and ``empty``.
EAGER_BYTES = 1 << 14


def in_order(a: ndarray, order, like=None) -> ndarray:
    """``a``, a new C-ordered array, laid out as ``order`` asks: 'F' in Fortran order (a view
    with Fortran strides of the values stored transposed), 'A' as ``like`` is laid out
    (Fortran order when it is F- but not C-contiguous), 'K' in the order of ``like``'s
    strides, largest first (NumPy's: a transposed view's copy is laid out as the view; C order
    where ``like`` has another number of axes)."""
    if order is None or order in ("C", "c") or a.ndim < 2:
        return a
    axes = tuple(reversed(range(a.ndim)))  # (Fortran order)
    if order in ("A", "a", "K", "k"):
        if like is None or like.flags.c_contiguous:
            return a
        if order in ("K", "k") and like.ndim != a.ndim:
            return a
        if order in ("K", "k") and not like.flags.f_contiguous:
            axes = tuple(sorted(range(a.ndim), key=lambda k: -abs(like.strides[k])))
            if axes == tuple(range(a.ndim)):
                return a
        elif not like.flags.f_contiguous:
            return a
    elif order not in ("F", "f"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    from .shapes import transpose

    stored = array_result(transpose(a, axes)._node(), a.device)
    made = transpose(stored, tuple(_np.argsort(axes)))
    made._base_array = None  # (its memory is its own, stored in that order: OWNDATA)
    return made


def small_grid(size: int) -> bool:
    """Whether a grid of ``size`` elements (``mgrid``, ``indices``) is made at once by NumPy and
    marked (small, on the CPU, outside ``numloom.jit``'s tracing), as a loop's small arrays
    are: the grid of a cell's neighbours in Bridson's sampling, ``np.indices((11, 11, 11))``
    then summed and masked (traced: a plan evaluated per call, 15x NumPy's time). A larger
    one is made lazily, a broadcast of its axes, its values fused into their first use."""
    return 0 < size <= config.EAGER_ELEMENTS and not TRACING and get_device() == "cpu"


def _small_now(make, shape, dtype):
    """``make(shape, dtype)`` (NumPy's ``zeros`` or ``ones``) as a numloom array, where it is
    small and on the CPU (a loop's ``np.zeros(3)``: what NumPy's costs); a larger one of a
    common dtype lazily, without ``full``'s parsing; None otherwise."""
    if type(shape) is int:
        n = shape
    elif type(shape) is tuple and len(shape) < 4 and all(type(d) is int for d in shape):
        n = math.prod(shape)
    else:
        return None
    try:
        dt = _SMALL_DTYPES.get(dtype)
    except TypeError:  # (a structured dtype's list of fields: the whole way, NumPy's own)
        return None
    if dt is None or n <= 0 or TRACING:
        return None
    device = get_device()
    if n * dt.itemsize > EAGER_BYTES or device != "cpu":
        if make is not _np.zeros and make is not _np.ones:
            return None  # (``eye``'s maker: the whole way)
        dims = (shape,) if type(shape) is int else shape
        if any(d < 0 for d in dims):
            return None  # (NumPy's error, the whole way)
        return _filled(dims, dt, 0 if make is _np.zeros else 1, device)
    return adopt_host(make(shape, dt))


# The dtypes ``_small_now`` takes as given (others go the whole way: NumPy's checks)
_SMALL_DTYPES = {t: _np.dtype(t) for t in (float, int, bool, complex, "float64", "float32",
                                           "int64", "int32", "uint8", "bool", "complex128")}
_SMALL_DTYPES.update({_np.dtype(t): _np.dtype(t) for t in list(_SMALL_DTYPES)})
_SMALL_DTYPES.update({_np.dtype(t).type: _np.dtype(t) for t in list(_SMALL_DTYPES)})


def zeros(shape, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    if device is None and order == "C":
        made = _small_now(_np.zeros, shape, float if dtype is None else dtype)
        if made is not None:
            return made
    return full(shape, 0, _dtype_arg(dtype), order, device=device)


def ones(shape, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    if device is None and order == "C":
        made = _small_now(_np.ones, shape, float if dtype is None else dtype)
        if made is not None:
            return made
    return full(shape, 1, _dtype_arg(dtype), order, device=device)


def empty(shape, dtype=None, order="C", *, device=None, like=None) -> ndarray:
    """Like NumPy's ``empty``; numloom's empty arrays hold zeros."""
    return zeros(shape, dtype, order, device=device)


# Arrays smaller than this are taken to fit; a larger one is tried by NumPy first.
PROBE_BYTES = 1 << 30


def check_allocation(shape: tuple, dtype, device: str) -> None:
    """NumPy's error at the call for an array that cannot exist: ``ValueError`` past the
    largest size, ``MemoryError`` (NumPy's own, with its message) where the memory cannot be
    had. numloom allocates later, at the sync; NumPy itself tries a large allocation here
    (reserved, never touched, so it costs no memory) and a GPU array is checked against the
    device's memory."""
    nbytes = math.prod(shape) * _np.dtype(dtype).itemsize
    if nbytes < PROBE_BYTES:
        return
    if device == "cpu" or nbytes >= 1 << 63:
        _np.empty(shape, dtype)  # NumPy's ValueError or MemoryError, raised at the call
        return
    from ..core.device import OutOfMemoryError, load_backend

    backend = load_backend("cuda")
    total = backend.device_memory(device)
    if total is not None and nbytes > total:
        gib = lambda b: _np.format_float_positional(b / 2**30, 3)  # noqa: E731
        raise OutOfMemoryError(
            f"Unable to allocate {gib(nbytes)} GiB for an array with shape {tuple(shape)} and "
            f"data type {_np.dtype(dtype)} on {device}, which has {gib(total)} GiB"
        )


def _like_args(a, dtype, shape):
    a = asarray(a)
    return (a.shape if shape is None else shape), (a.dtype if dtype is None else dtype), a.device


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    return _like(a, 0, dtype, order, subok, shape, device)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    return _like(a, 1, dtype, order, subok, shape, device)


def empty_like(prototype, /, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like(prototype, 0, dtype, order, subok, shape, device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like(a, fill_value, dtype, order, subok, shape, device)


def _like(a, fill_value, dtype, order, subok, shape, device) -> ndarray:
    """``full_like``, of ``a``'s class where ``a`` is of a program's subclass and ``subok``."""
    made = _full_like(a, fill_value, dtype, order, shape, device)
    if subok and type(a) is not ndarray and isinstance(a, ndarray):
        return _as_subclass(made, a)
    return made


def _full_like(a, fill_value, dtype, order, shape, device) -> ndarray:
    """``full_like``: lazy, except where ``a`` is a marked array (a small array of a loop,
    ``api/eager.py``): NumPy's array then, adopted and marked, so the loop's work on it runs at
    once too (CFD Python's ``b = numpy.zeros_like(u)`` each step)."""
    if (type(a) is ndarray and a._identity and dtype is None and shape is None and device is None
            and type(fill_value) is int and (fill_value == 0 or fill_value == 1)
            and order in ("K", "C", "A") and not TRACING):  # fmt: skip
        # the common call, a loop's ``zeros_like(u)`` of a whole (C-ordered) array: its
        # shape, dtype and device as they are, a value every dtype holds
        return _like_whole(a, fill_value)
    shape, dtype, dev = _like_args(a, dtype, shape)
    made = in_order(full(shape, fill_value, dtype, device=device or dev), order, _prototype(a))
    if (isinstance(a, ndarray) and (a._storage.eager or _eager().small_piece(a))
            and made.device == "cpu" and not TRACING
            and 0 < made.size <= config.EAGER_ELEMENTS and made.flags.c_contiguous):  # fmt: skip
        return _eager().adopted(_np.full(made.shape, fill_value, made.dtype))
    return made


def _like_whole(a: ndarray, fill_value: int) -> ndarray:
    """``_like``'s answer for a C-ordered ``a`` and a fill of 0 or 1, as ``full`` and ``_like``
    give it: NumPy's array now where ``a`` is a loop's marked array or the result is small on
    the CPU, else the value broadcast (lazy)."""
    shape, dtype, storage = a.shape, a._dtype, a._storage
    size = math.prod(shape)
    if storage.device == "cpu":
        make = _np.zeros if fill_value == 0 else _np.ones
        # (a loop's marked array, or a small piece of a large computed one, which ufunc calls
        # take as marked: a row of a solution array, Euler's ``dfdt = zeros_like(y[i])``)
        if 0 < size <= config.EAGER_ELEMENTS and (storage.eager or _eager().small_piece(a)):
            return _eager().adopted(make(shape, dtype))
        if size * dtype.itemsize <= EAGER_BYTES:
            return adopt_host(make(shape, dtype))
    return _filled(shape, dtype, fill_value, storage.device)


def _filled(shape: tuple, dtype, fill_value, device: str) -> ndarray:
    """A lazy array of ``shape`` (a tuple of ints) holding ``fill_value`` (which ``dtype``
    holds): the value broadcast, no memory until evaluated."""
    check_allocation(shape, dtype, device)
    key = (shape, dtype, fill_value) if type(fill_value) is int and 0 <= fill_value <= 1 else None
    n = None if key is None else _FILLS.get(key)
    if n is None:
        value = scalar_node(fill_value, dtype)
        n = node(Op.VIEW, (value,), View(shape, (0,) * len(shape), 0), shape, dtype)
        n = n if shape else value
        if key is not None:
            if len(_FILLS) >= 256:
                _FILLS.clear()
            _FILLS[key] = n
    return array_result(n, device)


# (shape, dtype, 0 or 1) -> the node of that value broadcast (``_filled``'s, kept: a loop's
# ``zeros_like`` or ``zeros`` makes the same one each step)
_FILLS: dict = {}


def _prototype(a):
    """What a ``*_like`` function's 'K' order follows: ``a``'s layout, if it is an array (a
    DataFrame's ``flags`` are pandas' own)."""
    return a if isinstance(a, (ndarray, _np.ndarray)) else None


def array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """A numloom array from any array-like (a new array unless ``copy`` allows sharing)."""
    if type(obj) is list and dtype is None and not ndmin and copy is not False:
        for x in obj:  # (a list of scalars, a loop's ``np.array([u[1], -u[0]])``: NumPy's)
            if type(x) not in _SCALAR_ITEMS:
                break
        else:
            host = _np.array(obj)  # (new and C-contiguous: most of _fresh's answer)
            if (0 < host.size <= config.EAGER_ELEMENTS and _ADOPT[0] is not None
                    and host.dtype.kind in _KINDS and not TRACING
                    and get_device() == "cpu"):  # fmt: skip
                return _ADOPT[0](host)  # (marked, its host view ready: eager.adopted in C)
            if _fresh(host):
                return _adopted(host)
            return asarray(host)
        if type(x) is ndarray and _HOSTS is not None and not TRACING:
            # (a loop's rows, read by Python: ``np.array([s for s in X if s[j] >= t])``)
            made = _rows_now(obj)
            if made is not None:
                return made
    if isinstance(obj, ndarray):
        if not subok and type(obj) not in _RESULT_TYPES:  # a program's subclass: an array of
            # the base class (no __array_finalize__ called, as NumPy's), a view of its memory
            obj = _adopt(ndarray.__new__(ndarray), obj._storage, obj._view, obj._readonly,
                         obj._dtype)  # fmt: skip
        out = _array_from_numloom(obj, dtype, copy, order)  # (laid out as order asks)
        if out is not obj:
            return out if out.ndim >= ndmin else out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    elif (isinstance(obj, (list, tuple)) and (dtype is None or _np.dtype(dtype).kind in _KINDS)
          and any(isinstance(x, ndarray) for x in _flat_items(obj))):  # fmt: skip
        out = _array_of_arrays(obj)  # (of another dtype, NumPy's array: the next branch)
        out = out if dtype is None else out.astype(dtype, copy=False)
    else:  # NumPy converts (and raises for copy=False where it would have to copy)
        try:
            host = _np.array(obj, dtype=dtype, copy=None if copy or copy is None else False,
                             ndmin=ndmin)
        except ValueError:  # (a program's class whose __array__ makes a numloom array)
            if not hasattr(type(obj), "__array__"):
                raise
            try:  # (NumPy 2's protocol: a method taking ``copy`` makes the copy asked for)
                made, copy = obj.__array__(copy=True if copy else copy), None
            except TypeError as e:
                if "copy" not in str(e):
                    raise
                made = obj.__array__()
            if not isinstance(made, ndarray):
                raise
            return array(made, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
        if type(host) is _np.ndarray and host.dtype.kind not in _KINDS:
            return _np.asarray(host, order=order)  # (NumPy's own data: its objects are obj's)
        own = host
        if type(obj) is not _np.ndarray and type(host) is _np.ndarray and not _fresh(host):
            own = _np.array(host, order="C")  # (a view of a pandas Series' data, say)
        if type(obj) is not _np.ndarray and own is not obj and _fresh(own):
            # (NumPy's array of a list or of another library's data, a pandas Series: numloom's
            # memory, marked where it is small; api/eager.py)
            out = _adopted(own)
        else:
            out = asarray(host, copy=copy)  # always a copy of the host data (read-only
            # where NumPy's is the read-only array itself)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    if out is obj:  # (shared: copied only where 'C' or 'F' asks for another layout)
        return laid_out(out, order, copy)
    if order not in ("C", "c", None) and out.ndim > 1:
        out = in_order(out, order, _prototype(obj))
    return out


_FLAGS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
          "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
          "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}  # fmt: skip


def require(a, dtype=None, requirements=None, *, like=None) -> ndarray:
    """``a`` as an array of ``dtype`` that has the flags ``requirements`` names (contiguous
    in C or F order, aligned, writeable, owning its data), a copy where it lacks one, as
    ``numpy.require``."""
    if like is not None:
        return _np.require(a, dtype, requirements, like=like)  # (NEP 35: like's library)
    if not requirements:
        return asarray(a, dtype=dtype)
    if isinstance(requirements, str):
        requirements = [requirements]
    wanted = {_FLAGS[r.upper()] for r in requirements}  # (NumPy's KeyError for a bad name)
    wanted.discard("E")  # (numloom's arrays are its only ones: no subclass to drop)
    if wanted >= {"C", "F"}:
        raise ValueError('Cannot specify both "C" and "F" order')
    order = "C" if "C" in wanted else "F" if "F" in wanted else "A"
    made = array(a, dtype=dtype, order=order, copy=None)
    flags = {"A": made.flags.aligned, "W": made.flags.writeable, "O": made.flags.owndata}
    if any(not flags[r] for r in wanted - {"C", "F"}):
        return made.copy(order)
    return made


def laid_out(a: ndarray, order, copy) -> ndarray:
    """``a`` itself where ``order`` allows (NumPy's ``asarray(a, order=...)``): 'C' or 'F'
    ask for an array contiguous in that order, a copy where ``a`` is not (NumPy's error with
    ``copy=False``); 'A', 'K' and None take ``a`` as it is laid out."""
    if order is None or order in ("A", "a", "K", "k"):
        return a
    if order in ("C", "c"):
        fits = a.flags.c_contiguous
    elif order in ("F", "f"):
        fits = a.flags.f_contiguous
    else:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    if fits:
        return a
    if copy is False:
        raise ValueError(_NO_COPY)
    return in_order(a.copy(), order)


def in_order_of(made: ndarray, a) -> ndarray:
    """``made`` (new) in Fortran order where ``a`` is Fortran-ordered and not C-ordered, as
    NumPy's ``delete``, ``insert`` and ``pad`` lay out their results."""
    return laid_out(made, "F", None) if a.flags.fnc and isinstance(made, ndarray) else made


def _fresh(host) -> bool:
    """Whether ``host``, an array NumPy just made, may become a CPU array's memory as it is."""
    return (type(host) is _np.ndarray and host.dtype.kind in _KINDS and host.dtype.isnative
            and host.flags.c_contiguous and host.flags.owndata
            and get_device() == "cpu")  # fmt: skip


def _adopted(host) -> ndarray:
    """``host`` as a new CPU array's memory, marked where it is small (a loop's array built
    from a list: its calls run at once, ``api/eager.py``)."""
    if host.size <= config.EAGER_ELEMENTS and not TRACING:
        return _eager().adopted(host, scalar=False)  # (marked, its host view ready)
    return adopt_host(host)


@functools.cache
def _eager():
    from . import eager  # (it imports this module's neighbours: loaded at the first use)

    return eager


_KINDS = frozenset("biufc")
_SCALAR_ITEMS = frozenset([bool, int, float, complex] + [
    _np.dtype(c).type for c in "?bhilqBHILQefdFD"])  # fmt: skip


_NO_COPY = (
    "Unable to avoid copy while creating an array as requested.\n"
    "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy "
    "when needed (no behavior change in NumPy 1.x).\n"
    "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
    "#adapting-to-changes-in-the-copy-keyword."
)


def _flat_items(obj):
    for x in obj:
        if isinstance(x, (list, tuple)):
            yield from _flat_items(x)
        else:
            yield x


def _array_from_numloom(a: ndarray, dtype, copy, order="K") -> ndarray:
    """``array(a, ...)`` of a numloom array: a cast (laid out as ``a`` where the order is 'A'
    or 'K', as NumPy's), a copy in ``order``, or ``a`` itself."""
    if dtype is not None and _np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError(_NO_COPY)
        return a.astype(dtype, order="K" if order in ("A", "a", "K", "k", None) else order)
    return a.copy(order or "K") if copy else a


def _array_of_arrays(items) -> ndarray:
    """``array([a, b, ...])`` of numloom arrays (or nested lists of them): one lazy CONCAT."""
    from ..core.array_views import reshape_array

    # (numloom arrays as they are: the CONCAT copies them, so a copy of each is work and a
    # kernel per item: a decision tree's np.array([row for row in X if ...]))
    parts = [x if isinstance(x, ndarray) else array(x) for x in items]
    shape = parts[0].shape
    if any(p.shape != shape for p in parts) or not all(isinstance(p, ndarray) for p in parts):
        from .fallback import to_numpy

        # NumPy's error for ragged input; NumPy's array beside objects or strings
        return asarray(_np.array(to_numpy(items)))
    now = _parts_now(parts)
    if now is not None:
        return now
    rows = _rows_of_one_array(parts)
    if rows is not None:
        return rows
    dtype = _np.result_type(*(p.dtype for p in parts))
    srcs = tuple(reshape_array(p.astype(dtype, copy=False), (1,) + shape)._node() for p in parts)
    n = node(Op.CONCAT, srcs, 0, (len(parts),) + shape, dtype)
    return result(n, parts[0].device)


def _rows_now(items: list):
    """``array(items)`` of numloom arrays whose host views are current, made now by NumPy and
    marked, as ``_parts_now`` makes it, without its checks of each item; None otherwise."""
    from . import eager

    hosts = _HOSTS(items)  # (None unless each is a CPU array whose host view is current)
    if hosts is None or len(hosts) * hosts[0].size > eager.EAGER_ELEMENTS:
        return None
    return eager.adopted(_np.array(hosts), scalar=False)


def _parts_now(parts: list):
    """``array(parts)`` made now by NumPy, marked (``eager.adopted``), where every part is a
    computed CPU array and all of them are a loop's small array (a decision tree's split of the
    rows Python read, whose labels' ``unique`` and counts come next: joined lazily, each new
    count of rows was a new plan at the first read); None where the join is traced."""
    from . import eager

    if TRACING or len(parts) * parts[0].size > eager.EAGER_ELEMENTS:
        return None

    made = None if _HOSTS is None else _rows_now(parts)  # (rows Python read: host views)
    if made is not None:
        return made
    hosts = []
    for p in parts:
        h = p._host  # (a GPU array's host view is its mirror: its join is the GPU's)
        if p._storage.device != "cpu":
            return None
        h = h[1] if h is not None and h[0]() is p._storage.version else eager.operand_now(p)
        if h is None:
            return None
        hosts.append(h)
    return eager.adopted(_np.array(hosts), scalar=False)


_HOSTS = None if _speedups is None else _speedups.hosts


ROWS_GATHERED = 1 << 20  # elements: above, the pieces are joined as any others


def _rows_of_one_array(parts: list):
    """``array([...])`` of views of one array's memory that differ only in where they start
    (the rows a loop picked, ``[s for s in X if s[0] >= t]``): one gather of their elements
    from that memory, where a join of that many pieces would be a kernel a piece. None for
    any other list."""
    first = parts[0]
    storage, view, dtype = first._storage, first._view, first._dtype
    if len(parts) <= 4 or len(parts) * view.size > ROWS_GATHERED:
        return None
    for p in parts:
        if (p._storage is not storage or p._dtype != dtype or p._view.shape != view.shape
                or p._view.strides != view.strides):  # fmt: skip
            return None
    steps = _np.array(view.strides, _np.int64).reshape((-1,) + (1,) * len(view.shape))
    inner = (_np.indices(view.shape, _np.int64) * steps).sum(axis=0)  # (each element's place)
    starts = _np.array([p._view.offset for p in parts], _np.int64)
    whole = share(first, View.contiguous((math.prod(storage.version.shape),)))
    return whole[starts.reshape((-1,) + (1,) * len(view.shape)) + inner]


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """NumPy's ``frombuffer``: of a numloom array, a view of its bytes (its base that array, so
    writes through either show in the other); of other buffers (bytes, a bytearray, mmap),
    NumPy's array of them."""
    if isinstance(buffer, ndarray):
        made = _bytes_view(buffer, _np.dtype(dtype) if dtype is not None else None, count,
                           offset)  # fmt: skip
        if made is not None:
            return made
    from .fallback import call_numpy

    made = call_numpy("frombuffer", _np.frombuffer, buffer, dtype, count, offset, like=like)
    if isinstance(made, ndarray) and _read_only_buffer(buffer):
        # (bytes: NumPy's array is a read-only view whose base is the bytes; numloom's holds
        # a copy, which nothing can tell apart: the bytes never change)
        made._readonly, made._base_array = True, buffer
    return made


def _read_only_buffer(buffer) -> bool:
    try:
        with memoryview(buffer) as view:
            return view.readonly
    except TypeError:
        return False


def _bytes_view(a: ndarray, dtype, count: int, offset: int):
    """``frombuffer(a, dtype, count, offset)`` as a view of ``a``'s bytes, with NumPy's errors;
    None where numloom cannot view them so (a dtype it does not hold, an element not aligned to
    its size): NumPy's array of them then."""
    if dtype is None or dtype.kind not in "biufc":
        return None
    if not a.flags.c_contiguous:
        raise ValueError("ndarray is not C-contiguous")
    item, total = dtype.itemsize, a.nbytes
    count, offset = operator.index(count), operator.index(offset)
    if offset < 0 or offset > total:
        raise ValueError(
            f"offset must be non-negative and no greater than buffer length ({total})")
    left = total - offset
    if count < 0:
        if left % item:
            raise ValueError("buffer size must be a multiple of element size")
        count = left // item
    elif left < count * item:
        raise ValueError("buffer is smaller than requested size")
    if offset % item or (a.dtype.itemsize % item and item % a.dtype.itemsize):
        return None
    flat = a.reshape(-1).view(_np.uint8)[offset : offset + count * item]
    try:
        made = flat.view(dtype)
    except NotImplementedError:  # (numloom views whole elements of its storage only)
        return None
    made._base_array = a  # (NumPy's base: the object whose buffer it is)
    return made


def asnumpy(a, stream=None, order="C", out=None) -> _np.ndarray:
    """``a`` as a NumPy array on the host; NumPy arrays and scalars are accepted as CuPy does."""
    if isinstance(a, ndarray):
        return a.get(out=out)
    host = _np.asarray(a, order=order)
    if out is not None:
        out[...] = host
        return out
    return host


def ascontiguousarray(a, dtype=None, *, like=None) -> ndarray:
    a = asarray(a, dtype=dtype)
    if a.ndim == 0:
        return a.reshape((1,))
    return a if a._view.is_contiguous() else a.copy()


def copy(a, order="K", subok=False) -> ndarray:
    """A new array with ``a``'s current values: a new storage whose first version is ``a``'s
    value node, so later writes to either one leave the other as it is; of ``a``'s class
    where ``a`` is of a program's subclass and ``subok``."""
    a = asarray(a)
    made = marked_copy(a, in_order(array_result(copyable(a._node()), a.device), order, a))
    return _as_subclass(made, a) if subok and type(a) is not ndarray else made


def asfortranarray(a, dtype=None, *, like=None) -> ndarray:
    """``a`` in Fortran order (itself when it already is)."""
    a = asarray(a, dtype=dtype)
    if a.ndim < 2 or a.flags.f_contiguous:
        return a if a.ndim else a.reshape((1,))
    return in_order(array_result(copyable(a._node()), a.device), "F")


def arange(start=_NO_VALUE, stop=None, step=None, dtype=None, *, device=None, like=None):
    """Evenly spaced values in [start, stop), with NumPy's length, dtype and errors."""
    if (type(start) is int and (stop is None or type(stop) is int) and dtype is None
            and (step is None or type(step) is int and step) and device is None):  # fmt: skip
        # (a loop's small integer range: NumPy's, made at once)
        n = len(range(start) if stop is None else range(start, stop, step or 1))
        if (0 < n <= EAGER_BYTES // 8 and -_BIG <= start < _BIG
                and (stop is None or -_BIG <= stop < _BIG)
                and not TRACING and get_device() == "cpu"):  # fmt: skip
            return adopt_host(_np.arange(start, stop, step) if stop is not None
                              else _np.arange(start))  # fmt: skip
    if start is _NO_VALUE:  # arange(stop=5)
        if stop is None:
            raise TypeError("arange() requires stop to be specified.")
        start, stop = stop, None
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if _datetimes(start, stop, step, dtype):
        _check_dtype(_np.dtype("M8"))  # NumPy's arange (numloom's namespace runs it)
    _np.arange(start, start, step, dtype=dtype)  # NumPy's errors (step 0, bad types)
    if not isinstance(stop, (int, float, complex, _np.generic)):
        _np.arange(stop, stop, step, dtype=dtype)
    out_dtype = _np.dtype(dtype) if dtype is not None else _arange_dtype(start, stop, step)
    _check_dtype(out_dtype)
    length = _arange_length(start, stop, step)
    if out_dtype.kind == "b" and length > 2:
        _np.arange(start, stop, step, dtype=out_dtype)  # NumPy's error: bools count to 2
    target = _device_name(device) or get_device()
    if target == "cpu" and length * out_dtype.itemsize <= EAGER_BYTES and not TRACING:
        # (a small range is made at once, as ``full`` makes a small array: a loop's
        # ``np.arange(3)`` costs what NumPy's does)
        return adopt_host(_np.arange(start, stop, step, dtype=out_dtype))
    check_allocation((length,), out_dtype, target)
    n = node(Op.IOTA, (), (start, stop, step), (length,), out_dtype)
    return result(n, target)


def _datetimes(start, stop, step, dtype) -> bool:
    """Whether arange counts datetimes or timedeltas (which numloom arrays do not hold)."""
    if dtype is not None and _np.dtype(dtype).kind in "mM":
        return True
    return any(isinstance(v, (_np.datetime64, _np.timedelta64, str)) for v in (start, stop, step))


def _arange_dtype(start, stop, step) -> _np.dtype:
    """NumPy's arange picks the default int, float or complex type whatever the scalar types;
    Python ints beyond int64 make it use objects (numloom cannot hold those)."""
    values = [v.item() if isinstance(v, _np.generic) else v for v in (start, stop, step)]
    if any(type(v) is int and not -(2**63) <= v < 2**63 for v in values):
        return _np.dtype(object)
    return _np.result_type(*values)


def _arange_length(start, stop, step) -> int:
    """NumPy's length: ``ceil((stop - start) / step)`` in the scalars' own arithmetic; for
    complex values the smaller of the real and imaginary parts' lengths."""
    delta = (stop - start) / step
    parts = (delta.real, delta.imag) if isinstance(delta, complex) else (delta,)
    length = None
    for part in parts:
        if math.isnan(part):
            raise ValueError("arange: cannot compute length")
        if math.isinf(part) or math.ceil(part) > _MAX_DIM:
            raise ValueError("Maximum allowed size exceeded")
        n = builtins.max(math.ceil(part), 0)
        if part == 0 and stop != start and not isinstance(delta, complex):
            # a step beyond the range: [start] forwards, nothing backwards
            n = 0 if math.copysign(1.0, part) < 0 else 1
        length = n if length is None else builtins.min(length, n)
    return length


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):  # fmt: skip
    host = _np.linspace(_host(start), _host(stop), num, endpoint, retstep, dtype, axis)
    if retstep:
        return from_host(host[0], _device_name(device)), host[1]
    return from_host(host, _device_name(device))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return from_host(_np.logspace(_host(start), _host(stop), num, endpoint, base, dtype, axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return from_host(_np.geomspace(_host(start), _host(stop), num, endpoint, dtype, axis))


def _host(x):
    return x.get() if isinstance(x, ndarray) else x


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None) -> ndarray:
    """Ones on the k-th diagonal: ``where(j - i == k)`` over two IOTAs, NumPy's checks first."""
    if (device is None and order == "C" and type(N) is int and (M is None or type(M) is int)
            and type(k) is int):  # fmt: skip
        made = _small_now(lambda shape, dt: _np.eye(N, M, k, dt), (N, N if M is None else M),
                          dtype)  # fmt: skip
        if made is not None:
            return made
    equal, subtract = ufunc(_np.equal), ufunc(_np.subtract)  # (elementwise.py's are above)
    M = N if M is None else M
    blank = full(_shape_arg((N, M)), 0, _dtype_arg(dtype), device=device)
    if blank._storage.version.op is Op.BUFFER and not TRACING:  # (small: made at once)
        return in_order(adopt_host(_np.eye(N, M, k, blank.dtype)), order)
    if k >= M:  # NumPy returns before it looks at k
        return blank
    k = operator.index(k)
    rows = arange(N, device=device).reshape(N, 1)
    cols = arange(M, device=device).reshape(1, M)
    return equal(subtract(cols, rows), k).astype(blank.dtype)


def identity(n, dtype=None, *, like=None) -> ndarray:
    return eye(n, dtype=float if dtype is None else dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors, as NumPy's (broadcast views unless copy)."""
    from .shapes import broadcast_arrays

    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    grids = []
    for k, x in enumerate(xi):
        shape = [1] * ndim
        shape[k] = -1
        grids.append(asarray(x).reshape(shape))
    if indexing == "xy" and ndim > 1:
        grids[0] = grids[0].reshape((1, -1) + (1,) * (ndim - 2))
        grids[1] = grids[1].reshape((-1, 1) + (1,) * (ndim - 2))
    if not sparse:
        grids = broadcast_arrays(*grids)
    if copy:
        grids = tuple(g.copy() for g in grids)
    return _MESHGRID_TYPE(grids) if sparse and not copy else tuple(grids)


# What NumPy's meshgrid(sparse=True, copy=False) returns: a list before NumPy 2.5, a tuple since.
_MESHGRID_TYPE = type(_np.meshgrid(_np.zeros(1), sparse=True, copy=False))


"""``a[key]`` and ``a[key] = value``: basic indexing as views, advanced indexing as GATHER,
writes as SCATTER (through a view) or SCATTER_AT (at gathered flat positions).

NumPy itself checks every key, on a stand-in array that has the handle's shape and strides but
no memory: its errors are NumPy's, and for basic indexing the stand-in's result *is* the new view
(its shape, strides and data offset are read back).
"""

from __future__ import annotations

import operator as _operator
import weakref

import numpy as _np

from ..core import dag as _dag
from ..core import fperrors, realize
from ..core.array import _Scalar, asarray, ndarray, operand, plain, result
from ..core.array_views import basic_view, numpy_view
from ..core.dag import Op, View, node
from ..core.host import _INTEGERS, quiet_value
from ..core.views import broadcast_node, broadcast_shapes, transpose_view, warn_if_first_write
from . import eager, writes


def shape_str(shape: tuple) -> str:
    """A shape as NumPy prints it in messages: ``(2,4)``, ``(3,)``."""
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _is_advanced(k) -> bool:
    """NumPy's rule: arrays, sequences (tuples inside the key too) and booleans index by value
    (a copy); integers, slices, None and Ellipsis index by view."""
    return isinstance(k, (ndarray, _np.ndarray, list, tuple, range, bool, _np.bool_))


class _BoolScalar:
    """A boolean scalar index (``True``, a 0-d boolean array): NumPy adds a new axis of length
    1 and picks index ``[0]`` (True) or ``[]`` (False) along it, as an advanced index."""

    def __init__(self, value: bool):
        self.value = bool(value)

    def index(self) -> _np.ndarray:
        return _np.zeros(int(self.value), _np.intp)


def _normalize_key(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _view_key(key: tuple) -> tuple:
    """The key with a trailing Ellipsis, so a full integer index gives a 0-d view, not a scalar."""
    for k in key:
        if k is Ellipsis:
            return key
    return key + (Ellipsis,)


# --- reading ---------------------------------------------------------------------------------


_BASIC = (slice, int, type(None), type(Ellipsis))
_WHOLE = slice(None)


def _scalars_as_ints(key: tuple) -> tuple:
    """The key with each integer result where NumPy gives a scalar (``j = argmin(x)``,
    ``n = x.sum()``) as the int it is: NumPy indexes with a scalar, so ``v[:, j]`` is a view
    that writes reach, where a 0-d array would be an advanced index and a copy."""
    for k in key:  # (every indexing passes here: a plain loop, no generator)
        if type(k) is _Scalar:
            break
    else:
        return key
    if realize.TRACING:
        return key
    return tuple(int(k) if type(k) is _Scalar and k.dtype.kind in "iu" else k for k in key)


_READ_AS_IS = (ndarray, _np.ndarray, _np.generic, list, tuple, range, bool)


def _protocol_entries(key: tuple) -> tuple:
    """The key with each entry NumPy reads through a protocol as what it reads: an object
    with ``__index__`` (no array, bool or sequence) as its int, so a full integer index gives
    NumPy's scalar, and one with ``__array__`` (a program's array-like, which may give numloom's
    array) as numloom's array."""
    for k in key:  # (every indexing passes here: a plain loop, no generator)
        if type(k) not in _BASIC and not isinstance(k, _READ_AS_IS):
            break
    else:
        return key
    read = tuple(_protocol_entry(k) for k in key)
    return key if all(r is k for r, k in zip(read, key)) else read


def _protocol_entry(k):
    if type(k) in _BASIC or isinstance(k, _READ_AS_IS):
        return k
    if hasattr(type(k), "__index__"):
        return _operator.index(k)
    if hasattr(k, "__array__"):
        return asarray(k)
    return k


def _as_ints(key: tuple, ndim: int):
    """A key of an integer for every axis, some of them 0-d integer arrays (NumPy reads those
    as integers, and gives a scalar), as ints; None for any other key."""
    if len(key) != ndim or realize.TRACING:
        return None
    ints = []
    for k in key:
        if type(k) in _INTEGERS:
            ints.append(k)
        elif isinstance(k, (ndarray, _np.ndarray)) and k.ndim == 0 and k.dtype.kind in "iu":
            ints.append(int(k))
        else:
            return None
    return tuple(ints)


def getitem(a: ndarray, key):
    given = _scalars_as_ints(key if isinstance(key, tuple) else (key,))
    key = _protocol_entries(given)
    if key is not given:
        return ndarray.__getitem__(a, key)  # (a full integer index: NumPy's scalar)
    for k in key:
        if type(k) not in _BASIC and _is_advanced(k):
            ints = _as_ints(key, a.ndim)
            if ints is not None:
                return ndarray.__getitem__(a, ints)  # (NumPy's scalar)
            if len(key) == 1 and a._storage.device == "cpu":
                picked = _compact_now(a, k)
                if picked is not None:
                    return picked
            if a._storage.eager or realize.large_computed(a._storage):  # (NumPy's gather, now)
                picked = _gather_now(a, key)
                if picked is not None:
                    return picked
            return _advanced_getitem(a, key)
    return basic_view(a, _view_key(key))


def _compact_now(a: ndarray, mask):
    """``a[mask]`` for a boolean array ``mask`` on the CPU, run now by NumPy on the evaluated
    buffers: the mask's value is needed now anyway (it gives the result's shape), and NumPy's
    compaction, adopted without a copy, is what a later gather kernel would do, less the
    index arrays. None where that does not apply (the lazy path takes it)."""
    if realize.TRACING or a._storage.device != "cpu":
        return None
    if isinstance(mask, ndarray):
        if mask._dtype != _np.bool_ or mask._storage.device != "cpu":
            return None
        host_mask = mask._host_view()
    elif type(mask) is _np.ndarray and mask.dtype == _np.bool_:
        host_mask = mask
    else:
        return None
    picked = a._host_view()[host_mask]  # NumPy's errors (a mask of the wrong shape)
    return eager.adopted(picked)  # (ufuncs on it run now: eager.py)


def _gather_now(a: ndarray, key: tuple):
    """``a[key]`` with integer index arrays, for a marked array ``a`` (a loop's small array on
    the CPU) or any computed CPU array, whose every index is computed, small and on the CPU:
    NumPy's indexing of the evaluated buffers, run now, its result marked (a sieve's
    ``phi[ind] -= phi[ind] // p`` over a large array: a lazy gather, then a new version of the
    whole array at each update); None where the lazy path takes it."""
    if realize.TRACING:
        return None
    host_key = []
    for k in key:
        if type(k) in _BASIC:
            host_key.append(k)
            continue
        h = eager.operand_now(k)  # (None: pending, large, on a GPU, or not an array)
        if h is None or h.dtype.kind not in "iub":
            return None
        host_key.append(h)
    base = eager.operand_now(a)
    if base is None:
        if a._storage.eager or not realize.large_computed(a._storage):
            return None
        base = a._host_view()  # (a large computed array: its memory, read in place)
    return eager.made_now(base[tuple(host_key)])  # (NumPy's errors: out of bounds, shapes)


# The last mask whose true positions a GPU found: (weak reference to the mask's version, its
# view's (offset, size), the positions as an array), replaced whole (threads read it at once).
# A loop that compacts several arrays with one mask (``z, c = z[keep], c[keep]``) finds them
# once, with one sync.
_last_positions: tuple = (None, None, None)


def device_true_positions(mask: ndarray):
    """The flat positions (``intp``, C order) where ``mask`` is true, found on its GPU without
    copying the mask to the host: an ``intp`` array on that device. None on the CPU and while
    tracing (NumPy finds them there)."""
    global _last_positions
    if mask._storage.device == "cpu" or realize.TRACING:
        return None
    if mask.dtype != _np.bool_:
        mask = mask != 0
    if mask.itemsize != 1 or not mask._view.is_contiguous():
        mask = mask.copy()
    storage = mask._storage
    realize.ensure(storage)
    if storage.error is not None:
        raise storage.error
    version, where = storage.version, (mask._view.offset, mask.size)
    ref, last_where, positions = _last_positions
    if ref is not None and ref() is version and last_where == where:
        return positions
    backend = realize._backend(storage.device)
    found = backend.true_positions(version.arg.data, where[0], where[1], storage.device)
    positions = result(realize.buffer_node(found, storage.device), storage.device)
    _last_positions = (weakref.ref(version), where, positions)
    return positions


def _true_positions(mask) -> list:
    """``nonzero(mask)`` of a boolean key: one intp array per axis (on a GPU, found there)."""
    if isinstance(mask, ndarray):
        flat = device_true_positions(mask)
        if flat is not None:
            return unravel_positions(flat, mask.shape)
        mask = mask.get()
    return [asarray(i.astype(_np.intp)) for i in _np.nonzero(mask)]


def unravel_positions(flat: ndarray, shape: tuple) -> list:
    """Per axis of ``shape``, the coordinates of C-order flat positions ``flat`` (lazy)."""
    if len(shape) == 1:
        return [flat]
    if len(shape) == 0:
        return []
    out, rest = [], flat
    for size in reversed(shape[1:]):
        out.append(rest % size)
        rest = rest // size
    out.append(rest)
    return out[::-1]


_READ_BACK = 4096  # device index arrays up to this many entries are read back to be checked


def _host_index(k, size=None):
    """An index entry NumPy can check: host arrays as they are, numloom arrays evaluated. An
    integer array on a GPU stays there: its bounds (against ``size``, the indexed axis's
    length) are checked by its minimum and maximum, read back together; only an index out of
    bounds comes to the host, for NumPy's own error naming the first bad entry. (A small one
    is read back whole: as fast, and no kernel.)"""
    if not isinstance(k, ndarray):
        return k
    if k._storage.pending and k.dtype != bool:
        return None
    if k.device == "cpu" or k.dtype == bool or k.size <= _READ_BACK:
        return k.get()  # (a small index: one short copy, no kernel)
    if size is None:
        return _shape_only(k)
    values = (k.min(), k.max())
    realize.evaluate(*values)
    low, high = (v.item() for v in values)
    if low < -size or high >= size:
        return k.get()
    return _shape_only(k)


class _ShapeOnly(_np.ndarray):
    """Zeros standing for a device index array whose values were checked without it (only
    its shape matters to NumPy's indexing of the stand-in)."""


def _shape_only(k):
    """Zeros of ``k``'s shape and dtype, allocating nothing (one element, broadcast)."""
    return _np.broadcast_to(_np.zeros((), k.dtype), k.shape).view(_ShapeOnly)


def _validate(a: ndarray, key: tuple) -> None:
    """Run the key on a stand-in to get NumPy's errors (a key NumPy accepts raises nothing)."""
    if len(key) == 1 and _is_bool_array(key[0]):
        mask = key[0]
        if mask.ndim and mask.shape == a.shape[: mask.ndim]:
            return  # (a mask of the leading axes' shape: nothing can be wrong)
    entries, stand_ins = [], []  # (stand_ins: entries that stand for a device array's shape)
    alone = sum(1 for k in key if type(k) not in _BASIC and _is_advanced(k)) == 1
    for k, axis in zip(key, _axes_of(key, a.ndim)):
        if isinstance(k, ndarray) and _checked_when_run(k) and k.dtype != bool:
            entries.append(_shape_only(k))  # bounds are checked when it runs
            stand_ins.append(len(entries) - 1)
        elif alone and _is_bool_array(k) and isinstance(k, ndarray) and k.device != "cpu":
            # a GPU mask alone: only its shape can be wrong (its values stay on the device)
            entries.append(_np.zeros(k.shape, _np.bool_))
        else:
            entries.append(_host_index(k, None if axis is None or axis >= a.ndim else
                                       a.shape[axis]))  # fmt: skip
            if type(entries[-1]) is _ShapeOnly:
                stand_ins.append(len(entries) - 1)
    stand_in = _np.broadcast_to(_np.zeros((), _np.int8), a.shape)
    large = any(entries[i].size > _READ_BACK for i in stand_ins)
    advanced = sum(1 for k in entries if type(k) not in _BASIC and _is_advanced(k))
    if large and len(stand_ins) == advanced:
        _check_with_probes(stand_in, entries, stand_ins)
    else:
        stand_in[tuple(entries)]


def _check_with_probes(stand_in, entries: list, ats: list) -> None:
    """NumPy's errors for ``stand_in[entries]``, where the key's advanced indices are the
    zero arrays ``entries[ats]``, some large, found without indexing with them (that would
    take time in proportion to their size): their shapes must broadcast together, and small
    indices of the broadcast rank stand for them."""
    try:
        shape = _np.broadcast_shapes(*[entries[i].shape for i in ats])
    except ValueError:
        stand_in[tuple(entries)]  # NumPy's message (it fails before reading an index)
        raise
    small = list(entries)
    for i in ats:
        small[i] = _np.zeros((1,) * len(shape), entries[i].dtype)
    stand_in[tuple(small)]


def _axes_of(key: tuple, ndim: int) -> list:
    """For each entry of ``key``, the axis of the indexed array it indexes (None for
    Ellipsis, None, booleans: those take no single axis)."""
    def width(k):
        if k is None or k is Ellipsis or isinstance(k, (bool, _np.bool_)):
            return 0
        if _is_bool_array(k):
            return k.ndim
        return 1

    used = sum(width(k) for k in key)
    axes, axis = [], 0
    for k in key:
        single = width(k) == 1 and not _is_bool_array(k)
        axes.append(axis if single else None)
        axis += (ndim - used) if k is Ellipsis else width(k)
    return axes


def _expand(key: tuple, ndim: int) -> list:
    """The key with Ellipsis replaced by full slices, bool arrays by their nonzero() and bool
    scalars by ``_BoolScalar``."""
    out = []
    for k in key:
        if isinstance(k, (list, tuple, range)):
            k = _np.asarray(k)
        if isinstance(k, (bool, _np.bool_)) or _is_bool_array(k) and k.ndim == 0:
            out.append(_BoolScalar(k.get() if isinstance(k, ndarray) else k))
        elif _is_bool_array(k):
            out.extend(_true_positions(k))
        else:
            out.append(k)
    used = sum(1 for k in out if k is not None and k is not Ellipsis
               and not isinstance(k, _BoolScalar))  # fmt: skip
    ellipsis = [i for i, k in enumerate(out) if k is Ellipsis]
    at = ellipsis[0] if ellipsis else len(out)
    out[at : at + 1] = [slice(None)] * (ndim - used)
    return out


def _is_bool_array(k) -> bool:
    return isinstance(k, (ndarray, _np.ndarray)) and k.dtype == bool


def _split(entries: list) -> tuple:
    """The basic key that keeps every advanced axis whole, and for each advanced index the
    axis it has in that view, the axis of ``a`` it indexes (None for a new one) and the index."""
    basic, advanced, axis = [], [], 0
    for dim, k in enumerate(entries):
        if k is None:
            basic.append(None)
        elif isinstance(k, _BoolScalar):
            basic.append(None)
            advanced.append((dim, None, k.index()))
        elif isinstance(k, slice):
            basic.append(k)
            axis += 1
        else:
            basic.append(slice(None))
            advanced.append((dim, axis, k))
            axis += 1
    return tuple(basic), advanced


def _advanced_getitem(a: ndarray, key: tuple):
    _validate(a, key)
    basic, advanced = _split(_expand(key, a.ndim))
    if all(k == _WHOLE for k in basic) and len(basic) == a.ndim:
        src = a._node()  # (the view of the whole array)
    else:
        src = numpy_view(a, _np.ndarray.__getitem__, basic)._node()
    dims = [d for d, _, _ in advanced]
    indices = [_index_node(k, a.device, axis, a.shape) for _, axis, k in advanced]
    shape = broadcast_shapes(*[i.shape for i in indices])
    if dims != list(range(dims[0], dims[0] + len(dims))):
        order = dims + [d for d in range(src.ndim) if d not in dims]
        src = node(Op.VIEW, (src,), transpose_view(View.contiguous(src.shape), tuple(order)),
                   tuple(src.shape[d] for d in order), src.dtype)  # fmt: skip
        a0 = 0
    else:
        a0 = dims[0]
    out_shape = src.shape[:a0] + shape + src.shape[a0 + len(dims) :]
    idx = tuple(broadcast_node(i, shape) for i in indices)
    # The indices are checked now or normalized by _checked: this gather cannot fail.
    return result(node(Op.GATHER, (src,) + idx, a0, out_shape, src.dtype), a.device)


def _index_node(k, device, axis, shape: tuple):
    """The index as an intp node; a pending one (not checked at the call) bounds-checked."""
    if isinstance(k, ndarray):
        n = k._node()
    else:
        n = asarray(_np.asarray(k), device=device)._node()
    if n.dtype != _np.intp:
        n = node(Op.CAST, (n,), None, n.shape, _np.intp)
    if isinstance(k, ndarray) and _checked_when_run(k) and axis is not None:
        n = _checked(n, axis, shape[axis], _dag.user_line())
    return n


def _checked_when_run(k: ndarray) -> bool:
    """Whether the values of index array ``k`` are checked when the gather runs, not now: they
    are pending, or traced (a ``numloom.jit`` replay gets other values)."""
    return k._storage.pending or realize.TRACING


def _checked(n, axis: int, size: int, where):
    """``n`` normalized to ``[0, size)`` by a GATHER from ``arange(size)`` seen as shape
    ``(1,) * axis + (size,)``: its bounds check, when it runs, names ``axis`` of the indexed
    array as NumPy does (the main GATHER's own axes are those of a transposed or expanded view).
    """
    lead = (1,) * axis
    iota = node(Op.IOTA, (), (0, size, 1), (size,), _np.intp)
    src = node(Op.VIEW, (iota,), View.contiguous(lead + (size,)), lead + (size,), _np.intp)
    picked = node(Op.GATHER, (src, n), axis, lead + n.shape, _np.intp, where=where)
    return node(Op.VIEW, (picked,), View.contiguous(n.shape), n.shape, _np.intp)


# --- writing ---------------------------------------------------------------------------------


def setitem(a: ndarray, key, value) -> None:
    if a._readonly:
        raise ValueError("assignment destination is read-only")
    warn_if_first_write(a)
    if (type(key) is slice and type(value) is ndarray and key == _ALL and value._storage.pending
            and value._dtype == a._dtype and value.shape == a.shape and a.ndim
            and not a._storage.eager):  # fmt: skip
        # ``center[:] = expr``, a stencil's sweep: traced work of the view's own shape and
        # dtype written over the whole view (what the general path below records for it)
        a._write(a._view, broadcast_node(value._node(), a.shape))
        return
    key = _protocol_entries(_scalars_as_ints(_normalize_key(key)))
    advanced = any(_is_advanced(k) for k in key)
    if advanced and _store_now(a, key, value):
        return
    if (not advanced and type(value) is ndarray and value._storage is a._storage
            and value._dtype == a._dtype
            and basic_view(plain(a), _view_key(key))._view == value._view):  # fmt: skip
        # ``a[key] -= v``: Python stores the view the operator changed in place back into
        # itself, the same elements: nothing to write
        return
    if not advanced and a._storage.eager and not realize.TRACING:
        _settle_for_write(a, value)  # (a small array of a loop: written at once)
    elif (not advanced and type(value) is ndarray and value._storage.pending
          and 0 < value.size <= eager.EAGER_ELEMENTS and not realize.TRACING
          and realize.large_computed(a._storage)):  # fmt: skip
        # a small pending value written into a large computed array (a row of a solution
        # array, Euler's step): computed now and written into the array's memory, which stays
        # computed, so the loop's next steps on its rows run at once (recorded, the write
        # made the array pending and each step's reads evaluated a plan)
        realize.ensure(value._storage)
        if value._storage.error is not None:
            raise value._storage.error
    if not advanced and _write_now(a, key, value):
        return
    if _is_element_key(a, key):
        value = _element_value(value, a.dtype)
    value = _value_operand(value, a.dtype, advanced)
    if not advanced:
        view = basic_view(plain(a), _view_key(key))._view
        a._write(view, _value_node(value, view.shape, a.dtype, "input"))
        return
    full_mask = _is_full_mask(a, key)
    if full_mask:
        _check_mask_value_ndim(value)
    if full_mask and _size(value) == 1:
        mask = _mask_node(key[0])
        kept = node(Op.MAP, (mask, _value_node(value, a.shape, a.dtype, "input"), a._node()),
                    "where", a.shape, a.dtype)  # fmt: skip
        a._write(a._view, kept)
        return
    positions = getitem(_positions(a), key)._node()
    if full_mask and _size(value) != positions.size:
        raise ValueError(f"NumPy boolean array indexing assignment cannot assign {_size(value)} "
                         f"input values to the {positions.size} output values where the mask "
                         f"is true")  # fmt: skip
    values = _value_node(value, positions.shape, a.dtype, "indexing")
    if positions.size:  # an empty selection writes nothing (and makes no new version)
        a._write_at(positions, values)


def _settle_for_write(a: ndarray, value) -> None:
    """Before a write into a marked array (``Storage.eager``, a small CPU array of a loop whose
    calls run at once through NumPy): its pending value and the pending value written are
    computed now, so the write runs at once too and the loop stays out of the traced path."""
    for x in (a, value):
        if isinstance(x, ndarray) and x._storage.pending and x._storage.device == "cpu":
            if x.size > eager.EAGER_ELEMENTS:
                return
            realize.ensure(x._storage)
            if x._storage.error is not None:
                raise x._storage.error


def _store_now(a: ndarray, key: tuple, value) -> bool:
    """``a[key] = value`` with an advanced key on the CPU, run now by NumPy into a's buffer
    (in place where a's storage alone holds it), when nothing it reads is pending: the write
    then costs what it costs in NumPy, errors and casts included, and nothing is evaluated for
    it. Returns False where that does not apply (the write is recorded lazily).

    A write into pending work is recorded (it fuses with that work), but not a second one: a
    loop of writes into a fresh ``zeros`` would otherwise record a chain of scatters, one kernel
    each when it is evaluated."""
    storage = a._storage
    if realize.TRACING or storage.device != "cpu":
        return False
    for x in key + (value,):
        if isinstance(x, ndarray) and (x._storage.pending or x._storage.device != "cpu"):
            return False
        if isinstance(x, (list, tuple)) and any(isinstance(v, ndarray) for v in x):
            return False
    if storage.pending:
        version = storage.version
        if version.op not in (Op.SCATTER_AT, Op.SCATTER) or version.fallible:
            return False
        realize.ensure(storage)
        if storage.error is not None:
            raise storage.error
    if not _write_now(a, key, value, advanced=True):
        writes.run(_np.ndarray.__setitem__, (a, key, value), {}, written=(0,))
    return True


_HOST_VALUES = (_np.ndarray, _np.generic, bool, int, float, complex)


def _write_now(a: ndarray, key: tuple, value, advanced: bool = False) -> bool:
    """``a[key] = value`` with a basic key on the CPU, written now by NumPy into a's memory,
    where a is computed and its storage alone holds that memory, and the value is host data
    or computed: a loop writing rows of a grid (Bridson's sampling) costs what it costs in
    NumPy, NumPy's broadcasting and errors included. False where the write is recorded lazily
    (pending work it fuses with, a GPU, memory another array's value is, a value whose cast
    can warn: NumPy's warning belongs at the user's line, which the sync gives it)."""
    storage = a._storage
    if realize.TRACING or storage.device != "cpu" or storage.pending or storage.error is not None:
        return False
    if isinstance(value, ndarray):
        if value._storage.pending or value._storage.device != "cpu":
            return False
        value = value._host_view()
    elif not isinstance(value, _HOST_VALUES):
        return False  # (lists, which may hold numloom arrays, take the lazy path)
    # A cast that can warn (overflow, NaN into integers, complex parts) is left to the traced
    # path, which gives the warning at the user's line
    if isinstance(value, _np.ndarray):
        if value.dtype.kind in "fc" and not _np.can_cast(value.dtype, a.dtype):
            return False
    elif not quiet_value(value, a.dtype):
        return False
    if advanced:  # (_store_now's key: numloom arrays in it are computed, on the CPU)
        key = tuple(k._host_view() if isinstance(k, ndarray) else k for k in key)
        target = eager.writable(a)
        if target is not None:
            target[key] = value
            return True
        version = writes.owned_version(storage)
    else:
        realize.settle_readers(storage)
        version = storage.version
        if not realize.owns_buffer(storage, version):
            if not storage.eager:
                return False  # (recorded lazily: the copy it needs is made as it is evaluated)
            del version  # (a small array of a loop: its own copy now, written in place)
            version = realize.own_buffer(storage)
        a._writable(version)[key] = value  # (kept: the next such write takes a fast path)
        return True
    version.arg.writable(a._dtype, a._view)[key] = value
    return True


def _is_element_key(a: ndarray, key: tuple) -> bool:
    """Whether ``key`` is an integer for every axis: NumPy then stores one element."""
    if len(key) != a.ndim:
        return False
    for k in key:
        if isinstance(k, (bool, _np.bool_, ndarray, _np.ndarray)) or not hasattr(k, "__index__"):
            return False
    return True


def _element_value(value, dtype):
    """The value of one element: a scalar as NumPy converts it (an array or list of any
    dimension raises NumPy's error, whatever its size)."""
    if isinstance(value, ndarray):
        if value.ndim:
            raise ValueError("setting an array element with a sequence.")
        return value
    return _converted(value, dtype)


def _check_mask_value_ndim(value) -> None:
    """NumPy's rule for ``a[mask] = value`` with a mask of a's shape: value is 0-d or 1-d."""
    ndim = value.ndim if isinstance(value, ndarray) else 0
    if ndim > 1:
        raise TypeError(f"NumPy boolean array indexing assignment requires a 0 or 1-dimensional "
                        f"input, input has {ndim} dimensions")  # fmt: skip


def _converted(value, dtype):
    """The scalar ``value`` as NumPy stores it into an array of ``dtype``: its errors (NaN or
    overflow into integers) and its warnings (an overflow in the cast) at the user's line."""
    holder = _np.zeros(1, dtype)
    if quiet_value(value, dtype):
        holder[0] = value
    else:
        writes.at_user(holder.__setitem__, (0, value), {})
    return holder[0]


def _value_operand(value, dtype, advanced: bool):
    """The value to store, converted as NumPy does: a Python scalar, or each item of a list, is
    checked into ``dtype`` (NaN or overflow into integers raise); a NumPy scalar too for a
    basic key, while an advanced key casts it as an array (unsafely, as any array value)."""
    if isinstance(value, ndarray):
        return value
    if isinstance(value, (_np.ndarray, _np.generic)) and value.dtype.kind not in "biufc":
        return _numbers_of(value, dtype)
    if isinstance(value, _np.generic) and advanced:
        return asarray(value)
    if isinstance(value, (bool, int, float, complex, str, bytes, _np.generic)):
        return _converted(value, dtype)  # NumPy's conversion, errors and warnings
    if isinstance(value, (list, tuple)):
        return asarray(_np.asarray(value, dtype=dtype))  # NumPy converts each item the same way
    return operand(value)


def _numbers_of(value, dtype) -> ndarray:
    """NumPy's data of another dtype (strings, objects, datetimes) as an array of ``dtype``,
    converted as NumPy's write converts it (strings parsed; its errors and warnings at the
    user's line)."""
    held = _np.empty(_np.shape(value), dtype)
    writes.at_user(held.__setitem__, (Ellipsis, value), {})
    return asarray(held)


def _size(x) -> int:
    return x.size if isinstance(x, ndarray) else 1


_ALL = slice(None)


def _value_node(value, shape: tuple, dtype, what: str):
    if isinstance(value, ndarray):
        n = value._node()
        vshape = n.shape
        while len(vshape) > len(shape) and vshape[0] == 1:  # NumPy drops leading 1s
            vshape = vshape[1:]
        if broadcast_shapes(vshape, shape) != tuple(shape):
            if what == "input":  # NumPy names the value's shape without its leading 1s
                raise ValueError(f"could not broadcast input array from shape "
                                 f"{shape_str(vshape)} into shape {shape_str(shape)}")  # fmt: skip
            raise ValueError(f"shape mismatch: value array of shape {shape_str(n.shape)} could "
                             f"not be broadcast to indexing result of shape {shape_str(shape)}")  # fmt: skip
        if vshape != n.shape:
            n = node(Op.VIEW, (n,), View.contiguous(vshape), vshape, n.dtype)
        if n.dtype != dtype:  # (NaN into integers: NumPy's warning, at the user's line)
            n = fperrors.record_if_raising(node(Op.CAST, (n,), None, n.shape, dtype))
    else:
        n = node(Op.CONST, (), _np.asarray(value, dtype)[()], (), dtype)
    return broadcast_node(n, tuple(shape))


def _is_full_mask(a: ndarray, key: tuple) -> bool:
    """NumPy's single boolean index: one mask of a's shape (a list of bools is one too)."""
    (k,) = key if len(key) == 1 else (None,)
    if isinstance(k, list):
        k = _np.asarray(k)
    return _is_bool_array(k) and k.ndim > 0 and k.shape == a.shape


def _mask_node(k):
    return k._node() if isinstance(k, ndarray) else asarray(_np.asarray(k))._node()


def _positions(a: ndarray) -> ndarray:
    """An intp array shaped like ``a`` holding each element's flat index in a's storage (in
    elements of a's dtype)."""
    from ..core.views import view_node

    size = a._base().size  # elements of a's dtype in its storage
    iota = node(Op.IOTA, (), (0, size, 1), (size,), _np.intp)
    return result(view_node(iota, a._view), a.device)

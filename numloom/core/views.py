"""Views: slicing, transposing, broadcasting and reshaping without copying.

An array handle is a storage plus a ``View`` of it. These functions compute new views (pure
functions on ``View``), build VIEW nodes over computed values, and make new handles that share
a storage, exactly where NumPy returns a view.
"""

from __future__ import annotations

import functools
import weakref

import numpy as _np

from .dag import Node, Op, View, contiguous_strides, node, prod, warn_at_user


def broadcast_shapes(*shapes) -> tuple | None:
    """NumPy's broadcast of ``shapes``, or None when they do not broadcast."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return tuple(shapes[0])
    ndim = max([len(s) for s in shapes], default=0)
    out = [1] * ndim
    for s in shapes:
        for k, n in enumerate(s, ndim - len(s)):
            if n == out[k] or n == 1:
                continue
            if out[k] != 1:
                return None
            out[k] = n
    return tuple(out)


def broadcast_view(view: View, shape: tuple) -> View:
    """``view`` broadcast to ``shape`` (new leading axes and size-1 axes get stride 0)."""
    return _broadcast_view(view, tuple(shape))


@functools.lru_cache(maxsize=4096)  # a loop broadcasts the same views to the same shapes
def _broadcast_view(view: View, shape: tuple) -> View:
    lead = len(shape) - len(view.shape)
    strides = [0] * lead
    for n, s, target in zip(view.shape, view.strides, shape[lead:]):
        strides.append(0 if n == 1 and target != 1 else s)
    return View(tuple(shape), tuple(strides), view.offset)


def view_node(n: Node, view: View) -> Node:
    """A node reading ``n`` through ``view``, composing with ``n``'s own view when possible."""
    if view.is_identity(n.shape):
        return n
    if n.op is Op.VIEW and n.arg.is_contiguous():
        inner = n.arg
        view = View(view.shape, view.strides, view.offset + inner.offset)
        n = n.srcs[0]
        if view.is_identity(n.shape):
            return n
    return node(Op.VIEW, (n,), view, view.shape, n.dtype)


def bitcast_node(n: Node, dtype, shape: tuple | None = None) -> Node:
    """``n``'s bytes read as elements of ``dtype``: of ``shape``, by default a flat run of
    them. Reading them back as what they were gives ``n`` again, with no node."""
    dtype = _np.dtype(dtype)
    if n.op is Op.BITCAST:
        n = n.srcs[0]  # bytes are bytes: one reinterpretation of the original is enough
    if shape is None:
        shape = (n.size * n.dtype.itemsize // dtype.itemsize,)
    if n.dtype == dtype and n.shape == tuple(shape):
        return n
    return node(Op.BITCAST, (n,), None, shape, dtype)


def broadcast_node(n: Node, shape: tuple) -> Node:
    """``n`` broadcast to ``shape`` (which must be a valid broadcast of n's shape)."""
    shape = tuple(shape)
    if n.shape == shape:
        return n
    if n.op is Op.VIEW:
        return node(Op.VIEW, n.srcs, broadcast_view(n.arg, shape), shape, n.dtype)
    return node(Op.VIEW, (n,), broadcast_view(View.contiguous(n.shape), shape), shape, n.dtype)


def transpose_view(view: View, axes: tuple) -> View:
    return View(
        tuple(view.shape[a] for a in axes), tuple(view.strides[a] for a in axes), view.offset
    )


def reshape_view(view: View, shape: tuple) -> View | None:
    """``view`` reshaped without copying (NumPy's rule, C order), or None when a copy is needed."""
    shape = tuple(shape)
    if prod(shape) == 0 or view.is_contiguous():
        return View(shape, contiguous_strides(shape), view.offset)
    old = [(n, s) for n, s in zip(view.shape, view.strides) if n != 1]
    olddims = [n for n, _ in old]
    oldstrides = [s for _, s in old]
    newstrides = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(olddims):
        np_, op = shape[ni], olddims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= shape[nj]
                nj += 1
            else:
                op *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return None
        newstrides[nj - 1] = oldstrides[oj - 1]
        for nk in range(nj - 1, ni, -1):
            newstrides[nk - 1] = newstrides[nk] * shape[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = newstrides[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(shape)):
        newstrides[nk] = last
    return View(shape, tuple(newstrides), view.offset)


def numpy_view(a, fn, *args, **kwargs):
    """Apply NumPy's view function ``fn`` (transpose, squeeze, diagonal, ``a[key]``...) to ``a``.

    NumPy runs on a stand-in with ``a``'s shape and strides but no memory (1-byte items whose
    strides are element counts), so its checks and errors are NumPy's; the stand-in result's
    shape, strides and data offset are the new view. ``fn`` must never copy or read data.
    """
    if kwargs or not _plain(args):  # (2.0 == 2 as a key, but NumPy rejects a float index)
        return _view_from(a, _view_parts(a._view, fn, *args, **kwargs))
    return _view_from(a, _layout_parts(a._view, fn, args, args))


def _layout_parts(view: View, fn, args: tuple, key: tuple) -> tuple:
    """``_view_parts(view, fn, *args)``, kept by (function, layout, ``key``): the stand-in has
    nothing but a shape and strides, so NumPy's answer depends on nothing else (a program
    slices and transposes the same few layouts the same few ways). ``key`` is ``args`` in a
    hashable form whose equality is NumPy's."""
    full = (fn, view.shape, view.strides, key)
    parts = _layouts.get(full)
    if parts is None:
        parts = _view_parts(view, fn, *args)  # NumPy's errors
        if len(_layouts) >= 4096:
            _layouts.clear()
        _layouts[full] = parts
    return parts


_layouts: dict = {}


def _plain(x) -> bool:
    """Whether ``x`` is made of ints, None, Ellipsis and tuples of them only: values that are
    equal as keys exactly when NumPy treats them alike."""
    t = type(x)
    if t is int or x is None or x is Ellipsis:
        return True
    return t is tuple and all([_plain(y) for y in x])


def _view_parts(view: View, fn, *args, **kwargs) -> tuple:
    """``(shape, strides, shift, readonly)`` of ``fn`` applied to an array read through
    ``view``: the new view's offset is ``shift`` past the old one's."""
    stand_in, address = _stand_in(view.shape, view.strides)
    picked = fn(stand_in, *args, **kwargs)
    if isinstance(picked, _np.generic):
        # An integer for every axis gives NumPy's scalar, not a view: the same call on a
        # stand-in with one more (trailing, unindexed) axis gives the element as a view.
        picked = fn(stand_in[..., None], *args, **kwargs)[..., 0]
    if not _is_view_of(picked, stand_in):
        raise ValueError(f"numpy_view: {fn!r} made a copy, not a view (a view is read back)")
    shift = picked.__array_interface__["data"][0] - address
    return picked.shape, picked.strides, shift, not picked.flags.writeable


def _view_from(a, parts: tuple):
    shape, strides, shift, readonly = parts
    out = _share(a, View(shape, strides, a._view.offset + shift), readonly=a._readonly or readonly)
    if _WARN_ON_WRITE and _warns_on_write(a):
        warn_on_first_write(out)
    return out


def basic_view(a, key: tuple):
    """``a[key]`` for a key of slices, integers, None and Ellipsis (ending with an Ellipsis)."""
    hashable = []
    for k in key:
        t = type(k)
        if t is slice:
            start, stop, step = k.start, k.stop, k.step
            if not (_plain_bound(start) and _plain_bound(stop) and _plain_bound(step)):
                return numpy_view(a, _np.ndarray.__getitem__, key)
            hashable.append((slice, start, stop, step))  # (slices hash from Python 3.12 on)
        elif t is int or k is None or k is Ellipsis:
            hashable.append(k)
        else:
            return numpy_view(a, _np.ndarray.__getitem__, key)
    return _view_from(a, _layout_parts(a._view, _np.ndarray.__getitem__, (key,),
                                       (tuple(hashable),)))  # fmt: skip


def _plain_bound(x) -> bool:
    return x is None or type(x) is int


@functools.lru_cache(maxsize=1024)
def _stand_in(shape: tuple, strides: tuple) -> tuple:
    """A 1-byte-item array of ``shape`` and ``strides`` over no memory, and its address (kept:
    making one costs more than the rest of a slicing)."""
    base = _np.zeros(1, _np.int8)
    stand_in = _np.lib.stride_tricks.as_strided(base, shape, strides)
    return stand_in, base.__array_interface__["data"][0]


def _share(a, view: View, readonly: bool):
    global _share
    from .array import share as _share  # array.py imports this module: bound on first use

    return _share(a, view, readonly)


def _is_view_of(picked, stand_in) -> bool:
    """Whether ``picked`` is a view of ``stand_in`` (its address then says where it starts):
    a copy's address is unrelated memory, which read back would be a garbage offset."""
    owner = picked
    while owner is not None:
        if owner is stand_in:
            return True
        owner = getattr(owner, "base", None)
    return False


# id(handle) -> weakref: the handles that warn on their first write, as NumPy flags the arrays
# broadcast_arrays returns (and the views taken of them).
_WARN_ON_WRITE: dict = {}


def warn_on_first_write(a) -> None:
    key = id(a)
    _WARN_ON_WRITE[key] = weakref.ref(a, lambda _: _WARN_ON_WRITE.pop(key, None))


def _warns_on_write(a) -> bool:
    ref = _WARN_ON_WRITE.get(id(a))
    return ref is not None and ref() is a


def warn_if_first_write(a) -> None:
    """NumPy's DeprecationWarning on the first write through a broadcast_arrays result."""
    if _warns_on_write(a):
        del _WARN_ON_WRITE[id(a)]
        warn_at_user("Numpy has detected that you (may be) writing to an array with\n"
                     "overlapping memory from np.broadcast_arrays. If this is intentional\n"
                     "set the WRITEABLE flag True or make a copy immediately before writing.",
                     DeprecationWarning)  # fmt: skip


def reshape_array(a, shape: tuple):
    """``a`` with a new shape: a view of the same storage when NumPy gives one, else a copy."""
    from .array import result, share

    shape = tuple(shape)
    if shape == a.shape:
        return share(a, a._view)
    new = reshape_view(a._view, shape)
    if new is not None:
        return share(a, new)
    return result(node(Op.VIEW, (a._node(),), View.contiguous(shape), shape, a.dtype), a.device)

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




# id(handle) -> weakref: the handles that warn on their first write, as NumPy flags the arrays
# broadcast_arrays returns (and the views taken of them).
_WARN_ON_WRITE: dict = {}


def warn_on_first_write(a) -> None:
    key = id(a)
    _WARN_ON_WRITE[key] = weakref.ref(a, lambda _: _WARN_ON_WRITE.pop(key, None))


def _warns_on_write(a) -> bool:
    ref = _WARN_ON_WRITE.get(id(a))
    return ref is not None and ref() is a


def forget_first_write(a) -> None:
    """``a`` (a broadcast_arrays result) writes without NumPy's warning from now on."""
    if _warns_on_write(a):
        del _WARN_ON_WRITE[id(a)]


def warn_if_first_write(a) -> None:
    """NumPy's DeprecationWarning on the first write through a broadcast_arrays result."""
    if _warns_on_write(a):
        del _WARN_ON_WRITE[id(a)]
        warn_at_user("Numpy has detected that you (may be) writing to an array with\n"
                     "overlapping memory from np.broadcast_arrays. If this is intentional\n"
                     "set the WRITEABLE flag True or make a copy immediately before writing.",
                     DeprecationWarning)  # fmt: skip



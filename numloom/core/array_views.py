"""Views of arrays: NumPy's view functions (slicing, ``reshape``, ``transpose``, strided tricks)
applied to a handle, giving a new handle that shares its storage (``views.py`` has the
arithmetic of the views themselves)."""

from __future__ import annotations

import functools

import numpy as _np

from .array import _speedups, result, share
from .dag import Op, View, node
from .views import _WARN_ON_WRITE, _warns_on_write, reshape_view, warn_on_first_write

_layouts: dict = {}
_SLICE_VIEW = None if _speedups is None else _speedups.slice_view


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
    if _SLICE_VIEW is not None:  # (slices and integers: the same, in C)
        made = _SLICE_VIEW(a, key)
        if made is not None:
            return made
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
    return share(a, view, readonly)


def _is_view_of(picked, stand_in) -> bool:
    """Whether ``picked`` is a view of ``stand_in`` (its address then says where it starts):
    a copy's address is unrelated memory, which read back would be a garbage offset."""
    owner = picked
    while owner is not None:
        if owner is stand_in:
            return True
        owner = getattr(owner, "base", None)
    return False


def reshape_array(a, shape: tuple):
    """``a`` with a new shape: a view of the same storage when NumPy gives one, else a copy."""
    shape = tuple(shape)
    if shape == a.shape:
        return share(a, a._view)
    new = reshape_view(a._view, shape)
    if new is not None:
        return share(a, new)
    return result(node(Op.VIEW, (a._node(),), View.contiguous(shape), shape, a.dtype), a.device)

"""``pad``: CONCAT nodes of constant blocks, broadcast edges and reversed slices of the array,
one axis at a time as NumPy pads (its modes' rules and errors)."""

from __future__ import annotations

import typing

import numpy as _np

from ..core.array import asarray, ndarray, result, share
from ..core.dag import View
from . import elementwise as _api  # (where, clip, subtract...: the elementwise family)
from .creation import in_order_of
from .fallback import call_numpy
from .joins import _axis_slice, _concat_node, _const_node, _copy, _joined

# --- pad ---------------------------------------------------------------------------------------

_PAD_KWARGS = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
    "linear_ramp": ["end_values"], "maximum": ["stat_length"], "mean": ["stat_length"],
    "median": ["stat_length"], "minimum": ["stat_length"], "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}  # fmt: skip
_NATIVE_PADS = frozenset({"constant", "empty", "edge", "wrap", "reflect", "symmetric"})


def _as_pairs(x, ndim: int, as_index: bool = False):
    # NumPy's own helper: its broadcasting rules and messages for widths and values.
    from numpy.lib._arraypad_impl import _as_pairs as numpy_as_pairs

    return numpy_as_pairs(x, ndim, as_index=as_index)


def _pad_widths(pad_width, ndim: int) -> list:
    """``(before, after)`` per axis, as NumPy's pad normalizes them (with its errors)."""
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            match width:
                case int(both):
                    seq[axis] = (both, both)
                case tuple([int(before), int(after)]):
                    seq[axis] = (before, after)
                case _ as invalid:
                    typing.assert_never(invalid)
        pad_width = seq
    pad_width = _np.asarray(pad_width)
    if not pad_width.dtype.kind == "i":
        raise TypeError("`pad_width` must be of integral type.")
    return [(int(b), int(e)) for b, e in _as_pairs(pad_width, ndim, as_index=True)]


def _check_pad_kwargs(mode, kwargs: dict) -> None:
    try:
        unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    except KeyError:
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded per axis: CONCAT of constant blocks (constant), broadcast edges (edge),
    or slices of what is already padded (wrap, reflect, symmetric), axis after axis as NumPy
    fills them. Other modes run through NumPy. A Fortran-ordered array's result is in Fortran
    order, as NumPy's."""
    a = asarray(array)
    return in_order_of(_pad(a, pad_width, mode, **kwargs), a)


def _pad(a, pad_width, mode, **kwargs):
    widths = _pad_widths(pad_width, a.ndim)
    if callable(mode):
        return call_numpy("pad", _np.pad, a, pad_width, mode, **kwargs)
    _check_pad_kwargs(mode, kwargs)
    if mode not in _NATIVE_PADS:
        return call_numpy("pad", _np.pad, a, pad_width, mode, **kwargs)
    if mode in ("constant", "empty"):  # numloom's empty memory holds zeros
        return _pad_constant(a, widths, kwargs.get("constant_values", 0))
    if a.size == 0:
        for axis, pair in enumerate(widths):
            if a.shape[axis] == 0 and any(pair):
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 f"'constant' or 'empty'")  # fmt: skip
        shape = tuple(b + n + e for n, (b, e) in zip(a.shape, widths))
        return result(_const_node(0, shape, a.dtype), a.device)
    cur = a
    for axis, (before, after) in enumerate(widths):
        if before or after:
            cur = _pad_axis(cur, axis, before, after, mode, kwargs.get("reflect_type", "even"))
    return _copy(cur) if cur is a else cur


def _pad_value(value, dtype):
    """``value`` converted as NumPy's ``padded[area] = value`` converts it (and its errors)."""
    holder = _np.zeros(1, dtype)
    holder[0:1] = value
    return holder[0]


def _pad_constant(a: ndarray, widths: list, constant_values) -> ndarray:
    values = _as_pairs(constant_values, a.ndim)
    cur = a._node()
    for axis, ((before, after), (vb, va)) in enumerate(zip(widths, values)):
        vb, va = _pad_value(vb, a.dtype), _pad_value(va, a.dtype)
        shape = list(cur.shape)
        blocks = []
        for width, value in ((before, vb), (after, va)):
            shape[axis] = width
            blocks.append(_const_node(value, tuple(shape), a.dtype))
        cur = _concat_node([blocks[0], cur, blocks[1]], axis, a.dtype)
    return result(cur, a.device)


def _pad_axis(cur: ndarray, axis: int, before: int, after: int, mode: str, method: str):
    n = cur.shape[axis]
    if mode == "edge" or (mode in ("reflect", "symmetric") and n == 1):
        return _pad_edge(cur, axis, before, after)
    while before > 0 or after > 0:
        if mode == "wrap":
            cur, before, after = _wrap_once(cur, axis, before, after, n)
        else:
            cur, before, after = _reflect_once(cur, axis, before, after, n, method,
                                               mode == "symmetric")  # fmt: skip
    return cur


def _stretch(a: ndarray, axis: int, width: int) -> ndarray:
    """A size-1 axis of ``a`` broadcast to ``width`` (a stride-0 view)."""
    v = a._view
    view = View(v.shape[:axis] + (width,) + v.shape[axis + 1 :],
                v.strides[:axis] + (0,) + v.strides[axis + 1 :], v.offset)  # fmt: skip
    return share(a, view, readonly=True)


def _pad_edge(cur: ndarray, axis: int, before: int, after: int) -> ndarray:
    first = _stretch(_axis_slice(cur, axis, 0, 1), axis, before)
    last = _stretch(_axis_slice(cur, axis, -1, None), axis, after)
    return _joined([first, cur, last], axis)


def _wrap_once(cur: ndarray, axis: int, before: int, after: int, period0: int):
    """One step of NumPy's ``_set_wrap_both``: copy whole periods of what is padded so far."""
    m = cur.shape[axis]
    period = m // period0 * period0
    parts = [cur]
    if before > 0:
        c = min(period, before)
        parts.insert(0, _axis_slice(cur, axis, period - c, period))
        before -= c
    if after > 0:
        c = min(period, after)
        parts.append(_axis_slice(cur, axis, m - period, m - period + c))
        after -= c
    return _joined(parts, axis), before, after


def _reversed_run(a: ndarray, axis: int, first: int, count: int) -> ndarray:
    """Elements ``first, first - 1, ...`` (``count`` of them) along ``axis``: a view."""
    stop = first - count
    return _axis_slice(a, axis, first, stop if stop >= 0 else None, -1)


def _odd(cur: ndarray, axis: int, edge: int, chunk: ndarray) -> ndarray:
    """``2 * edge - chunk`` in NumPy's dtypes, stored back in cur's dtype (reflect_type odd)."""
    edge_value = _axis_slice(cur, axis, edge, edge + 1)
    mirrored = _api.subtract(_api.multiply(2, edge_value), chunk)
    return mirrored if mirrored.dtype == cur.dtype else mirrored.astype(cur.dtype)


def _reflect_once(cur, axis, before, after, period0, method, include_edge):
    """One step of NumPy's ``_set_reflect_both``: mirror what is padded so far."""
    m = cur.shape[axis]
    if include_edge:
        old, edge = m // period0 * period0, 1
    else:
        old, edge = (m - 1) // (period0 - 1) * (period0 - 1), 0
    parts = [cur]
    if before > 0:
        c = min(old, before)
        chunk = _reversed_run(cur, axis, c - edge, c)
        parts.insert(0, _odd(cur, axis, 0, chunk) if method == "odd" else chunk)
        before -= c
    if after > 0:
        c = min(old, after)
        chunk = _reversed_run(cur, axis, m - 2 + edge, c)
        parts.append(_odd(cur, axis, m - 1, chunk) if method == "odd" else chunk)
        after -= c
    return _joined(parts, axis), before, after

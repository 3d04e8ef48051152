"""The NumPy namespace numloom implements natively: each family imported from its module (the
ufuncs and elementwise functions from ``elementwise.py``), and the few small functions that
belong to none. ``numloom/__init__.py`` re-exports all of it; what is not here runs through
NumPy (``fallback.py``).
"""

from __future__ import annotations  # noqa: I001 (the compact fmt: skip blocks below)


import numpy as _np

from ..core.array import ndarray
from .creation import (  # noqa: F401
    arange,
    array,
    asnumpy,
    ascontiguousarray,
    asfortranarray,
    copy,
    empty,
    empty_like,
    eye,
    frombuffer,
    full,
    full_like,
    geomspace,
    identity,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    require,
    zeros,
    zeros_like,
)  # fmt: skip
from .indexing import getitem, setitem  # noqa: F401
from .interop import from_dlpack  # noqa: F401
from .joins import (  # noqa: F401
    append,
    argwhere,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    c_,
    column_stack,
    concatenate,
    diff,
    dsplit,
    dstack,
    flatnonzero,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    mgrid,
    nonzero,
    ogrid,
    r_,
    repeat,
    roll,
    rot90,
    split,
    stack,
    take,
    tile,
    tril,
    triu,
    vsplit,
    vstack,
)
from .padding import pad  # noqa: F401  # fmt: skip
from .products import dot, inner, matmul, outer, tensordot, trace, vdot  # noqa: F401
from .reductions import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
    average,
    ptp,
    cumulative_sum,
    cumulative_prod,
)  # fmt: skip
from .shapes import (  # noqa: F401
    broadcast_arrays,
    broadcast_to,
    diagonal,
    expand_dims,
    matrix_transpose,
    moveaxis,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
    permute_dims,
    view,
)  # fmt: skip

from .elementwise import *  # noqa: F403  (the ufuncs and elementwise functions)
from .elementwise import UFUNCS_BY_NAME, _cast, _clip, compare, power_operator  # noqa: F401
from .composed import *  # noqa: F403  (nan-functions, cov, einsum, convolve, interp...)
from .sorting import *  # noqa: F403  (sort, unique, searchsorted, histogram, median...)
from .compositions import *  # noqa: F403  (windows, polynomials, put, block, insert, ix_...)


def shape(a) -> tuple:
    return a.shape if isinstance(a, ndarray) else _np.shape(a)


def ndim(a) -> int:
    return a.ndim if isinstance(a, ndarray) else _np.ndim(a)


def size(a, axis=None) -> int:
    if isinstance(a, ndarray):
        return a.size if axis is None else a.shape[axis]
    return _np.size(a, axis)


def result_type(*arrays_and_dtypes):
    return _np.result_type(*(x.dtype if isinstance(x, ndarray) else x for x in arrays_and_dtypes))


def can_cast(from_, to, casting="safe") -> bool:
    return _np.can_cast(from_.dtype if isinstance(from_, ndarray) else from_, to, casting)


def iscomplexobj(x) -> bool:
    return (x.dtype.kind == "c") if isinstance(x, ndarray) else _np.iscomplexobj(x)


def isrealobj(x) -> bool:
    return not iscomplexobj(x)


def isscalar(element) -> bool:
    """NumPy's isscalar; a 0-d result where NumPy gives a scalar (``x.sum()``) is one."""
    from ..core.array import _Scalar

    return isinstance(element, _Scalar) or _np.isscalar(element)


def shares_memory(a, b, /, max_work=None) -> bool:
    """NumPy's answer for the memory the arrays would have in NumPy: a copy (``a.copy()``,
    ``array(a)``) shares its memory with ``a`` until one is written, yet is another array's
    memory; views of one array are compared by where they lie in it."""
    return _overlap(_np.shares_memory, a, b, max_work)


def may_share_memory(a, b, /, max_work=None) -> bool:
    """NumPy's ``may_share_memory``, answered as ``shares_memory`` is (copies share nothing)."""
    return _overlap(_np.may_share_memory, a, b, max_work)


def _overlap(fn, a, b, max_work) -> bool:
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        if a._storage is not b._storage:
            return False
        return fn(_layout(a), _layout(b), max_work=max_work)
    if isinstance(a, ndarray):  # (NumPy's array of it is its memory itself, on the CPU)
        a = _np.asarray(a)
    if isinstance(b, ndarray):
        b = _np.asarray(b)
    return fn(a, b, max_work=max_work)


class _Layout:
    """Where an array's elements lie in its storage, as an array interface over no memory
    that NumPy reads only addresses of (an address past the start is never dereferenced)."""

    _start = _np.zeros(1, _np.int8)  # (a real address to count from)

    def __init__(self, a: ndarray):
        itemsize = a._dtype.itemsize
        start = self._start.__array_interface__["data"][0]
        self.__array_interface__ = {
            "shape": a._view.shape, "typestr": a._dtype.str, "version": 3,
            "strides": tuple(s * itemsize for s in a._view.strides),
            "data": (start + a._view.offset * itemsize, True),
        }  # fmt: skip


def _layout(a: ndarray) -> _np.ndarray:
    return _np.asarray(_Layout(a))

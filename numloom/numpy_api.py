"""The NumPy namespace numloom implements natively: ufuncs and elementwise functions here,
the other families imported from their modules. ``numloom/__init__.py`` re-exports all of it;
what is not here runs through NumPy (``fallback.py``).
"""

from __future__ import annotations

import numpy as _np

from .array import asarray, ndarray, operand, result
from .creation import (  # noqa: F401
    arange, array, asnumpy, ascontiguousarray, copy, empty, empty_like, eye, full, full_like,
    geomspace, identity, linspace, logspace, meshgrid, ones, ones_like, zeros, zeros_like,
)  # fmt: skip
from .dag import Op, node
from .indexing import getitem, setitem  # noqa: F401
from .joins import (  # noqa: F401
    append, array_split, atleast_1d, atleast_2d, atleast_3d, column_stack, concatenate, diff,
    dsplit, dstack, flip, fliplr, flipud, hsplit, hstack, pad, roll, rot90, split, stack, tile,
    repeat, vsplit, vstack, take, nonzero, flatnonzero, argwhere, tril, triu,
)  # fmt: skip
from .products import dot, inner, matmul, outer, tensordot, trace, vdot  # noqa: F401
from .reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max, mean, min, prod,
    std, sum, var, average, ptp, cumulative_sum, cumulative_prod,
)  # fmt: skip
from .shapes import (  # noqa: F401
    broadcast_arrays, broadcast_to, diagonal, expand_dims, matrix_transpose, moveaxis, ravel,
    reshape, squeeze, swapaxes, transpose, permute_dims, view,
)  # fmt: skip
from .ufuncs import ufunc
from .views import broadcast_shapes

# --- ufuncs (NumPy's names; aliases point at the same object, as in NumPy) ---------------------

add = ufunc(_np.add)
subtract = ufunc(_np.subtract)
multiply = ufunc(_np.multiply)
divide = ufunc(_np.divide)
true_divide = divide
floor_divide = ufunc(_np.floor_divide)
remainder = ufunc(_np.remainder)
mod = remainder
fmod = ufunc(_np.fmod)
divmod = ufunc(_np.divmod)
power = ufunc(_np.power)
pow = power
float_power = ufunc(_np.float_power)
negative = ufunc(_np.negative)
positive = ufunc(_np.positive)
absolute = ufunc(_np.absolute)
abs = absolute
fabs = ufunc(_np.fabs)
sign = ufunc(_np.sign)
reciprocal = ufunc(_np.reciprocal)
square = ufunc(_np.square)
sqrt = ufunc(_np.sqrt)
cbrt = ufunc(_np.cbrt)
exp = ufunc(_np.exp)
exp2 = ufunc(_np.exp2)
expm1 = ufunc(_np.expm1)
log = ufunc(_np.log)
log2 = ufunc(_np.log2)
log10 = ufunc(_np.log10)
log1p = ufunc(_np.log1p)
logaddexp = ufunc(_np.logaddexp)
logaddexp2 = ufunc(_np.logaddexp2)
sin = ufunc(_np.sin)
cos = ufunc(_np.cos)
tan = ufunc(_np.tan)
arcsin = ufunc(_np.arcsin)
asin = arcsin
arccos = ufunc(_np.arccos)
acos = arccos
arctan = ufunc(_np.arctan)
atan = arctan
arctan2 = ufunc(_np.arctan2)
atan2 = arctan2
hypot = ufunc(_np.hypot)
sinh = ufunc(_np.sinh)
cosh = ufunc(_np.cosh)
tanh = ufunc(_np.tanh)
arcsinh = ufunc(_np.arcsinh)
asinh = arcsinh
arccosh = ufunc(_np.arccosh)
acosh = arccosh
arctanh = ufunc(_np.arctanh)
atanh = arctanh
deg2rad = ufunc(_np.deg2rad)
rad2deg = ufunc(_np.rad2deg)
degrees = ufunc(_np.degrees)
radians = ufunc(_np.radians)
equal = ufunc(_np.equal)
not_equal = ufunc(_np.not_equal)
less = ufunc(_np.less)
less_equal = ufunc(_np.less_equal)
greater = ufunc(_np.greater)
greater_equal = ufunc(_np.greater_equal)
logical_and = ufunc(_np.logical_and)
logical_or = ufunc(_np.logical_or)
logical_xor = ufunc(_np.logical_xor)
logical_not = ufunc(_np.logical_not)
maximum = ufunc(_np.maximum)
minimum = ufunc(_np.minimum)
fmax = ufunc(_np.fmax)
fmin = ufunc(_np.fmin)
bitwise_and = ufunc(_np.bitwise_and)
bitwise_or = ufunc(_np.bitwise_or)
bitwise_xor = ufunc(_np.bitwise_xor)
invert = ufunc(_np.invert)
bitwise_not = invert
bitwise_invert = invert
left_shift = ufunc(_np.left_shift)
bitwise_left_shift = left_shift
right_shift = ufunc(_np.right_shift)
bitwise_right_shift = right_shift
bitwise_count = ufunc(_np.bitwise_count)
gcd = ufunc(_np.gcd)
lcm = ufunc(_np.lcm)
isnan = ufunc(_np.isnan)
isinf = ufunc(_np.isinf)
isfinite = ufunc(_np.isfinite)
signbit = ufunc(_np.signbit)
copysign = ufunc(_np.copysign)
nextafter = ufunc(_np.nextafter)
spacing = ufunc(_np.spacing)
ldexp = ufunc(_np.ldexp)
frexp = ufunc(_np.frexp)
modf = ufunc(_np.modf)
heaviside = ufunc(_np.heaviside)
floor = ufunc(_np.floor)
ceil = ufunc(_np.ceil)
trunc = ufunc(_np.trunc)
rint = ufunc(_np.rint)
conjugate = ufunc(_np.conjugate)
conj = conjugate

UFUNCS_BY_NAME = {
    uf.__name__: uf for uf in list(globals().values()) if isinstance(uf, ufunc)
}


def compare(uf: ufunc, a, other):
    """``a == other`` and friends: objects NumPy cannot compare give all-False (or all-True)."""
    if other is None or isinstance(other, str):
        return full_like(a, uf is not_equal, dtype=bool)
    return uf(a, other)


# --- elementwise functions that are not ufuncs ------------------------------------------------


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``; with one argument, ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    cond, x, y = operand(condition), operand(x), operand(y)
    dtype = _np.result_type(*(_dtype_or_scalar(v) for v in (x, y)))
    shapes = [_np.shape(v) if not isinstance(v, ndarray) else v.shape for v in (cond, x, y)]
    shape = broadcast_shapes(*shapes)
    if shape is None:
        _np.where(*(_np.broadcast_to(_np.zeros((), bool), s) for s in shapes))
    from .ufuncs import as_loop_node

    srcs = (as_loop_node(cond, _np.dtype(bool), shape), as_loop_node(x, dtype, shape),
            as_loop_node(y, dtype, shape))  # fmt: skip
    return result(node(Op.MAP, srcs, "where", shape, dtype), _device_of(cond, x, y))


def _dtype_or_scalar(v):
    return v.dtype if isinstance(v, (ndarray, _np.generic)) else v


def _device_of(*values):
    for v in values:
        if isinstance(v, ndarray):
            return v.device
    return None


_clip_ufunc = ufunc(_np._core.umath.clip)


def clip(a, a_min=_np._NoValue, a_max=_np._NoValue, out=None, *, min=_np._NoValue,
         max=_np._NoValue, **kwargs):  # fmt: skip
    """``minimum(maximum(a, a_min), a_max)`` with NumPy's NaN propagation and dtype rules."""
    lo = a_min if a_min is not _np._NoValue else min
    hi = a_max if a_max is not _np._NoValue else max
    lo = None if lo is _np._NoValue else lo
    hi = None if hi is _np._NoValue else hi
    if lo is None and hi is None:
        return asarray(a).copy() if out is None else setitem(out, Ellipsis, a) or out
    if lo is None:
        return minimum(a, hi, out=out, **kwargs)
    if hi is None:
        return maximum(a, lo, out=out, **kwargs)
    return _clip_ufunc(a, lo, hi, out=out, **kwargs)


def real(val):
    a = asarray(val)
    if a.dtype.kind != "c":
        return a
    return result(node(Op.MAP, (a._node(),), "real", a.shape, _real_dtype(a.dtype)), a.device)


def imag(val):
    a = asarray(val)
    if a.dtype.kind != "c":
        return zeros_like(a)
    return result(node(Op.MAP, (a._node(),), "imag", a.shape, _real_dtype(a.dtype)), a.device)


def _real_dtype(dtype):
    return _np.dtype(_np.float32 if dtype == _np.complex64 else _np.float64)


def angle(z, deg=False):
    z = asarray(z)
    if z.dtype.kind == "c":
        a = arctan2(imag(z), real(z))
    else:
        a = arctan2(zeros_like(z, dtype=_np.result_type(z.dtype, _np.float16)), z)
    return a * (180 / _np.pi) if deg else a


def round(a, decimals=0, out=None):
    """NumPy's round: half to even, scaling by 10**decimals as NumPy does."""
    a = asarray(a)
    if decimals == 0 or a.dtype.kind == "b":
        return rint(a, out=out) if a.dtype.kind in "fc" else _copy_to(a, out)
    if a.dtype.kind in "iu" and decimals >= 0:
        return _copy_to(a, out)
    scale = 10.0**abs(decimals)
    if a.dtype.kind in "iu":
        return multiply(floor_divide(a + (scale // 2), scale), scale).astype(a.dtype)
    y = multiply(a, scale) if decimals > 0 else divide(a, scale)
    y = rint(y)
    return divide(y, scale, out=out) if decimals > 0 else multiply(y, scale, out=out)


around = round


def _copy_to(a, out):
    if out is None:
        return a.copy()
    setitem(out, Ellipsis, a)
    return out


def fix(x, out=None):
    return trunc(x, out=out)


def astype(x, dtype, /, *, casting="unsafe", copy=True, device=None):
    x = asarray(x)
    dtype = _np.dtype(dtype)
    from .array import _check_dtype

    _check_dtype(dtype)
    if not _np.can_cast(x.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to "
                        f"the rule {casting!r}")  # fmt: skip
    if dtype == x.dtype:
        return x.copy() if copy else x
    return result(node(Op.CAST, (x._node(),), None, x.shape, dtype), x.device)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = asarray(a), asarray(b)
    dt = _np.result_type(a.dtype, b.dtype, _np.float16)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    close = less_equal(absolute(a - b), atol + rtol * absolute(b))
    both_inf = logical_and(isinf(a), equal(a, b))
    out = logical_or(logical_and(close, isfinite(b)), both_inf)
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False) -> bool:
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return bool(all(same))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if x.dtype.kind not in "fc":
        return x.copy() if copy else x
    if x.dtype.kind == "c":
        parts = (nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in (real(x), imag(x)))
        re, im = parts
        return add(re, multiply(im, 1j)).astype(x.dtype)
    info = _np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    kind = x.dtype.type
    y = where(isnan(x), kind(nan), x)
    y = where(equal(y, _np.inf), kind(posinf), y)
    y = where(equal(y, -_np.inf), kind(neginf), y)
    return y


def sinc(x):
    x = asarray(x)
    y = multiply(_np.pi, where(equal(x, 0), 1.0e-20, x))
    return divide(sin(y), y)


def sort_inplace(a, axis=-1, kind=None) -> None:
    from .fallback import call_numpy

    setitem(a, Ellipsis, call_numpy("sort", _np.sort, a, axis=axis, kind=kind))


def argsort(a, axis=-1, kind=None, order=None):
    from .fallback import call_numpy

    return call_numpy("argsort", _np.argsort, a, axis=axis, kind=kind)


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
    return _np.isscalar(element)



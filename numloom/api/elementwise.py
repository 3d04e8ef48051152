"""The elementwise family of the NumPy namespace: NumPy's ufuncs as numloom ``ufunc`` objects
(``add = ufunc(np.add)``; aliases are the same object, as in NumPy) and the elementwise functions
built on them (``where``, ``clip``, ``round``, ``isclose``, ``nan_to_num``...)."""

from __future__ import annotations

import builtins
import operator

import numpy as _np

from ..core import dag as _dag
from ..core import fperrors
from ..core.array import _RESULT_TYPES, _speedups, asarray, ndarray, operand, result
from ..core.dag import Op, node
from ..core.views import broadcast_shapes as _broadcast_shapes
from .creation import array, empty, full_like, zeros_like
from .eager import cast_now
from .shapes import complex_part as _complex_part
from .ufuncs import NOT_OVERRIDDEN, operator_override, ufunc

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

UFUNCS_BY_NAME = {uf.__name__: uf for uf in list(globals().values()) if isinstance(uf, ufunc)}


def power_operator(a, exponent, out=None):
    """``a ** exponent``: NumPy's operator (``fast_scalar_power``) squares any array for the
    Python int 2 (so ``bool_array ** 2`` is int8, as ``square``), and uses reciprocal or sqrt
    for float and complex arrays and the Python scalars -1 and 0.5."""
    if type(exponent) is int and exponent == 2:
        uf, args = square, (a,)
    elif a.dtype.kind in "fc" and type(exponent) is int and exponent == -1:
        uf, args = reciprocal, (a,)
    elif a.dtype.kind in "fc" and type(exponent) is float and exponent == 0.5:
        uf, args = sqrt, (a,)
    else:
        uf, args = power, (a, exponent)
    if out is None:
        return uf(*args)
    try:
        return uf(*args, out=out)  # (no keyword: the short path)
    except (TypeError, ValueError):
        _raise_as_numpys_ipow(a, exponent)
        raise


def _raise_as_numpys_ipow(a, exponent) -> None:
    """Raise the error the installed NumPy's ``a **= exponent`` raises, if it raises one: its
    operator checks the exponent's sign and the in-place cast in an order that differs
    between NumPy versions (``bool_array **= -1``)."""
    probe = _np.ones(1, a.dtype)
    if not isinstance(exponent, (int, float, complex, _np.generic)):
        exponent = _np.zeros(_np.shape(exponent)[-1:], getattr(exponent, "dtype", None))
    with _np.errstate(all="ignore"):
        try:
            probe **= exponent
        except (TypeError, ValueError) as e:
            raise e.with_traceback(None) from None


def compare(uf: ufunc, a, other):
    """``a == other`` and ``a != other``: objects NumPy cannot compare elementwise (None,
    strings) give all-False (all-True); the ordering comparisons raise NumPy's error."""
    made = operator_override(uf, a, other)  # (another library's operand: NumPy's rules)
    if made is not NOT_OVERRIDDEN:
        return made
    if uf is equal or uf is not_equal:
        try:
            return uf(a, other)
        except TypeError:
            return full_like(a, uf is not_equal, dtype=bool)
    return uf(a, other)


# --- elementwise functions that are not ufuncs ------------------------------------------------


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``; with one argument, ``nonzero(condition)``."""
    if x is None and y is None:
        return asarray(condition).nonzero()
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    cond, x, y = operand(condition), operand(x), operand(y)
    if (
        type(cond) is ndarray
        and type(x) is ndarray
        and type(y) is ndarray
        and x._dtype == y._dtype
        and cond._view.shape == x._view.shape == y._view.shape
    ):
        dtype, shape = x._dtype, x._view.shape  # the common call: NumPy's answers, known
        if _MAP_RESULT is not None:  # (its node and array made in C)
            return _MAP_RESULT("where", (cond, x, y), (_BOOL, dtype, dtype, dtype), shape)
    else:
        dtype = _np.result_type(*(_dtype_or_scalar(v) for v in (x, y)))
        shapes = [_np.shape(v) if not isinstance(v, ndarray) else v.shape for v in (cond, x, y)]
        shape = _broadcast_shapes(*shapes)
        if shape is None:
            _np.where(*(_np.broadcast_to(_np.zeros((), bool), s) for s in shapes))
    from .ufuncs import as_loop_node

    srcs = (as_loop_node(cond, _np.dtype(bool), shape), as_loop_node(x, dtype, shape),
            as_loop_node(y, dtype, shape))  # fmt: skip
    return result(node(Op.MAP, srcs, "where", shape, dtype), _device_of(cond, x, y))


_MAP_RESULT = None if _speedups is None else _speedups.map_result
_BOOL = _np.dtype(bool)


def _dtype_or_scalar(v):
    return v.dtype if isinstance(v, (ndarray, _np.generic)) else v


def _device_of(*values):
    for v in values:
        if isinstance(v, ndarray):
            return v.device
    return None


_clip_ufunc = ufunc(_np._core.umath.clip)
_NO_VALUE = _np._NoValue


def clip(a, a_min=_NO_VALUE, a_max=_NO_VALUE, out=None, *, min=_NO_VALUE,  # noqa: F811
         max=_NO_VALUE, **kwargs):  # noqa: F811 (NumPy's names)  # fmt: skip
    """``minimum(maximum(a, a_min), a_max)`` with NumPy's argument checks and dtype rules."""
    if a_min is _NO_VALUE and a_max is _NO_VALUE:
        a_min = None if min is _NO_VALUE else min
        a_max = None if max is _NO_VALUE else max
    elif a_min is _NO_VALUE:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is _NO_VALUE:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not _NO_VALUE or max is not _NO_VALUE:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are "
                         "provided is forbidden.")  # fmt: skip
    return _clip(asarray(a), a_min, a_max, out, **kwargs)


def _clip(a, lo=None, hi=None, out=None, **kwargs):
    """``ndarray.clip``: NumPy's ``_clip``. A Python int bound beyond an integer dtype's range
    clips nothing (NEP 50: it is never converted); no bounds at all is ``positive``."""
    if a.dtype.kind in "iu":
        info = _np.iinfo(a.dtype)
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
    if lo is None and hi is None:
        return positive(a, out=out, **kwargs)
    if lo is None:
        return minimum(a, hi, out=out, **kwargs)
    if hi is None:
        return maximum(a, lo, out=out, **kwargs)
    if out is None and not kwargs:
        return _clip_ufunc(a, lo, hi)  # (the ufunc's short path: no keywords given)
    return _clip_ufunc(a, lo, hi, out=out, **kwargs)


def real(val):
    """The real parts: for a complex array a view of them (writing it changes ``val``), for
    others the array itself, as NumPy's ``val.real``."""
    a = asarray(val)
    return _complex_part(a, 0) if a.dtype.kind == "c" else a


def imag(val):
    """The imaginary parts: for a complex array a view of them, for others read-only zeros."""
    a = asarray(val)
    if a.dtype.kind == "c":
        return _complex_part(a, 1)
    parts = zeros_like(a)
    parts._readonly = True
    return parts


def _complex(re, im, dtype):
    """The complex array ``re + im*1j`` of ``dtype``, built without arithmetic (which would
    turn a NaN or infinite part into NaNs and lose signed zeros)."""
    srcs = (re._node(), im._node())
    return result(node(Op.MAP, srcs, "complex", re.shape, dtype), re.device)


def angle(z, deg=False):
    """NumPy's angle: ``arctan2(z.imag, z.real)``; ``arctan2(0, z)`` for real input."""
    z = asarray(z)
    if z.dtype.kind == "c":
        a = arctan2(imag(z), real(z))
    else:
        a = arctan2(0, z)
    if deg:
        multiply(a, 180 / _np.pi, out=a)
    return a


def round(a, decimals=0, out=None):
    """NumPy's ``PyArray_Round``: half to even, scaling by 10**decimals in the array's float
    dtype (float64 for integers); complex parts are rounded one by one."""
    a = asarray(a)
    decimals = operator.index(decimals)
    if a.dtype.kind == "c":
        return _round_complex(a, decimals, out)
    if decimals >= 0 and a.dtype.kind in "iu":
        return _copy_to(a, out)
    if decimals == 0:
        return rint(a) if out is None else rint(a, out=out)
    scale, undo = (multiply, divide) if decimals >= 0 else (divide, multiply)
    factor = _power_of_ten(builtins.abs(decimals))
    work = out if out is not None else empty(a.shape, _np.float64 if a.dtype.kind in "iu"
                                             else a.dtype)  # fmt: skip
    scale(a, factor, out=work)
    rint(work, out=work)
    undo(work, factor, out=work)
    if out is None and a.dtype.kind in "iu":
        return work.astype(a.dtype)
    return work


around = round


def _power_of_ten(n: int) -> float:
    """10.0**n as NumPy computes it (exact table, then repeated multiplication)."""
    if n < 9:
        return float(10**n)
    value = 1e9
    for _ in range(n - 9):
        value *= 10.0
    return value


def _round_complex(a, decimals, out):
    value = _complex(round(real(a), decimals), round(imag(a), decimals), a.dtype)
    return value if out is None else _copy_to(value, out)


def _copy_to(a, out):
    if out is None:
        return a.copy()
    out[...] = a
    return out


def fix(x, out=None):
    return trunc(x) if out is None else trunc(x, out=out)


def astype(x, dtype, /, *, copy=True, device=None):  # noqa: F811 (NumPy's name)
    """NumPy's ``np.astype``: of an array, or of a scalar its own ``astype`` (a NumPy scalar's
    gives a scalar, a Python number has none: NumPy's AttributeError); no other array-like."""
    if type(x) not in _RESULT_TYPES and not isinstance(x, (ndarray, _np.ndarray)):
        if not _np.isscalar(x):
            raise TypeError(f"Input should be a NumPy array or scalar. It is a {type(x)} instead.")
        return x.astype(dtype, copy=copy)
    return _cast(x, dtype, copy=copy)


def _cast(x, dtype, casting="unsafe", copy=True):
    """``x.astype(dtype, casting=casting, copy=copy)`` of a numloom array or array-like."""
    if casting == "same_value":  # (NumPy 2.4's: every value checked, NumPy's error if one changes)
        from .fallback import call_method

        return call_method(asarray(x), "astype", dtype, casting=casting, copy=copy)
    known = key = None
    if type(x) in _RESULT_TYPES:  # the common call, a loop's ``mask.astype(np.int32)``: one lookup
        key = (x._dtype, dtype, casting)
        try:
            known = _casts.get(key)
        except TypeError:  # (a dtype argument that is not hashable)
            key = None
    if known is None:  # NumPy's checks, and what they found kept for the next call
        x = asarray(x)
        target = _np.dtype(dtype)
        from ..core.array import _check_dtype

        _check_dtype(target)
        if not _np.can_cast(x.dtype, target, casting):
            what = "scalar" if x.ndim == 0 else "array data"  # NumPy's words for 0-d arrays
            raise TypeError(f"Cannot cast {what} from {x.dtype!r} to {target!r} according to "
                            f"the rule {casting!r}")  # fmt: skip
        known = (target, fperrors.cast_raising(x.dtype, target))
        if key is not None:
            if len(_casts) >= 1024:
                _casts.clear()
            _casts[key] = known
    target, raising = known
    if target == x.dtype:
        return x.copy() if copy else x
    if x._storage.eager:  # (a loop's small array: NumPy's cast, now)
        made = cast_now(x, target)
        if made is not None:
            return made
    cast = _dag.checked_node(Op.CAST, (x._node(),), None, x._view.shape, target)
    if raising:  # NumPy's error state at this call, for the sync
        fperrors.record(cast, _dag.user_line())
    return result(cast, x._storage.device)


# (source dtype, dtype argument, casting) -> (target dtype, whether the cast can warn): casts
# already checked as NumPy does (can_cast, a numloom dtype)
_casts: dict = {}


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's isclose, step by step: ``b`` is made inexact first (``abs(MIN_INT)``), Python
    scalars stay weak."""
    x, y, atol, rtol = (v if isinstance(v, (int, float, complex)) else asarray(v)
                        for v in (a, b, atol, rtol))  # fmt: skip
    if isinstance(y, ndarray):
        y = y.astype(_np.result_type(y.dtype, 1.0), copy=False)
    elif isinstance(y, int):
        y = float(y)
    if not (_all_finite(atol) and _all_finite(rtol)):
        _invalid_tolerance(f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}")
    # (Python's operators: tolerances and ``y`` that are Python numbers stay Python's, weak)
    close = less_equal(absolute(subtract(x, y)), atol + rtol * builtins.abs(y))
    out = bitwise_or(bitwise_and(close, isfinite(y)), equal(x, y))
    if equal_nan:
        out = bitwise_or(out, bitwise_and(isnan(x), isnan(y)))
    return out


def _all_finite(tolerance) -> bool:
    if isinstance(tolerance, (int, float, complex)):
        return bool(_np.isfinite(tolerance))
    return bool(isfinite(tolerance).all())


def _invalid_tolerance(message: str) -> None:
    """NumPy's answer to a tolerance that is not finite, as the error state's ``invalid``
    says: a RuntimeWarning at the user's line, a FloatingPointError, or a printed line."""
    state = _np.geterr()["invalid"]
    if state == "warn":
        _dag.warn_at_user(message, RuntimeWarning)
    elif state == "raise":
        raise FloatingPointError(message)
    elif state == "print":
        print(message)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    close = isclose(a, b, rtol, atol, equal_nan)
    return bool(close) if isinstance(close, _np.generic) else bool(close.all())  # (scalars')


def array_equal(a1, a2, equal_nan=False) -> bool:
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return bool(same.all())


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):  # noqa: F811 (NumPy's name)
    """NumPy's nan_to_num: NaN and infinities of each real part replaced (in place of ``x``
    when ``copy=False``), each value cast to the part's dtype as ``copyto`` casts it."""
    x = array(x, copy=copy)
    if x.dtype.kind not in "fc":
        return x
    info = _np.finfo(x.dtype)
    maxf = info.max if posinf is None else posinf
    minf = info.min if neginf is None else neginf
    if x.dtype.kind == "c":
        parts = [_finite(p, nan, maxf, minf) for p in (real(x), imag(x))]
        value = _complex(parts[0], parts[1], x.dtype)
    else:
        value = _finite(x, nan, maxf, minf)
    x[...] = value
    return x


def _finite(d, nan, maxf, minf):
    """``d`` with NaN, +inf and -inf replaced; the replacements cast as ``copyto`` does."""
    fill = {}
    for name, v in (("nan", nan), ("posinf", maxf), ("neginf", minf)):
        fill[name] = _np.empty((), d.dtype)
        _np.copyto(fill[name], v)  # NumPy's casting errors for values of the wrong kind
    y = where(isnan(d), fill["nan"][()], d)
    y = where(equal(d, _np.inf), fill["posinf"][()], y)
    return where(equal(d, -_np.inf), fill["neginf"][()], y)


def sinc(x):
    """NumPy's sinc: ``sin(y) / y`` for ``y = pi * x``, with zeros replaced by eps."""
    x = multiply(asarray(x), _np.pi)
    eps = _np.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = where(x, x, eps)
    return divide(sin(y), y)

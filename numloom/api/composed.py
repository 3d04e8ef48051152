"""NumPy functions composed of numloom's own operations (ufuncs, reductions, views, concatenate,
take, matmul), so they are recorded in the DAG, fuse with the work around them and run natively
on every device: statistics (cov, corrcoef), products (kron, cross, einsum), calculus (gradient,
trapezoid, ediff1d), signals (convolve, correlate, interp), polynomials (polyval, vander), tri,
isin, array_equiv, and the nan-functions (``nanfunctions.py``).

Each follows NumPy's own Python source, so results, dtypes and errors are NumPy's. Where NumPy
decides in C (einsum, correlate, interp), NumPy runs first on stand-ins that hold no data (each
axis cut to at most one element, or zero-stride arrays of the full shape where only an error can
come out) for the result dtype and the error messages.
"""

from __future__ import annotations

import functools
import operator
import sys

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from ..core.array import OtherDtype, asarray
from ..core.array_views import numpy_view, reshape_array
from ..core.dag import recorded_warnings, warn_at_user
from . import elementwise as _ew
from . import nanfunctions as _nan
from . import reductions as _r
from .creation import arange, array, full, zeros
from .einsum import einsum as _einsum
from .fallback import call_numpy, call_numpy_quietly
from .joins import concatenate, diff, stack, take
from .products import dot
from .shapes import broadcast_to, diagonal, moveaxis, squeeze

__all__ = [
    "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
    "nanargmin", "nancumsum", "nancumprod", "cov", "corrcoef", "kron", "cross", "gradient",
    "interp", "convolve", "correlate", "einsum", "trapezoid", "polyval", "vander", "tri", "isin",
    "ediff1d", "array_equiv",
]  # fmt: skip


def _or_numpy(numpy_fn):
    """Decorator: the function, which runs NumPy's ``numpy_fn`` instead on data of dtypes
    numloom arrays do not hold (strings, datetimes, objects: NumPy's own, ``other_dtypes.py``)."""

    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except OtherDtype:
                return call_numpy_quietly(numpy_fn, args, kwargs)

        run._numpy_guard = True
        return run

    return decorate


nansum = _or_numpy(_np.nansum)(_nan.nansum)
nanprod = _or_numpy(_np.nanprod)(_nan.nanprod)
nanmax = _or_numpy(_np.nanmax)(_nan.nanmax)
nanmin = _or_numpy(_np.nanmin)(_nan.nanmin)
nanmean = _or_numpy(_np.nanmean)(_nan.nanmean)
nanvar = _or_numpy(_np.nanvar)(_nan.nanvar)
nanstd = _or_numpy(_np.nanstd)(_nan.nanstd)
nanargmax = _or_numpy(_np.nanargmax)(_nan.nanargmax)
nanargmin = _or_numpy(_np.nanargmin)(_nan.nanargmin)
nancumsum = _or_numpy(_np.nancumsum)(_nan.nancumsum)
nancumprod = _or_numpy(_np.nancumprod)(_nan.nancumprod)
einsum = _or_numpy(_np.einsum)(_einsum)


def _zero_strided(shape: tuple, dtype):
    """A NumPy array of ``shape`` holding one element: NumPy can check it but not fill it."""
    shape = tuple(shape)
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def _at_least(x, ndim: int):
    """``x`` as an array of at least ``ndim`` axes (leading 1s added): a view."""
    x = asarray(x)
    return x if x.ndim >= ndim else reshape_array(x, (1,) * (ndim - x.ndim) + x.shape)


def _any(mask) -> bool:
    """Whether any element of ``mask`` is true: evaluates it (a sync point)."""
    return bool(_r.any(mask))


# --- statistics ----------------------------------------------------------------------------------


@_or_numpy(_np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):  # fmt: skip
    """The covariance matrix of the variables in the rows of ``m`` (and ``y``): the centred
    data times its conjugate transpose (one matmul), divided by the degrees of freedom."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = _np.result_type(m.dtype, *([] if y is None else [y.dtype]), _np.float64)
    X = array(m, ndmin=2, dtype=dtype)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return zeros((0, 0), _np.float64, device=X.device)
    if y is not None:
        y = _at_least(y, 2).astype(dtype, copy=False)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        X = concatenate((X, y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w, aweights = _cov_weights(X, fweights, aweights)
    avg, w_sum = _r.average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact = X.shape[1] - ddof
    else:
        w_sum = float(w_sum[0])  # (a sync: NumPy checks the weights' sum here)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * float(_r.sum(w * aweights)) / w_sum
    if fact <= 0:
        warn_at_user("Degrees of freedom <= 0 for slice", RuntimeWarning)
        fact = 0.0
    X = _ew.subtract(X, avg[:, None]).astype(X.dtype, copy=False)
    X_T = X.T if w is None else _ew.multiply(X, w).T
    c = dot(X, _ew.conjugate(X_T))
    c = _ew.multiply(c, _np.true_divide(1, fact)).astype(c.dtype, copy=False)
    return squeeze(c)


def _cov_weights(X, fweights, aweights) -> tuple:
    """NumPy's checks of cov's frequency and analytic weights (they read the weights: a sync),
    and their product (None when neither is given)."""
    w = None
    if fweights is not None:
        fweights = asarray(fweights).astype(float, copy=False)
        if not bool(_r.all(_ew.equal(fweights, _ew.round(fweights)))):
            raise TypeError("fweights must be integer")
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _any(_ew.less(fweights, 0)):
            raise ValueError("fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aweights = asarray(aweights).astype(float, copy=False)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if _any(_ew.less(aweights, 0)):
            raise ValueError("aweights cannot be negative")
        w = aweights if w is None else _ew.multiply(w, aweights)
    return w, aweights


@_or_numpy(_np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients: the covariance divided by the outer product of the
    standard deviations, clipped to [-1, 1] (each part for complex data)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim != 2:  # NumPy's ``diag`` raises for it: c / c
        return _ew.divide(c, c)
    stddev = _ew.sqrt(_ew.real(diagonal(c)))
    c = _ew.divide(c, stddev[:, None])
    c = _ew.divide(c, stddev[None, :])
    if c.dtype.kind == "c":
        parts = (_ew.clip(_ew.real(c), -1, 1), _ew.clip(_ew.imag(c), -1, 1))
        return _ew._complex(parts[0], parts[1], c.dtype)
    return _ew.clip(c, -1, 1)


# --- products ------------------------------------------------------------------------------------


@_or_numpy(_np.kron)
def kron(a, b):
    """The Kronecker product: ``a`` and ``b`` interleaved by size-1 axes, multiplied with
    broadcasting and reshaped (one elementwise kernel)."""
    b = asarray(b)
    a = _at_least(a, b.ndim)
    nda, ndb = a.ndim, b.ndim
    if nda == 0 or ndb == 0:
        return _ew.multiply(a, b)
    as_ = (1,) * max(0, ndb - nda) + a.shape
    bs = (1,) * max(0, nda - ndb) + b.shape
    a_arr = reshape_array(a, _interleaved(as_, 0))
    b_arr = reshape_array(b, _interleaved(bs, 1))
    product = _ew.multiply(a_arr, b_arr)
    return reshape_array(product, tuple(p * q for p, q in zip(as_, bs)))


def _interleaved(shape: tuple, start: int) -> tuple:
    """``shape`` with a 1 after (start 0) or before (start 1) each axis."""
    out = []
    for n in shape:
        out.extend((n, 1) if start == 0 else (1, n))
    return tuple(out)


@_or_numpy(_np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-element vectors along the given axes."""
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = asarray(a), asarray(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        # (what the installed NumPy does with 2-vectors and other lengths: warn, or raise)
        with recorded_warnings() as caught:
            _np.cross(_np.zeros(a.shape[-1]), _np.zeros(b.shape[-1]))
        for w in caught:
            warn_at_user(str(w.message), w.category)
    shape = _np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    three = a.shape[-1] == 3 or b.shape[-1] == 3
    if three:
        axisc = normalize_axis_index(axisc, len(shape) + 1, msg_prefix="axisc")
    dtype = _np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    mul, sub = _ew.multiply, _ew.subtract
    if not three:
        return broadcast_to(sub(mul(a0, b1), mul(a1, b0)), shape).copy()
    if a.shape[-1] == 2:  # (in NumPy's order, so its first error is raised)
        b2 = b[..., 2]
        parts = [mul(a1, b2), _ew.negative(mul(a0, b2))]
    elif b.shape[-1] == 2:
        a2 = a[..., 2]
        parts = [_ew.negative(mul(a2, b1)), mul(a2, b0)]
    else:
        a2, b2 = a[..., 2], b[..., 2]
        parts = [sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2))]
    parts.append(sub(mul(a0, b1), mul(a1, b0)))
    cp = stack([broadcast_to(p, shape) for p in parts], axis=-1)
    return moveaxis(cp, -1, axisc)


# --- calculus ------------------------------------------------------------------------------------


def _axis_slice(a, axis: int, start, stop=None):
    """``a[..., start:stop, ...]`` along ``axis``: a view."""
    key = [slice(None)] * a.ndim
    key[axis] = slice(start, stop)
    return a[tuple(key)]


@_or_numpy(_np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient by central differences inside and one-sided differences at the edges, for
    each axis: each a concatenation of the edges and the interior (one kernel per axis)."""
    f = asarray(f)
    N = f.ndim
    axes = tuple(range(N)) if axis is None else _np._core.numeric.normalize_axis_tuple(axis, N)
    dx = _gradient_spacing(f, axes, varargs)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(_np.float64)
        otype = _np.dtype(_np.float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")  # fmt: skip
        pieces = _gradient_pieces(f, ax, ax_dx, edge_order)
        outvals.append(concatenate([p.astype(otype, copy=False) for p in pieces], axis=ax))
    return outvals[0] if len(axes) == 1 else tuple(outvals)


def _gradient_spacing(f, axes: tuple, varargs) -> list:
    """NumPy's reading of gradient's spacings: one per axis, a scalar or the differences of
    coordinates (a scalar again when they are uniform: a sync, as NumPy reads them)."""
    n = len(varargs)
    if n == 0:
        return [1.0] * len(axes)
    if n == 1 and _np.ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if n != len(axes):
        raise TypeError("invalid number of arguments")
    dx = list(varargs)
    for i, distances in enumerate(dx):
        distances = asarray(distances)
        if distances.ndim == 0:
            continue
        if distances.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(distances) != f.shape[axes[i]]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")  # fmt: skip
        if distances.dtype.kind in "iu":
            distances = distances.astype(_np.float64)
        diffx = diff(distances)
        if bool(_r.all(_ew.equal(diffx, diffx[0]))):
            diffx = diffx[0]
        dx[i] = diffx
    return dx


def _gradient_pieces(f, ax: int, ax_dx, edge_order: int) -> list:
    """The first edge, the interior and the last edge of the gradient along ``ax``."""
    uniform = _np.ndim(ax_dx) == 0
    s = lambda start, stop=None: _axis_slice(f, ax, start, stop)  # noqa: E731
    shape = [1] * f.ndim
    shape[ax] = -1
    if uniform:
        interior = (s(2, None) - s(None, -2)) / (2.0 * ax_dx)
    else:
        dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        interior = a * s(None, -2) + b * s(1, -1) + c * s(2, None)
    if edge_order == 1:
        first = (s(1, 2) - s(0, 1)) / (ax_dx if uniform else ax_dx[0])
        last = (s(-1, None) - s(-2, -1)) / (ax_dx if uniform else ax_dx[-1])
        return [first, interior, last]
    if uniform:
        a, b, c = -1.5 / ax_dx, 2.0 / ax_dx, -0.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[0], ax_dx[1]
        a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = -dx1 / (dx2 * (dx1 + dx2))
    first = a * s(0, 1) + b * s(1, 2) + c * s(2, 3)
    if uniform:
        a, b, c = 0.5 / ax_dx, -2.0 / ax_dx, 1.5 / ax_dx
    else:
        dx1, dx2 = ax_dx[-2], ax_dx[-1]
        a = dx2 / (dx1 * (dx1 + dx2))
        b = -(dx2 + dx1) / (dx1 * dx2)
        c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
    last = a * s(-3, -2) + b * s(-2, -1) + c * s(-1, None)
    return [first, interior, last]


@_or_numpy(_np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral along ``axis`` by the trapezoidal rule (one map-reduce kernel)."""
    y = asarray(y)
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = diff(x, axis=axis)
    key_hi, key_lo = [slice(None)] * y.ndim, [slice(None)] * y.ndim
    key_hi[axis], key_lo[axis] = slice(1, None), slice(None, -1)
    return (d * (y[tuple(key_hi)] + y[tuple(key_lo)]) / 2.0).sum(axis)


@_or_numpy(_np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """The differences between consecutive elements of the flattened array, with optional
    values before and after (cast to the array's dtype)."""
    ary = asarray(ary).ravel()
    dtype = ary.dtype
    differences = ary[1:] - ary[:-1]
    if to_begin is None and to_end is None:
        return differences
    pieces = []
    for name, edge in (("to_begin", to_begin), ("to_end", to_end)):
        if edge is None:
            pieces.append(None)
            continue
        edge = asarray(edge)
        if not _np.can_cast(edge.dtype if edge.ndim else edge.get()[()], dtype, "same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")  # fmt: skip
        pieces.append(edge.ravel().astype(dtype, copy=False))
    body = differences.astype(dtype, copy=False)
    return concatenate([p for p in (pieces[0], body, pieces[1]) if p is not None])


# --- signals -------------------------------------------------------------------------------------


@_or_numpy(_np.convolve)
def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-D arrays: ``correlate(a, v[::-1])``."""
    a, v = _at_least(a, 1), _at_least(v, 1)
    if len(a) == 0:
        raise ValueError("a cannot be empty")
    if len(v) == 0:
        raise ValueError("v cannot be empty")
    if len(v) > len(a):
        a, v = v, a
    if _numpys(a, v):
        return call_numpy("convolve", _np.convolve, a, v, mode)
    return _correlate(a, v[::-1], mode, _np.convolve, conjugate=False)


@_or_numpy(_np.correlate)
def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-D arrays, ``c[k] = sum_n a[n + k] * conj(v[n])``."""
    a, v = asarray(a), asarray(v)
    if _numpys(a, v) and a.ndim == v.ndim == 1 and a.size and v.size:
        return call_numpy("correlate", _np.correlate, a, v, mode)
    return _correlate(a, v, mode, _np.correlate, conjugate=True)


def _numpys(a, v) -> bool:
    """Whether a convolution of ``a`` and ``v`` runs NumPy's function on their memory: on the
    CPU, for computed arrays, where NumPy's (a BLAS dot an output) is faster than the fused
    kernel (20000 by 20000 float64: 28 ms against 47) and gives NumPy's last bits; and where
    it is complex, as kernels reduce no complex values (they run through NumPy node by node,
    the sliding window's products made whole: ThinkDSP's convolved spectra, 229 GiB). A
    pending operand's real convolution fuses with the work that makes it (a cellular
    automaton's rows), as does a GPU's (``_correlate``)."""
    if _np.result_type(a.dtype, v.dtype).kind == "c":
        return True
    return a.device == "cpu" and not (a._storage.pending or v._storage.pending)


def _correlate(a, v, mode, np_fn, conjugate: bool):
    """NumPy's ``_pyarray_correlate``: the longer array padded with zeros for the mode and
    read through a sliding window (a view), times the shorter, summed along the window (one
    map-reduce kernel); reversed when the arguments were swapped."""
    if a.ndim != 1 or v.ndim != 1 or a.size == 0 or v.size == 0:
        np_fn(_zero_strided(a.shape, a.dtype), _zero_strided(v.shape, v.dtype), mode)
    dtype = np_fn(_np.zeros(1, a.dtype), _np.zeros(1, v.dtype), mode).dtype
    mode_number = np_fn(_np.zeros(3), _np.zeros(2), mode).shape[0] - 2  # valid, same, full
    a, v = a.astype(dtype, copy=False), v.astype(dtype, copy=False)
    if conjugate and dtype.kind == "c":
        v = _ew.conjugate(v)
    inverted = len(a) < len(v)
    if inverted:
        a, v = v, a
    n = len(v)
    left, right = {0: (0, 0), 1: (n // 2, n - n // 2 - 1), 2: (n - 1, n - 1)}[mode_number]
    if left or right:
        pad = [zeros((left,), dtype, device=a.device), a, zeros((right,), dtype, device=a.device)]
        a = concatenate(pad)
    windows = numpy_view(a, _np.lib.stride_tricks.sliding_window_view, n)
    if dtype.kind == "b":
        c = _r.any(_ew.logical_and(windows, v), axis=1)
    elif dtype == _np.float16:  # NumPy's dot of halves sums in float32
        terms = _ew.multiply(windows.astype(_np.float32), v.astype(_np.float32))
        c = _r.sum(terms, axis=1).astype(dtype)
    else:
        c = _r.sum(_ew.multiply(windows, v), axis=1, dtype=dtype)
    return c[::-1] if inverted else c


@_or_numpy(_np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation at ``x`` of the points ``(xp, fp)`` (xp increasing):
    each x finds its interval by a branchless binary search (gathers from xp), all fused into
    one elementwise kernel."""
    fp = asarray(fp)
    dtype = _np.complex128 if fp.dtype.kind == "c" else _np.float64
    x, xp = asarray(x), asarray(xp)
    if xp.ndim != 1 or fp.ndim != 1:
        if period is not None and period == 0:
            raise ValueError("period must be a non-zero value")
        _np.interp(_np.zeros(1), _zero_strided(xp.shape, xp.dtype),
                   _zero_strided(fp.shape, fp.dtype), period=period)  # fmt: skip
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    x = x.astype(_np.float64, copy=False)
    xp, fp = xp.astype(_np.float64, copy=False), fp.astype(dtype, copy=False)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        x, xp, fp = _periodic(x, xp, fp, abs(period))
        left = right = None
    if dtype is _np.float64:
        return _interp_real(x, xp, fp, left, right)
    parts = []
    for part, part_of in ((_ew.real, _np.real), (_ew.imag, _np.imag)):
        edges = [None if e is None else part_of(e) for e in (left, right)]
        parts.append(_interp_real(x, xp, part(fp), *edges))
    return _ew._complex(parts[0], parts[1], _np.dtype(dtype))


def _periodic(x, xp, fp, period):
    """NumPy's periodic interp: everything modulo the period, xp sorted, one point wrapped
    around at each end."""
    x, xp = _ew.remainder(x, period), _ew.remainder(xp, period)
    order = _namespace().argsort(xp)
    xp, fp = take(xp, order), take(fp, order)
    xp = concatenate((xp[-1:] - period, xp, xp[0:1] + period))
    fp = concatenate((fp[-1:], fp, fp[0:1]))
    return x, xp, fp


def _namespace():
    """The public numloom namespace (for functions other modules of it may make native)."""
    return sys.modules[__name__.split(".")[0]]


def _interp_real(x, xp, fp, left, right):
    """NumPy's ``arr_interp`` (compiled_base.c) for float64 data, elementwise."""
    m = xp.shape[0]
    lval = fp[0] if left is None else _np.float64(left)
    rval = fp[m - 1] if right is None else _np.float64(right)
    w = _ew.where
    if m == 1:
        return w(_ew.less(x, xp[0]), lval, w(_ew.greater(x, xp[0]), rval, fp[0]))
    # (NumPy's search gives -1 only where x < xp[0]: a NaN first in xp is below no x, and
    # the interval then is the first, whose NaN the result takes)
    below = _ew.less(x, xp[0])
    j = w(below, -1, _ew.maximum(_ew.subtract(_count_at_or_below(xp, x), 1), 0))
    at = _ew.clip(j, 0, m - 2)
    x0, x1 = take(xp, at), take(xp, _ew.add(at, 1))
    y0, y1 = take(fp, at), take(fp, _ew.add(at, 1))
    with _np.errstate(all="ignore"):  # (NumPy's loop sets no error state)
        slope = (y1 - y0) / (x1 - x0)
        value = slope * (x - x0) + y0
        value = w(_ew.isnan(value), slope * (x - x1) + y1, value)
    value = w(_ew.logical_and(_ew.isnan(value), _ew.equal(y0, y1)), y0, value)
    value = w(_ew.equal(x0, x), y0, value)
    value = w(_ew.equal(j, m - 1), fp[m - 1], value)
    value = w(below, lval, value)
    value = w(_ew.greater(x, xp[m - 1]), rval, value)
    return w(_ew.isnan(x), x, value)


def _count_at_or_below(xp, x):
    """How many of the sorted ``xp`` are ``<= x``, for each x: Shar's branchless binary
    search, one gather from xp per power of two up to ``len(xp)``."""
    m = xp.shape[0]
    pos = full(x.shape, 0, _np.intp, device=x.device)
    step = 1 << (m.bit_length() - 1)
    while step:
        probe = _ew.add(pos, step - 1)
        below = _ew.less_equal(take(xp, probe, mode="clip"), x)
        pos = _ew.where(_ew.logical_and(below, _ew.less(probe, m)), _ew.add(pos, step), pos)
        step >>= 1
    return pos


# --- polynomials and matrices ---------------------------------------------------------------------


@_or_numpy(_np.polyval)
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's
    rule: one elementwise kernel."""
    p = asarray(p)
    x = asarray(x)
    y = _ew.zeros_like(x)
    for k in range(len(p)):
        y = y * x + p[k]
    return y


@_or_numpy(_np.vander)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of ``x``: powers as a cumulative product along each row."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = len(x) if N is None else operator.index(N)
    dtype = _np.promote_types(x.dtype, int)
    n = len(x)
    if N <= 0:
        return zeros((n, max(N, 0)), dtype, device=x.device)
    columns = [full((n, 1), 1, dtype, device=x.device)]
    if N > 1:
        repeated = broadcast_to(x.astype(dtype, copy=False)[:, None], (n, N - 1))
        columns.append(_r.cumprod(repeated, axis=1))
    v = concatenate(columns, axis=1)
    return v if increasing else v[:, ::-1]


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """Ones at and below the k-th diagonal: a comparison of two IOTAs."""
    M = N if M is None else M
    rows = arange(N).reshape(N, 1)
    cols = arange(-k, M - k).reshape(1, M)
    return _ew.greater_equal(rows, cols).astype(dtype, copy=False)


# --- sets and equality ---------------------------------------------------------------------------

ISIN_BROADCAST_LIMIT = 64  # test sets up to this size compare by broadcasting (NumPy's loop)


@_or_numpy(_np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element is in ``test_elements``: for a small test set, a comparison with
    each of its values (one map-reduce kernel); larger ones, and ``kind='table'`` (whose errors
    depend on the values' range), run NumPy's."""
    element, test = asarray(element), asarray(test_elements)
    _np.isin(_np.zeros(1, element.dtype), _np.zeros(1, test.dtype), kind=kind)  # NumPy's errors
    if test.size > ISIN_BROADCAST_LIMIT or kind == "table":
        from .fallback import call_numpy

        return call_numpy("isin", _np.isin, element, test, assume_unique=assume_unique,
                          invert=invert, kind=kind)  # fmt: skip
    flat = test.ravel()
    found = _r.any(_ew.equal(element[..., None], flat), axis=-1)
    return _ew.logical_not(found) if invert else found


@_or_numpy(_np.array_equiv)
def array_equiv(a1, a2) -> bool:
    """Whether the arrays are equal where they broadcast (False when they do not)."""
    try:
        a1, a2 = asarray(a1), asarray(a2)
    except OtherDtype:
        raise  # (NumPy's array_equiv runs on them)
    except Exception:  # noqa: BLE001 (NumPy's answer for anything it cannot make an array of)
        return False
    try:
        _np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(_r.all(_ew.equal(a1, a2)))

"""``numloom.fft``: NumPy's discrete Fourier transforms.

On a GPU every function here runs on the device: the transforms in cuFFT
(``backends/cufft.py``), the cropping, zero padding, axis moves, casts and normalization in
numloom's own operations (which fuse into the kernels around the call), and ``fftfreq``,
``rfftfreq``, ``fftshift`` and ``ifftshift`` from ``arange``, ``where`` and ``roll`` on either
device. On the CPU the transforms are NumPy's own, run on numloom's memory. Results, dtypes,
``out=`` and the errors raised for bad arguments are NumPy 2's.

Several axes go to cuFFT together, up to three per call (the real axis of ``rfftn`` and
``irfftn`` innermost); more, or an axis named twice, take several calls, in NumPy's order.
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import warnings
from dataclasses import dataclass

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from .api.creation import arange, ascontiguousarray
from .api.elementwise import conjugate, real, where
from .api.fallback import call_numpy, module_getattr
from .api.joins import flip, roll
from .api.padding import pad
from .api.shapes import broadcast_to, moveaxis
from .core.array import asarray, ndarray

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "rfftn", "irfftn", "rfft2", "irfft2",
           "fft2", "ifft2", "fftn", "ifftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]  # fmt: skip


def __getattr__(name: str):
    return module_getattr("fft", _np.fft, name)


def _library(device: str):
    """The FFT library for arrays on ``device`` (``transform`` as in ``backends/cufft.py``):
    cuFFT on a GPU; None where NumPy's FFT runs instead (the CPU, or no cuFFT here)."""
    if device == "cpu":
        return None
    from .backends import cufft

    return cufft if cufft.available() else None


# --- the one-dimensional transforms ---------------------------------------------------------------


def fft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional discrete Fourier transform along ``axis`` (NumPy's ``fft.fft``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.fft", _np.fft.fft, a, n=n, axis=axis, norm=norm, out=out)
    return _run(library, a, [_Step("fft", n, axis, norm, out)], out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional inverse discrete Fourier transform (NumPy's ``fft.ifft``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.ifft", _np.fft.ifft, a, n=n, axis=axis, norm=norm, out=out)
    return _run(library, a, [_Step("ifft", n, axis, norm, out)], out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional transform of real input: the ``n // 2 + 1`` non-negative frequency
    terms (NumPy's ``fft.rfft``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.rfft", _np.fft.rfft, a, n=n, axis=axis, norm=norm, out=out)
    return _run(library, a, [_Step("rfft", n, axis, norm, out)], out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``rfft``: ``n`` real points (``2 * (m - 1)`` by default) from ``m``
    non-negative frequency terms (NumPy's ``fft.irfft``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.irfft", _np.fft.irfft, a, n=n, axis=axis, norm=norm, out=out)
    return _run(library, a, [_Step("irfft", n, axis, norm, out)], out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real
    (NumPy's ``fft.hfft``; ``out`` is written where the installed NumPy writes it, see
    ``_numpy_writes_out``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.hfft", _np.fft.hfft, a, n=n, axis=axis, norm=norm, out=out)
    if n is None:
        n = (a.shape[axis] - 1) * 2
    new_norm = _swap_direction(norm)
    out = out if _numpy_writes_out("hfft") else None
    return _run(library, conjugate(a), [_Step("irfft", n, axis, new_norm, out)], out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``hfft``: the first half of the Hermitian spectrum of real input
    (NumPy's ``fft.ihfft``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.ihfft", _np.fft.ihfft, a, n=n, axis=axis, norm=norm, out=out)
    if n is None:
        n = a.shape[axis]
    new_norm = _swap_direction(norm)
    result = conjugate(_run(library, a, [_Step("rfft", n, axis, new_norm, out)], None))
    return _into(result, out)


# --- the n-dimensional transforms -----------------------------------------------------------------


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional discrete Fourier transform over ``axes`` (all by default), with
    lengths ``s`` (NumPy's ``fft.fftn``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.fftn", _np.fft.fftn, a, s=s, axes=axes, norm=norm, out=out)
    return _raw_fftnd(library, a, s, axes, "fft", norm, out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional inverse discrete Fourier transform (NumPy's ``fft.ifftn``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.ifftn", _np.fft.ifftn, a, s=s, axes=axes, norm=norm, out=out)
    return _raw_fftnd(library, a, s, axes, "ifft", norm, out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional discrete Fourier transform (NumPy's ``fft.fft2``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.fft2", _np.fft.fft2, a, s=s, axes=axes, norm=norm, out=out)
    return _raw_fftnd(library, a, s, axes, "fft", norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional inverse discrete Fourier transform (NumPy's ``fft.ifft2``; ``out``
    is written where the installed NumPy writes it)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.ifft2", _np.fft.ifft2, a, s=s, axes=axes, norm=norm, out=out)
    return _raw_fftnd(
        library, a, s, axes, "ifft", norm, out if _numpy_writes_out("ifft2") else None
    )


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional transform of real input: ``rfft`` over the last of ``axes``, then
    ``fft`` over the others (NumPy's ``fft.rfftn``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.rfftn", _np.fft.rfftn, a, s=s, axes=axes, norm=norm, out=out)
    return _rfftn(library, a, s, axes, norm, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional transform of real input (NumPy's ``fft.rfft2``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.rfft2", _np.fft.rfft2, a, s=s, axes=axes, norm=norm, out=out)
    return _rfftn(library, a, s, axes, norm, out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of ``rfftn``: ``ifft`` over all but the last of ``axes``, then ``irfft``
    over the last (NumPy's ``fft.irfftn``)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.irfftn", _np.fft.irfftn, a, s=s, axes=axes, norm=norm, out=out)
    return _irfftn(library, a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The inverse of ``rfft2`` (NumPy's ``fft.irfft2``; ``out`` is written where the
    installed NumPy writes it)."""
    a = asarray(a)
    library = _library(a.device)
    if library is None:
        return call_numpy("fft.irfft2", _np.fft.irfft2, a, s=s, axes=axes, norm=norm, out=out)
    return _irfftn(library, a, s, axes, norm, out if _numpy_writes_out("irfft2") else None)


# What the three functions that take ``out`` but, in NumPy 2.0 to 2.4, never write it are given
# to look at (later NumPy writes it): (input, out) of a call whose result is not zero.
_OUT_PROBES = {
    "hfft": (((2,), "complex128"), ((2,), "float64")),
    "ifft2": (((1, 1), "complex128"), ((1, 1), "complex128")),
    "irfft2": (((1, 2), "complex128"), ((1, 2), "float64")),
}


@functools.cache
def _numpy_writes_out(name: str) -> bool:
    """Whether the installed NumPy's ``fft.<name>`` writes the ``out`` it is given."""
    (shape, dtype), (out_shape, out_dtype) = _OUT_PROBES[name]
    out = _np.zeros(out_shape, out_dtype)
    getattr(_np.fft, name)(_np.ones(shape, dtype), out=out)
    return bool(out.any())


def _raw_fftnd(library, a, s, axes, kind: str, norm, out):
    s, axes = _cook_nd_args(a, s, axes)
    if not axes:
        return a
    steps = [_Step(kind, s[ii], axes[ii], norm, out) for ii in reversed(range(len(axes)))]
    return _run(library, a, steps, out)


def _rfftn(library, a, s, axes, norm, out):
    s, axes = _cook_nd_args(a, s, axes)
    steps = [_Step("rfft", s[-1], axes[-1], norm, out)]
    steps += [_Step("fft", s[ii], axes[ii], norm, out) for ii in range(len(axes) - 2, -1, -1)]
    return _run(library, a, steps, out)


def _irfftn(library, a, s, axes, norm, out):
    s, axes = _cook_nd_args(a, s, axes, invreal=True)
    steps = [_Step("ifft", s[ii], axes[ii], norm, None) for ii in range(len(axes) - 1)]
    steps.append(_Step("irfft", s[-1], axes[-1], norm, out))
    return _run(library, a, steps, out)


_AXES_NONE = (
    "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). In a "
    "future version of NumPy, this will raise an error and `s[i]` will correspond to "
    "the size along the transformed axis specified by `axes[i]`. To retain current "
    "behaviour, pass a sequence [0, ..., k-1] to `axes` for an array of dimension k."
)
_S_NONE = ("Passing an array containing `None` values to `s` is deprecated in NumPy 2.0 and will "
           "raise an error in a future version of NumPy. To use the default behaviour of the "
           "corresponding 1-D transform, pass the value matching the default for its `n` "
           "parameter. To use the default behaviour for every axis, the `s` argument can be "
           "omitted.")  # fmt: skip


def _cook_nd_args(a, s=None, axes=None, invreal=False):
    """NumPy's lengths and axes of an n-dimensional transform, with its errors and warnings."""
    if s is None:
        shapeless = True
        if axes is None:
            s = list(a.shape)
        elif type(axes) in (tuple, list) and all(type(x) is int and -a.ndim <= x < a.ndim
                                                 for x in axes):  # fmt: skip
            s = [a.shape[x] for x in axes]  # (as NumPy's take of the shape, without its call)
        else:
            s = _np.take(a.shape, axes)  # (NumPy's errors for axes out of range)
    else:
        shapeless = False
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn(_AXES_NONE, DeprecationWarning, stacklevel=_user_level())
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn(_S_NONE, DeprecationWarning, stacklevel=_user_level())
    s = [a.shape[_a] if _s == -1 else _s for _s, _a in zip(s, axes)]
    return s, axes


def _user_level() -> int:
    """``warnings.warn``'s stacklevel for the first frame outside numloom (from its caller)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("numloom"):
        frame, level = frame.f_back, level + 1
    return level


# --- checks: NumPy's, call by call, on shapes and dtypes -------------------------------------------


@dataclass(frozen=True)
class _Step:
    """One of NumPy's one-dimensional calls that make up a transform, as NumPy makes it:
    ``kind`` ("fft", "ifft", "rfft" or "irfft") of the array so far, with its arguments."""

    kind: str
    n: object
    axis: object
    norm: object
    out: object


@dataclass(frozen=True)
class _Pass:
    """A checked step: ``kind`` "c2c", "r2c" or "c2r" along ``axis`` (normalized) of length
    ``n`` (the output's for "c2r"), its scale factor ``fct`` (1, or a NumPy scalar) and, where
    NumPy broadcasts the input into ``out``, the shape it is broadcast to first."""

    kind: str
    axis: int
    n: int
    forward: bool
    fct: object
    broadcast: tuple | None

    @property
    def length(self) -> int:
        """How many input points the pass reads along its axis."""
        return self.n // 2 + 1 if self.kind == "c2r" else self.n


_SWAP_DIRECTION = {"backward": "forward", None: "forward", "ortho": "ortho", "forward": "backward"}


def _swap_direction(norm):
    try:
        return _SWAP_DIRECTION[norm]
    except KeyError:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", '
                         '"ortho" or "forward".') from None  # fmt: skip


def _check(shape: tuple, dtype, step: _Step) -> tuple:
    """``(pass, shape, dtype)``: step ``step`` of an array of ``shape`` and ``dtype`` checked as
    NumPy checks it (its exceptions, in its order), and the shape and dtype of its result."""
    is_real, is_forward = step.kind in ("rfft", "irfft"), step.kind in ("fft", "rfft")
    n = step.n
    if n is None:
        n = shape[step.axis] if step.kind != "irfft" else (shape[step.axis] - 1) * 2
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    norm = step.norm if is_forward else _swap_direction(step.norm)
    real_dtype = _np.result_type(_np.dtype(dtype).type(0).real.dtype, 1.0)
    if norm is None or norm == "backward":
        fct = 1
    elif norm == "ortho":
        fct = _np.reciprocal(_np.sqrt(n, dtype=real_dtype))
    elif norm == "forward":
        fct = _np.reciprocal(n, dtype=real_dtype)
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward",'
                         '"ortho" or "forward".')  # fmt: skip
    n_out = n // 2 + 1 if is_real and is_forward else n
    axis = normalize_axis_index(step.axis, len(shape))
    out_dtype = real_dtype if is_real and not is_forward else _np.result_type(dtype, 1j)
    out = step.out
    if out is None:
        if isinstance(n_out, (bool, _np.bool_)):  # (NumPy's ``empty_like(a, shape=...)`` of it)
            raise TypeError("an integer is required")
        out_shape = shape[:axis] + (operator.index(n_out),) + shape[axis + 1 :]
    else:
        out_shape = getattr(out, "shape", None)
        if out_shape is not None and (len(out_shape) != len(shape) or out_shape[axis] != n_out):
            raise ValueError("output array has wrong shape.")
    n = int(n)
    broadcast = _check_call(step.kind, n, shape, dtype, axis, fct, out, out_shape, out_dtype)
    kind = "c2c" if not is_real else "r2c" if is_forward else "c2r"
    next_dtype = out_dtype if out is None else out.dtype
    return _Pass(kind, axis, n, is_forward, fct, broadcast), tuple(out_shape), next_dtype


def _checked(shape: tuple, dtype, step: _Step) -> tuple:
    """``_check``'s answer, kept for the next call with the same shape, dtype and arguments of
    the same types (``n=1.0`` raises where ``n=1`` does not): a loop's transforms check once,
    and a step writing into ``out`` is checked each time."""
    key = (shape, dtype, step, type(step.n), type(step.axis)) if step.out is None else None
    try:
        found = _checks.get(key) if key is not None else None
    except TypeError:  # (an argument that is not hashable: NumPy's check raises for it)
        key = found = None
    if found is None:
        found = _check(shape, dtype, step)
        if key is not None:
            if len(_checks) >= 1024:
                _checks.clear()
            _checks[key] = found
    return found


_checks: dict = {}  # (shape, dtype, step, type of n, type of axis) -> _check's answer

_UFUNCS = {"fft": "fft", "ifft": "ifft", "rfft": "rfft_n_even", "irfft": "irfft"}


def _check_call(kind, n, shape, dtype, axis, fct, out, out_shape, out_dtype) -> tuple | None:
    """The checks of NumPy's pocketfft call: NumPy's own error where it raises one; else the
    shape the input is broadcast to first where ``out`` is larger than the result, or None."""
    is_array = isinstance(out, (ndarray, _np.ndarray))
    loop_in = shape[:axis] + shape[axis + 1 :]
    loop_out = tuple(out_shape[:axis]) + tuple(out_shape[axis + 1 :]) if is_array else loop_in
    try:
        fits = _np.broadcast_shapes(loop_in, loop_out) == loop_out
    except ValueError:
        fits = False
    takes = kind != "rfft" or _np.dtype(dtype).kind != "c"
    casts = out is None or is_array and _np.can_cast(out_dtype, out.dtype, "same_kind")
    if not (fits and takes and casts):
        _numpy_raises(kind, n, shape, dtype, axis, fct, out, out_shape, out_dtype)
    if loop_in == loop_out:
        return None
    return tuple(out_shape[:axis]) + (shape[axis],) + tuple(out_shape[axis + 1 :])


def _numpy_raises(kind, n, shape, dtype, axis, fct, out, out_shape, out_dtype) -> None:
    """Raise what NumPy's pocketfft call raises for these shapes and dtypes, from that call
    itself, made over stand-ins that hold one element each."""
    from numpy.fft import _pocketfft_umath as pfu

    name = _UFUNCS[kind] if kind != "rfft" or n % 2 == 0 else "rfft_n_odd"
    stand_in = _np.broadcast_to(_np.zeros((), dtype), shape)
    if isinstance(out, (ndarray, _np.ndarray)):
        out = _np.lib.stride_tricks.as_strided(_np.zeros(1, out.dtype), out_shape,
                                               (0,) * len(out_shape))  # fmt: skip
    elif out is None:
        out = _np.lib.stride_tricks.as_strided(_np.zeros(1, out_dtype), out_shape,
                                               (0,) * len(out_shape))  # fmt: skip
    getattr(pfu, name)(stand_in, fct, axes=[(axis,), (), (axis,)], out=out)


# --- the device path --------------------------------------------------------------------------


def _run(library, a: ndarray, steps: list, out):
    """NumPy's one-dimensional ``steps`` over ``a``, checked as NumPy checks them, computed
    with ``library``; written into ``out`` when given."""
    shape, dtype, passes = a.shape, a.dtype, []
    for step in steps:
        p, shape, dtype = _checked(shape, dtype, step)
        passes.append(p)
    result = a
    for group in _groups(passes):
        result = _transform_group(library, result, group)
    scale = math.prod(float(p.fct) for p in passes)
    if scale != 1:
        result = result * _np.finfo(result.dtype).dtype.type(scale)
    if out is None and result.dtype != dtype:
        result = result.astype(dtype)
    return _into(result, out)


def _into(result: ndarray, out):
    if out is None:
        return result
    out[...] = result
    return out


def _groups(passes: list) -> list:
    """``passes`` cut into runs that one cuFFT call computes each (``_joins``)."""
    groups = []
    for p in passes:
        if groups and _joins(groups[-1], p):
            groups[-1].append(p)
        else:
            groups.append([p])
    return groups


def _joins(group: list, p: _Pass) -> bool:
    """Whether pass ``p`` joins the run ``group`` in its cuFFT call: up to three distinct axes,
    complex-to-complex in one direction, after a real-to-complex pass or before a
    complex-to-real one. A pass whose input is first broadcast starts a run of its own."""
    if len(group) == 3 or p.broadcast is not None or p.axis in {g.axis for g in group}:
        return False
    if group[-1].kind == "c2r" or p.kind == "r2c" or p.forward != group[0].forward:
        return False
    return p.kind == "c2c" or all(g.kind == "c2c" for g in group)


def _transform_group(library, x: ndarray, group: list) -> ndarray:
    """The passes of ``group`` over ``x`` (cropped or zero-padded to their lengths first): one
    cuFFT call over their axes moved innermost, the real axis last."""
    first = group[0]
    if first.broadcast is not None:
        x = broadcast_to(x, first.broadcast)
    x = _fit(x, {p.axis: p.length for p in group})
    real_pass = first if first.kind == "r2c" else group[-1] if group[-1].kind == "c2r" else None
    complex_axes = [p.axis for p in group if p.kind == "c2c" and p.n > 1]
    complex_dtype = _np.result_type(x.dtype, 1j)
    if real_pass is not None and real_pass.n == 1:  # a transform of one point: itself
        x = x.astype(complex_dtype, copy=False)
        if real_pass.kind == "c2r":
            return real(_c2c(library, x, complex_axes, forward=False))
        real_pass = None
    if real_pass is None:
        return _c2c(library, x, complex_axes, first.forward)
    if real_pass.kind == "r2c":
        x = x.astype(_np.finfo(complex_dtype).dtype, copy=False)
        return _library_call(library, x, complex_axes + [real_pass.axis], "R2C", True)
    x = x.astype(complex_dtype, copy=False)
    x = _hermitian_edges(x, complex_axes, real_pass.axis, real_pass.n)
    axes = complex_axes + [real_pass.axis]
    return _library_call(library, x, axes, "C2R", False, real_pass.n)


def _c2c(library, x: ndarray, axes: list, forward: bool) -> ndarray:
    dtype = _np.result_type(x.dtype, 1j)
    if not axes:  # transforms of one point: the values themselves, in an array of their own
        return x.astype(dtype)
    return _library_call(library, x.astype(dtype, copy=False), axes, "C2C", forward)


def _library_call(library, x: ndarray, axes: list, kind: str, forward=False, last=None):
    """``library``'s ``kind`` transform of ``x`` over ``axes``: the axes moved innermost (in
    their order) and the array made contiguous for the call, moved back after it."""
    inner = list(range(x.ndim - len(axes), x.ndim))
    if axes == inner:
        return library.transform(ascontiguousarray(x), len(axes), kind, forward, last)
    moved = moveaxis(x, axes, inner)
    y = library.transform(ascontiguousarray(moved), len(axes), kind, forward, last)
    return moveaxis(y, inner, axes)


def _fit(x: ndarray, lengths: dict) -> ndarray:
    """``x`` cropped or zero-padded at the end of each axis to ``lengths[axis]`` points."""
    shape = x.shape
    if all(shape[axis] == n for axis, n in lengths.items()):
        return x
    index, widths = [slice(None)] * x.ndim, [(0, 0)] * x.ndim
    for axis, n in lengths.items():
        if x.shape[axis] > n:
            index[axis] = slice(0, n)
        elif x.shape[axis] < n:
            widths[axis] = (0, n - x.shape[axis])
    if any(s != slice(None) for s in index):
        x = x[tuple(index)]
    if any(w != (0, 0) for w in widths):
        x = pad(x, widths)
    return x


def _hermitian_edges(x: ndarray, outer: list, axis: int, n: int) -> ndarray:
    """Half spectrum ``x`` with its zero-frequency plane along ``axis`` (and for even ``n`` its
    Nyquist plane) made Hermitian over the ``outer`` axes, ``(p[k] + conj(p[-k])) / 2``: what
    NumPy's irfft reads of those planes (their real part once the outer axes are transformed),
    in the symmetric form cuFFT's complex-to-real transform assumes."""
    position = arange(x.shape[axis], device=x.device).reshape((-1,) + (1,) * (x.ndim - 1 - axis))
    for index in (0, n // 2) if n % 2 == 0 else (0,):
        plane = x[(slice(None),) * axis + (slice(index, index + 1),)]
        if outer:
            mirrored = roll(flip(plane, outer), 1, outer)
            symmetric = (plane + conjugate(mirrored)) * 0.5
        else:
            symmetric = real(plane)
        x = where(position == index, symmetric, x)
    return x


# --- frequencies and shifts (numloom's own operations, on either device) ---------------------------


def fftshift(x, axes=None):
    """``x`` with the zero-frequency term moved to the centre of ``axes`` (all by default)
    (NumPy's ``fft.fftshift``)."""
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [dim // 2 for dim in x.shape]
    elif isinstance(axes, (int, _np.integer)):
        shift = x.shape[axes] // 2
    else:
        shift = [x.shape[ax] // 2 for ax in axes]
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift`` (NumPy's ``fft.ifftshift``)."""
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [-(dim // 2) for dim in x.shape]
    elif isinstance(axes, (int, _np.integer)):
        shift = -(x.shape[axes] // 2)
    else:
        shift = [-(x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftfreq(n, d=1.0, device=None):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., n//2 - 1 + n%2, -(n//2), ..., -1] / (d * n)`` (NumPy's ``fft.fftfreq``)."""
    if not isinstance(n, (int, _np.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    k = arange(0, n, dtype=int, device=device)
    results = where(k < (n - 1) // 2 + 1, k, k - n)
    return results * val


def rfftfreq(n, d=1.0, device=None):
    """The sample frequencies of ``rfft``'s ``n // 2 + 1`` terms: ``[0, 1, ..., n//2] / (d * n)``
    (NumPy's ``fft.rfftfreq``)."""
    if not isinstance(n, (int, _np.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)
    results = arange(0, n // 2 + 1, dtype=int, device=device)
    return results * val


from .api.other_dtypes import guard_namespace as _guard_namespace  # noqa: E402

_guard_namespace(globals(), _np.fft)  # (NumPy's data and ndarray subclasses: NumPy's functions)

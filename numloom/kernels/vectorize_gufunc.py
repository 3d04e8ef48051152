"""``numloom.vectorize(pyfunc, signature="(n),(n)->()")``: NumPy's generalized form, compiled.

NumPy calls ``pyfunc`` once per point of the loop dimensions (the broadcast of what precedes
each input's core dimensions) with views of the inputs' core dimensions, and stores what it
returns. When the function is in the kernel subset and returns scalars (every output's core
dimensions are ``()``), numloom compiles it as a device function and launches one kernel
thread per loop point::

    @np.vectorize(signature="(n),(n)->()")          def gufunc(x0, x1, y0):
    def dot(a, b):                                       i = cuda.grid(1)
        s = 0.0                                          if i < y0.size:
        for i in range(len(a)):              ->              j1 = i % y0.shape[1]
            s += a[i] * b[i]                                 j0 = i // y0.shape[1]
        return s                                             y0[j0, j1] = core(x0[j0, j1], x1[j0, j1])

The inputs are broadcast views (no copies); the function sees the same types NumPy gives it
(NumPy scalars for elements, arrays for core dimensions), so it computes in the same dtypes,
and the outputs have the dtypes of its first result (or ``otypes``). NumPy's own checks of the
arguments and core dimensions run first, raising NumPy's errors. Functions returning arrays
(outputs with core dimensions) run NumPy's loop instead.
"""

from __future__ import annotations

import hashlib
import linecache
import math

import numpy as np

from ..api import numpy_api as _api  # (the NumPy namespace: numloom.empty, ...)
from . import ktypes
from .cuda import intrinsics as cuda_api
from .cuda.dispatcher import jit

_THREADS = 128


class Uncompilable(Exception):
    """What keeps a call on NumPy's loop (``vectorize._Uncompilable`` says why)."""


def parse_signature(signature: str) -> tuple:
    """``([input core dims], [output core dims])``, with NumPy's error for a bad signature."""
    from numpy.lib._function_base_impl import _parse_gufunc_signature  # NumPy's own parser

    return _parse_gufunc_signature(signature)


def call(vf, args: tuple, kwargs: dict):
    """The compiled call of gufunc-style ``vf`` (raises ``Uncompilable`` for NumPy's loop)."""
    from numpy.lib._function_base_impl import _calculate_shapes, _parse_input_dimensions

    in_dims, out_dims = vf._core_dims
    if kwargs or vf.excluded or vf.signatures:
        raise Uncompilable("keyword or excluded arguments with a gufunc signature")
    if len(args) != len(in_dims):  # NumPy's checks, in NumPy's order
        raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)!r}, "
                        f"got {len(args)!r}")  # fmt: skip
    if any(out_dims):
        raise Uncompilable("outputs with core dimensions (the function returns arrays)")
    arrays = [_operand(a) for a in args]
    loop_shape, dim_sizes = _parse_input_dimensions(arrays, in_dims)
    shapes = _calculate_shapes(loop_shape, dim_sizes, in_dims)
    if math.prod(loop_shape) == 0:
        if vf.otypes is None:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = [_api.empty(loop_shape, t) for t in vf.otypes[: len(out_dims)]]
        return outs[0] if len(out_dims) == 1 else tuple(outs)
    types = tuple(_core_type(a.dtype, len(d)) for a, d in zip(arrays, in_dims))
    dtypes = _out_dtypes(vf, types, len(out_dims))
    flat = loop_shape or (1,)  # a kernel indexes at least one loop dimension
    inputs = [_api.broadcast_to(a, flat + s[len(loop_shape) :]) for a, s in zip(arrays, shapes)]
    outs = [_api.empty(flat, d, device=inputs[0].device) for d in dtypes]
    kernel = _kernel(vf, len(inputs), len(outs), len(flat))
    kernel.forall(math.prod(flat), _THREADS)(*inputs, *outs)
    outs = [o.reshape(loop_shape) for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _operand(v):
    """An argument as NumPy's vectorize takes it (``asanyarray``), on numloom's device."""
    if isinstance(v, _api.ndarray):
        return v
    host = np.asanyarray(v)
    if ktypes.storage_ctype(host.dtype) is None:
        raise Uncompilable(f"an argument of dtype {host.dtype}")
    return _api.asarray(host)


def _core_type(dtype, ndim: int):
    """What the function receives: a NumPy scalar for no core dimensions, else an array."""
    if ndim == 0:
        return ktypes.Scalar(np.dtype(dtype))
    return ktypes.Array(np.dtype(dtype), ndim, "A")


def _out_dtypes(vf, types: tuple, nout: int) -> list:
    """The outputs' dtypes: ``otypes``, else those of the function's results (as
    ``np.asarray(result).dtype``: a Python int is int64, a float float64)."""
    key = ("gufunc", types, nout)
    found = vf._specs.get(key)
    if found is None:
        try:
            found = _result_dtypes(vf, types, nout)
        except Exception as e:  # noqa: BLE001 (kept: the next call with these types raises it)
            found = e
        vf._specs[key] = found
    if isinstance(found, Exception):
        raise found
    return found


def _result_dtypes(vf, types: tuple, nout: int) -> list:
    from .kerrors import TypingError
    from .translate import translate_scalar

    spec, _ = translate_scalar(vf.pyfunc, types)
    if spec.writes:
        raise Uncompilable("the function writes to its array arguments")
    results = list(spec.ret.items) if isinstance(spec.ret, ktypes.Tuple) else [spec.ret]
    if not all(isinstance(r, ktypes.Scalar) for r in results) or spec.ret is ktypes.NONE:
        raise TypingError(f"function {vf.__name__} returns {spec.ret}, not numbers")
    if len(results) != nout:
        raise ValueError(f"wrong number of outputs from pyfunc: expected {nout!r}, "
                         f"got {len(results)!r}")  # fmt: skip
    if vf.otypes is not None:
        if len(vf.otypes) != nout:
            raise Uncompilable(f"otypes names {len(vf.otypes)} outputs for {nout}")
        return list(vf.otypes)
    return [r.dtype for r in results]


def _kernel(vf, nin: int, nout: int, ndim: int):
    """The kernel calling ``vf``'s function at each loop point (made once per arity)."""
    cache = vf.__dict__.setdefault("_gufunc_kernels", {})
    key = (nin, nout, ndim)
    if key not in cache:
        cache[key] = _make_kernel(vf.pyfunc, nin, nout, ndim)
    return cache[key]


def _make_kernel(pyfunc, nin: int, nout: int, ndim: int):
    """Python source of the loop kernel, compiled as any ``cuda.jit`` kernel is (its source
    registered with ``linecache`` under a name of its own, so the translator reads it)."""
    xs = [f"x{k}" for k in range(nin)]
    ys = [f"y{k}" for k in range(nout)]
    point = ", ".join(f"j{d}" for d in range(ndim))
    lines = [f"def gufunc({', '.join(xs + ys)}):", "    i = cuda.grid(1)", "    if i < y0.size:"]
    lines.append("        rest = i")
    for d in reversed(range(1, ndim)):
        lines += [f"        j{d} = rest % y0.shape[{d}]", f"        rest = rest // y0.shape[{d}]"]
    lines.append("        j0 = rest")
    lines.append(f"        r = core({', '.join(f'{x}[{point}]' for x in xs)})")
    if nout == 1:
        lines.append(f"        y0[{point}] = r")
    else:
        lines += [f"        {y}[{point}] = r[{k}]" for k, y in enumerate(ys)]
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    filename = f"<numloom gufunc loop {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"cuda": cuda_api, "core": jit(device=True)(pyfunc)}
    exec(compile(text, filename, "exec"), namespace)  # the source above, numloom's own
    kernel = namespace["gufunc"]
    kernel.__qualname__ = kernel.__name__ = f"gufunc_{getattr(pyfunc, '__name__', 'f')}"
    return jit(kernel)

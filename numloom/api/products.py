"""Products: matmul and everything NumPy defines through it (dot, tensordot, inner, vdot).

``matmul`` is one MATMUL node over operands made 2-D or more and batch-broadcast by views, so
a backend sees a plain batched ``(..., n, k) @ (..., k, m)`` (BLAS on every device). On a GPU,
a product with a handful of results over a very long inner axis (k-means' ``onehot.T @ pts``:
8x4 results over a million points) is a reduction instead, fused with the work that computes
its operands: cuBLAS runs such shapes slowly, and its operands would be written to memory.
"""

from __future__ import annotations

import numpy as _np

from ..core import fperrors
from ..core.array import as_scalar_result, asarray, ndarray, operand, result
from ..core.array_views import reshape_array
from ..core.dag import Op, node
from ..core.views import broadcast_node, broadcast_shapes
from . import eager
from .reductions import deliver
from .shapes import broadcast_to, diagonal, reshape, transpose


def _stand_in(shape: tuple, dtype):
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def matmul(x1, x2, /, out=None, *, casting="same_kind", dtype=None, **kwargs):
    """``x1 @ x2`` with NumPy's broadcasting, 1-D promotion, dtypes and errors."""
    if any(k not in ("order", "subok") for k in kwargs):  # axes=, axis=, signature=...
        from .fallback import call_numpy

        return call_numpy("matmul", _np.matmul, x1, x2, out=out, casting=casting, dtype=dtype,
                          **kwargs)  # fmt: skip
    if out is None and dtype is None and casting == "same_kind" and not kwargs:
        made = eager.function_now(_np.matmul, (x1, x2))  # (a loop's small arrays: NumPy's)
        if made is not None:
            return made
    a, b = asarray(operand(x1)), asarray(operand(x2))
    shape = _matmul_shape(a.shape, b.shape)
    if shape is None:
        _np.matmul(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    r = _product(a, b, _matmul_loop(a, b, out, casting, dtype), shape)
    if out is None:
        return r
    _check_matmul_out(a, b, shape, out)
    return deliver(broadcast_to(r, out.shape) if out.shape != shape else r, out)


def _product(a, b, loop: tuple, shape: tuple, name: str = "matmul") -> ndarray:
    """``a @ b`` of numloom arrays whose shapes match: BLAS, or a reduction (see below)."""
    if _as_reduction(a, b, loop):
        return (transpose(a)[:, :, None] * b[:, None, :]).sum(axis=0, dtype=loop[2])
    return _matmul_node(a, b, loop, shape, name)


SKINNY_RESULTS = 128  # a GPU product of at most this many results ...
SKINNY_INNER = 8192  # ... over at least this long an inner axis is a reduction (see above)


def _as_reduction(a, b, loop) -> bool:
    """Whether ``a @ b`` runs as a reduction of ``a.T[:, :, None] * b[:, None, :]`` over its
    first axis: two matrices of one float type on a GPU, few results, a long inner axis."""
    return (a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype == loop[2]
            and a.dtype in _REDUCED_TYPES and a.device.split(":")[0] in REDUCED_ON
            and a.shape[0] * b.shape[1] <= SKINNY_RESULTS and a.shape[1] >= SKINNY_INNER)  # fmt: skip


_REDUCED_TYPES = (_np.dtype(_np.float32), _np.dtype(_np.float64))
REDUCED_ON = ("cuda",)  # the devices where they are (a CPU's BLAS runs them well)


def _matmul_node(a, b, loop: tuple, shape: tuple, name: str = "matmul") -> ndarray:
    """``a @ b`` as one MATMUL node (BLAS), of ``shape``; ``name``: the NumPy function its
    warnings name ("overflow encountered in dot" where the user called ``dot``)."""
    an, bn = a._node(), b._node()
    if a.ndim == 1:
        an = reshape_array(a, (1,) + a.shape)._node()
    if b.ndim == 1:
        bn = reshape_array(b, b.shape + (1,))._node()
    batch = broadcast_shapes(an.shape[:-2], bn.shape[:-2])
    an = broadcast_node(_cast(an, loop[0]), batch + an.shape[-2:])
    bn = broadcast_node(_cast(bn, loop[1]), batch + bn.shape[-2:])
    n = node(Op.MATMUL, (an, bn), None if name == "matmul" else name,
             batch + (an.shape[-2], bn.shape[-1]), loop[2])  # fmt: skip
    r = result(fperrors.record_if_raising(n), a.device)
    if r.shape == shape:
        return r
    return as_scalar_result(reshape_array(r, shape))  # (a vector times a vector: a scalar)


def _matmul_loop(a, b, out, casting: str, dtype) -> tuple:
    """NumPy's loop dtypes for matmul, and its casting errors, from a call on 1x1 stand-ins
    (kept per combination of dtypes when no ``out`` is given)."""
    if out is not None:
        return _probe_matmul_loop(a, b, out, casting, dtype)
    key = (a.dtype, b.dtype, casting, type(dtype), dtype)
    loop = _matmul_loops.get(key)
    if loop is None:
        loop = _matmul_loops[key] = _probe_matmul_loop(a, b, out, casting, dtype)
    return loop


_matmul_loops: dict = {}


def _probe_matmul_loop(a, b, out, casting: str, dtype) -> tuple:
    probe_out = None if out is None else _np.zeros((1, 1), out.dtype)
    _np.matmul(_np.zeros((1, 1), a.dtype), _np.zeros((1, 1), b.dtype), out=probe_out,
               casting=casting, dtype=dtype)  # fmt: skip
    if dtype is None:
        return _np.matmul.resolve_dtypes((a.dtype, b.dtype, None), casting=casting)
    return _np.matmul.resolve_dtypes((a.dtype, b.dtype, None), casting=casting,
                                     signature=(None, None, _np.dtype(dtype)))  # fmt: skip


def _check_matmul_out(a, b, shape: tuple, out) -> None:
    """NumPy's gufunc rule for ``out``: the result's core dimensions, with loop dimensions the
    result broadcasts to (NumPy writes the same product into each); else NumPy's error."""
    core = len(_matmul_shape(a.shape[-2:], b.shape[-2:]))  # 0, 1 or 2 result axes
    fits = len(out.shape) >= len(shape) and broadcast_shapes(out.shape, shape) == out.shape
    if fits and out.shape[len(out.shape) - core :] == shape[len(shape) - core :]:
        return
    _np.matmul(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype),
               out=_stand_in(out.shape, out.dtype), casting="unsafe")  # fmt: skip
    raise ValueError(f"matmul: output of shape {out.shape} for a result of shape {shape}")


def _cast(n, dtype):
    return n if n.dtype == dtype else node(Op.CAST, (n,), None, n.shape, dtype)


def _matmul_shape(sa: tuple, sb: tuple) -> tuple | None:
    if not sa or not sb:
        return None
    a2 = (1,) + sa if len(sa) == 1 else sa
    b2 = sb + (1,) if len(sb) == 1 else sb
    if a2[-1] != b2[-2]:
        return None
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    if batch is None:
        return None
    shape = batch + (a2[-2], b2[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return shape


def dot(a, b, out=None):
    """NumPy's dot: products of scalars, matmul of matrices, sums over a's last axis and b's
    second-to-last otherwise."""
    if out is None:
        made = eager.function_now(_np.dot, (a, b))  # (a loop's small arrays: NumPy's, now)
        if made is not None:
            return made
    from .elementwise import multiply

    a, b = asarray(operand(a)), asarray(operand(b))
    if a.ndim == 0 or b.ndim == 0:
        r = multiply(a, b)
    elif a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        _np.dot(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    elif b.ndim <= 2:  # (a matmul that NumPy's warnings call "dot")
        r = _product(a, b, _matmul_loop(a, b, None, "same_kind", None),
                     _matmul_shape(a.shape, b.shape), "dot")  # fmt: skip
    else:
        r = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    if out is None:
        return r
    _check_dot_out(out, r.shape, r.dtype)
    deliver(r, out)
    # NumPy returns a 0-d out as a scalar: here a new 0-d handle on it (a NumPy one's scalar).
    return out[()] if out.ndim == 0 else out


def _check_dot_out(out, shape: tuple, dtype) -> None:
    """NumPy's rule for dot's ``out``: exactly the result's dtype and shape, C-contiguous and
    writeable (dot writes it directly; it never casts)."""
    if isinstance(out, ndarray):
        c_array = out._view.is_contiguous() and not out._readonly
    else:
        c_array = out.flags.c_contiguous and out.flags.writeable
    if out.ndim != len(shape) or out.dtype != dtype or not c_array:
        raise ValueError("output array is not acceptable (must have the right datatype, number "
                         "of dimensions, and be a C-Array)")  # fmt: skip
    if tuple(out.shape) != tuple(shape):
        raise ValueError("output array has wrong dimensions")


def vdot(a, b, /):
    """NumPy's vdot: both flattened, the first conjugated (complex only), then summed."""
    from .elementwise import conjugate

    a, b = asarray(a), asarray(b)
    if a.size != b.size:
        _np.vdot(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    flat_a, flat_b = reshape(a, (-1,)), reshape(b, (-1,))
    if flat_a.dtype.kind == "c":
        flat_a = conjugate(flat_a)
    return matmul(flat_a, flat_b)


def inner(a, b, /):
    from .elementwise import multiply

    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        _np.inner(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    return as_scalar_result(tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1])))


def outer(a, b, out=None):
    from .elementwise import multiply

    a, b = reshape(asarray(a), (-1,)), reshape(asarray(b), (-1,))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)), out=out)


def tensordot(a, b, axes=2):
    """NumPy's tensordot: move the summed axes together, reshape to matrices, matmul."""
    axes_a, axes_b = _tensordot_axes(axes)
    a, b = asarray(a), asarray(b)
    # NumPy's checks, in its order (an axis out of range raises its IndexError here).
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    for k in range(len(axes_a)):
        if a.shape[axes_a[k]] != b.shape[axes_b[k]]:
            raise ValueError("shape-mismatch for sum")
        axes_a[k] += a.ndim if axes_a[k] < 0 else 0
        axes_b[k] += b.ndim if axes_b[k] < 0 else 0
    free_a = [k for k in range(a.ndim) if k not in axes_a]
    free_b = [k for k in range(b.ndim) if k not in axes_b]
    n_sum = int(_np.prod([a.shape[k] for k in axes_a], dtype=_np.int64))
    rows = int(_np.prod([a.shape[k] for k in free_a], dtype=_np.int64))
    cols = int(_np.prod([b.shape[k] for k in free_b], dtype=_np.int64))
    at = reshape(transpose(a, free_a + axes_a), (rows, n_sum))  # (sizes, not -1: any may be 0)
    bt = reshape(transpose(b, axes_b + free_b), (n_sum, cols))
    shape = tuple(a.shape[k] for k in free_a) + tuple(b.shape[k] for k in free_b)
    return reshape(matmul(at, bt), shape)


def _tensordot_axes(axes) -> tuple:
    """NumPy's reading of tensordot's ``axes``: N (the last N of a, the first N of b), or a
    pair of axis lists (or single axes)."""
    try:
        iter(axes)
    except Exception:
        return list(range(-axes, 0)), list(range(0, axes))
    axes_a, axes_b = axes
    axes_a = list(axes_a) if _is_sequence(axes_a) else [axes_a]
    axes_b = list(axes_b) if _is_sequence(axes_b) else [axes_b]
    return axes_a, axes_b


def _is_sequence(x) -> bool:
    try:
        len(x)
    except TypeError:
        return False
    return True


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from .reductions import sum

    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)

"""Products: matmul and everything NumPy defines through it (dot, tensordot, inner, vdot).

``matmul`` is one MATMUL node over operands made 2-D or more and batch-broadcast by views, so
a backend sees a plain batched ``(..., n, k) @ (..., k, m)`` (BLAS on every device).
"""

from __future__ import annotations

import numpy as _np

from .array import asarray, operand, result
from .dag import Op, node
from .shapes import diagonal, reshape, transpose
from .views import broadcast_node, broadcast_shapes, reshape_array


def _stand_in(shape: tuple, dtype):
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def matmul(x1, x2, /, out=None, *, casting="same_kind", dtype=None, **kwargs):
    """``x1 @ x2`` with NumPy's broadcasting, 1-D promotion, dtypes and errors."""
    a, b = asarray(operand(x1)), asarray(operand(x2))
    loop = _np.matmul.resolve_dtypes((a.dtype, b.dtype, None if dtype is None else
                                      _np.dtype(dtype)))  # fmt: skip
    out_dtype = loop[2]
    shape = _matmul_shape(a.shape, b.shape)
    if shape is None:
        _np.matmul(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    an, bn = a._node(), b._node()
    if a.ndim == 1:
        an = reshape_array(a, (1,) + a.shape)._node()
    if b.ndim == 1:
        bn = reshape_array(b, b.shape + (1,))._node()
    batch = broadcast_shapes(an.shape[:-2], bn.shape[:-2])
    an = broadcast_node(_cast(an, loop[0]), batch + an.shape[-2:])
    bn = broadcast_node(_cast(bn, loop[1]), batch + bn.shape[-2:])
    n = node(Op.MATMUL, (an, bn), None, batch + (an.shape[-2], bn.shape[-1]), out_dtype)
    r = reshape_array(result(n, a.device), shape)
    if out is not None:
        if not _np.can_cast(out_dtype, out.dtype, casting):
            _np.matmul(_np.zeros((1, 1), a.dtype), _np.zeros((1, 1), b.dtype),
                       out=_np.zeros((1, 1), out.dtype), casting=casting)  # fmt: skip
        out._assign(r._node())
        return out
    return r


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
    from .numpy_api import multiply

    a, b = asarray(operand(a)), asarray(operand(b))
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b, out=out)
    if b.ndim <= 2:
        if a.shape[-1] != b.shape[0]:
            _np.dot(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
        return matmul(a, b, out=out)
    r = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    if out is not None:
        out._assign(r._node())
        return out
    return r


def vdot(a, b, /):
    from .numpy_api import conjugate

    a, b = asarray(a), asarray(b)
    if a.size != b.size:
        _np.vdot(_np.zeros(a.size, a.dtype), _np.zeros(b.size, b.dtype))  # NumPy's error
    return matmul(conjugate(reshape(a, (-1,))), reshape(b, (-1,)))


def inner(a, b, /):
    from .numpy_api import multiply

    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        _np.inner(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype))  # NumPy's error
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None):
    from .numpy_api import multiply

    a, b = reshape(asarray(a), (-1,)), reshape(asarray(b), (-1,))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)), out=out)


def tensordot(a, b, axes=2):
    """NumPy's tensordot: move the summed axes together, reshape to matrices, matmul."""
    a, b = asarray(a), asarray(b)
    try:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    except TypeError:
        axes_a = list(range(-axes, 0))
        axes_b = list(range(0, axes))
    axes_a = [x % a.ndim if a.ndim else x for x in axes_a]
    axes_b = [x % b.ndim if b.ndim else x for x in axes_b]
    if len(axes_a) != len(axes_b) or any(
        a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)
    ):
        _np.tensordot(_stand_in(a.shape, a.dtype), _stand_in(b.shape, b.dtype), axes)
        raise ValueError("shape-mismatch for sum")
    free_a = [k for k in range(a.ndim) if k not in axes_a]
    free_b = [k for k in range(b.ndim) if k not in axes_b]
    n_sum = int(_np.prod([a.shape[k] for k in axes_a], dtype=_np.int64))
    at = reshape(transpose(a, free_a + axes_a), (-1, n_sum))
    bt = reshape(transpose(b, axes_b + free_b), (n_sum, -1))
    shape = tuple(a.shape[k] for k in free_a) + tuple(b.shape[k] for k in free_b)
    return reshape(matmul(at, bt), shape)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from .reductions import sum

    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)




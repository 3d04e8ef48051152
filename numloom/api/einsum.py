"""``einsum``: Einstein summation as numloom's diagonals, sums, transposes and matmuls.

Operands are contracted two at a time in the order NumPy's ``einsum_path`` gives (left to right
with ``optimize=False``). A single operand takes diagonals for its repeated labels and sums the
labels nothing later needs; a pair becomes one batched ``(B, M, K) @ (B, K, N)`` matmul (BLAS or
cuBLAS), or, with nothing to sum over, a broadcast multiply, and with a single result per batch
a fused multiply-reduce. NumPy's C einsum runs first on stand-ins without data for the result
dtype and its error messages.
"""

from __future__ import annotations

import numpy as _np
from numpy._core.einsumfunc import _parse_einsum_input

from ..core.array import as_scalar_result, asarray, ndarray, share
from ..core.array_views import reshape_array
from ..core.dag import prod as _size_of
from . import reductions as _r
from .creation import laid_out
from .elementwise import multiply
from .products import matmul
from .shapes import broadcast_to, diagonal, transpose

# Contractions over fewer terms than this are summed in order, not by a matrix product: NumPy's
# einsum adds fewer than its four-at-a-time (and SIMD) steps in a plain loop.
_SHORT_SUM = 4


def _zero_strided(shape: tuple, dtype):
    shape = tuple(shape)
    return _np.lib.stride_tricks.as_strided(_np.zeros(1, dtype), shape, (0,) * len(shape))


def einsum(*operands, out=None, optimize=False, **kwargs):
    """NumPy's einsum (subscripts or interleaved sublists, ellipses, ``out``, ``dtype``,
    ``casting``, ``optimize``), as numloom operations that fuse and run on every device."""
    if not operands:
        _np.einsum()  # NumPy's error
    if out is not None and not isinstance(out, (ndarray, _np.ndarray)):
        raise TypeError("keyword parameter out must be an array for einsum")
    positions = range(1, len(operands)) if isinstance(operands[0], str) else \
        range(0, len(operands) - len(operands) % 2, 2)  # fmt: skip
    arrays = {k: asarray(operands[k]) for k in positions}

    def with_stand_ins(make):
        return [make(arrays[k]) if k in arrays else v for k, v in enumerate(operands)]

    full = with_stand_ins(lambda a: _zero_strided(a.shape, a.dtype))
    # (axes of 2, not 1: an optimized path drops a contraction over an axis of one, and its
    # multiply then refuses an out NumPy's real call accepts, a 0-d integer one)
    out_probe = None if out is None else _np.zeros(tuple(min(n, 2) for n in out.shape), out.dtype)
    probe = _np.einsum(*with_stand_ins(lambda a: _np.zeros(tuple(min(n, 2) for n in a.shape),
                                                           a.dtype)),
                       out=out_probe, optimize=optimize, **kwargs)  # fmt: skip
    inputs, output, _ = _parse_einsum_input(full)
    labels = inputs.split(",")
    ordered = [arrays[k] for k in positions]
    if not _consistent(ordered, labels):
        _np.einsum(*full, optimize=optimize, **kwargs)  # NumPy's error (before it computes)
    if out is None:
        dtype = _np.asarray(probe).dtype
    elif kwargs.get("dtype") is not None:
        dtype = _np.dtype(kwargs["dtype"])
    else:
        dtype = _np.result_type(*(a.dtype for a in ordered))
    terms = [(a.astype(dtype, copy=False), lab) for a, lab in zip(ordered, labels)]
    r = _contract_all(terms, output, _path(full, len(terms), optimize), dtype)
    if out is None:
        if len(ordered) == 1 and r._storage is ordered[0]._storage and r._readonly \
                and not ordered[0]._readonly:
            # a view of the operand (``'ii->i'``, ``'ij->ji'``): NumPy's is writeable, and a
            # write through it is a write into the operand
            r = share(r, r._view, readonly=False)
        r = _laid_out(r, kwargs.get("order", "K"), ordered)
        return as_scalar_result(r, *ordered)  # (a full contraction: NumPy's scalar)
    if tuple(out.shape) != r.shape:
        _np.einsum(*full, out=_zero_strided(out.shape, out.dtype), optimize=optimize, **kwargs)
    return _r.deliver(r, out)


def _laid_out(r, order, operands: list):
    """``r`` contiguous in the ``order`` asked: 'C', 'F', or 'A' (Fortran order where every
    operand is F-contiguous, else C); 'K' as it is."""
    if order in ("A", "a"):
        order = "F" if all(a.flags.f_contiguous for a in operands) else "C"
    if order in ("C", "c", "F", "f") and r.ndim > 1:
        return laid_out(r, order, None)
    return r


def _consistent(arrays: list, labels: list) -> bool:
    """Whether each label has one size (1 broadcasts) and repeats within an operand agree."""
    sizes: dict = {}
    for a, lab in zip(arrays, labels):
        own: dict = {}
        for n, c in zip(a.shape, lab):
            if own.setdefault(c, n) != n:
                return False
            if n != 1 and sizes.setdefault(c, n) != n:
                return False
    return True


def _path(full: list, count: int, optimize) -> list:
    """The contraction order: NumPy's einsum_path for ``optimize``, else left to right."""
    if count == 1:
        return [(0,)]
    if optimize is False:
        return [(0, 1)] * (count - 1)
    return list(_np.einsum_path(*full, optimize=optimize)[0][1:])


def _contract_all(terms: list, output: str, path: list, dtype):
    """Contract ``terms`` (array, labels) along ``path``; the result in ``output``'s order."""
    terms = list(terms)
    for step in path:
        group = [terms[k] for k in step]
        for k in sorted(step, reverse=True):
            del terms[k]
        later = set(output).union(*(lab for _, lab in terms))
        a, la = group[0]
        if len(group) == 1:
            a, la = _reduce_labels(a, la, later, dtype)
        for k, (b, lb) in enumerate(group[1:], 2):
            needed = later.union(*(lab for _, lab in group[k:]))
            a, la = _pair(a, la, b, lb, needed, dtype)
        terms.append((a, la))
    ((a, la),) = terms
    a, la = _reduce_labels(a, la, set(output), dtype)
    return transpose(a, [la.index(c) for c in output]) if la != output else a


def _reduce_labels(a, labels: str, keep: set, dtype):
    """Diagonals for labels repeated in ``a``, sums over the labels not in ``keep``."""
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        a = diagonal(a, 0, i, j)
        labels = "".join(x for k, x in enumerate(labels) if k not in (i, j)) + c
    summed = tuple(k for k, c in enumerate(labels) if c not in keep)
    if summed:
        a = _r.sum(a, axis=summed, dtype=dtype)
        labels = "".join(c for c in labels if c in keep)
    return a, labels


def _pair(a, la: str, b, lb: str, keep: set, dtype):
    """``a`` and ``b`` contracted over their shared labels not in ``keep``."""
    a, la = _reduce_labels(a, la, keep | set(lb), dtype)
    b, lb = _reduce_labels(b, lb, keep | set(la), dtype)
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    size = {c: n for lab, arr in ((la, a), (lb, b)) for c, n in zip(lab, arr.shape) if n != 1}
    sizes = lambda cs: tuple(size.get(c, 1) for c in cs)  # noqa: E731
    at = broadcast_to(
        transpose(a, [la.index(c) for c in batch + free_a + summed]),
        sizes(batch) + tuple(a.shape[la.index(c)] for c in free_a) + sizes(summed),
    )
    bt = broadcast_to(
        transpose(b, [lb.index(c) for c in batch + summed + free_b]),
        sizes(batch) + sizes(summed) + tuple(b.shape[lb.index(c)] for c in free_b),
    )
    nb, nk = _size_of(sizes(batch)), _size_of(sizes(summed))
    nm = _size_of(at.shape[len(batch) : len(batch) + len(free_a)])
    nn = _size_of(bt.shape[len(batch) + len(summed) :])
    at, bt = reshape_array(at, (nb, nm, nk)), reshape_array(bt, (nb, nk, nn))
    if nk == 1:  # nothing summed: an elementwise product
        r = multiply(at, bt)
    elif nm == 1 and nn == 1:  # one result per batch: a fused multiply-reduce
        r = _r.sum(multiply(at, transpose(bt, (0, 2, 1))), axis=-1, dtype=dtype, keepdims=True)
    elif nk < _SHORT_SUM and _np.dtype(dtype).kind == "f":
        # a few products a result (rotating 2-d points, rougier's boids): summed in order as
        # NumPy's einsum sums them, where BLAS would fuse a multiply-add (a last-bit change)
        products = multiply(reshape_array(at, (nb, nm, nk, 1)), reshape_array(bt, (nb, 1, nk, nn)))
        r = _r.sum(products, axis=2, dtype=dtype)
    else:
        r = matmul(at, bt)
    shape = sizes(batch) + tuple(a.shape[la.index(c)] for c in free_a) + \
        tuple(b.shape[lb.index(c)] for c in free_b)  # fmt: skip
    return reshape_array(r, shape), "".join(batch + free_a + free_b)

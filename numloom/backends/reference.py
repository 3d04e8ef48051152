"""The reference executor: runs a plan node by node through NumPy on the host.

It defines what every node means; the compiled backends are tested against it, and it is the
CPU path on a machine without a C compiler.
"""

from __future__ import annotations

import numpy as np

from ..compile.ufunc_table import NUMPY_UFUNCS, USER_GUFUNCS, USER_UFUNCS
from ..core.dag import Node, Op, strided  # noqa: F401  (strided: the reference's rule for views)
from ..core.realize import Buffer, DataError, count, node


def _flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def check_indices(n: Node, idx: np.ndarray, size: int, axis: int) -> None:
    """Raise NumPy's IndexError (wrapped for the caller) for the first index, in C order, that
    is out of bounds."""
    if idx.size == 0 or (idx.min() >= -size and idx.max() < size):
        return
    first = idx[(idx < -size) | (idx >= size)].flat[0]
    raise index_error(n, int(first), size, axis)


def index_error(n: Node, bad: int, size: int, axis: int) -> DataError:
    """NumPy's IndexError for index ``bad``, pointing at the user's line that made node ``n``."""
    message = f"index {bad} is out of bounds for axis {axis} with size {size}"
    return data_error(n, IndexError(message))


def check_exponents(n: Node, exponents: np.ndarray) -> None:
    """NumPy's ValueError (wrapped for the caller) for a negative power of a signed integer."""
    if exponents.size and exponents.min() < 0:
        raise data_error(n, ValueError("Integers to negative integer powers are not allowed."))


def data_error(n: Node, error: BaseException) -> DataError:
    """``error``, found at a sync, with a note naming the user's line that made node ``n``."""
    if n.where is not None:
        error.add_note(f"numloom raised this at a sync point; the operation is at "
                       f"{n.where[0]}:{n.where[1]}")  # fmt: skip
    return DataError(n, error)


def compute(n: Node, srcs: list):
    """The value of one node from the values of its sources (NumPy arrays)."""
    op = n.op
    if op is Op.BUFFER:
        return n.arg.data
    if op is Op.CONST:
        return np.full(n.shape, n.arg, dtype=n.dtype)
    if op is Op.IOTA:
        start, stop, step = n.arg
        return np.arange(start, stop, step, dtype=n.dtype)
    if op is Op.VIEW:
        return strided(_flat(srcs[0]), n.arg)
    if op is Op.CAST:
        if n.arg == "reduce":  # (a reduction's own cast: NumPy casts in its buffers)
            return _ReduceCast.of(srcs[0], n.dtype)
        return srcs[0].astype(n.dtype)
    if op is Op.MAP:
        fn = NUMPY_UFUNCS.get(n.arg) or USER_UFUNCS[n.arg].numpy
        if n.arg == "power" and n.srcs[1].dtype.kind == "i":
            check_exponents(n, srcs[1])
        out = fn(*srcs)
        return np.asarray(out, dtype=n.dtype) if np.ndim(out) == 0 else out
    if op is Op.GUFUNC:
        name, k = n.arg
        return USER_GUFUNCS[name].numpy(k, *srcs)
    if op is Op.REDUCE:
        return _reduce(n, srcs[0])
    if op is Op.SCAN:
        kind, axis = n.arg
        fn = np.cumsum if kind == "cumsum" else np.cumprod
        return fn(srcs[0], axis=axis, dtype=n.dtype)
    if op is Op.MATMUL:
        # A computed operand is C-ordered memory in NumPy's program; one a plan wrote in
        # another layout (a column-wise concatenation) would take another BLAS routine, whose
        # sums round otherwise. A view (a transpose) is read as NumPy reads it.
        srcs = [v if s.op is Op.VIEW or not isinstance(v, np.ndarray) or v.flags.c_contiguous
                else np.ascontiguousarray(v) for s, v in zip(n.srcs, srcs)]  # fmt: skip
        if n.arg == "dot":  # (b is 2-D, broadcast over a's batch: "... encountered in dot")
            return np.dot(srcs[0], srcs[1][(0,) * (srcs[1].ndim - 2)])
        return np.matmul(srcs[0], srcs[1])
    if op is Op.GATHER:
        return _gather(n, srcs)
    if op is Op.SCATTER:
        out = _flat(srcs[0]).copy()
        strided(out, n.arg)[...] = srcs[1]
        return out.reshape(n.shape)
    if op is Op.SCATTER_AT:
        out = _flat(srcs[0]).copy()
        out[srcs[2].reshape(-1)] = srcs[1].reshape(-1)
        return out.reshape(n.shape)
    if op is Op.CONCAT:
        return np.concatenate(srcs, axis=n.arg)
    if op is Op.BITCAST:
        return _flat(srcs[0]).view(n.dtype).reshape(n.shape)
    raise NotImplementedError(f"the reference executor has no rule for {op}")


_REDUCERS = {
    "sum": np.add,
    "prod": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "any": np.logical_or,
    "all": np.logical_and,
}


def _reduce(n: Node, src: np.ndarray):
    kind, axes = n.arg
    if kind in ("argmax", "argmin"):
        (axis,) = axes
        fn = np.argmax if kind == "argmax" else np.argmin
        return fn(src, axis=axis).astype(n.dtype)
    ufunc = _REDUCERS[kind]
    dtype = None if kind in ("max", "min") else n.dtype
    uncast = getattr(src, "uncast", None)  # (NumPy's reduction casting in its buffers)
    if uncast is not None and uncast.shape == src.shape:
        src = uncast
    return np.asarray(ufunc.reduce(src, axis=axes, dtype=dtype)).astype(n.dtype, copy=False)


class _ReduceCast(np.ndarray):
    """The value of a reduction's own cast (``sum(dtype=np.float64)`` of float32 data): the
    cast values, which keep the data before the cast (``uncast``), so that the reduction
    hands NumPy those with its ``dtype=``. NumPy casts them in its buffers and sums each
    buffer pairwise, an order the cast values, summed as one run, would not take."""

    @staticmethod
    def of(values: np.ndarray, dtype) -> np.ndarray:
        cast = np.asarray(values).astype(dtype).view(_ReduceCast)
        cast.uncast = values
        return cast


def _gather(n: Node, srcs: list):
    a0 = n.arg
    src, indices = srcs[0], srcs[1:]
    for k, idx in enumerate(indices):
        check_indices(n, idx, src.shape[a0 + k], a0 + k)
    return src[(slice(None),) * a0 + tuple(indices)]


def plan(roots: list):
    from ..compile.schedule import schedule_nodes

    return schedule_nodes(roots, "cpu")


def run(roots: list, device: str = "cpu") -> dict:
    """Evaluate ``roots`` node by node; returns ``{id(output node): BUFFER node}``."""
    plan = globals()["plan"](roots)
    uses: dict = {}
    for n in plan.order:
        for s in n.srcs:
            uses[id(s)] = uses.get(id(s), 0) + 1
    keep = {id(r) for r in plan.outputs}
    values: dict = {}
    with np.errstate(all="ignore"):
        for n in plan.order:
            values[id(n)] = compute(n, [values[id(s)] for s in n.srcs])
            for s in n.srcs:  # free what no later node reads
                uses[id(s)] -= 1
                if uses[id(s)] == 0 and id(s) not in keep:
                    del values[id(s)]
    count("kernels_launched", len(plan.kernels))
    results = {}
    for root in plan.outputs:
        value = values[id(root)]
        if root.op is Op.BUFFER:
            results[id(root)] = root
        else:
            results[id(root)] = node(Op.BUFFER, (), Buffer(value, device), root.shape, root.dtype)
    return results

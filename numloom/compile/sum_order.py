"""NumPy's order of a float sum (``np.add.reduce``), which numloom's kernels follow for NumPy's
value bit for bit: the reduction kernels (``lower.py``) and the scheduler (``schedule.py``,
which keeps a sum out of a row kernel where a row's C order is not NumPy's)."""

from __future__ import annotations

from ..core.dag import Node, Op, contiguous_strides
from .snippets import compute_type


def numpy_sum_order(src: Node, axes: tuple, kind: str) -> tuple | None:
    """How NumPy orders ``np.add.reduce(src, axes)`` of floats: ``(run, type)`` for
    ``kir.Reduction.numpy_order``, or None where numloom does not follow it (complex sums,
    reversed or broadcast data, orders numloom's loops cannot take).

    NumPy reduces a computed value as a C-ordered temporary, a stored array as its memory
    lies. Its iterator drops axes of length 1, visits the others in memory order and merges
    the innermost reduced axes that are contiguous into one run, which it sums pairwise (8
    partial sums over blocks of at most 128 elements, halves combined); the other reduced
    axes add those runs in turn."""
    if kind != "sum" or src.dtype.kind != "f" or list(axes) != sorted(axes):
        return None
    # a sum's own cast (``dtype=``, a float16 mean's float32): NumPy's iterator casts the
    # data in its buffers, as they lie, and buffers even one run
    cast = src.op is Op.CAST and src.arg == "reduce"
    shape, strides = src.shape, _memory_strides(src.srcs[0] if cast else src)
    if strides is None:
        return None
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: -strides[d])
    reduced = [d for d in dims if d in axes]
    run = []
    if dims and dims[-1] in axes:
        run = [dims[-1]]
        for before, after in zip(reversed(dims[:-1]), reversed(dims[1:])):
            if before not in axes or strides[before] != strides[after] * shape[after]:
                break
            run.insert(0, before)
    rest = [d for d in reduced if d not in run]
    # numloom's loops run the reduced axes in their order, the run's last (flat position,
    # last axis fastest): NumPy's memory order must be that order
    if run != sorted(run) or rest != sorted(rest) or (run and rest and rest[-1] > run[0]):
        return None
    count = sum(1 for a in axes if run and a >= run[0])
    if (rest or cast) and dims and len(reduced) == len(dims):  # (a whole-array sum, buffered)
        chunked = _buffered(dims, shape, strides, axes, cast)
        if chunked is not None:
            return (*chunked[:1], compute_type(src.dtype), *chunked[1:])
    return (count, compute_type(src.dtype))


BUFSIZE = 8192  # NumPy's iterator buffer, in elements (np.getbufsize())


def _buffered(dims: list, shape: tuple, strides: tuple, axes: tuple,
              cast: bool) -> tuple | None:  # fmt: skip
    """How NumPy's iterator (``npyiter_find_buffering_setup``, NumPy 2.3 and later) feeds a
    whole-array sum whose data are not one run: its dimensions are the axes ``dims`` (memory
    order, outermost first) merged where they lie contiguously, innermost first; it picks the
    "core" of the first ``b`` of them and copies ``chunk`` consecutive indices of dimension
    ``b`` times that core into a buffer of at most ``BUFSIZE`` elements, each buffer one
    pairwise sum added in turn (the dimensions after ``b`` walked in turn). ``a[:, 1:-1].sum()``
    of a (1000, 100) array: buffers of 83 rows of 98. Where the inner dimension alone is each
    call (a row longer than 4096: no buffer), None: the rows fold in turn as they do.
    ``cast``: the sum casts its data (buffered, whatever their layout: ``x.sum(dtype=
    np.float64)`` of a float32 vector adds pairwise sums of 8192 elements in turn).

    Returns ``(run, group, chunk)`` for ``kir.Reduction.numpy_order``: the trailing reduced
    axes of the core, the axes before them that dimension ``b`` merges, and ``chunk``."""
    merged = []  # NumPy's dimensions, innermost first: [size, first axis (outermost)]
    for d in reversed(dims):
        if merged and strides[d] == strides[merged[-1][1]] * shape[merged[-1][1]]:
            merged[-1] = [merged[-1][0] * shape[d], d]
        else:
            merged.append([shape[d], d])
    cost = 2 if cast else 1  # (1 + the operands buffered)
    size = merged[0][0]
    best, best_cost, best_size, best_core = 0, cost, size, 1
    for dim in range(1, len(merged)):
        if size >= BUFSIZE and cost > 1:
            break
        if dim == 1 and not cast:
            cost += 1  # (the data leave one stride: buffered from here)
        core, size = size, size * merged[dim][0]
        room = BUFSIZE if size > BUFSIZE else size
        if cost * best_size <= best_cost * room:
            best, best_cost, best_size, best_core = dim, cost, size, core
    if best == 0 and not cast:
        return None
    chunk = min(merged[best][0], BUFSIZE // best_core)
    run = sum(1 for a in axes if a >= merged[best - 1][1]) if best else 0
    group = sum(1 for a in axes if a >= merged[best][1]) - run
    return run, group, chunk


def _memory_strides(src: Node) -> tuple | None:
    """The element strides NumPy iterates ``src`` by (C order for a computed value), or None
    for reversed or broadcast data and computations over transposed data."""
    if src.op is Op.VIEW and not any(src.arg.strides) and src.srcs[0].dtype == src.dtype:
        # a fill (np.full, np.ones: memory NumPy lays out in C order), or a broadcast scalar,
        # whose zero strides NumPy's iterator merges into one run all the same
        strides = contiguous_strides(src.shape)
    elif src.op is Op.VIEW and src.srcs[0].op in _MEMORY and src.srcs[0].dtype == src.dtype:
        strides = src.arg.strides
    elif (src.op is Op.VIEW and src.srcs[0].dtype == src.dtype
          and src.srcs[0].op is not Op.BITCAST and _c_ordered_inputs(src.srcs[0])):  # fmt: skip
        # a view of a computed value (a reshape of an einsum's result, ``(b * 2)[:, 1:-1]``),
        # or of a view no view of memory reads (``a[:, 1:-1].ravel()``: NumPy's copy): of
        # NumPy's C-ordered temporary, whose flat layout the view's strides count in
        strides = src.arg.strides
    elif src.op is Op.VIEW or src.op is Op.BITCAST or not _c_ordered_inputs(src):
        return None
    else:
        strides = contiguous_strides(src.shape)
    if any(s <= 0 for s, n in zip(strides, src.shape) if n > 1):
        return None
    return strides


def f_ordered_sum(src: Node, axes: tuple, kind: str) -> bool:
    """Whether ``np.add.reduce(src, axes)`` of floats is a whole sum NumPy takes in F order:
    of an elementwise computation (or a view) whose stored arrays are all read in F order,
    so that NumPy's temporary is transposed memory (a stored array read in C order, or any
    other operation on the way, and numloom keeps its own order)."""
    if kind != "sum" or src.dtype.kind != "f" or len(axes) != src.ndim:
        return False
    return sum(1 for n in src.shape if n > 1) >= 2 and _inputs_read_in(src, "F")


# Stored arrays: a computed buffer, and an array's version after a write (NumPy's memory of
# that array, laid out in C order over its storage whatever the write read)
_MEMORY = (Op.BUFFER, Op.SCATTER, Op.SCATTER_AT)


def _c_ordered_inputs(root: Node) -> bool:
    """Whether every stored array ``root`` reads is read in C order (NumPy's temporaries of
    a computation keep the layout of their inputs: transposed inputs make transposed ones)."""
    return _inputs_read_in(root, "C")


def _inputs_read_in(root: Node, order: str) -> bool:
    """Whether every stored array ``root`` reads is read in ``order`` ("C" or "F"). For "F"
    the way there is elementwise only (maps, casts, constants, broadcasts of a value)."""
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op is Op.VIEW and n.srcs[0].op in _MEMORY:
            big = [s for s, k in zip(n.arg.strides, n.shape) if k > 1 and s != 0]
            if any(s < 0 for s in big) or big != sorted(big, reverse=order == "C"):
                return False
        elif order == "C":
            if n.op not in _MEMORY:
                stack.extend(n.srcs)
        elif n.op in _MEMORY:
            if sum(1 for k in n.shape if k > 1) > 1:
                return False  # (read as it lies: C order)
        elif n.op in (Op.MAP, Op.CAST) or (n.op is Op.VIEW and not any(n.arg.strides)):
            stack.extend(n.srcs)
        elif n.op is not Op.CONST:
            return False
    return True

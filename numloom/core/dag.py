"""The lazy DAG: one immutable, interned node type.

Every array value numloom has not computed yet is a ``Node``. Nodes are interned: building the
same op over the same sources twice returns the same object, so common subexpressions are shared
for free and a plan can be keyed by structure.

The ops, and what ``arg`` holds for each:

========== ============================================== =====================================
op         srcs                                           arg
========== ============================================== =====================================
BUFFER     ()                                             the ``Buffer`` holding computed data
CONST      ()                                             the scalar value (a NumPy scalar)
IOTA       ()                                             ``(start, stop, step)`` as np.arange
VIEW       (src,)                                         ``View(shape, strides, offset)`` over
                                                          src's C-order flat index
CAST       (src,)                                         None (the target is ``dtype``)
MAP        (a, b, ...) same shape, loop dtypes             the ufunc name ("add", "where", ...)
REDUCE     (src,)                                         ``(kind, axes)``; kind is sum, prod,
                                                          max, min, argmax, argmin, any, all
SCAN       (src,)                                         ``(kind, axis)``; cumsum or cumprod
MATMUL     (a, b) as (..., n, k) and (..., k, m)          None
GATHER     (src, i1, ... ik) indices of one shape         first indexed axis ``a0``
SCATTER    (old, value)                                   ``View`` of old that value replaces
SCATTER_AT (old, value, positions)                        None: flat positions of old replaced
CONCAT     (a, b, ...)                                    axis
BITCAST    (src,)                                         None: src's bytes in C order read as
                                                          ``dtype`` elements of ``shape``
KERNEL     (storage versions..., scalars..., launch shape) ``(Launch, i)``: storage i after a
                                                          kernel written in Python ran
========== ============================================== =====================================

``VIEW`` is the only movement op: slices with steps, transposes, broadcasts (stride 0) and
reshapes of any source are all a view over the source's C-order flat index. ``BITCAST`` changes
what the bytes mean, not where they are: a complex array's real parts are a VIEW (stride 2) of
its BITCAST to floats, as NumPy's ``z.real`` and ``z.view(float)`` are.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import math
import sys
import threading
import warnings
import weakref
from typing import NamedTuple

import numpy as _np


class Op(enum.Enum):
    BUFFER = "buffer"
    CONST = "const"
    IOTA = "iota"
    VIEW = "view"
    CAST = "cast"
    MAP = "map"
    REDUCE = "reduce"
    SCAN = "scan"
    MATMUL = "matmul"
    GATHER = "gather"
    SCATTER = "scatter"
    SCATTER_AT = "scatter_at"
    CONCAT = "concat"
    BITCAST = "bitcast"
    KERNEL = "kernel"
    GUFUNC = "gufunc"  # a compiled gufunc's call at each loop point (numloom.vectorize)


LEAVES = frozenset({Op.BUFFER, Op.CONST, Op.IOTA})
# Ops whose kernels need all of their inputs in memory or synchronize threads.
LIBRARY = frozenset({Op.MATMUL})


class View(NamedTuple):
    """Element ``idx`` of a view reads ``flat[offset + sum(idx[k] * strides[k])]``.

    Strides are in elements (not bytes) and may be zero (broadcast) or negative (reversed).
    A tuple underneath: views are hashed on every traced operation (node interning), and a
    tuple hashes in C.
    """

    shape: tuple
    strides: tuple
    offset: int = 0

    @staticmethod
    def contiguous(shape: tuple, offset: int = 0) -> View:
        return View(tuple(shape), contiguous_strides(shape), offset)

    @property
    def size(self) -> int:
        return prod(self.shape)

    def is_contiguous(self) -> bool:
        """True when the view reads a C-order run of memory (size-1 axes ignored)."""
        expected = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n == 1:
                continue
            if s != expected:
                return False
            expected *= n
        return True

    def is_identity(self, base_shape: tuple) -> bool:
        return self.offset == 0 and self.shape == tuple(base_shape) and self.is_contiguous()


prod = math.prod  # (a shape's element count)


def contiguous_strides(shape) -> tuple:
    try:
        return _cached_strides(shape)
    except TypeError:  # (a template's symbolic sizes are not hashed: compile/symbolic.py)
        return _strides(shape)


def _strides(shape) -> tuple:
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


_cached_strides = functools.lru_cache(maxsize=4096)(_strides)


class Node:
    """One operation of the DAG. Build nodes with ``node()``; never mutate them."""

    __slots__ = ("op", "srcs", "arg", "shape", "dtype", "depth", "where", "fallible", "sid",
                 "call", "__weakref__")  # fmt: skip

    def __repr__(self) -> str:
        arg = "" if self.op is Op.BUFFER else f", {self.arg!r}"
        return f"<{self.op.name}{arg} {self.shape} {self.dtype}>"

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)


# key -> weak reference to the node. A plain dict of weak references (dead ones swept now and
# then) costs a fraction of a WeakValueDictionary on the tracing path.
_interned: dict = {}
_SWEEP_EVERY = 1 << 14
_inserts = 0


def _arg_key(op: Op, arg, dtype):
    if op is Op.BUFFER:
        return id(arg)
    if op is Op.CONST:
        # 0.0 and -0.0 compare equal and NaN never does: key constants by their bytes.
        return arg.tobytes() if isinstance(arg, _np.generic) else _np.asarray(arg, dtype).tobytes()
    return arg


# An Enum member lookup costs more than a global's: the tracing path uses these.
_BUFFER, _CONST, _IOTA = Op.BUFFER, Op.CONST, Op.IOTA
_sids: dict = {}  # (op, dtype, shape, arg) -> structure number (see node())
_sid_counter = itertools.count()


def node(op: Op, srcs: tuple, arg, shape: tuple, dtype, where=None) -> Node:
    """The interned node for ``op(srcs; arg)`` of the given shape and dtype.

    ``where`` is the user's (file, line) to blame for data-dependent errors of this node: give
    it exactly to nodes that can fail when they run (a gather of indices not checked at the
    call, a signed integer power of array exponents). ``fallible`` says whether the node or
    any node it reads can.

    Every traced operation builds a few nodes: this is the tracing path, kept short.
    """
    if not isinstance(dtype, _np.dtype):
        dtype = _np.dtype(dtype)  # (never through a dict: uint64 'L' and 'Q' compare equal)
    if type(shape) is not tuple:
        shape = tuple(int(s) for s in shape)
    else:
        for s in shape:
            if type(s) is not int:
                shape = tuple(int(s) for s in shape)
                break
    # The node's structure apart from its sources, as a small integer: plans are keyed by these
    # (and the sources' positions), which compare and hash far faster than the tuples. The
    # interning key is that number with the sources' ids (stable: an interned node holds its
    # sources) or, for a leaf, its data.
    if op is _BUFFER or op is _CONST or op is _IOTA:
        arg_key = _arg_key(op, arg, dtype) if op is not _IOTA else arg
        shape_key = (id(op), dtype, shape, None)
    else:
        arg_key = None
        shape_key = (id(op), dtype, shape, arg)
    return _intern(op, srcs, arg, shape, dtype, where, shape_key, arg_key)


def buffer_of(buffer, shape: tuple, dtype) -> Node:
    """``node(Op.BUFFER, (), buffer, shape, dtype)`` for a tuple of ints ``shape`` and a NumPy
    ``dtype``: a computed result's node (every sync makes one per output)."""
    return _intern(_BUFFER, (), buffer, shape, dtype, None, (_BUFFER_ID, dtype, shape, None),
                   id(buffer))  # fmt: skip


def map_node(srcs: tuple, name: str, shape: tuple, dtype) -> Node:
    """``node(Op.MAP, srcs, name, shape, dtype)`` for a tuple of ints ``shape`` and a NumPy
    ``dtype``: the node of every traced elementwise operation, without ``node``'s checks of
    its arguments."""
    return _intern(_MAP, srcs, name, shape, dtype, None, (_MAP_ID, dtype, shape, name), None)


def checked_node(op: Op, srcs: tuple, arg, shape: tuple, dtype) -> Node:
    """``node(op, srcs, arg, shape, dtype)`` of an operation with sources (not a leaf), for a
    tuple of ints ``shape`` and a NumPy ``dtype``, without ``node``'s checks of them (a cast,
    a handle's view)."""
    return _intern(op, srcs, arg, shape, dtype, None, (id(op), dtype, shape, arg), None)


_MAP, _MAP_ID, _BUFFER_ID = Op.MAP, id(Op.MAP), id(Op.BUFFER)


def _intern(op: Op, srcs: tuple, arg, shape: tuple, dtype, where, shape_key: tuple,
            arg_key) -> Node:  # fmt: skip
    """The interned node of checked arguments: its structure number (``shape_key``'s) with its
    sources' ids, or for a leaf ``arg_key``, finds it if it is alive; else it is made."""
    global _inserts
    sid = _sids.get(shape_key)
    if sid is None:
        if len(_sids) >= 1 << 17:
            _sids.clear()  # old plans then miss once: their keys name retired numbers
        sid = _sids[shape_key] = next(_sid_counter)
    count = len(srcs)
    if count == 2:
        first, second = srcs
        key = (sid, id(first), id(second))
    elif count == 1:
        first = srcs[0]
        key = (sid, id(first))
    elif count:
        key = (sid, *map(id, srcs))
    else:
        key = (sid, arg_key)
    ref = _interned.get(key)
    if ref is not None:
        found = ref()
        if found is not None:
            return found
    n = Node.__new__(Node)
    if type(srcs) is not tuple:
        srcs = tuple(srcs)
    n.op, n.srcs, n.arg, n.shape, n.dtype, n.where, n.sid = op, srcs, arg, shape, dtype, where, sid
    n.call = None  # (fperrors.record: NumPy's error state and the user's line at the call)
    if count == 2:
        d0, d1 = first.depth, second.depth
        n.depth = (d0 if d0 > d1 else d1) + 1
        n.fallible = where is not None or first.fallible or second.fallible
    elif count == 1:
        n.depth = first.depth + 1
        n.fallible = where is not None or first.fallible
    elif count:
        n.depth = 1 + max([s.depth for s in srcs])
        n.fallible = where is not None or any([s.fallible for s in srcs])
    else:
        n.depth, n.fallible = 0, where is not None
    _interned[key] = weakref.ref(n)
    _inserts += 1
    if _inserts & (_SWEEP_EVERY - 1) == 0:
        _sweep()
    return n


@contextlib.contextmanager
def quiet_warnings():
    """Warnings ignored inside (NumPy run on stand-ins, to learn a result's dtype or error),
    without ``warnings.catch_warnings``: that marks the filters changed, which makes every
    module's warning registry forget what it showed, so a library's warning shown once (SciPy's
    FutureWarning) shows again at its next call. An "ignore" filter put first and taken away
    again leaves the registries as they were."""
    entry = ("ignore", None, Warning, None, 0)
    warnings.filters.insert(0, entry)
    try:
        yield
    finally:
        try:
            warnings.filters.remove(entry)
        except ValueError:  # (the filters were replaced inside: nothing of ours is left)
            pass


_RECORDING = threading.local()  # this thread's list of warnings recorded, while it records


_SHOW: list = [None]  # the display ``_show_or_record`` stands in front of


def _show_or_record(msg) -> None:
    """Python's warning display (``warnings._showwarnmsg``), which a thread recording
    (``recorded_warnings``) takes for itself: installed in front of it once, so threads never
    undo each other's replacement of it, as swapping it in and out would."""
    caught = getattr(_RECORDING, "caught", None)
    if caught is not None:
        caught.append(msg)
    else:
        _SHOW[0](msg)


@contextlib.contextmanager
def recorded_warnings():
    """The warnings given inside, recorded (a list of ``warnings.WarningMessage``) and not shown,
    without ``warnings.catch_warnings`` (see ``quiet_warnings``: a library's warning shown once
    per place stays shown once). Per thread: another thread's warnings meanwhile are shown."""
    if warnings._showwarnmsg is not _show_or_record:
        _SHOW[0], warnings._showwarnmsg = warnings._showwarnmsg, _show_or_record
    caught: list = []
    outer = getattr(_RECORDING, "caught", None)
    entry = ("always", None, Warning, None, 0)
    warnings.filters.insert(0, entry)
    _RECORDING.caught = caught
    try:
        yield caught
    finally:
        _RECORDING.caught = outer
        try:
            warnings.filters.remove(entry)
        except ValueError:  # (the filters were replaced inside: nothing of ours is left)
            pass


def warn_at_user(message, category=UserWarning) -> None:
    """``warnings.warn`` pointing at the first line outside numloom (the user's call), as
    NumPy's own warnings point at the user's line, however deep in numloom it is raised."""
    _, level = _outer_frame(sys._getframe(1))
    warnings.warn(message, category, stacklevel=level + 1)


_PACKAGE = __name__.split(".")[0]  # (numloom)


def _outer_frame(frame) -> tuple:
    """The first frame from ``frame`` outward whose code is not numloom's, and how many
    frames out it is (1: ``frame`` itself)."""
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return frame, level


def user_line():
    """(file, line) of the first caller outside numloom: where an error found at a later sync
    points (a node's ``where``). Every traced operation that can raise asks (fperrors.py)."""
    frame, _ = _outer_frame(sys._getframe(1))
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


if hasattr(sys, "_getframemodulename"):  # Python 3.12: no frame object for numloom's frames

    def user_line():  # noqa: F811 (the same, faster)
        """(file, line) of the first caller outside numloom: where an error found at a later
        sync points (a node's ``where``). Every traced operation that can raise asks
        (fperrors.py), so numloom's own frames are skipped by module name, without making
        a frame object for each."""
        module = sys._getframemodulename
        depth = 2
        while (name := module(depth)) is not None and name.startswith(_PACKAGE):
            depth += 1
        try:
            frame = sys._getframe(depth)
        except ValueError:  # (no caller outside numloom)
            return None
        if frame.f_globals.get("__name__", "").startswith(_PACKAGE):  # (code numloom exec'd)
            frame, _ = _outer_frame(frame)
            if frame is None:
                return None
        return frame.f_code.co_filename, frame.f_lineno


def snapshot_items(d: dict) -> list:
    """A list of ``d``'s items, taken again if another thread changes ``d`` meanwhile (a
    garbage collection while the list is built runs finalizers, which let other threads in)."""
    while True:
        try:
            return list(d.items())
        except RuntimeError:
            continue


def _sweep() -> None:
    """Forget keys whose nodes have died (every 16384 nodes interned: in C where the tracing
    is, a walk of the whole table that cost Python about 0.4 us a node)."""
    if SWEEP[0] is not None:
        SWEEP[0](_interned)
        return
    dead = [k for k, r in snapshot_items(_interned) if r() is None]
    for k in dead:
        _interned.pop(k, None)


SWEEP = [None]  # the compiled sweep (_speedups.sweep), once numloom's API is bound


def structure(roots) -> tuple:
    """``(order, positions, key)``: ``toposort(roots)``, ``{id(node): position}`` and
    ``structure_key`` of that order. The compiled walk gives None for the positions: a sync
    whose plan is cached needs only the roots' (the key's second part), and a caller that
    needs them all makes them (``{id(n): i for i, n in enumerate(order)}``)."""
    if max([r.depth for r in roots], default=0) > _RECURSIVE_DEPTH:
        order = toposort(roots)
        return (order, *structure_key(order, roots))
    if _STRUCTURE[0] is not None:  # (the same walk in C: _speedups.structure)
        order, key = _STRUCTURE[0](roots if type(roots) is list else list(roots))
        return order, None, key  # (positions: made by a caller that needs them)
    # toposort's order by recursion (a quarter faster than the explicit stack), each node
    # numbered and keyed as it is placed
    pos, order, items = {}, [], []
    for root in roots:
        if id(root) not in pos:
            _place(root, pos, order, items)
    return order, pos, (tuple(items), tuple([pos[id(r)] for r in roots]))


def _place(n: Node, pos: dict, order: list, items: list) -> None:
    """``structure``'s recursion: a module function, as a nested one that calls itself is a
    reference cycle that would keep every evaluated DAG (and its buffers) alive until the
    garbage collector runs."""
    srcs = n.srcs
    if not srcs:  # a leaf
        pos[id(n)] = len(order)
        order.append(n)
        items.append(n.sid)
        return
    for s in srcs:
        if id(s) not in pos:
            _place(s, pos, order, items)
    pos[id(n)] = len(order)
    order.append(n)
    if len(srcs) == 2:  # (most nodes: no list built for their sources' positions)
        first, second = srcs
        items.append((n.sid, pos[id(first)], pos[id(second)]))
    elif len(srcs) == 1:
        items.append((n.sid, pos[id(srcs[0])]))
    else:
        items.append((n.sid, *[pos[id(s)] for s in srcs]))


_STRUCTURE = [None]  # the compiled walk, once numloom's API is bound (array._install_tracing)
_RECURSIVE_DEPTH = 400  # deeper DAGs are sorted with an explicit stack (the recursion limit)


def structure_key(order: list, roots: list) -> tuple:
    """``(positions, key)`` of a sorted DAG: the key is its structure (equal for a loop that
    rebuilds the same computation), each node as its structure number and its sources'
    positions, so it compares and hashes as small integers."""
    pos, items = {}, []
    for i, n in enumerate(order):
        pos[id(n)] = i
        srcs = n.srcs
        items.append((n.sid, *[pos[id(s)] for s in srcs]) if srcs else n.sid)
    return pos, (tuple(items), tuple([pos[id(r)] for r in roots]))


_generic: dict = {}  # structure number -> its number without sizes (None: it has none)
_generic_ids: dict = {}  # (op, dtype, ndim, arg without sizes) -> number without sizes
_generic_counter = itertools.count()  # (never reused: a number names one structure for good)
_SIZED = (Op.VIEW, Op.SCATTER)  # ops whose ``arg`` is a View (shape, strides, offset)
_UNSIZED = (Op.KERNEL, Op.GUFUNC)  # ops whose work is compiled per call: never generic


def generic_key(order: list, key: tuple):
    """The structure key ``key`` of the sorted DAG ``order`` without its sizes, strides and
    offsets: equal for a loop that builds the same operations over arrays of other sizes
    (``x[:i].sum()`` for each ``i``), or None where the DAG has work compiled per call (a
    kernel written in Python, a compiled gufunc). A plan that runs its nodes through NumPy
    one by one serves every DAG of its key without sizes (``pipeline.program``)."""
    items, roots = key
    numbers = _generic
    out = []
    for n, item in zip(order, items):
        g = numbers.get(n.sid, False)
        if g is False:
            g = _generic_number(n)
        if g is None:
            return None
        out.append(g if type(item) is int else (g, *item[1:]))
    return tuple(out), roots


def _generic_number(n: Node):
    """``n``'s structure number without sizes (None: its DAG has no generic key)."""
    if n.op in _UNSIZED:
        number = None
    else:
        arg = None if n.op in _SIZED or not n.srcs else n.arg
        shape_key = (n.op, n.dtype, len(n.shape), arg)
        number = _generic_ids.get(shape_key)
        if number is None:
            if len(_generic_ids) >= 1 << 16:
                _generic_ids.clear()
                _generic.clear()
            number = _generic_ids[shape_key] = next(_generic_counter)
    if len(_generic) >= 1 << 17:
        _generic.clear()
    _generic[n.sid] = number
    return number


def toposort(roots) -> list:
    """Nodes reachable from ``roots``, every node after its sources (iterative DFS)."""
    order, seen = [], set()
    for root in roots:
        if id(root) in seen:
            continue
        stack = [(root, False)]
        while stack:
            n, expanded = stack.pop()
            if expanded:
                order.append(n)
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            for s in reversed(n.srcs):
                if id(s) not in seen:
                    stack.append((s, False))
    return order


def strided(flat: _np.ndarray, view) -> _np.ndarray:
    """The NumPy view of ``flat`` (1-D, contiguous) that a ``View`` describes."""
    if 0 in view.shape:
        return _np.empty(view.shape, flat.dtype)
    item = flat.itemsize
    return _np.ndarray(
        view.shape,
        flat.dtype,
        buffer=flat,
        offset=view.offset * item,
        strides=tuple(s * item for s in view.strides),
    )

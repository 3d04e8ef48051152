"""Partition the pending DAG into kernels, recording why each kernel is separate.

``schedule(roots, device) -> Plan`` is a pure function of the DAG, after Grumpy's Algorithm 1:
a node is *materialized* (written to memory) only when something requires it, and every other
node is fused into the kernel that consumes it:

- outputs: every live array the sync evaluates;
- reductions and scans (map-reduce, map-scan: their producers fuse into them);
- library calls (matmul) and their operands;
- writes (scatters), joins (concatenate) and the sources of gathers (read at random places);
- reinterpretations of memory as another dtype (bitcasts) and what they reinterpret;
- a node read through a shifted or strided view (a stencil over a computed value);
- a node that several kernels would otherwise each recompute, unless it is cheap;
- launches of kernels written in Python (``numloom.cuda``) and their array arguments: the
  new versions of all the storages one launch writes come out of one kernel.

Elementwise outputs of one shape that share work become one multi-output kernel (Black-Scholes'
call and put). ``schedule_nodes`` gives every node its own kernel: the reference plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.dag import Node, Op, toposort
from .blas import blas_readable
from .snippets import Unsupported
from .sum_order import f_ordered_sum, numpy_sum_order

KIND = {
    Op.IOTA: "map",
    Op.CAST: "map",
    Op.MAP: "map",
    Op.REDUCE: "reduce",
    Op.SCAN: "scan",
    Op.MATMUL: "library",
    Op.GATHER: "map",
    Op.SCATTER: "copy",
    Op.SCATTER_AT: "copy",
    Op.CONCAT: "map",
    Op.BITCAST: "copy",
    Op.KERNEL: "kernel",
    Op.GUFUNC: "map",
}
FREE = frozenset({Op.BUFFER, Op.CONST, Op.VIEW})


@dataclass(frozen=True)
class Kernel:
    """One launch of a plan: what it computes, from what, and why it is a kernel of its own."""

    name: str
    kind: str
    nodes: tuple
    inputs: tuple
    outputs: tuple
    reason: str
    source: str | None = None

    def __str__(self) -> str:
        ins = ", ".join(_describe(n) for n in self.inputs) or "-"
        outs = ", ".join(_describe(n) for n in self.outputs)
        text = f"{self.name} [{self.kind}]  {ins} -> {outs}\n    why: {self.reason}"
        if self.source:
            text += "\n" + "\n".join("    | " + line for line in self.source.splitlines())
        return text


@dataclass(frozen=True)
class Plan:
    """The kernels that evaluate ``outputs``, in an order that respects their dependencies."""

    outputs: tuple
    kernels: tuple
    device: str = "cpu"
    order: tuple = field(default=(), repr=False)  # every node, sources first

    def dependencies(self) -> tuple:
        """``(i, j)`` for each kernel ``j`` that reads an output of kernel ``i``: the edges of
        the plan's graph (kernels with no path between them may run at the same time)."""
        producer = {id(o): i for i, k in enumerate(self.kernels) for o in k.outputs}
        return tuple(sorted({(producer[id(n)], j) for j, k in enumerate(self.kernels)
                             for n in k.inputs if id(n) in producer}))  # fmt: skip

    def __str__(self) -> str:
        head = (
            f"plan on {self.device}: {len(self.kernels)} kernel(s), {len(self.outputs)} output(s)"
        )
        return "\n".join([head] + [str(k) for k in self.kernels])


def skeleton(plan: Plan) -> Plan:
    """The plan without its nodes (kernel names, kinds, reasons and sources kept): what a cache
    of programs keeps, so that no cached plan holds a user's data alive. Programs refer to
    nodes by their positions in the DAG order of each evaluation."""
    kernels = tuple(skeleton_kernel(k) for k in plan.kernels)
    return replace(plan, outputs=(), kernels=kernels, order=())


def skeleton_kernel(k: Kernel) -> Kernel:
    return replace(k, nodes=(), inputs=(), outputs=())


def _describe(n: Node) -> str:
    shape = "x".join(str(s) for s in n.shape) or "scalar"
    return f"{n.op.name.lower()}[{shape} {n.dtype}]"


def _name(n: Node) -> str:
    if n.op is Op.KERNEL:
        return n.arg[0].kernel.name
    if n.op is Op.MAP:
        return n.arg
    if n.op is Op.GUFUNC:
        return n.arg[0].replace(".", "_")
    if n.op in (Op.REDUCE, Op.SCAN):
        return n.arg[0]
    return n.op.value


def schedule_nodes(roots: list, device: str = "cpu") -> Plan:
    """One kernel per computing node, in topological order."""
    order = toposort(roots)
    kernels = []
    for n in order:
        if n.op in FREE:
            continue
        inputs = tuple(s for s in n.srcs)
        kernels.append(
            Kernel(
                name=f"k{len(kernels)}_{_name(n)}".replace(".", "_"),
                kind=KIND[n.op],
                nodes=(n,),
                inputs=inputs,
                outputs=(n,),
                reason="node-by-node execution: every operation is its own kernel",
            )
        )
    return Plan(outputs=tuple(roots), kernels=tuple(kernels), device=device, order=tuple(order))


# --- the fusing scheduler ----------------------------------------------------------------------

CHEAP = frozenset({Op.CONST, Op.IOTA})
_MATERIALIZE_OP = {
    Op.REDUCE: "a reduction ends a kernel (its consumers need the whole result)",
    Op.SCAN: "a scan ends a kernel (its consumers need the whole result)",
    Op.MATMUL: "matmul runs in BLAS",
    Op.SCATTER: "a write makes a new version of its storage",
    Op.SCATTER_AT: "a write makes a new version of its storage",
    Op.BITCAST: "a reinterpretation of memory (NumPy's view as another dtype)",
    Op.KERNEL: "a kernel written in Python (it writes its arrays in memory)",
}


def broadcast_dims(view, src_shape: tuple):
    """For a view that reads each source element at permuted or broadcast coordinates only,
    the output axis each source axis follows (None for size-1 axes); None for any other view."""
    from ..core.dag import contiguous_strides

    if view.offset != 0:
        return None
    strides = contiguous_strides(src_shape)
    mapping, used = [], set()
    for size, stride in zip(src_shape, strides):
        if size == 1:
            mapping.append(None)
            continue
        k = next((k for k, (n, s) in enumerate(zip(view.shape, view.strides))
                  if n == size and s == stride and k not in used), None)  # fmt: skip
        if k is None:
            return None
        used.add(k)
        mapping.append(k)
    for k, (n, s) in enumerate(zip(view.shape, view.strides)):
        if k not in used and n != 1 and s != 0:
            return None
    return tuple(mapping)


def _kind(n: Node) -> str:
    """A fused kernel's kind from its last output (a write through a view is a map over the
    storage: each element takes the new value or keeps the old one)."""
    return "map" if n.op is Op.SCATTER else KIND.get(n.op, "map")


def _materialized(order: list, roots: list) -> dict:
    """Nodes that must be written to memory, with the reason for each."""
    why: dict = {}
    for r in roots:
        if r.op is not Op.BUFFER:
            why[id(r)] = "an output: a live array holds it"
    row_local = _row_local_reductions(order, roots)
    for n in order:
        reason = _MATERIALIZE_OP.get(n.op)
        if reason and id(n) not in why and id(n) not in row_local:
            why[id(n)] = reason
        if n.op is Op.MATMUL:
            for s in n.srcs:
                # BLAS reads a view with a unit stride (a transpose) of memory in place:
                # only the memory under it must exist.
                if s.op is Op.VIEW and blas_readable(s.arg.shape, s.arg.strides):
                    s = s.srcs[0]
                if s.op not in LEAVES_OR_VIEWS:
                    why.setdefault(id(s), "an operand of matmul (BLAS reads memory)")
        if n.op is Op.CONCAT and len(n.srcs) > FUSED_PIECES:
            why.setdefault(id(n), "a concatenation of many pieces is written piece by piece")
        if n.op in (Op.GATHER, Op.SCATTER_AT) or (n.op is Op.CONCAT and id(n) in why):
            for s in n.srcs[:1] if n.op is Op.GATHER else n.srcs:
                if n.op is Op.SCATTER_AT and s.op is Op.VIEW and s.srcs[0].op in LEAVES_OR_VIEWS:
                    continue  # (a scalar broadcast over the positions is read as it is)
                if s.op not in LEAVES_OR_VIEWS:
                    why.setdefault(id(s), f"read by {n.op.value} at computed positions")
        if n.op is Op.BITCAST and n.srcs[0].op not in LEAVES_OR_VIEWS:
            why.setdefault(id(n.srcs[0]), "read as other bytes (a bitcast reads memory)")
        if n.op is Op.KERNEL:
            for s in n.srcs:
                if s.op not in LEAVES_OR_VIEWS:
                    why.setdefault(id(s), "an argument of a kernel written in Python")
        if n.op is Op.GUFUNC:
            for s in n.srcs:
                if s.shape != n.shape and s.op is not Op.BUFFER and not (
                        s.op is Op.VIEW and s.srcs[0].op is Op.BUFFER):  # fmt: skip
                    why.setdefault(id(s), "read along its core dimensions by a compiled gufunc")
        if n.op is Op.VIEW and n.srcs[0].op not in (Op.BUFFER, Op.CONST):
            src = n.srcs[0]
            if src.op is Op.VIEW or broadcast_dims(n.arg, src.shape) is None:
                why.setdefault(id(src), "read through a shifted or strided view")
    return why


LEAVES_OR_VIEWS = frozenset({Op.BUFFER, Op.CONST})
# What a view may read and still be cheap to recompute anywhere: memory, constants, ranges.
CHEAP_SOURCES = frozenset({Op.BUFFER, Op.CONST, Op.IOTA})
# A concatenation of at most this many pieces fuses as a select between them (each element
# evaluates every piece at clamped coordinates); more pieces are written one by one.
FUSED_PIECES = 4


def trailing_axes(n: Node) -> bool:
    """A reduction over the last axes of its source: one row of the source per kept index."""
    kind, axes = n.arg
    return axes == tuple(range(n.srcs[0].ndim - len(axes), n.srcs[0].ndim))


def _row_local_reductions(order: list, roots: list) -> set:
    """Reductions whose every use broadcasts them back over their own rows, maybe after some
    per-row arithmetic (softmax's max and sum, var's mean): they fuse with their consumers into
    one kernel that works a row at a time."""
    consumers: dict = {}
    for n in order:
        for s in n.srcs:
            consumers.setdefault(id(s), []).append(n)
    local = set()
    for n in order:
        if (n.op is Op.REDUCE and trailing_axes(n) and _row_uses_ok(n, consumers)
                and (n.shape != () or (n.srcs[0].size <= WHOLE_ROW_ELEMENTS
                                       and not _f_ordered(n)))):  # fmt: skip
            local.add(id(n))
    return local


def _f_ordered(r: Node) -> bool:
    """Whether NumPy sums whole reduction ``r`` in F order (a computation over transposed
    data): the reduction kernel walks its axes in reverse for NumPy's value, a row kernel
    walks them in C order."""
    kind, axes = r.arg
    src = r.srcs[0]
    try:
        return numpy_sum_order(src, axes, kind) is None and f_ordered_sum(src, axes, kind)
    except Unsupported:  # (a dtype numloom's kernels lack, extended precision: run by NumPy)
        return False


# A whole-array reduction fused with its uses makes the whole array one row: one thread runs
# it on the CPU, one block on a GPU. Beyond this many elements it is a reduction kernel of its
# own (threads and blocks sharing the work), its result read back by the kernels using it
# (a conjugate-gradient step's ``alpha = sum(r * r) / sum(r * Ar)`` over a large grid).
WHOLE_ROW_ELEMENTS = 1 << 16


def _row_uses_ok(r: Node, consumers: dict) -> bool:
    """Every use of reduction ``r`` is per-row arithmetic or a broadcast back over the rows."""
    src_shape, rows = r.srcs[0].shape, r.size
    stack, seen, broadcast = [r], set(), False
    while stack:
        n = stack.pop()
        for u in consumers.get(id(n), []):
            if id(u) in seen:
                continue
            seen.add(id(u))
            if _broadcasts_rows(u, n, src_shape):
                broadcast = True
            elif (
                u.op in (Op.MAP, Op.CAST)
                and u.size == rows
                or (
                    u.op is Op.VIEW
                    and u.size == rows
                    and u.arg.is_contiguous()
                    and not u.arg.offset
                )
            ):
                stack.append(u)
            else:
                return False
    # (a small whole-array reduction used only by scalar arithmetic, ``sqrt(sum(d * d))``: the
    # arithmetic is the row kernel's epilogue, not a kernel of its own after the reduction)
    return broadcast or (rows == 1 and r.shape == () and bool(seen))


def _broadcasts_rows(use: Node, reduced: Node, src_shape: tuple) -> bool:
    if use.op is not Op.VIEW or use.shape != src_shape:
        return False
    mapping = broadcast_dims(use.arg, reduced.shape)
    return mapping is not None and all(m in (None, k) for k, m in enumerate(mapping))


def _owners(order: list, why: dict) -> dict:
    """For each fusable node, the kernels (materialized nodes) that would compute it."""
    owners: dict = {}
    for n in reversed(order):
        if id(n) in why:
            owners[id(n)] = {id(n)}
        for s in n.srcs:
            if s.op is Op.BUFFER or id(s) in why:
                continue
            owners.setdefault(id(s), set()).update(owners.get(id(n), set()))
    return owners


RECOMPUTE_LIMIT = 8  # ops a node may cost and still be recomputed by each kernel reading it

# Elementwise functions that a CPU computes in the C library, each worth RECOMPUTE_LIMIT
# additions or more: one shared by several CPU kernels is stored, not computed by each. (A small
# network's softmax recomputed its exponentials in the row sums, the log loss and the argmax:
# its evaluation took twice NumPy's whole forward pass.) A GPU has them in hardware or nearly.
CPU_COSTLY = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "power", "float_power", "cbrt", "hypot"})  # fmt: skip


def _cheap(n: Node, why: dict, limit: int = RECOMPUTE_LIMIT, device: str = "cuda") -> bool:
    """Whether recomputing ``n`` in every kernel that reads it beats writing it to memory."""
    costly = CPU_COSTLY if device == "cpu" else ()
    cost, stack, seen = 0, [n], set()
    while stack:
        m = stack.pop()
        if id(m) in seen or m.op is Op.BUFFER or (m is not n and id(m) in why):
            continue
        seen.add(id(m))
        if m.op in (Op.REDUCE, Op.SCAN, Op.MATMUL, Op.GATHER, Op.SCATTER, Op.SCATTER_AT):
            return False
        if m.op is Op.VIEW and m.srcs[0].op not in CHEAP_SOURCES and id(m.srcs[0]) not in why:
            return False  # a view of a computed value: recomputing it repeats that work
        cost += limit if m.op is Op.MAP and m.arg in costly else m.op in (Op.MAP, Op.CAST)
        stack.extend(m.srcs)
    return cost <= limit


# ops a node may cost and still be recomputed by each of the whole-array reductions reading it
REDUCED_RECOMPUTE_LIMIT = 96


def _recomputed_by_reductions(n: Node, kernel_roots: list, why: dict, device: str) -> bool:
    """On a GPU, whether each kernel that reads ``n`` is a whole-array reduction that can
    recompute it from memory: two sums of one chain (Black-Scholes' calls and puts) cannot
    share a kernel (``_all_mergeable``), and writing the chain's shared values for both to read
    back moves far more memory than each reading the chain's inputs and computing it again
    (Black-Scholes: 12 arrays written and read back, 160 bytes an option, against its 3 inputs
    read twice, 24 bytes). A CPU has the bandwidth and not the arithmetic: there computing the
    chain twice took 1.6-2.0 s of a Dask Black-Scholes over 2e7 options on 2 cores, against
    1.0-1.4 s with the shared values stored."""
    if device == "cpu" or not all(_whole(r) for r in kernel_roots):
        return False
    return _cheap(n, why, REDUCED_RECOMPUTE_LIMIT)


def _row_space(n: Node):
    """The iteration space a kernel ending in ``n`` walks: its shape, and for a reduction over
    trailing axes the source's shape (a row kernel can also compute maps over that shape).
    A write has a kernel of its own (None)."""
    if n.op is Op.SCATTER:
        return None
    if n.op is Op.REDUCE and trailing_axes(n):
        return n.srcs[0].shape
    return n.shape if _kind(n) == "map" else None


def _all_mergeable(roots: list) -> bool:
    """Whether the kernels ending in ``roots`` can be one kernel: they walk one space, and at
    most one is a whole-array reduction (two as one kernel would be a single row, run by one
    thread, one block on a GPU; the work they share is stored once and each reduces in
    parallel). Checked once a kernel, not a pair: a value shared by hundreds of kernels (a
    gradient summed over a batch) made 1.6 M pair checks."""
    spaces = [_row_space(r) for r in roots]  # (compared, not hashed: symbolic.py)
    first = spaces[0] if spaces else None
    if first is None or any(s is None or s != first for s in spaces):
        return len(roots) < 2
    return sum(1 for r in roots if _whole(r)) <= 1


def _whole(n: Node) -> bool:
    return n.op is Op.REDUCE and n.shape == () and n.srcs[0].ndim > 0


def schedule(roots: list, device: str = "cpu", order: list | None = None) -> Plan:
    """Fused kernels for ``roots``, in dependency order (see the module docstring); ``order``
    is ``toposort(roots)`` when the caller has it."""
    if order is None:
        order = toposort(roots)
    by_id = {id(n): n for n in order}
    # each node's place in order: a plan is a function of the DAG, never of where its nodes
    # lie in memory (a template planned over copies of them makes the same plan: symbolic.py)
    place = {id(n): i for i, n in enumerate(order)}
    why = _materialized(order, roots)
    _unfused_row_reductions(order, why)
    group = _launches(order)  # kernel root id -> representative id (multi-output kernels)
    # Each change is made at the first node (in order) that several kernels would compute.
    # Storing it changes which kernels compute the nodes before it: the owners are found again
    # and the scan starts over. Merging its kernels changes no owners and only makes fewer
    # kernels of each node: the nodes before it stay decided, but for those the reductions
    # recompute, a choice that looks at the kernels themselves; the scan goes on from the
    # first of those (a naive Bayes fit's 640 merged mean-and-var pairs: one scan, not 640).
    owners = _owners(order, why)
    start, recheck, stored = 0, None, False
    while True:
        changed = None
        for i in range(start, len(order)):
            n = order[i]
            kernels = {group.get(k, k) for k in owners.get(id(n), ())}
            if id(n) in why or len(kernels) <= 1:
                continue
            if _cheap(n, why, device=device):
                continue
            roots_here = [by_id[k] for k in kernels]
            if _recomputed_by_reductions(n, roots_here, why, device):
                recheck = i if recheck is None else min(recheck, i)
                continue
            if _all_mergeable(roots_here) and not _depends(roots_here):
                rep = min(kernels, key=place.__getitem__)  # (the first in order, not in memory)
                for k, v in list(group.items()) + [(k, k) for k in kernels]:
                    if v in kernels:
                        group[k] = rep
                changed = "merged"
                break
            # Stored: the kernels computing the nodes before it change, those after it do
            # not (a node's kernels are its users'), so the scan goes on; the nodes before
            # are looked at again with the owners found anew once it ends (one pass of a
            # large plan stores hundreds: a batch's gradient sums, each read by the next)
            why[id(n)] = "shared by several kernels"
            stored = True
        if changed is None:
            if not stored:
                break
            owners = _owners(order, why)
            start, recheck, stored = 0, None, False
            continue
        start = i + 1 if recheck is None else recheck
        recheck = None
    return _plan(order, roots, why, owners, group, device, place)


def _unfused_row_reductions(order: list, why: dict) -> None:
    """A row's reduction fuses with the kernels that use it only where they walk its rows
    (``_walks_rows_of``); one that walks other rows (a column sum of softmax's rows, a whole
    sum of them) reads it from memory instead: a vector of one value a row, written by a row
    kernel of its own."""
    if not any(n.op is Op.REDUCE and id(n) not in why for n in order):
        return  # (no reduction fused into a kernel: nothing to look at)
    by_id = {id(n): n for n in order}
    while True:
        owners = _owners(order, why)
        split = [n for n in order if n.op is Op.REDUCE and id(n) not in why
                 and any(not _walks_rows_of(by_id[k], n) for k in owners.get(id(n), ()))]  # fmt: skip
        if not split:
            return
        for n in split:
            why[id(n)] = "a row's reduction used by a kernel that walks other rows"


def _walks_rows_of(root: Node, r: Node) -> bool:
    """Whether a kernel ending in ``root`` works the rows of reduction ``r`` one at a time (a
    row kernel): it reduces the same rows, or its outputs are per element or per row, and it
    is not a write or a scan (``p /= p.sum(1, keepdims=True)`` over a written ``p``)."""
    src = r.srcs[0].shape
    if root.op is Op.REDUCE:
        return (root is r or trailing_axes(root) and root.srcs[0].shape == src
                and len(root.arg[1]) == len(r.arg[1]))  # fmt: skip
    if root.op in (Op.SCATTER, Op.SCATTER_AT, Op.SCAN):
        return False  # (a write or a scan is lowered on its own, holding no reduction)
    return root.shape == src or root.size == r.size


def _launches(order: list) -> dict:
    """The storages one launch of a Python kernel writes come out of one kernel, and so do
    the results of one call of a compiled gufunc (its function runs once a loop point)."""
    group, first = {}, {}
    for n in order:
        if n.op is Op.KERNEL or n.op is Op.GUFUNC:
            key = (n.op, n.arg[0], tuple(map(id, n.srcs)))
            group[id(n)] = first.setdefault(key, id(n))
    return group


def _depends(kernel_roots: list) -> bool:
    """True when one of these kernel roots reads another (they cannot be one map kernel).
    The search stops at nodes no deeper than the shallowest other root: their sources are
    shallower than every other root, so none of them is one."""
    for r in kernel_roots:
        others = {id(o) for o in kernel_roots if o is not r}
        shallowest = min([o.depth for o in kernel_roots if o is not r], default=r.depth)
        stack, seen = list(r.srcs), set()
        while stack:
            n = stack.pop()
            if id(n) in others:
                return True
            if id(n) in seen or n.depth <= shallowest:
                continue
            seen.add(id(n))
            stack.extend(n.srcs)
    return False


def _plan(order, roots, why, owners, group, device, place) -> Plan:
    members: dict = {}
    for n in order:
        if n.op is Op.BUFFER:
            continue
        reps = {group.get(k, k) for k in owners.get(id(n), ())}
        for rep in sorted(reps, key=place.__getitem__) if len(reps) > 1 else reps:
            members.setdefault(rep, []).append(n)  # cheap nodes go into every kernel using them
    kernels = {}
    for rep, nodes in members.items():
        node_ids = {id(m) for m in nodes}
        outputs = tuple(m for m in nodes if id(m) in why)
        inputs = tuple({id(s): s for m in nodes for s in m.srcs
                        if id(s) not in node_ids and s.op is not Op.CONST}.values())  # fmt: skip
        root = outputs[-1]
        kind, reason = _kind(root), why[id(root)]
        if kind == "map" and any(m.op is Op.REDUCE for m in nodes):
            kind = "reduce"
            reason += "; its reductions are fused, a row at a time, with the work that uses them"
        kernels[rep] = Kernel(name="", kind=kind, nodes=tuple(nodes), inputs=inputs,
                              outputs=outputs, reason=reason)  # fmt: skip
    ordered = _chains(_kernel_order(list(kernels.values())))
    named = tuple(replace(k, name=f"k{i}_{_name(k.outputs[-1])}".replace(".", "_"))
                  for i, k in enumerate(ordered))  # fmt: skip
    return Plan(outputs=tuple(roots), kernels=named, device=device, order=tuple(order))


# Ops a kernel may hold and still take in the elementwise kernel that consumes its outputs.
_CHAINABLE = frozenset({Op.MAP, Op.CAST, Op.VIEW, Op.CONST, Op.IOTA, Op.GATHER, Op.CONCAT})


def _chainable(k: Kernel) -> bool:
    return k.kind == "map" and all(n.op in _CHAINABLE for n in k.nodes)


def _chains(ordered: list) -> list:
    """Elementwise kernels of one shape that read only elementwise outputs of one earlier
    kernel, element for element, join that kernel: ``z = z * z + c; keep = abs(z) < 2``
    is one kernel storing ``z`` and ``keep``, which reads ``z`` from a register, not memory.
    (Every other kernel they read from runs before both, so no cycle can form.)"""
    producer: dict = {}  # output id -> index into out
    out: list = []
    for k in ordered:
        made = {producer[id(s)] for s in k.inputs if id(s) in producer}
        if len(made) == 1 and _chainable(k):
            j = made.pop()
            g = out[j]
            shape = k.outputs[-1].shape
            direct = all(s.shape == shape and s.op is not Op.CONST for s in k.inputs
                         if producer.get(id(s)) == j)  # fmt: skip
            readers_ok = all(n.op in (Op.MAP, Op.CAST) for n in k.nodes for s in n.srcs
                             if producer.get(id(s)) == j)  # fmt: skip
            if direct and readers_ok and _chainable(g) and g.outputs[-1].shape == shape:
                nodes = {id(n): n for n in g.nodes + k.nodes}
                outputs = g.outputs + k.outputs
                made_here = {id(o) for o in outputs} | set(nodes)
                inputs = tuple({id(s): s for s in g.inputs + k.inputs
                                if id(s) not in made_here}.values())  # fmt: skip
                out[j] = replace(g, nodes=tuple(nodes.values()), inputs=inputs, outputs=outputs)
                for o in k.outputs:
                    producer[id(o)] = j
                continue
        for o in k.outputs:
            producer[id(o)] = len(out)
        out.append(k)
    return out


def _kernel_order(kernels: list) -> list:
    """Kernels sorted so each runs after the kernels whose outputs it reads."""
    producer = {id(o): k for k in kernels for o in k.outputs}
    ordered, state = [], {}

    def visit(k):
        if state.get(id(k)) == "done":
            return
        if state.get(id(k)) == "visiting":
            raise RuntimeError("numloom scheduled a cycle of kernels")
        state[id(k)] = "visiting"
        for s in k.inputs:
            if id(s) in producer and producer[id(s)] is not k:
                visit(producer[id(s)])
        state[id(k)] = "done"
        ordered.append(k)

    for k in kernels:
        visit(k)
    visit = None  # noqa: F841 (the recursive closure's cycle would hold the plan's nodes)
    return ordered

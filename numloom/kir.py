"""The kernel IR: what a fused kernel computes, independent of the language it is rendered in.

A kernel is a loop nest over an iteration space (``outer`` extents, and ``inner`` extents for a
reduction), a list of ``Let`` statements computing one point (C expressions over the loop
coordinates ``i0, i1, ...`` and ``r0, r1, ...``), and what happens to the result: ``Store``s to
output buffers, or a ``Reduction`` into an accumulator. Every size, stride and offset is a kernel
argument (``P[k]``), every scalar constant comes from the constant block (``K``), so one kernel
source serves every size and every value of the constants.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Buffer:
    """A pointer argument: ``ctype`` is the element type in memory."""

    name: str
    ctype: str
    output: bool


@dataclass(frozen=True)
class Let:
    """``const ctype name = expr;``"""

    name: str
    ctype: str
    expr: str


@dataclass(frozen=True)
class Store:
    """``buffer[index] = value`` (the renderer converts ``value`` to the buffer's type), only
    where the C condition ``when`` holds, if one is given."""

    buffer: str
    index: str
    value: str
    when: str | None = None


@dataclass(frozen=True)
class Reduction:
    """Fold ``value`` (at reduction point ``index``) into an accumulator, then store it.

    ``kind`` is sum, prod, max, min, any, all, argmax or argmin; ``acc_type`` is the type the
    fold runs in (double for float sums, as accurate as NumPy's pairwise sums).
    """

    kind: str
    acc_type: str
    value: str
    index: str
    out: Store


@dataclass(frozen=True)
class Phase:
    """One pass over a row (a row kernel's inner axes): fold a reduction into the row-local
    ``reduction.out.value`` name, or compute and store elementwise outputs."""

    body: tuple
    reduction: Reduction | None = None
    stores: tuple = ()
    skip: tuple | None = None  # (start, count): the span of the last axis this pass leaves out


@dataclass(frozen=True)
class Kernel:
    """One kernel: loops, per-point statements, and their stores or reduction."""

    name: str
    kind: str  # "map", "reduce", "row", "scatter" or "scan"
    buffers: tuple
    outer: tuple  # loop extents (C expressions) of the kept / mapped dimensions
    inner: tuple = ()  # reduction loop extents
    prologue: tuple = ()  # Lets that do not depend on the loop coordinates
    body: tuple = ()  # Lets computing one point
    stores: tuple = ()
    reduction: Reduction | None = None
    flat: bool = False  # the outer loops run as one flat loop over ``i``
    phases: tuple = ()  # a row kernel's passes over each row, in order
    row_stores: tuple = ()  # a row kernel's per-row outputs (after its phases)
    view_coords: tuple = ()  # a write through a box view: view coordinates at (i0, i1, ...)

    def __str__(self) -> str:
        lines = [f"kernel {self.name} [{self.kind}] outer={list(self.outer)} "
                 f"inner={list(self.inner)}"]  # fmt: skip
        lines += [f"  {b.ctype} *{b.name}{' (out)' if b.output else ''}" for b in self.buffers]
        lines += [f"  {s.ctype} {s.name} = {s.expr}" for s in self.prologue + self.body]
        lines += [f"  {s.buffer}[{s.index}] = {s.value}" for s in self.stores]
        if self.reduction:
            r = self.reduction
            lines.append(f"  {r.kind}({r.value}) -> {r.out.buffer}[{r.out.index}]")
        return "\n".join(lines)

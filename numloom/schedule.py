"""Partition the pending DAG into kernels, recording why each kernel is separate.

``schedule(roots, device) -> Plan`` is a pure function of the DAG. This scheduler gives every
node that computes something its own kernel, in evaluation order (views are free: they are
addressing, not work); it is the reference the fusing scheduler is compared against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .dag import Node, Op, toposort

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
    Op.CONCAT: "copy",
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

    def __str__(self) -> str:
        head = f"plan on {self.device}: {len(self.kernels)} kernel(s), {len(self.outputs)} output(s)"
        return "\n".join([head] + [str(k) for k in self.kernels])


def _describe(n: Node) -> str:
    shape = "x".join(str(s) for s in n.shape) or "scalar"
    return f"{n.op.name.lower()}[{shape} {n.dtype}]"


def _name(n: Node) -> str:
    if n.op is Op.MAP:
        return n.arg
    if n.op in (Op.REDUCE, Op.SCAN):
        return n.arg[0]
    return n.op.value


def schedule(roots: list, device: str = "cpu") -> Plan:
    """One kernel per computing node, in topological order."""
    order = toposort(roots)
    kernels = []
    for n in order:
        if n.op in FREE:
            continue
        inputs = tuple(s for s in n.srcs)
        kernels.append(
            Kernel(
                name=f"k{len(kernels)}_{_name(n)}",
                kind=KIND[n.op],
                nodes=(n,),
                inputs=inputs,
                outputs=(n,),
                reason="node-by-node execution: every operation is its own kernel",
            )
        )
    return Plan(outputs=tuple(roots), kernels=tuple(kernels), device=device, order=tuple(order))

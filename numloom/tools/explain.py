"""``numloom.explain``: the plan that evaluating some arrays would run, without running it."""

from __future__ import annotations

from ..compile.schedule import Plan
from ..core import realize


def explain(*arrays, target: str | None = None) -> Plan:
    """The plan evaluating ``arrays`` (default: everything pending) would run.

    ``target`` names the device to plan for ("cpu", "cuda"); it defaults to the arrays' device.
    ``str(plan)`` prints every kernel with its kind, inputs, outputs and why it is separate.
    """
    storages = [a._storage for a in arrays] if arrays else list(realize._pending)
    storages.sort(key=lambda s: s.seq)
    device = target or (storages[0].device if storages else "cpu")
    roots = list({id(s.version): s.version for s in storages if s.pending}.values())
    return realize.plan_for(roots, device)

"""Run a block's threads on one CPU core: split a kernel's body at its barriers into *phases*.

On the CPU device a block's threads run one after another, so ``cuda.syncthreads()`` becomes the
end of a loop over the block's threads and the start of the next one::

    x = ...; tile[ty, tx] = a[...]          for t in threads: x[t] = ...; tile[..] = a[..]
    cuda.syncthreads()               ->     for t in threads: out[..] = tile[..] (x[t] ...)
    out[...] = tile[tx, ty] (x ...)

Control flow around a barrier (an ``if`` or a loop containing one) runs at block level, each
thread keeping a mask (``if``) or a state (loops: running, continued, done) in a per-thread
array; ``return`` clears a thread's ``alive`` flag. A shuffle is a barrier too: each thread
writes its value to an exchange array, and after the barrier reads the source lane's.

Locals read in a phase before that phase assigns them (so their value comes from an earlier
phase or iteration) live in per-thread arrays across phases; the others stay plain locals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from . import kir


@dataclass(frozen=True)
class Phase:
    """One loop over the block's threads running ``stmts`` where ``guard`` holds."""

    stmts: tuple
    guard: str = ""
    simd: bool = True
    in_loop: bool = False
    index: int = 0


@dataclass(frozen=True)
class BlockLoop:
    """``for (;;) { nl_any = 0; <phases>; if (!nl_any) break; <body> }`` at block level."""

    head: tuple  # items computing each thread's state and nl_any
    body: tuple


@dataclass(frozen=True)
class PerThread:
    """An array with one element (or one local array) per thread of the block."""

    name: str
    ctype: str
    size: int | None = None


def has_barrier(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (kir.Barrier, kir.Shuffle)):
            return True
        if isinstance(s, kir.If) and (has_barrier(s.then) or has_barrier(s.orelse)):
            return True
        if isinstance(s, (kir.While, kir.For)) and has_barrier(s.body):
            return True
    return False


class _Splitter:
    def __init__(self, barriers: bool, ordered: frozenset = frozenset()):
        self.barriers = barriers
        self.ordered = ordered  # device functions that atomically update memory or print
        self.arrays: list = []  # PerThread masks, loop states, exchange buffers
        self.count = 0
        self.phases: list = []

    def fresh(self, prefix: str, ctype: str) -> str:
        self.count += 1
        name = f"nl_{prefix}{self.count}"
        self.arrays.append(PerThread(name, ctype))
        return name

    def split(self, stmts, guard: str, states: tuple, in_loop: bool) -> list:
        """Block-level items for ``stmts`` run where ``guard`` holds, inside the block-level
        loops whose per-thread states are ``states`` (innermost last)."""
        items, current = [], []

        def flush():
            if current:
                items.append(self.phase(tuple(current), guard, states, in_loop))
                current.clear()

        for s in stmts:
            if not has_barrier([s]):
                current.append(s)
            elif isinstance(s, kir.Barrier):
                flush()
            elif isinstance(s, kir.Shuffle):
                buf = self.fresh("x", s.ctype)
                current.append(kir.Assign(f"{buf}[nl_t]", s.value, s.line))
                flush()
                source = f"nl_shfl_source({_KIND[s.kind]}, nl_t, {s.lane}, nl_threads)"
                current.append(kir.Assign(s.target, f"{buf}[{source}]", s.line))
            elif isinstance(s, kir.If):
                mask = self.fresh("m", "bool")
                current.append(kir.Assign(f"{mask}[nl_t]", s.cond, s.line))
                flush()
                items += self.split(s.then, _and(guard, f"{mask}[nl_t]"), states, in_loop)
                items += self.split(s.orelse, _and(guard, f"!{mask}[nl_t]"), states, in_loop)
            else:
                flush()
                items += self.loop(s, guard, states)
        flush()
        return items

    def loop(self, s, guard: str, states: tuple) -> list:
        """A loop containing a barrier: every thread's state, the body while any runs."""
        state = self.fresh("w", "int8_t")
        start = f"({guard}) ? 0 : 2" if guard else "0"
        init = [kir.Assign(f"{state}[nl_t]", start, s.line)]
        if isinstance(s, kir.For):
            init.insert(0, kir.Assign(s.var, s.start, s.line))
            cond = _for_cond(s)
        else:
            cond = s.cond
        items = [Phase(tuple(init), "", False, True, self._index())]
        test = (kir.If(f"{state}[nl_t] == 1", (kir.Assign(f"{state}[nl_t]", "0"),)),
                kir.If(f"{state}[nl_t] == 0 && !({cond})", (kir.Assign(f"{state}[nl_t]", "2"),)),
                kir.Do(f"nl_any |= ({state}[nl_t] == 0)"))  # fmt: skip
        head = (Phase(test, "", False, True, self._index()),)
        body = self.split(s.body, _and(guard, f"{state}[nl_t] == 0"), states + (state,), True)
        if isinstance(s, kir.For):
            step = kir.Assign(s.var, f"{s.var} + {s.step}", s.line)
            body.append(Phase((step,), f"{state}[nl_t] < 2", False, True, self._index()))
        return items + [BlockLoop(head, tuple(body))]

    def phase(self, stmts, guard: str, states: tuple, in_loop: bool) -> Phase:
        body = tuple(_exits(stmts, states, self.barriers))
        text = repr(body)
        simd = not any(word in text for word in _ORDERED + ("nl_any", "goto")) and not any(
            name in text for name in self.ordered
        )
        return Phase(body, guard, simd, in_loop, self._index())

    def _index(self) -> int:
        self.count += 1
        return self.count


_KIND = {"idx": 0, "up": 1, "down": 2, "xor": 3}
_ORDERED = ("atomic", "NL_PRINTF")  # calls a phase's threads make one after another


def _ordered_functions(functions) -> frozenset:
    """Names of the device functions that use atomics or print, directly or through others."""
    bodies = {f.name: repr(f.body) for f in functions if isinstance(f, kir.Function)}
    found = {name for name, text in bodies.items() if any(w in text for w in _ORDERED)}
    grew = True
    while grew:
        more = {n for n, text in bodies.items() if n not in found and any(f in text for f in found)}
        found |= more
        grew = bool(more)
    return frozenset(found)


def _and(a: str, b: str) -> str:
    return f"{a} && {b}" if a else b


def _for_cond(s: kir.For) -> str:
    if s.sign > 0:
        return f"{s.var} < {s.stop}"
    if s.sign < 0:
        return f"{s.var} > {s.stop}"
    return f"({s.step} > 0 ? {s.var} < {s.stop} : {s.var} > {s.stop})"


def _exits(stmts, states: tuple, alive: bool, nested: bool = False) -> list:
    """``return``, and ``break``/``continue`` of a block-level loop, inside a phase: set the
    thread's flags and jump to the end of its turn (``goto nl_end``). A thread that returns
    leaves every block-level loop around it."""
    out = []
    for s in stmts:
        if isinstance(s, kir.Return):
            flags = [kir.Assign("nl_alive[nl_t]", "0", s.line)] if alive else []
            flags += [kir.Assign(f"{w}[nl_t]", "2", s.line) for w in states]
            out.append(_block(flags + [kir.Do("goto nl_end", s.line)]))
        elif isinstance(s, (kir.Break, kir.Continue)) and not nested and states:
            value = "2" if isinstance(s, kir.Break) else "1"
            out.append(_block([kir.Assign(f"{states[-1]}[nl_t]", value, s.line),
                               kir.Do("goto nl_end", s.line)]))  # fmt: skip
        elif isinstance(s, kir.If):
            then = tuple(_exits(s.then, states, alive, nested))
            out.append(replace(s, then=then, orelse=tuple(_exits(s.orelse, states, alive, nested))))
        elif isinstance(s, (kir.While, kir.For)):
            out.append(replace(s, body=tuple(_exits(s.body, states, alive, True))))
        else:
            out.append(s)
    return out


def _block(stmts) -> kir.If:
    return kir.If("1", tuple(stmts))


def split(k: kir.UserKernel) -> tuple:
    """``(items, per-thread arrays, alive)``: the block program of kernel ``k``; ``alive``
    when threads may return before a barrier (their flags are then kept)."""
    alive = has_barrier(k.body) and _returns(k.body)
    s = _Splitter(alive, _ordered_functions(k.functions))
    items = s.split(k.body, "nl_alive[nl_t]" if alive else "", (), False)
    if alive:
        s.arrays.append(PerThread("nl_alive", "bool"))
    return items, s.arrays, alive


def _returns(stmts) -> bool:
    for s in stmts:
        if isinstance(s, kir.Return):
            return True
        if isinstance(s, kir.If) and (_returns(s.then) or _returns(s.orelse)):
            return True
        if isinstance(s, (kir.While, kir.For)) and _returns(s.body):
            return True
    return False


# --- which locals live across phases ---------------------------------------------------------

_NAME = re.compile(r"\b(v_\w+|vi\d+_\w+|t\d+|l_\d+_\d+)\b")  # vi3_x: an inlined function's


def _names(text: str, local: set) -> set:
    return {m for m in _NAME.findall(text) if m in local}


def _exposed(stmts, defined: set, local: set) -> set:
    """Locals read before ``stmts`` assign them (``defined`` grows with what they assign)."""
    exposed = set()
    for s in stmts:
        if isinstance(s, kir.Assign):
            exposed |= _names(s.value, local) - defined
            if s.target in local:
                defined.add(s.target)
            else:
                exposed |= _names(s.target, local) - defined
        elif isinstance(s, kir.Do):
            exposed |= _names(s.expr, local) - defined
        elif isinstance(s, kir.If):
            exposed |= _names(s.cond, local) - defined
            then_def, else_def = set(defined), set(defined)
            exposed |= _exposed(s.then, then_def, local) | _exposed(s.orelse, else_def, local)
            defined |= then_def & else_def
        elif isinstance(s, kir.While):
            exposed |= _names(s.cond, local) - defined
            exposed |= _exposed(s.body, set(defined), local)
        elif isinstance(s, kir.For):
            exposed |= _names(f"{s.start} {s.stop} {s.step}", local) - defined
            exposed |= _exposed(s.body, set(defined) | {s.var}, local)
            defined.add(s.var)
    return exposed


def all_phases(items) -> list:
    out = []
    for item in items:
        if isinstance(item, Phase):
            out.append(item)
        else:
            out += all_phases(item.head) + all_phases(item.body)
    return out


def per_thread(items, locals_: tuple) -> set:
    """Names of thread locals whose values must survive from one phase to another: read in a
    phase before it assigns them, and assigned in another phase (or in the same one, when it
    runs once per iteration of a block-level loop). Local arrays used by several phases too."""
    scalars = {v.name for v in locals_ if v.space == "thread" and v.size is None}
    arrays = {v.name for v in locals_ if v.space == "thread" and v.size is not None}
    phases = all_phases(items)
    if len(phases) <= 1:
        return set()
    assigned = {p.index: _assigned(p.stmts, scalars) for p in phases}
    keep = set()
    for p in phases:
        for name in _exposed(p.stmts, set(), scalars) | _names(p.guard, scalars):
            if (
                p.in_loop
                and name in assigned[p.index]
                or any(name in assigned[q.index] for q in phases if q.index != p.index)
            ):
                keep.add(name)
    for name in arrays:
        users = [p for p in phases if name in _names(repr(p.stmts), {name})]
        if len(users) > 1 or any(p.in_loop for p in users):
            keep.add(name)
    return keep


def _assigned(stmts, local: set) -> set:
    out = set()
    for s in stmts:
        if isinstance(s, kir.Assign) and s.target in local:
            out.add(s.target)
        elif isinstance(s, kir.If):
            out |= _assigned(s.then, local) | _assigned(s.orelse, local)
        elif isinstance(s, (kir.While, kir.For)):
            out |= _assigned(s.body, local) | ({s.var} if isinstance(s, kir.For) else set())
    return out

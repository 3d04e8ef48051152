"""The one pipeline every device shares: pending work -> plan -> kernels -> program.

``program(order, roots, device, target)`` is what a backend's ``run`` asks for. It looks the
DAG's structure up in the target's plan cache and, on a miss, builds::

    schedule(roots)                      the plan: kernels, their nodes, why each split
    for each kernel:
        target.special(kernel)           a matmul for BLAS, a kernel written in Python
        lower(kernel)                    kernel IR (or Unsupported: it runs through NumPy)
        target.render(ir)                source text in the target's dialect, and its symbol
        target.load(source, symbol)      compiled through the compile cache and loaded
    target.program(plan, compiled)       the backend's launch steps over those kernels

A backend (``backends/cpu.py``, ``backends/cuda.py``) supplies a ``Target``: its dialect
(``render``), its compiler (``load``) and its launcher (``program``, then ``run``). Up to the
launch, the CPU and CUDA paths are this code.

Cached programs hold no node (``schedule.skeleton``), so no user data: structure only.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, replace

from ..core import config
from ..core.dag import generic_key, structure_key
from ..core.ranges import phase
from ..core.realize import count, register_plan_cache
from . import symbolic
from .lower import Lowered, Unsupported, lower
from .schedule import Kernel, Plan, schedule, skeleton, skeleton_kernel


@dataclass(frozen=True)
class Compiled:
    """One plan kernel through the pipeline: what the target loaded for it (None: it runs
    through NumPy, node by node), its source text and its lowered form."""

    code: object = None
    source: str | None = None
    lowered: Lowered | None = None


class Target:
    """What a backend gives the pipeline; ``plans`` is its plan cache. Subclasses override
    ``render``, ``load`` and ``program``; ``special`` and ``variant`` where they need to."""

    plans: PlanCache

    def variant(self) -> object:
        """What else, beside the DAG's structure, decides the program (a C compiler found or
        not); part of the plan cache's key."""
        return None

    def special(self, k: Kernel, device: str) -> Compiled | None:
        """A kernel the target runs its own way (a library call, a kernel written in Python),
        or None to lower, render and compile it."""
        return None

    def render(self, ir) -> tuple:
        """(source, symbol) of kernel IR ``ir`` in the target's dialect."""
        raise NotImplementedError

    def load(self, source: str, symbol: str, device: str):
        """The compiled, loaded kernel (through the compile cache), or None where the target
        cannot load code on this machine (the plan is only shown)."""
        raise NotImplementedError

    def precompile(self, sources: dict, device: str) -> None:
        """Compile a new plan's kernel sources (``{symbol: source}``, each distinct) before
        they load one by one, at once where the target can (``load`` then finds them)."""

    def program(self, plan: Plan, compiled: list, order: list, roots: list, device: str):
        """The target's program: launch steps over ``plan``'s kernels, compiled as
        ``compiled`` says."""
        raise NotImplementedError

    def interprets(self, order: list, kernels: int) -> bool:
        """Whether a new plan over the DAG ``order``, with ``kernels`` kernels not compiled
        yet, runs those through NumPy, node by node, until it has run long enough to be worth
        compiling."""
        return False

    def available(self, source: str) -> bool:
        """Whether ``source`` loads without compiling (loaded, or in the compile cache)."""
        return True

    def tier_up(self, program, order: list) -> bool:
        """Whether a program that interprets kernels (``program.interpreted`` seconds so far,
        ``program.waiting`` kernels) is to be compiled now, on this evaluation over ``order``."""
        return True

    def any_size(self, program) -> bool:
        """Whether ``program`` evaluates every DAG of its structure whatever its sizes, strides
        and offsets (every kernel run through NumPy, node by node, from the DAG's own nodes):
        then a new size of that structure takes it, unplanned (``program``)."""
        return False

    def for_size(self, program, order: list):
        """A copy of ``program`` (``any_size``) for the DAG ``order`` of new sizes, with its
        own count of the time it runs before it compiles; None where ``order`` is to be
        planned anew."""
        return None


def bindings(k: Kernel, c: Compiled, pos: dict) -> dict:
    """What every backend's launch step holds of plan kernel ``k`` compiled as ``c``: the
    positions (in the DAG's order, ``pos``) of its nodes, inputs and outputs, and what its
    lowered form binds (sizes, constants and their layout, error slots, floating-point checks)."""
    lowered = c.lowered
    return dict(
        nodes=tuple(pos[id(n)] for n in k.nodes),
        inputs=tuple(pos[id(n)] for n in k.inputs),
        outputs=tuple(pos[id(n)] for n in k.outputs),
        params=tuple(lowered.params) if lowered else (),
        consts=tuple((pos[id(n)], part) for n, part in lowered.consts) if lowered else (),
        layout=tuple(lowered.const_layout) if lowered else (),
        checks=tuple((pos[id(n)], j) for n, j in lowered.checks) if lowered else (),
        fp=bool(lowered.kernel.fp or lowered.kernel.fp_notes) if lowered else False,
        fp_outputs=lowered.kernel.fp_outputs if lowered else False,
        fenv=lowered.kernel.fenv if lowered else False,
    )


def symbol_of(body: str) -> tuple:
    """(source, symbol) of a rendered kernel named ``KERNEL``: the symbol is the body's hash,
    so kernels that compute the same thing in different plans (each sweep of a loop) share
    one source text and compile once."""
    symbol = "nl_" + hashlib.sha256(body.encode()).hexdigest()[:16]
    return body.replace("KERNEL", symbol), symbol


def _prepared(k: Kernel, target: Target, device: str) -> tuple:
    """``(compiled, None, None, None)`` for a kernel the target runs its own way or NumPy
    runs, else ``(None, lowered, source, symbol)``: lowered and rendered, not yet compiled."""
    special = target.special(k, device)
    if special is not None:
        return special, None, None, None
    try:
        lowered = lower(k)
    except Unsupported as why:
        if config.DEBUG >= 2:
            print(f"numloom: {k.name} runs through NumPy on the host: {why}", file=sys.stderr)
        return Compiled(), None, None, None
    if config.DEBUG >= 3:
        print(f"numloom: kernel IR of {k.name}:\n{lowered.kernel}", file=sys.stderr)
    source, symbol = target.render(replace(lowered.kernel, name="KERNEL"))
    named = f"nl_{_hint(lowered.kernel.kind, k.name)}_{symbol[3:]}"  # (nl_map_divide_<hash>)
    return None, lowered, source.replace(symbol, named), named


def _distinct(kernels: list) -> int:
    """About how many distinct sources ``kernels`` compile to (kernels alike in structure,
    as a chunked program's or a loop's are, share one source and compile once): those of
    distinct kinds, node structures (``Node.sid``) and inputs. A plan of many kernels waits
    for its runs to have taken ``COMPILE_AFTER_MS`` for each of these, not for each kernel."""
    return len({(k.kind, tuple(n.sid for n in k.nodes), tuple(n.sid for n in k.inputs))
                for k in kernels})  # fmt: skip


def _hint(kind: str, name: str) -> str:
    """A short readable part of a kernel's symbol: its kind and the operation that ends it
    (``map_divide``, ``reduce_sum``), for profilers' timelines."""
    op = name.split("_", 1)[-1]  # (plan kernel names are k<i>_<operation>)
    return "_".join(filter(None, (kind, "".join(c for c in op if c.isalnum() or c == "_")[:24])))


def _loaded(prepared: tuple, target: Target, device: str) -> Compiled:
    done, lowered, source, symbol = prepared
    if done is not None:
        return done
    return Compiled(target.load(source, symbol, device), source, lowered)


LOOKED_UP = 128  # the most kernels of a plan that may run through NumPy looked up in the cache


def build(order: list, roots: list, device: str, target: Target, interpret: bool = False,
          general=None):  # fmt: skip
    """The target's program evaluating ``roots`` (uncached). Its kernels are lowered and
    rendered first, then the new ones compile together (``Target.precompile``), then load.
    ``interpret``: the kernels that would compile run through NumPy instead, where the target
    says so, those of a plan of many kernels not even lowered (the program's ``interpreted``
    then counts the seconds that takes and ``waiting`` the sources those kernels would compile,
    ``_distinct``'s count for a large plan; ``Target.tier_up``: then they compile, or load
    from the compile cache). ``general``: the DAG's key without sizes (``dag.generic_key``,
    with the device and variant), where a template planned at other sizes may plan it
    (``_templated``)."""
    with phase("numloom: plan"):
        made = _templated(order, roots, device, target, general) if general else None
        plan, prepared = made or (schedule(roots, device, order), None)
        waiting, distinct = [], 0
        if interpret:
            special = [target.special(k, device) for k in plan.kernels]
            waiting = [i for i, c in enumerate(special) if c is None]
            distinct = len(waiting) if len(waiting) <= LOOKED_UP else _distinct(
                [plan.kernels[i] for i in waiting])  # fmt: skip
            if not waiting or not target.interprets(order, distinct):
                waiting = []
            elif len(waiting) <= LOOKED_UP or prepared:  # (those the cache holds load now)
                prepared = prepared or [_prepared(k, target, device) for k in plan.kernels]
                waiting = [i for i, p in enumerate(prepared)
                           if p[0] is None and not target.available(p[2])]  # fmt: skip
                distinct = len(waiting)
                for i in waiting:
                    prepared[i] = (Compiled(), None, None, None)
            else:  # (a large plan, as a deep graph's flush makes: not lowered until then)
                prepared = [(c or Compiled(), None, None, None) for c in special]
        if prepared is None:
            prepared = [_prepared(k, target, device) for k in plan.kernels]
    with phase("numloom: compile"):
        sources = {p[3]: p[2] for p in prepared if p[0] is None}
        if len(sources) > 1:
            target.precompile(sources, device)
        compiled = [_loaded(p, target, device) for p in prepared]
    program = target.program(plan, compiled, order, roots, device)
    if waiting:
        program.interpreted, program.waiting = 0.0, distinct
    if config.DEBUG >= 2:
        print(_describe(program.plan), file=sys.stderr)
    return program


def program(order: list, roots: list, device: str, target: Target, signature=None,
            interpret: bool = False):  # fmt: skip
    """The target's program evaluating ``roots``, cached by the DAG's structure (``signature``:
    that structure's key, when the caller has it). ``interpret``: a new plan may run through
    NumPy before it compiles, where the target says so (a sync's evaluation; ``numloom.jit``
    compiles at once)."""
    key = (device, target.variant(), signature or structure_key(order, roots)[1])
    cached = target.plans.get(key)
    if cached is not None:
        count("plan_cache_hits")
        if getattr(cached, "interpreted", None) is None or (
                interpret and not target.tier_up(cached, order)):  # fmt: skip
            return cached
        program = target.plans.put(key, build(order, roots, device, target))  # (compiled now)
        _share(program, target, _general(order, key))
        return program
    general = _general(order, key)
    if not interpret:
        return target.plans.put(key, build(order, roots, device, target, general=general))
    # A structure seen at other sizes serves these sizes too, its kernels run through NumPy
    # from this DAG's nodes (where the target says so): a loop over growing slices (a split
    # search's x[:i]) plans once, not at each i
    if general is not None:
        shared = _ANY_SIZE.get(general)
        if shared is not None:
            program = target.for_size(shared, order)
            if program is not None:
                count("plans_reused")
                return target.plans.keep(key, program)
    program = target.plans.put(key, build(order, roots, device, target, interpret, general))
    _share(program, target, general)
    return program


def _general(order: list, key: tuple):
    """The plan cache's ``key`` of the DAG ``order`` without its sizes (``dag.generic_key``,
    with the device and variant), or None where it has none."""
    general = generic_key(order, key[2])
    return None if general is None else (key[0], key[1], general)


def _share(program, target: Target, general) -> None:
    """Keep ``program`` for new sizes of its structure (``general``: its key without sizes,
    with the device and variant) where the target says it serves them (``Target.any_size``)."""
    if general is None or not target.any_size(program):
        return
    if len(_ANY_SIZE) >= _ANY_SIZE_BOUND:
        _drop_oldest(_ANY_SIZE)
    _ANY_SIZE[general] = program


def _drop_oldest(entries: dict) -> None:
    """Drop the oldest entry of ``entries`` (another device's thread may be adding one)."""
    try:
        entries.pop(next(iter(entries)), None)
    except (RuntimeError, StopIteration):  # (changed meanwhile, or emptied: nothing dropped)
        pass


# (device, variant, structure key without sizes) -> a program that serves every size
# (``Target.any_size``), the oldest dropped first beyond the bound
_ANY_SIZE: dict = {}
_ANY_SIZE_BOUND = 256


# --- plans generic in sizes (symbolic.py) --------------------------------------------------


@dataclass(frozen=True)
class _KernelTemplate:
    """One kernel of a template: its nodes as positions in the DAG's order, and its IR and
    source as planned, with the expressions of its arguments (``params(N)``)."""

    name: str
    kind: str
    reason: str
    nodes: tuple
    inputs: tuple
    outputs: tuple
    special: bool  # the target runs it its own way (``Target.special``)
    lowered: Lowered | None = None  # (its params left out: ``params``; None: through NumPy)
    params: object = None  # N -> the kernel's arguments (sizes, strides, offsets)
    source: str | None = None
    symbol: str | None = None


@dataclass(frozen=True)
class Template:
    """A structure's plan for every size that answers ``holds`` alike (symbolic.py)."""

    holds: object  # N -> bool
    guards: int  # how many questions ``holds`` asks
    outputs: tuple
    kernels: tuple

    def plan(self, order: list, device: str, target: Target) -> tuple:
        """``(plan, prepared)`` of the DAG ``order`` (``holds`` it): ``build``'s plan and each
        kernel's ``_prepared``."""
        kernels, prepared = [], []
        for t in self.kernels:
            k = Kernel(name=t.name, kind=t.kind, reason=t.reason,
                       nodes=tuple([order[i] for i in t.nodes]),
                       inputs=tuple([order[i] for i in t.inputs]),
                       outputs=tuple([order[i] for i in t.outputs]))  # fmt: skip
            kernels.append(k)
            if t.special:
                prepared.append((target.special(k, device), None, None, None))
            elif t.lowered is None:
                prepared.append((Compiled(), None, None, None))
            else:
                low = t.lowered
                lowered = Lowered(low.kernel, t.params(order),
                                  tuple([(order[i], part) for i, part in low.consts]),
                                  low.const_layout,
                                  tuple([(order[i], j) for i, j in low.checks]))  # fmt: skip
                prepared.append((None, lowered, t.source, t.symbol))
        plan = Plan(outputs=tuple([order[i] for i in self.outputs]), kernels=tuple(kernels),
                    device=device, order=tuple(order))  # fmt: skip
        return plan, prepared


def template(order: list, roots: list, device: str, target: Target):
    """The template of the DAG ``order``'s structure (``symbolic.py``): planned once with
    symbolic sizes; None where a size is used in a way it cannot follow."""
    rec = symbolic.Recorder()
    shadow = symbolic.shadow(order, rec)
    pos = {id(n): i for i, n in enumerate(shadow)}
    at = {id(n): i for i, n in enumerate(order)}
    try:
        plan = schedule([shadow[at[id(r)]] for r in roots], device, shadow)
        kernels = []
        for k in plan.kernels:
            fields = dict(name=k.name, kind=k.kind, reason=k.reason,
                          nodes=tuple(pos[id(n)] for n in k.nodes),
                          inputs=tuple(pos[id(n)] for n in k.inputs),
                          outputs=tuple(pos[id(n)] for n in k.outputs))  # fmt: skip
            if target.special(k, device) is not None:
                kernels.append(_KernelTemplate(special=True, **fields))
                continue
            try:
                low = lower(k)
            except Unsupported:
                kernels.append(_KernelTemplate(special=False, **fields))
                continue
            _pin_sizes(low.kernel)  # (a size left in the IR is a constant of its text)
            source, symbol = target.render(replace(low.kernel, name="KERNEL"))
            named = f"nl_{_hint(low.kernel.kind, k.name)}_{symbol[3:]}"
            params = symbolic.function([symbolic.value_text(p) for p in low.params], "tuple")
            low = replace(low, params=(), consts=tuple((pos[id(n)], p) for n, p in low.consts),
                          checks=tuple((pos[id(n)], j) for n, j in low.checks))  # fmt: skip
            kernels.append(_KernelTemplate(special=False, lowered=low, params=params,
                                           source=source.replace(symbol, named), symbol=named,
                                           **fields))  # fmt: skip
        outputs = tuple(pos[id(n)] for n in plan.outputs)
    except Exception as why:  # (a size it cannot follow; anything else is raised in a check)
        if TEMPLATES == "check" and not isinstance(why, (symbolic.Unfollowed, RecursionError)):
            raise
        if config.DEBUG >= 2:
            print(f"numloom: no template of this plan's structure: {why}", file=sys.stderr)
        return None
    guards = list(rec.guards)
    return Template(symbolic.function(guards, "guard"), len(guards), outputs, tuple(kernels))


def _pin_sizes(value) -> None:
    """Record the exact value of every ``Sym`` inside ``value`` (IR dataclasses, tuples)."""
    if type(value) is symbolic.Sym:
        value.pinned()
    elif isinstance(value, (tuple, list)):
        for v in value:
            _pin_sizes(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _pin_sizes(getattr(value, name))


def _templated(order: list, roots: list, device: str, target: Target, general) -> tuple | None:
    """``(plan, prepared)`` of the DAG ``order`` from a template of its structure (``general``:
    its key without sizes), or None: it is planned anew. A structure's template is made the
    second time it is planned (at a second size); a size that answers its questions otherwise
    gets a template of its own, up to ``TEMPLATES_PER_STRUCTURE``."""
    if TEMPLATES == "0":
        return None
    found = _TEMPLATES.get(general)
    if found is None:
        if len(_TEMPLATES) >= _TEMPLATES_BOUND:
            _drop_oldest(_TEMPLATES)
        _TEMPLATES[general] = []  # (planned once: a template when it is planned again)
        return None
    for t in found:
        if t.holds(order):
            made = t.plan(order, device, target)
            count("plans_from_templates")
            if TEMPLATES == "check":
                _check(made, order, roots, device, target)
            return made
    if len(found) >= TEMPLATES_PER_STRUCTURE or _NO_TEMPLATE in found:
        return None
    t = template(order, roots, device, target)
    if t is None:
        found.append(_NO_TEMPLATE)
        return None
    if not t.holds(order):
        raise AssertionError("numloom: a template does not hold for the DAG it was made of")
    found.append(t)
    made = t.plan(order, device, target)
    if TEMPLATES == "check":
        _check(made, order, roots, device, target)
    return made


def _check(made: tuple, order: list, roots: list, device: str, target: Target) -> None:
    """Raise where the template's plan of ``order`` differs from its plan made anew
    (``NUMLOOM_PLAN_TEMPLATES=check``)."""
    plan, prepared = made
    fresh = schedule(roots, device, order)
    problems = []
    if len(plan.kernels) != len(fresh.kernels):
        problems.append(f"{len(plan.kernels)} kernels, planned anew {len(fresh.kernels)}")
    for k, f, p in zip(plan.kernels, fresh.kernels, prepared):
        ids = lambda nodes: [id(n) for n in nodes]  # noqa: E731
        for part in ("name", "kind", "reason"):
            if getattr(k, part) != getattr(f, part):
                problems.append(f"{k.name}: {part} {getattr(k, part)!r} != {getattr(f, part)!r}")
        for part in ("nodes", "inputs", "outputs"):
            if ids(getattr(k, part)) != ids(getattr(f, part)):
                problems.append(f"{k.name}: other {part}")
        q = _prepared(f, target, device)
        if (p[0] is None) != (q[0] is None):
            problems.append(f"{k.name}: special or through NumPy: {p[0]} != {q[0]}")
        elif p[1] is not None or q[1] is not None:
            a, b = p[1], q[1]
            if a is None or b is None:
                problems.append(f"{k.name}: lowered {a is not None}, anew {b is not None}")
            elif a.kernel != b.kernel or p[2] != q[2]:
                problems.append(f"{k.name}: other IR:\n{a.kernel}\nplanned anew:\n{b.kernel}")
            elif tuple(a.params) != tuple(b.params):
                problems.append(f"{k.name}: arguments {a.params} != {b.params}")
            elif a.const_layout != b.const_layout or [(id(n), x) for n, x in a.consts] != [
                    (id(n), x) for n, x in b.consts] or [(id(n), x) for n, x in a.checks] != [
                    (id(n), x) for n, x in b.checks]:  # fmt: skip
                problems.append(f"{k.name}: other constants or checks")
    if problems:
        raise AssertionError("numloom: a template's plan differs from the plan made anew:\n"
                             + "\n".join(problems[:8]))  # fmt: skip


_NO_TEMPLATE = Template(lambda N: False, 0, (), ())  # (a structure whose sizes it cannot follow)
# NUMLOOM_PLAN_TEMPLATES: "1" (default), "0" (every new size planned anew), "check" (a
# template's plans checked against plans made anew: the test suite)
TEMPLATES = config.env("NUMLOOM_PLAN_TEMPLATES", "1")
TEMPLATES_PER_STRUCTURE = 4
# structure key without sizes (with the device and variant) -> its templates
_TEMPLATES: dict = {}
_TEMPLATES_BOUND = 1024


def _describe(plan: Plan) -> str:
    """The plan without kernel sources (NUMLOOM_DEBUG=2)."""
    return str(replace(plan, kernels=tuple(replace(k, source=None) for k in plan.kernels)))


class PlanCache:
    """Programs by structure key, least recently used first, at most ``size()`` of them (the
    least recently used is dropped): what ``plans_cached`` and ``plan_cache_evictions`` count.
    A cached program holds no node (``schedule.skeleton``), so no user data."""

    def __init__(self, size):
        self.size = size  # a function: the bound (a module constant a test may change)
        self.entries: dict = {}
        register_plan_cache(self)

    def get(self, key):
        program = self.entries.pop(key, None)
        if program is not None:
            self.entries[key] = program  # most recently used last
        return program

    def put(self, key, program):
        """Keep ``program`` without its DAG's nodes (its plan's and steps' kernels as
        ``schedule.skeleton`` leaves them); returns what is kept."""
        program = replace(program, plan=skeleton(program.plan),
                          steps=tuple(replace(s, kernel=skeleton_kernel(s.kernel))
                                      for s in program.steps))  # fmt: skip
        return self.keep(key, program)

    def keep(self, key, program):
        """Keep ``program``, which holds no node already (a copy of a kept one)."""
        self.entries[key] = program
        while len(self.entries) > max(self.size(), 1):
            self.entries.pop(next(iter(self.entries)))
            count("plan_cache_evictions")
        return program

    def __len__(self) -> int:
        return len(self.entries)

    def values(self):
        return list(self.entries.values())


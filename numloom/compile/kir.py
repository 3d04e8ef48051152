"""The kernel IR: what a kernel computes, independent of the language it is rendered in.

A kernel is a loop nest over an iteration space (``outer`` extents, and ``inner`` extents for a
reduction), a list of ``Let`` statements computing one point (C expressions over the loop
coordinates ``i0, i1, ...`` and ``r0, r1, ...``), and what happens to the result: ``Store``s to
output buffers, or a ``Reduction`` into an accumulator. Every size, stride and offset is a kernel
argument (``P[k]``), every scalar constant comes from the constant block (``K``), so one kernel
source serves every size and every value of the constants.

Kernels written in Python (``numloom.cuda.jit``, compiled ``numloom.vectorize`` functions) are
``UserKernel``s and ``Function``s: structured statements (``Assign``, ``If``, ``While``, ``For``,
``Barrier``...) over C expressions, each statement carrying the Python line it comes from.
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
    # NumPy's order of a float sum, where the C renderer keeps it (results equal NumPy's bit for
    # bit): ``(run, type)``, the number of trailing reduction axes NumPy folds as one pairwise
    # run (the axes before it fold in turn) and the C type it adds in; or ``(run, type, group,
    # chunk)``, NumPy's buffers of a whole-array sum (sum_order._buffered): the ``group`` axes
    # before the run are walked as one flat index, ``chunk`` (a C expression) of its positions
    # times the run one pairwise sum, added in turn. None: any order.
    numpy_order: tuple | None = None


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
    # a write at computed positions that may repeat with different values: the last one stays
    last_wins: bool = False
    functions: tuple = ()  # Structs and Functions the expressions call (compiled vectorize)
    fp: tuple = ()  # ("int" or "cast", C expression): a CPU map kernel's integer checks (fperrors.py)
    # a reduction of operations that can raise: the launcher checks its float results are finite
    fp_outputs: bool = False
    # a value carries a note (numloom.h's NL_FE_F...): a GPU kernel gets a flag word
    fp_notes: bool = False
    # an operation that can raise (fperrors.can_raise): a C kernel reads the IEEE flags
    fenv: bool = False
    # a write through a box view whose old version is input buffer ``inplace`` (``in0``): a C
    # kernel skips the copy where the launcher hands it that buffer as its output (cpu.py)
    inplace: str | None = None

    def __str__(self) -> str:
        lines = [f"kernel {self.name} [{self.kind}] outer={list(self.outer)} "
                 f"inner={list(self.inner)}"]  # fmt: skip
        lines += [f"  {b.ctype} *{b.name}{' (out)' if b.output else ''}" for b in self.buffers]
        lines += [f"  {s.ctype} {s.name} = {s.expr}" for s in self.prologue + self.body]
        lines += [f"  {s.buffer}[{s.index}] = {s.value}" for s in self.stores]
        if self.reduction:
            r = self.reduction
            lines.append(f"  {r.kind}({r.value}) -> {r.out.buffer}[{r.out.index}]")
            if r.numpy_order is not None and len(r.numpy_order) == 4:
                lines.append(f"  in NumPy's buffers of {r.numpy_order[3]} x the last "
                             f"{r.numpy_order[0]} axes")  # fmt: skip
        return "\n".join(lines)


# --- structured statements: kernels and functions written in Python ------------------------------


@dataclass(frozen=True)
class Assign:
    """``target = value;`` (``target`` is a local or an element of an array)."""

    target: str
    value: str
    line: int = 0


@dataclass(frozen=True)
class Do:
    """``expr;``: an expression for its effect (an atomic whose old value is unused)."""

    expr: str
    line: int = 0


@dataclass(frozen=True)
class If:
    cond: str
    then: tuple
    orelse: tuple = ()
    line: int = 0


@dataclass(frozen=True)
class While:
    cond: str
    body: tuple
    line: int = 0


@dataclass(frozen=True)
class For:
    """``for (var = start; step > 0 ? var < stop : var > stop; var += step)``; ``stop`` and
    ``step`` are locals or literals (Python evaluates a range's bounds once). ``sign`` is the
    step's sign when known (1 or -1), else 0."""

    var: str
    start: str
    stop: str
    step: str
    body: tuple
    sign: int = 1
    line: int = 0


@dataclass(frozen=True)
class Break:
    line: int = 0


@dataclass(frozen=True)
class Continue:
    line: int = 0


@dataclass(frozen=True)
class Return:
    value: str | None = None
    line: int = 0


@dataclass(frozen=True)
class Barrier:
    """``cuda.syncthreads()`` (``kind="block"``) or ``cuda.syncwarp(mask)`` (``"warp"``)."""

    kind: str = "block"
    mask: str = "0xffffffffu"
    line: int = 0


@dataclass(frozen=True)
class Shuffle:
    """``target = value`` of another lane of the warp: ``kind`` is idx, up, down or xor and
    ``lane`` the source lane, the delta or the lane mask (CUDA's ``__shfl_*_sync``)."""

    target: str
    kind: str
    value: str
    lane: str
    ctype: str
    mask: str = "0xffffffffu"
    line: int = 0


@dataclass(frozen=True)
class Local:
    """A local variable: a scalar, or an array of ``size`` elements (``cuda.local.array``) or,
    with ``space="shared"``, a block's shared array (``size`` 0: the dynamic shared memory)."""

    name: str
    ctype: str
    size: int | None = None
    space: str = "thread"


@dataclass(frozen=True)
class Struct:
    """``typedef struct { ctype f0; ctype f1; ... } name;``: a tuple a function returns."""

    name: str
    fields: tuple


@dataclass(frozen=True)
class Table:
    """A read-only array compiled into the program: ``NL_TABLE ctype name[] = {values};``."""

    name: str
    ctype: str
    values: tuple


@dataclass(frozen=True)
class Function:
    """A device function: ``NL_FN ret name(params) { locals; body }``."""

    name: str
    ret: str
    params: tuple  # (ctype, name) pairs
    locals: tuple
    body: tuple
    lines: tuple = ()  # (line, Python source) for the comments beside the statements


@dataclass(frozen=True)
class Param:
    """A kernel argument: an array (a pointer, its shape and, unless C-contiguous, its strides)
    or a scalar (read from the constant block)."""

    name: str
    ctype: str
    ndim: int | None = None  # None for a scalar
    contiguous: bool = False
    written: bool = False


@dataclass(frozen=True)
class UserKernel:
    """A kernel written in Python: ``numloom.cuda.jit``'s kernels."""

    name: str
    params: tuple
    locals: tuple
    body: tuple
    functions: tuple = ()
    lines: tuple = ()
    checks: bool = False  # indices are bounds-checked into the error buffer
    kind: str = "kernel"

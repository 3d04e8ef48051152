"""Lower a scheduled kernel (a group of fused nodes) to the kernel IR.

``lower(kernel) -> Lowered`` walks the group from its outputs, emitting one ``Let`` per
(node, index) pair, so shared subexpressions are computed once and code grows with the number of
nodes, not paths. Indices are coordinate tuples of C expressions (``i0, i1`` for mapped axes,
``r0`` for reduced ones) or, when every access is contiguous, one flat index ``i``. Sizes,
strides and offsets become arguments (``P[k]``) and constants come from the constant block
(``K``), so the source text depends only on the structure of the computation.

The C expression of each op is one row of ``SNIPPETS``; NumPy-exact helpers live in
``include/numloom.h``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

import numpy as np

from ..core import config, fperrors
from ..core.dag import Node, Op, contiguous_strides
from . import kir
from .schedule import Kernel, broadcast_dims, trailing_axes
from .snippets import (
    COMPLEX_SNIPPETS,
    FLAGS_DATA,
    SNIPPETS,
    Unsupported,
    _is_complex,
    _loaded,
    _mixed_comparison,
    cast,
    compute_type,
    converted,
    storage_type,
)
from .sum_order import f_ordered_sum, numpy_sum_order
from .symbolic import Sym
from .ufunc_table import USER_GUFUNCS, USER_UFUNCS

# --- lowering ------------------------------------------------------------------------------------


@dataclass
class Lowered:
    """The kernel IR plus how to bind it: which plan nodes feed each argument."""

    kernel: kir.Kernel
    params: tuple  # values of P[0], P[1], ... (sizes, strides, offsets)
    consts: tuple  # (node, part) pairs whose values fill the constant block, in order
    const_layout: tuple  # (offset, dtype) of each entry of the constant block
    checks: tuple = ()  # (node, k) that flags each error slot of the ``err`` buffer


def notes(kernel: Kernel) -> set:
    """The ids of the nodes whose float values a GPU kernel checks where they are made
    (numloom.h's ``NL_FE_F``; fperrors.py): each operation that can raise an error NumPy
    reports (overflow, division by zero, an invalid value), unless every operation taking
    its value passes an inf or a NaN on (``fperrors.PROPAGATING``) to a value that is checked.
    ``np.where(x != 0, 1 / x, 0)`` notes ``1 / x``, which the select may hide; Black-Scholes'
    formula notes its exponentials and logarithm (an ``exp`` of ``-inf`` is 0) and its
    outputs, not each add and multiply between them. A pure reduction's float sum is checked
    where it is stored, so what folds into it is not noted."""
    outputs = {id(o) for o in kernel.outputs}
    members = {id(n) for n in kernel.nodes}
    consumers: dict = {}
    for c in kernel.nodes:
        for s in c.srcs:
            if id(s) in members:
                consumers.setdefault(id(s), []).append(c)
    stored_check = (kernel.kind == "reduce" and len(kernel.outputs) == 1
                    and kernel.outputs[0].op is Op.REDUCE
                    and all(n.op is not Op.REDUCE or n is kernel.outputs[0] for n in kernel.nodes))  # fmt: skip
    safe: dict = {}
    noted = set()
    for n in reversed(kernel.nodes):
        if stored_check and n is kernel.outputs[0]:
            safe[id(n)] = n.arg[0] in ("sum", "prod") and n.dtype.kind == "f"
            continue
        takers = consumers.get(id(n), ())
        if id(n) not in outputs and takers and all(
            _propagates(c, n) and safe.get(id(c), False) for c in takers
        ):
            safe[id(n)] = True
        elif _float_raising(n):
            noted.add(id(n))
            safe[id(n)] = True
        else:
            safe[id(n)] = False
    return noted


def _float_raising(n: Node) -> bool:
    """An operation whose float (or complex) value shows the errors it raises (an inf or a
    NaN)."""
    if n.op is Op.MAP:
        loop = n.srcs[1 if n.arg == "where" else 0].dtype
        return (np.dtype(loop).kind in "fc" and n.dtype.kind in "fc"
                and fperrors.raising(n.arg, loop))  # fmt: skip
    if n.op is Op.CAST:
        return n.dtype.kind == "f" and fperrors.cast_raising(n.srcs[0].dtype, n.dtype)
    return n.op in (Op.REDUCE, Op.SCAN) and fperrors.can_raise(n)


def _propagates(c: Node, n: Node) -> bool:
    """Whether ``c``'s value is an inf or a NaN wherever its operand ``n`` (a float) is (or,
    for a cast to an integer, is checked itself)."""
    if c.op is Op.MAP:
        if c.arg not in fperrors.PROPAGATING or c.dtype.kind != "f":
            return False
        at = fperrors.PROPAGATING[c.arg]
        return at is None or any(c.srcs[k] is n for k in at if k < len(c.srcs))
    if c.op is Op.CAST:
        return c.dtype.kind == "f" or (c.dtype.kind in "iu" and n.dtype.kind == "f")
    if c.op in (Op.VIEW, Op.CONCAT):
        return True
    if c.op is Op.GATHER:
        return c.srcs[0] is n
    if c.op is Op.REDUCE:
        return c.arg[0] in ("sum", "prod")
    return c.op is Op.SCAN


class _Lowerer:
    def __init__(self, kernel: Kernel):
        self.k = kernel
        # (key, stride) of each distinct stride given an argument: strides share one where
        # they compare equal (compared, not hashed: a template's sizes record each comparison)
        self.strides: list = []
        self.members = {id(n) for n in kernel.nodes}
        self.outputs = {id(n): j for j, n in enumerate(kernel.outputs)}
        self.inputs = {id(n): j for j, n in enumerate(kernel.inputs)}
        self.params: list = []
        self.param_keys: dict = {}
        self.consts: list = []
        self.const_layout: list = []
        self.const_offset = 0
        self.prologue: list = []
        self.body: list = []
        self.memo: dict = {}
        self.row_locals: dict = {}  # a row kernel's reductions computed so far: node id -> name
        self.checks: list = []  # (node, k) flagging bad data in each error slot
        self.locals = 0
        self.functions: list = []  # definitions compiled vectorize functions need
        self.fp: list = []  # (check, C expression): the CPU's integer checks (fperrors.py)
        self.fp_raising = False  # an operation of the kernel can set an error flag
        self.notes = notes(kernel)  # ids of the float values a GPU checks where they are made
        self.fp_notes = False  # a value of the kernel carries a note (numloom.h's NL_FE_F)
        # the values a select chooses from: a CPU compiler may compute one only where it is
        # chosen (a masked vector division), so its IEEE flags cannot stand for it
        self.selected = {id(s) for n in kernel.nodes if n.op is Op.MAP and n.arg == "where"
                         for s in n.srcs[1:]}  # fmt: skip

    def user_function(self, name: str):
        """The snippet of a compiled ``numloom.vectorize`` function (its definitions are
        added to the kernel)."""
        user = USER_UFUNCS.get(name)
        if user is None:
            return None
        self.define(user.definitions)
        return user.snippet

    def define(self, definitions) -> None:
        """Add the structs and device functions a compiled Python function needs, once."""
        for item in definitions:
            if item not in self.functions:
                self.functions.append(item)

    # -- arguments and locals --

    def param(self, key, value: int) -> str:
        if key not in self.param_keys:
            self.param_keys[key] = f"P[{len(self.params)}]"
            self.params.append(value if type(value) is Sym else int(value))
        return self.param_keys[key]

    def let(self, ctype: str, expr: str, invariant: bool = False) -> str:
        # Names come from a counter: a kernel's passes start new bodies, names never repeat.
        self.locals += 1
        name = f"{'c' if invariant else 't'}{self.locals}"
        (self.prologue if invariant else self.body).append(kir.Let(name, ctype, expr))
        return name

    def const(self, n: Node, dtype, part: str = "value") -> str:
        """A local holding a constant from the constant block: a CONST's value, or an IOTA's
        start or step (``part``); the block is refilled from each evaluation's nodes."""
        key = ("const", id(n), part)
        if key not in self.memo:
            size = np.dtype(dtype).itemsize
            self.const_offset = -(-self.const_offset // size) * size
            self.consts.append((n, part))
            self.const_layout.append((self.const_offset, np.dtype(dtype)))
            read = f"*(const {storage_type(dtype)} *)(K + {self.const_offset})"
            self.const_offset += size
            ctype = compute_type(dtype)
            self.memo[key] = self.let(ctype, converted(ctype, read), True)
        return self.memo[key]

    def error_slot(self, n: Node, k: int) -> str:
        """A new slot of the ``err`` buffer (a flag and a value) where the code computing node
        ``n`` flags bad data (``k``: which of its checks; a gather has one per index array)."""
        self.checks.append((n, k))
        return f"err + {2 * (len(self.checks) - 1)}"

    # -- indices --

    def linear(self, coords: tuple, shape: tuple, key) -> str:
        """C-order flat index of ``coords`` in ``shape`` (strides as arguments)."""
        strides = contiguous_strides(shape)
        terms = [self.term(c, s, (key, "cs", k), n) for k, (c, s, n)
                 in enumerate(zip(coords, strides, shape))]  # fmt: skip
        return " + ".join(t for t in terms if t) or "0"

    def term(self, coord: str, stride: int, key, size: int = 2) -> str:
        """``coord`` times ``stride`` (``key`` names the stride's role). Strides of one value
        are one size argument: the views of one array (a stencil's neighbours) then index
        it as one address plus an offset each, which the compiler computes once."""
        if stride == 0 or size == 1:
            return ""
        if stride == 1:
            return coord
        return f"{coord} * {self.param(self.stride_key(stride), stride)}"

    def stride_key(self, stride) -> tuple:
        for key, value in self.strides:
            if value == stride:
                return key
        self.strides.append((("stride", len(self.strides)), stride))
        return self.strides[-1][0]

    def unravel(self, flat: str, shape: tuple, key) -> tuple:
        strides = contiguous_strides(shape)
        coords = []
        for k, (n, s) in enumerate(zip(shape, strides)):
            if n == 1:
                coords.append("0")
                continue
            q = flat if s == 1 else f"({flat}) / {self.param((key, 'us', k), s)}"
            coords.append(self.let("int64_t", q if k == 0 else
                                   f"({q}) % {self.param((key, 'un', k), n)}"))  # fmt: skip
        return tuple(coords)

    # -- values --

    def value(self, n: Node, idx) -> str:
        """The local holding node ``n`` at index ``idx`` (("flat", e) or ("coords", tuple))."""
        if n.op is Op.CONST:
            return self.const(n, n.dtype)
        key = (id(n), idx)
        if key not in self.memo:
            self.memo[key] = self._value(n, idx)
        return self.memo[key]

    def _value(self, n: Node, idx) -> str:
        if id(n) in self.inputs or n.op is Op.BUFFER:
            return self.load(n, idx)
        if id(n) not in self.members:
            raise Unsupported(f"{n} is neither an input nor part of the kernel")
        op = n.op
        if op is Op.REDUCE and id(n) in self.row_locals:
            return self.row_locals[id(n)]
        if op is Op.MAP:
            loop = n.srcs[0].dtype if n.arg not in ("where",) else n.srcs[1].dtype
            if _is_complex(loop):
                return self.complex_map(n, loop, idx)
            snippet = SNIPPETS.get(n.arg) or self.user_function(n.arg)
            if snippet is None:
                raise Unsupported(f"no C snippet for {n.arg}")
            args = [self.value(s, idx) for s in n.srcs]
            if n.arg in FLAGS_DATA and FLAGS_DATA[n.arg](loop):
                args.append(self.error_slot(n, 0))
            expr = _mixed_comparison(n, args) or snippet(args, loop)
            if n.dtype == np.float16:
                expr = f"nl_round_half({expr})"
            if fperrors.raising(n.arg, loop):
                self.fp_raising = True
                if np.dtype(loop).kind in "iu":  # an integer division by zero
                    self.fp.append(("int", f"({args[-1]} == 0)"))  # (the divisor)
                    self.fp_notes = True
                    expr = f"NL_FE_DIV0({expr}, {args[-1]})"
                else:
                    expr = self.noted(n, expr)
            return self.let(compute_type(n.dtype), expr)
        if op is Op.CAST:
            src = n.srcs[0]
            value = self.value(src, idx)
            expr = cast(value, src.dtype, n.dtype)
            if fperrors.cast_raising(src.dtype, n.dtype):
                self.fp_raising = True
                if n.dtype.kind in "iu":
                    # NaN or out of range ("invalid value encountered in cast"): NumPy's own
                    # cast decides, in the rerun, which of these it warns for
                    bound = 9.2e18 if n.dtype.itemsize == 8 else 2147483648.0
                    self.fp.append(("cast", f"!(fabs((double)({value})) < {bound})"))
                    self.fp_notes = True
                    expr = f"NL_FE_CAST({expr}, {value}, {bound})"
                else:  # a narrower float: overflow shows in its value
                    expr = self.noted(n, expr)
            return self.let(compute_type(n.dtype), expr)
        if op is Op.VIEW:
            return self.view(n, idx)
        if op is Op.IOTA:
            return self.iota(n, idx)
        if op is Op.CONCAT:
            return self.concat(n, idx)
        if op is Op.GATHER:
            return self.gather(n, idx)
        if op is Op.GUFUNC:
            return self.gufunc(n, idx)
        raise Unsupported(f"{op.name} inside a compiled kernel")

    def noted(self, n: Node, expr: str) -> str:
        """``expr``, the value of node ``n``, with its note if it carries one (``notes``)."""
        if id(n) not in self.notes:
            return expr
        self.fp_notes = True
        kind = compute_type(n.dtype)
        if id(n) in self.selected:  # (checked on the CPU too: "hidden", render.py)
            finite = f"{kind}_finite({expr})" if _is_complex(n.dtype) else f"isfinite({expr})"
            self.fp.append(("hidden", f"!{finite}"))
            self.fp_raising = True
        if _is_complex(n.dtype):  # (both parts noted)
            return f"NL_FE_C{n.dtype.itemsize * 8}({expr})"
        return f"NL_FE_{'D' if kind == 'double' else 'F'}({expr})"

    def complex_map(self, n: Node, loop, idx) -> str:
        snippet = COMPLEX_SNIPPETS.get(n.arg)
        if snippet is None or any(_is_complex(s.dtype) != _is_complex(loop) for s in n.srcs
                                  if not (n.arg == "where" and s is n.srcs[0])):  # fmt: skip
            raise Unsupported(f"{n.arg} on {np.dtype(loop)}")
        args = [self.value(s, idx) for s in n.srcs]
        expr = snippet(args, compute_type(loop))
        if fperrors.raising(n.arg, loop):  # (overflow: on the CPU the IEEE flags show it)
            self.fp_raising = True
            expr = self.noted(n, expr)
        return self.let(compute_type(n.dtype), expr)

    def coords(self, idx, shape: tuple, key) -> tuple:
        return idx[1] if idx[0] == "coords" else self.unravel(idx[1], shape, key)

    def load(self, n: Node, idx) -> str:
        j = self.inputs[id(n)]
        flat = idx[1] if idx[0] == "flat" else self.linear(idx[1], n.shape, ("in", j))
        return self.let(compute_type(n.dtype), _loaded(compute_type(n.dtype), j, flat))

    def view(self, n: Node, idx) -> str:
        v, src = n.arg, n.srcs[0]
        if src.op is Op.CONST:
            return self.value(src, idx)
        if id(src) in self.inputs or src.op is Op.BUFFER:
            j = self.inputs[id(src)]
            if idx[0] == "flat" and v.is_contiguous():
                off = self.param(("view", id(n), "off"), v.offset) if v.offset else ""
                flat = f"{idx[1]} + {off}" if off else idx[1]
            else:
                coords = self.coords(idx, v.shape, ("view", id(n)))
                terms = [
                    self.term(c, s, ("view", id(n), "s", k), size)
                    for k, (c, s, size) in enumerate(zip(coords, v.strides, v.shape))
                ]
                if v.offset:
                    terms.append(self.param(("view", id(n), "off"), v.offset))
                flat = " + ".join(t for t in terms if t) or "0"
            return self.let(compute_type(n.dtype), _loaded(compute_type(n.dtype), j, flat))
        mapping = broadcast_dims(v, src.shape)
        if mapping is None:
            raise Unsupported("a strided view of a computed value")
        coords = self.coords(idx, v.shape, ("view", id(n)))
        return self.value(src, ("coords", tuple("0" if k is None else coords[k] for k in mapping)))

    def concat(self, n: Node, idx) -> str:
        """A select between the pieces along the joined axis; each piece is read at coordinates
        clamped into its own extent, so every load stays in bounds."""
        axis = n.arg
        coords = self.coords(idx, n.shape, ("concat", id(n)))
        c = coords[axis]
        values, bounds, offset = [], [], 0
        for k, src in enumerate(n.srcs):
            start = self.param(("concat", id(n), k, "start"), offset)
            last = self.param(("concat", id(n), k, "last"), src.shape[axis] - 1)
            local = self.let("int64_t", f"NL_IMIN(NL_IMAX({c} - {start}, (int64_t)0), {last})")
            piece = coords[:axis] + (local,) + coords[axis + 1 :]
            values.append(self.value(src, ("coords", piece)))
            offset += src.shape[axis]
            bounds.append(self.param(("concat", id(n), k, "end"), offset))
        expr = values[-1]
        for value, end in zip(reversed(values[:-1]), reversed(bounds[:-1])):
            expr = f"({c} < {end} ? {value} : {expr})"
        return self.let(compute_type(n.dtype), expr)

    def gather(self, n: Node, idx) -> str:
        """An indirect load: the index arrays, computed at the output's coordinates, pick the
        source's coordinates. Negative indices wrap. A gather that can fail (it names the
        user's line: its indices were not checked when it was traced) records an index out of
        bounds in the kernel's error slots (the backend raises NumPy's IndexError) and reads
        element 0; the others have no error slots, so a GPU reads nothing back after them."""
        a0, src, indices = n.arg, n.srcs[0], n.srcs[1:]
        coords = self.coords(idx, n.shape, ("gather", id(n)))
        picked = coords[a0 : a0 + indices[0].ndim]
        src_coords = list(coords[:a0])
        for j, ind in enumerate(indices):
            value = self.value(ind, ("coords", picked))
            size = self.param(("gather", id(n), j), src.shape[a0 + j])
            if n.where is None:  # indices checked when it was traced: negative ones only wrap
                src_coords.append(self.let("int64_t", f"({value} < 0 ? {value} + {size} : "
                                                      f"(int64_t){value})"))  # fmt: skip
                continue
            slot = self.error_slot(n, j)
            src_coords.append(self.let("int64_t", f"nl_index({value}, {size}, {slot})"))
        src_coords += coords[a0 + indices[0].ndim :]
        return self.value(src, ("coords", tuple(src_coords)))

    def gufunc(self, n: Node, idx) -> str:
        """A compiled gufunc's result ``k`` at a loop point: its function called with each
        core operand as a pointer into memory at the point (with the core's sizes and
        strides) and each scalar operand's value there."""
        name, k = n.arg
        user = USER_GUFUNCS.get(name)
        if user is None:
            raise Unsupported(f"no compiled function for {name}")
        self.define(user.definitions)
        coords = self.coords(idx, n.shape, ("gufunc", id(n)))
        args = []
        for j, (s, t) in enumerate(zip(n.srcs, user.types)):
            core = getattr(t, "ndim", 0)
            if not core:
                args.append(self.value(s, ("coords", coords)))
                continue
            args += self.core_pointer(s, coords, core, user.pointer(j), ("gufunc", id(n), j))
        key = ("gufunc call", name, tuple(map(id, n.srcs)), idx)  # (one call for all results)
        if key not in self.memo:
            self.memo[key] = self.let(user.ret_ctype, user.call(args))
        return self.let(compute_type(n.dtype), user.result(self.memo[key], k))

    def core_pointer(self, s: Node, coords: tuple, core: int, pointer: str, key) -> list:
        """A gufunc's core operand ``s`` at loop coordinates ``coords``: the pointer to its
        first core element, then its ``core`` trailing sizes and strides (elements)."""
        if id(s) in self.inputs or s.op is Op.BUFFER:
            j, strides, offset = self.inputs[id(s)], contiguous_strides(s.shape), 0
        elif s.op is Op.VIEW and (id(s.srcs[0]) in self.inputs or s.srcs[0].op is Op.BUFFER):
            j, strides, offset = self.inputs[id(s.srcs[0])], s.arg.strides, s.arg.offset
        else:
            raise Unsupported("a gufunc's core operand that is not in memory")
        loop = len(coords)
        terms = [self.term(c, stride, (key, "s", d), size) for d, (c, stride, size)
                 in enumerate(zip(coords, strides[:loop], s.shape[:loop]))]  # fmt: skip
        if offset:
            terms.append(self.param((key, "off"), offset))
        flat = " + ".join(t for t in terms if t) or "0"
        sizes = [self.param((key, "n", d), s.shape[loop + d]) for d in range(core)]
        steps = [self.param((key, "cs", d), strides[loop + d]) for d in range(core)]
        return [f"(({pointer})in{j} + ({flat}))", *sizes, *steps]

    def iota(self, n: Node, idx) -> str:
        """``start + i * delta`` as NumPy's arange fills (delta = (start + step) - start)."""
        if _is_complex(n.dtype):
            raise Unsupported(f"arange of {n.dtype}")
        first = self.const(n, n.dtype, "start")
        delta = self.const(n, n.dtype, "delta")
        i = idx[1] if idx[0] == "flat" else idx[1][0]
        value = f"({compute_type(n.dtype)})({first} + {i} * {delta})"
        return self.let(compute_type(n.dtype), f"({i} == 0 ? {first} : {value})")


def const_value(n: Node, part: str):
    """The value a constant-block entry holds for node ``n``."""
    if part == "value":
        return n.arg
    start, _, step = n.arg
    values = np.array([start, start + step], dtype=n.dtype)
    if n.dtype == np.bool_:  # bool arange: at most [False, True]
        return values[0] if part == "start" else np.bool_(values[1] != values[0])
    return values[0] if part == "start" else values[1] - values[0]


def lower(kernel: Kernel) -> Lowered:
    """The kernel IR of a map or map-reduce kernel; raises Unsupported for the rest.

    Lowering recurses along the DAG, whose depth the automatic flush bounds: the recursion
    limit is raised for the call only, and the program's own limit put back after it."""
    limit, needed = sys.getrecursionlimit(), 8 * config.FLUSH_DEPTH + 2000
    if limit >= needed:
        return _lower(kernel)
    sys.setrecursionlimit(needed)
    try:
        return _lower(kernel)
    finally:
        sys.setrecursionlimit(limit)


def _lower(kernel: Kernel) -> Lowered:
    low = _Lowerer(kernel)
    reduces = [n for n in kernel.nodes if n.op is Op.REDUCE]
    writes_at = kernel.outputs[-1].op in (Op.SCATTER_AT, Op.SCATTER)
    if kernel.kind != "map" or reduces or kernel.outputs[-1].op in (Op.SCATTER, Op.SCAN):
        if not writes_at and any(_is_complex(n.dtype) for n in (*kernel.nodes, *kernel.inputs)):
            raise Unsupported("complex values outside elementwise kernels")
    if kernel.outputs[-1].op is Op.SCATTER:
        ir = _lower_scatter(low, kernel)
    elif kernel.outputs[-1].op is Op.SCATTER_AT:
        ir = _lower_scatter_at(low, kernel)
    elif kernel.outputs[-1].op is Op.SCAN and len(kernel.outputs) == 1:
        ir = _lower_scan(low, kernel)
    elif kernel.kind == "reduce" and len(reduces) == 1 and reduces == list(kernel.outputs):
        ir = _lower_reduce(low, kernel)
    elif reduces:
        ir = _lower_row(low, kernel)
    elif kernel.kind == "map":
        ir = _lower_map(low, kernel)
    else:
        raise Unsupported(f"{kernel.kind} kernels")
    if low.checks:  # error slots for bad data (indices, powers): one more output buffer
        ir = replace(ir, buffers=ir.buffers + (kir.Buffer("err", "int64_t", True),))
    if low.functions:
        ir = replace(ir, functions=tuple(low.functions))
    fenv = any(fperrors.can_raise(n) for n in kernel.nodes)
    if (low.fp_raising or fenv) and ir.kind == "reduce":
        ir = replace(ir, fp_outputs=True)
    if fenv:
        ir = replace(ir, fenv=True)
    if low.fp_notes:
        ir = replace(ir, fp_notes=True)
    generated.setdefault(str(replace(ir, name="")), ir)
    return Lowered(
        ir, tuple(low.params), tuple(low.consts), tuple(low.const_layout), tuple(low.checks)
    )


# Every kernel IR lowered in this process (keyed by its text, names aside): the compile-only
# CUDA tests render each of them for the GPU.
generated: dict = {}


def _buffers(kernel: Kernel) -> tuple:
    ins = [kir.Buffer(f"in{j}", storage_type(n.dtype), False) for j, n in enumerate(kernel.inputs)]
    outs = [kir.Buffer(f"out{j}", storage_type(n.dtype), True)
            for j, n in enumerate(kernel.outputs)]  # fmt: skip
    return tuple(ins + outs)


def _all_contiguous(kernel: Kernel, shape: tuple) -> bool:
    """Every read is at the output's own flat index: the loops can run as one flat loop."""
    for n in kernel.nodes:
        if n.op is Op.VIEW and not (n.arg.is_contiguous() and n.arg.shape == shape):
            if n.srcs[0].op is not Op.CONST:
                return False
        if n.op in (Op.SCATTER, Op.IOTA) and len(shape) > 1:
            return False
        if (
            n.shape != shape
            and n.op is not Op.CONST
            and not (n.op is Op.VIEW and n.srcs[0].op is Op.CONST)
        ):
            return False
    return all(s.shape == shape for s in kernel.inputs)


def _lower_map(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    shape = kernel.outputs[-1].shape
    if any(o.shape != shape for o in kernel.outputs):
        raise Unsupported("outputs of different shapes")
    flat = _all_contiguous(kernel, shape)
    if flat:
        total = low.param(("size",), math.prod(shape))
        idx, out_index, outer = ("flat", "i"), "i", (total,)
    else:
        outer = tuple(low.param(("shape", k), n) for k, n in enumerate(shape))
        coords = tuple(f"i{k}" for k in range(len(shape)))
        idx, out_index = ("coords", coords), low.linear(coords, shape, "out")
    stores = []
    for j, out in enumerate(kernel.outputs):
        stores.append(kir.Store(f"out{j}", out_index, low.value(out, idx)))
    fp = tuple(dict.fromkeys(low.fp)) if low.fp_raising else ()
    return kir.Kernel(name=kernel.name, kind="map", buffers=_buffers(kernel), outer=outer,
                      prologue=tuple(low.prologue), body=tuple(low.body), stores=tuple(stores),
                      flat=flat, fp=fp)  # fmt: skip


def _acc_type(kind: str, dtype) -> str:
    if kind in ("any", "all"):
        return "bool"
    if kind in ("sum", "prod") and np.dtype(dtype).kind == "f":
        return "double"
    return compute_type(dtype)


def _lower_reduce(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    root = kernel.outputs[0]
    kind, axes = root.arg
    src = root.srcs[0]
    order = numpy_sum_order(src, axes, kind)
    walked = axes  # the reduced axes, the last one fastest
    if order is None and f_ordered_sum(src, axes, kind):
        # NumPy's temporary of a computation over transposed data is transposed (F order) and
        # summed as its memory lies: the axes walked in reverse, all of them one pairwise run
        walked = tuple(reversed(axes))
        order = (len(axes), compute_type(src.dtype))
    kept = [d for d in range(src.ndim) if d not in axes]
    outer = tuple(low.param(("shape", d), src.shape[d]) for d in kept)
    if kind == "sum" and src.ndim > 1 and not kept and walked == axes and _one_run(root, len(axes)):
        # a whole-array sum in one run in C order (NumPy's pairwise one, or exact): one loop
        # over the flat position, whose reads of contiguous data take it as it is (the run's
        # coordinates from the flat position cost two integer divisions an element: a 101x101
        # sum took 75 us, against 19 us flat)
        inner = (low.param(("rsize",), src.size),)
        value = low.value(src, ("flat", "r0"))
        order = None if order is None else (1, order[1])
    else:
        inner = tuple(low.param(("rshape", d), src.shape[d]) for d in walked)
        coords = []
        for d in range(src.ndim):
            coords.append(f"i{kept.index(d)}" if d in kept else f"r{walked.index(d)}")
        value = low.value(src, ("coords", tuple(coords)))
    out_coords = tuple(f"i{k}" for k in range(len(kept)))
    out_index = low.linear(out_coords, root.shape, "out") if kept else "0"
    index = "r0" if kind in ("argmax", "argmin") else "0"
    if order is not None and len(order) == 4:  # (NumPy's buffers of a whole-array sum)
        order = (*order[:3], low.param(("chunk",), order[3]))
    reduction = kir.Reduction(kind, _acc_type(kind, src.dtype), value, index,
                              kir.Store("out0", out_index, "acc"), order)  # fmt: skip
    return kir.Kernel(name=kernel.name, kind="reduce", buffers=_buffers(kernel), outer=outer,
                      inner=inner, prologue=tuple(low.prologue), body=tuple(low.body),
                      reduction=reduction)  # fmt: skip


def _lower_row(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    """A kernel that works one row at a time: per row, one pass per fused reduction (each
    folding into a row-local value), then one pass computing the elementwise outputs.
    Per-row outputs (a row's mean) are stored after the passes."""
    reduces = [n for n in kernel.nodes if n.op is Op.REDUCE]
    src_shape = reduces[0].srcs[0].shape
    n_inner = len(reduces[0].arg[1])
    rows = src_shape[: len(src_shape) - n_inner]
    if any(r.srcs[0].shape != src_shape or len(r.arg[1]) != n_inner or not trailing_axes(r)
           for r in reduces):  # fmt: skip
        raise Unsupported("reductions over different rows")
    outer = tuple(low.param(("shape", d), n) for d, n in enumerate(rows))
    row_coords = tuple(f"i{k}" for k in range(len(rows)))
    if not rows and n_inner > 1 and all(_one_run(r, n_inner) for r in reduces):
        # whole-array reductions, each one run in C order: one loop over the flat position
        # (as _lower_reduce's), no division of it into coordinates for contiguous reads
        inner = (low.param(("rsize",), math.prod(src_shape)),)
        point = ("flat", "r0")
    else:
        inner = tuple(low.param(("rshape", d), n) for d, n in enumerate(src_shape[len(rows):]))
        point = ("coords", row_coords + tuple(f"r{k}" for k in range(n_inner)))
    row_flat = low.linear(row_coords, rows, "rows") if rows else "0"
    phases = []
    for k, r in enumerate(reduces):
        low.body, low.memo = [], _const_memo(low.memo)
        kind = r.arg[0]
        value = low.value(r.srcs[0], point)
        name = f"row{k}"
        out = kir.Store(name, row_flat, "acc")
        index = "r0" if kind in ("argmax", "argmin") else "0"
        order = numpy_sum_order(r.srcs[0], r.arg[1], kind)
        if point[0] == "flat" and order is not None:
            order = (1, order[1])
        elif order is not None and len(order) == 4:  # (NumPy's buffers of a whole-array sum)
            order = (*order[:3], low.param(("chunk", id(r)), order[3]))
        phases.append(kir.Phase(tuple(low.body), kir.Reduction(kind, _acc_type(kind, r.srcs[0].dtype),
                                                              value, index, out, order)))  # fmt: skip
        low.row_locals[id(r)] = low.noted(r, f"(({compute_type(r.dtype)}){name})")
    low.body, low.memo = [], _const_memo(low.memo)
    at = point[1] if point[0] == "flat" else low.linear(point[1], src_shape, "out")
    stores = [kir.Store(f"out{j}", at, low.value(o, point))
              for j, o in enumerate(kernel.outputs) if o.shape == src_shape]  # fmt: skip
    phases.append(kir.Phase(tuple(low.body), None, tuple(stores)))
    low.body, low.memo = [], _const_memo(low.memo)
    row_stores = [kir.Store(f"out{j}", row_flat, low.value(o, ("flat", row_flat)))
                  for j, o in enumerate(kernel.outputs) if o.shape != src_shape]  # fmt: skip
    if any(o.size != _size(rows) for o in kernel.outputs if o.shape != src_shape):
        raise Unsupported("an output of a row kernel that is neither per row nor per element")
    return kir.Kernel(name=kernel.name, kind="row", buffers=_buffers(kernel), outer=outer,
                      inner=inner, prologue=tuple(low.prologue), phases=tuple(phases),
                      body=tuple(low.body), row_stores=tuple(row_stores))  # fmt: skip


def _one_run(r: Node, n_inner: int) -> bool:
    """Whether reduction ``r`` (over its source's last ``n_inner`` axes) visits them as one run
    in C order, its flat position's: a sum NumPy adds as one pairwise run over them all, or a
    reduction whose order does not change its value (max, min, any, all; integer sums and
    products)."""
    kind, dtype = r.arg[0], r.srcs[0].dtype
    if kind in ("max", "min", "any", "all") or (kind in ("sum", "prod") and dtype.kind in "biu"):
        return True
    order = numpy_sum_order(r.srcs[0], r.arg[1], kind)
    return kind == "sum" and order is not None and order[0] == n_inner


def _const_memo(memo: dict) -> dict:
    """Only constants (declared before the loops) stay visible from one pass to the next."""
    return {k: v for k, v in memo.items() if k[0] == "const"}


def _size(shape) -> int:
    return math.prod(shape)


def _lower_scatter(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    """A write through a view into a fresh buffer: copy the old version (one flat pass), then
    compute the new values over the view's index space and store them through the view. The
    new values read the old version's buffer, never the one being written, so a stencil such
    as Jacobi's ``center[:] = 0.2 * (center + north + ...)`` sees only old values."""
    (root,) = kernel.outputs
    old, value = root.srcs
    v = root.arg
    low.body, low.memo = [], _const_memo(low.memo)
    box = _box(v, root.shape)
    view_coords = ()
    if not box:  # copy everything (a 0-d storage: its one element), then overwrite the view
        outer = (low.param(("size",), root.size),)
        kept = low.value(old, ("flat", "i"))
        copy = kir.Phase(tuple(low.body), None, (kir.Store("out0", "i", kept),))
    else:  # copy only what the view does not cover
        outer = tuple(low.param(("shape", k), n) for k, n in enumerate(root.shape))
        coords = tuple(f"i{k}" for k in range(root.ndim))
        start, step, count = box[-1]
        skip = None
        if step == 1 and root.ndim:  # rows copy around the span the view covers
            skip = (low.param(("box", root.ndim - 1, "start"), start),
                    low.param(("box", root.ndim - 1, "count"), count))  # fmt: skip
            tests = [_outside(low, c, a, box[a]) for a, c in enumerate(coords[:-1])]
        else:
            tests = [_outside(low, c, a, box[a]) for a, c in enumerate(coords)]
        kept = low.value(old, ("coords", coords))
        index = low.linear(coords, root.shape, "out")
        store = kir.Store("out0", index, kept, " || ".join(tests) or "0")
        copy = kir.Phase(tuple(low.body), None, (store,), skip)
        view_coords = _view_coords(low, v, root.shape, box)
    low.body, low.memo = [], _const_memo(low.memo)
    checked = len(low.fp)  # (the write phase's checks: its new values' casts)
    coords = tuple(f"r{k}" for k in range(len(v.shape)))
    new = low.value(value, ("coords", coords))
    terms = [low.term(c, s, ("target", k), n) for k, (c, s, n)
             in enumerate(zip(coords, v.strides, v.shape))]  # fmt: skip
    if v.offset:
        terms.append(low.param(("target", "off"), v.offset))
    target = " + ".join(t for t in terms if t) or "0"
    write = kir.Phase(tuple(low.body), None, (kir.Store("out0", target, new),))
    inner = tuple(low.param(("vshape", k), n) for k, n in enumerate(v.shape))
    held = next((j for j, n in enumerate(kernel.inputs) if n is old), None)
    return kir.Kernel(name=kernel.name, kind="scatter", buffers=_buffers(kernel), outer=outer,
                      inner=inner, prologue=tuple(low.prologue), phases=(copy, write),
                      view_coords=view_coords, fp=_write_checks(low, checked),
                      inplace=f"in{held}" if box and held is not None else None)  # fmt: skip


def _write_checks(low: _Lowerer, checked: int) -> tuple:
    """The checks (``fp``) of a scatter's write phase, those lowered after ``checked``."""
    return tuple(dict.fromkeys(low.fp[checked:])) if low.fp_raising else ()


def _lower_scatter_at(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    """A write at computed flat positions (``a[idx] = v``, ``a[mask] = v``) into a fresh
    buffer: copy the old version, then store each value at its position. Where a position
    repeats, NumPy stores the values in order and the last one stays: unless every value is
    the same (``counts[idx] = i``), the kernel says so (``last_wins``) and each dialect keeps
    that order (the C dialect writes in one thread; CUDA lets the last value's thread claim the
    element first)."""
    (root,) = kernel.outputs
    old, value, positions = root.srcs
    low.body, low.memo = [], _const_memo(low.memo)
    outer = (low.param(("size",), root.size),)
    kept = low.value(old, ("flat", "i"))
    copy = kir.Phase(tuple(low.body), None, (kir.Store("out0", "i", kept),))
    low.body, low.memo = [], _const_memo(low.memo)
    checked = len(low.fp)
    coords = tuple(f"r{k}" for k in range(positions.ndim))
    new = low.value(value, ("coords", coords))
    target = low.value(positions, ("coords", coords))
    write = kir.Phase(tuple(low.body), None, (kir.Store("out0", target, new),))
    inner = tuple(low.param(("vshape", k), n) for k, n in enumerate(positions.shape))
    return kir.Kernel(name=kernel.name, kind="scatter", buffers=_buffers(kernel), outer=outer,
                      inner=inner, prologue=tuple(low.prologue), phases=(copy, write),
                      last_wins=not _uniform(value), fp=_write_checks(low, checked))  # fmt: skip


def _uniform(n: Node) -> bool:
    """Whether every element of ``n`` is one value (a scalar, broadcast)."""
    while n.op is Op.VIEW and all(s == 0 or k == 1 for s, k in zip(n.arg.strides, n.arg.shape)):
        n = n.srcs[0]
    return n.op is Op.CONST or n.size <= 1


def _view_coords(low: _Lowerer, v, base_shape: tuple, box: tuple) -> tuple:
    """C expressions of the view's coordinates (r0, r1, ...) at storage element (i0, i1, ...)
    inside a box view: what a single pass over the storage needs to compute the new values."""
    coords = []
    for axis in _view_axes(v, base_shape):
        if axis is None:
            coords.append("0")
            continue
        start, step, _ = box[axis]
        s = low.param(("box", axis, "start"), start)
        if step == 1:
            coords.append(f"(i{axis} - {s})")
        else:
            coords.append(f"(i{axis} - {s}) / {low.param(('box', axis, 'step'), step)}")
    return tuple(coords)


def _box(v, base_shape: tuple):
    """For a view made of slices with positive steps and integer indices: per storage axis,
    (start, step, count) of the elements it covers. None for any other view."""
    strides = contiguous_strides(base_shape)
    starts, rest = [], v.offset
    for s, n in zip(strides, base_shape):
        starts.append(rest // s if n > 1 else 0)
        rest = rest % s if n > 1 else rest
    box = [(start, 1, 1) for start in starts]
    used = {}  # storage axis -> the view axis that walks it
    for k, (n, st) in enumerate(zip(v.shape, v.strides)):
        if n == 1:
            continue
        axis = next((a for a, s in enumerate(strides) if base_shape[a] > 1 and st > 0
                     and st % s == 0 and a not in used), None)  # fmt: skip
        if axis is None:
            return None
        step = st // strides[axis]
        if starts[axis] + (n - 1) * step >= base_shape[axis]:
            return None
        used[axis] = k
        box[axis] = (starts[axis], step, n)
    return tuple(box)


def _view_axes(v, base_shape: tuple) -> tuple:
    """For a box view (see ``_box``): the storage axis each view axis walks (None for the view's
    axes of length 1)."""
    strides = contiguous_strides(base_shape)
    axes, used = [], set()
    for n, st in zip(v.shape, v.strides):
        axis = None if n == 1 else next(a for a, s in enumerate(strides) if base_shape[a] > 1
                                        and st > 0 and st % s == 0 and a not in used)  # fmt: skip
        used.add(axis)
        axes.append(axis)
    return tuple(axes)


def _outside(low: _Lowerer, c: str, axis: int, span: tuple) -> str:
    """C test that coordinate ``c`` of storage axis ``axis`` lies outside the box's span."""
    start, step, count = span
    s = low.param(("box", axis, "start"), start)
    n = low.param(("box", axis, "count"), count)
    if step == 1:
        return f"({c} < {s} || {c} >= {s} + {n})"
    st = low.param(("box", axis, "step"), step)
    return f"({c} < {s} || {c} >= {s} + {n} * {st} || ({c} - {s}) % {st} != 0)"


def _lower_scan(low: _Lowerer, kernel: Kernel) -> kir.Kernel:
    """A cumulative sum or product fused with its producers: each line along the scanned axis
    is one sequential loop (in the output's dtype, as NumPy accumulates), lines in parallel."""
    (root,) = kernel.outputs
    kind, axis = root.arg
    src = root.srcs[0]
    kept = [d for d in range(src.ndim) if d != axis]
    outer = tuple(low.param(("shape", d), src.shape[d]) for d in kept)
    inner = (low.param(("rshape", axis), src.shape[axis]),)
    coords = tuple("r0" if d == axis else f"i{kept.index(d)}" for d in range(src.ndim))
    value = low.value(src, ("coords", coords))
    index = low.linear(coords, root.shape, "out")
    fold = "sum" if kind == "cumsum" else "prod"
    reduction = kir.Reduction(fold, compute_type(root.dtype), value, "0",
                              kir.Store("out0", index, low.noted(root, "acc")))  # fmt: skip
    return kir.Kernel(name=kernel.name, kind="scan", buffers=_buffers(kernel), outer=outer,
                      inner=inner, prologue=tuple(low.prologue), body=tuple(low.body),
                      reduction=reduction)  # fmt: skip

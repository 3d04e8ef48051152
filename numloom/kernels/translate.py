"""Translate Python functions (kernels, device functions, vectorized scalar functions) to the
kernel IR, the same IR and renderer the fusion compiler uses.

The subset: bool, int, float and complex scalars; arrays of any dimension (``shape``,
``strides``, indexing and basic slicing); arithmetic, comparisons, ``and``/``or``/``not``,
conditional expressions; ``if``, ``while``, ``for ... in range(...)``, ``break``, ``continue``,
``return``; local variables with one type each (inferred); the ``math`` and ``cmath``
functions, NumPy's ufuncs and scalar types, ``abs``/``min``/``max``/``round``/``len``/``int``/
``float``/``bool``/``complex``; calls to other functions (``cuda.jit(device=True)``), compiled
with the caller, returning scalars or tuples (a function that synchronizes threads is compiled
into its caller's body, so that its barriers split the CPU's phases as the kernel's own do);
``print``; and ``numloom.cuda``'s thread indices, shared and local arrays, barriers, shuffles
and atomics.

Each Python function becomes, per argument types, one ``kir.Function`` (or ``kir.UserKernel``)::
    def saxpy(a, x, y):                     void KERNEL(...)  // C or CUDA frame by the dialect
        i = cuda.grid(1)                    v_i = (nl_c.bx * nl_c.bdx + nl_c.tx);
        if i < x.shape[0]:                  if ((v_i < v_x_n0)) {
            y[i] = a * x[i] + y[i]              v_y[v_i] = (float)(((float)(v_a * v_x[v_i])) + v_y[v_i]);

Types follow Python with NumPy scalars (``ktypes``); arithmetic comes from the fusion
compiler's op snippets, so it is NumPy's: integer wraparound, floor division and modulo signs,
``x // 0 == 0``, x86 float-to-int conversion.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..compile import kir
from . import ktypes
from .kerrors import KernelError, TypingError, UnsupportedError, Where, node_where
from .kexpressions import Expressions
from .kscope import ConstArg, VarInfo, _c_params, _identifier, _PendingReturn, _store_counts, _unify
from .ksource import _arg_names, environment, function_ast
from .kstatements import Statements
from .ktypes import NONE, Array, Scalar, Tuple
from .kvalues import (
    ArrayRef,
    Value,
    constant,
    convert,
    literal,
)

# --- one compilation: the kernel and the functions it calls ------------------------------------


@dataclass
class FunctionSpec:
    """A Python function compiled for one tuple of argument types."""

    name: str  # C name
    ret: object  # return type (NONE for none)
    params: tuple  # (Python name, type)
    uses_ctx: bool
    writes: frozenset  # indices of array parameters the function writes
    ir: kir.Function
    types: dict = field(default_factory=dict)  # variable -> type, for inspect_types


class Program:
    """What one compilation collects: device functions, tuple structs, bounds checks."""
    def __init__(self, boundscheck: bool = False, scalar: bool = False):
        self.boundscheck = boundscheck
        self.scalar = scalar  # a vectorized function: no threads, no arrays of its own
        self.specs: dict = {}
        self.items: list = []  # kir.Struct and kir.Function, each after what it uses
        self.checks: list = []  # (array, axis, Where) of each bounds-check code
        self.active: list = []
        self.inlined = 0  # functions compiled into their callers so far (their name prefixes)
    def struct(self, types: tuple) -> str:
        ctypes_ = tuple(ktypes.ctype(t) for t in types)
        name = "nl_tuple_" + "_".join(c.replace("_t", "").replace("nl_", "") for c in ctypes_)
        if not any(isinstance(i, kir.Struct) and i.name == name for i in self.items):
            self.items.append(kir.Struct(name, tuple((c, f"f{k}") for k, c in enumerate(ctypes_))))
        return name
    def global_value(self, value) -> Value:
        """A module global or closure variable: a constant, or a NumPy array as a read-only
        table compiled into the kernel (as Numba freezes global arrays)."""
        if not (
            isinstance(value, np.ndarray)
            and value.dtype.kind in "biuf"
            and ktypes.storage_ctype(value.dtype) != "nl_half"
            and value.size <= 1 << 16
        ):
            return constant(value)  # fmt: skip
        data = np.ascontiguousarray(value)
        digest = hashlib.sha256(data.tobytes() + str(data.dtype).encode()).hexdigest()[:12]
        name = f"nl_table_{digest}"
        if not any(item.name == name for item in self.items):
            values = tuple(literal(v, data.dtype) for v in data.reshape(-1).tolist())
            self.items.insert(0, kir.Table(name, ktypes.storage_ctype(data.dtype), values))
        strides = tuple(str(s // data.itemsize) for s in data.strides)
        ref = ArrayRef(name, tuple(str(n) for n in data.shape), strides, fixed=True)
        return Value(Array(data.dtype, data.ndim, "C", "const"), arr=ref)
    def check_code(self, array: str, axis: int, where: Where) -> int:
        self.checks.append((array, axis, where))
        return len(self.checks) - 1
    def function(self, fn, arg_types: tuple, where: Where) -> FunctionSpec:
        """The specialization of device function ``fn`` for ``arg_types`` (compiled once)."""
        key = (fn, arg_types)
        if key in self.specs:
            return self.specs[key]
        if fn in self.active:
            raise UnsupportedError(f"{fn.__name__} calls itself: recursion is not supported in "
                                   "kernels", where, "write the recursion as a loop")  # fmt: skip
        self.active.append(fn)
        try:
            spec = Translator(self, fn, arg_types, mode="device").function()
        finally:
            self.active.pop()
        self.specs[key] = spec
        self.items.append(spec.ir)
        return spec


# --- the translator -------------------------------------------------------------------------


class Translator(Statements, Expressions):
    """Translates one Python function for one tuple of argument types."""
    def __init__(self, program: Program, fn, arg_types: tuple, mode: str, name: str = "",
                 bound: tuple | None = None):  # fmt: skip
        self.program, self.fn, self.arg_types, self.mode = program, fn, arg_types, mode
        # A function compiled into its caller ("inline") binds its parameters to the caller's
        # values, and its variables are named apart from the caller's.
        self.bound = bound
        self.prefix = "v_" if bound is None else f"vi{program.inlined}_"
        self.filename, self.node = function_ast(fn)
        self.env = environment(fn)
        self.params = _arg_names(self.node)
        self.label = name or fn.__name__
        self.store_counts = _store_counts(self.node)
        self.locals_named = set(self.store_counts) | set(self.params)
        self.vars: dict = {}  # name -> VarInfo
        self.uses_ctx = False
        self.written: set = set()
        self.lines: dict = {}
        self.temps = 0
        self._check_signature()

    # -- errors --
    def where(self, node) -> Where:
        return node_where(self.filename, node)
    def unsupported(self, node, what: str, hint: str = "") -> UnsupportedError:
        return UnsupportedError(f"{self._who()}: unsupported construct: {what}", self.where(node),
                                hint)  # fmt: skip
    def typing(self, node, what: str, hint: str = "") -> TypingError:
        return TypingError(f"{self._who()}: {what}", self.where(node), hint)
    def _who(self) -> str:
        kind = {"kernel": "kernel", "device": "function", "scalar": "function",
                "inline": "function"}[self.mode]  # fmt: skip
        return f"{kind} {self.label}"
    def _check_signature(self) -> None:
        args = self.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.unsupported(self.node, "*args, **kwargs or keyword-only parameters",
                                   "give the function plain positional parameters")  # fmt: skip
        if len(self.arg_types) != len(self.params):
            raise TypingError(f"{self._who()} takes {len(self.params)} arguments "
                              f"({', '.join(self.params)}) but {len(self.arg_types)} were given",
                              self.where(self.node))  # fmt: skip

    # -- driving: infer types to a fixed point, then keep the last pass's code --
    def run(self) -> tuple:
        for _ in range(16):
            self.changed, self.unknown_at, self.returns = False, None, []
            self.deferred: list = []  # errors of callees compiled for not-yet-final types
            self.temps, self.locals_ = 0, {}
            self.shared_decls: list = []
            self.stack: list = [[]]
            self._bind_params()
            body = self.node.body if isinstance(self.node, ast.FunctionDef) else [
                ast.Return(self.node.body, lineno=self.node.body.lineno,
                           col_offset=self.node.body.col_offset)]  # fmt: skip
            self.block(body)
            if not self.changed:
                break
        if self.deferred:
            raise self.deferred[0]
        if self.unknown_at is not None:
            name = self.unknown_at.id
            raise self.typing(self.unknown_at, f"variable '{name}' has no type: it is read "
                              "but never assigned before this point",
                              f"assign '{name}' before reading it")  # fmt: skip
        return self.stack[0]
    def _bind_params(self) -> None:
        for k, (name, t) in enumerate(zip(self.params, self.arg_types)):
            info = self.vars.get(name)
            if info is None:
                vt = constant(t.value).type if isinstance(t, ConstArg) else t
                info = self.vars[name] = VarInfo(vt, self.node, param=True)
            if self.bound is None:
                info.value = self._param_value(name, t)
            else:
                info.value = self._bind_inline(name, self.bound[k])
    def _bind_inline(self, name: str, arg: Value) -> Value:
        """A parameter of an inlined function: the caller's array itself, or a local holding a
        copy of the caller's scalar (the function may assign its parameters)."""
        if isinstance(arg.type, Array):
            return arg
        values = arg.items if isinstance(arg.type, Tuple) else (arg,)
        if not all(isinstance(v.type, Scalar) for v in values):
            raise self.unsupported(self.node, f"passing {arg.type} to {self.fn.__name__}, "
                                   "which synchronizes threads",
                                   "pass the tuple's items one by one")  # fmt: skip
        copies = []
        for k, v in enumerate(values):
            c = self.cname(name) + (f"_{k}" if isinstance(arg.type, Tuple) else "")
            self.local(c, ktypes.ctype(v.type))
            self.emit(kir.Assign(c, v.code, self.node.lineno))
            copies.append(Value(v.type, c, nonneg=v.nonneg and name not in self.store_counts))
        if isinstance(arg.type, Tuple):
            return Value(arg.type, items=tuple(copies))
        return copies[0]
    def cname(self, name: str) -> str:
        """The C name of Python variable ``name``."""
        return f"{self.prefix}{name}"
    def _param_value(self, name: str, t) -> Value:
        if isinstance(t, ConstArg):
            return constant(t.value)
        c = f"v_{name}"
        if isinstance(t, Array):
            shape = tuple(f"{c}_n{k}" for k in range(t.ndim))
            strides = tuple(f"{c}_s{k}" for k in range(t.ndim))
            return Value(t, arr=ArrayRef(c, shape, strides, root=name))
        if isinstance(t, Tuple):
            return Value(t, items=tuple(self._param_value(f"{name}_{k}", it)
                                        for k, it in enumerate(t.items)))  # fmt: skip
        return Value(t, c, nonneg=isinstance(t, Scalar) and t.kind in "bu")

    # -- functions and kernels --
    def function(self) -> FunctionSpec:
        body = self.run()
        ret = self._return_type()
        ret_ctype = "void"
        if isinstance(ret, Tuple):
            ret_ctype = self.program.struct(ret.items)
        elif isinstance(ret, Scalar):
            ret_ctype = ktypes.ctype(ret)
        digest = hashlib.sha256(repr((self.fn.__qualname__, self.filename, body, ret_ctype,
                                      self.arg_types)).encode()).hexdigest()[:12]  # fmt: skip
        name = f"nl_fn_{_identifier(self.fn.__name__)}_{digest}"
        params = (("nl_ctx", "nl_c"),) if self.uses_ctx else ()
        for pname, t in zip(self.params, self.arg_types):
            if not isinstance(t, ConstArg):
                params += tuple(_c_params(f"v_{pname}", t))
        body = tuple(self._returns_fixed(body, ret, ret_ctype))
        ir = kir.Function(name, ret_ctype, params, self._locals(), body, self._lines())
        written = self.written_roots()
        writes = frozenset(i for i, p in enumerate(self.params) if p in written)
        return FunctionSpec(name, ret, tuple(zip(self.params, self.arg_types)), self.uses_ctx,
                            writes, ir, self.types())  # fmt: skip
    def inline(self) -> tuple:
        """``(statements, return type, returned value or None)``: the function compiled into its
        caller's body (a function that synchronizes threads, so that the CPU's phases see its
        barriers). It returns at its end only: the statements run, then the value is read."""
        for node in ast.walk(self.node):
            if isinstance(node, ast.Return) and node is not self.node.body[-1]:
                raise self.unsupported(node, f"a return before the end of {self.fn.__name__}, "
                                       "which synchronizes threads (numloom compiles it into "
                                       "the calling kernel)", "assign the result to a variable "
                                       "and return it in the function's last line")  # fmt: skip
        body = list(self.run())
        value = None
        if body and isinstance(body[-1], _PendingReturn):
            value = body.pop().value
        return body, self._return_type(), value
    def kernel(self) -> kir.UserKernel:
        body = self.run()
        for value, node in self.returns:
            if value is not None:
                raise self.typing(node, "a kernel cannot return a value",
                                  "write results into an array argument")  # fmt: skip
        params, init = [], []
        written = self.written_roots()
        for name, t in zip(self.params, self.arg_types):
            if isinstance(t, Array):
                params.append(kir.Param(f"v_{name}", ktypes.storage_ctype(t.dtype), t.ndim,
                                        t.layout == "C", name in written))  # fmt: skip
            elif name in self.store_counts:  # assigned in the body: each thread's own copy
                params.append(kir.Param(f"p_{name}", ktypes.ctype(t)))
                self.local(f"v_{name}", ktypes.ctype(t))
                init.append(kir.Assign(f"v_{name}", f"p_{name}", self.node.lineno))
            else:
                params.append(kir.Param(f"v_{name}", ktypes.ctype(t)))
        used = repr(body) + repr(self._locals())
        return kir.UserKernel(self.label, tuple(params), self._locals(), tuple(init + body),
                              reachable(self.program.items, used), self._lines(),
                              self.program.boundscheck)  # fmt: skip
    def written_roots(self) -> set:
        """The arrays the function writes: a write through an array variable (``row = a[i]``,
        or ``data = a`` in one branch and ``b`` in another) writes every array it has viewed."""
        out, todo = set(), list(self.written)
        while todo:
            root = todo.pop()
            if root not in out:
                out.add(root)
                info = self.vars.get(root)
                if info is not None and not info.param:
                    todo.extend(info.roots)
        return out
    def types(self) -> dict:
        return {name: info.type for name, info in self.vars.items()}
    def _return_type(self):
        ret = None
        for value, node in self.returns:
            t = NONE if value is None else value.type
            merged = t if ret is None else _unify(ret, t)
            if merged is None:
                raise self.typing(node, f"returns {t} here but {ret} elsewhere",
                                  "return values of one type")  # fmt: skip
            ret = merged
        return NONE if ret is None else ret
    def _returns_fixed(self, body, ret, ret_ctype):
        """Return statements converting their values to the function's one return type."""
        out = []
        for s in body:
            if isinstance(s, _PendingReturn):
                out.append(kir.Return(self._return_code(s.value, ret, ret_ctype), s.line))
            elif isinstance(s, kir.If):
                out.append(
                    replace(
                        s,
                        then=tuple(self._returns_fixed(s.then, ret, ret_ctype)),
                        orelse=tuple(self._returns_fixed(s.orelse, ret, ret_ctype)),
                    )
                )
            elif isinstance(s, (kir.While, kir.For)):
                out.append(replace(s, body=tuple(self._returns_fixed(s.body, ret, ret_ctype))))
            else:
                out.append(s)
        return out
    def _return_code(self, value, ret, ret_ctype):
        if value is None:
            return None
        if isinstance(ret, Tuple):
            items = [convert(v, t) for v, t in zip(value.items, ret.items)]
            return f"{ret_ctype}_make({', '.join(items)})"
        return convert(value, ret)
    def _locals(self) -> tuple:
        return tuple(self.locals_.values()) + tuple(self.shared_decls)
    def _lines(self) -> tuple:
        return tuple(sorted(self.lines.items()))

    # -- statements --


    # -- assignment --


    # -- expressions --


# --- entry points -------------------------------------------------------------------------------


def reachable(items, text: str) -> tuple:
    """The structs and functions ``text`` uses, directly or through each other, in order.
    (Type inference may compile a callee for types an early pass guessed; those go.)"""
    by_name = {item.name: item for item in items}
    needed, stack = set(), [text]
    while stack:
        found = stack.pop()
        for name, item in by_name.items():
            if name not in needed and re.search(rf"\b{name}\b", found):
                needed.add(name)
                stack.append(repr(item))
    return tuple(item for item in items if item.name in needed)


def translate_kernel(fn, arg_types: tuple, boundscheck: bool = False, name: str = "") -> tuple:
    """``(kir.UserKernel, program, translator)`` for kernel ``fn`` called with ``arg_types``."""
    program = Program(boundscheck)
    tr = Translator(program, fn, arg_types, "kernel", name)
    ir = tr.kernel()
    return ir, program, tr


def translate_scalar(fn, arg_types: tuple) -> tuple:
    """``(FunctionSpec, program)`` for a scalar function (``numloom.vectorize``)."""
    program = Program(scalar=True)
    tr = Translator(program, fn, arg_types, "scalar")
    spec = tr.function()
    program.items[:] = list(reachable(program.items, repr(spec.ir))) + [spec.ir]
    return spec, program


__all__ = ["KernelError", "Translator", "translate_kernel", "translate_scalar", "inspect"]

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
import linecache
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ..compile import kir
from . import ktypes
from .kerrors import KernelError, TypingError, UnsupportedError, Where, node_where
from .ksource import _arg_names, environment, function_ast
from .ktypes import NONE, Array, Scalar, Tuple
from .kvalues import (
    _NO,
    PYOBJ,
    UNKNOWN,
    ArrayRef,
    Value,
    _storage_cast,
    constant,
    convert,
    literal,
    promote,
    truth,
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

_BINOPS = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
    ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "power",
    ast.LShift: "left_shift", ast.RShift: "right_shift", ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor", ast.BitAnd: "bitwise_and",
}  # fmt: skip
_COMPARE = {ast.Eq: "equal", ast.NotEq: "not_equal", ast.Lt: "less", ast.LtE: "less_equal",
            ast.Gt: "greater", ast.GtE: "greater_equal"}  # fmt: skip
_UNSUPPORTED = {
    ast.ListComp: ("a list comprehension", "kernels have no lists: use cuda.local.array or a "
                   "loop over range(...)"),
    ast.List: ("a list", "kernels have no lists: use a tuple, or cuda.local.array((n,), dtype)"),
    ast.Dict: ("a dict", "kernels have scalars, arrays and tuples only"),
    ast.Set: ("a set", "kernels have scalars, arrays and tuples only"),
    ast.DictComp: ("a dict comprehension", "kernels have scalars, arrays and tuples only"),
    ast.SetComp: ("a set comprehension", "kernels have scalars, arrays and tuples only"),
    ast.GeneratorExp: ("a generator expression", "write the loop as for i in range(...)"),
    ast.Lambda: ("a lambda", "define a function (cuda.jit(device=True)) and call it"),
    ast.JoinedStr: ("an f-string", "kernels have no strings"),
    ast.Starred: ("a starred expression", "pass the arguments one by one"),
    ast.Await: ("await", "kernels are not coroutines"),
    ast.Yield: ("yield", "kernels are not generators"),
    ast.YieldFrom: ("yield from", "kernels are not generators"),
    ast.NamedExpr: ("an assignment expression (:=)", "assign in a statement of its own"),
    ast.With: ("a with statement", "kernels have no context managers"),
    ast.Try: ("a try statement", "kernels cannot raise or catch exceptions"),
    ast.Raise: ("a raise statement", "kernels cannot raise exceptions; return early instead"),
    ast.Assert: ("an assert statement", "test the condition and return early instead"),
    ast.Global: ("a global statement", "kernels cannot assign globals; write to an array "
                 "argument"),
    ast.Nonlocal: ("a nonlocal statement", "kernels cannot assign outer variables"),
    ast.FunctionDef: ("a nested function", "define it at module level with "
                      "cuda.jit(device=True)"),
    ast.ClassDef: ("a class definition", "kernels have scalars, arrays and tuples only"),
    ast.Import: ("an import", "import at module level"),
    ast.ImportFrom: ("an import", "import at module level"),
    ast.Delete: ("a del statement", "kernels cannot delete variables"),
}  # fmt: skip


class Translator:
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
        writes = frozenset(i for i, p in enumerate(self.params) if p in self.written)
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
        for name, t in zip(self.params, self.arg_types):
            if isinstance(t, Array):
                params.append(kir.Param(f"v_{name}", ktypes.storage_ctype(t.dtype), t.ndim,
                                        t.layout == "C", name in self.written))  # fmt: skip
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

    def emit(self, stmt) -> None:
        self.stack[-1].append(stmt)

    def nested(self, stmts) -> tuple:
        self.stack.append([])
        self.block(stmts)
        return tuple(self.stack.pop())

    def block(self, stmts) -> None:
        for s in stmts:
            self.lines.setdefault(s.lineno, linecache.getline(self.filename, s.lineno).strip())
            self.line = s.lineno
            method = getattr(self, "stmt_" + type(s).__name__, None)
            if method is None:
                what, hint = _UNSUPPORTED.get(type(s), (f"a {type(s).__name__} statement", ""))
                raise self.unsupported(s, what, hint)
            method(s)

    def stmt_Pass(self, s) -> None:
        pass

    def stmt_Expr(self, s) -> None:
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        from .kcalls import statement_call

        if isinstance(s.value, ast.Call) and statement_call(self, s.value):
            return
        v = self.expr(s.value)
        if v.type is not None and v.code and not isinstance(s.value, (ast.Name, ast.Constant)):
            self.emit(kir.Do(v.code, s.lineno))

    def stmt_Assign(self, s) -> None:
        value = self.expr(s.value)
        for target in s.targets:
            self.assign(target, value, s)

    def stmt_AnnAssign(self, s) -> None:
        if s.value is None:
            return
        self.assign(s.target, self.expr(s.value), s)

    def stmt_AugAssign(self, s) -> None:
        op = _BINOPS.get(type(s.op))
        if op is None:
            raise self.unsupported(s, f"the operator {type(s.op).__name__}=")
        current = self.expr(_as_load(s.target))
        value = self.binop(op, current, self.expr(s.value), s)
        self.assign(s.target, value, s)

    def stmt_If(self, s) -> None:
        cond = self.test(s.test)
        then = self.nested(s.body)
        orelse = self.nested(s.orelse)
        self.emit(kir.If(cond, then, orelse, s.lineno))

    def stmt_While(self, s) -> None:
        if s.orelse:
            raise self.unsupported(s, "while ... else", "use a flag variable")
        self.stack.append([])
        cond = self.test(s.test)
        pre = self.stack.pop()
        body = self.nested(s.body)
        if pre:  # the condition needs statements: evaluate them on every iteration
            body = tuple(pre) + (kir.If(f"!({cond})", (kir.Break(s.lineno),), (), s.lineno),) + body
            cond = "1"
        self.emit(kir.While(cond, body, s.lineno))

    def stmt_For(self, s) -> None:
        from .kcalls import range_loop

        if s.orelse:
            raise self.unsupported(s, "for ... else", "use a flag variable")
        range_loop(self, s)

    def stmt_Break(self, s) -> None:
        self.emit(kir.Break(s.lineno))

    def stmt_Continue(self, s) -> None:
        self.emit(kir.Continue(s.lineno))

    def stmt_Return(self, s) -> None:
        value = None if s.value is None else self.expr(s.value)
        if value is not None and value.type is None:
            value = None if self.mode == "kernel" else value
        if value is not None and value.type is NONE:
            value = None
        if value is not None and value.type is not None:
            if not isinstance(value.type, (Scalar, Tuple)) or (
                isinstance(value.type, Tuple)
                and not all(isinstance(t, Scalar) for t in value.type.items)
            ):
                raise self.typing(s, f"cannot return {value.type}",
                                  "return scalars or tuples of scalars")  # fmt: skip
            self.returns.append((value, s))
        elif value is None:
            self.returns.append((None, s))
        self.emit(_PendingReturn(value, s.lineno) if self.mode != "kernel"
                  else kir.Return(None, s.lineno))  # fmt: skip

    # -- assignment --

    def assign(self, target, value: Value, stmt) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            return self._assign_tuple(target, value, stmt)
        if isinstance(target, ast.Subscript):
            return self.store(target, value)
        if isinstance(target, ast.Attribute):
            raise self.unsupported(target, "assigning an attribute",
                                   "kernels assign variables and array elements")  # fmt: skip
        if not isinstance(target, ast.Name):
            raise self.unsupported(target, f"assigning to {type(target).__name__}")
        self.assign_name(target.id, value, target, stmt)

    def _assign_tuple(self, target, value: Value, stmt) -> None:
        if value.type is None:
            for t in target.elts:
                if isinstance(t, ast.Name):
                    self.assign_name(t.id, UNKNOWN, t, stmt)
            return
        if not isinstance(value.type, Tuple):
            raise self.typing(target, f"cannot unpack {value.type}", "unpack a tuple")
        if len(value.items) != len(target.elts):
            raise self.typing(target, f"cannot unpack {len(value.items)} values into "
                              f"{len(target.elts)} names")  # fmt: skip
        for t, v in zip(target.elts, value.items):
            self.assign(t, v, stmt)

    def assign_name(self, name: str, value: Value, node, stmt) -> None:
        info = self.vars.get(name)
        if value.type is None:  # not known yet (a later pass knows)
            return
        if value.type is PYOBJ:
            raise self.unsupported(node, f"assigning {_describe_obj(value.obj)} to '{name}'",
                                   "variables hold scalars, arrays and tuples")  # fmt: skip
        if info is None:
            info = self.vars[name] = VarInfo(value.type, stmt)
            self.changed = True
        if info.param and info.value is not None and info.value.const is not _NO:
            raise self.unsupported(node, f"assigning to the excluded argument '{name}'",
                                   "assign to a new variable")  # fmt: skip
        merged = _unify(info.type, value.type)
        if merged is None or (info.param and merged != info.type):
            raise self._twice_typed(name, info, value, node)
        if (
            isinstance(merged, Array)
            and (info.param or value.arr.fixed)
            and not (value.arr.fixed and self.store_counts.get(name) == 1)
        ):
            raise self.unsupported(node, f"assigning another array to '{name}'",
                                   "give the view a name of its own")  # fmt: skip
        if merged != info.type:
            info.type, info.where, self.changed = merged, stmt, True
        if isinstance(merged, Array) and value.arr.fixed:
            info.fixed = value  # a shared or local array: the name stands for it
            return
        if info.nonneg and not value.nonneg:
            info.nonneg, self.changed = False, True
        self._assign_code(name, info, value)

    def _twice_typed(self, name, info, value, node) -> TypingError:
        first = f"line {getattr(info.where, 'lineno', '?')}"
        return self.typing(node, f"variable '{name}' is {info.type} (from {first}) but is "
                           f"assigned {value.type} here",
                           f"a variable keeps one type: convert the value (e.g. "
                           f"np.{_dtype_name(info.type)}(...)) or use another name")  # fmt: skip

    def _assign_code(self, name: str, info, value: Value) -> None:
        t = info.type
        if isinstance(t, Scalar):
            if not info.param:
                self.local(self.cname(name), ktypes.ctype(t))
            self.emit(kir.Assign(self.cname(name), convert(value, t), self.line))
        elif isinstance(t, Array):
            c = self.cname(name)
            self.local(c, f"{ktypes.storage_ctype(t.dtype)} *")
            self.emit(kir.Assign(c, value.arr.ptr, self.line))
            for k in range(t.ndim):
                self.local(f"{c}_n{k}", "int64_t")
                self.local(f"{c}_s{k}", "int64_t")
                self.emit(kir.Assign(f"{c}_n{k}", value.arr.shape[k], self.line))
                self.emit(kir.Assign(f"{c}_s{k}", value.arr.strides[k], self.line))
        elif isinstance(t, Tuple):
            for k, (it, v) in enumerate(zip(t.items, value.items)):
                if not isinstance(it, Scalar):
                    raise self.typing(self.node, "tuples of arrays cannot be assigned")
                self.local(f"{self.cname(name)}_{k}", ktypes.ctype(it))
                self.emit(kir.Assign(f"{self.cname(name)}_{k}", convert(v, it), self.line))

    def local(self, cname: str, ctype: str, size=None, space="thread") -> None:
        self.locals_.setdefault(cname, kir.Local(cname, ctype, size, space))

    def temp(self, ctype: str) -> str:
        self.temps += 1
        name = f"t{self.temps}" if self.bound is None else f"{self.prefix}t{self.temps}"
        self.local(name, ctype)
        return name

    def store(self, target: ast.Subscript, value: Value) -> None:
        from .kcalls import element

        ref = element(self, target)
        if ref is None or value.type is None:
            return
        elem, arr = ref
        if not isinstance(value.type, Scalar):
            raise self.typing(target, f"cannot store {value.type} in an element of {arr.type}")
        dst = Scalar(arr.type.dtype)
        if value.type.kind == "c" and dst.kind != "c":
            raise self.typing(target, f"cannot store a complex value in a {dst} array",
                              "store value.real or abs(value)")  # fmt: skip
        if arr.type.space == "const":
            raise self.typing(target, "a global array is read-only in kernels",
                              "pass the array as an argument to write it")  # fmt: skip
        if arr.arr.root is not None:
            self.written.add(arr.arr.root)
        code = convert(value, dst)
        self.emit(kir.Assign(elem, _storage_cast(code, arr.type.dtype), self.line))

    # -- expressions --

    def expr(self, node) -> Value:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            what, hint = _UNSUPPORTED.get(type(node), (f"a {type(node).__name__} expression", ""))
            raise self.unsupported(node, what, hint)
        return method(node)

    def test(self, node) -> str:
        """A condition as a C bool expression (any scalar: its truth value)."""
        v = self.expr(node) if not isinstance(node, ast.BoolOp) else self.boolop(node)
        if v.type is None:
            return "0"
        return truth(self, v, node)

    def expr_Constant(self, node) -> Value:
        if node.value is None:
            return Value(NONE)
        if isinstance(node.value, (str, bytes)):
            raise self.unsupported(node, "a string", "kernels have no strings")
        if isinstance(node.value, type(Ellipsis)):
            return Value(PYOBJ, obj=Ellipsis)
        return constant(node.value)

    def expr_Name(self, node) -> Value:
        name = node.id
        if name in self.locals_named:
            info = self.vars.get(name)
            if info is None or info.type is None:
                self.unknown_at = self.unknown_at or node
                return UNKNOWN
            if info.param:
                return info.value
            if info.fixed is not None:
                return info.fixed
            return _var_value(self.cname(name), info)
        if name not in self.env:
            raise self.typing(
                node,
                f"name '{name}' is not defined",
                "kernels see module globals, closure variables and builtins",
            )
        return self.program.global_value(self.env[name])

    def expr_Tuple(self, node) -> Value:
        items = tuple(self.expr(e) for e in node.elts)
        if any(i.type is None for i in items):
            return UNKNOWN
        if all(i.type is PYOBJ for i in items):
            return Value(PYOBJ, obj=tuple(i.obj for i in items))
        return Value(Tuple(tuple(i.type for i in items)), items=items)

    def expr_Attribute(self, node) -> Value:
        from .kcalls import attribute

        return attribute(self, node)

    def expr_Subscript(self, node) -> Value:
        from .kcalls import subscript

        return subscript(self, node)

    def expr_Call(self, node) -> Value:
        from .kcalls import call

        return call(self, node)

    def expr_BinOp(self, node) -> Value:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.unsupported(node, "the matrix product operator @",
                                   "write the product as loops")  # fmt: skip
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: str, a: Value, b: Value, node) -> Value:
        from .kcalls import arithmetic

        if a.type is None or b.type is None:
            return UNKNOWN
        return arithmetic(self, op, (a, b), node)

    def expr_UnaryOp(self, node) -> Value:
        from .kcalls import arithmetic

        v = self.expr(node.operand)
        if v.type is None:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return Value(ktypes.WEAK_BOOL, f"(!{truth(self, v, node)})")
        if isinstance(node.op, ast.UAdd):
            return v
        name = "negative" if isinstance(node.op, ast.USub) else "invert"
        if name == "negative" and v.const is not _NO and v.type.kind in "if":
            return constant(-v.const)
        return arithmetic(self, name, (v,), node)

    def expr_BoolOp(self, node) -> Value:
        raise self.unsupported(node, f"'{'and' if isinstance(node.op, ast.And) else 'or'}' "
                               "as a value (it returns one of its operands in Python)",
                               "use it in a condition, or write `a if a else b`")  # fmt: skip

    def boolop(self, node) -> Value:
        joiner = " && " if isinstance(node.op, ast.And) else " || "
        parts = [self.test(v) for v in node.values]
        return Value(ktypes.WEAK_BOOL, "(" + joiner.join(parts) + ")")

    def expr_Compare(self, node) -> Value:
        from .kcalls import arithmetic

        left = self.expr(node.left)
        parts = []
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            name = _COMPARE.get(type(op))
            if name is None:
                raise self.unsupported(node, f"the comparison {type(op).__name__}",
                                       "compare numbers with ==, !=, <, <=, >, >=")  # fmt: skip
            if left.type is None or right.type is None:
                return UNKNOWN
            parts.append(arithmetic(self, name, (left, right), node).code)
            left = right
        return Value(ktypes.WEAK_BOOL, parts[0] if len(parts) == 1 else
                     "(" + " && ".join(parts) + ")")  # fmt: skip

    def expr_IfExp(self, node) -> Value:
        cond = self.test(node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if a.type is None or b.type is None:
            return UNKNOWN
        if not (isinstance(a.type, Scalar) and isinstance(b.type, Scalar)):
            raise self.typing(node, f"a conditional expression of {a.type} and {b.type}",
                              "both branches must be scalars")  # fmt: skip
        t = promote(a.type, b.type)
        return Value(t, f"({cond} ? {convert(a, t)} : {convert(b, t)})",
                     nonneg=a.nonneg and b.nonneg)  # fmt: skip


@dataclass(frozen=True)
class ConstArg:
    """An argument whose value is part of the compiled function (``vectorize``'s excluded
    arguments)."""

    value: object

    def __str__(self) -> str:
        return f"constant {self.value!r}"


@dataclass
class _PendingReturn:
    """A return statement whose conversion waits for the function's return type."""

    value: Value | None
    line: int


class VarInfo:
    def __init__(self, t, where, param: bool = False):
        self.type, self.where, self.param = t, where, param
        self.value = None  # a parameter's value
        self.fixed = None  # a shared/local array this name stands for
        self.nonneg = True


def _var_value(c: str, info: VarInfo) -> Value:
    t = info.type
    if isinstance(t, Array):
        return Value(t, arr=ArrayRef(c, tuple(f"{c}_n{k}" for k in range(t.ndim)),
                                     tuple(f"{c}_s{k}" for k in range(t.ndim))))  # fmt: skip
    if isinstance(t, Tuple):
        return Value(t, items=tuple(Value(it, f"{c}_{k}") for k, it in enumerate(t.items)))
    return Value(t, c, nonneg=info.nonneg or t.kind in "bu")


def _identifier(name: str) -> str:
    """A Python name as part of a C identifier (a lambda is "<lambda>")."""
    return re.sub(r"\W", "_", name).strip("_") or "f"


def _store_counts(fn_node) -> dict:
    """How many times each name is assigned in the function (Python's locals)."""
    counts: dict = {}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _as_load(target):
    """``x`` or ``a[i]`` read (an augmented assignment's current value)."""
    copy = ast.parse(ast.unparse(target), mode="eval").body
    ast.copy_location(copy, target)
    for n in ast.walk(copy):
        if hasattr(n, "lineno"):
            ast.copy_location(n, target)
    return copy


def _c_params(cname: str, t) -> list:
    if isinstance(t, Array):
        return ([(f"{ktypes.storage_ctype(t.dtype)} *", cname)]
                + [("int64_t", f"{cname}_n{k}") for k in range(t.ndim)]
                + [("int64_t", f"{cname}_s{k}") for k in range(t.ndim)])  # fmt: skip
    if isinstance(t, Tuple):
        return [p for k, it in enumerate(t.items) for p in _c_params(f"{cname}_{k}", it)]
    return [(ktypes.ctype(t), cname)]


def _describe_obj(obj) -> str:
    name = getattr(obj, "__name__", None) or type(obj).__name__
    return f"the Python object {name}"


def _dtype_name(t) -> str:
    return str(t.dtype) if isinstance(t, Scalar) else "float64"


def _unify(a, b):
    if isinstance(a, Array) and isinstance(b, Array):
        if (a.dtype, a.ndim, a.space) == (b.dtype, b.ndim, b.space):
            return a if a.layout == b.layout else replace(a, layout="A")
        return None
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.items) == len(b.items):
        items = tuple(_unify(x, y) for x, y in zip(a.items, b.items))
        return None if None in items else Tuple(items)
    return ktypes.unify(a, b)


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

"""How the translator (``translate.Translator``) turns a function's statements into kernel IR:
assignments (typed once), ``if``/``while``/``for``, ``return`` and array stores."""

from __future__ import annotations

import ast
import linecache

from ..compile import kir
from . import ktypes
from .kerrors import TypingError
from .kscope import (
    _BINOPS,
    _UNSUPPORTED,
    VarInfo,
    _as_load,
    _describe_obj,
    _dtype_name,
    _PendingReturn,
    _unify,
)
from .ktypes import NONE, Array, Scalar, Tuple
from .kvalues import (
    _NO,
    PYOBJ,
    UNKNOWN,
    Value,
    _storage_cast,
    convert,
)


class Statements:
    """The statement half of ``translate.Translator``."""

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
        if isinstance(merged, Array) and value.arr.root is not None:
            info.roots.add(value.arr.root)  # (writes through the name write what it views)
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

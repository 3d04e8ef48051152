"""How the translator (``translate.Translator``) turns a function's expressions into C values:
names, constants, tuples, operators, comparisons, calls, attributes and subscripts (the last
three through ``kcalls.py``)."""

from __future__ import annotations

import ast

from . import ktypes
from .kscope import _BINOPS, _COMPARE, _UNSUPPORTED, _var_value
from .ktypes import NONE, Scalar, Tuple
from .kvalues import (
    _NO,
    PYOBJ,
    UNKNOWN,
    Value,
    constant,
    convert,
    promote,
    truth,
)


class Expressions:
    """The expression half of ``translate.Translator``."""

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
            return _var_value(self.cname(name), info, name)
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
        """``a or b`` / ``a and b`` as a value: of bools, the bool C's ``||`` / ``&&`` give
        (Numba's typing); of other types Python returns an operand, which kernels don't."""
        values = [self.expr(v) for v in node.values]
        if any(v.type is None for v in values):
            return UNKNOWN
        if all(isinstance(v.type, Scalar) and v.type.kind == "b" for v in values):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            code = "(" + joiner.join(truth(self, v, node) for v in values) + ")"
            weak = all(v.type.weak for v in values)
            return Value(ktypes.WEAK_BOOL if weak else ktypes.BOOL, code)
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

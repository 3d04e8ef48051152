"""The translator's tables and the bookkeeping of a function's variables: which Python
operators are NumPy's ufuncs, what is refused, each variable's C name and type."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from . import ktypes
from .ktypes import Array, Scalar, Tuple
from .kvalues import (
    ArrayRef,
    Value,
)

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
        self.roots: set = set()  # an array variable: the arrays (roots) it has viewed
        self.nonneg = True


def _var_value(c: str, info: VarInfo, name: str = "") -> Value:
    t = info.type
    if isinstance(t, Array):  # (its root: the variable, whose writes reach info.roots)
        return Value(t, arr=ArrayRef(c, tuple(f"{c}_n{k}" for k in range(t.ndim)),
                                     tuple(f"{c}_s{k}" for k in range(t.ndim)),
                                     name or None))  # fmt: skip
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

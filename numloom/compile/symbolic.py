"""Plans generic in sizes: a structure planned at two sizes serves every size alike.

A DAG's plan (its kernels, their IR and their sources) is a function of its structure and of
its nodes' sizes, strides and offsets. ``pipeline.template(order, roots, ...)`` plans a DAG once
more with every one of those integers replaced by a ``Sym``: an int that remembers where it
came from (``N[3].shape[1]``, ``N[5].arg.offset``) and records each question the scheduler and
the lowering ask of it (``N[3].shape[1] == 1``, ``N[5].arg.strides[0] == N[3].shape[1]``) with its
answer. A kernel argument made of them keeps its expression. The result is a ``Template``:

- ``holds(order)``: whether a DAG of the same structure without sizes (``dag.generic_key``)
  answers every recorded question alike, so that planning it would take every same decision;
- ``plan(order)``: then its plan, each kernel's IR and source as planned, its arguments (sizes,
  strides, offsets) computed from the new nodes.

Where a value is used in a way a ``Sym`` cannot follow (turned into text, an index, a float)
the question recorded is its exact value: the template then holds for that value only. A size
hashed (a dict's key) raises, so the template is not made: a hash that misses would hide a
question. C code that reads a ``Sym`` as an int (``range``, NumPy) sees its value and records
nothing; so ``NUMLOOM_PLAN_TEMPLATES=check`` plans every DAG a template serves anew too and
raises where the two differ (the test suite runs so).
"""

from __future__ import annotations

import operator

from ..core.dag import Node, Op, View


class Unfollowed(TypeError):
    """A size was used in a way the template cannot record (hashed): no template."""


class Recorder:
    """The questions a planning asked of its sizes: each a Python expression over ``N`` (the
    DAG's nodes in order) that was true."""

    def __init__(self):
        self.guards: dict = {}  # expression -> None (ordered, each once)

    def record(self, expr: str) -> None:
        self.guards[expr] = None


def _text(x) -> str:
    """``x`` as an expression: a Sym's own, an int's or a float's literal."""
    if type(x) is Sym:
        return x.expr
    if type(x) is float:
        return f"float({repr(x)!r})"  # (inf and nan)
    return repr(int(x))


class Sym(int):
    """An int that is a DAG's size, stride or offset, or made of them (``expr`` computes it
    from ``N``), recording what is asked of it in ``rec``."""

    def __new__(cls, value: int, expr: str, rec: Recorder):
        s = int.__new__(cls, value)
        s.v, s.expr, s.rec = int(value), expr, rec
        return s

    # -- questions: recorded with their answers --

    def _ask(self, other, op, symbol: str):
        if type(other) is Sym:
            b = other.v
        elif isinstance(other, (int, float)):
            b = other
        else:
            return NotImplemented
        answer = op(self.v, b)
        text = f"{self.expr} {symbol} {_text(other)}"
        self.rec.record(text if answer else f"not ({text})")
        return answer

    def __bool__(self):
        answer = self.v != 0
        self.rec.record(f"{self.expr} != 0" if answer else f"{self.expr} == 0")
        return answer

    def __hash__(self):
        raise Unfollowed(f"a size hashed: {self.expr}")

    # -- uses a Sym cannot follow: the exact value --

    def pinned(self) -> int:
        self.rec.record(f"{self.expr} == {self.v}")
        return self.v

    def __int__(self):
        return self.pinned()

    def __index__(self):
        return self.pinned()

    def __float__(self):
        return float(self.pinned())

    def __str__(self):
        return str(self.pinned())

    __repr__ = __str__

    def __format__(self, spec):
        return format(self.pinned(), spec)

    def bit_length(self):
        return self.pinned().bit_length()

    def __truediv__(self, other):
        return self.pinned() / (other.pinned() if type(other) is Sym else other)

    def __rtruediv__(self, other):
        return other / self.pinned()

    def __divmod__(self, other):
        return divmod(self.pinned(), other.pinned() if type(other) is Sym else other)

    def __round__(self, n=None):
        return self.pinned()

    # -- arithmetic: a Sym of the expression --

    def _op(self, other, op, symbol: str, reflected: bool = False):
        if type(other) is Sym:
            b = other.v
        elif isinstance(other, int):  # (a bool, a NumPy integer, an IntEnum)
            b = int(other)
        else:  # (a float: the exact value)
            return op(other, self.pinned()) if reflected else op(self.pinned(), other)
        a_text, b_text = self.expr, _text(other) if type(other) is Sym else repr(b)
        if reflected:
            return Sym(op(b, self.v), f"({b_text} {symbol} {a_text})", self.rec)
        return Sym(op(self.v, b), f"({a_text} {symbol} {b_text})", self.rec)

    def __neg__(self):
        return Sym(-self.v, f"(-{self.expr})", self.rec)

    def __pos__(self):
        return self

    def __abs__(self):
        return Sym(abs(self.v), f"abs({self.expr})", self.rec)

    def __invert__(self):
        return Sym(~self.v, f"(~{self.expr})", self.rec)



def _asking(op, symbol: str):
    return lambda self, other: self._ask(other, op, symbol)


def _making(op, symbol: str, reflected: bool):
    return lambda self, other: self._op(other, op, symbol, reflected)


for _name, _op, _symbol in [("eq", operator.eq, "=="), ("ne", operator.ne, "!="),
                            ("lt", operator.lt, "<"), ("le", operator.le, "<="),
                            ("gt", operator.gt, ">"), ("ge", operator.ge, ">=")]:  # fmt: skip
    setattr(Sym, f"__{_name}__", _asking(_op, _symbol))
for _name, _op, _symbol, _both in [
        ("add", operator.add, "+", True), ("sub", operator.sub, "-", True),
        ("mul", operator.mul, "*", True), ("floordiv", operator.floordiv, "//", True),
        ("mod", operator.mod, "%", True), ("pow", operator.pow, "**", True),
        ("and", operator.and_, "&", True), ("or", operator.or_, "|", True),
        ("lshift", operator.lshift, "<<", False), ("rshift", operator.rshift, ">>", False),
        ("xor", operator.xor, "^", False)]:  # fmt: skip
    setattr(Sym, f"__{_name}__", _making(_op, _symbol, False))
    if _both:
        setattr(Sym, f"__r{_name}__", _making(_op, _symbol, True))

def shadow(order: list, rec: Recorder) -> list:
    """A copy of the sorted DAG ``order`` whose sizes, strides and offsets are ``Sym``s named
    by their place (``N[i].shape[k]``, ``N[i].arg.strides[k]``, ``N[i].arg.offset``)."""
    copies: dict = {}
    out = []
    for i, n in enumerate(order):
        s = Node.__new__(Node)
        s.op, s.dtype, s.where, s.sid, s.call = n.op, n.dtype, n.where, n.sid, n.call
        s.depth, s.fallible = n.depth, n.fallible
        s.srcs = tuple(copies[id(x)] for x in n.srcs)
        s.shape = tuple(Sym(v, f"N[{i}].shape[{k}]", rec) for k, v in enumerate(n.shape))
        arg = n.arg
        if n.op in (Op.VIEW, Op.SCATTER):
            arg = View(
                tuple(Sym(v, f"N[{i}].arg.shape[{k}]", rec) for k, v in enumerate(arg.shape)),
                tuple(Sym(v, f"N[{i}].arg.strides[{k}]", rec) for k, v in enumerate(arg.strides)),
                Sym(arg.offset, f"N[{i}].arg.offset", rec),
            )
        s.arg = arg
        copies[id(n)] = s
        out.append(s)
    return out


def function(exprs, what: str):
    """``lambda N: (...)`` of the expressions ``exprs`` (a guard: their conjunction)."""
    if what == "guard":
        body = " and ".join(f"({e})" for e in exprs) or "True"
    else:
        body = "(" + "".join(f"{e}, " for e in exprs) + ")"
    return eval(f"lambda N: {body}", {"float": float, "abs": abs})  # noqa: S307 (our text)


def value_text(v) -> str:
    """A kernel argument's expression: a Sym's, or a plain int's literal (a constant of the
    plan's code, not a size)."""
    return v.expr if type(v) is Sym else repr(int(v))

"""The values of kernels written in Python while they are translated: a C expression with its
type and, when known at compile time, its Python value (``Value``); array references; C literals;
and NumPy's conversions and promotions between scalar types."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ktypes
from .ktypes import Scalar, Tuple

# --- values ---------------------------------------------------------------------------------


class _PyObject:
    """The type of a compile-time Python object (a module, a function, a dtype)."""

    def __str__(self) -> str:
        return "object"


PYOBJ = _PyObject()
_NO = object()  # no compile-time value


@dataclass(frozen=True)
class ArrayRef:
    """Where an array's elements are: a pointer, its shape and strides (in elements)."""

    ptr: str
    shape: tuple
    strides: tuple
    root: str | None = None  # the kernel argument it views (writes make it an output)
    fixed: bool = False  # a shared or local array: its name stands for it, no locals needed


@dataclass(frozen=True)
class Value:
    """A typed value: a C expression, an array, a tuple of values or a Python object."""

    type: object  # ktypes type, PYOBJ, or None while a variable's type is not known yet
    code: str = ""
    nonneg: bool = False  # an integer known to be >= 0 (no negative-index wrap needed)
    const: object = _NO  # the Python value, when known at compile time
    arr: ArrayRef | None = None
    items: tuple = ()
    obj: object = None


UNKNOWN = Value(None)


def literal(value, dtype) -> str:
    """A C literal of ``value`` as ``dtype`` (floats in hex: exact)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "true" if value else "false"
    if dtype.kind == "c":
        value = complex(value)
        part = "float" if dtype == np.complex64 else "double"
        re, im = literal(value.real, part), literal(value.imag, part)
        return f"{ktypes.storage_ctype(dtype)}_make({re}, {im})"
    if dtype.kind == "f":
        value = float(value)
        if value != value:
            text = "NAN"
        elif value in (float("inf"), float("-inf")):
            text = "INFINITY" if value > 0 else "-INFINITY"
        else:
            text = float(np.float64(value)).hex()
        return f"(({ktypes.ctype(Scalar(dtype))}){text})"
    value = int(value)
    if dtype.kind == "u":
        return f"(({ktypes.ctype(Scalar(dtype))}){value}ULL)"
    text = "(-9223372036854775807LL - 1)" if value == -(2**63) else f"{value}LL"
    return text if dtype == np.int64 else f"(({ktypes.ctype(Scalar(dtype))}){text})"


def constant(value) -> Value:
    """A compile-time Python value as a kernel value."""
    if type(value) in (bool, int, float, complex):
        t = ktypes.typeof(value)
        if t is None:
            raise OverflowError(f"the integer {value} does not fit in 64 bits")
        return Value(t, literal(value, t.dtype), nonneg=_nonneg_const(value), const=value)
    if isinstance(value, np.generic) and ktypes.storage_ctype(value.dtype):
        t = Scalar(value.dtype)
        return Value(t, literal(value.item(), t.dtype), nonneg=_nonneg_const(value), const=value)
    if isinstance(value, tuple) and all(_is_scalar_const(v) for v in value):
        items = tuple(constant(v) for v in value)
        return Value(Tuple(tuple(i.type for i in items)), items=items, const=value)
    return Value(PYOBJ, obj=value)


def _is_scalar_const(v) -> bool:
    return type(v) in (bool, int, float, complex) or isinstance(v, np.generic)


def _nonneg_const(v) -> bool:
    return not isinstance(v, (complex, np.complexfloating)) and v == v and v >= 0


# --- conversions ------------------------------------------------------------------------------


def promote(a: Scalar, b: Scalar) -> Scalar:
    """The type two scalars combine to (a conditional expression, min/max): NEP 50."""
    if a.weak and b.weak:
        return a if ktypes.KINDS.index(a.kind) >= ktypes.KINDS.index(b.kind) else b
    if a.weak or b.weak:
        weak, fixed = (a, b) if a.weak else (b, a)
        return Scalar(np.result_type(fixed.dtype, ktypes.weak_value(weak)))
    return Scalar(np.promote_types(a.dtype, b.dtype))


def convert(value: Value, t: Scalar) -> str:
    """The C expression of scalar ``value`` converted to ``t`` as NumPy's astype converts."""
    from ..compile.snippets import cast

    src = value.type
    if value.const is not _NO and not isinstance(value.const, tuple):
        if t.kind != "c" or not isinstance(value.const, (complex, np.complexfloating)):
            with np.errstate(all="ignore"):
                if t.kind != "c" and isinstance(value.const, (complex, np.complexfloating)):
                    return cast(value.code, src.dtype, t.dtype)
                return literal(np.array(value.const).astype(t.dtype)[()].item(), t.dtype)
    if src.dtype == t.dtype:
        return value.code
    if t.kind == "c":
        part = "float" if t.dtype == np.complex64 else "double"
        make = f"{ktypes.storage_ctype(t.dtype)}_make"
        if src.kind == "c":
            return f"{make}(({part}){value.code}.re, ({part}){value.code}.im)"
        return f"{make}(({part})({value.code}), ({part})0)"
    if src.kind == "c":
        raise TypeError(f"cannot convert complex to {t}")
    return cast(value.code, src.dtype, t.dtype)


def _storage_cast(code: str, dtype) -> str:
    """A computed value as an array element (float16 stores round to half)."""
    ctype = ktypes.storage_ctype(dtype)
    if np.dtype(dtype).kind == "c":
        return code
    return f"({ctype})({code})"


def truth(tr, v: Value, node) -> str:
    """The truth value of a scalar, as Python's ``bool(v)``."""
    if not isinstance(v.type, Scalar):
        raise tr.typing(node, f"the truth value of {v.type} is ambiguous",
                        "compare it explicitly, e.g. a.shape[0] > 0")  # fmt: skip
    if v.type.kind == "b":
        return v.code
    if v.type.kind == "c":
        return f"({v.code}.re != 0 || {v.code}.im != 0)"
    return f"({v.code} != 0)"

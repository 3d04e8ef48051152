"""The types of values in kernels written in Python (``numloom.cuda.jit``, ``numloom.vectorize``).

A value is a ``Scalar`` (a NumPy dtype; *weak* when it is a Python bool, int, float or complex,
which NumPy 2 lets the other operand's dtype decide, NEP 50), an ``Array`` (dtype, dimensions,
layout, memory space) or a ``Tuple``. Kernels compute as Python computes with NumPy scalars::

    np.float32(x) * 2.5      -> float32       (the Python float is weak)
    np.int32(i) + np.int64(j) -> int64
    7 // 2, 7 / 2             -> Python int, Python float (both weak)

Numba's signature strings (``"float32(float32, float32[:, ::1])"``) parse to these types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scalar:
    dtype: np.dtype
    weak: bool = False

    def __str__(self) -> str:
        if self.weak:
            return {"b": "bool", "i": "int", "f": "float", "c": "complex"}[self.dtype.kind] + (
                " (Python)"
            )
        return str(self.dtype)

    @property
    def kind(self) -> str:
        return self.dtype.kind


@dataclass(frozen=True)
class Array:
    dtype: np.dtype
    ndim: int
    layout: str = "A"  # "C": C-contiguous (the last stride is 1 and the others follow)
    space: str = "global"  # "global", "shared" (a block's) or "local" (a thread's)

    def __str__(self) -> str:
        dims = [":"] * self.ndim
        if self.layout == "C" and dims:
            dims[-1] = "::1"
        where = "" if self.space == "global" else f" ({self.space})"
        return f"{self.dtype}[{', '.join(dims)}]{where}"


@dataclass(frozen=True)
class Tuple:
    items: tuple

    def __str__(self) -> str:
        return (
            "("
            + ", ".join(str(t) for t in self.items)
            + ("," if len(self.items) == 1 else "")
            + ")"
        )


@dataclass(frozen=True)
class NoneType:
    def __str__(self) -> str:
        return "none"


NONE = NoneType()
BOOL = Scalar(np.dtype(bool))
INT64 = Scalar(np.dtype(np.int64))
FLOAT64 = Scalar(np.dtype(np.float64))
WEAK_BOOL = Scalar(np.dtype(bool), True)
WEAK_INT = Scalar(np.dtype(np.int64), True)
WEAK_FLOAT = Scalar(np.dtype(np.float64), True)
WEAK_COMPLEX = Scalar(np.dtype(np.complex128), True)
WEAK = {"b": WEAK_BOOL, "i": WEAK_INT, "f": WEAK_FLOAT, "c": WEAK_COMPLEX}
KINDS = "biufc"  # ordered: a Python value of a later kind does not fit an earlier one
_SAMPLE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def sample(t: Scalar):
    """What NumPy's type resolution should see for ``t``: a dtype, or a Python type if weak."""
    return type(_SAMPLE[t.kind]) if t.weak else t.dtype


def weak_value(t: Scalar):
    return _SAMPLE[t.kind]


def strong(t: Scalar) -> Scalar:
    return Scalar(t.dtype) if t.weak else t


# --- C types ------------------------------------------------------------------------------------

_STORAGE = {
    "b1": "bool", "i1": "int8_t", "i2": "int16_t", "i4": "int32_t", "i8": "int64_t",
    "u1": "uint8_t", "u2": "uint16_t", "u4": "uint32_t", "u8": "uint64_t", "f2": "nl_half",
    "f4": "float", "f8": "double", "c8": "nl_complex64", "c16": "nl_complex128",
}  # fmt: skip


def storage_ctype(dtype) -> str:
    """The C type of ``dtype``'s elements in memory (None when kernels cannot hold it)."""
    dtype = np.dtype(dtype)
    return _STORAGE.get(f"{dtype.kind}{dtype.itemsize}")


def ctype(t) -> str:
    """The C type a value of type ``t`` is computed in (float16 computes in float)."""
    if isinstance(t, Scalar):
        c = storage_ctype(t.dtype)
        return "float" if c == "nl_half" else c
    raise TypeError(f"no C type for {t}")


# --- unification: one type per variable ---------------------------------------------------------


def unify(old, new):
    """The type of a variable that held ``old`` and is assigned ``new``, or None when the two
    cannot be one type. A Python scalar takes the type of a NumPy one it fits (``acc = 0`` and
    then ``acc = acc + x[i]``); two Python scalars unify to the larger kind (int, then float)."""
    if old == new:
        return old
    if not (isinstance(old, Scalar) and isinstance(new, Scalar)):
        return None
    if old.weak and new.weak:
        return old if KINDS.index(old.kind) >= KINDS.index(new.kind) else new
    if old.weak or new.weak:
        weak, fixed = (old, new) if old.weak else (new, old)
        if np.result_type(fixed.dtype, weak_value(weak)) == fixed.dtype:
            return fixed
    return None


def fits(value_type: Scalar, target: Scalar) -> bool:
    """Whether a value converts to ``target`` without changing kind (a store, an argument)."""
    return unify(target, value_type) == target or (
        value_type.weak and KINDS.index(value_type.kind) <= KINDS.index(target.kind)
    )


# --- values at a launch -------------------------------------------------------------------------


def typeof(value):
    """The kernel type of a launch argument, or None when kernels cannot take it."""
    from ..core.array import ndarray

    if type(value) is bool:
        return WEAK_BOOL
    if type(value) is int:
        return WEAK_INT if -(2**63) <= value < 2**63 else None
    if type(value) is float:
        return WEAK_FLOAT
    if type(value) is complex:
        return WEAK_COMPLEX
    if isinstance(value, np.generic):
        return Scalar(value.dtype) if storage_ctype(value.dtype) else None
    if isinstance(value, ndarray):
        layout = "C" if value._view.is_contiguous() else "A"
        return Array(value.dtype, value.ndim, layout) if storage_ctype(value.dtype) else None
    if isinstance(value, np.ndarray):
        if storage_ctype(value.dtype) is None:
            return None
        return Array(value.dtype, value.ndim, "C" if value.flags.c_contiguous else "A")
    return None


# --- Numba's signature strings ------------------------------------------------------------------

_NAMES = {
    "boolean": "bool", "bool_": "bool", "b1": "bool", "bool": "bool",
    "int8": "int8", "i1": "int8", "int16": "int16", "i2": "int16", "int32": "int32",
    "i4": "int32", "int64": "int64", "i8": "int64", "intp": "int64", "intc": "int32",
    "uint8": "uint8", "u1": "uint8", "uint16": "uint16", "u2": "uint16", "uint32": "uint32",
    "u4": "uint32", "uint64": "uint64", "u8": "uint64", "uintp": "uint64", "uintc": "uint32",
    "float16": "float16", "f2": "float16", "float32": "float32", "f4": "float32",
    "float64": "float64", "f8": "float64", "double": "float64", "float_": "float32",
    "complex64": "complex64", "c8": "complex64", "complex128": "complex128",
    "c16": "complex128",
}  # fmt: skip
_TYPE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?\s*")


def parse_type(text: str):
    """``"float32"`` -> Scalar, ``"float32[:, ::1]"`` -> Array, ``"void"`` -> NONE."""
    m = _TYPE.fullmatch(text)
    if m is None:
        raise ValueError(f"cannot read the type {text!r}; write e.g. 'float32' or 'float32[:]'")
    name, dims = m.group(1), m.group(2)
    if name in ("void", "none"):
        if dims:
            raise ValueError(f"{text!r}: void has no arrays")
        return NONE
    if name not in _NAMES:
        raise ValueError(f"unknown type {name!r} in {text!r}; numloom kernels take "
                         f"{', '.join(sorted(set(_NAMES.values())))}")  # fmt: skip
    dtype = np.dtype(_NAMES[name])
    if not dims:
        return Scalar(dtype)
    parts = [p.strip() for p in dims[1:-1].split(",")]
    if not all(p in (":", "::1") for p in parts):
        raise ValueError(f"{text!r}: each dimension is ':' (or '::1' for the last of a "
                         f"C-contiguous array)")  # fmt: skip
    layout = "C" if parts[-1] == "::1" else "A"
    return Array(dtype, len(parts), layout)


def parse_signature(text: str):
    """``"float32(float32, float32)"`` -> (return type, argument types)."""
    text = text.strip()
    m = re.fullmatch(r"([^(]*)\((.*)\)", text)
    if m is None:
        return None, tuple(_split_args(text))
    ret = parse_type(m.group(1)) if m.group(1).strip() else None
    return ret, tuple(_split_args(m.group(2)))


def _split_args(text: str) -> list:
    args, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            args.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        args.append(text[start:])
    return [parse_type(a) for a in args]

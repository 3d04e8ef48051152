"""The C of element types, of each elementwise op (one row per op: ``SNIPPETS``, and
``COMPLEX_SNIPPETS`` for complex values) and of casts, shared by every dialect."""

from __future__ import annotations

import numpy as np

from ..core.dag import Node


class Unsupported(Exception):
    """This kernel has a node the code generator does not handle; it runs node by node."""


# --- types -------------------------------------------------------------------------------------

STORAGE_TYPE = {
    "b": "bool", "i1": "int8_t", "i2": "int16_t", "i4": "int32_t", "i8": "int64_t",
    "u1": "uint8_t", "u2": "uint16_t", "u4": "uint32_t", "u8": "uint64_t",
    "f2": "nl_half", "f4": "float", "f8": "double", "c8": "nl_complex64", "c16": "nl_complex128",
}  # fmt: skip


def storage_type(dtype) -> str:
    dtype = np.dtype(dtype)
    key = "b" if dtype.kind == "b" else f"{dtype.kind}{dtype.itemsize}"
    if key not in STORAGE_TYPE:
        raise Unsupported(f"dtype {dtype}")
    return STORAGE_TYPE[key]


def compute_type(dtype) -> str:
    """The C type values of ``dtype`` are computed in (float16 computes in float)."""
    ctype = storage_type(dtype)
    return "float" if ctype == "nl_half" else ctype


def converted(ctype: str, expr: str) -> str:
    """``expr`` converted to ``ctype``: a C cast, but none for complex values (structs, which
    are converted by ``cast`` only)."""
    return expr if ctype.startswith("nl_complex") else f"({ctype})({expr})"


def _loaded(ctype: str, j: int, flat: str) -> str:
    """Element ``flat`` of input ``j`` in the compute type (the backends' renderers find loads
    by this spelling)."""
    return f"in{j}[{flat}]" if ctype.startswith("nl_complex") else f"({ctype})in{j}[{flat}]"


def _suffix(dtype) -> str:
    """libm's suffix for the compute type: sinf for float (and float16), sin for double."""
    return "" if np.dtype(dtype) == np.float64 else "f"


# --- op snippets: one row per op -----------------------------------------------------------------


def _libm(fn):
    return lambda a, dt: f"{fn}{_suffix(dt)}({', '.join(a)})"


def _typed(fn_float, fn_int):
    """A NumPy-exact helper: nl_<fn>_f / nl_<fn>_ for floats, nl_<fn>_<ctype> for integers."""

    def snippet(a, dt):
        if np.dtype(dt).kind == "f":
            return f"nl_{fn_float}_{_suffix(dt)}({', '.join(a)})"
        if fn_int is None:
            raise Unsupported(f"{fn_float} on {dt}")
        return f"nl_{fn_int}_{compute_type(dt)}({', '.join(a)})"

    return snippet


def _kind_is(dt, kinds):
    return np.dtype(dt).kind in kinds


def _wrap(expr):
    return lambda a, dt: f"(({compute_type(dt)})({expr.format(*a)}))"


SNIPPETS = {
    "add": lambda a, dt: f"({a[0]} || {a[1]})" if _kind_is(dt, "b") else _wrap("{} + {}")(a, dt),
    "subtract": _wrap("{} - {}"),
    "multiply": lambda a, dt: f"({a[0]} && {a[1]})" if _kind_is(dt, "b")
    else _wrap("{} * {}")(a, dt),
    "divide": lambda a, dt: f"({a[0]} / {a[1]})",
    "floor_divide": _typed("floor_divide", "floor_divide"),
    "remainder": _typed("remainder", "remainder"),
    "divmod.0": _typed("floor_divide", "floor_divide"),
    "divmod.1": _typed("remainder", "remainder"),
    "fmod": lambda a, dt: _libm("fmod")(a, dt) if _kind_is(dt, "f")
    else f"nl_fmod_{compute_type(dt)}({a[0]}, {a[1]})",
    "power": lambda a, dt: _libm("pow")(a, dt) if _kind_is(dt, "f") else _integer_power(a, dt),
    "float_power": _libm("pow"),
    "negative": _wrap("-{}"),
    "positive": lambda a, dt: a[0],
    "absolute": lambda a, dt: _libm("fabs")(a, dt) if _kind_is(dt, "f")
    else (a[0] if _kind_is(dt, "b") else f"nl_abs_{compute_type(dt)}({a[0]})"),
    "fabs": _libm("fabs"),
    "sign": _typed("sign", "sign"),
    "reciprocal": lambda a, dt: f"(({compute_type(dt)})1 / {a[0]})" if _kind_is(dt, "f")
    else _unsupported("reciprocal of integers"),
    "square": _wrap("{0} * {0}"),
    "sqrt": _libm("sqrt"), "cbrt": _libm("cbrt"), "exp": _libm("exp"), "exp2": _libm("exp2"),
    "expm1": _libm("expm1"), "log": _libm("log"), "log2": _libm("log2"),
    "log10": _libm("log10"), "log1p": _libm("log1p"), "sin": _libm("sin"), "cos": _libm("cos"),
    "tan": _libm("tan"), "arcsin": _libm("asin"), "arccos": _libm("acos"),
    "arctan": _libm("atan"), "arctan2": _libm("atan2"), "hypot": _libm("nl_hypot"),
    "sinh": _libm("sinh"), "cosh": _libm("cosh"), "tanh": _libm("tanh"),
    "arcsinh": _libm("asinh"), "arccosh": _libm("acosh"), "arctanh": _libm("atanh"),
    "logaddexp": _typed("logaddexp", None), "logaddexp2": _typed("logaddexp2", None),
    "deg2rad": lambda a, dt: _angle(a[0], dt, "M_PI", "180"),
    "radians": lambda a, dt: _angle(a[0], dt, "M_PI", "180"),
    "rad2deg": lambda a, dt: _angle(a[0], dt, "180", "M_PI"),
    "degrees": lambda a, dt: _angle(a[0], dt, "180", "M_PI"),
    "equal": lambda a, dt: f"({a[0]} == {a[1]})",
    "not_equal": lambda a, dt: f"({a[0]} != {a[1]})",
    "less": lambda a, dt: f"({a[0]} < {a[1]})",
    "less_equal": lambda a, dt: f"({a[0]} <= {a[1]})",
    "greater": lambda a, dt: f"({a[0]} > {a[1]})",
    "greater_equal": lambda a, dt: f"({a[0]} >= {a[1]})",
    "logical_and": lambda a, dt: f"(({a[0]} != 0) && ({a[1]} != 0))",
    "logical_or": lambda a, dt: f"(({a[0]} != 0) || ({a[1]} != 0))",
    "logical_xor": lambda a, dt: f"(({a[0]} != 0) != ({a[1]} != 0))",
    "logical_not": lambda a, dt: f"({a[0]} == 0)",
    "maximum": lambda a, dt: f"nl_max_{_suffix(dt)}({a[0]}, {a[1]})" if _kind_is(dt, "f")
    else f"NL_IMAX({a[0]}, {a[1]})",
    "minimum": lambda a, dt: f"nl_min_{_suffix(dt)}({a[0]}, {a[1]})" if _kind_is(dt, "f")
    else f"NL_IMIN({a[0]}, {a[1]})",
    "fmax": lambda a, dt: _libm("fmax")(a, dt) if _kind_is(dt, "f") else f"NL_IMAX({a[0]}, {a[1]})",
    "fmin": lambda a, dt: _libm("fmin")(a, dt) if _kind_is(dt, "f") else f"NL_IMIN({a[0]}, {a[1]})",
    "bitwise_and": _wrap("{} & {}"), "bitwise_or": _wrap("{} | {}"),
    "bitwise_xor": _wrap("{} ^ {}"),
    "invert": lambda a, dt: f"(!{a[0]})" if _kind_is(dt, "b") else _wrap("~{}")(a, dt),
    "left_shift": lambda a, dt: f"nl_lshift_{compute_type(dt)}({a[0]}, {a[1]})",
    "right_shift": lambda a, dt: f"nl_rshift_{compute_type(dt)}({a[0]}, {a[1]})",
    "isnan": lambda a, dt: f"({a[0]} != {a[0]})" if _kind_is(dt, "f") else "false",
    "isinf": lambda a, dt: f"(isinf({a[0]}) != 0)" if _kind_is(dt, "f") else "false",
    "isfinite": lambda a, dt: f"(isfinite({a[0]}) != 0)" if _kind_is(dt, "f") else "true",
    "signbit": lambda a, dt: f"(signbit({a[0]}) != 0)",
    "copysign": _libm("copysign"),
    "nextafter": lambda a, dt: _unsupported("nextafter on float16") if np.dtype(dt) == np.float16
    else _libm("nextafter")(a, dt),
    "heaviside": _typed("heaviside", None),
    "floor": lambda a, dt: _libm("floor")(a, dt) if _kind_is(dt, "f") else a[0],
    "ceil": lambda a, dt: _libm("ceil")(a, dt) if _kind_is(dt, "f") else a[0],
    "trunc": lambda a, dt: _libm("trunc")(a, dt) if _kind_is(dt, "f") else a[0],
    "rint": lambda a, dt: _libm("rint")(a, dt) if _kind_is(dt, "f") else a[0],
    "where": lambda a, dt: f"({a[0]} ? {a[1]} : {a[2]})",
    "clip": lambda a, dt: (f"nl_min_{_suffix(dt)}(nl_max_{_suffix(dt)}({a[0]}, {a[1]}), {a[2]})"
                           if _kind_is(dt, "f") else f"NL_IMIN(NL_IMAX({a[0]}, {a[1]}), {a[2]})"),
}  # fmt: skip


# Ops whose NumPy loops raise for some data (a signed integer to a negative power): for the
# loops that can, the snippet gets an error slot to flag it (the backend raises NumPy's error).
FLAGS_DATA = {"power": lambda loop: np.dtype(loop).kind == "i"}


def _integer_power(a: list, dt) -> str:
    """An integer power; given an error slot (``a[2]``), one that flags negative exponents."""
    checked = "_checked" if len(a) == 3 else ""
    return f"nl_power{checked}_{compute_type(dt)}({', '.join(a)})"


def _angle(x: str, dt, num: str, den: str) -> str:
    """NumPy's degrees/radians: the factor computed in the loop's type (float for float32)."""
    t = compute_type(dt)
    return f"({x} * (({t}){num} / ({t}){den}))"


_COMPARE = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">="}  # fmt: skip


def _mixed_comparison(n: Node, args: list):
    """A comparison of a signed with an unsigned integer: exact (C would convert the signed one
    to unsigned, so -1 > 2**64 - 1), as NumPy's mixed comparison loops are."""
    op = _COMPARE.get(n.arg)
    if op is None:
        return None
    kinds = [s.dtype.kind for s in n.srcs]
    if kinds == ["i", "u"]:
        return f"(nl_cmp_su((int64_t){args[0]}, (uint64_t){args[1]}) {op} 0)"
    if kinds == ["u", "i"]:
        return f"(0 {op} nl_cmp_su((int64_t){args[1]}, (uint64_t){args[0]}))"
    return None


def _unsupported(what):
    raise Unsupported(what)


# Complex loops (``c``: the loop's C type, nl_complex64 or nl_complex128): NumPy's arithmetic
# (numloom.h spells out its formulas). Their other ufuncs run through NumPy.
COMPLEX_SNIPPETS = {
    "add": lambda a, c: f"{c}_add({a[0]}, {a[1]})",
    "subtract": lambda a, c: f"{c}_sub({a[0]}, {a[1]})",
    "multiply": lambda a, c: f"{c}_mul({a[0]}, {a[1]})",
    "divide": lambda a, c: f"{c}_div({a[0]}, {a[1]})",
    "negative": lambda a, c: f"{c}_neg({a[0]})",
    "positive": lambda a, c: a[0],
    "conjugate": lambda a, c: f"{c}_conj({a[0]})",
    "square": lambda a, c: f"{c}_square({a[0]})",
    "absolute": lambda a, c: f"{c}_abs({a[0]})",
    "equal": lambda a, c: f"{c}_eq({a[0]}, {a[1]})",
    "not_equal": lambda a, c: f"(!{c}_eq({a[0]}, {a[1]}))",
    "isnan": lambda a, c: f"(({a[0]}).re != ({a[0]}).re || ({a[0]}).im != ({a[0]}).im)",
    "isinf": lambda a, c: f"(isinf(({a[0]}).re) || isinf(({a[0]}).im))",
    "isfinite": lambda a, c: f"(isfinite(({a[0]}).re) && isfinite(({a[0]}).im))",
    "where": lambda a, c: f"({a[0]} ? {a[1]} : {a[2]})",
}  # fmt: skip


def _is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


# --- casts ---------------------------------------------------------------------------------------


def cast(expr: str, src, dst) -> str:
    """``expr`` (in src's compute type) converted to dst as NumPy's astype does."""
    src, dst = np.dtype(src), np.dtype(dst)
    if dst.kind == "c":
        part = "float" if dst == np.complex64 else "double"
        if src.kind == "c":
            return f"{compute_type(dst)}_make(({part})({expr}).re, ({part})({expr}).im)"
        return f"{compute_type(dst)}_make(({part})({expr}), ({part})0)"
    if src.kind == "c":  # NumPy's astype keeps the real part (it warns at the call)
        if dst.kind == "b":
            return f"(({expr}).re != 0 || ({expr}).im != 0)"
        return cast(f"({expr}).re", np.float32 if src == np.complex64 else np.float64, dst)
    if dst.kind == "b":
        return f"({expr} != 0)"
    if dst == np.float16:
        return f"((float)(nl_half)({expr}))"
    if src.kind == "f" and dst.kind in "iu":
        # NaN and out-of-range values convert as on x86, where NumPy runs: through int32 for
        # small types (the header spells it out for every device)
        return f"nl_f2{compute_type(dst).replace('_t', '')}({expr})"
    return f"(({compute_type(dst)})({expr}))"

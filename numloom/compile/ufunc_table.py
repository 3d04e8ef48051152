"""The elementwise op table: one row per op numloom computes elementwise.

A row is the op's name (NumPy's ``ufunc.__name__``), its inputs and outputs, and the NumPy
callable that defines it. The reference executor calls that callable; the code generators add
their own snippets keyed by the same names.
"""

from __future__ import annotations

import numpy as np
from numpy._core import umath as _umath

# Ufuncs that map elementwise over numloom's dtypes (gufuncs and datetime-only ones excluded).
ELEMENTWISE_UFUNCS = (
    # arithmetic
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power",
    "float_power", "negative", "positive", "absolute", "fabs", "sign", "reciprocal", "square",
    "sqrt", "cbrt", "divmod",
    # exponents and logarithms
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians",
    # comparisons and logic
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "maximum", "minimum", "fmax", "fmin",
    # bits
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
    "bitwise_count", "gcd", "lcm",
    # floating point
    "isnan", "isinf", "isfinite", "signbit", "copysign", "nextafter", "spacing", "ldexp",
    "frexp", "modf", "heaviside",
    # rounding
    "floor", "ceil", "trunc", "rint",
    # complex
    "conjugate",
)  # fmt: skip


def _complex_from_parts(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """``re + im*1j`` set part by part: arithmetic would turn infinite parts into NaNs."""
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re, im, np.complex64))
    out.real, out.imag = re, im
    return out


# name -> NumPy callable computing it from inputs that already have the loop's dtypes.
NUMPY_UFUNCS = {name: getattr(np, name) for name in ELEMENTWISE_UFUNCS}
NUMPY_UFUNCS.update(
    {
        "where": np.where,
        "clip": _umath.clip,
        "frexp.0": lambda x: np.frexp(x)[0],
        "frexp.1": lambda x: np.frexp(x)[1],
        "modf.0": lambda x: np.modf(x)[0],
        "modf.1": lambda x: np.modf(x)[1],
        # (NumPy's divmod: its warnings name divmod, not floor_divide)
        "divmod.0": lambda a, b: np.divmod(a, b)[0],
        "divmod.1": lambda a, b: np.divmod(a, b)[1],
        "complex": _complex_from_parts,
    }
)


COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})


# Compiled ``numloom.vectorize`` functions, by the MAP name their nodes carry ("vectorize.<hash>"):
# objects with ``snippet(args, dtype)`` (the C call), ``definitions`` (the kir functions it
# needs) and ``numpy(*arrays)`` (the same function through NumPy, for the reference executor).
USER_UFUNCS: dict = {}

# Compiled ``numloom.vectorize(signature=...)`` functions of scalar results, by the name their
# GUFUNC nodes carry ("gufunc.<hash>"): objects with ``types`` (the function's parameter types,
# arrays for core operands), ``pointer(i)`` (the C pointer type of array parameter ``i``),
# ``call(args)`` (the C call, of type ``ret_ctype``), ``result(value, k)`` (result ``k`` of a
# call's value), ``definitions`` and ``numpy(k, *arrays)`` (result ``k`` through NumPy's loop,
# for the reference executor).
USER_GUFUNCS: dict = {}

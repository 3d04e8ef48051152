"""NumPy's floating-point error state for deferred operations.

NumPy checks the IEEE flags after each ufunc loop and warns (``RuntimeWarning: divide by zero
encountered in divide``) or raises ``FloatingPointError`` as ``np.errstate``/``np.seterr`` say
*at that call*. numloom runs the operation later, fused with others, so it keeps what the call
knew: each traced elementwise operation that can raise records NumPy's error state and the
user's line (``record``). A compiled elementwise kernel (CPU or CUDA) that holds such an
operation checks the values an error would show in (its float outputs, and integer divisors)
into one flag: an argument word on the CPU, a word of page-locked host memory a GPU kernel
writes through the bus, read when the evaluation's kernels are done. A reduction of such
operations has its float results checked instead. A kernel whose flag is set runs its nodes
again through NumPy (a GPU's whole segment, on the host), each under its own call's error
state (``compute``), so the warnings and exceptions are NumPy's own (none, for inputs that were
not finite already), given at the user's line. An exception then fails the evaluation as a
data error does: arrays computed from the operation raise it again when used, the others keep
their values.

Not checked yet (README says so): an inf or NaN that a comparison or select hides inside one
kernel, unless it comes straight from a division or logarithm (checking every operand costs
several times the work of loops like Mandelbrot's), one that a reduction hides (argmax, the min
of an overflow), the overflow of a sum itself, and the operations fused into a row, scan or
write kernel.
"""

from __future__ import annotations

import warnings

import numpy as _np
from numpy._core._ufunc_config import _extobj_contextvar

from .dag import warn_at_user

# Elementwise operations whose NumPy loops can set the divide, overflow or invalid flag.
FLOAT_RAISING = frozenset({
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "divmod.0", "divmod.1", "power", "float_power", "square", "reciprocal", "exp",
    "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "arcsin",
    "arccos", "arccosh", "arctanh", "sinh", "cosh", "hypot", "logaddexp", "logaddexp2", "ldexp",
})  # fmt: skip
INTEGER_DIVIDING = frozenset({"floor_divide", "remainder", "fmod", "divmod.0", "divmod.1"})
# A select or comparison can hide an inf or NaN of its operands from the kernel's outputs;
# it is checked when that operand comes straight from an operation that divides (the idiom
# np.where(x != 0, 1 / x, 0)). Checking every operand costs too much in long loops of selects.
HIDING = frozenset({"where", "equal", "not_equal", "less", "less_equal", "greater",
                    "greater_equal", "isnan", "isinf", "isfinite", "fmax", "fmin"})  # fmt: skip
DIVIDING = frozenset({"divide", "true_divide", "floor_divide", "remainder", "fmod", "reciprocal",
                      "log", "log2", "log10", "log1p", "arctanh", "power", "float_power"})  # fmt: skip
_QUIET = {"divide": "ignore", "over": "ignore", "invalid": "ignore"}


def raising(name: str, loop) -> bool:
    """Whether the loop of ufunc ``name`` on dtype ``loop`` can set an error flag."""
    kind = _np.dtype(loop).kind
    if kind == "f":
        return name in FLOAT_RAISING
    return kind in "iu" and name in INTEGER_DIVIDING


def record(n, where) -> None:
    """Remember the error state of the call that made ``n`` and the user's line (on the node:
    an interned node made again by another call takes that call's)."""
    n.call = (_extobj_contextvar.get(), where)


def may_report(nodes) -> bool:
    """Whether any of ``nodes`` was called under an error state that does not ignore
    divide, overflow and invalid values (only then is a kernel's flag worth reading). Each
    launch asks, so each distinct state is looked at once (``_reports``)."""
    seen = None
    for n in nodes:
        call = n.call
        if call is not None and call[0] is not seen:
            seen = call[0]
            if _reports(seen):
                return True
    return False


_REPORTING: dict = {}  # NumPy's error-state object -> whether it reports anything


def _reports(extobj) -> bool:
    """Whether the error state ``extobj`` (None: NumPy's default) warns or raises on divide,
    overflow or invalid values."""
    found = _REPORTING.get(extobj)
    if found is None:
        if extobj is None:
            found = True  # NumPy's default warns
        else:
            token = _extobj_contextvar.set(extobj)
            try:
                state = _np.geterr()
            finally:
                _extobj_contextvar.reset(token)
            found = any(state[k] != "ignore" for k in _QUIET)
        if len(_REPORTING) > 256:  # (states of finished errstate blocks: forget them)
            _REPORTING.clear()
        _REPORTING[extobj] = found
    return found


def finite(arrays) -> bool:
    """Whether every float value of ``arrays`` (a reduction's results) is finite."""
    return all(_np.isfinite(a).all() for a in arrays if a.dtype.kind == "f")


def _state(n) -> tuple:
    """``(errstate dict, (file, line) or None)`` of the call that made ``n`` (NumPy's default
    state for an operation numloom made itself)."""
    extobj, where = n.call or (None, None)
    if extobj is None:
        return {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}, where
    token = _extobj_contextvar.set(extobj)
    try:
        return _np.geterr(), where
    finally:
        _extobj_contextvar.reset(token)


def compute(n, srcs: list, compute_node):
    """``compute_node(n, srcs)`` under the error state of ``n``'s call; NumPy's warnings are
    given again at the user's line, its ``FloatingPointError`` raised as a data error. A node
    that recorded no call (numloom made it, or it cannot raise) runs with every error ignored."""
    from .realize import DataError

    if n.call is None:
        with _np.errstate(all="ignore"):
            return compute_node(n, srcs)
    state, where = _state(n)
    with _np.errstate(**state), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = compute_node(n, srcs)
        except FloatingPointError as error:
            raise DataError(n, error) from None
    for w in caught:
        if where is None:
            warn_at_user(w.message, w.category)
        else:
            warnings.warn_explicit(w.message, w.category, where[0], where[1])
    return value

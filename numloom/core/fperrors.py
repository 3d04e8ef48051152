"""NumPy's floating-point error state for deferred operations.

NumPy checks the IEEE flags after each ufunc loop and warns (``RuntimeWarning: divide by zero
encountered in divide``) or raises ``FloatingPointError`` as ``np.errstate``/``np.seterr`` say
*at that call*. numloom runs the operation later, fused with others, so it keeps what the call
knew: each traced operation that can raise (``can_raise``: arithmetic, a float sum, product or
scan, a narrowing or float-to-integer cast, a matrix product) records NumPy's error state and
the user's line (``record``). A kernel holding such an operation sets a flag word when it finds
an error: an argument on the CPU, a word of page-locked host memory a GPU kernel writes through
the bus, read when the evaluation's kernels are done (once per evaluation on a GPU: its
segments of kernels and cuBLAS calls keep their inputs until then, ``cuda_launch._FlagReads``).
A kernel whose flag is set runs its nodes again through NumPy (a GPU's whole segment, on the
host), each under its own call's error state (``compute``), so the warnings and exceptions are
NumPy's own (none, for inputs that were not finite already), given at the user's line. An
exception then fails the evaluation as a data error does: arrays computed from the operation
raise it again when used, the others keep their values.

On the CPU the kernel reads the IEEE flags themselves: each OpenMP thread clears them when its
share starts and ORs what it raised into the flag word when it ends (``fetestexcept``, as
numloom.h's ``NL_FE_ENTER``/``NL_FE_LEAVE``), so nothing is hidden by a comparison, a select or
a reduction, and the loops do no extra work. The word's bits are NumPy's categories
(``BITS``), so an underflow is looked at only where the call's state does not ignore it. A GPU
has no such flags: each operation that can raise is checked where its value is made (a
multiply-add of the value by 0 into a per-thread sum, NaN once any value is not finite;
numloom.h's ``NL_FE_F``), unless every path from it passes an inf or NaN on to a value that
is checked (``PROPAGATING``, ``notes``); integer divisors and casts to integers are checked
too, a reduction's float sums and products where they are stored. A state that does not
ignore underflow runs a GPU segment of such operations again on the host (a GPU cannot see
an underflow), and a matrix product's result is checked by a kernel after cuBLAS.

Not seen on either device: an error in an element a fused kernel never computes, as in
``(1 / x)[1:]`` (NumPy divides all of ``x``; the kernel only the elements it keeps).
"""

from __future__ import annotations

import threading
import warnings

import numpy as _np
from numpy._core._ufunc_config import _extobj_contextvar

from .dag import recorded_warnings as _recorded
from .dag import warn_at_user

# Elementwise operations whose NumPy loops can set the divide, overflow or invalid flag.
FLOAT_RAISING = frozenset({
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "divmod.0", "divmod.1", "power", "float_power", "square", "reciprocal", "exp",
    "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "arcsin",
    "arccos", "arccosh", "arctanh", "sinh", "cosh", "hypot", "logaddexp", "logaddexp2", "ldexp",
})  # fmt: skip
INTEGER_DIVIDING = frozenset({"floor_divide", "remainder", "fmod", "divmod.0", "divmod.1",
                              "reciprocal"})  # fmt: skip
# ... and on complex numbers (the absolute value too: its hypot can overflow).
COMPLEX_RAISING = frozenset({
    "add", "subtract", "multiply", "divide", "true_divide", "power", "float_power", "square",
    "reciprocal", "absolute", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "sin", "cos", "tan", "arcsin", "arccos", "arcsinh", "arccosh", "arctan", "arctanh", "sinh",
    "cosh", "tanh",
})  # fmt: skip
# Operations whose output is not finite wherever the operand at the given positions is not
# (None: any operand): an inf or NaN made upstream shows in their result. Any other operation
# can hide one (a comparison, a select, exp(-inf), 1 / inf, x ** 0, max, tanh), so on a GPU
# an operation that can raise is checked where its value is made unless everything taking it
# passes a bad value on to a value that is checked (``notes``).
PROPAGATING = {
    **dict.fromkeys((
        "add", "subtract", "multiply", "negative", "positive", "absolute", "fabs", "sqrt",
        "square", "cbrt", "log", "log2", "log10", "log1p", "floor", "ceil", "trunc", "rint",
        "sin", "cos", "tan", "sinh", "cosh", "arcsin", "arccos", "arcsinh", "arccosh",
        "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "hypot", "conjugate",
    ), None),
    **dict.fromkeys(("divide", "true_divide", "floor_divide", "remainder", "fmod", "divmod.0",
                     "divmod.1", "copysign", "ldexp"), (0,)),
}  # fmt: skip
# The flag word's bits: NumPy's error categories (numloom.h's nl_fe_bits spells the same).
# NumPy's default error state with the categories it warns on set to "call": a call run under
# it (``CALLING``) leaves those categories in ``CAUGHT.kinds`` (a list per thread), to warn
# about at the user's line, or to run again where warnings are wanted
CAUGHT = threading.local()


def _called(kind: str, flag: int) -> None:
    CAUGHT.kinds.append(kind)


with _np.errstate(divide="call", over="call", invalid="call", under="ignore", call=_called):
    CALLING = _extobj_contextvar.get()

BITS = {"divide": 1, "over": 2, "invalid": 4, "under": 8}
NOT_FINITE = 7  # what a value check finds (a GPU's flag, an integer division by zero: divide)


def raising(name: str, loop) -> bool:
    """Whether the loop of ufunc ``name`` on dtype ``loop`` can set an error flag."""
    kind = _np.dtype(loop).kind
    if kind == "f":
        return name in FLOAT_RAISING
    if kind == "c":
        return name in COMPLEX_RAISING
    return kind in "iu" and name in INTEGER_DIVIDING


def cast_raising(src, dst) -> bool:
    """Whether NumPy's cast from ``src`` to ``dst`` can warn: a float to an integer (NaN, out
    of range: invalid) or to a narrower float (overflow)."""
    src, dst = _np.dtype(src), _np.dtype(dst)
    return src.kind == "f" and (dst.kind in "iu" or dst.kind == "f" and dst.itemsize < src.itemsize)


def can_raise(n) -> bool:
    """Whether NumPy's loop for node ``n`` can set a floating-point error flag (the nodes whose
    call ``record`` keeps)."""
    from .dag import Op

    if n.op is Op.MAP:
        return raising(n.arg, n.srcs[1 if n.arg == "where" else 0].dtype)
    if n.op in (Op.REDUCE, Op.SCAN):  # "overflow encountered in reduce" / "in accumulate"
        return n.arg[0] in ("sum", "prod", "cumsum", "cumprod") and n.dtype.kind == "f"
    if n.op is Op.CAST:
        return cast_raising(n.srcs[0].dtype, n.dtype)
    if n.op is Op.MATMUL:  # (run by NumPy or BLAS on the CPU: "overflow encountered in matmul")
        return n.dtype.kind == "f"
    return False


def record_if_raising(n):
    """``record`` node ``n`` made at the user's call now, where it can raise; returns ``n``."""
    if can_raise(n):
        from .dag import user_line

        record(n, user_line())
    return n


def record(n, where, mask=None) -> None:
    """Remember the error state of the call that made ``n``, the user's line and the warning
    filters then in force (the list itself: a ``warnings.catch_warnings()`` block's, whose
    ``simplefilter("ignore")`` then still holds at the sync after the block), on the node: an
    interned node made again at its line takes that call's; made at another line, it keeps
    both calls (``merge``). ``mask``: the boolean node of the call's ``where=`` (NumPy
    computes, and so warns of, only the elements it selects)."""
    call = (_extobj_contextvar.get(), where, warnings.filters)
    call = call if mask is None else call + (mask,)
    old = n.call
    n.call = call if old is None or type(old) is tuple and old[1] == where else merge(old, call)


class _Calls(tuple):
    """The calls at several lines that made one interned node (``x * 10`` under
    ``errstate(over="raise")`` and again at a later line under NumPy's default): a call
    tuple whose error state reports what any of theirs does, for the checks that ask which
    categories a kernel reports, and ``calls``, each line's own call, for the report itself
    (a warning at each line, the raise at its own)."""

    calls: tuple


_ORDER = {"ignore": 0, "warn": 1, "print": 2, "log": 2, "call": 2, "raise": 2}


def merge(old, call) -> tuple:
    """The call of a node made by the call ``old`` (or the calls) and then by ``call`` at
    another line: both kept, in the order made; a line called again keeps its latest call."""
    calls = old.calls if type(old) is _Calls else (old,)
    for c in calls:  # (a loop making it again at a line it was made at: nothing changes)
        if c[1] == call[1] and c[0] is call[0] and c[2] is call[2] and c[3:] == call[3:]:
            return old
    calls = tuple([c for c in calls if c[1] != call[1]]) + (call,)
    if len(calls) == 1:
        return call
    merged = _Calls((_strongest(tuple([c[0] for c in calls])), calls[0][1], calls[0][2]))
    merged.calls = calls
    return merged


_STRONGEST: dict = {}  # error states -> one that warns or raises on what any of them does


def _strongest(states: tuple):
    """An error state (NumPy's object) that reports each category any of ``states`` reports,
    as "raise" where one does more than warn (``reported`` and ``warning_states_at`` ask only
    that; each call's own state is the one its report is made under)."""
    first = states[0]
    if all(s is first for s in states):  # (the common case: one state, several lines)
        return first
    found = _STRONGEST.get(states)
    if found is None:
        strongest = {}
        for state in states:
            for k, action in _state_of((state, None))[0].items():
                if _ORDER.get(action, 2) > _ORDER.get(strongest.get(k, "ignore"), 2):
                    strongest[k] = action
        with _np.errstate(**{k: "raise" if _ORDER.get(a, 2) == 2 else a
                             for k, a in strongest.items()}):  # fmt: skip
            found = _extobj_contextvar.get()
        if len(_STRONGEST) > 256:  # (states of finished errstate blocks: forget them)
            _STRONGEST.clear()
        _STRONGEST[states] = found
    return found


def may_report(nodes, bits: int = NOT_FINITE) -> bool:
    """Whether any of ``nodes`` was called under an error state that does not ignore one of
    the categories in ``bits`` (``BITS``; by default divide, overflow and invalid values): only
    then is a kernel's flag worth acting on. Each launch asks, so each distinct state is looked
    at once (``_reports``)."""
    seen = None
    for n in nodes:
        call = n.call
        if call is not None and call[0] is not seen:
            seen = call[0]
            if _reports(seen) & bits:
                return True
    return False


def reported(nodes) -> int:
    """The categories (``BITS``) that the error states ``nodes`` were called under warn or
    raise on, together (``may_report`` for all of them in one pass)."""
    seen, bits = None, 0
    for n in nodes:
        call = n.call
        if call is not None and call[0] is not seen:
            seen = call[0]
            bits |= _reports(seen)
            if bits == ALL_BITS:
                break
    return bits


def reported_at(order: list, positions: tuple) -> int:
    """``reported`` for the nodes at ``positions`` of ``order`` (a kernel's: every launch of
    it asks)."""
    if CALL_STATES[0] is None or type(order) is not list or type(positions) is not tuple:
        return reported([order[p] for p in positions])
    bits = 0
    for state in CALL_STATES[0](order, positions):  # (the states, each run once, from C)
        bits |= _reports(state)
    return bits


def warning_states_at(order: list, positions: tuple) -> bool:
    """Whether every call that made a node at ``positions`` of ``order`` ran under an error
    state that at most warns (``ignore`` or ``warn`` for each category: nothing raised, no
    function called), with no warning filter that turns a warning into an exception: such a
    kernel's reports can wait for a later sync."""
    if any(f[0] == "error" and issubclass(RuntimeWarning, f[2]) for f in warnings.filters):
        return False
    if CALL_STATES[0] is None or type(order) is not list or type(positions) is not tuple:
        states = {order[p].call[0] for p in positions if order[p].call is not None}
    else:
        states = CALL_STATES[0](order, positions)
    return all(_warns_only(state) for state in states)


_WARNS_ONLY: dict = {}  # NumPy's error-state object -> whether it at most warns


def _warns_only(extobj) -> bool:
    if extobj is None:  # (NumPy's default state, as ``_reports`` takes it)
        return True
    found = _WARNS_ONLY.get(extobj)
    if found is None:
        token = _extobj_contextvar.set(extobj)
        try:
            found = set(_np.geterr().values()) <= {"ignore", "warn"}
        finally:
            _extobj_contextvar.reset(token)
        if len(_WARNS_ONLY) > 256:  # (states of finished errstate blocks: forget them)
            _WARNS_ONLY.clear()
        _WARNS_ONLY[extobj] = found
    return found


CALL_STATES = [None]  # _speedups.call_states, once numloom's API is bound (array.py)
ALL_BITS = sum(BITS.values())
_REPORTING: dict = {}  # NumPy's error-state object -> the BITS it warns or raises on


def _reports(extobj) -> int:
    """The categories (``BITS``) the error state ``extobj`` (None: NumPy's default) warns or
    raises on."""
    found = _REPORTING.get(extobj)
    if found is None:
        if extobj is None:
            found = NOT_FINITE  # NumPy's default warns on all but underflow
        else:
            token = _extobj_contextvar.set(extobj)
            try:
                state = _np.geterr()
            finally:
                _extobj_contextvar.reset(token)
            found = sum(bit for k, bit in BITS.items() if state[k] != "ignore")
        if len(_REPORTING) > 256:  # (states of finished errstate blocks: forget them)
            _REPORTING.clear()
        _REPORTING[extobj] = found
    return found


def _state(n) -> tuple:
    """``(errstate dict, (file, line) or None)`` of the call that made ``n`` (NumPy's default
    state for an operation numloom made itself)."""
    return _state_of(n.call)


def _state_of(call) -> tuple:
    """``_state`` of one call tuple (None: numloom's own)."""
    extobj, where = (call or (None, None))[:2]
    if extobj is None:
        return {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}, where
    token = _extobj_contextvar.set(extobj)
    try:
        return _np.geterr(), where
    finally:
        _extobj_contextvar.reset(token)


def compute(n, srcs: list, compute_node, value_of=None):
    """``compute_node(n, srcs)`` under the error state of ``n``'s call; NumPy's warnings are
    given again at the user's line, its ``FloatingPointError`` raised as a data error. A node
    that recorded no call (numloom made it, or it cannot raise) runs with every error ignored.
    A call with ``where=`` is checked on the elements its mask selects alone, the mask's value
    being ``value_of(mask node)`` (None where the caller does not have it: all are checked)."""
    call = n.call
    if call is None:
        with _np.errstate(all="ignore"):
            return compute_node(n, srcs)
    if (len(call) <= 3 or value_of is None) and not _reports(call[0]) & BITS["under"]:
        CAUGHT.kinds = kinds = []  # (most values raise nothing: checked at the cost of a call)
        token = _extobj_contextvar.set(CALLING)
        try:
            value = compute_node(n, srcs)
        finally:
            _extobj_contextvar.reset(token)
        if not kinds:
            return value
    for one in call.calls if type(call) is _Calls else (call,):  # (each line's, in order)
        value = _checked(n, one, srcs, compute_node, value_of)
    return value


def _checked(n, call, srcs: list, compute_node, value_of):
    """``compute``'s value of ``n`` under its one ``call``, its warnings given at that call's
    line and its ``FloatingPointError`` raised as a data error."""
    from .realize import DataError

    state, where = _state_of(call)
    checked = srcs
    if len(call) > 3 and value_of is not None:
        selected = value_of(call[3])
        if selected is not None:
            with _np.errstate(all="ignore"):
                value = compute_node(n, srcs)
            selected = _np.broadcast_to(selected, n.shape)
            checked = [_np.broadcast_to(s, n.shape)[selected] for s in srcs]
    failed = None
    with _np.errstate(**state), _recorded() as caught:
        try:
            made = compute_node(n, checked)
            if checked is srcs:
                value = made
        except FloatingPointError as error:
            failed = error
    for w in caught:  # (NumPy warns of an overflow before it raises for an underflow, say)
        if where is None:
            warn_at_user(w.message, w.category)
        else:
            warn_at(w.message, w.category, where[0], where[1], call[2])
    if failed is not None:
        raise DataError(n, failed) from None
    return value


# Warnings given at a recorded line already shown under a filter action that shows a warning
# once ("default", "module", "once"), and the filters they were shown under (other filters,
# as a program's own change of them, show them again, as Python's registries do).
_shown: set = set()
_shown_under: list = [None]


def warn_at(message, category, filename: str, lineno: int, filters=None) -> None:
    """``warnings.warn_explicit`` at the user's recorded line, shown as NumPy's warning raised
    at that line would be: under the default filter once per location, not once per sync (a
    loop's every step), as Python's registry of that module would have it (catching warnings
    elsewhere resets such registries; the filters' action is looked up here instead), and not
    at all where the ``filters`` in force at the call (by default the current ones) ignore it."""
    text = str(message)
    module = filename[:-3] if filename.endswith(".py") else filename
    action = warnings.defaultaction
    for f_action, msg, cat, mod, ln in warnings.filters if filters is None else filters:
        if ((msg is None or msg.match(text)) and issubclass(category, cat)
                and (mod is None or mod.match(module)) and (ln == 0 or lineno == ln)):  # fmt: skip
            action = f_action
            break
    if action == "ignore":
        return
    key = {"default": (text, category, filename, lineno), "module": (text, category, filename),
           "once": (text, category)}.get(action)  # fmt: skip
    if key is not None:
        filters = tuple(warnings.filters)
        if filters != _shown_under[0] or len(_shown) >= 4096:
            _shown.clear()
            _shown_under[0] = filters
        if key in _shown:
            return
        _shown.add(key)
    warnings.warn_explicit(message, category, filename, lineno)

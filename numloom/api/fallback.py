"""NumPy functions numloom has no native version of run through NumPy on the host.

The inputs are evaluated and handed to NumPy (on the CPU without a copy), NumPy runs, and array
results come back as numloom arrays on the inputs' device. What NumPy writes (``out=``, the
arrays of in-place functions such as ``put`` or ``copyto``) is written into numloom's arrays
(``writes.py``). Each such function is counted in ``numloom.stats()["fallbacks"]`` and warned
about once, at the user's line. Calls on data of dtypes numloom arrays do not hold (strings,
datetimes, objects) are NumPy's own: they run through NumPy, neither counted nor warned about.
"""

from __future__ import annotations

import datetime as _dt
import functools
import sys
import types
import warnings

import numpy as _np

from ..core import config
from ..core.realize import count_fallback
from . import writes


class NumloomFallbackWarning(UserWarning):
    """A NumPy function ran on the host through NumPy because numloom has no version of it."""


# NumPy functions that take no array data: they pass through unwrapped and uncounted.
PASS_THROUGH = frozenset({
    "set_printoptions", "get_printoptions", "printoptions", "seterr", "geterr", "seterrcall",
    "geterrcall", "errstate", "issubdtype", "promote_types", "min_scalar_type", "typename",
    "mintypecode", "finfo", "iinfo", "dtype", "format_float_positional",
    "format_float_scientific", "base_repr", "binary_repr", "get_include", "isdtype", "ndindex",
    "ndenumerate", "broadcast_shapes", "seed", "get_state", "set_state",
})  # fmt: skip

_warned: set = set()
_wrappers: dict = {}


def _user_frame():
    frame = sys._getframe(1)
    package = __name__.split(".")[0]  # (numloom)
    while frame is not None and (
        frame.f_globals.get("__name__", "").startswith(package)
        or frame.f_code.co_filename.startswith("<frozen")
    ):
        frame = frame.f_back
    return frame


_HOW = {
    "numpy": "runs through NumPy on the host: {data} copied device -> host -> device; writes "
    "come back into numloom's arrays",
    "cupy": "runs through CuPy on the GPU: {data} handed over without a copy, not fused",
}

# What NumPy functions and methods write besides ``out=``: their arguments at these positions
# or of these names (methods count ``self`` as argument 0).
WRITES = {
    "put": (0, "a"),
    "copyto": (0, "dst"),
    "fill_diagonal": (0, "a"),
    "place": (0, "arr"),
    "putmask": (0, "a"),
    "put_along_axis": (0, "arr"),
    "random.shuffle": (0, "x"),
    "ndarray.partition": (0,),
    "ndarray.put": (0,),
    "ndarray.setfield": (0,),
    "ndarray.byteswap": (0,),
}


def _warn_once(name: str, how: str = "numpy", nbytes: int | None = None) -> None:
    """Count a device round trip of ``name`` and say so once, in one line at the user's
    line: the function, the way it ran, and the bytes of numloom data it took."""
    count_fallback(name)
    if (name, how) in _warned:
        return
    _warned.add((name, how))
    frame = _user_frame()
    filename, lineno = (frame.f_code.co_filename, frame.f_lineno) if frame else ("numloom", 0)
    data = "its data" if nbytes is None else _size_text(nbytes)
    warnings.warn_explicit(
        f"numloom.{name} {_HOW[how].format(data=data)} (shown once)",
        NumloomFallbackWarning,
        filename,
        lineno,
    )


def _size_text(nbytes: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} bytes"


def to_numpy(x):
    """numloom arrays inside ``x`` (also in lists, tuples and dicts) as NumPy arrays."""
    from ..core.array import ndarray

    return _convert(x, lambda v: v.get() if isinstance(v, ndarray) else v)


def _device_of(args, kwargs):
    """The device of the first numloom array among the arguments (also inside lists)."""
    arrays = writes.arrays_in((args, kwargs))
    return arrays[0].device if arrays else None


def to_numloom(x, device=None):
    """NumPy arrays of numloom's dtypes inside ``x`` as numloom arrays on ``device``."""
    from ..core.array import _SUPPORTED_KINDS, from_host

    if isinstance(x, _np.ndarray):
        return from_host(x, device) if x.dtype.kind in _SUPPORTED_KINDS else x
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # named tuples (linalg results)
        return type(x)(*(to_numloom(v, device) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_numloom(v, device) for v in x)
    return x


# Functions CuPy implements with NumPy's results (types, 0-d results aside): on a GPU these run
# there. Others (CuPy's meshgrid returns a list, say) run through NumPy on the host.
CUPY_FAMILIES = ("linalg.", "fft.")
CUPY_FUNCTIONS = frozenset({
    "copyto", "fill_diagonal", "sort", "argsort", "lexsort", "partition", "argpartition", "unique", "searchsorted",
    "bincount", "histogram", "histogram2d", "histogramdd", "digitize", "percentile", "quantile",
    "median", "nanmedian", "nanpercentile", "nanquantile", "convolve", "correlate", "einsum",
    "kron", "cross", "interp", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
    "nanstd", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "cov", "corrcoef", "trapezoid",
    "polyval", "unravel_index", "ravel_multi_index", "isin", "in1d", "intersect1d", "union1d",
    "setdiff1d", "setxor1d", "sort_complex", "ptp", "average",
})  # fmt: skip


def _cupy_function(name: str):
    """CuPy's version of NumPy function ``name`` ("sort", "linalg.solve"), or None."""
    if name not in CUPY_FUNCTIONS and not name.startswith(CUPY_FAMILIES):
        return None
    try:
        import cupy
    except ImportError:
        return None
    fn = cupy
    for part in name.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            return None
    return fn if callable(fn) else None


def _convert(x, to):
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_convert(v, to) for v in x)
    if isinstance(x, tuple):  # named tuples (linalg results)
        return type(x)(*(_convert(v, to) for v in x))
    if isinstance(x, dict):
        return {k: _convert(v, to) for k, v in x.items()}
    return to(x)


def call_numpy(name: str, fn, *args, **kwargs):
    """Run NumPy's ``fn`` over the arguments' host memory (or, for arrays on a GPU, CuPy's
    version of it on the GPU); results come back as numloom arrays on the inputs' device, and
    what ``fn`` writes is written into numloom's arrays."""
    written = WRITES.get(name, ())
    if has_other_dtypes(args, kwargs):
        return call_numpy_quietly(fn, args, kwargs, written)
    device = _device_of(args, kwargs)
    if device in (None, "cpu"):  # NumPy on numloom's own memory: native, nothing copied
        return writes.run(fn, args, kwargs, written, device)
    nbytes = sum(a.nbytes for a in writes.arrays_in((args, kwargs)))
    cupy_fn = _cupy_function(name)
    if cupy_fn is not None:
        try:
            made = writes.run_cupy(cupy_fn, device, args, kwargs, written)
        except Exception:  # noqa: BLE001 (what CuPy does not take, NumPy may: on the host)
            pass
        else:
            _warn_once(name, "cupy", nbytes)
            return made
    _warn_once(name, "numpy", nbytes)
    moved = _bytes_moved()
    try:
        return writes.run(fn, args, kwargs, written, device)
    finally:
        _BYTES[name] = _BYTES.get(name, 0) + _bytes_moved() - moved


_BYTES: dict = {}  # function name -> bytes its round trips copied between device and host


def _bytes_moved() -> int:
    from ..core.realize import _STATS

    return _STATS["device_to_host_bytes"] + _STATS["host_to_device_bytes"]


def summary() -> str:
    """Each function that made a device round trip: how often, and the bytes it copied (what
    ``NUMLOOM_DEBUG=1`` prints at exit); empty when none did."""
    from ..core.realize import stats

    counts = stats()["fallbacks"]
    if not counts:
        return ""
    lines = ["numloom: functions that ran through NumPy or CuPy (calls, bytes copied between "
             "device and host):"]  # fmt: skip
    for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {name}: {n} call(s), {_BYTES.get(name, 0):,} bytes")
    return "\n".join(lines)


def _print_summary() -> None:
    text = summary()
    if text:
        print(text, file=sys.stderr)


if config.DEBUG >= 1:
    import atexit

    atexit.register(_print_summary)


def call_numpy_quietly(fn, args, kwargs, written=()):
    """NumPy's ``fn`` as NumPy runs it (neither counted nor warned about: data of dtypes
    numloom does not hold is NumPy's own); numloom arguments are evaluated and written as in
    ``call_numpy``."""
    device = _device_of(args, kwargs)
    if device is None:
        return fn(*args, **kwargs)  # NumPy's data alone
    return writes.run(fn, args, kwargs, written, device)


def call_method(a, name: str, *args, **kwargs):
    """NumPy's method ``ndarray.<name>`` on numloom array ``a`` (writes into ``a`` kept)."""
    return call_numpy(f"ndarray.{name}", getattr(_np.ndarray, name), a, *args, **kwargs)


_OTHER_SCALARS = (str, bytes, _dt.date, _dt.timedelta)


def has_other_dtypes(args, kwargs) -> bool:
    """Whether a call's data includes NumPy arrays or scalars of dtypes numloom arrays do not
    hold (strings, datetimes, structured, objects), or sequences of such Python values."""
    for v in list(args) + list(kwargs.values()):
        if _is_other(v, 0):
            return True
    dtype = kwargs.get("dtype")
    return dtype is not None and _is_other_dtype(dtype)


def _is_other(v, depth: int) -> bool:
    if isinstance(v, (_np.ndarray, _np.generic)):
        return v.dtype.kind not in "biufc"
    if isinstance(v, (list, tuple)) and depth < 8:
        return any(_is_other(x, depth + 1) for x in v[:8])
    return depth > 0 and isinstance(v, _OTHER_SCALARS)


def _is_other_dtype(dtype) -> bool:
    try:
        return _np.dtype(dtype).kind not in "biufc"
    except TypeError:
        return False


def wrap(name: str, fn):
    """``fn`` as a numloom function that runs through NumPy (cached, so it is stable)."""
    wrapper = _wrappers.get(name)
    if wrapper is None:

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return call_numpy(name, fn, *args, **kwargs)

        _wrappers[name] = wrapper
    return wrapper


# Whether a program runs as NumPy's (``python -m numloom script.py``): its errors then name numpy
AS_NUMPY = [False]
_MISSING = object()


def module_getattr(prefix: str, np_module, name: str):
    """``numloom.<prefix>.<name>`` for a NumPy attribute numloom does not define itself. NumPy's
    warnings for the name (a deprecated alias) point at the user's line, and its error keeps
    NumPy's words (where a removed name went), naming numloom unless the program runs as
    NumPy's."""
    try:
        attr = vars(np_module).get(name, _MISSING)  # (defined names: no NumPy __getattr__)
        if attr is _MISSING:
            attr = writes.at_user(getattr, (np_module, name), {})
    except AttributeError as e:
        where = "numloom" + (f".{prefix}" if prefix else "")
        message = str(e)
        if not AS_NUMPY[0]:
            message = message.replace(f"module {np_module.__name__!r}", f"module {where!r}", 1)
        raise AttributeError(message, name=name, obj=sys.modules.get(where)) from None
    if name in PASS_THROUGH or name.startswith("__") or not callable(attr):
        return attr
    if isinstance(attr, type) or isinstance(attr, types.ModuleType):
        return attr
    return wrap(f"{prefix}.{name}" if prefix else name, attr)


def dispatch_array_function(func, args, kwargs):
    """``numpy.f(numloom_array, ...)``: numloom's f when there is one, else NumPy on the host."""
    numloom = sys.modules[__name__.split(".")[0]]  # the public namespace (the package)
    module = func.__module__ or ""
    target, numpy_target = numloom, _np
    for part in module.split(".")[1:]:
        if part in ("linalg", "fft", "random"):
            target, numpy_target = getattr(numloom, part), getattr(_np, part)
    if module == "numpy.lib.stride_tricks" and func is getattr(_np.lib.stride_tricks,
                                                               func.__name__, None):  # fmt: skip
        from .shapes import STRIDE_TRICKS

        ours = STRIDE_TRICKS.get(func.__name__)
        if ours is not None:
            return ours(*args, **kwargs)
    # numloom's function of that name, where NumPy's of that name is this one (not a namesake
    # with another meaning: ``numpy.emath.sqrt`` of negative numbers is complex)
    if getattr(numpy_target, func.__name__, None) is func:
        ours = target.__dict__.get(func.__name__)
        if ours is not None and callable(ours) and ours is not func:
            return ours(*args, **kwargs)
        name = func.__name__ if target is numloom else f"{target.__name__[8:]}.{func.__name__}"
    else:
        name = f"{module.removeprefix('numpy.')}.{func.__name__}"
    return call_numpy(name, _unwrapped(func), *args, **kwargs)


def _unwrapped(func):
    """NumPy's implementation behind the dispatcher, so it does not dispatch back to us."""
    return getattr(func, "_implementation", func)


def call_numpy_ufunc(np_ufunc, method: str, inputs, kwargs):
    if np_ufunc.__name__ == "matmul" and method == "__call__":  # (numloom's, by name)
        out = kwargs.get("out")
        if isinstance(out, tuple):  # (NumPy's protocol hands ``out=`` as a tuple)
            kwargs = {**kwargs, "out": out[0] if len(out) == 1 else out}
        return sys.modules[__name__.split(".")[0]].matmul(*inputs, **kwargs)
    fn = np_ufunc if method == "__call__" else getattr(np_ufunc, method)
    return call_numpy(f"{np_ufunc.__name__}.{method}" if method != "__call__" else
                      np_ufunc.__name__, fn, *inputs, **kwargs)  # fmt: skip

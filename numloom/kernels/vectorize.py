"""``numloom.vectorize``: NumPy's ``vectorize``, compiled, fused into the surrounding lazy
expression; and Numba's ``@vectorize([signatures], target=...)``.

When the Python function is in the kernel subset (``translate.py``) it compiles to a device
function for the call's argument types, and the call records one elementwise ``MAP`` node whose
C is a call of that function. As NumPy's ``vectorize`` calls the function on Python scalars
(``float``, ``int``) and casts the results to the dtype its first call returned (on NumPy
scalars), the function computes with Python scalars and its result has that dtype; with
Numba's signatures it computes in the declared types::

    @np.vectorize
    def gaussian_pdf(x, mean, sigma):
        return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI)

    gaussian_pdf(x, 0.0, 1.0).sum()     # one map-reduce kernel calling nl_fn_gaussian_pdf_...

With a gufunc ``signature`` whose outputs are scalars (``"(n),(n)->()"``), the function
compiles for its core-dimension views and its call fuses with its neighbours, elementwise over
the loop dimensions (``vectorize_gufunc.py``). Otherwise NumPy's ``vectorize`` runs the Python loop (on host
copies), after one warning that names the construct numloom could not compile. Binary functions also have ``reduce``,
``accumulate`` and ``outer``.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import reprlib
from dataclasses import dataclass

import numpy as np

from ..core import config
from ..core.dag import warn_at_user
from . import ktypes
from .kerrors import KernelError, TypingError

_NO_VALUE = np._NoValue

_SHORT = reprlib.Repr()  # a value in a message, shortened
_SHORT.maxother = 60


@dataclass(frozen=True)
class UserUfunc:
    """A compiled scalar function as the fusion compiler calls it (``ufunc_table``)."""

    snippet: object
    definitions: tuple
    numpy: object


class _Uncompilable(Exception):
    """An argument numloom cannot compile for (a string, a list of objects)."""


class _OtherData(_Uncompilable):
    """An argument of a dtype numloom arrays do not hold (strings, dates, objects): NumPy's
    own data, so NumPy's loop runs it without a warning."""


class vectorize:
    """``numloom.vectorize(pyfunc, otypes=None, doc=None, excluded=None, cache=False,
    signature=None)`` as NumPy's, or ``@numloom.vectorize(["float32(float32, float32)"],
    target="cuda")`` as Numba's (calls pick the first signature the arguments cast to)."""

    def __init__(self, pyfunc=_NO_VALUE, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None, *, target=None, identity=None, **options):  # fmt: skip
        self.signatures = []
        if isinstance(pyfunc, (str, list, tuple)):  # Numba: vectorize(signatures, ...)
            sigs = [pyfunc] if isinstance(pyfunc, str) else list(pyfunc)
            try:
                self.signatures = [_numba_signature(s) for s in sigs]
            except ValueError as why:  # (NumPy's error: np.vectorize("string") is a misuse)
                error = TypeError("When used as a decorator, only accepts keyword arguments.")
                error.add_note(f"As Numba's vectorize(signatures): {why}")
                raise error from None
            pyfunc = _NO_VALUE
        elif pyfunc is not _NO_VALUE and not callable(pyfunc):
            raise TypeError("When used as a decorator, only accepts keyword arguments.")
        self.pyfunc = None if pyfunc is _NO_VALUE else pyfunc
        self.otypes = otypes
        self.excluded = set(excluded or ())
        self.signature, self.cache = signature, cache
        if signature is not None:  # NumPy's error for a bad signature, at construction
            from .vectorize_gufunc import parse_signature

            self._core_dims = parse_signature(signature)
        self.target, self.identity = target, identity
        self._specs: dict = {}
        self._warned = False
        self.__doc__ = doc if doc is not None else getattr(self.pyfunc, "__doc__", None)
        if self.pyfunc is not None:
            self.__name__ = getattr(self.pyfunc, "__name__", "vectorized")

    def __repr__(self) -> str:
        return f"<numloom.vectorize {getattr(self, '__name__', '?')}>"

    @property
    def otypes(self):
        """The output types as given (NumPy keeps a string of type codes as a string, a list as
        its dtypes); ``_otypes`` is the list of dtypes, None where not given."""
        return self._otypes_given

    @otypes.setter
    def otypes(self, value) -> None:
        if value is None:
            self._otypes_given = self._otypes = None
            return
        dtypes = [np.dtype(t) for t in (list(value) if isinstance(value, str) else value)]
        self._otypes_given = value if isinstance(value, str) else dtypes
        self._otypes = dtypes

    def __call__(self, *args, **kwargs):
        if self.pyfunc is None:  # used as a decorator
            (fn,) = args
            self.pyfunc = fn
            self.__name__ = getattr(fn, "__name__", "vectorized")
            self.__doc__ = self.__doc__ or fn.__doc__
            return self
        out = kwargs.pop("out", None) if self.signatures else None
        if (self._otypes is None and not self.signatures and self.signature is None
                and _size_zero(args, kwargs)):  # (a signature's call checks its loop's size)
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        try:
            if not args and not kwargs:  # (NumPy calls a function of nothing once)
                raise _OtherData("no arguments")
            if not hasattr(inspect.unwrap(self.pyfunc), "__code__"):
                raise _Uncompilable(f"{self.__name__} is not a Python function (a builtin, "
                                    f"a functools.partial): numloom has no source to compile")
            result = self._compiled_call(args, kwargs)
        except (KernelError, _Uncompilable) as why:
            # NumPy's loop: on a GPU a round trip through the host, warned about once (with
            # why numloom did not compile it); on the CPU it reads numloom's own memory, as
            # any NumPy function does there: neither a warning nor a fallback (NUMLOOM_DEBUG=1
            # says why all the same)
            device = _device_of(args, kwargs)
            round_trip = device is not None and device != "cpu"
            if not isinstance(why, _OtherData) and (round_trip or config.DEBUG >= 1):
                self._warn(why)
            result = self._numpy_call(args, kwargs, round_trip)
        if out is not None:
            out[...] = result
            return out
        return result

    # -- the compiled path --

    def _compiled_call(self, args: tuple, kwargs: dict):
        from ..api.ufuncs import as_loop_node
        from ..core.array import ndarray, result
        from ..core.dag import Op, node
        from ..core.views import broadcast_shapes

        if self.signature is not None:
            from .vectorize_gufunc import Uncompilable, call

            try:
                return call(self, args, kwargs)
            except Uncompilable as why:
                raise _Uncompilable(str(why)) from None
        params, inputs = self._bind(args, kwargs)
        values = [_operand(v) for v in inputs]
        types = [_type_of(v) for v in values]
        loop = self._loop(types) if self.signatures else None
        arg_types = tuple(loop[1] if loop else types)
        full = tuple(ktypes_or_const(p, arg_types) for p in params)
        name, outs = self._specialize(full, loop)
        arg_types = tuple(ktypes.strong(t) for t in arg_types)  # the arrays' dtypes
        shapes = [v.shape for v in values if isinstance(v, ndarray)]
        shape = broadcast_shapes(*shapes) if shapes else ()
        if shape is None:
            np.broadcast_shapes(*shapes)  # NumPy's error
        device = next((v.device for v in values if isinstance(v, ndarray)), None)
        srcs = tuple(as_loop_node(v, t.dtype, shape) for v, t in zip(values, arg_types))
        names = [name] if len(outs) == 1 else [f"{name}.{k}" for k in range(len(outs))]
        results = tuple(result(node(Op.MAP, srcs, n, shape, d), device)
                        for n, d in zip(names, outs))  # fmt: skip
        return results[0] if len(results) == 1 else results

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """(parameter slots, input values): each slot is ("input", k) or ("const", value)."""
        try:
            sig = inspect.signature(self.pyfunc)
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise _Uncompilable(f"the arguments do not bind to the function ({e})") from None
        slots, inputs = [], []
        for k, (pname, p) in enumerate(sig.parameters.items()):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise _Uncompilable("*args or **kwargs parameters")
            if pname in bound.arguments and k not in self.excluded and pname not in self.excluded:
                slots.append(("input", len(inputs)))
                inputs.append(bound.arguments[pname])
            else:
                value = bound.arguments.get(pname, p.default)
                if value is inspect.Parameter.empty:
                    raise _Uncompilable(f"the argument '{pname}' is missing")
                slots.append(("const", value))
        return slots, inputs

    def _loop(self, types: list) -> tuple:
        """Numba's loop choice: the first signature every argument casts to safely."""
        for ret, args in self.signatures:
            if len(args) == len(types) and all(_casts(t, a) for t, a in zip(types, args)):
                return ret, args
        declared = ", ".join(f"{r}({', '.join(map(str, a))})" for r, a in self.signatures)
        raise TypeError(f"{self.__name__}: no declared signature ({declared}) takes "
                        f"({', '.join(map(str, types))})")  # fmt: skip

    def _specialize(self, full: tuple, loop) -> tuple:
        """(MAP name, output dtypes) of the function compiled for these parameter types."""
        key = (full, loop, None if self._otypes is None else tuple(self._otypes))
        found = self._specs.get(key)
        if isinstance(found, Exception):
            raise found
        if found is not None:
            return found
        try:
            found = self._compile(full, loop)
        except KernelError as e:
            self._specs[key] = e
            raise
        self._specs[key] = found
        return found

    def _compile(self, full: tuple, loop) -> tuple:
        from ..compile.ufunc_table import USER_UFUNCS
        from .kvalues import Value as TValue
        from .kvalues import convert
        from .translate import translate_scalar

        values = full if loop else tuple(_weak(t) for t in full)
        spec, program = translate_scalar(self.pyfunc, values)
        results = _results(self.__name__, spec.ret)
        first = results
        if loop is None and self._otypes is None:  # the dtypes of a call on NumPy scalars
            first = _results(self.__name__, translate_scalar(self.pyfunc, full)[0].ret)
            if len(first) != len(results):
                raise TypingError(f"{self.__name__} returns {len(first)} or {len(results)} values")
        outs = self._out_dtypes(first, loop)
        digest = hashlib.sha256(repr((spec.name, outs)).encode()).hexdigest()[:12]
        name = f"vectorize.{digest}"
        for k, (r, out) in enumerate(zip(results, outs)):
            field = "" if len(results) == 1 else f".f{k}"

            def snippet(args, dt, r=r, out=out, field=field):
                call = f"{spec.name}({', '.join(args)}){field}"
                return convert(TValue(r, call), ktypes.Scalar(out))

            numpy = functools.partial(_numpy_impl, self.pyfunc, values, outs, k)
            key = name if len(results) == 1 else f"{name}.{k}"
            USER_UFUNCS[key] = UserUfunc(snippet, tuple(program.items), numpy)
        return name, tuple(outs)

    def _out_dtypes(self, results: list, loop) -> list:
        if loop is not None:
            return [loop[0].dtype] * len(results) if not isinstance(loop[0], ktypes.Tuple) else [
                t.dtype for t in loop[0].items
            ]  # fmt: skip
        if self._otypes is not None:
            if len(self._otypes) != len(results):
                raise TypingError(f"{self.__name__} returns {len(results)} values but otypes "
                                  f"names {len(self._otypes)}")  # fmt: skip
            return list(self._otypes)
        return [r.dtype for r in results]

    # -- NumPy's loop --

    def _numpy_call(self, args: tuple, kwargs: dict, round_trip: bool = True):
        from ..api import writes
        from ..api.fallback import to_numloom
        from ..core.realize import count_fallback

        if round_trip:
            count_fallback("vectorize")
        otypes = self._otypes
        if self.signatures and otypes is None:
            ret = self.signatures[0][0]
            otypes = [ret.dtype] if isinstance(ret, ktypes.Scalar) else None
        fn = np.vectorize(self.pyfunc, otypes=otypes, excluded=self.excluded or None,
                          cache=self.cache, signature=self.signature)  # fmt: skip
        device = _device_of(args, kwargs)
        if device is None:  # (NumPy's data alone)
            host = fn(*args, **kwargs)
        else:  # (what the function writes into its array arguments is written, as in NumPy)
            host = writes.run(fn, args, kwargs, (), device)
        return to_numloom(host if not np.isscalar(host) else np.asarray(host), device)

    def _warn(self, why) -> None:
        if self._warned:
            return
        self._warned = True
        from ..api.fallback import NumloomFallbackWarning

        text = str(why) if isinstance(why, KernelError) else f"{why}"
        warn_at_user(f"numloom.vectorize({self.__name__}) runs NumPy's Python loop: numloom "
                     f"cannot compile it:\n{text}", NumloomFallbackWarning)  # fmt: skip

    # -- ufunc methods of binary functions --

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE):
        from .vectorize_methods import reduce

        return reduce(self, array, axis, dtype, out, keepdims, initial)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        from .vectorize_methods import accumulate

        return accumulate(self, array, axis, dtype, out)

    def outer(self, A, B, **kwargs):
        from ..core.array import asarray
        from ..core.array_views import reshape_array

        a, b = asarray(A), asarray(B)
        return self(reshape_array(a, a.shape + (1,) * b.ndim), b, **kwargs)


def ktypes_or_const(slot: tuple, arg_types: tuple):
    from .translate import ConstArg

    kind, value = slot
    if kind == "input":
        return arg_types[value]
    try:
        hash(value)
    except TypeError:
        shown = _SHORT.repr(value)  # (not whole arrays a model holds)
        raise _Uncompilable(f"the excluded argument {shown} (not a constant)") from None
    return ConstArg(value)


def _operand(v):
    """An input as numloom holds it: arrays, Python scalars (weak) and NumPy scalars."""
    from ..core.array import _SUPPORTED_KINDS, asarray, ndarray

    if isinstance(v, ndarray) or type(v) in (bool, int, float, complex):
        if type(v) is int and not -(2**63) <= v < 2**63:
            raise _Uncompilable(f"the integer {v} does not fit 64 bits")
        return v
    if isinstance(v, np.generic):
        if v.dtype.kind not in _SUPPORTED_KINDS:
            raise _OtherData(f"an argument of dtype {v.dtype}")
        if ktypes.storage_ctype(v.dtype) is None:
            raise _Uncompilable(f"an argument of dtype {v.dtype}")
        return v
    host = np.asarray(v)
    if host.dtype.kind not in _SUPPORTED_KINDS:
        raise _OtherData(f"an argument of dtype {host.dtype}")
    if ktypes.storage_ctype(host.dtype) is None:
        raise _Uncompilable(f"an argument of dtype {host.dtype}")
    return asarray(host)


def _weak(t):
    """What NumPy's vectorize passes the function for an element of dtype ``t``: a Python
    scalar (a Python int for every integer dtype)."""
    if isinstance(t, ktypes.Scalar):
        return ktypes.WEAK["i" if t.kind == "u" else t.kind]
    return t


def _results(name: str, ret) -> list:
    results = list(ret.items) if isinstance(ret, ktypes.Tuple) else [ret]
    if any(not isinstance(r, ktypes.Scalar) for r in results):
        raise TypingError(f"function {name} returns {ret}, not numbers")
    return results


def _type_of(v):
    from ..core.array import ndarray

    if isinstance(v, ndarray):
        return ktypes.Scalar(v.dtype)
    return ktypes.typeof(v)


def _casts(t: ktypes.Scalar, target: ktypes.Scalar) -> bool:
    if t.weak:
        return ktypes.KINDS.index(t.kind) <= ktypes.KINDS.index(target.kind)
    return np.can_cast(t.dtype, target.dtype, "safe")


def _numba_signature(sig) -> tuple:
    if isinstance(sig, str):
        return ktypes.parse_signature(sig)
    ret = getattr(sig, "return_type", None)
    args = tuple(getattr(a, "_numloom_type", a) for a in getattr(sig, "args", ()))
    return getattr(ret, "_numloom_type", ret), args


def _size_zero(args: tuple, kwargs: dict) -> bool:
    """Whether an array among the arguments has no elements (NumPy's loop then cannot find
    the output types by calling the function)."""
    return any(getattr(v, "size", 1) == 0 and getattr(v, "ndim", 0) > 0
               for v in list(args) + list(kwargs.values()))  # fmt: skip


def _device_of(args: tuple, kwargs: dict):
    from ..core.array import ndarray

    for v in list(args) + list(kwargs.values()):
        if isinstance(v, ndarray):
            return v.device
    return None


def _numpy_impl(pyfunc, types: tuple, outs: list, k: int, *arrays):
    """The function through NumPy's loop (the reference executor's path): on Python scalars
    where the compiled function takes them, on NumPy scalars of the declared types else."""
    from .translate import ConstArg

    def call(*values):
        it = iter(values)
        args = []
        for t in types:
            if isinstance(t, ConstArg):
                args.append(t.value)
            else:
                v = next(it)
                args.append(v if t.weak else t.dtype.type(v))
        return pyfunc(*args)

    out = np.vectorize(call, otypes=list(outs))(*arrays)
    return out[k] if len(outs) > 1 else out

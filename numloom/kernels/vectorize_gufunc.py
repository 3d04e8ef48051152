"""``numloom.vectorize(pyfunc, signature="(n),(n)->()")``: NumPy's generalized form, compiled.

NumPy calls ``pyfunc`` once per point of the loop dimensions (the broadcast of what precedes
each input's core dimensions) with views of the inputs' core dimensions, and stores what it
returns. When the function is in the kernel subset and returns scalars (every output's core
dimensions are ``()``), numloom compiles it as a device function called at each loop point by
the fused kernels of the plan: each result is a ``GUFUNC`` node, elementwise over the loop
dimensions, whose core operands the kernel hands over as pointers into memory (``_Fused``),
so the arithmetic around the call fuses with it. For float16 and complex values it launches a
kernel of its own, a thread per loop point::

    @np.vectorize(signature="(n),(n)->()")          def gufunc(x0, x1, y0):
    def dot(a, b):                                       i = cuda.grid(1)
        s = 0.0                                          if i < y0.size:
        for i in range(len(a)):              ->              j1 = i % y0.shape[1]
            s += a[i] * b[i]                                 j0 = i // y0.shape[1]
        return s                                             y0[j0, j1] = core(x0[j0, j1], x1[j0, j1])

The inputs are broadcast views (no copies); the function sees the same types NumPy gives it
(NumPy scalars for elements, arrays for core dimensions), so it computes in the same dtypes,
and the outputs have the dtypes of its first result (or ``otypes``). NumPy's own checks of the
arguments and core dimensions run first, raising NumPy's errors.

A function that returns arrays (outputs with core dimensions, ``"(n)->(n)"``) compiles where it
allocates each array it returns with NumPy (``out = np.empty_like(a)``, ``np.zeros(n)``,
``np.full((m, n), v)``), fills it element by element and returns it at its end: the allocation
becomes the output's core view at each loop point, written in place (``_array_function``).
The first loop point runs through the Python function once, on the host, as NumPy's first call
does: its results give the outputs' dtypes and check their shapes. Functions that return
array expressions (``a @ b``, ``a - a.mean()``) run NumPy's loop.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import math
import textwrap

import numpy as np

from ..api import numpy_api as _api  # (the NumPy namespace: numloom.empty, ...)
from . import ktypes
from .cuda import intrinsics as cuda_api
from .cuda.dispatcher import jit

_THREADS = 128


class Uncompilable(Exception):
    """What keeps a call on NumPy's loop (``vectorize._Uncompilable`` says why)."""


def parse_signature(signature: str) -> tuple:
    """``([input core dims], [output core dims])``, with NumPy's error for a bad signature."""
    from numpy.lib._function_base_impl import _parse_gufunc_signature  # NumPy's own parser

    return _parse_gufunc_signature(signature)


def call(vf, args: tuple, kwargs: dict):
    """The compiled call of gufunc-style ``vf`` (raises ``Uncompilable`` for NumPy's loop)."""
    from numpy.lib._function_base_impl import _calculate_shapes, _parse_input_dimensions

    in_dims, out_dims = vf._core_dims
    if kwargs or vf.excluded or vf.signatures:
        raise Uncompilable("keyword or excluded arguments with a gufunc signature")
    if len(args) != len(in_dims):  # NumPy's checks, in NumPy's order
        raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)!r}, "
                        f"got {len(args)!r}")  # fmt: skip
    arrays = [_operand(a) for a in args]
    loop_shape, dim_sizes = _parse_input_dimensions(arrays, in_dims)
    shapes = _calculate_shapes(loop_shape, dim_sizes, in_dims)
    if any(out_dims):
        return _array_call(vf, arrays, loop_shape, dim_sizes, shapes)
    if math.prod(loop_shape) == 0:
        if vf._otypes is None:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        outs = [_api.empty(loop_shape, t) for t in vf._otypes[: len(out_dims)]]
        return outs[0] if len(out_dims) == 1 else tuple(outs)
    types = tuple(_core_type(a.dtype, len(d)) for a, d in zip(arrays, in_dims))
    dtypes = _out_dtypes(vf, types, len(out_dims))
    flat = loop_shape or (1,)  # a kernel indexes at least one loop dimension
    inputs = [_api.broadcast_to(a, flat + s[len(loop_shape) :]) for a, s in zip(arrays, shapes)]
    if all(_fusable(d) for d in [a.dtype for a in arrays] + list(dtypes)):
        outs = _fused_call(_fused(vf, types, dtypes), inputs, flat)
    else:
        outs = [_output(flat, d, inputs[0].device) for d in dtypes]
        kernel = _kernel(vf, len(inputs), len(outs), len(flat))
        kernel.forall(math.prod(flat), _THREADS)(*inputs, *outs)
    outs = [o.reshape(loop_shape) for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


# --- functions of scalar results, fused ----------------------------------------------------------


def _fusable(dtype) -> bool:
    """Whether a fused call hands values of ``dtype`` to the function as they are (booleans,
    integers, float32 and float64; float16 and complex values take the kernel of their own)."""
    dtype = np.dtype(dtype)
    return dtype.kind in "biu" or dtype in (np.float32, np.float64)


class _Fused:
    """A gufunc's function of scalar results as fused kernels call it (``lower.gufunc``): one
    ``GUFUNC`` node per result, elementwise over the loop dimensions, so the arithmetic before
    its scalar operands and after its results fuses into the kernel that calls it. Its core
    operands are read in memory, through pointers."""

    def __init__(self, vf, types: tuple, outs: tuple):
        from .translate import translate_scalar

        spec, program = translate_scalar(vf.pyfunc, types)
        self.cname, self.ret_ctype, self.types, self.outs = spec.name, spec.ir.ret, types, tuple(outs)
        self.results = list(spec.ret.items) if isinstance(spec.ret, ktypes.Tuple) else [spec.ret]
        self.definitions = tuple(program.items)
        self.pyfunc, self.signature = vf.pyfunc, vf.signature
        digest = hashlib.sha256(repr((spec.name, self.outs)).encode()).hexdigest()[:12]
        self.key = f"gufunc.{digest}"

    def pointer(self, i: int) -> str:
        return f"{ktypes.storage_ctype(self.types[i].dtype)} *"

    def call(self, args: list) -> str:
        """The C call of the function (of type ``ret_ctype``: a struct of several results)."""
        return f"{self.cname}({', '.join(args)})"

    def result(self, value: str, k: int) -> str:
        """Result ``k`` of the call whose value ``value`` holds, in the output's dtype."""
        from .kvalues import Value, convert

        field = "" if len(self.results) == 1 else f".f{k}"
        return convert(Value(self.results[k], f"{value}{field}"), ktypes.Scalar(self.outs[k]))

    def numpy(self, k: int, *arrays):
        """Result ``k`` through NumPy's own loop (the reference executor's path)."""
        made = np.vectorize(self.pyfunc, signature=self.signature, otypes=list(self.outs))(
            *arrays)  # fmt: skip
        return made[k] if len(self.outs) > 1 else made


def _fused(vf, types: tuple, dtypes) -> _Fused:
    """The fused form of ``vf``'s function for these argument types (made once), registered
    where the compiler finds it (``ufunc_table.USER_GUFUNCS``)."""
    from ..compile.ufunc_table import USER_GUFUNCS

    def make():
        fused = _Fused(vf, types, tuple(dtypes))
        USER_GUFUNCS[fused.key] = fused
        return fused

    return _once(vf, ("gufunc fused", types, tuple(dtypes)), make, Exception)


def _fused_call(fused: _Fused, inputs: list, flat: tuple) -> list:
    """The results of ``fused`` over ``inputs`` (broadcast to the loop dimensions ``flat``
    and their own core dimensions): one traced node each."""
    from ..api.ufuncs import as_loop_node
    from ..core.array import result
    from ..core.dag import Op, node

    srcs = tuple(as_loop_node(x, x.dtype, x.shape) for x in inputs)
    device = inputs[0].device
    return [result(node(Op.GUFUNC, srcs, (fused.key, k), flat, d), device)
            for k, d in enumerate(fused.outs)]  # fmt: skip


def _operand(v):
    """An argument as NumPy's vectorize takes it (``asanyarray``), on numloom's device."""
    if isinstance(v, _api.ndarray):
        return v
    host = np.asanyarray(v)
    if ktypes.storage_ctype(host.dtype) is None:
        raise Uncompilable(f"an argument of dtype {host.dtype}")
    return _api.asarray(host)


def _core_type(dtype, ndim: int):
    """What the function receives: a NumPy scalar for no core dimensions, else an array."""
    if ndim == 0:
        return ktypes.Scalar(np.dtype(dtype))
    return ktypes.Array(np.dtype(dtype), ndim, "A")


def _out_dtypes(vf, types: tuple, nout: int) -> list:
    """The outputs' dtypes: ``otypes``, else those of the function's results (as
    ``np.asarray(result).dtype``: a Python int is int64, a float float64)."""
    return _once(vf, ("gufunc", types, nout), lambda: _result_dtypes(vf, types, nout), Exception)


def _once(vf, key, make, kept):
    """``make()``, found once per ``key`` in ``vf._specs``; an error of the ``kept`` kinds is
    kept too, and raised again by the next call with the same key."""
    found = vf._specs.get(key)
    if found is None:
        try:
            found = make()
        except kept as e:
            found = e
        vf._specs[key] = found
    if isinstance(found, Exception):
        raise found
    return found


def _result_dtypes(vf, types: tuple, nout: int) -> list:
    from .kerrors import TypingError
    from .translate import translate_scalar

    spec, _ = translate_scalar(vf.pyfunc, types)
    if spec.writes:
        raise Uncompilable("the function writes to its array arguments")
    results = list(spec.ret.items) if isinstance(spec.ret, ktypes.Tuple) else [spec.ret]
    if not all(isinstance(r, ktypes.Scalar) for r in results) or spec.ret is ktypes.NONE:
        raise TypingError(f"function {vf.__name__} returns {spec.ret}, not numbers")
    if len(results) != nout:
        raise ValueError(f"wrong number of outputs from pyfunc: expected {nout!r}, "
                         f"got {len(results)!r}")  # fmt: skip
    if vf._otypes is not None:
        if len(vf._otypes) != nout:
            raise Uncompilable(f"otypes names {len(vf._otypes)} outputs for {nout}")
        return list(vf._otypes)
    return [r.dtype for r in results]


def _kernel(vf, nin: int, nout: int, ndim: int):
    """The kernel calling ``vf``'s function at each loop point (made once per arity)."""
    cache = vf.__dict__.setdefault("_gufunc_kernels", {})
    key = (nin, nout, ndim)
    if key not in cache:
        cache[key] = _make_kernel(vf.pyfunc, nin, nout, ndim)
    return cache[key]


def _make_kernel(pyfunc, nin: int, nout: int, ndim: int, arrays: bool = False, name=None):
    """Python source of the loop kernel, compiled as any ``cuda.jit`` kernel is (its source
    registered with ``linecache`` under a name of its own, so the translator reads it).
    ``arrays``: ``pyfunc`` writes its outputs, handed their core views (``_array_function``);
    else it returns numbers, stored at the loop point."""
    xs = [f"x{k}" for k in range(nin)]
    ys = [f"y{k}" for k in range(nout)]
    point = ", ".join(f"j{d}" for d in range(ndim))
    size = " * ".join(f"y0.shape[{d}]" for d in range(ndim)) if arrays else "y0.size"
    lines = [f"def gufunc({', '.join(xs + ys)}):", "    i = cuda.grid(1)", f"    if i < {size}:"]
    lines.append("        rest = i")
    for d in reversed(range(1, ndim)):
        lines += [f"        j{d} = rest % y0.shape[{d}]", f"        rest = rest // y0.shape[{d}]"]
    lines.append("        j0 = rest")
    if arrays:
        lines.append(f"        core({', '.join(f'{v}[{point}]' for v in xs + ys)})")
    else:
        lines.append(f"        r = core({', '.join(f'{x}[{point}]' for x in xs)})")
        if nout == 1:
            lines.append(f"        y0[{point}] = r")
        else:
            lines += [f"        {y}[{point}] = r[{k}]" for k, y in enumerate(ys)]
    namespace = _run_source("\n".join(lines) + "\n", "gufunc loop",
                            {"cuda": cuda_api, "core": jit(device=True)(pyfunc)})  # fmt: skip
    kernel = namespace["gufunc"]
    name = name or getattr(pyfunc, "__name__", "f")
    kernel.__qualname__ = kernel.__name__ = f"gufunc_{name}"
    return jit(kernel)


def _run_source(text: str, what: str, namespace: dict) -> dict:
    """``text`` run in ``namespace``, registered with ``linecache`` under a name of its own
    (``<numloom what digest>``: the translator reads a function's source from there)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    filename = f"<numloom {what} {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # (numloom's own source, or the user's
    return namespace  # function rewritten by _array_function)


# --- functions that return arrays ----------------------------------------------------------------

_ALLOCATORS = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
               "full_like")  # fmt: skip


def _array_call(vf, arrays: list, loop_shape: tuple, dim_sizes: dict, shapes: list):
    """The compiled call of a gufunc whose outputs have core dimensions."""
    in_dims, out_dims = vf._core_dims
    if math.prod(loop_shape) == 0:
        if vf._otypes is None or any(d not in dim_sizes for dims in out_dims for d in dims):
            raise Uncompilable("a size-0 loop (NumPy's loop gives NumPy's result or error)")
        outs = [_api.empty(loop_shape + tuple(dim_sizes[d] for d in dims), t)
                for dims, t in zip(out_dims, vf._otypes)]  # fmt: skip
        return outs[0] if len(outs) == 1 else tuple(outs)
    flat = loop_shape or (1,)
    inputs = [_api.broadcast_to(a, flat + s[len(loop_shape) :]) for a, s in zip(arrays, shapes)]
    types = tuple(_core_type(a.dtype, len(d)) for a, d in zip(arrays, in_dims))
    dtypes, out_cores = _first_point(vf, inputs, len(flat), types, dim_sizes)
    outs = [_output(flat + c, d, inputs[0].device) for c, d in zip(out_cores, dtypes)]
    kernel = _array_kernel(vf, len(inputs), [len(c) for c in out_cores], len(flat))
    kernel.forall(math.prod(flat), _THREADS)(*inputs, *outs)
    outs = [o.reshape(loop_shape + c) for o, c in zip(outs, out_cores)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _output(shape: tuple, dtype, device: str):
    """An output array for the kernel to fill: it writes every element (each loop point's
    scalar, or its core array: where the function allocates that with ``zeros``, ``ones`` or
    ``full``, the kernel fills it itself), so on a GPU its
    memory is allocated as it is, without the zero fill of numloom's ``empty`` (a kernel of
    its own before the gufunc's). Under ``numloom.jit`` it stays ``empty``'s traced array."""
    from ..core import realize
    from ..core.array import result
    from ..core.device import load_backend

    if device == "cpu" or realize.TRACING:
        return _api.empty(shape, dtype, device=device)
    memory = load_backend(device).DeviceArray(tuple(shape), dtype, device)  # (contents undefined)
    return result(realize.buffer_node(memory, device), device)


def _first_point(vf, inputs: list, nloop: int, types: tuple, dim_sizes: dict) -> tuple:
    """``(dtypes, core shapes)`` of the outputs, from the function's results at the first loop
    point, on the host (NumPy's vectorize makes its outputs from its first call's results:
    their dtypes, and the sizes of core dimensions the inputs do not have), once per argument
    types and core sizes. Raises ``Uncompilable`` where the results do not fit the signature
    (NumPy's loop then raises NumPy's error) or the function does not compile."""
    key = ("gufunc arrays", types, tuple(sorted(dim_sizes.items())))
    return _once(vf, key, lambda: _check_first_point(vf, inputs, nloop, types, dict(dim_sizes)),
                 Uncompilable)  # fmt: skip


def _check_first_point(vf, inputs, nloop, types, dim_sizes) -> tuple:
    from .kerrors import KernelError
    from .translate import translate_scalar

    out_dims = vf._core_dims[1]
    point = (0,) * nloop
    host = []
    for x in inputs:  # (as NumPy's loop passes them: views, NumPy's scalars for scalar cores)
        v = x[point]
        v = np.array(v.get()) if isinstance(v, _api.ndarray) else v  # (a copy it may write)
        host.append(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v)
    results = vf.pyfunc(*host)
    results = results if len(out_dims) > 1 and isinstance(results, tuple) else (results,)
    if len(results) != len(out_dims):
        raise Uncompilable(f"{len(results)} results for {len(out_dims)} outputs")
    dtypes, cores = [], []
    for r, dims in zip(results, out_dims):
        if not isinstance(r, np.ndarray) or r.ndim != len(dims):
            raise Uncompilable(f"a result of shape {np.shape(r)} for core dimensions {dims}")
        for d, size in zip(dims, r.shape):
            if dim_sizes.setdefault(d, size) != size:
                raise Uncompilable(f"a result of shape {r.shape} for core dimensions {dims}")
        dtypes.append(r.dtype)
        cores.append(r.shape)
    if ktypes.storage_ctype(dtypes[0]) is None or any(
            ktypes.storage_ctype(d) is None for d in dtypes):  # fmt: skip
        raise Uncompilable("results of a dtype numloom arrays do not hold")
    if vf._otypes is not None and [np.dtype(t) for t in vf._otypes] != dtypes:
        raise Uncompilable("otypes other than the dtypes of the arrays the function returns")
    made = vf.__dict__.setdefault("_array_functions", {})
    ndims = tuple(len(c) for c in cores)
    rewritten = made.get(ndims) or _array_function(vf.pyfunc, list(ndims))
    out_types = tuple(ktypes.Array(d, len(c), "A") for d, c in zip(dtypes, cores))
    try:
        spec, _ = translate_scalar(rewritten, types + out_types)
    except KernelError as e:
        raise Uncompilable(str(e)) from None
    if spec.writes - set(range(len(types), len(types) + len(out_types))):
        raise Uncompilable("the function writes to its array arguments")
    made[ndims] = rewritten
    return dtypes, cores


def _array_function(pyfunc, out_ndims: list):
    """``pyfunc`` rewritten to write the arrays it returns into parameters of its own: each
    returned name's NumPy allocation (top level, once) becomes a parameter, filled where the
    allocation fills (``zeros``, ``ones``, ``full``), and the final ``return`` ends it."""
    try:
        source = textwrap.dedent(inspect.getsource(pyfunc))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        raise Uncompilable("the function's source is not available") from None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != pyfunc.__name__:
        raise Uncompilable("a lambda, or a function whose source is not its own definition")
    body, last = fdef.body[:-1], fdef.body[-1]
    if not isinstance(last, ast.Return) or last.value is None:
        raise Uncompilable("the function does not end by returning its arrays")
    items = last.value.elts if isinstance(last.value, ast.Tuple) else [last.value]
    returned = [n.id if isinstance(n, ast.Name) else None for n in items]
    if None in returned or len(set(returned)) != len(returned) or len(returned) != len(out_ndims):
        raise Uncompilable("the function returns expressions, not the arrays it allocated")
    allocations = {}
    for i, st in enumerate(body):
        if (isinstance(st, ast.Assign) and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name) and st.targets[0].id in returned
                and isinstance(st.value, ast.Call)):  # fmt: skip
            kind = _allocator(st.value.func, pyfunc)
            if kind is not None and st.targets[0].id not in allocations:
                allocations[st.targets[0].id] = (i, kind, st.value)
    if set(allocations) != set(returned):
        raise Uncompilable("a returned array is not allocated by NumPy at the function's top "
                           "level")  # fmt: skip
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Return) or isinstance(node, (ast.Yield, ast.YieldFrom)):
            raise Uncompilable("a return before the function's end")
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For))
                   else [])  # fmt: skip
        for t in targets:
            names = {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            if names & set(returned) and not (isinstance(t, ast.Name)
                                               and any(node is body[a[0]] for a in allocations.values())):  # fmt: skip
                if not isinstance(t, ast.Subscript):
                    raise Uncompilable("a returned array's name is bound again")
    new_body = []
    for i, st in enumerate(body):
        found = [(name, a) for name, a in allocations.items() if a[0] == i]
        if not found:
            new_body.append(st)
            continue
        name, (_, kind, call) = found[0]
        fill = _fill(kind, call)
        if fill is not None:
            new_body.extend(_fill_loops(name, out_ndims[returned.index(name)], fill))
    fdef.body = new_body or [ast.Pass()]
    fdef.args.args += [ast.arg(arg=name) for name in returned]
    fdef.decorator_list = []
    namespace = dict(pyfunc.__globals__)
    if pyfunc.__closure__:
        namespace.update(zip(pyfunc.__code__.co_freevars,
                             (c.cell_contents for c in pyfunc.__closure__)))  # fmt: skip
    text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return _run_source(text, f"gufunc {pyfunc.__name__}", namespace)[fdef.name]


def _allocator(func, pyfunc):
    """``"zeros"`` where ``func`` names NumPy's (or numloom's) ``np.zeros`` and the like."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.attr in _ALLOCATORS):  # fmt: skip
        return None
    module = pyfunc.__globals__.get(func.value.id)
    if module is np or getattr(module, "__name__", None) in ("numpy", "numloom"):
        return func.attr
    return None


def _fill(kind: str, call: ast.Call):
    """The value an allocation fills its array with (an expression), or None for ``empty``."""
    if kind.startswith("empty"):
        return None
    if kind.startswith("zeros"):
        return ast.Constant(0)
    if kind.startswith("ones"):
        return ast.Constant(1)
    if len(call.args) > 1:
        return call.args[1]
    value = next((k.value for k in call.keywords if k.arg == "fill_value"), None)
    if value is None:
        raise Uncompilable("np.full without a fill value")
    return value


def _fill_loops(name: str, ndim: int, value) -> list:
    """Loops storing ``value`` at each element of the ``ndim``-dimensional ``name``."""
    index = ", ".join(f"_nl_i{d}" for d in range(ndim)) or "()"
    text = f"{name}[{index}] = {ast.unparse(value)}"
    for d in reversed(range(ndim)):
        text = f"for _nl_i{d} in range({name}.shape[{d}]):\n" + textwrap.indent(text, "    ")
    return ast.parse(text).body


def _array_kernel(vf, nin: int, out_ndims: list, ndim: int):
    """The loop kernel calling the rewritten function with each output's core view."""
    cache = vf.__dict__.setdefault("_gufunc_kernels", {})
    key = ("arrays", nin, tuple(out_ndims), ndim)
    if key not in cache:
        rewritten = vf.__dict__["_array_functions"][tuple(out_ndims)]
        cache[key] = _make_kernel(rewritten, nin, len(out_ndims), ndim, arrays=True,
                                  name=getattr(vf.pyfunc, "__name__", "f"))  # fmt: skip
    return cache[key]

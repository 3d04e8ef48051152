"""Which of NumPy's public callables numloom runs natively, on the CPU and on a GPU.

    python -m numloom coverage [--markdown]

Every public callable of ``numpy``, ``numpy.linalg``, ``numpy.fft`` and ``numpy.random`` (with
the methods of ``numpy.random.Generator``) falls in one of these rows:

- **fused**: numloom records it as array operations; it fuses with its neighbours into
  numloom's kernels, on either device;
- **library**: numloom calls a GPU library or kernels of its own (cuBLAS, cuSOLVER, cuFFT,
  numloom's sort, search and random kernels) on the device's memory;
  A ``Generator``'s ``choice``, ``permutation``, ``shuffle`` and ``permuted`` count here:
  the order (an index, one entry per row) is drawn on the host by NumPy's generator, since
  Fisher-Yates is sequential, and the data is gathered on the device;
- **NumPy**: NumPy runs it. On the CPU that is native too: NumPy reads and writes numloom's
  own memory, nothing is copied. On a GPU the data goes to the host and back (or to CuPy,
  where CuPy is installed), and ``numloom.stats()["fallbacks"]`` counts it;
- **NumPy's own**: it takes no array data, or data of dtypes numloom arrays do not hold
  (``dtype``, ``finfo``, ``datetime_as_string``), or it works on the host by nature: files,
  text and printing (``load``, ``savetxt``, ``array2string``). It is NumPy's on either device.

Native here means numloom's version runs for numloom's dtypes and the common arguments; a few
argument combinations of a native function still run through NumPy (its docstring says which).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import types

import numpy as _np

# numloom modules whose functions call a library or fixed kernels on a GPU
_LIBRARY_MODULES = ("numloom.fft", "numloom.api.sorting", "numloom.api.products")
_LIBRARY_LINALG = frozenset({
    "solve", "inv", "cholesky", "qr", "svd", "eigh", "eigvalsh", "det", "slogdet", "lstsq",
    "pinv", "matrix_rank", "cond", "svdvals", "tensorsolve", "tensorinv", "matmul",
    "multi_dot", "matrix_power", "norm", "matrix_norm",
})  # fmt: skip
_FUSED_FFT = frozenset({"fftfreq", "rfftfreq", "fftshift", "ifftshift"})
# Generator methods numloom draws on a GPU (NumPy's PCG64 stream, bit for bit)
_DEVICE_DRAWS = frozenset({"random", "uniform", "standard_normal", "normal",
                           "standard_exponential", "exponential", "integers"})  # fmt: skip
# Generator methods that are NumPy's formula over one device draw a sample (numloom operations)
_DEVICE_SAMPLERS = frozenset({
    "lognormal", "standard_cauchy", "gumbel", "laplace", "logistic", "rayleigh", "weibull",
    "pareto", "power", "triangular", "geometric",
})  # fmt: skip
# Generator methods whose order NumPy's generator draws on the host (Fisher-Yates is
# sequential: an index, one per row) while the data moves on the device
_HOST_ORDERS = frozenset({"choice", "permutation", "shuffle", "permuted"})

# legacy numpy.random functions drawn from a Philox stream on a GPU (numloom operations)
_PHILOX_DRAWS = frozenset({
    "rand", "randn", "random_sample", "random", "ranf", "sample", "uniform", "standard_normal",
    "normal", "lognormal", "standard_exponential", "exponential", "standard_cauchy", "randint",
    "permutation", "shuffle", "gumbel", "laplace", "logistic", "rayleigh", "weibull", "pareto",
    "power", "geometric", "triangular", "random_integers", "wald", "choice",
})  # fmt: skip

KINDS = ("fused", "library", "NumPy", "NumPy's own")

# Host work by nature: files, text, printing, Python objects, calendars, NumPy's own settings
_HOST_BY_NATURE = frozenset({
    "load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "fromstring", "frombuffer",
    "fromiter", "save", "savez", "savez_compressed", "savetxt", "array2string", "array_repr",
    "array_str", "info", "show_runtime", "show_config", "test", "iterable", "getbufsize",
    "setbufsize", "isfortran", "common_type", "einsum_path", "nested_iters", "frompyfunc",
    "asmatrix", "bmat", "busday_count", "busday_offset", "is_busday", "datetime_as_string",
    "datetime_data", "isnat", "get_include", "byte_bounds",
})  # fmt: skip


def _public(module) -> list:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    found = []
    for name in sorted(set(names)):
        value = getattr(module, name, None)
        if value is None or isinstance(value, types.ModuleType):
            continue
        if callable(value):
            found.append(name)
    return found


def _kind_of(prefix: str, name: str) -> str:
    import numloom
    from numloom.api import fallback, other_dtypes

    namespace = {"": numloom, "linalg": numloom.linalg, "fft": numloom.fft}[prefix]
    ours = namespace.__dict__.get(name)
    np_value = getattr({"": _np, "linalg": _np.linalg, "fft": _np.fft}[prefix], name)
    if name in fallback.PASS_THROUGH or name in _HOST_BY_NATURE or isinstance(
            np_value, type) and not issubclass(np_value, _np.ufunc):  # fmt: skip
        return "NumPy's own"
    if ours is None or ours is np_value:
        if name in getattr(other_dtypes, "__all__", ()):
            return "NumPy's own"
        return "NumPy"
    if getattr(ours, "__wrapped__", None) is not None and fallback._wrappers.get(
            f"{prefix}.{name}" if prefix else name) is ours:  # fmt: skip
        return "NumPy"
    module = getattr(ours, "__module__", "") or ""
    if prefix == "fft":
        return "fused" if name in _FUSED_FFT else "library"
    if prefix == "linalg" or module == "numloom.linalg":
        return "library" if name in _LIBRARY_LINALG else "fused"
    if module.startswith(_LIBRARY_MODULES) or name in ("matmul", "dot", "inner", "tensordot",
                                                       "vdot", "einsum"):
        return "library"
    if module in ("numloom.api.other_dtypes",):
        return "NumPy's own"
    return "fused"


def rows() -> list:
    """``(namespace, name, kind)`` for every public callable (``KINDS``)."""
    out = []
    for prefix, module in (("", _np), ("linalg", _np.linalg), ("fft", _np.fft)):
        for name in _public(module):
            out.append((prefix or "numpy", name, _kind_of(prefix, name)))
    for name in _public(_np.random):
        if name in ("default_rng", "Generator"):
            kind = "fused"  # (numloom's generator: its draws below)
        elif isinstance(getattr(_np.random, name), type) or name in ("seed", "get_state",
                                                                     "set_state", "bytes"):  # fmt: skip
            kind = "NumPy's own"
        elif name in _PHILOX_DRAWS:
            kind = "fused"  # (on a GPU: a Philox stream, as numloom operations)
        else:
            kind = "NumPy"  # (the other legacy MT19937 functions: NumPy's stream, on the host)
        out.append(("random", name, kind))
    for name, value in inspect.getmembers(_np.random.Generator):
        if name.startswith("_") or not callable(value):
            continue
        if name in _DEVICE_DRAWS or name in _HOST_ORDERS:
            kind = "library"
        elif name in _DEVICE_SAMPLERS:
            kind = "fused"
        else:
            kind = "NumPy's own" if name in ("spawn", "bit_generator", "bytes") else "NumPy"
        out.append(("random.Generator", name, kind))
    return out


def summary(found: list) -> dict:
    """{namespace: (native on a GPU, callables with array data)}, and the total under None."""
    counts: dict = {}
    for namespace, _, kind in found:
        if kind == "NumPy's own":
            continue
        key = namespace.split(".")[0]
        native, total = counts.get(key, (0, 0))
        counts[key] = (native + (kind in ("fused", "library")), total + 1)
    native = sum(n for n, _ in counts.values())
    counts[None] = (native, sum(t for _, t in counts.values()))
    return counts


def markdown(found: list) -> str:
    counts = summary(found)
    lines = [f"numloom's coverage of NumPy {_np.__version__}'s public callables (generated by "
             "`python -m numloom coverage --markdown`).", "",
             "On the CPU every row is native: NumPy runs on numloom's own memory where numloom "
             "has no kernel of its own. On a GPU, **fused** and **library** rows run on the "
             "device; **NumPy** rows go to the host and back (or to CuPy where installed).", "",
             "| namespace | native on a GPU | callables with array data |", "|---|---|---|"]  # fmt: skip
    for key in ("numpy", "linalg", "fft", "random"):
        native, total = counts.get(key, (0, 0))
        lines.append(f"| {key} | {native} ({100 * native / max(total, 1):.0f}%) | {total} |")
    native, total = counts[None]
    lines += [f"| all | {native} ({100 * native / max(total, 1):.0f}%) | {total} |", "",
              "| function | CPU | GPU |", "|---|---|---|"]  # fmt: skip
    cpu = {"fused": "numloom kernel", "library": "NumPy or BLAS on numloom's memory",
           "NumPy": "NumPy on numloom's memory", "NumPy's own": "NumPy's own"}  # fmt: skip
    gpu = {"fused": "fused", "library": "library", "NumPy": "host round trip",
           "NumPy's own": "NumPy's own"}  # fmt: skip
    for namespace, name, kind in found:
        full = name if namespace == "numpy" else f"{namespace}.{name}"
        lines.append(f"| `{full}` | {cpu[kind]} | {gpu[kind]} |")
    return "\n".join(lines) + "\n"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numloom coverage",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--markdown", action="store_true", help="the whole table, in Markdown")
    args = parser.parse_args(argv)
    found = rows()
    if args.markdown:
        sys.stdout.write(markdown(found))
        return 0
    for key, (native, total) in summary(found).items():
        print(f"{key or 'all':8} {native:4d} of {total:4d} native on a GPU "
              f"({100 * native / max(total, 1):.0f}%)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The CUDA dialect: the same kernel IR as CUDA C++ for NVRTC.

Every kernel takes its buffers as pointer arguments and its sizes (``p<i>``) and constants
(``k<offset>``) by value (kernel arguments live in constant memory, and a CUDA graph node
updates them in place). Blocks have ``THREADS`` threads. A map kernel is a grid-stride loop::

    extern "C" __global__ void __launch_bounds__(256) NAME(const float *__restrict__ in0,
            float *__restrict__ out0, const int64_t p0, const float k0) {
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p0;
             i += gridDim.x * (int64_t)blockDim.x) {
            const float t0 = (float)in0[i];
            out0[i] = (float)(expf(t0 * k0));
        }
    }

A reduction kernel folds per thread and combines in shared memory in a fixed tree order, so
results are deterministic: ``NAME`` gives a block to each output element, ``NAME_thread`` a
thread (for short reductions), and a reduction of every axis runs as ``NAME_part`` (one
partial result per block) then ``NAME_final`` (one block). A row kernel gives each row a block
and broadcasts each row's reductions through shared memory. A write through a view is
``NAME_copy`` (the old version, outside the view) and ``NAME_write`` (the new values).
"""

from __future__ import annotations

import re

from . import kir
from .render import _all_text, _fold, _indent, _is_float, _lets, _start, _store

THREADS = 256


_CONST = re.compile(r"\*\(const (\w+) \*\)\(K \+ (\d+)\)")


def _function(k: kir.Kernel, name: str, body: list, extra: tuple = ()) -> list:
    """One ``__global__`` function: buffers, extra arguments, then every size (``p<i>``) and
    constant (``k<offset>``) of the kernel as a by-value argument."""
    args = []
    for b in k.buffers:
        const = "" if b.output else "const "
        args.append(f"{const}{b.ctype} *__restrict__ {b.name}")
    args += list(extra)
    args += [f"const int64_t p{i}" for i in range(kernel_params(k))]
    args += [f"const {ctype} k{off}" for off, ctype in kernel_constants(k)]
    head = [f'extern "C" __global__ void __launch_bounds__({THREADS}) {name}(',
            "        " + ", ".join(args) + ") {"]  # fmt: skip
    return head + _indent(_lets(k.prologue) + body, 1) + ["}"]


def kernel_params(k: kir.Kernel) -> int:
    """How many size arguments the kernel's functions take (p0, p1, ...)."""
    return 1 + max((int(m) for m in re.findall(r"P\[(\d+)\]", _all_text(k))), default=-1)


def kernel_constants(k: kir.Kernel) -> list:
    """(offset, C type) of each constant argument, in constant-block order."""
    return sorted({(int(off), ctype) for ctype, off in _CONST.findall(_all_text(k))})


def _grid_loop(var: str, total: str, body: list, per_block: bool = False) -> list:
    """A grid-stride loop over ``total`` items: per thread, or per block (``per_block``)."""
    if per_block:
        head = f"for (int64_t {var} = blockIdx.x; {var} < {total}; {var} += gridDim.x) {{"
    else:
        head = (f"for (int64_t {var} = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; "
                f"{var} < {total}; {var} += gridDim.x * (int64_t)blockDim.x) {{")  # fmt: skip
    return [head, *_indent(body, 1), "}"]


def _unravel(flat: str, extents: tuple, var: str) -> list:
    """Coordinates var0, var1, ... of C-order flat index ``flat`` over ``extents``."""
    if len(extents) == 1:
        return [f"const int64_t {var}0 = {flat};"]
    lines = [f"int64_t {var}_rest = {flat};"]
    for k in reversed(range(len(extents))):
        if k == 0:
            lines.append(f"const int64_t {var}0 = {var}_rest;")
        else:
            lines.append(f"const int64_t {var}{k} = {var}_rest % {extents[k]}; "
                         f"{var}_rest /= {extents[k]};")  # fmt: skip
    return lines


def _product(extents: tuple) -> str:
    return " * ".join(f"({e})" for e in extents) or "1"


def _combine(r: kir.Reduction) -> list:
    """Fold the partial result in slot ``t + s`` of shared memory into slot ``t``."""
    a, b = "s_acc[t]", "s_acc[t + s]"
    if r.kind in ("sum", "prod", "any", "all"):
        op = {"sum": "+", "prod": "*", "any": "||", "all": "&&"}[r.kind]
        return [f"{a} = {a} {op} {b};"]
    if r.kind in ("max", "min"):
        cmp = ">" if r.kind == "max" else "<"
        return [f"{a} = {b} {cmp} {a} ? {b} : {a};", "s_nan[t] = s_nan[t] || s_nan[t + s];"]
    cmp = ">" if r.kind == "argmax" else "<"
    nan = f" || ({b} != {b} && ({a} == {a} || s_arg[t + s] < s_arg[t]))" if _is_float(r) else ""
    take = (f"s_arg[t + s] >= 0 && (s_arg[t] < 0 || {b} {cmp} {a} || "
            f"({b} == {a} && s_arg[t + s] < s_arg[t]){nan})")  # fmt: skip
    return [f"if ({take}) {{ {a} = {b}; s_arg[t] = s_arg[t + s]; }}"]


def _block_reduce(r: kir.Reduction, result: str) -> list:
    """Combine every thread's (acc, arg, nan) in a fixed tree order; thread 0 gets the result
    and writes it to shared ``result`` (which every thread may read after the barrier)."""
    nan_fix = ["if (s_nan[0]) s_acc[0] = NAN;"] if r.kind in ("max", "min") and _is_float(r) else []
    value = "s_arg[0]" if r.kind in ("argmax", "argmin") else "s_acc[0]"
    publish = ["if (threadIdx.x == 0) {", *_indent(nan_fix + [f"{result} = {value};"], 1), "}"]
    return _block_tree(r) + publish + ["__syncthreads();"]


def _shared(r: kir.Reduction) -> list:
    return [f"__shared__ {r.acc_type} s_acc[{THREADS}];", f"__shared__ int64_t s_arg[{THREADS}];",
            f"__shared__ bool s_nan[{THREADS}];"]  # fmt: skip


def _fold_loop(r: kir.Reduction, body: list, inner: tuple, var: str = "r") -> list:
    """Each thread folds its share (stride blockDim.x) of the inner axes into acc/arg/nan."""
    point = _unravel("g", inner, var) + _lets(body) + _fold(r, "acc", "arg", r.value, r.index)
    return [f"for (int64_t g = threadIdx.x; g < {_product(inner)}; g += blockDim.x) {{",
            *_indent(point, 1), "}"]  # fmt: skip


def _map(k: kir.Kernel) -> list:
    point = _lets(k.body) + [_store(k, s) for s in k.stores]
    if k.flat:
        return _function(k, k.name, _grid_loop("i", k.outer[0], point))
    body = _unravel("f", k.outer, "i") + point
    return _function(k, k.name, _grid_loop("f", _product(k.outer), body))


def _reduce(k: kir.Kernel) -> list:
    r = k.reduction
    result_of = "arg" if r.kind in ("argmax", "argmin") else "acc"
    finish = ["if (nan) acc = NAN;"] if r.kind in ("max", "min") and _is_float(r) else []
    if not k.outer:
        return _full_reduce(k, r)
    # a block per output element
    per_out = (_unravel("o", k.outer, "i") + _start(r) + _fold_loop(r, k.body, k.inner)
               + [f"__shared__ {'int64_t' if result_of == 'arg' else r.acc_type} s_out;"]
               + _block_reduce(r, "s_out")
               + ["if (threadIdx.x == 0) " + _store(k, kir.Store(r.out.buffer, r.out.index,
                                                                 "s_out"))])  # fmt: skip
    block = _function(k, k.name, _shared(r) + _grid_loop("o", _product(k.outer), per_out, True))
    # a thread per output element (short reductions)
    point = _lets(k.body) + _fold(r, "acc", "arg", r.value, r.index)
    inner = ["for (int64_t g = 0; g < " + _product(k.inner) + "; g++) {",
             *_indent(_unravel("g", k.inner, "r") + point, 1), "}"]  # fmt: skip
    per_thread = (_unravel("o", k.outer, "i") + _start(r) + inner + finish
                  + [_store(k, kir.Store(r.out.buffer, r.out.index, result_of))])  # fmt: skip
    thread = _function(k, k.name + "_thread", _grid_loop("o", _product(k.outer), per_thread))
    return block + [""] + thread


def _full_reduce(k: kir.Kernel, r: kir.Reduction) -> list:
    """Every axis reduced: partial results per block, then one block combines them in order."""
    partial_args = (f"{r.acc_type} *__restrict__ part", "int64_t *__restrict__ part_arg",
                    "bool *__restrict__ part_nan")  # fmt: skip
    point = _unravel("g", k.inner, "r") + _lets(k.body) + _fold(r, "acc", "arg", r.value,
                                                                  r.index)  # fmt: skip
    loop = _grid_loop("g", _product(k.inner), point)
    store_part = [
        "if (threadIdx.x == 0) { part[blockIdx.x] = s_acc[0]; "
        "part_arg[blockIdx.x] = s_arg[0]; part_nan[blockIdx.x] = s_nan[0]; }"
    ]
    # the per-block tree without the NaN finish: the final pass applies it
    tree = _block_tree(r)
    part = _function(
        k, k.name + "_part", _shared(r) + _start(r) + loop + tree + store_part, partial_args
    )
    final_args = (f"const {r.acc_type} *__restrict__ part", "const int64_t *__restrict__ part_arg",
                  "const bool *__restrict__ part_nan", "const int64_t parts")  # fmt: skip
    gather = ["for (int64_t g = threadIdx.x; g < parts; g += blockDim.x) {",
              *_indent(_combine_into_thread(r), 1), "}"]  # fmt: skip
    result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
    final_body = (_shared(r) + _start(r) + gather + [f"__shared__ {result_type} s_out;"]
                  + _block_reduce(r, "s_out")
                  + ["if (threadIdx.x == 0) " + _store(k, kir.Store(r.out.buffer, r.out.index,
                                                                    "s_out"))])  # fmt: skip
    final = _function(k, k.name + "_final", final_body, final_args)
    return part + [""] + final


def _block_tree(r: kir.Reduction) -> list:
    """Every thread's (acc, arg, nan) combined into slot 0 of shared memory, in a fixed order."""
    return [
        "{",
        "    const int t = threadIdx.x;",
        "    s_acc[t] = acc; s_arg[t] = arg; s_nan[t] = nan;",
        "    __syncthreads();",
        f"    for (int s = {THREADS // 2}; s > 0; s >>= 1) {{",
        f"        if (t < s) {{ {' '.join(_combine(r))} }}",
        "        __syncthreads();",
        "    }",
        "}",
    ]


def _combine_into_thread(r: kir.Reduction) -> list:
    """Fold partial result ``g`` (read from the part arrays) into this thread's acc/arg/nan,
    with the same rules as the tree (partials arrive in block order)."""
    b = "part[g]"
    if r.kind in ("sum", "prod", "any", "all"):
        op = {"sum": "+", "prod": "*", "any": "||", "all": "&&"}[r.kind]
        return [f"acc = acc {op} {b};"]
    if r.kind in ("max", "min"):
        cmp = ">" if r.kind == "max" else "<"
        return [f"acc = {b} {cmp} acc ? {b} : acc;", "nan = nan || part_nan[g];"]
    cmp = ">" if r.kind == "argmax" else "<"
    nan = f" || ({b} != {b} && acc == acc)" if _is_float(r) else ""
    return [f"if (part_arg[g] >= 0 && (arg < 0 || {b} {cmp} acc{nan})) "
            f"{{ acc = {b}; arg = part_arg[g]; }}"]  # fmt: skip


def _row(k: kir.Kernel) -> list:
    """A block per row: each phase folds the row and broadcasts its result; then the outputs."""
    lines = [*_unravel("o", k.outer, "i")] if k.outer else []
    shared = []
    for phase in k.phases:
        r = phase.reduction
        if r is None:
            point = _unravel("g", k.inner, "r") + _lets(phase.body)
            point += [_store(k, s) for s in phase.stores]
            lines += [f"for (int64_t g = threadIdx.x; g < {_product(k.inner)}; "
                      "g += blockDim.x) {", *_indent(point, 1), "}"]  # fmt: skip
            continue
        result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
        shared += [f"__shared__ {result_type} s_{r.out.buffer};"]
        lines += ["{", *_indent(_shared(r) + _start(r) + _fold_loop(r, phase.body, k.inner)
                                + _block_reduce(r, f"s_{r.out.buffer}"), 1), "}",
                  f"const {result_type} {r.out.buffer} = s_{r.out.buffer};"]  # fmt: skip
    row_out = _lets(k.body) + [_store(k, s) for s in k.row_stores]
    if row_out:
        lines += ["if (threadIdx.x == 0) {", *_indent(row_out, 1), "}"]
    lines += ["__syncthreads();"]  # shared results are reused by the next row
    body = _grid_loop("o", _product(k.outer), lines, per_block=True) if k.outer else lines
    return _function(k, k.name, shared + body)


def _scatter(k: kir.Kernel) -> list:
    copy, write = k.phases
    (store,) = copy.stores
    if copy.skip is not None:
        start, count = copy.skip
        last = len(k.outer) - 1
        inside = f"(i{last} >= {start} && i{last} < {start} + {count})"
        when = f"({store.when}) || !{inside}"
    else:
        when = store.when
    copied = _lets(copy.body) + [_store(k, kir.Store(store.buffer, store.index, store.value,
                                                     when))]  # fmt: skip
    if len(k.outer) == 1 and store.index == "i":
        copy_loop = _grid_loop("i", k.outer[0], copied)
    else:
        copy_loop = _grid_loop("f", _product(k.outer), _unravel("f", k.outer, "i") + copied)
    first = _function(k, k.name + "_copy", copy_loop)
    point = _unravel("f", k.inner, "r") + _lets(write.body) + [_store(k, s) for s in write.stores]
    second = _function(k, k.name + "_write", _grid_loop("f", _product(k.inner), point))
    return first + [""] + second


def _scan(k: kir.Kernel) -> list:
    """A thread per line along the scanned axis, folding sequentially (NumPy's order)."""
    r = k.reduction
    step = "+=" if r.kind == "sum" else "*="
    init = "0" if r.kind == "sum" else "1"
    line = [
        f"{r.acc_type} acc = {init};",
        f"for (int64_t r0 = 0; r0 < {k.inner[0]}; r0++) {{",
        *_indent(_lets(k.body) + [f"acc {step} {r.value};", _store(k, r.out)], 1),
        "}",
    ]
    if not k.outer:
        return _function(k, k.name, ["if (blockIdx.x == 0 && threadIdx.x == 0) {",
                                     *_indent(line, 1), "}"])  # fmt: skip
    body = _unravel("o", k.outer, "i") + line
    return _function(k, k.name, _grid_loop("o", _product(k.outer), body))


def render_cuda(k: kir.Kernel) -> str:
    """The CUDA C++ source of kernel ``k`` (one or two ``__global__`` functions)."""
    from .render import KERNELS_INCLUDE, definitions

    body = {"map": _map, "reduce": _reduce, "row": _row, "scatter": _scatter,
            "scan": _scan}[k.kind](k)  # fmt: skip
    functions = [KERNELS_INCLUDE, *definitions(k.functions, True)] if k.functions else []
    source = "\n".join(['#include "numloom.h"', "", *functions, *body]) + "\n"
    source = re.sub(r"(?<![.\w])P\[(\d+)\]", r"p\1", source)
    return _CONST.sub(r"k\2", source)


# --- kernels written in Python -------------------------------------------------------------------


def user_kernel_signature(k: kir.UserKernel) -> list:
    """The CUDA arguments of a user kernel, in order: ``(C declaration, source)`` where source
    is ("ptr", param), ("size", entry of ``render.arguments``), ("scalar", param, part) or
    ("err",). Grid and block sizes come from CUDA's own variables; scalars arrive by value
    (bools as int32, complex numbers as two parts)."""
    from .render import _size_name, arguments

    out = [(f"{p.ctype} *{p.name}", ("ptr", j)) for j, p in enumerate(k.params)
           if p.ndim is not None]  # fmt: skip
    for entry in arguments(k).sizes:
        if entry[0] != "launch" or entry[1] == 6:
            out.append((f"const int64_t {_size_name(k, entry)}", ("size", entry)))
    for j, p in enumerate(k.params):
        if p.ndim is not None:
            continue
        if p.ctype == "bool":
            out.append((f"const int32_t {p.name}_arg", ("scalar", j, None)))
        elif p.ctype.startswith("nl_complex"):
            part = "float" if p.ctype == "nl_complex64" else "double"
            out += [(f"const {part} {p.name}_re", ("scalar", j, "real")),
                    (f"const {part} {p.name}_im", ("scalar", j, "imag"))]  # fmt: skip
        else:
            out.append((f"const {p.ctype} {p.name}", ("scalar", j, None)))
    out.append(("int64_t *nl_err", ("err",)))
    return out


def render_user_kernel_cuda(k: kir.UserKernel) -> str:
    """The CUDA C++ source of a kernel written in Python: the statements as they are, thread
    indices from CUDA's own variables, shared arrays ``__shared__``::

        extern "C" __global__ void NAME(float *v_x, const int64_t v_x_n0, ...,
                                        const float v_a, int64_t *nl_err) {
            const nl_ctx nl_c = nl_cuda_ctx(nl_err);
            __shared__ float s_12_4[1056];
            <the Python statements; cuda.syncthreads() is __syncthreads()>
        }
    """
    from .render import _derived_strides, declare, definitions, statements

    args = ", ".join(decl for decl, _ in user_kernel_signature(k))
    body = ["const nl_ctx nl_c = nl_cuda_ctx(nl_err);", *_derived_strides(k)]
    for p in k.params:
        if p.ndim is None and p.ctype == "bool":
            body.append(f"const bool {p.name} = {p.name}_arg != 0;")
        elif p.ndim is None and p.ctype.startswith("nl_complex"):
            body.append(f"const {p.ctype} {p.name} = {p.ctype}_make({p.name}_re, {p.name}_im);")
    if any(v.space == "shared" and v.size == 0 for v in k.locals):
        body.append("extern __shared__ __align__(16) unsigned char nl_dynamic[];")
    for v in k.locals:
        if v.space == "shared":
            body.append(f"{v.ctype} *{v.name} = ({v.ctype} *)nl_dynamic;" if v.size == 0
                        else f"__shared__ {v.ctype} {v.name}[{max(v.size, 1)}];")  # fmt: skip
        else:
            body.append(declare(v))
    body += statements(k.body, dict(k.lines), True)
    text = "\n".join([f'extern "C" __global__ void {k.name}({args}) {{', *_indent(body, 1), "}"])
    return (
        '#include "numloom_kernels.h"\n' + "\n".join(definitions(k.functions, True)) + text + "\n"
    )

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
thread (for short reductions), ``NAME_split`` and ``NAME_merge`` several blocks to each of a few
long ones, and a reduction of every axis runs as ``NAME_part`` (one partial result per block)
then ``NAME_final`` (one block). A row kernel gives each row a block and broadcasts each row's
reductions through shared memory, or a thread to each short row (``NAME_thread``). A write through a view is
``NAME_copy`` (the old version, outside the view) and ``NAME_write`` (the new values); a write at
positions that may repeat adds ``NAME_claim`` between them, so that the last value stays.

Every kernel but a flat map also comes as ``NAME32...``: the same code with 32-bit index
arithmetic (sizes, loop counters, coordinates), which the launcher takes whenever every index
fits (a 64-bit multiply or division costs a GPU several instructions, and a stencil does
little else per element).
"""

from __future__ import annotations

import re

from . import kir
from .cfamily import _all_text, _finish, _fold, _indent, _is_float, _lets, _start, _store

THREADS = 256


_CONST = re.compile(r"\*\(const (\w+) \*\)\(K \+ (\d+)\)")


def _function(k: kir.Kernel, name: str, body: list, extra: tuple = ()) -> list:
    """One ``__global__`` function: buffers, extra arguments, then every size (``p<i>``) and
    constant (``k<offset>``) of the kernel as a by-value argument."""
    args = []
    for b in k.buffers:
        const = "" if b.output else "const "
        args.append(f"{const}{b.ctype} *__restrict__ {b.name}")
    if k.fp or k.fp_outputs or k.fp_notes:  # the flag word, after the buffers (fperrors.py)
        extra = ("int64_t *__restrict__ fpw", *extra)
    args += list(extra)
    args += [f"const nl_idx p{i}" for i in range(kernel_params(k))]
    args += [f"const {ctype} k{off}" for off, ctype in kernel_constants(k)]
    head = [f'extern "C" __global__ void __launch_bounds__({THREADS}) {name}(',
            "        " + ", ".join(args) + ") {"]  # fmt: skip
    lines = _lets(k.prologue) + body
    if any("NL_FE_" in line for line in lines):  # notes (numloom.h): per thread, then the word
        lines = (["float nl_fe_f = 0.0f;", "double nl_fe_d = 0.0;", "int nl_fe_i = 0;"] + lines
                 + ["if (nl_fe_i || nl_fe_f != nl_fe_f || nl_fe_d != nl_fe_d) *fpw = 1;"])
    return head + _indent(lines, 1) + ["}"]


def kernel_params(k: kir.Kernel) -> int:
    """How many size arguments the kernel's functions take (p0, p1, ...)."""
    return 1 + max((int(m) for m in re.findall(r"P\[(\d+)\]", _all_text(k))), default=-1)


def kernel_constants(k: kir.Kernel) -> list:
    """(offset, C type) of each constant argument, in constant-block order."""
    return sorted({(int(off), ctype) for ctype, off in _CONST.findall(_all_text(k))})


def _grid_loop(var: str, total: str, body: list, per_block: bool = False) -> list:
    """A grid-stride loop over ``total`` items: per thread, or per block (``per_block``)."""
    if per_block:
        head = f"for (nl_idx {var} = blockIdx.x; {var} < {total}; {var} += gridDim.x) {{"
    else:
        head = (f"for (nl_idx {var} = blockIdx.x * (nl_idx)blockDim.x + threadIdx.x; "
                f"{var} < {total}; {var} += gridDim.x * (nl_idx)blockDim.x) {{")  # fmt: skip
    return [head, *_indent(body, 1), "}"]


def _unravel(flat: str, extents: tuple, var: str) -> list:
    """Coordinates var0, var1, ... of C-order flat index ``flat`` over ``extents``.

    Dividing 64-bit integers takes a GPU several times the instructions of 32-bit ones, and a
    2-D stencil does little else per element: when the extents' product fits in 31 bits (every
    flat index and extent then does), the division runs in 32 bits. Sizes are arguments, so
    the choice is a branch every thread takes the same way.
    """
    if not extents:
        return []
    if len(extents) == 1:
        return [f"const nl_idx {var}0 = {flat};"]
    names = [f"{var}{k}" for k in range(len(extents))]
    narrow, wide = [f"uint32_t {var}_rest = (uint32_t)({flat});"], [f"nl_idx {var}_rest = {flat};"]
    for k in reversed(range(1, len(extents))):
        e = extents[k]
        narrow.append(f"{var}{k} = {var}_rest % (uint32_t)({e}); {var}_rest /= (uint32_t)({e});")
        wide.append(f"{var}{k} = {var}_rest % ({e}); {var}_rest /= ({e});")
    narrow.append(f"{var}0 = {var}_rest;")
    wide.append(f"{var}0 = {var}_rest;")
    return [f"nl_idx {', '.join(names)};",
            f"if ({_product(extents)} <= 2147483647) {{", *_indent(narrow, 1),
            "} else {", *_indent(wide, 1), "}"]  # fmt: skip


# Consecutive elements of the last axis each thread of a 3-D grid takes (``_tiled``): their
# loads of one input lie 4 or 8 bytes apart, at one address computation (a stencil's eight
# loads otherwise compute eight addresses per element)
TILE_X = 2


def _tiled(extents: tuple, var: str, body: list) -> list:
    """Loops over coordinates var0, var1, ... of ``extents`` (two or more axes) on a 3-D grid
    of 3-D blocks, with no division per element: the last axis runs along x, ``TILE_X``
    consecutive elements a thread, the one before along y, the others along z, unravelled
    once per z step (a division per image of a batch, not per pixel). Every loop is
    grid-stride, so any grid covers the space; the launcher shapes blocks and grid to the
    extents (``cuda_launch._tile``)."""
    d = len(extents)

    def loop(name: str, axis: str, total: str, inner: list, step: int = 1) -> list:
        times = f" * {step}" if step > 1 else ""
        return [f"for (nl_idx {name} = (blockIdx.{axis} * (nl_idx)blockDim.{axis} + "
                f"threadIdx.{axis}){times}; {name} < {total}; {name} += gridDim.{axis} * "
                f"(nl_idx)blockDim.{axis}{times}) {{", *_indent(inner, 1), "}"]  # fmt: skip

    last, x = f"{var}{d - 1}", extents[-1]
    pair = ["#pragma unroll", f"for (int {last}_u = 0; {last}_u < {TILE_X}; {last}_u++) {{",
            *_indent([f"const nl_idx {last} = {last}_b + {last}_u;", f"if ({last} < {x}) {{",
                      *_indent(body, 1), "}"], 1), "}"]  # fmt: skip
    lines = loop(f"{var}{d - 2}", "y", extents[-2], loop(f"{last}_b", "x", x, pair, TILE_X))
    if d == 2:
        return lines
    return loop(f"{var}_z", "z", _product(extents[:-2]),
                _unravel(f"{var}_z", extents[:-2], var) + lines)


def _space(extents: tuple, var: str, body: list) -> list:
    """The loops of a kernel over every coordinate of ``extents``: a 3-D grid where there are
    two axes or more (``_tiled``), else a grid-stride loop."""
    if len(extents) >= 2:
        return _tiled(extents, var, body)
    return _grid_loop("f", _product(extents), _unravel("f", extents, var) + body)


def _product(extents: tuple) -> str:
    return " * ".join(f"({e})" for e in extents) or "1"


def _combine(r: kir.Reduction, a: str = "s_acc[t]", b: str = "s_acc[t + s]",
             a_arg: str = "s_arg[t]", b_arg: str = "s_arg[t + s]", a_nan: str = "s_nan[t]",
             b_nan: str = "s_nan[t + s]") -> list:  # fmt: skip
    """Fold partial result ``b`` (with its arg index and NaN flag) into ``a``: by default slot
    ``t + s`` of shared memory into slot ``t``."""
    if r.kind in ("sum", "prod", "any", "all"):
        op = {"sum": "+", "prod": "*", "any": "||", "all": "&&"}[r.kind]
        return [f"{a} = {a} {op} {b};"]
    if r.kind in ("max", "min"):
        cmp = ">" if r.kind == "max" else "<"
        return [f"{a} = {b} {cmp} {a} ? {b} : {a};", f"{a_nan} = {a_nan} || {b_nan};"]
    cmp = ">" if r.kind == "argmax" else "<"
    nan = f" || ({b} != {b} && ({a} == {a} || {b_arg} < {a_arg}))" if _is_float(r) else ""
    take = (f"{b_arg} >= 0 && ({a_arg} < 0 || {b} {cmp} {a} || "
            f"({b} == {a} && {b_arg} < {a_arg}){nan})")  # fmt: skip
    return [f"if ({take}) {{ {a} = {b}; {a_arg} = {b_arg}; }}"]


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


def _fold_loop(r: kir.Reduction, body: list, inner: tuple, var: str = "r",
               lines: list | None = None) -> list:  # fmt: skip
    """Each thread folds its share (stride blockDim.x) of the inner axes into acc/arg/nan
    (``lines``: the body already rendered)."""
    lines = _lets(body) if lines is None else lines
    point = _unravel("g", inner, var) + lines + _fold(r, "acc", "arg", r.value, r.index)
    return [f"for (nl_idx g = threadIdx.x; g < {_product(inner)}; g += blockDim.x) {{",
            *_indent(point, 1), "}"]  # fmt: skip


def _map(k: kir.Kernel) -> list:
    point = _lets(k.body) + [_store(k, s) for s in k.stores]
    if k.flat:
        scalar = _function(k, k.name, _grid_loop("i", k.outer[0], point))
        return scalar + ([""] + _map_vec(k) if _vectorizable(k) else [])
    return _function(k, k.name, _space(k.outer, "i", point))


# 16-byte vector types: four 4-byte elements, or two 8-byte ones (twice per four lanes).
_VEC = {"float": "float4", "int32_t": "int4", "uint32_t": "uint4", "double": "double2",
        "int64_t": "longlong2", "uint64_t": "ulonglong2"}  # fmt: skip
_LANES = ("x", "y", "z", "w")
_LOAD = re.compile(r"\b(in\d+)\[i\]")


# A map of more operations per element than this has no 16-byte variant: its time is its
# arithmetic, not its loads, and four lanes of its body would be four times the code NVRTC
# compiles (the Mandelbrot escape loop, 50 steps unrolled: 600 operations, 0.6 s to compile)
VEC_MAX_BODY = 128


def _vectorizable(k: kir.Kernel) -> bool:
    """A flat map whose every load and store is element ``i`` of a buffer, unmasked, and
    whose time is its memory traffic (at most ``VEC_MAX_BODY`` operations per element)."""
    if len(k.body) > VEC_MAX_BODY:
        return False
    text = " ".join(let.expr for let in k.body)
    loads = re.findall(r"\b(in\d+)\[([^\]]*)\]", text)
    return (bool(k.stores) and all(idx == "i" for _, idx in loads)
            and all(s.index == "i" and s.when is None for s in k.stores))  # fmt: skip


def _map_vec(k: kir.Kernel) -> list:
    """``NAME_vec``: each thread takes four consecutive elements, loaded and stored 16 bytes at
    a time where the element is 4 or 8 bytes wide (buffers aligned to 16 bytes: the launcher
    checks), then the tail one by one::

        const float4 in0_v = reinterpret_cast<const float4 *>(in0)[v];
        { const float t1 = in0_v.x; ... out0_v.x = t9; }   // lanes x, y, z, w
        reinterpret_cast<float4 *>(out0)[v] = out0_v;
    """
    ctype = {b.name: b.ctype for b in k.buffers}
    used = sorted(set(_LOAD.findall(" ".join(let.expr for let in k.body))))
    outs = sorted({s.buffer for s in k.stores})
    lines = []
    for name in used:
        lines += _vector_access(ctype[name], name, load=True)
    lines += [_declare_lanes(ctype[o], o) for o in outs]
    for j in range(4):
        lets = [kir.Let(let.name, let.ctype,
                        _LOAD.sub(lambda m, j=j: _lane(ctype[m[1]], m[1], j), let.expr))
                for let in k.body]  # fmt: skip
        stores = [f"{_lane(ctype[s.buffer], s.buffer, j)} = ({ctype[s.buffer]})({s.value});"
                  for s in k.stores]  # fmt: skip
        lines += ["{", *_indent([f"const nl_idx i = 4 * v + {j};"] + _lets(lets) + stores, 1),
                  "}"]  # fmt: skip
    for o in outs:
        lines += _vector_access(ctype[o], o, load=False)
    n = k.outer[0]
    tail = _lets(k.body) + [_store(k, s) for s in k.stores]
    body = _grid_loop("v", f"({n}) / 4", lines) + [
        f"for (nl_idx i = ({n}) / 4 * 4 + blockIdx.x * (nl_idx)blockDim.x + threadIdx.x; "
        f"i < {n}; i += gridDim.x * (nl_idx)blockDim.x) {{",
        *_indent(tail, 1),
        "}",
    ]
    return _function(k, k.name + "_vec", body)


def _declare_lanes(ctype: str, name: str) -> str:
    """This thread's four output elements of buffer ``name``, before they are stored."""
    vec = _VEC.get(ctype)
    if vec is None:
        return f"{ctype} {name}_a[4];"
    return f"{vec} {name}_v;" if vec.endswith("4") else f"{vec} {name}_v0, {name}_v1;"


def _lane(ctype: str, name: str, j: int) -> str:
    """Lane ``j`` (0..3) of a buffer's four elements held by this thread."""
    vec = _VEC.get(ctype)
    if vec is None:
        return f"{name}_a[{j}]"
    if vec.endswith("4"):
        return f"{name}_v.{_LANES[j]}"
    return f"{name}_v{j // 2}.{_LANES[j % 2]}"


def _vector_access(ctype: str, name: str, load: bool) -> list:
    """Load (declare) or store this thread's four elements of buffer ``name``."""
    vec = _VEC.get(ctype)
    if vec is None:  # 1- and 2-byte elements: four scalar accesses
        if load:
            return [f"{ctype} {name}_a[4];"] + [f"{name}_a[{j}] = {name}[4 * v + {j}];"
                                                 for j in range(4)]  # fmt: skip
        return [f"{name}[4 * v + {j}] = {name}_a[{j}];" for j in range(4)]
    if vec.endswith("4"):
        if load:
            return [f"const {vec} {name}_v = reinterpret_cast<const {vec} *>({name})[v];"]
        return [f"reinterpret_cast<{vec} *>({name})[v] = {name}_v;"]
    halves = (0, 1)
    if load:
        return [f"const {vec} {name}_v{h} = reinterpret_cast<const {vec} *>({name})[2 * v + {h}];"
                for h in halves]  # fmt: skip
    return [f"reinterpret_cast<{vec} *>({name})[2 * v + {h}] = {name}_v{h};" for h in halves]


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
               + ["if (threadIdx.x == 0) " + _result_store(k, r, "s_out")])  # fmt: skip
    block = _function(k, k.name, _shared(r) + _grid_loop("o", _product(k.outer), per_out, True))
    # a thread per output element (short reductions)
    point = _lets(k.body) + _fold(r, "acc", "arg", r.value, r.index)
    inner = ["for (nl_idx g = 0; g < " + _product(k.inner) + "; g++) {",
             *_indent(_unravel("g", k.inner, "r") + point, 1), "}"]  # fmt: skip
    per_thread = (_unravel("o", k.outer, "i") + _start(r) + inner + finish
                  + [_result_store(k, r, result_of)])  # fmt: skip
    thread = _function(k, k.name + "_thread", _grid_loop("o", _product(k.outer), per_thread))
    return block + [""] + thread + [""] + _split_reduce(k, r)


def _result_store(k: kir.Kernel, r: kir.Reduction, value: str) -> str:
    """The store of a reduction's result; where the kernel checks for floating-point errors
    (``fp_outputs``: it folds operations that can raise), a float result that is not finite
    also sets the flag word (fperrors.py)."""
    store = _store(k, kir.Store(r.out.buffer, r.out.index, value))
    if not k.fp_outputs or r.kind not in ("sum", "prod", "max", "min") or not _is_float(r):
        return store
    ctype = next(b.ctype for b in k.buffers if b.name == r.out.buffer)
    if ctype in ("float", "double"):  # the value stored (a float32 sum overflows there)
        value = f"{r.out.buffer}[{r.out.index}]"
    return f"{{ {store} if (!({value} - {value} == 0)) *fpw = 1; }}"


def _split_reduce(k: kir.Kernel, r: kir.Reduction) -> list:
    """Few outputs, long reductions (a column sum): ``parts`` blocks share each output's
    reduction, each folding every ``parts``-th stretch of it (``NAME_split``), and one block
    per output combines the partial results in order (``NAME_merge``)."""
    args = (f"{r.acc_type} *__restrict__ part", "int64_t *__restrict__ part_arg",
            "bool *__restrict__ part_nan", "const int64_t parts")  # fmt: skip
    point = _unravel("g", k.inner, "r") + _lets(k.body) + _fold(r, "acc", "arg", r.value,
                                                                  r.index)  # fmt: skip
    fold = [f"for (nl_idx g = q * blockDim.x + threadIdx.x; g < {_product(k.inner)}; "
            "g += parts * blockDim.x) {", *_indent(point, 1), "}"]  # fmt: skip
    store_part = ["if (threadIdx.x == 0) { part[b] = s_acc[0]; part_arg[b] = s_arg[0]; "
                  "part_nan[b] = s_nan[0]; }", "__syncthreads();"]  # fmt: skip
    per_block = (["const nl_idx o = b / parts, q = b - o * parts;"]
                 + _unravel("o", k.outer, "i") + _start(r) + fold + _block_tree(r)
                 + store_part)  # fmt: skip
    split = _function(k, k.name + "_split", _shared(r) + _grid_loop(
        "b", f"{_product(k.outer)} * parts", per_block, per_block=True), args)  # fmt: skip
    merge_args = tuple("const " + a if "*" in a else a for a in args)
    gather = ["for (nl_idx g = threadIdx.x; g < parts; g += blockDim.x) {",
              *_indent(_combine_into_thread(r, "o * parts + g"), 1), "}"]  # fmt: skip
    result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
    per_out = (_unravel("o", k.outer, "i") + _start(r) + gather
               + [f"__shared__ {result_type} s_out;"] + _block_reduce(r, "s_out")
               + ["if (threadIdx.x == 0) " + _result_store(k, r, "s_out")])  # fmt: skip
    merge = _function(k, k.name + "_merge", _shared(r) + _grid_loop(
        "o", _product(k.outer), per_out, per_block=True), merge_args)  # fmt: skip
    return split + [""] + merge


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
    gather = ["for (nl_idx g = threadIdx.x; g < parts; g += blockDim.x) {",
              *_indent(_combine_into_thread(r), 1), "}"]  # fmt: skip
    result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
    final_body = (_shared(r) + _start(r) + gather + [f"__shared__ {result_type} s_out;"]
                  + _block_reduce(r, "s_out")
                  + ["if (threadIdx.x == 0) " + _result_store(k, r, "s_out")])  # fmt: skip
    final = _function(k, k.name + "_final", final_body, final_args)
    return part + [""] + final


def _block_tree(r: kir.Reduction) -> list:
    """Every thread's (acc, arg, nan) combined into slot 0 of shared memory, in a fixed order:
    halving through shared memory down to one warp, then warp shuffles (the same pairs)."""
    shuffled = ["const " + line for line in (
        f"{r.acc_type} b = nl_shfl_down(a, s);", "int64_t b_arg = nl_shfl_down(a_arg, s);",
        "bool b_nan = nl_shfl_down(a_nan, s);")]  # fmt: skip
    combine = _combine(r, "a", "b", "a_arg", "b_arg", "a_nan", "b_nan")
    return [
        "{",
        "    const int t = threadIdx.x;",
        "    s_acc[t] = acc; s_arg[t] = arg; s_nan[t] = nan;",
        "    __syncthreads();",
        f"    for (int s = {THREADS // 2}; s >= 32; s >>= 1) {{",
        f"        if (t < s) {{ {' '.join(_combine(r))} }}",
        "        __syncthreads();",
        "    }",
        "    if (t < 32) {",
        f"        {r.acc_type} a = s_acc[t];",
        "        int64_t a_arg = s_arg[t];",
        "        bool a_nan = s_nan[t];",
        "        for (int s = 16; s > 0; s >>= 1) {",
        *["            " + line for line in shuffled + combine],
        "        }",
        "        if (t == 0) { s_acc[0] = a; s_arg[0] = a_arg; s_nan[0] = a_nan; }",
        "    }",
        "    __syncthreads();",
        "}",
    ]


def _combine_into_thread(r: kir.Reduction, g: str = "g") -> list:
    """Fold partial result ``g`` (read from the part arrays) into this thread's acc/arg/nan,
    with the same rules as the tree (partials arrive in block order)."""
    b = f"part[{g}]"
    if r.kind in ("sum", "prod", "any", "all"):
        op = {"sum": "+", "prod": "*", "any": "||", "all": "&&"}[r.kind]
        return [f"acc = acc {op} {b};"]
    if r.kind in ("max", "min"):
        cmp = ">" if r.kind == "max" else "<"
        return [f"acc = {b} {cmp} acc ? {b} : acc;", f"nan = nan || part_nan[{g}];"]
    # Partials hold interleaved stretches: on a tie the smaller index wins, as in the tree.
    cmp = ">" if r.kind == "argmax" else "<"
    i = f"part_arg[{g}]"
    nan = f" || ({b} != {b} && (acc == acc || {i} < arg))" if _is_float(r) else ""
    return [f"if ({i} >= 0 && (arg < 0 || {b} {cmp} acc || ({b} == acc && {i} < arg){nan})) "
            f"{{ acc = {b}; arg = {i}; }}"]  # fmt: skip


# Bytes of shared memory a row kernel's block keeps loaded values in between its passes.
ROW_CACHE_BYTES = 16384
_LOADED = re.compile(r"\((\w+)\)(in\d+)\[")
_SIZES = {"float": 4, "double": 8, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
          "int16_t": 2, "uint16_t": 2, "int8_t": 1, "uint8_t": 1, "bool": 1}  # fmt: skip


def _row_cache(k: kir.Kernel) -> tuple:
    """``(cache, needed)``: what a row kernel's block keeps in shared memory between its
    passes, and the statements each pass still computes.

    ``cache`` is ``{expression: (shared array, C type)}``, expressions with every local
    replaced by what it computes (``_canonical``). A value a pass computes that an earlier
    pass computed already is read back from there, at its position along the row, and what
    it was computed from is not computed again: softmax reads its input once and takes its
    exponentials once (the max pass reads x, the sum pass reads x and keeps exp(x - max),
    the output pass divides that). Loads that are one contiguous run along the row are
    copied in before the first pass (``_row_prefetch``); any other value is kept by the pass
    that first computes it, each thread reading back only the slots it wrote (every pass
    gives it the same positions, so no barrier is needed). A value kept from a pass where the
    last reader of another array reads it first takes that array over, slot by slot, so
    softmax's exponentials replace its inputs. Rows longer than the cache compute their tail
    in full. ``needed``: per pass, the names of the statements it renders (None: all)."""
    if any(phase.skip is not None for phase in k.phases):
        return {}, None
    computed: dict = {}  # expression -> (pass, C type) of the pass that first computes it
    reads: dict = {}  # expression -> passes that read it back
    needed, positions = [], []
    for n, phase in enumerate(k.phases):
        lets = {let.name: let for let in phase.body}
        canon = _canonical(phase.body)
        roots = [phase.reduction.value, phase.reduction.index] if phase.reduction else []
        roots += [part for store in phase.stores for part in (store.value, store.index, store.when)
                  if part]  # fmt: skip
        need: set = set()
        stack = [name for root in roots for name in _LOCAL.findall(root) if name in lets]
        while stack:
            name = stack.pop()
            if name in need:
                continue
            need.add(name)
            let, c = lets[name], canon[name]
            if computed.get(c, (n, None))[0] < n and computed[c][1] == let.ctype:
                reads.setdefault(c, set()).add(n)  # (kept: what made it is not needed here)
                continue
            stack += [m for m in _LOCAL.findall(let.expr) if m in lets]
        for let in phase.body:
            c = canon[let.name]
            if let.name in need and c not in computed and _keepable(let, c):
                computed[c] = (n, let.ctype)
        needed.append(need)
        positions.append({canon[let.name]: j for j, let in enumerate(phase.body)})
    owners: dict = {}  # shared array -> the expression it holds last
    cache: dict = {}
    for c in sorted(reads, key=lambda c: (computed[c][0], positions[computed[c][0]][c])):
        first, ctype = computed[c]
        array = None
        if _load_parts(c) is None:  # a computed value: may take over an array read first here
            array = next((a for a, o in owners.items() if max(reads[o]) == first
                          and cache[o][1] == ctype and o in positions[first]
                          and positions[first][o] < positions[first][c]), None)  # fmt: skip
        if array is None:
            array = f"s_cache{len(owners)}"
        owners[array] = c
        cache[c] = (array, ctype)
    return cache, needed


_LOCAL = re.compile(r"\bt\d+\b")


def _canonical(body) -> dict:
    """``{local: its expression}`` with every local it reads replaced by its own (in
    parentheses): equal values of different passes compare equal."""
    canon: dict = {}
    for let in body:
        canon[let.name] = _LOCAL.sub(lambda m: f"({canon[m[0]]})" if m[0] in canon else m[0],
                                     let.expr)  # fmt: skip
    return canon


def _keepable(let: kir.Let, c: str) -> bool:
    """Whether a pass's value can be kept in shared memory: of a type the cache holds, and a
    load read as its stored type (a load converted as it is read is kept converted)."""
    if let.ctype not in _SIZES:
        return False
    load = _load_parts(c)
    return load is None or load[0] == let.ctype


def _load_parts(expr: str) -> tuple | None:
    """(C type, input, index) when ``expr`` is one load of an input, ``(T)inN[index]``, else
    None."""
    m = _LOADED.match(expr)
    if m is None or not expr.endswith("]"):
        return None
    depth = 0
    for position in range(m.end() - 1, len(expr)):
        depth += {"[": 1, "]": -1}.get(expr[position], 0)
        if depth == 0:
            if position != len(expr) - 1:
                return None
            return m.group(1), m.group(2), expr[m.end() : -1]
    return None


def _row_cache_length(cache: dict) -> int:
    arrays = dict(cache.values())
    return ROW_CACHE_BYTES // max(1, sum(_SIZES[ctype] for ctype in arrays.values()))


def _pass_lines(body, cache: dict, filled: set, length: int, need: set | None) -> list:
    """A pass's statements (those in ``need``), its kept values stored (the pass that first
    computes them) or read back (later ones; past the cache's length, computed in full)."""
    lines = []
    canon = _canonical(body)
    for let in body:
        if need is not None and let.name not in need:
            continue
        c = canon[let.name]
        hit = cache.get(c)
        if hit is None:
            lines.append(f"const {let.ctype} {let.name} = {let.expr};")
        elif c in filled:
            lines.append(f"const {let.ctype} {let.name} = g < {length} ? {hit[0]}[g] : {c};")
        else:
            lines.append(f"const {let.ctype} {let.name} = {let.expr};")
            lines.append(f"if (g < {length}) {hit[0]}[g] = {let.name};")
    filled.update(canon[let.name] for let in body if canon[let.name] in cache
                  and (need is None or let.name in need))  # fmt: skip
    return lines


_ROW_BASE = re.compile(r"i\d+|P\[\d+\]|\d+|[\s*+()]")


def _row_start(index: str) -> str | None:
    """``base`` when ``index`` is ``base + r0`` up to the order of its terms (a unit step along
    the row, ``base`` made of row coordinates and sizes only), else None."""
    terms, depth, start = [], 0, 0
    for at, ch in enumerate(index):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth == 0 and index.startswith(" + ", at):
            terms.append(index[start:at])
            start = at + 3
    terms.append(index[start:])
    if terms.count("r0") != 1:
        return None
    base = " + ".join(t for t in terms if t != "r0") or "0"
    return None if _ROW_BASE.sub("", base) else base


def _row_prefetch(k: kir.Kernel, cache: dict, length: int) -> tuple:
    """(lines, loads): the cached loads that are one contiguous run along a single inner axis
    (``(T)inN[base + r0]``) copied into shared memory before the row's first pass, so every
    pass reads them back from there (after a barrier: a thread reads slots others wrote). A
    thread folding as it loads keeps one load in flight; this copy loads 16 bytes at a time
    (after the row's first elements up to a 16-byte boundary, one by one), four or more
    elements a load."""
    if len(k.inner) != 1:
        return [], set()
    lines, loads = [], set()
    stored = {b.name: b.ctype for b in k.buffers}
    for expr, (name, ctype) in cache.items():
        load = _load_parts(expr)
        if load is None:  # (a computed value)
            continue
        _, buffer, index = load
        vec = _VEC.get(ctype)
        if vec is None or stored.get(buffer) != ctype:
            continue  # (a load converted as it is read, a float16 one widened, stays as it is)
        base = _row_start(index)
        if base is None:  # (not one unit step along the row from sizes and row coordinates)
            continue
        size = _SIZES[ctype]
        lanes = 16 // size
        count = f"(({k.inner[0]}) < {length} ? ({k.inner[0]}) : {length})"
        spread = [f"{name}[head + {lanes} * v + {j}] = q.{_LANES[j]};" for j in range(lanes)]
        lines += [
            "{",
            *_indent([
                f"const {ctype} *__restrict__ row = {buffer} + ({base});",
                f"const nl_idx n = {count};",
                "const unsigned long long at = reinterpret_cast<unsigned long long>(row);",
                f"nl_idx head = at % {size} ? n : (nl_idx)((16 - at % 16) % 16 / {size});",
                "head = head < n ? head : n;",
                f"const nl_idx body = (n - head) / {lanes} * {lanes};",
                f"for (nl_idx g = threadIdx.x; g < head; g += blockDim.x) {name}[g] = row[g];",
                f"for (nl_idx v = threadIdx.x; v < body / {lanes}; v += blockDim.x) {{",
                f"    const {vec} q = reinterpret_cast<const {vec} *>(row + head)[v];",
                *_indent(spread, 1),
                "}",
                f"for (nl_idx g = head + body + threadIdx.x; g < n; g += blockDim.x) "
                f"{name}[g] = row[g];",
            ], 1),
            "}",
        ]  # fmt: skip
        loads.add(expr)
    if lines:
        lines.append("__syncthreads();")
    return lines, loads


def _row(k: kir.Kernel) -> list:
    """A block per row: each phase folds the row and broadcasts its result; then the outputs."""
    lines = [*_unravel("o", k.outer, "i")] if k.outer else []
    cache, needed = _row_cache(k)
    length = _row_cache_length(cache)
    arrays = dict(cache.values())
    shared = [f"__shared__ {ctype} {name}[{length}];" for name, ctype in arrays.items()]
    prefetch, filled = _row_prefetch(k, cache, length)
    lines += prefetch
    for n, phase in enumerate(k.phases):
        r = phase.reduction
        rendered = _pass_lines(phase.body, cache, filled, length, needed and needed[n])
        if r is None:
            point = _unravel("g", k.inner, "r") + rendered
            point += [_store(k, s) for s in phase.stores]
            lines += [f"for (nl_idx g = threadIdx.x; g < {_product(k.inner)}; "
                      "g += blockDim.x) {", *_indent(point, 1), "}"]  # fmt: skip
            continue
        result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
        shared += [f"__shared__ {result_type} s_{r.out.buffer};"]
        lines += ["{", *_indent(_shared(r) + _start(r) + _fold_loop(r, phase.body, k.inner,
                                                                     lines=rendered)
                                + _block_reduce(r, f"s_{r.out.buffer}"), 1), "}",
                  f"const {result_type} {r.out.buffer} = s_{r.out.buffer};"]  # fmt: skip
    row_out = _lets(k.body) + [_store(k, s) for s in k.row_stores]
    if row_out:
        lines += ["if (threadIdx.x == 0) {", *_indent(row_out, 1), "}"]
    lines += ["__syncthreads();"]  # shared results are reused by the next row
    body = _grid_loop("o", _product(k.outer), lines, per_block=True) if k.outer else lines
    block = _function(k, k.name, shared + body)
    if not k.outer:
        return block
    return block + [""] + _row_thread(k)


def _row_thread(k: kir.Kernel) -> list:
    """Short rows (k-means' distances to a few centers): a thread per row folds each phase
    in order, as NumPy does, with no shared memory or barriers (``NAME_thread``)."""
    lines = list(_unravel("o", k.outer, "i"))
    for phase in k.phases:
        r = phase.reduction
        if r is None:
            point = _unravel("g", k.inner, "r") + _lets(phase.body)
            point += [_store(k, s) for s in phase.stores]
            lines += [f"for (nl_idx g = 0; g < {_product(k.inner)}; g++) {{",
                      *_indent(point, 1), "}"]  # fmt: skip
            continue
        result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
        result = "arg" if r.kind in ("argmax", "argmin") else "acc"
        point = _unravel("g", k.inner, "r") + _lets(phase.body)
        point += _fold(r, "acc", "arg", r.value, r.index)
        lines += [f"{result_type} v_{r.out.buffer};", "{",
                  *_indent(_start(r) + [f"for (nl_idx g = 0; g < {_product(k.inner)}; g++) {{",
                                        *_indent(point, 1), "}"]
                           + _finish(r) + [f"v_{r.out.buffer} = {result};"], 1), "}",
                  f"const {result_type} {r.out.buffer} = v_{r.out.buffer};"]  # fmt: skip
    lines += _lets(k.body) + [_store(k, s) for s in k.row_stores]
    return _function(k, k.name + "_thread", _grid_loop("o", _product(k.outer), lines))


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
        copy_loop = _space(k.outer, "i", copied)
    if k.last_wins:
        return _scatter_last_wins(k, copied)
    first = _function(k, k.name + "_copy", copy_loop)
    point = _lets(write.body) + [_store(k, s) for s in write.stores]
    second = _function(k, k.name + "_write", _space(k.inner, "r", point))
    if not k.view_coords:
        return first + [""] + second
    # A box view: one pass over the storage, each element new (inside) or old (outside).
    outside = [_store(k, kir.Store(store.buffer, store.index, store.value))]
    inside = ([f"const nl_idx r{j} = {c};" for j, c in enumerate(k.view_coords)]
              + _lets(write.body) + [_store(k, s) for s in write.stores])  # fmt: skip
    fused = [
        f"if ({when}) {{",
        *_indent(_lets(copy.body) + outside, 1),
        "} else {",
        *_indent(inside, 1),
        "}",
    ]
    third = _function(k, k.name + "_fused", _space(k.outer, "i", fused))
    return first + [""] + second + [""] + third


def _scatter_last_wins(k: kir.Kernel, copied: list) -> list:
    """A write at positions that may repeat with different values, where NumPy's last value
    stays: ``NAME_copy`` copies the old version and clears each element's claim, ``NAME_claim``
    has every value claim its element (the highest value index wins, an atomic maximum), and
    ``NAME_write`` stores only the winners. The claims are one ``long long`` per element of
    the storage, a scratch array the launcher gives."""
    _, write = k.phases
    (store,) = write.stores
    claims = ("long long *__restrict__ claim",)
    first = _function(k, k.name + "_copy",
                      _grid_loop("i", k.outer[0], copied + ["claim[i] = -1;"]), claims)
    point = _unravel("f", k.inner, "r") + _lets(write.body)
    claim = point + [f"atomicMax(claim + ({store.index}), (long long)f);"]
    second = _function(k, k.name + "_claim", _grid_loop("f", _product(k.inner), claim), claims)
    won = kir.Store(store.buffer, store.index, store.value, f"claim[{store.index}] == (long long)f")
    third = _function(k, k.name + "_write",
                      _grid_loop("f", _product(k.inner), point + [_store(k, won)]), claims)
    return first + [""] + second + [""] + third


def _scan(k: kir.Kernel) -> list:
    """A thread per line along the scanned axis, folding sequentially (NumPy's order)."""
    r = k.reduction
    step = "+=" if r.kind == "sum" else "*="
    init = "0" if r.kind == "sum" else "1"
    line = [
        f"{r.acc_type} acc = {init};",
        f"for (nl_idx r0 = 0; r0 < {k.inner[0]}; r0++) {{",
        *_indent(_lets(k.body) + [f"acc {step} {r.value};", _store(k, r.out)], 1),
        "}",
    ]
    if not k.outer:
        return _function(k, k.name, ["if (blockIdx.x == 0 && threadIdx.x == 0) {",
                                     *_indent(line, 1), "}"])  # fmt: skip
    body = _unravel("o", k.outer, "i") + line
    return _function(k, k.name, _grid_loop("o", _product(k.outer), body))


NARROW = "32"  # the suffix of a kernel's name in its 32-bit index variant


def has_narrow(k: kir.Kernel) -> bool:
    """Whether kernel ``k`` also comes with 32-bit indices (``NAME32``, ``NAME32_copy``...):
    64-bit index arithmetic costs a GPU several instructions per multiply and division, which
    is a stencil's or a strided kernel's main work. A flat map indexes nothing but ``i``."""
    return not (k.kind == "map" and k.flat)


def render_cuda(k: kir.Kernel) -> str:
    """The CUDA C++ source of kernel ``k`` (one or two ``__global__`` functions)."""
    from .cfamily import KERNELS_INCLUDE, definitions

    body = {"map": _map, "reduce": _reduce, "row": _row, "scatter": _scatter,
            "scan": _scan}[k.kind](k)  # fmt: skip
    functions = [KERNELS_INCLUDE, *definitions(k.functions, True)] if k.functions else []
    text = "\n".join(body)
    wide = [text.replace("nl_idx", "int64_t")]
    if has_narrow(k):
        narrow = re.sub(rf"\b{k.name}(?=\w*\()", k.name + NARROW, text).replace("nl_idx", "int32_t")
        wide += ["", f"// {k.name}{NARROW}...: the same with 32-bit indices (every extent, stride,",
                 "// offset and buffer length under 2**30: the launcher checks)", narrow]  # fmt: skip
    source = "\n".join(['#include "numloom.h"', "", *functions, *wide]) + "\n"
    source = re.sub(r"(?<![.\w])P\[(\d+)\]", r"p\1", source)
    return _CONST.sub(r"k\2", source)

"""Render the kernel IR as source: one C-family renderer, a ``Dialect`` per backend.

For a map kernel over a 2-D iteration space the C99 + OpenMP dialect emits::

    #include "numloom.h"
    void k0_add(void **B, const int64_t *P, const char *K) {
        const double *restrict in0 = (const double *)B[0];
        double *restrict out0 = (double *)B[1];
        #pragma omp parallel for schedule(static) if (P[0] * P[1] > 32768)
        for (int64_t i0 = 0; i0 < P[0]; i0++) {
            #pragma omp simd
            for (int64_t i1 = 0; i1 < P[1]; i1++) {
                const double t0 = (double)in0[i0 * P[2] + i1];
                out0[i0 * P[2] + i1] = (double)(t0 + t0);
            }
        }
    }

A reduction adds an inner loop nest folding into an accumulator (per-thread partial results,
combined in thread order, when every axis is reduced).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import kir

PARALLEL_MIN = 32768  # elements below which a kernel runs on one thread


@dataclass(frozen=True)
class Dialect:
    name: str
    prelude: str
    signature: str  # format string taking the kernel name
    restrict: str


C = Dialect(
    name="c",
    prelude='#include "numloom.h"\n#include <omp.h>\n',
    signature="void {name}(void **B, const int64_t *P, const char *K)",
    restrict="restrict",
)


def _indent(lines: list, depth: int) -> list:
    return ["    " * depth + line for line in lines]


def _buffers(k: kir.Kernel, d: Dialect) -> list:
    lines = []
    for j, b in enumerate(k.buffers):
        const = "" if b.output else "const "
        lines.append(f"{const}{b.ctype} *{d.restrict} {b.name} = ({const}{b.ctype} *)B[{j}];")
    return lines


def _params(k: kir.Kernel) -> list:
    """Sizes, strides and offsets copied into locals once: loops then see constants, not
    loads through a pointer that every store might alias."""
    count = len(re.findall(r"P\[(\d+)\]", str(k)))
    used = sorted({int(m) for m in re.findall(r"P\[(\d+)\]", _all_text(k))})
    return [f"const int64_t p{i} = P[{i}];" for i in used] if count or used else []


def _all_text(k: kir.Kernel) -> str:
    parts = [str(k)] + [repr(p) for p in k.phases] + [repr(s) for s in k.row_stores]
    return "\n".join(parts)


def _lets(lets) -> list:
    return [f"const {s.ctype} {s.name} = {s.expr};" for s in lets]


def _store(k: kir.Kernel, s: kir.Store) -> str:
    ctype = next(b.ctype for b in k.buffers if b.name == s.buffer)
    store = f"{s.buffer}[{s.index}] = ({ctype})({s.value});"
    return f"if ({s.when}) {store}" if s.when else store


def _loops(
    extents: tuple, var: str, body: list, parallel: bool, simd, first: int = 0, work: tuple = ()
):
    """Nested for-loops over ``extents`` with loop variables var<first>, var<first+1>, ...

    ``simd`` marks the innermost loop: False, True, or the clauses to add (a reduction).
    ``work`` adds the extents of loops inside ``body`` to the size that decides parallelism."""
    lines = body
    for k in reversed(range(len(extents))):
        v = f"{var}{first + k}"
        head = f"for (int64_t {v} = 0; {v} < {extents[k]}; {v}++) {{"
        pragmas = []
        if k == 0 and parallel:
            total = " * ".join(f"{e}" for e in extents + tuple(work))
            pragmas.append(f"#pragma omp parallel for schedule(static) if ({total} > "
                           f"{PARALLEL_MIN})")  # fmt: skip
        if k == len(extents) - 1 and simd and not (k == 0 and parallel):
            pragmas.append("#pragma omp simd" + ("" if simd is True else f" {simd}"))
        lines = pragmas + [head] + _indent(lines, 1) + ["}"]
    return lines


CUDA = Dialect(name="cuda", prelude='#include "numloom.h"\n', signature="", restrict="__restrict__")


def render(k: kir.Kernel, dialect: Dialect = C) -> str:
    """The source text of kernel ``k`` in ``dialect``."""
    if dialect is CUDA:
        from .render_cuda import render_cuda

        return render_cuda(k)
    body = [dialect.signature.format(name=k.name) + " {"]
    inner = _buffers(k, dialect) + _params(k) + _lets(k.prologue)
    render_kind = {"map": _render_map, "reduce": _render_reduce, "row": _render_row,
                   "scatter": _render_scatter, "scan": _render_scan}  # fmt: skip
    inner += render_kind[k.kind](k)
    text = "\n".join(body + _indent(inner, 1) + ["}"])
    return dialect.prelude + re.sub(r"(?<!= )P\[(\d+)\]", r"p\1", text) + "\n"


def _render_map(k: kir.Kernel) -> list:
    point = _lets(k.body) + [_store(k, s) for s in k.stores]
    if k.flat:
        (n,) = k.outer
        return [
            f"#pragma omp parallel for simd schedule(static) if ({n} > {PARALLEL_MIN})",
            f"for (int64_t i = 0; i < {n}; i++) {{",
            *_indent(point, 1),
            "}",
        ]
    if not k.outer:
        return ["{", *_indent(point, 1), "}"]
    return _loops(k.outer, "i", point, parallel=True, simd=True)


_INIT = {
    "sum": "0", "prod": "1", "any": "false", "all": "true",
}  # fmt: skip


def _init(r: kir.Reduction) -> str:
    if r.kind in _INIT:
        return _INIT[r.kind]
    big = {"float": "INFINITY", "double": "INFINITY"}.get(r.acc_type)
    if big is None:
        bits = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64, "uint8_t": 8,
                "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "bool": 1}[r.acc_type]  # fmt: skip
        unsigned = r.acc_type.startswith("u") or r.acc_type == "bool"
        lo = "0" if unsigned else f"(-{2 ** (bits - 1) - 1}LL - 1)"
        hi = f"{2**bits - 1}ULL" if unsigned else f"{2 ** (bits - 1) - 1}LL"
        return f"({r.acc_type})({lo if r.kind in ('max', 'argmax') else hi})"
    return f"-{big}" if r.kind in ("max", "argmax") else big


def _fold(r: kir.Reduction, acc: str, arg: str, v: str, i: str) -> list:
    """Statements folding value ``v`` (at reduction index ``i``) into ``acc`` (and ``arg``)."""
    float_acc = r.acc_type in ("float", "double")
    if r.kind == "sum":
        return [f"{acc} += ({r.acc_type}){v};"]
    if r.kind == "prod":
        return [f"{acc} *= ({r.acc_type}){v};"]
    if r.kind == "any":
        return [f"{acc} = {acc} || {v};"]
    if r.kind == "all":
        return [f"{acc} = {acc} && {v};"]
    if r.kind in ("max", "min") and v.startswith("part["):  # combining partial results
        sfx = "f" if r.acc_type == "float" else ""
        fn = (f"nl_{r.kind}_{sfx}" if float_acc else
              ("NL_IMAX" if r.kind == "max" else "NL_IMIN"))  # fmt: skip
        return [f"{acc} = {fn}({acc}, {v});"]
    if r.kind in ("max", "min"):
        # A plain max (vectorizable) plus a NaN flag: NumPy's max propagates NaN.
        cmp = ">" if r.kind == "max" else "<"
        nan = [f"nan = nan || ({v} != {v});"] if float_acc else []
        return [f"{acc} = {v} {cmp} {acc} ? {v} : {acc};"] + nan
    better = ">" if r.kind == "argmax" else "<"
    nan = f" || ({v} != {v} && {acc} == {acc})" if float_acc else ""
    return [f"if ({arg} < 0 || {v} {better} {acc}{nan}) {{ {acc} = {v}; {arg} = {i}; }}"]


_SIMD_REDUCTION = {"sum": "+", "prod": "*", "any": "||", "all": "&&", "max": "max", "min": "min"}


def _fold_simd(r: kir.Reduction):
    """The simd clause letting a fold loop vectorize: sums may reorder (NumPy's pairwise sum
    reorders too); max and min fold NaN into a flag; arg reductions keep their order."""
    op = _SIMD_REDUCTION.get(r.kind)
    if op is None:
        return False
    nan = " reduction(||:nan)" if r.kind in ("max", "min") and _is_float(r) else ""
    return f"reduction({op}:acc){nan}"


def _is_float(r: kir.Reduction) -> bool:
    return r.acc_type in ("float", "double")


def _start(r: kir.Reduction) -> list:
    return [f"{r.acc_type} acc = {_init(r)};", "int64_t arg = -1;", "bool nan = false;"]


def _finish(r: kir.Reduction) -> list:
    """After a fold: a NaN seen by max or min is the result."""
    if r.kind in ("max", "min") and _is_float(r):
        return ["if (nan) acc = NAN;"]
    return []


def _render_reduce(k: kir.Kernel) -> list:
    r = k.reduction
    is_arg = r.kind in ("argmax", "argmin")
    point = _lets(k.body) + _fold(r, "acc", "arg", r.value, r.index)
    folded = _loops(k.inner, "r", point, parallel=False, simd=_fold_simd(r))
    result = "arg" if is_arg else "acc"
    store = _store(k, kir.Store(r.out.buffer, r.out.index, result))
    if k.outer:
        body = _start(r) + folded + _finish(r) + [store]
        return _loops(k.outer, "i", body, parallel=True, simd=False, work=k.inner)
    return _render_full_reduce(k, r, store)


def _render_full_reduce(k: kir.Kernel, r: kir.Reduction, store: str) -> list:
    """Every axis reduced: each thread folds a static share of the outermost reduction loop,
    then the partial results combine in thread order (deterministic for a thread count)."""
    point = _lets(k.body) + _fold(r, "acc", "arg", r.value, r.index)
    if len(k.inner) == 1:  # blocks of the one axis per thread; each block a vector loop
        outer_loop = [
            "#pragma omp for schedule(static)",
            f"for (int64_t b = 0; b < {k.inner[0]}; b += 4096) {{",
            f"    const int64_t e = b + 4096 < {k.inner[0]} ? b + 4096 : {k.inner[0]};",
            *(["    #pragma omp simd " + _fold_simd(r)] if _fold_simd(r) else []),
            "    for (int64_t r0 = b; r0 < e; r0++) {",
            *_indent(point, 2),
            "    }",
            "}",
        ]
    else:
        inner = _loops(k.inner[1:], "r", point, parallel=False, simd=_fold_simd(r), first=1)
        outer_loop = [
            "#pragma omp for schedule(static)",
            f"for (int64_t r0 = 0; r0 < {k.inner[0]}; r0++) {{",
            *_indent(inner, 1),
            "}",
        ]
    combine = _fold(r, "acc", "arg", "part[t]", "argp[t]")
    return [
        f"{r.acc_type} part[256]; int64_t argp[256]; int teams = 1;",
        f"#pragma omp parallel num_threads(omp_get_max_threads() < 256 ? "
        f"omp_get_max_threads() : 256) if ({' * '.join(k.inner)} > {PARALLEL_MIN})",
        "{",
        *_indent(
            _start(r)
            + outer_loop
            + _finish(r)
            + [
                "part[omp_get_thread_num()] = acc; argp[omp_get_thread_num()] = arg;",
                "#pragma omp single",
                "teams = omp_get_num_threads();",
            ],
            1,
        ),
        "}",
        *_start(r),
        "for (int t = 0; t < teams; t++) {",
        *_indent(
            (["if (argp[t] < 0) continue;"] if r.kind in ("argmax", "argmin") else []) + combine, 1
        ),
        "}",
        store,
    ]


def _render_row(k: kir.Kernel) -> list:
    """Per row: each phase's pass over the row's inner axes, then the per-row outputs."""
    per_row = []
    for phase in k.phases:
        passes = _lets(phase.body)
        r = phase.reduction
        if r is None:
            per_row += _loops(k.inner, "r", passes + [_store(k, s) for s in phase.stores],
                              parallel=False, simd=True)  # fmt: skip
            continue
        folded = _loops(k.inner, "r", passes + _fold(r, "acc", "arg", r.value, r.index),
                        parallel=False, simd=_fold_simd(r))  # fmt: skip
        result_type = "int64_t" if r.kind in ("argmax", "argmin") else r.acc_type
        result = "arg" if r.kind in ("argmax", "argmin") else "acc"
        per_row += [f"{result_type} {r.out.buffer};", "{",
                    *_indent(_start(r) + folded + _finish(r) + [f"{r.out.buffer} = {result};"], 1),
                    "}"]  # fmt: skip
    per_row += _lets(k.body) + [_store(k, s) for s in k.row_stores]
    if not k.outer:
        return ["{", *_indent(per_row, 1), "}"]
    return _loops(k.outer, "i", per_row, parallel=True, simd=False, work=k.inner)


def _render_scatter(k: kir.Kernel) -> list:
    """The old version copied (where the view does not cover it, when the view is a box of
    slices), then the new values written through the view."""
    copy, write = k.phases
    copied = _lets(copy.body) + [_store(k, s) for s in copy.stores]
    if copy.skip is not None:
        lines = _copy_around(k, copy)
    elif len(k.outer) == 1 and copy.stores[0].index == "i":
        (n,) = k.outer
        lines = [
            f"#pragma omp parallel for simd schedule(static) if ({n} > {PARALLEL_MIN})",
            f"for (int64_t i = 0; i < {n}; i++) {{",
            *_indent(copied, 1),
            "}",
        ]
    else:
        lines = _loops(k.outer, "i", copied, parallel=True, simd=True)
    point = _lets(write.body) + [_store(k, s) for s in write.stores]
    if not k.inner:
        return lines + ["{", *_indent(point, 1), "}"]
    return lines + _loops(k.inner, "r", point, parallel=True, simd=True)


def _copy_around(k: kir.Kernel, copy: kir.Phase) -> list:
    """Copy each row of the old version except the span of the last axis the view covers:
    whole rows the view misses, the two ends of the rows it crosses (vector loops, no test
    per element)."""
    (store,) = copy.stores
    start, count = copy.skip
    last = len(k.outer) - 1
    width = k.outer[last]
    point = _lets(copy.body) + [_store(k, kir.Store(store.buffer, store.index, store.value))]
    row = [
        f"const bool missed = {store.when};",
        f"const int64_t lo = missed ? {width} : {start};",
        f"const int64_t hi = missed ? {width} : {start} + {count};",
        "#pragma omp simd",
        f"for (int64_t i{last} = 0; i{last} < lo; i{last}++) {{",
        *_indent(point, 1),
        "}",
        "#pragma omp simd",
        f"for (int64_t i{last} = hi; i{last} < {width}; i{last}++) {{",
        *_indent(point, 1),
        "}",
    ]
    if not last:
        return ["{", *_indent(row, 1), "}"]
    return _loops(k.outer[:last], "i", row, parallel=True, simd=False, work=(width,))


def _render_scan(k: kir.Kernel) -> list:
    """Per line: a running fold along the scanned axis, stored at every step."""
    r = k.reduction
    step = "+=" if r.kind == "sum" else "*="
    line = [f"{r.acc_type} acc = {_INIT[r.kind]};",
            f"for (int64_t r0 = 0; r0 < {k.inner[0]}; r0++) {{",
            *_indent(_lets(k.body) + [f"acc {step} {r.value};", _store(k, r.out)], 1),
            "}"]  # fmt: skip
    if not k.outer:
        return ["{", *_indent(line, 1), "}"]
    return _loops(k.outer, "i", line, parallel=True, simd=False, work=k.inner)

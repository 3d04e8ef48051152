"""Render the kernel IR as source: one C-family renderer, a ``Dialect`` per backend.

For a map kernel over a 2-D iteration space the C99 + OpenMP dialect emits::

    #include "numloom.h"
    void k0_add(void **B, const int64_t *P, const char *K) {
        const double *restrict in0 = (const double *)B[0];
        double *restrict out0 = (double *)B[1];
        #pragma omp parallel for schedule(static) if (P[0] * P[1] > 131072)
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

import functools
import re
from dataclasses import replace
from pathlib import Path

from ..core import fperrors
from . import kir
from .cfamily import (
    _INIT,
    CUDA,
    KERNELS_INCLUDE,
    C,
    Dialect,  # noqa: F401  (the parts both dialects print alike)
    _all_text,
    _finish,
    _fold,
    _indent,
    _is_float,
    _lets,
    _start,
    _store,
    definitions,
)
from .sum_order import BUFSIZE

# Elements below which a kernel runs on one thread: waking OpenMP's (passively waiting) workers
# costs about 70 us, what one core takes for ~100k elements of arithmetic. Kernels calling
# vector math (several times the work per element) go parallel from PARALLEL_MIN_MATH.
PARALLEL_MIN = 131072
PARALLEL_MIN_MATH = 32768


@functools.cache
def _vector_math() -> re.Pattern:
    """Calls of the functions numloom.h declares for ``omp simd`` loops (NL_SIMD_MATH): glibc's
    vector math library, a few ulp from the C library's scalar ones, which NumPy calls too."""
    header = (Path(__file__).parent / "include" / "numloom.h").read_text()
    names = re.findall(r"(?<!define )NL_SIMD_MATH2?\((\w+)\)", header)
    return re.compile(r"\b(" + "|".join(sorted(set(names))) + r")f?\(")


def _threshold(n: str, lines: list) -> str:
    """The ``if`` clause of a ``parallel for simd`` loop over ``n`` points running ``lines``.

    A bare ``if`` applies to both constructs, so a small loop runs on one thread *without* its
    SIMD loop; ``if (parallel: ...)`` keeps the SIMD loop (small arithmetic kernels run about
    5x faster). Loops calling vector math keep the bare ``if``: their small arrays then get the
    scalar C library's results, as NumPy computes them.
    """
    if _vector_math().search("\n".join(lines)):
        return f"if ({n} > {PARALLEL_MIN_MATH})"
    return f"if (parallel: {n} > {PARALLEL_MIN})"




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


def _loops(
    extents: tuple,
    var: str,
    body: list,
    parallel: bool,
    simd,
    first: int = 0,
    work: tuple = (),
    clauses: str = "",
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
                           f"{PARALLEL_MIN}){clauses}")  # fmt: skip
        if k == len(extents) - 1 and simd and not (k == 0 and parallel):
            pragmas.append("#pragma omp simd" + ("" if simd is True else f" {simd}"))
        lines = pragmas + [head] + _indent(lines, 1) + ["}"]
    return lines




def render(k: kir.Kernel, dialect: Dialect = C) -> str:
    """The source text of kernel ``k`` in ``dialect``."""
    if isinstance(k, kir.UserKernel):
        from .render_user import render_user_kernel_c, render_user_kernel_cuda

        return render_user_kernel_cuda(k) if dialect is CUDA else render_user_kernel_c(k)
    if dialect is CUDA:
        from .render_cuda import render_cuda

        return render_cuda(k)
    body = [dialect.signature.format(name=k.name) + " {"]
    inner = _buffers(k, dialect) + _params(k) + _lets(k.prologue)
    if k.fp or k.fenv:  # the word of floating-point error flags, after the buffers
        inner.insert(len(k.buffers), f"int64_t *fpw = (int64_t *)B[{len(k.buffers)}];")
    render_kind = {"map": _render_map, "reduce": _render_reduce, "row": _render_row,
                   "scatter": _render_scatter, "scan": _render_scan}  # fmt: skip
    if k.fenv:  # the IEEE flags the kernel raises, in every thread (fperrors.py)
        inner += ["feclearexcept(NL_FE_ALL);", *_fenv_regions(render_kind[k.kind](k)),
                  "fpw[0] |= nl_fe_bits(fetestexcept(NL_FE_ALL));"]  # fmt: skip
    else:
        inner += render_kind[k.kind](k)
    text = "\n".join(body + _indent(inner, 1) + ["}"])
    functions = (
        "\n".join([KERNELS_INCLUDE, *definitions(k.functions, False)]) if k.functions else ""
    )
    return dialect.prelude + functions + re.sub(r"(?<!= )P\[(\d+)\]", r"p\1", text) + "\n"


_PARALLEL_FOR = re.compile(r"(\s*)#pragma omp parallel for( simd)?(.*)")
_PARALLEL = re.compile(r"(\s*)#pragma omp parallel\b(?! for)(.*)")


def _fenv_regions(lines: list) -> list:
    """``lines`` with each OpenMP parallel region bracketed by ``NL_FE_ENTER`` and
    ``NL_FE_LEAVE`` (numloom.h): a ``parallel for`` becomes a ``parallel`` region (its ``if``
    and ``num_threads``) around an ``omp for`` (the loop's own clauses)."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        m, p = _PARALLEL_FOR.fullmatch(line), _PARALLEL.fullmatch(line)
        if m:
            pad, simd, clauses = m[1], m[2] or "", _clauses(m[3])
            team = [c for c in clauses if c.startswith(("if", "num_threads"))]
            work = [c for c in clauses if c not in team]
            if simd:  # a bare ``if`` held the combined construct's SIMD loop too (_threshold)
                work += [f"if (simd: {c[c.index('(') + 1 : -1]})" for c in team
                         if c.startswith("if") and not c[2:].lstrip("( ").startswith("parallel:")]
            end = _block_end(lines, i + 1)
            out += [f"{pad}#pragma omp parallel {' '.join(team)}".rstrip(), pad + "{",
                    pad + "    NL_FE_ENTER", f"{pad}    #pragma omp for{simd} {' '.join(work)}",
                    *["    " + s for s in lines[i + 1 : end + 1]],
                    pad + "    NL_FE_LEAVE(fpw)", pad + "}"]  # fmt: skip
            i = end + 1
        elif p and lines[i + 1].strip() == "{":
            end = _block_end(lines, i + 1)
            out += [line, lines[i + 1], p[1] + "    NL_FE_ENTER", *lines[i + 2 : end],
                    p[1] + "    NL_FE_LEAVE(fpw)", lines[end]]  # fmt: skip
            i = end + 1
        else:
            out.append(line)
            i += 1
    return out


def _clauses(text: str) -> list:
    """The clauses of a pragma's text: ``schedule(static) if (n > 8)`` -> two strings."""
    out, i = [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and (text[j].isalnum() or text[j] == "_"):
            j += 1
        while j < len(text) and text[j] == " ":
            j += 1
        if j < len(text) and text[j] == "(":
            depth = 0
            for end in range(j, len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            j = end + 1
        out.append(text[i:j].strip())
        i = j
    return out


def _block_end(lines: list, first: int) -> int:
    """The index of the line closing the braces that line ``first`` opens."""
    depth = 0
    for j in range(first, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth == 0:
            return j
    raise ValueError("unbalanced braces in a generated kernel")


# A CPU map kernel's checks (lower.py's ``fp``): per-thread accumulators, and the flag bits
# each stands for (an integer division by 0, a cast of a NaN or an out-of-range value, a value
# a select chooses from that is not finite: any category, NumPy's rerun tells which).
_FP_ACC = {"int": "nl_fe_i", "cast": "nl_fe_c", "hidden": "nl_fe_h"}
_FP_BITS = {"int": fperrors.BITS["divide"], "cast": fperrors.BITS["invalid"],
            "hidden": fperrors.NOT_FINITE}  # fmt: skip


def _fp_checks(k: kir.Kernel) -> tuple:
    """``(before, per_point, clause, after)``: a kernel's checks (``k.fp``: integer checks and
    chosen values, fperrors.py) as accumulators declared before its loop, updated at each point,
    reduced across threads by ``clause`` and folded into the flag word after it (the IEEE flags
    stand for the other float errors)."""
    if not k.fp:
        return [], [], "", []
    used = sorted({check for check, _ in k.fp})
    before = [f"int {_FP_ACC[c]} = 0;" for c in used]
    per_point = [f"{_FP_ACC[c]} |= " + " | ".join(e for u, e in k.fp if u == c) + ";"
                 for c in used]  # fmt: skip
    clause = f" reduction(|:{', '.join(_FP_ACC[c] for c in used)})"
    test = " || ".join(_FP_ACC[c] for c in used)
    bits = " | ".join(f"({_FP_ACC[c]} ? {_FP_BITS[c]} : 0)" for c in used)
    return before, per_point, clause, [f"if ({test}) fpw[0] |= {bits};"]


def _render_map(k: kir.Kernel) -> list:
    point = _lets(k.body) + [_store(k, s) for s in k.stores]
    before, per_point, clause, after = _fp_checks(k)
    point += per_point
    if k.flat:
        (n,) = k.outer
        return (
            before
            + [
                f"#pragma omp parallel for simd schedule(static) {_threshold(n, point)}{clause}",
                f"for (int64_t i = 0; i < {n}; i++) {{",
                *_indent(point, 1),
                "}",
            ]
            + after
        )
    if not k.outer:
        return before + ["{", *_indent(point, 1), "}"] + after
    simd = clause.strip() or True
    return before + _loops(k.outer, "i", point, parallel=True, simd=simd, clauses=clause) + after


_SIMD_REDUCTION = {"sum": "+", "prod": "*", "any": "||", "all": "&&", "max": "max", "min": "min"}


def _fold_simd(r: kir.Reduction):
    """The simd clause letting a fold loop vectorize: sums may reorder (NumPy's pairwise sum
    reorders too); max and min fold NaN into a flag; arg reductions keep their order."""
    op = _SIMD_REDUCTION.get(r.kind)
    if op is None:
        return False
    nan = " reduction(||:nan)" if r.kind in ("max", "min") and _is_float(r) else ""
    return f"reduction({op}:acc){nan}"


def _render_reduce(k: kir.Kernel) -> list:
    r = k.reduction
    if r.numpy_order is not None:
        return _render_numpy_sum(k, r)
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


def _render_numpy_sum(k: kir.Kernel, r: kir.Reduction) -> list:
    """A float sum in NumPy's order, so that it gives NumPy's result bit for bit: per output
    point, the reduction axes before the run fold in turn, each adding the pairwise sum of
    the run (``_pairwise``). A full reduction splits its top levels among the threads."""
    run, ctype, group = _numpy_order(r)
    seq = len(k.inner) - run - group
    out_type = next(b.ctype for b in k.buffers if b.name == r.out.buffer)
    if not run and not group and len(k.outer) == 1 and out_type == ctype:
        return _numpy_sum_across(k, r)
    # (NumPy's float16 additions round to float16 at each one: the axes folded in turn too)
    add = "acc = nl_round_half(acc + {});" if out_type == "nl_half" else "acc += {};"
    if group:
        step = _buffered_sums(k, r, ctype, seq, add, parallel=not k.outer and not seq)
    elif run:
        total = " * ".join(k.inner[seq:])
        parallel = not k.outer and not seq
        step = _pairwise(k, r, ctype, k.inner[seq:], seq, total, parallel) + [add.format("pw")]
    else:
        step = _lets(k.body) + [add.format(f"({ctype})({r.value})")]
    folded = _loops(k.inner[:seq], "r", step, parallel=False, simd=False)
    body = [f"{ctype} acc = 0;", *folded, _store(k, r.out)]
    if k.outer:
        return _loops(k.outer, "i", body, parallel=True, simd=False, work=k.inner)
    return ["{", *_indent(body, 1), "}"]


def _numpy_order(r: kir.Reduction) -> tuple:
    """(run, C type, group) of ``r.numpy_order`` (group 0: not NumPy's buffers)."""
    return (*r.numpy_order[:2], r.numpy_order[2] if len(r.numpy_order) == 4 else 0)


def _buffered_sums(k: kir.Kernel, r: kir.Reduction, ctype: str, seq: int, add: str,
                   lets=None, stores=(), parallel: bool = False) -> list:  # fmt: skip
    """NumPy's buffers of a whole-array sum (``kir.Reduction.numpy_order``'s 4 fields), as
    NumPy takes them: the group's axes walked as one flat index, ``chunk`` of its positions
    times the run copied into a buffer of at most ``BUFSIZE`` values (the run's loops, no
    division an element), the buffer summed pairwise, the buffers' sums added to ``acc`` in
    turn. ``parallel``: the buffers are summed on the threads, then added in order."""
    run, _, group, chunk = r.numpy_order
    extents = k.inner[seq:]
    g_total = " * ".join(extents[:group])
    r_total = " * ".join(extents[group:]) or "1"
    lets = _lets(k.body) if lets is None else lets
    per_buffer = [
        "const int64_t pw_g = pw_b * pw_w;",
        f"const int64_t pw_m = pw_w < {g_total} - pw_g ? pw_w : {g_total} - pw_g;",
    ]
    if len(extents) == 1:  # (one axis: its range is summed where it lies, no copy)
        per_buffer += _pairwise(k, r, ctype, extents, seq, "pw_m", False, lets, stores,
                                start="pw_g")  # fmt: skip
    else:
        here = ["int64_t pw_q = pw_g + pw_c;"]
        for j in reversed(range(group)):  # (the group's coordinates, once a row of the run)
            here.append(f"const int64_t r{seq + j} = pw_q % {extents[j]};" if j else
                        f"const int64_t r{seq} = pw_q;")  # fmt: skip
            if j:
                here.append(f"pw_q /= {extents[j]};")
        fill = lets + [_store(k, st) for st in stores] + [
            f"pw_buf[pw_k++] = ({ctype})({r.value});"]  # fmt: skip
        free = len(k.inner)  # (the buffer's position: a loop index no axis uses)
        per_buffer += [
            f"{ctype} pw_buf[{BUFSIZE}]; int64_t pw_k = 0;",
            "for (int64_t pw_c = 0; pw_c < pw_m; pw_c++)",
            "{", *_indent(here + _loops(extents[group:], "r", fill, parallel=False, simd=False,
                                        first=seq + group), 1), "}",
            *_pairwise(k, replace(r, value=f"pw_buf[r{free}]"), ctype, ("pw_k",), free, "pw_k",
                       False, lets=[], stores=()),
        ]  # fmt: skip
    # (at most BUFSIZE values a buffer, whatever the arguments say)
    width = [f"const int64_t pw_w = {chunk} * ({r_total}) <= {BUFSIZE} ? {chunk} : "
             f"{BUFSIZE} / ({r_total});",
             f"const int64_t pw_nb = ({g_total} + pw_w - 1) / pw_w;"]  # fmt: skip
    if not parallel:
        return ["{", *_indent(width + ["for (int64_t pw_b = 0; pw_b < pw_nb; pw_b++) {",
                                       *_indent(per_buffer + [add.format("pw")], 1), "}"], 1),
                "}"]  # fmt: skip
    return ["{", *_indent(width + [
        f"{ctype} pw_sums[{SUMS_AT_ONCE}];",
        f"for (int64_t pw_b0 = 0; pw_b0 < pw_nb; pw_b0 += {SUMS_AT_ONCE}) {{",
        f"    const int64_t pw_b1 = pw_b0 + {SUMS_AT_ONCE} < pw_nb ? pw_b0 + {SUMS_AT_ONCE} : pw_nb;",
        f"    #pragma omp parallel for schedule(static) if ({g_total} * ({r_total}) > "
        f"{PARALLEL_MIN})",
        "    for (int64_t pw_b = pw_b0; pw_b < pw_b1; pw_b++) {",
        *_indent(per_buffer + ["pw_sums[pw_b - pw_b0] = pw;"], 2),
        "    }",
        "    for (int64_t pw_b = pw_b0; pw_b < pw_b1; pw_b++) {",
        f"        {add.format('pw_sums[pw_b - pw_b0]')}",
        "    }",
        "}",
    ], 1), "}"]  # fmt: skip


SUMS_AT_ONCE = 1024  # buffers summed on the threads before their sums are added in turn


def _numpy_sum_across(k: kir.Kernel, r: kir.Reduction) -> list:
    """A sum over axes before the last (``x.sum(axis=0)``), in NumPy's order and its way: each
    thread takes a block of outputs, zeroes them, then adds the reduced axes' values in turn,
    one contiguous sweep over the block each (the outputs are the accumulators)::

        for (ib...) { out0[i0] = 0 ...; for (r0...) { for (i0 in block) out0[i0] += in0[r0 * p2 + i0]; } }
    """
    n = k.outer[0]
    target = f"{r.out.buffer}[{r.out.index}]"
    sweep = _lets(k.body) + [f"{target} += {r.value};"]
    per_block = [
        f"const int64_t ie = ib + 512 < {n} ? ib + 512 : {n};",
        f"for (int64_t i0 = ib; i0 < ie; i0++) {target} = 0;",
        *_loops(k.inner, "r", ["#pragma omp simd", "for (int64_t i0 = ib; i0 < ie; i0++) {",
                                *_indent(sweep, 1), "}"], parallel=False, simd=False),
    ]  # fmt: skip
    total = " * ".join((n,) + tuple(k.inner))
    return [f"#pragma omp parallel for schedule(static) if ({total} > {PARALLEL_MIN})",
            f"for (int64_t ib = 0; ib < {n}; ib += 512) {{", *_indent(per_block, 1), "}"]  # fmt: skip


def _pairwise(k, r: kir.Reduction, ctype: str, extents: tuple, first: int, total: str,
              parallel: bool, lets=None, stores=(), start: str = "0") -> list:  # fmt: skip
    """Statements setting ``pw`` to NumPy's pairwise sum of ``r.value`` over the run of loops
    ``extents`` (indices r<first>...): a range of at most 128 elements folds into 8 partial
    sums (element j into sum j % 8) combined as ((0+1)+(2+3))+((4+5)+(6+7)), then its last
    n % 8 elements in turn; a longer range sums its halves (the first a multiple of 8 long)
    and adds them. The recursion runs on a small stack; ``parallel`` sums the top 15 ranges'
    leaves on the threads first. ``start``: the flat position of the range's first element."""
    lets = _lets(k.body) if lets is None else lets
    element = lets + [_store(k, st) for st in stores]

    def at(position: str, into: str) -> list:
        if len(extents) == 1:
            index = [f"const int64_t r{first} = {position};"]
        else:  # the run's indices from its flat position, last axis fastest
            index, rest = [f"int64_t pw_q = {position};"], "pw_q"
            for j in reversed(range(len(extents))):
                index.append(f"const int64_t r{first + j} = {rest} % {extents[j]};")
                if j:
                    index.append(f"{rest} /= {extents[j]};")
        return ["{", *_indent(index + element + [f"{into} += ({ctype})({r.value});"], 1), "}"]

    # (vector math from glibc is a few ulp from the C library's scalar functions, whose
    # results NumPy's match: a small sum calls the scalar ones, as a small map kernel does)
    math = _vector_math().search("\n".join(element + [r.value]))
    leaf = [
        f"{ctype} pw_r[8] = {{0, 0, 0, 0, 0, 0, 0, 0}};",
        "const int64_t pw_L = pw_lo[pw_d], pw_M = pw_n[pw_d], pw_M8 = pw_M - pw_M % 8;",
        "for (int64_t pw_i = 0; pw_i < pw_M8; pw_i += 8) {",
        f"    #pragma omp simd if(simd: {total} > {PARALLEL_MIN_MATH})" if math else
        "    #pragma omp simd",
        "    for (int pw_j = 0; pw_j < 8; pw_j++) {",
        *_indent(at("pw_L + pw_i + pw_j", "pw_r[pw_j]"), 2),
        "    }",
        "}",
        "pw_ret = ((pw_r[0] + pw_r[1]) + (pw_r[2] + pw_r[3])) + "
        "((pw_r[4] + pw_r[5]) + (pw_r[6] + pw_r[7]));",
        "for (int64_t pw_i = pw_M8; pw_i < pw_M; pw_i++) {",
        *_indent(at("pw_L + pw_i", "pw_ret"), 1),
        "}",
    ]

    def driver(start: str, count: str, into: str) -> list:
        return [
            "{",
            f"    int64_t pw_lo[64], pw_n[64]; {ctype} pw_left[64]; char pw_side[64];",
            f"    int pw_d = 0; pw_lo[0] = {start}; pw_n[0] = {count}; pw_side[0] = 0;",
            "    for (;;) {",
            "        while (pw_n[pw_d] > 128) {",
            "            int64_t pw_h = pw_n[pw_d] / 2;",
            "            pw_h -= pw_h % 8;",
            "            pw_lo[pw_d + 1] = pw_lo[pw_d]; pw_n[pw_d + 1] = pw_h;",
            "            pw_side[pw_d + 1] = 0; pw_d++;",
            "        }",
            f"        {ctype} pw_ret;",
            "        {",
            *_indent(leaf, 3),
            "        }",
            "        while (pw_d > 0 && pw_side[pw_d]) { pw_d--; pw_ret = pw_left[pw_d] + pw_ret; }",
            f"        if (pw_d == 0) {{ {into} = pw_ret; break; }}",
            "        pw_left[pw_d - 1] = pw_ret;",
            "        pw_lo[pw_d] += pw_n[pw_d]; pw_n[pw_d] = pw_n[pw_d - 1] - pw_n[pw_d];",
            "        pw_side[pw_d] = 1;",
            "    }",
            "}",
        ]

    if not parallel:
        return [f"{ctype} pw;", *driver(start, total, "pw")]
    return [
        f"{ctype} pw, pw_top[15]; int64_t pw_tlo[15], pw_tn[15];",
        f"pw_tlo[0] = {start}; pw_tn[0] = {total};",
        "for (int pw_t = 0; pw_t < 7; pw_t++) {  /* the top three levels' ranges */",
        "    int64_t pw_h = pw_tn[pw_t] > 128 ? pw_tn[pw_t] / 2 - pw_tn[pw_t] / 2 % 8 : -1;",
        "    pw_tlo[2 * pw_t + 1] = pw_tlo[pw_t]; pw_tn[2 * pw_t + 1] = pw_h;",
        "    pw_tlo[2 * pw_t + 2] = pw_tlo[pw_t] + pw_h;",
        "    pw_tn[2 * pw_t + 2] = pw_h < 0 ? -1 : pw_tn[pw_t] - pw_h;",
        "}",
        f"#pragma omp parallel for schedule(dynamic, 1) if ({total} > {PARALLEL_MIN})",
        "for (int pw_t = 0; pw_t < 15; pw_t++) {",
        "    if (pw_tn[pw_t] < 0 || (pw_t < 7 && pw_tn[2 * pw_t + 1] >= 0)) continue;",
        *_indent(driver("pw_tlo[pw_t]", "pw_tn[pw_t]", "pw_top[pw_t]"), 1),
        "}",
        "for (int pw_t = 6; pw_t >= 0; pw_t--) {",
        "    if (pw_tn[pw_t] >= 0 && pw_tn[2 * pw_t + 1] >= 0) "
        "pw_top[pw_t] = pw_top[2 * pw_t + 1] + pw_top[2 * pw_t + 2];",
        "}",
        "pw = pw_top[0];",
    ]


def _render_row(k: kir.Kernel) -> list:
    """Per row: each phase's pass over the row's inner axes, then the per-row outputs."""
    per_row = []
    for phase in _stash_row_values(k):
        passes = _lets(phase.body)
        r = phase.reduction
        if r is None:
            per_row += _loops(k.inner, "r", passes + [_store(k, s) for s in phase.stores],
                              parallel=False, simd=True)  # fmt: skip
            continue
        if r.numpy_order is not None:
            per_row += _numpy_sum_row(k, phase)
            continue
        point = passes + _fold(r, "acc", "arg", r.value, r.index)
        folded = _loops(k.inner, "r", point + [_store(k, s) for s in phase.stores],
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


def _numpy_sum_row(k: kir.Kernel, phase: kir.Phase) -> list:
    """A row kernel's pass folding a float sum in NumPy's order (``_render_numpy_sum``)."""
    r = phase.reduction
    run, ctype, group = _numpy_order(r)
    seq = len(k.inner) - run - group
    lets = _lets(phase.body)
    if group:
        step = _buffered_sums(k, r, ctype, seq, "acc += {};", lets, phase.stores)
    elif run:
        step = _pairwise(k, r, ctype, k.inner[seq:], seq, " * ".join(k.inner[seq:]), False,
                         lets, phase.stores) + ["acc += pw;"]  # fmt: skip
    else:
        step = lets + [_store(k, s) for s in phase.stores] + [f"acc += ({ctype})({r.value});"]
    folded = _loops(k.inner[:seq], "r", step, parallel=False, simd=False)
    return [f"{r.acc_type} {r.out.buffer};", "{",
            *_indent([f"{ctype} acc = 0;", *folded, f"{r.out.buffer} = acc;"], 1), "}"]  # fmt: skip


_LET_NAME = re.compile(r"\bt\d+\b")
_CALL = re.compile(r"\b[A-Za-z_]\w*\(")  # a function call: worth computing once


def _stash_row_values(k: kir.Kernel) -> tuple:
    """A value the output pass would compute again, after a reduction pass computed it for its
    fold (softmax's ``exp(x - max)``, summed, then divided by the sum), is stored in the
    output by the reduction pass and read back by the output pass, which then overwrites it
    with its result: each exp is computed once, and the row is still in cache. Values are
    matched by their expression with every name spelled out, so they are the same value::

        fold pass:    const double t4 = exp(t3); acc += t4; out0[i0 * p3 + r0] = t4;
        output pass:  const double t7 = out0[i0 * p3 + r0]; out0[...] = t7 / row1;
    """
    phases = k.phases
    *folds, last = phases
    if not folds or last.reduction is not None or not last.stores:
        return phases
    spelled, earlier = {}, {}
    for j, phase in enumerate(folds):
        for let in phase.body:
            spelled[let.name] = _spell(let.expr, spelled)
            earlier.setdefault(spelled[let.name], (j, let))
    store = last.stores[0]
    kept = next(b.ctype for b in k.buffers if b.name == store.buffer)  # stored exactly
    match = None
    for let in last.body:
        spelled[let.name] = _spell(let.expr, spelled)
        found = earlier.get(spelled[let.name])
        if found is not None and _CALL.search(let.expr) and found[1].ctype == let.ctype == kept:
            match = (found, let)
    if match is None or store.when is not None:
        return phases
    (j, first), again = match
    stash = kir.Store(store.buffer, store.index, first.name)
    body = tuple(kir.Let(x.name, x.ctype, f"{store.buffer}[{store.index}]") if x is again else x
                 for x in last.body)  # fmt: skip
    folds[j] = replace(folds[j], stores=folds[j].stores + (stash,))
    return (*folds, replace(last, body=body))


def _spell(expr: str, spelled: dict) -> str:
    return _LET_NAME.sub(lambda m: f"({spelled[m[0]]})" if m[0] in spelled else m[0], expr)


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
            f"#pragma omp parallel for simd schedule(static) {_threshold(n, copied)}",
            f"for (int64_t i = 0; i < {n}; i++) {{",
            *_indent(copied, 1),
            "}",
        ]
    else:
        lines = _loops(k.outer, "i", copied, parallel=True, simd=True)
    if k.inplace is not None:  # (the old version's buffer as the output: nothing to copy)
        held = next(j for j, b in enumerate(k.buffers) if b.name == k.inplace)
        out = next(j for j, b in enumerate(k.buffers) if b.output)
        lines = [f"if (B[{held}] != B[{out}]) {{", *_indent(lines, 1), "}"]
    point = _lets(write.body) + [_store(k, s) for s in write.stores]
    before, per_point, clause, after = _fp_checks(k)  # (the new values' casts: NaN into ints)
    point += per_point
    if not k.inner:
        return lines + before + ["{", *_indent(point, 1), "}"] + after
    if k.last_wins:  # positions may repeat: written in order, as NumPy writes them
        return lines + before + _loops(k.inner, "r", point, parallel=False, simd=False) + after
    simd = clause.strip() or True
    return (lines + before + _loops(k.inner, "r", point, parallel=True, simd=simd, clauses=clause)
            + after)  # fmt: skip


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

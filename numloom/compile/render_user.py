"""Kernels written in Python (``numloom.cuda.jit``, compiled ``numloom.vectorize``) in both
dialects: CUDA C++ runs them as written, a block of threads per CUDA block; C runs a block's threads
one after another, split into phases at barriers (``phases.py``)."""

from __future__ import annotations

from . import kir
from .cfamily import (
    C,  # noqa: F401  (the parts both dialects print alike)
    _derived_strides,
    _indent,
    _size_name,
    arguments,
    declare,
    definitions,
    statements,
)

# Elements below which a kernel runs on one thread: waking OpenMP's (passively waiting) workers
# costs about 70 us, what one core takes for ~100k elements of arithmetic. Kernels calling
# vector math (several times the work per element) go parallel from PARALLEL_MIN_MATH.
PARALLEL_MIN = 131072
PARALLEL_MIN_MATH = 32768


def render_user_kernel_c(k: kir.UserKernel) -> str:
    """The C + OpenMP source of a kernel written in Python: blocks run in parallel, each
    block's threads one after another, split into phases at barriers (``phases.py``)::

        void NAME(void **B, const int64_t *P, const char *K) {
            float *v_x = (float *)B[0];  const int64_t v_x_n0 = P[7]; ...
            #pragma omp parallel for schedule(dynamic) if (nl_blocks > 1)
            for (int64_t nl_b = 0; nl_b < nl_blocks; nl_b++) {
                nl_ctx nl_cb = ...;                       // blockIdx, blockDim, gridDim
                float s_12_4[1056];                       // shared arrays
                for (tz) for (ty) for (tx) {              // one loop per phase
                    nl_ctx nl_c = nl_cb; nl_c.tx = nl_tx; ...
                    <the Python statements>
                }
            }
        }
    """
    from . import phases

    args = arguments(k)
    # No const and no restrict: two arguments may be views of one array.
    head = [f"{p.ctype} *{p.name} = ({p.ctype} *)B[{j}];" for j, p in enumerate(_arrays(k))]
    head.append(f"int64_t *nl_err = (int64_t *)B[{len(_arrays(k))}];")
    head += [f"const int64_t {_size_name(k, e)} = P[{i}];" for i, e in enumerate(args.sizes)]
    head += _derived_strides(k)
    head += [f"const {c} {k.params[j].name} = *(const {c} *)(K + {off});"
             for j, c, off in args.scalars]  # fmt: skip
    head += ["const int64_t nl_threads = nl_bdx * nl_bdy * nl_bdz;",
             "const int64_t nl_blocks = nl_gdx * nl_gdy * nl_gdz;"]  # fmt: skip
    items, arrays, barriers = phases.split(k)
    keep = phases.per_thread(items, k.locals)
    block = _block_start(k, arrays, keep, barriers)
    block += _block_items(k, items, keep)
    loop = [
        "#pragma omp parallel for schedule(dynamic) if (nl_blocks > 1)",
        "for (int64_t nl_b = 0; nl_b < nl_blocks; nl_b++) {",
        *_indent(block, 1),
        "}",
    ]
    text = "\n".join([f"void {k.name}(void **B, const int64_t *P, const char *K) {{",
                      *_indent(head + loop, 1), "}"])  # fmt: skip
    prelude = C.prelude.replace('"numloom.h"', '"numloom_kernels.h"')
    return prelude + "\n".join(definitions(k.functions, False)) + text + "\n"


def _arrays(k: kir.UserKernel) -> list:
    return [p for p in k.params if p.ndim is not None]


def _block_start(k: kir.UserKernel, arrays, keep: set, barriers: bool) -> list:
    lines = ["nl_ctx nl_cb;",
             "nl_cb.bx = nl_b % nl_gdx; nl_cb.by = (nl_b / nl_gdx) % nl_gdy; "
             "nl_cb.bz = nl_b / (nl_gdx * nl_gdy);",
             "nl_cb.bdx = nl_bdx; nl_cb.bdy = nl_bdy; nl_cb.bdz = nl_bdz;",
             "nl_cb.gdx = nl_gdx; nl_cb.gdy = nl_gdy; nl_cb.gdz = nl_gdz;",
             "nl_cb.tx = 0; nl_cb.ty = 0; nl_cb.tz = 0; nl_cb.err = nl_err;"]  # fmt: skip
    dynamic = [v for v in k.locals if v.space == "shared" and v.size == 0]
    if dynamic:
        lines.append("unsigned char nl_dynamic[nl_dyn_bytes + 16] __attribute__((aligned(16)));")
    for v in k.locals:
        if v.space == "shared":
            lines.append(f"{v.ctype} *{v.name} = ({v.ctype} *)nl_dynamic;" if v.size == 0
                         else f"{v.ctype} {v.name}[{max(v.size, 1)}];")  # fmt: skip
        elif v.name in keep:
            dims = f"[nl_threads][{v.size}]" if v.size is not None else "[nl_threads]"
            lines.append(f"{v.ctype} pt_{v.name}{dims};")
    lines += [f"{a.ctype} {a.name}[nl_threads];" for a in arrays]
    if barriers:
        lines.append("for (int64_t nl_t = 0; nl_t < nl_threads; nl_t++) nl_alive[nl_t] = 1;")
    return lines


def _block_items(k: kir.UserKernel, items, keep: set) -> list:
    from . import phases

    out = []
    for item in items:
        if isinstance(item, phases.Phase):
            out += _thread_loop(k, item, keep)
            continue
        head = ["int nl_any = 0;"]
        for p in item.head:
            head += _thread_loop(k, p, keep)
        out += ["for (;;) {", *_indent(head + ["if (!nl_any) break;"]
                                      + _block_items(k, item.body, keep), 1), "}"]  # fmt: skip
    return out


def _thread_loop(k: kir.UserKernel, phase, keep: set) -> list:
    """One phase: a loop over the block's threads (the x loop a vector loop when nothing in
    it orders threads), each thread's kept locals loaded at the start and saved at the end."""
    from . import phases

    lines = dict(k.lines)
    thread_locals = [v for v in k.locals if v.space == "thread"]
    names = phases._names(repr(phase.stmts) + phase.guard, {v.name for v in thread_locals})
    decls, saves = [], []
    for v in thread_locals:
        if v.name not in names:
            continue
        if v.name in keep and v.size is not None:
            decls.append(f"{v.ctype} *{v.name} = pt_{v.name}[nl_t];")
        elif v.name in keep:
            decls.append(f"{v.ctype} {v.name} = pt_{v.name}[nl_t];")
            saves.append(f"pt_{v.name}[nl_t] = {v.name};")
        else:
            decls.append(declare(v))
    body = [
        "const int64_t nl_t = (nl_tz * nl_bdy + nl_ty) * nl_bdx + nl_tx;",
        "nl_ctx nl_c = nl_cb;",
        "nl_c.tx = nl_tx; nl_c.ty = nl_ty; nl_c.tz = nl_tz;",
    ]
    if phase.guard:
        body.append(f"if (!({phase.guard})) continue;")
    body += decls + statements(phase.stmts, lines, False)
    text = repr(phase.stmts)
    if "goto nl_end" in text:
        body = [b.replace("goto nl_end;", f"goto nl_end{phase.index};") for b in body]
        body += [f"nl_end{phase.index}:;"]
    body += saves
    simd = phase.simd and not _calls_atomics(k, text)
    return [
        "for (int64_t nl_tz = 0; nl_tz < nl_bdz; nl_tz++)",
        "for (int64_t nl_ty = 0; nl_ty < nl_bdy; nl_ty++)",
        *(["#pragma omp simd"] if simd else []),
        "for (int64_t nl_tx = 0; nl_tx < nl_bdx; nl_tx++) {",
        *_indent(body, 1),
        "}",
    ]


def _calls_atomics(k: kir.UserKernel, text: str) -> bool:
    """Whether a phase calls a device function that uses atomics (they order threads)."""
    for f in k.functions:
        if isinstance(f, kir.Function) and f.name in text and "atomic" in repr(f.body):
            return True
    return False


def user_kernel_signature(k: kir.UserKernel) -> list:
    """The CUDA arguments of a user kernel, in order: ``(C declaration, source)`` where source
    is ("ptr", param), ("size", entry of ``render.arguments``), ("scalar", param, part) or
    ("err",). Grid and block sizes come from CUDA's own variables; scalars arrive by value
    (bools as int32, complex numbers as two parts)."""
    from .cfamily import _size_name, arguments

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
    from .cfamily import _derived_strides, declare, definitions, statements

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

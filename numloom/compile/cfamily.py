"""The C family's shared parts: what the C dialect (``render.py``) and the CUDA dialect
(``render_cuda.py``) print alike: lets, stores, a reduction's start, fold and finish,
floating-point checks, and the statements, declarations and arguments of kernels written in
Python."""

from __future__ import annotations

from dataclasses import dataclass

from . import kir


def _indent(lines: list, depth: int) -> list:
    return ["    " * depth + line for line in lines]


def _all_text(k: kir.Kernel) -> str:
    parts = [str(k)] + [repr(p) for p in k.phases] + [repr(s) for s in k.row_stores]
    return "\n".join(parts)


def _lets(lets) -> list:
    return [f"const {s.ctype} {s.name} = {s.expr};" for s in lets]


def _store(k: kir.Kernel, s: kir.Store) -> str:
    ctype = next(b.ctype for b in k.buffers if b.name == s.buffer)
    value = s.value if ctype.startswith("nl_complex") else f"({ctype})({s.value})"
    store = f"{s.buffer}[{s.index}] = {value};"
    return f"if ({s.when}) {store}" if s.when else store


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


def _is_float(r: kir.Reduction) -> bool:
    return r.acc_type in ("float", "double")


def _start(r: kir.Reduction) -> list:
    return [f"{r.acc_type} acc = {_init(r)};", "int64_t arg = -1;", "bool nan = false;"]


def _finish(r: kir.Reduction) -> list:
    """After a fold: a NaN seen by max or min is the result."""
    if r.kind in ("max", "min") and _is_float(r):
        return ["if (nan) acc = NAN;"]
    return []


KERNELS_INCLUDE = '#include "numloom_kernels.h"'


def _comment(line: int, lines: dict) -> list:
    """The Python line a statement comes from, as a comment beside the C it became."""
    text = lines.get(line)
    if not text:
        return []
    # A trailing backslash would continue the comment; ?? could start a trigraph.
    text = text.rstrip("\\").replace("??", "? ?")
    return [f"// {line}: {text}"]


def statements(stmts, lines: dict, cuda: bool, last: list | None = None) -> list:
    """C (or CUDA C++) lines of structured statements, each Python line as a comment."""
    last = [None] if last is None else last
    out = []
    for s in stmts:
        line = getattr(s, "line", 0)
        if line and line != last[0]:
            out += _comment(line, lines)
            last[0] = line
        out += _statement(s, lines, cuda, last)
    return out


def _statement(s, lines: dict, cuda: bool, last: list) -> list:
    body = lambda stmts: _indent(statements(stmts, lines, cuda, last), 1)  # noqa: E731
    if isinstance(s, kir.Assign):
        return [f"{s.target} = {s.value};"]
    if isinstance(s, kir.Do):
        return [f"{s.expr};"]
    if isinstance(s, kir.If):
        if s.cond == "1" and not s.orelse:
            return ["{", *body(s.then), "}"]
        out = [f"if ({s.cond}) {{", *body(s.then)]
        return out + (["} else {", *body(s.orelse), "}"] if s.orelse else ["}"])
    if isinstance(s, kir.While):
        return [f"while ({s.cond}) {{", *body(s.body), "}"]
    if isinstance(s, kir.For):
        cond = {1: f"{s.var} < {s.stop}", -1: f"{s.var} > {s.stop}"}.get(
            s.sign, f"({s.step} > 0 ? {s.var} < {s.stop} : {s.var} > {s.stop})"
        )
        head = f"for ({s.var} = {s.start}; {cond}; {s.var} += {s.step}) {{"
        return [head, *body(s.body), "}"]
    if isinstance(s, kir.Break):
        return ["break;"]
    if isinstance(s, kir.Continue):
        return ["continue;"]
    if isinstance(s, kir.Return):
        return ["return;" if s.value is None else f"return {s.value};"]
    if isinstance(s, kir.Barrier) and cuda:
        return ["__syncthreads();" if s.kind == "block" else f"__syncwarp({s.mask});"]
    if isinstance(s, kir.Shuffle) and cuda:
        fn = {"idx": "__shfl_sync", "up": "__shfl_up_sync", "down": "__shfl_down_sync",
              "xor": "__shfl_xor_sync"}[s.kind]  # fmt: skip
        lane = s.lane if s.kind != "idx" else f"(int)({s.lane})"
        return [f"{s.target} = {fn}({s.mask}, {s.value}, (int)({lane}));"]
    raise ValueError(f"{type(s).__name__} cannot be rendered here")


def declare(v: kir.Local) -> str:
    """A local's declaration: scalars start at zero (a Python variable is always assigned
    before it is read, but C cannot prove it on every path)."""
    if v.size is not None:
        return f"{v.ctype} {v.name}[{max(v.size, 1)}];"
    if v.ctype.endswith("*") or v.ctype.startswith("nl_"):
        return f"{v.ctype} {v.name};"
    return f"{v.ctype} {v.name} = 0;"


def definitions(items, cuda: bool) -> list:
    """Structs and device functions, each once per program however many kernels use it."""
    out = []
    for item in items:
        out += [f"#ifndef NL_DEF_{item.name}", f"#define NL_DEF_{item.name}"]
        if isinstance(item, kir.Table):
            out.append(f"NL_TABLE {item.ctype} {item.name}[{max(len(item.values), 1)}] = "
                       f"{{{', '.join(item.values) or '0'}}};")  # fmt: skip
        elif isinstance(item, kir.Struct):
            fields = " ".join(f"{c} {f};" for c, f in item.fields)
            params = ", ".join(f"{c} {f}" for c, f in item.fields)
            sets = " ".join(f"r.{f} = {f};" for _, f in item.fields)
            out += [f"typedef struct {{ {fields} }} {item.name};",
                    f"NL_FN {item.name} {item.name}_make({params}) {{ {item.name} r; {sets} "
                    "return r; }"]  # fmt: skip
        else:
            params = ", ".join(f"{c} {n}" for c, n in item.params) or "void"
            body = [declare(v) for v in item.locals]
            body += statements(item.body, dict(item.lines), cuda)
            out += [f"NL_FN {item.ret} {item.name}({params}) {{", *_indent(body, 1), "}"]
        out += ["#endif", ""]
    return out


@dataclass(frozen=True)
class Arguments:
    """How a user kernel's arguments are passed. ``sizes`` are the int64 values (``P`` on the
    CPU, by-value arguments on the GPU): ("launch", i) for grid, block and dynamic shared
    bytes, ("shape", param, axis) and ("stride", param, axis) of each array. ``scalars`` are
    (param index, ctype, offset in the constant block ``K``)."""

    sizes: tuple
    scalars: tuple
    block: int


LAUNCH = ("gdx", "gdy", "gdz", "bdx", "bdy", "bdz", "dyn_bytes")


def arguments(k: kir.UserKernel) -> Arguments:
    sizes = [("launch", i) for i in range(len(LAUNCH))]
    scalars, offset = [], 0
    for j, p in enumerate(k.params):
        if p.ndim is None:
            size = _SCALAR_SIZE.get(p.ctype, 8)
            align = min(size, 8)
            offset = -(-offset // align) * align
            scalars.append((j, p.ctype, offset))
            offset += size
            continue
        sizes += [("shape", j, d) for d in range(p.ndim)]
        if not p.contiguous:
            sizes += [("stride", j, d) for d in range(p.ndim)]
    return Arguments(tuple(sizes), tuple(scalars), max(8, -(-offset // 8) * 8))


_SCALAR_SIZE = {"bool": 1, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
                "int32_t": 4, "uint32_t": 4, "float": 4, "nl_complex64": 8,
                "nl_complex128": 16}  # fmt: skip


def _size_name(k: kir.UserKernel, entry: tuple) -> str:
    if entry[0] == "launch":
        return f"nl_{LAUNCH[entry[1]]}"
    kind, j, d = entry
    return f"{k.params[j].name}_{'n' if kind == 'shape' else 's'}{d}"


def _derived_strides(k: kir.UserKernel) -> list:
    """C-contiguous arrays take no strides: the last is 1, each other the next's times its
    size (constants the C compiler folds into the indexing)."""
    out = []
    for p in k.params:
        if p.ndim is None or not p.contiguous:
            continue
        for d in reversed(range(p.ndim)):
            value = "1" if d == p.ndim - 1 else f"{p.name}_s{d + 1} * {p.name}_n{d + 1}"
            out.append(f"const int64_t {p.name}_s{d} = {value};")
    return out


# --- the dialects -----------------------------------------------------------------------------


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


CUDA = Dialect(name="cuda", prelude='#include "numloom.h"\n', signature="", restrict="__restrict__")

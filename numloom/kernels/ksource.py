"""The source of a function written in Python: its syntax tree (from its file, found again
for every function of that file) and the names it can see."""

from __future__ import annotations

import ast
import builtins
import functools
import linecache
import os

from .kerrors import UnsupportedError

# --- the function's source ------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _module_ast(filename: str, mtime: float):
    text = "".join(linecache.getlines(filename))
    return ast.parse(text, filename) if text else None


def function_ast(fn) -> tuple:
    """``(filename, node)``: the ``def`` or ``lambda`` of ``fn`` in its file's syntax tree (so
    positions are the file's own lines and columns)."""
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)
    try:
        mtime = os.path.getmtime(filename)
    except OSError:
        mtime = 0.0
    tree = _module_ast(filename, mtime)
    if tree is None:
        raise UnsupportedError(
            f"numloom cannot read the source of {fn.__qualname__} (defined in {filename})",
            None, "define kernels and vectorized functions in a .py file or a notebook cell",
        )  # fmt: skip
    candidates = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            name = getattr(node, "name", "<lambda>")
            args = _arg_names(node) == code.co_varnames[: code.co_argcount]
            if first == code.co_firstlineno and name == code.co_name and args:
                candidates.append(node)
    if len(candidates) > 1:  # lambdas on one line: the one whose bytecode is fn's
        candidates = [n for n in candidates if _same_code(n, code)] or candidates
    if not candidates:
        raise UnsupportedError(f"numloom cannot find the source of {fn.__qualname__} in {filename}")
    return filename, candidates[0]


def _same_code(node, code) -> bool:
    if not isinstance(node, ast.Lambda):
        return False
    compiled = compile(ast.Expression(node), code.co_filename, "eval")
    inner = next((c for c in compiled.co_consts if hasattr(c, "co_code")), None)
    return inner is not None and inner.co_code == code.co_code


def _arg_names(node) -> tuple:
    return tuple(a.arg for a in node.args.args)


def environment(fn) -> dict:
    """What names a function's body can see: its globals, then its closure, then builtins."""
    env = dict(vars(builtins))
    env.update(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env

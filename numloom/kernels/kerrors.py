"""Errors about kernels written in Python, pointing at the user's line with a caret::

numloom.cuda.jit: unsupported construct in kernel add_kernel: a list comprehension
  File "/home/me/prog.py", line 12, column 11
    out = [v for v in x]
          ^^^^^^^^^^^^^^
numloom kernels take scalars, arrays and tuples: write the loop as `for i in range(...)`
"""

from __future__ import annotations

import ast
import linecache
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Where:
    """A place in the user's source: 1-based line, 0-based columns."""

    filename: str
    line: int
    col: int = 0
    end_col: int | None = None

    def show(self) -> str:
        text = linecache.getline(self.filename, self.line).rstrip("\n")
        head = f'  File "{self.filename}", line {self.line}, column {self.col + 1}'
        if not text.strip():
            return head
        indent = len(text) - len(text.lstrip())
        end = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
        caret = " " * (self.col - indent) + "^" * (end - self.col)
        return f"{head}\n    {text.strip()}\n    {caret}"


class KernelError(Exception):
    """A kernel or vectorized function numloom cannot compile, or a launch it cannot run."""

    def __init__(self, what: str, where: Where | None = None, hint: str = ""):
        self.what, self.where, self.hint = what, where, hint
        lines = [what]
        if where is not None:
            lines.append(where.show())
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


class UnsupportedError(KernelError, NotImplementedError):
    """A construct outside the Python subset kernels are written in."""


class TypingError(KernelError, TypeError):
    """Values whose types do not work together (a variable with two types, a bad call)."""


class LaunchError(KernelError, ValueError):
    """An invalid launch configuration (grid and block shapes)."""


class ArgumentError(KernelError, TypeError):
    """Kernel arguments of the wrong number or type."""


def node_where(filename: str, node: ast.AST) -> Where:
    return Where(filename, getattr(node, "lineno", 1), getattr(node, "col_offset", 0),
                 getattr(node, "end_col_offset", None)
                 if getattr(node, "end_lineno", None) == getattr(node, "lineno", None)
                 else None)  # fmt: skip


def caller_where(depth: int = 2) -> Where | None:
    """The user's call that led here: the first frame outside numloom, with the call's columns
    (Python 3.11's instruction positions)."""
    frame = sys._getframe(depth)
    package = __name__.split(".")[0]  # (numloom)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(package):
        frame = frame.f_back
    if frame is None:
        return None
    code, line, col, end = frame.f_code, frame.f_lineno, 0, None
    positions = getattr(code, "co_positions", None)
    if positions is not None:
        entries = list(positions())
        index = frame.f_lasti // 2
        if 0 <= index < len(entries):
            start_line, end_line, start_col, end_col = entries[index]
            if start_line == line and start_col is not None:
                col, end = start_col, end_col if end_line == line else None
    return Where(code.co_filename, line, col, end)


def caller_line() -> Where | None:
    """The user's file and line (no columns: cheap enough for every launch)."""
    frame = sys._getframe(2)
    package = __name__.split(".")[0]  # (numloom)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(package):
        frame = frame.f_back
    return None if frame is None else Where(frame.f_code.co_filename, frame.f_lineno)

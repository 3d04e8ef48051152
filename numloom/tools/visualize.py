"""``numloom.visualize``: the pending plan drawn with graphviz (the ``[viz]`` extra).

Each kernel is a cluster holding its operations, labelled with its kind and the reason it is a
kernel of its own; the buffers it reads are boxes outside the clusters; an edge is a value one
operation reads from another. Library calls (BLAS, cuBLAS) are shaded, kernels that run
through NumPy node by node are dashed, and the arrays the plan returns are double-bordered.
``numloom.explain`` prints the same plan as text.
"""

from __future__ import annotations

from ..core.dag import Op
from .explain import explain

_INSTALL = ("numloom.visualize draws with graphviz: pip install 'numloom[viz]' (and Graphviz's "
            "'dot' program to render images); numloom.explain(...) prints the same plan as "
            "text")  # fmt: skip


def visualize(*arrays, filename: str | None = None, target: str | None = None):
    """The plan evaluating ``arrays`` (default: everything pending) as a ``graphviz.Digraph``.

    In Jupyter it displays inline. ``filename`` writes it too: the DOT source for ``.dot`` or
    ``.gv``, else an image in the suffix's format (``.svg``, ``.png``, ``.pdf``), which needs
    Graphviz's ``dot`` program. Nothing is evaluated.
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError(_INSTALL) from None
    plan = explain(*arrays, target=target)
    graph = graphviz.Digraph("numloom", graph_attr={"rankdir": "TB", "fontname": "Helvetica",
                                                     "label": f"plan on {plan.device}: "
                                                     f"{len(plan.kernels)} kernel(s)"},
                             node_attr={"fontname": "Helvetica", "fontsize": "10"})  # fmt: skip
    producer = {id(o): i for i, k in enumerate(plan.kernels) for o in k.outputs}
    roots = {id(r) for r in plan.outputs}
    buffers: dict = {}
    for i, k in enumerate(plan.kernels):
        members = {id(n) for n in k.nodes}
        library = k.kind == "library"
        through_numpy = not library and k.kind != "kernel" and k.source is None
        style = "filled" if library else ("dashed" if through_numpy else "solid")
        note = " (library call)" if library else (" (runs through NumPy)" if through_numpy
                                                    else "")  # fmt: skip
        with graph.subgraph(name=f"cluster_{i}") as cluster:
            cluster.attr(label=f"{k.name} [{k.kind}]{note}\n{_wrap(k.reason)}", style=style,
                         fillcolor="lightblue", color="gray40", fontsize="10")  # fmt: skip
            for n in k.nodes:
                if n.op is Op.CONST:
                    continue
                peripheries = "2" if id(n) in roots else "1"
                cluster.node(f"k{i}_{id(n)}", _label(n), shape="ellipse", peripheries=peripheries)
        for n in k.nodes:
            if n.op is Op.CONST:
                continue
            for s in n.srcs:
                if s.op is Op.CONST:
                    continue
                if id(s) in members:
                    tail = f"k{i}_{id(s)}"
                elif id(s) in producer:
                    tail = f"k{producer[id(s)]}_{id(s)}"
                else:
                    tail = buffers.get(id(s))
                    if tail is None:
                        tail = buffers[id(s)] = f"b{len(buffers)}"
                        graph.node(tail, _label(s), shape="box", style="rounded")
                graph.edge(tail, f"k{i}_{id(n)}")
    if filename is not None:
        _write(graph, filename)
    return graph


def _label(n) -> str:
    shape = "x".join(str(d) for d in n.shape) or "scalar"
    what = n.op.name.lower()
    if n.op is Op.MAP:
        what = str(n.arg)
    elif n.op in (Op.REDUCE, Op.SCAN):
        what = f"{n.arg[0]}"
    return f"{what}\n{shape} {n.dtype}"


def _wrap(text: str, width: int = 48) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def _write(graph, filename: str) -> None:
    import os

    stem, suffix = os.path.splitext(filename)
    if suffix in (".dot", ".gv", ""):
        with open(filename if suffix else filename + ".gv", "w") as f:
            f.write(graph.source)
        return
    try:
        graph.render(stem, format=suffix[1:], cleanup=True)
    except Exception as error:  # graphviz.ExecutableNotFound: no 'dot' program
        raise RuntimeError(f"numloom.visualize could not render {filename!r}: {error}. "
                           f"Install Graphviz's 'dot', or write a '.dot' file") from error  # fmt: skip

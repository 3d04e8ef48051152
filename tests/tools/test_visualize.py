"""``numloom.visualize``: the plan as a graphviz graph, checked by parsing its DOT source."""

from __future__ import annotations

import re
import sys

import numpy
import pytest

import numloom

graphviz = pytest.importorskip("graphviz")


def _program():
    x = numloom.asarray(numpy.random.default_rng(0).random((64, 48)))
    numloom.evaluate(x)
    softmax = numloom.exp(x) / numloom.exp(x).sum(axis=1, keepdims=True)
    total = (numloom.sqrt(x) @ x.T).sum()
    return softmax, total


def _clusters(source: str) -> list:
    return re.findall(r"subgraph (cluster_\d+) \{(.*?)\n\t\}", source, flags=re.S)


def test_kernels_are_clusters_of_their_operations():
    softmax, total = _program()
    plan = numloom.explain(softmax, total)
    source = numloom.visualize(softmax, total).source
    clusters = _clusters(source)
    assert len(clusters) == len(plan.kernels)
    for (name, body), kernel in zip(clusters, plan.kernels):
        assert f'label="{kernel.name} [{kernel.kind}]' in body
        assert kernel.reason.split()[0] in body  # (why it is a kernel of its own)
        inside = re.findall(r"^\t\t(k\d+_\d+) \[", body, flags=re.M)
        assert inside and all(n.startswith(f"k{name.split('_')[1]}_") for n in inside)
    library = [body for _, body in clusters if "[library]" in body]
    assert library and all("style=filled" in body and "(library call)" in body
                           for body in library)  # fmt: skip
    assert source.count("peripheries=2") == 2  # (the two arrays asked for)
    assert re.search(r'b0 \[label="buffer\n64x48 float64" shape=box', source)
    edges = re.findall(r"^\t(\w+) -> (\w+)$", source, flags=re.M)
    declared = set(re.findall(r"^\t+(\w+) \[label=", source, flags=re.M))
    assert edges and all(a in declared and b in declared for a, b in edges)
    assert hasattr(numloom.visualize(softmax), "_repr_mimebundle_")  # (inline in Jupyter)
    numloom.evaluate(softmax, total)  # (drawing evaluated nothing; this does)


def test_a_dot_file_is_written(tmp_path):
    softmax, _ = _program()
    target = tmp_path / "plan.dot"
    graph = numloom.visualize(softmax, filename=str(target))
    assert target.read_text() == graph.source


def test_without_graphviz_it_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match=r"pip install 'numloom\[viz\]'.*numloom.explain"):
        numloom.visualize()

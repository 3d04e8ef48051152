"""CUDA graphs: a run of a plan's kernels launched as one graph, built once, updated in place.

A plan's steps that all run as CUDA kernels form a *segment*; its launches become the nodes of
one graph whose edges are the plan's data dependencies: a kernel waits only for the kernels
whose outputs it reads, so independent chains of work run concurrently, and the whole segment
costs one launch. The graph is built on the first evaluation of its program and kept with it.
A later evaluation of the same program (the next iteration of a loop, a ``numloom.jit``
replay) has the same launches with other arguments (new input and output pointers, new
constant values): only the nodes whose arguments changed are updated before the launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..realize import count


@dataclass(frozen=True)
class Launch:
    """One kernel launch: what runs, how wide, with what, after which earlier launches."""

    kernel: object  # cuda.core Kernel
    grid: int | tuple
    block: int | tuple
    args: tuple  # NumPy scalars, as cuda.core's launch takes them
    deps: tuple = ()  # indices of the launches of this segment it must wait for
    name: str = ""  # the plan kernel's name, for errors
    shmem: int = 0  # dynamic shared memory in bytes (kernels written in Python)


def _key(args: tuple) -> bytes:
    """The arguments' bytes: -0.0 and 0.0 differ, NaN equals itself."""
    return b"".join(a.tobytes() for a in args)


class SegmentGraph:
    """The executable graph of one segment and the arguments it was last launched with."""

    def __init__(self, launches: list):
        from cuda.core.graph import GraphDefinition

        self.definition = GraphDefinition()
        self.nodes = []
        for launch in launches:
            deps = [self.nodes[d] for d in launch.deps]
            if not deps:
                parent = self.definition
            elif len(deps) == 1:
                parent = deps[0]
            else:
                parent = self.definition.join(*deps)
            self.nodes.append(parent.launch(_config(launch), launch.kernel, *launch.args))
        self.graph = self.definition.instantiate()
        self.keys = [_key(launch.args) for launch in launches]
        self.shape = _shape(launches)
        count("graphs_built")

    def update(self, launches: list) -> None:
        """Give the nodes whose arguments changed their new arguments."""
        stale = []
        for k, launch in enumerate(launches):
            key = _key(launch.args)
            if key != self.keys[k]:
                self.keys[k] = key
                stale.append(k)
        if not stale:
            return
        try:
            for k in stale:
                launch = launches[k]
                self.graph[self.nodes[k]].update(config=_config(launch), kernel=launch.kernel,
                                                 args=launch.args)  # fmt: skip
        except (TypeError, AttributeError):  # a cuda.core without executable-node views
            for k in stale:
                self.nodes[k].update(args=launches[k].args)
            self.graph.update(self.definition)
        count("graph_updates", len(stale))

    def launch(self, stream) -> None:
        self.graph.launch(stream)
        count("graphs_launched")

    def edges(self) -> set:
        """The graph's dependencies as pairs of launch indices (through join nodes)."""
        index = {n: k for k, n in enumerate(self.nodes)}
        preds: dict = {}
        edges = self.definition.edges
        for a, b in edges() if callable(edges) else edges:
            preds.setdefault(b, set()).add(a)

        def launches_before(n) -> set:
            found = set()
            for p in preds.get(n, ()):
                found |= {index[p]} if p in index else launches_before(p)
            return found

        return {(a, index[n]) for n in self.nodes for a in launches_before(n)}


def _config(launch: Launch):
    from cuda.core import LaunchConfig

    return LaunchConfig(grid=launch.grid, block=launch.block, shmem_size=launch.shmem)


def _shape(launches: list) -> tuple:
    """What a built graph fixes: the kernels, their launch shapes and dependencies."""
    return tuple((id(x.kernel), x.grid, x.block, x.shmem, x.deps) for x in launches)


def run_segment(cache: dict, index: int, launches: list, stream) -> None:
    """Launch ``launches`` as the graph of segment ``index`` (``cache`` holds one per segment)."""
    graph = cache.get(index)
    if graph is None or graph.shape != _shape(launches):
        graph = cache[index] = SegmentGraph(launches)
    else:
        graph.update(launches)
    graph.launch(stream)


def run_eagerly(launches: list, stream) -> None:
    """Launch one by one on ``stream`` (NUMLOOM_GRAPHS=0)."""
    from cuda.core import launch as cuda_launch

    for launch in launches:
        cuda_launch(stream, _config(launch), launch.kernel, *launch.args)

"""CUDA graphs: a run of a plan's kernels launched as one graph, built once, updated in place.

A plan's steps that all run as CUDA kernels form a *segment*; its launches become the nodes of
one graph whose edges are the plan's data dependencies: a kernel waits only for the kernels
whose outputs it reads, so independent chains of work run concurrently, and the whole segment
costs one launch.

Graphs are cached per device by their *structure*: the kernels (the same CUDA source loads
once, so the same function object) and the dependencies between them, not the launch shapes or
arguments. A later evaluation of the same program (the next iteration of a loop, a
``numloom.jit`` replay) has the same launches with other arguments (new input and output
pointers, new constant values); the same code over arrays of other sizes is another program
whose launches differ only in their sizes and grids. Both run the graph that is there, its
nodes updated in place.

A loop's outputs alternate between two blocks of memory (the next result is allocated while
the last one is still held), so its launches alternate between two sets of pointers. A graph
keeps up to ``INSTANCES`` executable instances, each with the arguments it last ran: an
evaluation whose launches one of them already has launches it as it is; otherwise the least
recently used one has only the nodes whose launches changed updated (grid, kernel variant and
arguments).
"""

from __future__ import annotations

from ..core.realize import count


class Launch:
    """One kernel launch: what runs, how wide, with what, after which earlier launches.

    A launch of a plan's kernel comes with its key and a function that makes its arguments
    (``make``): a graph instance that already has the key never asks for them."""

    __slots__ = ("kernel", "grid", "block", "_args", "make", "deps", "name", "shmem", "key")

    def __init__(self, kernel, grid, block, args: tuple | None, deps: tuple = (),
                 name: str = "", shmem: int = 0, key=None, make=None):  # fmt: skip
        self.kernel = kernel  # cuda.core Kernel
        self.grid, self.block = grid, block  # ints or 3-tuples
        self._args, self.make = args, make  # the arguments, or what makes them
        self.deps = deps  # indices of the launches of this segment it must wait for
        self.name = name  # the plan kernel's name, for errors
        self.shmem = shmem  # dynamic shared memory in bytes (kernels written in Python)
        # what stands for the launch when comparing it with an instance's node: equal keys,
        # equal launches (kernel, shape and arguments); else all of those
        self.key = key if key is not None else (_key(args), grid, block, shmem, id(kernel))

    @property
    def args(self) -> tuple:
        """The arguments: NumPy scalars, as cuda.core's launch takes them."""
        if self._args is None:
            self._args = self.make()
        return self._args


INSTANCES = 4  # executable instances per graph (see the module's docstring)
GRAPHS_KEPT = 1024  # graphs cached per device; more, and the oldest are dropped


def _key(args: tuple) -> bytes:
    """The arguments' bytes: -0.0 and 0.0 differ, NaN equals itself."""
    return b"".join([a.tobytes() for a in args])


class SegmentGraph:
    """The graph of one segment: its definition, and executable instances of it with the
    arguments each last launched with (most recently used first)."""

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
        self.built_with = [launch.key for launch in launches]
        # [executable graph, its launches' keys, the kernels it launches (held, so that no
        # other kernel takes the id a key names)]
        self.instances: list = []
        self.kernels = [launch.kernel for launch in launches]
        count("graphs_built")

    def run(self, launches: list, stream) -> None:
        """Launch the instance that has these arguments, else give the least recently used
        (or a new) instance the arguments that changed, then launch it."""
        keys = [launch.key for launch in launches]
        instances = self.instances
        k = next((k for k, instance in enumerate(instances) if instance[1] == keys), None)
        if k is None:
            if len(instances) < INSTANCES:
                instances.append([self.definition.instantiate(), list(self.built_with),
                                  list(self.kernels)])  # fmt: skip
            k = len(instances) - 1
            self._update(instances[k], launches, keys)
        instance = instances.pop(k)
        instances.insert(0, instance)
        instance[0].launch(stream)
        count("graphs_launched")

    def _update(self, instance: list, launches: list, keys: list) -> None:
        """Give the instance's nodes whose launches changed their new grid, kernel and
        arguments."""
        graph, old, kernels = instance
        stale = [k for k, key in enumerate(keys) if key != old[k]]
        instance[1] = keys
        if not stale:
            return
        for k in stale:
            kernels[k] = launches[k].kernel
        try:
            for k in stale:
                launch = launches[k]
                graph[self.nodes[k]].update(config=_config(launch), kernel=launch.kernel,
                                            args=launch.args)  # fmt: skip
        except (TypeError, AttributeError):  # a cuda.core without executable-node views:
            # the definition takes these launches (where it has others), then the instance
            # takes the whole definition
            for k, key in enumerate(keys):
                if key != self.built_with[k]:
                    launch = launches[k]
                    self.nodes[k].update(config=_config(launch), kernel=launch.kernel,
                                         args=launch.args)  # fmt: skip
                    self.built_with[k], self.kernels[k] = key, launch.kernel
            graph.update(self.definition)
        count("graph_updates", len(stale))

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


def _structure(launches: list) -> tuple:
    """What a cached graph is found by: its kernels, their blocks and their dependencies (not
    their grids or arguments, which an instance updates in place)."""
    return tuple([(id(x.kernel), x.block, x.shmem, x.deps) for x in launches])


def run_segment(cache: dict, launches: list, stream) -> None:
    """Launch ``launches`` as one graph: the cached graph of their structure (``cache``, one
    per device) updated in place, or a new one."""
    structure = _structure(launches)
    graph = cache.get(structure)
    if graph is None:
        if len(cache) >= GRAPHS_KEPT:
            del cache[next(iter(cache))]
        graph = cache[structure] = SegmentGraph(launches)
    graph.run(launches, stream)


def run_eagerly(launches: list, stream) -> None:
    """Launch one by one on ``stream`` (NUMLOOM_GRAPHS=0)."""
    from cuda.core import launch as cuda_launch

    for launch in launches:
        cuda_launch(stream, _config(launch), launch.kernel, *launch.args)

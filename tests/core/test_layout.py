"""numloom's layout keeps its pipeline's order: each stage's folder imports only the folders
below it (ARCHITECTURE.md). Every import statement counts, at the top of a module or inside a
function."""

from __future__ import annotations

import ast
import pathlib

import numloom

PACKAGE = pathlib.Path(numloom.__file__).parent
# Bottom to top: a folder may import its own modules and those of the folders before it.
LAYERS = ("core", "compile", "api", "kernels", "backends", "tools")
# Backends are leaves: loaded by name through core.device.BACKENDS, imported by no other folder
# (the tools measure them).
LEAVES = {"backends": {"backends", "tools"}}


def _modules() -> dict:
    """{dotted module name: (path, is a package)} of every module of numloom."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _imports(name: str, path: pathlib.Path, package: bool, modules: dict) -> set:
    """The numloom modules that module ``name`` imports."""
    here = name.split(".") if package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m.split(".")[0] == "numloom"}


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else None


def test_no_folder_imports_a_folder_above_it():
    modules = _modules()
    wrong = []
    for name, (path, package) in sorted(modules.items()):
        folder = _folder(name)
        if folder is None:
            continue  # numloom/__init__.py and the public modules at the top import anything
        for target in sorted(_imports(name, path, package, modules)):
            other = _folder(target)
            if other is None:
                if folder != "tools":  # the top package: only the tools run it as users do
                    wrong.append(f"{name} imports {target}, above every folder")
            elif other in LEAVES and folder not in LEAVES[other]:
                wrong.append(f"{name} imports the backend {target} (load it by name)")
            elif LAYERS.index(other) > LAYERS.index(folder):
                wrong.append(f"{name} ({folder}/) imports {target} ({other}/, above it)")
    assert not wrong, "\n".join(wrong)


def test_every_module_is_in_a_stage_folder():
    """Only the package's entry points (``dask``: Dask's array backend), NumPy's public
    submodules and the names numba's modules have (``cuda``, ``types``: each stands for its
    module in ``kernels/``) stay at the top."""
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == {"__init__", "__main__", "linalg", "random", "fft", "dask", "cuda", "types"}
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert folders == set(LAYERS)


# The translator of Python kernels is recursive descent spread over these modules, which import
# each other inside functions (ARCHITECTURE.md); no other modules may import in a cycle.
RECURSIVE = {"numloom.kernels.translate", "numloom.kernels.kstatements",
             "numloom.kernels.kexpressions", "numloom.kernels.kcalls", "numloom.kernels.klib",
             "numloom.kernels.cuda.dispatcher"}  # fmt: skip


def test_no_import_cycles_but_the_translators():
    modules = _modules()
    graph = {name: _imports(name, path, package, modules) & set(modules)
             for name, (path, package) in modules.items()}  # fmt: skip
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v] - {v}:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(component)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    wrong = [sorted(c) for c in cycles if c != RECURSIVE]
    assert not wrong, wrong

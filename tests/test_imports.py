"""The package's import graph: its dependencies point down the layers (LAYERS), no cycles
(imports inside functions count too), and no module imports another module's private
(underscore) names. Static: reads the sources with ast.

Run alone as the import-cycle check: ``python -m pytest -q tests/test_imports.py``."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lasvm_cli"


def module_name(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path):
    """(imported module, [names]) for every import statement in the file, resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("lasvm_cli")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("lasvm_cli"):
                out.append((target, [a.name for a in node.names]))
    return out


def graph():
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {m: set() for m in modules}
    private = []
    for m, path in modules.items():
        for target, names in imports_of(path):
            for n in names:  # "from pkg import module" imports a module, not a name
                if f"{target}.{n}" in modules:
                    edges[m].add(f"{target}.{n}")
                elif n.startswith("_"):
                    private.append(f"{m} imports {target}.{n}")
            if target in modules and target != m:
                if not names or any(f"{target}.{n}" not in modules for n in names):
                    edges[m].add(target)
    return edges, private


# The package's layers, bottom first (docs/architecture.md): a module imports from its own
# layer and the layers below, never from above. The top package (its __init__) is plumbing.
LAYERS = (("base",), ("numerics",), ("io",), ("qp",), ("solvers",), ("training",), ("tools",),
          ("cli", "sklearn"))


def layer_of(module):
    parts = module.split(".")
    if len(parts) == 1:
        return 0
    return next(i for i, names in enumerate(LAYERS) if parts[1] in names)


def upward(edges):
    """Imports from a higher layer: 'a imports b' for each."""
    return sorted(f"{m} imports {t}" for m, ts in edges.items() for t in ts
                  if layer_of(t) > layer_of(m))


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_the_package_is_its_layers():
    """Only the package's __init__ and the layer folders at its top."""
    top = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert top == {"__init__.py"} | {name for names in LAYERS for name in names}


def test_dependencies_point_down():
    edges, _ = graph()
    assert upward(edges) == []


def test_the_layer_check_sees_an_upward_import():
    edges = {"lasvm_cli.qp.smo": {"lasvm_cli.numerics.cache"},
             "lasvm_cli.numerics.cache": {"lasvm_cli.training.params"},
             "lasvm_cli.training.params": {"lasvm_cli.solvers"}, "lasvm_cli.solvers": set()}
    assert upward(edges) == ["lasvm_cli.numerics.cache imports lasvm_cli.training.params"]


def test_no_import_cycles():
    edges, _ = graph()
    assert cycles(edges) == []


def test_no_private_imports_across_modules():
    _, private = graph()
    assert private == []


def test_the_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def reachable(edges, start):
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges.get(m, ()))
    return seen


def test_core_training_path_does_not_import_dask_or_grid():
    """The Dask runner and lasvm grid are reached only from their CLI entry points: training,
    fitting and cross-validation never import them (not even inside functions)."""
    edges, _ = graph()
    for core in ("lasvm_cli.training.train", "lasvm_cli.training.fit",
                 "lasvm_cli.training.run_control", "lasvm_cli.numerics.classes"):
        assert not reachable(edges, core) & {"lasvm_cli.training.distributed",
                                             "lasvm_cli.tools.grid",
                                             "lasvm_cli.cli.grid"}, core


SCALAR_ARRAY = re.compile(r"""(?:\b(?:ist|fst|gst|gfs|tis)|\[["'](?:ist|fst)["']\])\[(?!:\])""")


def test_core_state_is_read_by_name_above_qp():
    """Above qp/, a core state's scalars are read and written through qp's named accessors
    (LasvmScalars(st).n_s, S2doScalars, TrackScalars, LasvmGScalars, SmoScalars), never as
    ``st.ist[I_NS]``: the slot layout stays qp's (and the state file's) business."""
    qp = LAYERS.index(("qp",))
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        if layer_of(name) <= qp:
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if SCALAR_ARRAY.search(line.split("#")[0]):
                found.append(f"{name}:{no}: {line.strip()}")
    assert not found, "\n".join(found)
    assert SCALAR_ARRAY.search("n = int(st.ist[I_NS])") and SCALAR_ARRAY.search('d["ist"][0]')
    assert not SCALAR_ARRAY.search('d["ist"][:] = kept["ist"]')  # a whole copy is no slot


COMPILED = re.compile(r"^\s*@(?:numba\.)?(?:njit|jit|intrinsic|generated_jit)\b|\bnumba\.njit\(")


def test_the_layers_above_qp_hold_no_compiled_code():
    """The solver adapters, the training layer, the tools and the CLI are Python over qp/'s
    compiled cores (and numerics/, io/ below it): no function of theirs is jitted."""
    found = []
    for layer in ("solvers", "training", "tools", "cli", "sklearn"):
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for no, line in enumerate(path.read_text().splitlines(), 1):
                if COMPILED.search(line.split("#")[0]):
                    found.append(f"{module_name(path)}:{no}: {line.strip()}")
    assert not found, "\n".join(found)
    assert COMPILED.search("@numba.njit(**_NJIT)") and COMPILED.search("    @njit")
    assert COMPILED.search("f = numba.njit(cache=True)(g)")

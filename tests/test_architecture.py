"""The package's layers: no import cycles, and no module imports a layer above its own (imports
inside functions count too). A newcomer can point at the folder of each stage."""

from __future__ import annotations

import ast
from pathlib import Path

import coderiv

PACKAGE = Path(coderiv.__file__).parent

#: Lowest first: a module may import its own layer or a lower one.
LAYERS = [
    {"errors", "extras", "registry", "weights", "output", "progress", "_version", "jit", "signals"},
    {"text"},
    {"keys"},
    {"index"},
    {"ranking"},
    {"overlap"},
    {"pairs"},
    {"report"},
    {"evaluation"},
    {"web"},
    {"cli"},
    {"__init__", "__main__"},
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The coderiv modules ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("coderiv"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("coderiv"):
            assert node.level == 0, f"{path}: relative import"
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"{module} is in no layer: add its subpackage to LAYERS")


def test_every_module_has_a_layer() -> None:
    assert len(graph()) > 40
    for module in graph():
        layer(module)


def test_no_module_imports_a_higher_layer() -> None:
    upward = sorted(
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, targets in graph().items()
        for target in targets
        if layer(target) > layer(module)
    )
    assert upward == []


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first search meets (each as the modules along it)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    return cycles


def test_no_import_cycles() -> None:
    edges = graph()
    # a package importing its own modules (re-exports) or a module importing its package is not a cycle
    edges = {m: {t for t in ts if not t.startswith(m + ".") and not m.startswith(t + ".")} for m, ts in edges.items()}
    assert find_cycles(edges) == []


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from coderiv.cli.main import main\nimport coderiv.text.analysis\n")
    assert imports_of(source) == {"coderiv.cli.main", "coderiv.cli.main.main", "coderiv.text.analysis"}
    assert layer("coderiv.cli.main") > layer("coderiv.text.analysis")
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []

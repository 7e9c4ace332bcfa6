"""The package's layers: no import cycles, and no module imports a layer above its own (imports
inside functions count too). A newcomer can point at the folder of each stage."""

from __future__ import annotations

import ast
from pathlib import Path

import coderiv

PACKAGE = Path(coderiv.__file__).parent

#: Lowest first: a module may import its own layer or a lower one.
LAYERS = [
    {"errors", "extras", "registry", "weights", "output", "progress", "_version", "jit", "lazy_names", "system"},
    {"text"},
    {"keys"},
    {"index"},
    {"ranking"},
    {"overlap"},
    {"pairs"},
    {"report"},
    {"evaluation"},
    {"archive"},
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


# -- the tests' house: test modules share helpers only through tests/support -----------------------

ROOT = Path(__file__).resolve().parents[1]
TESTS, BENCHMARKS = ROOT / "tests", ROOT / "benchmarks"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (``from a import b`` gives ``a`` and
    ``a.b``; a relative import keeps its dots), and ``sys.path`` if the file changes it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            found.add(module)
            found.update(f"{module}.{a.name}" if node.module else f"{module}{a.name}" for a in node.names)
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"insert", "append", "extend"}
            and ast.unparse(node.func.value) == "sys.path"
        ):
            found.add("sys.path")
    return found


def stems(folder: Path) -> set[str]:
    return {p.stem for p in folder.rglob("*.py")} - {"__init__"}


def forbidden_in_tests(name: str, *, test_stems: set[str], bench_stems: set[str]) -> str | None:
    """Why a test file (a test module, a conftest or tests/support) may not import ``name``, or None."""
    top = name.split(".")[0]
    if name == "sys.path":
        return "changes sys.path"
    if name.startswith("."):
        return "a relative import"
    if top == "tests" and name != "tests" and not (name == "tests.support" or name.startswith("tests.support.")):
        return "imports a test module (shared helpers belong in tests/support)"
    if top in test_stems:
        return "imports a test module by its bare name (shared helpers belong in tests/support)"
    if top == "benchmarks" or top in bench_stems:
        return "imports a benchmark"
    return None


def forbidden_in_benchmarks(name: str, *, test_stems: set[str], bench_stems: set[str]) -> str | None:
    """Why a benchmark may not import ``name``, or None: benchmarks import coderiv, libraries and
    each other, never the tests."""
    top = name.split(".")[0]
    if name == "sys.path":
        return "changes sys.path"
    if top == "tests" or top in test_stems - bench_stems:
        return "imports the tests"
    return None


def test_tests_and_benchmarks_never_import_each_other() -> None:
    test_stems, bench_stems = stems(TESTS), stems(BENCHMARKS)
    assert {"conftest", "test_architecture", "files"} <= test_stems and {"common"} <= bench_stems
    found = sorted(
        f"{path.relative_to(ROOT)}: {name}: {why}"
        for folder, rule in [(TESTS, forbidden_in_tests), (BENCHMARKS, forbidden_in_benchmarks)]
        for path in folder.rglob("*.py")
        for name in imported_modules(path)
        if (why := rule(name, test_stems=test_stems, bench_stems=bench_stems))
    )
    assert found == []


def test_the_checker_sees_a_test_importing_a_test_or_a_benchmark(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import sys\nfrom tests.support.files import write_docs\nfrom tests import support\n"
        "def f():\n    from test_pairs import build\n    from tests.test_pairs import build\n"
        "from tests import test_pairs\nfrom . import conftest\nimport common\nsys.path.insert(0, 'tests')\n"
    )
    test_stems, bench_stems = {"test_pairs", "conftest", "files", "faults"}, {"common", "faults"}
    verdicts = {name: forbidden_in_tests(name, test_stems=test_stems, bench_stems=bench_stems) for name in imported_modules(source)}
    assert {name for name, why in verdicts.items() if why is None} == {
        "sys", "tests", "tests.support", "tests.support.files", "tests.support.files.write_docs"
    }
    assert {name for name, why in verdicts.items() if why is not None} == {
        "test_pairs", "test_pairs.build", "tests.test_pairs", "tests.test_pairs.build", ".", ".conftest",
        "common", "sys.path",
    }
    assert forbidden_in_benchmarks("faults", test_stems=test_stems, bench_stems=bench_stems) is None  # a benchmark's own module
    assert forbidden_in_benchmarks("tests.support.files", test_stems=test_stems, bench_stems=bench_stems) == "imports the tests"
    assert forbidden_in_benchmarks("files", test_stems=test_stems, bench_stems=bench_stems) == "imports the tests"


def documented_modules() -> dict[str, set[str]]:
    """docs/architecture.md's package map: each package (``""`` for the base layer) and the
    modules it lists (names joined by ``·`` on the lines before a ``—`` description, whose
    further lines are indented deeper)."""
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text("utf-8")
    block = text.split("## The package, by stage", 1)[1].split("```", 2)[1]
    listed: dict[str, set[str]] = {}
    package = ""
    for line in block.splitlines()[2:]:
        if line.startswith(" " * 17):
            continue  # a description's second line
        names = line.split("—", 1)[0]
        if not names.strip():
            continue
        head = names.split()[0]
        if head.endswith("/"):
            package, names = head.rstrip("/"), names.replace(head, "", 1)
        elif not line.startswith(" " * 15):
            package = ""  # the base layer's line
        listed.setdefault(package, set()).update(n.strip() for n in names.split("·") if n.strip())
    return listed


def test_the_architecture_page_lists_every_module_and_no_other() -> None:
    actual: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        package = path.parent.relative_to(PACKAGE).as_posix()
        if (package != "." and path.stem == "__init__") or "migrations" in path.parts:
            continue  # a subpackage's __init__ only re-exports; Alembic's scripts are named by the map's line
        actual.setdefault("" if package == "." else package, set()).add(path.stem)
    listed = documented_modules()
    differences = {
        package: {
            "not listed": sorted(actual.get(package, set()) - listed.get(package, set())),
            "not a module": sorted(listed.get(package, set()) - actual.get(package, set())),
        }
        for package in actual.keys() | listed.keys()
        if listed.get(package) != actual.get(package)
    }
    assert differences == {}

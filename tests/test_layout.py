"""The package's shape: imports flow one way, no cycles, no private names across modules.

Read from the source with `ast`, so a violation fails here before anyone has to notice it in
review: pure modules import no I/O module, nothing imports the CLI, and a name with a leading
underscore is used only in the module that defines it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "sitescout"

# Modules free of I/O: table- and property-tested without a network.
PURE = {
    "_budget",
    "_errors",
    "_groups",
    "_junk",
    "_llms",
    "_locale",
    "_models",
    "_pagetype",
    "_parse",
    "_robots",
    "_select",
    "_urls",
}
IO = {"_http", "_walk", "_crawl", "_discover", "_extract", "_scope", "_batch", "_render", "_api"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> list[tuple[str, str, bool]]:
    """(module imported, name imported or "", whether at module level) for one module."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = {id(node) for node in tree.body}
    found: list[tuple[str, str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in MODULES or full == "sitescout._core":
                    found.append((full, "", id(node) in top))
                else:
                    found.append((target, alias.name, id(node) in top))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "", id(node) in top) for alias in node.names)
    return [(m, n, t) for m, n, t in found if m.startswith("sitescout")]


def _short(module: str) -> str:
    return module.removeprefix("sitescout.")


def test_no_private_name_is_imported_from_another_module() -> None:
    crossings = [
        f"{name} imports {target}.{imported}"
        for name in MODULES
        for target, imported, _top in _imports(name)
        if imported.startswith("_") and not imported.startswith("__") and target != name
    ]
    assert crossings == []


def test_the_package_has_no_import_cycle() -> None:
    graph = {
        name: {t for t, _n, _top in _imports(name) if t in MODULES and t != name}
        for name in MODULES
    }
    graph["sitescout"] = set()  # the public face imports everything; nothing may import it back
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _short(m) in PURE))
def test_pure_modules_import_no_io_module_and_no_cli(name: str) -> None:
    bad = sorted(
        {
            target
            for target, _n, _top in _imports(name)
            if _short(target) in IO or _short(target).startswith("cli")
        }
    )
    assert bad == []


def test_nothing_outside_the_cli_imports_the_cli() -> None:
    importers = sorted(
        name
        for name in MODULES
        if not _short(name).startswith("cli")
        and name != "sitescout.__main__"
        and any(_short(t).startswith("cli") for t, _n, _top in _imports(name))
    )
    assert importers == []

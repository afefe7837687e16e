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

# The package's floors, bottom to top: a module imports only from its own floor or below
# (typing-only imports included: a record must not need the rules that fill it). Each name is
# a module or a package (`_http` holds `_http.fetch`, ...); every module stands on one floor.
LAYERS: list[tuple[str, set[str]]] = [
    ("foundation", {"__about__", "_errors", "_extras", "_rules", "_core", "_signals", "_text"}),
    ("models", {"_models"}),
    (
        "pure rules",
        {
            "_urls",
            "_locale",
            "_budget",
            "_cookies",
            "_since",
            "_robots",
            "_llms",
            "_junk",
            "_pagetype",
            "_select",
            "_groups",
            "_html",
            "_parse",
            "_report",
            "_report_html",
        },
    ),
    ("I/O", {"_http", "_local", "_project", "_state", "_render", "_demo", "_inventory", "_diff"}),
    (
        "orchestration",
        {
            "_pool",
            "_ledger",
            "_discover",
            "_crawl",
            "_pages",
            "_walk",
            "_scope",
            "_extract",
            "_batch",
            "_table",
        },
    ),
    ("API", {"_api", "sitescout"}),
    ("CLI", {"cli", "__main__"}),
]

# Modules free of I/O: table- and property-tested without a network.
PURE = {
    "_rules",
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
    # the pure rooms of packages that also do I/O
    "_discover.plan",
    "_scope.rules",
    "_walk.plan",
    "_diff.changes",
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


@pytest.mark.parametrize(
    "name", sorted(m for m in MODULES if {_short(m), _short(m).split(".")[0]} & PURE)
)
def test_pure_modules_import_no_io_module_and_no_cli(name: str) -> None:
    bad = sorted(
        {
            target
            for target, _n, _top in _imports(name)
            if _short(target).split(".")[0] in IO or _short(target).startswith("cli")
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


def _floor(module: str) -> int:
    """The floor of `sitescout.x.y`: the layer naming `x.y`, else `x`."""
    short = _short(module)
    for name in (short, short.split(".")[0]):
        for floor, (_label, members) in enumerate(LAYERS):
            if name in members:
                return floor
    raise AssertionError(f"{module} stands on no floor: add it to LAYERS")


def test_every_module_stands_on_one_floor() -> None:
    named = [name for _label, members in LAYERS for name in members]
    assert len(named) == len(set(named))
    for name in MODULES:
        _floor(name)


def test_no_import_runs_upward() -> None:
    """An import from a higher floor is a layer the lower one should not know about; typing
    imports count too. Fails on the code before the floors held: `_models` took `PageInfo`
    from `_html`, and `_table` / `_batch` took the facade `_api`."""
    upward = [
        f"{_short(name)} ({LAYERS[_floor(name)][0]}) imports {_short(target)}"
        f" ({LAYERS[_floor(target)][0]})"
        for name in MODULES
        for target, _n, _top in _imports(name)
        if (target in MODULES or target == "sitescout._core") and _floor(target) > _floor(name)
    ]
    assert upward == []

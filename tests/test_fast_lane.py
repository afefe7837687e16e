"""The fast lane (`make check`) leaves out exactly the tests with a declared heavy marker.

The markers are declared in pyproject.toml and applied in the test files (`@pytest.mark.…`)
or by the tables in conftest.py (`MODULE_MARKERS` for whole modules, `SLOW_TESTS` by measured
duration). A marker used but not declared, a marker declared but not left out by `make check`,
or a table entry that names no test fails here.
"""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from .conftest import MODULE_MARKERS, SLOW_TESTS

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


def pytest_ini() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        ini: dict[str, object] = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    return ini


def declared_markers() -> set[str]:
    """The markers pyproject.toml declares: `name: meaning`."""
    lines = pytest_ini()["markers"]
    assert isinstance(lines, list)
    return {line.split(":")[0].strip() for line in lines}


def fast_lane_expression() -> str:
    match = re.search(r"^FAST_TESTS := (.+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert match, "the Makefile defines FAST_TESTS for `make check`"
    return match.group(1).strip()


def markers_used_in_test_files() -> dict[str, set[str]]:
    """`pytest.mark.<name>` in every test file, marker name → files."""
    used: dict[str, set[str]] = {}
    for path in sorted(TESTS.glob("*.py")):
        for name in re.findall(r"\bpytest\.mark\.(\w+)", path.read_text(encoding="utf-8")):
            used.setdefault(name, set()).add(path.name)
    return used


def test_undeclared_markers_are_errors() -> None:
    addopts = pytest_ini()["addopts"]
    assert isinstance(addopts, str)
    assert "--strict-markers" in addopts.split()


def test_every_marker_used_is_registered(request: pytest.FixtureRequest) -> None:
    # Registered: declared in pyproject.toml, or by pytest and its plugins (skipif, asyncio, …).
    registered = {
        line.split(":")[0].split("(")[0].strip() for line in request.config.getini("markers")
    }
    used = markers_used_in_test_files()
    for markers in MODULE_MARKERS.values():
        for marker in markers:
            used.setdefault(marker, set()).add("conftest.py (MODULE_MARKERS)")
    assert {m: files for m, files in used.items() if m not in registered} == {}


def test_the_fast_lane_leaves_out_every_declared_marker() -> None:
    expression = fast_lane_expression()
    assert expression.startswith("not (") and expression.endswith(")")
    excluded = {name.strip() for name in expression[len("not (") : -1].split(" or ")}
    assert excluded == declared_markers()


@pytest.mark.parametrize("pattern", sorted(MODULE_MARKERS))
def test_each_module_rule_matches_a_test_file(pattern: str) -> None:
    assert [p for p in TESTS.glob("test_*.py") if fnmatch(p.name, pattern)], pattern


def test_the_module_rules_use_declared_markers() -> None:
    used = {marker for markers in MODULE_MARKERS.values() for marker in markers}
    assert used <= declared_markers()


def test_each_slow_entry_names_a_test() -> None:
    missing = {}
    for file, names in SLOW_TESTS.items():
        path = TESTS / file
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        defined = set(re.findall(r"^(?:async )?def (\w+)\(", text, re.MULTILINE))
        if set(names) - defined:
            missing[file] = sorted(set(names) - defined)
    assert missing == {}, "SLOW_TESTS names tests that are gone (renamed?)"

"""The rules as data (`_rules`): each table row does what it says, is written once in the package,
and is what every reader applies. No network.

The junk rows carry their own example and near miss, and the tests here hold every reader to
them: `junk_filter`, the report's prefilter (derived from the rows) and JUNK.md itself. The
native core keeps its own copy of the tracking parameters (`rust/src/urls.rs`); it is held equal
to the Python table both by its source and by what `normalize_url` does.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout import _core, _rules
from sitescout._discover import WELL_KNOWN
from sitescout._junk import junk_filter
from sitescout._models import Entry
from sitescout._report import ReportBuilder
from sitescout._rules import (
    AUTH_PREFIXES,
    AUTH_WORDS,
    JUNK_ROWS,
    TRACKING_NAMES,
    TRACKING_PREFIXES,
    WEIGHTS,
    WELL_KNOWN_SITEMAPS,
    JunkRow,
    Weight,
    path_regex,
    required_literal,
    row_core,
    spellings,
)
from sitescout._select import CHECKLIST_POINTS, RULES, score_path
from sitescout._urls import classify

from .reference import urls as reference

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sitescout"
SHARED = ROOT.parent / "shared"  # the specs, beside the checkout (absent in some checkouts)
ORIGIN = "https://ex.com"
READERS = ("_junk", "_select", "_pagetype", "_urls", "_report", "_discover", "_groups")


def urls(paths: tuple[str, ...]) -> list[str]:
    return [ORIGIN + path for path in paths]


def source_files() -> list[Path]:
    """The package's Python source; the demo's sample site serves sitemaps, it states no rule."""
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "_demo" not in p.parts]


def occurrences(text: str) -> list[str]:
    """`file:line` of each place the package writes `text` (not inside a longer word or path:
    `/dev/` is not `/dev/stdin`, `/sitemap.xml` not `./sitemap.xml`)."""
    before = r"(?<![\w/.])" if text[0].isalnum() or text[0] == "/" else ""
    after = r"(?!\w)" if text[-1].isalnum() or text[-1] == "/" else ""
    pattern = re.compile(before + re.escape(text) + after)
    return [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in source_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for _ in pattern.finditer(line)
    ]


# -- junk rows ------------------------------------------------------------------------------------


def row_id(row: JunkRow) -> str:
    return row.pattern


@pytest.mark.parametrize("row", JUNK_ROWS, ids=row_id)
def test_each_junk_row_removes_its_example(row: JunkRow) -> None:
    first, *_ = found = urls(row.example)
    assert junk_filter(found).junk[:1] == [(first, row.pattern)]


@pytest.mark.parametrize("row", JUNK_ROWS, ids=row_id)
def test_each_junk_row_keeps_its_near_miss(row: JunkRow) -> None:
    first, *_ = found = urls(row.near_miss)
    assert first in junk_filter(found).kept


@pytest.mark.parametrize("row", JUNK_ROWS, ids=row_id)
def test_each_junk_rows_regex_matches_its_example_alone(row: JunkRow) -> None:
    regex = re.compile(path_regex(row.pattern))
    assert regex.search(row.example[0])
    if row.check is None:  # a checked row's near miss matches: its check keeps it
        assert not regex.search(row.near_miss[0])


@pytest.mark.parametrize("row", JUNK_ROWS, ids=row_id)
def test_the_report_finds_each_junk_row_like_the_filter(row: JunkRow) -> None:
    # The report's prefilter is derived from the rows: it must let each example through.
    for paths, expected in ((row.example, [row.pattern]), (row.near_miss, [])):
        found = urls(paths)
        rows = ReportBuilder()
        nothing: list[str | None] = [None] * len(found)
        rows.add_rows(found, nothing, nothing, nothing, nothing)
        entries = ReportBuilder()  # a walk's batch: the origin is cut off each line first
        entries.add_entries([Entry(url) for url in found])
        for builder in (rows, entries):
            patterns = [p for url, p in builder.junk if url == found[0]]
            assert patterns == expected, (builder, paths)


@given(
    st.sampled_from(JUNK_ROWS).flatmap(
        lambda row: st.tuples(st.just(row), st.from_regex(path_regex(row.pattern)))
    )
)
@settings(max_examples=300, deadline=None)
def test_the_literal_of_a_row_is_in_every_path_it_matches(
    row_and_path: tuple[JunkRow, str],
) -> None:
    row, path = row_and_path
    assert required_literal(path_regex(row.pattern)) in path


@pytest.mark.parametrize(
    ("regex", "literal"),
    [
        pytest.param(r"^/test(?:\b|-|\d|/)", "/test", id="anchor-and-group"),
        pytest.param(r"/sample-?page(?:/|$)", "/sample", id="optional-char"),
        pytest.param(r"/[a-z-]*-test(?:/|$)", "-test", id="class"),
        pytest.param(r"/[0-9]{3,}-[0-9]+(?:/|$)", "/", id="repeat-count"),
        pytest.param(r"x[]a]yz", "yz", id="bracket-first-in-class"),
        pytest.param(r"a\.bcd", "bcd", id="escape"),
        pytest.param(r"ab|cdef", "", id="top-level-or"),
        pytest.param(r"(abc)+xy", "xy", id="group"),
    ],
)
def test_required_literal(regex: str, literal: str) -> None:
    assert required_literal(regex) == literal


def test_path_regex_reads_a_trailing_slash_as_a_segment_end() -> None:
    assert path_regex("/staging/") == "/staging(?:/|$)"
    assert path_regex(r"^/test(\b|-|\d|/)") == r"^/test(?:\b|-|\d|/)"
    assert path_regex(r"/holiday[0-9]+(/|$)") == r"/holiday[0-9]+(?:/|$)"


def test_checked_rows_are_written_the_way_their_check_reads_them() -> None:
    cores = {row.pattern: row_core(row) for row in JUNK_ROWS if row.check is not None}
    assert cores == {
        r"/[^/]+-2(/|$)": "-2",
        r"/[^/]+-3(/|$)": "-3",
        r"/[^/]+-4(/|$)": "-4",
        r"/[a-z]+[0-9]+(/|$)": "[a-z]+[0-9]+",
    }
    with pytest.raises(ValueError, match="copy row"):
        row_core(JunkRow("x", "/x-2/", (), (), "copy"))


def markdown_table(path: Path, first_column: str) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_column} |"))
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        rows.append([cell.strip().replace("\\|", "|") for cell in cells])
    return rows


@pytest.mark.skipif(not (SHARED / "JUNK.md").exists(), reason="shared/JUNK.md is not beside us")
def test_junk_rows_are_junk_md_s_table() -> None:
    written = [
        (kind, pattern)
        for kind, patterns, _condition in markdown_table(SHARED / "JUNK.md", "kind")
        for pattern in re.findall(r"`([^`]+)`", patterns)
    ]
    assert [(row.kind, row.pattern) for row in JUNK_ROWS] == written


# -- scoring --------------------------------------------------------------------------------------


def test_rule_texts_are_generated_from_the_weights() -> None:
    assert {name: weight.text for name, weight in WEIGHTS.items()} == RULES
    assert WEIGHTS["page-type-checklist"].points == CHECKLIST_POINTS
    for text in RULES.values():
        assert occurrences(text) == []  # generated, not written


@pytest.mark.parametrize(
    ("weight", "text"),
    [
        pytest.param(Weight(10, "the path is /"), "+10: the path is /", id="plus"),
        pytest.param(Weight(-3, "a date"), "−3: a date", id="minus"),
        pytest.param(Weight(5, "declared", "× priority"), "+5 × priority: declared", id="per"),
        pytest.param(Weight(-1, per="per segment"), "−1 per segment", id="no-when"),
        pytest.param(Weight(0.5, "half"), "+0.5: half", id="fraction"),
    ],
)
def test_weight_text(weight: Weight, text: str) -> None:
    assert weight.text == text


def test_rule_texts_name_the_data_they_come_from() -> None:
    assert all(f"/{word[0]}" in RULES["auth-walled"] for word in AUTH_WORDS)
    assert all(form in RULES["date-like-archive"] for form, _ in _rules.DATE_ARCHIVES)
    assert all(f"-{word[0]}" in RULES["version-test-marker"] for word in _rules.OLD_COPY_WORDS)


@pytest.mark.parametrize(
    ("path", "priority", "rule", "times"),
    [
        pytest.param("/", None, "home", 1, id="home"),
        pytest.param("/about", None, "ia-pillar-keyword", 1, id="keyword"),
        pytest.param("/x", 0.6, "sitemap-priority", 0.6, id="priority"),
        pytest.param("/x", None, "shallow-path", 1, id="shallow"),
        pytest.param("/a/b/c", None, "extra-depth", 2, id="depth"),
        pytest.param("/2024/05/", None, "date-like-archive", 1, id="date"),
        pytest.param("/v2", None, "version-test-marker", 1, id="version"),
        pytest.param("/login", None, "auth-walled", 1, id="auth"),
    ],
)
def test_scores_are_the_weights(path: str, priority: float | None, rule: str, times: float) -> None:
    assert dict(score_path(path, priority))[rule] == pytest.approx(WEIGHTS[rule].points * times)


@pytest.mark.skipif(not (SHARED / "SCORING.md").exists(), reason="shared/SCORING.md is absent")
def test_weights_are_scoring_md_s_table() -> None:
    written = [
        (re.sub(r"[ /]", "-", rule.lower()), float(points.split()[0].replace("−", "-")))
        for rule, points, _when in markdown_table(SHARED / "SCORING.md", "rule")
    ]
    assert [(name, weight.points) for name, weight in WEIGHTS.items()] == written


# -- written once ---------------------------------------------------------------------------------


@pytest.mark.parametrize("row", JUNK_ROWS, ids=row_id)
def test_each_junk_pattern_is_written_once(row: JunkRow) -> None:
    assert occurrences(row.pattern) == ["_rules.py:" + str(_line_of(row.pattern))]


@pytest.mark.parametrize("name", list(WEIGHTS))
def test_each_weight_is_written_once(name: str) -> None:
    assert len(occurrences(f'"{name}": Weight(')) == 1


@pytest.mark.parametrize("path", WELL_KNOWN_SITEMAPS)
def test_each_well_known_path_is_written_once(path: str) -> None:
    assert occurrences(path) == ["_rules.py:" + str(_line_of(path))]
    assert (path.removeprefix("/"), path) in WELL_KNOWN


def _line_of(text: str) -> int:
    lines = (PACKAGE / "_rules.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


# -- the bottom layer -----------------------------------------------------------------------------


def imported_modules(name: str) -> set[str]:
    # A package (`_select/`) is read as its rooms together, relative imports as seen from beside
    # it: a room's `.._rules` is the package's `._rules` (and its `.score` plain `score`).
    module = PACKAGE / f"{name}.py"
    found: set[str] = set()
    for path in [module] if module.exists() else sorted((PACKAGE / name).glob("*.py")):
        deeper = len(path.relative_to(PACKAGE).parts) - 1
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = "." * max(node.level - deeper, 0) + (node.module or "")
                found.update({base} if node.module else {base + alias.name for alias in node.names})
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


def test_rules_import_nothing_of_the_package() -> None:
    assert {m for m in imported_modules("_rules") if m.startswith((".", "sitescout"))} == set()


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_reads_the_rules(reader: str) -> None:
    assert "._rules" in imported_modules(reader)


# -- auth-walled paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("word", spellings(AUTH_WORDS))
def test_each_auth_spelling_is_flagged_and_scored(word: str) -> None:
    for prefix in ("", *AUTH_PREFIXES):
        for path in (f"/{prefix}{word}", f"/x/{prefix}{word}s/y"):
            assert classify(ORIGIN + path, ORIGIN).reason == "requires-auth", path
            assert "auth-walled" in dict(score_path(path))
    near_miss = f"/{word}ing"  # `/accounting`
    assert classify(ORIGIN + near_miss, ORIGIN).reason == "page"
    assert "auth-walled" not in dict(score_path(near_miss))


# -- tracking parameters: the native core's copy --------------------------------------------------


def rust_tracking_tables() -> list[tuple[set[str], set[str]]]:
    """(prefixes, exact names) of each function of `rust/src/urls.rs` that names them."""
    source = (ROOT / "rust" / "src" / "urls.rs").read_text(encoding="utf-8")
    tables = []
    for function in ("tracking_at", "is_tracking"):
        body = source[source.index(f"fn {function}(") :]
        body = body[: body.index("\n}\n")]
        prefixes = set(re.findall(r'starts_with_ignore_case\(\w+, b"([^"]+)"\)', body))
        exact = re.search(r'\[&b"[^"]+"\[\.\.\](?:,\s*b"[^"]+")*\s*\]', body)
        assert exact is not None, function
        tables.append((prefixes, set(re.findall(r'b"([^"]+)"', exact.group()))))
    return tables


def test_the_rust_tracking_tables_equal_the_rules() -> None:
    tables = rust_tracking_tables()
    assert len(tables) == 2
    for prefixes, names in tables:
        assert prefixes == set(TRACKING_PREFIXES)
        assert names == set(TRACKING_NAMES)


def test_the_reference_model_tracking_table_equals_the_rules() -> None:
    assert set(reference._TRACKING_PREFIXES) == set(TRACKING_PREFIXES)
    assert set(reference._TRACKING_EXACT) == set(TRACKING_NAMES)


@pytest.mark.parametrize(
    "name",
    [*(p + "x" for p in TRACKING_PREFIXES), *TRACKING_PREFIXES, *TRACKING_NAMES],
)
def test_normalization_drops_each_tracking_parameter(name: str) -> None:
    for spelled in (name, name.upper()):
        for query in (f"{spelled}=1&a=2", f"a=2&{spelled}", f"a=2&{spelled}=&b"):
            url = f"{ORIGIN}/p?{query}"
            assert _core.normalize_url(url) in (f"{ORIGIN}/p?a=2", f"{ORIGIN}/p?a=2&b"), url
            assert not _core.is_clean(url)


@pytest.mark.parametrize("name", [*(n + "x" for n in TRACKING_NAMES), "x" + TRACKING_NAMES[0]])
def test_normalization_keeps_near_misses(name: str) -> None:
    url = f"{ORIGIN}/p?{name}=1"
    assert _core.normalize_url(url) == url

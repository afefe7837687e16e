"""`sitescout diff OLD NEW`: inventories saved by `sitescout urls` from a loopback site before and
after it changed, and hand-written ones; the table, the rows, --json, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import sitescout.cli.diff
import sitescout.cli.urls  # registers the commands
from sitescout.cli import app

from .server import Site

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def invoke(*args: str, stdin: bytes | None = None) -> Result:
    result = CliRunner().invoke(app, list(args), input=stdin)
    # A clean exit is a SystemExit (typer.Exit); anything else is a traceback the user would see.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def sitemap(site: Site, pages: dict[str, str | None]) -> None:
    items = "".join(
        f"<url><loc>{site.url}{path}</loc>"
        + ("" if lastmod is None else f"<lastmod>{lastmod}</lastmod>")
        + "</url>"
        for path, lastmod in pages.items()
    )
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add(
        "/sitemap.xml",
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>',
    )


MONDAY: dict[str, str | None] = {
    "/": "2024-05-01",
    "/blog/": "2024-05-01",
    "/blog/first-post": "2024-04-01T10:00:00+02:00",
    "/blog/second-post": "2024-04-02T10:00:00Z",
    "/blog/old-news": "2023-01-01",
    "/docs/install": None,
    "/docs/api?page=2&sort=asc": "2024-03-03",
}
TUESDAY: dict[str, str | None] = {
    "/": "2024-05-01",
    "/blog/": "2024-05-02",  # changed
    "/blog/first-post": "2024-04-01T10:00:00+02:00",
    "/blog/second-post": "2024-04-02T10:00:00Z",
    "/blog/third-post": "2024-05-02",  # added
    "/docs/install": "2024-05-02",  # a lastmod appears: changed
    "/docs/api?page=2&sort=asc": "2024-03-03",
    "/pricing": None,  # added
}  # /blog/old-news removed


def save(site: Site, path: Path) -> Path:
    fmt = path.suffix.lstrip(".")
    result = invoke("urls", site.url + "/", "--format", fmt, "-o", str(path), "-q")
    assert result.exit_code == 0, result.output
    return path


def walked(site: Site, tmp_path: Path, fmt: str) -> tuple[Path, Path]:
    sitemap(site, MONDAY)
    old = save(site, tmp_path / f"monday.{fmt}")
    sitemap(site, TUESDAY)
    new = save(site, tmp_path / f"tuesday.{fmt}")
    return old, new


def table_rows(stdout: str) -> dict[str, list[str]]:
    return {
        cells[0]: cells[1:4]
        for line in stdout.splitlines()
        if (cells := line.split()) and cells[0].startswith(("/", "other"))
    }


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt", "parquet"])
def test_two_walks_saved_by_urls_in_each_format(site: Site, tmp_path: Path, fmt: str) -> None:
    old, new = walked(site, tmp_path, fmt)
    result = invoke("diff", str(old), str(new))
    assert result.exit_code == 1, result.output
    rows = table_rows(result.stdout)
    if fmt == "txt":  # no lastmods: added and removed only, and a note says why
        assert rows == {"/blog/*": ["1", "1", "0"], "/pricing/*": ["1", "0", "0"]}
        assert "lastmods not compared" in result.stderr
    else:
        assert rows == {
            "/blog/*": ["1", "1", "1"],
            "/docs/*": ["0", "0", "1"],
            "/pricing/*": ["1", "0", "0"],
        }
    assert f"on {site.url}" in result.stdout  # one origin: examples are paths
    assert "+ /blog/third-post" in result.stdout and "- /blog/old-news" in result.stdout
    assert "2 added, 1 removed" in result.stderr
    same = invoke("diff", str(old), str(old))
    assert same.exit_code == 0 and same.stdout == ""
    assert "no changes (7 URLs unchanged)" in same.stderr


@pytest.mark.slow
def test_the_same_walk_in_two_formats_has_no_changes(site: Site, tmp_path: Path) -> None:
    sitemap(site, MONDAY)
    saved = [save(site, tmp_path / f"inv.{fmt}") for fmt in ("jsonl", "csv", "parquet")]
    for old in saved:
        for new in saved:
            result = invoke("diff", str(old), str(new))
            assert result.exit_code == 0, (old, new, result.output)


# -- hand-written inventories ---------------------------------------------------------------------


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


OLD = [
    {"url": "https://ex.com/a", "lastmod": "2024-01-01"},
    {"url": "https://ex.com/blog/b", "lastmod": "2024-01-01"},
    {"url": "https://ex.com/blog/gone", "lastmod": None},
]
NEW = [
    {"url": "https://ex.com/a", "lastmod": "2024-01-01T00:00:00Z"},
    {"url": "https://ex.com/blog/b", "lastmod": "2024-02-01"},
    {"url": "https://other.org/new", "lastmod": None},
]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return jsonl(tmp_path / "old.jsonl", OLD), jsonl(tmp_path / "new.jsonl", NEW)


EXPECTED_ROWS = [
    {
        "url": "https://ex.com/blog/b",
        "change": "changed",
        "old_lastmod": "2024-01-01",
        "new_lastmod": "2024-02-01",
    },
    {
        "url": "https://ex.com/blog/gone",
        "change": "removed",
        "old_lastmod": None,
        "new_lastmod": None,
    },
    {"url": "https://other.org/new", "change": "added", "old_lastmod": None, "new_lastmod": None},
]


def test_jsonl_rows_on_stdout_and_the_summary_on_stderr(pair: tuple[Path, Path]) -> None:
    result = invoke("diff", *map(str, pair), "--format", "jsonl")
    assert result.exit_code == 1
    assert [json.loads(line) for line in result.stdout.splitlines()] == EXPECTED_ROWS
    assert "1 added, 1 removed, 1 changed, 1 unchanged" in result.stderr
    with_json = invoke("diff", *map(str, pair), "-f", "jsonl", "--json")
    summary = json.loads(with_json.stderr)  # stdout carries the rows: the summary goes aside
    assert summary["added"] == 1 and summary["changed"] == 1 and summary["removed"] == 1
    assert len(with_json.stdout.splitlines()) == 3


def test_two_origins_show_whole_urls(pair: tuple[Path, Path]) -> None:
    result = invoke("diff", *map(str, pair))
    assert "+ https://other.org/new" in result.stdout and "~ https://ex.com/blog/b" in result.stdout
    assert " on " not in result.stdout


def test_csv_and_parquet_rows_to_a_file_and_the_table_on_stdout(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "changes.csv"
    result = invoke("diff", *map(str, pair), "-o", str(out))  # the format from the suffix
    assert result.exit_code == 1
    lines = out.read_text().splitlines()
    assert lines[0] == "url,change,old_lastmod,new_lastmod"
    assert lines[1:] == [
        "https://ex.com/blog/b,changed,2024-01-01,2024-02-01",
        "https://ex.com/blog/gone,removed,,",
        "https://other.org/new,added,,",
    ]
    assert table_rows(result.stdout)["/blog/*"] == ["0", "1", "1"]
    assert f"rows → {out}" in result.stderr
    parquet = tmp_path / "changes.parquet"
    assert invoke("diff", *map(str, pair), "-o", str(parquet), "-q").exit_code == 1
    assert pq.read_table(parquet).to_pylist() == EXPECTED_ROWS
    assert not list(tmp_path.glob(".changes*"))  # no temporary file left beside them


def test_json_summary_instead_of_the_table(pair: tuple[Path, Path]) -> None:
    result = invoke("diff", *map(str, pair), "--json", "--depth", "2")
    assert result.exit_code == 1 and result.stderr == ""
    data = json.loads(result.stdout)
    assert data["old"]["rows"] == 3 and data["new"]["format"] == "JSON lines"
    assert data["lastmods_compared"] is True and data["unchanged"] == 1 and data["depth"] == 2
    assert [(g["prefix"], g["added"], g["removed"], g["changed"]) for g in data["groups"]] == [
        ("/blog/b/*", 0, 0, 1),
        ("/blog/gone/*", 0, 1, 0),
        ("/new/*", 1, 0, 0),
    ]
    assert data["groups"][2]["examples"]["added"] == ["https://other.org/new"]


def test_quiet_keeps_stdout_and_says_nothing_else(pair: tuple[Path, Path]) -> None:
    result = invoke("diff", *map(str, pair), "-q")
    assert result.exit_code == 1 and result.stderr == "" and "/blog/*" in result.stdout


def test_one_side_from_stdin(pair: tuple[Path, Path]) -> None:
    old, new = pair
    result = invoke("diff", str(old), "-", "-f", "jsonl", stdin=new.read_bytes())
    assert [json.loads(line) for line in result.stdout.splitlines()] == EXPECTED_ROWS
    assert "→ stdin (3 rows)" in result.stderr
    both = invoke("diff", "-", "-", stdin=b"")
    assert both.exit_code == 2 and "only one of OLD and NEW" in both.stderr


def test_hostile_rows_are_named_by_file_and_line(pair: tuple[Path, Path], tmp_path: Path) -> None:
    old, _new = pair
    new = tmp_path / "hostile.jsonl"
    lines = [json.dumps(r) for r in OLD] + ['{"url": "https://ex.com/cut', '{"url": 3}']
    new.write_text("\n".join(lines) + "\n")
    result = invoke("diff", str(old), str(new))
    assert result.exit_code == 0  # nothing changed: the exit code says so, the warning the rest
    assert f"warning: 2 rows of {new} skipped" in result.stderr
    assert f"  {new}, line 4: not valid JSON" in result.stderr
    assert f"  {new}, line 5: no url" in result.stderr


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    old, new = tmp_path / "old.txt", tmp_path / "new.jsonl"
    old.write_text("https://ex.com/a\n")
    new.write_text('{"url": "https://ex.com/a"}\n{"url": "https://ex.com/b"}\n{"url": 3}\n')
    result = invoke("diff", str(old), str(new))
    assert result.exit_code == 1
    assert f"{old} (1 row) → {new} (2 rows)" in result.stderr
    assert f"warning: 1 row of {new} skipped" in result.stderr


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.jsonl", None, "no such inventory file"),
        ("empty.jsonl", b"", "holds no inventory rows"),
        ("junk.jsonl", b"\x00\x01\x02 not json\n{broken\n", "holds no inventory rows (2 "),
        ("bad.parquet", b"PAR1 this is not parquet PAR1", "cannot read"),
        ("nourl.csv", b"lastmod,sitemap\n2024-01-01,x\n", "no url column"),
        ("page.html", b"<html><body>hello</body></html>\n", "holds no inventory rows (1 not an"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    pair: tuple[Path, Path], tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    old, _new = pair
    bad = tmp_path / name
    if content is not None:
        bad.write_bytes(content)
    out = tmp_path / "changes.jsonl"
    out.write_text("kept\n")
    for args in ((str(old), str(bad)), (str(bad), str(old))):
        result = invoke("diff", *args, "-o", str(out))
        assert result.exit_code == 2, result.output
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert result.stdout == ""
    assert out.read_text() == "kept\n"  # an existing output file is left as it was
    assert not list(tmp_path.glob(".changes*"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-f", "parquet"), "--format parquet needs --output FILE"),
        (("-o", "changes.dat"), "give --format"),
        (("-o", "changes.txt"), "give --format"),  # plain URLs are read, never written here
        (("--depth", "0"), "--depth"),
    ],
)
def test_usage_errors_exit_2(pair: tuple[Path, Path], args: tuple[str, ...], message: str) -> None:
    result = invoke("diff", *map(str, pair), *args)
    assert result.exit_code == 2 and message in result.output


def test_a_directory_is_not_an_inventory_yet(pair: tuple[Path, Path], tmp_path: Path) -> None:
    result = invoke("diff", str(pair[0]), str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.stderr


def test_ctrl_c_exits_130_and_leaves_no_file(
    pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()

    def interrupt(self: Any, change: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sitescout.cli.diff.ChangeGroups, "add", interrupt)
    out = tmp_path / "changes.csv"
    result = invoke("diff", *map(str, pair), "-o", str(out), "--temp-dir", str(work))
    assert result.exit_code == 130 and "interrupted" in result.stderr
    assert not out.exists() and not list(tmp_path.glob(".changes*"))
    assert list(work.iterdir()) == []


def test_help_names_the_exit_codes() -> None:
    result = CliRunner().invoke(app, ["diff", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert (
        "Exit code 0 when nothing changed, 1 when something did, 2 for bad input" in result.output
    )

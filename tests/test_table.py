"""`to_arrow` / `to_pandas` (and the Parquet file sharing their schema) over a loopback site."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import sitescout
from sitescout import UsageError
from sitescout._batch.parts import Parts
from sitescout._core import Batch
from sitescout._models import Entry
from sitescout._table import BatchConverter
from sitescout.cli import app

from .server import Site, sitemapindex, urlset

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

# (lastmod as the sitemap writes it, the instant it means, the text the walk keeps)
LASTMODS = [
    ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC), "2024-05-01"),
    (
        "2024-05-30T10:00:00+02:00",
        datetime(2024, 5, 30, 8, tzinfo=UTC),
        "2024-05-30T10:00:00+02:00",
    ),
    (
        "2024-06-02T03:04:05Z",
        datetime(2024, 6, 2, 3, 4, 5, tzinfo=UTC),
        "2024-06-02T03:04:05+00:00",
    ),
    ("2023-07", datetime(2023, 7, 1, tzinfo=UTC), "2023-07"),
    ("2022", datetime(2022, 1, 1, tzinfo=UTC), "2022"),
    ("next tuesday", None, "next tuesday"),
    ("2024-13-45", None, "2024-13-45"),
]


def page(loc: str, lastmod: str | None = None, priority: str | None = None, extra: str = "") -> str:
    parts = [f"<loc>{loc}</loc>"]
    if lastmod is not None:
        parts.append(f"<lastmod>{lastmod}</lastmod>")
    if priority is not None:
        parts.append(f"<priority>{priority}</priority>")
    return "<url>" + "".join(parts) + extra + "</url>"


def urlset_of(items: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">' + "".join(items) + "</urlset>"
    )


def make_site(site: Site) -> dict[str, dict[str, Any]]:
    """Robots → index → two urlsets; returns the rows expected per URL."""
    u = site.url
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{u}/a.xml", f"{u}/b.xml"]))
    alt = f'<xhtml:link rel="alternate" hreflang="fr" href="{u}/fr/p0"/>'
    a_items = [
        page(f"{u}/p{i}", raw, "0.5" if i % 2 else None, alt if i == 0 else "")
        for i, (raw, _, _) in enumerate(LASTMODS)
    ]
    site.add("/a.xml", urlset_of(a_items))
    site.add("/b.xml", urlset_of([page(f"{u}/nolastmod")]))
    expected: dict[str, dict[str, Any]] = {}
    for i, (_, when, kept) in enumerate(LASTMODS):
        expected[f"{u}/p{i}"] = {
            "lastmod": when,
            "lastmod_raw": kept,
            "priority": 0.5 if i % 2 else None,
            "hreflang": None,
            "alternate_of": None,
            "sitemap": f"{u}/a.xml",
            "depth": 2,
            "source": "sitemap",
            "title": None,
            "md_url": None,
            "sources": None,
        }
    expected[f"{u}/fr/p0"] = {
        **expected[f"{u}/p0"],
        "lastmod": None,
        "lastmod_raw": None,
        "priority": None,
        "hreflang": "fr",
        "alternate_of": f"{u}/p0",
    }
    expected[f"{u}/nolastmod"] = {
        **expected[f"{u}/p5"],
        "lastmod": None,
        "lastmod_raw": None,
        "priority": None,
        "sitemap": f"{u}/b.xml",
    }
    return expected


def by_url(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r.pop("url"): r for r in rows}


def test_to_arrow_rows_and_column_types(site: Site) -> None:
    expected = make_site(site)
    table = sitescout.to_arrow(site.url + "/")
    types = {f.name: f.type for f in table.schema}
    assert types == {
        "url": pa.string(),
        "lastmod": pa.timestamp("us", tz="UTC"),
        "lastmod_raw": pa.string(),
        "priority": pa.float64(),
        "changefreq": pa.string(),
        "hreflang": pa.string(),
        "alternate_of": pa.string(),
        "sitemap": pa.string(),
        "depth": pa.int32(),
        "source": pa.string(),
        "title": pa.string(),
        "md_url": pa.string(),
        "sources": pa.list_(pa.string()),
    }
    rows = by_url(table.to_pylist())
    for row in rows.values():
        assert row.pop("changefreq") is None
    assert rows == expected
    assert table.num_rows == len(expected)  # each URL once


def test_to_pandas_dtypes_and_a_real_question(site: Site) -> None:
    expected = make_site(site)
    df = sitescout.to_pandas(site.url + "/")
    assert isinstance(df["lastmod"].dtype, pd.DatetimeTZDtype)
    assert str(df["lastmod"].dt.tz) == "UTC"
    assert df["priority"].dtype == "float64"
    assert df["depth"].dtype == "int32"
    for text in ("url", "lastmod_raw", "hreflang", "source", "sitemap", "alternate_of", "title"):
        assert pd.api.types.is_string_dtype(df[text].dtype), text
    assert sorted(df["url"]) == sorted(expected)
    assert df["priority"].isna().sum() == sum(1 for r in expected.values() if r["priority"] is None)
    # The README's question: URLs per section changed since a date (here: since 2024-05-15).
    since = pd.Timestamp("2024-05-15", tz="UTC")
    recent = df[df["lastmod"] >= since]
    want = sorted(u for u, r in expected.items() if r["lastmod"] and r["lastmod"] >= since)
    assert sorted(recent["url"]) == want and len(want) == 2
    per_section = recent["url"].str.extract(r"^https?://[^/]+/([^/]*)")[0].value_counts()
    assert per_section.to_dict() == {"p1": 1, "p2": 1}


def test_crawled_pages_carry_source_and_title(site: Site) -> None:
    def html(title: str, *hrefs: str) -> str:
        links = "".join(f'<a href="{h}">{h}</a>' for h in hrefs)
        head = f"<!DOCTYPE html><html><head><title>{title}</title></head>"
        return f"{head}<body><p>{title}</p>{links}</body></html>"

    site.add("/", html("Home", "/about", "/blog/"), Content_Type="text/html")
    site.add("/about", html("About us"), Content_Type="text/html")
    site.add("/blog/", html("Blog"), Content_Type="text/html")
    df = sitescout.to_pandas(site.url + "/")
    rows = {r["url"]: r for r in df.to_dict("records")}
    assert set(rows) == {f"{site.url}/", f"{site.url}/about", f"{site.url}/blog/"}
    assert {r["source"] for r in rows.values()} == {"bfs"}
    assert rows[f"{site.url}/about"]["title"] == "About us"
    assert rows[f"{site.url}/"]["depth"] == 0 and rows[f"{site.url}/blog/"]["depth"] == 1
    assert all(pd.isna(r["lastmod"]) for r in rows.values())


def big_site(site: Site, shards: int, per_shard: int) -> int:
    u = site.url
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{u}/s{k}.xml" for k in range(shards)]))
    for k in range(shards):
        locs = [f"{u}/section{i % 7}/page-{k}-{i}" for i in range(per_shard)]
        site.add(f"/s{k}.xml", urlset(locs, extra="<lastmod>2024-01-02</lastmod>"))
    return shards * per_shard


def test_walk_batches_become_record_batches(site: Site) -> None:
    total = big_site(site, shards=5, per_shard=1_000)
    table = sitescout.to_arrow(site.url + "/")
    chunks = table.column("url").chunks
    assert table.num_rows == total
    # One record batch per walk batch (a walk batch holds at most 1,000 entries).
    assert len(chunks) >= total // 1_000
    assert all(0 < len(c) <= 1_000 for c in chunks)


def live_blocks(fn: Any) -> int:
    """Memory blocks the interpreter holds for what `fn` returns: one per Python object (and per
    buffer), whatever its size."""
    gc.collect()
    before = sys.getallocatedblocks()
    result = fn()
    gc.collect()
    held = sys.getallocatedblocks() - before
    del result
    return held


def test_python_objects_grow_per_batch_not_per_url(site: Site) -> None:
    """4x the URLs: the Python objects a table holds barely grow (each column of a batch is a few
    buffers the core laid out, which Arrow wraps without a copy), while a list of entries holds
    several objects per URL."""
    u = site.url
    per_shard, small, large = 250, 16, 64
    for k in range(large):
        locs = [f"{u}/section{i % 7}/page-{k}-{i}" for i in range(per_shard)]
        site.add(f"/s{k}.xml", urlset(locs, extra="<lastmod>2024-01-02</lastmod>"))
    for name, shards in (("small", small), ("large", large)):
        site.add(f"/{name}.xml", sitemapindex([f"{u}/s{k}.xml" for k in range(shards)]))
    assert sitescout.to_arrow(u + "/small.xml").num_rows == small * per_shard  # warm-up

    def table(name: str) -> int:
        return live_blocks(lambda: sitescout.to_arrow(f"{u}/{name}.xml"))

    def entries(name: str) -> int:
        return live_blocks(lambda: list(sitescout.iter_urls(f"{u}/{name}.xml")))

    table_growth = table("large") - table("small")
    list_growth = entries("large") - entries("small")
    extra_urls = (large - small) * per_shard
    assert list_growth > extra_urls * 2, list_growth  # the yardstick: an Entry and its strs
    # A table holds a few dozen objects per batch of a shard's 250 URLs, never one per URL.
    assert table_growth < extra_urls // 2, (table_growth, list_growth)


def test_parquet_file_has_the_same_schema_and_rows(site: Site, tmp_path: Path) -> None:
    make_site(site)
    out = tmp_path / "inv.parquet"
    result = CliRunner().invoke(app, ["urls", site.url + "/", "-f", "parquet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = sitescout.to_arrow(site.url + "/")
    written = pq.read_table(out)
    assert written.schema == table.schema
    assert sorted(written.to_pylist(), key=lambda r: r["url"]) == sorted(
        table.to_pylist(), key=lambda r: r["url"]
    )


async def test_async_twins_inside_an_event_loop(site: Site) -> None:
    expected = make_site(site)
    table = await sitescout.to_arrow_async(site.url + "/", max_fetches=10)
    assert sorted(table.column("url").to_pylist()) == sorted(expected)
    df = await sitescout.to_pandas_async(site.url + "/")
    assert len(df) == len(expected)
    with pytest.raises(UsageError, match="to_arrow_async"):
        sitescout.to_arrow(site.url + "/")
    with pytest.raises(UsageError, match="to_pandas_async"):
        sitescout.to_pandas(site.url + "/")


def test_bad_keywords_are_usage_errors_before_any_request(site: Site) -> None:
    make_site(site)
    with pytest.raises(UsageError, match="max_fetches"):
        sitescout.to_arrow(site.url + "/", max_fetchez=3)
    with pytest.raises(UsageError):
        sitescout.to_pandas("ftp://example.com/")
    assert site.total_hits() == 0


def test_budgets_apply_and_partial_is_logged(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    total = big_site(site, shards=3, per_shard=100)
    with caplog.at_level("WARNING", logger="sitescout"):
        table = asyncio.run(sitescout.to_arrow_async(site.url + "/", max_urls=50))
    assert 50 <= table.num_rows < total
    assert any("partial result" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("hidden", "call", "needs"),
    [
        ("pyarrow", "to_arrow", "pyarrow"),
        ("pandas", "to_pandas", "pandas"),
        ("pyarrow", "to_pandas", "pyarrow"),
    ],
)
def test_without_the_extra_a_usage_error_names_the_install(
    site: Site, hidden: str, call: str, needs: str
) -> None:
    make_site(site)
    # A fresh interpreter where the package cannot be imported, as on a machine without it.
    code = (
        "import sys\n"
        f"sys.modules[{hidden!r}] = None\n"
        "import sitescout\n"
        "try:\n"
        f"    sitescout.{call}({site.url + '/'!r})\n"
        "except sitescout.UsageError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'sitescout[tables]'" in proc.stdout
    assert needs in proc.stdout
    assert site.total_hits() == 0


def two(usual: int) -> st.SearchStrategy[str]:
    """Two digits: mostly a valid field (1..usual), sometimes anything (00, 13, 60, 99)."""
    return st.one_of(st.integers(1, usual), st.integers(0, 99)).map("{:02d}".format)


YEAR_TEXT = st.one_of(st.integers(1970, 2030), st.integers(0, 9999)).map("{:04d}".format)
DATE_TEXT = st.builds("{}-{}-{}".format, YEAR_TEXT, two(12), two(28))
DATETIME_TEXT = st.builds(
    "{}T{}:{}:{}{}{}{}:{}".format,
    DATE_TEXT,
    two(23),
    two(59),
    two(59),
    st.sampled_from(["", ".5", ".123456", ".1234567"]),
    st.sampled_from(["+", "-"]),
    two(14),
    two(59),
)
LASTMOD_TEXT = st.one_of(
    DATETIME_TEXT, DATE_TEXT, st.none(), st.text(max_size=30), st.sampled_from(["2024", "2024-05"])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LASTMOD_TEXT, max_size=20))
def test_arrow_lastmod_parsing_agrees_with_the_rule(values: list[str | None]) -> None:
    """Arrow parses the common shapes in bulk; the per-value rule must give the same instants."""
    convert = BatchConverter()
    fast = convert.lastmods(pa.array(values, pa.string())).cast(pa.int64()).to_pylist()
    assert fast == [convert.micros(v) for v in values]


def by_entries(convert: BatchConverter, entries: list[Entry]) -> Any:
    """The record batch built cell by cell from entries, as before the core laid out buffers."""
    raw = [e.lastmod for e in entries]
    columns = [
        [e.url for e in entries],
        convert.lastmods(pa.array(raw, pa.string())),
        raw,
        [e.priority for e in entries],
        [e.changefreq for e in entries],
        [e.hreflang for e in entries],
        [e.alternate_of for e in entries],
        [e.sitemap for e in entries],
        [e.depth for e in entries],
        [e.source for e in entries],
        [e.title for e in entries],
        [e.md_url for e in entries],
        [list(e.sources) if e.sources else None for e in entries],
    ]
    arrays = [
        v if isinstance(v, pa.Array) else pa.array(v, type=f.type)
        for v, f in zip(columns, convert.schema, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=convert.schema)


TEXT = st.one_of(st.none(), st.text(max_size=12))
ENTRIES = st.builds(
    Entry,
    url=st.text(min_size=1, max_size=30),
    lastmod=LASTMOD_TEXT,
    priority=st.one_of(st.none(), st.floats(allow_nan=False), st.just(-0.0)),
    changefreq=TEXT,
    sitemap=st.text(max_size=20),
    depth=st.integers(min_value=0, max_value=2**31 - 1),
    hreflang=TEXT,
    alternate_of=TEXT,
    source=st.sampled_from(["sitemap", "bfs", "llms.txt"]),
    title=TEXT,
    md_url=TEXT,
    sources=st.lists(st.sampled_from(["sitemap", "bfs", "llms.txt"]), max_size=3).map(tuple),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(ENTRIES, max_size=40))
def test_record_batches_from_core_buffers_equal_those_built_cell_by_cell(
    entries: list[Entry],
) -> None:
    """Every column of every row, nulls, non-ASCII text, empty strings and lists included."""
    convert = BatchConverter()
    batch = Batch.from_entries(entries)
    built = convert.convert(batch)
    built.validate(full=True)
    expected = by_entries(convert, batch.entries())
    assert built.equals(expected), (built.to_pylist(), expected.to_pylist())


def test_a_parquet_part_splits_a_batch_where_the_part_fills(tmp_path: Path) -> None:
    rows = [
        Entry(f"https://x.com/{i}", sources=("sitemap", "llms.txt") if i % 3 else ())
        for i in range(25)
    ]
    parts = Parts(tmp_path, hash_key=b"k" * 16)
    parts_rows = 10
    for start in range(0, 25, 7):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("sitescout._batch.parts.PART_ROWS", parts_rows)
            parts.write(Batch.from_entries(rows[start : start + 7]))
    done = parts.close()
    assert [p.rows for p in done] == [10, 10, 5]
    read = [pq.read_table(p.path) for p in done]
    assert [u for t in read for u in t.column("url").to_pylist()] == [e.url for e in rows]
    assert read[0].column("sources").to_pylist()[:3] == [
        None,
        ["sitemap", "llms.txt"],
        ["sitemap", "llms.txt"],
    ]
    assert [Path(p.hashes or "").stat().st_size for p in done] == [80, 80, 40]


@pytest.mark.parametrize(
    "value",
    [
        "0000-01-01",  # Arrow reads year 0, Python has none
        "2024-02-30",
        "2024-05-01T24:00:00+00:00",
        "2016-12-31T23:59:60+00:00",  # a leap second
        "2024-05-01T10:00:00+24:00",
        "9999-12-31T23:59:59.999999+00:00",  # exact to the microsecond, unlike float seconds
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "1969-12-31T23:59:59.5+00:00",
    ],
)
def test_lastmod_edges_agree_alone_and_in_a_batch(value: str) -> None:
    convert = BatchConverter()
    expected = convert.micros(value)
    for batch in ([value], ["2024-05-01", value, "2024-05-01T10:00:00+02:00"]):
        stamps = convert.lastmods(pa.array(batch, pa.string())).cast(pa.int64()).to_pylist()
        assert stamps == [convert.micros(v) for v in batch]
        assert stamps[batch.index(value)] == expected

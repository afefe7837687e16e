"""The batch pipeline's rules without a cluster: the site list, partition keys, markers read
back (untrusted), cross-part de-duplication in bounded passes, and sites.parquet."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from pathlib import Path

import pytest

from sitescout import _batch
from sitescout._batch import (
    MARKER,
    Part,
    SiteLine,
    SiteResult,
    complete_result,
    duplicate_rows,
    partition_name,
    read_sites,
    site_key,
    write_sites,
)
from sitescout._core import SeenSet
from sitescout._errors import UsageError
from tests.scaling import assert_linear

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pads = pytest.importorskip("pyarrow.dataset")


def urls_of(lines: list[SiteLine]) -> list[str]:
    return [s.url for s in lines if s.problem is None]


# -- the site list ------------------------------------------------------------------------------


def test_plain_list_skips_comments_and_blanks_and_adds_https_to_domains() -> None:
    text = (
        "\ufeff# seeds\n\nexample.com\n  https://b.example/docs/  \n# more\nhttp://c.example:8080\n"
    )
    got = list(read_sites(text.splitlines()))
    assert urls_of(got) == [
        "https://example.com/",
        "https://b.example/docs/",
        "http://c.example:8080/",
    ]
    assert [s.line for s in got] == [3, 4, 6]


def test_csv_with_a_url_column() -> None:
    text = 'name,URL,notes\n"Acme, Inc",acme.example,"a, b"\nBeta,https://beta.example/x,\nGamma\n'
    got = list(read_sites(text.splitlines()))
    assert urls_of(got) == ["https://acme.example/", "https://beta.example/x"]
    assert [s.problem for s in got if s.problem] == ["no value in the url column"]


def test_single_url_header_is_a_csv_header() -> None:
    assert urls_of(list(read_sites(["url", "a.example", "b.example"]))) == [
        "https://a.example/",
        "https://b.example/",
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("ftp://x.example/", "not an http(s) URL"),
        ("two words.example", "not a site URL"),
        ("https://", "not a site URL"),
        ("x" * (_batch.MAX_LINE + 1), f"line longer than {_batch.MAX_LINE} characters"),
    ],
)
def test_lines_that_are_not_sites_come_back_with_the_reason(line: str, problem: str) -> None:
    (got,) = list(read_sites([line]))
    assert got.problem is not None and got.problem.startswith(problem)
    assert len(got.url) <= 201


def test_a_list_longer_than_the_limit_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batch.sites, "MAX_SITES", 3)
    got = list(read_sites([f"s{i}.example" for i in range(10)]))
    assert len(urls_of(got)) == 3
    assert got[-1].problem == "more than 3 sites; the rest are ignored"


def test_a_huge_line_in_a_file_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    path = tmp_path / "sites.txt"
    path.write_text("a.example\n" + "x" * (50 * _batch.MAX_LINE) + "\nb.example\n")
    with path.open(encoding="utf-8") as f:
        got = list(read_sites(f))
    assert urls_of(got) == ["https://a.example/", "https://b.example/"]
    assert got[1].problem == f"line longer than {_batch.MAX_LINE} characters"
    assert len(got[1].url) < 100


@pytest.mark.scaling
@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda n: [f"site{i}.example" for i in range(n)], id="many-lines"),
        pytest.param(lambda n: ["x" * (40 * n)], id="one-long-line"),
        pytest.param(lambda n: ["url"] + [f'"a,{i}",b{i}.example' for i in range(n)], id="csv"),
    ],
)
def test_reading_the_list_is_linear(shape: object) -> None:
    assert callable(shape)
    assert_linear(shape, lambda lines: list(read_sites(lines)), 5_000)


# -- partition keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://Example.COM/", "example.com"),
        ("http://127.0.0.2:8080/", "127.0.0.2:8080"),
        ("https://example.com/blog/", "example.com/blog/"),
        ("https://example.com/a%20b?x=1", "example.com/a%20b"),
    ],
)
def test_site_key(url: str, key: str) -> None:
    assert site_key(url) == key


def test_long_keys_are_cut_and_stay_distinct() -> None:
    a = site_key("https://example.com/" + "a" * 400 + "/1")
    b = site_key("https://example.com/" + "a" * 400 + "/2")
    assert a != b
    for key in (a, b):
        assert len(partition_name(key)) <= len("site=") + _batch.MAX_KEY


def test_partition_names_decode_to_the_key_in_arrow(tmp_path: Path) -> None:
    keys = ["127.0.0.2:8080", "example.com/blog/", "ex.com/a%20b=c", "bücher.example"]
    for n, key in enumerate(keys):
        d = tmp_path / partition_name(key)
        d.mkdir()
        pq.write_table(pa.table({"url": [f"u{n}"]}), d / "part-0.parquet")
        (d / MARKER).write_text("{}")
    table = pads.dataset(tmp_path, format="parquet", partitioning="hive").to_table()
    assert sorted(zip(table["site"].to_pylist(), table["url"].to_pylist(), strict=True)) == sorted(
        (key, f"u{n}") for n, key in enumerate(keys)
    )


# -- markers read back ---------------------------------------------------------------------------


def result() -> SiteResult:
    from datetime import UTC, datetime

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return SiteResult(
        "a.example",
        "https://a.example/",
        status="complete",
        source="robots.txt",
        urls=10,
        budgets_hit=["max_urls"],
        started_at=now,
        finished_at=now,
        seconds=1.5,
    )


def write_marker(out: Path, key: str, data: object) -> None:
    d = out / "urls" / partition_name(key)
    d.mkdir(parents=True)
    (d / MARKER).write_text(json.dumps(data))


def test_a_marker_round_trips(tmp_path: Path) -> None:
    write_marker(tmp_path, "a.example", result().to_json())
    assert complete_result(tmp_path, "a.example") == result()


@pytest.mark.parametrize(
    "change",
    [
        {"urls": -1},
        {"urls": True},
        {"urls": "10"},
        {"status": None},
        {"budgets_hit": "max_urls"},
        {"budgets_hit": [1]},
        {"started_at": "yesterday"},
        {"started_at": "2026-01-02T03:04:05"},
        {"site": "b.example"},
        {"partial": 0},
    ],
)
def test_a_marker_of_the_wrong_shape_means_not_complete(
    tmp_path: Path, change: dict[str, object]
) -> None:
    write_marker(tmp_path, "a.example", result().to_json() | change)
    assert complete_result(tmp_path, "a.example") is None


@pytest.mark.parametrize("data", [[], None, "x", 5])
def test_a_marker_that_is_not_an_object_means_not_complete(tmp_path: Path, data: object) -> None:
    write_marker(tmp_path, "a.example", data)
    assert complete_result(tmp_path, "a.example") is None


def test_broken_or_huge_markers_mean_not_complete(tmp_path: Path) -> None:
    d = tmp_path / "urls" / partition_name("a.example")
    d.mkdir(parents=True)
    (d / MARKER).write_bytes(b"\xff{not json")
    assert complete_result(tmp_path, "a.example") is None
    (d / MARKER).write_text(json.dumps(result().to_json() | {"error_message": "x" * (2 << 20)}))
    assert complete_result(tmp_path, "a.example") is None
    assert complete_result(tmp_path, "missing.example") is None


# -- de-duplication across parts ----------------------------------------------------------------


def make_parts(tmp_path: Path, groups: list[list[str]], key: bytes) -> list[Part]:
    parts = []
    for n, urls in enumerate(groups):
        path = tmp_path / f"h{n}.hashes"
        path.write_bytes(
            b"".join(hashlib.blake2b(u.encode(), digest_size=8, key=key).digest() for u in urls)
        )
        parts.append(Part(str(tmp_path / f"p{n}.parquet"), len(urls), str(path)))
    return parts


def test_duplicates_are_the_later_listings(tmp_path: Path) -> None:
    groups = [["a", "b", "c"], ["c", "d", "a"], [], ["d", "e", "b", "e"]]
    drops = duplicate_rows(make_parts(tmp_path, groups, b"k" * 16))
    assert drops == [[], [0, 2], [], [0, 2, 3]]


def test_many_passes_give_the_same_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    rng = random.Random(7)
    sizes_ = [rng.randrange(500, 1500) for _ in range(8)]
    groups = [[f"u{rng.randrange(3000)}" for _ in range(n)] for n in sizes_]
    parts = make_parts(tmp_path, groups, os.urandom(16))
    one = duplicate_rows(parts)
    sizes: list[int] = []
    real = SeenSet

    class Counting:
        def __init__(self, capacity: int) -> None:
            self.inner = real(capacity)
            sizes.append(0)

        def add_hashes(self, data: bytes, slices: int, slice_: int) -> bytes:
            marks = self.inner.add_hashes(data, slices, slice_)
            sizes[-1] = len(self.inner)
            return marks

    monkeypatch.setattr(_batch.parts, "PASS_HASHES", 1000)
    monkeypatch.setattr(_batch.parts, "SeenSet", Counting)
    many = duplicate_rows(parts)
    assert many == one
    total = sum(len(g) for g in groups)
    assert len(sizes) == -(-total // 1000)  # one pass per slice of the hash space
    assert max(sizes) < 1000 * 1.5  # each pass holds about its share, not the site
    seen: set[str] = set()
    for group, dropped in zip(groups, one, strict=True):
        for row, url in enumerate(group):
            assert (row in dropped) == (url in seen)
            seen.add(url)


def test_add_hashes_marks_new_seen_and_other_slices() -> None:
    s = SeenSet()
    data = struct.pack("<5Q", 4, 6, 4, 7, 0)
    assert s.add_hashes(data) == bytes([1, 1, 0, 1, 1])
    assert SeenSet().add_hashes(data, 2, 1) == bytes([2, 2, 2, 1, 2])
    for bad in ((b"1234567", 1, 0), (data, 0, 0), (data, 2, 2)):
        with pytest.raises(ValueError):
            SeenSet().add_hashes(*bad)


# -- sites.parquet ------------------------------------------------------------------------------


def test_sites_parquet_holds_one_typed_row_per_site(tmp_path: Path) -> None:
    failed = SiteResult(None, "ftp://x", status="failed", error_class="UsageError")
    write_sites(tmp_path / "sites.parquet", [result(), failed])
    table = pq.read_table(tmp_path / "sites.parquet")
    assert table.num_rows == 2
    assert table.schema.field("started_at").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("budgets_hit").type == pa.list_(pa.string())
    rows = table.to_pylist()
    assert rows[0]["urls"] == 10 and rows[0]["budgets_hit"] == ["max_urls"]
    assert rows[1]["site"] is None and rows[1]["error_class"] == "UsageError"
    assert not list(tmp_path.glob(".*tmp"))


# -- before any request --------------------------------------------------------------------------


def test_without_dask_the_batch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(UsageError, match=r"sitescout\[dask\]"):
        _batch.BatchRun(["a.example"], "/nonexistent/never-created")


def test_bad_options_are_refused_up_front(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    for kwargs in ({"fanout": 0}, {"fanout": True}, {"workers": 0}, {"concurency": 2}):
        with pytest.raises(UsageError):
            _batch.BatchRun(["a.example"], tmp_path, **kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "urls").exists()


def test_one_batch_at_a_time_per_directory(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from sitescout._project import lock_directory

    fd = lock_directory(tmp_path, ".batch.lock", "batch")
    try:
        with pytest.raises(UsageError, match="another batch is running"):
            _batch.BatchRun(["a.example"], tmp_path).run()
    finally:
        os.close(fd)

"""Saved inventories read back (`_inventory`): every format, from files and streams, hostile
rows skipped and counted by position, files that are not inventories refused with one line.

The reader is `report`'s and `diff`'s; `test_report.py` holds `report`'s use of it to what it
always did (strict CSV), this file holds the reader itself."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sitescout._errors import UsageError
from sitescout._inventory import (
    CHUNK,
    LINE_LIMIT,
    TEXT_COLUMNS,
    Inventory,
    sniff_format,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

URLS = [f"https://ex.com/docs/{i}" for i in range(5)]


def read(
    source: Any, columns: tuple[str, ...] = ("url", "lastmod"), **options: Any
) -> tuple[Inventory, dict[str, list[Any]]]:
    """Read a whole inventory; the columns joined across chunks."""
    inventory = Inventory(source)
    joined: dict[str, list[Any]] = {c: [] for c in ("url", *columns)}
    for chunk in inventory.chunks(columns, **options):
        assert len({len(v) for v in chunk.values()}) == 1  # every column as long as the others
        for name, values in chunk.items():
            joined[name].extend(values)
    return inventory, joined


def write_lines(path: Path, lines: list[str | bytes]) -> Path:
    with path.open("wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else line.encode())
            f.write(b"\n")
    return path


class Pipe(io.RawIOBase):
    """A stream as stdin is one: not seekable, and a few bytes per read."""

    def __init__(self, data: bytes, step: int = 7) -> None:
        self.data = data
        self.step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.step, len(self.data))
        buffer[:n] = self.data[:n]
        self.data = self.data[n:]
        return n


# -- the format ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "name", "expected"),
    [
        (b"PAR1\x15\x04", "inv.jsonl", "parquet"),  # the magic wins over the name
        (b"PAR1", "", "parquet"),
        (b'{"url": "x"}', "inv.csv", "csv"),  # the name wins over the content
        (b"https://ex.com/a\n", "inv.JSONL", "jsonl"),
        (b"", "inv.ndjson", "jsonl"),
        (b"", "inv.json", "jsonl"),
        (b"", "urls.txt", "txt"),
        (b"", "x.parquet", "parquet"),
        (b'\xef\xbb\xbf\n  {"url": "x"}', "", "jsonl"),
        (b"url,lastmod,priority\nhttps://ex.com/,,\n", "", "csv"),
        (b"lastmod,url\r\n", "inventory.data", "csv"),
        (b"url\nhttps://ex.com/\n", "", "txt"),  # one column: a URL list with a title line
        (b"https://ex.com/a\nhttps://ex.com/b\n", "", "txt"),
        (b'<?xml version="1.0"?><urlset>', "sitemap.xml", "txt"),
        (b"", "", "txt"),
    ],
)
def test_the_format_comes_from_magic_then_suffix_then_content(
    head: bytes, name: str, expected: str
) -> None:
    assert sniff_format(head, name) == expected


def test_report_reads_what_would_be_plain_urls_as_json_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "inv.txt", [json.dumps({"url": URLS[0]})])
    assert Inventory(path).format == "txt"
    assert Inventory(path, plain_urls=False).format == "jsonl"


# -- every format, the same rows ------------------------------------------------------------------


ROWS: list[dict[str, Any]] = [
    {"url": URLS[0], "lastmod": "2024-01-01", "sitemap": "https://ex.com/s.xml"},
    {"url": URLS[1], "lastmod": None, "hreflang": "de", "alternate_of": URLS[0]},
    {"url": URLS[2], "lastmod": "2024-02-03T10:00:00+00:00"},
]


def write_format(tmp_path: Path, fmt: str, rows: list[dict[str, Any]] = ROWS) -> Path:
    path = tmp_path / f"inv.{fmt}"
    if fmt == "jsonl":
        write_lines(path, [json.dumps(r) for r in rows])
    elif fmt == "csv":
        lines = ["url,lastmod,priority,sitemap,hreflang,alternate_of"]
        for r in rows:
            cells = [r.get(c) or "" for c in ("url", "lastmod", "priority")]
            cells += [r.get(c) or "" for c in ("sitemap", "hreflang", "alternate_of")]
            lines.append(",".join(cells))
        write_lines(path, [*lines])
    elif fmt == "txt":
        write_lines(path, [r["url"] for r in rows])
    else:
        pq.write_table(
            pa.table({c: [r.get(c) for r in rows] for c in ("url", "lastmod", "hreflang")}), path
        )
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt", "parquet"])
def test_every_format_gives_the_same_rows(tmp_path: Path, fmt: str) -> None:
    inventory, cols = read(write_format(tmp_path, fmt), ("url", "lastmod", "hreflang"))
    assert cols["url"] == URLS[:3]
    assert inventory.info.rows == 3 and not inventory.info.skipped
    if fmt == "txt":
        assert cols["lastmod"] == [None] * 3 and inventory.lacks >= {"lastmod", "hreflang"}
        assert inventory.info.format == "plain URLs"
    else:
        assert cols["lastmod"] == ["2024-01-01", None, "2024-02-03T10:00:00+00:00"]
        assert cols["hreflang"] == [None, "de", None]
        assert "lastmod" not in inventory.lacks


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt", "parquet"])
def test_a_stream_reads_like_the_file(tmp_path: Path, fmt: str) -> None:
    data = write_format(tmp_path, fmt).read_bytes()
    stream = io.BufferedReader(Pipe(data))
    inventory, cols = read(stream)
    assert inventory.format == fmt and cols["url"] == URLS[:3]
    assert inventory.estimated_rows() is None  # a stream's size is not known ahead


def test_chunks_are_cut_every_chunk_rows_of_good_rows(tmp_path: Path) -> None:
    lines: list[str | bytes] = []
    for i in range(CHUNK * 2 + 5):
        lines.append(json.dumps({"url": f"https://ex.com/{i}"}))
        if i % 1000 == 0:
            lines.append("{cut")
    inventory = Inventory(write_lines(tmp_path / "inv.jsonl", lines))
    sizes = [len(c["url"]) for c in inventory.chunks(("url",))]
    assert sizes == [CHUNK, CHUNK, 5]
    assert inventory.info.skipped["not valid JSON (a cut or damaged line)"] == 21


def test_parquet_lastmod_from_the_raw_text_or_the_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "inv.parquet"
    stamp = pa.array([1_700_000_000_000_000, None], pa.timestamp("us", tz="UTC"))
    raw = ["2023-11-14T23:13:20+01:00", "not a date"]
    pq.write_table(pa.table({"url": URLS[:2], "lastmod": stamp, "lastmod_raw": raw}), path)
    _inv, cols = read(path, raw_lastmod=True)
    assert cols["lastmod"] == raw  # what the JSON lines of the same walk say
    _inv, cols = read(path)
    assert cols["lastmod"][0].startswith("2023-11-14 22:13:20") and cols["lastmod"][1] is None


def test_estimated_rows_are_near_the_real_count(tmp_path: Path) -> None:
    lines: list[str | bytes] = [json.dumps({"url": f"https://ex.com/p/{i}"}) for i in range(20_000)]
    path = write_lines(tmp_path / "inv.jsonl", lines)
    estimate = Inventory(path).estimated_rows()
    assert estimate is not None and 10_000 <= estimate <= 40_000
    small = write_lines(tmp_path / "small.jsonl", lines[:3])
    assert Inventory(small).estimated_rows() == 4
    parquet = tmp_path / "inv.parquet"
    pq.write_table(pa.table({"url": [f"https://ex.com/{i}" for i in range(1234)]}), parquet)
    assert Inventory(parquet).estimated_rows() == 1234


# -- hostile rows -------------------------------------------------------------------------------


def test_hostile_json_lines_are_skipped_counted_and_placed(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "inv.jsonl",
        [
            json.dumps({"url": URLS[0]}),
            '{"url": "https://ex.com/cut',  # line 2
            '{"url": 5}',  # 3
            "",  # blank lines are no rows
            '{"url": "https://ex.com/x", "lastmod": 2024}',  # 5
            '["https://ex.com/list"]',  # 6
            "[" * 100_000,  # 7: nesting past the recursion limit
            b"\xff\xfe\x00garbage",  # 8
            json.dumps({"url": "https://ex.com/" + "a" * (LINE_LIMIT + 5)}),  # 9: over 1 MiB
            json.dumps({"url": URLS[1], "hreflang": 5}),  # 10: hreflang not asked for here
            json.dumps({"url": "   "}),  # 11
        ],
    )
    inventory, cols = read(path)
    assert cols["url"] == URLS[:2]
    info = inventory.info
    assert info.skipped == {
        "not valid JSON (a cut or damaged line)": 3,
        "no url": 2,
        "lastmod is not text": 1,
        "not a JSON object": 1,
        "line longer than 1 MiB": 1,
    }
    assert info.examples == [
        ("line 2", "not valid JSON (a cut or damaged line)"),
        ("line 3", "no url"),
        ("line 5", "lastmod is not text"),
        ("line 6", "not a JSON object"),
        ("line 7", "not valid JSON (a cut or damaged line)"),
    ]
    # The columns asked for are the ones judged: report's five reject line 10.
    inventory, cols = read(path, TEXT_COLUMNS)
    assert cols["url"] == URLS[:1] and inventory.info.skipped["hreflang is not text"] == 1


def test_damaged_csv_lines_are_skipped_unless_strict(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "inv.csv",
        [
            b"\xef\xbb\xbfurl,lastmod",  # a byte-order mark, as spreadsheets write
            f"{URLS[0]},2024-01-01".encode(),
            b"https://ex.com/\xff\xfe,2024-01-01",  # line 3: not UTF-8
            b"https://ex.com/big," + b"x" * 300_000,  # line 4: a field over the csv module's cap
            b"https://ex.com/huge," + b"y" * (LINE_LIMIT + 10),  # line 5: over 1 MiB
            b",2024-01-01",  # line 6: no url
            f"{URLS[1]}".encode(),  # a short row: lastmod missing
        ],
    )
    inventory, cols = read(path, strict=False)
    assert cols == {"url": URLS[:2], "lastmod": ["2024-01-01", None]}
    info = inventory.info
    assert info.skipped["not UTF-8 text"] == 1 and info.skipped["line longer than 1 MiB"] == 1
    assert info.skipped["no url"] == 1
    assert sum(n for why, n in info.skipped.items() if why.startswith("not CSV")) == 1
    assert [where for where, _why in info.examples] == ["line 3", "line 4", "line 5", "line 6"]
    with pytest.raises(UsageError, match="not UTF-8"):  # strict: refused whole
        read(path)
    bom = write_lines(tmp_path / "bom.csv", [b"\xef\xbb\xbfurl", URLS[0].encode()])
    with pytest.raises(UsageError, match="no url column"):  # strict: the BOM stays in the name
        read(bom)
    assert read(bom, strict=False)[1]["url"] == URLS[:1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"url\nhttps://ex.com/\xff\xfe\n", "not UTF-8"),
        (b"url\n" + b"x" * 300_000 + b"\n", "as CSV at line"),
    ],
)
def test_strict_csv_refuses_the_file_as_report_always_did(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "inv.csv"
    path.write_bytes(content)
    with pytest.raises(UsageError, match=message):
        read(path)


def test_plain_url_lines_that_are_not_urls_are_skipped(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "urls.txt",
        [
            b"\xef\xbb\xbf" + URLS[0].encode(),
            b"",
            b"  " + URLS[1].encode() + b"\r",
            b"# a comment",
            b"https://ex.com/a b",
            b"mailto:x@ex.com",
            b"https://ex.com/\xff",
        ],
    )
    inventory, cols = read(path)
    assert cols["url"] == URLS[:2]
    assert inventory.info.skipped == {"not an http(s) URL": 3, "not UTF-8 text": 1}
    assert inventory.info.examples[0] == ("line 4", "not an http(s) URL")


def test_parquet_rows_without_a_url_are_placed_by_row(tmp_path: Path) -> None:
    path = tmp_path / "inv.parquet"
    pq.write_table(pa.table({"url": [URLS[0], None, " ", URLS[1]]}), path)
    inventory, cols = read(path)
    assert cols["url"] == URLS[:2]
    assert inventory.info.examples == [("row 2", "no url"), ("row 3", "no url")]
    assert inventory.lacks == {"lastmod"}


# -- files that are not inventories ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "holds no inventory rows"),
        ("junk.jsonl", b"\x00\x01 not json\n{broken\n", "holds no inventory rows (2 not valid"),
        ("bad.parquet", b"PAR1 this is not parquet PAR1", "cannot read"),
        ("nourl.csv", b"lastmod,sitemap\n2024-01-01,x\n", "no url column"),
        ("header.csv", b"url,lastmod\n", "holds no inventory rows"),
        ("page.html", b"<!doctype html><title>x</title>\n", "holds no inventory rows (1 not an"),
    ],
)
def test_a_file_that_is_not_an_inventory_is_one_usage_error(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UsageError, match=re.escape(message)) as caught:
        read(path)
    assert "\n" not in str(caught.value)


def test_missing_files_and_directories_are_refused_when_opened(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such inventory file"):
        Inventory(tmp_path / "missing.jsonl")
    with pytest.raises(UsageError, match="is a directory"):
        Inventory(tmp_path)


def test_parquet_without_a_text_url_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"url": [1, 2]}), path)
    with pytest.raises(UsageError, match="no text url column"):
        read(path)


def test_an_inventory_is_read_once(tmp_path: Path) -> None:
    inventory = Inventory(write_format(tmp_path, "jsonl"))
    list(inventory.chunks())
    with pytest.raises(UsageError, match="already read"):
        list(inventory.chunks())

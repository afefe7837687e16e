"""`sitescout.diff`: changes between two saved inventories, in every format, in bounded memory.

The partitioned path (rows hashed into temporary files, sorted runs merged) is forced with tiny
partitions and held to the in-memory path and to a plain model of the rules (hypothesis)."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitescout
from sitescout._diff import Change, ChangeGroups, Diff, compare, same_lastmod, spill
from sitescout._errors import UsageError
from sitescout._groups import OTHER, group_key
from sitescout._urls import normalize_url

from .scaling import assert_linear

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

Row = tuple[str, str | None]


def write(path: Path, rows: list[Row], fmt: str | None = None) -> Path:
    """An inventory of (url, lastmod) rows in the format its suffix names."""
    fmt = fmt or path.suffix.lstrip(".")
    if fmt == "jsonl":
        path.write_text("".join(json.dumps({"url": u, "lastmod": m}) + "\n" for u, m in rows))
    elif fmt == "csv":
        body = "".join(f"{u},{m or ''},,\n" for u, m in rows)
        path.write_text("url,lastmod,priority,sitemap\n" + body)
    elif fmt == "txt":
        path.write_text("".join(f"{u}\n" for u, _m in rows))
    else:
        table = pa.table({"url": [u for u, _ in rows], "lastmod_raw": [m for _, m in rows]})
        pq.write_table(table, path)
    return path


def changes(old: Any, new: Any, **options: Any) -> list[Change]:
    with Diff(old, new, **options) as found:
        return list(found)


def model(old: list[Row], new: list[Row], lastmods: bool = True) -> list[Change]:
    """The rules, written the plain way: whole dictionaries (last row wins), sorted by URL."""
    before = {normalize_url(u): m for u, m in old}
    after = {normalize_url(u): m for u, m in new}
    out = [Change(u, "added", None, m) for u, m in after.items() if u not in before]
    out += [Change(u, "removed", m, None) for u, m in before.items() if u not in after]
    out += [
        Change(u, "changed", before[u], m)
        for u, m in after.items()
        if lastmods and u in before and not same_lastmod(before[u], m)
    ]
    return sorted(out, key=lambda c: c.url)


OLD: list[Row] = [
    ("https://ex.com/", "2024-01-01"),
    ("https://ex.com/blog/a", "2024-01-01T10:00:00Z"),
    ("https://ex.com/blog/b", "2024-01-02"),
    ("https://ex.com/blog/c", None),
    ("https://ex.com/docs/gone", "2023-12-31"),
    ("https://ex.com/docs/x?a=1&b=2", "2024-03-01"),
]
NEW: list[Row] = [
    ("https://ex.com/blog/b", "2024-02-02"),  # changed
    ("https://ex.com/", "2024-01-01T00:00:00+00:00"),  # the same instant: unchanged
    ("https://ex.com/blog/a", "2024-01-01T12:00:00+02:00"),  # the same instant: unchanged
    ("https://ex.com/blog/c", "2024-05-05"),  # a lastmod appears: changed
    ("https://ex.com/docs/x?a=1&b=2", "2024-03-01"),
    ("https://ex.com/docs/new", None),  # added
]
EXPECTED = [
    Change("https://ex.com/blog/b", "changed", "2024-01-02", "2024-02-02"),
    Change("https://ex.com/blog/c", "changed", None, "2024-05-05"),
    Change("https://ex.com/docs/gone", "removed", "2023-12-31", None),
    Change("https://ex.com/docs/new", "added", None, None),
]


@pytest.mark.parametrize("old_fmt", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("new_fmt", ["jsonl", "csv", "parquet"])
def test_added_removed_changed_in_every_format(tmp_path: Path, old_fmt: str, new_fmt: str) -> None:
    old = write(tmp_path / f"old.{old_fmt}", OLD)
    new = write(tmp_path / f"new.{new_fmt}", NEW)
    found = Diff(old, new)
    assert list(found) == EXPECTED == model(OLD, NEW)
    assert found.counts.added == 1 and found.counts.removed == 1 and found.counts.changed == 2
    assert found.counts.unchanged == 3 and found.lastmods_compared
    assert found.old.rows == 6 and found.new.rows == 6


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt", "parquet"])
def test_identical_inventories_have_no_changes(tmp_path: Path, fmt: str) -> None:
    old = write(tmp_path / f"old.{fmt}", OLD)
    new = write(tmp_path / f"new.{fmt}", list(reversed(OLD)))
    found = Diff(old, new)
    assert list(found) == [] and found.counts.unchanged == 6 and found.counts.changes == 0


@pytest.mark.parametrize("plain", ["old", "new"])
def test_lastmods_on_one_side_only_are_not_compared(tmp_path: Path, plain: str) -> None:
    old = write(tmp_path / ("old.txt" if plain == "old" else "old.jsonl"), OLD)
    new = write(tmp_path / ("new.txt" if plain == "new" else "new.jsonl"), NEW)
    found = Diff(old, new)
    kinds = [(c.url, c.change) for c in found]
    assert kinds == [
        ("https://ex.com/docs/gone", "removed"),
        ("https://ex.com/docs/new", "added"),
    ]
    assert not found.lastmods_compared
    assert found.without_lastmods == [str(old if plain == "old" else new)]
    assert found.counts.unchanged == 5


def test_a_csv_without_a_lastmod_column_has_no_lastmods(tmp_path: Path) -> None:
    old = write(tmp_path / "old.jsonl", OLD)
    new = tmp_path / "new.csv"
    new.write_text("url,sitemap\n" + "".join(f"{u},\n" for u, _ in NEW))
    found = Diff(old, new)
    assert {c.change for c in found} == {"added", "removed"}
    assert found.without_lastmods == [str(new)]


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ("2024-05-01", "2024-05-01", True),
        ("2024-05-01", "2024-05-01T00:00:00Z", True),
        ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00+02:00", True),
        ("2024-05-01T10:00:00.000Z", "2024-05-01T10:00:00+00:00", True),
        ("2024-05", "2024-05-01", True),
        (" 2024-05-01 ", "2024-05-01", True),
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:01Z", False),
        ("2024-05-01", "2024-05-02", False),
        ("2024-05-01", None, False),
        (None, "2024-05-01", False),
        (None, None, True),
        ("last tuesday", " last tuesday ", True),  # not a date: compared as text
        ("last tuesday", "yesterday", False),
        ("2024-02-30", "2024-02-30", True),
        ("2024-02-30", "2024-03-01", False),
    ],
)
def test_same_lastmod(old: str | None, new: str | None, same: bool) -> None:
    assert same_lastmod(old, new) is same
    assert same_lastmod(new, old) is same


def test_urls_match_in_their_normalized_form_and_duplicates_keep_the_last_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = write(
        tmp_path / "old.jsonl",
        [
            ("HTTPS://EX.com/a", "2024-01-01"),
            ("https://ex.com/b", "2024-01-01"),
            ("https://ex.com/b", "2024-01-05"),  # the last row counts
            (" https://ex.com/c?utm_source=x ", "2024-01-01"),
        ],
    )
    new = write(
        tmp_path / "new.jsonl",
        [
            ("https://ex.com/a", "2024-01-01"),
            ("https://ex.com/b", "2024-01-05"),
            ("https://ex.com/c", "2024-01-01"),
            ("https://ex.com/c", "2024-01-01"),
            ("https://ex.com/c", "2024-01-09"),
        ],
    )
    with caplog.at_level(logging.WARNING, logger="sitescout"):
        found = Diff(old, new)
        assert list(found) == [Change("https://ex.com/c", "changed", "2024-01-01", "2024-01-09")]
    assert found.counts.old_duplicates == 1 and found.counts.new_duplicates == 2
    assert f"{new} lists 2 URLs more than once" in caplog.text


def test_hostile_rows_are_skipped_with_a_warning_naming_file_and_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = write(tmp_path / "old.jsonl", OLD)
    new = tmp_path / "new.jsonl"
    lines = [json.dumps({"url": u, "lastmod": m}) for u, m in NEW]
    lines[2:2] = [
        '{"url": "https://ex.com/cut',
        '{"url": 7}',
        '{"url": "https://ex.com/", "lastmod": 1}',
    ]
    lines.append('{"url": "https://ex.com/' + "a" * (2 << 20) + '"}')
    new.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="sitescout"):
        found = Diff(old, new)
        assert list(found) == EXPECTED
    assert sum(found.new.skipped.values()) == 4
    assert f"{new}, line 3: skipped, not valid JSON" in caplog.text
    assert f"{new}, line 4: skipped, no url" in caplog.text
    assert f"{new}, line 5: skipped, lastmod is not text" in caplog.text
    assert f"{new}, line 10: skipped, line longer than 1 MiB" in caplog.text


def test_lone_surrogates_from_json_escapes_come_out_writable(tmp_path: Path) -> None:
    old = write(tmp_path / "old.jsonl", [("https://ex.com/a", "2024-01-01")])
    new = tmp_path / "new.jsonl"
    new.write_text(
        '{"url": "https://ex.com/a", "lastmod": "2024\\ud800"}\n{"url": "not a url \\udfff"}\n'
    )
    found = list(Diff(old, new))
    assert [c.change for c in found] == ["changed", "added"]
    for change in found:
        json.dumps(change.url, ensure_ascii=False).encode("utf-8")
        (change.new_lastmod or "").encode("utf-8")


def test_not_an_inventory_is_a_usage_error_before_any_change(tmp_path: Path) -> None:
    old = write(tmp_path / "old.jsonl", OLD)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01 garbage\n")
    found = Diff(old, bad)
    with pytest.raises(UsageError, match="holds no inventory rows"):
        next(found)
    with pytest.raises(UsageError, match="no such inventory file"):
        Diff(old, tmp_path / "missing.csv")
    with pytest.raises(UsageError, match="spill_rows"):
        Diff(old, old, spill_rows=0)


# -- the partitioned path -------------------------------------------------------------------------


def temp_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*"))


def test_the_partitioned_path_gives_the_in_memory_answer(tmp_path: Path) -> None:
    rng = random.Random(7)
    old_rows = [
        (f"https://ex.com/s{i % 13}/p{i}", f"2024-01-{1 + i % 28:02d}") for i in range(6000)
    ]
    new_rows = [r for r in old_rows if rng.random() > 0.1]
    new_rows = [(u, "2025-01-01" if rng.random() < 0.1 else m) for u, m in new_rows]
    new_rows += [(f"https://ex.com/new/{i}", None) for i in range(700)]
    rng.shuffle(new_rows)
    old = write(tmp_path / "old.jsonl", old_rows)
    new = write(tmp_path / "new.csv", new_rows)
    work = tmp_path / "work"
    work.mkdir()
    whole = Diff(old, new)
    in_memory = list(whole)
    spilled = Diff(old, new, partition_rows=50, spill_rows=100, temp_dir=work)
    seen_files = False
    out = []
    for change in spilled:
        seen_files = seen_files or bool(temp_files(work))
        out.append(change)
    assert seen_files  # it did go to disk: partitions and runs
    assert out == in_memory == model(old_rows, new_rows)
    assert spilled.counts == whole.counts
    assert temp_files(work) == []  # and cleaned up


def test_more_runs_than_can_be_merged_at_once_are_merged_in_passes(tmp_path: Path) -> None:
    old_rows = [(f"https://ex.com/{i}", None) for i in range(3000)]
    new_rows = [(f"https://ex.com/{i}", None) for i in range(1500, 4500)]
    old = write(tmp_path / "old.txt", old_rows)
    new = write(tmp_path / "new.txt", new_rows)
    # 3,000 changes, runs of 10: 300 run files, over MAX_RUNS.
    assert changes(old, new, partition_rows=10, spill_rows=10) == model(old_rows, new_rows)


def test_an_oversized_partition_is_split_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [(f"https://ex.com/{i}", str(i)) for i in range(2000)]
    old = write(tmp_path / "old.jsonl", rows)
    new = write(tmp_path / "new.jsonl", rows[100:] + [(u, "x") for u, _ in rows[:50]])
    # A stream's size is unknown: force one partition for it, far over its aim.
    monkeypatch.setattr(compare, "MAX_PARTITIONS", 1)
    splits: list[int] = []
    real = spill.Partitions.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        splits.append(kwargs.get("salt", 0))
        real(self, *args, **kwargs)

    monkeypatch.setattr(spill.Partitions, "__init__", spy)
    stream = io.BytesIO(old.read_bytes())
    assert changes(stream, new, partition_rows=100, spill_rows=300) == model(
        rows, rows[100:] + [(u, "x") for u, _ in rows[:50]]
    )
    assert splits[0] == 0 and 1 in splits  # split again, with another hash


def test_temporary_files_go_when_the_diff_fails_or_is_left(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    rows = [(f"https://ex.com/{i}", None) for i in range(500)]
    old = write(tmp_path / "old.jsonl", rows)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n" * 50)
    with pytest.raises(UsageError):
        list(Diff(old, bad, spill_rows=10, temp_dir=work))
    assert temp_files(work) == []
    new = write(tmp_path / "new.jsonl", rows[250:])
    with Diff(old, new, partition_rows=10, spill_rows=10, temp_dir=work) as found:
        next(found)
        assert temp_files(work)
    assert temp_files(work) == []


class Interrupting(io.RawIOBase):
    """A stream that raises KeyboardInterrupt (Ctrl-C) once `after` bytes were read."""

    def __init__(self, data: bytes, after: int) -> None:
        self.data = data
        self.after = after

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.after <= 0:
            raise KeyboardInterrupt
        n = min(len(buffer), 4096, len(self.data), self.after)
        buffer[:n] = self.data[:n]
        self.data, self.after = self.data[n:], self.after - n
        return n


def test_ctrl_c_while_reading_leaves_no_temporary_file(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    rows = [(f"https://ex.com/{i}", "2024-01-01") for i in range(5000)]
    old = write(tmp_path / "old.jsonl", rows)
    data = write(tmp_path / "new.jsonl", rows).read_bytes()
    stream = io.BufferedReader(Interrupting(data, len(data) // 2))
    with pytest.raises(KeyboardInterrupt):
        list(Diff(old, stream, spill_rows=100, temp_dir=work))
    assert temp_files(work) == []


URL_PARTS = st.sampled_from(["a", "b", "B", "c", "d%7e", "e/f", "g?x=1", "h?utm_source=z", ""])
LASTMODS = st.sampled_from(
    [None, "2024-01-01", "2024-01-01T00:00:00Z", "2024-01-02", "2024-01-01T02:00:00+02:00", "x"]
)
ROWS = st.lists(
    st.tuples(
        st.builds(
            lambda h, p: f"{h}/{p}",
            st.sampled_from(["https://ex.com", "http://EX.com:80", "https://b.org"]),
            URL_PARTS,
        ),
        LASTMODS,
    ),
    max_size=40,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=ROWS, new=ROWS, partition_rows=st.integers(1, 8), spill_rows=st.integers(1, 20))
def test_partitioned_and_in_memory_paths_agree_with_the_model(
    old: list[Row], new: list[Row], partition_rows: int, spill_rows: int
) -> None:
    old = old or [("https://ex.com/only", None)]  # an inventory has a row
    new = new or [("https://ex.com/only", None)]
    with tempfile.TemporaryDirectory() as tmp:
        a = write(Path(tmp) / "old.jsonl", old)
        b = write(Path(tmp) / "new.csv", new)
        small = changes(a, b, partition_rows=partition_rows, spill_rows=spill_rows)
        assert small == changes(a, b) == model(old, new)


def test_the_order_is_sorted_by_url_whatever_the_input_order(tmp_path: Path) -> None:
    rows = [(f"https://ex.com/{random.Random(i).randrange(10**6)}/{i}", None) for i in range(3000)]
    shuffled = list(rows)
    random.Random(1).shuffle(shuffled)
    a = write(tmp_path / "a.jsonl", rows[:1000])
    b = write(tmp_path / "b.jsonl", rows[500:])
    c = write(tmp_path / "c.jsonl", list(reversed(rows[500:])))
    first = [x.url for x in changes(a, b, partition_rows=100, spill_rows=200)]
    assert first == sorted(first)
    assert first == [x.url for x in changes(a, c)]


# -- groups, the DataFrame ------------------------------------------------------------------------


def test_change_groups_count_by_group_key_with_the_shortest_examples() -> None:
    found = [
        Change("https://ex.com/blog/2024/long-post", "added", None, None),
        Change("https://ex.com/blog/", "added", None, None),
        Change("https://ex.com/blog/b", "added", None, None),
        Change("https://ex.com/blog/a", "added", None, None),
        Change("https://ex.com/blog/x", "removed", None, None),
        Change("https://ex.com/docs/x", "changed", "1", "2"),
        Change("https://ex.com/", "changed", "1", "2"),
        Change("javascript:alert(1)", "removed", None, None),
    ]
    groups = ChangeGroups()
    for change in found:
        groups.add(change)
    result = groups.groups()
    assert [(g.prefix, g.added, g.removed, g.changed) for g in result] == [
        ("/blog/*", 4, 1, 0),
        ("/", 0, 0, 1),
        ("/docs/*", 0, 0, 1),
        (OTHER, 0, 1, 0),
    ]
    assert result[0].examples["added"] == (
        "https://ex.com/blog/",
        "https://ex.com/blog/a",
        "https://ex.com/blog/b",
    )
    for g in result[:-1]:
        for urls in g.examples.values():
            assert all(group_key(u) == g.prefix for u in urls)
    deep = ChangeGroups(depth=2)
    deep.add(found[0])
    assert deep.groups()[0].prefix == "/blog/2024/*"


def test_change_groups_past_the_cap_count_in_other(caplog: pytest.LogCaptureFixture) -> None:
    groups = ChangeGroups(max_groups=2)
    with caplog.at_level(logging.WARNING, logger="sitescout"):
        for name in "abcd":
            groups.add(Change(f"https://ex.com/{name}/x", "added", None, None))
    assert [(g.prefix, g.added) for g in groups.groups()] == [("/a/*", 1), ("/b/*", 1), (OTHER, 2)]
    assert "more than 2 path groups" in caplog.text


def test_diff_frame_is_the_changes_as_a_dataframe(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    old = write(tmp_path / "old.jsonl", OLD)
    new = write(tmp_path / "new.parquet", NEW)
    frame = sitescout.diff_frame(old, new)
    assert list(frame.columns) == ["url", "change", "old_lastmod", "new_lastmod"]
    assert frame["url"].tolist() == [c.url for c in EXPECTED]
    assert frame["change"].tolist() == [c.change for c in EXPECTED]
    assert str(frame["url"].dtype) == "string"
    assert frame["new_lastmod"].isna().tolist() == [c.new_lastmod is None for c in EXPECTED]


def test_the_public_face(tmp_path: Path) -> None:
    old = write(tmp_path / "old.jsonl", OLD)
    new = write(tmp_path / "new.jsonl", NEW)
    found = sitescout.diff(old, io.BytesIO(new.read_bytes()))
    assert isinstance(found, sitescout.Diff)
    assert all(isinstance(c, sitescout.Change) for c in found)
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXPECTED[0].url = "x"  # type: ignore[misc]


# -- linear in the input --------------------------------------------------------------------------


def inventories(directory: Path, n: int) -> tuple[Path, Path]:
    rng = random.Random(n)
    old = [(f"https://ex.com/s{i % 40}/p{i}", f"2024-01-{1 + i % 28:02d}") for i in range(n)]
    new = [(u, m if rng.random() > 0.05 else "2025-01-01") for u, m in old if rng.random() > 0.05]
    new += [(f"https://ex.com/new/{i}", None) for i in range(n // 20)]
    return write(directory / f"old-{n}.jsonl", old), write(directory / f"new-{n}.jsonl", new)


def run_diff(paths: tuple[Path, Path]) -> int:
    # Small partitions, so that both sizes take the partitioned path.
    return sum(1 for _ in Diff(*paths, partition_rows=500, spill_rows=1000))


@pytest.mark.scaling
def test_diffing_scales_linearly(tmp_path: Path) -> None:
    assert_linear(lambda n: inventories(tmp_path, n), run_diff, 3_000)

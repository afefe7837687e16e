"""The diff: both inventories streamed into partitions, each compared in memory, the sorted
changes merged; and the same as Arrow record batches and a DataFrame."""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from .._errors import UsageError
from .._extras import require_pandas, require_pyarrow
from .._inventory import Inventory, InventorySource
from .._models import InventoryInfo
from .changes import ADDED, CHANGED, REMOVED, Change, DiffCounts, same_lastmod
from .spill import NEW, OLD, Partitions, Run, Runs

log = logging.getLogger(__package__)

PARTITION_ROWS = 200_000  # rows (old and new) one partition is aimed at: one dictionary's worth
SPILL_ROWS = 200_000  # rows (or changes) held in memory before they go to temporary files
MAX_PARTITIONS = 256  # files open at once while the inputs are split
MAX_SPLITS = 3  # times a partition that came out too large is split again
FRAME_CHUNK = 65_536  # changes per Arrow record batch


class Diff:
    """The changes between two saved inventories: an iterator of `Change`, sorted by URL.

    Made by `diff(old, new)`. Opening checks both files (a `UsageError` for one that is missing,
    unreadable or of no known format); reading happens as it is iterated, and raises
    `UsageError` for a file that turns out not to be an inventory, before any change comes out.
    Once it is exhausted, `old` and `new` (`InventoryInfo`: rows read, rows skipped and why,
    columns missing), `counts` (`DiffCounts`), `lastmods_compared` and `without_lastmods` tell
    what was read.

    `old` and `new` may also be `_inventory.Inventory` objects (the CLI names stdin so).
    `partition_rows` and `spill_rows` tune the partitioning (see the module's notes; tests set
    them tiny to force the path that large inputs take); `temp_dir` is where the temporary files
    go (the system's temporary directory by default). Iterate it once; `close()` (or leaving a
    `with` block) ends it early and removes its temporary files.
    """

    def __init__(
        self,
        old: InventorySource | Inventory,
        new: InventorySource | Inventory,
        *,
        partition_rows: int = PARTITION_ROWS,
        spill_rows: int = SPILL_ROWS,
        temp_dir: str | Path | None = None,
    ) -> None:
        for name, value in (("partition_rows", partition_rows), ("spill_rows", spill_rows)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a whole number >= 1, got {value!r}")
        self._old = old if isinstance(old, Inventory) else Inventory(old)
        self._new = new if isinstance(new, Inventory) else Inventory(new)
        self.old: InventoryInfo = self._old.info
        self.new: InventoryInfo = self._new.info
        self.counts = DiffCounts()
        self.without_lastmods: list[str] = []  # the inventories that have no lastmod column
        self.partition_rows = partition_rows
        self.spill_rows = spill_rows
        self.temp_dir = None if temp_dir is None else str(temp_dir)
        self._changes = self._run()

    def __iter__(self) -> Diff:
        return self

    def __next__(self) -> Change:
        return next(self._changes)

    @property
    def lastmods_compared(self) -> bool:
        """False when either inventory has no lastmods (plain URLs, a CSV or Parquet file
        without the column): then only added and removed URLs come out."""
        return not self.without_lastmods

    def close(self) -> None:
        """Stop early: the temporary files are removed."""
        self._changes.close()

    def __enter__(self) -> Diff:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _partitions(self) -> int:
        estimates = [self._old.estimated_rows(), self._new.estimated_rows()]
        if None in estimates:  # a stream: its size is not known, so assume a large one
            return MAX_PARTITIONS
        rows = sum(n for n in estimates if n is not None)
        return max(1, min(MAX_PARTITIONS, math.ceil(rows / self.partition_rows)))

    def _run(self) -> Generator[Change, None, None]:
        with tempfile.TemporaryDirectory(prefix="sitescout-diff-", dir=self.temp_dir) as tmp:
            directory = Path(tmp)
            parts = Partitions(directory, "part", self._partitions(), self.spill_rows)
            try:
                self._split(self._old, OLD, parts)
                self._split(self._new, NEW, parts)
            except BaseException:
                parts.close()
                raise
            parts.finish()
            self.without_lastmods = [i.name for i in (self._old, self._new) if "lastmod" in i.lacks]
            if self.without_lastmods:
                log.info("lastmods not compared: %s has none", " and ".join(self.without_lastmods))
            runs = Runs(directory, self.spill_rows)
            for part in range(parts.parts):
                self._compare(parts, part, runs, splits=0)
            self._log_duplicates()
            for url, kind, old_lastmod, new_lastmod in runs.merged():
                yield Change(url, kind, old_lastmod, new_lastmod)

    def _split(self, inventory: Inventory, side: int, parts: Partitions) -> None:
        for columns in inventory.chunks(("url", "lastmod"), strict=False, raw_lastmod=True):
            parts.add_urls(side, _encodable(columns["url"]), _encodable(columns["lastmod"]))
        for where, why in inventory.info.examples:
            log.warning("%s, %s: skipped, %s", inventory.name, where, why)
        more = sum(inventory.info.skipped.values()) - len(inventory.info.examples)
        if more > 0:
            log.warning("%s: %s more rows skipped", inventory.name, f"{more:,}")

    def _compare(self, parts: Partitions, part: int, runs: Runs, *, splits: int) -> None:
        size = parts.size(part)
        if size > 2 * self.partition_rows and splits < MAX_SPLITS:
            # Far larger than aimed at (a stream's size was guessed, or the hash was unlucky):
            # split it again with another hash rather than hold it whole.
            count = min(MAX_PARTITIONS, math.ceil(size / self.partition_rows))
            name = f"{parts.name}.{part}"
            sub = Partitions(parts.directory, name, count, self.spill_rows, salt=splits + 1)
            try:
                for side, rows in parts.take(part):
                    sub.add(side, rows)
            except BaseException:
                sub.close()
                raise
            sub.finish()
            for sub_part in range(count):
                self._compare(sub, sub_part, runs, splits=splits + 1)
            return
        old: dict[str, str | None] = {}
        new: dict[str, str | None] = {}
        taken = [0, 0]
        for side, chunk in parts.take(part):
            (old if side == OLD else new).update(chunk)
            taken[side] += len(chunk)
        counts = self.counts
        counts.old_duplicates += taken[OLD] - len(old)
        counts.new_duplicates += taken[NEW] - len(new)
        compare = not self.without_lastmods
        changes: list[Run] = []
        added = changed = 0
        missing = object()
        pop = old.pop  # what is left in `old` afterwards was removed
        for url, lastmod in new.items():
            before: Any = pop(url, missing)
            if before is missing:
                changes.append((url, ADDED, None, lastmod))
                added += 1
            elif compare and before != lastmod and not same_lastmod(before, lastmod):
                changes.append((url, CHANGED, before, lastmod))
                changed += 1
        changes += [(url, REMOVED, lastmod, None) for url, lastmod in old.items()]
        counts.added += added
        counts.changed += changed
        counts.removed += len(old)
        counts.unchanged += len(new) - added - changed
        changes.sort()
        runs.add(changes)

    def _log_duplicates(self) -> None:
        for inventory, count in (
            (self._old, self.counts.old_duplicates),
            (self._new, self.counts.new_duplicates),
        ):
            if count:
                log.warning(
                    "%s lists %s URLs more than once: the last row of each counts",
                    inventory.name,
                    f"{count:,}",
                )


def _encodable(values: list[Any]) -> list[Any]:
    """`values` with any text that is not valid Unicode (a lone surrogate, which a JSON escape
    can make) written with backslash escapes, so that every writer can take a change's text.
    Checked a chunk at a time: one C-level pass when, as nearly always, all is well."""
    try:
        "".join(filter(None, values)).encode("utf-8")
    except UnicodeEncodeError:
        return [
            None if v is None else v.encode("utf-8", "backslashreplace").decode("utf-8")
            for v in values
        ]
    return values


def diff(old: InventorySource, new: InventorySource, *, temp_dir: str | Path | None = None) -> Diff:
    """The changes between two inventories saved by `sitescout urls` (JSON lines, CSV, plain
    URLs or Parquet; a path or an open binary file), as a `Diff`: iterate it for `Change`
    records sorted by URL, then read its counts. Memory stays bounded however large the files
    (temporary files go to `temp_dir`, the system's temporary directory by default). Raises
    `UsageError` for a file that is missing or not an inventory."""
    return Diff(old, new, temp_dir=temp_dir)


# -- as Arrow record batches and a DataFrame ---------------------------------------------------


def change_schema(pa: Any) -> Any:
    """The columns of a diff as a table: the `Change` fields, all text."""
    return pa.schema(
        [
            ("url", pa.string()),
            ("change", pa.string()),
            ("old_lastmod", pa.string()),
            ("new_lastmod", pa.string()),
        ]
    )


def change_batches(changes: Iterable[Change], size: int = FRAME_CHUNK) -> Iterator[Any]:
    """`Change` records as Arrow record batches of `size` rows (needs pyarrow)."""
    pa, _pq = require_pyarrow()
    schema = change_schema(pa)
    columns: tuple[list[str], list[str], list[str | None], list[str | None]] = ([], [], [], [])
    urls, kinds, olds, news = columns

    def batch() -> Any:
        arrays = [pa.array(values, type=pa.string()) for values in columns]
        out = pa.RecordBatch.from_arrays(arrays, schema=schema)
        for values in columns:
            values.clear()
        return out

    for change in changes:
        urls.append(change.url)
        kinds.append(change.change)
        olds.append(change.old_lastmod)
        news.append(change.new_lastmod)
        if len(urls) >= size:
            yield batch()
    if urls:
        yield batch()


def diff_frame(
    old: InventorySource, new: InventorySource, *, temp_dir: str | Path | None = None
) -> Any:
    """`diff(old, new)` as a `pandas.DataFrame` (the `tables` extra): one row per changed URL,
    sorted by URL, with the text columns `url`, `change` (`added`, `removed`, `changed`),
    `old_lastmod` and `new_lastmod`. Built an Arrow record batch at a time, so memory holds the
    changes, not the inventories."""
    pd = require_pandas("diff_frame")
    pa, _pq = require_pyarrow()
    with diff(old, new, temp_dir=temp_dir) as changes:
        table = pa.Table.from_batches(list(change_batches(changes)), schema=change_schema(pa))
    return table.to_pandas(
        types_mapper={pa.string(): pd.StringDtype("pyarrow")}.get,
        self_destruct=True,
        split_blocks=True,
    )

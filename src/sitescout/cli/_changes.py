"""Change rows on their way out: one row per changed URL (`url`, `change`, `old_lastmod`,
`new_lastmod`) as JSON lines, CSV or Parquet, for `diff --format` and `urls --changes-only`
(which compares a walk with the inventory its state directory keeps: `write_changes`)."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from .._diff import Change, change_batches, change_schema
from .._errors import UsageError
from .._extras import require_pyarrow
from .._models import WalkReport
from ._app import err

__all__ = ["NEXT_INVENTORY", "ROW_COLUMNS", "ChangeRows", "RowFormat", "json_row", "write_changes"]

ROW_COLUMNS = ("url", "change", "old_lastmod", "new_lastmod")


class RowFormat(StrEnum):
    jsonl = "jsonl"
    csv = "csv"
    parquet = "parquet"


class ChangeRows:
    """Where the rows go: stdout, or a file written under a temporary name next to it and
    renamed into place once complete (an interrupted or failed run leaves an old file as it
    was)."""

    def __init__(self, path: Path | None, fmt: RowFormat) -> None:
        self.fmt = fmt
        self.path: Path | None = None
        self.temp: Path | None = None
        self._file: IO[str] | None = None
        self._parquet: Any = None
        out: IO[str] = sys.stdout
        if path is not None and path.exists() and not path.is_file():
            # A FIFO or a device (/dev/null) cannot be replaced: it is written in place.
            if fmt is RowFormat.parquet:
                raise UsageError(f"{path}: Parquet needs a regular file")
            out = self._file = path.open("w", encoding="utf-8", newline="")
        elif path is not None:
            final = Path(os.path.realpath(path))
            fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
            os.close(fd)
            self.path, self.temp = final, Path(name)
            if fmt is not RowFormat.parquet:
                out = self._file = self.temp.open("w", encoding="utf-8", newline="")
        self.out = out
        self._csv = csv.writer(out, lineterminator="\n") if fmt is RowFormat.csv else None
        if self._csv is not None:
            self._csv.writerow(ROW_COLUMNS)

    def write_all(self, changes: Any) -> None:
        if self.fmt is RowFormat.parquet:
            pa, pq = require_pyarrow()
            assert self.temp is not None
            self._parquet = pq.ParquetWriter(str(self.temp), change_schema(pa), compression="zstd")
            for batch in change_batches(changes):
                self._parquet.write_batch(batch)
            return
        write = self.out.write
        for change in changes:
            if self._csv is not None:
                self._csv.writerow(
                    (change.url, change.change, change.old_lastmod, change.new_lastmod)
                )
            else:
                write(json_row(change))

    def finish(self) -> None:
        """Close the file and put it in place."""
        self._close()
        if self.temp is not None and self.path is not None:
            os.chmod(self.temp, 0o644)
            os.replace(self.temp, self.path)
            self.temp = None
        elif self.path is None:
            sys.stdout.flush()

    def discard(self) -> None:
        try:
            self._close()
        finally:
            if self.temp is not None:
                self.temp.unlink(missing_ok=True)
                self.temp = None

    def _close(self) -> None:
        parquet, file, self._parquet, self._file = self._parquet, self._file, None, None
        if parquet is not None:
            parquet.close()
        if file is not None:
            file.close()


def json_row(change: Change) -> str:
    row = {
        "url": change.url,
        "change": change.change,
        "old_lastmod": change.old_lastmod,
        "new_lastmod": change.new_lastmod,
    }
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


# `urls --changes-only`: the walk's inventory is written here in the state directory, compared
# with the one stored, and then stored in its place.
NEXT_INVENTORY = ".inventory.next.jsonl"


def write_changes(
    state: Path, report: WalkReport, fmt: str, to_file: Path | None
) -> list[str] | None:
    """Write what changed between the state's stored inventory and this walk's (`fmt` rows to
    `to_file`, or stdout), and store this walk's when it was complete. A partial walk (a failed
    document, a budget, Ctrl-C) did not see every URL: its missing ones are not reported as
    removed, and the stored inventory stays the last complete one. None when the rows could
    not be written (said on stderr)."""
    from .._diff import REMOVED, Diff
    from .._inventory import Inventory
    from .._state import INVENTORY, stored_inventory

    walked = state / NEXT_INVENTORY
    old = stored_inventory(state)
    complete = not report.partial

    def source(path: Path | None, name: str) -> str | Inventory:
        if path is not None:
            return Inventory(path, empty_ok=True)
        return Inventory(io.BytesIO(b""), name=f"{name}.jsonl", empty_ok=True)

    try:
        rows = ChangeRows(to_file, RowFormat(fmt))
    except (UsageError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        err.print(f"error: cannot write {to_file or 'stdout'}: {why}", markup=False)
        walked.unlink(missing_ok=True)
        return None
    with Diff(
        source(old, "no-earlier-inventory"),
        source(walked if walked.is_file() else None, "no-url"),
    ) as changes:
        try:
            rows.write_all(c for c in changes if complete or c.change != REMOVED)
        except BaseException:
            rows.discard()
            walked.unlink(missing_ok=True)
            raise
        counts = changes.counts
    rows.finish()
    if complete:
        if walked.is_file():
            os.replace(walked, state / INVENTORY)
        else:  # a complete walk that found no URL: that is the inventory now
            (state / INVENTORY).write_bytes(b"")
    else:
        walked.unlink(missing_ok=True)
        report.warn(
            "the walk was partial: URLs it did not see are not reported as removed, and the"
            " stored inventory stays that of the last complete walk"
        )
    said: list[str] = []
    if old is None:
        said.append(f"no earlier inventory in {state}: every URL is reported as added")
    removed = counts.removed if complete else 0
    said.append(
        f"changes since the last walk: {counts.added:,} added, {removed:,} removed,"
        f" {counts.changed:,} changed ({counts.unchanged:,} unchanged)"
    )
    report.notes.extend(said)
    return said

"""A site's partition on disk: the job that says where it goes (`SiteJob`), its part files
(`Parts`: `part-<n>.parquet` plus, for a fanned-out site, `part-<n>.hashes`), the rows a later
part repeats (`duplicate_rows`, in bounded passes), and the marker and rename that make a
partition complete (`promote`), read back by `promoted` and `complete_result`."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from .._core import Batch, SeenSet, url_hashes
from .._extras import require_pyarrow
from .._table import ParquetWriter
from .._walk import WalkOptions
from .results import SiteResult
from .sites import partition_name

MARKER = "_SITE.json"
PART_ROWS = 1_000_000  # rows per part file: a site of 10M URLs is ten files, not one
PASS_HASHES = 2_000_000  # hashes held at once while de-duplicating a fanned-out site
_HASH_CHUNK = 65_536


@dataclass(frozen=True, slots=True)
class SiteJob:
    url: str
    key: str
    out: str
    options: WalkOptions
    fanout: int | None  # None: this site is never fanned out
    hash_key: bytes
    run: str  # this batch's attempt at this site, written into the marker
    replace: bool = False  # a --refresh, or a partition without a valid marker
    quiet: bool = False  # see BatchRun


@dataclass(slots=True)
class Part:
    path: str
    rows: int
    hashes: str | None


def hashed(part: Part, key: bytes) -> Part:
    """A part written without hashes (a site's own walk, before it knew it would fan out),
    with them: read back from its `url` column, which is small next to the leaves'."""
    if part.hashes is not None or part.rows == 0:
        return part
    _pa, pq = require_pyarrow()
    path = part.path.removesuffix(".parquet") + ".hashes"
    with open(path, "wb") as out:
        for record_batch in pq.ParquetFile(part.path).iter_batches(columns=["url"]):
            out.write(url_hashes(record_batch.column(0).to_pylist(), key))
    return Part(part.path, part.rows, path)


class Parts:
    """A walk's batches into `part-<n>.parquet` files of at most PART_ROWS rows (and, when the
    site may be de-duplicated across tasks, `part-<n>.hashes`: 8 bytes of keyed hash per row)."""

    def __init__(self, directory: Path, hash_key: bytes | None) -> None:
        self.directory = directory
        self.hash_key = hash_key
        self.done: list[Part] = []
        self._writer: ParquetWriter | None = None
        self._hashes: io.BufferedWriter | None = None
        self._part = Part("", 0, None)

    def write(self, batch: Batch) -> None:
        """The batch's rows into the open part, a new one as needed (the batch is split in place
        where a part fills)."""
        rest = batch
        while len(rest):
            if self._writer is None:
                self._open()
            assert self._writer is not None
            part = self._part
            chunk, rest = rest, rest.split_off(min(len(rest), PART_ROWS - part.rows))
            self._writer.write(chunk)
            if self._hashes is not None and self.hash_key is not None:
                self._hashes.write(chunk.url_hashes(self.hash_key))
            part.rows += len(chunk)
            if part.rows >= PART_ROWS:
                self._close()

    def _open(self) -> None:
        stem = self.directory / f"part-{len(self.done)}"
        hashes = f"{stem}.hashes" if self.hash_key is not None else None
        self._part = Part(f"{stem}.parquet", 0, hashes)
        self._writer = ParquetWriter(Path(self._part.path))
        if hashes is not None:
            self._hashes = Path(hashes).open("wb")  # noqa: SIM115 (open until _close)

    def _close(self) -> None:
        writer, hashes, self._writer, self._hashes = self._writer, self._hashes, None, None
        if writer is None:
            return
        writer.close()
        if hashes is not None:
            hashes.close()
        self.done.append(self._part)

    def close(self) -> list[Part]:
        self._close()
        return self.done


def duplicate_rows(parts: list[Part]) -> list[list[int]]:
    """For each part, the rows whose URL an earlier row (of any part) holds.

    One pass per slice of the hash space (hash mod passes), so at most PASS_HASHES hashes are
    held at once: a site's size changes the number of passes, not the memory.
    """
    total = sum(p.rows for p in parts)
    passes = max(1, math.ceil(total / PASS_HASHES))
    drops: list[list[int]] = [[] for _ in parts]
    for slice_ in range(passes):
        seen = SeenSet(min(PASS_HASHES, max(total // passes, 16)) + 16)
        for n, part in enumerate(parts):
            if part.hashes is None:
                continue
            row = 0
            with open(part.hashes, "rb") as f:
                while chunk := f.read(8 * _HASH_CHUNK):
                    fresh = seen.add_hashes(chunk, passes, slice_)
                    at = fresh.find(0)
                    while at != -1:
                        drops[n].append(row + at)
                        at = fresh.find(0, at + 1)
                    row += len(chunk) // 8
    for rows in drops:
        rows.sort()
    return drops


def promote(directory: Path, job: SiteJob, result: SiteResult) -> None:
    """Marker last, then the whole directory renamed into place in one step."""
    marker = directory / MARKER
    temp = directory / f".{MARKER}.tmp"
    temp.write_text(json.dumps(result.to_json() | {"run": job.run}, indent=1), encoding="utf-8")
    os.replace(temp, marker)
    target = Path(job.out) / "urls" / partition_name(job.key)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        if not job.replace:
            # Another attempt of this task got there first (Dask re-ran it): keep that one.
            shutil.rmtree(directory, ignore_errors=True)
            return
        trash = Path(job.out) / ".trash" / f"{partition_name(job.key)}-{uuid.uuid4().hex}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(target, trash)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.replace(directory, target)
    except OSError:
        if not target.exists():
            raise
        shutil.rmtree(directory, ignore_errors=True)  # a concurrent attempt won the rename


def promoted(job: SiteJob) -> SiteResult | None:
    """The partition this very job already put in place, if it did."""
    marker = Path(job.out) / "urls" / partition_name(job.key) / MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("run") == job.run:
            return SiteResult.from_json(data)
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return None


def complete_result(out: Path, key: str) -> SiteResult | None:
    """The row of a site whose partition is complete; None when it is not (or its marker is
    not one this program wrote)."""
    marker = out / "urls" / partition_name(key) / MARKER
    try:
        if marker.stat().st_size > 1 << 20:
            return None
        result = SiteResult.from_json(json.loads(marker.read_text(encoding="utf-8")))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return result if result.site == key else None

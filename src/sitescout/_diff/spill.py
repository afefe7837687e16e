"""Temporary files of a diff: rows split by a hash of their URL into partitions, and sorted runs
of changes merged into one stream, both held in memory while they are small."""

from __future__ import annotations

import heapq
import marshal
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .._urls import normalize_url
from .changes import ChangeKind

MAX_RUNS = 64  # sorted runs merged at once; more are merged in passes
RUN_CHUNK = 1_024  # changes per record of a run file: what merging holds per run

OLD, NEW = 0, 1
# One row of an inventory as the partitions hold it: (normalized URL, lastmod).
Row = tuple[str, str | None]
# One change as the runs hold it, sorted by its first field.
Run = tuple[str, ChangeKind, str | None, str | None]


def dump(value: Any, file: IO[bytes]) -> None:
    """One record of a temporary file: its length, then `marshal`'s bytes. The file is this
    process's own, written and read back in one run, so marshal's speed is all that matters;
    `marshal.load` straight from a file reads a few bytes per object, hence the length."""
    data = marshal.dumps(value)
    file.write(len(data).to_bytes(8, "little"))
    file.write(data)


def records(file: IO[bytes]) -> Iterator[Any]:
    while head := file.read(8):
        yield marshal.loads(file.read(int.from_bytes(head, "little")))


class Partitions:
    """Rows of both inventories split by a hash of their URL: held in memory until `spill_rows`
    are held, then appended to one temporary file per partition (and memory emptied)."""

    def __init__(
        self, directory: Path, name: str, parts: int, spill_rows: int, salt: int = 0
    ) -> None:
        self.directory = directory
        self.name = name
        self.parts = parts
        self.spill_rows = spill_rows
        self.salt = salt  # a split of a split needs a hash of its own
        self.memory: list[list[list[Row]]] = [[[] for _ in range(parts)] for _ in (OLD, NEW)]
        self.sizes = [0] * parts  # rows written to each file
        self.held = 0
        self.files: list[IO[bytes] | None] = [None] * parts

    def add_urls(self, side: int, urls: list[str], lastmods: list[str | None]) -> None:
        """Rows as an inventory gives them: each URL normalized, then put in its partition
        (one loop: this runs once per row of both inventories)."""
        buckets = self.memory[side]
        n = self.parts
        normalize = normalize_url
        if n == 1 or self.salt:
            pairs = zip(urls, lastmods, strict=True)
            self.add(side, [(normalize(url), lastmod) for url, lastmod in pairs])
            return
        for url, lastmod in zip(urls, lastmods, strict=True):
            key = normalize(url)
            buckets[hash(key) % n].append((key, lastmod))
        self._held(len(urls))

    def add(self, side: int, rows: list[Row]) -> None:
        buckets = self.memory[side]
        n = self.parts
        if n == 1:
            buckets[0].extend(rows)
        elif self.salt:
            salt = self.salt
            for row in rows:
                buckets[hash((salt, row[0])) % n].append(row)
        else:
            for row in rows:
                buckets[hash(row[0]) % n].append(row)
        self._held(len(rows))

    def _held(self, rows: int) -> None:
        self.held += rows
        if self.held >= self.spill_rows:
            self.spill()

    def spill(self) -> None:
        """Move every row held in memory to the partitions' files."""
        for side, buckets in enumerate(self.memory):
            for part, rows in enumerate(buckets):
                if rows:
                    file = self.files[part]
                    if file is None:
                        path = self.directory / f"{self.name}-{part}"
                        file = self.files[part] = path.open("wb")
                    dump((side, rows), file)
                    self.sizes[part] += len(rows)
                    buckets[part] = []
        self.held = 0

    def finish(self) -> None:
        """Done adding: rows still held go to the files too if any went before, so that only
        one partition at a time is in memory from here on."""
        if any(file is not None for file in self.files):
            self.spill()
        self.close()

    def close(self) -> None:
        for file in self.files:
            if file is not None:
                file.close()

    def size(self, part: int) -> int:
        return self.sizes[part] + sum(len(self.memory[side][part]) for side in (OLD, NEW))

    def take(self, part: int) -> Iterator[tuple[int, list[Row]]]:
        """The rows of one partition, (side, rows) in the order they were added; the partition
        is emptied as they are taken."""
        if self.files[part] is not None:
            path = self.directory / f"{self.name}-{part}"
            with path.open("rb") as file:
                for side, rows in records(file):
                    yield side, rows
            path.unlink()
            self.files[part] = None
        for side in (OLD, NEW):
            rows, self.memory[side][part] = self.memory[side][part], []
            if rows:
                yield side, rows


class Runs:
    """Sorted runs of changes merged into one sorted stream. Runs are held in memory until
    `spill_rows` changes are held, then merged into one file; files beyond `MAX_RUNS` are merged
    in passes, so merging never holds more than `MAX_RUNS` chunks of `RUN_CHUNK` changes."""

    def __init__(self, directory: Path, spill_rows: int) -> None:
        self.directory = directory
        self.spill_rows = spill_rows
        self.memory: list[list[Run]] = []
        self.held = 0
        self.files: list[Path] = []
        self.written = 0

    def add(self, run: list[Run]) -> None:
        if not run:
            return
        self.memory.append(run)
        self.held += len(run)
        if self.held >= self.spill_rows:
            self.files.append(self._write(heapq.merge(*self.memory)))
            self.memory, self.held = [], 0

    def _write(self, changes: Iterable[Run]) -> Path:
        path = self.directory / f"run-{self.written}"
        self.written += 1
        chunk: list[Run] = []
        with path.open("wb") as file:
            for change in changes:
                chunk.append(change)
                if len(chunk) >= RUN_CHUNK:
                    dump(chunk, file)
                    chunk = []
            if chunk:
                dump(chunk, file)
        return path

    @staticmethod
    def _read(path: Path) -> Iterator[Run]:
        with path.open("rb") as file:
            for chunk in records(file):
                yield from chunk
        path.unlink()

    def merged(self) -> Iterator[Run]:
        while len(self.files) > MAX_RUNS:
            batch, self.files = self.files[:MAX_RUNS], self.files[MAX_RUNS:]
            self.files.append(self._write(heapq.merge(*map(self._read, batch))))
        return heapq.merge(*self.memory, *map(self._read, self.files))

"""Saved inventories read back: the files `sitescout urls` writes, as columns of text.

One reader for every command that takes an inventory (`report`, `diff`). It reads JSON lines,
CSV, plain URLs (`txt`) and Parquet, from a path or a binary stream (stdin), in one pass, and
hands the rows on as columns of text in chunks of `CHUNK` rows, so memory holds one chunk,
never the file.

The format: a file that starts with Parquet's magic bytes is Parquet whatever its name; else the
suffix says (`.jsonl`, `.ndjson`, `.json`, `.csv`, `.txt`, `.parquet`); else the content does: a
JSON object first is JSON lines, a first line naming a `url` column is CSV, anything else is read
as plain URLs.

An inventory is untrusted input. A row that cannot be used is skipped and counted by reason, and
the first few are remembered by position (`line 7`, `row 12`) for the warning that names them:
cut or invalid JSON, a row that is not an object, no `url`, a field of the wrong type (only the
columns asked for are judged), a line over `LINE_LIMIT` (read through, never held), a txt line
that is not an http(s) URL. A file that is not an inventory at all is refused with a `UsageError`
of one line: nothing readable, no `url` column, a damaged Parquet file, no usable row.

`strict` is what `report` has always done with CSV: a file the csv module cannot parse, or that
is not UTF-8, is refused whole. Without it (`diff`), such a line is skipped and counted like any
other bad row, and a byte-order mark before the header is allowed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from ._errors import UsageError
from ._extras import require_pyarrow
from ._models import InventoryInfo
from ._urls import is_http_url

__all__ = [
    "CHUNK",
    "FORMAT_NAMES",
    "LINE_LIMIT",
    "SUFFIXES",
    "TEXT_COLUMNS",
    "Columns",
    "Inventory",
    "InventorySource",
    "sniff_format",
]

LINE_LIMIT = 1 << 20  # bytes of one line; longer ones are skipped, not held
CHUNK = 10_000  # rows handed on at a time
TEXT_COLUMNS = ("url", "lastmod", "sitemap", "hreflang", "alternate_of")
EXAMPLES = 5  # skipped rows remembered by position, per file
HEAD = 1 << 16  # bytes read ahead to tell the format and estimate the rows

FORMAT_NAMES = {"jsonl": "JSON lines", "csv": "CSV", "txt": "plain URLs", "parquet": "Parquet"}
SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".txt": "txt",
    ".parquet": "parquet",
}
_LONG = f"line longer than {LINE_LIMIT // 1048576} MiB"
_BAD_JSON = "not valid JSON (a cut or damaged line)"
_NOT_UTF8 = "not UTF-8 text"
_BOM = b"\xef\xbb\xbf"
_SPACE = re.compile(r"\s")
_JSON = json.JSONDecoder()

# A path, or an open binary stream (stdin) read once from where it stands.
InventorySource = str | os.PathLike[str] | BinaryIO
# Chunks of rows: one list per column asked for, all of one length.
Columns = dict[str, list[Any]]


def sniff_format(head: bytes, name: str = "") -> str:
    """The format of an inventory from its first bytes and its name (see the module's rule)."""
    if head.startswith(b"PAR1"):
        return "parquet"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    text = head.removeprefix(_BOM).lstrip(b" \t\r\n")
    if text.startswith(b"{"):
        return "jsonl"
    first = text.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")
    try:
        header = next(csv.reader([first]), [])
    except csv.Error:
        header = []
    return "csv" if len(header) > 1 and "url" in header else "txt"


class _Chunker:
    """Rows gathered as they come, handed on as columns every `size` rows."""

    __slots__ = ("columns", "info", "rows", "size")

    def __init__(self, columns: tuple[str, ...], size: int, info: InventoryInfo) -> None:
        self.columns = columns
        self.size = size
        self.info = info
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> Columns | None:
        rows = self.rows
        rows.append(row)
        return self.take() if len(rows) >= self.size else None

    def take(self) -> Columns:
        # One comprehension per column over the chunk: cheaper than a Python step per cell.
        rows, self.rows = self.rows, []
        self.info.rows += len(rows)
        return {name: [row.get(name) for row in rows] for name in self.columns}


class Inventory:
    """One saved inventory, ready to be read once with `chunks`.

    Opening it checks that it exists and tells its format (a `UsageError` when it is missing or
    unreadable); `info` then counts what reading finds. `name` is how messages call it (the
    path as given, or `stdin`). `plain_urls=False` reads a file that would be plain URLs as JSON
    lines instead: `report` takes a `.txt` file for a text sitemap, so what it hands here is
    one of the other formats. `empty_ok`: a file without a row is an empty inventory, not an
    error (`urls --changes-only` compares a first walk with none)."""

    def __init__(
        self,
        source: InventorySource,
        *,
        name: str | None = None,
        plain_urls: bool = True,
        empty_ok: bool = False,
    ) -> None:
        self.empty_ok = empty_ok
        self._stream: BinaryIO | None = None
        self.path: Path | None = None
        if isinstance(source, str | os.PathLike):
            self.path = Path(source)
            self.name = name or str(source)
            head = self._read_head(self.path)
        else:
            self._stream = source
            self.name = name or str(getattr(source, "name", "stream"))
            head = _read_ahead(source)
            self._stream = io.BufferedReader(_Prefixed(head, source), HEAD)
        self.format = sniff_format(head, self.name if self.path is None else self.path.name)
        if self.format == "txt" and not plain_urls:
            self.format = "jsonl"
        self.info = InventoryInfo(self.name, FORMAT_NAMES[self.format])
        self._head = head
        self._read = False

    def _read_head(self, path: Path) -> bytes:
        if path.is_dir():
            raise UsageError(f"{self.name} is a directory, not an inventory file")
        if not path.is_file():
            raise UsageError(f"no such inventory file: {self.name}")
        try:
            with path.open("rb") as file:
                return file.read(HEAD)
        except OSError as exc:
            raise UsageError(f"cannot read {self.name}: {exc.strerror or exc}") from None

    def estimated_rows(self) -> int | None:
        """About how many rows the file holds (from its size and first lines, or Parquet's
        footer); None for a stream, whose size is not known before it is read."""
        if self.path is None:
            return None
        try:
            size = self.path.stat().st_size
            if self.format == "parquet":
                _pa, pq = require_pyarrow()
                return int(pq.ParquetFile(str(self.path)).metadata.num_rows)
        except Exception:  # no pyarrow, a damaged footer: reading says which, in its words
            return None
        lines = self._head.count(b"\n")
        if len(self._head) < HEAD:
            return lines + 1
        return size * max(lines, 1) // len(self._head) + 1

    @property
    def lacks(self) -> set[str]:
        """Columns this file cannot hold at all: a txt file has URLs only; a CSV or Parquet file
        lacks what its header or schema lacks (known once reading has started)."""
        if self.format == "txt":
            return set(TEXT_COLUMNS) - {"url"}
        return {name.split(" ", 1)[0] for name in self.info.missing_columns}

    def chunks(
        self,
        columns: Iterable[str] = TEXT_COLUMNS,
        *,
        strict: bool = True,
        raw_lastmod: bool = False,
        size: int = CHUNK,
    ) -> Iterator[Columns]:
        """The rows as columns of text (None for a missing value), `size` rows at a time; `url`
        is always among them and never empty. `raw_lastmod`: a Parquet file's `lastmod` is read
        from its `lastmod_raw` text column when it has one (the text the sitemap said, as the
        JSON lines hold it), not from its timestamp. Raises `UsageError` for a file that is not
        an inventory, at the end of reading for one without a usable row."""
        if self._read:
            raise UsageError(f"{self.name} was already read")
        self._read = True
        wanted = ("url", *(c for c in columns if c != "url"))
        out = _Chunker(wanted, size, self.info)
        try:
            if self.format == "parquet":
                yield from self._parquet(out, raw_lastmod=raw_lastmod)
            else:
                yield from self._text(out, strict=strict)
        except OSError as exc:
            raise UsageError(f"cannot read {self.name}: {exc.strerror or exc}") from None
        if out.rows:
            yield out.take()
        if self.info.rows == 0 and not self.empty_ok:
            detail = ", ".join(f"{n:,} {why}" for why, n in self.info.skipped.most_common())
            raise UsageError(
                f"{self.name} holds no inventory rows" + (f" ({detail})" if detail else "")
            )

    def _text(self, out: _Chunker, *, strict: bool) -> Iterator[Columns]:
        with self._open() as file:
            if self.format == "csv":
                yield from self._csv(file, out, strict=strict)
            elif self.format == "txt":
                yield from self._txt(file, out)
            else:
                yield from self._jsonl(file, out)

    def _open(self) -> IO[bytes]:
        """The file, or the stream (closing what this returns leaves a caller's stream open)."""
        if self._stream is not None:
            return self._stream
        assert self.path is not None
        return self.path.open("rb")

    def _skip(self, where: str, why: str) -> None:
        self.info.skipped[why] += 1
        if len(self.info.examples) < EXAMPLES:
            self.info.examples.append((where, why))

    # -- JSON lines ---------------------------------------------------------------------------

    def _jsonl(self, file: IO[bytes], out: _Chunker) -> Iterator[Columns]:
        # The loop every row of the largest inventories goes through: `_lines`, `json.loads`
        # (which guesses the encoding of bytes first) and `_check_row`, written out inline.
        others = out.columns[1:]
        scan, decode = _JSON.raw_decode, _JSON.decode
        readline = file.readline
        rows, size = out.rows, out.size
        number = 0
        while line := readline(LINE_LIMIT + 1):
            number += 1
            if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
                _read_through(file)
                self._skip(f"line {number}", _LONG)
                continue
            try:
                # What `json.loads` accepts from UTF-8 bytes: surrogates let through, and (the
                # rare retry) a BOM or whitespace before the object.
                text = line.decode("utf-8", "surrogatepass")
                try:
                    row, end = scan(text)
                    if end != len(text) and not text[end:].isspace():
                        raise ValueError("data after the object")
                except ValueError:
                    row = decode(text.removeprefix("\ufeff"))
            except (ValueError, RecursionError):  # bad JSON or UTF-8; nesting past the limit
                if line.strip():
                    self._skip(f"line {number}", _BAD_JSON)
                continue
            if type(row) is dict:
                url = row.get("url")
                if type(url) is str and url.strip():
                    reason = None
                    for name in others:
                        value = row.get(name)
                        if value is not None and not isinstance(value, str):
                            reason = f"{name} is not text"
                            break
                else:
                    reason = "no url"
            else:
                reason = _check_row(row, others)
            if reason is not None:
                self._skip(f"line {number}", reason)
                continue
            rows.append(row)
            if len(rows) >= size:
                yield out.take()
                rows = out.rows

    # -- plain URLs ---------------------------------------------------------------------------

    def _txt(self, file: IO[bytes], out: _Chunker) -> Iterator[Columns]:
        self.info.missing_columns = [c for c in out.columns if c != "url"]
        for number, line in enumerate(_lines(file), 1):
            if line is None:
                self._skip(f"line {number}", _LONG)
                continue
            raw = (line.removeprefix(_BOM) if number == 1 else line).strip()
            if not raw:
                continue
            try:
                url = raw.decode("utf-8")
            except UnicodeDecodeError:
                self._skip(f"line {number}", _NOT_UTF8)
                continue
            if not is_http_url(url) or _SPACE.search(url):
                self._skip(f"line {number}", "not an http(s) URL")
                continue
            full = out.add({"url": url})
            if full is not None:
                yield full

    # -- CSV ----------------------------------------------------------------------------------

    def _csv(self, file: IO[bytes], out: _Chunker, *, strict: bool) -> Iterator[Columns]:
        name = self.name
        if strict:
            text = io.TextIOWrapper(file, encoding="utf-8", newline="")
            bad: list[tuple[int, str]] = []
            lines: Iterable[str] = text
        else:
            text = io.TextIOWrapper(
                file, encoding="utf-8-sig", errors="surrogateescape", newline=""
            )
            bad = []
            lines = _checked_lines(text, bad)
        reader = csv.DictReader(lines)
        try:
            if reader.fieldnames is None or "url" not in reader.fieldnames:
                raise UsageError(f"{name} is not a sitescout inventory: no url column")
            self.info.missing_columns = [c for c in out.columns if c not in reader.fieldnames]
            while True:
                damage: csv.Error | None = None
                try:
                    row: dict[str | Any, Any] | None = next(reader)
                except StopIteration:
                    row = None
                except csv.Error as exc:
                    if strict:
                        raise
                    row, damage = None, exc
                for number, why in bad:  # lines set aside before this row, in file order
                    self._skip(f"line {number}", why)
                bad.clear()
                if damage is not None:
                    self._skip(f"line {reader.reader.line_num}", f"not CSV ({damage})")
                    continue
                if row is None:
                    break
                if not (row.get("url") or "").strip():
                    self._skip(f"line {reader.line_num}", "no url")
                    continue
                full = out.add({k: (row.get(k) or None) for k in out.columns})
                if full is not None:
                    yield full
        except csv.Error as exc:
            raise UsageError(
                f"cannot read {name} as CSV at line {reader.line_num}: {exc}"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"cannot read {name}: {_NOT_UTF8}") from None
        finally:
            text.detach()  # the caller closes the file (a stream stays open)

    # -- Parquet ------------------------------------------------------------------------------

    def _parquet(self, out: _Chunker, *, raw_lastmod: bool) -> Iterator[Columns]:
        pa, pq = require_pyarrow()
        if self.path is not None:
            yield from self._parquet_rows(pa, pq, str(self.path), out, raw_lastmod=raw_lastmod)
            return
        # A Parquet footer is at the end: a stream goes to an unnamed temporary file first.
        with self._open() as stream, tempfile.TemporaryFile() as spool:
            while block := stream.read(1 << 20):
                spool.write(block)
            spool.seek(0)
            yield from self._parquet_rows(pa, pq, spool, out, raw_lastmod=raw_lastmod)

    def _parquet_rows(
        self, pa: Any, pq: Any, file: str | IO[bytes], out: _Chunker, *, raw_lastmod: bool
    ) -> Iterator[Columns]:
        name = self.name
        try:
            parquet = pq.ParquetFile(file)
            schema = parquet.schema_arrow
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise UsageError(f"cannot read {name} as Parquet: {exc}") from None
        types = {field_name: schema.field(field_name).type for field_name in schema.names}
        url_type = types.get("url")
        if url_type is None or not _is_text(pa, url_type):
            raise UsageError(f"{name} is not a sitescout inventory: no text url column")
        read_as: dict[str, str] = {}  # column of the file -> column handed on
        for wanted in out.columns:
            source = wanted
            if wanted == "lastmod" and raw_lastmod and _is_text(pa, types.get("lastmod_raw")):
                source = "lastmod_raw"
            kind = types.get(source)
            if kind is None:
                self.info.missing_columns.append(wanted)
            elif _is_text(pa, kind) or pa.types.is_timestamp(kind) or pa.types.is_date(kind):
                read_as[source] = wanted
            else:
                self.info.missing_columns.append(f"{wanted} ({kind}, not text)")
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=out.size, columns=list(read_as)):
                columns = {
                    read_as[source]: _as_text(pa, batch.column(i)).to_pylist()
                    for i, source in enumerate(read_as)
                }
                for i, url in enumerate(columns["url"]):
                    number += 1
                    if url is None or not url.strip():
                        self._skip(f"row {number}", "no url")
                        continue
                    full = out.add({c: values[i] for c, values in columns.items()})
                    if full is not None:
                        yield full
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise UsageError(
                f"cannot read {name} as Parquet after {self.info.rows} rows: {exc}"
            ) from None


def _check_row(row: object, columns: Iterable[str]) -> str | None:
    """Why a decoded JSON row cannot be used, or None."""
    if not isinstance(row, dict):
        return "not a JSON object"
    url = row.get("url")
    if not isinstance(url, str) or not url.strip():
        return "no url"
    for name in columns:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} is not text"
    return None


def _lines(file: IO[bytes]) -> Iterator[bytes | None]:
    """The file's lines; None for a line over `LINE_LIMIT` (read through, never held)."""
    while line := file.readline(LINE_LIMIT + 1):
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            _read_through(file)
            yield None
        else:
            yield line


def _read_through(file: IO[bytes]) -> None:
    """Skip the rest of an over-long line, a bounded piece at a time."""
    while (line := file.readline(LINE_LIMIT)) and not line.endswith(b"\n"):
        pass


def _checked_lines(text: io.TextIOWrapper, bad: list[tuple[int, str]]) -> Iterator[str]:
    """A CSV file's lines for the csv module, where a line over `LINE_LIMIT` or one that is not
    UTF-8 becomes an empty line (which the reader passes over) and is noted in `bad` by number."""
    number = 0
    while True:
        line = text.readline(LINE_LIMIT + 1)
        if not line:
            return
        number += 1
        if len(line) > LINE_LIMIT and not line.endswith(("\n", "\r")):
            while line and not line.endswith(("\n", "\r")):
                line = text.readline(LINE_LIMIT)
            bad.append((number, _LONG))
            yield "\n"
        elif not line.isascii() and not _is_utf8(line):
            bad.append((number, _NOT_UTF8))
            yield "\n"
        else:
            yield line


def _is_utf8(line: str) -> bool:
    """Whether a line decoded with `surrogateescape` had only UTF-8 in it."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_text(pa: Any, kind: Any) -> bool:
    return kind is not None and bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _as_text(pa: Any, column: Any) -> Any:
    """Timestamps and dates (a DataFrame's lastmod) as ISO text, as the JSON lines have them."""
    return column if _is_text(pa, column.type) else column.cast(pa.string())


def _read_ahead(stream: BinaryIO) -> bytes:
    """Up to `HEAD` bytes from the start of a stream, enough to tell its format: reads until a
    line ends or `HEAD` is reached (a pipe may hand over a few bytes at a time)."""
    head = b""
    while len(head) < HEAD and b"\n" not in head:
        block = stream.read1(HEAD - len(head)) if hasattr(stream, "read1") else stream.read(HEAD)
        if not block:
            break
        head += block
    return head


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were read ahead: those bytes, then the rest of it."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        block = self._rest.read(len(view))
        view[: len(block)] = block
        return len(block)

    def close(self) -> None:  # the stream belongs to the caller
        super().close()

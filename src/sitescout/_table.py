"""The inventory as columns (§13): a Parquet file written as it streams, or an Arrow table / pandas
DataFrame in memory (`to_arrow`, `to_pandas`). One schema serves all three.

Every walk batch (at most 1,000 entries) becomes one Arrow record batch straight away, so no list
of a whole site's rows ever exists: the Parquet writer holds at most one row group of record
batches, and a table is the record batches themselves (`pa.Table.from_batches`, no copy).

`lastmod` is a UTC timestamp (a date alone is midnight UTC; a year or a month is its first day)
so that a DataFrame can filter on it; the text the walk read (ISO 8601 when it could be read,
the sitemap's own text otherwise) stays in `lastmod_raw`, so a value that is not a date survives
(its `lastmod` is null).

pyarrow is an optional extra (`sitescout[tables]`, with pandas for `to_pandas`): the inventory's
other formats need nothing beyond the standard library, and pyarrow is a large wheel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ._core import Batch
from ._errors import refuse_running_loop
from ._extras import require_pandas, require_pyarrow
from ._since import lastmod_datetime
from ._walk import Walk, WalkOptions, as_walk_url, walk_options

log = logging.getLogger(__name__)

ROW_GROUP = 65_536
# The CSV header: every field as the JSON lines write it (lastmod as text).
COLUMNS = (
    "url",
    "lastmod",
    "priority",
    "changefreq",
    "hreflang",
    "alternate_of",
    "sitemap",
    "depth",
    "source",
    "title",
    "md_url",
    "sources",
)
_CACHE_MAX = 4096
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# The lastmod shapes Arrow parses itself (RE2 syntax): a date, and a datetime with an offset as
# the parser writes it (`Z` already turned into `+00:00`). Fractions beyond microseconds are left
# to the rule.
_YEAR = r"(?:[1-9]\d{3}|0[1-9]\d{2}|00[1-9]\d|000[1-9])"  # Arrow takes year 0, Python not
_DATE = "^" + _YEAR + r"-\d{2}-\d{2}"
_DAY = _DATE + "$"
_DATETIME = _DATE + r"T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?[+-]\d{2}:\d{2}$"
_MIDNIGHT_UTC = "T00:00:00+00:00"


def _pandas() -> Any:
    return require_pandas("to_pandas")


def schema(pa: Any) -> Any:
    """The columns of the Parquet file and of `to_arrow`, in order."""
    return pa.schema(
        [
            ("url", pa.string()),
            ("lastmod", pa.timestamp("us", tz="UTC")),
            ("lastmod_raw", pa.string()),
            ("priority", pa.float64()),
            ("changefreq", pa.string()),
            ("hreflang", pa.string()),
            ("alternate_of", pa.string()),
            ("sitemap", pa.string()),
            ("depth", pa.int32()),
            ("source", pa.string()),
            ("title", pa.string()),
            ("md_url", pa.string()),
            ("sources", pa.list_(pa.string())),
        ]
    )


class BatchConverter:
    """Walk batches to Arrow record batches of the shared schema."""

    def __init__(self) -> None:
        pa, _pq = require_pyarrow()
        import pyarrow.compute as pc  # type: ignore[import-not-found, import-untyped, unused-ignore]

        self.pa, self.pc = pa, pc
        self.schema = schema(pa)
        self._stamp = self.schema.field("lastmod").type
        self._micros: dict[str, int | None] = {}

    def micros(self, lastmod: str | None) -> int | None:
        """Microseconds since the epoch, UTC; None when the text is not a date.

        Whole shards often share a lastmod, so each distinct text is parsed once (the cache is
        bounded: a site of unique timestamps clears it now and then).
        """
        if lastmod is None:
            return None
        cache = self._micros
        if lastmod in cache:
            return cache[lastmod]
        moment = lastmod_datetime(lastmod)
        micros = None if moment is None else (moment - _EPOCH) // _MICROSECOND
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[lastmod] = micros
        return micros

    def lastmods(self, text: Any) -> Any:
        """The `lastmod` column of a batch, from its `lastmod_raw` string array.

        The two shapes the parser writes for nearly every date (`2024-05-01`, and
        `2024-05-01T10:00:00+02:00`) are parsed by Arrow in one call; anything else, and any
        batch where Arrow refuses one of those (`2024-02-30`), goes through `micros`, which is
        the rule. A test holds the two to the same answers.
        """
        pa, pc = self.pa, self.pc
        try:
            day = pc.fill_null(pc.match_substring_regex(text, _DAY), False)
            full = pc.fill_null(pc.match_substring_regex(text, _DATETIME), False)
            iso = pc.if_else(
                day,
                pc.binary_join_element_wise(text, _MIDNIGHT_UTC, ""),
                pc.if_else(full, text, pa.scalar(None, pa.string())),
            )
            stamps = iso.cast(self._stamp)
        except pa.ArrowInvalid:
            return pa.array([self.micros(v) for v in text.to_pylist()], type=self._stamp)
        rest = pc.and_(pc.invert(pc.or_(day, full)), pc.is_valid(text))
        if not pc.any(rest).as_py():
            return stamps
        others = [self.micros(text[i].as_py()) for i in pc.indices_nonzero(rest).to_pylist()]
        return pc.replace_with_mask(stamps, rest, pa.array(others, type=self._stamp))

    def convert(self, batch: Batch) -> Any:
        """One record batch of the schema from a walk's native batch: each column is built from
        the buffers the core lays out (`Batch.arrow_columns`), not from an object per cell."""
        pa = self.pa
        n = len(batch)
        (url, raw, priority, changefreq, hreflang, alternate_of, sitemap, depth, source, title,
         md_url, sources) = batch.arrow_columns()  # fmt: skip
        lastmod_raw = self._strings(n, raw)
        validity, values = priority
        sources_validity, sources_offsets, items = sources
        arrays = [
            self._strings(n, url),
            self.lastmods(lastmod_raw),
            lastmod_raw,
            pa.Array.from_buffers(pa.float64(), n, [_buffer(pa, validity), pa.py_buffer(values)]),
            self._strings(n, changefreq),
            self._strings(n, hreflang),
            self._strings(n, alternate_of),
            self._strings(n, sitemap),
            pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(depth)]),
            self._strings(n, source),
            self._strings(n, title),
            self._strings(n, md_url),
            pa.ListArray.from_buffers(
                pa.list_(pa.string()),
                n,
                [_buffer(pa, sources_validity), pa.py_buffer(sources_offsets)],
                children=[self._strings(_offset_count(sources_offsets), items)],
            ),
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _strings(self, n: int, column: tuple[bytes | None, bytes, bytes]) -> Any:
        pa = self.pa
        validity, offsets, data = column
        buffers = [_buffer(pa, validity), pa.py_buffer(offsets), pa.py_buffer(data)]
        return pa.Array.from_buffers(pa.string(), n, buffers)


def _buffer(pa: Any, data: bytes | None) -> Any:
    return None if data is None else pa.py_buffer(data)


def _offset_count(offsets: bytes) -> int:
    """The number of values a list column's 32-bit offsets hold: its last offset."""
    return int.from_bytes(offsets[-4:], "little", signed=True)


class ParquetWriter:
    """Streams a walk's batches into a Parquet file; memory holds at most one row group."""

    def __init__(self, path: Path) -> None:
        _pa, pq = require_pyarrow()
        self._convert = BatchConverter()
        self.schema = self._convert.schema
        self._writer = pq.ParquetWriter(str(path), self.schema, compression="zstd")
        self._pending: list[Any] = []
        self._pending_rows = 0
        self.rows = 0

    def write(self, batch: Batch) -> None:
        if not len(batch):
            return
        record_batch = self._convert.convert(batch)
        self._pending.append(record_batch)
        self._pending_rows += record_batch.num_rows
        if self._pending_rows >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        table = self._convert.pa.Table.from_batches(self._pending, schema=self.schema)
        self._writer.write_table(table, row_group_size=max(ROW_GROUP, table.num_rows))
        self.rows += table.num_rows
        self._pending, self._pending_rows = [], 0

    def close(self) -> None:
        self._flush()
        self._writer.close()
        log.debug("parquet: %d rows written", self.rows)


async def _record_batches(walk: AsyncIterable[Batch], convert: BatchConverter) -> list[Any]:
    return [convert.convert(batch) async for batch in walk if len(batch)]


def _log_report(walk: Walk) -> None:
    report = walk.report
    for warning in report.warnings:
        log.warning("%s", warning)
    if report.partial:
        log.warning("partial result: %s", "; ".join(report.partial_reasons))


async def to_arrow_async(url: str, options: WalkOptions | None = None, **kwargs: Any) -> Any:
    """Walk `url` and return its inventory as a `pyarrow.Table` (for code in an event loop).

    Takes the same keyword arguments as `walk` (`max_urls=`, `timeout=`, `crawl=`…). Columns:
    `url`, `lastmod` (timestamp, UTC), `lastmod_raw`, `priority` (float64), `changefreq`,
    `hreflang`, `alternate_of`, `sitemap` (strings), `depth` (int32), `source`, `title`,
    `md_url` (strings) and `sources` (list of strings, set when sources are merged). Like a
    walk, it never raises for what the site does: its warnings and a partial result are logged
    (`logging`, logger `sitescout`); use `walk` to read the full report. Raises `UsageError`
    when pyarrow is missing or an argument is wrong.
    """
    convert = BatchConverter()
    walk = Walk(as_walk_url(url, "site URL"), walk_options(options, kwargs))
    batches = await _record_batches(walk.batches(), convert)
    _log_report(walk)
    return convert.pa.Table.from_batches(batches, schema=convert.schema)


def to_arrow(url: str, options: WalkOptions | None = None, **kwargs: Any) -> Any:
    """Sync twin of `to_arrow_async`. Must not be called from inside a running event loop
    (a notebook runs one: `await sitescout.to_arrow_async(...)` there)."""
    refuse_running_loop("to_arrow")
    return asyncio.run(to_arrow_async(url, options, **kwargs))


async def to_pandas_async(url: str, options: WalkOptions | None = None, **kwargs: Any) -> Any:
    """`to_arrow_async` as a `pandas.DataFrame`: `lastmod` is `datetime64[us, UTC]`, `priority`
    float64 (NaN when absent), `depth` int32, text columns pandas strings."""
    pd = _pandas()
    table = await to_arrow_async(url, options, **kwargs)
    pa, _pq = require_pyarrow()
    # Arrow-backed strings keep text as Arrow buffers instead of one Python str per cell (what
    # pandas 3 does for text anyway); the table frees each column once it is converted.
    return table.to_pandas(
        types_mapper={pa.string(): pd.StringDtype("pyarrow")}.get,
        self_destruct=True,
        split_blocks=True,
    )


def to_pandas(url: str, options: WalkOptions | None = None, **kwargs: Any) -> Any:
    """Sync twin of `to_pandas_async` (same rule about running event loops as `to_arrow`)."""
    _pandas()
    refuse_running_loop("to_pandas")
    return asyncio.run(to_pandas_async(url, options, **kwargs))

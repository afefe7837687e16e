"""The inventory as a Parquet file (§13), written as it streams: one row group per 64k URLs.

pyarrow is an optional extra (`sitescout[tables]`): the inventory's other formats need nothing
beyond the standard library, and pyarrow is a large wheel.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ._errors import UsageError
from ._models import Entry

log = logging.getLogger(__name__)

ROW_GROUP = 65_536
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
)
_INSTALL = "Parquet output needs pyarrow: pip install 'sitescout[tables]'"


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(_INSTALL) from exc
    return pa, pq


class ParquetWriter:
    """Streams entries into a Parquet file; memory holds at most one row group."""

    def __init__(self, path: Path) -> None:
        pa, pq = _pyarrow()
        self._pa = pa
        self.schema = pa.schema(
            [
                ("url", pa.string()),
                ("lastmod", pa.string()),
                ("priority", pa.float64()),
                ("changefreq", pa.string()),
                ("hreflang", pa.string()),
                ("alternate_of", pa.string()),
                ("sitemap", pa.string()),
                ("depth", pa.int32()),
                ("source", pa.string()),
                ("title", pa.string()),
            ]
        )
        self._writer = pq.ParquetWriter(str(path), self.schema, compression="zstd")
        self._columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        self.rows = 0

    def write(self, batch: list[Entry]) -> None:
        cols = self._columns
        for e in batch:
            cols["url"].append(e.url)
            cols["lastmod"].append(e.lastmod)
            cols["priority"].append(e.priority)
            cols["changefreq"].append(e.changefreq)
            cols["hreflang"].append(e.hreflang)
            cols["alternate_of"].append(e.alternate_of)
            cols["sitemap"].append(e.sitemap)
            cols["depth"].append(e.depth)
            cols["source"].append(e.source)
            cols["title"].append(e.title)
        if len(cols["url"]) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        cols = self._columns
        if not cols["url"]:
            return
        table = self._pa.Table.from_pydict(cols, schema=self.schema)
        self._writer.write_table(table)
        self.rows += len(cols["url"])
        self._columns = {name: [] for name in COLUMNS}

    def close(self) -> None:
        self._flush()
        self._writer.close()
        log.debug("parquet: %d rows written", self.rows)

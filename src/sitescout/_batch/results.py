"""What the batch did with each site: `SiteResult` (one row of `sites.parquet`, and the
marker of a complete partition, read back untrusted), its counts and status from a walk's
report, and `write_sites`, which rewrites `sites.parquet` in one step."""

from __future__ import annotations

import os
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from .._extras import require_pyarrow
from .._models import WalkReport

# -- what a site's walk produced ----------------------------------------------------------------


@dataclass(slots=True)
class SiteResult:
    """One row of `sites.parquet`: what the batch did with one site."""

    site: str | None
    url: str
    status: str = "not run"  # complete | partial | failed | skipped | not run
    source: str | None = None
    source_url: str | None = None
    documents: int = 0
    urls: int = 0
    alternates: int = 0
    errors: int = 0
    malformed: int = 0
    partial: bool = False
    budgets_hit: list[str] = field(default_factory=list)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    seconds: float = 0.0
    error_class: str | None = None
    error_message: str | None = None
    parts: int = 0
    leaves: int = 0
    # With a state directory (`--state`): sitemap documents unchanged since the last run (read
    # from the state), downloaded in full, and the body bytes that came over the network.
    unchanged_documents: int = 0
    fetched_documents: int = 0
    downloaded_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        for name in ("started_at", "finished_at"):
            value = row[name]
            row[name] = None if value is None else value.isoformat()
        return row

    @classmethod
    def from_json(cls, data: object) -> SiteResult:
        """A row read back from a marker file, which is untrusted: every field is checked."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        kinds: dict[str, tuple[type, ...]] = {
            "site": (str,),
            "url": (str,),
            "status": (str,),
            "source": (str, type(None)),
            "source_url": (str, type(None)),
            "error_class": (str, type(None)),
            "error_message": (str, type(None)),
            "partial": (bool,),
            "seconds": (float, int),
            "budgets_hit": (list,),
        }
        values: dict[str, Any] = {}
        for f in fields(cls):
            # Counts added after markers were first written read as 0 from an older marker.
            value = data.get(f.name, 0 if f.name in _ADDED_COUNTS else None)
            if f.name in ("started_at", "finished_at"):
                values[f.name] = None if value is None else _moment(value)
                continue
            want = kinds.get(f.name, (int,))
            if not isinstance(value, want) or (want == (int,) and isinstance(value, bool)):
                raise ValueError(f"{f.name}: {value!r}")
            if want == (int,) and isinstance(value, int) and value < 0:
                raise ValueError(f"{f.name}: {value!r}")
            values[f.name] = value
        if not all(isinstance(b, str) for b in values["budgets_hit"]):
            raise ValueError("budgets_hit")
        return cls(**values)


_ADDED_COUNTS = frozenset({"unchanged_documents", "fetched_documents", "downloaded_bytes"})


def _moment(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"time without zone: {value!r}")
    return moment


def add_counts(result: SiteResult, report: WalkReport) -> None:
    result.documents += len(report.documents)
    result.urls += report.urls
    result.alternates += report.alternates
    result.errors += len(report.errors)
    result.malformed += report.malformed_count
    result.partial = result.partial or report.partial
    if report.rewalk is not None:
        result.unchanged_documents += report.rewalk.unchanged
        result.fetched_documents += report.rewalk.fetched
        result.downloaded_bytes += report.rewalk.downloaded
    for name in report.budgets_hit:
        if name not in result.budgets_hit:
            result.budgets_hit.append(name)


def from_report(result: SiteResult, report: WalkReport) -> None:
    """A site's own walk: its counts, where its URLs came from, and why it found none."""
    add_counts(result, report)
    result.source, result.source_url = report.source, report.source_url
    if report.found_nothing:
        first = report.errors[0] if report.errors else None
        result.error_class = (first.error_class if first else None) or "NothingFoundError"
        result.error_message = (
            (first.error or first.url)
            if first is not None
            else "no sitemap, llms.txt or linked page found"
        )


def settle(result: SiteResult) -> None:
    if result.error_class is not None and result.urls == 0 and result.alternates == 0:
        result.status = "failed"
    elif result.partial or result.error_class is not None:
        result.status = "partial"
    else:
        result.status = "complete"


# -- sites.parquet ------------------------------------------------------------------------------


def write_sites(path: Path, results: list[SiteResult]) -> None:
    """All rows, written to a temporary sibling and renamed over the file."""
    pa, pq = require_pyarrow()
    stamp = pa.timestamp("us", tz="UTC")
    schema = pa.schema(
        [
            ("site", pa.string()),
            ("url", pa.string()),
            ("status", pa.string()),
            ("source", pa.string()),
            ("source_url", pa.string()),
            ("documents", pa.int64()),
            ("urls", pa.int64()),
            ("alternates", pa.int64()),
            ("errors", pa.int64()),
            ("malformed", pa.int64()),
            ("partial", pa.bool_()),
            ("budgets_hit", pa.list_(pa.string())),
            ("started_at", stamp),
            ("finished_at", stamp),
            ("seconds", pa.float64()),
            ("error_class", pa.string()),
            ("error_message", pa.string()),
            ("parts", pa.int64()),
            ("leaves", pa.int64()),
            ("unchanged_documents", pa.int64()),
            ("fetched_documents", pa.int64()),
            ("downloaded_bytes", pa.int64()),
        ]
    )
    columns = {f.name: [getattr(r, f.name) for r in results] for f in fields(SiteResult)}
    table = pa.table(columns, schema=schema)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, str(temp), compression="zstd")
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)

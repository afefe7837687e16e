"""Many sites, and huge sites, on a Dask cluster (`sitescout batch`).

Every site of a list is one task running the ordinary walk and writing its own Parquet part
into a staging directory of its own; when the walk ends, the directory gets its completion
marker (written last) and is renamed into `DIR/urls/site=<key>/` in one step. A partition
without its marker therefore never exists, an interrupted or killed attempt leaves only a
staging directory nobody reads, and a re-run skips exactly the sites whose partition exists.

A site whose root sitemap index lists more than `fanout` children hands them to tasks of their
own (`hand_off` on the walk). Each leaf task writes a part plus the 64-bit keyed hash of every
row's URL; a last task removes the URLs an earlier part already holds, in passes over slices
of the hash space so that its memory stays bounded however large the site, then promotes the
partition as above.

Politeness holds cluster-wide because the driver keeps one lane per host: one site task per
host at a time, and a fanned-out site's leaves at most `min(concurrency, per_host)` at once,
each walking with one document in flight. A site whose robots.txt sets a Crawl-delay is never
fanned out: the delay, not the parse, bounds it, and its one task paces its own requests.

Nothing else in the package imports Dask; it is an optional extra (`sitescout[dask]`).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import hashlib
import io
import json
import logging
import math
import os
import secrets
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ._api import walk_options
from ._core import Batch, SeenSet
from ._errors import UsageError
from ._locale import base_prefix, path_locale
from ._models import WalkReport
from ._project import lock_directory
from ._signals import ctrl_c_ignored, ctrl_c_sets
from ._table import ParquetWriter, require_pyarrow
from ._urls import assume_https, document_key, is_http_url, normalize_url
from ._walk import Walk, WalkOptions

log = logging.getLogger(__name__)

INSTALL = "pip install 'sitescout[dask]'"
MARKER = "_SITE.json"
PART_ROWS = 1_000_000  # rows per part file: a site of 10M URLs is ten files, not one
PASS_HASHES = 2_000_000  # hashes held at once while de-duplicating a fanned-out site
THREADS_PER_WORKER = 4  # walks wait on the network far more than they compute
MAX_LINE = 8192  # a line of the site list longer than this is not a URL
MAX_SITES = 1_000_000
MAX_KEY = 180  # bytes of a partition directory name's value (names stop at 255)
SAVE_EVERY = 5.0  # seconds between rewrites of sites.parquet while a batch runs
CLOSE_TIMEOUT = 10.0  # seconds for the local cluster to shut down
_HASH_CHUNK = 65_536


# -- the site list ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SiteLine:
    """One line of the site list: a site URL, or why it is not one."""

    line: int
    url: str
    problem: str | None = None


def read_sites(lines: Iterable[str]) -> Iterator[SiteLine]:
    """The sites of a list: one URL per line (`#` comments and blank lines ignored), or a CSV
    whose header has a `url` column. A bare domain means its https site. Lines that are not a
    site URL come back with `problem` set, so the batch can record them instead of failing."""
    rows = _bounded_lines(lines) if isinstance(lines, io.TextIOBase) else iter(lines)
    column: int | None = None
    first = True
    count = 0
    for number, raw in enumerate(rows, 1):
        text = raw.strip().lstrip("\ufeff") if first else raw.strip()
        if not text or text.startswith("#"):
            continue
        if first:
            first = False
            header = _csv_row(text)
            names = [h.strip().lower() for h in header]
            if len(header) > 1 and "url" in names:
                column = names.index("url")
                continue
            if names == ["url"]:
                column = 0
                continue
        count += 1
        if count > MAX_SITES:
            yield SiteLine(number, "", f"more than {MAX_SITES} sites; the rest are ignored")
            return
        if len(text) > MAX_LINE:
            yield SiteLine(number, text[:80] + "…", f"line longer than {MAX_LINE} characters")
            continue
        if column is not None:
            cells = _csv_row(text)
            if column >= len(cells):
                yield SiteLine(number, text[:200], "no value in the url column")
                continue
            text = cells[column].strip()
        yield _site_line(number, text)


def _bounded_lines(f: io.TextIOBase) -> Iterator[str]:
    """A file's lines, each read at most MAX_LINE + 1 characters at a time: a line of a
    gigabyte (a file that is not a site list) costs no more memory than a long URL."""
    while line := f.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while (rest := f.readline(MAX_LINE + 1)) and not rest.endswith("\n"):
                pass
        yield line


def _csv_row(text: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text)), [])
    except csv.Error:
        return [text]


def _site_line(number: int, text: str) -> SiteLine:
    url, assumed = assume_https(text)  # a bare domain means its https site, as on the CLI
    if not assumed and "://" not in text:
        return SiteLine(number, text[:200], "not a site URL")
    if not is_http_url(url):
        return SiteLine(number, text[:200], "not an http(s) URL")
    try:
        url = normalize_url(url)
        host = urlsplit(url).hostname
    except ValueError as exc:
        return SiteLine(number, text[:200], f"not a site URL ({exc})")
    if not host or any(c.isspace() for c in text):
        return SiteLine(number, text[:200], "not a site URL")
    return SiteLine(number, url)


def site_key(url: str) -> str:
    """The partition value of a site: its host, with the port when one is given and the path
    when the site is a part of its host (`example.com/blog/`); long keys end with a hash."""
    parts = urlsplit(url)
    key = (parts.hostname or "").lower()
    with contextlib.suppress(ValueError):
        if parts.port is not None:
            key = f"{key}:{parts.port}"
    if parts.path not in ("", "/"):
        key += parts.path
    if len(quote(key, safe="")) > MAX_KEY:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
        while len(quote(key, safe="")) > MAX_KEY - 13:
            key = key[: len(key) * 3 // 4]
        key = f"{key}~{digest}"
    return key


def partition_name(key: str) -> str:
    """The directory of a site's partition: `site=` and the key percent-encoded, which is what
    Arrow's and Dask's hive-partitioning readers decode."""
    return "site=" + quote(key, safe="")


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


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
            value = data.get(f.name)
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


def _moment(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"time without zone: {value!r}")
    return moment


def _add_counts(result: SiteResult, report: WalkReport) -> None:
    result.documents += len(report.documents)
    result.urls += report.urls
    result.alternates += report.alternates
    result.errors += len(report.errors)
    result.malformed += report.malformed_count
    result.partial = result.partial or report.partial
    for name in report.budgets_hit:
        if name not in result.budgets_hit:
            result.budgets_hit.append(name)


def _from_report(result: SiteResult, report: WalkReport) -> None:
    """A site's own walk: its counts, where its URLs came from, and why it found none."""
    _add_counts(result, report)
    result.source, result.source_url = report.source, report.source_url
    if report.found_nothing:
        first = report.errors[0] if report.errors else None
        result.error_class = (first.error_class if first else None) or "NothingFoundError"
        result.error_message = (
            (first.error or first.url)
            if first is not None
            else "no sitemap, llms.txt or linked page found"
        )


def _settle(result: SiteResult) -> None:
    if result.error_class is not None and result.urls == 0 and result.alternates == 0:
        result.status = "failed"
    elif result.partial or result.error_class is not None:
        result.status = "partial"
    else:
        result.status = "complete"


# -- tasks (they run on the workers) ------------------------------------------------------------


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


def _worker_logging(quiet: bool) -> None:
    """In a worker process nobody configured logging for, Python prints warnings on stderr
    (its last-resort handler): a NullHandler keeps them in, when the driver asked for quiet."""
    logger = logging.getLogger("sitescout")
    if quiet and not logging.getLogger().handlers and not logger.handlers:
        logger.addHandler(logging.NullHandler())


@dataclass(slots=True)
class Part:
    path: str
    rows: int
    hashes: str | None


@dataclass(slots=True)
class SiteOutcome:
    result: SiteResult
    leaves: list[str] = field(default_factory=list)
    staging: str | None = None  # the attempt's directory, when leaves still have to run
    parts: list[Part] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LeafJob:
    site: SiteJob
    index: int
    sitemap: str
    staging: str


@dataclass(slots=True)
class LeafOutcome:
    index: int
    report: WalkReport | None
    parts: list[Part]
    error_class: str | None = None
    error_message: str | None = None


def url_hashes(urls: list[str], key: bytes) -> bytes:
    """8 bytes of keyed BLAKE2b per URL: the same in every process of the cluster (unlike
    the seen-set's hash), and a site cannot pick URLs that collide without the key."""
    blake2b = hashlib.blake2b
    return b"".join(
        blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8, key=key).digest()
        for url in urls
    )


def _hashed(part: Part, key: bytes) -> Part:
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


class _Parts:
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
        entries = batch.entries()
        while entries:
            if self._writer is None:
                self._open()
            assert self._writer is not None
            part = self._part
            chunk, entries = entries[: PART_ROWS - part.rows], entries[PART_ROWS - part.rows :]
            self._writer.write(chunk)
            if self._hashes is not None and self.hash_key is not None:
                self._hashes.write(url_hashes([e.url for e in chunk], self.hash_key))
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


async def _walk_into(walk: Walk, parts: _Parts) -> None:
    try:
        async for batch in walk.batches():
            parts.write(batch)
    finally:
        parts.close()


def walk_site(job: SiteJob) -> SiteOutcome:
    """The task of one site: walk it into a staging directory; promote it when nothing is
    left to fan out, or return its leaves. Never raises for what the site does."""
    _worker_logging(job.quiet)
    result = SiteResult(job.key, job.url, started_at=datetime.now(UTC))
    staging = Path(job.out) / ".staging" / partition_name(job.key) / uuid.uuid4().hex
    leaves: list[str] = []
    try:
        staging.mkdir(parents=True)
        walk: Walk

        def hand_off(index_url: str, children: list[str]) -> bool:
            robots = walk.discovery.robots if walk.discovery is not None else None
            delay = robots.crawl_delay if robots is not None else None
            # An index listing itself would have one leaf task walk the whole site again.
            own = document_key(index_url)
            listed = [c for c in dict.fromkeys(children) if document_key(c) != own]
            if job.fanout is None or len(listed) <= job.fanout or delay:
                return False
            log.info("%s: %d child sitemaps of %s fan out", job.url, len(listed), index_url)
            leaves.extend(listed)
            return True

        walk = Walk(job.url, job.options, hand_off=hand_off)
        parts = _Parts(staging, None)
        asyncio.run(_walk_into(walk, parts))
        _from_report(result, walk.report)
    except Exception as exc:  # a bug must not stop the other sites: record it
        log.exception("site %s failed", job.url)
        result.error_class, result.error_message = type(exc).__name__, str(exc) or repr(exc)
        result.partial = True
        shutil.rmtree(staging, ignore_errors=True)
        _finished(result)
        return SiteOutcome(result)
    result.parts = len(parts.done)
    if leaves:
        result.leaves = len(leaves)
        return SiteOutcome(result, leaves, str(staging), parts.done)
    _finished(result)
    if result.status == "failed":
        shutil.rmtree(staging, ignore_errors=True)
        return SiteOutcome(result)
    _promote(staging, job, result)
    return SiteOutcome(result)


def _finished(result: SiteResult) -> None:
    """Stamp the end (wall clock: a fanned-out site ends on another machine than it began)."""
    result.finished_at = datetime.now(UTC)
    if result.started_at is not None:
        result.seconds = (result.finished_at - result.started_at).total_seconds()
    if result.status == "not run":
        _settle(result)


def walk_leaf(job: LeafJob) -> LeafOutcome:
    """The task of one leaf sitemap of a fanned-out site: walk it alone, one document at a time
    (the driver runs at most the host's limit of these at once), into a part with hashes."""
    _worker_logging(job.site.quiet)
    directory = Path(job.staging) / f"leaf-{job.index}-{uuid.uuid4().hex}"
    site = job.site
    try:
        directory.mkdir(parents=True)
        options = replace(
            site.options,
            sitemap=job.sitemap,
            concurrency=1,
            fetch=replace(site.options.fetch, per_host=1),
        )
        walk = Walk(site.url, options)
        parts = _Parts(directory, site.hash_key)
        asyncio.run(_walk_into(walk, parts))
    except Exception as exc:
        log.exception("leaf sitemap %s of %s failed", job.sitemap, site.url)
        shutil.rmtree(directory, ignore_errors=True)
        return LeafOutcome(job.index, None, [], type(exc).__name__, str(exc) or repr(exc))
    return LeafOutcome(job.index, walk.report, parts.done)


def finish_site(job: SiteJob, site: SiteOutcome, leaves: list[LeafOutcome]) -> SiteOutcome:
    """The last task of a fanned-out site: drop URLs an earlier part holds, write the marker,
    promote the partition. Parts are taken in order: the site's own, then the leaves as the
    index listed them, so the first listing of a URL is the one kept."""
    _worker_logging(job.quiet)
    # A copy: Dask may run this task again (its worker died), and an in-process cluster hands
    # over the driver's own objects.
    result = replace(site.result, budgets_hit=list(site.result.budgets_hit))
    assert site.staging is not None
    staging = Path(site.staging)
    done = _promoted(job)
    if done is not None:  # an earlier attempt promoted the partition, then its worker died
        return SiteOutcome(done)
    final = staging.parent / f"final-{uuid.uuid4().hex}"
    try:
        leaves = sorted(leaves, key=lambda o: o.index)
        first_error: tuple[str | None, str | None] | None = None
        for leaf in leaves:
            if leaf.report is not None:
                _add_counts(result, leaf.report)
                for doc in leaf.report.errors[:1]:
                    first_error = first_error or (doc.error_class, doc.error or doc.url)
            else:  # the leaf's task failed: its sitemap counts as a failed document
                log.warning("%s: leaf task failed: %s", job.url, leaf.error_message)
                result.errors += 1
                result.partial = True
                first_error = first_error or (leaf.error_class, leaf.error_message)
        own = [_hashed(p, job.hash_key) for p in site.parts]
        parts = own + [p for leaf in leaves for p in leaf.parts]
        drops = duplicate_rows(parts)
        final.mkdir()
        pages, alternates = _write_final(parts, drops, final)
        result.urls -= pages
        result.alternates -= alternates
        if result.urls == 0 and result.alternates == 0 and first_error is not None:
            result.error_class = first_error[0] or "FetchError"
            result.error_message = first_error[1]
        result.parts = len([p for p in final.iterdir() if p.suffix == ".parquet"])
        _finished(result)
        _promote(final, job, result)
    except Exception as exc:
        log.exception("finishing %s failed", job.url)
        result.error_class, result.error_message = type(exc).__name__, str(exc) or repr(exc)
        result.status = "failed"
        _finished(result)
        shutil.rmtree(final, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return SiteOutcome(result)


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


def _write_final(parts: list[Part], drops: list[list[int]], final: Path) -> tuple[int, int]:
    """Move or filter each part into the final directory; the pages and alternates dropped."""
    pa, pq = require_pyarrow()
    import pyarrow.compute as pc  # type: ignore[import-not-found, import-untyped, unused-ignore]

    pages = alternates = 0
    n = 0
    for part, dropped in zip(parts, drops, strict=True):
        if part.rows == 0:
            continue
        target = final / f"part-{n}.parquet"
        n += 1
        if not dropped:
            # A link, not a move: should this task die and run again, the part is still there.
            try:
                os.link(part.path, target)
            except OSError:
                shutil.copyfile(part.path, target)
            continue
        source = pq.ParquetFile(part.path)
        writer = pq.ParquetWriter(str(target), source.schema_arrow, compression="zstd")
        try:
            offset = 0
            index = 0
            for record_batch in source.iter_batches(batch_size=65_536):
                size = record_batch.num_rows
                keep = [True] * size
                while index < len(dropped) and dropped[index] < offset + size:
                    keep[dropped[index] - offset] = False
                    index += 1
                mask = pa.array(keep, type=pa.bool_())
                gone = record_batch.filter(pc.invert(mask))
                if gone.num_rows:
                    alt = pc.sum(pc.is_valid(gone.column("alternate_of"))).as_py() or 0
                    alternates += alt
                    pages += gone.num_rows - alt
                kept = record_batch.filter(mask)
                if kept.num_rows:
                    writer.write_table(pa.Table.from_batches([kept]))
                offset += size
        finally:
            writer.close()
    return pages, alternates


def _promote(directory: Path, job: SiteJob, result: SiteResult) -> None:
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


def _promoted(job: SiteJob) -> SiteResult | None:
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


# -- the driver -----------------------------------------------------------------------------------


def _dask() -> tuple[Any, Any]:
    try:
        import distributed  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(f"batch needs Dask: {INSTALL}") from exc
    return distributed, distributed.as_completed


@dataclass(slots=True)
class _Site:
    line: SiteLine
    result: SiteResult
    job: SiteJob | None = None
    outcome: SiteOutcome | None = None
    leaves: deque[LeafJob] = field(default_factory=deque)
    running: int = 0
    finished: list[LeafOutcome] = field(default_factory=list)


Progress = Callable[["BatchRun"], None]


class BatchRun:
    """One batch: the site list, the cluster, the lanes per host, the results as they come.

    `run()` blocks until every site is done. After Ctrl-C (KeyboardInterrupt, re-raised) the
    results hold what finished, and `sites.parquet` says so.
    """

    def __init__(
        self,
        sites: Iterable[str],
        out: str | os.PathLike[str],
        *,
        client: Any = None,
        scheduler: str | None = None,
        workers: int | None = None,
        fanout: int = 50,
        refresh: bool = False,
        options: WalkOptions | None = None,
        progress: Progress | None = None,
        quiet_workers: bool = False,
        **kwargs: Any,
    ) -> None:
        """`quiet_workers`: the library's log records stay inside worker processes whose logging
        nobody configured (the command line's stderr is for its own progress and summary)."""
        self.quiet_workers = quiet_workers
        self.distributed, self._as_completed = _dask()
        require_pyarrow()
        if isinstance(fanout, bool) or not isinstance(fanout, int) or fanout < 1:
            raise UsageError(f"fanout must be a whole number of at least 1, got {fanout!r}")
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise UsageError(f"workers must be a whole number of at least 1, got {workers!r}")
        self.options = walk_options(options, kwargs)
        self.out = Path(out)
        self.fanout = fanout
        self.refresh = refresh
        self.workers = workers
        self.scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
        self.client = client
        self.dashboard: str | None = None
        self.progress = progress
        self.sites: list[_Site] = []
        self._keys: dict[str, int] = {}
        for line in read_sites(sites):
            self._add(line)
        self._saved = 0.0
        self.urls_found = 0

    def _add(self, line: SiteLine) -> None:
        if line.problem is not None:
            result = SiteResult(None, line.url, status="failed", error_class="UsageError")
            result.error_message = f"line {line.line}: {line.problem}"
            self.sites.append(_Site(line, result))
            return
        key = site_key(line.url)
        if key in self._keys:
            log.info("line %d: %s is already in the list (line %d)", line.line, line.url, key)
            return
        self._keys[key] = len(self.sites)
        self.sites.append(_Site(line, SiteResult(key, line.url)))

    @property
    def results(self) -> list[SiteResult]:
        return [s.result for s in self.sites]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.sites:
            counts[s.result.status] = counts.get(s.result.status, 0) + 1
        return counts

    def _fanout_for(self, url: str) -> int | None:
        opts = self.options
        if (
            opts.crawl
            or opts.source in ("llms", "all")
            or opts.budgets.any_set
            or (opts.sitemap is None and base_prefix(url) is not None)
        ):
            return None
        return self.fanout

    def run(self) -> list[SiteResult]:
        """Walk every site not complete yet; one batch at a time per output directory."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "urls").mkdir(exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        lock = lock_directory(self.out, ".batch.lock", "batch")
        try:
            return self._run()
        finally:
            os.close(lock)

    def _run(self) -> list[SiteResult]:
        shutil.rmtree(self.out / ".trash", ignore_errors=True)
        todo: list[_Site] = []
        for s in self.sites:
            key = s.result.site
            if key is None:
                continue
            done = complete_result(self.out, key)
            if done is not None and not self.refresh:
                done.status = "skipped" if done.status == "complete" else done.status
                s.result = done
                continue
            exists = (self.out / "urls" / partition_name(key)).exists()
            options = self.options
            if not options.filter_locales and path_locale(s.line.url) is not None:
                options = replace(options, filter_locales=True)  # as `urls` does for a base URL
            s.job = SiteJob(
                url=s.line.url,
                key=key,
                out=str(self.out),
                options=options,
                quiet=self.quiet_workers,
                fanout=self._fanout_for(s.line.url),
                hash_key=secrets.token_bytes(16),
                run=uuid.uuid4().hex,
                replace=self.refresh or exists,
            )
            todo.append(s)
        if todo:
            with self._cluster() as client:
                self._drive(client, todo)
        self._save(force=True)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.out / ".staging", ignore_errors=True)
        return self.results

    @contextlib.contextmanager
    def _cluster(self) -> Iterator[Any]:
        if self.client is not None:
            yield self.client
            return
        distributed = self.distributed
        if self.scheduler:
            with distributed.Client(self.scheduler) as client:
                self.dashboard = client.dashboard_link
                yield client
            return
        n = self.workers or max(1, os.cpu_count() or 1)
        # Ctrl-C on a terminal reaches the whole process group: the driver alone should get
        # it and close the cluster in order, not have the workers die under it and restart.
        with ctrl_c_ignored():
            cluster = distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=THREADS_PER_WORKER,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
            )
        client = None
        try:
            client = distributed.Client(cluster)
            self.dashboard = client.dashboard_link
            yield client
        finally:
            # Bounded: after Ctrl-C a worker may still wait on a site that does not answer.
            with contextlib.suppress(Exception):
                if client is not None:
                    client.close(timeout=CLOSE_TIMEOUT)
            with contextlib.suppress(Exception):
                cluster.close(timeout=CLOSE_TIMEOUT)

    def _drive(self, client: Any, todo: list[_Site]) -> None:
        lanes: dict[str, deque[_Site]] = {}
        for s in todo:
            lanes.setdefault(host_of(s.line.url), deque()).append(s)
        leaf_limit = max(1, min(self.options.concurrency, self.options.fetch.per_host))
        futures: dict[Any, tuple[str, _Site, Any]] = {}
        queue = self._as_completed(loop=client.loop)

        def submit(kind: str, s: _Site, fn: Callable[..., Any], *args: Any) -> None:
            future = client.submit(fn, *args, pure=False, key=f"{kind}-{uuid.uuid4().hex}")
            futures[future] = (kind, s, args)
            queue.add(future)

        def next_site(host: str) -> None:
            lane = lanes[host]
            if lane:
                s = lane.popleft()
                assert s.job is not None
                s.result.started_at = datetime.now(UTC)
                submit("site", s, walk_site, s.job)

        def feed_leaves(s: _Site) -> None:
            while s.leaves and s.running < leaf_limit:
                submit("leaf", s, walk_leaf, s.leaves.popleft())
                s.running += 1

        def handle(future: Any) -> None:
            kind, s, args = futures.pop(future)
            host = host_of(s.line.url)
            outcome: Any = None
            error: BaseException | None = None
            try:
                outcome = future.result()
            except Exception as exc:  # the task died with its worker, or Dask gave up
                error = exc
            finally:
                # Released at once: a result the client still holds is one the scheduler
                # recomputes when its worker dies, and these tasks fetch from sites.
                future.release()
            if kind == "leaf":
                s.running -= 1
                if error is not None:
                    job: LeafJob = args[0]
                    outcome = LeafOutcome(job.index, None, [], type(error).__name__, str(error))
                s.finished.append(outcome)
                feed_leaves(s)
                if not s.leaves and s.running == 0:
                    assert s.job is not None and s.outcome is not None
                    submit("finish", s, finish_site, s.job, s.outcome, s.finished)
                return
            if error is not None:
                s.result.status = "failed"
                s.result.error_class = type(error).__name__
                s.result.error_message = str(error) or repr(error)
                s.result.finished_at = datetime.now(UTC)
                self._done(s, host, next_site)
                return
            assert isinstance(outcome, SiteOutcome)
            if kind == "site" and outcome.leaves:
                s.outcome = outcome
                s.result = outcome.result
                assert s.job is not None and outcome.staging is not None
                s.leaves.extend(
                    LeafJob(s.job, i, leaf, outcome.staging)
                    for i, leaf in enumerate(outcome.leaves)
                )
                feed_leaves(s)
                return
            s.result = outcome.result
            self._done(s, host, next_site)

        if self.progress is not None:
            self.progress(self)
        interrupted = threading.Event()
        try:
            with ctrl_c_sets(interrupted):
                for host in lanes:
                    next_site(host)
                while futures:
                    if not queue.has_ready():
                        # Polled, not blocked on: Ctrl-C only sets the event (raised from a
                        # signal handler, KeyboardInterrupt can land in a callback of Dask's
                        # that swallows it, and the batch would run on).
                        if interrupted.wait(0.05):
                            raise KeyboardInterrupt
                        continue
                    for future in queue.next_batch(block=False):
                        handle(future)
        except BaseException:
            for s in self.sites:
                if s.result.status == "not run" and s.result.started_at is not None:
                    s.result.error_class = "Interrupted"
                    s.result.error_message = "the batch stopped before this site finished"
            with contextlib.suppress(Exception):
                client.cancel(list(futures))
            with contextlib.suppress(Exception):
                self._save(force=True)
            raise

    def _done(self, s: _Site, host: str, next_site: Callable[[str], None]) -> None:
        self.urls_found += s.result.urls + s.result.alternates
        next_site(host)
        if self.progress is not None:
            self.progress(self)
        self._save()

    def _save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._saved < SAVE_EVERY:
            return
        self._saved = now
        if force:
            self._reconcile()
        write_sites(self.out / "sites.parquet", self.results)

    def _reconcile(self) -> None:
        """A task promotes its own partition: one may have finished after the driver stopped
        listening (Ctrl-C). Its marker, not the driver's memory, says it is complete."""
        for s in self.sites:
            key = s.result.site
            if key is not None and s.result.status == "not run":
                done = complete_result(self.out, key)
                if done is not None:
                    s.result = done


def batch(
    sites: Iterable[str] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    fanout: int = 50,
    refresh: bool = False,
    options: WalkOptions | None = None,
    **kwargs: Any,
) -> list[SiteResult]:
    """Walk every site of `sites` on a Dask cluster into a Parquet dataset under `out`.

    `sites` is an iterable of site URLs (bare domains mean https), or the path of a file of
    them (one per line, `#` comments; or a CSV with a `url` column). Keyword arguments are the
    walk's (`concurrency=`, `timeout=`, `max_urls=`, `locale=`, `crawl=`…), applied to each
    site. `client` is a `distributed.Client`; without one, `scheduler` (or the
    DASK_SCHEDULER_ADDRESS environment variable) names a running cluster, and otherwise a
    LocalCluster of `workers` processes on 127.0.0.1 runs the batch and is closed after it.

    Writes `out/urls/site=<key>/part-<n>.parquet` (the columns of `urls --format parquet`),
    each partition complete once its `_SITE.json` marker exists, and `out/sites.parquet`, one
    row per site; returns those rows. Sites already complete in `out` are skipped unless
    `refresh`. Raises UsageError when Dask or pyarrow is missing or an option is wrong.
    """
    settings: dict[str, Any] = {
        "client": client,
        "scheduler": scheduler,
        "workers": workers,
        "fanout": fanout,
        "refresh": refresh,
        "options": options,
    }
    if not isinstance(sites, (str, os.PathLike)):
        return BatchRun(sites, out, **settings, **kwargs).run()
    if isinstance(sites, str) and is_http_url(sites):
        raise UsageError(f"sites is a list of site URLs or the path of a file; got {sites!r}")
    path = Path(sites)
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            run = BatchRun(f, out, **settings, **kwargs)
    except OSError as exc:
        raise UsageError(f"cannot read the site list {path}: {exc.strerror or exc}") from exc
    return run.run()

"""What runs on a worker: `walk_site` (one site's walk, promoted or handed to leaves),
`walk_leaf` (one leaf sitemap of a fanned-out site) and `finish_site` (the fanned-out site's
parts de-duplicated into its final partition), with the jobs and outcomes they pass around.

Dask pickles these functions by reference: a worker imports this module by its path."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from .._extras import require_pyarrow
from .._models import WalkReport
from .._urls import document_key
from .._walk import Walk
from .parts import Part, Parts, SiteJob, duplicate_rows, hashed, promote, promoted
from .results import SiteResult, add_counts, from_report, settle
from .sites import partition_name

log = logging.getLogger(__name__)


def _worker_logging(quiet: bool) -> None:
    """In a worker process nobody configured logging for, Python prints warnings on stderr
    (its last-resort handler): a NullHandler keeps them in, when the driver asked for quiet."""
    logger = logging.getLogger("sitescout")
    if quiet and not logging.getLogger().handlers and not logger.handlers:
        logger.addHandler(logging.NullHandler())


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


async def _walk_into(walk: Walk, parts: Parts) -> None:
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
        parts = Parts(staging, None)
        asyncio.run(_walk_into(walk, parts))
        from_report(result, walk.report)
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
    promote(staging, job, result)
    return SiteOutcome(result)


def _finished(result: SiteResult) -> None:
    """Stamp the end (wall clock: a fanned-out site ends on another machine than it began)."""
    result.finished_at = datetime.now(UTC)
    if result.started_at is not None:
        result.seconds = (result.finished_at - result.started_at).total_seconds()
    if result.status == "not run":
        settle(result)


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
            state=leaf_state(site.options.state, job.sitemap),
        )
        walk = Walk(site.url, options)
        parts = Parts(directory, site.hash_key)
        asyncio.run(_walk_into(walk, parts))
    except Exception as exc:
        log.exception("leaf sitemap %s of %s failed", job.sitemap, site.url)
        shutil.rmtree(directory, ignore_errors=True)
        return LeafOutcome(job.index, None, [], type(exc).__name__, str(exc) or repr(exc))
    return LeafOutcome(job.index, walk.report, parts.done)


def leaf_state(site_state: Path | None, sitemap: str) -> Path | None:
    """Where a fanned-out leaf keeps its state: beside its site's, one per leaf sitemap (the
    leaf's walk locks its own, so leaves of one site run at once)."""
    if site_state is None:
        return None
    name = hashlib.sha256(sitemap.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return site_state.with_name(site_state.name + ".leaves") / name


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
    done = promoted(job)
    if done is not None:  # an earlier attempt promoted the partition, then its worker died
        return SiteOutcome(done)
    final = staging.parent / f"final-{uuid.uuid4().hex}"
    try:
        leaves = sorted(leaves, key=lambda o: o.index)
        first_error: tuple[str | None, str | None] | None = None
        for leaf in leaves:
            if leaf.report is not None:
                add_counts(result, leaf.report)
                for doc in leaf.report.errors[:1]:
                    first_error = first_error or (doc.error_class, doc.error or doc.url)
            else:  # the leaf's task failed: its sitemap counts as a failed document
                log.warning("%s: leaf task failed: %s", job.url, leaf.error_message)
                result.errors += 1
                result.partial = True
                first_error = first_error or (leaf.error_class, leaf.error_message)
        own = [hashed(p, job.hash_key) for p in site.parts]
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
        promote(final, job, result)
    except Exception as exc:
        log.exception("finishing %s failed", job.url)
        result.error_class, result.error_message = type(exc).__name__, str(exc) or repr(exc)
        result.status = "failed"
        _finished(result)
        shutil.rmtree(final, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return SiteOutcome(result)


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

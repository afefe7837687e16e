"""The walker (§5): discovery, a bounded pool of document workers, de-duplication, the report.

`Walk` is an async iterable of batches (lists of at most 1,000 entries). Documents are fetched by
`concurrency` workers pulling from one queue; each streams its body into a `SitemapParser`, and
entries flow to the consumer through a small bounded queue, so a slow consumer slows the
fetching instead of growing memory. Nothing holds the inventory: memory is the batch, the
documents in flight and the compact seen-set.

Its rooms, each with one job, talking through public methods:

    options      WalkOptions and the keyword arguments that fill it, checked up front
    plan         which source comes next (sitemaps, llms.txt, the link crawl), no I/O
    emitter      de-duplication, base-path scope, the URL cap, page filters, batching, no I/O
    children     which child sitemaps of an index are walked, no I/O
    documents    one sitemap document: fetch, scan, ledger, and the budgets that cut it
    rewalk       one document against the last walk's state (`--state`): conditional requests,
                 replays of what did not change, what is kept for the next walk
    llms_source  llms.txt read as a page source
    walk         `Walk`, the orchestrator that follows the plan, and `SyncEntries`
"""

from __future__ import annotations

from .documents import MAX_MALFORMED_KEPT
from .emitter import BATCH_SIZE, MAX_BATCH_WAIT
from .options import (
    MAX_CONCURRENCY,
    SOURCES,
    WalkOptions,
    as_walk_url,
    fetch_config,
    require_http_url,
    require_walk_url,
    unknown_option,
    walk_options,
)
from .walk import SyncEntries, Walk

__all__ = [
    "BATCH_SIZE",
    "MAX_BATCH_WAIT",
    "MAX_CONCURRENCY",
    "MAX_MALFORMED_KEPT",
    "SOURCES",
    "SyncEntries",
    "Walk",
    "WalkOptions",
    "as_walk_url",
    "fetch_config",
    "require_http_url",
    "require_walk_url",
    "unknown_option",
    "walk_options",
]

"""Deterministic sitemap sites on disk, and a loopback HTTP server to serve them.

Shared by the runnable benchmarks in this directory (never imported by the library or its tests).

Sites are generated with a *placeholder origin* (`PLACEHOLDER_ORIGIN`) so that a generated
directory can be cached and served again on whatever port the OS hands out next time:
`SiteServer` loads every file into memory when it starts and rewrites the placeholder into its
own `http://127.0.0.1:PORT` origin (gzip shards are re-compressed once, before any timing).
Serving from memory also keeps disk I/O out of the measurements.

Scenario: `generate_flat_index(dir, shards, per_shard)` writes

    robots.txt                  -> "Sitemap: <origin>/sitemap_index.xml"
    index.html                  -> a tiny home page
    sitemap_index.xml           -> a <sitemapindex> of `shards` children
    sitemaps/pages-0000.xml.gz  -> <urlset>s of `per_shard` URLs each (`.xml` when gzip=False)

The URLs carry the mix a real site has, chosen per URL by a seeded hash of its number (`SEED`),
so every file is the same on every run and any URL's features can be recomputed on their own:

- `<lastmod>`: 25 % a bare date, 27 % `+00:00`, 15 % another offset (`+02:00`, `-05:00`,
  `+05:30`, ...), 15 % `Z`, 6 % fractional seconds, 4 % minutes only (`T10:42Z`), 8 % missing;
- `<priority>` on 60 % of URLs, `<changefreq>` on 40 %;
- 3 % have a query of two parameters, written `?a=1&amp;b=2` as XML requires;
- 2 % have whitespace or newlines around the URL inside `<loc>`;
- every tenth page (i % 10 == 7) carries three `xhtml:link rel="alternate"` (hreflang).

Page URLs (`<loc>`) are all distinct across the whole site. The hreflang targets are:

    hreflang="en"  -> the page itself                      (already a loc: a duplicate)
    hreflang="de"  -> page (i + total // 2) % total        (already a loc, usually in another shard)
    hreflang="fr"  -> /fr/ + the page's path               (NEW: never a loc anywhere)

The `de` targets test de-duplication across shards, the `en` ones against the entry's own loc,
so the distinct URLs of the site are the locs plus one new `fr` URL per hreflang page:
`SiteStats.page_urls` counts the former, `SiteStats.distinct_urls` both.
`iter_page_urls` / `iter_alternate_only_urls` rebuild the exact sets for verification, with
queries unescaped (`?a=1&b=2`): what a correct walker reports.

Two more scenarios (used by `peers.py`) reuse the same URL space and urlset writer:
`generate_deep_index` (a tree of sitemap indexes, 4 levels by default, over 200 urlsets, every
other one gzipped) and `generate_cycle_index` (indexes that all list each other and themselves,
each urlset listed by two of them); `ensure_site` caches them like `ensure_flat_index`. Both
carry the same mix, hreflang included.

Page URLs live on the serving origin by default (the protocol wants locs on the sitemap's host).
`page_origin="https://www.example.com"` puts them on a port-less host instead: loopback URLs
carry a port, which real sites' URLs rarely do and which can take a normalizer off its fast path.

Sites are cached in `WORK_DIR` (`benchmarks/.work/`, ignored by git). A `--smoke` run of a
benchmark generates tiny sites into a temporary directory instead (`work_dir(smoke=True)`), and
checks with `check_smoke_mix` that they still carry the whole mix above (every lastmod form,
hreflang, `&amp;` queries, whitespace around `<loc>`s): a smoke run exercises what a real run
does, on far fewer URLs.

`SiteServer(..., validators=True)` gives every file a strong ETag (a hash of the bytes it
serves) and a Last-Modified, and answers conditional requests as RFC 9110 says (If-None-Match
decides when sent, else If-Modified-Since) with a 304 and no body; `change_shard` edits one
served urlset in memory (and moves its `<lastmod>` in the index), `restore_files` undoes edits.
Every server counts the body bytes it sends (`bytes_sent`), for re-walk benchmarks.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from email.message import Message
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

# `.invalid` is reserved (RFC 2606): a generated file served without rewriting can never send
# a client to a real host.
PLACEHOLDER_ORIGIN = "http://sitescout-bench.invalid"
# Generated sites are cached here (git ignores it); smoke runs use a temporary one (`work_dir`).
WORK_DIR = Path(__file__).resolve().parent / ".work"
MANIFEST = "site.json"
# Bump when the generated bytes change, so cached sites are rebuilt.
GENERATOR_VERSION = 2
# Seeds the per-URL mix (see `_roll`); `SITESCOUT_BENCH_SEED` picks another site of the same shape.
SEED = int(os.environ.get("SITESCOUT_BENCH_SEED", "20261201"))

_SECTIONS = ("docs", "blog", "guides", "reference", "products", "support", "learn")
_PRIORITIES = ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0")
_CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
_OFFSETS = ("+02:00", "-05:00", "+05:30", "+01:00", "-08:00", "+09:00", "-03:00", "+10:00")
_QUERIES = ("color={a}&size={b}", "id={a}&view=full", "lang=en&variant={b}", "sort=asc&tab={a}")
_WHITESPACE = ("\n      {}\n    ", "  {}  ", "\n\t{}\n", "\n{}")
_MASK64 = (1 << 64) - 1
_DATES = tuple((date(2023, 1, 1) + timedelta(days=d)).isoformat() for d in range(730))
_URLSET_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    ' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)
_INDEX_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)
# gzip level 6 is what nginx/Apache-style tooling typically writes; mtime=0 keeps bytes stable.
_GZIP_LEVEL = 6


@dataclass(frozen=True, slots=True)
class SiteStats:
    """What a generated site contains: the expectations a walker is checked against."""

    scenario: str
    shards: int
    per_shard: int
    gzip: bool
    hreflang: bool
    page_urls: int  # distinct <loc> values
    alternate_only_urls: int  # hreflang targets that are not a <loc> anywhere
    hreflang_pages: int
    whitespace_locs: int
    documents: int  # sitemap documents: the index plus its children
    index_path: str  # e.g. "/sitemap_index.xml"
    # Where page URLs live when not on the serving origin (None: the served origin, as the
    # protocol asks). A host without a port keeps URL normalizers on their common fast path.
    page_origin: str | None = None
    version: int = GENERATOR_VERSION
    seed: int = SEED
    query_locs: int = 0  # <loc>s with an `&amp;` query
    # Sitemap indexes (the root included) and their levels; `gzip` says whether any urlset is
    # gzipped, `gzipped_documents` how many (None: all `shards` when gzip, else none).
    index_documents: int = 1
    index_levels: int = 1
    gzipped_documents: int | None = None

    def pages_at(self, served_origin: str) -> str:
        """The origin of the page URLs when the site is served from `served_origin`."""
        return self.page_origin or served_origin

    @property
    def distinct_urls(self) -> int:
        """Distinct URLs including alternates (what an inventory that yields alternates finds)."""
        return self.page_urls + self.alternate_only_urls


# --- URL space ---------------------------------------------------------------------------------


def _roll(i: int, lane: int) -> int:
    """A per-mille draw in [0, 1000) for page `i`, independent per `lane` (splitmix64 of seed,
    page and lane): the mix is irregular like a real site's, yet any page's is known alone."""
    z = (SEED + i * 0x9E3779B97F4A7C15 + lane * 0xD1B54A32D192ED03) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (((z ^ (z >> 31)) & 0xFFFF) * 1000) >> 16


def page_path(i: int) -> str:
    """Path of page `i`: only unreserved characters, so URL normalization leaves it unchanged."""
    topic = i // 1000
    return f"/{_SECTIONS[topic % len(_SECTIONS)]}/topic-{topic:05d}/page-{i:07d}"


def page_query(i: int) -> str:
    """The query of page `i` (3 % of pages), unescaped, or "". Neither tracking nor pagination
    parameters, so a normalizer keeps it as written."""
    if _roll(i, 1) >= 30:
        return ""
    return "?" + _QUERIES[i % len(_QUERIES)].format(a=i % 97, b=i % 13)


def page_url(origin: str, i: int) -> str:
    """Page `i` as a correct walker reports it (query unescaped)."""
    return origin + page_path(i) + page_query(i)


def is_hreflang_page(i: int) -> bool:
    return i % 10 == 7


def is_whitespace_loc(i: int) -> bool:
    return _roll(i, 2) < 20


def has_query(i: int) -> bool:
    return _roll(i, 1) < 30


def iter_page_urls(stats: SiteStats, origin: str) -> Iterator[str]:
    """Every <loc> of the site, as served from `origin`."""
    origin = stats.pages_at(origin)
    for i in range(stats.shards * stats.per_shard):
        yield page_url(origin, i)


def iter_alternate_only_urls(stats: SiteStats, origin: str) -> Iterator[str]:
    """Every hreflang target that is not also a <loc> (the `fr` alternates)."""
    if not stats.hreflang:
        return
    origin = stats.pages_at(origin)
    for i in range(stats.shards * stats.per_shard):
        if is_hreflang_page(i):
            yield f"{origin}/fr{page_path(i)}"


# --- writers -----------------------------------------------------------------------------------


# The <lastmod> forms by per-mille draw: a form is used while the draw is below its bound.
LASTMOD_FORMS = (
    (80, "missing"),
    (330, "date"),
    (600, "+00:00"),
    (750, "offset"),
    (900, "Z"),
    (960, "fraction"),
    (1000, "minutes"),
)


def lastmod_form(i: int) -> str:
    """Which form of `LASTMOD_FORMS` the <lastmod> of page `i` takes."""
    kind = _roll(i, 0)
    return next(name for bound, name in LASTMOD_FORMS if kind < bound)


def _lastmod(i: int) -> str | None:
    """The <lastmod> text of page `i` in one of the forms sitemap writers use, or None."""
    form = lastmod_form(i)
    if form == "missing":
        return None
    day = _DATES[(i * 7919) % len(_DATES)]
    if form == "date":
        return day
    hh, mm, ss = i % 24, (i // 24) % 60, (i // 1440) % 60
    time_of_day = f"{day}T{hh:02d}:{mm:02d}:{ss:02d}"
    if form == "+00:00":
        return time_of_day + "+00:00"
    if form == "offset":
        return time_of_day + _OFFSETS[i % len(_OFFSETS)]
    if form == "Z":
        return time_of_day + "Z"
    if form == "fraction":
        zone = "Z" if i % 2 else _OFFSETS[i % len(_OFFSETS)]
        return f"{time_of_day}.{(i * 37) % 1000:03d}{'456' if i % 3 else ''}{zone}"
    return f"{day}T{hh:02d}:{mm:02d}Z"


def missing_mix(pages: int, hreflang: bool = True) -> list[str]:
    """What of a real site's mix pages 0 .. `pages`-1 lack (empty: all of it is there).

    A smoke run (`--smoke`) uses a tiny site; it checks with this that the site still carries
    every lastmod form, hreflang alternates, `&amp;` queries and whitespace around `<loc>`s.
    """
    forms = {lastmod_form(i) for i in range(pages)}
    missing = [f"lastmod form {name!r}" for _, name in LASTMOD_FORMS if name not in forms]
    if hreflang and not any(is_hreflang_page(i) for i in range(pages)):
        missing.append("hreflang alternates")
    if not any(has_query(i) for i in range(pages)):
        missing.append("an `&amp;` query")
    if not any(is_whitespace_loc(i) for i in range(pages)):
        missing.append("whitespace around a <loc>")
    return missing


def check_smoke_mix(pages: int, what: str) -> str:
    """For `--smoke`: a line describing the mix of a `pages`-page site; exits when it lacks any
    of it (a smoke site too small to exercise what the real run does)."""
    missing = missing_mix(pages)
    if missing:
        raise SystemExit(f"smoke site {what} of {pages} pages lacks {', '.join(missing)}")
    return (
        f"smoke site {what}: {pages:,} pages with all {len(LASTMOD_FORMS)} lastmod forms, "
        f"{_count(pages, is_hreflang_page)} with hreflang, {_count(pages, has_query)} with an "
        f"`&amp;` query, {_count(pages, is_whitespace_loc)} with whitespace in <loc>"
    )


@contextlib.contextmanager
def work_dir(smoke: bool) -> Iterator[Path]:
    """Where sites are generated: `WORK_DIR` (kept, and reused while a site's manifest matches),
    or for a smoke run a temporary directory removed afterwards, so that a smoke run neither
    races another run over the cache nor leaves tiny sites in it."""
    if not smoke:
        yield WORK_DIR
        return
    with tempfile.TemporaryDirectory(prefix="sitescout-bench-smoke-") as tmp:
        yield Path(tmp)


def _xml_text(url: str) -> str:
    # Only `&` can occur in these URLs among the characters XML reserves.
    return url.replace("&", "&amp;")


def _url_element(i: int, total: int, origin: str, hreflang: bool) -> str:
    url = _xml_text(page_url(origin, i))
    loc = _WHITESPACE[i % len(_WHITESPACE)].format(url) if is_whitespace_loc(i) else url
    parts = [f"  <url>\n    <loc>{loc}</loc>\n"]
    lastmod = _lastmod(i)
    if lastmod is not None:
        parts.append(f"    <lastmod>{lastmod}</lastmod>\n")
    if _roll(i, 3) < 400:
        parts.append(f"    <changefreq>{_CHANGEFREQS[i % len(_CHANGEFREQS)]}</changefreq>\n")
    if _roll(i, 4) < 600:
        parts.append(f"    <priority>{_PRIORITIES[i % 10]}</priority>\n")
    if hreflang and is_hreflang_page(i):
        other = _xml_text(page_url(origin, (i + total // 2) % total))
        parts.append(
            f'    <xhtml:link rel="alternate" hreflang="en" href="{url}"/>\n'
            f'    <xhtml:link rel="alternate" hreflang="de" href="{other}"/>\n'
            f'    <xhtml:link rel="alternate" hreflang="fr" href="{origin}/fr{page_path(i)}"/>\n'
        )
    parts.append("  </url>\n")
    return "".join(parts)


def _write_bytes(path: Path, data: bytes, compress: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        data = gzip.compress(data, compresslevel=_GZIP_LEVEL, mtime=0)
    path.write_bytes(data)


def write_urlset(
    path: Path, first: int, count: int, total: int, *, origin: str, gz: bool, hreflang: bool
) -> None:
    """Write pages `first .. first+count-1` of a `total`-page site as one <urlset>."""
    parts = [_URLSET_OPEN]
    parts.extend(_url_element(i, total, origin, hreflang) for i in range(first, first + count))
    parts.append("</urlset>\n")
    _write_bytes(path, "".join(parts).encode(), gz)


def write_index(path: Path, child_urls: list[str]) -> None:
    body = "".join(
        f"  <sitemap>\n    <loc>{url}</loc>\n    <lastmod>{_DATES[-1]}</lastmod>\n  </sitemap>\n"
        for url in child_urls
    )
    _write_bytes(path, (_INDEX_OPEN + body + "</sitemapindex>\n").encode(), False)


def write_robots(directory: Path, sitemap_urls: list[str]) -> None:
    lines = ["User-agent: *", "Allow: /", ""] + [f"Sitemap: {url}" for url in sitemap_urls]
    _write_bytes(directory / "robots.txt", ("\n".join(lines) + "\n").encode(), False)


def write_home(directory: Path) -> None:
    html = "<!doctype html><title>sitescout benchmark site</title><h1>Benchmark site</h1>\n"
    _write_bytes(directory / "index.html", html.encode(), False)


# --- scenarios ---------------------------------------------------------------------------------


def generate_flat_index(
    directory: Path,
    shards: int,
    per_shard: int,
    *,
    gzip: bool = True,
    hreflang: bool = True,
    origin: str = PLACEHOLDER_ORIGIN,
    page_origin: str | None = None,
) -> SiteStats:
    """robots.txt -> one sitemap index -> `shards` urlsets of `per_shard` pages each.

    Sitemap URLs use `origin`; page URLs use `page_origin` when given, else `origin`.
    """
    directory.mkdir(parents=True, exist_ok=True)
    total = shards * per_shard
    suffix = ".xml.gz" if gzip else ".xml"
    names = [f"sitemaps/pages-{k:04d}{suffix}" for k in range(shards)]
    # Shards are independent; zlib and file writes release the GIL, so two threads help a bit.
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [
            pool.submit(
                write_urlset,
                directory / name,
                k * per_shard,
                per_shard,
                total,
                origin=page_origin or origin,
                gz=gzip,
                hreflang=hreflang,
            )
            for k, name in enumerate(names)
        ]
        for job in jobs:
            job.result()
    write_index(directory / "sitemap_index.xml", [f"{origin}/{name}" for name in names])
    write_robots(directory, [f"{origin}/sitemap_index.xml"])
    write_home(directory)
    hreflang_pages = _count(total, is_hreflang_page) if hreflang else 0
    return SiteStats(
        scenario="flat_index",
        shards=shards,
        per_shard=per_shard,
        gzip=gzip,
        hreflang=hreflang,
        page_urls=total,
        alternate_only_urls=hreflang_pages,
        hreflang_pages=hreflang_pages,
        whitespace_locs=_count(total, is_whitespace_loc),
        documents=shards + 1,
        index_path="/sitemap_index.xml",
        page_origin=page_origin,
        query_locs=_count(total, has_query),
    )


def generate_deep_index(
    directory: Path,
    *,
    index_levels: int = 4,
    fanout: int = 3,
    leaves: int = 200,
    per_leaf: int = 500,
    hreflang: bool = True,
    origin: str = PLACEHOLDER_ORIGIN,
) -> SiteStats:
    """A tree of `index_levels` levels of sitemap indexes over `leaves` urlsets (odd ones gzipped).

        robots.txt -> sitemap_index.xml                        (level 1)
                   -> sitemaps/index-2-000.xml ...             (`fanout` per index, level 2)
                   -> ...                                      (fanout ** (level - 1) per level)
                   -> sitemaps/leaf-0000.xml, leaf-0001.xml.gz (leaves spread evenly over the
                                                                deepest indexes)

    With the defaults: 1 + 3 + 9 + 27 = 40 indexes over 200 leaves of 500 URLs, 240 documents,
    100,000 page URLs, leaves at depth 5.
    """
    directory.mkdir(parents=True, exist_ok=True)
    total = leaves * per_leaf
    leaf_names = [
        f"sitemaps/leaf-{k:04d}.xml.gz" if k % 2 else f"sitemaps/leaf-{k:04d}.xml"
        for k in range(leaves)
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [
            pool.submit(
                write_urlset,
                directory / name,
                k * per_leaf,
                per_leaf,
                total,
                origin=origin,
                gz=name.endswith(".gz"),
                hreflang=hreflang,
            )
            for k, name in enumerate(leaf_names)
        ]
        for job in jobs:
            job.result()

    def index_name(level: int, i: int) -> str:
        return "sitemap_index.xml" if level == 1 else f"sitemaps/index-{level}-{i:03d}.xml"

    bottom = fanout ** (index_levels - 1)  # indexes on the deepest index level
    for level in range(1, index_levels + 1):
        for i in range(fanout ** (level - 1)):
            if level < index_levels:
                children = [index_name(level + 1, i * fanout + j) for j in range(fanout)]
            else:
                children = [name for k, name in enumerate(leaf_names) if k * bottom // leaves == i]
            write_index(directory / index_name(level, i), [f"{origin}/{c}" for c in children])
    write_robots(directory, [f"{origin}/sitemap_index.xml"])
    write_home(directory)
    indexes = sum(fanout**level for level in range(index_levels))
    return SiteStats(
        scenario="deep",
        shards=leaves,
        per_shard=per_leaf,
        gzip=leaves > 1,
        hreflang=hreflang,
        page_urls=total,
        alternate_only_urls=_count(total, is_hreflang_page) if hreflang else 0,
        hreflang_pages=_count(total, is_hreflang_page) if hreflang else 0,
        whitespace_locs=_count(total, is_whitespace_loc),
        documents=indexes + leaves,
        index_path="/sitemap_index.xml",
        index_documents=indexes,
        index_levels=index_levels,
        gzipped_documents=leaves // 2,
        query_locs=_count(total, has_query),
    )


def generate_cycle_index(
    directory: Path,
    *,
    indexes: int = 5,
    leaves: int = 20,
    per_leaf: int = 500,
    hreflang: bool = True,
    origin: str = PLACEHOLDER_ORIGIN,
) -> SiteStats:
    """`indexes` sitemap indexes that all list each other and themselves, over `leaves` urlsets.

        robots.txt -> sitemap_index.xml (index 0), sitemaps/ring-1.xml ... ring-{indexes-1}.xml

    Index i lists every index, itself first (i, i+1, ..., i-1), then the leaves k with
    k % indexes == i or (k + 1) % indexes == i: every leaf is listed by two indexes. A walker that
    remembers what it fetched makes 1 + indexes + leaves requests; one that only avoids its own
    ancestors fetches the same documents many times; one that remembers nothing never ends.
    """
    directory.mkdir(parents=True, exist_ok=True)
    total = leaves * per_leaf
    leaf_names = [f"sitemaps/leaf-{k:04d}.xml" for k in range(leaves)]
    for k, name in enumerate(leaf_names):
        write_urlset(
            directory / name,
            k * per_leaf,
            per_leaf,
            total,
            origin=origin,
            gz=False,
            hreflang=hreflang,
        )
    index_names = ["sitemap_index.xml"] + [f"sitemaps/ring-{i}.xml" for i in range(1, indexes)]
    for i, name in enumerate(index_names):
        ring = [index_names[(i + j) % indexes] for j in range(indexes)]
        mine = [leaf_names[k] for k in range(leaves) if i in (k % indexes, (k + 1) % indexes)]
        write_index(directory / name, [f"{origin}/{c}" for c in ring + mine])
    write_robots(directory, [f"{origin}/sitemap_index.xml"])
    write_home(directory)
    return SiteStats(
        scenario="cycle",
        shards=leaves,
        per_shard=per_leaf,
        gzip=False,
        hreflang=hreflang,
        page_urls=total,
        alternate_only_urls=_count(total, is_hreflang_page) if hreflang else 0,
        hreflang_pages=_count(total, is_hreflang_page) if hreflang else 0,
        whitespace_locs=_count(total, is_whitespace_loc),
        documents=indexes + leaves,
        index_path="/sitemap_index.xml",
        index_documents=indexes,
        index_levels=indexes,  # a walk that follows the ring reaches each index on one path
        gzipped_documents=0,
        query_locs=_count(total, has_query),
    )


def _count(total: int, predicate: Callable[[int], bool]) -> int:
    return sum(1 for i in range(total) if predicate(i))


_GENERATORS: dict[str, Callable[..., SiteStats]] = {
    "deep": generate_deep_index,
    "cycle": generate_cycle_index,
}


def ensure_site(directory: Path, scenario: str, **params: Any) -> tuple[SiteStats, bool]:
    """Like `ensure_flat_index` for the other scenarios ("deep", "cycle"): `params` are the
    generator's keyword arguments. Returns the stats and whether the site was generated now."""
    manifest = directory / MANIFEST
    wanted = {"scenario": scenario, "params": params, "version": GENERATOR_VERSION, "seed": SEED}
    if manifest.is_file():
        saved: dict[str, Any] = json.loads(manifest.read_text())
        if all(saved.get(key) == value for key, value in wanted.items()):
            names = {f.name for f in fields(SiteStats)}
            return SiteStats(**{k: v for k, v in saved.items() if k in names}), False
    stats = _GENERATORS[scenario](directory, **params)
    manifest.write_text(json.dumps({**asdict(stats), "params": params}, indent=2) + "\n")
    return stats, True


def ensure_flat_index(
    directory: Path,
    shards: int,
    per_shard: int,
    *,
    gzip: bool = True,
    hreflang: bool = True,
    page_origin: str | None = None,
) -> tuple[SiteStats, bool]:
    """Reuse a cached site when its manifest matches, else (re)generate it.

    The manifest is written last, so a generation that was interrupted is redone.
    Returns the stats and whether the site was generated now.
    """
    manifest = directory / MANIFEST
    wanted = {
        "scenario": "flat_index",
        "shards": shards,
        "per_shard": per_shard,
        "gzip": gzip,
        "hreflang": hreflang,
        "page_origin": page_origin,
        "version": GENERATOR_VERSION,
        "seed": SEED,
    }
    if manifest.is_file():
        saved: dict[str, Any] = json.loads(manifest.read_text())
        if all(saved.get(key) == value for key, value in wanted.items()):
            return SiteStats(**saved), False
    stats = generate_flat_index(
        directory, shards, per_shard, gzip=gzip, hreflang=hreflang, page_origin=page_origin
    )
    manifest.write_text(json.dumps(asdict(stats), indent=2) + "\n")
    return stats, True


# --- server ------------------------------------------------------------------------------------

_CONTENT_TYPES = {
    ".gz": "application/octet-stream",  # a stored .xml.gz: no Content-Encoding, like many CDNs
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}
# Bounds the keep-alive loop of one connection; clients simply reconnect after it.
_MAX_REQUESTS_PER_CONNECTION = 10_000
# Last-Modified of every file as loaded (`validators=True`); each edit moves it on by an hour, so
# an edited file is newer than any date a client stored, at HTTP-date's one-second resolution.
_LOADED_AT = datetime(2024, 12, 30, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Validators:
    """What a server with `validators=True` sends with a file and judges conditionals by."""

    etag: str
    last_modified: datetime

    @classmethod
    def of(cls, body: bytes, edits: int) -> Validators:
        # Strong: the served bytes' own hash, so it moves exactly when they do.
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        return cls(etag, _LOADED_AT + timedelta(hours=edits))

    @property
    def http_date(self) -> str:
        return format_datetime(self.last_modified, usegmt=True)

    def not_modified(self, headers: Message) -> bool:
        """Whether a GET/HEAD with these request headers gets a 304 (RFC 9110 §13.2.2):
        If-None-Match, when sent, decides alone by weak comparison; otherwise If-Modified-Since,
        a valid date no earlier than Last-Modified."""
        tags = headers.get("If-None-Match")
        if tags is not None:
            mine = self.etag.removeprefix("W/")
            asked = {tag.strip().removeprefix("W/") for tag in tags.split(",")}
            return "*" in asked or mine in asked
        since = headers.get("If-Modified-Since")
        if since is None:
            return False
        try:
            when = parsedate_to_datetime(since)
        except (TypeError, ValueError, IndexError):
            return False  # an invalid date is ignored (RFC 9110 §13.1.3)
        if when.tzinfo is None:  # "-0000": HTTP-dates are UTC anyway
            when = when.replace(tzinfo=UTC)
        return self.last_modified <= when


def _content_type(path: str) -> str:
    return next(
        (ctype for ext, ctype in _CONTENT_TYPES.items() if path.endswith(ext)),
        "application/octet-stream",
    )


class _Handler(BaseHTTPRequestHandler):
    server: SiteServer
    protocol_version = "HTTP/1.1"  # keep-alive; every response carries Content-Length
    timeout = 15  # an idle keep-alive connection is closed after this many seconds

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()
        for _ in range(_MAX_REQUESTS_PER_CONNECTION):
            if self.close_connection:
                break
            self.handle_one_request()

    def do_GET(self) -> None:
        self._respond(head=False)

    def do_HEAD(self) -> None:
        self._respond(head=True)

    def _respond(self, *, head: bool) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        self.server.count(path)
        if self.server.latency:
            time.sleep(self.server.latency)
        found, validators = self.server.served("/index.html" if path == "/" else path)
        if validators is not None and validators.not_modified(self.headers):
            self.send_response(304)
            self.send_header("ETag", validators.etag)
            self.send_header("Last-Modified", validators.http_date)
            self.end_headers()
            self.server.sent(0, not_modified=True)
            return
        status, body, ctype = (200, *found) if found else (404, b"not found\n", "text/plain")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if validators is not None:
            self.send_header("ETag", validators.etag)
            self.send_header("Last-Modified", validators.http_date)
        self.end_headers()
        if not head:
            self.wfile.write(body)
            self.server.sent(len(body))

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a benchmark's stderr is for results."""


class SiteServer(ThreadingHTTPServer):
    """Serve a directory from memory on 127.0.0.1 (a free port), counting requests per path.

    Use as a context manager: the serving thread starts on enter and stops on exit.
    `latency` (seconds) is slept before every response, to imitate a remote host.
    Occurrences of `placeholder` in served files are replaced by this server's origin.
    `validators=True`: every file carries an ETag and a Last-Modified, and conditional requests
    are answered with a 304 when they match (see `Validators`). Body bytes sent are counted
    either way (`bytes_sent`).
    """

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops connections (a 1 s SYN retry) when a client
    # opens many at once.
    request_queue_size = 128

    def __init__(
        self,
        directory: Path,
        *,
        latency: float = 0.0,
        placeholder: str | None = PLACEHOLDER_ORIGIN,
        validators: bool = False,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.directory = directory
        self.latency = latency
        self.placeholder = placeholder
        self.validators = validators
        self.files: dict[str, tuple[bytes, str]] = {}
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._bytes_sent = 0
        self._not_modified = 0
        self._validators: dict[str, Validators] = {}
        # As loaded, for `restore_files`; `_edits` numbers the edits made since.
        self._loaded: tuple[dict[str, tuple[bytes, str]], dict[str, Validators]] = ({}, {})
        self._edits = 0
        self.reload()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        # Without TCP_NODELAY a keep-alive client waits on delayed ACKs (~30-40 ms a request)
        # because headers and body go out as two small writes.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def reload(self) -> None:
        """(Re)load every file under the directory, rewriting the placeholder origin."""
        paths = [p for p in sorted(self.directory.rglob("*")) if p.is_file()]
        with ThreadPoolExecutor(max_workers=2) as pool:
            bodies = list(pool.map(self._load, paths))
        self.files = {
            "/" + p.relative_to(self.directory).as_posix(): (body, _content_type(p.name))
            for p, body in zip(paths, bodies, strict=True)
        }
        if self.validators:
            with self._lock:
                self._validators = {p: Validators.of(b, 0) for p, (b, _) in self.files.items()}
                self._edits = 0
        self._loaded = (dict(self.files), dict(self._validators))

    def _load(self, path: Path) -> bytes:
        data = path.read_bytes()
        if not self.placeholder:
            return data
        old, new = self.placeholder.encode(), self.origin.encode()
        if data[:2] == b"\x1f\x8b":
            plain = gzip.decompress(data)
            if old in plain:
                return gzip.compress(plain.replace(old, new), compresslevel=_GZIP_LEVEL, mtime=0)
            return data
        return data.replace(old, new)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that hang up (a killed tool), loud about anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)

    def count(self, path: str) -> None:
        with self._lock:
            self._counts[path] += 1

    def request_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()

    def served(self, path: str) -> tuple[tuple[bytes, str] | None, Validators | None]:
        """The file at `path` (body, content type) and its validators, read together."""
        if not self.validators:
            return self.files.get(path), None
        with self._lock:  # an edit replaces both: never a new body with an old ETag
            return self.files.get(path), self._validators.get(path)

    def sent(self, body_bytes: int, *, not_modified: bool = False) -> None:
        with self._lock:
            self._bytes_sent += body_bytes
            self._not_modified += 1 if not_modified else 0

    def bytes_sent(self) -> int:
        """Body bytes sent since the start or `reset_bytes_sent` (headers not counted)."""
        with self._lock:
            return self._bytes_sent

    def not_modified_sent(self) -> int:
        """304 answers sent since the start or `reset_bytes_sent`."""
        with self._lock:
            return self._not_modified

    def reset_bytes_sent(self) -> None:
        """Start counting body bytes and 304 answers from zero."""
        with self._lock:
            self._bytes_sent = self._not_modified = 0

    def change_file(self, path: str, body: bytes) -> None:
        """Serve `body` at `path` from now on (same content type); with validators, a new ETag
        and a Last-Modified later than any before go with it."""
        with self._lock:
            _, ctype = self.files[path]
            self._edits += 1
            self._serve(path, body, ctype)

    def add_file(self, path: str, body: bytes) -> None:
        """Serve `body` at `path` too, a file the site directory does not hold (its content
        type by its name, as for the others)."""
        with self._lock:
            self._serve(path, body, _content_type(path))

    def _serve(self, path: str, body: bytes, ctype: str) -> None:
        """Serve `body` at `path` from now on, with validators of the edit count (the lock held)."""
        self.files[path] = (body, ctype)
        if self.validators:
            self._validators[path] = Validators.of(body, self._edits)

    def change_shard(self, path: str, index_path: str = "/sitemap_index.xml") -> bool:
        """Edit the urlset at `path` as a site update would: one page more (so its bytes,
        ETag and Last-Modified change), gzipped again if it was. The index at `index_path`
        gets the new time as that child's `<lastmod>` when it gives the child one. Returns
        whether it did (False: the index has no `<lastmod>` for it, and is left as it was)."""
        body, _ = self.files[path]
        gzipped = body[:2] == b"\x1f\x8b"
        xml = gzip.decompress(body) if gzipped else body
        edit = self._edits + 1
        stamp = (_LOADED_AT + timedelta(hours=edit)).strftime("%Y-%m-%dT%H:%M:%SZ")
        page = (
            f"  <url>\n    <loc>{self.origin}/changed/edit-{edit:04d}</loc>\n"
            f"    <lastmod>{stamp}</lastmod>\n  </url>\n"
        )
        head, end, tail = xml.rpartition(b"</urlset>")
        if not end:
            raise ValueError(f"{path} is not a <urlset>")
        xml = head + page.encode() + end + tail
        if gzipped:
            xml = gzip.compress(xml, compresslevel=_GZIP_LEVEL, mtime=0)
        self.change_file(path, xml)
        index, _ = self.files[index_path]
        listed = re.compile(
            rb"(<loc>\s*" + re.escape((self.origin + path).encode()) + rb"\s*</loc>\s*<lastmod>)"
            rb"[^<]*(</lastmod>)"
        )
        moved, found = listed.subn(rb"\g<1>" + stamp.encode() + rb"\g<2>", index, count=1)
        if not found:
            return False
        self.change_file(index_path, moved)
        return True

    def restore_files(self) -> None:
        """Serve every file as loaded again, with its first validators: edits undone."""
        with self._lock:
            files, validators = self._loaded
            self.files, self._validators = dict(files), dict(validators)
            self._edits = 0

    def __enter__(self) -> SiteServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

"""The pre-flight scope estimate (§9): what a walk of this site would cost, in a second or two.

`estimate_scope(url)` runs discovery (§2) and reads **only the first top document**: a `urlset`
(or RSS, Atom, text list) is counted exactly, `[n, n]`; a `sitemapindex` with `c` children gives
`[c × 1,000, c × 50,000]` without fetching any child. Languages come from the URL paths it saw
and from hreflang values; the expected walk time is `c / 8 × 1.5 s` (8 documents in flight,
about 1.5 s each) within `[½×, 1½×]`, never under 5 s; the transport says whether plain HTTP
works (`fetch`), the site pushes back with 403/429 or a bot-challenge page (`browser`), the top
document was read from disk (`local`), or discovery itself failed (`unknown`).

A sitemap you already have is estimated the same way (`_local`): `url` may be a `file://` URL or a
path (stdin is `file:///dev/stdin`), read as the top document with no discovery, no robots.txt
and no llms.txt; `sitemap` may be one too, for a site given by URL; `maps` reads the documents
under a URL prefix from a folder; `offline` makes no request at all. Relative children of an
index on disk resolve in its folder, as in the walk. The expected duration counts only the
child sitemaps a walk would fetch over the network: one read from disk costs next to nothing,
and offline nothing is fetched (the 5 s floor stays).

With `sample=N` the top index's children are also sampled: N of them, chosen at random, are
read in full and the range is re-derived from their real sizes (and a note says so). Off by
default, so the estimate stays at one or two requests.

It never raises for what the network or the site does: every failure becomes a note.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from ._core import SeenSet
from ._discover import (
    BLOCKING_STATUSES,
    SCOPE,
    DiscoveryPlan,
    Done,
    FetchRobots,
    LlmsReader,
    RobotsAnswer,
    Tried,
    fetch_robots,
    why,
)
from ._errors import UsageError
from ._http import AddressGuard, FetchConfig, Fetcher, Response
from ._llms import candidates
from ._local import STDIN_URL, LocalFiles, check_maps, is_file_url, local_child
from ._locale import SiblingLocales, base_prefix, multilingual, normalize_locale
from ._models import SITEMAP_KINDS, DocumentKind, LlmsSummary
from ._parse import SitemapParser
from ._urls import normalize_url, origin_of, url_path
from ._walk import as_walk_url, require_http_url

__all__ = [
    "SCOPE_FETCH",
    "LanguageTally",
    "ScopeEstimate",
    "Transport",
    "estimate_scope",
    "estimate_scope_async",
    "expected_duration",
    "looks_like_challenge",
    "refine_range",
    "url_range",
]

log = logging.getLogger(__name__)

Transport = Literal["fetch", "browser", "local", "unknown"]

# §9: an index child holds at least ~1,000 URLs in practice and at most 50,000 (the protocol).
URLS_PER_CHILD_MIN = 1_000
URLS_PER_CHILD_MAX = 50_000
# §9: the walker keeps 8 documents in flight, about 1.5 s each; never promise less than 5 s.
WALK_CONCURRENCY = 8
SECONDS_PER_DOCUMENT = 1.5
MIN_DURATION = 5.0
HEAD_BYTES = 16 * 1024  # kept from a non-sitemap body to recognise a bot-challenge page
LOCALE_SEGMENTS = 3  # path segments examined for a locale (`/dotnet/en-us/...`)

# A pre-flight must answer in seconds: one retry, short backoff, `Retry-After` capped at 2 s, and
# 10 s per document. A caller's own `FetchConfig` replaces all of it.
SCOPE_FETCH = FetchConfig(timeout=10.0, retries=1, backoff=0.25, retry_after_cap=2.0)
# Offline, a document that is not on disk got no answer because none was asked for: that says
# nothing about the site, so the chain goes on to the next well-known path.
OFFLINE_SCOPE = replace(SCOPE, stop_when_unreachable=False)


@dataclass(frozen=True, slots=True)
class ScopeEstimate:
    """What `estimate_scope` learned. Ranges are `(low, high)`; times are seconds.

    `top_kind` is the kind of the top document read (None when none could be read);
    `sampled_children` counts the child sitemaps whose real size refined the range.
    """

    root_url: str
    top_sitemap_urls: tuple[str, ...]
    source: str
    url_estimate_range: tuple[int, int]
    sub_sitemap_count: int
    languages_detected: tuple[str, ...]
    expected_duration_seconds: float
    transport: Transport
    notes: tuple[str, ...] = ()
    source_url: str | None = None
    expected_duration_range: tuple[float, float] = (0.0, 0.0)
    top_kind: DocumentKind | None = None
    sampled_children: int = 0
    # The site's llms.txt (None when there is none) and its page links, aggregates not read.
    llms_txt: str | None = None
    llms_links: int = 0

    @property
    def found(self) -> bool:
        """Whether a top sitemap or an llms.txt with links was read (the CLI exits 3 when not)."""
        return self.top_kind is not None or self.llms_links > 0

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (tuples become lists when dumped)."""
        return asdict(self)


# -- pure rules --------------------------------------------------------------------------------


def url_range(kind: DocumentKind | None, urls: int, children: int) -> tuple[int, int]:
    """§9 step 3: `[n, n]` for a list of pages, `[c × 1,000, c × 50,000]` for an index."""
    if kind == "sitemapindex":
        return children * URLS_PER_CHILD_MIN, children * URLS_PER_CHILD_MAX
    if kind in SITEMAP_KINDS:
        return urls, urls
    return 0, 0


def expected_duration(children: int, *, read: bool = True) -> tuple[float, tuple[float, float]]:
    """§9 step 5: `c / 8 × 1.5 s` within `[½×, 1½×]`, each at least 5 s (a flat urlset: 5 s).

    Nothing read means nothing to walk: 0 s.
    """
    if not read:
        return 0.0, (0.0, 0.0)
    base = children / WALK_CONCURRENCY * SECONDS_PER_DOCUMENT
    low, high = max(MIN_DURATION, base / 2), max(MIN_DURATION, base * 1.5)
    return round(max(MIN_DURATION, base), 1), (round(low, 1), round(high, 1))


def refine_range(children: int, sampled: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The range of an index of `children` from the real ranges of some of them.

    Sampled children count as they are; every other child is assumed to be as small as the
    smallest sample (low bound) and as large as the largest (high bound).
    """
    if not sampled:
        raise ValueError("no sampled child to refine from")
    rest = max(0, children - len(sampled))
    low = sum(lo for lo, _ in sampled) + rest * min(lo for lo, _ in sampled)
    high = sum(hi for _, hi in sampled) + rest * max(hi for _, hi in sampled)
    return low, high


# Markers of the bot-protection interstitials seen in place of robots.txt or sitemaps
# (Cloudflare, Imperva/Incapsula, PerimeterX, DataDome, AWS WAF, Sucuri, DDoS-Guard, Akamai).
_CHALLENGE_MARKERS = (
    b"cf-browser-verification",
    b"cf_chl_",
    b"challenges.cloudflare.com",
    b"/cdn-cgi/challenge-platform",
    b"<title>just a moment...</title>",
    b"attention required! | cloudflare",
    b"_incapsula_resource",
    b"incapsula incident id",
    b"px-captcha",
    b"captcha-delivery.com",
    b"awswafintegration",
    b"sucuri website firewall",
    b"ddos-guard",
    b"checking your browser before accessing",
    b"enable javascript and cookies to continue",
    b"errors.edgesuite.net",
)


def looks_like_challenge(head: bytes) -> bool:
    """Whether the start of a body is a bot-challenge page rather than content.

    Only asked of bodies that should have been robots.txt or a sitemap and are not, so a
    vendor's name in an ordinary page cannot make a site look blocked.
    """
    text = head[:HEAD_BYTES].lower()
    return any(marker in text for marker in _CHALLENGE_MARKERS)


def _hreflang_locale(value: str) -> str | None:
    """`en-US` → `en-us`; `zh-Hant-TW` → `zh-hant`; `x-default` → None."""
    parts = value.strip().replace("_", "-").split("-")
    for n in (len(parts), 2, 1):
        locale = normalize_locale("-".join(parts[:n]))
        if locale is not None:
            return locale
    return None


class LanguageTally:
    """The languages a site shows (§9 step 4), from the URLs and hreflang values the estimate saw.

    An hreflang value names a language by definition. A locale read from a path or a sitemap's
    name may be a word that only looks like one (`/it/` for IT, `/sm/leaf-1.xml.gz`,
    `/docs/id/123`), so those count only with the evidence the locale rules (§7) ask for: at
    least two distinct locales among the sitemaps' locales, or at one position of the page paths
    (`/fr/…` beside `/de/…`, `/dotnet/en-us/…` beside `/dotnet/fr/…`). A sitemap's locale is
    read with its siblings, the other children of the same index (`SiblingLocales`): a folder
    such as `/maps/en-gb/part-1.xml` counts when another locale sits at the same position.
    """

    def __init__(self) -> None:
        self._sure: set[str] = set()
        self._indexes: dict[str, SiblingLocales] = {}  # index URL -> its children's locales
        self._at: dict[int, set[str]] = {}

    def add_hreflang(self, value: str) -> None:
        locale = _hreflang_locale(value)
        if locale is not None:
            self._sure.add(locale)

    def add_sitemap(self, url: str, index: str = "") -> None:
        """A child sitemap `url` listed by the index `index`."""
        siblings = self._indexes.get(index)
        if siblings is None:
            siblings = self._indexes[index] = SiblingLocales()
        siblings.add(url)

    def add_page(self, url: str) -> None:
        segments = [s for s in url_path(url).split("/", LOCALE_SEGMENTS + 1) if s]
        for position, segment in enumerate(segments[:LOCALE_SEGMENTS]):
            locale = normalize_locale(segment) if len(segment) <= 10 else None
            if locale is not None:
                self._at.setdefault(position, set()).add(locale)
                return

    def languages(self) -> tuple[str, ...]:
        found = set(self._sure)
        sitemaps: set[str] = set()
        for siblings in self._indexes.values():
            sitemaps |= siblings.locales()
        for locales in (sitemaps, *self._at.values()):
            if multilingual(locales):
                found |= locales
        return tuple(sorted(found))


# -- reading one document -----------------------------------------------------------------------


class _EstimateSink:
    """Counts one document as it streams: distinct page URLs, alternates, children (and picks
    `pick` of them at random, reservoir-style, for sampling), locales; keeps the first bytes.

    `on_disk(url)` says whether a child would be read from disk; `offline`: the others would not
    be read at all, so only children on disk are picked. A relative child of an index on disk is
    resolved in the index's folder (`local_child`), as the walk does; one that would leave it is
    counted in `escaped`, never a child.
    """

    def __init__(
        self,
        url: str,
        tally: LanguageTally,
        pick: int,
        rng: random.Random,
        on_disk: Callable[[str], bool],
        offline: bool,
    ) -> None:
        self.url = url
        self.parser = SitemapParser(url)
        self.tally = tally
        self.pick = pick
        self.rng = rng
        self.on_disk = on_disk
        self.offline = offline
        self.resolves_locally = is_file_url(url) and url != STDIN_URL
        self.head = bytearray()
        self.seen = SeenSet(1 << 10)
        self.urls = 0
        self.alternates = 0
        self.children = 0
        self.remote = 0  # children fetched over the network (http(s), no map covers them)
        self.readable = 0  # children a walk would read (offline: those on disk)
        self.escaped = 0  # relative children of an index on disk that cannot be read
        self.picked: list[str] = []

    def feed(self, data: bytes) -> None:
        if len(self.head) < HEAD_BYTES:
            self.head += data[: HEAD_BYTES - len(self.head)]
        self.parser.feed(data)
        self._take()

    async def drain(self) -> bool:
        # A page that is not a sitemap is read only as far as the challenge check needs.
        return self.parser.kind != "not-a-sitemap" or len(self.head) < HEAD_BYTES

    def close(self) -> None:
        self.parser.close()
        self._take()

    def _take(self) -> None:
        entries, children, malformed = self.parser.take()
        if malformed and self.parser.kind == "sitemapindex" and is_file_url(self.url):
            children = [*children, *self._local_children([bad.raw for bad in malformed])]
        tally = self.tally
        for entry in entries:
            if self.seen.add(entry.url):
                self.urls += 1
                tally.add_page(entry.url)
            for alt in entry.alternates:
                self.alternates += 1
                tally.add_hreflang(alt.hreflang)
                tally.add_page(alt.url)
        for child in children:
            self._child(child)

    def _local_children(self, raws: list[str]) -> list[str]:
        """The `<loc>`s the scanner could not resolve (it resolves to http(s) only) that name a
        file beside or below this index; the others are counted as `escaped` when they are
        paths (a value with a scheme is another kind of mistake, left out)."""
        found: list[str] = []
        for raw in raws:
            child = local_child(self.url, raw) if self.resolves_locally else None
            if child is not None:
                found.append(child)
            elif not urlsplit(raw.strip()).scheme:
                self.escaped += 1
        return found

    def _child(self, url: str) -> None:
        self.tally.add_sitemap(url, index=self.url)
        self.children += 1
        if not self.on_disk(url):
            self.remote += 1
            if self.offline:
                return
        self.readable += 1
        if len(self.picked) < self.pick:
            self.picked.append(url)
            return
        slot = self.rng.randrange(self.readable)
        if slot < self.pick:
            self.picked[slot] = url


@dataclass(slots=True)
class _Read:
    """One document as the estimate saw it."""

    url: str
    response: Response
    local: bool = False  # read from disk (a file, or under a map), not over the network
    kind: DocumentKind | None = None
    urls: int = 0
    alternates: int = 0
    children: int = 0
    remote: int = 0
    escaped: int = 0
    picked: list[str] = field(default_factory=list)
    head: bytes = b""
    errors: list[str] = field(default_factory=list)
    internal: str | None = None

    @property
    def is_sitemap(self) -> bool:
        return self.kind is not None and self.kind in SITEMAP_KINDS

    @property
    def answered(self) -> bool:
        """The server sent an HTTP status (whatever it was)."""
        return self.response.status is not None

    @property
    def pushback(self) -> str | None:
        """Why this answer suggests a real browser is needed, or None (a file never does)."""
        if self.local:
            return None
        status = self.response.status
        if status in BLOCKING_STATUSES:
            return f"HTTP {status}"
        if not self.is_sitemap and self.head and looks_like_challenge(self.head):
            return "a bot-challenge page"
        return None

    @property
    def range(self) -> tuple[int, int]:
        return url_range(self.kind, self.urls, self.children)

    def failure(self) -> str:
        resp = self.response
        if self.internal is not None:
            return self.internal
        if resp.error is None and self.kind == "not-a-sitemap":
            if self.local:
                return "not a sitemap"
            return f"not a sitemap (HTTP {resp.status}, {resp.content_type or 'no content type'})"
        return why(resp)


# -- the estimate --------------------------------------------------------------------------------


class _Estimator:
    """One estimate: the §9 steps in order, every outcome written down as it happens.

    `url` is a site URL, or a `file://` URL whose file is the top document (then `sitemap` is
    None: the file stands for it). `offline`: no request at all.
    """

    def __init__(
        self,
        url: str,
        sitemap: str | None,
        sample: int,
        seed: int | None,
        llms_txt: str | None = None,
        *,
        offline: bool = False,
    ) -> None:
        self.url = url
        self.local_root = is_file_url(url)
        self.sitemap = url if self.local_root else sitemap
        self.llms_url = llms_txt
        self.llms: LlmsSummary | None = None
        self.sample = sample
        self.offline = offline
        self.rng = random.Random(seed)
        self.tally = LanguageTally()
        self.notes: list[str] = []
        self.pushback: list[str] = []
        self.source = "none"
        self.source_url: str | None = None
        self.tops: list[str] = []
        self.top: _Read | None = None
        self.unreachable = False
        self.range = (0, 0)
        self.sampled = 0
        self.network_reads = 0  # documents asked of the network
        self.disk_reads = 0  # documents read from disk
        self.not_fetched = 0  # offline: http(s) documents no map covers, never requested

    async def run(self, fetcher: Fetcher) -> None:
        if self.offline and fetcher.local is None:
            self.notes.append(
                f"offline: nothing was read (no request is made, and no sitemap file or map "
                f"stands for {self.url})"
            )
            return
        await self._discover(fetcher)
        if self.top is None and self.tops and not self.unreachable:
            self.top = await self._read(fetcher, self.tops[0], pick=self.sample)
        self._judge_top()
        top = self.top
        if top is not None and top.kind == "sitemapindex" and top.picked:
            await self._sample(fetcher, top)
        if self.local_root:
            pass  # a file on disk is the top document: no site, so no llms.txt
        elif not self.unreachable and (self.source != "user" or self.llms_url is not None):
            await self._llms(fetcher)
        if self.not_fetched:
            n = self.not_fetched
            self.notes.append(f"offline: {n} http(s) document{'s' if n != 1 else ''} not fetched")

    async def _llms(self, fetcher: Fetcher) -> None:
        """Whether the site publishes an llms.txt and how many page links it has (its aggregate
        files are counted, not read: the estimate stays a few requests)."""
        if self.offline and not any(
            fetcher.reads_locally(url) for url in candidates(self.url, self.llms_url)
        ):
            return  # offline, and no map covers where llms.txt would be
        reader = LlmsReader(fetcher, self.url, self.llms_url, aggregates=False)
        links = await reader.read()
        self.llms = summary = reader.summary
        if summary.url is None:
            return
        extra = f"; {len(summary.omitted)} aggregate files not read" if summary.omitted else ""
        self.notes.append(f"llms.txt {summary.url}: {len(links):,} page links{extra}")
        if (self.top is None or not self.top.is_sitemap) and links:
            self.source, self.source_url = "llms.txt", summary.url
            self.range = (len(links), len(links))

    # §9 step 1 (§2): a sitemap given directly, else robots.txt, else the well-known paths; the
    # first well-known path that is a sitemap is read once, as the top document.
    async def _discover(self, fetcher: Fetcher) -> None:
        plan = DiscoveryPlan(
            self.url,
            self.sitemap,
            user_agent=fetcher.config.user_agent,
            rules=OFFLINE_SCOPE if self.offline else SCOPE,
        )
        step = plan.start()
        prefix = base_prefix(self.url)
        if not isinstance(step, Done) and prefix is not None:
            self.notes.append(f"the estimate covers the whole site, not only {prefix}")
        while True:
            # Written down after every step: a later step may raise (the SSRF guard).
            self.notes.extend(plan.new_notes())
            self.pushback = list(plan.pushback)
            self.unreachable = plan.unreachable
            self.source, self.source_url = plan.found.source, plan.found.source_url
            self.tops = list(plan.found.sitemaps)
            if isinstance(step, Done):
                return
            if isinstance(step, FetchRobots):
                step = plan.feed(await self._robots(fetcher, step.url))
                continue
            read = await self._read(fetcher, step.urls[0], pick=self.sample)
            if read.is_sitemap:
                self.top = read
            step = plan.feed(Tried(read.is_sitemap, read.answered, read.failure(), read.pushback))

    def _count(self, fetcher: Fetcher, url: str) -> bool:
        """Counts the document about to be fetched; whether it is read from disk. Offline, an
        http(s) one no map covers is refused by the fetcher without a request."""
        if fetcher.reads_locally(url):
            self.disk_reads += 1
            return True
        if self.offline:
            self.not_fetched += 1
        else:
            self.network_reads += 1
        return False

    async def _robots(self, fetcher: Fetcher, url: str) -> RobotsAnswer:
        self._count(fetcher, url)
        answer, _resp = await fetch_robots(fetcher, url)
        text = answer.text
        if text is not None and text.lstrip()[:1] == "<":
            challenge = looks_like_challenge(text[:HEAD_BYTES].encode())
            return RobotsAnswer(answer.status, answer.final_url, text, challenge=challenge)
        return answer

    async def _read(self, fetcher: Fetcher, url: str, *, pick: int = 0) -> _Read:
        local = self._count(fetcher, url)
        sinks: list[_EstimateSink] = []

        def sink_for(resp: Response) -> _EstimateSink:
            sink = _EstimateSink(
                resp.final_url, self.tally, pick, self.rng, fetcher.reads_locally, self.offline
            )
            sinks.append(sink)
            return sink

        try:
            resp = await fetcher.fetch(url, sink_for)
            if sinks:
                sinks[-1].close()
        except OSError:
            raise  # the SSRF guard could not resolve the host: the estimate's own concern
        except Exception as exc:  # a bug must not cost the caller the estimate (as in the walk)
            log.exception("internal error reading %s", url)
            resp = Response(url=url, final_url=url, status=200 if sinks else None)
            return _Read(url=url, response=resp, internal=f"internal error: {exc!r}", local=local)
        read = _Read(url=url, response=resp, local=local)
        if sinks:
            sink = sinks[-1]
            read.kind = sink.parser.kind
            read.urls, read.alternates = sink.urls, sink.alternates
            read.children, read.picked = sink.children, sink.picked
            read.remote, read.escaped = sink.remote, sink.escaped
            read.head, read.errors = bytes(sink.head), sink.parser.errors
        log.debug("scope read %s: %s %s", url, resp.status, read.kind)
        return read

    def _counted_children(self, top: _Read) -> int:
        """The children a walk would read: offline, those on disk only."""
        return top.children - top.remote if self.offline else top.children

    # §9 steps 3 and 6 for the top document.
    def _judge_top(self) -> None:
        top = self.top
        if top is None:
            return
        if top.pushback is not None:
            self._pushed_back(f"the top sitemap answered {top.pushback}")
        if not top.is_sitemap:
            self.notes.append(f"top sitemap {top.url} failed: {top.failure()}")
            if not top.answered and not top.local:
                self.unreachable = True
            return
        self.range = url_range(top.kind, top.urls, self._counted_children(top))
        resp = top.response
        if resp.error is not None:
            self.notes.append(f"top sitemap read incomplete ({resp.error}); counts are a minimum")
        if resp.truncated:
            self.notes.append("top sitemap cut at the document size limit; counts are a minimum")
        if top.errors:
            self.notes.append(f"top sitemap is damaged XML ({top.errors[0]}); entries salvaged")
        if top.kind == "sitemapindex":
            self._judge_children(top)
        if top.alternates:
            self.notes.append(f"{top.alternates:,} hreflang alternate links (not counted)")

    def _judge_children(self, top: _Read) -> None:
        """What the notes say about a top index's children: none, some unusable, some on disk
        (not in the duration), some that offline leaves unread (not in the range either)."""
        if top.escaped:
            n = top.escaped
            what = f"{n} child sitemap path{'s' if n != 1 else ''}"
            if top.url == STDIN_URL:
                self.notes.append(f"{what} cannot be read: a relative path has no folder on stdin")
            else:
                self.notes.append(
                    f"{what} {'leave' if n != 1 else 'leaves'} the index's folder: not read"
                )
        if top.children == 0:
            self.notes.append("the top sitemap index lists no child sitemap")
            return
        on_disk = top.children - top.remote
        if self.offline and top.remote:
            self.notes.append(
                f"offline: {top.remote:,} of {top.children:,} child sitemaps are http(s) and "
                f"would not be fetched; the estimate counts the other {on_disk:,}"
            )
        elif on_disk == top.children:
            self.notes.append(
                f"all {on_disk:,} child sitemaps are read from disk; the expected duration does "
                "not count them"
            )
        elif on_disk:
            self.notes.append(
                f"{on_disk:,} of {top.children:,} child sitemaps are read from disk; the expected "
                f"duration counts only the {top.remote:,} fetched over the network"
            )

    async def _sample(self, fetcher: Fetcher, top: _Read) -> None:
        """Beyond §9: read `sample` random children in full and re-derive the range."""
        picked = [u for u in top.picked if normalize_url(u) != normalize_url(top.url)]
        reads = await asyncio.gather(*(self._read(fetcher, url) for url in picked))
        ranges = [r.range for r in reads if r.is_sitemap]
        failed = [r for r in reads if not r.is_sitemap]
        if failed:
            first = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            self.notes.append(f"sampled child {first.url} failed: {first.failure()}{more}")
        if not ranges:
            self.notes.append(
                f"none of the {len(picked)} sampled child sitemaps could be read; "
                "range from the formula"
            )
            return
        counted = self._counted_children(top)
        self.range = refine_range(counted, ranges)
        self.sampled = len(ranges)
        sizes = ", ".join(f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}" for lo, hi in ranges)
        self.notes.append(
            f"range refined from {len(ranges)} of {counted:,} child sitemaps sampled at "
            f"random ({sizes} URLs); the others are assumed alike"
        )

    def _pushed_back(self, reason: str) -> None:
        if reason not in self.pushback:
            self.pushback.append(reason)
            self.notes.append(f"{reason}: the site likely needs a real browser")

    def fail(self, message: str) -> None:
        self.unreachable = True
        self.notes.append(message)

    def transport(self) -> Transport:
        """§9 step 6: pushback wins; a top document read from disk is `local`; a sitemap read
        over the network means plain fetching works; no answer at all means discovery itself
        failed, and so does an offline estimate that read nothing."""
        if self.pushback:
            return "browser"
        top = self.top
        if top is not None and top.local:
            return "local"
        if top is not None and top.is_sitemap:
            return "fetch"
        if self.unreachable:
            return "unknown"
        if self.network_reads:
            return "fetch"
        return "local" if self.disk_reads else "unknown"

    def result(self) -> ScopeEstimate:
        top = self.top
        read = top is not None and top.is_sitemap
        children = top.children if top is not None and top.kind == "sitemapindex" else 0
        # Only the children fetched over the network take walking time (none, offline).
        fetched = 0 if top is None or self.offline else min(children, top.remote)
        seconds, span = expected_duration(fetched, read=read)
        root = self.url if self.local_root else normalize_url(origin_of(self.url) + "/")
        return ScopeEstimate(
            root_url=root,
            top_sitemap_urls=tuple(self.tops),
            source=self.source,
            url_estimate_range=self.range,
            sub_sitemap_count=children,
            languages_detected=self.tally.languages(),
            expected_duration_seconds=seconds,
            transport=self.transport(),
            notes=tuple(self.notes),
            source_url=self.source_url,
            expected_duration_range=span,
            top_kind=top.kind if top is not None and top.is_sitemap else None,
            sampled_children=self.sampled,
            llms_txt=self.llms.url if self.llms is not None else None,
            llms_links=self.llms.links if self.llms is not None else 0,
        )


def _check(
    url: object,
    sitemap: object,
    sample: object,
    llms_txt: object,
    maps: object,
    offline: object,
) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
    """The arguments checked: the site (or file) URL, the sitemap URL, the maps."""
    site = as_walk_url(url, "url")
    given = None if sitemap is None else as_walk_url(sitemap, "sitemap")
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise UsageError(f"sample must be a whole number >= 0, got {sample!r}")
    if llms_txt is not None:
        require_http_url(llms_txt, "llms_txt")
    if not isinstance(offline, bool):
        raise UsageError(f"offline must be True or False, got {offline!r}")
    checked = check_maps(maps)
    if is_file_url(site):
        if given is not None:
            raise UsageError("url is a sitemap file: it is the top document, so no sitemap too")
        if llms_txt is not None:
            raise UsageError("url is a sitemap file: there is no site to read an llms.txt of")
    return site, given, checked


async def estimate_scope_async(
    url: str | os.PathLike[str],
    *,
    sitemap: str | os.PathLike[str] | None = None,
    config: FetchConfig | None = None,
    sample: int = 0,
    seed: int | None = None,
    ssrf_guard: bool = True,
    llms_txt: str | None = None,
    maps: Sequence[tuple[str, str | os.PathLike[str]]] = (),
    offline: bool = False,
) -> ScopeEstimate:
    """Estimate what walking `url` would take, in one or two requests.

    `url` is a site URL (discovery runs) or a sitemap URL (read directly, as is `sitemap`); or
    a sitemap you already have: a `file://` URL or a path (`os.PathLike`), read as the top
    document without discovery, robots.txt or llms.txt. `sitemap` may be a file too, for a site
    given by URL. `maps`: (URL prefix, folder) pairs; a document whose URL starts with a prefix
    is read from that folder. `offline`: no request at all; http(s) documents no map covers are
    skipped, and a note counts them.
    `config` defaults to `SCOPE_FETCH` (10 s per document, one retry); robots.txt gets at most
    8 s. `sample=N` also reads N random children of a top index to refine the range; `seed`
    makes that choice repeatable. Raises `UsageError` for a bad argument, never for network
    trouble or an unreadable file: what failed is in `notes`. The site's llms.txt is also looked
    for (`llms_txt` names one), up to three more small requests.
    """
    site, given, checked = _check(url, sitemap, sample, llms_txt, maps, offline)
    cfg = config or SCOPE_FETCH
    run = _Estimator(site, given, sample, seed, llms_txt, offline=offline)
    guard = AddressGuard(site) if ssrf_guard else None
    root = site if is_file_url(site) else given if is_file_url(given) else None
    local = LocalFiles(checked, root=root)
    try:
        async with Fetcher(
            cfg, guard=guard, origin=site, local=local if local else None, offline=offline
        ) as fetcher:
            await run.run(fetcher)
    except OSError as exc:  # the SSRF guard resolves the root host before any request
        log.info("scope estimate of %s: %s", site, exc)
        run.fail(f"cannot reach {origin_of(site)}: {exc}")
    return run.result()


def estimate_scope(
    url: str | os.PathLike[str],
    *,
    sitemap: str | os.PathLike[str] | None = None,
    config: FetchConfig | None = None,
    sample: int = 0,
    seed: int | None = None,
    ssrf_guard: bool = True,
    llms_txt: str | None = None,
    maps: Sequence[tuple[str, str | os.PathLike[str]]] = (),
    offline: bool = False,
) -> ScopeEstimate:
    """Sync twin of `estimate_scope_async`, on a private event loop.

    This name used to be the coroutine function. For one release, a call from inside a running
    event loop (where `await estimate_scope(...)` used to be right) warns `DeprecationWarning`
    and returns the coroutine of `estimate_scope_async`, so that old callers keep working.
    """
    estimate = estimate_scope_async(
        url,
        sitemap=sitemap,
        config=config,
        sample=sample,
        seed=seed,
        ssrf_guard=ssrf_guard,
        llms_txt=llms_txt,
        maps=maps,
        offline=offline,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(estimate)
    warnings.warn(
        "estimate_scope is synchronous now; inside an event loop use "
        "`await estimate_scope_async(...)`",
        DeprecationWarning,
        stacklevel=2,
    )
    # The old async contract, kept for one release: the caller awaits what it gets.
    return estimate  # type: ignore[return-value]

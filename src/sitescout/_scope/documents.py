"""The scope estimate's reads: each document, fetched or read from disk, is counted as it
streams, and so is where it came from (`DocumentReader`); what one read gave is a
`DocumentRead`. Counts are kept, not entries: the estimate stays small whatever the size.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .._core import SeenSet
from .._discover import BLOCKING_STATUSES, RobotsAnswer, fetch_robots, why
from .._http import Fetcher, Response
from .._local import STDIN_URL, is_file_url, local_child
from .._models import SITEMAP_KINDS, DocumentKind
from .._parse import SitemapParser
from .rules import HEAD_BYTES, LanguageTally, looks_like_challenge, url_range

# Records keep the name they had before the split: "sitescout._scope".
log = logging.getLogger(__package__)


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
class DocumentRead:
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


class DocumentReader:
    """Reads the estimate's documents and counts where each came from: the network, disk, or
    (offline) nowhere. Every page URL, alternate and child seen goes to `tally`; `rng` picks the
    children to sample.
    """

    def __init__(self, tally: LanguageTally, rng: random.Random, *, offline: bool) -> None:
        self.tally = tally
        self.rng = rng
        self.offline = offline
        self.network_reads = 0  # documents asked of the network
        self.disk_reads = 0  # documents read from disk
        self.not_fetched = 0  # offline: http(s) documents no map covers, never requested

    def count(self, fetcher: Fetcher, url: str) -> bool:
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

    async def robots(self, fetcher: Fetcher, url: str) -> RobotsAnswer:
        """robots.txt's answer, flagged when its body is a bot-challenge page (§9 step 6)."""
        self.count(fetcher, url)
        answer, _resp = await fetch_robots(fetcher, url)
        text = answer.text
        if text is not None and text.lstrip()[:1] == "<":
            challenge = looks_like_challenge(text[:HEAD_BYTES].encode())
            return RobotsAnswer(answer.status, answer.final_url, text, challenge=challenge)
        return answer

    async def read(self, fetcher: Fetcher, url: str, *, pick: int = 0) -> DocumentRead:
        from_disk = self.count(fetcher, url)
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
            return DocumentRead(
                url=url, response=resp, internal=f"internal error: {exc!r}", local=from_disk
            )
        read = DocumentRead(url=url, response=resp, local=from_disk)
        if sinks:
            sink = sinks[-1]
            read.kind = sink.parser.kind
            read.urls, read.alternates = sink.urls, sink.alternates
            read.children, read.picked = sink.children, sink.picked
            read.remote, read.escaped = sink.remote, sink.escaped
            read.head, read.errors = bytes(sink.head), sink.parser.errors
        log.debug("scope read %s: %s %s", url, resp.status, read.kind)
        return read

"""A site's llms.txt, read through the walk's `Fetcher`: its page links, and those of the
aggregate files it names, one level deep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from .._http import Fetcher, Response
from .._llms import (
    MAX_AGGREGATES,
    MAX_LINKS,
    MAX_LLMS_BYTES,
    LlmsLink,
    candidates,
    judge_link,
    markdown_links,
    rejection,
)
from .._models import LlmsSummary
from .._urls import normalize_url, site_key
from .fetch import why

# Records keep the name they had before the split: "sitescout._discover".
log = logging.getLogger(__package__)


class _LlmsSink:
    """Keeps an llms file's bytes up to `MAX_LLMS_BYTES`, then stops the read (`cut`)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.cut = False

    def feed(self, data: bytes) -> None:
        room = MAX_LLMS_BYTES - self.size
        if len(data) > room:
            self.cut = True
            data = data[:room]
        if data:
            self.parts.append(data)
            self.size += len(data)

    async def drain(self) -> bool:
        return not self.cut

    def body(self) -> bytes:
        return b"".join(self.parts)


MAX_OMITTED_KEPT = 1000


def _same_site(a: str, b: str) -> bool:
    return site_key(a) == site_key(b)


# Asked before each fetch: False means a budget forbids it (the reader stops).
LlmsGate = Callable[[], bool]
# Told after each fetch: the URL asked for, its depth (1: llms.txt, 2: an aggregate), the
# response, and why it was refused (None: used).
LlmsObserver = Callable[[str, int, Response, str | None], None]


class LlmsReader:
    """Finds a site's llms.txt and collects its page links, aggregates one level deep.

    The fetches go through the walk's `Fetcher` (SSRF guard, timeouts, redirects); `gate`,
    `time_limit` and `observe` let the walk count them against its budgets. The links are held
    (at most `MAX_LINKS`, de-duplicated, in file order): an llms.txt is a bounded index, and the
    walk needs them whole to tell which sitemap URLs it also lists.

    An `explicit` file (the user named it) is read as given, on another site too: it may redirect
    within its own site (or to the walk's), its `.txt` links are aggregates of its own site, and
    its page links count on its site and on the walk's. The address guard is the fetcher's,
    judged by the walk's root. A candidate that cannot be connected to ends the search
    (`cannot_connect`): the others are on the same origin.
    """

    def __init__(
        self,
        fetcher: Fetcher,
        site_url: str,
        explicit: str | None = None,
        *,
        aggregates: bool = True,
        gate: LlmsGate | None = None,
        time_limit: Callable[[], float] | None = None,
        observe: LlmsObserver | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.site_url = site_url
        self.explicit = explicit
        self.follow_aggregates = aggregates
        self.gate = gate or (lambda: True)
        self.time_limit = time_limit
        self.observe = observe
        self.summary = LlmsSummary()
        self.links: dict[str, LlmsLink] = {}
        self.stopped = False  # a budget ended the reading
        self.cannot_connect: str | None = None  # why a candidate could not be connected to
        # Whose pages count besides the file's own site: the walk's, for a file on another site.
        self._also = None if explicit is None or _same_site(explicit, site_url) else site_url
        self._visited: set[str] = set()  # files fetched or asked for: never read twice
        self._omitted: set[str] = set()

    async def read(self) -> list[LlmsLink]:
        """The page links, in order; `summary` says what was found and what was not used."""
        for url in candidates(self.site_url, self.explicit):
            fetched = await self._fetch(url, 1)
            if fetched is not None:
                self.summary.url = url
                text, where = fetched
                aggregates = self._collect(text, where, 1, deeper=self.follow_aggregates)
                break
            if self.stopped or self.cannot_connect is not None:
                return []
        else:
            return []
        for url in aggregates:
            if len(self.summary.aggregates) >= MAX_AGGREGATES or self.stopped:
                self._omit(url)
                continue
            fetched = await self._fetch(url, 2)
            if fetched is not None:
                self.summary.aggregates.append(url)
                self._collect(*fetched, 2, deeper=False)
        return list(self.links.values())

    async def _fetch(self, url: str, depth: int) -> tuple[str, str] | None:
        """The file's text and where it was read (after redirects: its links resolve there);
        None when it is missing, unusable, or a budget forbids the fetch."""
        if self.stopped or not self.gate():
            self.stopped = True
            return None
        self._visited.add(url)
        limit = self.time_limit() if self.time_limit is not None else None
        resp, sink = await self.fetcher.fetch_into(url, lambda _r: _LlmsSink(), time_limit=limit)
        if resp.redirects:
            self._visited.add(normalize_url(resp.final_url))  # an aggregate naming it is read
        body = sink.body() if sink is not None else b""
        if depth == 1 and resp.unreachable is not None:
            self.cannot_connect = resp.unreachable
        refusal = self._refusal(url, resp, body)
        if refusal is None and sink is not None and sink.cut:
            self.summary.cut.append(resp.final_url)
            log.warning("%s: cut at the %d-byte llms.txt limit", resp.final_url, MAX_LLMS_BYTES)
        if refusal is not None:
            self.summary.rejected.append((url, refusal))
            log.debug("llms.txt %s not used: %s", url, refusal)
        if self.observe is not None:
            self.observe(url, depth, resp, refusal)
        return None if refusal is not None else (body.decode("utf-8", "replace"), resp.final_url)

    def _refusal(self, url: str, resp: Response, body: bytes) -> str | None:
        """Why the answer to `url` is not an llms file, or None. A redirect may end on the site of
        the URL asked for (the named file's, for an explicit one) or on the walk's site, nowhere
        else."""
        error = resp.error
        if error is not None:
            # The message alone when it is about the URL asked for: the note names it already.
            return str(error.args[0]) if error.url == url else str(error)
        if not resp.ok:
            return why(resp)
        if not _same_site(resp.final_url, url) and not _same_site(resp.final_url, self.site_url):
            return f"redirected to another site ({resp.final_url})"
        return rejection(resp.content_type, body[:512], len(body))

    def _collect(self, text: str, file_url: str, depth: int, *, deeper: bool) -> list[str]:
        """Keep the page links of one file; return the aggregate files it names (if `deeper`)."""
        summary = self.summary
        aggregates: dict[str, None] = {}  # ordered, with O(1) membership
        judged: set[str] = set()
        for title, raw in markdown_links(text):
            if raw in judged:
                continue  # the same link again: nothing new to learn from it
            if len(self.links) >= MAX_LINKS:
                # Judging costs far more than scanning: a file of a million tiny links stops here.
                summary.dropped["over the link limit"] = (
                    summary.dropped.get("over the link limit", 0) + 1
                )
                continue
            judged.add(raw)
            verdict = judge_link(raw, file_url, self._also)
            if verdict.kind == "dropped":
                summary.dropped[verdict.reason] = summary.dropped.get(verdict.reason, 0) + 1
                continue
            assert verdict.url is not None
            if verdict.kind == "aggregate":
                if verdict.url in self._visited or verdict.url in aggregates:
                    continue
                if deeper:
                    aggregates[verdict.url] = None
                else:
                    self._omit(verdict.url)
                continue
            if verdict.url in self.links:
                continue
            self.links[verdict.url] = LlmsLink(
                verdict.url, title or None, verdict.md_url, file_url, depth
            )
            summary.links += 1
            summary.md_links += verdict.md_url is not None
        return list(aggregates)

    def _omit(self, url: str) -> None:
        if url in self._omitted:
            return
        self._omitted.add(url)
        if len(self.summary.omitted) < MAX_OMITTED_KEPT:
            self.summary.omitted.append(url)
        else:
            self.summary.dropped["omitted, not listed"] = (
                self.summary.dropped.get("omitted, not listed", 0) + 1
            )

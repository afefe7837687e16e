"""The discovery chain (§2): user sitemap → robots.txt → well-known paths → (crawl fallback).

The chain is written once, as `DiscoveryPlan`: an object with no I/O that names the next step
(`FetchRobots`, `TrySitemaps`) and is fed what that step's fetch learned (`RobotsAnswer`,
`Tried`) until it is `Done`. Its callers differ on purpose, and each difference is a field of
`Rules` (one preset per caller below); the callers only fetch and feed:

- the walker (`_walk`) walks every tried URL as a whole document (`WALK`);
- `discover_sitemaps` sniffs the first kilobytes of a well-known path (`probe`, `SNIFF`);
- the scope estimate reads the top document it would read anyway (`SCOPE`);
- the link crawl only needs robots.txt's rules (`read_robots`, `CRAWL`).

When the walk's first request cannot connect at all (`Rules.stop_when_no_connection`), the plan
ends there and `DiscoveryPlan.cannot_connect` says so in one line; the walker then tries nothing
else (no llms.txt, no link crawl): every other request would meet the same closed door.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._http import FetchConfig, Fetcher, Response
from ._llms import (
    MAX_AGGREGATES,
    MAX_LINKS,
    MAX_LLMS_BYTES,
    LlmsLink,
    candidates,
    judge_link,
    markdown_links,
    rejection,
)
from ._models import DocumentRecord, LlmsSummary, WalkReport
from ._parse import SitemapParser
from ._robots import Robots, parse_robots
from ._rules import WELL_KNOWN_SITEMAPS
from ._urls import looks_like_sitemap_url, normalize_url, origin_of, site_key

log = logging.getLogger(__name__)

ROBOTS_TIMEOUT = 8.0
ROBOTS_MAX_BYTES = 512 * 1024
# (source name, path) of each well-known sitemap path, in the order tried.
WELL_KNOWN: tuple[tuple[str, str], ...] = tuple(
    (path.removeprefix("/"), path) for path in WELL_KNOWN_SITEMAPS
)
# §9 step 6: the answers that say the site pushes back on plain HTTP clients.
BLOCKING_STATUSES = frozenset({403, 429})
NO_SITEMAP_FOUND = "no sitemap found (robots.txt and well-known paths)"


@dataclass(slots=True)
class Discovery:
    """Where the walk starts.

    `sitemaps` are definite roots (from the user or robots.txt); `candidates` are the well-known
    paths to try in order, the first that really is a sitemap winning.
    """

    site_url: str
    source: str = "none"
    source_url: str | None = None
    sitemaps: list[str] = field(default_factory=list)
    candidates: list[tuple[str, str]] = field(default_factory=list)
    robots: Robots | None = None
    robots_status: int | None = None
    notes: list[str] = field(default_factory=list)


# -- the plan (no I/O) ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rules:
    """How one caller runs the chain. How a tried URL is judged (sniffed, or read whole) is the
    caller's business: the plan only hears the verdict.

    `direct`: a site URL that names a sitemap is walked as given (§2 step 1); the crawl's own
    robots.txt read turns it off, it always wants the rules.
    `robots_only`: stop after robots.txt (the crawl, and `--crawl`, which walks no sitemap).
    `confirm_roots`: robots.txt's sitemaps are tried too, and when none of them answers as a
    sitemap the well-known paths are next (the walker); otherwise they are taken on trust.
    `stop_when_unreachable`: no HTTP answer at all (robots.txt or a well-known path) ends the
    chain: probing more paths would only multiply the wait (the scope estimate, seconds long).
    `stop_when_no_connection`: the first request (robots.txt, or the sitemap given) could not
    connect at all (refused, no DNS answer, unreachable; not a timeout once connected) ends the
    chain and sets `DiscoveryPlan.cannot_connect`; the caller tries nothing after it (the walker).
    `first_root_only`: only the first robots.txt sitemap will be read; a note says so.
    `spelling_notes`: say when robots.txt used a nonstandard `Sitemap:` spelling.
    `candidate_notes`: a note for each well-known path that was not a sitemap.
    `pushback`: 403/429 and bot-challenge answers are recorded (`DiscoveryPlan.pushback`).
    `try_start`: when robots.txt and the well-known paths give no sitemap, a site URL with a
    path or a query (`/feed`, `/urls.txt.gz`, `/?feed=rss2`) is tried as a sitemap itself: it
    is judged by what it returns, not by its name (the walker).
    """

    direct: bool = True
    robots_only: bool = False
    confirm_roots: bool = False
    stop_when_unreachable: bool = False
    stop_when_no_connection: bool = False
    first_root_only: bool = False
    spelling_notes: bool = True
    candidate_notes: bool = False
    pushback: bool = False
    try_start: bool = False


SNIFF = Rules()
WALK = Rules(confirm_roots=True, stop_when_no_connection=True, try_start=True)
WALK_CRAWL = Rules(robots_only=True, stop_when_no_connection=True)
CRAWL = Rules(direct=False, robots_only=True)
SCOPE = Rules(
    stop_when_unreachable=True,
    first_root_only=True,
    spelling_notes=False,
    candidate_notes=True,
    pushback=True,
)


@dataclass(frozen=True, slots=True)
class FetchRobots:
    """Fetch `url` (robots.txt, see `fetch_robots`) and feed a `RobotsAnswer`."""

    url: str


@dataclass(frozen=True, slots=True)
class TrySitemaps:
    """Fetch `urls` and feed a `Tried`: whether any of them really is a sitemap (§2 step 3).

    `name` is the source they would be (`user`, `robots.txt`, a well-known name); `guess`
    marks a well-known path, whose absence is an answer rather than a failure. `start` marks
    the site URL itself, tried as a sitemap (`Rules.try_start`, also a guess): no base path
    applies to what it lists.
    """

    name: str
    urls: tuple[str, ...]
    guess: bool = False
    start: bool = False


@dataclass(frozen=True, slots=True)
class Done:
    found: Discovery


Step = FetchRobots | TrySitemaps | Done


@dataclass(frozen=True, slots=True)
class RobotsAnswer:
    """What fetching robots.txt gave: its text on a 2xx answer, else why not (`why`)."""

    status: int | None
    final_url: str
    text: str | None = None
    why: str = ""
    challenge: bool = False  # the body is a bot-challenge page (only the scope estimate asks)
    unreachable: str | None = None  # why no connection could be made (`Response.unreachable`)


@dataclass(frozen=True, slots=True)
class Tried:
    """What trying a `TrySitemaps` step's URLs gave."""

    sitemap: bool
    answered: bool = True  # an HTTP status came back
    failure: str = "not a sitemap"  # why it is not a sitemap, for `candidate_notes`
    pushback: str | None = None  # `HTTP 403`, `a bot-challenge page`
    # Why the first of the URLs could not be connected to (`Fetcher.cannot_connect`); the plan
    # only asks about the sitemap given, the walk's first request.
    unreachable: str | None = None


Answer = RobotsAnswer | Tried


class DiscoveryPlan:
    """§2 as steps: `start()` gives the first step, `feed(answer)` the next, until `Done`.

    `found` fills in as the answers come; `new_notes()` hands out the notes added since the last
    call, so a caller can interleave them with its own in the order things happened. The chain
    is a generator so that it reads top to bottom like §2 and keeps its place between answers.
    """

    def __init__(
        self,
        site_url: str,
        sitemap: str | None = None,
        *,
        user_agent: str,
        rules: Rules = SNIFF,
    ) -> None:
        self.rules = rules
        self.user_agent = user_agent
        self.found = Discovery(site_url=site_url)
        self.pushback: list[str] = []
        self.unreachable = False  # robots.txt or a well-known path got no HTTP answer at all
        # `cannot connect to http://host/: connection refused`, when the first request could
        # not connect and `Rules.stop_when_no_connection` ended the chain there; `failure` is
        # then robots.txt's failed fetch, for the caller to record (a sitemap given is a document
        # the caller records itself).
        self.cannot_connect: str | None = None
        self.failure: DocumentRecord | None = None
        self._sitemap = sitemap
        self._noted = 0
        self._steps = self._chain()

    def start(self) -> Step:
        return self._advance(None)

    def feed(self, answer: Answer) -> Step:
        return self._advance(answer)

    def new_notes(self) -> list[str]:
        notes = self.found.notes[self._noted :]
        self._noted = len(self.found.notes)
        return notes

    def _advance(self, answer: Answer | None) -> Step:
        try:
            return self._steps.send(answer)
        except StopIteration:
            return Done(self.found)

    def _chain(self) -> Generator[Step, Answer | None, None]:
        found, rules = self.found, self.rules
        direct = self._sitemap
        if direct is None and rules.direct and looks_like_sitemap_url(found.site_url):
            direct = found.site_url
        if direct is not None:
            found.source, found.source_url = "user", direct
            found.sitemaps = [normalize_url(direct)]
            if rules.confirm_roots and not rules.robots_only:
                tried = yield TrySitemaps("user", tuple(found.sitemaps))
                assert isinstance(tried, Tried)
                if not tried.sitemap and tried.unreachable and rules.stop_when_no_connection:
                    self._no_connection(found.sitemaps[0], "the sitemap", tried.unreachable)
            return
        origin = origin_of(found.site_url)
        answer = yield FetchRobots(origin + "/robots.txt")
        assert isinstance(answer, RobotsAnswer)
        self._robots(answer)
        found.candidates = [(name, origin + path) for name, path in WELL_KNOWN]
        if rules.robots_only or self.unreachable:
            return
        if found.sitemaps:
            if not rules.confirm_roots:
                return
            tried = yield TrySitemaps("robots.txt", tuple(found.sitemaps))
            assert isinstance(tried, Tried)
            if tried.sitemap:
                return
            found.notes.append("no sitemap listed in robots.txt answered; trying well-known")
        yield from self._well_known(origin)
        if rules.try_start and found.source == "none" and not self.unreachable:
            yield from self._start_as_sitemap()

    def _robots(self, answer: RobotsAnswer) -> None:
        found, rules = self.found, self.rules
        found.robots_status = answer.status
        if answer.status in BLOCKING_STATUSES:
            self._push(f"robots.txt answered HTTP {answer.status}")
        if answer.text is None:
            if answer.unreachable is not None and rules.stop_when_no_connection:
                self._no_connection(answer.final_url, "robots.txt", answer.unreachable)
                self.failure = DocumentRecord(
                    answer.final_url, 0, error=answer.why, error_class="NetworkError"
                )
            elif answer.status is None and rules.stop_when_unreachable:
                self.unreachable = True
                found.notes.append(
                    f"robots.txt did not answer ({answer.why}); the site looks unreachable, so "
                    "the well-known sitemap paths were not tried"
                )
            else:
                found.notes.append(
                    f"robots.txt unavailable ({answer.why}); trying well-known paths"
                )
            return
        if answer.challenge:
            self._push("robots.txt is a bot-challenge page")
        robots = found.robots = parse_robots(answer.text, answer.final_url, self.user_agent)
        if not robots.sitemaps:
            found.notes.append("robots.txt lists no sitemap; trying well-known paths")
            return
        found.source, found.source_url = "robots.txt", answer.final_url
        found.sitemaps = list(robots.sitemaps)
        if rules.spelling_notes:
            found.notes.extend(spelling_notes(robots))
        if rules.first_root_only and len(found.sitemaps) > 1:
            found.notes.append(
                f"robots.txt lists {len(found.sitemaps)} sitemaps; only the first was read"
            )

    def _well_known(self, origin: str) -> Generator[Step, Answer | None, None]:
        """§2 step 3: the first well-known path that really is a sitemap wins."""
        found, rules = self.found, self.rules
        pushback: list[str] = []
        for name, path in WELL_KNOWN:
            url = origin + path
            tried = yield TrySitemaps(name, (url,), guess=True)
            assert isinstance(tried, Tried)
            if tried.sitemap:
                found.source, found.source_url = name, url
                found.sitemaps = [normalize_url(url)]
                return
            if rules.candidate_notes:
                found.notes.append(f"well-known {path}: {tried.failure}")
            if tried.pushback is not None:
                pushback.append(f"{path} answered {tried.pushback}")
            if not tried.answered and rules.stop_when_unreachable:
                self.unreachable = True
                break
        for reason in pushback:  # only when no well-known path served a sitemap
            self._push(reason)
        found.source, found.source_url = "none", None
        found.notes.append(NO_SITEMAP_FOUND)

    def _start_as_sitemap(self) -> Generator[Step, Answer | None, None]:
        """The site URL itself, when it names more than its site, may be a sitemap whatever
        its name (`/feed`, a gzipped list at `/urls.txt.gz`): tried as one, it is walked as
        one when it is."""
        found = self.found
        if not names_a_document(found.site_url):
            return
        url = normalize_url(found.site_url)
        tried = yield TrySitemaps("user", (url,), guess=True, start=True)
        assert isinstance(tried, Tried)
        if tried.sitemap:
            found.source, found.source_url = "user", found.site_url
            found.sitemaps = [url]
            found.notes.append(f"{url} is itself a sitemap: walked as one")

    def _no_connection(self, url: str, what: str, why: str) -> None:
        """The first request could not connect: the chain ends here, saying so."""
        self.unreachable = True
        self.cannot_connect = cannot_connect_message(url, why)
        self.found.notes.append(
            f"{what} could not be fetched: {self.cannot_connect}; nothing else was tried"
        )

    def _push(self, reason: str) -> None:
        if self.rules.pushback and reason not in self.pushback:
            self.pushback.append(reason)
            self.found.notes.append(f"{reason}: the site likely needs a real browser")


def names_a_document(site_url: str) -> bool:
    """Whether a site URL names more than its site: a path other than `/`, or a query."""
    parts = urlsplit(site_url)
    return parts.path not in ("", "/") or bool(parts.query)


def cannot_connect_message(url: str, why: str) -> str:
    """`cannot connect to http://host/: connection refused`: the origin, then why."""
    return f"cannot connect to {origin_of(url)}/: {why}"


def llms_shortfall(
    summary: LlmsSummary | None, cannot_connect: Callable[[str], str | None]
) -> tuple[str, str | None] | None:
    """Why llms.txt, read as the walk's only source, gave no page: a warning, and the URL whose
    failed fetch is the walk's error (the first candidate, when nothing could be connected to;
    None when the answers were answers: a missing file is not a failure).

    None when it gave pages, or when nothing was fetched (a budget stopped it, and says so).
    `cannot_connect` is `Fetcher.cannot_connect`.
    """
    if summary is None:
        return None
    if summary.url is None:
        if not summary.rejected:
            return None
        first = summary.rejected[0][0]
        why = cannot_connect(first)
        if why is not None:
            return cannot_connect_message(first, why), first
        tried = ", ".join(f"{url} ({reason})" for url, reason in summary.rejected)
        return f"no llms.txt at {tried}", None
    if summary.links == 0:
        dropped = ", ".join(f"{n} {reason}" for reason, n in summary.dropped.items())
        return (
            f"llms.txt {summary.url} lists no page of the site"
            + (f" (links dropped: {dropped})" if dropped else ""),
            None,
        )
    return None


def llms_txt_unread(llms_txt: str | None, source: str, report: WalkReport) -> str | None:
    """The warning when the llms.txt the caller named (`llms_txt`) was not read, or None."""
    if llms_txt is None or report.llms is not None:
        return None
    # (source "sitemap" with a named llms.txt is refused before the walk, as a usage error)
    if source == "auto" and report.source not in (None, "none"):
        return (
            f"llms.txt {llms_txt} was not read: source auto reads it only when the site has no "
            f"sitemap, and this walk used {report.source} (source all merges both)"
        )
    return None


def spelling_notes(robots: Robots) -> list[str]:
    """What to tell the user when sitemaps were listed under a nonstandard directive name."""
    return [
        f'robots.txt also lists sitemaps under the nonstandard "{spelling}:" spelling'
        for spelling in robots.sitemap_spellings
    ]


# -- the fetches the plan's callers share ---------------------------------------------------------


def robots_time_limit(config: FetchConfig) -> float:
    """robots.txt gets at most `ROBOTS_TIMEOUT`, and never longer than any other document."""
    return min(ROBOTS_TIMEOUT, config.timeout)


def why(resp: Response) -> str:
    """What went wrong with a response, in a few words: the fetch error, else the status."""
    if resp.error is not None:
        return str(resp.error)
    return f"HTTP {resp.status}"


class _TextSink:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, data: bytes) -> None:
        if self.size < self.limit:
            self.parts.append(data[: self.limit - self.size])
            self.size += len(self.parts[-1])

    async def drain(self) -> bool:
        return True

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", "replace")


async def fetch_robots(fetcher: Fetcher, url: str) -> tuple[RobotsAnswer, Response]:
    """Fetch robots.txt at `url` (at most `ROBOTS_MAX_BYTES`, see `robots_time_limit`)."""
    sink = _TextSink(ROBOTS_MAX_BYTES)
    limit = robots_time_limit(fetcher.config)
    resp = await fetcher.fetch(url, lambda _r: sink, time_limit=limit)
    if not resp.ok:
        log.info("robots.txt unavailable at %s: %s", url, resp.error or resp.status)
        answer = RobotsAnswer(
            resp.status, resp.final_url, why=why(resp), unreachable=resp.unreachable
        )
        return answer, resp
    return RobotsAnswer(resp.status, resp.final_url, text=sink.text()), resp


async def read_robots(fetcher: Fetcher, site_url: str) -> tuple[Robots | None, Response]:
    """Fetch `<origin>/robots.txt` (see `robots_time_limit`); None when missing or failing."""
    plan = DiscoveryPlan(site_url, user_agent=fetcher.config.user_agent, rules=CRAWL)
    step = plan.start()
    assert isinstance(step, FetchRobots)
    answer, resp = await fetch_robots(fetcher, step.url)
    plan.feed(answer)
    return plan.found.robots, resp


class _SniffSink:
    """Reads just enough of a body to know whether it is a sitemap."""

    def __init__(self, url: str) -> None:
        self.parser = SitemapParser(url)

    def feed(self, data: bytes) -> None:
        if self.parser.kind is None:
            self.parser.feed(data)

    async def drain(self) -> bool:
        return self.parser.kind is None


async def probe(fetcher: Fetcher, url: str) -> tuple[bool, Response]:
    """True when `url` answers with a sitemap (reads only its first kilobytes)."""
    resp, sink = await fetcher.fetch_into(url, lambda r: _SniffSink(r.final_url))
    if sink is None:
        return False, resp
    parser = sink.parser
    if parser.kind is None:
        parser.close()
    return parser.is_sitemap, resp


# -- llms.txt -------------------------------------------------------------------------------------


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
        self._read: set[str] = set()
        self._omitted: set[str] = set()

    async def read(self) -> list[LlmsLink]:
        """The page links, in order; `summary` says what was found and what was not used."""
        for url in candidates(self.site_url, self.explicit):
            read = await self._fetch(url, 1)
            if read is not None:
                self.summary.url = url
                text, where = read
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
            read = await self._fetch(url, 2)
            if read is not None:
                self.summary.aggregates.append(url)
                self._collect(*read, 2, deeper=False)
        return list(self.links.values())

    async def _fetch(self, url: str, depth: int) -> tuple[str, str] | None:
        """The file's text and where it was read (after redirects: its links resolve there);
        None when it is missing, unusable, or a budget forbids the fetch."""
        if self.stopped or not self.gate():
            self.stopped = True
            return None
        self._read.add(url)
        limit = self.time_limit() if self.time_limit is not None else None
        resp, sink = await self.fetcher.fetch_into(url, lambda _r: _LlmsSink(), time_limit=limit)
        if resp.redirects:
            self._read.add(normalize_url(resp.final_url))  # an aggregate naming it is read
        body = sink.body() if sink is not None else b""
        if depth == 1 and resp.unreachable is not None:
            self.cannot_connect = resp.unreachable
        why = self._refusal(url, resp, body)
        if why is None and sink is not None and sink.cut:
            self.summary.cut.append(resp.final_url)
            log.warning("%s: cut at the %d-byte llms.txt limit", resp.final_url, MAX_LLMS_BYTES)
        if why is not None:
            self.summary.rejected.append((url, why))
            log.debug("llms.txt %s not used: %s", url, why)
        if self.observe is not None:
            self.observe(url, depth, resp, why)
        return None if why is not None else (body.decode("utf-8", "replace"), resp.final_url)

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
                if verdict.url in self._read or verdict.url in aggregates:
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

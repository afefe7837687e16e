"""The discovery chain as a plan with no I/O (§2): user sitemap → robots.txt → well-known paths.

`DiscoveryPlan` names the next step (`FetchRobots`, `TrySitemaps`) and is fed what that step's
fetch learned (`RobotsAnswer`, `Tried`) until it is `Done`; `Rules` holds how each caller runs
it. Also here, because they are words about what the chain concluded and need no network: the
one-line `cannot connect` message, robots.txt spelling notes, and the walker's llms.txt warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .._models import DocumentRecord, LlmsSummary, WalkReport
from .._robots import Robots, parse_robots
from .._rules import WELL_KNOWN_SITEMAPS
from .._urls import looks_like_sitemap_url, normalize_url, origin_of

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


# -- the words the chain's outcomes are told in -------------------------------------------------


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

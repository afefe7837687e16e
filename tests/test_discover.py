"""The discovery plan (§2) without a server: every answer is fed by hand.

One table row per difference between the plan's callers (`Rules`): which steps the plan asks
for, and what it concludes (source, sitemaps, notes in order, pushback). The callers' own
fetching is exercised over real HTTP in test_walk.py, test_api.py, test_scope.py, test_crawl.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sitescout._discover import (
    CRAWL,
    NO_SITEMAP_FOUND,
    SCOPE,
    SNIFF,
    WALK,
    WALK_CRAWL,
    WELL_KNOWN,
    Answer,
    Discovery,
    DiscoveryPlan,
    Done,
    FetchRobots,
    RobotsAnswer,
    Rules,
    Tried,
    TrySitemaps,
)

SITE = "https://example.com/docs/"
ORIGIN = "https://example.com"
ROBOTS_URL = ORIGIN + "/robots.txt"
MAP = "https://example.com/sitemap.xml"


def robots(*lines: str, status: int = 200, challenge: bool = False) -> RobotsAnswer:
    return RobotsAnswer(status, ROBOTS_URL, "\n".join(lines) + "\n", challenge=challenge)


def robots_failed(status: int | None, why: str) -> RobotsAnswer:
    return RobotsAnswer(status, ROBOTS_URL, None, why=why)


MISSING = robots_failed(404, "HTTP 404")
NO_ANSWER = robots_failed(None, "connection refused")
# No connection could be made at all (what `Response.unreachable` says): not a timeout.
REFUSED = RobotsAnswer(
    None, ROBOTS_URL, why="ConnectError: connection refused", unreachable="connection refused"
)
TIMED_OUT = robots_failed(None, "no complete response within 8 s")
CANNOT_CONNECT = "cannot connect to https://example.com/: connection refused"
NOT_A_SITEMAP = Tried(False, failure="HTTP 404")
A_SITEMAP = Tried(True)
UNAVAILABLE_404 = "robots.txt unavailable (HTTP 404); trying well-known paths"
NO_SITEMAP_LINE = "robots.txt lists no sitemap; trying well-known paths"
BROWSER = ": the site likely needs a real browser"


@dataclass
class Row:
    rules: Rules
    answers: dict[str, Answer]  # by step: "robots", or a TrySitemaps name
    asked: list[str]  # the steps the plan asked for, in order
    source: str
    sitemaps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pushback: list[str] = field(default_factory=list)
    unreachable: bool = False
    site: str = SITE
    sitemap: str | None = None
    cannot_connect: str | None = None


def drive(row: Row) -> tuple[list[str], Discovery, DiscoveryPlan]:
    """Feed the row's answers (missing ones: 404 / not a sitemap) until the plan is done."""
    plan = DiscoveryPlan(row.site, row.sitemap, user_agent="sitescout/1", rules=row.rules)
    asked: list[str] = []
    step = plan.start()
    for _ in range(12):  # the longest: robots.txt, its sitemaps, three paths, the site URL
        if isinstance(step, Done):
            return asked, step.found, plan
        if isinstance(step, FetchRobots):
            assert step.url == ROBOTS_URL
            asked.append("robots")
            step = plan.feed(row.answers.get("robots", MISSING))
        else:
            asked.append(step.name)
            step = plan.feed(row.answers.get(step.name, NOT_A_SITEMAP))
    raise AssertionError(f"the plan did not finish: {asked}")


ROWS = [
    # §2 step 1: a sitemap URL given as the site is taken as given ...
    pytest.param(
        Row(SNIFF, {}, [], "user", [MAP], site=MAP),
        id="direct-sitemap-url-short-circuits",
    ),
    # ... the walker walks it (and whatever it turns out to be, the source stays "user") ...
    pytest.param(
        Row(WALK, {"user": NOT_A_SITEMAP}, ["user"], "user", [MAP], site=MAP),
        id="walk-walks-the-direct-sitemap-and-stops",
    ),
    # ... `--sitemap` does the same for any site URL; `--crawl` walks nothing ...
    pytest.param(
        Row(WALK_CRAWL, {}, [], "user", [MAP], sitemap=MAP),
        id="sitemap-argument-with-crawl-tries-nothing",
    ),
    # ... but the crawl's own robots.txt read always reads robots.txt.
    pytest.param(
        Row(CRAWL, {}, ["robots"], "none", [], [UNAVAILABLE_404], site=MAP),
        id="crawl-robots-read-ignores-a-sitemap-url",
    ),
    # §2 step 2: robots.txt's sitemaps, taken on trust by discover_sitemaps and scope ...
    pytest.param(
        Row(
            SNIFF,
            {"robots": robots("Sitemap: /a.xml", "sitemap: b.xml")},
            ["robots"],
            "robots.txt",
            [ORIGIN + "/a.xml", ORIGIN + "/b.xml"],
        ),
        id="robots-sitemaps-on-trust",
    ),
    # ... walked, and kept when one of them answers as a sitemap, by the walker ...
    pytest.param(
        Row(
            WALK,
            {"robots": robots("Sitemap: /a.xml"), "robots.txt": A_SITEMAP},
            ["robots", "robots.txt"],
            "robots.txt",
            [ORIGIN + "/a.xml"],
        ),
        id="walk-confirms-robots-sitemaps",
    ),
    # ... which falls back to the well-known paths when none of them does.
    pytest.param(
        Row(
            WALK,
            {"robots": robots("Sitemap: /gone.xml"), "sitemap_index.xml": A_SITEMAP},
            ["robots", "robots.txt", "sitemap.xml", "sitemap_index.xml"],
            "sitemap_index.xml",
            [ORIGIN + "/sitemap_index.xml"],
            ["no sitemap listed in robots.txt answered; trying well-known"],
        ),
        id="walk-robots-sitemaps-failing-fall-back",
    ),
    # §2 step 3: the well-known paths in order, the first real sitemap winning.
    pytest.param(
        Row(
            SNIFF,
            {"sitemap_index.xml": A_SITEMAP},
            ["robots", "sitemap.xml", "sitemap_index.xml"],
            "sitemap_index.xml",
            [ORIGIN + "/sitemap_index.xml"],
            [UNAVAILABLE_404],
        ),
        id="well-known-first-sitemap-wins",
    ),
    pytest.param(
        Row(
            SNIFF,
            {"robots": robots("User-agent: *", "Disallow: /private")},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [NO_SITEMAP_LINE, NO_SITEMAP_FOUND],
        ),
        id="nothing-found",
    ),
    # robots.txt with no HTTP answer: the others still try the well-known paths ...
    pytest.param(
        Row(
            SNIFF,
            {"robots": NO_ANSWER},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [
                "robots.txt unavailable (connection refused); trying well-known paths",
                NO_SITEMAP_FOUND,
            ],
        ),
        id="unreachable-robots-still-tries-well-known",
    ),
    # ... the scope estimate stops: three more timeouts would only triple the wait ...
    pytest.param(
        Row(
            SCOPE,
            {"robots": NO_ANSWER},
            ["robots"],
            "none",
            [],
            [
                "robots.txt did not answer (connection refused); the site looks unreachable, "
                "so the well-known sitemap paths were not tried"
            ],
            unreachable=True,
        ),
        id="scope-unreachable-robots-skips-well-known",
    ),
    # ... and stops at the first well-known path that gets no answer either.
    pytest.param(
        Row(
            SCOPE,
            {"sitemap.xml": Tried(False, answered=False, failure="read timed out")},
            ["robots", "sitemap.xml"],
            "none",
            [],
            [UNAVAILABLE_404, "well-known /sitemap.xml: read timed out", NO_SITEMAP_FOUND],
            unreachable=True,
        ),
        id="scope-unanswered-well-known-path-ends-the-chain",
    ),
    pytest.param(
        Row(
            SNIFF,
            {"sitemap.xml": Tried(False, answered=False), "sitemap-index.xml": A_SITEMAP},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "sitemap-index.xml",
            [ORIGIN + "/sitemap-index.xml"],
            [UNAVAILABLE_404],
        ),
        id="sniff-unanswered-well-known-path-goes-on",
    ),
    # The walker's first request cannot connect at all: nothing else is tried ...
    pytest.param(
        Row(
            WALK,
            {"robots": REFUSED},
            ["robots"],
            "none",
            [],
            [f"robots.txt could not be fetched: {CANNOT_CONNECT}; nothing else was tried"],
            unreachable=True,
            cannot_connect=CANNOT_CONNECT,
        ),
        id="walk-robots-cannot-connect-ends-the-chain",
    ),
    pytest.param(
        Row(
            WALK_CRAWL,
            {"robots": REFUSED},
            ["robots"],
            "none",
            [],
            [f"robots.txt could not be fetched: {CANNOT_CONNECT}; nothing else was tried"],
            unreachable=True,
            cannot_connect=CANNOT_CONNECT,
        ),
        id="walk-crawl-robots-cannot-connect",
    ),
    # ... the sitemap given, when it is the first request, likewise ...
    pytest.param(
        Row(
            WALK,
            {"user": Tried(False, answered=False, unreachable="connection refused")},
            ["user"],
            "user",
            [MAP],
            [f"the sitemap could not be fetched: {CANNOT_CONNECT}; nothing else was tried"],
            unreachable=True,
            sitemap=MAP,
            cannot_connect=CANNOT_CONNECT,
        ),
        id="walk-sitemap-given-cannot-connect",
    ),
    # ... but a timeout (a server that may have accepted the connection) is not that ...
    pytest.param(
        Row(
            WALK,
            {"robots": TIMED_OUT},
            # the site URL names a path: tried as a sitemap itself, last (it is not one)
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml", "user"],
            "none",
            [],
            [
                "robots.txt unavailable (no complete response within 8 s); trying well-known paths",
                NO_SITEMAP_FOUND,
            ],
        ),
        id="walk-robots-timeout-goes-on",
    ),
    # The walker judges the site URL by what it returns when nothing else gave a sitemap: a
    # path (or a query) that answers as a sitemap is walked as one, whatever its name ...
    pytest.param(
        Row(
            WALK,
            {"user": A_SITEMAP},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml", "user"],
            "user",
            [ORIGIN + "/feed"],
            [
                UNAVAILABLE_404,
                NO_SITEMAP_FOUND,
                "https://example.com/feed is itself a sitemap: walked as one",
            ],
            site=ORIGIN + "/feed",
        ),
        id="walk-site-url-that-is-a-sitemap",
    ),
    pytest.param(
        Row(
            WALK,
            {"user": A_SITEMAP},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml", "user"],
            "user",
            [ORIGIN + "/?feed=rss2"],
            [
                UNAVAILABLE_404,
                NO_SITEMAP_FOUND,
                "https://example.com/?feed=rss2 is itself a sitemap: walked as one",
            ],
            site=ORIGIN + "/?feed=rss2",
        ),
        id="walk-site-url-with-a-query-that-is-a-sitemap",
    ),
    # ... a bare site names nothing more than the site (its root is the crawl's start) ...
    pytest.param(
        Row(
            WALK,
            {"user": A_SITEMAP},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [UNAVAILABLE_404, NO_SITEMAP_FOUND],
            site=ORIGIN + "/",
        ),
        id="walk-root-site-url-is-not-tried-as-a-sitemap",
    ),
    # ... and a site whose well-known path is a sitemap does not cost the extra request.
    pytest.param(
        Row(
            WALK,
            {"sitemap.xml": A_SITEMAP},
            ["robots", "sitemap.xml"],
            "sitemap.xml",
            [MAP],
            [UNAVAILABLE_404],
        ),
        id="walk-base-path-with-a-well-known-sitemap",
    ),
    # ... nor a sitemap robots.txt lists on a host that cannot be reached: robots.txt answered.
    pytest.param(
        Row(
            WALK,
            {
                "robots": robots("Sitemap: https://cdn.example.net/s.xml"),
                "robots.txt": Tried(False, answered=False, unreachable="connection refused"),
                "sitemap.xml": A_SITEMAP,
            },
            ["robots", "robots.txt", "sitemap.xml"],
            "sitemap.xml",
            [MAP],
            ["no sitemap listed in robots.txt answered; trying well-known"],
        ),
        id="walk-unreachable-listed-sitemap-is-not-the-first-request",
    ),
    # The other callers keep their own rule for it.
    pytest.param(
        Row(
            SNIFF,
            {"robots": REFUSED},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [
                "robots.txt unavailable (ConnectError: connection refused); trying well-known "
                "paths",
                NO_SITEMAP_FOUND,
            ],
        ),
        id="sniff-cannot-connect-still-tries-well-known",
    ),
    # `--crawl`: robots.txt only (its note is kept as the walker always wrote it).
    pytest.param(
        Row(WALK_CRAWL, {}, ["robots"], "none", [], [UNAVAILABLE_404]),
        id="walk-crawl-reads-robots-only",
    ),
    # Pushback (§9 step 6) is the scope estimate's: 403/429 and challenge pages ...
    pytest.param(
        Row(
            SCOPE,
            {"robots": robots_failed(403, "HTTP 403"), "sitemap.xml": A_SITEMAP},
            ["robots", "sitemap.xml"],
            "sitemap.xml",
            [MAP],
            [
                "robots.txt answered HTTP 403" + BROWSER,
                "robots.txt unavailable (HTTP 403); trying well-known paths",
            ],
            ["robots.txt answered HTTP 403"],
        ),
        id="scope-robots-403-is-pushback",
    ),
    pytest.param(
        Row(
            SNIFF,
            {"robots": robots_failed(429, "HTTP 429"), "sitemap.xml": A_SITEMAP},
            ["robots", "sitemap.xml"],
            "sitemap.xml",
            [MAP],
            ["robots.txt unavailable (HTTP 429); trying well-known paths"],
        ),
        id="sniff-records-no-pushback",
    ),
    pytest.param(
        Row(
            SCOPE,
            {"robots": robots("<html>just a moment</html>", challenge=True)},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [
                "robots.txt is a bot-challenge page" + BROWSER,
                NO_SITEMAP_LINE,
                "well-known /sitemap.xml: HTTP 404",
                "well-known /sitemap_index.xml: HTTP 404",
                "well-known /sitemap-index.xml: HTTP 404",
                NO_SITEMAP_FOUND,
            ],
            ["robots.txt is a bot-challenge page"],
        ),
        id="scope-robots-challenge-and-candidate-notes",
    ),
    # ... a well-known path's pushback counts only when no path served a sitemap.
    pytest.param(
        Row(
            SCOPE,
            {
                "sitemap.xml": Tried(False, failure="HTTP 403", pushback="HTTP 403"),
                "sitemap_index.xml": A_SITEMAP,
            },
            ["robots", "sitemap.xml", "sitemap_index.xml"],
            "sitemap_index.xml",
            [ORIGIN + "/sitemap_index.xml"],
            [UNAVAILABLE_404, "well-known /sitemap.xml: HTTP 403"],
        ),
        id="scope-candidate-pushback-dropped-when-one-wins",
    ),
    pytest.param(
        Row(
            SCOPE,
            {"sitemap.xml": Tried(False, failure="HTTP 403", pushback="HTTP 403")},
            ["robots", "sitemap.xml", "sitemap_index.xml", "sitemap-index.xml"],
            "none",
            [],
            [
                UNAVAILABLE_404,
                "well-known /sitemap.xml: HTTP 403",
                "well-known /sitemap_index.xml: HTTP 404",
                "well-known /sitemap-index.xml: HTTP 404",
                "/sitemap.xml answered HTTP 403" + BROWSER,
                NO_SITEMAP_FOUND,
            ],
            ["/sitemap.xml answered HTTP 403"],
        ),
        id="scope-candidate-pushback-kept-when-none-wins",
    ),
    # The scope estimate reads one top sitemap and says so; it names no spellings.
    pytest.param(
        Row(
            SCOPE,
            {"robots": robots("Site-map: /a.xml", "Sitemap: /b.xml")},
            ["robots"],
            "robots.txt",
            [ORIGIN + "/a.xml", ORIGIN + "/b.xml"],
            ["robots.txt lists 2 sitemaps; only the first was read"],
        ),
        id="scope-first-root-only-no-spelling-note",
    ),
    pytest.param(
        Row(
            SNIFF,
            {"robots": robots("Site-map: /a.xml", "Sitemap: /b.xml")},
            ["robots"],
            "robots.txt",
            [ORIGIN + "/a.xml", ORIGIN + "/b.xml"],
            ['robots.txt also lists sitemaps under the nonstandard "Site-map:" spelling'],
        ),
        id="sniff-spelling-note",
    ),
]


@pytest.mark.parametrize("row", ROWS)
def test_plan(row: Row) -> None:
    asked, found, plan = drive(row)
    assert asked == row.asked
    assert (found.source, found.sitemaps) == (row.source, row.sitemaps)
    assert found.notes == row.notes
    assert plan.pushback == row.pushback
    assert plan.unreachable is row.unreachable
    assert plan.cannot_connect == row.cannot_connect


def test_a_robots_txt_that_cannot_connect_is_the_one_error_to_record() -> None:
    """The walker records robots.txt's failure (it is no sitemap document, so nothing else
    would); a sitemap given is a document, recorded by the walk itself."""
    _asked, _found, plan = drive(Row(WALK, {"robots": REFUSED}, [], ""))
    assert plan.failure is not None
    assert (plan.failure.url, plan.failure.error, plan.failure.error_class) == (
        ROBOTS_URL,
        "ConnectError: connection refused",
        "NetworkError",
    )
    given = Tried(False, answered=False, unreachable="connection refused")
    _asked, _found, plan = drive(Row(WALK, {"user": given}, [], "", sitemap=MAP))
    assert plan.cannot_connect == CANNOT_CONNECT and plan.failure is None
    for answer in (MISSING, TIMED_OUT):
        _asked, _found, plan = drive(Row(WALK, {"robots": answer}, [], ""))
        assert plan.cannot_connect is None and plan.failure is None


def test_source_url_names_what_won() -> None:
    for name, path in WELL_KNOWN:
        row = Row(SNIFF, {name: A_SITEMAP}, [], name)
        _asked, found, _plan = drive(row)
        assert (found.source, found.source_url) == (name, ORIGIN + path)
    _asked, found, _plan = drive(Row(SNIFF, {"robots": robots("Sitemap: /a.xml")}, [], ""))
    assert (found.source, found.source_url) == ("robots.txt", ROBOTS_URL)
    _asked, found, _plan = drive(Row(SNIFF, {}, [], "", site=MAP + "#top"))
    assert (found.source, found.source_url) == ("user", MAP + "#top")


def test_robots_facts_are_kept_for_the_crawl() -> None:
    answer = robots("User-agent: *", "Disallow: /private", "Crawl-delay: 2")
    _asked, found, _plan = drive(Row(CRAWL, {"robots": answer}, [], ""))
    assert found.robots is not None and found.robots_status == 200
    assert found.robots.crawl_delay == 2.0
    assert not found.robots.allowed(ORIGIN + "/private/x")
    assert found.candidates == [(name, ORIGIN + path) for name, path in WELL_KNOWN]
    _asked, found, _plan = drive(Row(CRAWL, {"robots": NO_ANSWER}, [], ""))
    assert found.robots is None and found.robots_status is None


def test_well_known_steps_are_guesses_and_roots_are_not() -> None:
    plan = DiscoveryPlan(SITE, user_agent="x", rules=WALK)
    assert isinstance(plan.start(), FetchRobots)
    roots = plan.feed(robots("Sitemap: /a.xml", "Sitemap: /b.xml"))
    assert roots == TrySitemaps("robots.txt", (ORIGIN + "/a.xml", ORIGIN + "/b.xml"))
    first = plan.feed(NOT_A_SITEMAP)
    assert first == TrySitemaps("sitemap.xml", (MAP,), guess=True)


def test_new_notes_hands_out_each_note_once() -> None:
    plan = DiscoveryPlan(SITE, user_agent="x", rules=SNIFF)
    plan.start()
    assert plan.new_notes() == []
    plan.feed(MISSING)
    assert plan.new_notes() == [UNAVAILABLE_404]
    assert plan.new_notes() == []
    for _ in WELL_KNOWN:
        step = plan.feed(NOT_A_SITEMAP)
    assert isinstance(step, Done)
    assert plan.new_notes() == [NO_SITEMAP_FOUND]
    assert plan.found.notes == [UNAVAILABLE_404, NO_SITEMAP_FOUND]
    assert isinstance(plan.feed(A_SITEMAP), Done)  # done stays done

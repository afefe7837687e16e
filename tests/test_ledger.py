"""The walk's ledger with hand-made records and responses: no server, no event loop."""

from __future__ import annotations

import pytest

from sitescout._budget import Budgets, BudgetTracker, budget_label
from sitescout._core import Batch
from sitescout._errors import FetchError, FetchTimeoutError, HTTPError, NetworkError
from sitescout._http import Response
from sitescout._ledger import WalkLedger
from sitescout._models import DocumentRecord, WalkReport
from sitescout._parse import SitemapParser, parse_document

SITE = "https://docs.test"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
URLSET = f'<?xml version="1.0"?><urlset {NS}><url><loc>{SITE}/a</loc></url></urlset>'.encode()
DAMAGED = (
    f'<?xml version="1.0"?><urlset {NS}><url><loc>{SITE}/a</loc></url>'
    f"<url><loc>{SITE}/b</loc></ur></urlset>"
).encode()
HTML = b"<html><body>hello</body></html>"
CAP = 1000


def ledger(
    prefix: str | None = None, budgets: Budgets | None = None
) -> tuple[WalkLedger, WalkReport, BudgetTracker]:
    report = WalkReport()
    budget = BudgetTracker(budgets or Budgets(), clock=lambda: 0.0)
    book = WalkLedger(report, budget, site_url=SITE + "/", prefix=prefix, max_document_bytes=CAP)
    return book, report, budget


def response(
    url: str, *, status: int | None = 200, error: FetchError | None = None, truncated: bool = False
) -> Response:
    return Response(
        url=url, final_url=url, status=status, bytes=10, error=error, truncated=truncated
    )


def fetched(
    book: WalkLedger,
    report: WalkReport,
    path: str,
    body: bytes | None,
    *,
    depth: int = 1,
    probe: bool = False,
    status: int | None = 200,
    error: FetchError | None = None,
    truncated: bool = False,
) -> DocumentRecord:
    """A document as the walker books it: recorded first, settled once fetched and parsed."""
    url = SITE + path
    record = DocumentRecord(url=url, depth=depth)
    report.documents.append(record)
    parser = None if body is None else parse_document(body, url, depth=depth)
    resp = response(url, status=status, error=error, truncated=truncated)
    book.settle(record, resp, parser, probe)
    return record


# -- settle ------------------------------------------------------------------------------------


def test_a_good_sitemap_is_booked_without_error() -> None:
    book, report, _ = ledger()
    record = fetched(book, report, "/s.xml", URLSET)
    assert (record.status, record.final_url, record.kind, record.bytes) == (
        200,
        SITE + "/s.xml",
        "urlset",
        10,
    )
    assert record.error is None and report.errors == [] and not report.partial


@pytest.mark.parametrize(
    ("body", "error", "message", "error_class"),
    [
        pytest.param(
            None,
            HTTPError("HTTP 404", url="u", status=404),
            "HTTP 404 (u)",
            "HTTPError",
            id="missing",
        ),
        pytest.param(HTML, None, "not a sitemap", "NotASitemap", id="html"),
    ],
)
def test_a_well_known_path_that_does_not_answer_is_a_note_not_a_failure(
    body: bytes | None, error: FetchError | None, message: str, error_class: str
) -> None:
    book, report, _ = ledger()
    status = None if error else 200
    record = fetched(book, report, "/sitemap.xml", body, probe=True, error=error, status=status)
    assert (record.error, record.error_class) == (message, error_class)
    assert f"well-known {SITE}/sitemap.xml: {message}" in report.notes
    assert report.errors == [] and not report.partial


def test_a_failed_fetch_is_an_error_and_makes_the_walk_partial() -> None:
    book, report, _ = ledger()
    error = NetworkError("connection refused", url=SITE + "/s.xml")
    record = fetched(book, report, "/s.xml", None, error=error, status=None)
    assert report.errors == [record] and record.error_class == "NetworkError"
    assert report.partial_reasons == ["some sitemap documents failed"]


@pytest.mark.parametrize(("depth", "partial"), [(1, False), (2, True)])
def test_a_document_that_is_not_a_sitemap_is_partial_only_below_the_root(
    depth: int, partial: bool
) -> None:
    # A root that is not a sitemap is discovery's answer; a child that is not one lost its URLs.
    book, report, _ = ledger()
    record = fetched(book, report, "/s.xml", HTML, depth=depth)
    assert (record.error, record.error_class) == ("not a sitemap: HTML page", "NotASitemap")
    assert report.errors == [record] and report.partial is partial


def test_damaged_xml_is_recorded_without_a_class_and_makes_the_walk_partial() -> None:
    # The summary counts it among the errors, so the exit code says partial (1), as it does
    # for a failed document: what the damage hid is lost.
    book, report, _ = ledger()
    record = fetched(book, report, "/s.xml", DAMAGED)
    assert record.error is not None and record.error.startswith("malformed XML: line 1 col")
    assert record.error_class is None and report.errors == [record]
    assert report.partial_reasons == ["some sitemap documents were damaged"]
    assert f"{SITE}/s.xml: recovered 1 URLs after XML damage" in report.notes


def test_a_document_cut_at_the_size_cap_warns_and_is_partial() -> None:
    book, report, _ = ledger()
    record = fetched(book, report, "/s.xml", URLSET, truncated=True)
    assert record.truncated
    assert report.warnings == [f"{SITE}/s.xml: cut at the {CAP}-byte document limit"]
    assert report.partial_reasons == ["a document exceeded the size limit"]


@pytest.mark.parametrize(
    ("why", "error", "error_class"),
    [
        (None, None, None),
        ("no page links", None, "NotAnLlmsFile"),
        ("HTTP 404 (u)", HTTPError("HTTP 404", url="u", status=404), "HTTPError"),
    ],
)
def test_an_llms_file_is_booked_as_an_answer(
    why: str | None, error: FetchError | None, error_class: str | None
) -> None:
    book, report, _ = ledger()
    book.settle_llms(SITE + "/llms.txt", 1, response(SITE + "/llms.txt", error=error), why)
    (record,) = report.documents
    assert (record.kind, record.error, record.error_class) == ("llms", why, error_class)
    assert report.notes == ([] if why is None else [f"llms.txt {SITE}/llms.txt: {why}"])
    assert report.errors == [] and not report.partial


# -- did a root answer as a sitemap ------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error", "depth", "expected"),
    [
        pytest.param(URLSET, None, 1, True, id="sitemap"),
        pytest.param(URLSET, FetchTimeoutError("read timeout", url="u"), 1, True, id="timed-out"),
        pytest.param(URLSET, NetworkError("reset", url="u"), 1, True, id="reset"),
        pytest.param(URLSET, HTTPError("HTTP 500", url="u", status=500), 1, False, id="500"),
        pytest.param(HTML, None, 1, False, id="html"),
        pytest.param(URLSET, None, 2, False, id="a-child"),
    ],
)
def test_any_root_was_sitemap(
    body: bytes, error: FetchError | None, depth: int, expected: bool
) -> None:
    book, report, _ = ledger()
    fetched(book, report, "/s.xml", body, depth=depth, error=error)
    # Found under its visited-set key: scheme and host case and the fragment do not count.
    assert book.any_root_was_sitemap(["HTTPS://DOCS.TEST/s.xml#top"]) is expected
    assert not book.any_root_was_sitemap([SITE + "/other.xml"])


# -- scope -------------------------------------------------------------------------------------


def rows_of(urls: list[str]) -> Batch:
    rows = Batch()
    for url in urls:
        rows.push(url, SITE + "/sitemap.xml", 1, "sitemap")
    return rows


def test_under_base_path_counts_same_site_urls_only() -> None:
    book, _, _ = ledger(prefix="/docs/")
    rows = rows_of([f"{SITE}/docs/a", f"{SITE}/blog/b", "https://elsewhere.test/docs/c"])
    book.retain_under_base_path(rows)
    assert rows.urls() == [f"{SITE}/docs/a"]
    assert (book.prefix_matched, book.prefix_examined) == (1, 2)
    assert (book.llms_matched, book.llms_examined) == (0, 0)


def test_llms_links_are_counted_apart() -> None:
    book, _, _ = ledger(prefix="/docs/")
    assert [book.llms_under_base_path(f"{SITE}/{p}") for p in ("docs/a", "b", "c")] == [
        True,
        False,
        False,
    ]
    assert (book.llms_matched, book.llms_examined) == (1, 3)
    assert book.prefix_examined == 0


# -- finish ------------------------------------------------------------------------------------


def test_finish_warns_per_source_that_missed_the_prefix() -> None:
    book, report, _ = ledger(prefix="/docs/")
    book.retain_under_base_path(
        rows_of([f"{SITE}/docs/a" if i == 0 else f"{SITE}/blog/{i}" for i in range(101)])
    )
    for i in range(3):
        book.llms_under_base_path(f"{SITE}/docs/{i}")
    book.finish()
    assert report.warnings == [
        'Sitemap path prefix "/docs" matched 1 of 101 examined same-site URLs (less than 1%); '
        "consider a broader base URL."
    ]
    assert not report.partial  # a narrow prefix is advice, not a cut


def test_finish_without_a_prefix_or_budget_adds_nothing() -> None:
    book, report, _ = ledger()
    book.finish()
    assert report == WalkReport()


def test_the_depth_warning_is_refreshed_last_with_the_final_count() -> None:
    book, report, budget = ledger(budgets=Budgets(max_depth=1, max_fetches=5))
    budget.drop_children(2)
    book.budget_bound()  # booked mid-walk with the count so far
    report.warn("a later warning")
    budget.drop_children(3)
    budget.mark_hit("max_fetches")
    book.finish()
    assert report.warnings == [
        "a later warning",
        "Sitemap fetch limit (5 documents) reached; discovery results are partial.",
        "Sitemap depth limit (1 level) reached; dropped 5 child sitemaps; "
        "discovery results are partial.",
    ]
    assert report.budgets_hit == ["max_depth", "max_fetches"]
    assert report.partial_reasons == ["a walk budget was reached"]


# -- documents a budget stopped ----------------------------------------------------------------


@pytest.mark.parametrize("budget", ["max_urls", "max_bytes", "deadline"])
def test_a_document_a_budget_stopped_is_not_a_failure(budget: str) -> None:
    book, report, tracker = ledger(budgets=Budgets(max_urls=5, max_bytes=100, deadline=9.0))
    tracker.mark_hit(budget)  # type: ignore[arg-type]
    url = SITE + "/s.xml"
    record = DocumentRecord(url=url, depth=2)
    report.documents.append(record)
    parser = SitemapParser(url, depth=2)
    parser.feed(URLSET[: URLSET.index(b"</url>")])  # nothing complete yet: no kind guessed wrong
    resp = response(url, error=FetchTimeoutError("cut", url=url) if budget == "deadline" else None)
    book.settle_stopped(record, resp, parser, budget)  # type: ignore[arg-type]
    assert report.errors == [] and record.error is None and record.error_class is None
    assert record.stopped_by == budget
    assert record.kind == "urlset"
    assert report.partial and report.partial_reasons == ["a walk budget was reached"]
    assert report.budgets_hit == [budget]
    assert f"{url}: not read to its end ({budget_label(budget)})" in report.notes


def test_an_unsniffed_stopped_document_gets_no_kind() -> None:
    book, report, tracker = ledger(budgets=Budgets(max_urls=5))
    tracker.mark_hit("max_urls")
    url = SITE + "/s.xml"
    record = DocumentRecord(url=url, depth=2)
    book.settle_stopped(record, response(url), SitemapParser(url), "max_urls")
    assert record.kind is None and record.error is None and report.errors == []


def test_the_byte_overshoot_is_said_once_with_its_figures() -> None:
    book, report, tracker = ledger(budgets=Budgets(max_bytes=500))
    tracker.add_bytes(5790)
    tracker.mark_hit("max_bytes")
    book.finish()
    over = [w for w in report.warnings if "over the byte limit" in w]
    assert over == [
        "5,790 sitemap bytes read, 5,290 over the byte limit: documents in flight were stopped "
        "at their next read"
    ]

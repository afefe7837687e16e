"""The shared records (`_models`): what they compute, and that they stay plain. No network."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path
from typing import get_args

import pytest

import sitescout
from sitescout import _crawl, _models
from sitescout._errors import ErrorClass
from sitescout._models import (
    CrawledPage,
    CrawlReport,
    DocumentRecord,
    SitemapFound,
    WalkReport,
)

MODELS = Path(_models.__file__)


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, TYPE_CHECKING blocks included (a cycle is a cycle)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_models_import_only_pure_modules() -> None:
    ours = {name for name in imported_modules(MODELS) if name.startswith(".")}
    # _html for PageInfo, a parsed page: no I/O; _text for the words of counts and sizes
    assert ours <= {"._errors", "._html", "._text"}
    assert "._crawl" not in ours


def test_the_crawl_records_are_the_models_records() -> None:
    for name in ("CrawledPage", "SitemapFound", "CrawlReport", "CrawlEvent"):
        assert getattr(_crawl, name) is getattr(_models, name), name
        assert name in _crawl.__all__
    assert sitescout.CrawlReport is CrawlReport  # the package's import still works


def test_a_crawled_page_is_json_without_its_parsed_info() -> None:
    page = CrawledPage("https://x.com/a", "https://x.com/a/", 1, found_on="https://x.com/")
    assert page.ok
    data = json.loads(json.dumps(page.to_dict()))
    assert "info" not in data
    assert data["kind"] == "page" and data["final_url"] == "https://x.com/a/"
    page.error, page.error_class = "HTTP 404", "HTTPError"
    assert not page.ok and page.to_dict()["error_class"] == "HTTPError"


def test_a_sitemap_found_is_json() -> None:
    found = SitemapFound("https://x.com/s.xml", "https://x.com/s", 2, None, "urlset")
    assert json.loads(json.dumps(found.to_dict())) == {
        "url": "https://x.com/s.xml",
        "requested": "https://x.com/s",
        "depth": 2,
        "found_on": None,
        "document_kind": "urlset",
        "kind": "sitemap",
    }


def test_a_crawl_report_starts_empty() -> None:
    report = CrawlReport("https://x.com/")
    assert (report.fetches, report.pages, report.filtered) == (0, 0, Counter())
    assert WalkReport(crawl=report).crawl is report


def test_error_classes_are_the_named_ones() -> None:
    classes = set(get_args(ErrorClass))
    assert {"HTTPError", "NotASitemap", "InternalError", "Interrupted"} <= classes
    assert DocumentRecord("https://x.com/s.xml", 1, error_class="NotASitemap").error_class


@pytest.mark.parametrize(
    ("report", "nothing"),
    [
        pytest.param(WalkReport(source="none"), True, id="no-source"),
        pytest.param(
            WalkReport(source="robots.txt", errors=[DocumentRecord("https://x.com/s", 1)]),
            True,
            id="only-errors",
        ),
        pytest.param(WalkReport(source="sitemap.xml"), False, id="empty-site"),
        pytest.param(WalkReport(source="none", urls=1), False, id="found-one"),
    ],
)
def test_found_nothing(report: WalkReport, nothing: bool) -> None:
    assert report.found_nothing is nothing


def test_report_reasons_and_warnings_are_kept_once() -> None:
    report = WalkReport()
    for _ in range(2):
        report.mark_partial("deadline")
        report.warn("slow site")
    assert report.partial and report.partial_reasons == ["deadline"]
    assert report.warnings == ["slow site"]


def test_leaf_sitemaps_count_documents_that_list_pages() -> None:
    kinds = ["sitemapindex", "urlset", "rss", "not-a-sitemap", None, "text"]
    docs = [DocumentRecord(f"https://x.com/{n}", 1, kind=k) for n, k in enumerate(kinds)]  # type: ignore[arg-type]
    report = WalkReport(documents=docs)
    assert (report.fetches, report.leaf_sitemaps) == (6, 3)

"""Page-type inference (`_pagetype`): pure, so tables only; one row per rule of its docstring."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitescout._pagetype import (
    CHECKLIST,
    IA_KEYWORDS,
    LABELS,
    PageType,
    SiteShape,
    infer_page_type,
    is_date_archive,
    path_segments,
    segment_stem,
)

# -- helpers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/", [], id="root"),
        pytest.param("", [], id="empty"),
        pytest.param("/Blog//Post/", ["blog", "post"], id="case-and-empty-segments"),
        pytest.param("/a/b/c", ["a", "b", "c"], id="no-trailing-slash"),
    ],
)
def test_path_segments(path: str, expected: list[str]) -> None:
    assert path_segments(path) == expected


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        pytest.param("about.html", "about", id="html"),
        pytest.param("index.php", "index", id="php"),
        pytest.param("page.aspx", "page", id="aspx"),
        pytest.param(".html", ".html", id="only-an-extension"),
        pytest.param("about", "about", id="none"),
        pytest.param("data.json", "data.json", id="not-a-page-extension"),
    ],
)
def test_segment_stem(segment: str, expected: str) -> None:
    assert segment_stem(segment) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/2024/05/", True, id="year-month"),
        pytest.param("/2024/05/01/", True, id="year-month-day"),
        pytest.param("/2024/5", True, id="single-digit-month-no-slash"),
        pytest.param("/blog/2024/05/", True, id="a-section-archive"),
        pytest.param("/news/2024-05-01/", True, id="iso-date"),
        pytest.param("/2024/05/01/a-post", False, id="a-post-below-a-date"),
        pytest.param("/2024/13/", False, id="no-month-13"),
        pytest.param("/1850/05/", False, id="not-a-plausible-year"),
        pytest.param("/about/", False, id="no-date"),
    ],
)
def test_is_date_archive(path: str, expected: bool) -> None:
    assert is_date_archive(path) is expected


def test_checklist_and_labels_agree() -> None:
    assert set(LABELS) == set(CHECKLIST) | {"page"}
    assert CHECKLIST[0] == "home" and "page" not in CHECKLIST
    assert {"about", "pricing", "blog", "docs"} <= IA_KEYWORDS


# -- the URL rules, first match wins --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/", "home", id="1-home"),
        pytest.param("/contact-us", "form", id="2-form-segment"),
        pytest.param("/donate-now", "form", id="2-form-word"),
        pytest.param("/about/get-in-touch/", "form", id="2-form-deep"),
        pytest.param("/store-locator", "data", id="3-data"),
        pytest.param("/tools/loan-calculator", "data", id="3-data-deep"),
        pytest.param("/2024/05/", "listing", id="4-date-archive"),
        pytest.param("/news", "listing", id="4-listing-word"),
        pytest.param("/category/recipes", "listing", id="4-taxonomy-parent"),
        pytest.param("/blog/my-first-post", "article", id="5-article-section"),
        pytest.param("/en/news/some-story", "article", id="5-article-section-deep"),
        pytest.param("/2024/05/01/launch", "article", id="5-dated-post"),
        pytest.param("/about", "pillar", id="6-ia-keyword"),
        pytest.param("/pricing.html", "pillar", id="6-ia-keyword-with-extension"),
        pytest.param("/ten-tips-for-better-sleep", "article", id="6-long-slug-at-root"),
        pytest.param("/recipes", "pillar", id="6-keywordless-top-level"),
        pytest.param("/docs/a-very-long-reference-page", "article", id="7-long-leaf"),
        pytest.param("/docs/api", "subsection", id="7-short-slug"),
        pytest.param("/docs/getting-started-now", "page", id="7-three-words"),
    ],
)
def test_url_rules(path: str, expected: PageType) -> None:
    assert infer_page_type(path) == expected


def test_a_form_word_beats_a_data_word_and_a_listing_section() -> None:
    # Rule order: form (2) before data (3) before listing (4) before article (5).
    assert infer_page_type("/contact-map") == "form"
    assert infer_page_type("/blog/subscribe") == "form"
    assert infer_page_type("/news/live-data") == "data"
    assert infer_page_type("/blog/archive") == "listing"


# -- the site's shape ---------------------------------------------------------------------------


def test_site_shape_counts_children_and_descendants() -> None:
    shape = SiteShape(["/docs/", "/docs/a", "/docs/b/", "/docs/b/c", "/docs/a"])  # a twin
    assert shape.children(["docs"]) == 2
    assert shape.descendants(["docs"]) == 3
    assert shape.children(["docs", "b"]) == 1 and shape.descendants(["docs", "b"]) == 1
    assert shape.children(["nowhere"]) == 0 and shape.descendants(["nowhere"]) == 0


@pytest.mark.parametrize(
    ("links", "count", "expected"),
    [
        pytest.param([50, 52, 48, 55, 51, 49], 120, True, id="far-above-the-median"),
        pytest.param([50, 52, 48, 55, 51, 49], 90, False, id="under-twice-the-median"),
        pytest.param([5, 6, 4, 5, 6], 30, False, id="below-the-floor"),
        pytest.param([50, 52, 48], 500, False, id="too-few-pages-to-judge"),
        pytest.param([50, 52, 48, 55, 51, 49], None, False, id="not-crawled"),
    ],
)
def test_many_links(links: list[int], count: int | None, expected: bool) -> None:
    assert SiteShape([], links).many_links(count) is expected


@pytest.mark.parametrize(
    ("path", "paths", "expected"),
    [
        pytest.param("/recipes", [f"/recipes/r{i}" for i in range(5)], "listing", id="5-children"),
        pytest.param("/recipes", [f"/recipes/r{i}" for i in range(4)], "pillar", id="4-children"),
        pytest.param(
            "/how-to-cook-a-great-dinner",
            ["/how-to-cook-a-great-dinner/step-1"],
            "pillar",
            id="long-slug-with-children-is-no-article",
        ),
        pytest.param(
            "/docs/a-very-long-reference-page",
            ["/docs/a-very-long-reference-page/part-1"],
            "subsection",
            id="deep-long-slug-with-children",
        ),
    ],
)
def test_shape_rules(path: str, paths: list[str], expected: PageType) -> None:
    assert infer_page_type(path, shape=SiteShape([path, *paths])) == expected


# -- hints refine only vague results -------------------------------------------------------------


@pytest.mark.parametrize(
    ("hints", "expected"),
    [
        pytest.param({"title": "Sign up for our newsletter"}, "form", id="title-form-phrase"),
        pytest.param({"title": "Contact"}, "form", id="title-form-word"),
        pytest.param({"title": "Sales dashboard"}, "data", id="title-data"),
        pytest.param({"title": "Archive"}, "listing", id="title-listing"),
        pytest.param(
            {"title": "Why we moved our whole company to a four day week"},
            "article",
            id="long-title",
        ),
        pytest.param({"changefreq": " Daily "}, "listing", id="frequent-changefreq"),
        pytest.param({"changefreq": "monthly"}, "pillar", id="slow-changefreq"),
        pytest.param({"videos": 1}, "data", id="video"),
        pytest.param({"title": "Our story"}, "pillar", id="short-plain-title"),
        pytest.param({}, "pillar", id="no-hints"),
    ],
)
def test_hints_on_a_vague_top_level_page(hints: dict[str, Any], expected: PageType) -> None:
    assert infer_page_type("/ueber-uns", **hints) == expected


def test_the_title_comes_before_links_changefreq_and_videos() -> None:
    shape = SiteShape([], [50, 52, 48, 55, 51, 49])
    assert infer_page_type("/x", shape=shape, internal_links=200, title="Donate") == "form"
    assert infer_page_type("/x", shape=shape, internal_links=200, videos=1) == "listing"
    assert infer_page_type("/x", changefreq="hourly", videos=2) == "listing"


def test_hints_never_override_a_url_that_decided() -> None:
    assert infer_page_type("/about", title="Contact us", changefreq="daily") == "pillar"
    assert infer_page_type("/blog/post-1", title="Interactive map", videos=3) == "article"
    assert infer_page_type("/", title="Archive") == "home"


def test_news_marks_an_article() -> None:
    assert infer_page_type("/ueber-uns/pressemitteilung-zum-jahr", news=True) == "article"
    assert infer_page_type("/ueber-uns/pressemitteilung-zum-jahr") == "page"


@given(st.text(max_size=80), st.text(max_size=40) | st.none())
def test_never_raises_and_always_names_a_type(path: str, title: str | None) -> None:
    assert infer_page_type(path, title=title) in LABELS

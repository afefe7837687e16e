"""Page selection (§11, SCORING.md): types, scores, checklist, scope, questions. No network."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout._errors import UsageError
from sitescout._models import Entry, News, Video
from sitescout._pagetype import PageType, SiteShape, infer_page_type, is_date_archive
from sitescout._select import (
    RULES,
    Candidate,
    FewTemplates,
    LargeRun,
    PagesWanted,
    Selection,
    questions,
    score_path,
    select_pages,
)
from sitescout._urls import SlugRegistry

ORIGIN = "https://example.com"
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def page(path: str, priority: float | None = None, lastmod: str | None = None) -> Candidate:
    return Candidate(ORIGIN + path, priority=priority, lastmod=lastmod)


# A small company site: every checklist type, junk, an auth area, a blog with dated posts.
SITE: list[Candidate] = [
    page("/", 1.0, "2024-06-01"),
    page("/about/", 0.8, "2024-06-01"),
    page("/pricing/", 0.8, "2024-06-01"),
    page("/contact/", 0.8, "2024-06-01"),
    page("/blog/", 0.8, "2024-06-01"),
    page("/customers/", 0.8, "2024-06-01"),
    page("/data/", 0.8, "2024-06-01"),
    page("/docs/", 0.8, "2024-06-01"),
    page("/docs/api/", 0.8, "2024-06-01"),
    page("/docs/api/endpoints/"),
    page("/account/settings/"),
    page("/test/"),
    page("/sample-page/"),
    page("/holiday1/"),
    *(page(f"/blog/post-{n}/", lastmod=f"2024-01-0{n}") for n in range(1, 7)),
]


def select(candidates: Sequence[Candidate] = SITE, scope: PagesWanted | None = None) -> Selection:
    return select_pages(candidates, scope, site=ORIGIN)


def paths(items: Sequence[object]) -> list[str]:
    return [item.url.removeprefix(ORIGIN) for item in items]  # type: ignore[attr-defined]


def points(path: str, priority: float | None = None) -> dict[str, float]:
    return dict(score_path(path, priority))


# --------------------------------------------------------------------------- scoring rules


@pytest.mark.parametrize(
    ("path", "priority", "expected"),
    [
        pytest.param("/", None, {"home": 10}, id="home"),
        pytest.param("", None, {"home": 10}, id="home-empty"),
        pytest.param("/about", None, {"ia-pillar-keyword": 5, "shallow-path": 2}, id="keyword"),
        pytest.param("/About/", None, {"ia-pillar-keyword": 5, "shallow-path": 2}, id="kw-case"),
        pytest.param("/about.html", None, {"ia-pillar-keyword": 5, "shallow-path": 2}, id="ext"),
        pytest.param("/case-studies", None, {"ia-pillar-keyword": 5, "shallow-path": 2}, id="kw2"),
        pytest.param("/chi-siamo", None, {"shallow-path": 2}, id="localized-no-keyword"),
        pytest.param("/x/about", None, {"extra-depth": -1}, id="keyword-not-first"),
        pytest.param("/", 1.0, {"home": 10, "sitemap-priority": 5}, id="priority-1"),
        pytest.param("/x", 0.5, {"sitemap-priority": 2.5, "shallow-path": 2}, id="priority-half"),
        pytest.param("/x", 0.0, {"sitemap-priority": 0, "shallow-path": 2}, id="priority-zero"),
        pytest.param("/x", 1.5, {"shallow-path": 2}, id="priority-out-of-range-ignored"),
        pytest.param("/x", float("nan"), {"shallow-path": 2}, id="priority-nan-ignored"),
        pytest.param("/a/b", None, {"extra-depth": -1}, id="depth-2"),
        pytest.param("/a/b/c/d/", None, {"extra-depth": -3}, id="depth-4"),
        pytest.param("/a//b", None, {"extra-depth": -1}, id="empty-segments-ignored"),
        pytest.param(
            "/2024/05/01/", None, {"extra-depth": -2, "date-like-archive": -3}, id="date-ymd"
        ),
        pytest.param("/2024/05", None, {"extra-depth": -1, "date-like-archive": -3}, id="date-ym"),
        pytest.param(
            "/2024-05-01/", None, {"shallow-path": 2, "date-like-archive": -3}, id="date-dashed"
        ),
        pytest.param(
            "/blog/2024/05/",
            None,
            {"ia-pillar-keyword": 5, "extra-depth": -2, "date-like-archive": -3},
            id="date-under-section",
        ),
        pytest.param(
            "/blog/2024/05/01/post", None, {"ia-pillar-keyword": 5, "extra-depth": -4}, id="dated"
        ),
        pytest.param("/2024/13/", None, {"extra-depth": -1}, id="not-a-month"),
        pytest.param(
            "/docs/v2/",
            None,
            {"ia-pillar-keyword": 5, "extra-depth": -1, "version-test-marker": -3},
            id="v-segment",
        ),
        pytest.param(
            "/pricing-v2", None, {"shallow-path": 2, "version-test-marker": -3}, id="v-word"
        ),
        pytest.param("/x/2/", None, {"extra-depth": -1, "version-test-marker": -3}, id="bare-2"),
        pytest.param("/3", None, {"shallow-path": 2, "version-test-marker": -3}, id="bare-3"),
        pytest.param("/x/page/2/", None, {"extra-depth": -2}, id="pagination-not-marker"),
        pytest.param(
            "/pricing-old", None, {"shallow-path": 2, "version-test-marker": -3}, id="old"
        ),
        pytest.param(
            "/home-legacy/x", None, {"extra-depth": -1, "version-test-marker": -3}, id="legacy"
        ),
        pytest.param(
            "/v2/pricing-old/3/",
            None,
            {"extra-depth": -2, "version-test-marker": -3},
            id="marker-counts-once",
        ),
        pytest.param(
            "/account/settings", None, {"extra-depth": -1, "auth-walled": -5}, id="account"
        ),
        pytest.param("/login", None, {"shallow-path": 2, "auth-walled": -5}, id="login"),
        pytest.param("/wp-admin/", None, {"shallow-path": 2, "auth-walled": -5}, id="wp-admin"),
        pytest.param("/accounting", None, {"shallow-path": 2}, id="accounting-not-auth"),
    ],
)
def test_score_rules(path: str, priority: float | None, expected: dict[str, float]) -> None:
    assert points(path, priority) == expected


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/golden-oldies", id="oldies"),
        pytest.param("/vue/", id="vue"),
        pytest.param("/blog/page/3/", id="pagination"),
    ],
)
def test_no_version_marker(path: str) -> None:
    assert "version-test-marker" not in points(path)


def test_rule_names_are_documented() -> None:
    examples = ("/", "/about", "/a/b", "/2024/05/", "/v2", "/login")
    seen = {rule for path in examples for rule, _ in score_path(path, 0.5)}
    assert seen | {"page-type-checklist"} == set(RULES)


def test_extended_keywords() -> None:
    keywords = frozenset({"chi-siamo"})
    assert dict(score_path("/chi-siamo", keywords=keywords))["ia-pillar-keyword"] == 5
    selection = select_pages([page("/chi-siamo")], site=ORIGIN, keywords=["Chi-Siamo"])
    assert ("ia-pillar-keyword", 5) in selection.kept[0].breakdown


# --------------------------------------------------------------------------- worked examples


def test_worked_example_about() -> None:
    assert sum(points("/about").values()) == 7


def test_worked_example_home_fills_the_home_slot() -> None:
    assert sum(points("/", 1.0).values()) == 15
    selection = select([page("/", 1.0), page("/about")])
    home = selection.kept[0]
    assert paths([home]) == ["/"]
    assert home.slot == "home"
    assert home.breakdown[-1] == ("page-type-checklist", 8)
    assert home.score == 23


def test_worked_example_blog_post() -> None:
    assert points("/blog/post-1") == {"ia-pillar-keyword": 5, "extra-depth": -1}
    assert sum(points("/blog/post-1").values()) == 4
    selection = select([page("/"), page("/blog/post-1")])
    post = next(item for item in selection.kept if item.path == "/blog/post-1")
    assert post.slot == "article"
    assert post.score == 12


def test_worked_example_date_archive() -> None:
    assert sum(points("/2024/05/01/").values()) == -5


# --------------------------------------------------------------------------- page types


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/", "home", id="home"),
        pytest.param("/about/", "pillar", id="pillar-keyword"),
        pytest.param("/pricing", "pillar", id="pricing"),
        pytest.param("/chi-siamo", "pillar", id="pillar-any-top-level"),
        pytest.param("/contact/", "form", id="contact"),
        pytest.param("/contact-us", "form", id="contact-us"),
        pytest.param("/get-in-touch", "form", id="get-in-touch"),
        pytest.param("/donate-now", "form", id="donate"),
        pytest.param("/events/register", "form", id="register"),
        pytest.param("/data/", "data", id="data"),
        pytest.param("/store-locator", "data", id="locator"),
        pytest.param("/tools/loan-calculator", "data", id="calculator"),
        pytest.param("/blog/", "listing", id="blog-index"),
        pytest.param("/news", "listing", id="news-index"),
        pytest.param("/blog/category/releases", "listing", id="category"),
        pytest.param("/tag/python/", "listing", id="tag"),
        pytest.param("/blog/2024/05/", "listing", id="date-archive"),
        pytest.param("/blog/post-1", "article", id="blog-post"),
        pytest.param("/en/news/big-launch", "article", id="nested-section"),
        pytest.param("/2024/05/01/hello-world/", "article", id="dated-post"),
        pytest.param("/how-we-built-our-new-office", "article", id="root-long-slug"),
        pytest.param("/guides/x/how-to-set-up-sso", "article", id="deep-long-slug"),
        pytest.param("/docs/getting-started", "subsection", id="short-deep-slug"),
        pytest.param("/a/b/some-three-words", "page", id="plain"),
    ],
)
def test_page_types_from_url(path: str, expected: PageType) -> None:
    assert infer_page_type(path) == expected


def test_page_types_from_site_shape() -> None:
    shape = SiteShape(
        [
            "/recipes/",
            *(f"/recipes/r{n}" for n in range(5)),
            "/docs/api/",
            "/docs/api/a/b",
            "/docs/api-reference-for-all-things/",
            "/docs/api-reference-for-all-things/x",
        ]
    )
    assert infer_page_type("/recipes/", shape=shape) == "listing"  # five children
    assert infer_page_type("/docs/api/", shape=shape) == "subsection"
    # A long slug with pages below it is a section, not an article.
    assert infer_page_type("/docs/api-reference-for-all-things/", shape=shape) == "subsection"


@pytest.mark.parametrize(
    ("hints", "expected"),
    [
        pytest.param({"title": "Kontakt - get in touch"}, "form", id="title-form"),
        pytest.param({"title": "Interactive map"}, "data", id="title-data"),
        pytest.param({"title": "Tag archive"}, "listing", id="title-listing"),
        pytest.param(
            {"title": "Why we moved our whole stack to a single region"}, "article", id="title-long"
        ),
        pytest.param({"changefreq": "Daily"}, "listing", id="changefreq"),
        pytest.param({"videos": 1}, "data", id="video"),
        pytest.param({"news": True}, "article", id="news"),
        pytest.param({"title": "Über uns"}, "pillar", id="no-hint"),
    ],
)
def test_page_type_hints_refine_vague_urls(hints: dict[str, object], expected: PageType) -> None:
    assert infer_page_type("/ueber-uns", **hints) == expected  # type: ignore[arg-type]


def test_hints_do_not_override_a_clear_url() -> None:
    assert infer_page_type("/about", title="Contact us", changefreq="daily") == "pillar"
    assert infer_page_type("/blog/post-1", title="Interactive map") == "article"


def test_link_counts_are_relative_to_the_site() -> None:
    shape = SiteShape([], [50, 52, 48, 55, 51, 49])
    assert infer_page_type("/a/b/some-three-words", shape=shape, internal_links=140) == "listing"
    assert infer_page_type("/a/b/some-three-words", shape=shape, internal_links=60) == "page"
    few = SiteShape([], [10, 12])  # too few crawled pages for a median
    assert infer_page_type("/a/b/some-three-words", shape=few, internal_links=140) == "page"


def test_is_date_archive() -> None:
    assert is_date_archive("/2024/05/01") and is_date_archive("/x/2024-05-01/")
    assert not is_date_archive("/2024/") and not is_date_archive("/2024/05/01/post")


# --------------------------------------------------------------------------- scope flags


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param({}, PagesWanted(), id="default"),
        pytest.param({"cap": 3}, PagesWanted(mode="cap", cap=3, source="--cap"), id="cap"),
        pytest.param({"all_pages": True}, PagesWanted(mode="all", source="--all"), id="all"),
        pytest.param(
            {"pages": " about, ,/pricing/ "},
            PagesWanted(mode="pages", pages=("about", "/pricing/"), source="--pages"),
            id="pages-string",
        ),
        pytest.param(
            {"pages": ["about"]},
            PagesWanted(mode="pages", pages=("about",), source="--pages"),
            id="list",
        ),
        pytest.param(
            {"single": True, "url": "https://x.com/a"},
            PagesWanted(mode="single", url="https://x.com/a", source="--single"),
            id="single",
        ),
    ],
)
def test_scope_from_flags(flags: dict[str, object], expected: PagesWanted) -> None:
    assert PagesWanted.from_flags(**flags) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "flags",
    [
        pytest.param({"cap": 3, "all_pages": True}, id="cap-all"),
        pytest.param({"pages": "a", "single": True}, id="pages-single"),
        pytest.param({"cap": 0}, id="cap-zero"),
        pytest.param({"cap": -2}, id="cap-negative"),
        pytest.param({"pages": " , "}, id="pages-empty"),
    ],
)
def test_scope_usage_errors(flags: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        PagesWanted.from_flags(**flags)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- selection by scope


def test_default_keeps_home_and_distinct_templates() -> None:
    selection = select()
    assert paths(selection.kept) == ["/", "/about/", "/blog/post-6/", "/blog/", "/contact/"]
    assert [item.page_type for item in selection.kept] == [
        "home",
        "pillar",
        "article",
        "listing",
        "form",
    ]
    assert (selection.cap, selection.cap_source, selection.capped_at) == (5, "default", 5)
    assert all(item.slot == item.page_type for item in selection.kept)
    assert paths(selection.cut)[:5] == [
        "/customers/",
        "/docs/",
        "/pricing/",
        "/docs/api/",
        "/data/",
    ]
    assert {item.reason for item in selection.cut} == {"cap 5 reached"}


def test_cap_3() -> None:
    selection = select(scope=PagesWanted.from_flags(cap=3))
    assert paths(selection.kept) == ["/", "/about/", "/blog/post-6/"]
    assert (selection.cap, selection.cap_source, len(selection.cut)) == (3, "--cap", 13)


def test_cap_1_is_home() -> None:
    assert paths(select(scope=PagesWanted(cap=1)).kept) == ["/"]


def test_cap_larger_than_checklist_fills_by_score() -> None:
    selection = select(scope=PagesWanted.from_flags(cap=12))
    kept = paths(selection.kept)
    # Round one: one page per slot in §11's order; then the other sections' pillars.
    assert kept[:10] == [
        "/",
        "/about/",
        "/blog/post-6/",
        "/blog/",
        "/contact/",
        "/data/",
        "/docs/api/",
        "/customers/",
        "/docs/",
        "/pricing/",
    ]
    # Then the score: every remaining page is a post (4) or the deeper docs page (3).
    assert kept[10:] == ["/blog/post-5/", "/blog/post-4/"]
    assert [item.reason for item in selection.kept[9:]] == [
        "checklist: IA pillar",
        "score",
        "score",
    ]
    assert all(("page-type-checklist", 8) not in item.breakdown for item in selection.cut)


def test_all_keeps_every_page() -> None:
    selection = select(scope=PagesWanted.from_flags(all_pages=True))
    assert len(selection.kept) == 16 and selection.cut == ()
    assert (selection.cap, selection.cap_source, selection.capped_at) == (None, "--all", None)
    assert paths(selection.requires_auth) == ["/account/settings/"]


def test_pages_by_slug_path_and_url() -> None:
    scope = PagesWanted.from_flags(
        pages="about,/pricing,https://example.com/blog/post-2/,blog__post-3"
    )
    selection = select(scope=scope)
    assert paths(selection.kept) == ["/about/", "/pricing/", "/blog/post-2/", "/blog/post-3/"]
    assert (selection.cap, selection.cap_source) == (4, "--pages")
    assert {item.reason for item in selection.kept} == {"named with --pages"}
    assert len(selection.cut) == 16 - 4
    # No checklist round: the user picked the pages.
    assert all(item.slot is None for item in selection.kept)


def test_pages_reports_unmatched_and_deduplicates() -> None:
    selection = select(scope=PagesWanted.from_flags(pages="about,/about/,nowhere"))
    assert paths(selection.kept) == ["/about/"]
    assert selection.unmatched == ("nowhere",)


def test_pages_protects_junk_and_auth() -> None:
    selection = select(scope=PagesWanted.from_flags(pages="test,account__settings"))
    assert paths(selection.kept) == ["/test/", "/account/settings/"]
    assert "/test/" not in [path for path, _ in selection.junk]
    assert selection.requires_auth == ()


def test_single_is_home_by_default() -> None:
    selection = select(scope=PagesWanted.from_flags(single=True))
    assert paths(selection.kept) == ["/"]
    assert (selection.cap, selection.cap_source) == (1, "--single")
    assert selection.kept[0].score == 15  # no checklist round in --single
    assert len(selection.cut) == 15


def test_single_given_url() -> None:
    scope = PagesWanted.from_flags(single=True, url="https://EXAMPLE.com/pricing")
    assert paths(select(scope=scope).kept) == ["/pricing/"]


def test_single_url_not_in_the_sitemap_is_still_kept() -> None:
    selection = select(
        scope=PagesWanted.from_flags(single=True, url="https://example.com/new-page")
    )
    assert paths(selection.kept) == ["/new-page"]
    assert selection.kept[0].reason == "--single (not among the discovered pages)"


def test_include_auth() -> None:
    selection = select_pages(SITE, PagesWanted(mode="all"), site=ORIGIN, include_auth=True)
    assert "/account/settings/" in paths(selection.kept)
    assert selection.requires_auth == ()
    item = next(i for i in selection.kept if i.path == "/account/settings/")
    assert ("auth-walled", -5) in item.breakdown


# --------------------------------------------------------------------------- ties


def test_ties_newest_lastmod_then_alphabetical() -> None:
    candidates = [
        page("/"),
        page("/zeta", lastmod="2024-01-01"),
        page("/beta", lastmod="2023-12-31T23:00:00-02:00"),  # 2024-01-01T01:00Z: newest
        page("/alpha", lastmod="2024-01-01T00:00:00+00:00"),
        page("/gamma"),  # no lastmod: last among equals
        page("/delta", lastmod="garbage"),
        page("/eta", lastmod="2023"),
        page("/theta", lastmod="2023-06"),
    ]
    selection = select(candidates, PagesWanted(cap=1))
    assert paths(selection.cut) == [
        "/beta",
        "/alpha",
        "/zeta",
        "/theta",
        "/eta",
        "/delta",
        "/gamma",
    ]


def test_score_beats_lastmod() -> None:
    selection = select([page("/x/y", lastmod="2030-01-01"), page("/x")], PagesWanted(cap=5))
    # /x is a top-level pillar, /x/y a sub-section: both slots; order is checklist order.
    assert paths(selection.kept) == ["/x", "/x/y"]
    rest = select([page("/x/y", lastmod="2030-01-01"), page("/x/z/w")], PagesWanted(cap=1))
    assert paths(rest.kept) == ["/x/y"]


def test_pillar_seconds_only_after_every_slot() -> None:
    candidates = [page("/"), page("/about"), page("/team"), page("/blog/a-post"), page("/contact")]
    selection = select(candidates, PagesWanted(cap=4))
    assert paths(selection.kept) == ["/", "/about", "/blog/a-post", "/contact"]
    assert paths(selection.cut) == ["/team"]


# --------------------------------------------------------------------------- filtering


def test_filtering_and_duplicates() -> None:
    candidates = [
        page("/"),
        page("/"),
        page("/style.css"),
        page("/blog/page/2/"),
        Candidate("https://other.example/x"),
        page("/api/v1/users"),
    ]
    selection = select(candidates)
    assert paths(selection.kept) == ["/"]
    assert selection.discovered == 1
    assert [reason for _, reason in selection.filtered] == [
        "asset-extension",
        "pagination",
        "other-host",
        "api-path",
    ]
    assert selection.to_dict()["filteredCount"] == 4


def test_junk_is_cut_with_patterns() -> None:
    selection = select()
    # In URL order, whatever order the candidates came in.
    assert selection.junk == (
        (ORIGIN + "/holiday1/", r"/holiday[0-9]+(/|$)"),
        (ORIGIN + "/sample-page/", "/sample-?page/"),
        (ORIGIN + "/test/", r"^/test(\b|-|\d|/)"),
    )
    assert selection.discovered == 20
    again = select_pages(list(reversed(SITE)), PagesWanted(), site=ORIGIN)
    assert again.junk == selection.junk
    assert again.kept == selection.kept
    assert again.requires_auth == selection.requires_auth


def test_no_junk_filter() -> None:
    selection = select_pages(SITE, PagesWanted(mode="all"), site=ORIGIN, filter_junk=False)
    assert selection.junk == ()
    assert "/test/" in paths(selection.kept)


# --------------------------------------------------------------------------- slugs


def test_slugs_collide_in_discovery_order() -> None:
    candidates = [page("/"), page("/A-b"), page("/a_b"), page("/a-b")]
    selection = select(candidates, PagesWanted(mode="all"))
    slugs = {item.path: item.slug for item in selection.kept}
    assert slugs == {"/": "home", "/A-b": "a-b", "/a_b": "a_b", "/a-b": "a-b-2"}


def test_slugs_from_an_earlier_run_are_kept() -> None:
    registry = SlugRegistry()
    registry.assign(ORIGIN + "/a-b")  # an earlier run saw /a-b first
    selection = select_pages(
        [page("/A-b"), page("/a-b")], PagesWanted(mode="all"), site=ORIGIN, slugs=registry
    )
    assert {item.path: item.slug for item in selection.kept} == {"/A-b": "a-b-2", "/a-b": "a-b"}


# --------------------------------------------------------------------------- asking (§11.5)
# The questions are data; their wording is the CLI's (tests/test_cli_selection.py).


def test_few_templates_asks() -> None:
    selection = select([page("/"), page("/about"), page("/team")])
    assert selection.templates == ("home", "pillar")
    (question,) = questions(selection)
    assert question == FewTemplates(("home", "pillar"))
    assert question.kind == "few-templates"


def test_three_templates_do_not_ask() -> None:
    assert questions(select([page("/"), page("/about"), page("/contact")])) == ()
    assert questions(select()) == ()


def test_named_pages_never_ask_about_templates() -> None:
    assert questions(select([page("/")], PagesWanted.from_flags(pages="home"))) == ()


def test_large_all_run_asks() -> None:
    candidates = [page("/"), page("/contact"), *(page(f"/blog/post-{n}") for n in range(246))]
    selection = select(candidates, PagesWanted(mode="all"))
    (question,) = questions(selection)
    assert question == LargeRun(pages=248, limit=100, seconds=496.0)
    assert question.kind == "large-run"
    assert questions(selection, large_run=300) == ()
    assert questions(select(candidates[:100], PagesWanted(mode="all"))) == ()
    assert questions(select(candidates)) == ()  # the cap keeps 4


# --------------------------------------------------------------------------- JSON


def test_to_dict_is_json_with_breakdowns() -> None:
    summary = select().to_dict()
    json.dumps(summary)  # serializable as is
    assert summary["discoveredCount"] == 20
    assert (summary["cap"], summary["capSource"], summary["cappedAt"]) == (5, "default", 5)
    kept = summary["kept"]
    assert isinstance(kept, list)
    assert kept[0] == {
        "url": ORIGIN + "/",
        "slug": "home",
        "type": "home",
        "priority": 1.0,
        "lastmod": "2024-06-01",
        "score": 23,
        "reason": "checklist: home",
    }
    scores = summary["scores"]
    assert isinstance(scores, dict)
    assert scores == select().scores_dict()
    home = {"home": 10, "sitemap-priority": 5, "page-type-checklist": 8}
    assert scores["urls"][ORIGIN + "/"] == home
    assert scores["urls"][ORIGIN + "/about/"] == {
        "ia-pillar-keyword": 5,
        "sitemap-priority": 4,
        "shallow-path": 2,
        "page-type-checklist": 8,
    }
    assert scores["urls"][ORIGIN + "/account/settings/"]["auth-walled"] == -5
    assert len(scores["urls"]) == 17  # kept + cut + requiresAuth; junk has patterns instead
    assert summary["filteredAsJunk"][0] == {  # type: ignore[index]
        "url": ORIGIN + "/holiday1/",
        "pattern": r"/holiday[0-9]+(/|$)",
    }


def test_candidate_from_entry() -> None:
    entry = Entry(
        url=ORIGIN + "/news/x",
        lastmod="2024-05-01",
        priority=0.4,
        changefreq="daily",
        sitemap=ORIGIN + "/sitemap.xml",
        depth=2,
        news=News(title="x"),
        videos=(Video(), Video()),
    )
    assert Candidate.from_entry(entry, url=ORIGIN + "/news/x/").url == ORIGIN + "/news/x/"
    assert Candidate.from_entry(entry) == Candidate(
        url=ORIGIN + "/news/x",
        lastmod="2024-05-01",
        priority=0.4,
        changefreq="daily",
        sitemap=ORIGIN + "/sitemap.xml",
        sitemap_depth=2,
        news=True,
        videos=2,
    )


# --------------------------------------------------------------------------- properties

_SEGMENTS = st.sampled_from(
    ["about", "blog", "contact", "data", "docs", "x", "post-1", "2024", "05", "v2", "2", "test",
     "holiday1", "account", "category", "a-long-slug-of-words", "page", "style.css"]
)  # fmt: skip
_PATHS = st.lists(_SEGMENTS, max_size=4).map(lambda segments: "/" + "/".join(segments))
_CANDIDATES = st.lists(
    st.builds(
        page,
        _PATHS,
        st.none() | st.sampled_from([0.0, 0.3, 0.5, 1.0]),
        st.none() | st.sampled_from(["2023", "2024-01-01", "2024-05-01T10:00:00+02:00"]),
    ),
    max_size=30,
)
_SCOPES = st.one_of(
    st.builds(PagesWanted, cap=st.integers(1, 8)),
    st.just(PagesWanted(mode="all")),
    st.lists(_PATHS, min_size=1, max_size=3).map(
        lambda p: PagesWanted(mode="pages", pages=tuple(p))
    ),
    st.just(PagesWanted(mode="single")),
)


@PROPERTY
@given(_CANDIDATES, _SCOPES)
def test_every_page_lands_in_exactly_one_list(
    candidates: list[Candidate], scope: PagesWanted
) -> None:
    selection = select(candidates, scope)
    lists = [selection.kept, selection.cut, selection.requires_auth]
    urls = [item.url for items in lists for item in items] + [url for url, _ in selection.junk]
    assert len(urls) == len(set(urls))
    synthesized = scope.mode == "single" and selection.kept[0].reason.endswith("pages)")
    assert len(urls) == selection.discovered + synthesized
    for items in lists:
        for item in items:
            assert item.score == round(sum(p for _, p in item.breakdown), 6)
            assert (("page-type-checklist", 8) in item.breakdown) == (item.slot is not None)


@PROPERTY
@given(_CANDIDATES, st.integers(1, 8))
def test_cap_and_home(candidates: list[Candidate], cap: int) -> None:
    selection = select(candidates, PagesWanted(cap=cap))
    assert len(selection.kept) <= cap
    pool = len(selection.kept) + len(selection.cut)
    assert len(selection.kept) == min(cap, pool)
    if any(item.path == "/" for item in (*selection.kept, *selection.cut)):
        assert selection.kept[0].path == "/"
        assert selection.kept[0].slot == "home"


@PROPERTY
@given(_CANDIDATES)
def test_all_keeps_the_whole_pool(candidates: list[Candidate]) -> None:
    selection = select(candidates, PagesWanted(mode="all"))
    assert selection.cut == ()
    if any(item.path == "/" for item in selection.kept):
        assert selection.kept[0].path == "/"


@PROPERTY
@given(_CANDIDATES, st.integers(1, 8), st.randoms(use_true_random=False))
def test_selection_does_not_depend_on_input_order(
    candidates: list[Candidate], cap: int, rng: object
) -> None:
    # Order matters only for duplicate URLs (the first record wins): compare unique ones.
    unique = list({c.url: c for c in candidates}.values())
    shuffled = list(unique)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    first, second = select(unique, PagesWanted(cap=cap)), select(shuffled, PagesWanted(cap=cap))
    assert {i.url for i in first.kept} == {i.url for i in second.kept}
    assert [i.url for i in first.cut] == [i.url for i in second.cut]

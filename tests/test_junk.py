"""The junk-page filter (§8, shared/JUNK.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout._junk import JunkResult, format_junk_notice, junk_filter

ORIGIN = "https://example.com"


def _urls(*paths: str) -> list[str]:
    return [ORIGIN + path for path in paths]


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        pytest.param("/test/", r"^/test(\b|-|\d|/)", id="test"),
        pytest.param("/test", r"^/test(\b|-|\d|/)", id="test-no-slash"),
        pytest.param("/test1/", r"^/test(\b|-|\d|/)", id="test1"),
        pytest.param("/TEST-page/", r"^/test(\b|-|\d|/)", id="test-dash-upper"),
        pytest.param("/test/sub/", r"^/test(\b|-|\d|/)", id="test-dir"),
        pytest.param("/test.html", r"^/test(\b|-|\d|/)", id="test-word-boundary"),
        pytest.param("/blog/test-content/", "/test-content/", id="test-content"),
        pytest.param("/blog/test-content", "/test-content/", id="test-content-no-slash"),
        pytest.param("/my-test/", r"/[a-z-]*-test(/|$)", id="my-test"),
        pytest.param("/a/b-c-test", r"/[a-z-]*-test(/|$)", id="nested-dash-test"),
        pytest.param("/sample-page/", "/sample-?page/", id="sample-page"),
        pytest.param("/samplepage/", "/sample-?page/", id="samplepage"),
        pytest.param("/Sample-Page", "/sample-?page/", id="sample-page-case"),
        pytest.param("/page-sample/", "/page-sample/", id="page-sample"),
        pytest.param("/staging/x", "/staging/", id="staging"),
        pytest.param("/en/staging", "/staging/", id="staging-last"),
        pytest.param("/dev/", "/dev/", id="dev"),
        pytest.param("/holiday1/", r"/holiday[0-9]+(/|$)", id="holiday1"),
        pytest.param("/promos/holiday2023", r"/holiday[0-9]+(/|$)", id="holiday-year"),
        pytest.param("/7389-2/", r"/[0-9]{3,}-[0-9]+(/|$)", id="numbered-draft"),
        pytest.param("/2024-2/", r"/[0-9]{3,}-[0-9]+(/|$)", id="year-like-draft"),
    ],
)
def test_unconditional_patterns_remove(path: str, pattern: str) -> None:
    result = junk_filter(_urls(path, "/about/"))
    assert result.junk == [(ORIGIN + path, pattern)]
    assert result.kept == [ORIGIN + "/about/"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/testimonials/", id="testimonials"),
        pytest.param("/contest/", id="contest"),
        pytest.param("/latest/", id="latest"),
        pytest.param("/blog/test/", id="test-not-first-segment"),
        pytest.param("/test_results/", id="test-underscore"),
        pytest.param("/page-2/", id="page-dash-2"),
        pytest.param("/page/2/", id="page-slash-2"),
        pytest.param("/blog/page/3", id="nested-pagination"),
        pytest.param("/year-2024/", id="year-2024"),
        pytest.param("/year-2025", id="year-2025"),
        pytest.param("/2024-05/", id="monthly-archive"),
        pytest.param("/devices/", id="devices"),
        pytest.param("/developers/", id="developers"),
        pytest.param("/staging-area-tips/", id="staging-word"),
        pytest.param("/holidays/", id="holidays"),
        pytest.param("/samples/", id="samples"),
        pytest.param("/foo-2/", id="copy-without-original"),
        pytest.param("/promo1/", id="single-numbered"),
        pytest.param("/", id="home"),
    ],
)
def test_never_junk(path: str) -> None:
    result = junk_filter(_urls(path))
    assert result.kept == [ORIGIN + path]
    assert result.junk == []


@pytest.mark.parametrize(
    ("paths", "junk"),
    [
        pytest.param(["/about-2/", "/about/"], [("/about-2/", r"/[^/]+-2(/|$)")], id="copy-2"),
        pytest.param(["/about/", "/about-3"], [("/about-3", r"/[^/]+-3(/|$)")], id="copy-3"),
        pytest.param(
            ["/about-4/", "/about"], [("/about-4/", r"/[^/]+-4(/|$)")], id="copy-ignores-slash"
        ),
        pytest.param(
            ["/team/jo-2/", "/team/jo/"], [("/team/jo-2/", r"/[^/]+-2(/|$)")], id="nested-copy"
        ),
        pytest.param(["/About-2/", "/about/"], [("/About-2/", r"/[^/]+-2(/|$)")], id="copy-case"),
        pytest.param(["/about-2/"], [], id="copy-alone-kept"),
        pytest.param(["/about-5/", "/about/"], [], id="copy-5-not-a-row"),
        pytest.param(["/team/jo-2/", "/jo/"], [], id="copy-other-parent"),
        pytest.param(
            ["/promo1/", "/promo2/", "/promo3/"],
            [(p, r"/[a-z]+[0-9]+(/|$)") for p in ("/promo1/", "/promo2/", "/promo3/")],
            id="three-numbered-siblings",
        ),
        pytest.param(["/promo1/", "/promo2/"], [], id="two-numbered-siblings-kept"),
        pytest.param(["/promo1/", "/promo1", "/promo01/"], [], id="same-number-counts-once"),
        pytest.param(["/promo1/", "/a/promo2/", "/b/promo3/"], [], id="siblings-need-same-parent"),
        pytest.param(["/promo1/", "/deal2/", "/sale3/"], [], id="siblings-need-same-prefix"),
    ],
)
def test_conditional_patterns(paths: list[str], junk: list[tuple[str, str]]) -> None:
    result = junk_filter(_urls(*paths))
    assert result.junk == [(ORIGIN + path, pattern) for path, pattern in junk]
    assert result.kept == [ORIGIN + p for p in paths if p not in {path for path, _ in junk}]


@pytest.mark.parametrize(
    "pages",
    [
        pytest.param(["/test/"], id="path"),
        pytest.param(["/test"], id="path-no-slash"),
        pytest.param(["test"], id="slug"),
        pytest.param(["TEST"], id="slug-case"),
        pytest.param([f"{ORIGIN}/test/"], id="url"),
    ],
)
def test_pages_named_by_user_are_never_junk(pages: list[str]) -> None:
    result = junk_filter(_urls("/test/", "/test1/"), pages=pages)
    assert result.kept == _urls("/test/")
    assert [url for url, _ in result.junk] == _urls("/test1/")


def test_pages_named_by_nested_slug() -> None:
    result = junk_filter(_urls("/blog/my-test/"), pages=["blog__my-test"])
    assert result.kept == _urls("/blog/my-test/")


def test_path_only_query_and_host_ignored() -> None:
    urls = ["https://test.example.com/about/", "https://example.com/about?test=1"]
    assert junk_filter(urls).kept == urls


def test_disabled_keeps_everything() -> None:
    urls = _urls("/test/", "/sample-page/")
    assert junk_filter(urls, enabled=False) == JunkResult(kept=urls, junk=[])


def test_input_order_is_kept_and_iterables_are_accepted() -> None:
    paths = ["/b/", "/test/", "/a/", "/sample-page/", "/c/"]
    result = junk_filter(iter(_urls(*paths)))
    assert result.kept == _urls("/b/", "/a/", "/c/")
    assert [url for url, _ in result.junk] == _urls("/test/", "/sample-page/")


@settings(max_examples=200, deadline=None)
@given(urls=st.lists(st.text() | st.text("/abtes-0123").map(lambda p: ORIGIN + p), max_size=20))
def test_filter_partitions_input(urls: list[str]) -> None:
    result = junk_filter(urls)
    assert len(result.kept) + len(result.junk) == len(urls)
    assert sorted(result.kept + [url for url, _ in result.junk]) == sorted(urls)


# --------------------------------------------------------------------------- notice


def test_notice_lists_first_paths_and_counts_the_rest() -> None:
    paths = ["/test/", "/test1/", "/sample-page/", "/holiday1/"] + [
        f"/x{i}-test/" for i in range(12)
    ]
    junk = [(ORIGIN + path, "p") for path in paths]
    assert format_junk_notice(junk) == (
        "Filtered as likely junk (16): /test/, /test1/, /sample-page/, /holiday1/ ... (12 more)\n"
        "  Override: include any of these explicitly with --pages, or pass\n"
        "  --no-junk-filter to disable filtering entirely."
    )


@pytest.mark.parametrize(
    ("count", "limit", "first_line"),
    [
        pytest.param(2, 4, "Filtered as likely junk (2): /j0/, /j1/", id="under-limit"),
        pytest.param(4, 4, "Filtered as likely junk (4): /j0/, /j1/, /j2/, /j3/", id="at-limit"),
        pytest.param(3, 1, "Filtered as likely junk (3): /j0/ ... (2 more)", id="custom-limit"),
    ],
)
def test_notice_limits(count: int, limit: int, first_line: str) -> None:
    junk = [(f"{ORIGIN}/j{i}/", "p") for i in range(count)]
    assert format_junk_notice(junk, limit=limit).splitlines()[0] == first_line


def test_notice_empty_when_nothing_filtered() -> None:
    assert format_junk_notice([]) == ""

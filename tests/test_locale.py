"""Locale and base-path scoping rules (§7)."""

from __future__ import annotations

import time
from collections import Counter
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitescout._errors import UsageError
from sitescout._locale import (
    ISO_639_1,
    base_prefix,
    children_locales,
    filter_children,
    is_locale,
    locale_matches,
    normalize_locale,
    path_locale,
    prefix_warning,
    require_locale,
    sitemap_locale,
    under_prefix,
)

# --- sitemap_locale ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # Rule 1: sitemap-xx.xml
        pytest.param("https://x.com/sitemap-fr.xml", "fr", id="rule1-fr"),
        pytest.param("https://x.com/sitemap-pt-BR.xml", "pt-br", id="rule1-region-lowercased"),
        pytest.param("https://x.com/sitemap_de.xml", "de", id="rule1-underscore"),
        pytest.param("https://x.com/sitemap-zh-hans.xml", "zh-hans", id="rule1-script"),
        pytest.param("https://x.com/sitemap-zh-Hant.xml.gz", "zh-hant", id="rule1-gz"),
        pytest.param("https://x.com/sitemap-it.xml", "it", id="rule1-italian-is-real"),
        pytest.param("https://x.com/SITEMAP-FR.XML", "fr", id="rule1-case-insensitive"),
        # Rule 2: locale directory
        pytest.param("https://x.com/de-de/sitemap.xml", "de-de", id="rule2-dir"),
        pytest.param("https://x.com/de-de/sitemap.xml.gz", "de-de", id="rule2-dir-gz"),
        pytest.param("https://x.com/en/sitemap_index.xml", "en", id="rule2-sitemap-star"),
        pytest.param("https://x.com/es-419/sitemap.xml", "es-419", id="rule2-numeric-region"),
        pytest.param("/ja/sitemap.xml", "ja", id="rule2-bare-path"),
        # Rule 1 wins over rule 2
        pytest.param("https://x.com/de-de/sitemap-fr.xml", "fr", id="rule1-before-rule2"),
        # Rule 3: infix, optional numeric shard
        pytest.param("https://x.com/dotnet_en-us_1.xml", "en-us", id="rule3-shard"),
        pytest.param("https://x.com/previous-versions_en-us_8.xml", "en-us", id="rule3-prev"),
        pytest.param("https://x.com/api_en.xml", "en", id="rule3-bare"),
        pytest.param("https://x.com/de-de/products_en.xml", "en", id="rule3-dir-not-sitemap"),
        pytest.param("https://x.com/dotnet_en_US_120.xml", "en-us", id="rule3-underscore-region"),
        pytest.param("https://x.com/catalog-id.xml", "id", id="rule3-indonesian"),
        pytest.param("https://x.com/sitemap-es-419.xml", "es", id="filename-number-is-shard"),
        pytest.param("https://x.com/pt-br.xml", "pt-br", id="pair-not-breton"),
        pytest.param("https://x.com/sitemap-fr.xml?page=2#top", "fr", id="query-fragment-ignored"),
        # False friends
        pytest.param("https://x.com/sitemap-pages.xml", None, id="ff-pages"),
        pytest.param("https://x.com/post-sitemap.xml", None, id="ff-post-sitemap"),
        pytest.param("https://x.com/sitemap-products-1.xml", None, id="ff-products-1"),
        pytest.param("https://x.com/sitemap-zz.xml", None, id="ff-zz"),
        pytest.param("https://x.com/sitemap.xml?lang=fr", None, id="ff-query"),
        pytest.param("https://x.com/sitemap-1.xml", None, id="ff-shard-only"),
        pytest.param("https://x.com/image-sitemap.xml", None, id="ff-image"),
        pytest.param("https://x.com/sitemap.xml", None, id="plain"),
        pytest.param("https://x.com/sitemap_index.xml", None, id="index"),
        pytest.param("https://x.com/sitemap-en-blog.xml", None, id="ff-4-letter-word"),
        pytest.param("https://x.com/fr.xml", None, id="no-infix-separator"),
        pytest.param("https://x.com/sitemap-fr.txt", None, id="not-xml"),
        pytest.param("https://x.com/fr/", None, id="no-filename"),
        pytest.param("https://x.com/docs/sitemap.xml", None, id="dir-not-locale"),
        pytest.param("https://x.com/sitemap-en_us-latn.xml", None, id="region-and-script"),
        pytest.param("http://[x/sitemap-fr.xml", None, id="unparsable"),
        pytest.param("", None, id="empty"),
    ],
)
def test_sitemap_locale(url: str, expected: str | None) -> None:
    assert sitemap_locale(url) == expected


@given(st.text())
def test_sitemap_locale_never_raises(text: str) -> None:
    result = sitemap_locale(text)
    assert result is None or is_locale(result)


@given(st.from_regex(r"https?://[a-z]{1,8}\.com(/[a-zA-Z0-9_.-]{0,12}){0,4}(\?[a-z=&]*)?"))
def test_sitemap_locale_is_canonical_on_urls(url: str) -> None:
    result = sitemap_locale(url)
    assert result is None or normalize_locale(result) == result


# --- is_locale / normalize_locale / path_locale ---------------------------------------------------


def test_iso_639_1_has_184_codes() -> None:
    assert len(ISO_639_1) == 184
    assert all(len(code) == 2 and code.isalpha() and code.islower() for code in ISO_639_1)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        pytest.param("en", "en", id="language"),
        pytest.param("EN", "en", id="upper"),
        pytest.param("en-us", "en-us", id="region"),
        pytest.param("pt_BR", "pt-br", id="underscore-region"),
        pytest.param("es-419", "es-419", id="numeric-region"),
        pytest.param("zh-hans", "zh-hans", id="script-hans"),
        pytest.param("zh-Hant", "zh-hant", id="script-hant"),
        pytest.param("sr-latn", "sr-latn", id="script-latn"),
        pytest.param("zz", None, id="not-iso"),
        pytest.param("pages", None, id="word"),
        pytest.param("products", None, id="products"),
        pytest.param("en-blog", None, id="4-letter-non-script"),
        pytest.param("en-u", None, id="short-region"),
        pytest.param("en-12", None, id="2-digit-region"),
        pytest.param("en-us-x", None, id="trailing-junk"),
        pytest.param("en-hans-cn", None, id="script-plus-region"),
        pytest.param("", None, id="empty"),
        pytest.param(" en", None, id="whitespace"),
    ],
)
def test_normalize_locale(token: str, expected: str | None) -> None:
    assert normalize_locale(token) == expected
    assert is_locale(token) is (expected is not None)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("https://learn.example.com/en-us/docs/", "en-us", id="url"),
        pytest.param("https://x.com/pt-BR/", "pt-br", id="lowercased"),
        pytest.param("/de/", "de", id="path"),
        pytest.param("fr/docs", "fr", id="relative-path"),
        pytest.param("/docs/", None, id="not-locale"),
        pytest.param("https://x.com/", None, id="root"),
        pytest.param("https://x.com", None, id="bare-host"),
        pytest.param("https://x.com/docs/en-us/", None, id="second-segment"),
        pytest.param("https://x.com/?lang=fr", None, id="query"),
    ],
)
def test_path_locale(url: str, expected: str | None) -> None:
    assert path_locale(url) == expected


@pytest.mark.parametrize(
    ("preferred", "locale", "expected"),
    [
        pytest.param("en", "en", True, id="same"),
        pytest.param("en", "en-us", True, id="language-keeps-region"),
        pytest.param("en", "en-gb", True, id="language-keeps-other-region"),
        pytest.param("en-us", "en", True, id="region-keeps-language"),
        pytest.param("en-us", "en-us", True, id="same-region"),
        pytest.param("en-us", "en-gb", False, id="regions-differ"),
        pytest.param("zh-hans", "zh-hant", False, id="scripts-differ"),
        pytest.param("en", "fr", False, id="languages-differ"),
        pytest.param("en-us", "fr-us", False, id="same-region-other-language"),
    ],
)
def test_locale_matches(preferred: str, locale: str, expected: bool) -> None:
    assert locale_matches(preferred, locale) is expected


# --- filter_children -----------------------------------------------------------------------------

_FR = "https://x.com/sitemap-fr.xml"
_DE = "https://x.com/sitemap-de.xml"
_EN = "https://x.com/sitemap-en.xml"
_US = "https://x.com/dotnet_en-us_1.xml"
_GB = "https://x.com/dotnet_en-gb_1.xml"
_PAGES = "https://x.com/sitemap-pages.xml"


@pytest.mark.parametrize(
    ("children", "preferred", "kept", "applied", "fallback"),
    [
        pytest.param([_FR, _EN, _DE], None, [_EN], True, False, id="default-en"),
        pytest.param(
            [_FR, _PAGES, _EN, _DE], "fr", [_FR, _PAGES], True, False, id="keeps-no-locale"
        ),
        pytest.param([_FR, _EN], "FR", [_FR], True, False, id="preferred-normalized"),
        pytest.param([_US, _GB, _FR], "en", [_US, _GB], True, False, id="en-keeps-regions"),
        pytest.param([_US, _GB, _EN], "en-us", [_US, _EN], True, False, id="en-us-keeps-en"),
        pytest.param([_US, _GB], "en", [_US, _GB], True, False, id="applied-skipping-none"),
        pytest.param([_EN, _PAGES], "fr", [_EN, _PAGES], False, False, id="one-locale-no-filter"),
        pytest.param([_PAGES], None, [_PAGES], False, False, id="no-locale"),
        pytest.param([], "de", [], False, False, id="empty"),
        pytest.param([_FR, _DE], None, [_FR, _DE], False, True, id="nothing-left-keeps-all"),
        pytest.param([_FR, _DE, _PAGES], "ja", [_FR, _DE, _PAGES], False, True, id="no-match"),
    ],
)
def test_filter_children(
    children: list[str], preferred: str | None, kept: list[str], applied: bool, fallback: bool
) -> None:
    result = filter_children(children, preferred)
    assert result.kept == kept
    assert result.skipped == [child for child in children if child not in kept]
    assert result.applied is applied
    assert result.fallback is fallback


def test_filter_children_reports_locales_and_preferred() -> None:
    result = filter_children([_FR, _US, _PAGES, _EN], None)
    assert result.locales == frozenset({"fr", "en-us", "en"})
    assert result.preferred == "en"
    assert filter_children([_FR, _EN], "pt_BR").preferred == "pt-br"


@pytest.mark.parametrize("bad", [pytest.param("english", id="word"), pytest.param("", id="empty")])
def test_a_bad_preferred_locale_is_the_callers_mistake(bad: str) -> None:
    with pytest.raises(UsageError):
        require_locale(bad)
    with pytest.raises(UsageError):
        filter_children([_FR, _EN], bad)


_CHILD_NAMES = st.sampled_from(
    [
        *(_FR, _DE, _EN, _US, _GB, _PAGES, "https://x.com/sitemap-1.xml", "/ja/sitemap.xml"),
        *("https://x.com/maps/en-gb/part-1.xml", "https://x.com/maps/ko/part-1.xml"),
        *("https://x.com/sm/leaf-1.xml.gz", "https://x.com/it/part.xml", "/de/feed"),
    ]
)


@given(
    st.lists(st.one_of(_CHILD_NAMES, st.text(max_size=30)), max_size=12),
    st.sampled_from([None, "en", "fr", "en-gb", "ja"]),
)
def test_filter_children_partitions_its_input(children: list[str], preferred: str | None) -> None:
    result = filter_children(children, preferred)
    assert Counter(result.kept) + Counter(result.skipped) == Counter(children)
    assert [child for child in children if child in result.kept] == result.kept
    if children:
        assert result.kept


def test_filter_children_reads_locale_folders() -> None:
    maps = [f"https://x.com/maps/{locale}/part-1.xml" for locale in ("en-gb", "es-mx", "ko")]
    other = ["https://x.com/maps/misc.xml", "https://x.com/it/part.xml"]
    result = filter_children([*maps, *other], "en-gb")
    assert result.applied
    assert result.kept == [maps[0], *other]  # `/it/` alone at its position: no locale
    assert result.skipped == maps[1:]
    assert result.locales == frozenset({"en-gb", "es-mx", "ko"})


# --- children_locales: a locale folder, with its siblings as evidence ---------------------------


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        pytest.param(
            ["/maps/en-gb/part-1.xml", "/maps/es-mx/part-1.xml", "/maps/ko/part-1.xml"],
            ["en-gb", "es-mx", "ko"],
            id="issue",
        ),
        pytest.param(
            ["/sitemaps/de-de/products-3.xml.gz", "/sitemaps/fr-fr/products-3.xml.gz"],
            ["de-de", "fr-fr"],
            id="gz-any-name",
        ),
        pytest.param(
            ["/maps/en_GB/a.xml", "/maps/zh-Hant/a.xml", "/maps/PT-br/a.xml"],
            ["en-gb", "zh-hant", "pt-br"],
            id="canonical",
        ),
        pytest.param(["/de/feed", "/fr/feed?x=1"], ["de", "fr"], id="any-file"),
        pytest.param(
            ["/maps/en/a.xml", "/maps/fr/a.xml", "/maps/all/a.xml", "/maps/misc.xml"],
            ["en", "fr", None, None],
            id="unlocalized-siblings",
        ),
        pytest.param(
            ["/ch/de/a.xml", "/be/fr/a.xml", "/be/nl/a.xml"],
            ["de", "fr", "nl"],
            id="nearest-the-file-wins",
        ),
        pytest.param(
            ["/maps/de/sitemap-fr.xml", "/maps/it/part.xml"], ["fr", "it"], id="own-name-first"
        ),
        pytest.param(
            ["/de-de/sitemap.xml", "/fr-fr/pages.xml"], ["de-de", "fr-fr"], id="with-rule-2"
        ),
        pytest.param(["/ja/sitemap.xml", "/ko/part.xml"], ["ja", "ko"], id="rule-2-is-evidence"),
        # What is no locale stays none beside a real locale scheme (`/maps/de/`, `/maps/fr/`):
        # a lone folder at its position, one locale twice, different positions, non-locales,
        # file names, an unreadable URL.
        pytest.param(
            ["/sm/leaf-1.xml.gz", "/maps/de/a.xml", "/maps/fr/a.xml"],
            [None, "de", "fr"],
            id="sm-alone-at-its-position",
        ),
        pytest.param(
            ["/it/part.xml", "/blog/part.xml", "/maps/de/a.xml", "/maps/fr/a.xml"],
            [None, None, "de", "fr"],
            id="it-alone-at-its-position",
        ),
        pytest.param(
            ["/sm/leaf-1.xml.gz", "/sm/leaf-2.xml.gz", "/maps/de/a.xml", "/maps/fr/a.xml"],
            [None, None, "de", "fr"],
            id="one-locale-twice",
        ),
        pytest.param(
            ["/en/a/x.xml", "/docs/fr/x.xml", "/a/b/de/x.xml", "/a/b/ko/x.xml"],
            [None, None, "de", "ko"],
            id="other-positions",
        ),
        pytest.param(
            ["/maps/zz/a.xml", "/maps/en-blog/a.xml", "/maps/de/a.xml", "/maps/fr/a.xml"],
            [None, None, "de", "fr"],
            id="not-locales",
        ),
        pytest.param(
            ["/x/de", "/x/fr", "/de/feed", "/fr/feed"],
            [None, None, "de", "fr"],
            id="file-names-are-not-folders",
        ),
        pytest.param(
            ["http://[x/de/a.xml", "/fr/a.xml", "/de/b.xml"], [None, "fr", "de"], id="unparsable"
        ),
    ],
)
def test_children_locales(paths: list[str], expected: list[str | None]) -> None:
    children = [path if path.startswith("http") else f"https://x.com{path}" for path in paths]
    assert children_locales(children) == expected


_FOLDER_LOCALES = st.sampled_from(["en", "en-gb", "ko", "pt-br", "zh-hant", "es-419", "it"])


@given(
    st.lists(st.one_of(_CHILD_NAMES, st.text(max_size=30)), max_size=12),
    st.lists(_FOLDER_LOCALES, min_size=2, max_size=4, unique=True),
    st.randoms(use_true_random=False),
)
def test_children_locales_adds_locale_folders_to_sitemap_locale(
    others: list[str], locales: list[str], rng: Random
) -> None:
    # Children in locale folders at one position, shuffled among arbitrary siblings: each reads
    # its folder's locale; every other child keeps what its own URL says, if anything.
    folders = {f"https://x.com/shards/{locale}/part.xml": locale for locale in locales}
    children = [*others, *folders]
    rng.shuffle(children)
    found = children_locales(children)
    assert len(found) == len(children)
    for child, locale in zip(children, found, strict=True):
        if child in folders:
            assert locale == folders[child]
        elif (own := sitemap_locale(child)) is not None:
            assert locale == own
        else:
            assert locale is None or normalize_locale(locale) == locale


def test_a_50000_child_index_is_read_in_linear_time() -> None:
    # A pairwise comparison of 50,000 children would take minutes; one pass takes well under 1 s.
    locales = [("en-gb", "ko", "it")[i % 3] for i in range(50_000)]
    children = [f"https://x.com/maps/{locale}/part-{i}.xml.gz" for i, locale in enumerate(locales)]
    start = time.perf_counter()
    found = children_locales(children)
    assert time.perf_counter() - start < 10
    assert found == locales


# --- base prefix ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("https://learn.example.com/en-us/docs/", "/en-us/docs/", id="slash"),
        pytest.param("https://learn.example.com/en-us/docs", "/en-us/docs/", id="no-slash"),
        pytest.param("https://x.com/docs?x=1", "/docs/", id="query-ignored"),
        pytest.param("https://x.com/", None, id="root"),
        pytest.param("https://x.com", None, id="empty-path"),
    ],
)
def test_base_prefix(url: str, expected: str | None) -> None:
    assert base_prefix(url) == expected


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        pytest.param("https://x.com/en-us/docs", True, id="bare"),
        pytest.param("https://x.com/en-us/docs/", True, id="slash"),
        pytest.param("https://x.com/en-us/docs/x", True, id="child"),
        pytest.param("/en-us/docs/x/y?q=1", True, id="path"),
        pytest.param("https://x.com/en-us/docsx", False, id="sibling-prefix"),
        pytest.param("https://x.com/en-us/", False, id="parent"),
        pytest.param("https://x.com/EN-US/docs/", False, id="case-kept"),
    ],
)
def test_under_prefix(page: str, expected: bool) -> None:
    assert under_prefix(page, "/en-us/docs/") is expected
    assert under_prefix(page, "/en-us/docs") is expected


def test_under_root_prefix_matches_everything() -> None:
    assert under_prefix("https://x.com/anything", "/")


# --- narrow-prefix warning -----------------------------------------------------------------------

_WARNING_0_OF_329018 = (
    'Sitemap path prefix "/en-us/docs" matched 0 of 329018 examined same-site URLs '
    "(less than 1%); consider a broader base URL."
)


@pytest.mark.parametrize(
    ("prefix", "matched", "examined", "expected"),
    [
        pytest.param("/en-us/docs/", 0, 329018, _WARNING_0_OF_329018, id="spec-example"),
        pytest.param("/en-us/docs", 0, 329018, _WARNING_0_OF_329018, id="no-trailing-slash"),
        pytest.param("/a/", 1, 100, None, id="1-of-100-silent"),
        pytest.param(
            "/a/",
            1,
            101,
            'Sitemap path prefix "/a" matched 1 of 101 examined same-site URLs '
            "(less than 1%); consider a broader base URL.",
            id="1-of-101-warns",
        ),
        pytest.param(
            "/a",
            0,
            1,
            'Sitemap path prefix "/a" matched 0 of 1 examined same-site URLs '
            "(less than 1%); consider a broader base URL.",
            id="0-of-1-warns",
        ),
        pytest.param("/a/", 0, 0, None, id="0-of-0-silent"),
        pytest.param("/a/", 5, 5, None, id="all"),
    ],
)
def test_prefix_warning(prefix: str, matched: int, examined: int, expected: str | None) -> None:
    assert prefix_warning(prefix, matched, examined) == expected


@pytest.mark.parametrize(
    ("matched", "examined"),
    [
        pytest.param(-1, 10, id="negative-matched"),
        pytest.param(0, -1, id="negative-examined"),
        pytest.param(11, 10, id="more-matched-than-examined"),
    ],
)
def test_prefix_warning_rejects_impossible_counts(matched: int, examined: int) -> None:
    with pytest.raises(UsageError):
        prefix_warning("/a/", matched, examined)


def test_documentation_portal_scenario() -> None:
    # A per-product index of per-language shards, walked from an /en-us/ base URL (§7).
    children = [
        f"https://learn.example.com/sitemaps/dotnet_{locale}_{shard}.xml"
        for locale in ("de-de", "en-us", "fr-fr", "ja-jp")
        for shard in (1, 2)
    ]
    preferred = path_locale("https://learn.example.com/en-us/docs/")
    result = filter_children(children, preferred)
    assert result.applied
    assert result.kept == [c for c in children if "_en-us_" in c]
    assert len(result.skipped) == 6
    assert result.locales == frozenset({"de-de", "en-us", "fr-fr", "ja-jp"})

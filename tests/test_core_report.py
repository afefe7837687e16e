"""The core's reading of a batch's URLs for the site report (`report_urls`), held to the rules
themselves: path groups as `group_key` gives them one URL at a time, the junk filter run on the
whole batch, and `classify` of every URL (`test_report.per_url`). The core only picks the
candidates those rules judge, so a candidate it missed would be a junk or sign-in URL the report
never shows: generated batches of hostile URLs look for one.

`SITESCOUT_DIFF_EXAMPLES` scales the number of generated batches, as in the other core tests.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout._core import UrlRules, report_urls
from sitescout._models import Entry
from sitescout._report import _RULES, ReportBuilder, ReportData
from sitescout._rules import AUTH_WORDS, JUNK_ROWS, spellings

from .test_report import per_url

EXAMPLES = max(50, int(os.environ.get("SITESCOUT_DIFF_EXAMPLES", "800")) // 4)

ORIGINS = [
    "https://ex.com",
    "https://ex.com:8443",
    "HTTPS://EX.COM",
    " https://ex.com",
    "https://dev.ex.com",
    "https://login.ex.com",
    "https://user:test@ex.com",
    "http://[::1]:80",
    "ftp://ex.com",
    "mailto:",
    "",
    "//ex.com",
    "https:",
    "test:",
]
WORDS = sorted(
    {
        segment.lower()
        for row in JUNK_ROWS
        for path in (*row.example, *row.near_miss)
        for segment in path.split("/")
        if segment
    }
    | set(spellings(AUTH_WORDS))
)
PIECES = [
    *WORDS,
    *(w.upper() for w in WORDS[::3]),
    "about",
    "about-2",
    "About-3",
    "about-4/",
    "-2",
    "promo1",
    "promo2",
    "promo03",
    "PROMO4",
    "page-2",
    "2024",
    "x%74est",
    "%2Ftest",
    "%6Cogin",
    "%61dmin",
    "sign%2Din",
    "LOGİN",
    "ſtaging",
    "\u212aey1",
    "ä",
    "\t",
    "\n",
    " ",
    "\x00",
    "\x7f",
    "/",
    "//",
    "?",
    "#",
    "?q=/test",
    "#/login",
    ".",
    "..",
    "\\",
    ":",
    "@",
]


# What turns one path into a related one: copies, numbered siblings, the same path spelled
# otherwise. The copy and siblings rows compare URLs with each other.
VARIANTS = [
    "{}",
    "{}-2",
    "{}-3/",
    "{}-4?x=1",
    "{}/",
    "{}//",
    "{}?q=/x",
    "{}#top",
    "{}1",
    "{}2",
    "{}03",
    "{}/sub9",
    "{}-2/x",
]


def batch(surrogates: bool) -> st.SearchStrategy[list[str]]:
    """A batch of URLs made of a few paths and their variants, under a few origins."""
    pieces = [*PIECES, "\ud800"] if surrogates else PIECES
    path = st.lists(
        st.one_of(st.sampled_from(pieces), st.text(max_size=3)),
        max_size=5,
    ).map("/".join)
    url = st.builds(
        lambda origin, slash, path, variant, upper: (
            origin + slash + (variant.format(path).upper() if upper else variant.format(path))
        ),
        st.sampled_from(ORIGINS),
        st.sampled_from(["/", "", "//"]),
        path,
        st.sampled_from(VARIANTS),
        st.booleans(),
    )
    return st.lists(url, min_size=1, max_size=6).flatmap(
        lambda pool: st.lists(
            st.builds(
                lambda base, variant: variant.format(base),
                st.sampled_from(pool),
                st.sampled_from(VARIANTS),
            ),
            max_size=40,
        )
    )


def as_rows(urls: list[str]) -> dict[str, list[str | None]]:
    nothing: list[str | None] = [None] * len(urls)
    return {
        "urls": urls,
        "lastmods": nothing,
        "sitemaps": nothing,
        "hreflangs": nothing,
        "alternate_ofs": nothing,
    }


def state(b: ReportBuilder) -> dict[str, object]:
    """What the report makes of the URLs themselves."""
    return {
        "groups": dict(b.groups),
        "group_other": b.group_other,
        "subgroups": {k: (dict(s.children), s.other) for k, s in b.subgroups.items()},
        "table": ReportData.of(b).groups,
        "junk": (b.junk, b.junk_count, b.junk_patterns),
        "auth": (b.auth, b.auth_count, b.auth_groups),
    }


def reference(batches: list[list[str]]) -> ReportBuilder:
    builder = ReportBuilder(site="https://ex.com/")
    for batch in batches:
        per_url(builder, batch)
        builder.urls += len(batch)
    return builder


@given(st.lists(batch(surrogates=True), min_size=1, max_size=4))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_inventory_rows_report_as_the_rules_read_each_url(batches: list[list[str]]) -> None:
    builder = ReportBuilder(site="https://ex.com/")
    for batch in batches:
        builder.add_rows(**as_rows(batch))
    assert state(builder) == state(reference(batches))


@given(st.lists(batch(surrogates=False), min_size=1, max_size=4))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_walk_batches_report_as_the_rules_read_each_url(batches: list[list[str]]) -> None:
    builder = ReportBuilder(site="https://ex.com/")
    for batch in batches:
        builder.add_entries([Entry(url) for url in batch])
    assert state(builder) == state(reference(batches))


def test_the_candidates_are_few_on_a_plain_site() -> None:
    # Candidates cost a Python step each: a plain site must not make every URL one.
    batch = [f"https://dev.ex.com/docs/guide-{i}/intro?ref=admin" for i in range(1000)]
    places, junk, auth = report_urls(batch, _RULES)
    assert places == [("/docs/*", f"/docs/guide-{i}/*", 1) for i in range(1000)]
    assert junk == [batch[2], batch[3], batch[4]]  # `-2` to `-4` could be copies
    assert auth == []


def test_a_rule_the_core_cannot_read_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot read"):
        UrlRules([], ["(unclosed"], None, [])

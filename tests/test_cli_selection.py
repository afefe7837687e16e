"""How the CLI words a selection (§11): the informational block and the questions. No network."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sitescout._pagetype import PageType
from sitescout._select import (
    Candidate,
    FewTemplates,
    LargeRun,
    PagesWanted,
    Selection,
    questions,
    select_pages,
)
from sitescout.cli._selection import prompt_text, render_selection, warning_text

from .test_select import ORIGIN, SITE, page


def select(candidates: Sequence[Candidate] = SITE, scope: PagesWanted | None = None) -> Selection:
    return select_pages(candidates, scope, site=ORIGIN)


# --------------------------------------------------------------------------- questions (§11.5)


def test_few_templates_wording() -> None:
    (question,) = questions(select([page("/"), page("/about"), page("/team")]))
    assert warning_text(question) == (
        "Only 2 distinct page templates discoverable (home, IA pillar); "
        "the selection may not show the range of the site's pages."
    )
    assert prompt_text(question) == "Continue with these pages?"


@pytest.mark.parametrize(
    ("templates", "listed"),
    [
        pytest.param((), "0 distinct page templates discoverable (none)", id="none"),
        pytest.param(("home",), "1 distinct page template discoverable (home)", id="one"),
    ],
)
def test_few_templates_counts_and_names(templates: tuple[PageType, ...], listed: str) -> None:
    text = warning_text(FewTemplates(templates))
    assert text.startswith("Only " + listed + ";")


def test_large_run_wording() -> None:
    candidates = [page("/"), page("/contact"), *(page(f"/blog/post-{n}") for n in range(246))]
    (question,) = questions(select(candidates, PagesWanted(mode="all")))
    assert warning_text(question) == (
        "--all selects 248 pages (more than 100), about 8 minutes of fetching."
    )
    assert prompt_text(question) == "this will extract 248 pages, ~8 minutes — proceed?"


@pytest.mark.parametrize(
    ("seconds", "duration"),
    [
        pytest.param(0.2, "1 second", id="at-least-one"),
        pytest.param(89.4, "89 seconds", id="seconds"),
        pytest.param(90.0, "2 minutes", id="minutes"),
    ],
)
def test_large_run_duration(seconds: float, duration: str) -> None:
    question = LargeRun(pages=150, limit=100, seconds=seconds)
    assert prompt_text(question) == f"this will extract 150 pages, ~{duration} — proceed?"
    assert "(y/n)" not in warning_text(question) + prompt_text(question)


# --------------------------------------------------------------------------- output (§11.4)


def test_render_default() -> None:
    text = render_selection(select(), site="https://example.com/", source="sitemap.xml")
    assert text == (
        "Discovered 20 pages on https://example.com (sitemap.xml).\n"
        r"Filtered as likely junk (3): /holiday1/, /sample-page/, /test/" + "\n"
        "  Override: include any of these explicitly with --pages, or pass\n"
        "  --no-junk-filter to disable filtering entirely.\n"
        "Requires sign-in, not fetched (1): /account/settings/\n"
        "Selecting 5 highest-priority pages:\n"
        "  - / (home)\n"
        "  - /about/ (IA pillar)\n"
        "  - /blog/post-6/ (article)\n"
        "  - /blog/ (listing)\n"
        "  - /contact/ (form)\n"
        "Cut (11 pages, --all to lift): /customers/, /docs/, /pricing/, /docs/api/, ..."
    )


def test_render_small_site_with_notes() -> None:
    selection = select([page("/"), page("/about"), page("/search?q=x")], PagesWanted(cap=2))
    text = render_selection(
        selection,
        site="https://example.com/en/",
        source="bfs",
        notes=["Multi-locale site: extracting the default locale (en) only."],
    )
    assert text == (
        "Discovered 3 pages on https://example.com/en/ (bfs).\n"
        "Multi-locale site: extracting the default locale (en) only.\n"
        "Selecting 2 highest-priority pages:\n"
        "  - / (home)\n"
        "  - /about (IA pillar)\n"
        "Cut (1 page, --all to lift): /search?q=x"
    )


@pytest.mark.parametrize(
    ("scope", "heading"),
    [
        pytest.param(PagesWanted(mode="all"), "Selecting all 2 pages (--all):", id="all"),
        pytest.param(PagesWanted(cap=1), "Selecting 1 highest-priority page:", id="one"),
        pytest.param(
            PagesWanted.from_flags(pages="about,nope"),
            "Selecting 1 page named with --pages:",
            id="pg",
        ),
        pytest.param(
            PagesWanted.from_flags(single=True), "Selecting 1 page (--single):", id="single"
        ),
    ],
)
def test_render_headings(scope: PagesWanted, heading: str) -> None:
    text = render_selection(select([page("/"), page("/about")], scope), site=ORIGIN, source="x")
    assert heading in text.splitlines()


def test_render_unmatched_and_empty() -> None:
    selection = select([page("/style.css")], PagesWanted.from_flags(pages="about"))
    assert render_selection(selection, site=ORIGIN, source="sitemap.xml") == (
        "Discovered 0 pages on https://example.com (sitemap.xml).\n"
        "Not among the discovered pages (1): about\n"
        "No pages to select."
    )

"""llms.txt rules without the network: candidates, acceptance, link scanning, `.md` mapping and
link verdicts (tables), and the scanner's cost on hostile bodies (a scaling test)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sitescout._discover import LlmsReader
from sitescout._http import Fetcher
from sitescout._llms import (
    Verdict,
    candidates,
    html_page_of,
    judge_link,
    markdown_links,
    rejection,
)

from .scaling import assert_linear

FILE = "https://example.com/llms.txt"


@pytest.mark.parametrize(
    ("site_url", "explicit", "expected"),
    [
        (
            "https://example.com/",
            None,
            ["https://example.com/llms.txt", "https://example.com/docs/llms.txt"],
        ),
        (
            "https://example.com/docs/v2/",
            None,
            [
                "https://example.com/docs/v2/llms.txt",
                "https://example.com/llms.txt",
                "https://example.com/docs/llms.txt",
            ],
        ),
        # The base path as everywhere else: `/docs` is the folder `/docs/`.
        (
            "https://example.com/docs",
            None,
            ["https://example.com/docs/llms.txt", "https://example.com/llms.txt"],
        ),
        (
            "https://example.com/a/",
            "https://example.com/x/my-llms.txt",
            ["https://example.com/x/my-llms.txt"],
        ),
    ],
)
def test_candidates_in_order_without_duplicates(
    site_url: str, explicit: str | None, expected: list[str]
) -> None:
    assert candidates(site_url, explicit) == expected


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/plain", b"# Docs\n- [A](/a)\n", None),
        ("text/markdown; charset=utf-8", b"# Docs\n", None),
        ("text/html", b"<!doctype html><title>404</title>", "an HTML page, not an llms.txt"),
        ("text/plain", b"  \n<!DOCTYPE HTML><html>", "an HTML page, not an llms.txt"),
        ("text/plain", b"<html><body>soft 404</body></html>", "an HTML page, not an llms.txt"),
        ("text/plain", b"", "empty"),
        ("text/plain", b" \n\t\n", "empty"),
        ("application/json", b'{"a": 1}', "not a text file (Content-Type application/json)"),
        ("", b"# Docs", "not a text file (Content-Type missing)"),
    ],
)
def test_rejection(content_type: str, body: bytes, expected: str | None) -> None:
    assert rejection(content_type, body[:512], len(body)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- [Guide](/docs/guide.md): the guide", [("Guide", "/docs/guide.md")]),
        ('[A](https://e.com/a "A title") [B]( /b )', [("A", "https://e.com/a"), ("B", "/b")]),
        ("[Spaced](<https://e.com/a b>)", [("Spaced", "https://e.com/a b")]),
        ("[]( /empty-title )", [("", "/empty-title")]),
        ("no links here [just brackets] (and parens)", []),
        ("[unclosed](/x\n[next](/y)", [("next", "/y")]),
        ("![img](/logo.png)", [("img", "/logo.png")]),
        ("[[nested]](/x)", []),
    ],
)
def test_markdown_links(text: str, expected: list[tuple[str, str]]) -> None:
    assert list(markdown_links(text)) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://e.com/docs/guide/index.md", "https://e.com/docs/guide/"),
        ("https://e.com/a/b.md", "https://e.com/a/b"),
        ("https://e.com/a/b.MDX", "https://e.com/a/b"),
        ("https://e.com/a/b.html.md", "https://e.com/a/b.html"),
        ("https://e.com/index.md", "https://e.com/"),
        ("https://e.com/a.md?v=2", "https://e.com/a?v=2"),
        ("https://e.com/a/b", None),
        ("https://e.com/a/readme.markdown", None),
    ],
)
def test_html_page_of(url: str, expected: str | None) -> None:
    assert html_page_of(url) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "/docs/guide/index.md",
            Verdict(
                "page",
                url="https://example.com/docs/guide/",
                md_url="https://example.com/docs/guide/index.md",
            ),
        ),
        ("https://example.com/a/b", Verdict("page", url="https://example.com/a/b")),
        ("https://www.example.com/a", Verdict("page", url="https://www.example.com/a")),
        ("/llms-full.txt", Verdict("aggregate", url="https://example.com/llms-full.txt")),
        (
            "/logo.png",
            Verdict("dropped", url="https://example.com/logo.png", reason="asset-extension"),
        ),
        ("/api/users", Verdict("dropped", url="https://example.com/api/users", reason="api-path")),
        ("https://other.org/a", Verdict("dropped", url="https://other.org/a", reason="other-host")),
        (
            "https://other.org/x.txt",
            Verdict("dropped", url="https://other.org/x.txt", reason="other-host"),
        ),
        ("guide.md", Verdict("dropped", reason="not absolute or root-relative")),
        ("//example.com/a", Verdict("dropped", reason="not absolute or root-relative")),
        ("mailto:a@example.com", Verdict("dropped", reason="not absolute or root-relative")),
        ("#top", Verdict("dropped", reason="not absolute or root-relative")),
        ("https://exa mple.com:99999/", Verdict("dropped", reason="unparseable")),
    ],
)
def test_judge_link(raw: str, expected: Verdict) -> None:
    assert judge_link(raw, FILE) == expected


NAMED = "https://docs.example.net/ai/llms.txt"  # an llms.txt named by the user, on another site


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Links resolve against the file, wherever it is ...
        ("/guide", Verdict("page", url="https://docs.example.net/guide")),
        # ... and pages of the walk's own site count too ...
        ("https://example.com/a", Verdict("page", url="https://example.com/a")),
        (
            "https://www.example.com/b.md",
            Verdict("page", url="https://www.example.com/b", md_url="https://www.example.com/b.md"),
        ),
        # ... with the walk's own filters ...
        (
            "https://example.com/api/v1",
            Verdict("dropped", url="https://example.com/api/v1", reason="api-path"),
        ),
        # ... but no third site, and aggregates only on the file's own site.
        ("https://other.org/a", Verdict("dropped", url="https://other.org/a", reason="other-host")),
        ("/llms-full.txt", Verdict("aggregate", url="https://docs.example.net/llms-full.txt")),
        (
            "https://example.com/llms-full.txt",
            Verdict("dropped", url="https://example.com/llms-full.txt", reason="other-host"),
        ),
    ],
)
def test_judge_link_of_a_file_on_another_site(raw: str, expected: Verdict) -> None:
    assert judge_link(raw, NAMED, "https://example.com/") == expected


def _scan(text: str) -> int:
    """What reading one file costs: the reader's own loop over it (scan, judge, keep)."""
    reader = LlmsReader(Fetcher(), "https://example.com/")  # never entered: no request made
    aggregates = reader._collect(text, FILE, 1, deeper=True)
    return len(reader.links) + len(aggregates) + len(reader.summary.omitted)


def _distinct_links(n: int) -> str:
    # Fixed-width numbers: 4n characters hold exactly 4 times the links, each as long.
    return "".join(f"[p{i:07d}](/p{i:07d}) [t{i:07d}](/t{i:07d}.txt)\n" for i in range(n // 50))


# name: (body of about n characters, the smaller n). The larger body is 4n: at most the 5 MiB cap,
# since what a bigger one would cost is never paid.
HOSTILE: dict[str, tuple[Callable[[int], str], int]] = {
    "open brackets": (lambda n: "[" * n, 1_250_000),
    "nested brackets": (lambda n: "[" * (n // 2) + "]" * (n // 2) + "(/x)", 1_250_000),
    "unclosed links": (lambda n: "[a](/x" * (n // 6), 1_250_000),
    "whitespace after url": (lambda n: "[a](/x" + " " * n, 1_250_000),
    "open angle": (lambda n: "[a](<" + "x" * n, 1_250_000),
    "one huge line of one link": (lambda n: "[a](/p)" * (n // 7), 1_250_000),
    "title runs": (lambda n: ("[" + "t" * 999) * (n // 1000), 1_250_000),
    "distinct links and aggregates": (_distinct_links, 100_000),
}


@pytest.mark.scaling
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_reading_is_linear_on_hostile_bodies(name: str) -> None:
    make, n = HOSTILE[name]
    assert_linear(make, _scan, n)


def test_hostile_bodies_yield_what_they_hold() -> None:
    """The bodies above are read, not just survived: the one real link is found."""
    assert _scan("[" * 10_000 + "[ok](/ok)") == 1
    assert _scan("[a](/p)" * 10_000) == 1
    assert _scan(_distinct_links(5_000)) == 200

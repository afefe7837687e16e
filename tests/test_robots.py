from __future__ import annotations

import pytest

from sitescout._robots import parse_robots, sitemap_lines

BASE = "https://x.com/robots.txt"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Sitemap: https://x.com/a.xml", ["https://x.com/a.xml"], id="plain"),
        pytest.param("SITEMAP: /a.xml", ["https://x.com/a.xml"], id="upper-relative"),
        pytest.param("sItEmAp:/a.xml", ["https://x.com/a.xml"], id="mixed-no-space"),
        pytest.param("Sitemap: a.xml\nSitemap: /a.xml", ["https://x.com/a.xml"], id="duplicate"),
        pytest.param(
            "Sitemap: /b.xml\nUser-agent: *\nSitemap: /a.xml",
            ["https://x.com/b.xml", "https://x.com/a.xml"],
            id="order-kept",
        ),
        pytest.param("Sitemap: /a.xml # main", ["https://x.com/a.xml"], id="comment"),
        pytest.param("Sitemap:\nSitemap: mailto:x@y", [], id="unusable"),
        pytest.param("Disallow: /sitemap.xml", [], id="not-a-sitemap-line"),
        pytest.param("\ufeffSitemap: /a.xml", ["https://x.com/a.xml"], id="bom"),
    ],
)
def test_sitemap_lines(text: str, expected: list[str]) -> None:
    assert sitemap_lines(text, BASE) == expected


def test_rules_and_crawl_delay_for_our_agent() -> None:
    text = (
        "User-agent: sitescout\nDisallow: /private/\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /\n"
    )
    robots = parse_robots(text, BASE, "sitescout/0.1.0 (+https://pypi.org/project/sitescout/)")
    assert robots.crawl_delay == 2.0
    assert robots.allowed("https://x.com/docs/")
    assert not robots.allowed("https://x.com/private/x")
    other = parse_robots(text, BASE, "otherbot/1.0")
    assert not other.allowed("https://x.com/docs/")


def test_garbage_never_raises() -> None:
    robots = parse_robots("\x00\xff garbage :::\nSitemap", BASE, "sitescout")
    assert robots.sitemaps == []

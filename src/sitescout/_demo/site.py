"""A small but realistic site, built in memory: pages, junk, two locales, a nested sitemap index
with a gzipped shard and relative `<loc>` values, robots.txt pointing at it all."""

from __future__ import annotations

import gzip
from datetime import date, timedelta

NS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)

PAGES: dict[str, tuple[str, str]] = {
    "/": ("Acme Analytics", "<h1>Acme Analytics</h1><p>Dashboards for people who ship.</p>"),
    "/about/": ("About Acme", "<h1>About us</h1><p>A small team since 2014.</p>"),
    "/pricing/": ("Pricing", "<h1>Pricing</h1><table><tr><td>Free</td><td>Pro</td></tr></table>"),
    "/contact/": (
        "Contact",
        '<h1>Contact</h1><form method="post"><input name="email"><textarea name="m"></textarea>'
        "<button>Send</button></form>",
    ),
    "/blog/": ("Blog", "<h1>Blog</h1><ul>{posts}</ul>"),
    "/customers/": ("Customers", "<h1>Customers</h1><ul><li>Globex</li><li>Initech</li></ul>"),
    "/data/": (
        "Live data",
        '<h1>Live data</h1><iframe src="https://example.org/embed/chart"></iframe>',
    ),
    "/docs/": ("Docs", "<h1>Documentation</h1><p>Start here.</p>"),
    "/docs/getting-started/": ("Getting started", "<h1>Getting started</h1><h2>Install</h2>"),
    "/docs/api/": ("API reference", "<h1>API</h1><h2>Endpoints</h2><h3>GET /v1/x</h3>"),
    "/account/settings/": ("Settings", "<h1>Account settings</h1><p>Sign in first.</p>"),
    "/test/": ("Test", "<h1>test</h1>"),
    "/sample-page/": ("Sample Page", "<h1>Sample Page</h1>"),
    "/holiday1/": ("Holiday sale", "<h1>Holiday!</h1>"),
    "/fr/": ("Acme Analytics (FR)", "<h1>Acme Analytics</h1><p>Tableaux de bord.</p>"),
    "/fr/a-propos/": ("À propos", "<h1>À propos</h1>"),
    "/fr/tarifs/": ("Tarifs", "<h1>Tarifs</h1>"),
}
FR = {"/": "/fr/", "/about/": "/fr/a-propos/", "/pricing/": "/fr/tarifs/"}
POSTS = 40
START = date(2024, 1, 8)


def _post(i: int) -> tuple[str, str]:
    day = START + timedelta(days=7 * i)
    return f"/blog/{day:%Y/%m/%d}/post-{i + 1}/", day.isoformat()


def _html(title: str, body: str) -> bytes:
    nav = '<nav><a href="/">Home</a> <a href="/about/">About</a> <a href="/blog/">Blog</a></nav>'
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title>'
        f'<meta name="description" content="{title} - Acme"></head>'
        f"<body>{nav}<main>{body}</main></body></html>"
    ).encode()


def _url(loc: str, lastmod: str, priority: str | None = None, alternates: str = "") -> str:
    prio = f"<priority>{priority}</priority>" if priority else ""
    return f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod>{prio}{alternates}</url>"


def _alternates(path: str) -> str:
    fr = FR.get(path)
    if fr is None:
        return ""
    return (
        f'<xhtml:link rel="alternate" hreflang="en" href="{path}"/>'
        f'<xhtml:link rel="alternate" hreflang="fr" href="{fr}"/>'
    )


def build() -> dict[str, tuple[str, bytes]]:
    """Path → (content type, body) for every resource of the sample site."""
    files: dict[str, tuple[str, bytes]] = {}
    posts = [_post(i) for i in range(POSTS)]
    for path, (title, body) in PAGES.items():
        links = "".join(f'<li><a href="{p}">Post</a></li>' for p, _ in posts[:10])
        files[path] = ("text/html; charset=utf-8", _html(title, body.replace("{posts}", links)))
    for i, (path, _day) in enumerate(posts):
        text = "<p>" + ("Long-form writing about dashboards. " * 40) + "</p>"
        files[path] = ("text/html; charset=utf-8", _html(f"Post {i + 1}", f"<h1>Post</h1>{text}"))
    en = [p for p in PAGES if not p.startswith("/fr/")]
    # Relative locs on purpose: they must resolve against /sitemaps/pages.xml's own URL.
    pages = "".join(
        _url(p if p != "/" else "/", "2024-06-01", "1.0" if p == "/" else "0.8", _alternates(p))
        for p in en
    )
    files["/sitemaps/pages.xml"] = ("application/xml", f"<urlset {NS}>{pages}</urlset>".encode())
    blog = "".join(_url(p, d + "T09:00:00Z") for p, d in posts)
    files["/sitemaps/blog.xml.gz"] = (
        "application/octet-stream",
        gzip.compress(f"<urlset {NS}>{blog}</urlset>".encode()),
    )
    fr = "".join(_url(p, "2024-06-01") for p in PAGES if p.startswith("/fr/"))
    files["/fr/sitemap.xml"] = ("application/xml", f"<urlset {NS}>{fr}</urlset>".encode())
    index = "".join(
        f"<sitemap><loc>{loc}</loc></sitemap>"
        for loc in ("/sitemaps/pages.xml", "/sitemaps/blog.xml.gz", "/fr/sitemap.xml")
    )
    files["/sitemap_index.xml"] = (
        "application/xml",
        f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex {NS}>{index}</sitemapindex>'.encode(),
    )
    files["/robots.txt"] = (
        "text/plain",
        b"User-agent: *\nDisallow: /account/\n\nSitemap: /sitemap_index.xml\n",
    )
    return files

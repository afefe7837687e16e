from __future__ import annotations

import sitescout


def test_public_names_are_exported_and_exist() -> None:
    for name in sitescout.__all__:
        assert hasattr(sitescout, name), name
    assert {"walk", "iter_urls", "discover_sitemaps", "Entry", "WalkReport"} <= set(
        sitescout.__all__
    )


def test_exception_tree() -> None:
    assert issubclass(sitescout.HTTPError, sitescout.FetchError)
    assert issubclass(sitescout.FetchError, sitescout.SitescoutError)
    assert issubclass(sitescout.UsageError, ValueError)
    err = sitescout.HTTPError("HTTP 404", url="https://x.com/a", status=404)
    assert err.status == 404 and "https://x.com/a" in str(err)


def test_discover_sitemaps_reports_source() -> None:
    from .server import Site, urlset

    site = Site().start()
    try:
        site.add("/sitemap.xml", urlset([f"{site.url}/a"]))
        found = sitescout.discover_sitemaps(site.url + "/")
        assert found.source == "sitemap.xml"
        assert found.sitemaps == [f"{site.url}/sitemap.xml"]
        site.add("/robots.txt", "Sitemap: /s1.xml\nSitemap: /s2.xml\n", Content_Type="text/plain")
        found = sitescout.discover_sitemaps(site.url + "/")
        assert found.source == "robots.txt"
        assert found.sitemaps == [f"{site.url}/s1.xml", f"{site.url}/s2.xml"]
    finally:
        site.stop()

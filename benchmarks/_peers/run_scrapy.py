"""Scrapy: a `SitemapSpider` started on robots.txt, run by `CrawlerProcess` with default settings.

Usage (in the peers' virtualenv): run_scrapy.py SITE_URL OUTPUT — writes the page URLs one per
line to OUTPUT and prints a JSON summary; `peers.py` counts the distinct URLs in OUTPUT.

A SitemapSpider turns every page URL into a `Request` for its callback, which Scrapy would then
download. Listing a site must not fetch its pages, so the spider keeps Scrapy's own sitemap
handling (robots.txt, gzip, index following, the duplicate-request filter, one `Request` built
per page URL) and writes each page request's URL instead of scheduling it. That makes Scrapy
leaner than a real crawl, which would also hold those requests in its scheduler.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from scrapy import Request
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from scrapy.spiders import SitemapSpider


class Inventory(SitemapSpider):
    name = "inventory"

    def __init__(self, site_url: str, output: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sitemap_urls = [site_url.rstrip("/") + "/robots.txt"]
        self.out = open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed in closed()
        self.lines = 0
        self.sitemaps = 0

    def _parse_sitemap(self, response: Response) -> Iterator[Request]:
        self.sitemaps += 1
        for request in super()._parse_sitemap(response):
            if request.callback == self._parse_sitemap:
                yield request  # a child sitemap: Scrapy fetches it (at most once)
            else:
                self.out.write(request.url + "\n")
                self.lines += 1

    def parse(self, response: Response, **kwargs: Any) -> None:
        raise AssertionError("page requests are never scheduled")

    def closed(self, reason: str) -> None:
        self.out.close()
        print(json.dumps({"lines": self.lines, "responses": self.sitemaps, "reason": reason}))


def main(site_url: str, output: str) -> None:
    process = CrawlerProcess(
        settings={"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False},
        install_root_handler=True,
    )
    process.crawl(Inventory, site_url=site_url, output=output)
    process.start()


if __name__ == "__main__":
    main(*sys.argv[1:3])

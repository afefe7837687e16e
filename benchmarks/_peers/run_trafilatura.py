"""trafilatura: `sitemaps.sitemap_search(site)`, its documented use, with `sleep_time=0`.

Usage (in the peers' virtualenv): run_trafilatura.py SITE_URL OUTPUT [SLEEP_S] — writes the
returned URLs one per line to OUTPUT and prints a JSON summary; `peers.py` counts the distinct
URLs in OUTPUT.

Three departures from the defaults, each needed to measure it on a loopback test site and none
touching its sitemap handling:
- the pause between two sitemap fetches (2 s by default, politeness) is 0, as no other tool here
  waits between requests (SLEEP_S sets another);
- its `SSRF_PROTECTION` setting is off: on, it refuses 127.0.0.1 (its documented config switch);
- courlan's domain regex, which accepts an IPv4 host only without a port (a real site has
  neither), also takes `127.0.0.1:PORT`: without that every URL here is "invalid". The widened
  regex is otherwise the same and runs as often as before.
"""

from __future__ import annotations

import json
import logging
import re
import sys

import courlan.urlutils
from trafilatura import sitemaps
from trafilatura.settings import use_config

_IPV4 = r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|"


def allow_ipv4_with_port() -> None:
    pattern = courlan.urlutils.DOMAIN_REGEX.pattern
    if _IPV4 not in pattern:
        raise SystemExit("courlan's DOMAIN_REGEX changed; update run_trafilatura.py")
    wider = pattern.replace(_IPV4, _IPV4[:-1] + r"(?::\d{1,5})?|")
    courlan.urlutils.DOMAIN_REGEX = re.compile(wider)


def main(site_url: str, output: str, sleep_s: str = "0") -> None:
    logging.basicConfig(level=logging.ERROR)  # it warns once per URL it drops
    allow_ipv4_with_port()
    config = use_config()
    config.set("DEFAULT", "SSRF_PROTECTION", "off")
    urls = sitemaps.sitemap_search(site_url, sleep_time=float(sleep_s), config=config)
    with open(output, "w", encoding="utf-8") as out:
        out.writelines(f"{url}\n" for url in urls)
    print(json.dumps({"lines": len(urls)}))


if __name__ == "__main__":
    main(*sys.argv[1:4])

"""ultimate-sitemap-parser: `sitemap_tree_for_homepage(site).all_pages()`, its documented use.

Usage (in the peers' virtualenv): run_usp.py SITE_URL OUTPUT — writes one page URL per line to
OUTPUT and prints a JSON summary; `peers.py` counts the distinct URLs in OUTPUT.
Defaults throughout: robots.txt plus the library's list of well-known sitemap paths.
"""

from __future__ import annotations

import json
import logging
import sys

from usp.tree import sitemap_tree_for_homepage


def main(site_url: str, output: str) -> None:
    logging.basicConfig(level=logging.WARNING)
    tree = sitemap_tree_for_homepage(site_url)
    lines = 0
    with open(output, "w", encoding="utf-8") as out:
        for page in tree.all_pages():
            out.write(page.url + "\n")
            lines += 1
    print(json.dumps({"lines": lines}))


if __name__ == "__main__":
    main(*sys.argv[1:3])

"""advertools: `sitemap_to_df(robots.txt URL)`, its documented use (recursive, 8 threads).

Usage (in the peers' virtualenv): run_advertools.py SITE_URL OUTPUT — writes the DataFrame's
`loc` column, one URL per line, to OUTPUT and prints a JSON summary; `peers.py` counts the
distinct URLs in OUTPUT.
"""

from __future__ import annotations

import json
import logging
import sys

import advertools as adv


def main(site_url: str, output: str) -> None:
    logging.basicConfig(level=logging.WARNING)
    df = adv.sitemap_to_df(site_url.rstrip("/") + "/robots.txt")
    locs = df["loc"].dropna() if "loc" in df else []
    errors = int(df["errors"].notna().sum()) if "errors" in df else 0
    with open(output, "w", encoding="utf-8") as out:
        out.writelines(f"{loc}\n" for loc in locs)
    print(json.dumps({"lines": len(locs), "rows": len(df), "error_rows": errors}))


if __name__ == "__main__":
    main(*sys.argv[1:3])

"""Throughput of the per-URL rules against bare `urllib.parse.urlsplit` (the floor).

    .venv/bin/python benchmarks/urls.py [--count N] [--seed S] [--runs R]
    .venv/bin/python benchmarks/urls.py --smoke     # 2,000 URLs, one run: does it still work?

Generates realistic sitemap URLs deterministically (mostly clean https URLs of varied shapes, about
10% with query strings including tracking parameters, some uppercase hosts, escapes, fragments and
default ports), then times, best of 3, over the same list:

* `urlsplit` - the floor the issue measures against. In CPython 3.11+ it sits behind an
  `lru_cache(128)`, which every distinct URL misses; `urlsplit (uncached)` calls the function under
  the cache too, for reference.
* `normalize_url`
* `normalize_url` + `classify`

`--smoke` times the same on 2,000 URLs of the same generator, once: a fraction of a second, for
the test suite (`tests/test_benchmarks.py`); its rates mean little at that size.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from sitescout._urls import classify, normalize_url

SITE = "https://www.example.com/"
SMOKE_COUNT = 2_000
WORDS = (
    "guide intro pricing about team careers news press release product widget gadget install "
    "configure reference tutorial overview security privacy terms faq support contact blog post "
    "update launch summer sale review compare best practices getting started api cli sdk"
).split()
LOCALES = ("en-us", "de-de", "fr-fr", "ja-jp", "pt-br")
QUERIES = (
    "utm_source=newsletter&utm_medium=email&utm_campaign=launch",
    "id={n}",
    "page={n}",
    "ref=twitter",
    "q=blue+widgets&sort=price",
    "view=net-8.0",
    "gclid=Cj0KCQjw{n}&product={n}",
    "fbclid=IwAR{n}",
    "lang=de&mc_cid={n}&mc_eid=abc",
    "variant=red&size=m",
)


def _slug(rng: random.Random, words: int) -> str:
    return "-".join(rng.choice(WORDS) for _ in range(words))


def _path(rng: random.Random, n: int) -> str:
    shape = rng.randrange(6)
    if shape == 0:
        return f"/blog/{rng.randrange(2015, 2026)}/{rng.randrange(1, 13):02d}/{_slug(rng, 4)}-{n}/"
    if shape == 1:
        locale = rng.choice(LOCALES)
        return f"/{locale}/docs/{_slug(rng, 2)}/{_slug(rng, 3)}-{n}"
    if shape == 2:
        return f"/products/{_slug(rng, 2)}-{n}"
    if shape == 3:
        return f"/{_slug(rng, 1)}/{_slug(rng, 2)}/{n}/"
    if shape == 4:
        return f"/news/{_slug(rng, 5)}-{n}.html"
    return f"/{_slug(rng, 2)}-{n}/"


def make_urls(count: int, seed: int = 1) -> list[str]:
    """`count` distinct sitemap-like URLs, the same for the same seed."""
    rng = random.Random(seed)
    urls = []
    for n in range(count):
        host = "www.example.com"
        roll = rng.random()
        if roll < 0.03:
            host = "WWW.Example.COM"
        elif roll < 0.04:
            host = "www.example.com:443"
        path = _path(rng, n)
        roll = rng.random()
        if roll < 0.02:
            path = path.replace("-", "%2D", 1)
        elif roll < 0.03:
            path += "caf%c3%a9"
        elif roll < 0.04:
            path += "#section-2"
        if rng.random() < 0.10:
            path += "?" + rng.choice(QUERIES).format(n=n)
        urls.append(f"https://{host}{path}")
    return urls


def best_of(runs: int, function: Callable[[str], object], urls: list[str]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for url in urls:
            function(url)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--count {SMOKE_COUNT:,} --runs 1)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.count, args.runs = SMOKE_COUNT, 1
    if args.count < 1 or args.runs < 1:
        parser.error("--count and --runs must be at least 1")

    urls = make_urls(args.count, args.seed)
    changed = sum(normalize_url(url) != url for url in urls)
    print(f"{len(urls):,} URLs, {changed:,} ({changed / len(urls):.1%}) changed by normalization")

    def normalize_and_classify(url: str) -> object:
        return classify(normalize_url(url), SITE)

    candidates: list[tuple[str, Callable[[str], object]]] = [
        ("urlsplit", urlsplit),
        ("urlsplit (uncached)", urlsplit.__wrapped__),  # type: ignore[attr-defined]
        ("normalize_url", normalize_url),
        ("normalize_url + classify", normalize_and_classify),
    ]
    floor = 0.0
    for name, function in candidates:
        seconds = best_of(args.runs, function, urls)
        rate = len(urls) / seconds
        floor = floor or rate
        print(f"{name:<26} {rate:>12,.0f} URLs/s   {rate / floor:5.2f}x urlsplit")


if __name__ == "__main__":
    main()

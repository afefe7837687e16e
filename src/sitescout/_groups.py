"""Streaming path groups (§9): the shape of a site from its walk, in bounded memory.

`group_by_path_prefix(walk)` consumes the walk's batches and, once the stream ends, yields one
`PathGroup` per first path segment (`/blog/x` → `/blog/*`; the home page, with or without its
slash or a query, → `/`), largest first, with an exact count and at most 10 sample URLs each.
Groups of fewer than 3 URLs are merged into `other`, yielded last, together with the URLs that
cannot be read as absolute http(s) URLs. `depth=2` groups by the first two segments
(`/docs/api/*`) for sites where one top segment holds everything; a URL with fewer segments
groups under those it has (`/docs` → `/docs/*`).

The samples of a group are its shortest URLs (ties in text order), so they do not depend on the
order in which concurrent documents arrive, and the first is usually the section's own page
(`/blog/` before `/blog/2024/01/08/post-1/`).

Memory is one count and at most 10 samples per group, never the URLs themselves. Sites with
huge numbers of distinct first segments (a million root-level slugs) would still grow the
group table, so it is capped (`max_groups`, 10,000 by default): once full, URLs of prefixes
not seen before are counted in `other`, so counts still add up to the URLs consumed.
"""

from __future__ import annotations

import logging
from bisect import insort
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from dataclasses import dataclass

from . import _core
from ._core import Batch
from ._errors import UsageError
from ._models import Entry
from ._rules import MIN_GROUP_SIZE

__all__ = [
    "MIN_GROUP_SIZE",
    "OTHER",
    "ROOT",
    "PathGroup",
    "PathGrouper",
    "group_by_path_prefix",
    "group_key",
    "keep_shortest",
    "split_groups",
]

log = logging.getLogger(__name__)

ROOT = "/"
OTHER = "other"
MAX_SAMPLES = 10
MAX_GROUPS = 10_000


@dataclass(frozen=True, slots=True)
class PathGroup:
    """URLs sharing a path prefix: `prefix` is `/blog/*`, `/` or `other`."""

    prefix: str
    count: int
    samples: tuple[str, ...]


# The rule lives in the core (rust/src/groups.rs), for one URL here and for a whole batch in
# `Batch.path_groups`: `/seg/*` of the first `depth` non-empty segments of an absolute http(s)
# URL as `str.strip()` and `urlsplit` read it, `/` when it has none, None when it is not one
# (it belongs to `other`). Pure; never raises for a str and a `depth` >= 0.
group_key = _core.group_key


def split_groups(counts: Mapping[str, int]) -> tuple[list[str], list[str]]:
    """The groups shown on their own, largest first (then by prefix), and the ones of fewer than
    `MIN_GROUP_SIZE` URLs, in the order given, that `other` takes in."""
    big = sorted(
        (k for k, n in counts.items() if n >= MIN_GROUP_SIZE), key=lambda k: (-counts[k], k)
    )
    return big, [k for k, n in counts.items() if n < MIN_GROUP_SIZE]


def sample_order(url: str) -> tuple[int, str]:
    """Which URLs a group shows first: shorter, then by text."""
    return (len(url), url)


def _fewest(urls: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(urls), key=sample_order)[:MAX_SAMPLES])


def keep_shortest(samples: list[str], url: str, limit: int) -> None:
    """Take `url` into `samples` (kept in `sample_order`, no URL twice) if it is among the
    `limit` first in that order; the one it displaces goes."""
    if len(samples) >= limit:
        if sample_order(url) >= sample_order(samples[-1]) or url in samples:
            return
        samples.pop()
    elif url in samples:
        return
    insort(samples, url, key=sample_order)


class _Group:
    __slots__ = ("count", "samples")

    def __init__(self) -> None:
        self.count = 0
        self.samples: list[str] = []  # sorted by sample_order, at most MAX_SAMPLES

    def add(self, url: str) -> None:
        self.count += 1
        self.take(url)

    def merge(self, count: int, shortest: Iterable[str]) -> None:
        """Count `count` URLs of which `shortest` are the shortest (in `sample_order`)."""
        self.count += count
        for url in shortest:
            self.take(url)

    def take(self, url: str) -> None:
        samples = self.samples
        # Once full, most URLs are longer than the longest sample: refused on length alone.
        if len(samples) < MAX_SAMPLES or len(url) <= len(samples[-1]):
            keep_shortest(samples, url, MAX_SAMPLES)


class PathGrouper:
    """The accumulator behind `group_by_path_prefix`, for callers that hold URLs, not a stream."""

    def __init__(self, depth: int = 1, *, max_groups: int = MAX_GROUPS) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise UsageError(f"depth must be a whole number >= 1, got {depth!r}")
        if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
            raise UsageError(f"max_groups must be a whole number >= 1, got {max_groups!r}")
        self.depth = depth
        self.max_groups = max_groups
        self.total = 0
        self._groups: dict[str, _Group] = {}
        self._other = _Group()  # unparseable URLs, and new prefixes once the table is full
        self._overflowed = False

    def add(self, url: str) -> None:
        self.total += 1
        self._group(group_key(url, self.depth)).add(url)

    def add_all(self, urls: Iterable[str]) -> None:
        for url in urls:
            self.add(url)

    def add_batch(self, batch: Batch) -> None:
        """Every row of a walk's native batch, counted per group in the core: the same groups
        and samples as `add` of each URL in turn, in time per group rather than per URL."""
        for key, count, shortest in batch.path_groups(self.depth, MAX_SAMPLES):
            self.total += count
            self._group(key).merge(count, shortest)

    def _group(self, key: str | None) -> _Group:
        group = None if key is None else self._groups.get(key)
        if group is None and key is not None:
            if len(self._groups) < self.max_groups:
                group = self._groups[key] = _Group()
            elif not self._overflowed:
                self._overflowed = True
                log.warning(
                    "more than %d path groups: URLs of further prefixes are counted in %r",
                    self.max_groups,
                    OTHER,
                )
        return group or self._other

    def groups(self) -> list[PathGroup]:
        """Groups of at least 3 URLs by count (largest first, then by prefix), `other` last."""
        big, small = split_groups({k: g.count for k, g in self._groups.items()})
        out = [PathGroup(k, self._groups[k].count, tuple(self._groups[k].samples)) for k in big]
        merged = [self._other, *(self._groups[k] for k in small)]
        other_count = sum(g.count for g in merged)
        if other_count:
            samples = _fewest(url for g in merged for url in g.samples)
            out.append(PathGroup(OTHER, other_count, samples))
        return out


def group_by_path_prefix(
    batches: AsyncIterable[Batch | Iterable[Entry | str]],
    depth: int = 1,
    *,
    max_groups: int = MAX_GROUPS,
) -> AsyncIterator[PathGroup]:
    """Consume a stream of batches (a `walk()`, or its `batches()`, which the core groups without
    an object per URL; entries, URL strings or native `Batch`es) and yield its path groups once
    the stream ends: largest first, `other` last. Counts are exact; memory is bounded by groups
    × 10 samples. Raises `UsageError` at once for `depth` < 1."""
    return _grouped(batches, PathGrouper(depth, max_groups=max_groups))


async def _grouped(
    batches: AsyncIterable[Batch | Iterable[Entry | str]], grouper: PathGrouper
) -> AsyncIterator[PathGroup]:
    add = grouper.add
    async for batch in batches:
        if isinstance(batch, Batch):
            grouper.add_batch(batch)
            continue
        for item in batch:
            add(item if isinstance(item, str) else item.url)
    for group in grouper.groups():
        yield group

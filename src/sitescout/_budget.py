"""Walk budgets, their warnings, and child ordering under budgets (§5). Pure: no I/O.

The walker owns one `BudgetTracker` per walk (every root and child share it, §5) and asks it
before each sitemap fetch; the tracker only counts and words the warnings. A budget "binds" when
it prevents something — a fetch, a URL, a child sitemap — never merely because a count reached
its limit, so a walk that ends exactly at a limit is not partial.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from sitescout._errors import UsageError
from sitescout._locale import children_locales, locale_matches, readable_path, require_locale
from sitescout._text import plural

__all__ = [
    "BudgetName",
    "BudgetTracker",
    "Budgets",
    "budget_label",
    "order_children",
    "truncation_notice",
]

BudgetName = Literal["max_depth", "max_fetches", "max_bytes", "max_urls", "deadline"]


@dataclass(frozen=True)
class Budgets:
    """The optional limits of one walk; None means unlimited.

    `deadline` is wall-clock seconds from the start of the walk. Every set value must be positive:
    a zero or negative budget is the caller's mistake (UsageError, a ValueError), not a request to
    walk nothing.
    """

    max_depth: int | None = None
    max_fetches: int | None = None
    max_bytes: int | None = None
    max_urls: int | None = None
    deadline: float | None = None

    SAMPLER: ClassVar[Budgets]

    def __post_init__(self) -> None:
        for spec in fields(self):
            _check_limit(spec.name, getattr(self, spec.name))

    @property
    def any_set(self) -> bool:
        """Whether any budget is set (which also switches on priority ordering of children)."""
        return any(getattr(self, spec.name) is not None for spec in fields(self))


def _check_limit(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{name} must be a number, got {value!r}")
    if name != "deadline" and not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    if math.isnan(value) or value <= 0:
        raise UsageError(f"{name} must be positive, got {value!r}")


# The sampler's defaults (§5: `sitescout extract`); `--all` lifts them (`Budgets()`).
Budgets.SAMPLER = Budgets(max_depth=3, max_fetches=20, max_bytes=50 * 1024 * 1024, max_urls=10_000)


class BudgetTracker:
    """Counts one walk's spending against its `Budgets` and words the warnings (§5).

    Not thread-safe: the walker runs on one event loop. `clock` is injectable for tests and
    `start` defaults to the clock's current reading.
    """

    def __init__(
        self,
        budgets: Budgets,
        start: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budgets = budgets
        self._clock = clock
        self.start = clock() if start is None else start
        self.fetches = 0
        self.bytes = 0
        self.dropped_children = 0
        self._hit: list[BudgetName] = []

    @property
    def hit(self) -> list[BudgetName]:
        """The budgets that bound, in the order they first did."""
        return list(self._hit)

    @property
    def partial(self) -> bool:
        """Whether any budget bound, which makes the walk's results partial."""
        return bool(self._hit)

    @property
    def warnings(self) -> list[str]:
        """One warning per budget that bound, in `hit` order.

        Built on each read, so the depth warning always names the total of dropped children
        however many times `drop_children` was called.
        """
        return [self.warning(name) for name in self._hit]

    def try_fetch(self) -> bool:
        """Count one sitemap fetch attempt, or refuse it when a budget is exhausted.

        Call it once per attempt, failed and empty ones included; robots.txt, HTTP retries and
        redirects are not attempts (§5). A refusal records the binding budget.
        """
        reason = self.exhausted_reason()
        if reason is not None:
            self.mark_hit(reason)
            return False
        self.fetches += 1
        return True

    def add_bytes(self, n: int) -> None:
        """Add decoded bytes as they are read.

        Checked by the next `try_fetch`; the walker also stops documents in flight once the
        count is past `max_bytes` (`overshoot` says by how much it went over).
        """
        _check_count("n", n)
        self.bytes += n

    def deadline_left(self) -> float | None:
        """Seconds left before the deadline (never negative); None when there is none."""
        deadline = self.budgets.deadline
        if deadline is None:
            return None
        return max(0.0, deadline - (self._clock() - self.start))

    def depth_allows_children(self, depth: int) -> bool:
        """Whether children of an index at level `depth` (root = 1) may be walked."""
        if depth < 1:
            raise UsageError(f"depth starts at 1 (the root), got {depth}")
        limit = self.budgets.max_depth
        return limit is None or depth < limit

    def drop_children(self, n: int) -> None:
        """Record `n` child sitemaps dropped by `max_depth`; the one depth warning sums them."""
        _check_count("n", n)
        if n:
            self.dropped_children += n
            self.mark_hit("max_depth")

    def exhausted_reason(self) -> BudgetName | None:
        """The budget that would refuse the next fetch, without recording it; None if none.

        Checked in order deadline, max_fetches, max_bytes. `max_urls` is not among them: the
        walker counts kept URLs itself, stops at the limit and marks it with `mark_hit`.
        """
        left = self.deadline_left()
        if left is not None and left <= 0:
            return "deadline"
        limits = self.budgets
        if limits.max_fetches is not None and self.fetches >= limits.max_fetches:
            return "max_fetches"
        if limits.max_bytes is not None and self.bytes >= limits.max_bytes:
            return "max_bytes"
        return None

    def mark_hit(self, name: BudgetName) -> None:
        """Record that `name` bound, e.g. when the walker cancels in-flight fetches at the deadline.

        Idempotent: each budget is recorded, and warned about, once. Raises UsageError for a
        budget that is not set, which cannot bind.
        """
        if getattr(self.budgets, name) is None:
            raise UsageError(f"budget {name} is not set")
        if name not in self._hit:
            self._hit.append(name)

    def warning(self, name: BudgetName) -> str:
        """The warning for one budget, as of now (the depth one counts the children dropped)."""
        limit = getattr(self.budgets, name)
        if name == "deadline":
            return f"{_DEADLINE} ({_seconds(limit)}) reached; {_PARTIAL}"
        label, noun = _LIMIT_WORDS[name]
        dropped = ""
        if name == "max_depth":
            dropped = f"; dropped {plural(self.dropped_children, 'child sitemap')}"
        return f"{label} ({plural(limit, noun)}) reached{dropped}; {_PARTIAL}"

    def overshoot(self) -> int:
        """Bytes read beyond `max_bytes` (documents in flight stop at their next read); 0 when
        the walk stayed within it or has no byte budget."""
        limit = self.budgets.max_bytes
        return 0 if limit is None else max(0, self.bytes - limit)


def budget_label(name: str) -> str:
    """A budget as its warning names it: `Sitemap fetch limit`, `Sitemap walk deadline` (a name
    that is not a budget's is returned as it is)."""
    if name == "deadline":
        return _DEADLINE
    return next((label for budget, (label, _) in _LIMIT_WORDS.items() if budget == name), name)


_PARTIAL = "discovery results are partial."
_DEADLINE = "Sitemap walk deadline"
_LIMIT_WORDS: dict[BudgetName, tuple[str, str]] = {
    "max_depth": ("Sitemap depth limit", "level"),
    "max_fetches": ("Sitemap fetch limit", "document"),
    "max_bytes": ("Sitemap body byte limit", "byte"),
    "max_urls": ("Sitemap URL limit", "URL"),
}


def _check_count(name: str, value: int) -> None:
    if value < 0:
        raise UsageError(f"{name} must not be negative, got {value}")


def _seconds(value: float) -> str:
    # `2 s`, `2.5 s`; `:g` only for deadlines too small for three decimals.
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{text if text != '0' else f'{value:g}'} s"


# Whole filename tokens (§5). Singulars and plurals both, because real shard names use both forms
# (Yoast `post-sitemap.xml`, Shopify `sitemap_blogs_1.xml`, `sitemap_products_1.xml`).
_CONTENT = frozenset(
    {"pages", "page", "content", "posts", "post", "articles", "article", "blog", "blogs"}
)
_DERANKED = frozenset(
    {"partition", "partitions", "image", "images", "video", "videos", "products", "product", "news"}
)
_NAME_TOKEN = re.compile(r"[a-z]+")


def order_children(children: Sequence[str], preferred_locale: str | None) -> list[str]:
    """Children in the fetch order to use when any budget is set (§5).

    Media, product, news and partition shards go last, whatever their locale: a sampler wants
    pages. Before them come the children whose locale matches `preferred_locale` (by
    `locale_matches`; None means no preference; a child's locale is read with its siblings, so
    `/maps/en-gb/part-1.xml` beside `/maps/ko/part-1.xml` is an `en-gb` shard), then
    content-looking names (`pages`, `posts`, `blog`, …), then the rest. Names are read as whole
    tokens of the file name, digits ignored (`post-sitemap2.xml` is a `post` shard). The sort is
    stable: ties keep document order.

    Raises UsageError when `preferred_locale` is given but is not a locale.
    """
    preferred = None if preferred_locale is None else require_locale(preferred_locale)
    locales = children_locales(children)
    ranked = sorted(zip(children, locales, strict=True), key=lambda pair: _rank(pair, preferred))
    return [child for child, _ in ranked]


def _rank(pair: tuple[str, str | None], preferred: str | None) -> tuple[bool, bool, bool]:
    child, locale = pair
    tokens = _name_tokens(child)
    local = preferred is not None and locale is not None and locale_matches(preferred, locale)
    content = not tokens.isdisjoint(_CONTENT)
    # False sorts first: (not de-ranked, locale match, content) is the best key.
    return (not tokens.isdisjoint(_DERANKED), not local, not content)


def _name_tokens(url: str) -> frozenset[str]:
    filename = readable_path(url).rpartition("/")[2].lower()
    return frozenset(_NAME_TOKEN.findall(filename))


def truncation_notice(discovered: int, leaf_sitemaps: int, limit: int) -> str:
    """The §5 notice printed when `max_urls` truncates discovery."""
    found = plural(discovered, "page URL", separators=True)
    leaves = plural(leaf_sitemaps, "leaf sitemap", separators=True)
    kept = plural(limit, "page URL", separators=True)
    return (
        f"Discovered {found} across {leaves}. "
        f"Truncated discovery to the first {kept}; pass --all to lift the limit."
    )

"""The outcome of a selection: `Selection`, its `--json`/crawl-log form, and when to ask (§11.5).

`questions` returns the §11 cases as data; the front end words them (the CLI: `cli/_selection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from .._pagetype import PageType
from .inputs import CapSource, Mode
from .score import RULES, Scored, plain_number

LARGE_RUN: Final = 100  # §11: `--all` above this many pages asks first
MIN_TEMPLATES: Final = 3  # §11: fewer distinct templates than this asks first
SECONDS_PER_PAGE: Final = 2.0  # §11's example: 247 pages, ~8 minutes


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of `select_pages`: every discovered page ends in exactly one list.

    `kept` is in selection order (checklist slots, then score), `cut` in rank order,
    `requires_auth` holds flagged pages not kept, `junk` (url, JUNK.md pattern) and `filtered`
    (url, §8 reason) the removed ones. `discovered` counts pages: kept + cut + requires_auth +
    junk (the `filtered` non-pages are not pages; a `--single` URL the sitemap lacked is kept
    on top). `templates` are the distinct page types among the pages that could be kept.
    """

    mode: Mode
    cap: int | None
    cap_source: CapSource
    kept: tuple[Scored, ...]
    cut: tuple[Scored, ...]
    requires_auth: tuple[Scored, ...] = ()
    junk: tuple[tuple[str, str], ...] = ()
    filtered: tuple[tuple[str, str], ...] = ()
    templates: tuple[PageType, ...] = ()
    unmatched: tuple[str, ...] = ()
    discovered: int = 0

    @property
    def capped_at(self) -> int | None:
        """How many pages were kept when the cap cut any, else None (§12 `cappedAt`)."""
        return len(self.kept) if self.mode == "cap" and self.cut else None

    def to_dict(self) -> dict[str, object]:
        """The `--json` summary, and the selection part of the crawl log's `discovery` (§12)."""
        return {
            "discoveredCount": self.discovered,
            "filteredCount": len(self.filtered) + len(self.junk),
            "filtered": [{"url": url, "reason": reason} for url, reason in self.filtered],
            "filteredAsJunk": [{"url": url, "pattern": pattern} for url, pattern in self.junk],
            "requiresAuth": [item.url for item in self.requires_auth],
            "mode": self.mode,
            "cap": self.cap,
            "capSource": self.cap_source,
            "cappedAt": self.capped_at,
            "templates": list(self.templates),
            "kept": [item.to_dict() for item in self.kept],
            "cut": [item.to_dict() for item in self.cut],
            "unmatched": list(self.unmatched),
            "scores": self.scores_dict(),
        }

    def scores_dict(self) -> dict[str, object]:
        """The crawl log's `scores`: the rule names, and each scored URL's breakdown.

        Junk and §8-filtered URLs are not scored: they carry their pattern/reason instead.
        """
        scored = (*self.kept, *self.cut, *self.requires_auth)
        return {
            "rules": dict(RULES),
            "urls": {
                item.url: {rule: plain_number(points) for rule, points in item.breakdown}
                for item in scored
            },
        }


@dataclass(frozen=True, slots=True)
class LargeRun:
    """§11: `--all` selects `pages`, more than `limit`; fetching takes about `seconds`."""

    pages: int
    limit: int
    seconds: float
    kind: Literal["large-run"] = "large-run"


@dataclass(frozen=True, slots=True)
class FewTemplates:
    """§11: the pages that could be kept show fewer than `MIN_TEMPLATES` page types."""

    templates: tuple[PageType, ...]
    kind: Literal["few-templates"] = "few-templates"


# A reason to ask once before fetching; the front end words it (the CLI: `cli/_selection`).
Question = LargeRun | FewTemplates


def questions(
    selection: Selection,
    *,
    large_run: int = LARGE_RUN,
    seconds_per_page: float = SECONDS_PER_PAGE,
) -> tuple[Question, ...]:
    """The §11 cases that ask once: `--all` over `large_run` pages, or fewer than 3 templates.

    Pages the user picked (`--pages`, `--single`) never ask about templates: they chose.
    """
    found: list[Question] = []
    count = len(selection.kept)
    if selection.mode == "all" and count > large_run:
        found.append(LargeRun(count, large_run, count * seconds_per_page))
    if selection.mode in ("cap", "all") and len(selection.templates) < MIN_TEMPLATES:
        found.append(FewTemplates(selection.templates))
    return tuple(found)

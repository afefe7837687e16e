"""The records a diff gives: one `Change` per URL that differs, the counts, when two lastmods
are the same, and the changes tallied per path group (the grouping `sitescout groups` uses)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .._errors import UsageError
from .._groups import MAX_GROUPS, OTHER, group_key, keep_shortest
from .._since import lastmod_datetime

log = logging.getLogger(__package__)

ChangeKind = Literal["added", "removed", "changed"]
ADDED: ChangeKind = "added"
REMOVED: ChangeKind = "removed"
CHANGED: ChangeKind = "changed"


@dataclass(frozen=True, slots=True)
class Change:
    """One URL that differs between two inventories.

    `change` is `added` (only in the new inventory), `removed` (only in the old one) or `changed`
    (in both, with another lastmod); `old_lastmod` and `new_lastmod` are the lastmods as the
    files wrote them, None where a side has none (or no row)."""

    url: str
    change: ChangeKind
    old_lastmod: str | None
    new_lastmod: str | None


@dataclass(slots=True)
class DiffCounts:
    """What a diff found: URLs by outcome, and the duplicate rows of each inventory (a URL listed
    again; the last row counts)."""

    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    old_duplicates: int = 0
    new_duplicates: int = 0

    @property
    def changes(self) -> int:
        return self.added + self.removed + self.changed


def same_lastmod(old: str | None, new: str | None) -> bool:
    """Whether two lastmods say the same: equal texts, or dates naming the same instant."""
    if old == new:
        return True
    if old is None or new is None:
        return False
    before, after = lastmod_datetime(old), lastmod_datetime(new)
    if before is None or after is None:
        return old.strip() == new.strip()
    return before == after


# -- per path group, for a summary ------------------------------------------------------------

EXAMPLES = 3  # URLs kept per group and kind of change


@dataclass(frozen=True, slots=True)
class GroupChanges:
    """The changes of one path group (`group_key`'s: `/blog/*`, `/`, or `other`): counts per
    kind, and the first few URLs of each (shortest first, then in text order)."""

    prefix: str
    added: int
    removed: int
    changed: int
    examples: Mapping[ChangeKind, tuple[str, ...]]

    @property
    def total(self) -> int:
        return self.added + self.removed + self.changed


@dataclass(slots=True)
class Tally:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    examples: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def add(self, change: Change) -> None:
        self.counts[change.change] += 1
        keep_shortest(self.examples[change.change], change.url, EXAMPLES)


KINDS: tuple[ChangeKind, ...] = (ADDED, REMOVED, CHANGED)


class ChangeGroups:
    """Changes counted per path group, the grouping of `sitescout groups` (`group_key` at
    `depth`). Memory is one tally per group; past `max_groups` groups, changes of new prefixes
    are counted in `other`, as URLs that are not http(s) are."""

    def __init__(self, depth: int = 1, *, max_groups: int = MAX_GROUPS) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise UsageError(f"depth must be a whole number >= 1, got {depth!r}")
        self.depth = depth
        self.max_groups = max_groups
        self._groups: dict[str, Tally] = {}
        self._other = Tally()
        self._full = False

    def add(self, change: Change) -> None:
        key = group_key(change.url, self.depth)
        tally = None if key is None else self._groups.get(key)
        if tally is None and key is not None:
            if len(self._groups) < self.max_groups:
                tally = self._groups[key] = Tally()
            elif not self._full:
                self._full = True
                log.warning(
                    "more than %d path groups changed: changes under further prefixes are "
                    "counted in %r",
                    self.max_groups,
                    OTHER,
                )
        (tally or self._other).add(change)

    def groups(self) -> list[GroupChanges]:
        """Groups with changes, most changes first (then by prefix); `other` last."""
        out = [group_changes(prefix, tally) for prefix, tally in self._groups.items()]
        out.sort(key=lambda g: (-g.total, g.prefix))
        if any(self._other.counts.values()):
            out.append(group_changes(OTHER, self._other))
        return out


def group_changes(prefix: str, tally: Tally) -> GroupChanges:
    examples = {kind: tuple(tally.examples[kind]) for kind in KINDS}
    return GroupChanges(
        prefix, tally.counts[ADDED], tally.counts[REMOVED], tally.counts[CHANGED], examples
    )

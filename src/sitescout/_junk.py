"""The junk-page filter of §8 (`shared/JUNK.md`). Pure: no I/O.

Patterns match the URL path only, case-insensitively. Two rows depend on the whole discovered set,
so `junk_filter` takes all URLs at once (the sampler's thousands, not the 10M inventory):

* `-2`/`-3`/`-4` copies are junk only when the same path without the suffix was also discovered
  (trailing slashes ignored when comparing: `/about-2/` is a copy of `/about`).
* numbered one-offs (`/promo1/`) are junk only when at least three numbered siblings exist: same
  parent path, same alphabetic prefix, three distinct numbers counting the URL itself.

The rows are `_rules.JUNK_ROWS`, written as in JUNK.md's table. A row written with a trailing `/`
also matches at the end of the path (`/test-content` too), since normalized URLs often have none.
Each removed URL is recorded with its row's pattern as written there, so a user can look it up.

Never junk, checked before any pattern: paths ending in a pagination form (`/page-2/`,
`/page/2/`: the pagination filter owns those), yearly and monthly archive pages (`/year-2024/`,
`/2024/`, `/2024-05/`; no other prefix than `year-`/`archive-` counts, so `/test-2024/` is still a
test page), and anything named in `pages`, given as a path (`/about/`), a URL, or a §11 slug
(`about`, `blog__post-one`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ._rules import JUNK_ROWS, PAGINATION_FORM, YEARLY_ARCHIVE, JunkRow, path_regex, row_core
from ._urls import slugify, url_path

__all__ = ["JunkResult", "format_junk_notice", "junk_filter"]


@dataclass(frozen=True, slots=True)
class JunkResult:
    """URLs the filter kept, and the ones it removed with the pattern that removed each."""

    kept: list[str] = field(default_factory=list)
    junk: list[tuple[str, str]] = field(default_factory=list)


# (pattern as written in JUNK.md, what it matches): the rows without a check, in table order.
_PLAIN_ROWS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (row.pattern, re.compile(path_regex(row.pattern))) for row in JUNK_ROWS if row.check is None
)
# The copy rows by their suffix (`-2`), each a group of one regex, so a path is read once.
_COPY_ROWS = tuple(row for row in JUNK_ROWS if row.check == "copy")
_COPY = re.compile("(?:" + "|".join(f"({row_core(row)})" for row in _COPY_ROWS) + ")(?=/|$)")
# The siblings row: a numbered segment (`promo12`), its prefix the segment less its digits.
_SIBLINGS = next(row for row in JUNK_ROWS if row.check == "siblings")
_NUMBERED = re.compile(f"^(?:{row_core(_SIBLINGS)})$")
_NEVER_JUNK = re.compile(f"{PAGINATION_FORM}|{YEARLY_ARCHIVE}")


def junk_filter(
    urls: Iterable[str], *, pages: Iterable[str] = (), enabled: bool = True
) -> JunkResult:
    """Split `urls` into kept and junk (with the matching pattern), both in input order."""
    url_list = list(urls)
    if not enabled:
        return JunkResult(kept=url_list)
    paths = [url_path(url).lower() for url in url_list]
    context = _Context(paths)
    protected = _protection(pages)
    result = JunkResult()
    for url, path in zip(url_list, paths, strict=True):
        pattern = None if _NEVER_JUNK.search(path) else context.match(path)
        if pattern is not None and not protected(url, path):
            result.junk.append((url, pattern))
        else:
            result.kept.append(url)
    return result


class _Context:
    """What the conditional rows need to know about the whole discovered set."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._paths = {_path_key(path) for path in paths}
        self._numbers: dict[tuple[str, str], set[str]] = {}
        for path in set(paths):
            for group, number in _numbered_segments(path):
                self._numbers.setdefault(group, set()).add(number)

    def match(self, path: str) -> str | None:
        """The JUNK.md pattern that makes `path` junk, or None."""
        for label, regex in _PLAIN_ROWS:
            if regex.search(path):
                return label
        for copy in _COPY.finditer(path):
            if path[copy.start() - 1] == "/":
                continue  # `[^/]+` needs something before the suffix
            if _path_key(path[: copy.start()] + path[copy.end() :]) in self._paths:
                return _copy_row(copy).pattern
        for group, _ in _numbered_segments(path):
            if len(self._numbers.get(group, ())) >= 3:
                return _SIBLINGS.pattern
        return None


def _copy_row(copy: re.Match[str]) -> JunkRow:
    """The copy row whose suffix `copy` found: each is one group of `_COPY`."""
    groups = zip(_COPY_ROWS, copy.groups(), strict=True)
    return next(row for row, found in groups if found is not None)


def _path_key(path: str) -> str:
    return path.rstrip("/") or "/"


def _numbered_segments(path: str) -> Iterator[tuple[tuple[str, str], str]]:
    """((parent path, alphabetic prefix), number without leading zeros) per `/foo12` segment."""
    segments = path.split("/")
    for index, segment in enumerate(segments):
        match = _NUMBERED.match(segment)
        if match is not None:
            parent = "/".join(segments[:index])
            prefix = match.group().rstrip("0123456789")
            yield (parent, prefix), match.group()[len(prefix) :].lstrip("0") or "0"


def _protection(pages: Iterable[str]) -> Callable[[str, str], bool]:
    """A predicate telling whether the user named a URL with `--pages` (path, URL or slug)."""
    paths: set[str] = set()
    slugs: set[str] = set()
    for page in pages:
        value = page.strip()
        if not value:
            continue
        if value.startswith("/") or "://" in value:
            paths.add(_path_key(url_path(value).lower()))
        else:
            slugs.add(value.lower())
            paths.add(_path_key("/" + value.lower()))

    def protected(url: str, path: str) -> bool:
        return _path_key(path) in paths or (bool(slugs) and slugify(url) in slugs)

    return protected


_OVERRIDE_HINT = (
    "  Override: include any of these explicitly with --pages, or pass\n"
    "  --no-junk-filter to disable filtering entirely."
)


def format_junk_notice(junk: Sequence[tuple[str, str]], limit: int = 4) -> str:
    """The JUNK.md cut list with the override hint; "" when nothing was filtered."""
    if not junk:
        return ""
    shown = ", ".join(url_path(url) for url, _ in junk[: max(limit, 0)])
    more = len(junk) - min(len(junk), max(limit, 0))
    line = f"Filtered as likely junk ({len(junk)}): {shown}"
    if more:
        line += f" ... ({more} more)"
    return f"{line}\n{_OVERRIDE_HINT}"

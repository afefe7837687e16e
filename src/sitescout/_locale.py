"""Locale and base-path scoping rules (§7). Pure: no I/O.

Everything here reads URLs as text, never fetches them:

- the locale of a sitemap document, read from its URL path (`sitemap_locale`);
- the locales of the child sitemaps of one index, where sibling folders are evidence too
  (`SiblingLocales`, `children_locales`);
- the locale of the base URL the user gave (`path_locale`);
- which child sitemaps of an index to keep for the preferred locale (`filter_children`);
- the base path prefix and the narrow-prefix warning (`base_prefix`, `under_prefix`,
  `prefix_warning`).

Locales are returned in one canonical form: lowercase, subtags joined by `-` (`pt_BR` → `pt-br`),
so that `en_us` and `en-US` never count as two distinct locales.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import urlsplit

from sitescout import _core
from sitescout._errors import UsageError

__all__ = [
    "ISO_639_1",
    "LocaleFilter",
    "SiblingLocales",
    "base_prefix",
    "children_locales",
    "filter_children",
    "is_locale",
    "locale_matches",
    "multilingual",
    "normalize_locale",
    "path_locale",
    "prefix_warning",
    "readable_path",
    "require_locale",
    "sitemap_locale",
    "under_prefix",
]

DEFAULT_LOCALE = "en"

# ISO 639-1 as registered in 2018 (184 codes). `bh` (Bihari) was withdrawn in 2021 but still appears
# in older sites' URLs, so it stays.
_ISO_639_1_CODES = """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy
    da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu
    hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb
    lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om
    or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw
    ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
"""
ISO_639_1: frozenset[str] = frozenset(_ISO_639_1_CODES.split())

# Script subtags are limited to the ISO 15924 scripts that CLDR locale identifiers use: any other
# 4-letter word would let `sitemap-en-blog.xml` or `docs-de-page.xml` read as a locale.
_SCRIPT_CODES = """
    adlm arab armn beng cans cher cyrl deva ethi geor grek gujr guru hang hani hans hant hebr
    hira jpan kana khmr knda kore laoo latn mlym mong mtei mymr nkoo olck orya rohg sinh syrc
    taml telu tfng thaa thai tibt vaii yiii
"""
_SCRIPTS: frozenset[str] = frozenset(_SCRIPT_CODES.split())

_LOCALE = re.compile(r"([a-z]{2})(?:[-_]([a-z]{2}|[0-9]{3}|[a-z]{4}))?")
_SITEMAP_SUFFIX = re.compile(r"\.xml(?:\.gz)?$")
_TOKEN_SEPARATOR = re.compile(r"[-_]")
# The longest locale `normalize_locale` accepts: a language, a separator, a script (`zh-hant`).
# Longer path segments are not even looked at.
_MAX_LOCALE_LENGTH = 7


def normalize_locale(token: str) -> str | None:
    """The canonical form of `token` (`pt_BR` → `pt-br`), or None when it is not a locale.

    A locale is an ISO 639-1 language, optionally followed by `-`/`_` and a region (2 letters or
    3 digits, e.g. `es-419`) or a script (`zh-hans`, `sr-latn`).
    """
    match = _LOCALE.fullmatch(token.lower())
    if match is None:
        return None
    language, subtag = match.groups()
    if language not in ISO_639_1:
        return None
    if subtag is None:
        return language
    if len(subtag) == 4 and subtag not in _SCRIPTS:
        return None
    return f"{language}-{subtag}"


# One locale alone proves nothing: `/it/`, `/sm/` or `sitemap-id.xml` are as likely a topic, a
# section or an identifier. Two distinct ones side by side are a locale scheme.
MIN_LOCALES = 2


def multilingual(locales: Collection[str]) -> bool:
    """Whether distinct locales seen at one place (an index's children, one path position) are
    evidence of a locale scheme rather than a coincidental two-letter word."""
    return len(locales) >= MIN_LOCALES


def require_locale(value: str) -> str:
    """The canonical form of a locale the caller passed (e.g. `--locale`); UsageError if none."""
    canonical = normalize_locale(value)
    if canonical is None:
        raise UsageError(f"not a locale: {value!r} (expected e.g. en, en-us, pt-BR, zh-hans)")
    return canonical


def is_locale(token: str) -> bool:
    """Whether `token` is a locale in the sense of `normalize_locale`."""
    return normalize_locale(token) is not None


def locale_matches(preferred: str, locale: str) -> bool:
    """Whether a child of locale `locale` serves a user who prefers `preferred`.

    Same language, and the subtags do not contradict each other: `en` ↔ `en-us` match both ways
    (a user asking for `en` wants the English shards, whatever their region), `en-us` and `en-gb`
    do not, nor do `zh-hans` and `zh-cn` (a script and a region are never compared). Both
    arguments are canonical locales.
    """
    pref_language, _, pref_subtag = preferred.partition("-")
    language, _, subtag = locale.partition("-")
    if pref_language != language:
        return False
    return not pref_subtag or not subtag or pref_subtag == subtag


def readable_path(url_or_path: str) -> str:
    """The path of a URL or of a bare path, without query or fragment; "" when the URL cannot
    be read (an unclosed `[`), so that no locale or prefix is read from it. `_urls.url_path`
    instead reads a path out of any string."""
    try:
        return urlsplit(url_or_path).path
    except ValueError:
        # urlsplit rejects malformed hosts (e.g. an unclosed `[`); web input must never raise.
        return ""


def sitemap_locale(url: str) -> str | None:
    """The locale of a sitemap document, read from its URL path only (§7), or None.

    Rules, first match wins:

    1. `sitemap-xx.xml` (also `sitemap_xx.xml`): `sitemap-fr.xml` → `fr`;
    2. a locale directory holding a `sitemap*.xml`: `/de-de/sitemap.xml` → `de-de`;
    3. a locale infix between `_` or `-` and `.xml`, optionally followed by a numeric shard:
       `dotnet_en-us_1.xml` → `en-us`, `api_en.xml` → `en`.

    `.xml.gz` is accepted wherever `.xml` is. In a file name a trailing number is always a shard,
    never a UN M.49 region, so every shard of a run (`_1` … `_120`) reads the same locale:
    `sitemap-es-419.xml` → `es` (a directory `/es-419/` keeps its region). A locale's own
    separator is not the infix separator: `pt-br.xml` is `pt-br`, not `br` (Breton).

    This reads one URL on its own. Among the children of an index, `SiblingLocales` adds the
    folder rule, which needs the other children as evidence.
    """
    return _named_locale(readable_path(url).lower())


def _named_locale(path: str) -> str | None:
    """`sitemap_locale` of a lowercased path."""
    directory, _, filename = path.rpartition("/")
    stem, found = _SITEMAP_SUFFIX.subn("", filename)
    if not found:
        return None
    tokens = _TOKEN_SEPARATOR.split(stem)
    if len(tokens) > 1 and tokens[-1].isdigit():
        tokens.pop()  # the shard number
    # Rule 1 is `sitemap` plus exactly one locale: a language and at most one subtag.
    if tokens[0] == "sitemap" and len(tokens) in (2, 3):
        named = normalize_locale("-".join(tokens[1:]))
        if named is not None:
            return named
    if stem.startswith("sitemap"):
        folder = normalize_locale(directory.rpartition("/")[2])
        if folder is not None:
            return folder
    return _infix_locale(tokens)


def _infix_locale(tokens: list[str]) -> str | None:
    # Two tokens or more: the infix needs a separator before it. The pair is tried first so that
    # a region is never read as a language on its own (`pt-br` is not Breton).
    if len(tokens) >= 2:
        pair = normalize_locale("-".join(tokens[-2:]))
        if pair is not None:
            return pair
        return normalize_locale(tokens[-1])
    return None


_Folders = tuple[tuple[int, str], ...]


def _folder_locales(path: str) -> _Folders:
    """The locale-looking folders of a path as (segment position, locale), shallowest first.

    Positions count from the first segment: in `/maps/en-gb/part-1.xml`, `maps` is 0 and `en-gb`
    is 1. The last segment is the file name, never a folder.
    """
    folders = path.removeprefix("/").split("/")[:-1]
    return tuple(
        (position, locale)
        for position, segment in enumerate(folders)
        if len(segment) <= _MAX_LOCALE_LENGTH and (locale := _folder_locale(segment)) is not None
    )


# The folder names of one site repeat across thousands of children; a bounded cache keeps the
# regular expression off the hot path.
_folder_locale = lru_cache(maxsize=1024)(normalize_locale)


class _Reading(NamedTuple):
    """What one child's URL says about its locale before its siblings are known."""

    named: str | None  # `sitemap_locale`: the file name, or a locale folder of a `sitemap*.xml`
    folders: _Folders


class SiblingLocales:
    """The locales of the child sitemaps of one index, read as the children stream in.

    A child's own URL comes first (`sitemap_locale`: `sitemap-fr.xml`, `/de-de/sitemap.xml`,
    `dotnet_en-us_1.xml`). Failing that, a locale-looking folder gives the locale of whatever
    file it holds (`/maps/en-gb/part-1.xml` -> `en-gb`) when the siblings show a locale scheme
    there: at least two distinct locales in folders at that same segment position
    (`/maps/en-gb/…` beside `/maps/ko/…`). A lone `/it/` or `/sm/` stays a word. When folders at
    several positions qualify, the one nearest the file wins, so that country-then-language paths
    (`/ch/de/…`, `/be/fr/…`) read the language.

    `add` each child (one pass), then ask `locale` of what `add` returned: the work is linear in
    the children, with no comparison between pairs of them.
    """

    def __init__(self) -> None:
        self._at: dict[int, set[str]] = {}  # segment position -> locales seen in folders there
        self._readings: set[_Reading] = set()  # distinct readings, for `locales`

    def add(self, url: str) -> _Reading:
        """Record one child; the returned reading is resolved by `locale` once all are added."""
        path = readable_path(url).lower()
        reading = _Reading(_named_locale(path), _folder_locales(path))
        for position, locale in reading.folders:
            self._at.setdefault(position, set()).add(locale)
        self._readings.add(reading)
        return reading

    def locale(self, reading: _Reading) -> str | None:
        """The locale of a child, given the evidence of the children added so far."""
        if reading.named is not None:
            return reading.named
        for position, locale in reversed(reading.folders):
            if multilingual(self._at[position]):
                return locale
        return None

    def locales(self) -> frozenset[str]:
        """The distinct locales of the children added so far."""
        found = (self.locale(reading) for reading in self._readings)
        return frozenset(locale for locale in found if locale is not None)


def children_locales(children: Iterable[str]) -> list[str | None]:
    """The locale of each child sitemap of one index, in order (see `SiblingLocales`)."""
    siblings = SiblingLocales()
    readings = [siblings.add(child) for child in children]
    return [siblings.locale(reading) for reading in readings]


def path_locale(url_or_path: str) -> str | None:
    """The locale of a base URL: its first path segment when that is a locale (§7).

    `https://learn.example.com/en-us/docs/` → `en-us`; `/docs/` → None.
    """
    first = readable_path(url_or_path).lstrip("/").partition("/")[0]
    return normalize_locale(first)


@dataclass(frozen=True)
class LocaleFilter:
    """Which child sitemaps of one index to fetch, and why (§7).

    `kept` and `skipped` partition the children, each in document order. `locales` holds the
    distinct locales detected among the children. `applied` is True when the filter ran (two or
    more locales, at least one matching `preferred`); `skipped` may still be empty, e.g. `en`
    keeps both `en-us` and `en-gb`. `fallback` is True when filtering was due but no child
    matched `preferred`, so the full list is kept rather than none of the site's localized
    content.
    """

    kept: list[str]
    skipped: list[str]
    locales: frozenset[str]
    applied: bool
    preferred: str
    fallback: bool = False


def filter_children(children: Sequence[str], preferred: str | None) -> LocaleFilter:
    """Keep the children of the preferred locale and those with no locale (§7).

    A child's locale is read by `children_locales`: from its own URL, or from a locale folder
    that its siblings show to be part of a locale scheme. Filtering applies only when the
    children show at least two distinct locales. The preferred locale is `preferred` (the user's
    `--locale` or the base URL's locale, chosen by the caller), else `en`; matching follows
    `locale_matches`. When no child matches the preferred locale —
    which covers "that would leave nothing" — the full list is kept, with `fallback` set: a site
    offering only `fr` and `de` shards plus an unlocalized one should not shrink to that one.

    Raises UsageError when `preferred` is given but is not a locale.
    """
    wanted = DEFAULT_LOCALE if preferred is None else require_locale(preferred)
    detected = children_locales(children)
    locales = frozenset(locale for locale in detected if locale is not None)
    matching = [locale is not None and locale_matches(wanted, locale) for locale in detected]
    if not multilingual(locales) or not any(matching):
        return LocaleFilter(
            list(children),
            [],
            locales,
            applied=False,
            preferred=wanted,
            fallback=multilingual(locales),
        )
    kept: list[str] = []
    skipped: list[str] = []
    for child, locale, match in zip(children, detected, matching, strict=True):
        (kept if match or locale is None else skipped).append(child)
    return LocaleFilter(kept, skipped, locales, applied=True, preferred=wanted)


def base_prefix(url: str) -> str | None:
    """The base path prefix of a site URL, ending with `/`; None for the root (§7).

    `https://learn.example.com/en-us/docs` → `/en-us/docs/`. Whether a prefix applies at all (a
    sitemap URL given directly implies none) is the caller's decision.
    """
    path = readable_path(url)
    if path in ("", "/"):
        return None
    return path if path.endswith("/") else path + "/"


# Whether a page URL (or path) lies under `prefix`, a whole segment at a time: `/en-us/docs/`
# covers `/en-us/docs`, `/en-us/docs/` and `/en-us/docs/x`, not `/en-us/docsx`. Path case is
# significant (§6 keeps it); the path is `readable_path`'s. The native core's
# (rust/src/scope.rs): the walk applies it to every row.
under_prefix = _core.under_prefix


def prefix_warning(
    prefix: str, matched: int, examined: int, *, source: str = "Sitemap"
) -> str | None:
    """The narrow-prefix warning of §7, or None when the prefix matched at least 1 %.

    "Fewer than 1 %" is strict and computed on integers: 1 of 100 is silent, 1 of 101 warns.
    Nothing examined means nothing to judge. Raises UsageError on impossible counts. `source`
    names where the URLs came from (`Sitemap`, `llms.txt`).
    """
    if matched < 0 or examined < 0 or matched > examined:
        raise UsageError(f"impossible prefix counts: {matched} of {examined}")
    if examined == 0 or matched * 100 >= examined:
        return None
    shown = prefix.rstrip("/") or "/"
    return (
        f'{source} path prefix "{shown}" matched {matched} of {examined} examined same-site URLs '
        "(less than 1%); consider a broader base URL."
    )

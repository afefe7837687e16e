"""Instants read from text: `--since` values and `WalkOptions.since` (the instant before which a
lastmod is old), and lastmods themselves. Pure.

A value is a date (`2025-06-01`), an ISO 8601 time (`2025-06-01T12:00:00+02:00`; `Z` allowed),
or a span back from now: `7d` (days), `12h` (hours). A date or time without a zone is UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ._errors import UsageError

__all__ = ["as_utc", "lastmod_datetime", "parse_since"]

_RELATIVE = re.compile(r"(\d{1,6})([dh])")
_UNITS = {"d": "days", "h": "hours"}
_YEAR_ONLY = re.compile(r"[0-9]{4}")
_YEAR_MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")


def as_utc(when: datetime) -> datetime:
    """`when` in UTC; a naive datetime is taken to be UTC already."""
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def parse_since(value: str, *, now: datetime | None = None) -> datetime:
    """The instant `value` names, in UTC; UsageError saying what is accepted otherwise."""
    text = value.strip()
    relative = _RELATIVE.fullmatch(text)
    if relative is not None:
        count, unit = int(relative.group(1)), relative.group(2)
        return as_utc(now or datetime.now(UTC)) - timedelta(**{_UNITS[unit]: count})
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"not a date, an ISO 8601 time or a span like 7d or 12h: {value!r}"
        ) from None
    return as_utc(when)


def lastmod_datetime(lastmod: str | None) -> datetime | None:
    """The instant a §4 ISO 8601 lastmod names (`2024`, `2024-05` too); None if unusable.

    A year or a month is its first day; a date or time without a zone is read as UTC. The one
    reading of a lastmod: the sampler sorts by it, the DataFrames' `lastmod` column holds it.
    """
    if not lastmod:
        return None
    value = lastmod.strip()
    if _YEAR_ONLY.fullmatch(value):
        value += "-01-01"
    elif _YEAR_MONTH.fullmatch(value):
        value += "-01"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # a date without a zone: read as UTC
    return moment

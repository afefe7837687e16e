"""`--since` values and `WalkOptions.since`: the instant before which a lastmod is old. Pure.

A value is a date (`2025-06-01`), an ISO 8601 time (`2025-06-01T12:00:00+02:00`; `Z` allowed),
or a span back from now: `7d` (days), `12h` (hours). A date or time without a zone is UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ._errors import UsageError

__all__ = ["as_utc", "parse_since"]

_RELATIVE = re.compile(r"(\d{1,6})([dh])")
_UNITS = {"d": "days", "h": "hours"}


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

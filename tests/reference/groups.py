"""Reference model of the path-group rule: a frozen copy of `sitescout._groups.group_key` as it
was before the rule moved into the Rust core (rust/src/groups.rs), and of its sample order.

The slow oracle the differential tests (tests/test_core_groups.py) compare `sitescout._core`
against; not shipped, and it must not import `sitescout`. Do not fix or improve it: a change
here changes what "today's behaviour" means.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["ROOT", "group_key", "sample_order"]

ROOT = "/"


def group_key(url: str, depth: int = 1) -> str | None:
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # a port that is not a number makes the URL unparseable
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    segments = [s for s in parts.path.split("/") if s][:depth]
    if not segments:
        return ROOT
    return "/" + "/".join(segments) + "/*"


def sample_order(url: str) -> tuple[int, str]:
    return (len(url), url)

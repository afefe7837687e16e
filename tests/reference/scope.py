"""Reference model of the base-path rules: frozen copies of `sitescout._urls.site_key` and
`sitescout._locale.under_prefix` (and `WalkLedger.under_base_path`'s use of them) as they were
before the rules moved into the Rust core (rust/src/scope.rs).

The slow oracle the differential tests (tests/test_core_under.py) compare `sitescout._core`
against; not shipped, and it must not import `sitescout` (whose helpers now call the core). Do
not fix or improve it: a change here changes what "today's behaviour" means.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = ["in_scope", "site_key", "under_prefix"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}

# RFC 3986 appendix B: splits any string, so it cannot fail.
_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL)


class _Parts(NamedTuple):
    scheme: str
    host: str  # lowercase, no userinfo, no port
    port: str  # "" for the scheme's default
    path: str
    query: str


def _parts(url: str) -> _Parts:
    match = _PARTS.match(url)
    assert match is not None  # the pattern matches every string
    scheme, netloc, path, query, _ = match.groups(default="")
    hostport = netloc.rpartition("@")[2].lower()
    if hostport.startswith("["):
        host, _, port = hostport.partition("]")
        host += "]"
        port = port[1:]
    else:
        host, _, port = hostport.partition(":")
    if port == _DEFAULT_PORTS.get(scheme.lower()):
        port = ""
    return _Parts(scheme.lower(), host, port, path, query)


def _bare_host(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


def _site_key(host: str, port: str) -> tuple[str, str]:
    return _bare_host(host.rstrip(".")), port


def site_key(url: str) -> tuple[str, str]:
    """Same-site identity of a URL (§8 www handling): host without `www.`, non-default port."""
    parts = _parts(url)
    return _site_key(parts.host, parts.port)


def readable_path(url_or_path: str) -> str:
    """The path of a URL or of a bare path, without query or fragment; "" when the URL cannot
    be read (an unclosed `[`), so that no locale or prefix is read from it."""
    try:
        return urlsplit(url_or_path).path
    except ValueError:
        # urlsplit rejects malformed hosts (e.g. an unclosed `[`); web input must never raise.
        return ""


def under_prefix(page_url: str, prefix: str) -> bool:
    """Whether a page URL (or path) lies under `prefix`, a whole segment at a time."""
    bare = prefix.rstrip("/")
    if not bare:
        return True
    path = readable_path(page_url)
    return path == bare or path.startswith(bare + "/")


def in_scope(url: str, site: tuple[str, str], prefix: str) -> bool | None:
    """`WalkLedger.under_base_path` without the ledger: None for another site's URL (not counted),
    else whether it is under the prefix (counted as examined, and as matched when True)."""
    if site_key(url) != site:
        return None
    return under_prefix(url, prefix)

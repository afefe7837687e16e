"""URLs as the fetcher judges them, before and between requests.

Whether a URL can be requested at all (`unusable`), where a redirect's `Location` points
(`redirect_target`), and the full origin (`full_origin`) that credentials, `--rate` and
reachability are bound to. Pure: nothing here opens a connection.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import httpx

from .._errors import NetworkError
from .config import has_control
from .guard import host_port


def full_origin(url: str) -> str:
    """`scheme://host:port`, the port always written: what credentials are bound to."""
    try:
        host, port = host_port(url)
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return url
    return f"{scheme}://{host.lower()}:{port}"


def unusable(url: str) -> str | None:
    """Why `url` cannot be fetched (scheme, host, port, syntax), or None when it can."""
    if has_control(url):
        return "a control character in the URL"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return f"not an http(s) URL: {parts.scheme or 'no'} scheme"
    if not parts.hostname:
        return "no host"
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)
    return None


def redirect_target(url: str, location: str) -> str:
    """Where a `Location` header points, or NetworkError when it is not a URL sitescout fetches."""
    location = location.strip()
    problem: str | None = None
    target = url
    if has_control(location):
        problem = "a control character in the Location"  # URL parsers would silently drop it
    else:
        try:
            target = urljoin(url, location)
        except ValueError as exc:
            problem = str(exc)
        else:
            problem = unusable(target)
    if problem is not None:
        raise NetworkError(f"redirect to an unusable URL: {problem}", url=url)
    return target

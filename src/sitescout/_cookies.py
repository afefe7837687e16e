"""Cookies the user hands to a walk: a Netscape `cookies.txt` file (what curl, wget and browser
export tools write) and `name=value` pairs, and which of them a request may carry.

Pure: parses text it is given and matches cookies against URLs; reads no file, keeps no state.
A cookie goes only where its own rules send it: its domain (and subdomains when the file says
so), its path, https only when it is secure, and not once it has expired. A cookie given as
`name=value` has no domain of its own: it belongs to the walk's start host and no other.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

_HTTP_ONLY = "#HttpOnly_"
_BOOLEANS = {"TRUE": True, "FALSE": False}
# RFC 6265 cookie-name is a token; a value may not hold these.
_SEPARATORS = set('()<>@,;:\\"/[]?={} \t')
_BAD_VALUE = set('",;\\ \t')


@dataclass(frozen=True, slots=True)
class Cookie:
    """One cookie. `domain` "" means the walk's start host (a `--cookie name=value`)."""

    name: str
    value: str = field(repr=False)
    domain: str = ""
    subdomains: bool = False  # also sent to hosts under `domain`
    path: str = "/"
    secure: bool = False  # https only
    expires: int = 0  # seconds since the epoch; 0: a session cookie, never expires here

    def __repr__(self) -> str:
        shown = f"name={self.name!r}, value='***', domain={self.domain!r}, path={self.path!r}"
        return f"Cookie({shown})"


def _check_pair(name: str, value: str) -> None:
    if not name or any(c in _SEPARATORS or ord(c) < 0x21 or ord(c) > 0x7E for c in name):
        raise ValueError(f"not a cookie name: {name!r}")
    if any(c in _BAD_VALUE or ord(c) < 0x21 or ord(c) > 0x7E for c in value):
        raise ValueError(f"the value of cookie {name!r} holds a character a cookie cannot carry")


def parse_cookie(text: str) -> Cookie:
    """`name=value`, for the walk's start host. ValueError when it is not one."""
    name, sep, value = text.strip().partition("=")
    if not sep:
        raise ValueError("expected name=value")
    name = name.strip()
    value = value.strip()
    _check_pair(name, value)
    return Cookie(name, value)


def parse_cookies_txt(text: str) -> tuple[Cookie, ...]:
    """The cookies of a Netscape cookies.txt: seven tab-separated fields a line (domain,
    subdomains flag, path, secure flag, expiry, name, value); `#HttpOnly_` before the domain
    marks an HttpOnly cookie (sent all the same); other `#` lines are comments. ValueError
    naming the line for anything else."""
    cookies: list[Cookie] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip("\r\n")
        if line.startswith(_HTTP_ONLY):
            line = line[len(_HTTP_ONLY) :]
        elif line.startswith("#") or not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) == 6:  # curl writes an empty value without its trailing tab
            parts.append("")
        if len(parts) != 7:
            raise ValueError(f"line {number}: expected 7 tab-separated fields, found {len(parts)}")
        domain, sub, path, secure, expires, name, value = parts
        try:
            cookies.append(_cookie_of(domain, sub, path, secure, expires, name, value))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from None
    return tuple(cookies)


def _cookie_of(
    domain: str, sub: str, path: str, secure: str, expires: str, name: str, value: str
) -> Cookie:
    host = domain.strip().lower()
    if host.startswith("."):
        host = host[1:]
    if not host or (any(c in host for c in "/ :\t") and not _is_ipv6(host)):
        raise ValueError(f"not a cookie domain: {domain!r}")
    flags = []
    for what, word in (("subdomains", sub), ("secure", secure)):
        if word.upper() not in _BOOLEANS:
            raise ValueError(f"the {what} field must be TRUE or FALSE, got {word!r}")
        flags.append(_BOOLEANS[word.upper()])
    try:
        when = int(expires)
    except ValueError:
        raise ValueError(f"the expiry must be a whole number of seconds, got {expires!r}") from None
    if not path.startswith("/"):
        raise ValueError(f"the path must start with /, got {path!r}")
    _check_pair(name, value)
    subdomains = (flags[0] or domain.strip().startswith(".")) and not _is_ip(host)
    return Cookie(name, value, host, subdomains, path, flags[1], max(when, 0))


def _is_ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).version == 6
    except ValueError:
        return False


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _domain_match(host: str, cookie: Cookie) -> bool:
    if host == cookie.domain:
        return True
    return cookie.subdomains and not _is_ip(host) and host.endswith("." + cookie.domain)


def _path_match(path: str, cookie_path: str) -> bool:
    if path == cookie_path:
        return True
    if not path.startswith(cookie_path):
        return False
    return cookie_path.endswith("/") or path[len(cookie_path)] == "/"


def cookie_header(
    cookies: Iterable[Cookie], url: str, start_host: str | None, now: float | None = None
) -> str | None:
    """The `Cookie` header a request to `url` carries, or None. `start_host`: the walk's start
    host, the only one a cookie without a domain goes to (None: such cookies go nowhere)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    moment = time.time() if now is None else now
    chosen: list[Cookie] = []
    for cookie in cookies:
        if cookie.domain:
            if not _domain_match(host, cookie):
                continue
        elif start_host is None or host != start_host.lower():
            continue
        if cookie.secure and parts.scheme != "https":
            continue
        if cookie.expires and cookie.expires <= moment:
            continue
        if not _path_match(path, cookie.path):
            continue
        chosen.append(cookie)
    if not chosen:
        return None
    chosen.sort(key=lambda c: -len(c.path))  # the most specific path first, as browsers do
    return "; ".join(f"{c.name}={c.value}" for c in chosen)

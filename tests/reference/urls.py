"""Reference model of the URL rules: a frozen copy of sitescout's pure-Python `resolve_url`,
`normalize_url` and `_is_clean` as they were before the rules moved into the Rust core.

It is the slow oracle the differential tests compare `sitescout._core` against; it is not shipped
and must not import `sitescout._urls` (which will itself call the core). The code below is kept as
it was; the rules are stated in `sitescout._urls`'s module docstring.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import quote, urljoin, urlsplit

__all__ = ["_clean_match", "_is_clean", "normalize_url", "resolve_url"]

_HTTP_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_HOST_PATTERN = r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?"
_ASCII_HOST = re.compile(_HOST_PATTERN)
_PORT = re.compile(r"[0-9]{1,5}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?")
_QUERY_ESCAPE = re.compile(r"%[0-9a-f][0-9A-Fa-f]|%[0-9A-F][a-f]")
_PATH_UNSAFE = re.compile(r"[^\x21-\x7e]|[\"<>`{}]")
_QUERY_UNSAFE = re.compile(r"[^\x21-\x7e]|[\"<>`]")
_TRACKING_EXACT = frozenset({"gclid", "fbclid", "_ga", "ref", "source"})
_TRACKING_PREFIXES = ("utm_", "mc_")

# Fast path: a URL matching this (and free of dot segments and tracking parameters) is exactly
# what the slow path would produce, so it is returned as is. Every character class below is a
# subset of what the slow path leaves untouched. Escapes are allowed when the slow path would
# keep them: uppercase hex, and in the path only escapes of reserved/non-ASCII bytes (not of
# unreserved characters, which it decodes). Possessive quantifiers keep matching linear.
_KEPT_PATH_ESCAPE = r"%(?:[0189A-F][0-9A-F]|2[0-9A-CF]|3[A-F]|40|5[B-E]|60|7[BCDF])"
_CLEAN = re.compile(
    rf"(https?)://({_HOST_PATTERN})(?::([1-9][0-9]{{0,4}}))?"
    rf"(/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]++|{_KEPT_PATH_ESCAPE})*+)"
    r"(\?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]|^]++|%[0-9A-F]{2})++)?"
)
_TRACKING_IN_QUERY = re.compile(
    r"[?&](?:utm_[^&=]*|mc_[^&=]*|gclid|fbclid|_ga|ref|source)(?:=|&|$)", re.IGNORECASE
)


# --------------------------------------------------------------------------- resolution


def resolve_url(raw: str, base: str) -> str | None:
    """Resolve a raw URL value against the URL of the document it came from.

    Returns the absolute http(s) URL (resolved, not normalized), or None when the value cannot
    become one. Never raises.
    """
    value = raw.strip()
    if not value or value[0] == "#":
        return None
    if _is_clean(value):
        return value  # absolute, with a valid host: nothing to resolve or check
    try:
        parts = urlsplit(value)
        if not parts.scheme:
            value = urljoin(base.strip(), value)
            parts = urlsplit(value)
        elif not parts.netloc:
            # `https:/x` is a relative reference to urljoin; `https:///x` is a broken URL.
            if value[len(parts.scheme) + 1 :].startswith("//"):
                return None
            value = urljoin(base.strip(), value)
            parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme not in _HTTP_SCHEMES or _canonical_netloc(parts.scheme, parts.netloc) is None:
        return None
    return value


# --------------------------------------------------------------------------- normalization


def normalize_url(url: str) -> str:
    """Normalize one URL (the rules are in the module docstring). Idempotent, never raises."""
    if _is_clean(url):
        return url
    try:
        return _normalize_slow(url)
    except (ValueError, UnicodeError):
        return url


def _is_clean(url: str) -> bool:
    return _clean_match(url) is not None


def _clean_match(url: str) -> re.Match[str] | None:
    """The `_CLEAN` match of `url` if normalization would leave it unchanged, else None."""
    match = _CLEAN.fullmatch(url)
    if match is None or "/." in match.group(4):
        return None
    port = match.group(3)
    # A port is clean unless it is the scheme's default (stripped) or out of range.
    if port is not None and (port == _DEFAULT_PORTS[match.group(1)] or int(port) > 65535):
        return None
    query = match.group(5)
    if query is None:
        return match
    clean = (
        "&&" not in query
        and query[1] != "&"
        and query[-1] != "&"
        and _TRACKING_IN_QUERY.search(query) is None
    )
    return match if clean else None


def _normalize_slow(url: str) -> str:
    parts = urlsplit(url.strip())
    scheme = parts.scheme
    if scheme not in _HTTP_SCHEMES:
        return url
    netloc = _canonical_netloc(scheme, parts.netloc)
    if netloc is None:
        return url
    path = _normalize_path(parts.path)
    query = _normalize_query(parts.query)
    return f"{scheme}://{netloc}{path}?{query}" if query else f"{scheme}://{netloc}{path}"


def _canonical_netloc(scheme: str, netloc: str) -> str | None:
    """`host[:port]` in canonical form, without userinfo; None when host or port is invalid."""
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return None
        host, rest = _canonical_ipv6(hostport[1:end]), hostport[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:]
    else:
        raw_host, _, port = hostport.partition(":")
        host = _canonical_host(raw_host)
    if host is None:
        return None
    if not port:
        return host
    if _PORT.fullmatch(port) is None or not 0 < int(port) <= 65535:
        return None
    port = str(int(port))
    return host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"


def _canonical_ipv6(literal: str) -> str | None:
    try:
        return f"[{ipaddress.IPv6Address(literal).compressed}]"
    except ValueError:
        return None


def _canonical_host(host: str) -> str | None:
    host = host.lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except (UnicodeError, ValueError):
            return None
    return host if _ASCII_HOST.fullmatch(host) else None


def _normalize_path(path: str) -> str:
    if not path:
        return "/"
    if "%" in path:
        path = _PATH_ESCAPE.sub(_fix_path_escape, path)
    path = _PATH_UNSAFE.sub(_percent_encode, path)
    if "/." in path:
        path = _remove_dot_segments(path)
    return path


def _fix_path_escape(match: re.Match[str]) -> str:
    hex_digits = match.group(1)
    if hex_digits is None:
        return "%25"
    char = chr(int(hex_digits, 16))
    return char if char in _UNRESERVED else "%" + hex_digits.upper()


def _percent_encode(match: re.Match[str]) -> str:
    # surrogatepass: lone surrogates can reach us from decoded garbage; encode, do not raise.
    return quote(match.group(), safe="", errors="surrogatepass")


def _remove_dot_segments(path: str) -> str:
    output: list[str] = []
    segments = path.split("/")[1:]
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
            continue
        if index == last:
            # `/a/b/..` names the directory `/a/`, so the trailing slash survives.
            output.append("")
    return "/" + "/".join(output)


def _normalize_query(query: str) -> str:
    if not query:
        return ""
    if "%" in query:
        query = _QUERY_ESCAPE.sub(lambda m: m.group().upper(), query)
    query = _QUERY_UNSAFE.sub(_percent_encode, query)
    kept = [p for p in query.split("&") if p and not _is_tracking(p.partition("=")[0])]
    return "&".join(kept)


def _is_tracking(name: str) -> bool:
    name = name.lower()
    return name in _TRACKING_EXACT or name.startswith(_TRACKING_PREFIXES)

"""URL rules of §4, §6, §8 and §11: resolution, normalization, filtering, slugs. Pure: no I/O.

Everything here runs on every URL of an inventory (up to ~10M) and never raises. Resolution and
normalization, the per-URL hot path, are the native core's (`rust/src/urls.rs`, with a fast path
for already-clean URLs); their rules are stated here.

Resolution (`resolve_url`)
    Surrounding whitespace is stripped (sitemaps wrap `<loc>` values in newlines), relative values
    resolve against the URL of the document they came from (RFC 3986, via `urljoin`). Anything that
    does not end up as an absolute http(s) URL with a valid host and port is rejected with None:
    empty and fragment-only values, other schemes (`mailto:`, `javascript:`, `tel:`), hosts with
    spaces or other characters no DNS name has, unparseable IPv6 literals, ports outside 1-65535.
    The returned URL is resolved but not normalized.

Normalization (`normalize_url`), §6 rules 1-6, idempotent. Choices the spec leaves open:
    * Hosts: lowercased; internationalized names become punycode ASCII (stdlib IDNA 2003 codec, so
      no extra dependency); IPv6 literals keep their brackets and take the compressed lowercase
      form (`[0:0::1]` -> `[::1]`). A trailing root dot is kept: it is a different string to DNS
      clients and servers alike, and dropping it is a guess we do not need to make.
    * Userinfo (`user:pw@`) is dropped: it is never part of a page's identity, and credentials must
      not leak into inventories and logs.
    * Path: percent-escapes of unreserved characters (ALPHA DIGIT `-._~`) are decoded, every other
      escape is kept with uppercase hex (`%2f` -> `%2F`); characters that are not valid in a URL
      (spaces, controls, non-ASCII, `"<>`{}`) are percent-encoded as UTF-8, the way browsers send
      them; a `%` that does not start an escape becomes `%25` (otherwise decoding could create a new
      escape and break idempotence). Then `.`/`..` segments are removed per RFC 3986 §5.2.4.
    * Query: tracking parameters are removed by name, case-insensitively (`_rules.TRACKING_*`:
      `utm_*`, `mc_*`, `gclid`, ...; `refresh` stays). Every other parameter keeps its
      order and its encoding; only escape hex is uppercased (RFC 3986 §6.2.2.1 equivalence) and
      invalid characters are percent-encoded as in the path. Empty parameters (`a=1&&b=2`) and an
      empty query (`?`) are dropped.
    * A value that is not an http(s) URL with a valid host is returned unchanged: normalization
      never raises, and `resolve_url` is where URLs get rejected.

Sets (`UrlSet`) implement §6 rule 7 and the www rule for the sampler's few thousand URLs; the
streaming inventory de-duplicates normalized strings and does not need them.

Filtering (`classify`) is §8 as one decision. Same site means same host once a leading `www.` is
ignored, and the same non-default port; the scheme is ignored because many sites still list
`http://` URLs in the sitemap of an `https://` site. `/api/` only counts as an endpoint as the first
path segment: documentation portals serve API *reference pages* under `/docs/.../api/...`.
`/page-N/` is treated as pagination like `/page/N/` (JUNK.md calls it a pagination form).

Slugs (`slugify`, `SlugRegistry`) follow §11. Slugs longer than 150 characters are cut and get a
hash suffix, so that every slug is a usable file name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple, TypeGuard
from urllib.parse import unquote, urlsplit

from . import _core
from ._rules import (
    AUTH_HEAD,
    AUTH_PATH,
    PAGE_WORD,
    PAGINATION_HEAD,
    PAGINATION_PATH,
    PAGINATION_QUERY,
)

__all__ = [
    "ASSET_EXTENSIONS",
    "SITEMAP_SUFFIXES",
    "Classification",
    "Decision",
    "SlugRegistry",
    "UrlSet",
    "assume_https",
    "classify",
    "document_key",
    "is_http_url",
    "looks_like_sitemap_url",
    "normalize_url",
    "origin_of",
    "page_key",
    "resolve_url",
    "site_key",
    "slugify",
    "url_path",
]

_HTTP_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}


# --------------------------------------------------------------------------- resolution

# The rules above are the native core's (rust/src/urls.rs): they run on every URL of a walk.
resolve_url = _core.resolve_url
normalize_url = _core.normalize_url
_is_clean = _core.is_clean


# --------------------------------------------------------------------------- parts

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


def url_path(url: str) -> str:
    """The path of a URL (`/` for a bare host); a value starting with `/` is taken as a path."""
    path = _parts(url).path
    return path or "/"


def _bare_host(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


# Same-site identity of a URL (§8 www handling): `(host, port)`, the host lowercased without
# its trailing dots and one leading `www.`, the port unless it is the scheme's default. Any
# string has one. The native core's (rust/src/scope.rs): the walk applies it to every row.
site_key = _core.site_key


def is_http_url(value: object) -> TypeGuard[str]:
    """Whether `value` is a string that starts like an absolute http(s) URL (any casing).

    The cheap check arguments get before anything is fetched; `resolve_url` is the full one."""
    return isinstance(value, str) and value[:8].lower().startswith(("http://", "https://"))


# A URL typed without a scheme, the way curl, httpie and browsers read one: `host`, `host:port`
# or `host/path` (and `?query`), where the host is a DNS name of two labels or more, `localhost`,
# an IPv4 address or a bracketed IPv6 one; a one-label name needs its port (`intranet:8080`).
# Label characters as the complement of what is not one (ASCII other than letters and digits,
# and U+0080-U+00A0): a class spelling out U+00A1-U+10FFFF, or [a-z] under re.IGNORECASE, took
# 25-55 ms to compile at every command's start-up.
_NOT_LABEL = r"\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\xa0"
_NOT_INNER = r"\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x60\x7b-\xa0"  # the same, but `-`
_LABEL = rf"[^{_NOT_LABEL}](?:[^{_NOT_INNER}]{{0,61}}[^{_NOT_LABEL}])?"
_BARE = re.compile(
    rf"(?P<host>(?P<name>{_LABEL}(?:\.{_LABEL})*\.?)|\[[0-9a-fA-F:.]+\])"
    r"(?::(?P<port>[0-9]{1,5}))?(?P<rest>[/?#].*)?",
    re.DOTALL,
)
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
# Last labels that name a file, not a top-level domain: `sitemap.xml` and `urls.jsonl` are files.
_FILE_SUFFIXES = frozenset(
    "xml gz bz2 xz zst txt text json jsonl ndjson csv tsv parquet html htm".split()
)


def _names_a_host(name: str, port: str | None) -> bool:
    labels = name.rstrip(".").lower().split(".")
    if labels[-1].isdigit():  # `1.2.3` or `10.0.0.300`: numbers, not a name
        return bool(_IPV4.fullmatch(name)) and all(int(n) <= 255 for n in labels)
    if len(labels) == 1:
        return port is not None or labels[0] == "localhost"
    return labels[-1] not in _FILE_SUFFIXES


def assume_https(arg: str) -> tuple[str, bool]:
    """A site argument typed without a scheme as an https URL: `(url, True)`.

    `example.com`, `example.com:8443`, `example.com/blog/` and `127.0.0.1:8080` become
    `https://example.com/`, … (a bare host gets its `/`). Anything else comes back unchanged
    with False, for the caller's own check to accept or refuse: a URL with a scheme (http,
    https, or one that is refused, such as `ftp://`), and what is clearly not a host: a path
    (`./file`, `/tmp/x`, `-`), a value with whitespace or `@` in it, a name ending in a file
    suffix (`sitemap.xml`, `urls.jsonl`), a one-label name without a port, a port outside
    1-65535, an IPv4-like name that is not an address."""
    if _SCHEME.match(arg) or any(c.isspace() for c in arg):
        return arg, False
    match = _BARE.fullmatch(arg)
    if match is None:
        return arg, False
    name, port, rest = match["name"], match["port"], match["rest"] or ""
    if port is not None and not 1 <= int(port) <= 65535:
        return arg, False
    if name is not None and not _names_a_host(name, port):
        return arg, False
    authority = match["host"] if port is None else f"{match['host']}:{port}"
    return f"https://{authority}{rest if rest.startswith('/') else '/' + rest}", True


@lru_cache(maxsize=64)
def origin_of(url: str) -> str:
    """`scheme://host[:port]` as written: robots.txt and the well-known paths hang off it."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


# One list for "is this URL a sitemap?" (§2 step 1, and the crawl's links). A bare `.gz` is not
# on it: on a documentation site it is a release tarball far more often than a sitemap, and a
# gzipped sitemap is named `.xml.gz` or has "sitemap" in its name.
SITEMAP_SUFFIXES = (".xml", ".xml.gz", ".rss", ".atom")


def looks_like_sitemap_url(url: str) -> bool:
    """Whether a URL names a sitemap document rather than a page or a site (§2 step 1)."""
    last = url_path(url).lower().rsplit("/", 1)[-1]
    return last.endswith(SITEMAP_SUFFIXES) or "sitemap" in last


def document_key(url: str) -> str:
    """Identity of a sitemap document for the visited set: the URL without its fragment, scheme
    and host lowercased. Query parameters all count: `?source=` may select a shard."""
    url = url.split("#", 1)[0]
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}"


def page_key(url: str) -> str:
    """Identity of a crawled page: one key for `/a`, `/a/`, `www.` and bare host, http and
    https (`url` is normalized)."""
    host, port = site_key(url)
    parts = urlsplit(url)
    return f"{host}:{port}{parts.path.rstrip('/')}?{parts.query}"


# --------------------------------------------------------------------------- filtering (§8)

Decision = Literal["keep", "drop", "flag"]


class Classification(NamedTuple):
    """The §8 verdict for one URL: `decision` and the rule that made it (`reason`)."""

    decision: Decision
    reason: str


_KEEP = Classification("keep", "page")
_FRAGMENT_ONLY = Classification("drop", "fragment-only")
_NON_HTTP = Classification("drop", "non-http-scheme")
_UNPARSEABLE = Classification("drop", "unparseable")
_OTHER_HOST = Classification("drop", "other-host")
_ASSET = Classification("drop", "asset-extension")
_API = Classification("drop", "api-path")
_PAGINATION = Classification("drop", "pagination")
_AUTH = Classification("flag", "requires-auth")

# §8's list plus other files no sitemap of pages should point at (fonts, media, source maps).
ASSET_EXTENSIONS: frozenset[str] = frozenset(
    ".css .js .json .xml .txt .pdf .zip .png .jpg .jpeg .gif .webp .avif .svg "
    ".ico .bmp .tif .tiff .woff .woff2 .ttf .otf .eot .map .gz .mp3 .mp4 .webm .mov".split()
)
# Path rules run on the lowercased path, so no IGNORECASE (it makes sre several times slower).
_API_ROOT = r"api(?:/|$)"  # only as the first segment: docs portals have `/docs/.../api/` pages
_API_ANYWHERE = r"(?:wp-json|\.well-known)(?:/|$)"
_API_PATH = re.compile(rf"^/{_API_ROOT}|/{_API_ANYWHERE}")
_PAGINATION_PATH = re.compile(PAGINATION_PATH)
_PAGINATION_QUERY = re.compile(PAGINATION_QUERY, re.IGNORECASE)
_AUTH_PATH = re.compile(AUTH_PATH)
# One search that every path a rule could apply to matches: most paths need nothing more.
_SUSPECT_PATH = re.compile(
    "|".join((f"/{_API_ROOT}", f"/{_API_ANYWHERE}", PAGINATION_HEAD, AUTH_HEAD))
)


def classify(url: str, site: str) -> Classification:
    """Decide keep/drop/flag for one URL of the site `site` (§8). Never raises.

    `url` is normalized first (nearly free for clean URLs), so raw values are fine too; relative
    values resolve against `site`. `site` may be a URL or a bare host.
    """
    value = url.strip()
    if not value or value[0] == "#":
        return _FRAGMENT_ONLY
    site_base, site_id = _site(site)
    if not _is_clean(value):
        resolved = resolve_url(value, site_base)
        if resolved is None:
            scheme = _parts(value).scheme
            return _NON_HTTP if scheme and scheme not in _HTTP_SCHEMES else _UNPARSEABLE
        value = normalize_url(resolved)
    if site_key(value) != site_id:
        return _OTHER_HOST
    parts = _parts(value)
    return _classify_path(parts.path.lower(), parts.query)


def _classify_path(path: str, query: str) -> Classification:
    """The path rules of §8, in §8's order, on a lowercased path."""
    last_segment = path[path.rfind("/") + 1 :]
    dot = last_segment.rfind(".")
    if dot >= 0 and last_segment[dot:] in ASSET_EXTENSIONS:
        return _ASSET
    if _SUSPECT_PATH.search(path) is None:
        return _PAGINATION if query and _is_paginated("", query) else _KEEP
    if _API_PATH.search(path):
        return _API
    if _is_paginated(path, query):
        return _PAGINATION
    if _AUTH_PATH.search(path):
        return _AUTH
    return _KEEP


def _is_paginated(path: str, query: str) -> bool:
    # Compare digit strings, not ints: int() refuses strings over 4300 digits.
    if path:
        match = _PAGINATION_PATH.search(path)
        if match is not None and match.group(1) != "1":
            return True
    if query and PAGE_WORD in query.lower():
        match = _PAGINATION_QUERY.search(query)
        return match is not None and match.group(1) != "1"
    return False


@lru_cache(maxsize=64)
def _site(site: str) -> tuple[str, tuple[str, str]]:
    """The site as a base URL for resolution, and its same-site key (bare host, port)."""
    value = site.strip()
    if "://" not in value:
        value = "https://" + value
    base = normalize_url(value)
    return base, site_key(base)


# --------------------------------------------------------------------------- sets (§6 rule 7, www)


@dataclass(slots=True)
class _Member:
    key: str
    scheme: str
    bare_host: str
    port: str
    path: str  # without the trailing slash ("" for the root)
    query: str
    slash: bool = False  # seen with a trailing slash
    no_slash: bool = False  # seen without one


class UrlSet:
    """Normalized URLs with trailing-slash and www/bare-host duplicates collapsed (§6).

    Meant for the sampler's thousands of URLs: it keeps every member and the forms it was seen
    in, so that a canonical learned later (`set_canonical`) still changes the outcome. Iteration
    yields each page once, in discovery order, in its preferred form:

    * `/foo` and `/foo/` both seen: the form the page's canonical prefers, else `/foo/`.
    * `example.com` and `www.example.com` both seen: the host of the home page's canonical, else
      the host the user typed (the `site` given here); other hosts keep their first-seen form.
    """

    def __init__(self, site: str) -> None:
        value = site.strip()
        self._site_host = _parts(
            normalize_url(value if "://" in value else "https://" + value)
        ).host
        self._members: dict[str, _Member] = {}
        self._host_forms: dict[str, list[str]] = {}
        self._canonical_hosts: dict[str, str] = {}
        self._canonical_slash: dict[str, bool] = {}
        self._raw: dict[str, None] = {}

    def add(self, url: str) -> str:
        """Add a URL (normalized here); return the form the set currently keeps for it."""
        normalized = normalize_url(url.strip())
        parts = _parts(normalized)
        if parts.scheme not in _HTTP_SCHEMES or not parts.host:
            self._raw.setdefault(normalized)
            return normalized
        key = self._key(parts)
        member = self._members.get(key)
        if member is None:
            bare = _bare_host(parts.host)
            path = parts.path.rstrip("/")
            member = _Member(key, parts.scheme, bare, parts.port, path, parts.query)
            self._members[key] = member
        forms = self._host_forms.setdefault(member.bare_host, [])
        if parts.host not in forms:
            forms.append(parts.host)
        if parts.path.endswith("/"):
            member.slash = True
        else:
            member.no_slash = True
        return self._render(member)

    def set_canonical(self, url: str, canonical: str) -> None:
        """Record the `<link rel="canonical">` of the page at `url`.

        It decides the trailing-slash form of that page and, for the home page, the host form of
        the whole site. A canonical pointing at a different page is ignored here.
        """
        page, target = _parts(normalize_url(url.strip())), _parts(normalize_url(canonical.strip()))
        if not page.host or not target.host or self._key(page) != self._key(target):
            return
        if target.path not in ("", "/"):
            self._canonical_slash[self._key(target)] = target.path.endswith("/")
        elif not page.query:
            self._canonical_hosts[_bare_host(target.host)] = target.host

    def resolve(self, url: str) -> str | None:
        """The form the set keeps for `url`, or None if no form of it was added."""
        normalized = normalize_url(url.strip())
        if normalized in self._raw:
            return normalized
        member = self._members.get(self._key(_parts(normalized)))
        return None if member is None else self._render(member)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.resolve(url) is not None

    def __len__(self) -> int:
        return len(self._members) + len(self._raw)

    def __iter__(self) -> Iterator[str]:
        yield from (self._render(member) for member in self._members.values())
        yield from self._raw

    def urls(self) -> list[str]:
        return list(self)

    @property
    def notes(self) -> list[str]:
        """One human-readable line per divergence collapsed, for the crawl log."""
        notes = [self._host_note(bare, forms) for bare, forms in self._host_forms.items()]
        notes = [note for note in notes if note]
        for member in self._members.values():
            if member.slash and member.no_slash:
                notes.append(self._slash_note(member))
        return notes

    @staticmethod
    def _key(parts: _Parts) -> str:
        bare = _bare_host(parts.host)
        return f"{parts.scheme}://{bare}:{parts.port}{parts.path.rstrip('/')}?{parts.query}"

    def _host_for(self, bare: str) -> tuple[str, str]:
        forms = self._host_forms[bare]
        if len(forms) == 1:
            return forms[0], "the only form seen"
        if bare in self._canonical_hosts:
            return self._canonical_hosts[bare], "the home page's canonical"
        if self._site_host in forms:
            return self._site_host, "the form you typed"
        return forms[0], "the form seen first"

    def _slash_for(self, member: _Member) -> tuple[bool, str]:
        if not (member.slash and member.no_slash):
            return member.slash, "the only form seen"
        if member.key in self._canonical_slash:
            return self._canonical_slash[member.key], "the page's canonical"
        return True, "the trailing-slash form"

    def _render(self, member: _Member, *, slash: bool | None = None) -> str:
        host = self._host_for(member.bare_host)[0]
        if slash is None:
            slash = self._slash_for(member)[0]
        return _build(member, host, slash)

    def _host_note(self, bare: str, forms: list[str]) -> str:
        if len(forms) < 2:
            return ""
        chosen, why = self._host_for(bare)
        others = ", ".join(form for form in forms if form != chosen)
        return f"Both {chosen} and {others} appear; using {chosen} ({why}), rewrote {others}."

    def _slash_note(self, member: _Member) -> str:
        chosen, why = self._slash_for(member)
        kept = self._render(member, slash=chosen)
        other = self._render(member, slash=not chosen)
        return f"Trailing-slash duplicates {kept} and {other}; kept {kept} ({why})."


def _build(member: _Member, host: str, slash: bool) -> str:
    port = f":{member.port}" if member.port else ""
    path = member.path + "/" if slash or not member.path else member.path
    query = f"?{member.query}" if member.query else ""
    return f"{member.scheme}://{host}{port}{path}{query}"


# --------------------------------------------------------------------------- slugs (§11)

_SLUG_MAX = 150
_SLUG_HASH_LEN = 8
_SLUG_INVALID = re.compile(r"[^a-z0-9_-]+")
_DASHES = re.compile(r"-{2,}")
# Letters NFKD does not decompose into ASCII, spelled the way their languages transliterate them.
_TRANSLITERATE = str.maketrans(
    {
        "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o", "Ø": "o",
        "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th", "ł": "l", "Ł": "l",
        "ı": "i", "ħ": "h", "Ħ": "h",
    }
)  # fmt: skip


def slugify(url: str) -> str:
    """The §11 file-system key of a URL's path: non-empty, only `[a-z0-9_-]`.

    `/` -> `home`, `/blog/post-one` -> `blog__post-one`, `/Über/Straße` -> `uber__strasse`.
    The query is not part of the slug (§11); collisions are `SlugRegistry`'s job.
    """
    # Decode per segment so that an escaped `%2F` stays inside its segment (and becomes `-`).
    segments = url_path(url.strip()).split("/")
    path = "/".join(unquote(part, errors="replace").replace("/", "-") for part in segments)
    path = path.strip("/")
    if not path:
        return "home"
    slug = _ascii_fold(path).lower().replace("/", "__")
    slug = _DASHES.sub("-", _SLUG_INVALID.sub("-", slug)).strip("-")
    if not slug:
        return "_" + _short_hash(url)
    if len(slug) > _SLUG_MAX:
        slug = slug[: _SLUG_MAX - _SLUG_HASH_LEN - 1].rstrip("-") + "-" + _short_hash(url)
    return slug


def _ascii_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_TRANSLITERATE))
    # Anything NFKD leaves non-ASCII (combining marks, CJK, ...) is dropped; the
    # substitution after this turns what is left between words into `-`.
    return decomposed.encode("ascii", "ignore").decode("ascii")


def _short_hash(url: str) -> str:
    digest = hashlib.sha1(url.encode("utf-8", "surrogatepass"), usedforsecurity=False)
    return digest.hexdigest()[:_SLUG_HASH_LEN]


class SlugRegistry:
    """Assigns unique slugs: collisions get `-2`, `-3`, ... in the order URLs are assigned."""

    def __init__(self) -> None:
        self._by_url: dict[str, str] = {}
        self._taken: set[str] = set()

    def assign(self, url: str) -> str:
        """The slug of `url`: the same one every time for the same URL string."""
        slug = self._by_url.get(url)
        if slug is not None:
            return slug
        base = slug = slugify(url)
        suffix = 2
        while slug in self._taken:
            slug = f"{base}-{suffix}"
            suffix += 1
        self._taken.add(slug)
        self._by_url[url] = slug
        return slug

    def reserve(self, url: str, slug: str) -> None:
        """Give `url` a slug decided earlier (a previous run), so that it keeps it."""
        self._by_url[url] = slug
        self._taken.add(slug)

    def get(self, url: str) -> str | None:
        return self._by_url.get(url)

    def __len__(self) -> int:
        return len(self._by_url)

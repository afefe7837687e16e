"""llms.txt as a page source: the pure rules. Bytes and URLs in, verdicts out; no I/O here.

An llms.txt is a markdown file a site publishes for language models. Its page URLs are the
markdown links `[title](url)` in it. The rules applied to each link, in order:

* absolute http(s) or root-relative (resolved against the file's origin); anything else
  (`guide.md`, `mailto:`, `#top`) is not a page URL of the site;
* same site only (the `www.` rule of the link filters);
* `.txt` on the same site is an aggregate file (another llms file, `llms-full.txt`): the caller
  reads it one level deep and records deeper ones as omitted;
* `.md` / `.mdx` name the markdown copy of an HTML page, which is what an inventory wants:
  `/docs/guide/index.md` → `/docs/guide/`, `/a/b.md` → `/a/b`, `/a/b.html.md` → `/a/b.html`;
  the markdown URL is kept beside the page (`md_url`);
* what the link filters drop (assets, API paths, pagination) is dropped here too.

The link scanner is one regular-expression pass whose every attempt stops at the next bracket or
line end, so hostile bodies (a million `[` without `]`, nested brackets, one huge line) cost time
linear in their size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from ._locale import base_prefix
from ._urls import classify, is_http_url, normalize_url, origin_of, resolve_url, site_key

# An llms.txt is a short index; the biggest real aggregates (`llms-full.txt`) run to a few MiB.
# The same cap as an HTML page: beyond it the file is cut and the cut recorded.
MAX_LLMS_BYTES = 5 * 1024 * 1024
# Aggregate files read from one llms.txt; more are recorded as omitted.
MAX_AGGREGATES = 20
# Page links kept from all files together: the walk holds them (to merge them with the sitemap),
# so they are bounded like the files themselves.
MAX_LINKS = 100_000

SOURCE = "llms.txt"

# `[title](url)` or `[title](<url>)`, optionally with a `"link title"`. Every repetition stops at a
# bracket, parenthesis or line end: no attempt rescans text a later attempt reads again.
_LINK = re.compile(
    r"\[([^\[\]\n]{0,1000}+)\]\(\s*+(?:<([^<>\n]*+)>|([^\s()<>]++))"
    r"(?:\s++\"[^\"\n]*+\")?+\s*+\)"
)
_HTML_START = re.compile(rb"^\s*(?:<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_MD_SUFFIXES = (".md", ".mdx")

LinkKind = Literal["page", "aggregate", "dropped"]


@dataclass(frozen=True, slots=True)
class LlmsLink:
    """One page URL of an llms file: the HTML page, its title, and the markdown URL if any."""

    url: str
    title: str | None = None
    md_url: str | None = None
    found_in: str = ""  # the llms file that listed it
    depth: int = 1  # 1: the llms.txt itself, 2: an aggregate file it links to


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one markdown link of an llms file is: a page, an aggregate file, or dropped (why)."""

    kind: LinkKind
    url: str | None = None
    md_url: str | None = None
    reason: str = ""


def candidates(site_url: str, explicit: str | None = None) -> list[str]:
    """Where to look, in order: `{base}/llms.txt`, `{origin}/llms.txt`, `{origin}/docs/llms.txt`.

    `explicit` (a URL the user named) replaces them all. Duplicates (a root base URL) go.
    """
    if explicit is not None:
        return [explicit]
    origin = origin_of(site_url)
    base = base_prefix(site_url) or "/"
    found: list[str] = []
    for url in (origin + base + "llms.txt", origin + "/llms.txt", origin + "/docs/llms.txt"):
        if url not in found:
            found.append(url)
    return found


def rejection(content_type: str, head: bytes, size: int) -> str | None:
    """Why a 2xx answer is not an llms file, or None when it is one.

    It must be `text/*` (not `text/html`, and not an HTML page served as text: a soft 404) and
    not empty or blank. `head` is the start of the body, `size` its decoded length.
    """
    mime = content_type.split(";", 1)[0].strip().lower()
    if not mime.startswith("text/"):
        return f"not a text file (Content-Type {mime or 'missing'})"
    if mime in ("text/html", "text/xml") or _HTML_START.match(head):
        return "an HTML page, not an llms.txt"
    if size == 0 or not head.strip():
        return "empty"
    return None


def markdown_links(text: str) -> Iterator[tuple[str, str]]:
    """The `(title, raw URL)` of every markdown link in `text`, in order. Linear in `text`."""
    for match in _LINK.finditer(text):
        raw = match.group(2) if match.group(2) is not None else match.group(3)
        yield match.group(1).strip(), raw.strip()


def html_page_of(url: str) -> str | None:
    """The HTML page a `.md`/`.mdx` URL is the markdown copy of; None for other URLs.

    `/docs/guide/index.md` → `/docs/guide/`, `/a/b.md` → `/a/b`, `/a/b.html.md` → `/a/b.html`.
    The query, if any, stays; a bare `/.md` maps to `/`.
    """
    parts = urlsplit(url)
    path = parts.path
    lower = path.lower()
    suffix = next((s for s in _MD_SUFFIXES if lower.endswith(s)), None)
    if suffix is None:
        return None
    stem = path[: -len(suffix)]
    if stem.rsplit("/", 1)[-1].lower() == "index" or stem.endswith("/") or not stem:
        stem = stem.rsplit("/", 1)[0] + "/" if "/" in stem else "/"
    return urlunsplit((parts.scheme, parts.netloc, stem or "/", parts.query, ""))


def judge_link(raw: str, file_url: str, also_site: str | None = None) -> Verdict:
    """Decide what one markdown link of the llms file at `file_url` is. Never raises.

    Links resolve against the file, and pages of the file's site are kept; `also_site` (a URL)
    names a second site whose pages are kept too: the walk's, when the user named an llms.txt
    on another site. Aggregate `.txt` files are of the file's own site only.
    """
    value = raw.strip()
    if value.startswith("/") and not value.startswith("//"):
        # Root-relative: the file's origin plus the path, with no general resolution needed.
        resolved: str | None = origin_of(file_url) + value
    elif is_http_url(value):
        resolved = resolve_url(value, file_url)
    else:
        return Verdict("dropped", reason="not absolute or root-relative")
    if resolved is None:
        return Verdict("dropped", reason="unparseable")
    url = normalize_url(resolved)
    # A normalized URL has a path (at least `/`) and no fragment: what ends before `?` is it.
    path = url.split("?", 1)[0].lower()
    if path.endswith(".txt"):
        if site_key(url) != _file_site(file_url):
            return Verdict("dropped", url=url, reason="other-host")
        return Verdict("aggregate", url=url)
    md_url = None
    if path.endswith(_MD_SUFFIXES):
        page = html_page_of(url)
        if page is not None:
            md_url, url = url, normalize_url(page)
    verdict = classify(url, file_url)  # other hosts included
    if verdict.reason == "other-host" and also_site is not None:
        verdict = classify(url, also_site)
    if verdict.decision == "drop":
        return Verdict("dropped", url=url, reason=verdict.reason)
    return Verdict("page", url=url, md_url=md_url)


@lru_cache(maxsize=64)
def _file_site(url: str) -> tuple[str, str]:
    return site_key(url)

"""Pure HTML page reading (§10, §12): bytes and the page's URL in, a `PageInfo` record out.

Used by the link crawl (links to follow, title, canonical) and by `extract` (`pages/<slug>.json`).
No I/O: every rule is testable with byte strings.

Hostile input (§14): the body is cut at `MAX_HTML_BYTES` before parsing, so memory and time are
bounded whatever the server sends. lxml's HTML parser loads nothing from the network and knows no
custom entities; a DOCTYPE (with any internal subset) and an XML declaration are cut out before
libxml2 sees the text anyway, so a declared entity stays the literal `&name;`. Nesting deeper than
libxml2's limit (2,048 levels in huge mode; 256 otherwise, which real pages with unclosed `<div>`s
reach) ends parsing there with a note: what came before is kept. Huge mode only lifts libxml2's
limits on single text nodes and depth; the byte cap is what bounds the work.

Within the cap the work per byte is bounded too: libxml2 checks each attribute of a tag against
the earlier ones, so a tag's attributes beyond `MAX_ATTRIBUTES` are cut before it parses (with a
note); the title outside `<svg>` is found in one walk, and a title's, description's or heading's
text is read from at most `MAX_TEXT_SCAN` characters of it, however deeply headings nest.

Decoding follows what browsers do, simplified (WHATWG encoding sniffing): a BOM, then the
`charset` of the Content-Type header, then a `<meta charset>` in the first 2 KiB, then UTF-8 if the
bytes are valid UTF-8, else windows-1252 (which is also what `iso-8859-1` and `ascii` labels mean).
Decoding never fails: undecodable bytes become U+FFFD.

Links (`<a href>`, `<area href>`) resolve against `<base href>` when present (itself resolved
against the page URL), else the page URL, which should be the final URL after redirects. They are
normalized (§6) and split by same-site (§8: host without `www.`, same non-default port, any
scheme) into internal and external; `mailto:`, `tel:`, `javascript:` and unresolvable values are
only counted. Counts are per occurrence; the URL lists are de-duplicated, in document order.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import lxml.html
from lxml import etree

from ._models import Heading, PageInfo
from ._urls import normalize_url, resolve_url, site_key

__all__ = ["MAX_HTML_BYTES", "Heading", "PageInfo", "decode_html", "looks_like_html", "parse_page"]

MAX_HTML_BYTES = 5 * (1 << 20)  # parsed at most; the rest of a bigger page is ignored
MAX_LINKS_KEPT = 10_000  # per list; counts stay exact beyond it
MAX_HEADINGS = 500
MAX_TEXT = 1_000  # characters kept of a title, description or heading
MAX_ATTRIBUTES = 100  # per tag; libxml2 compares each new attribute name with all earlier ones
# Characters read for a title, description or heading (and elements, for a heading).
MAX_TEXT_SCAN = 2 * MAX_TEXT

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CHARSET_PARAM = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)
_META_CHARSET = re.compile(
    rb"<meta[^>]+?charset\s*=\s*[\"']?\s*([\w.:-]+)", re.I
)  # both <meta charset=x> and <meta http-equiv content="text/html; charset=x">
# WHATWG: these labels mean windows-1252; a UTF-16 label inside the document means UTF-8.
_ENCODING_ALIASES = {"iso8859-1": "cp1252", "ascii": "cp1252"}  # codecs.lookup() names
_PROLOG = re.compile(
    r"\A\s*+(?:<\?xml[^>]{0,1000}>\s*+)?(?:<!--.*?-->\s*+)*+(?:<!DOCTYPE[^\[>]*+(?:\[.*?\])?\s*+>)?",
    re.I | re.S,
)
_INVALID_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HTML_START = re.compile(
    rb"\s*(?:<\?xml[^>]{0,1000}>\s*)?(?:<!--.*?-->\s*)*"
    rb"<(?:!doctype\s+html|html|head|body|title|meta)\b",
    re.I | re.S,
)
# A start tag as the HTML tokenizer reads it, closely enough to count its attributes: values
# may hold `<` and `>`. Every quantifier is possessive, so each character is looked at a bounded
# number of times whatever the markup.
_ATTRIBUTE = r"""[\s/]*+[^\s/>][^\s/>=]*+(?>\s*+=\s*+(?>"[^"]*+"|'[^']*+'|[^\s>]*+))?"""
_TAG_NAME = r"<[A-Za-z][^\s/>]*+"
_TAG_START = re.compile(_TAG_NAME)
_ATTRIBUTE_ONE = re.compile(_ATTRIBUTE)
# Runs of text and of tags with few attributes, or else one tag with any number of them.
_MARKUP = re.compile(
    rf"(?:[^<]++|<(?![A-Za-z])|{_TAG_NAME}(?:{_ATTRIBUTE}){{0,{MAX_ATTRIBUTES}}}+[\s/]*+(?:>|\Z))++"
    rf"|(?P<crowded>{_TAG_NAME}(?:{_ATTRIBUTE})*+[\s/]*+>?)"
)
_SPACES = re.compile(r"\s+")
_INVISIBLE = ("script", "style", "noscript", "template")


def _parser() -> etree.HTMLParser:
    return lxml.html.HTMLParser(
        recover=True,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,  # depth 2,048 instead of 256; input size is bounded by MAX_HTML_BYTES
        compact=True,
    )


def looks_like_html(body: bytes) -> bool:
    """Whether a body without a usable Content-Type starts like an HTML document."""
    return _HTML_START.match(body[:4096].lstrip(codecs.BOM_UTF8)) is not None


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """Decode an HTML body the way browsers pick its encoding (see the module docstring)."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(name, "replace")
    declared = _charset(content_type) if content_type else None
    if declared is None:
        meta = _META_CHARSET.search(body[:2048])
        declared = _codec(meta.group(1).decode("ascii", "replace")) if meta else None
        if declared is not None and declared.startswith("utf-16"):
            declared = "utf-8"  # a UTF-16 document cannot declare itself in ASCII bytes
    if declared is not None:
        return body.decode(declared, "replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", "replace")


def _charset(content_type: str) -> str | None:
    match = _CHARSET_PARAM.search(content_type)
    return _codec(match.group(1)) if match else None


def _codec(label: str) -> str | None:
    try:
        name = codecs.lookup(label.strip().lower()).name
    except (LookupError, ValueError):
        return None
    return _ENCODING_ALIASES.get(name, name)


def parse_page(body: bytes, url: str, content_type: str | None = None) -> PageInfo:
    """Read one HTML page. `url` should be its final URL (after redirects). Never raises."""
    truncated = len(body) > MAX_HTML_BYTES
    if truncated:
        body = body[:MAX_HTML_BYTES]
    info = PageInfo(url=url, base_url=url, bytes=len(body), truncated=truncated)
    if truncated:
        info.notes.append(f"body cut at {MAX_HTML_BYTES} bytes before parsing")
    text = decode_html(body, content_type)
    prolog = _PROLOG.match(text)  # cut so that no DTD and no entity declaration reach libxml2
    text = _INVALID_CHARS.sub("", text[prolog.end() :] if prolog else text)
    if not text.strip():
        return info
    text, crowded = _cap_attributes(text)
    if crowded:
        info.notes.append(
            f"{crowded} tags had over {MAX_ATTRIBUTES} attributes: only the first ones were read"
        )
    parser = _parser()
    try:
        doc = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        info.notes.append(f"unparseable HTML: {exc}")
        return info
    if any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log):
        info.notes.append("nesting too deep: the page was read up to that point only")
    _read_head(doc, info)
    _read_body(doc, info)
    return info


def _cap_attributes(text: str) -> tuple[str, int]:
    """`text` with every tag cut after its first `MAX_ATTRIBUTES` attributes; how many were cut."""
    crowded = 0

    def cap(match: re.Match[str]) -> str:
        nonlocal crowded
        tag = match.group(0)
        if match.group("crowded") is None:
            return tag
        crowded += 1
        name = _TAG_START.match(tag)
        pos = name.end() if name is not None else 0
        for _ in range(MAX_ATTRIBUTES):
            attribute = _ATTRIBUTE_ONE.match(tag, pos)
            if attribute is None:
                break
            pos = attribute.end()
        return tag[:pos] + ">"

    return _MARKUP.sub(cap, text), crowded


def _read_head(doc: Any, info: PageInfo) -> None:
    info.language = _clean(doc.get("lang") or doc.get("{http://www.w3.org/XML/1998/namespace}lang"))
    base = doc.find(".//base[@href]")
    if base is not None:
        resolved = resolve_url(base.get("href", ""), info.url)
        if resolved is not None:
            info.base_url = resolved
    info.title = _title(doc)
    for link in doc.iter("link"):
        rel = (link.get("rel") or "").lower().split()
        if "canonical" in rel and info.canonical is None:
            href = resolve_url(link.get("href") or "", info.base_url)
            info.canonical = normalize_url(href) if href else None
    for meta in doc.iter("meta"):
        name = (meta.get("name") or "").strip().lower()
        if name == "description" and info.description is None:
            info.description = _clean(meta.get("content"))
        elif name == "robots" and info.robots is None:
            info.robots = _clean(meta.get("content"))


def _title(doc: Any) -> str | None:
    head = doc.find("head")
    title = head.find("title") if head is not None else None
    if title is None:
        title = _title_outside_svg(doc)
    return _clean(title.text_content()) if title is not None else None


def _title_outside_svg(doc: Any) -> Any:
    """The first `<title>` not inside an `<svg>`, which names a drawing, not the page.

    One walk that counts the open `<svg>`s: asking each title for its ancestors is titles x depth.
    """
    open_svgs = 0
    for event, el in etree.iterwalk(doc, events=("start", "end"), tag=("svg", "title")):
        if el.tag == "svg":
            open_svgs += 1 if event == "start" else -1
        elif event == "start" and open_svgs == 0:
            return el
    return None


def _read_body(doc: Any, info: PageInfo) -> None:
    links = _Links(info.url)
    for el in doc.iter("h1", "h2", "h3", "form", "img", "iframe", "a", "area"):
        tag = el.tag
        if tag in ("a", "area"):
            href = el.get("href")
            if href is not None:
                links.add(info, href)
        elif tag == "img":
            info.images += 1
        elif tag == "form":
            info.forms += 1
        elif tag == "iframe":
            info.iframes += 1
        elif len(info.headings) < MAX_HEADINGS:
            text = _clean(_heading_text(el))
            if text:
                info.headings.append(Heading(int(tag[1]), text))
    info.text_length = _visible_text_length(doc)


class _Links:
    """De-duplication state of one page's link lists."""

    __slots__ = ("external", "internal", "site")

    def __init__(self, page_url: str) -> None:
        self.site = site_key(page_url)
        self.internal: set[str] = set()
        self.external: set[str] = set()

    def add(self, info: PageInfo, href: str) -> None:
        value = href.strip()
        if not value or value[0] == "#":
            return  # a jump inside this page
        resolved = resolve_url(value, info.base_url)
        if resolved is None:
            info.link_count_other += 1
            return
        url = normalize_url(resolved)
        if site_key(url) == self.site:
            info.link_count_internal += 1
            seen, kept = self.internal, info.links_internal
        else:
            info.link_count_external += 1
            seen, kept = self.external, info.links_external
        if url not in seen and len(kept) < MAX_LINKS_KEPT:
            seen.add(url)
            kept.append(url)


def _heading_text(heading: Any) -> str:
    """The start of a heading's text: `text_content()` would read all of it, for every heading
    of a nest of them, which is headings x content."""
    parts: list[str] = []
    chars = steps = MAX_TEXT_SCAN
    for event, el in etree.iterwalk(heading, events=("start", "end")):
        piece = el.text if event == "start" else el.tail if el is not heading else None
        if piece:
            parts.append(piece[:chars])
            chars -= len(parts[-1])
        steps -= 1
        if chars <= 0 or steps <= 0:
            break
    return "".join(parts)


def _visible_text_length(doc: Any) -> int:
    body = doc.find("body")
    root = body if body is not None else doc
    etree.strip_elements(root, "head", *_INVISIBLE, with_tail=False)
    return len(" ".join("".join(root.itertext()).split()))


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    text = _SPACES.sub(" ", value[:MAX_TEXT_SCAN]).strip()
    return text[:MAX_TEXT] if text else None

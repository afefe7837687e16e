"""Pure incremental sitemap parser (§4): bytes in, entries and child sitemaps out.

`SitemapParser(url).feed(chunk)` may be called with chunks of any size as they arrive; after each
call the caller takes what is ready with `take()`. No I/O happens here, so every rule is testable
with plain byte strings.

Design notes:
- The first bytes are sniffed (§2.6) before any XML parser exists, so the document kind is known up
  front and lxml's C-level tag filter only reports the elements we consume (`url`, `sitemap`,
  `item`, `entry`). That keeps Python work to one event per entry.
- Hardened lxml: no entity resolution, no DTD or network loading, no huge-tree mode. A DOCTYPE is
  cut out of the stream before libxml2 sees it: sitemaps never need one and an internal subset is
  how entity bombs arrive. XML 1.0 control characters are dropped for the same reason.
- Recovery: libxml2's recover mode salvages most damage but stops at some fatal errors. From the
  first error on, a tolerant regex scanner also reads `<loc>` values from the raw bytes; at close,
  any it found that the XML parser did not yield are added, so entries after the damage survive.
"""

from __future__ import annotations

import logging
import re
from email.utils import parsedate_to_datetime
from typing import Any

from lxml import etree

from ._models import Alternate, DocumentKind, Entry, Image, Malformed, News, Video
from ._urls import _is_clean, normalize_url, resolve_url

log = logging.getLogger(__name__)

_SNIFF_BYTES = 1024
_MAX_PROLOG = 1 << 20  # a DOCTYPE larger than this is hostile, not a sitemap
_MAX_SALVAGE = 200_000  # regex-salvaged locs kept per damaged document
_CONTROL = bytes(range(0, 9)) + b"\x0b\x0c" + bytes(range(14, 32))
_BOM = b"\xef\xbb\xbf"
_WS = b" \t\r\n"

_ROOTS: dict[str, DocumentKind] = {
    "urlset": "urlset",
    "sitemapindex": "sitemapindex",
    "rss": "rss",
    "feed": "atom",
}
_ITEM_TAG: dict[str, str] = {
    "urlset": "{*}url",
    "sitemapindex": "{*}sitemap",
    "rss": "{*}item",
    "atom": "{*}entry",
}
_ROOT_RE = re.compile(rb"<\s*(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)")
_DOCTYPE_RE = re.compile(rb"<!DOCTYPE[^\[>]*(\[.*?\]\s*)?>", re.S | re.I)
_SALVAGE_RE = re.compile(rb"<(?:[\w.-]+:)?loc\s*>(.*?)</(?:[\w.-]+:)?loc\s*>", re.S)
_CDATA_RE = re.compile(r"^<!\[CDATA\[(.*)\]\]>$", re.S)
_ENTITY_RE = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);")
# Real sitemaps carry bare `&` in URLs (`?a=1&b=2`) and HTML entities (`&eacute;`); libxml2's
# recovery drops them with the following text and stalls the push parser. Everything that is not
# one of XML's five predefined entities or a character reference is escaped to stay literal —
# which also leaves any entity declared in a (removed) DOCTYPE unexpanded.
_BARE_AMP = re.compile(
    rb"<!\[CDATA\[.*?\]\]>|&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,8}|#x[0-9a-fA-F]{1,8});)", re.S
)


def _escape_amp(m: re.Match[bytes]) -> bytes:
    return b"&amp;" if m.group() == b"&" else m.group()


_AMP_TAIL = 12  # longest reference kept whole (`&#x10FFFF;`), plus room
_LEFTOVER_ENTITY = re.compile(r"&[A-Za-z_][\w.-]*;")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}

_CANONICAL_DT = re.compile(
    r"\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:\d{2})?)?)?\Z"
)
_W3C_DT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?\Z",
    re.I,
)
# The values nearly every sitemap uses, parsed once.
_PRIORITIES: dict[str, float] = {f"{i / 10:.1f}": i / 10 for i in range(11)} | {"1": 1.0, "0": 0.0}
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})


_LOCAL_NAMES: dict[object, str] = {}


def local_name(tag: object) -> str:
    """`{ns}loc` and `loc` both → `loc`; comments and PIs (non-str tags) → empty."""
    name = _LOCAL_NAMES.get(tag)
    if name is None:
        name = tag[tag.rfind("}") + 1 :] if isinstance(tag, str) else ""
        if len(_LOCAL_NAMES) < 4096:  # a hostile document may invent endless tag names
            _LOCAL_NAMES[tag] = name
    return name


def normalize_lastmod(raw: str) -> str | None:
    """W3C datetime forms → ISO 8601 (`Z` becomes `+00:00`, seconds filled in); raw otherwise."""
    value = raw.strip()
    if not value:
        return None
    if _CANONICAL_DT.match(value):
        return value
    m = _W3C_DT.match(value)
    if m is None:
        return value
    year, month, day, hour, minute, sec, frac, zone = m.groups()
    out = f"{year}-{month}-{day}T{hour}:{minute}:{sec or '00'}{frac or ''}"
    if zone is None:
        return out
    if zone.upper() == "Z":
        return out + "+00:00"
    zone = zone.replace(":", "")
    return f"{out}{zone[:3]}:{zone[3:]}"


def normalize_rfc822(raw: str) -> str | None:
    """RSS `pubDate` → ISO 8601; raw when unparseable."""
    value = raw.strip()
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        return normalize_lastmod(value)


def parse_priority(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if 0.0 <= value <= 1.0:
        return value
    return None


def _unescape(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name[0] != "#":
            return _ENTITIES[name]
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        return chr(code) if 0 < code < 0x110000 else ""

    m = _CDATA_RE.match(text.strip())
    if m:
        return m.group(1)
    return _ENTITY_RE.sub(sub, text)


class SitemapParser:
    """Parse one sitemap document fed in chunks.

    `url` is the document's final URL (after redirects): relative `<loc>` values resolve against
    it (§4). `depth` is stamped on every entry as provenance.
    """

    def __init__(self, url: str, *, depth: int = 1) -> None:
        self.url = url
        self.depth = depth
        self.kind: DocumentKind | None = None
        self.entries: list[Entry] = []
        self.sitemaps: list[str] = []
        self.malformed: list[Malformed] = []
        self.notes: list[str] = []
        self.errors: list[str] = []
        self._prefix = b""
        self._xml: Any = None
        self._text_carry = b""
        self._amp_carry = b""
        self._errors_seen = 0
        self._salvaging = False
        self._salvage_carry = b""
        self._salvaged: list[str] = []
        self._yielded_since_error: set[str] = set()
        self._bad_priority = 0
        self._bad_changefreq = 0
        self._closed = False

    # -- public -------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        if self._closed or not data:
            return
        if self.kind is None:
            self._prefix += data
            if len(self._prefix.lstrip(_BOM + _WS)) < _SNIFF_BYTES:
                return
            data, self._prefix = self._prefix, b""
            if not self._start(data, final=False):
                self._prefix = data
                return
            return
        self._route(data)

    def close(self) -> None:
        """Flush what is buffered; the document is complete (or was cut, see `note_truncated`)."""
        if self._closed:
            return
        if self.kind is None:
            data, self._prefix = self._prefix, b""
            self._start(data, final=True)
        if self.kind == "text":
            self._text_lines(self._text_carry, final=True)
            self._text_carry = b""
        elif self._xml is not None:
            if self._amp_carry:
                self._feed_xml(b"", final=True)
            try:
                self._xml.close()
            except etree.XMLSyntaxError as exc:
                self._record_error(str(exc))
            self._drop_recovered_at_close()
            self._check_errors()
            self._finish_salvage()
        self._summarize_notes()
        self._closed = True

    def take(self) -> tuple[list[Entry], list[str], list[Malformed]]:
        """Entries, child sitemap URLs and malformed values produced since the last call."""
        entries, sitemaps, malformed = self.entries, self.sitemaps, self.malformed
        self.entries, self.sitemaps, self.malformed = [], [], []
        return entries, sitemaps, malformed

    @property
    def is_sitemap(self) -> bool:
        return self.kind is not None and self.kind != "not-a-sitemap"

    # -- sniffing -----------------------------------------------------------------------------

    def _start(self, data: bytes, *, final: bool) -> bool:
        """Decide the kind from the first bytes; False means 'need more bytes'."""
        body = data[3:] if data.startswith(_BOM) else data
        body = body.lstrip(_WS)
        if not body:
            if final:
                self._not_a_sitemap("empty body")
            return final
        if body[:1] != b"<":
            return self._start_text(body)
        body = body.translate(None, _CONTROL)
        cut = self._strip_prolog(body, final=final)
        if cut is None:
            return False
        body, root = cut
        kind = _ROOTS.get(root.lower()) if root else None
        if kind is None:
            what = f"root element <{root}>" if root else "no root element"
            self._not_a_sitemap("HTML page" if root.lower() == "html" else what)
            return True
        self.kind = kind
        self._xml = etree.XMLPullParser(
            events=("end",),
            tag=_ITEM_TAG[kind],
            recover=True,
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        self._feed_xml(body)
        return True

    def _strip_prolog(self, body: bytes, *, final: bool) -> tuple[bytes, str] | None:
        """Remove a DOCTYPE and find the root element's name (None: need more bytes)."""
        more = not final and len(body) < _MAX_PROLOG
        pos = 0
        while True:
            lt = body.find(b"<", pos)
            if lt < 0:
                return None if more else (body, "")
            if body.startswith(b"<?", lt) or body.startswith(b"<!--", lt):
                close = b"?>" if body[lt + 1 : lt + 2] == b"?" else b"-->"
                end = body.find(close, lt)
                if end < 0:
                    return None if more else (body, "")
                pos = end + len(close)
                continue
            if body[lt : lt + 9].upper() == b"<!DOCTYPE":
                dt = _DOCTYPE_RE.match(body, lt)
                if dt is None:
                    return None if more else (body, "!DOCTYPE")
                self.notes.append("DOCTYPE declaration ignored (sitemaps never need one)")
                body = body[:lt] + body[dt.end() :]
                pos = lt
                continue
            m = _ROOT_RE.match(body, lt)
            if m is None:
                return body, ""
            if m.end() == len(body) and not final:
                return None
            return body, m.group(1).decode("ascii", "replace")

    def _start_text(self, body: bytes) -> bool:
        first = body.split(b"\n", 1)[0].strip().lower()
        if first.startswith((b"http://", b"https://")):
            self.kind = "text"
            self._text_lines(body, final=False)
        else:
            self._not_a_sitemap("not XML and not a list of URLs")
        return True

    def _not_a_sitemap(self, why: str) -> None:
        self.kind = "not-a-sitemap"
        self.notes.append(f"not a sitemap: {why}")

    # -- routing ------------------------------------------------------------------------------

    def _route(self, data: bytes) -> None:
        if self.kind == "text":
            self._text_lines(self._text_carry + data, final=False)
        elif self._xml is not None:
            self._feed_xml(data.translate(None, _CONTROL))

    def _escape(self, data: bytes, *, final: bool = False) -> bytes:
        data = self._amp_carry + data
        self._amp_carry = b""
        if b"&" not in data:
            return data
        if not final:
            # A reference or CDATA section split across chunks is judged once its end arrived.
            cut = data.rfind(b"&", max(0, len(data) - _AMP_TAIL))
            if cut >= 0 and b";" in data[cut:]:
                cut = -1
            cdata = data.rfind(b"<![CDATA[")
            if cdata >= 0 and data.find(b"]]>", cdata) < 0 and len(data) - cdata < 1 << 16:
                cut = cdata if cut < 0 else min(cut, cdata)
            if cut >= 0:
                data, self._amp_carry = data[:cut], data[cut:]
        return _BARE_AMP.sub(_escape_amp, data)

    def _feed_xml(self, data: bytes, *, final: bool = False) -> None:
        data = self._escape(data, final=final)
        was_salvaging = self._salvaging
        before = len(self.entries), len(self.sitemaps)
        try:
            self._xml.feed(data)
        except etree.XMLSyntaxError as exc:
            self._record_error(str(exc))
        self._drain_events()
        self._check_errors()
        if not self._salvaging:
            return
        if not was_salvaging:
            # The regex rescans this whole chunk, so what the XML parser already gave from it
            # must not come back twice.
            self._yielded_since_error.update(e.url for e in self.entries[before[0] :])
            self._yielded_since_error.update(self.sitemaps[before[1] :])
        self._salvage(data)

    def _drop_recovered_at_close(self) -> None:
        """An item that only ends because close() ran was cut mid-way: its text is partial."""
        for _event, el in self._xml.read_events():
            loc = el.findtext("{*}loc") or el.findtext("{*}link") or el.get("href") or ""
            self.malformed.append(Malformed(loc.strip()[:2000], "entry cut off", self.url))
            self.errors.append("document ended inside an entry")

    def _drain_events(self) -> None:
        last = None
        handle = self._handler()
        for _event, el in self._xml.read_events():
            handle(el)
            last = el
        if last is not None:
            # Keep the tree flat: completed items are dropped once handled (streaming, §5).
            parent = last.getparent()
            if parent is not None:
                del parent[: parent.index(last) + 1]

    def _handler(self) -> Any:
        if self.kind == "urlset":
            return self._on_url
        if self.kind == "sitemapindex":
            return self._on_sitemap
        if self.kind == "rss":
            return self._on_item
        return self._on_entry

    # -- errors and salvage -------------------------------------------------------------------

    def _check_errors(self) -> None:
        log_ = self._xml.feed_error_log
        if len(log_) <= self._errors_seen:
            return
        for err in list(log_)[self._errors_seen :]:
            self._record_error(f"line {err.line} col {err.column}: {err.message}")
        self._errors_seen = len(log_)
        self._salvaging = True

    def _record_error(self, message: str) -> None:
        if len(self.errors) < 20:
            self.errors.append(message)
        log.debug("XML error in %s: %s", self.url, message)

    def _salvage(self, data: bytes) -> None:
        buf = self._salvage_carry + data
        end = 0
        for m in _SALVAGE_RE.finditer(buf):
            end = m.end()
            if len(self._salvaged) < _MAX_SALVAGE:
                self._salvaged.append(m.group(1).decode("utf-8", "replace"))
        tail = buf[end:]
        cut = tail.rfind(b"<")
        self._salvage_carry = tail[cut:] if cut >= 0 and len(tail) - cut < 65536 else b""

    def _finish_salvage(self) -> None:
        if not self._salvaged:
            return
        recovered = 0
        for raw in self._salvaged:
            value = _unescape(raw)
            if "<" in value or _LEFTOVER_ENTITY.search(value):
                continue
            url = self._resolve(value)
            if url is None or url in self._yielded_since_error:
                continue
            self._yielded_since_error.add(url)
            if self.kind == "sitemapindex":
                self.sitemaps.append(url)
            else:
                self.entries.append(Entry(url=url, sitemap=self.url, depth=self.depth))
            recovered += 1
        if recovered:
            self.notes.append(f"recovered {recovered} URLs after XML damage")
        self._salvaged = []

    # -- element handlers (one call per item; the hot path) -----------------------------------

    def _resolve(self, raw: str | None, *, normalize: bool = True) -> str | None:
        if raw is None:
            self.malformed.append(Malformed("", "entry without a URL", self.url))
            return None
        value = raw.strip()
        if _is_clean(value):  # the common case: absolute and already normal (one regex)
            return value
        url = resolve_url(value, self.url)
        if url is None:
            value = raw.strip()
            reason = "empty URL" if not value else "cannot be resolved to an http(s) URL"
            self.malformed.append(Malformed(value[:2000], reason, self.url))
            return None
        return normalize_url(url) if normalize else url

    def _on_url(self, el: Any) -> None:
        loc = lastmod = changefreq = None
        priority: float | None = None
        alternates: tuple[Alternate, ...] = ()
        images: tuple[Image, ...] = ()
        videos: tuple[Video, ...] = ()
        news = None
        names = _LOCAL_NAMES
        for child in el:
            tag = child.tag
            name = names.get(tag) or local_name(tag)
            if name == "loc":
                loc = child.text
            elif name == "lastmod":
                text = child.text
                if text is not None:
                    lastmod = text if _CANONICAL_DT.match(text) else normalize_lastmod(text)
            elif name == "priority":
                priority = self._priority(child.text)
            elif name == "changefreq":
                changefreq = self._changefreq(child.text)
            elif name == "link":
                alt = self._alternate(child)
                if alt is not None:
                    alternates += (alt,)
            elif name == "image":
                img = self._image(child)
                if img is not None:
                    images += (img,)
            elif name == "video":
                videos += (self._video(child),)
            elif name == "news":
                news = self._news(child)
        url = self._resolve(loc)
        if url is None:
            return
        if self._salvaging:
            self._yielded_since_error.add(url)
        self.entries.append(
            Entry(
                url,
                lastmod,
                priority,
                changefreq,
                alternates,
                images,
                videos,
                news,
                self.url,
                self.depth,
            )
        )

    def _on_sitemap(self, el: Any) -> None:
        loc = None
        for child in el:
            if local_name(child.tag) == "loc":
                loc = child.text
        # Child sitemaps are fetched as written: §6 tracking-parameter rules are for pages, and
        # `?source=…` may well select a shard.
        url = self._resolve(loc, normalize=False)
        if url is not None:
            if self._salvaging:
                self._yielded_since_error.add(url)
            self.sitemaps.append(url)

    def _on_item(self, el: Any) -> None:
        link = pub = None
        for child in el:
            name = local_name(child.tag)
            if name == "link" and child.text:
                link = child.text
            elif name == "pubDate" and child.text:
                pub = normalize_rfc822(child.text)
            elif name == "guid" and link is None and child.get("isPermaLink") != "false":
                link = child.text
        url = self._resolve(link)
        if url is not None:
            self.entries.append(Entry(url=url, lastmod=pub, sitemap=self.url, depth=self.depth))

    def _on_entry(self, el: Any) -> None:
        href = updated = None
        for child in el:
            name = local_name(child.tag)
            if name == "link" and child.get("rel", "alternate") == "alternate":
                href = href or child.get("href")
            elif name == "updated" or (name == "published" and updated is None):
                # <updated> is the modification date; <published> only stands in for it.
                updated = normalize_lastmod(child.text or "") or updated
        url = self._resolve(href)
        if url is not None:
            self.entries.append(Entry(url=url, lastmod=updated, sitemap=self.url, depth=self.depth))

    # -- extension helpers ----------------------------------------------------------------------

    def _priority(self, raw: str | None) -> float | None:
        if raw is None:
            return None
        value = _PRIORITIES.get(raw)
        if value is not None:
            return value
        if not raw.strip():
            return None
        value = parse_priority(raw)
        if value is None:
            self._bad_priority += 1
        return value

    def _changefreq(self, raw: str | None) -> str | None:
        value = (raw or "").strip().lower()
        if not value:
            return None
        if value not in _CHANGEFREQ:
            self._bad_changefreq += 1
            return None
        return value

    def _alternate(self, el: Any) -> Alternate | None:
        if el.get("rel") != "alternate":
            return None
        hreflang, href = el.get("hreflang"), el.get("href")
        if not hreflang or href is None:
            return None
        url = self._resolve(href)
        return None if url is None else Alternate(hreflang.strip(), url)

    def _image(self, el: Any) -> Image | None:
        fields = {local_name(c.tag): (c.text or "").strip() for c in el}
        loc = fields.get("loc")
        url = resolve_url(loc, self.url) if loc else None
        if url is None:
            return None
        return Image(url, fields.get("title") or None, fields.get("caption") or None)

    def _video(self, el: Any) -> Video:
        fields = {local_name(c.tag): (c.text or "").strip() for c in el}
        return Video(
            content_loc=fields.get("content_loc") or None,
            player_loc=fields.get("player_loc") or None,
            thumbnail_loc=fields.get("thumbnail_loc") or None,
            title=fields.get("title") or None,
            description=fields.get("description") or None,
        )

    def _news(self, el: Any) -> News:
        fields: dict[str, str] = {}
        for c in el.iter():
            name = local_name(c.tag)
            if name and name not in fields:
                fields[name] = (c.text or "").strip()
        pub = fields.get("publication_date")
        return News(
            title=fields.get("title") or None,
            publication_date=normalize_lastmod(pub) if pub else None,
            language=fields.get("language") or None,
            publication_name=fields.get("name") or None,
        )

    # -- text sitemaps ----------------------------------------------------------------------------

    def _text_lines(self, data: bytes, *, final: bool) -> None:
        lines = data.split(b"\n")
        self._text_carry = b"" if final else lines.pop()
        for line in lines:
            raw = line.strip().decode("utf-8", "replace")
            if not raw:
                continue
            if not raw.lower().startswith(("http://", "https://")):
                self.malformed.append(Malformed(raw[:2000], "not an absolute URL", self.url))
                continue
            url = self._resolve(raw)
            if url is not None:
                self.entries.append(Entry(url=url, sitemap=self.url, depth=self.depth))

    def _summarize_notes(self) -> None:
        if self._bad_priority:
            self.notes.append(f"{self._bad_priority} priority values outside 0-1 or not numbers")
        if self._bad_changefreq:
            self.notes.append(f"{self._bad_changefreq} unknown changefreq values")


def parse_document(data: bytes, url: str, *, depth: int = 1) -> SitemapParser:
    """Parse a whole document at once (tests, scripts); the walker feeds chunks instead."""
    parser = SitemapParser(url, depth=depth)
    parser.feed(data)
    parser.close()
    return parser

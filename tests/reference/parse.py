"""The reference model of the sitemap parser: a frozen copy of sitescout's Python parser as it was
before the native scanner (`sitescout._core.Scanner`) replaced it. Not shipped; tests only.

It is kept as a slow oracle: the differential tests (tests/test_core_*.py) feed the same bytes to
both and demand identical results on well-formed input, so the native core is held to the
behaviour users had. Do not fix or improve it: a change here changes what "today's behaviour"
means. Only its imports differ from the original, and one deliberate change of behaviour:

- Several `<loc>`s (`_entry_loc`, `_end_open_parent`): the original kept the last `<loc>` of
  an item and silently dropped the others. Now, as in the core (rust/src/scan/xml.rs), the
  entry's URL is the item's first non-blank `<loc>` (else its first), and each further non-blank
  one is recorded as malformed ("extra <loc> in one <url> (the first is the entry)"), before
  anything else the item records. An item directly inside an open item of the same name (a
  well-formed `<url><loc>A</loc><url>…</url></url>`, or what recovery makes of an unclosed one)
  ends where the inner one starts: it is read from its children before it, first, and the
  document counts as damaged.

The original's design notes follow.

Pure incremental sitemap parser (§4): bytes in, entries and child sitemaps out.

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
  libxml2 reports some damage late (an unclosed attribute value only in close()), so the scan
  starts at the bytes fed since it last reported an item, not at the chunk with the error.
- Hostile input costs time linear in its bytes however it is chunked: the salvage scan and a
  text sitemap's unfinished line continue where the last chunk stopped instead of reading it
  again, and a value longer than any URL is dropped. `closing()` is `close()` in bounded steps,
  for the walk to keep its event loop running while salvaged entries come out.
- UTF-16 (with a BOM) is transcoded to UTF-8 as it arrives, before any other step.
"""

from __future__ import annotations

import codecs
import logging
import re
from collections import deque
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from operator import attrgetter
from typing import Any

from lxml import etree

from sitescout._models import Alternate, DocumentKind, Entry, Image, Malformed, News, Video
from tests.reference.urls import _is_clean, normalize_url, resolve_url

log = logging.getLogger(__name__)

_SNIFF_BYTES = 1024
_MAX_PROLOG = 1 << 20  # a DOCTYPE larger than this is hostile, not a sitemap
_MAX_SALVAGE = 200_000  # regex-salvaged locs kept per damaged document
_CLOSE_STEP = 5000  # salvaged locs emitted per step of closing()
_CONTROL = bytes(range(0, 9)) + b"\x0b\x0c" + bytes(range(14, 32))
_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
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
_ROOT_RE = re.compile(rb"<\s*(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)")
_DOCTYPE_RE = re.compile(rb"<!DOCTYPE[^\[>]*(\[.*?\]\s*)?>", re.S | re.I)
_PREMATURE_END = re.compile(r"Premature end of data in tag (\S+)")
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
_CDATA_OPEN = b"<![CDATA["
# No URL is this long: a `<loc>` value or a text line that runs past it is damage, and keeping
# it would let one hostile value hold memory and be copied around.
_MAX_URL_BYTES = 1 << 16
# Whitespace allowed inside a salvaged `<loc >`/`</loc >` tag: bounded, so that a tag cut by a
# chunk's end fits in the few bytes the scan carries over.
_SALVAGE_TAG_SPACE = 16
# Bytes kept before the chunk in which libxml2 last reported an item, for its lookahead.
_SALVAGE_LAG = 4096
# A parser that reports nothing for this long may be stalled on damage it will only report at
# close(); older bytes are then regex-scanned ahead of time instead of being kept.
_MAX_SALVAGE_WINDOW = 1 << 20
_URL_OF = attrgetter("url")
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
# Why a `<loc>` after an item's first is recorded (the kinds whose items take a `<loc>`).
_EXTRA_LOC = {
    "urlset": "extra <loc> in one <url> (the first is the entry)",
    "sitemapindex": "extra <loc> in one <sitemap> (the first is the sitemap)",
}
_SEVERAL_LOCS = frozenset(_EXTRA_LOC)


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


class _LocTags:
    """How the salvage finds `<loc>` and `</loc>` in a document whose root carries `prefix`.

    Only the sitemap's own `loc` counts: `<image:loc>` and friends name other resources.
    """

    def __init__(self, prefix: bytes) -> None:
        p = b"(?:" + re.escape(prefix) + b":)?" if prefix else b""
        opening = b"<" + p + b"loc" + rb"\s{0,%d}>" % _SALVAGE_TAG_SPACE
        self.open = re.compile(opening)
        # Greedy: the last `<loc>` in the searched range, found in one pass of the regex engine.
        self.last_open = re.compile(b"(?s:.*)" + opening)
        self.close = re.compile(b"</" + p + b"loc" + rb"\s{0,%d}>" % _SALVAGE_TAG_SPACE)
        self.longest = len(b"</:loc>") + len(prefix) + _SALVAGE_TAG_SPACE


def _is_doctype_start(head: bytes) -> bool:
    return b"<!DOCTYPE".startswith(head.upper())


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
    it. `depth` is stamped on every entry as provenance.
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
        self._prefix = bytearray()
        self._sniff_at = _SNIFF_BYTES
        self._xml: Any = None
        self._root = ""
        self._item_tag = ""
        self._loc_tags = _LocTags(b"")
        # The unfinished last line of a text sitemap, in pieces (joined once it ends), and its size.
        self._line: list[bytes] = []
        self._line_bytes = 0
        self._cut = False
        self._utf16: codecs.IncrementalDecoder | None = None
        self._amp_carry = b""
        self._in_cdata = False
        self._errors_seen = 0
        self._salvaging = False
        self._salvage_carry = b""
        self._salvage_value: bytearray | None = None
        # Salvaged values, each with the URL it resolves to (None: it does not), worked out as
        # the bytes arrive so that close() only has to drop the ones the XML parser yielded.
        self._salvaged: list[tuple[str, str | None]] = []
        # Before any error: recent chunks as fed to libxml2, each with the URLs the XML parser
        # yielded while it was fed, so that damage reported late can still be salvaged from the
        # raw bytes. URL strings, not entries: kept entries would outlive gen-0 GC and cost.
        self._window: deque[tuple[bytes, list[str] | None]] = deque()
        self._window_bytes = 0
        self._spilled: list[list[str]] | None = None
        self._yielded_since_error: set[str] = set()
        self._bad_priority = 0
        self._bad_changefreq = 0
        # Items ended early because an item of their own name started directly inside them.
        self._ended_early: set[Any] = set()
        self._closed = False

    # -- public -------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        if self._closed or not data:
            return
        if self._utf16 is not None:
            data = self._utf16.decode(data).encode()
        self._accept(data)

    def _accept(self, data: bytes) -> None:
        if self.kind is None:
            self._prefix += data
            if self._utf16 is None and self._prefix[:2] in _UTF16_BOMS:
                self._transcode_utf16()
            if len(self._prefix) < self._sniff_at:
                return
            buffered = bytes(self._prefix)
            if len(buffered.lstrip(_BOM + _WS)) >= _SNIFF_BYTES and self._start(
                buffered, final=False
            ):
                self._prefix = bytearray()
                return
            # Each try reads the whole buffer, so a long prolog trickled in small chunks would be
            # quadratic; trying again only once the buffer has doubled keeps it linear.
            self._sniff_at = 2 * len(buffered)
            return
        self._route(data)

    def note_truncated(self) -> None:
        """The body was cut short (size cap, timeout, reset, short body), so whatever follows the
        last complete entry is a fragment: call before `close()`."""
        self._cut = True

    def close(self) -> None:
        """Flush what is buffered; the document is complete (or was cut, see `note_truncated`)."""
        for _step in self.closing():
            pass

    def closing(self) -> Iterator[None]:
        """`close()` in steps of bounded work: the caller may `take()` and let other work run
        after each (the walk awaits there), since what salvage recovered is only emitted here."""
        if self._closed:
            return
        if self._utf16 is not None:
            rest = self._utf16.decode(b"", final=True).encode()
            if rest:
                self._accept(rest)
        if self.kind is None:
            data, self._prefix = bytes(self._prefix), bytearray()
            self._start(data, final=True)
        if self.kind == "text":
            self._end_text()
        elif self._xml is not None:
            if self._amp_carry:
                self._feed_xml(b"", final=True)
            try:
                self._xml.close()
            except etree.XMLSyntaxError as exc:
                self._record_error(str(exc))
            cut = self._cut_at_close()
            if self._check_errors() and not self._salvaging:
                self._start_salvage()
            self._drain_close_events(cut)
            yield from self._finish_salvage()
        self._window.clear()
        self._summarize_notes()
        self._closed = True

    def _transcode_utf16(self) -> None:
        """UTF-16 (legal XML, and seen from Windows tools) becomes UTF-8 as it arrives, so every
        byte-level step after this one sees ASCII-compatible input."""
        self._utf16 = codecs.getincrementaldecoder("utf-16")("replace")
        self._prefix = bytearray(self._utf16.decode(bytes(self._prefix)).encode())

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
        body, prefix, root = cut
        kind = _ROOTS.get(root.lower()) if root else None
        if kind is None:
            what = f"root element <{root}>" if root else "no root element"
            self._not_a_sitemap("HTML page" if root.lower() == "html" else what)
            return True
        self.kind = kind
        self._root = root
        self._item_tag = _ITEM_TAG[kind]
        self._loc_tags = _LocTags(prefix)
        self._xml = etree.XMLPullParser(
            events=("end",),
            tag=self._item_tag,
            recover=True,
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            # Transcoded from UTF-16, the bytes no longer match the declaration's encoding.
            encoding="utf-8" if self._utf16 is not None else None,
            remove_comments=True,
            remove_pis=True,
        )
        self._feed_xml(body)
        return True

    def _strip_prolog(self, body: bytes, *, final: bool) -> tuple[bytes, bytes, str] | None:
        """Remove a DOCTYPE and find the root element's prefix and name (None: need more bytes).

        While more bytes may come, a construct cut by the end of the buffer (`<`, `<!-`,
        `<!DOCT`, `<sm:`) is waited for, never judged on its first bytes.
        """
        more = not final and len(body) < _MAX_PROLOG
        pos = 0
        # Pieces of the body between the DOCTYPEs cut out: splicing each out would copy the
        # rest of the body once per DOCTYPE.
        kept: list[bytes] = []
        rest = 0

        def done(prefix: bytes, root: str) -> tuple[bytes, bytes, str]:
            if not kept:
                return body, prefix, root
            self.notes.append("DOCTYPE declaration ignored (sitemaps never need one)")
            return b"".join([*kept, body[rest:]]), prefix, root

        while True:
            lt = body.find(b"<", pos)
            if lt < 0:
                return None if more else done(b"", "")
            head = body[lt : lt + 9]
            if more and len(head) < 9 and (b"<!--".startswith(head) or _is_doctype_start(head)):
                return None
            if body.startswith(b"<?", lt) or body.startswith(b"<!--", lt):
                close = b"?>" if body[lt + 1 : lt + 2] == b"?" else b"-->"
                end = body.find(close, lt)
                if end < 0:
                    return None if more else done(b"", "")
                pos = end + len(close)
                continue
            if head.upper() == b"<!DOCTYPE":
                dt = _DOCTYPE_RE.match(body, lt)
                if dt is None:
                    return None if more else done(b"", "!DOCTYPE")
                kept.append(body[rest:lt])
                rest = pos = dt.end()
                continue
            m = _ROOT_RE.match(body, lt)
            if m is None:
                if more and not body[lt + 1 :].strip(_WS):
                    return None
                return done(b"", "")
            if more and (m.end() == len(body) or body[m.end() :] == b":"):
                return None
            return done(m.group(1) or b"", m.group(2).decode("ascii", "replace"))

    def _start_text(self, body: bytes) -> bool:
        first = body.split(b"\n", 1)[0].strip().lower()
        if first.startswith((b"http://", b"https://")):
            self.kind = "text"
            self._text_feed(body)
        else:
            self._not_a_sitemap("not XML and not a list of URLs")
        return True

    def _not_a_sitemap(self, why: str) -> None:
        self.kind = "not-a-sitemap"
        self.notes.append(f"not a sitemap: {why}")

    # -- routing ------------------------------------------------------------------------------

    def _route(self, data: bytes) -> None:
        if self.kind == "text":
            self._text_feed(data)
        elif self._xml is not None:
            self._feed_xml(data.translate(None, _CONTROL))

    def _escape(self, data: bytes, *, final: bool = False) -> bytes:
        """Escape bare `&` outside CDATA, giving the same bytes however the input is chunked.

        Every chunk handed to `_BARE_AMP` starts outside any CDATA section; what could change
        meaning with the next chunk (a reference or a `<![CDA` opening) is held back in
        `_amp_carry` until it is complete, and a CDATA section still open at the chunk's end is
        passed on as it is.
        """
        if self._amp_carry:
            data = self._amp_carry + data
            self._amp_carry = b""
        head = b""
        if self._in_cdata:
            end = data.find(b"]]>")
            if end < 0:
                if final:
                    return data
                # A `]]` here may be closed by the next chunk's `>`.
                return self._hold(data, len(data) - min(2, len(data) - len(data.rstrip(b"]"))))
            self._in_cdata = False
            head, data = data[: end + 3], data[end + 3 :]
        n = len(data)
        cut = raw = n
        if not final:
            outside = 0  # from here on, no section started earlier is still open
            # One-byte `in` is a memchr; a search for `<![CDATA[` is far slower on markup.
            start = data.find(_CDATA_OPEN) if b"[" in data else -1
            if start >= 0:
                close = data.rfind(b"]]>")
                if close > start:
                    outside = close + 3
                    start = data.find(_CDATA_OPEN, outside)
            if start >= 0:
                # Not held back whole (a long section trickled in would be copied again with
                # every chunk): its text is passed on and the next chunk resumes inside it,
                # keeping a `]]` that the next chunk's `>` may complete.
                cut = start
                self._in_cdata = True
                raw = n - min(2, n - len(data.rstrip(b"]")))
            else:
                lt = data.rfind(b"<", max(outside, n - len(_CDATA_OPEN) + 1))
                if lt >= 0 and _CDATA_OPEN.startswith(data[lt:]):
                    cut = raw = lt
                amp = data.rfind(b"&", max(outside, n - _AMP_TAIL))
                if 0 <= amp < cut and b";" not in data[amp:]:
                    cut = raw = amp
        if raw < n:
            self._amp_carry = data[raw:]
        out = data[:cut] if cut < n else data
        if b"&" in out:
            out = _BARE_AMP.sub(_escape_amp, out)
        if cut < raw:
            out += data[cut:raw]
        return head + out if head else out

    def _hold(self, data: bytes, keep_from: int) -> bytes:
        self._amp_carry = data[keep_from:]
        return data[:keep_from]

    def _feed_xml(self, data: bytes, *, final: bool = False) -> None:
        data = self._escape(data, final=final)
        entries, sitemaps = self.entries, self.sitemaps
        before = len(entries), len(sitemaps)
        try:
            self._xml.feed(data)
        except etree.XMLSyntaxError as exc:
            self._record_error(str(exc))
        progressed = self._drain_events()
        if self._salvaging:
            self._check_errors()
            self._salvage(data)
            return
        yielded = None
        if progressed:
            yielded = list(map(_URL_OF, entries[before[0] :])) + sitemaps[before[1] :]
        if self._check_errors():
            # Not trimmed first: the items just reported may follow the skipped bytes (libxml2
            # resumes after an attribute value that ran over them).
            self._window.append((data, yielded))
            self._start_salvage()
        else:
            self._remember(data, yielded)

    def _drain_events(self) -> bool:
        last = None
        handle = self._handler()
        for _event, el in self._xml.read_events():
            handle(el)
            last = el
        if last is None:
            return False
        # Keep the tree flat: completed items are dropped once handled (streaming, §5).
        parent = last.getparent()
        if parent is None:
            return True
        open_items = list(last.iterancestors(self._item_tag))
        if not open_items:
            del parent[: parent.index(last) + 1]
            return True
        # Recovery nested `last` inside an item still open (`<loc>b</url>` leaves it so): that
        # item's own children are read when it ends, so only the items handled go.
        for child in list(parent.iterchildren(self._item_tag)):
            parent.remove(child)
            if child is last:
                break
        outer = open_items[-1]
        container = outer.getparent()
        if container is not None:
            del container[: container.index(outer)]
        return True

    def _handler(self) -> Any:
        if self.kind == "urlset":
            return self._on_url
        if self.kind == "sitemapindex":
            return self._on_sitemap
        if self.kind == "rss":
            return self._on_item
        return self._on_entry

    # -- the end of the document ----------------------------------------------------------------

    def _cut_at_close(self) -> bool:
        """Did the body end inside an item, rather than recovery giving up on damage before?

        libxml2 names the innermost element still open when the bytes ran out; an item left open
        because parsing stopped at damage earlier comes with no such message.
        """
        for err in list(self._xml.feed_error_log)[self._errors_seen :]:
            m = _PREMATURE_END.match(err.message)
            if m is not None and m.group(1) != self._root:
                return True
        return False

    def _drain_close_events(self, cut: bool) -> None:
        """Items that end only because close() ran: cut mid-way if the body ended inside them."""
        items = [el for _event, el in self._xml.read_events()]
        if not items:
            return
        open_at_end: set[Any] = set()
        if cut:
            # The elements open when the bytes ran out are the last-started one and its
            # ancestors; an item recovery merely had not reported yet is not among them.
            tip = items[-1].getroottree().getroot()
            while len(tip):
                tip = tip[-1]
            open_at_end = {tip, *tip.iterancestors()}
        handle = self._handler()
        for el in items:
            if el in self._ended_early:
                continue
            if el not in open_at_end:
                handle(el)
                continue
            first = self._entry_loc(el)[0] if self.kind in _SEVERAL_LOCS else None
            loc = first or el.findtext("{*}loc") or el.findtext("{*}link") or el.get("href") or ""
            self.malformed.append(Malformed(loc.strip()[:2000], "entry cut off", self.url))
            self.errors.append("document ended inside an entry")
            # Its <loc> may be complete: the salvage must not bring the cut entry back.
            url = self._resolved_quietly(loc)
            if url is not None:
                self._yielded_since_error.add(url)

    def _resolved_quietly(self, raw: str) -> str | None:
        """What `_resolve` makes of `raw`, recording nothing (it is not on the per-item path, so
        `_resolve` keeps a lean signature)."""
        value = raw.strip()
        if _is_clean(value):
            return value
        url = resolve_url(value, self.url)
        if url is None or self.kind == "sitemapindex":
            return url
        return normalize_url(url)

    # -- errors and salvage -------------------------------------------------------------------

    def _check_errors(self) -> bool:
        """Record errors libxml2 logged since the last call; True if there were any."""
        log_ = self._xml.feed_error_log
        if len(log_) <= self._errors_seen:
            return False
        for err in list(log_)[self._errors_seen :]:
            self._record_error(f"line {err.line} col {err.column}: {err.message}")
        self._errors_seen = len(log_)
        return True

    def _record_error(self, message: str) -> None:
        if len(self.errors) < 20:
            self.errors.append(message)
        log.debug("XML error in %s: %s", self.url, message)

    def _remember(self, data: bytes, yielded: list[str] | None) -> None:
        """Keep the bytes libxml2 may not have parsed yet, in case it reports damage later."""
        window = self._window
        window.append((data, yielded))
        self._window_bytes += len(data)
        if yielded is not None:
            # An item ended in this chunk: libxml2 has parsed what came before, give or take
            # its lookahead. What a spill scanned earlier was parsed too.
            keep = _SALVAGE_LAG + len(data)
            while self._window_bytes - len(window[0][0]) >= keep:
                self._window_bytes -= len(window.popleft()[0])
            excess = self._window_bytes - keep
            if excess > 0:  # a whole network chunk would stay alive for its last few KiB
                old, old_yielded = window[0]
                window[0] = (old[excess:], old_yielded)
                self._window_bytes = keep
            if self._spilled is not None:
                self._spilled = None
                self._salvaged = []
                self._salvage_carry = b""
                self._salvage_value = None
        elif self._window_bytes > _MAX_SALVAGE_WINDOW:
            spilled = self._spilled if self._spilled is not None else []
            chunks = []
            while self._window_bytes > _MAX_SALVAGE_WINDOW // 2:
                old, old_yielded = window.popleft()
                self._window_bytes -= len(old)
                chunks.append(old)
                if old_yielded is not None:
                    spilled.append(old_yielded)
            self._spilled = spilled
            self._salvage(b"".join(chunks))

    def _start_salvage(self) -> None:
        """From the first error on, `<loc>`s are also read from the raw bytes, starting with
        those libxml2 may have skipped before it reported the damage."""
        self._salvaging = True
        seen = self._yielded_since_error
        yielded = [y for _data, y in self._window if y is not None] + (self._spilled or [])
        for urls in yielded:
            seen.update(urls)
        self._salvage(b"".join(data for data, _y in self._window))
        self._window.clear()
        self._window_bytes = 0
        self._spilled = None

    def _salvage(self, data: bytes) -> None:
        """Collect `<loc>` values from raw bytes, continuing the scan of the bytes fed before.

        A value runs from the last `<loc>` before an end tag, so `<loc>` left open by damage does
        not swallow the entries after it. Each byte is scanned a bounded number of times however
        the input is chunked: what is carried to the next call is at most a tag cut by the
        chunk's end, a value waiting for its end tag grows by appending, and one longer than any
        URL is dropped. `<loc>` repeated without end costs a few regex passes, not a Python step
        per tag.
        """
        salvaged = self._salvaged
        if len(salvaged) >= _MAX_SALVAGE:
            return
        tags = self._loc_tags
        keep = tags.longest - 1  # a tag starting before the last `keep` bytes is complete
        buf = self._salvage_carry + data if self._salvage_carry else data
        value = self._salvage_value
        pos = 0
        closed = tags.close.search(buf)  # the first end tag at or after `pos`, kept while it is
        while True:
            if value is None:
                opened = tags.open.search(buf, pos)
                if opened is None:
                    self._salvage_carry = buf[max(pos, len(buf) - keep) :]
                    break
                value, pos = bytearray(), opened.end()
            if closed is not None and closed.start() < pos:
                closed = tags.close.search(buf, pos)
            last = tags.last_open.match(buf, pos, closed.start() if closed else len(buf))
            if last is not None:
                value, pos = bytearray(), last.end()
            end = closed.start() if closed is not None else max(pos, len(buf) - keep)
            if len(value) + end - pos > _MAX_URL_BYTES:
                value, pos = None, end
                continue
            value += buf[pos:end]
            if closed is None:
                self._salvage_carry = buf[end:]
                break
            self._keep_salvaged(value.decode("utf-8", "replace"))
            value, pos = None, closed.end()
            if len(salvaged) >= _MAX_SALVAGE:
                self._salvage_carry = b""
                break
        self._salvage_value = value

    def _keep_salvaged(self, raw: str) -> None:
        value = _unescape(raw)
        if "<" not in value and not _LEFTOVER_ENTITY.search(value):
            self._salvaged.append((value, self._resolved_quietly(value)))

    def _finish_salvage(self) -> Iterator[None]:
        if not self._salvaging or not self._salvaged:  # a spill's scan is only kept on damage
            return
        recovered = 0
        normalize = self.kind != "sitemapindex"
        for i, (value, url) in enumerate(self._salvaged):
            if i % _CLOSE_STEP == _CLOSE_STEP - 1:
                yield
            if url is None:
                self._resolve(value, normalize=normalize)  # records why it is unusable
                continue
            if url in self._yielded_since_error:
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

    def _entry_loc(self, children: Any) -> tuple[str | None, list[str]]:
        """The text of the `<loc>` whose URL is the entry's (the first non-blank one, else the
        first; None without any) and the other non-blank ones, in document order."""
        texts = [c.text for c in children if local_name(c.tag) == "loc"]
        filled = [t for t in texts if t is not None and t.strip()]
        if filled:
            return filled[0], filled[1:]
        return (texts[0] if texts else None), []

    def _extra_locs(self, extras: list[str]) -> None:
        reason = _EXTRA_LOC[self.kind or ""]
        for text in extras:
            self.malformed.append(Malformed(text.strip()[:2000], reason, self.url))

    def _end_open_parent(self, el: Any) -> None:
        """An item directly inside an open item of its name: the open one ends where `el`
        starts, read from its children before `el` (its own open parent first)."""
        parent = el.getparent()
        if (
            parent is None
            or parent in self._ended_early
            or local_name(parent.tag) != local_name(el.tag)
        ):
            return
        self._end_open_parent(parent)
        self._ended_early.add(parent)
        name = local_name(el.tag)
        self._record_error(f"<{name}> inside an open <{name}>: the open one ends here")
        before = []
        for child in parent:
            if child is el:
                break
            before.append(child)
        if self.kind == "urlset":
            self._url_of(before)
        else:
            self._sitemap_of(before)

    def _on_url(self, el: Any) -> None:
        if el in self._ended_early:
            return
        self._end_open_parent(el)
        self._url_of(el)

    def _url_of(self, children: Any) -> None:
        loc, extras = self._entry_loc(children)
        self._extra_locs(extras)
        lastmod = changefreq = None
        priority: float | None = None
        alternates: tuple[Alternate, ...] = ()
        images: tuple[Image, ...] = ()
        videos: tuple[Video, ...] = ()
        news = None
        names = _LOCAL_NAMES
        for child in children:
            tag = child.tag
            name = names.get(tag) or local_name(tag)
            if name == "lastmod":
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
        if el in self._ended_early:
            return
        self._end_open_parent(el)
        self._sitemap_of(el)

    def _sitemap_of(self, children: Any) -> None:
        loc, extras = self._entry_loc(children)
        self._extra_locs(extras)
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

    def _text_feed(self, data: bytes) -> None:
        """Complete lines are read at once; the unfinished last one is kept in pieces and joined
        when it ends, so a long line costs its length, not its length times its chunks."""
        lines = data.split(b"\n")
        last = lines.pop()
        if lines:
            self._hold_line(lines[0])
            lines[0] = self._held_line()
            self._text_lines(lines)
        self._hold_line(last)

    def _hold_line(self, piece: bytes) -> None:
        room = _MAX_URL_BYTES + 1 - self._line_bytes  # one byte over the limit shows the excess
        if room > 0 and piece:
            self._line.append(piece[:room])
            self._line_bytes += min(room, len(piece))

    def _held_line(self) -> bytes:
        line = b"".join(self._line)
        self._line, self._line_bytes = [], 0
        return line

    def _end_text(self) -> None:
        line = self._held_line()
        if not self._cut:
            self._text_lines([line])
        elif line.strip():
            # The body stopped inside this line: a URL cut short is still a URL, and a wrong one.
            raw = line.strip().decode("utf-8", "replace")
            self.malformed.append(Malformed(raw[:2000], "entry cut off", self.url))
            self.errors.append("document ended inside an entry")

    def _text_lines(self, lines: list[bytes]) -> None:
        for line in lines:
            raw = line.strip().decode("utf-8", "replace")
            if not raw:
                continue
            if len(line) > _MAX_URL_BYTES:
                self.malformed.append(Malformed(raw[:2000], "line too long for a URL", self.url))
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

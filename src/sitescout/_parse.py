"""Sitemap documents (§4): bytes in, entries and child sitemaps out.

`SitemapParser(url).feed(chunk)` may be called with chunks of any size as they arrive; after each
call the caller takes what is ready with `take()`. No I/O happens here.

The reading itself is the native core's scanner (`sitescout._core.Scanner`, in `rust/`): it
sniffs the kind (urlset, sitemap index, RSS, Atom, text, not a sitemap), reads XML tolerantly
(namespace-agnostic, CDATA, bare `&` and unknown entities kept literal, a DOCTYPE ignored and
nothing ever expanded or loaded), resolves and normalizes every URL, and keeps every intact
entry of a damaged document. Its results do not depend on how the bytes were split, and its work
is linear in them. This class adds the Python objects: `Entry` and `Malformed` values for
callers that want them; the walk takes the native rows instead (`take_rows()`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

from ._core import Batch, Scanner, normalize_lastmod, normalize_rfc822, register_models
from ._models import Alternate, DocumentKind, Entry, Image, Malformed, News, Video

__all__ = ["SitemapParser", "normalize_lastmod", "normalize_rfc822", "parse_document"]

log = logging.getLogger(__name__)

# `normalize_rfc822` reads RSS `pubDate` values (RFC 822) the way
# `email.utils.parsedate_to_datetime(value).isoformat()` does, falling back on `normalize_lastmod`;
# the scanner applies it to every RSS entry. Both are the core's, re-exported here.

# The classes `Batch.entries()` builds, handed to the native core here (where its batches come
# from; `_models` stays pure), so that the glue imports no module of the package.
register_models(Entry, Alternate, Image, Video, News)


_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?([\w.:-]+)""", re.I)

_REFUSAL = "not a sitemap"  # how the scanner starts the note of a refused document


class SitemapParser:
    """Parse one sitemap document fed in chunks.

    `url` is the document's final URL (after redirects): relative `<loc>` values resolve against
    it. `depth` is stamped on every entry as provenance. `charset` is the encoding label the
    HTTP Content-Type names (see `charset_of`): the document is read in it when its XML
    declaration names none (a byte order mark wins over both). Every label of the WHATWG
    Encoding Standard is read; an unknown one is noted and the document read as UTF-8.
    """

    def __init__(self, url: str, *, depth: int = 1, charset: str | None = None) -> None:
        self.url = url
        self.depth = depth
        self.sitemaps: list[str] = []
        # The `<lastmod>` of each child sitemap of an index that gives one (ISO 8601).
        self.sitemap_lastmods: dict[str, str] = {}
        self.malformed: list[Malformed] = []
        self._scanner = Scanner(url, depth, charset)
        self._rows = Batch()
        self._entries: list[Entry] = []
        self._closed = False

    @staticmethod
    def charset_of(content_type: str | None) -> str | None:
        """The `charset` parameter of a Content-Type header value, None without one."""
        match = _CHARSET_PARAM.search(content_type) if content_type else None
        return match.group(1) if match else None

    def feed(self, data: bytes) -> None:
        if self._closed or not data:
            return
        self._scanner.feed(data)
        self._pull()

    def note_truncated(self) -> None:
        """The body was cut short (size cap, timeout, reset, short body), so whatever follows the
        last complete entry is a fragment: call before `close()`."""
        self._scanner.note_truncated()

    def close(self) -> None:
        """The document is complete (or was cut, see `note_truncated`): flush what is left."""
        if self._closed:
            return
        self._closed = True
        self._scanner.close()
        self._pull()
        for error in self._scanner.errors:
            log.debug("damage in %s: %s", self.url, error)

    def closing(self) -> Iterator[None]:
        """`close()` as steps for a caller that takes results between them (one step)."""
        self.close()
        yield

    @property
    def kind(self) -> DocumentKind | None:
        return self._scanner.kind  # type: ignore[return-value]

    @property
    def is_sitemap(self) -> bool:
        kind = self._scanner.kind
        return kind is not None and kind != "not-a-sitemap"

    @property
    def notes(self) -> list[str]:
        return self._scanner.notes

    @property
    def refusal(self) -> str:
        """Why the document is not a sitemap, as its note words it (for a `not-a-sitemap`)."""
        return next((n for n in self.notes if n.startswith(_REFUSAL)), _REFUSAL)

    @property
    def errors(self) -> list[str]:
        return self._scanner.errors

    @property
    def entries(self) -> list[Entry]:
        """Entries produced and not taken yet."""
        if self._rows:
            self._entries.extend(self._rows.entries())
            self._rows = Batch()
        return self._entries

    def take(self) -> tuple[list[Entry], list[str], list[Malformed]]:
        """Entries, child sitemap URLs and malformed values produced since the last call."""
        entries = self.entries
        sitemaps, malformed = self.sitemaps, self.malformed
        self._entries, self.sitemaps, self.malformed = [], [], []
        return entries, sitemaps, malformed

    def take_rows(self) -> tuple[Batch, list[str], list[Malformed]]:
        """`take()` with the entries left as native rows (the walk's path: no object per URL)."""
        if self._entries:  # already turned into objects by reading `entries`
            raise RuntimeError("take_rows() after reading entries: use take()")
        rows, sitemaps, malformed = self._rows, self.sitemaps, self.malformed
        self._rows, self.sitemaps, self.malformed = Batch(), [], []
        return rows, sitemaps, malformed

    def _pull(self) -> None:
        rows, sitemaps, malformed = self._scanner.take()
        if rows:
            self._rows.extend(rows)
        if sitemaps:
            self.sitemaps.extend(sitemaps)
            self.sitemap_lastmods.update(self._scanner.take_sitemap_lastmods())
        for raw, reason in malformed:
            self.malformed.append(Malformed(raw, reason, self.url))


def parse_document(
    data: bytes, url: str, *, depth: int = 1, charset: str | None = None
) -> SitemapParser:
    """Parse a whole document at once (tests, scripts); the walker feeds chunks instead."""
    parser = SitemapParser(url, depth=depth, charset=charset)
    parser.feed(data)
    parser.close()
    return parser

"""Fetching and validating one selected page (§12): HTTP in, a page record or a failure class out.

The classes are those of §12: `HTTPError` (status ≥ 400), `ContentTypeError` (not HTML),
`EmptyPageError` (no meaningful body), `TimeoutError`, `NetworkError` (and `TooManyRedirects`,
`BlockedAddressError` from the fetch layer). A failure is a value, never an exception, so one page
never stops the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import FetchError
from ._html import PageInfo, parse_page
from ._http import Fetcher, Response

if TYPE_CHECKING:
    from ._render import Renderer

log = logging.getLogger(__name__)

# Pages beyond this many decoded bytes are cut: the outline, links and counts sit in the first
# few MiB of any real page, and a hostile endless body must not fill memory.
MAX_PAGE_BYTES = 8 * 1024 * 1024
_HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(slots=True)
class PageOutcome:
    url: str
    final_url: str
    status: int | None
    content_type: str
    info: PageInfo | None = None
    error_class: str | None = None
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error_class is None

    def record(self, slug: str, fetched_at: str, rendered: bool) -> dict[str, Any]:
        """The `pages/<slug>.json` document."""
        assert self.info is not None
        return {
            "url": self.url,
            "slug": slug,
            "finalUrl": self.final_url,
            "status": self.status,
            "contentType": self.content_type,
            "fetchedAt": fetched_at,
            "rendered": rendered,
            "truncated": self.truncated,
            **{_camel(k): v for k, v in self.info.to_dict().items() if k not in _NOT_RECORDED},
        }


# Already in the record under their own names (`finalUrl`, `truncated`).
_NOT_RECORDED = frozenset({"url", "truncated"})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Body:
    def __init__(self) -> None:
        self.data = bytearray()
        self.cut = False

    def feed(self, data: bytes) -> None:
        room = MAX_PAGE_BYTES - len(self.data)
        if len(data) > room:
            data, self.cut = data[:room], True
        self.data += data

    async def drain(self) -> bool:
        return not self.cut


def is_html(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media in _HTML_TYPES or media == ""


async def fetch_page(fetcher: Fetcher, url: str, renderer: Renderer | None = None) -> PageOutcome:
    """Fetch `url` and classify the result; the body is read only when it is HTML.

    With a `renderer`, the fetched bytes are handed to headless Chromium and the DOM its scripts
    build is what gets parsed (§10): the server is asked once either way.
    """
    body = _Body()

    def sink_for(resp: Response) -> _Body | None:
        return body if is_html(resp.content_type) else None

    resp = await fetcher.fetch(url, sink_for)
    out = PageOutcome(url, resp.final_url, resp.status, resp.content_type, truncated=body.cut)
    if resp.error is not None:
        out.error_class, out.error = resp.error.error_class, str(resp.error)
    elif not is_html(resp.content_type):
        media = resp.content_type.split(";", 1)[0].strip()
        out.error_class, out.error = "ContentTypeError", f"not HTML: {media}"
    elif renderer is None:
        classify_html(out, bytes(body.data))
    else:
        try:
            dom = await renderer.render(
                resp.final_url, bytes(body.data), content_type=resp.content_type,
                status=resp.status or 200,
            )  # fmt: skip
        except FetchError as exc:
            out.error_class, out.error = exc.error_class, str(exc)
        else:
            # The DOM comes back as text; the page's own charset no longer applies to it.
            out.content_type = "text/html; charset=utf-8"
            classify_html(out, dom.encode("utf-8"))
    if out.error_class is not None:
        log.warning("page %s failed: %s: %s", url, out.error_class, out.error)
    return out


def classify_html(out: PageOutcome, html: bytes) -> None:
    """Parse an HTML body into `out.info`, or mark it `EmptyPageError` when nothing is there."""
    if not html.strip():
        out.error_class, out.error = "EmptyPageError", "empty body"
        return
    info = parse_page(html, out.final_url, out.content_type)
    # A title alone is not a body: a JavaScript shell has one and nothing else.
    if not (info.text_length or info.link_count_internal or info.link_count_external) and not (
        info.images or info.forms or info.iframes
    ):
        out.error_class = "EmptyPageError"
        out.error = "no visible text, title or links (a JavaScript app? try --render)"
        return
    out.info = info

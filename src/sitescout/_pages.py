"""One selected page for `extract` (§12): the crawl's page fetch, as a page record or a failure.

The classes are those of §12: `HTTPError` (status ≥ 400), `ContentTypeError` (not HTML),
`EmptyPageError` (no meaningful body), `TimeoutError`, `NetworkError` (and `TooManyRedirects`,
`BlockedAddressError` from the fetch layer). A failure is a value, never an exception, so one page
never stops the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._crawl import fetch_page as crawl_fetch_page
from ._errors import ErrorClass
from ._http import Fetcher
from ._models import PageInfo

if TYPE_CHECKING:
    from ._render import Renderer

log = logging.getLogger(__name__)


@dataclass(slots=True)
class PageOutcome:
    url: str
    final_url: str
    status: int | None
    content_type: str
    info: PageInfo | None = None
    error_class: ErrorClass | None = None
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
            **{k: v for k, v in self.info.to_dict(camel=True).items() if k not in _NOT_RECORDED},
        }


# Already in the record under their own names (`finalUrl`, `truncated`).
_NOT_RECORDED = frozenset({"url", "truncated"})


async def extract_page(fetcher: Fetcher, url: str, renderer: Renderer | None = None) -> PageOutcome:
    """Fetch `url` and classify the result, the way the link crawl does (`_crawl.fetch_page`).

    With a `renderer`, the fetched bytes are handed to headless Chromium and the DOM its scripts
    build is what gets parsed (§10): the server is asked once either way.
    """
    fetched = await crawl_fetch_page(fetcher, url, renderer=renderer)
    # The DOM comes back as text; the page's own charset no longer applies to it.
    content_type = "text/html; charset=utf-8" if fetched.rendered else fetched.content_type
    out = PageOutcome(url, fetched.final_url, fetched.status, content_type, info=fetched.info)
    if fetched.error is not None:
        out.error_class, out.error = fetched.error.error_class, str(fetched.error)
    elif fetched.sitemap_kind is not None:
        out.error_class = "ContentTypeError"
        out.error = f"not HTML: a sitemap ({fetched.sitemap_kind})"
    if out.error_class is not None:
        out.info = None
        log.warning("page %s failed: %s: %s", url, out.error_class, out.error)
    elif out.info is not None:
        out.truncated = out.info.truncated
    return out

"""`Response`: what one fetch did, the record every room of a fetch fills in.

Kept apart from the `Fetcher` so that the rooms below it (retries, the hop loop, bodies) can
write to it without importing the class that drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._errors import FetchError
from .decode import Sink


@dataclass(slots=True)
class Response:
    """What one fetch did; `error` is set instead of raising."""

    url: str
    final_url: str
    status: int | None = None
    content_type: str = ""
    bytes: int = 0
    truncated: bool = False
    elapsed: float = 0.0
    attempts: int = 0
    redirects: list[str] = field(default_factory=list)
    error: FetchError | None = None
    # Why no connection could be made to the URL asked for (`connection refused`, `cannot resolve
    # example.com`, ...): set when the last attempt failed before any HTTP answer came, at the
    # first hop. None when an answer came, or the failure was another (a timeout, a reset).
    unreachable: str | None = None
    # What a later walk needs to ask for it conditionally, and how its body was encoded.
    etag: str | None = None
    last_modified: str | None = None
    content_encoding: str = ""
    # The server answered 304 to a conditional request: no body, the stored copy still holds.
    not_modified: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class Conditional:
    """The validators a stored copy of `url` was sent with: a request to that URL asks
    `If-None-Match` / `If-Modified-Since`, and a 304 means the copy still holds."""

    url: str
    etag: str | None = None
    last_modified: str | None = None

    def headers_for(self, url: str) -> dict[str, str]:
        """The conditional headers of a request to `url`: none unless it is the stored URL
        (a redirect's other hops are asked plainly)."""
        if url != self.url:
            return {}
        out: dict[str, str] = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


# Called with the response before its first byte: the sink its body goes to, or None to skip it.
SinkFactory = Callable[[Response], Sink | None]

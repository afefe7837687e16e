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

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


# Called with the response before its first byte: the sink its body goes to, or None to skip it.
SinkFactory = Callable[[Response], Sink | None]

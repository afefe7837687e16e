"""The one exception tree of sitescout.

::

    SitescoutError                 base of everything raised on purpose
    ├── UsageError                 the caller's mistake: bad URL, bad option (CLI exit 2)
    │   ├── BrowserUnavailableError  --render without Playwright or Chromium installed
    │   └── ProjectError           a project or walk-state directory cannot be used
    ├── FetchError                 one document or page could not be fetched (carries .url)
    │   ├── HTTPError              final status >= 400 (carries .status)
    │   ├── ContentTypeError       the body is not what was asked for (e.g. not HTML)
    │   ├── EmptyPageError         no meaningful body
    │   ├── FetchTimeoutError      connect or total per-document time exceeded
    │   ├── NetworkError           connection refused/reset, DNS, TLS, protocol errors
    │   ├── TooManyRedirects       more than the allowed redirects, or a redirect loop
    │   └── BlockedAddressError    the SSRF guard refused the target address
    └── NothingFoundError          discovery found no sitemap and no page (CLI exit 3)

A recorded failure names its class with an `ErrorClass`: the name of a `FetchError` class (a
timeout records `"TimeoutError"`, the name the spec and recorded outputs use), or
one of the outcomes that are not exceptions (a document that answered but is not a sitemap,
an llms.txt that is not one, a bug caught so the walk goes on, a run stopped by Ctrl-C).

Web input never raises out of a walk: a failed document becomes a recorded error in the
walk report. These exceptions surface from single-document helpers and from caller mistakes.
"""

from __future__ import annotations

from typing import ClassVar, Literal

ErrorClass = Literal[
    "HTTPError",
    "ContentTypeError",
    "EmptyPageError",
    "TimeoutError",
    "NetworkError",
    "TooManyRedirects",
    "BlockedAddressError",
    "NotASitemap",
    "NotAnLlmsFile",
    "UsageError",
    "InternalError",
    "Interrupted",
]


class SitescoutError(Exception):
    """Base class of every exception sitescout raises on purpose."""


class UsageError(SitescoutError, ValueError):
    """The caller passed something unusable (a bad URL, a negative budget)."""


class BrowserUnavailableError(UsageError):
    """`--render` was asked for, but Playwright or Chromium is not installed (CLI exit 2)."""


class FetchError(SitescoutError):
    """A document could not be fetched."""

    error_class: ClassVar[ErrorClass] = "NetworkError"

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url

    def __str__(self) -> str:
        return f"{self.args[0]} ({self.url})"


class HTTPError(FetchError):
    error_class: ClassVar[ErrorClass] = "HTTPError"

    def __init__(self, message: str, *, url: str, status: int) -> None:
        super().__init__(message, url=url)
        self.status = status


class ContentTypeError(FetchError):
    error_class: ClassVar[ErrorClass] = "ContentTypeError"


class EmptyPageError(FetchError):
    error_class: ClassVar[ErrorClass] = "EmptyPageError"


class FetchTimeoutError(FetchError):
    # Not `TimeoutError`, which would shadow the builtin; the recorded class keeps the spec's name.
    error_class: ClassVar[ErrorClass] = "TimeoutError"


class NetworkError(FetchError):
    error_class: ClassVar[ErrorClass] = "NetworkError"


class TooManyRedirects(FetchError):
    error_class: ClassVar[ErrorClass] = "TooManyRedirects"


class BlockedAddressError(FetchError):
    error_class: ClassVar[ErrorClass] = "BlockedAddressError"


class NothingFoundError(SitescoutError):
    """Discovery found nothing to walk."""


def check_whole(name: str, value: object, *, low: int, high: int | None = None) -> int:
    """`value` when it is a whole number in `low..high`; UsageError naming the option otherwise.

    A bool is refused: `concurrency=True` is a mistake, not one worker.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"from {low} to {high}"
        raise UsageError(f"{name} must be {span}, got {value!r}")
    return value


def refuse_running_loop(name: str, *, instead: str | None = None) -> None:
    """UsageError naming the async twin when called inside a running event loop, where the sync
    face would have to block that loop (asyncio.run refuses, and says less). The twin is
    `await {name}_async(...)` unless `instead` says what to write."""
    import asyncio  # here, not at the top: `import sitescout` loads this module, not asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    twin = instead or f"await {name}_async(...)"
    raise UsageError(f"{name} cannot run inside an event loop: use `{twin}`")

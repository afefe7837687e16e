"""Asking again: which failures are worth another attempt, how long to wait, and the loop.

Connection errors (other than a refusal), 429 and 5xx are retried with exponential backoff and
jitter, or after what `Retry-After` asks for (capped by `retry_after_cap`). Every attempt and
every wait fits inside one time limit per document: a wait that would not fit ends the fetch
with the last error instead of sleeping past it.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime

from .._errors import FetchError, FetchTimeoutError, HTTPError, NetworkError
from .config import FetchConfig
from .response import Response

log = logging.getLogger(__package__)  # "sitescout._http": the name its records have always borne


class Retry(Exception):
    """An attempt failed in a way another may not: `error` if none succeeds."""

    def __init__(self, error: FetchError, asked: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.asked = asked  # what the server's Retry-After asked for


def retry_after(value: str | None) -> float | None:
    """The wait a `Retry-After` header asks for, in seconds (uncapped), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def check_status(status: int, url: str, retry_after_value: str | None) -> None:
    """Raise for an error status: `Retry` for 429 and 5xx, which may pass (with the wait their
    `Retry-After` asks for), HTTPError for any other 4xx, which asking again will not change."""
    if status == 429 or status >= 500:
        error = HTTPError(f"HTTP {status}", url=url, status=status)
        raise Retry(error, retry_after(retry_after_value))
    if status >= 400:
        raise HTTPError(f"HTTP {status}", url=url, status=status)


def retry_delay(
    asked: float | None,
    attempt: int,
    config: FetchConfig,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before the attempt after `attempt` (0 for the first): what the server
    asked for, capped; else the backoff doubled per attempt, jittered by 0.5-1.5x so that
    clients failing together do not come back together."""
    if asked is not None:
        return min(asked, config.retry_after_cap)
    backoff: float = config.backoff * (2**attempt) * (0.5 + jitter())
    return backoff


def waited_too_long(error: FetchError, asked: float, left: float) -> FetchError:
    """`error`, saying that the server's `Retry-After` asked for more than the time left."""
    message = (
        f"{error.args[0]}; the server asked to wait {asked:.0f} s, more than the {left:.1f} s left"
    )
    if isinstance(error, HTTPError):
        return HTTPError(message, url=error.url, status=error.status)
    return NetworkError(message, url=error.url)


async def retrying(
    result: Response,
    attempt_once: Callable[[], Awaitable[None]],
    config: FetchConfig,
    time_limit: float,
) -> None:
    """Run `attempt_once` until it succeeds, fails for good or the time runs out, all within
    `time_limit` seconds; what happened goes to `result` (`attempts`, `error`), never raised."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + time_limit
    for attempt in range(config.retries + 1):
        result.attempts = attempt + 1
        try:
            async with asyncio.timeout_at(deadline):
                await attempt_once()
            return
        except Retry as retry:
            result.error = retry.error
            if attempt == config.retries:
                return
            left = deadline - loop.time()
            if retry.asked is not None and retry.asked > left:
                result.error = waited_too_long(retry.error, retry.asked, left)
                log.info("not retrying %s: %s", result.url, result.error)
                return
            delay = retry_delay(retry.asked, attempt, config)
            if delay >= left:
                log.info("no time left to retry %s: %s", result.url, retry.error)
                return
            log.info("retrying %s in %.2fs: %s", result.url, delay, retry.error)
            await asyncio.sleep(delay)
        except builtins.TimeoutError:
            result.error = FetchTimeoutError(
                f"no complete response within {time_limit:g} s", url=result.final_url
            )
            log.warning("timeout fetching %s after %d bytes", result.final_url, result.bytes)
            return
        except FetchError as exc:
            result.error = exc
            return

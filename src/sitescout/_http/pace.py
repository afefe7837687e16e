"""How fast a walk asks: `--rate` per host and a robots.txt `Crawl-delay`.

`RATE_CLOCK` spaces request starts to one host, process-wide, for every fetcher of a run (each
request awaits `take_turn`); a `Pacer` serializes a crawl, one request at a time with the site's
pause between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import replace

from .config import FetchConfig

# -- --rate ------------------------------------------------------------------------------------


class _RateClock:
    """`--rate`: request starts to one host (host and port) at least 1/rate seconds apart.

    Process-wide, so that the fetchers of one run (a walk's, then extract's pages) share it and
    a new one never starts with a burst. Each request reserves its start under a lock held for
    no await; the caller sleeps until then. Entries older than a minute are dropped.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, key: str, interval: float) -> float:
        """Seconds to wait before this request may start."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(key, now))
            self._next[key] = start + interval
            if len(self._next) > 4096:
                stale = [k for k, t in self._next.items() if t < now - 60]
                for k in stale:
                    del self._next[k]
            return start - now


RATE_CLOCK = _RateClock()


async def take_turn(origin: str, rate: float | None) -> None:
    """Wait for a request's turn at `origin` under `rate` requests a second (none: no wait)."""
    if rate is None:
        return
    wait = RATE_CLOCK.reserve(origin, 1.0 / rate)
    if wait > 0:
        await asyncio.sleep(wait)


# -- Crawl-delay -----------------------------------------------------------------------------------

# A robots.txt asking for more is obeyed up to this (an hour per page would never finish).
MAX_CRAWL_DELAY = 60.0


class Pacer:
    """robots.txt `Crawl-delay`: one request at a time, `delay` seconds from the end of one to the
    start of the next.

    End to start, not start to start: it is the reading that can never be faster than the other
    (a slow answer does not eat into the pause the site asked for), Yandex documents the directive
    that way, and the batch suite checks the gap from the server's side as end to start. A delay
    of None or 0 paces nothing; one above `MAX_CRAWL_DELAY` is capped (`capped` says so).
    """

    def __init__(self, delay: float | None) -> None:
        asked = delay if delay is not None and delay > 0 else 0.0
        self.delay = min(asked, MAX_CRAWL_DELAY)
        self.capped = asked > MAX_CRAWL_DELAY
        self._lock = asyncio.Lock()
        self._next = 0.0

    def __bool__(self) -> bool:
        return self.delay > 0

    def config(self, config: FetchConfig) -> FetchConfig:
        """`config` with retries inside one fetch spaced at least as far apart as requests
        (backoff is jittered by 0.5-1.5x, hence twice the delay)."""
        if not self.delay or config.backoff >= 2 * self.delay:
            return config
        return replace(config, backoff=2 * self.delay)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold while making one request: waits for the previous one's end plus the delay."""
        if not self.delay:
            yield
            return
        async with self._lock:
            wait = self._next - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                yield
            finally:
                self._next = time.monotonic() + self.delay

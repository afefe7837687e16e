"""The worker pool on its own, no server: order, bounds, the end marker, errors, cancellation;
and the Crawl-delay pacer the crawl's and extract's workers share.

Every await runs under `asyncio.timeout`, so a pool that hangs fails the test instead of the suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable

import pytest

from sitescout._http import MAX_CRAWL_DELAY, FetchConfig, Pacer
from sitescout._pool import Pool

BOUND = 5.0  # seconds any test's awaits may take before the pool is called hung


class Recorder:
    """A pool whose workers emit `item * 10` after an optional pause, recording what happens."""

    def __init__(self, *, out_size: int = 4, pause: float = 0.0) -> None:
        self.pause = pause
        self.handled: list[int] = []
        self.errors: list[tuple[int, str]] = []
        self.cancelled: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.pool: Pool[int, int] = Pool(self.handle, self.failed, out_size=out_size)

    async def handle(self, item: int) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.pause:
                await asyncio.sleep(self.pause)
            if item < 0:
                raise ValueError(f"bad item {item}")
            self.handled.append(item)
            await self.pool.emit(item * 10)
        except asyncio.CancelledError:
            self.cancelled.append(item)
            raise
        finally:
            self.in_flight -= 1

    async def failed(self, item: int, exc: Exception) -> None:
        self.errors.append((item, str(exc)))

    def driver(self, items: list[int], workers: int) -> Callable[[], Awaitable[None]]:
        async def main() -> None:
            async with self.pool.workers(workers):
                for item in items:
                    self.pool.put(item)
                await self.pool.join()

        return main


async def collect(pool: Pool[int, int], main: Callable[[], Awaitable[None]]) -> list[int]:
    out: list[int] = []
    async with asyncio.timeout(BOUND), contextlib.aclosing(pool.run(main)) as results:
        async for value in results:
            out.append(value)
    return out


async def test_one_worker_handles_items_in_queue_order() -> None:
    rec = Recorder()
    out = await collect(rec.pool, rec.driver(list(range(20)), workers=1))
    assert rec.handled == list(range(20))
    assert out == [i * 10 for i in range(20)]


async def test_workers_never_exceed_their_count() -> None:
    rec = Recorder(pause=0.01)
    out = await collect(rec.pool, rec.driver(list(range(30)), workers=3))
    assert sorted(out) == [i * 10 for i in range(30)]
    assert rec.max_in_flight == 3  # all three were used, never a fourth


async def test_the_end_marker_ends_the_run_even_with_nothing_to_do() -> None:
    rec = Recorder()
    assert await collect(rec.pool, rec.driver([], workers=2)) == []


async def test_items_queued_by_workers_are_joined_too() -> None:
    pool: Pool[int, int]

    async def handle(item: int) -> None:
        await pool.emit(item)
        if item < 5:
            pool.put(item + 1)  # a sitemap index queuing its children

    async def failed(item: int, exc: Exception) -> None:
        raise AssertionError(f"unexpected failure of {item}: {exc}")

    pool = Pool(handle, failed, out_size=1)

    async def main() -> None:
        async with pool.workers(2):
            pool.put(0)
            await pool.join()

    assert await collect(pool, main) == [0, 1, 2, 3, 4, 5]


async def test_a_slow_consumer_holds_the_workers_back() -> None:
    rec = Recorder(out_size=2)
    results = rec.pool.run(rec.driver(list(range(50)), workers=4))
    async with asyncio.timeout(BOUND), contextlib.aclosing(results):
        first = await anext(results)
        await asyncio.sleep(0.05)  # the workers fill the output queue and wait
        # Taken by the consumer (1), waiting in the queue (2), one held by each blocked worker.
        assert len(rec.handled) <= 1 + 2 + 4
        rest = [value async for value in results]
    assert sorted([first, *rest]) == [i * 10 for i in range(50)]


async def test_an_error_in_one_item_is_reported_and_the_rest_go_on() -> None:
    rec = Recorder()
    out = await collect(rec.pool, rec.driver([1, -2, 3, -4, 5], workers=2))
    assert sorted(out) == [10, 30, 50]
    assert sorted(rec.errors) == [(-4, "bad item -4"), (-2, "bad item -2")]


class FakePanic(BaseException):
    """What a panic in the native core arrives as: PyO3's PanicException is a BaseException."""


async def test_a_base_exception_from_one_item_is_that_items_failure() -> None:
    """With one worker, a BaseException that ended it would leave the other items to no one
    and the run would wait for them forever (the timeout of `collect` says so)."""
    handled: list[int] = []
    errors: list[tuple[int, str]] = []

    async def handle(item: int) -> None:
        if item == 2:
            raise FakePanic("index out of bounds")
        handled.append(item)
        await pool.emit(item)

    async def failed(item: int, exc: Exception) -> None:
        assert isinstance(exc, Exception)
        errors.append((item, str(exc)))

    pool: Pool[int, int] = Pool(handle, failed, out_size=4)

    async def main() -> None:
        async with pool.workers(1):
            for item in range(1, 5):
                pool.put(item)
            await pool.join()

    assert await collect(pool, main) == [1, 3, 4]
    assert errors == [(2, "FakePanic('index out of bounds')")]


async def test_an_error_while_reporting_an_error_does_not_hang_the_run() -> None:
    async def handle(item: int) -> None:
        raise ValueError(item)

    async def failed(item: int, exc: Exception) -> None:
        raise RuntimeError("the recorder is broken too")

    pool: Pool[int, int] = Pool(handle, failed, out_size=1)

    async def main() -> None:
        async with pool.workers(1):
            for item in range(3):
                pool.put(item)
            await pool.join()

    assert await collect(pool, main) == []


async def test_a_driver_error_reaches_the_consumer_after_what_came_before() -> None:
    rec = Recorder()

    async def main() -> None:
        await rec.driver([1, 2], workers=1)()
        raise LookupError("no browser")

    out: list[int] = []
    with pytest.raises(LookupError, match="no browser"):
        async with asyncio.timeout(BOUND), contextlib.aclosing(rec.pool.run(main)) as results:
            async for value in results:
                out.append(value)
    assert out == [10, 20]


async def test_a_consumer_leaving_early_cancels_the_workers() -> None:
    rec = Recorder()
    gate = asyncio.Event()  # never set: every item after the first waits for it

    async def handle(item: int) -> None:
        if item > 0:
            try:
                await gate.wait()
            except asyncio.CancelledError:
                rec.cancelled.append(item)
                raise
        await rec.handle(item)

    rec.pool = Pool(handle, rec.failed, out_size=4)
    async with asyncio.timeout(BOUND):
        results = rec.pool.run(rec.driver(list(range(10)), workers=3))
        assert await anext(results) == 0
        await asyncio.sleep(0.05)  # every worker is now waiting inside an item
        async with asyncio.timeout(1.0):
            await results.aclose()
        # Cancelled and awaited by `aclose` itself, not whenever the generator is collected.
        assert sorted(rec.cancelled) == [1, 2, 3]
    assert rec.handled == [0] and rec.errors == []


async def test_cancelling_the_consumer_propagates_and_stops_everything() -> None:
    # What Ctrl-C does under `asyncio.run`: the main task is cancelled while it waits.
    started = asyncio.Event()
    stopped: list[int] = []

    async def handle(item: int) -> None:
        started.set()
        try:
            await asyncio.sleep(BOUND * 10)
        except asyncio.CancelledError:
            stopped.append(item)
            raise

    async def failed(item: int, exc: Exception) -> None:
        raise AssertionError("a cancellation is not an item's failure")

    pool: Pool[int, int] = Pool(handle, failed, out_size=1)

    async def main() -> None:
        async with pool.workers(2):
            pool.put(1)
            pool.put(2)
            await pool.join()

    async def consume() -> list[int]:
        async with contextlib.aclosing(pool.run(main)) as results:
            return [value async for value in results]

    async with asyncio.timeout(BOUND):
        task = asyncio.create_task(consume())
        await started.wait()
        await asyncio.sleep(0)  # let the second worker start its item too
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert sorted(stopped) == [1, 2]


async def test_a_pool_runs_once() -> None:
    rec = Recorder()
    assert await collect(rec.pool, rec.driver([1], workers=1)) == [10]
    with pytest.raises(RuntimeError, match="once"):
        await anext(rec.pool.run(rec.driver([], workers=1)))


async def test_a_cancellation_while_the_pool_shuts_down_is_not_lost() -> None:
    # The consumer breaks; while the workers take their time to stop, it is cancelled itself
    # (a second Ctrl-C, an outer timeout): that cancellation must still end it.
    waiting = asyncio.Event()
    cleaning = asyncio.Event()
    pool: Pool[int, int]

    async def handle(item: int) -> None:
        if item == 0:
            await waiting.wait()
            await pool.emit(0)
            return
        waiting.set()
        try:
            await asyncio.sleep(BOUND * 10)
        except asyncio.CancelledError:
            cleaning.set()
            await asyncio.sleep(0.5)  # a slow cleanup, like closing a connection
            raise

    async def failed(item: int, exc: Exception) -> None:
        raise AssertionError("a cancellation is not an item's failure")

    pool = Pool(handle, failed, out_size=1)

    async def main() -> None:
        async with pool.workers(2):
            pool.put(0)
            pool.put(1)
            await pool.join()

    async def consume() -> str:
        async with contextlib.aclosing(pool.run(main)) as results:
            async for _ in results:
                break
        return "finished"

    async with asyncio.timeout(BOUND):
        task = asyncio.create_task(consume())
        await cleaning.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# -- pacing: what spaces the crawl's and extract's workers under a Crawl-delay --------------------


async def test_the_pacer_spaces_requests_from_end_to_start() -> None:
    pacer = Pacer(0.1)
    spans: list[tuple[float, float]] = []

    async def request(duration: float) -> None:
        async with pacer.slot():
            start = time.monotonic()
            await asyncio.sleep(duration)
            spans.append((start, time.monotonic()))

    async with asyncio.timeout(BOUND):
        await asyncio.gather(request(0.15), request(0.0), request(0.0))
    assert len(spans) == 3
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start - end >= 0.1 - 0.005  # a slow answer does not eat into the pause


@pytest.mark.parametrize(
    ("asked", "delay", "capped"),
    [
        (None, 0.0, False),
        (0.0, 0.0, False),
        (-1.0, 0.0, False),
        (2.5, 2.5, False),
        (MAX_CRAWL_DELAY + 1, MAX_CRAWL_DELAY, True),
    ],
)
def test_the_pacer_takes_the_delay_robots_txt_asks_for_up_to_a_cap(
    asked: float | None, delay: float, capped: bool
) -> None:
    pacer = Pacer(asked)
    assert (pacer.delay, pacer.capped, bool(pacer)) == (delay, capped, delay > 0)


def test_the_pacer_spaces_retries_at_least_as_far_as_requests() -> None:
    config = FetchConfig(backoff=0.5)
    assert Pacer(None).config(config) is config
    assert Pacer(2.0).config(config).backoff == 4.0
    assert Pacer(0.1).config(config) is config  # already slower than the pacing


async def test_no_delay_paces_nothing() -> None:
    pacer = Pacer(None)
    inside = 0
    most = 0

    async def request() -> None:
        nonlocal inside, most
        async with pacer.slot():
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.01)
            inside -= 1

    async with asyncio.timeout(BOUND):
        await asyncio.gather(*(request() for _ in range(4)))
    assert most == 4

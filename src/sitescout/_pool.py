"""A driver task and bounded workers over one queue, with results streamed to one consumer.

The walker (documents) and the link crawl (pages) share this shape:

* the consumer iterates `pool.run(main)`; `main` is the driver: it opens what the workers need,
  starts them (`async with pool.workers(n)`), queues items (`put`) and waits for them (`join`);
* workers call `handle(item)`; what they find goes out through `emit`, a small bounded queue, so
  a slow consumer slows the workers instead of growing memory;
* the driver's end (normal or not) closes the output with an end marker; a driver error reaches
  the consumer after the items emitted before it;
* a consumer that leaves (break, `aclose()`, cancellation, Ctrl-C) cancels the driver, which
  cancels the workers: nothing keeps fetching for nobody;
* an exception in `handle` is a bug in one item, not the end of the run: `on_error` records it
  and the worker goes on, so `join` never waits for an item that will not finish. That holds for
  a `BaseException` too (a panic in the native core arrives as one), but not for cancellation,
  Ctrl-C or an exit, which end the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["Pool"]

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Out = TypeVar("Out")


class _End:
    """The end marker closing the output queue."""


_END = _End()


class Pool(Generic[Item, Out]):
    """Workers over a queue of `Item`s, emitting `Out`s to one consumer; run it once."""

    def __init__(
        self,
        handle: Callable[[Item], Awaitable[None]],
        on_error: Callable[[Item, Exception], Awaitable[None]],
        *,
        out_size: int,
    ) -> None:
        self._handle = handle
        self._on_error = on_error
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._out: asyncio.Queue[Out | _End] = asyncio.Queue(maxsize=out_size)
        self._started = False

    def put(self, item: Item) -> None:
        """Queue one item for the workers (the work queue is unbounded: callers bound it)."""
        self._queue.put_nowait(item)

    async def join(self) -> None:
        """Wait until every item queued so far, and every item they queued, is handled."""
        await self._queue.join()

    async def emit(self, item: Out) -> None:
        """Hand one result to the consumer; waits while the consumer is behind."""
        await self._out.put(item)

    @contextlib.asynccontextmanager
    async def workers(self, count: int) -> AsyncIterator[None]:
        """Run `count` workers for the duration of the block; they are cancelled on its exit."""
        tasks = [asyncio.create_task(self._worker()) for _ in range(count)]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def run(self, main: Callable[[], Awaitable[None]]) -> AsyncGenerator[Out, None]:
        """Run the driver `main` and yield what is emitted until it ends.

        Close the generator when leaving early (`contextlib.aclosing`): closing it cancels the
        driver and the workers now, on this loop, not whenever the generator is collected.
        """
        if self._started:
            raise RuntimeError("a Pool runs once")
        self._started = True
        driver = asyncio.create_task(self._drive(main))
        try:
            while True:
                item = await self._out.get()
                if isinstance(item, _End):
                    break
                yield item
            await driver  # surfaces an error of the driver instead of hiding it
        finally:
            if not driver.done():
                driver.cancel()
                try:
                    await driver
                except asyncio.CancelledError:
                    # The driver's own cancellation ends here; the consumer's goes on.
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise

    async def _drive(self, main: Callable[[], Awaitable[None]]) -> None:
        try:
            await main()
        except asyncio.CancelledError:
            raise  # the consumer left: nobody is waiting for the end marker
        except BaseException:
            await self._out.put(_END)
            raise
        await self._out.put(_END)

    async def _worker(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                await self._handle(item)
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # a bug in one item must not hang or end the run
                # A panic in the native core reaches Python as PanicException, which derives
                # from BaseException: a worker it ended would leave its queue to no one.
                error = exc if isinstance(exc, Exception) else RuntimeError(repr(exc))
                try:
                    await self._on_error(item, error)  # inside `except`: it may log.exception
                except Exception:
                    log.exception("recording the failure of %r failed", item)
            finally:
                self._queue.task_done()

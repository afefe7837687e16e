"""Ctrl-C around work that must not be torn (one rule for the library and the command line)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """SIGINT is ignored inside (only the main thread can change it: elsewhere, nothing
    changes). Processes started inside inherit that: an ignored signal stays ignored across
    exec, and Python then installs no handler of its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def ctrl_c_sets(event: threading.Event) -> Iterator[None]:
    """SIGINT sets `event` instead of raising, so the work can stop where it chooses; a second
    one raises KeyboardInterrupt at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(_signum: int, _frame: object) -> None:
        if event.is_set():
            raise KeyboardInterrupt
        event.set()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class RunEnd:
    """Ctrl-C at the end of a run that has finished.

    `reached()` marks the moment the work is done and its results are written; from then until
    the `with` block ends SIGINT is ignored, so that printing the summary or closing a file is
    not turned into an interruption (a traceback, a cut summary, a partial exit code). Before
    `reached()`, Ctrl-C works as usual. The handler in place when the block began is put back
    when it ends, not whatever replaced it meanwhile (asyncio installs its own for the length
    of a run). Only the main thread can change it: elsewhere, nothing changes.
    """

    def __init__(self) -> None:
        self._main = threading.current_thread() is threading.main_thread()
        self._previous: Any = None
        self._armed = False

    def __enter__(self) -> RunEnd:
        if self._main:
            self._previous = signal.getsignal(signal.SIGINT)
        return self

    def reached(self) -> None:
        if self._main and not self._armed:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            self._armed = True

    def __exit__(self, *exc: object) -> None:
        if self._armed:
            self._armed = False
            signal.signal(signal.SIGINT, self._previous or signal.SIG_DFL)

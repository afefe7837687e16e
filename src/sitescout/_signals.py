"""Ctrl-C around work that must not be torn (one rule for the library and the command line)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


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

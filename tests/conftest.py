from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from .server import Site


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so that slow handlers still sleeping return at once."""
    event = threading.Event()
    try:
        yield event
    finally:
        event.set()

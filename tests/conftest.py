from __future__ import annotations

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

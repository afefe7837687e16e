"""The scaling harness itself: quadratic work fails it, linear work passes it."""

from __future__ import annotations

import pytest

from tests.scaling import assert_linear

pytestmark = pytest.mark.scaling


def _quadratic(n: int) -> int:
    total = 0
    for i in range(n):
        for j in range(n):
            total += i ^ j
    return total


def _linear(n: int) -> int:
    total = 0
    for i in range(n):
        total += i ^ 7
    return total


def test_quadratic_work_fails() -> None:
    with pytest.raises(AssertionError, match=r"allowed x5"):
        assert_linear(lambda n: n, _quadratic, 150)


def test_linear_work_passes() -> None:
    assert_linear(lambda n: n, _linear, 20_000)

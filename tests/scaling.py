"""One way to prove that work grows linearly with hostile input: CPU time for 4n vs n.

A quadratic path measures about x16 (or runs into `RUN_LIMIT`); linear code measures about x4,
and on a busy 2-core machine up to x6 now and then. So each size is timed best-of-3 with the two
sizes taking turns (a busy spell then falls on both), and a round over the limit is measured
again, up to `ROUNDS` times: a real regression fails every round, noise does not.

Each round also times the sizes side by side, three pairs of adjacent blocks, and passes when
the median of the pairs' ratios is within the limit: the best small block and the best large
block may come from different spells of a busy machine (the clock speed of a core follows the
load on the other), two adjacent blocks mostly share one. A quadratic path is x16 either way.
A round ends after two turns when their best blocks are already within the limit: the third
turn is for a noisy machine, and the scaling tests are a third of the suite's time.

The small input is run four times as often as the large one, so the two timed blocks last about
as long for linear code. Timed with equal counts, the large block lasted 4x longer and so took
4x the share of a neighbour's bursts (cache and core contention inflate CPU time too): with a
bursty neighbour on the machine, best-of-3 measured linear code at x5.2-x6.0 in every round.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import statistics
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

MAX_RATIO = 5.0
ROUNDS = 5  # a passing round ends the test: more rounds only help a noisy machine; 16x never passes
T = TypeVar("T")
RUN_LIMIT = 20.0  # seconds of wall time for one measured run; linear code needs well under 1
MIN_BLOCK = 0.1  # CPU seconds: shorter blocks are mostly timer and scheduler noise


class TooSlow(BaseException):
    """Not an Exception: code under test that catches those must not swallow the alarm."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Raise TooSlow when the block runs longer (checked between bytecodes and in `re`)."""

    def alarm(_signum: int, _frame: FrameType | None) -> None:
        raise TooSlow(f"{what}: over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cpu_time(run: Callable[[], object], label: str, repeat: int = 1) -> float:
    """CPU seconds per call of `run`, over `repeat` calls timed together.

    The cyclic garbage collector is paused while timing: its full collections scan the whole
    heap, so their cost follows how much the test itself allocates, not the code under test.
    """
    gc.collect()
    gc.disable()
    try:
        with time_limit(RUN_LIMIT, label):
            start = time.process_time()
            for _ in range(repeat):
                run()
            return (time.process_time() - start) / repeat
    finally:
        gc.enable()


def _calibrated(run: Callable[[], object], label: str, repeat: int) -> int:
    """A repeat count that makes one timed block of `run` last at least MIN_BLOCK seconds."""
    once = cpu_time(run, label, repeat)
    if once * repeat >= MIN_BLOCK:
        return repeat
    return max(repeat, min(1000, int(MIN_BLOCK / max(once, 1e-6)) + 1))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def assert_linear(
    make: Callable[[int], T],
    read: Callable[[T], object],
    n: int,
    repeat: int = 1,
) -> None:
    """`read(make(4n))` costs at most MAX_RATIO times `read(make(n))` in CPU time."""
    small, large = make(n), make(4 * n)
    # `repeat` counts runs of the small input; the large one runs a quarter as often.
    large_repeat = _calibrated(lambda: read(large), f"n={4 * n}", _ceil_div(repeat, 4))
    small_repeat = 4 * large_repeat
    t_small = t_large = float("inf")
    paired: list[float] = []
    for _ in range(ROUNDS):
        paired = []
        for turn in range(3):
            if turn % 2:
                large_t = cpu_time(lambda: read(large), f"n={4 * n}", large_repeat)
                small_t = cpu_time(lambda: read(small), f"n={n}", small_repeat)
            else:
                small_t = cpu_time(lambda: read(small), f"n={n}", small_repeat)
                large_t = cpu_time(lambda: read(large), f"n={4 * n}", large_repeat)
            t_small, t_large = min(t_small, small_t), min(t_large, large_t)
            paired.append(large_t / max(small_t, 1e-9))
            if turn and t_large <= MAX_RATIO * t_small:
                return  # two turns' best already within the limit: a third only costs time
        if t_large <= MAX_RATIO * t_small or statistics.median(paired) <= MAX_RATIO:
            return
    raise AssertionError(
        f"n={n}: {t_small:.4f} s, n={4 * n}: {t_large:.4f} s "
        f"(x{t_large / max(t_small, 1e-9):.1f}, allowed x{MAX_RATIO:g}; "
        f"side by side x{statistics.median(paired):.1f})"
    )

"""The native core's boundary: what Python raises inside it comes back out.

The host codec runs CPython's `idna` codec; a UnicodeError from it means "no valid host", but any
other exception (Ctrl-C's KeyboardInterrupt, MemoryError) is not an answer about the host and
must reach the caller. It is delivered here the way Ctrl-C is: asynchronously, into a thread
that spends nearly all its time inside the codec."""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable

import pytest

from sitescout import normalize_url
from sitescout._core import Batch, Scanner
from sitescout._parse import SitemapParser


class Injected(Exception):
    """Raised into the worker thread from outside, as a signal handler's exception would be."""


def _raise_in(thread: threading.Thread) -> None:
    assert thread.ident is not None
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(Injected)
    )
    assert done == 1


def _surfaces(work: object) -> bool:
    """Whether an exception raised into a thread busy with `work(i)` reaches that thread."""
    started = threading.Event()
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            started.set()
            deadline = time.monotonic() + 5
            i = 0
            while time.monotonic() < deadline:
                work(i)  # type: ignore[operator]
                i += 1
            outcome.append(None)
        except Injected as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    started.wait(5)
    time.sleep(0.05)
    _raise_in(thread)
    thread.join(10)
    assert not thread.is_alive()
    return outcome[0] is not None


def test_an_exception_inside_the_host_codec_reaches_the_caller() -> None:
    # A new internationalized host each time: the core caches the hosts it has converted.
    def convert(trial: int) -> object:
        return lambda i: normalize_url(f"https://bücher-{i}-{trial}.example/")

    trials = [_surfaces(convert(t)) for t in range(10)]
    assert all(trials), f"{trials.count(False)} of {len(trials)} injected exceptions were lost"


def test_an_exception_inside_the_codec_reaches_the_scanners_caller() -> None:
    def scan(i: int) -> None:
        parser = SitemapParser("https://example.com/sitemap.xml")
        locs = "".join(f"<url><loc>https://bücher-{i}-{j}.example/</loc></url>" for j in range(20))
        parser.feed(f"<urlset>{locs}</urlset>".encode())
        parser.close()

    trials = [_surfaces(scan) for _ in range(5)]
    assert all(trials), f"{trials.count(False)} of {len(trials)} injected exceptions were lost"


def test_a_host_the_codec_refuses_is_no_host() -> None:
    # UnicodeError is the codec's answer: the URL has no valid host and is left as it is.
    url = "https://" + "a" * 70 + "ü.example/"
    assert normalize_url(url) == url


@pytest.mark.slow
def test_the_cores_whitespace_is_the_interpreters() -> None:
    """The core strips URL values with a table of Python's whitespace written into it; IDNA and
    lowercasing it asks the interpreter for. A Python whose `str.isspace` differs (a newer
    Unicode) must fail here, naming the code points, not read sitemaps differently in silence.
    Code points up to U+0020 are left out: the URL rules strip C0 controls too, as browsers do."""
    from sitescout._core import resolve_url

    base = "https://x.com/"
    differ = [
        f"U+{c:04X}"
        for c in range(0x21, 0x110000)
        if not 0xD800 <= c <= 0xDFFF
        and (resolve_url(chr(c) + base, base) == base) != chr(c).isspace()
    ]
    assert not differ, f"the core's whitespace differs from this Python's at {differ[:20]}"


def ticks_during(work: Callable[[], object]) -> tuple[list[float], float, float]:
    """The ticks of a thread ticking every millisecond while `work` runs, and when it ran."""
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        deadline = time.monotonic() + 120
        while not done.is_set() and time.monotonic() < deadline:  # bounded in time
            ticks.append(time.monotonic())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    time.sleep(0.05)
    start = time.monotonic()
    work()
    end = time.monotonic()
    done.set()
    ticker.join(5)
    return ticks, start, end


@pytest.fixture(scope="module")
def many_rows() -> Batch:
    """200,000 rows, each with a lastmod and two hreflang alternates: enough work for the
    counting calls to last tens of milliseconds each."""
    body = (
        b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'"
        b" xmlns:xhtml='http://www.w3.org/1999/xhtml'>"
        + b"".join(
            b"<url><loc>https://x.example/s%d/p/%d-login</loc><lastmod>2024-%02d-02</lastmod>"
            b"<xhtml:link rel='alternate' hreflang='de' href='https://x.example/de/p/%d'/>"
            b"<xhtml:link rel='alternate' hreflang='fr-%d' href='https://x.example/fr/p/%d'/>"
            b"</url>" % (i % 500, i, i % 12 + 1, i, i % 50, i)
            for i in range(200_000)
        )
        + b"</urlset>"
    )
    scanner = Scanner("https://x.example/sitemap.xml")
    scanner.feed(body)
    batch, _, _ = scanner.take()
    assert len(batch) == 200_000
    return batch


@pytest.mark.parametrize("count", ["report_urls", "report_counts", "path_groups"])
def test_the_report_counting_lets_other_threads_run(count: str, many_rows: Batch) -> None:
    """The report's and the groups' counting release the interpreter's lock like the scanner:
    a ticking thread ticks in the middle of one call."""
    from sitescout._report import _RULES

    calls: dict[str, Callable[[], object]] = {
        "report_urls": lambda: many_rows.report_urls(_RULES),
        "report_counts": many_rows.report_counts,
        "path_groups": lambda: many_rows.path_groups(2, 10),
    }
    ticks, start, end = ticks_during(calls[count])
    third = (end - start) / 3
    middle = [t for t in ticks if start + third < t < end - third]
    assert middle, f"no tick during {end - start:.3f} s of {count}"


def test_the_scanner_lets_other_threads_run_while_it_scans() -> None:
    """`Scanner.feed` releases the interpreter's lock (Dask's other threads, the event loop's
    executor keep running): a thread that ticks every millisecond ticks in the middle of one
    long feed. Holding the lock, it could tick only at the feed's two ends."""
    body = (
        b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        + b"".join(
            b"<url><loc>https://b\xc3\xbccher.example/p/%d?a=1&amp;b=2</loc>"
            b"<lastmod>2024-01-02T03:04:05Z</lastmod></url>" % i
            for i in range(200_000)
        )
        + b"</urlset>"
    )
    scanner = Scanner("https://b\u00fccher.example/sitemap.xml")
    ticks, start, end = ticks_during(lambda: scanner.feed(body))
    third = (end - start) / 3
    middle = [t for t in ticks if start + third < t < end - third]
    batch, _, _ = scanner.take()
    assert len(batch) == 200_000  # and the non-ASCII host went through the codec, lock retaken
    assert middle, f"no tick during {end - start:.3f} s of scanning"

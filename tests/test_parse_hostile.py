"""The sitemap parser under hostile input (issue 15): bounded work per byte, cut documents.

Scaling tests feed the same hostile shape at N and 4N units and require the CPU time to grow at
most 5x (process CPU time, so that other work on the machine counts for little; the best of 3
timings per size, the sizes taking turns); a quadratic path grows 16x. Every timing also has a
hard limit (SIGALRM), so a regression fails instead of hanging. The walk tests serve the
documents from a real server on 127.0.0.1 and bound every walk in time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import sitescout
from sitescout import Entry, WalkReport
from sitescout._models import Malformed
from sitescout._parse import SitemapParser, parse_document

from . import scaling
from .scaling import time_limit
from .server import RequestHandler, Site, gz, urlset

DOC = "https://x.com/sitemap.xml"
URLSET_OPEN = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
URLSET = b'<?xml version="1.0" encoding="UTF-8"?>' + URLSET_OPEN
DAMAGE = b"<url><loc>https://x.com/a</loc></url><url><loc a=>x</loc></url>"
RUN_LIMIT = scaling.RUN_LIMIT


@dataclass
class Parsed:
    kind: str | None
    entries: list[Entry]
    malformed: list[Malformed]
    errors: list[str]

    @property
    def urls(self) -> list[str]:
        return [e.url for e in self.entries]


def feed_chunks(data: bytes, size: int | None, *, cut: bool = False) -> Parsed:
    """Feed `data` whole (size None) or in `size`-byte chunks, draining after each, and close."""
    parser = SitemapParser(DOC)
    entries: list[Entry] = []
    malformed: list[Malformed] = []
    step = size or max(1, len(data))
    for pos in range(0, len(data), step):
        parser.feed(data[pos : pos + step])
        e, _s, m = parser.take()
        entries += e
        malformed += m
    if cut:
        parser.note_truncated()
    parser.close()
    e, _s, m = parser.take()
    return Parsed(parser.kind, entries + e, malformed + m, parser.errors)


def assert_linear(make: Callable[[int], bytes], n: int, size: int | None, repeat: int = 1) -> None:
    """Feeding 4n units of hostile input in `size`-byte chunks costs at most x5 that of n."""
    scaling.assert_linear(make, lambda data: feed_chunks(data, size), n, repeat)


# --------------------------------------------------------------------------- scaling


def salvage_bomb(n: int) -> bytes:
    """The issue's bomb: `<loc>` repeated without an end tag, inside a comment in a urlset."""
    return URLSET + b"<!-- " + b"<loc>" * n + b" -->" + b"</urlset>"


def salvage_bombs(n: int) -> bytes:
    """The bomb in n comments of 200 KB: more than a MiB with no entry all the same, while
    libxml2 never buffers a long comment (its own cost, which grows with the memory it takes)."""
    return URLSET + (b"<!-- " + b"<loc>" * 40_000 + b" -->") * n + b"</urlset>"


def bomb_after_damage(n: int) -> bytes:
    return URLSET + DAMAGE + b"<loc>" * n + b"</urlset>"


def nested_unclosed(n: int) -> bytes:
    return URLSET + b"<url><loc>" * n + b"</urlset>"


def long_text_line(n: int) -> bytes:
    return b"https://x.com/first\nhttps://x.com/" + b"a" * n + b"\nhttps://x.com/last\n"


def many_doctypes(n: int) -> bytes:
    return b"<!DOCTYPE urlset>" * n + URLSET_OPEN + b"<url><loc>https://x.com/</loc></url></urlset>"


def plain_urlset(n: int) -> bytes:
    items = b"".join(b"<url><loc>https://x.com/p%d</loc></url>" % i for i in range(n))
    return URLSET + items + b"</urlset>"


# (shape, n, chunk size, runs per timing). A whole document is kept small, or the large case
# would pay for falling out of the CPU caches (a linear cost, but a steeper one) and the ratio
# would measure the memory system; enough runs per timing make the small case's timed block
# last tens of milliseconds.
SCALING = {
    "salvage bomb, 64 KiB chunks": (salvage_bombs, 6, 65536, 4),
    "open <loc> after damage, whole": (bomb_after_damage, 12_000, None, 250),
    "open <loc> after damage, 16 KiB chunks": (bomb_after_damage, 500_000, 16384, 8),
    "nested unclosed <url><loc>, whole": (nested_unclosed, 12_000, None, 250),
    "one long text line, 4 KiB chunks": (long_text_line, 1 << 24, 4096, 1),
    "many DOCTYPEs, whole": (many_doctypes, 10_000, None, 8),
    "urlset fed 1 byte at a time": (plain_urlset, 1_000, 1, 1),
}


@pytest.mark.scaling
@pytest.mark.parametrize(("make", "n", "size", "repeat"), list(SCALING.values()), ids=list(SCALING))
def test_work_is_linear_in_hostile_input(
    make: Callable[[int], bytes], n: int, size: int | None, repeat: int
) -> None:
    assert_linear(make, n, size, repeat)


def trickled(
    opening: bytes, filler: bytes, closing: bytes, *, in_root: bool
) -> Callable[[int], bytes]:
    tail = b"<url><loc>https://x.com/after</loc></url></urlset>"

    def make(n: int) -> bytes:
        body = opening + filler * n + closing
        return URLSET + body + tail if in_root else body + URLSET_OPEN + tail

    return make


# (shape, runs per timing): the prolog is read far faster than the body (it is only sniffed),
# so it needs more runs for the timed block to last tens of milliseconds.
TRICKLED = {
    "comment in the root": (trickled(b"<!--", b"x", b"-->", in_root=True), 4),
    "CDATA in a loc": (
        trickled(b"<url><loc><![CDATA[", b"x", b"]]></loc></url>", in_root=True),
        4,
    ),
    "DOCTYPE internal subset": (trickled(b"<!DOCTYPE urlset [", b" ", b"]>", in_root=False), 16),
    "prolog comment": (trickled(b"<!--", b"y", b"-->", in_root=False), 16),
    "processing instruction": (trickled(b"<?pi ", b"z", b"?>", in_root=True), 4),
}


@pytest.mark.scaling
@pytest.mark.parametrize(("make", "repeat"), list(TRICKLED.values()), ids=list(TRICKLED))
def test_long_constructs_trickled_in_small_chunks_are_linear(
    make: Callable[[int], bytes], repeat: int
) -> None:
    assert_linear(make, 200_000, 64, repeat)


def test_salvage_bomb_invents_nothing_and_keeps_what_follows() -> None:
    data = URLSET + DAMAGE + b"<loc>" * 100_000 + b"<url><loc>https://x.com/b</loc></url></urlset>"
    with time_limit(RUN_LIMIT, "bomb"):
        parser = feed_chunks(data, None)
    urls = parser.urls
    assert "https://x.com/a" in urls and "https://x.com/b" in urls
    assert all(len(u) < 100 for u in urls)
    assert parser.errors


def test_no_single_feed_does_work_for_the_whole_document() -> None:
    """Fed in 64 KiB chunks, each feed() and close() costs about one chunk's worth, not more."""
    data = salvage_bomb(1_000_000)
    parser = SitemapParser(DOC)
    calls: list[float] = []
    with time_limit(RUN_LIMIT, "bomb in chunks"):
        for pos in range(0, len(data), 65536):
            start = time.process_time()
            parser.feed(data[pos : pos + 65536])
            calls.append(time.process_time() - start)
        start = time.process_time()
        parser.close()
        calls.append(time.process_time() - start)
    # The whole document costs a few hundredths of a second; the quadratic salvage spent seconds
    # in one call. A bound far above the first and far below the second holds on a busy machine.
    assert max(calls) < 1.0, f"one call took {max(calls):.3f} s of {sum(calls):.3f} s"


def test_items_after_an_unclosed_attribute_value_come_out_as_they_arrive() -> None:
    """An attribute value that never closes does not swallow the document: `<` cannot appear in
    one, so the damage ends at the next `<`. Every intact item after it is returned as soon as
    its chunk has been fed (not held back for close()), and no feed() or close() call does work
    for much more than its own chunk."""
    n = 100_000
    items = b"".join(b"<url><loc>https://x.com/p%d</loc></url>" % i for i in range(n))
    data = URLSET + b'<url a="' + items + b"</urlset>"  # an attribute value never closed
    parser = SitemapParser(DOC)
    urls: list[str] = []
    calls: list[float] = []
    with time_limit(RUN_LIMIT, "unclosed attribute value"):
        for pos in range(0, len(data), 65536):
            start = time.process_time()
            parser.feed(data[pos : pos + 65536])
            calls.append(time.process_time() - start)
            urls += [e.url for e in parser.take()[0]]
            # Every item whose end tag has arrived is out already.
            assert len(urls) >= data[: pos + 65536].count(b"</url>"), f"after {pos} bytes"
        start = time.process_time()
        parser.close()
        calls.append(time.process_time() - start)
    urls += [e.url for e in parser.take()[0]]
    assert urls == [f"https://x.com/p{i}" for i in range(n)]
    assert parser.errors
    # The whole document costs a few hundredths of a second; holding the items for close()
    # did all of that work in one call. A bound far above the first holds on a busy machine.
    assert max(calls) < 1.0, f"one call took {max(calls):.3f} s of {sum(calls):.3f} s"


# --------------------------------------------------------------------------- text sitemaps


TEXT = b"https://x.com/one\nhttps://x.com/two\nhttps://x.com/some/long/pa"


@pytest.mark.parametrize("size", [None, 1, 7, 64])
def test_cut_text_sitemap_does_not_emit_its_last_fragment(size: int | None) -> None:
    parser = feed_chunks(TEXT, size, cut=True)
    assert parser.urls == ["https://x.com/one", "https://x.com/two"]
    assert parser.malformed == [Malformed("https://x.com/some/long/pa", "entry cut off", DOC)]
    assert parser.errors == ["document ended inside an entry"]


def test_complete_text_sitemap_without_final_newline_keeps_its_last_line() -> None:
    parser = feed_chunks(TEXT, 5)
    assert parser.urls[-1] == "https://x.com/some/long/pa"
    assert not parser.errors and not parser.malformed


def test_cut_text_sitemap_at_a_line_end_loses_nothing() -> None:
    parser = feed_chunks(TEXT + b"th\n", 3, cut=True)
    assert parser.urls[-1] == "https://x.com/some/long/path"
    assert not parser.errors and not parser.malformed


@pytest.mark.parametrize("size", [None, 1000, 65536])
def test_text_line_longer_than_any_url_is_malformed(size: int | None) -> None:
    data = b"https://x.com/a\nhttps://x.com/" + b"b" * 200_000 + b"\nhttps://x.com/c\n"
    parser = feed_chunks(data, size)
    assert parser.urls == ["https://x.com/a", "https://x.com/c"]
    [bad] = parser.malformed
    assert bad.reason == "line too long for a URL" and len(bad.raw) == 2000


# --------------------------------------------------------------------------- UTF-16


def utf16_urlset(encoding: str) -> bytes:
    text = (
        f'<?xml version="1.0" encoding="UTF-16"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"<!-- pad -->" * 100}'
        "<url><loc>https://x.com/caf\u00e9</loc></url>"
        "<url><loc>https://x.com/b?x=1&amp;y=2</loc></url></urlset>"
    )
    return "\ufeff".encode(encoding) + text.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("size", [None, 1, 3, 64])
def test_utf16_sitemap_with_bom_is_read(encoding: str, size: int | None) -> None:
    parser = feed_chunks(utf16_urlset(encoding), size)
    assert parser.kind == "urlset"
    assert parser.urls == ["https://x.com/caf%C3%A9", "https://x.com/b?x=1&y=2"]
    assert not parser.errors


def test_utf16_text_sitemap_is_read() -> None:
    data = "\ufeffhttps://x.com/a\r\nhttps://x.com/b\r\n".encode("utf-16-le")
    parser = feed_chunks(data, 5)
    assert parser.kind == "text"
    assert parser.urls == ["https://x.com/a", "https://x.com/b"]


# --------------------------------------------------------------------------- over HTTP

WALK_LIMIT = 15.0


async def collect(url: str, **options: Any) -> tuple[list[Entry], WalkReport]:
    walk = sitescout.walk(url, retries=0, **options)
    entries: list[Entry] = []
    # The alarm also stops a walk stuck in synchronous work, which asyncio.timeout cannot.
    with time_limit(WALK_LIMIT + 5, f"walk of {url}"):
        async with asyncio.timeout(WALK_LIMIT):
            async for batch in walk:
                entries.extend(batch)
    return entries, walk.report


LINES = [f"https://x.com/page/{i}" for i in range(50)]
TEXT_BODY = ("\n".join(LINES) + "\nhttp://example.test/some/long/path\n").encode()
FRAGMENT = "http://example.test/some/long/pa"
CUT_AT = TEXT_BODY.index(FRAGMENT.encode()) + len(FRAGMENT)


def assert_cut_line_recorded(entries: list[Entry], report: WalkReport) -> None:
    urls = [e.url for e in entries]
    assert urls == LINES  # every complete line before the cut, and not the fragment
    assert Malformed(FRAGMENT, "entry cut off", report.documents[0].url) in report.malformed
    assert report.partial


def serve_cut(site: Site, *, then: Callable[[RequestHandler], None], length: int) -> None:
    def handler(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(length))
        h.end_headers()
        h.wfile.write(TEXT_BODY[:CUT_AT])
        h.wfile.flush()
        then(h)

    site.handle("/sitemap.txt", handler)


async def test_text_sitemap_cut_by_the_size_cap(site: Site) -> None:
    site.add("/sitemap.txt", TEXT_BODY, Content_Type="text/plain")
    entries, report = await collect(site.url + "/sitemap.txt", max_document_bytes=CUT_AT)
    assert report.documents[0].truncated
    assert report.documents[0].error == "malformed text sitemap: document ended inside an entry"
    assert_cut_line_recorded(entries, report)


async def test_text_sitemap_cut_by_a_timeout(site: Site, release: threading.Event) -> None:
    def stall(h: RequestHandler) -> None:
        release.wait(10)  # bounded; set at teardown

    serve_cut(site, then=stall, length=len(TEXT_BODY))
    started = time.monotonic()
    entries, report = await collect(site.url + "/sitemap.txt", timeout=1.0)
    assert time.monotonic() - started < 5
    assert report.errors[0].error_class == "TimeoutError"
    assert_cut_line_recorded(entries, report)


async def test_text_sitemap_cut_by_a_reset(site: Site) -> None:
    def reset(h: RequestHandler) -> None:
        time.sleep(0.2)
        h.reset()

    serve_cut(site, then=reset, length=len(TEXT_BODY))
    entries, report = await collect(site.url + "/sitemap.txt")
    assert report.errors[0].error_class == "NetworkError"
    assert_cut_line_recorded(entries, report)


async def test_text_sitemap_with_a_short_body(site: Site) -> None:
    def hang_up(h: RequestHandler) -> None:
        h.close_connection = True

    serve_cut(site, then=hang_up, length=len(TEXT_BODY) + 100)
    entries, report = await collect(site.url + "/sitemap.txt")
    assert report.errors[0].error_class == "NetworkError"
    assert_cut_line_recorded(entries, report)


async def test_complete_text_sitemap_over_http_keeps_every_line(site: Site) -> None:
    site.add("/sitemap.txt", TEXT_BODY[:CUT_AT], Content_Type="text/plain")
    entries, report = await collect(site.url + "/sitemap.txt")
    assert [e.url for e in entries] == [*LINES, FRAGMENT]
    assert not report.errors and not report.malformed


@pytest.mark.parametrize("damaged", [False, True], ids=["comment", "after damage"])
async def test_gzipped_salvage_bomb_ends_within_the_deadline(site: Site, damaged: bool) -> None:
    middle = DAMAGE + b"<loc>" * 240_000 if damaged else b"<!-- " + b"<loc>" * 240_000 + b" -->"
    good = b"<url><loc>" + site.url.encode() + b"/kept</loc></url>"
    site.add("/sitemap.xml.gz", gz(URLSET + good + middle + b"</urlset>"))
    started = time.monotonic()
    entries, report = await collect(site.url + "/sitemap.xml.gz", timeout=2.0, deadline=2.0)
    assert time.monotonic() - started < 4.0
    assert site.url + "/kept" in [e.url for e in entries]
    [document] = report.documents
    assert document.kind == "urlset"
    if damaged:
        assert document.error is not None and document.error.startswith("malformed XML")


async def test_cut_urlset_over_http_still_reports_the_cut_entry(site: Site) -> None:
    body = urlset([f"{site.url}/p{i}" for i in range(20)]).encode()
    site.add("/sitemap.xml", body)
    cap = body.index(b"/p19</loc>") + 2
    entries, report = await collect(site.url + "/sitemap.xml", max_document_bytes=cap)
    assert len(entries) == 19
    assert [m.reason for m in report.malformed] == ["entry cut off"]


async def test_one_read_inflating_to_megabytes_does_not_hold_the_event_loop(site: Site) -> None:
    """A few KiB of gzip that inflate to 8 MB reach the walk in one network read; parsing them
    is spread over turns of the event loop, so timers and other tasks keep running."""
    item = b"<url><loc>" + site.url.encode() + b"/same</loc></url>"
    site.add("/sitemap.xml.gz", gz(URLSET + item * 200_000 + b"</urlset>"))
    longest = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = time.monotonic()
        while not done.is_set():  # bounded by the walk, itself bounded by collect()
            await asyncio.sleep(0.005)
            now = time.monotonic()
            longest, last = max(longest, now - last), now

    tick = asyncio.create_task(ticker())
    try:
        entries, report = await collect(site.url + "/sitemap.xml.gz")
    finally:
        done.set()
        await tick
    assert [e.url for e in entries] == [site.url + "/same"]
    assert report.duplicates == 199_999
    # Parsing the whole read in one step held the loop for 1.35 s on a quiet machine; in pieces
    # the longest hold is the inflation of that read (about 0.3 s). The bound leaves room for a
    # busy machine and still fails the one-step parse.
    assert longest < 0.8, f"the event loop was held for {longest:.2f} s"


def test_dashes_inside_a_comment_are_reported_once_however_the_bytes_arrive() -> None:
    # Two `<!--` inside one open comment: one error whole, and one (not two) fed a byte at a
    # time, where the early kind sniff hands the XML reader one-byte pieces.
    doc = (
        b'<?ml version="1.0"?>\n<rss version="2.0"><channel><title>Blog</title>'
        b"<link>https://x.com/</link><!--https://x.com/</link><!--https://x.com/</link><!-- "
    )
    whole = parse_document(doc, "https://x.com/feed")
    parser = SitemapParser("https://x.com/feed")
    for i in range(len(doc)):
        parser.feed(doc[i : i + 1])
    parser.close()
    assert parser.errors == whole.errors
    assert sum("'--' inside a comment" in e for e in whole.errors) == 1


# --------------------------------------------------------------------------- absolute bounds


def _scan_cpu(data: bytes) -> float:
    """CPU seconds to scan `data` in 64 KiB chunks into native rows (no object per URL)."""

    def run() -> None:
        parser = SitemapParser(DOC)
        for pos in range(0, len(data), 65536):
            parser.feed(data[pos : pos + 65536])
            parser.take_rows()
        parser.close()
        parser.take_rows()

    return min(scaling.cpu_time(run, f"{len(data)} bytes") for _ in range(2))


def _namespace_maze(size: int) -> bytes:
    """250 elements deep (the depth limit is 256), each declaring 255 prefixes, then prefixed tags
    to `size` bytes: every one of them is checked against the prefixes in scope (63,750)."""
    declare = b" ".join(b'xmlns:p%d="u:%d"' % (i, i) for i in range(255))
    head = URLSET_OPEN + b"".join(b"<e " + declare + b">" for _ in range(250))
    tag = b"<q:x/>"  # an undeclared prefix: found in none of them
    body = tag * ((size - len(head)) // len(tag))
    return head + body + b"</e>" * 250 + b"</urlset>"


@pytest.mark.slow
def test_prefixed_tags_cost_the_same_however_many_prefixes_are_declared() -> None:
    """A crafted 50 MiB document costs at most 2x the CPU of a plain 50 MiB urlset."""
    size = 50 << 20
    plain = plain_urlset(size // 40)
    maze = _namespace_maze(len(plain))
    assert abs(len(maze) - len(plain)) < 1 << 20
    plain_cpu = _scan_cpu(plain)
    maze_cpu = _scan_cpu(maze)
    assert maze_cpu <= 2 * plain_cpu, f"{maze_cpu:.2f} s against {plain_cpu:.2f} s"

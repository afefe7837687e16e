"""A panic in the native core, at any entry point: `CoreError` (an ordinary Exception, not
PyO3's BaseException `PanicException`), and in a walk that document's recorded `InternalError`
while the walk goes on.

`_core._arm_panic(entry)` makes the next call of that entry point on this thread panic, as a bug
would; each entry point is armed and called below."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import sitescout
import sitescout._parse
from sitescout import _core
from sitescout._core import (
    Batch,
    CoreError,
    Inflater,
    LlmsIndex,
    Scanner,
    SeenSet,
    UrlFilter,
    UrlRules,
)

from .server import Site, urlset

RULES = UrlRules(["/test"], [], "(-2)(?:/|$)", ["login"])


def batch() -> Batch:
    b = Batch()
    b.push("https://x.com/a", "https://x.com/s.xml", 1, "sitemap")
    b.push("https://x.com/b", "https://x.com/s.xml", 1, "sitemap")
    return b


CALLS: dict[str, Callable[[], Any]] = {
    "Batch.new": Batch,
    "Batch.__len__": lambda: len(batch()),
    "Batch.pages": lambda: batch().pages(),
    "Batch.urls": lambda: batch().urls(),
    "Batch.push": lambda: Batch().push("https://x.com/", "s", 1, "sitemap"),
    "Batch.retain_under": lambda: batch().retain_under("x.com", "", "/"),
    "Batch.retain_new": lambda: batch().retain_new(SeenSet()),
    "Batch.retain_new_with_alternates": lambda: batch().retain_new_with_alternates(
        SeenSet(), SeenSet()
    ),
    "Batch.alternates": lambda: batch().alternates(SeenSet(), SeenSet()),
    "Batch.split_off": lambda: batch().split_off(1),
    "Batch.take_batches": lambda: batch().take_batches(1),
    "Batch.extend": lambda: batch().extend(batch()),
    "Batch.to_jsonl": lambda: batch().to_jsonl(),
    "Batch.to_csv": lambda: batch().to_csv(),
    "Batch.to_txt": lambda: batch().to_txt(),
    "Batch.encode": lambda: batch().encode("jsonl"),
    "Batch.report_counts": lambda: batch().report_counts(),
    "Batch.report_urls": lambda: batch().report_urls(RULES),
    "Batch.arrow_columns": lambda: batch().arrow_columns(),
    "Batch.path_groups": lambda: batch().path_groups(1, 10),
    "Batch.entries": lambda: batch().entries(),
    "Batch.url_hashes": lambda: batch().url_hashes(b"k" * 16),
    "Batch.from_entries": lambda: Batch.from_entries(batch().entries()),
    "SeenSet.new": SeenSet,
    "SeenSet.add": lambda: SeenSet().add("k"),
    "SeenSet.add_hashes": lambda: SeenSet().add_hashes(b"\0" * 8),
    "SeenSet.__contains__": lambda: "k" in SeenSet(),
    "SeenSet.__len__": lambda: len(SeenSet()),
    "SeenSet.nbytes": lambda: SeenSet().nbytes,
    "Inflater.new": lambda: Inflater(31),
    "Inflater.push": lambda: Inflater(31).push(b"\x1f"),
    "Inflater.pull": lambda: Inflater(31).pull(10),
    "Inflater.cut": lambda: Inflater(31).cut,
    "Inflater.ended": lambda: Inflater(31).ended,
    "LlmsIndex.new": LlmsIndex,
    "LlmsIndex.add": lambda: LlmsIndex().add("https://x.com/a"),
    "LlmsIndex.__contains__": lambda: "https://x.com/a" in LlmsIndex(),
    "LlmsIndex.mark_listed": lambda: LlmsIndex().mark_listed("https://x.com/a"),
    "LlmsIndex.is_listed": lambda: LlmsIndex().is_listed("https://x.com/a"),
    "LlmsIndex.mark": lambda: LlmsIndex().mark(batch()),
    "UrlFilter.new": UrlFilter,
    "UrlFilter.active": lambda: UrlFilter().active,
    "UrlFilter.keeps_url": lambda: UrlFilter(include=["/a"]).keeps_url("https://x.com/a"),
    "UrlFilter.keeps_lastmod": lambda: UrlFilter(since="2024-01-01").keeps_lastmod("2024-02-01"),
    "UrlFilter.retain": lambda: UrlFilter(exclude=["/b"]).retain(batch()),
    "Scanner.new": lambda: Scanner("https://x.com/s.xml"),
    "Scanner.kind": lambda: Scanner("https://x.com/s.xml").kind,
    "Scanner.notes": lambda: Scanner("https://x.com/s.xml").notes,
    "Scanner.errors": lambda: Scanner("https://x.com/s.xml").errors,
    "Scanner.damaged": lambda: Scanner("https://x.com/s.xml").damaged,
    "Scanner.take_sitemap_lastmods": lambda: Scanner("https://x.com/s.xml").take_sitemap_lastmods(),
    "Scanner.take": lambda: Scanner("https://x.com/s.xml").take(),
    "normalize_lastmod": lambda: _core.normalize_lastmod("2024-01-01"),
    "normalize_rfc822": lambda: _core.normalize_rfc822("Mon, 01 Jan 2024 00:00:00 GMT"),
    "site_key": lambda: _core.site_key("https://x.com/"),
    "under_prefix": lambda: _core.under_prefix("https://x.com/a", "/a"),
    "group_key": lambda: _core.group_key("https://x.com/a"),
    "url_hashes": lambda: _core.url_hashes(["https://x.com/a"], b"k" * 16),
    "report_urls": lambda: _core.report_urls(["https://x.com/a"], RULES),
    "UrlRules.new": lambda: UrlRules(["/test"], [], None, ["login"]),
    "is_clean": lambda: _core.is_clean("https://x.com/"),
    "resolve_url": lambda: _core.resolve_url("/a", "https://x.com/"),
    "normalize_url": lambda: _core.normalize_url("HTTPS://x.com/a"),
    "resolve_loc": lambda: _core.resolve_loc(" /a ", "https://x.com/s.xml", True),
}


@pytest.mark.parametrize("entry", sorted(CALLS))
def test_a_panic_at_an_entry_point_is_a_core_error(entry: str) -> None:
    call = CALLS[entry]
    call()  # works unarmed
    _core._arm_panic(entry)
    try:
        with pytest.raises(CoreError, match=rf"internal error in the native core \({entry}\)"):
            call()
    finally:
        _core._arm_panic("")  # disarmed, whether or not the call reached the entry point
    call()  # one shot: the next call works again
    assert issubclass(CoreError, RuntimeError) and CoreError.__module__ == "sitescout._core"


def test_every_entry_point_is_armed_above() -> None:
    """The table covers every class method and function of the core that Python calls."""
    classes = [
        value
        for value in vars(_core).values()
        if isinstance(value, type) and not issubclass(value, BaseException)
    ]
    assert {Batch, Inflater, SeenSet, LlmsIndex, Scanner, UrlFilter, UrlRules} <= set(classes)
    public = {
        f"{cls.__name__}.{name}"
        for cls in classes
        for name in vars(cls)
        if not name.startswith("_") or name in ("__len__", "__contains__")
    }
    functions = {
        name
        for name, value in vars(_core).items()
        if callable(value) and not isinstance(value, type) and not name.startswith("_")
    }
    scanner_feeds = {"Scanner.feed", "Scanner.close", "Scanner.note_truncated"}
    armed = set(CALLS) | scanner_feeds | {"register_models"}
    assert public | functions <= armed, sorted((public | functions) - armed)


@pytest.mark.parametrize("entry", ["Scanner.feed", "Scanner.close"])
def test_a_panic_while_scanning_is_the_documents_recorded_error(entry: str) -> None:
    scanner = Scanner("https://x.com/s.xml")
    _core._arm_panic(entry)
    try:
        scanner.feed(b"<urlset><url><loc>https://x.com/a</loc></url>")
        scanner.close()
    finally:
        _core._arm_panic("")
    assert scanner.damaged
    assert any("internal error in the sitemap scanner" in e for e in scanner.errors)


async def test_a_walk_records_a_panic_as_that_documents_internal_error(site: Site) -> None:
    """A panic while one of three urlsets (robots.txt lists them) is read: that document fails
    as InternalError, the other two are read in full, and nothing escapes the walk."""
    shards = {name: [f"{site.url}/{name}/{i}" for i in range(5)] for name in ("a", "b", "c")}
    robots = "".join(f"Sitemap: /{name}.xml\n" for name in shards)
    site.add("/robots.txt", robots, Content_Type="text/plain")
    for name, locs in shards.items():
        site.add(f"/{name}.xml", urlset(locs))
    walk = sitescout.walk(site.url + "/", timeout=5.0, concurrency=1)
    _core._arm_panic("Scanner.take")
    try:
        urls = [e.url async for batch in walk for e in batch]
    finally:
        _core._arm_panic("")
    report = walk.report
    failed = [e for e in report.errors if e.error_class == "InternalError"]
    assert len(failed) == 1, report.errors
    assert failed[0].url.endswith(".xml") and failed[0].error == "internal error"
    assert len(urls) == 10 and len(set(urls)) == 10
    assert report.partial

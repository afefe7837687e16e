"""The Python encoders `sitescout urls` had before the native core wrote every line: one JSON
line per entry (`entry_json`) and the csv module's row. Kept as the oracle of the differential
tests (`tests/test_core_encode.py`): the core's `to_jsonl()` / `to_csv()` must give these bytes."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from json.encoder import encode_basestring

from sitescout._models import Entry
from sitescout._table import COLUMNS


def _jstr(value: str | None) -> str:
    return "null" if value is None else str(encode_basestring(value))


def _jval(value: str | float | None) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return str(encode_basestring(value))
    return repr(value)


def entry_json(e: Entry) -> str:
    """One JSON line.

    Pages found by the link crawl add `source` ("bfs") and `title`; pages from llms.txt add
    `source` ("llms.txt"), `title` and `md_url`; a walk of merged sources (`--source all`) adds
    `sources` to every line. Sitemap lines without them keep the original shape.
    """
    lastmod, changefreq, alt = e.lastmod, e.changefreq, e.alternate_of
    line = (
        f'{{"url":{encode_basestring(e.url)},'
        f'"lastmod":{"null" if lastmod is None else encode_basestring(lastmod)},'
        f'"priority":{_jval(e.priority)},'
        f'"changefreq":{"null" if changefreq is None else _jval(changefreq)},'
        + (
            '"hreflang":null,"alternate_of":null,'
            if alt is None
            else f'"hreflang":{_jstr(e.hreflang)},"alternate_of":{encode_basestring(alt)},'
        )
        + f'"sitemap":{_jval(e.sitemap)},"depth":{e.depth}'
    )
    if e.source == "sitemap" and not e.sources and e.md_url is None:
        return line + "}\n"
    if e.source != "sitemap":
        line = f'{line},"source":{_jstr(e.source)},"title":{_jstr(e.title)}'
    if e.md_url is not None:
        line = f'{line},"md_url":{encode_basestring(e.md_url)}'
    if e.sources:
        line = f'{line},"sources":[{",".join(map(encode_basestring, e.sources))}]'
    return line + "}\n"


def to_jsonl(entries: Iterable[Entry]) -> str:
    return "".join(map(entry_json, entries))


def to_csv(entries: Iterable[Entry], *, header: bool = False) -> str:
    """The CSV rows the CLI wrote (`header`: with the column names first)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(COLUMNS)
    writer.writerows(
        (
            e.url,
            e.lastmod,
            e.priority,
            e.changefreq,
            e.hreflang,
            e.alternate_of,
            e.sitemap,
            e.depth,
            e.source,
            e.title,
            e.md_url,
            ";".join(e.sources) or None,
        )
        for e in entries
    )
    return out.getvalue()


def to_txt(entries: Iterable[Entry]) -> str:
    return "".join(e.url + "\n" for e in entries)

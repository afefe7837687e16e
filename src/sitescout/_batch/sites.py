"""The site list of a batch: one `SiteLine` per line (a site URL, or why it is not one), read
in bounded pieces, and the names that follow from a site URL: its partition key
(`site_key`), its partition directory (`partition_name`) and its host's lane (`host_of`)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .._urls import assume_https, is_http_url, normalize_url

MAX_LINE = 8192  # a line of the site list longer than this is not a URL
MAX_SITES = 1_000_000
MAX_KEY = 180  # bytes of a partition directory name's value (names stop at 255)


# -- the site list ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SiteLine:
    """One line of the site list: a site URL, or why it is not one."""

    line: int
    url: str
    problem: str | None = None


def read_sites(lines: Iterable[str]) -> Iterator[SiteLine]:
    """The sites of a list: one URL per line (`#` comments and blank lines ignored), or a CSV
    whose header has a `url` column. A bare domain means its https site. Lines that are not a
    site URL come back with `problem` set, so the batch can record them instead of failing."""
    rows = _bounded_lines(lines) if isinstance(lines, io.TextIOBase) else iter(lines)
    column: int | None = None
    first = True
    count = 0
    for number, raw in enumerate(rows, 1):
        text = raw.strip().lstrip("\ufeff") if first else raw.strip()
        if not text or text.startswith("#"):
            continue
        if first:
            first = False
            header = _csv_row(text)
            names = [h.strip().lower() for h in header]
            if len(header) > 1 and "url" in names:
                column = names.index("url")
                continue
            if names == ["url"]:
                column = 0
                continue
        count += 1
        if count > MAX_SITES:
            yield SiteLine(number, "", f"more than {MAX_SITES} sites; the rest are ignored")
            return
        if len(text) > MAX_LINE:
            yield SiteLine(number, text[:80] + "…", f"line longer than {MAX_LINE} characters")
            continue
        if column is not None:
            cells = _csv_row(text)
            if column >= len(cells):
                yield SiteLine(number, text[:200], "no value in the url column")
                continue
            text = cells[column].strip()
        yield _site_line(number, text)


def _bounded_lines(f: io.TextIOBase) -> Iterator[str]:
    """A file's lines, each read at most MAX_LINE + 1 characters at a time: a line of a
    gigabyte (a file that is not a site list) costs no more memory than a long URL."""
    while line := f.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while (rest := f.readline(MAX_LINE + 1)) and not rest.endswith("\n"):
                pass
        yield line


def _csv_row(text: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text)), [])
    except csv.Error:
        return [text]


def _site_line(number: int, text: str) -> SiteLine:
    url, assumed = assume_https(text)  # a bare domain means its https site, as on the CLI
    if not assumed and "://" not in text:
        return SiteLine(number, text[:200], "not a site URL")
    if not is_http_url(url):
        return SiteLine(number, text[:200], "not an http(s) URL")
    try:
        url = normalize_url(url)
        host = urlsplit(url).hostname
    except ValueError as exc:
        return SiteLine(number, text[:200], f"not a site URL ({exc})")
    if not host or any(c.isspace() for c in text):
        return SiteLine(number, text[:200], "not a site URL")
    return SiteLine(number, url)


def site_key(url: str) -> str:
    """The partition value of a site: its host, with the port when one is given and the path
    when the site is a part of its host (`example.com/blog/`); long keys end with a hash."""
    parts = urlsplit(url)
    key = (parts.hostname or "").lower()
    with contextlib.suppress(ValueError):
        if parts.port is not None:
            key = f"{key}:{parts.port}"
    if parts.path not in ("", "/"):
        key += parts.path
    if len(quote(key, safe="")) > MAX_KEY:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
        while len(quote(key, safe="")) > MAX_KEY - 13:
            key = key[: len(key) * 3 // 4]
        key = f"{key}~{digest}"
    return key


def partition_name(key: str) -> str:
    """The directory of a site's partition: `site=` and the key percent-encoded, which is what
    Arrow's and Dask's hive-partitioning readers decode."""
    return "site=" + quote(key, safe="")


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()

"""`sitescout urls`: the site's full URL inventory as JSON lines or CSV on stdout."""

from __future__ import annotations

import asyncio
import csv
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, Annotated

import typer

from .._api import walk as start_walk
from .._errors import UsageError
from .._http import DEFAULT_USER_AGENT
from .._models import Entry
from .._table import COLUMNS, ParquetWriter
from .._walk import Walk
from ._app import (
    EXIT_OK,
    EXIT_USAGE,
    Concurrency,
    Crawl,
    Deadline,
    Locale,
    MaxBytes,
    MaxDepth,
    MaxFetches,
    MaxUrls,
    Quiet,
    Render,
    Sitemap,
    Timeout,
    UserAgent,
    Verbose,
    WalkProgress,
    app,
    check_render,
    err,
    exit_code,
    inventory_options,
    print_summary,
    setup_logging,
)


class Format(StrEnum):
    jsonl = "jsonl"
    csv = "csv"
    parquet = "parquet"


def _jstr(value: str | None) -> str:
    return "null" if value is None else str(encode_basestring(value))


# A walk has few distinct priorities and sitemap URLs but one of each per line: caching their
# JSON text saves a float repr and a string escape per URL (bounded: cleared when it grows).
_CACHE_MAX = 4096
_json_cache: dict[object, str] = {}


def _cached(value: str | float | None) -> str:
    text = _json_cache.get(value)
    if text is None:
        if len(_json_cache) >= _CACHE_MAX:
            _json_cache.clear()
        if value is None:
            text = "null"
        elif isinstance(value, str):
            text = str(encode_basestring(value))
        else:
            text = repr(value)
        _json_cache[value] = text
    return text


def entry_json(e: Entry) -> str:
    """One JSON line; hand-built because `json.dumps` of a dict per URL dominates large walks.

    Pages found by the link crawl add `source` ("bfs") and `title`.
    """
    lastmod, changefreq, alt = e.lastmod, e.changefreq, e.alternate_of
    line = (
        f'{{"url":{encode_basestring(e.url)},'
        f'"lastmod":{"null" if lastmod is None else encode_basestring(lastmod)},'
        f'"priority":{_cached(e.priority)},'
        f'"changefreq":{"null" if changefreq is None else _cached(changefreq)},'
        + (
            '"hreflang":null,"alternate_of":null,'
            if alt is None
            else f'"hreflang":{_jstr(e.hreflang)},"alternate_of":{encode_basestring(alt)},'
        )
        + f'"sitemap":{_cached(e.sitemap)},"depth":{e.depth}'
    )
    if e.source == "sitemap":
        return line + "}\n"
    return f'{line},"source":{_jstr(e.source)},"title":{_jstr(e.title)}}}\n'


class _Writer:
    def __init__(self, out: IO[str], fmt: Format, parquet: ParquetWriter | None = None) -> None:
        self.out = out
        self.fmt = fmt
        self._parquet = parquet
        self._csv = csv.writer(out, lineterminator="\n") if fmt is Format.csv else None
        if self._csv is not None:
            self._csv.writerow(COLUMNS)

    def write(self, batch: list[Entry]) -> None:
        if self._parquet is not None:
            self._parquet.write(batch)
            return
        if self._csv is None:
            self.out.write("".join(map(entry_json, batch)))
            return
        self._csv.writerows(
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
            )
            for e in batch
        )


@contextmanager
def _open_output(path: Path | None, fmt: Format) -> Iterator[IO[str]]:
    if fmt is Format.parquet:
        yield sys.stdout  # the Parquet writer owns the file; nothing goes to stdout
        return
    if path is None or str(path) == "-":
        yield sys.stdout
        return
    with path.open("w", encoding="utf-8", newline="") as fh:
        yield fh


async def _stream(walk: Walk, writer: _Writer, progress: WalkProgress) -> None:
    async for batch in walk:
        writer.write(batch)
        progress.update(walk.report)


@app.command()
def urls(
    url: Annotated[str, typer.Argument(help="Site URL (or a sitemap URL).")],
    format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.jsonl,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")] = None,
    sitemap: Sitemap = None,
    no_alternates: Annotated[
        bool, typer.Option("--no-alternates", help="Do not emit hreflang alternates.")
    ] = False,
    concurrency: Concurrency = 8,
    timeout: Timeout = 30.0,
    user_agent: UserAgent = DEFAULT_USER_AGENT,
    max_depth: MaxDepth = None,
    max_fetches: MaxFetches = None,
    max_bytes: MaxBytes = None,
    max_urls: MaxUrls = None,
    deadline: Deadline = None,
    locale: Locale = None,
    crawl: Crawl = False,
    render: Render = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Summary as JSON on stderr (stdout stays data).")
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Stream the site's full URL inventory: JSON lines (default), CSV, or Parquet to a file."""
    setup_logging(verbose)
    check_render(render)
    try:
        options = inventory_options(
            url,
            sitemap=sitemap,
            alternates=not no_alternates,
            concurrency=concurrency,
            timeout=timeout,
            user_agent=user_agent,
            max_depth=max_depth,
            max_fetches=max_fetches,
            max_bytes=max_bytes,
            max_urls=max_urls,
            deadline=deadline,
            locale=locale,
            crawl=crawl,
            render=render,
        )
        walk = start_walk(url, options)
        parquet = None
        if format is Format.parquet:
            if output is None or str(output) == "-":
                raise UsageError("--format parquet needs --output FILE")
            parquet = ParquetWriter(output)
    except (UsageError, ValueError) as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    with _open_output(output, format) as out, WalkProgress(not quiet) as progress:
        try:
            asyncio.run(_stream(walk, _Writer(out, format, parquet), progress))
        except KeyboardInterrupt:
            walk.report.mark_partial("interrupted")
        except BrokenPipeError:  # `| head` closed the pipe: stop quietly
            sys.stderr.close()
            raise typer.Exit(EXIT_OK) from None
        finally:
            if parquet is not None:
                parquet.close()
        out.flush()
    print_summary(walk.report, as_json=as_json, quiet=quiet)
    raise typer.Exit(exit_code(walk.report))

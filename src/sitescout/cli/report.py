"""`sitescout report`: the site's shape as one self-contained HTML file.

From a walk (`sitescout report URL`, the walk flags of `urls`) or from an inventory that
`sitescout urls` saved (JSON lines, CSV or Parquet). An inventory file is untrusted input: rows
that cannot be read are skipped and counted (exit 1), a file that is not an inventory at all is
refused with one line (exit 2), and reading is one pass with bounded memory.
"""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..__about__ import __version__
from .._api import walk as start_walk
from .._errors import UsageError
from .._inventory import SUFFIXES, TEXT_COLUMNS, Inventory
from .._models import InventoryInfo, WalkReport
from .._signals import RunEnd
from .._text import plural
from .._urls import is_http_url
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    Quiet,
    Verbose,
    app,
    err,
    setup_logging,
    usage_error,
)
from ._flags import (
    Crawl,
    LlmsTxt,
    Locale,
    MapArg,
    NoAlternatesCounted,
    Offline,
    PageSource,
    Render,
    Sitemap,
    Source,
    WalkFlags,
    check_render,
    inventory_options,
    with_walk_flags,
)
from ._output import drain, exit_code, print_json, print_summary
from ._site import site_argument, sitemap_option

if TYPE_CHECKING:  # the report's modules load when the command runs, not with the CLI
    from .._report import ReportBuilder


def read_inventory(path: Path, builder: ReportBuilder) -> InventoryInfo:
    """Feed a saved inventory to `builder`. Raises `UsageError` for a file that is not one."""
    if not path.is_file():
        raise UsageError(f"no such inventory file: {path} (give a site URL or a saved inventory)")
    inventory = Inventory(path, plain_urls=False)
    for c in inventory.chunks(TEXT_COLUMNS, strict=True):
        builder.add_rows(c["url"], c["lastmod"], c["sitemap"], c["hreflang"], c["alternate_of"])
    return inventory.info


def _skipped_text(info: InventoryInfo) -> str:
    return ", ".join(f"{n:,} {reason}" for reason, n in info.skipped.most_common())


# -- output --------------------------------------------------------------------------------


class _Target:
    """The report file: a temporary sibling renamed over the destination once it is complete."""

    def __init__(self, path: Path | None) -> None:
        self.path = None if path is None else Path(os.path.realpath(path))
        self.temp: Path | None = None
        if self.path is not None:
            if self.path.exists() and not self.path.is_file():
                raise OSError(f"{path} is not a regular file")
            fd, name = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
            )
            os.close(fd)
            self.temp = Path(name)

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        if self.temp is None or self.path is None:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            return len(data)
        self.temp.write_bytes(data)
        os.chmod(self.temp, 0o644)
        os.replace(self.temp, self.path)
        self.temp = None
        return len(data)

    def discard(self) -> None:
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None


# The suffixes an inventory is read by, but plain URLs: a `.txt` file is a sitemap to walk.
_INVENTORY_SUFFIXES = tuple(suffix for suffix, fmt in SUFFIXES.items() if fmt != "txt")


def _looks_like_url(value: str) -> bool:
    """A site or a sitemap to walk, unless it names a saved inventory: a path with an
    inventory's suffix (`.jsonl`, `.ndjson`, `.json`, `.csv`, `.parquet`), or an existing file
    that starts like one (a JSON object, Parquet's magic bytes). Any other path, `-` (stdin)
    and a `file://` URL are sitemap documents, walked like a site's."""
    if is_http_url(value) or "://" in value or value == "-":
        return True
    if value.lower().endswith(_INVENTORY_SUFFIXES):
        return False
    return not _starts_like_inventory(Path(value))


def _starts_like_inventory(path: Path) -> bool:
    try:
        if not path.is_file():
            return False
        with path.open("rb") as file:
            head = file.read(64)
    except OSError:
        return False
    return head.startswith(b"PAR1") or head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


@app.command()
@with_walk_flags(concurrency=8)
def report(
    url_or_file: Annotated[
        str,
        typer.Argument(
            help="Site URL to walk, a sitemap file ('-': stdin), or an inventory saved by"
            " `sitescout urls` (.jsonl, .csv, .parquet)."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The HTML file to write ('-': stdout).")
    ] = Path("report.html"),
    sitemap: Sitemap = None,
    no_alternates: NoAlternatesCounted = False,
    *,
    flags: WalkFlags,
    locale: Locale = None,
    crawl: Crawl = False,
    render: Render = False,
    source: Source = PageSource.auto,
    llms_txt: LlmsTxt = None,
    maps: MapArg = None,
    offline: Offline = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Summary as JSON on stderr (stdout may carry the page)."),
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Write the site's shape, from a walk or a saved inventory, as one HTML file.

    Summary, path treemap, freshness, locales, sitemaps, junk and sign-in URLs; it opens offline.
    """
    from .._report import ReportBuilder
    from .._report_html import render_report

    setup_logging(verbose, quiet=quiet)
    to_stdout = str(output) == "-"
    try:
        target = _Target(None if to_stdout else output)
    except OSError as exc:
        err.print(f"error: cannot write {output}: {exc.strerror or exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    try:
        if _looks_like_url(url_or_file):
            check_render(render)
            code, builder, walk_report, info, title = _from_walk(
                # --json: stderr is JSON
                site_argument(url_or_file, quiet=quiet or as_json, files=True),
                progress=not quiet and not as_json,
                sitemap=sitemap_option(sitemap, quiet=quiet or as_json),
                flags=flags,
                alternates=not no_alternates,
                locale=locale,
                crawl=crawl,
                render=render,
                source=source,
                llms_txt=llms_txt,
                maps=maps,
                offline=offline,
            )
        else:
            if flags.state is not None:
                # Nothing is walked, so there is nothing to compare with the state or keep in it.
                raise UsageError(
                    "--state keeps a walk's documents; a saved inventory is read as it is"
                    " (give the site URL to walk it with the state)"
                )
            builder = ReportBuilder()
            info = read_inventory(Path(url_or_file), builder)
            walk_report, title = None, Path(url_or_file).name
            code = EXIT_PARTIAL if info.skipped else EXIT_OK
    except (UsageError, ValueError) as exc:
        target.discard()
        raise usage_error(exc) from None
    except BaseException:
        target.discard()
        raise
    with RunEnd() as end:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        try:
            page = render_report(
                builder.data(),
                title=title,
                walk=walk_report,
                inventory=info,
                generated=f"sitescout {__version__}, {stamp}",
            )
        except BaseException:  # Ctrl-C while the page is made: no temporary file is left behind
            target.discard()
            raise
        end.reached()  # the page is made: Ctrl-C cannot tear its writing or cut the summary
        try:
            size = target.write(page)
        except OSError as exc:
            target.discard()
            err.print(f"error: cannot write {output}: {exc.strerror or exc}", markup=False)
            raise typer.Exit(EXIT_NOTHING) from None
        if walk_report is not None:
            print_summary(walk_report, as_json=as_json, quiet=quiet)
        elif info is not None and as_json:
            print_json(_inventory_summary(info), stderr=True)
        if as_json or quiet:
            raise typer.Exit(code)
        if info is not None and info.skipped:
            err.print(
                f"warning: {plural(sum(info.skipped.values()), 'row', separators=True)} of "
                f"{url_or_file} skipped: " + _skipped_text(info),
                markup=False,
            )
        if info is not None and info.missing_columns:
            err.print(
                "note: columns missing from the inventory: " + ", ".join(info.missing_columns),
                markup=False,
            )
        if not to_stdout:
            groups = len(builder.group_table())
            err.print(
                f"report: {builder.urls + builder.alternates:,} URLs in {groups:,} groups "
                f"→ {output} ({size / 1024:,.0f} KiB)",
                markup=False,
            )
        raise typer.Exit(code)


def _inventory_summary(info: InventoryInfo) -> dict[str, Any]:
    """`--json` for a report read from a saved inventory: what reading the file found."""
    return {
        "inventory": info.path,
        "format": info.format,
        "rows": info.rows,
        "skipped": sum(info.skipped.values()),
        "skipped_reasons": dict(info.skipped.most_common()),
        "missing_columns": info.missing_columns,
    }


def _from_walk(
    url: str, *, progress: bool, **options: Any
) -> tuple[int, ReportBuilder, WalkReport, InventoryInfo | None, str]:
    from .._report import ReportBuilder

    walk = start_walk(url, inventory_options(url, **options))
    builder = ReportBuilder(site=url)
    drain(walk, builder.add_batch, progress=progress)  # after Ctrl-C: a report of what came
    return exit_code(walk.report), builder, walk.report, None, url

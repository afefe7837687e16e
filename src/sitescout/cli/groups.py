"""`sitescout groups`: the site's URLs walked and counted by path prefix (§9 path groups).

The groups go to stdout — a table, or JSON with `--json` — and everything else (warnings, the
walk summary, progress) to stderr.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from .._api import walk as start_walk
from .._errors import UsageError
from .._groups import OTHER, PathGroup, PathGrouper
from .._signals import RunEnd
from .._text import plural
from .._urls import origin_of
from .._walk import Walk
from ._app import Quiet, Verbose, app, setup_logging, usage_error
from ._flags import (
    AsJson,
    Crawl,
    LlmsTxt,
    Locale,
    MapArg,
    NoAlternatesCounted,
    Offline,
    PageSource,
    Sitemap,
    Source,
    WalkFlags,
    inventory_options,
    with_walk_flags,
)
from ._output import drain, exit_code, print_json, print_summary, report_summary
from ._site import site_argument, sitemap_option
from ._tables import print_table

BAR_WIDTH = 20
EXAMPLE_COLUMN, EXAMPLE_LEAST = 4, 12  # the one column that narrows, and how far
_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(count: int, largest: int, width: int = BAR_WIDTH) -> str:
    """A bar of `width` cells at most, in eighths of a cell; any non-zero count shows."""
    if largest <= 0 or count <= 0:
        return ""
    eighths = max(1, round(count / largest * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def _short(url: str, origin: str) -> str:
    """A sample as its path when it lives on the walked site's origin."""
    rest = url[len(origin) :] if url.startswith(origin) else ""
    return rest if rest.startswith("/") else url


def groups_table(groups: list[PathGroup], walk: Walk) -> Table:
    total = sum(g.count for g in groups)
    largest = max((g.count for g in groups), default=0)
    report = walk.report
    origin = origin_of(walk.url)
    caption = (
        f"{total:,} URLs in {plural(len(groups), 'group', separators=True)} "
        f"from {plural(len(report.documents), 'document', separators=True)}"
    )
    if report.budgets_hit:
        caption += " · budgets hit: " + ", ".join(report.budgets_hit)
    if report.partial:
        caption += " · partial: " + "; ".join(report.partial_reasons)
    table = Table(box=box.SIMPLE_HEAD, caption=Text(caption), caption_justify="left")
    widest = max((len(g.prefix) for g in groups), default=5)
    table.add_column("group", no_wrap=True, min_width=min(40, widest))
    table.add_column("URLs", justify="right", no_wrap=True, min_width=4)
    table.add_column("share", justify="right", no_wrap=True, min_width=5)
    table.add_column("", no_wrap=True, min_width=BAR_WIDTH)
    # The example gives way to a narrow terminal or pipe (cropped with "…"); the other columns
    # never do: a count or a group name that is cut would be a wrong answer (`print_table`).
    table.add_column("example", overflow="ellipsis", no_wrap=False, ratio=1)
    for g in groups:
        share = f"{g.count / total:.0%}" if total else ""
        style = "dim" if g.prefix == OTHER else ""
        example = _short(g.samples[0], origin) if g.samples else ""
        table.add_row(
            Text(g.prefix, style=style),
            f"{g.count:,}",
            share,
            Text(bar(g.count, largest), style="cyan"),
            Text(example),  # a URL's path is not markup: `[b]` in it stays as written
        )
    return table


def groups_json(groups: list[PathGroup], walk: Walk, depth: int) -> dict[str, Any]:
    return {
        "depth": depth,
        "total": sum(g.count for g in groups),
        "groups": [
            {"prefix": g.prefix, "count": g.count, "samples": list(g.samples)} for g in groups
        ],
        "walk": report_summary(walk.report),
    }


@app.command()
@with_walk_flags(concurrency=8)
def groups(
    url: Annotated[
        str, typer.Argument(help="Site URL, sitemap URL, or sitemap file ('-': stdin).")
    ],
    as_json: AsJson = False,
    depth: Annotated[
        int, typer.Option(min=1, max=8, help="Path segments per group (2: /docs/api/*).")
    ] = 1,
    sitemap: Sitemap = None,
    no_alternates: NoAlternatesCounted = False,
    *,
    flags: WalkFlags,
    locale: Locale = None,
    crawl: Crawl = False,
    source: Source = PageSource.auto,
    llms_txt: LlmsTxt = None,
    maps: MapArg = None,
    offline: Offline = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Walk the site and group its URLs by path: counts, a bar and an example per group."""
    setup_logging(verbose, quiet=quiet)
    url = site_argument(url, quiet=quiet, files=True)
    try:
        options = inventory_options(
            url,
            flags=flags,
            sitemap=sitemap_option(sitemap, quiet=quiet),
            alternates=not no_alternates,
            locale=locale,
            crawl=crawl,
            source=source,
            llms_txt=llms_txt,
            maps=maps,
            offline=offline,
        )
        walk = start_walk(url, options)
        grouper = PathGrouper(depth)
    except (UsageError, ValueError) as exc:
        raise usage_error(exc) from None
    with RunEnd() as end:
        # After Ctrl-C the groups so far are still the answer.
        drain(
            walk,
            grouper.add_batch,
            progress=not quiet and not as_json,
        )
        end.reached()  # counted: Ctrl-C from here on cannot cut the table or the summary
        found = grouper.groups()
        if as_json:
            print_json(groups_json(found, walk, depth))
        else:
            print_table(groups_table(found, walk), shrinking=EXAMPLE_COLUMN, least=EXAMPLE_LEAST)
            print_summary(walk.report, as_json=False, quiet=quiet)
        raise typer.Exit(exit_code(walk.report))

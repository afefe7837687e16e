"""`sitescout scope`: the §9 pre-flight estimate of a walk.

The site may be a sitemap you already have (a path, `-` for stdin, a `file://` URL), read as the
top document; `--sitemap` takes a file too, `--map` reads documents under a URL prefix from a
folder, and `--offline` makes no request at all, as for `urls`.

The answer goes to stdout — a table, or JSON with `--json` — and everything else (warnings,
progress) to stderr; `-q` leaves nothing there but errors (the answer still goes to stdout, as
with `groups`).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from .._errors import UsageError
from .._http import DEFAULT_USER_AGENT, FetchConfig
from .._scope import SCOPE_FETCH, ScopeEstimate, estimate_scope
from ._app import EXIT_NOTHING, EXIT_OK, Quiet, Verbose, app, setup_logging, usage_error
from ._flags import (
    AsJson,
    FetchFlags,
    LlmsTxt,
    MapArg,
    Offline,
    Sitemap,
    Timeout,
    UserAgent,
    parse_maps,
    with_fetch_flags,
)
from ._output import print_json
from ._site import site_argument, sitemap_option
from ._tables import print_table

LANGUAGES_SHOWN = 12
VALUE_LEAST = 20  # cells: any count with its thousands separators fits on one line


def format_seconds(seconds: float) -> str:
    """`5 s`, `1 min 40 s`, `2 h 05 min`."""
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"


def format_range(low: int, high: int) -> str:
    return f"{low:,} URLs" if low == high else f"{low:,} – {high:,} URLs"


def scope_table(est: ScopeEstimate) -> Table:
    # Every value is the site's own text (URLs, notes), never markup: `[b]` in a URL stays.
    table = Table(box=box.SIMPLE, show_header=False, title=Text(f"scope of {est.root_url}"))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")

    def row(name: str, value: str) -> None:
        table.add_row(name, Text(value))

    source = est.source if est.source_url is None else f"{est.source} ({est.source_url})"
    row("source", source)
    tops = list(est.top_sitemap_urls[:3])
    if len(est.top_sitemap_urls) > 3:
        tops.append(f"(+{len(est.top_sitemap_urls) - 3} more)")
    row("top sitemaps", "\n".join(tops) or "none")
    row("estimate", format_range(*est.url_estimate_range))
    row("sub-sitemaps", f"{est.sub_sitemap_count:,}")
    langs = list(est.languages_detected[:LANGUAGES_SHOWN])
    more = len(est.languages_detected) - len(langs)
    row("languages", ", ".join(langs) + (f" (+{more} more)" if more else "") or "none")
    low, high = est.expected_duration_range
    duration = format_seconds(est.expected_duration_seconds)
    if low != high:
        duration += f" ({format_seconds(low)} – {format_seconds(high)})"
    row("expected duration", duration)
    row("transport", est.transport)
    llms = "none" if est.llms_txt is None else f"{est.llms_txt} ({est.llms_links:,} page links)"
    row("llms.txt", llms)
    for i, note in enumerate(est.notes):
        row("notes" if i == 0 else "", note)
    return table


@app.command()
@with_fetch_flags()
def scope(
    url: Annotated[
        str, typer.Argument(help="Site URL, sitemap URL, or sitemap file ('-': stdin).")
    ],
    as_json: AsJson = False,
    sample: Annotated[
        int,
        typer.Option(
            min=0, max=50, help="Also read N random child sitemaps to refine the estimate."
        ),
    ] = 0,
    sitemap: Sitemap = None,
    llms_txt: LlmsTxt = None,
    maps: MapArg = None,
    offline: Offline = False,
    timeout: Timeout = SCOPE_FETCH.timeout,
    user_agent: UserAgent = DEFAULT_USER_AGENT,
    *,
    fetch_flags: FetchFlags,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Estimate a walk before running it: URLs, sub-sitemaps, languages, time, transport."""
    setup_logging(verbose, quiet=quiet)
    url = site_argument(url, quiet=quiet, files=True)
    sitemap = sitemap_option(sitemap, quiet=quiet)
    try:
        config = fetch_flags.apply(
            FetchConfig(
                user_agent=user_agent,
                timeout=timeout,
                retries=SCOPE_FETCH.retries,
                backoff=SCOPE_FETCH.backoff,
                retry_after_cap=SCOPE_FETCH.retry_after_cap,
            )
        )
        est = estimate_scope(
            url,
            sitemap=sitemap,
            config=config,
            sample=sample,
            llms_txt=llms_txt,
            maps=parse_maps(maps),
            offline=offline,
        )
    except UsageError as exc:
        raise usage_error(exc) from None
    if as_json:
        print_json(est.as_dict())
    else:
        # Only the value column gives way (it wraps at spaces, and folds a long URL): a number
        # or a label is never cut, and a narrow terminal or pipe gets a wider table instead.
        print_table(scope_table(est), shrinking=1, least=VALUE_LEAST)
    raise typer.Exit(EXIT_OK if est.found else EXIT_NOTHING)

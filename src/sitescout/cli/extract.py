"""`sitescout extract`: choose a handful of representative pages, fetch them, record the run (§12).

Stdout carries the §11 selection and the run's outcome (or one JSON summary with `--json`);
warnings and progress go to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from .._errors import UsageError
from .._extract import ExtractOptions, Plan, RunResult, plan_extract, run_extract
from .._local import is_file_url
from .._pages import PageOutcome
from .._scope import ScopeEstimate, estimate_scope
from .._select import PagesWanted, questions
from .._signals import RunEnd
from .._text import plural
from .._urls import is_http_url
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
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
    PageSource,
    Render,
    Sitemap,
    Source,
    WalkFlags,
    check_render,
    parse_maps,
    with_walk_flags,
)
from ._output import print_json
from ._selection import prompt_text, render_selection, warning_text
from ._site import site_argument, sitemap_option


def _source_label(plan: Plan) -> str:
    """`sitemap.xml`, or `sitemap_index.xml via robots.txt`: the document, then how it was found."""
    report = plan.report
    if report.source == "bfs":
        return "link crawl"
    if report.source == "llms.txt" and report.source_url:
        return report.source_url.split("://", 1)[-1].split("/", 1)[-1]  # `docs/llms.txt`
    roots = [d.url for d in report.documents if d.depth == 1 and d.kind is not None]
    if report.source == "robots.txt" and roots:
        return f"{_last_segment(roots[0])} via robots.txt"
    if report.source_url:
        return _last_segment(report.source_url)
    return report.source or "none"


def _last_segment(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1] or url


def _interactive(as_json: bool) -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty() and not as_json


def _ask(prompt: str, *, yes: bool, interactive: bool) -> tuple[bool, str]:
    """Ask on a TTY; never block otherwise (§11). Returns (proceed, recorded choice)."""
    if yes:
        return True, "proceed (--yes)"
    if not interactive:
        return True, "proceed (non-interactive)"
    answer = typer.confirm(prompt, default=True, err=True)
    return answer, "yes" if answer else "no"


LARGE_WALK = 100_000


def walk_question(estimate: ScopeEstimate) -> str | None:
    """§5: `--all` asks once before a walk estimated above 100,000 URLs.

    The low end of the range decides: an index's high end (50,000 per child) would ask about
    almost every site, while the low end passes 100,000 only when the walk surely does.
    """
    low, high = estimate.url_estimate_range
    if low <= LARGE_WALK:
        return None
    return (
        f"--all walks every sitemap: an estimated {low:,}–{high:,} URLs "
        f"({estimate.sub_sitemap_count:,} sitemaps, ~{estimate.expected_duration_seconds:,.0f} s)"
        " — proceed?"
    )


def _summary(plan: Plan, result: RunResult | None, user_choice: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "url": plan.url,
        "project": str(plan.project.directory),
        "source": plan.report.source,
        "sourceUrl": plan.report.source_url,
        "selection": plan.selection.to_dict(),
        "userChoice": user_choice,
        "budgetsHit": plan.report.budgets_hit,
        "warnings": plan.report.warnings,
        "partial": plan.report.partial,
        "truncation": plan.truncation,
        # Page URLs the filters dropped in the walk (0 when none were given or applied).
        "filteredPages": plan.filtered,
        "notes": plan.report.notes[:50],
    }
    if result is not None:
        out["extracted"] = result.successes
        out["skipped"] = result.skipped
        out["disallowed"] = result.disallowed
        out["failures"] = [
            {"url": f.url, "errorClass": f.error_class, "message": f.error} for f in result.failures
        ]
        out["interrupted"] = result.interrupted
    return out


@app.command()
@with_walk_flags(concurrency=4)
def extract(
    url: Annotated[str, typer.Argument(help="Site URL.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Project directory (default ./sitescout-<host>/)."),
    ] = None,
    cap: Annotated[
        int | None, typer.Option("--cap", min=1, help="Pages to keep (default 5).")
    ] = None,
    all_pages: Annotated[
        bool, typer.Option("--all", help="Keep every page; lift the sampler's walk budgets.")
    ] = False,
    pages: Annotated[
        str | None,
        typer.Option("--pages", help="Only these pages: slugs or paths, comma-separated."),
    ] = None,
    single: Annotated[
        bool, typer.Option("--single", help="Only the home page (or the URL given).")
    ] = False,
    no_junk_filter: Annotated[
        bool, typer.Option("--no-junk-filter", help="Keep test, sample and one-off pages.")
    ] = False,
    render: Render = False,
    crawl: Crawl = False,
    source: Source = PageSource.auto,
    llms_txt: LlmsTxt = None,
    refresh: Annotated[
        list[str] | None,
        typer.Option(
            "--refresh", metavar="SLUG", help="Re-extract this slug (repeatable); history is kept."
        ),
    ] = None,
    refresh_all: Annotated[
        bool, typer.Option("--refresh-all", help="Re-extract every kept page.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Never ask; proceed.")] = False,
    sitemap: Sitemap = None,
    maps: MapArg = None,
    locale: Locale = None,
    *,
    flags: WalkFlags,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON summary on stdout instead of text.")
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Pick a handful of representative pages, fetch them and record what each holds."""
    setup_logging(verbose, quiet=quiet)
    check_render(render)
    refuse_a_file(url)
    url = site_argument(url, quiet=quiet)
    try:
        sitemap = sitemap_option(sitemap, quiet=quiet)
        options = ExtractOptions(
            out=out,
            cap=cap,
            all=all_pages,
            # Read as the selection reads it; an empty list is refused there.
            pages=() if pages is None else PagesWanted.from_flags(pages=pages).pages,
            single=single,
            junk_filter=not no_junk_filter,
            render=render,
            crawl=crawl,
            source=str(source),
            llms_txt=llms_txt,
            refresh=tuple(refresh or ()),
            refresh_all=refresh_all,
            sitemap=sitemap,
            maps=parse_maps(maps),
            locale=locale,
            concurrency=flags.concurrency,
            fetch=flags.fetch(),
            state=flags.state,
            trust_lastmod=flags.trust_lastmod,
            # They narrow the pages the sampler chooses from (not applied to named pages).
            **flags.filters(),
        )
        if flags.budgets_given:  # each budget flag replaces the preset's value
            options = replace(options, budgets=flags.budgets_over(options.walk_budgets()))
        if not is_http_url(url):
            raise UsageError(f"not an http(s) URL: {url!r}")
        # The estimate asks the network: not for a sitemap read from disk.
        remote = options.sitemap is None or is_http_url(options.sitemap)
        if all_pages and not yes and remote and not maps and _interactive(as_json or quiet):
            estimate = estimate_scope(url, sitemap=sitemap, llms_txt=llms_txt)
            question = walk_question(estimate)
            if question is not None and not typer.confirm(question, err=True):
                err.print("not walking (declined)", markup=False)
                raise typer.Exit(EXIT_OK)
        plan = asyncio.run(plan_extract(url, options))
    except UsageError as exc:
        raise usage_error(exc) from None
    except KeyboardInterrupt:
        if not quiet:
            err.print("interrupted before any page was fetched", markup=False)
        raise typer.Exit(EXIT_PARTIAL) from None
    raise typer.Exit(after_plan(plan, options, yes=yes, as_json=as_json, quiet=quiet))


def refuse_a_file(arg: str) -> None:
    """Exit 2 when the site argument is a sitemap file (a path, `-`, a `file://` URL): extract
    fetches its pages from the site, so it needs the site's URL; the file goes to --sitemap."""
    if arg == "-":
        shown = "- (stdin)"
    elif is_file_url(arg) or ("://" not in arg and Path(arg).is_file()):
        shown = arg
    else:
        return
    raise usage_error(
        UsageError(
            f"{shown} is a sitemap file, not a site: extract fetches the pages from the site, so "
            f"give the site's URL and the file with --sitemap, e.g. "
            f"sitescout extract https://example.com/ --sitemap {arg}"
        )
    )


def after_plan(
    plan: Plan, options: ExtractOptions, *, yes: bool, as_json: bool, quiet: bool
) -> int:
    with RunEnd() as end:
        try:
            return _after_plan(plan, options, end, yes=yes, as_json=as_json, quiet=quiet)
        finally:
            plan.project.close()  # also when nothing is fetched: the next run must not wait


def _after_plan(
    plan: Plan, options: ExtractOptions, end: RunEnd, *, yes: bool, as_json: bool, quiet: bool
) -> int:
    """Show the plan, ask where it must, fetch, show the outcome. `quiet` (`-q`): only errors
    on stderr, nothing on stdout but the `--json` summary, and never a question."""
    report = plan.report
    interactive = _interactive(as_json or quiet)
    if not quiet:
        for warning in report.warnings:
            err.print(f"warning: {warning}", markup=False)
        if plan.truncation:
            err.print(plan.truncation, markup=False)
    if not as_json and not quiet:
        typer.echo(
            render_selection(
                plan.selection, site=plan.url, source=_source_label(plan), notes=plan.notes
            )
        )
    if not plan.selection.kept and not plan.to_fetch:
        if as_json:
            print_json(_summary(plan, None, None))
        err.print(f"error: nothing to extract: {plan.nothing_reason()}", markup=False)
        return EXIT_NOTHING
    user_choice: str | None = None
    for question in questions(plan.selection):
        if not quiet:
            err.print(f"warning: {warning_text(question)}", markup=False)
        proceed, user_choice = _ask(prompt_text(question), yes=yes, interactive=interactive)
        if not proceed:
            break
    else:
        proceed = True
    if proceed and options.refresh_all and plan.project.runs:
        proceed, user_choice = _ask(
            f"re-extract all {len(plan.to_fetch)} pages?", yes=yes, interactive=interactive
        )
    if not proceed:
        plan.to_fetch.clear()
    result = _run(plan, options, user_choice, quiet=quiet or as_json)
    end.reached()  # the pages are recorded: Ctrl-C cannot cut the outcome or the project's close
    if as_json:
        print_json(_summary(plan, result, user_choice))
    elif not quiet:
        _print_outcome(plan, result, proceed)
    else:
        for failure in result.failures:
            err.print(f"error: {failure.url}: {failure.error_class}: {failure.error}", markup=False)
    if result.interrupted:
        return EXIT_PARTIAL
    return EXIT_PARTIAL if result.failures or report.partial else EXIT_OK


def _run(plan: Plan, options: ExtractOptions, user_choice: str | None, *, quiet: bool) -> RunResult:
    def on_page(slug: str, outcome: PageOutcome | None) -> None:
        if quiet:
            return
        if outcome is None:
            err.print(f"  skip {slug}: disallowed by robots.txt", markup=False)
        elif outcome.ok:
            err.print(f"  ok   {slug}", markup=False)
        else:
            err.print(f"  fail {slug}: {outcome.error_class}: {outcome.error}", markup=False)

    try:
        return asyncio.run(run_extract(plan, options, user_choice=user_choice, on_page=on_page))
    except KeyboardInterrupt:
        err.print("interrupted: finished pages are recorded", markup=False)
        return RunResult(interrupted=True)


def _print_outcome(plan: Plan, result: RunResult, proceeded: bool) -> None:
    where = plan.project.directory
    if not proceeded:
        typer.echo(f"Not extracting (declined). The run is recorded in {where}/_crawl-log.json.")
        return
    done = len(result.successes)
    line = f"Extracted {plural(done, 'page')} into {where}/"
    extras = []
    if result.failures:
        extras.append(f"{len(result.failures)} failed")
    if result.skipped:
        extras.append(f"{len(result.skipped)} already extracted")
    if result.disallowed:
        extras.append(f"{len(result.disallowed)} disallowed by robots.txt")
    typer.echo(line + (f" ({', '.join(extras)})" if extras else "") + ".")
    for failure in result.failures:
        typer.echo(f"  {failure.error_class}: {failure.url}: {failure.error}")

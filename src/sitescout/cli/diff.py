"""`sitescout diff OLD NEW`: what changed between two saved inventories, per path group.

The answer goes to stdout: a table of added, removed and lastmod-changed URLs per group (`--json`:
the same as JSON), or with `--format` one row per changed URL (to `-o FILE`, and then the table
still goes to stdout). The summary, warnings and errors go to stderr. Exit codes as `diff` has
them: 0 nothing changed, 1 something did, 2 bad input (a missing file, not an inventory), and
130 after Ctrl-C.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from .._diff import (
    ADDED,
    CHANGED,
    REMOVED,
    ChangeGroups,
    Diff,
    GroupChanges,
)
from .._errors import UsageError
from .._groups import OTHER
from .._inventory import SUFFIXES, Inventory
from .._models import InventoryInfo
from .._signals import RunEnd
from .._text import plural
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    Quiet,
    app,
    err,
    setup_logging,
    usage_error,
)
from ._changes import ChangeRows, RowFormat
from ._output import print_json
from ._tables import print_table

EXIT_INTERRUPTED = 130  # what a shell reports for a command ended by Ctrl-C
EXAMPLE_COLUMN, EXAMPLE_LEAST = 4, 12  # the one column that narrows, and how far
MARKS = {ADDED: "+", REMOVED: "-", CHANGED: "~"}


def _rows_format(fmt: RowFormat | None, output: Path | None) -> RowFormat | None:
    """The format of the rows: `--format`, else the `-o` file's suffix; None: the table only."""
    if fmt is not None or output is None:
        return fmt
    if str(output) == "-":
        return RowFormat.jsonl
    named = SUFFIXES.get(output.suffix.lower(), "")  # the suffixes an inventory is read by
    if named in RowFormat.__members__:
        return RowFormat(named)
    raise UsageError(f"cannot tell the format of {output} from its name: give --format")


def _source(value: str) -> str | Inventory:
    """An inventory file, stdin, or a state directory (`--state DIR`): its last inventory."""
    if value == "-":
        return Inventory(sys.stdin.buffer, name="stdin")
    if Path(value).is_dir():
        from .._state import stored_inventory

        found = stored_inventory(Path(value))
        if found is None:
            raise UsageError(
                f"{value} is a directory without a stored inventory (a state directory has one"
                " once `sitescout urls --state DIR --changes-only` has walked into it)"
            )
        return str(found)
    return value


def _origin(url: str) -> str:
    """`scheme://host[:port]` of a normalized URL (its text up to the path), cheaply."""
    start = url.find("//")
    end = url.find("/", start + 2) if start >= 0 else -1
    return url if end < 0 else url[:end]


class _Origins:
    """Whether all changed URLs share one origin (then the table shows paths)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def add(self, url: str) -> None:
        if len(self.seen) < 2:
            self.seen.add(_origin(url))

    @property
    def one(self) -> str | None:
        return next(iter(self.seen)) if len(self.seen) == 1 else None


@app.command()
def diff(
    old: Annotated[
        str,
        typer.Argument(
            help="The earlier inventory saved by `sitescout urls` (.jsonl, .csv, .txt, .parquet;"
            " '-': stdin; a --state DIR: its last inventory)."
        ),
    ],
    new: Annotated[str, typer.Argument(help="The later inventory, in any of those formats.")],
    format: Annotated[
        RowFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="Write one row per changed URL instead of the table: jsonl, csv or parquet"
            " (needs --output).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the rows here (the format from its suffix unless --format says);"
            " the table still goes to stdout.",
        ),
    ] = None,
    depth: Annotated[
        int, typer.Option(min=1, max=8, help="Path segments per group (2: /docs/api/*).")
    ] = 1,
    temp_dir: Annotated[
        Path | None,
        typer.Option(
            "--temp-dir",
            help="Where large inputs are partitioned on disk (default: the system's temporary"
            " directory).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="The summary as JSON: on stdout instead of the table, on stderr when stdout"
            " carries the rows.",
        ),
    ] = False,
    quiet: Quiet = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="Log what reading finds as it goes (skipped rows, duplicate URLs, missing"
            " lastmods); -vv adds logger names.",
        ),
    ] = 0,
) -> None:
    """Compare two saved inventories: URLs added, removed and with a new lastmod, per group.

    Exit code 0 when nothing changed, 1 when something did, 2 for bad input.
    """
    setup_logging(verbose, quiet=quiet)
    started = time.perf_counter()
    try:
        if old == "-" and new == "-":
            raise UsageError("only one of OLD and NEW can be stdin ('-')")
        fmt = _rows_format(format, output)
        to_file = output if output is not None and str(output) != "-" else None
        if fmt is RowFormat.parquet and to_file is None:
            raise UsageError("--format parquet needs --output FILE")
        changes = Diff(_source(old), _source(new), temp_dir=temp_dir)
    except (UsageError, ValueError) as exc:
        raise usage_error(exc) from None
    try:
        rows = None if fmt is None else ChangeRows(to_file, fmt)
    except UsageError as exc:
        changes.close()
        raise usage_error(exc) from None
    except OSError as exc:
        changes.close()
        err.print(f"error: cannot write {output}: {exc.strerror or exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    groups = ChangeGroups(depth)
    origins = _Origins()

    def counted() -> Any:
        for change in changes:
            groups.add(change)
            origins.add(change.url)
            yield change

    with RunEnd() as end:
        try:
            if rows is None:
                for _change in counted():
                    pass
            else:
                rows.write_all(counted())
                rows.finish()
        except UsageError as exc:
            _abandon(changes, rows)
            raise usage_error(exc) from None
        except KeyboardInterrupt:
            _abandon(changes, rows)
            err.print("interrupted: no diff", markup=False)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            _abandon(changes, rows)
            raise
        except OSError as exc:
            _abandon(changes, rows)
            where = "stdout" if to_file is None else str(to_file)
            err.print(f"error: cannot write {where}: {exc.strerror or exc}", markup=False)
            raise typer.Exit(EXIT_NOTHING) from None
        end.reached()  # the diff is complete: Ctrl-C cannot cut the table or the summary
        found = groups.groups()
        summary = _summary(changes, found, depth, time.perf_counter() - started)
        rows_on_stdout = rows is not None and to_file is None
        if as_json:
            print_json(summary, stderr=rows_on_stdout)
        elif not rows_on_stdout and found:
            print_table(_table(found, origins.one), shrinking=EXAMPLE_COLUMN, least=EXAMPLE_LEAST)
        if not as_json and not quiet:
            _print_notes(changes, verbose=verbose)
            err.print(_summary_line(changes, summary["elapsed"], to_file), markup=False)
        raise typer.Exit(EXIT_PARTIAL if changes.counts.changes else EXIT_OK)


def _abandon(changes: Diff, rows: ChangeRows | None) -> None:
    changes.close()
    if rows is not None:
        rows.discard()


def _table(found: list[GroupChanges], origin: str | None) -> Table:
    total = sum(g.total for g in found)
    caption = f"{total:,} changed URLs in {plural(len(found), 'group', separators=True)}"
    if origin is not None:
        caption += f" on {origin}"
    table = Table(box=box.SIMPLE_HEAD, caption=Text(caption), caption_justify="left")
    widest = max((len(g.prefix) for g in found), default=5)
    table.add_column("group", no_wrap=True, min_width=min(40, widest))
    table.add_column("added", justify="right", no_wrap=True)
    table.add_column("removed", justify="right", no_wrap=True)
    table.add_column("changed", justify="right", no_wrap=True)
    # Examples give way to a narrow terminal (cropped with "…"); counts and names never do.
    table.add_column("examples", overflow="ellipsis", no_wrap=False, ratio=1)
    for g in found:
        lines = [
            f"{MARKS[kind]} {_short(urls[0], origin)}" for kind, urls in g.examples.items() if urls
        ]
        table.add_row(
            Text(g.prefix, style="dim" if g.prefix == OTHER else ""),
            f"{g.added:,}",
            f"{g.removed:,}",
            f"{g.changed:,}",
            Text("\n".join(lines), no_wrap=True, overflow="ellipsis"),
        )
    return table


def _short(url: str, origin: str | None) -> str:
    """A URL as its path when every change is on one origin."""
    if origin is None or not url.startswith(origin):
        return url
    rest = url[len(origin) :]
    return rest if rest.startswith("/") else url


def _info(info: InventoryInfo, duplicates: int) -> dict[str, Any]:
    return {
        "inventory": info.path,
        "format": info.format,
        "rows": info.rows,
        "skipped": sum(info.skipped.values()),
        "skipped_reasons": dict(info.skipped.most_common()),
        "skipped_examples": [{"where": w, "reason": r} for w, r in info.examples],
        "duplicates": duplicates,
        "missing_columns": info.missing_columns,
    }


def _summary(
    changes: Diff, found: list[GroupChanges], depth: int, elapsed: float
) -> dict[str, Any]:
    counts = changes.counts
    return {
        "old": _info(changes.old, counts.old_duplicates),
        "new": _info(changes.new, counts.new_duplicates),
        "lastmods_compared": changes.lastmods_compared,
        "added": counts.added,
        "removed": counts.removed,
        "changed": counts.changed,
        "unchanged": counts.unchanged,
        "depth": depth,
        "groups": [
            {
                "prefix": g.prefix,
                "added": g.added,
                "removed": g.removed,
                "changed": g.changed,
                "examples": {kind: list(urls) for kind, urls in g.examples.items()},
            }
            for g in found
        ],
        "elapsed": round(elapsed, 3),
    }


def _print_notes(changes: Diff, *, verbose: int) -> None:
    """Skipped rows (the first few by position: `-v` logs them as they are found), duplicate
    URLs and lastmods that could not be compared, on stderr."""
    counts = changes.counts
    for info, duplicates in (
        (changes.old, counts.old_duplicates),
        (changes.new, counts.new_duplicates),
    ):
        skipped = sum(info.skipped.values())
        if skipped:
            reasons = ", ".join(f"{n:,} {why}" for why, n in info.skipped.most_common())
            err.print(
                f"warning: {plural(skipped, 'row', separators=True)} of {info.path} skipped: "
                f"{reasons}",
                markup=False,
            )
            if not verbose:
                for where, why in info.examples:
                    err.print(f"  {info.path}, {where}: {why}", markup=False)
        if duplicates:
            err.print(
                f"warning: {info.path} lists {plural(duplicates, 'URL', separators=True)} more than"
                " once:"
                " the last row of each counts",
                markup=False,
            )
    if changes.without_lastmods:
        err.print(
            f"note: lastmods not compared ({' and '.join(changes.without_lastmods)} has none):"
            " only added and removed URLs are shown",
            markup=False,
        )


def _summary_line(changes: Diff, elapsed: float, to_file: Path | None) -> str:
    c = changes.counts
    said = (
        f"{c.added:,} added, {c.removed:,} removed, {c.changed:,} changed, "
        f"{c.unchanged:,} unchanged"
        if c.changes
        else f"no changes ({c.unchanged:,} URLs unchanged)"
    )
    line = (
        f"{said}: {changes.old.path} ({plural(changes.old.rows, 'row', separators=True)}) → "
        f"{changes.new.path} ({plural(changes.new.rows, 'row', separators=True)}); {elapsed:.2f} s"
    )
    if to_file is not None:
        line += f"\nrows → {to_file}"
    return line

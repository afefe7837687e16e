"""`sitescout urls`: the site's full URL inventory as JSON lines, CSV or plain URLs on stdout,
or any of those and Parquet in a file."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import stat
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, NoReturn

import typer

from .._api import walk as start_walk
from .._core import Batch
from .._errors import UsageError
from .._signals import RunEnd, ctrl_c_ignored
from .._table import COLUMNS, ParquetWriter
from .._walk import Walk
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
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
    NoAlternates,
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
from ._output import Tally, WalkProgress, exit_code, print_summary
from ._site import site_argument, sitemap_option


class Format(StrEnum):
    jsonl = "jsonl"
    csv = "csv"
    txt = "txt"
    parquet = "parquet"


class _Writer:
    """Batches to the output: JSON lines, CSV and plain URLs are encoded by the native core (one
    encoder per format) and its bytes written to the byte stream under the text one, where there
    is one, so that no str per batch is decoded from them and encoded back; Parquet is built
    from the column buffers it lays out."""

    def __init__(self, out: IO[str], fmt: Format, parquet: ParquetWriter | None = None) -> None:
        self.out = out
        self.fmt = fmt
        self._parquet = parquet
        binary = getattr(out, "buffer", None)
        self._binary = binary if isinstance(binary, io.BufferedIOBase | io.RawIOBase) else None
        if fmt is Format.csv:
            csv.writer(out, lineterminator="\n").writerow(COLUMNS)
            out.flush()  # the header before the rows written under it

    def write(self, rows: Batch) -> None:
        if self._parquet is not None:
            self._parquet.write(rows)
        elif self._binary is not None:
            self._binary.write(rows.encode(self.fmt.value))
        else:
            self.out.write(rows.encode(self.fmt.value).decode("utf-8"))


class _Output:
    """Where the entries go: stdout, or the `-o` file.

    The file is streamed into a temporary sibling and renamed over the destination at the end,
    and only when the run has something to put there (entries, or a complete walk that found
    none): a run that finds nothing, fails or is interrupted before its first entry leaves an
    existing file as it was, and no reader ever sees a half-written file — a Parquet file has
    no footer until it is closed. After Ctrl-C the entries written so far are kept.
    """

    def __init__(self, path: Path | None, fmt: Format) -> None:
        self.path = path
        self.temp: Path | None = None
        self._file: IO[str] | None = None
        self._parquet: ParquetWriter | None = None
        try:
            target = self._start(path)
            if fmt is Format.parquet:
                if target is None:
                    raise UsageError("--format parquet needs --output FILE")
                self._parquet = ParquetWriter(target)
                out: IO[str] = sys.stdout  # the Parquet writer owns the file
            elif target is None:
                out = sys.stdout
            else:
                out = self._file = target.open("w", encoding="utf-8", newline="")
            self.writer = _Writer(out, fmt, self._parquet)
        except BaseException:
            self.close(keep=False)
            raise

    def _start(self, path: Path | None) -> Path | None:
        if path is None:
            return None
        if path.exists() and not path.is_file():
            self.path = None  # a FIFO or a device (/dev/stdout) cannot be replaced: write to it
            return path
        final = Path(os.path.realpath(path))  # through a symlink: replace its target, not it
        fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
        os.close(fd)
        self.path, self.temp = final, Path(name)
        os.chmod(name, _mode_for(final))
        return self.temp

    def write(self, batch: Batch) -> None:
        self.writer.write(batch)
        if self._file is None and self._parquet is None:
            # A pipe gets each batch as it is handed on, not when a buffer fills: on a slow site
            # the first URLs reach `grep` or `head` within a second of being parsed.
            sys.stdout.flush()

    def close(self, *, keep: bool) -> None:
        """Finish the file and put it in place (`keep`), or drop it and leave the old one."""
        parquet, file, self._parquet, self._file = self._parquet, self._file, None, None
        try:
            if parquet is not None:
                parquet.close()
            if file is not None:
                file.close()
            elif self.temp is None:
                sys.stdout.flush()
            if self.temp is not None and self.path is not None and keep:
                os.replace(self.temp, self.path)
                self.temp = None
        finally:
            if self.temp is not None:
                self.temp.unlink(missing_ok=True)


def _mode_for(path: Path) -> int:
    """The permissions the output gets: the old file's, or what a plain `open` would give."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


async def _stream(
    walk: Walk, output: _Output, tally: Tally, progress: WalkProgress, end: RunEnd
) -> None:
    async for batch in walk.batches():
        output.write(batch)
        tally.add(batch)
        progress.update(walk.report)
    end.reached()  # the walk is over and its last entry written: the run has finished


@app.command()
@with_walk_flags(concurrency=8)
def urls(
    url: Annotated[
        str, typer.Argument(help="Site URL, sitemap URL, or sitemap file ('-': stdin).")
    ],
    format: Annotated[
        Format,
        typer.Option(
            "--format",
            "-f",
            help="jsonl: one JSON object per URL; csv; txt: one URL per line, for pipelines;"
            " parquet (needs --output).",
        ),
    ] = Format.jsonl,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")] = None,
    sitemap: Sitemap = None,
    no_alternates: NoAlternates = False,
    *,
    flags: WalkFlags,
    locale: Locale = None,
    crawl: Crawl = False,
    render: Render = False,
    source: Source = PageSource.auto,
    llms_txt: LlmsTxt = None,
    maps: MapArg = None,
    offline: Offline = False,
    changes_only: Annotated[
        bool,
        typer.Option(
            "--changes-only",
            help="With --state: write only what changed since the last walk into DIR, one row per"
            " URL added, removed or with a new lastmod (url, change, old_lastmod, new_lastmod).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Summary as JSON on stderr (stdout stays data).")
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """List a site's page URLs as a stream: JSON lines (default), CSV, plain URLs or Parquet."""
    setup_logging(verbose, quiet=quiet)
    check_render(render)
    to_file = output if output is not None and str(output) != "-" else None
    url = site_argument(url, quiet=quiet or as_json, files=True)  # --json: stderr is the summary's
    if changes_only:
        if flags.state is None:
            raise usage_error(UsageError("--changes-only needs --state DIR"))
        if format is Format.txt:
            raise usage_error(UsageError("--changes-only writes rows with columns: not txt"))
    try:
        options = inventory_options(
            url,
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
        walk = start_walk(url, options)
        if changes_only:
            # Only this mode needs the change rows and the comparison behind them: a plain walk
            # does not load them.
            from ._changes import NEXT_INVENTORY

            assert options.state is not None
            inventory = options.state / NEXT_INVENTORY  # this walk's, compared at the end
            out = _Output(inventory, Format.jsonl)
        else:
            out = _Output(to_file, format)
    except (UsageError, ValueError) as exc:
        raise usage_error(exc) from None
    except OSError as exc:
        err.print(f"error: cannot write {output}: {exc.strerror or exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    tally = Tally()
    # Ctrl-C once the last entry is written finds a finished run: it is ignored from then on
    # (`RunEnd`), and the summary, the file and the exit code stay those of that run.
    with RunEnd() as end:
        try:
            with WalkProgress(not quiet) as progress:
                asyncio.run(_stream(walk, out, tally, progress, end))
        except KeyboardInterrupt:
            walk.report.mark_partial("interrupted")
        except BrokenPipeError:  # `| head` closed the pipe: stop quietly
            sys.stderr.close()
            raise typer.Exit(EXIT_OK) from None
        except OSError as exc:  # a full disk, a vanished directory
            _write_failed(out, output, exc)
        except BaseException:
            with ctrl_c_ignored():
                out.close(keep=tally.total > 0)
            raise
        end.reached()  # interrupted or not, the summary is printed whole
        tally.settle(walk.report)
        # A run that wrote no entry leaves an existing output file as it was, whatever the reason
        # (an empty site, a base path or a source that matched nothing, a failure, Ctrl-C before
        # the first batch); the report counts what was written (`settle`), so its code says so.
        code = exit_code(walk.report)
        kept = None
        with ctrl_c_ignored():
            try:
                out.close(keep=tally.total > 0)
            except OSError as exc:
                _write_failed(out, output, exc)
        # With --changes-only `out` is the state's inventory, not the user's file: not told.
        if not changes_only and not tally.total and to_file is not None and out.path is not None:
            kept = f"{to_file}: left as it was (no entry written)"
            if not to_file.exists():
                kept = f"{to_file}: not created (no entry written)"
            walk.report.notes.append(kept)
        changed: list[str] = []
        if changes_only:
            from ._changes import write_changes

            assert options.state is not None
            lines = write_changes(options.state, walk.report, format.value, to_file)
            if lines is None:
                raise typer.Exit(EXIT_USAGE)
            changed = lines
        print_summary(walk.report, as_json=as_json, quiet=quiet)
        for line in changed if not (as_json or quiet) else ():
            err.print(line, markup=False)
        if kept is not None and not as_json and not quiet:
            err.print(kept, markup=False)
        raise typer.Exit(code)


def _write_failed(out: _Output, output: Path | None, exc: OSError) -> NoReturn:
    """The output cannot be written: drop what is half written, keep an old file, exit 3."""
    with contextlib.suppress(OSError):
        out.close(keep=False)
    where = "stdout" if output is None or str(output) == "-" else str(output)
    err.print(f"error: cannot write {where}: {exc.strerror or exc}", markup=False)
    raise typer.Exit(EXIT_NOTHING)

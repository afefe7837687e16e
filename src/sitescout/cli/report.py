"""`sitescout report`: the site's shape as one self-contained HTML file.

From a walk (`sitescout report URL`, the walk flags of `urls`) or from an inventory that
`sitescout urls` saved (JSON lines, CSV or Parquet). An inventory file is untrusted input: rows
that cannot be read are skipped and counted (exit 1), a file that is not an inventory at all is
refused with one line (exit 2), and reading is one pass with bounded memory.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from ..__about__ import __version__
from .._api import walk as start_walk
from .._errors import UsageError
from .._models import WalkReport
from .._signals import RunEnd
from .._urls import is_http_url
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
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
    Quiet,
    Render,
    Sitemap,
    Source,
    Verbose,
    WalkFlags,
    check_render,
    inventory_options,
    with_walk_flags,
)
from ._output import drain, exit_code, print_json, print_summary
from ._site import site_argument, sitemap_option

if TYPE_CHECKING:  # the report's modules load when the command runs, not with the CLI
    from .._report import InventoryInfo, ReportBuilder

LINE_LIMIT = 1 << 20  # bytes of one JSON line; longer ones are skipped, not held
CHUNK = 10_000  # rows handed to the builder at a time
TEXT_COLUMNS = ("url", "lastmod", "sitemap", "hreflang", "alternate_of")


class _Columns:
    """Rows read so far, handed to the builder every `CHUNK` rows."""

    def __init__(self, builder: ReportBuilder, info: InventoryInfo) -> None:
        self.builder = builder
        self.info = info
        self.cols: dict[str, list[Any]] = {name: [] for name in TEXT_COLUMNS}

    def add(self, row: dict[str, Any]) -> None:
        for name in TEXT_COLUMNS:
            self.cols[name].append(row.get(name))
        self.info.rows += 1
        if len(self.cols["url"]) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        c = self.cols
        if c["url"]:
            self.builder.add_rows(
                c["url"], c["lastmod"], c["sitemap"], c["hreflang"], c["alternate_of"]
            )
        self.cols = {name: [] for name in TEXT_COLUMNS}


def _check_row(row: object) -> str | None:
    """Why a decoded row cannot be used, or None."""
    if not isinstance(row, dict):
        return "not a JSON object"
    url = row.get("url")
    if not isinstance(url, str) or not url.strip():
        return "no url"
    for name in TEXT_COLUMNS[1:]:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} is not text"
    return None


def _lines(file: IO[bytes]) -> Iterator[bytes | None]:
    """The file's lines; None for a line over `LINE_LIMIT` (read through, never held)."""
    while True:
        line = file.readline(LINE_LIMIT + 1)
        if not line:
            return
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = file.readline(LINE_LIMIT)
            yield None
            continue
        yield line


def read_jsonl(path: Path, builder: ReportBuilder, info: InventoryInfo) -> None:
    out = _Columns(builder, info)
    with path.open("rb") as file:
        for line in _lines(file):
            if line is None:
                info.skipped[f"line longer than {LINE_LIMIT // 1048576} MiB"] += 1
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):  # bad JSON or UTF-8; nesting past the limit
                info.skipped["not valid JSON (a cut or damaged line)"] += 1
                continue
            reason = _check_row(row)
            if reason is not None:
                info.skipped[reason] += 1
                continue
            out.add(row)
    out.flush()


def read_csv(path: Path, builder: ReportBuilder, info: InventoryInfo) -> None:
    out = _Columns(builder, info)
    with path.open("r", encoding="utf-8", newline="") as file:
        reader = csv.DictReader(file)
        try:
            if reader.fieldnames is None or "url" not in reader.fieldnames:
                raise UsageError(f"{path} is not a sitescout inventory: no url column")
            info.missing_columns = [c for c in TEXT_COLUMNS if c not in reader.fieldnames]
            for row in reader:
                if not (row.get("url") or "").strip():
                    info.skipped["no url"] += 1
                    continue
                out.add({k: (row.get(k) or None) for k in TEXT_COLUMNS})
        except csv.Error as exc:
            raise UsageError(
                f"cannot read {path} as CSV at line {reader.line_num}: {exc}"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"cannot read {path}: not UTF-8 text") from None
    out.flush()


def read_parquet(path: Path, builder: ReportBuilder, info: InventoryInfo) -> None:
    from .._table import require_pyarrow

    pa, pq = require_pyarrow()
    try:
        parquet = pq.ParquetFile(str(path))
        schema = parquet.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path} as Parquet: {exc}") from None
    types = {name: schema.field(name).type for name in schema.names}
    url_type = types.get("url")
    if url_type is None or not _is_text(pa, url_type):
        raise UsageError(f"{path} is not a sitescout inventory: no text url column")
    usable: list[str] = []
    for name in TEXT_COLUMNS:
        kind = types.get(name)
        if kind is None:
            info.missing_columns.append(name)
        elif _is_text(pa, kind) or pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            usable.append(name)
        else:
            info.missing_columns.append(f"{name} ({kind}, not text)")
    out = _Columns(builder, info)
    try:
        for batch in parquet.iter_batches(batch_size=CHUNK, columns=usable):
            columns = {
                name: _as_text(pa, batch.column(i)).to_pylist() for i, name in enumerate(usable)
            }
            urls = columns["url"]
            for i, url in enumerate(urls):
                if url is None or not url.strip():
                    info.skipped["no url"] += 1
                    continue
                out.add({name: values[i] for name, values in columns.items()})
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path} as Parquet after {info.rows} rows: {exc}") from None
    out.flush()


def _is_text(pa: Any, kind: Any) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _as_text(pa: Any, column: Any) -> Any:
    """Timestamps and dates (a DataFrame's lastmod) as ISO text, as the JSON lines have them."""
    return column if _is_text(pa, column.type) else column.cast(pa.string())


def read_inventory(path: Path, builder: ReportBuilder) -> InventoryInfo:
    """Feed a saved inventory to `builder`. Raises `UsageError` for a file that is not one."""
    if not path.is_file():
        raise UsageError(f"no such inventory file: {path} (give a site URL or a saved inventory)")
    suffix = path.suffix.lower()
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    from .._report import InventoryInfo

    if suffix == ".parquet" or magic == b"PAR1":
        info = InventoryInfo(str(path), "Parquet")
        reader = read_parquet
    elif suffix == ".csv":
        info = InventoryInfo(str(path), "CSV")
        reader = read_csv
    else:
        info = InventoryInfo(str(path), "JSON lines")
        reader = read_jsonl
    try:
        reader(path, builder, info)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if info.rows == 0:
        detail = _skipped_text(info)
        raise UsageError(f"{path} holds no inventory rows" + (f" ({detail})" if detail else ""))
    return info


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


_INVENTORY_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")


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
                f"warning: {sum(info.skipped.values()):,} rows of {url_or_file} skipped: "
                + _skipped_text(info),
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
    drain(walk, builder.add_entries, progress=progress)  # after Ctrl-C: a report of what came
    return exit_code(walk.report), builder, walk.report, None, url

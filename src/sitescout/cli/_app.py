"""The typer app, shared options and output helpers. Stdout carries data only; the rest is stderr.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import getpass
import inspect
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Annotated, Any, TypeVar, get_type_hints

import typer
from rich.console import Console
from typer.core import TyperCommand, TyperGroup, TyperOption

from ..__about__ import __version__
from .._budget import Budgets
from .._cookies import Cookie, parse_cookie, parse_cookies_txt
from .._core import Batch, UrlFilter
from .._errors import UsageError
from .._http import (
    DEFAULT_USER_AGENT,
    EnvProxies,
    FetchConfig,
    mask_url,
    proxy_problem,
    render_problem,
    ssl_context_for,
)
from .._locale import path_locale
from .._models import Entry, WalkReport
from .._since import parse_since
from .._walk import MAX_CONCURRENCY, Walk, WalkOptions

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., Any])


def _valueless_flags(params: list[Any]) -> list[Any]:
    """A boolean flag takes no value, so its help shows no type: typer's rich help otherwise
    prints `<bool>` after every flag, `--help` included, as if one had to write `--crawl true`."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _valueless_flags(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a reader that closed stdout (`| head`) ends it quietly, exit 0.

        The logging set up for the command (`setup_logging`) is put back as it was when the
        command ends: a command run inside another program (a test's CliRunner) leaves that
        program's logging as it found it.
        """
        restore_logging = _logging_restorer()
        RUN_WARNINGS[:] = [INSECURE_WARNING] if ctx.params.get("insecure") else []
        if (
            RUN_WARNINGS
            and ctx.command.name in ("scope", "extract")
            and not ctx.params.get("quiet")
        ):
            # Their own summaries do not go through `print_summary`: said once, up front.
            err.print(f"warning: {INSECURE_WARNING}", markup=False)
        try:
            try:
                return super().invoke(ctx)
            finally:
                _flush_stdout()  # what is still buffered meets a closed pipe here, not at exit
        except BrokenPipeError:
            _discard_stdout()
            raise typer.Exit(EXIT_OK) from None
        finally:
            restore_logging()


def _flush_stdout() -> None:
    with contextlib.suppress(ValueError):  # already closed: nothing is buffered
        sys.stdout.flush()


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for the closed pipe neither fails nor prints a complaint."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test runner's buffer): nothing flushes to a pipe at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _valueless_flags(super().get_params(ctx))


class _Typer(typer.Typer):
    """Every command registered here (each module's `@app.command()`) gets `_Command`."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[CommandFunction], CommandFunction]:
        kwargs.setdefault("cls", _Command)
        decorator: Callable[[CommandFunction], CommandFunction] = super().command(*args, **kwargs)
        return decorator


app = _Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    help="Find every page a website has, fast and safely, and the few that show its shape.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOTHING = 0, 1, 2, 3


# -- shared options ------------------------------------------------------------------------

UserAgent = Annotated[str, typer.Option(help="User-Agent sent with every request.")]
Concurrency = Annotated[
    int, typer.Option(min=1, max=MAX_CONCURRENCY, help="Documents in flight per host.")
]
Timeout = Annotated[float, typer.Option(min=0.1, help="Total seconds allowed per document.")]
MaxDepth = Annotated[int | None, typer.Option(min=1, help="Deepest sitemap level (root = 1).")]
MaxFetches = Annotated[int | None, typer.Option(min=1, help="Sitemap fetch attempts allowed.")]
MaxBytes = Annotated[int | None, typer.Option(min=1, help="Decoded sitemap bytes allowed.")]
MaxUrls = Annotated[int | None, typer.Option(min=1, help="Page URLs to collect at most.")]
Deadline = Annotated[float | None, typer.Option(min=0.1, help="Wall-clock seconds for the walk.")]


def _check_since(value: str | None) -> str | None:
    if value is not None:
        try:
            parse_since(value)
        except UsageError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _check_patterns(value: list[str] | None) -> list[str] | None:
    for pattern in value or ():
        try:
            UrlFilter([pattern])
        except ValueError as exc:  # "include: 'pattern': the regex error"
            raise typer.BadParameter(f"invalid regex {exc.args[0].partition(': ')[2]}") from None
    return value


Since = Annotated[
    str | None,
    typer.Option(
        metavar="DATE",
        callback=_check_since,
        help="Drop page URLs and skip child sitemaps whose lastmod is older: a date, an ISO "
        "time (UTC without a zone), or 7d / 12h back from now.",
    ),
]
SinceStrict = Annotated[
    bool,
    typer.Option("--since-strict", help="With --since, drop page URLs without a lastmod too."),
]


def _patterns(help: str) -> Any:
    """A repeatable regex option, each pattern compiled when the command line is read."""
    return typer.Option(metavar="REGEX", callback=_check_patterns, help=help)


Include = Annotated[
    list[str] | None, _patterns("Keep only page URLs this regex matches (repeatable: any of them).")
]
Exclude = Annotated[list[str] | None, _patterns("Drop page URLs this regex matches (repeatable).")]
SitemapInclude = Annotated[
    list[str] | None,
    _patterns("Fetch only child sitemaps this regex matches (repeatable: any of them)."),
]
SitemapExclude = Annotated[
    list[str] | None, _patterns("Do not fetch child sitemaps this regex matches (repeatable).")
]
Locale = Annotated[
    str | None, typer.Option(help="Preferred locale; shards of other locales are skipped.")
]
Sitemap = Annotated[
    str | None,
    typer.Option(help="Walk this sitemap (a URL, or a file on disk: - for stdin); skip discovery."),
]
Crawl = Annotated[
    bool, typer.Option("--crawl", help="Find pages by following links, even with a sitemap.")
]
Render = Annotated[
    bool,
    typer.Option(
        "--render", help="Load pages in headless Chromium (needs playwright + system Chromium)."
    ),
]


class PageSource(StrEnum):
    auto = "auto"
    sitemap = "sitemap"
    llms = "llms"
    all = "all"


Source = Annotated[
    PageSource,
    typer.Option(
        "--source",
        help="Where page URLs come from. auto: the sitemaps, else llms.txt, else the link crawl;"
        " sitemap; llms: llms.txt only; all: sitemaps and llms.txt merged.",
    ),
]
LlmsTxt = Annotated[
    str | None,
    typer.Option("--llms-txt", help="Read this llms.txt instead of looking for one."),
]
MapArg = Annotated[
    list[str] | None,
    typer.Option(
        "--map",
        metavar="URL-PREFIX=DIR",
        help="Read documents whose URL starts with URL-PREFIX from DIR instead of the network"
        " (repeatable).",
    ),
]
Offline = Annotated[
    bool,
    typer.Option(
        "--offline", help="Make no request: http(s) sitemaps no --map covers are skipped."
    ),
]


def parse_maps(values: list[str] | None) -> tuple[tuple[str, str], ...]:
    """`--map URL-PREFIX=DIR` values as (prefix, folder) pairs; UsageError for a bad one (the
    walk's options check the prefix and the folder)."""
    out: list[tuple[str, str]] = []
    for value in values or ():
        prefix, sep, folder = value.partition("=")
        if not sep or not prefix or not folder:
            raise UsageError(f"--map: expected URL-PREFIX=DIR, got {value!r}")
        out.append((prefix, folder))
    return tuple(out)


# `scope` and `groups` answer on stdout: a table, or this JSON.
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON on stdout instead of a table.")]
# `urls` and `batch` write the alternates out; `groups` and `report` count them.
NoAlternates = Annotated[
    bool, typer.Option("--no-alternates", help="Do not emit hreflang alternates.")
]
NoAlternatesCounted = Annotated[
    bool, typer.Option("--no-alternates", help="Do not count hreflang alternates.")
]
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Only errors on stderr; stdout keeps the data, table or --json."
    ),
]
Verbose = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        help="Log each sitemap document on stderr; -vv adds the HTTP library's debug log.",
    ),
]


# -- fetch control: headers, cookies, credentials, proxy, TLS, rate ----------------------------

INSECURE_WARNING = (
    "TLS certificates are not verified (--insecure): anyone on the path can read and change"
    " what this run fetches"
)
# Warnings of this run that its summary adds to the walk's own (`print_summary`).
RUN_WARNINGS: list[str] = []


def _header_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        # Never the text itself: it may be a secret.
        raise typer.BadParameter("expected 'Name: value' (no colon found)")
    return name.strip(), value.strip()


def _check_headers(values: list[str] | None) -> list[str] | None:
    if values:
        try:
            FetchConfig(headers=tuple(_header_pair(v) for v in values))
        except UsageError as exc:
            raise typer.BadParameter(str(exc).removeprefix("headers: ")) from None
    return values


def _check_cookies(values: list[str] | None) -> list[str] | None:
    for value in values or ():
        try:
            parse_cookie(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return values


def read_cookie_file(path: str) -> tuple[Cookie, ...]:
    """The cookies of a Netscape cookies.txt; UsageError saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(16 * 1024 * 1024)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return parse_cookies_txt(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not a cookies.txt file: {exc}") from None


def _check_cookie_file(value: str | None) -> str | None:
    if value is not None:
        try:
            read_cookie_file(value)
        except UsageError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _ask_password(value: str | None) -> str | None:
    """`user:password` as given, or `user` with the password asked for on the terminal."""
    if value is None:
        return None
    user, sep, _password = value.partition(":")
    if not user:
        raise typer.BadParameter("expected user:password, or user alone to be asked")
    if sep:
        return value
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise typer.BadParameter(
            "no password given and no terminal to ask for it on: pass --auth user:password"
        )
    return f"{user}:{getpass.getpass(f'password for {user}: ')}"


def _check_proxy(value: str | None) -> str | None:
    if value is not None:
        problem = proxy_problem(value)
        if problem is not None:
            raise typer.BadParameter(f"{mask_url(value)}: {problem}")
    return value


def _check_trust_env(value: bool) -> bool:
    if value:
        try:
            EnvProxies.read()
        except UsageError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _check_ca_bundle(value: str | None) -> str | None:
    if value is not None:
        if not os.path.isfile(value):
            raise typer.BadParameter(f"no such file: {value}")
        try:
            ssl_context_for(FetchConfig(ca_bundle=value))
        except UsageError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _check_rate(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter(f"must be more than zero, got {value:g}")
    return value


Header = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        callback=_check_headers,
        help="'Name: value' sent to the start URL's origin only (repeatable).",
    ),
]
CookieArg = Annotated[
    list[str] | None,
    typer.Option(
        "--cookie",
        callback=_check_cookies,
        help="'name=value' sent to the start URL's host only (repeatable).",
    ),
]
CookieFile = Annotated[
    str | None,
    typer.Option(
        "--cookies",
        metavar="FILE",
        callback=_check_cookie_file,
        help="Netscape cookies.txt; each cookie goes where its domain and path say.",
    ),
]
Auth = Annotated[
    str | None,
    typer.Option(
        "--auth",
        metavar="USER:PASSWORD",
        callback=_ask_password,
        help="Basic auth for the start URL's origin; 'user' alone asks for the password.",
    ),
]
Proxy = Annotated[
    str | None,
    typer.Option(
        "--proxy",
        metavar="URL",
        callback=_check_proxy,
        help="Send every request through this proxy (http://, https://, socks5://).",
    ),
]
TrustEnv = Annotated[
    bool,
    typer.Option(
        "--trust-env",
        callback=_check_trust_env,
        help="Honour HTTP(S)_PROXY, NO_PROXY, SSL_CERT_FILE and .netrc, as curl does.",
    ),
]
CaBundle = Annotated[
    str | None,
    typer.Option(
        "--ca-bundle",
        metavar="FILE",
        callback=_check_ca_bundle,
        help="Trust the CA certificates of this PEM file.",
    ),
]
Insecure = Annotated[
    bool, typer.Option("--insecure", help="Do not verify TLS certificates (warned on every run).")
]
Rate = Annotated[
    float | None,
    typer.Option(
        "--rate",
        metavar="N",
        callback=_check_rate,
        help="At most N requests per second per host (0.5: one every 2 s).",
    ),
]


@dataclass(frozen=True, slots=True)
class FetchFlags:
    """The fetch-control flags every command that fetches takes (`@with_fetch_flags`; the walk
    commands get them with `WalkFlags`): headers, cookies, credentials, proxy, TLS, rate."""

    # Secrets: left out of the record's repr (`FetchConfig` masks them the same way).
    header: Header = field(default=None, repr=False)
    cookie: CookieArg = field(default=None, repr=False)
    cookies: CookieFile = None
    auth: Auth = field(default=None, repr=False)
    proxy: Proxy = field(default=None, repr=False)
    trust_env: TrustEnv = False
    ca_bundle: CaBundle = None
    insecure: Insecure = False
    rate: Rate = None

    def apply(self, config: FetchConfig) -> FetchConfig:
        """`config` with these flags; UsageError for a value the callbacks did not check (a
        command called directly)."""
        jar: tuple[Cookie, ...] = ()
        if self.cookies is not None:
            jar = read_cookie_file(self.cookies)
        try:
            given = tuple(parse_cookie(c) for c in self.cookie or ())
        except ValueError as exc:
            raise UsageError(f"--cookie: {exc}") from None
        auth = None
        if self.auth is not None:
            user, _sep, password = self.auth.partition(":")
            auth = (user, password)
        return replace(
            config,
            headers=tuple(_header_pair(h) for h in self.header or ()),
            cookies=jar + given,
            auth=auth,
            proxy=self.proxy,
            trust_env=self.trust_env,
            ca_bundle=self.ca_bundle,
            insecure=self.insecure,
            rate=self.rate,
        )


@dataclass(frozen=True, slots=True)
class WalkFlags(FetchFlags):
    """The flags every walking command shares (`@with_walk_flags`): how to fetch, how far to go.

    Each field's type is its option, so the command line and this record list them once, in
    help order (its own fields, then the fetch-control flags of `FetchFlags`). A budget flag
    not given is None: no limit for the inventory commands, the preset's value for `extract`
    (`budgets_over`).
    """

    concurrency: Concurrency = 8  # each command gives its own default (`with_walk_flags`)
    timeout: Timeout = 30.0
    user_agent: UserAgent = DEFAULT_USER_AGENT
    max_depth: MaxDepth = None
    max_fetches: MaxFetches = None
    max_bytes: MaxBytes = None
    max_urls: MaxUrls = None
    deadline: Deadline = None
    since: Since = None
    since_strict: SinceStrict = False
    include: Include = None
    exclude: Exclude = None
    sitemap_include: SitemapInclude = None
    sitemap_exclude: SitemapExclude = None

    def fetch(self) -> FetchConfig:
        return self.apply(FetchConfig(user_agent=self.user_agent, timeout=self.timeout))

    def filters(self) -> dict[str, Any]:
        """The `WalkOptions` fields of the filter flags (`--since`, `--include`, ...)."""
        if self.since_strict and self.since is None:
            raise UsageError("--since-strict needs --since")
        try:
            since = parse_since(self.since) if self.since is not None else None
        except UsageError as exc:
            raise UsageError(f"--since: {exc}") from None
        return {
            "since": since,
            "since_strict": self.since_strict,
            "include": tuple(self.include or ()),
            "exclude": tuple(self.exclude or ()),
            "sitemap_include": tuple(self.sitemap_include or ()),
            "sitemap_exclude": tuple(self.sitemap_exclude or ()),
        }

    def budgets_over(self, preset: Budgets) -> Budgets:
        """`preset` with each budget flag given in place of its value."""
        return replace(preset, **{name: v for name, v in self._budgets() if v is not None})

    @property
    def budgets_given(self) -> bool:
        return any(v is not None for _name, v in self._budgets())

    def _budgets(self) -> list[tuple[str, Any]]:
        return [(spec.name, getattr(self, spec.name)) for spec in fields(Budgets)]


def with_walk_flags(*, concurrency: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the shared walk flags, `--concurrency` to `--deadline` and the fetch
    control of `FetchFlags`, declared once.

    The command names one keyword-only parameter `flags: WalkFlags`; typer sees the fields of
    `WalkFlags` as options in its place (so the help lists them where the command puts them)
    and the command receives them as one `WalkFlags`. `concurrency` is the command's default.
    """
    return _flags_of(WalkFlags, "flags", {"concurrency": concurrency})


def with_fetch_flags() -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command that fetches but does not walk (`scope`) the fetch-control flags: its
    keyword-only parameter `fetch_flags: FetchFlags` receives them."""
    return _flags_of(FetchFlags, "fetch_flags", {})


def _flags_of(
    record: type[Any], name: str, defaults: dict[str, Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    types = get_type_hints(record, include_extras=True)
    inherited = {spec.name for spec in fields(FetchFlags)} if record is not FetchFlags else set()
    specs = [s for s in fields(record) if s.name not in inherited]
    specs += [s for s in fields(record) if s.name in inherited]
    shared = [
        inspect.Parameter(
            spec.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=defaults.get(spec.name, spec.default),
            annotation=types[spec.name],
        )
        for spec in specs
    ]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            params.extend(shared if param.name == name else [param])

        @functools.wraps(command)
        def run(**values: Any) -> None:
            flags = record(**{spec.name: values.pop(spec.name) for spec in specs})
            command(**{name: flags}, **values)

        # typer reads the parameters from the signature and resolves their types from these.
        run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        run.__annotations__ = {param.name: param.annotation for param in params}
        return run

    return decorate


def inventory_options(
    url: str | None,
    *,
    flags: WalkFlags,
    sitemap: str | None,
    alternates: bool,
    locale: str | None,
    crawl: bool = False,
    render: bool = False,
    source: str = "auto",
    llms_txt: str | None = None,
    maps: list[str] | None = None,
    offline: bool = False,
) -> WalkOptions:
    """The walk of the inventory commands (`urls`, `groups`, `report`, `batch`): no budgets
    unless given. A locale in the site URL's path filters shards (`batch` decides that per
    site: no URL)."""
    fetch = flags.fetch()
    if render:
        problem = render_problem(fetch)
        if problem is not None:
            raise UsageError(problem)
    return WalkOptions(
        sitemap=sitemap,
        alternates=alternates,
        concurrency=flags.concurrency,
        fetch=fetch,
        budgets=flags.budgets_over(Budgets()),
        locale=locale,
        # §7: the inventory filters locales only when asked, by flag or by the base URL.
        filter_locales=locale is not None or (url is not None and path_locale(url) is not None),
        crawl=crawl,
        render=render,
        source=str(source),
        llms_txt=llms_txt,
        maps=parse_maps(maps),
        offline=offline,
        **flags.filters(),
    )


def drain(walk: Walk, consume: Callable[[list[Entry]], None], *, progress: bool) -> None:
    """Run `walk` to its end, handing each batch of entries to `consume` (progress on a
    terminal when `progress`). Ctrl-C ends it as a partial result: what was consumed so far is
    still the answer, and the report counts that."""
    tally = Tally()

    async def pump(shown: WalkProgress) -> None:
        async for batch in walk:
            consume(batch)
            tally.add(batch)
            shown.update(walk.report)

    with WalkProgress(progress) as shown:
        try:
            asyncio.run(pump(shown))
        except KeyboardInterrupt:
            walk.report.mark_partial("interrupted")
    tally.settle(walk.report)


def usage_error(exc: Exception) -> typer.Exit:
    """Say what the caller got wrong, on stderr; the exit (2) for the command to raise."""
    err.print(f"error: {exc}", markup=False)
    return typer.Exit(EXIT_USAGE)


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        """A closed stdout is the reader's choice (`| head`): the command ends quietly, exit 0
        (see `_Command.invoke`), not with rich's own exit 1."""
        self.quiet = True
        raise BrokenPipeError


def stdout_console() -> Console:
    """Tables on stdout: no highlighting, no wrapping (a pipe gets whole rows)."""
    return _StdoutConsole(highlight=False, soft_wrap=False)


def check_render(render: bool) -> None:
    """Fail before any work when `--render` cannot run (exit 2, naming what to install)."""
    if not render:
        return
    from .._render import check_render_available

    try:
        check_render_available()
    except UsageError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None


# Other libraries' loggers: below `-vv` they say nothing under WARNING (the HTTP library logs
# every request at INFO and its connection pool at DEBUG; Dask its cluster's life at INFO).
_OTHER_LOGGERS = ("httpx", "httpcore", "hpack", "asyncio", "dask", "distributed", "tornado")


def setup_logging(verbose: int = 0, *, quiet: bool = False) -> None:
    """Log records on stderr for `-v` (sitescout's own, from INFO: one line per sitemap
    document) and `-vv` (everything, from DEBUG, with logger names); otherwise errors only.

    `quiet` and `verbose` together are a usage error (exit 2). Every command calls this first,
    with its `-q` and `-v`.
    """
    if quiet and verbose:
        raise usage_error(UsageError("--quiet and --verbose cannot be used together"))
    if verbose >= 2:
        own, others = logging.DEBUG, logging.DEBUG
    elif verbose == 1:
        own, others = logging.INFO, logging.WARNING
    else:
        own, others = logging.ERROR, logging.ERROR
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        root.addHandler(handler)
    handler.setFormatter(_LogFormat(detailed=verbose >= 2))
    # By name, not by level alone: a library that sets its own logger's level (Dask logs at
    # INFO) would otherwise reach stderr past the root logger's level.
    handler.filters = [_Threshold(own=own, others=others)]
    root.setLevel(min(own, others))
    for name in _OTHER_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose >= 2 else others)


def _logging_restorer() -> Callable[[], None]:
    """A function that puts the levels and handlers `setup_logging` sets back as they are now."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {name: logging.getLogger(name).level for name in ("", *_OTHER_LOGGERS)}

    def restore() -> None:
        for handler in root.handlers:
            if handler not in handlers:
                root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)

    return restore


class _StderrHandler(logging.Handler):
    """Log records through the stderr console: a live progress line is redrawn below them
    instead of being torn, and a record is printed as it is (no markup, no emoji codes)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err.out(self.format(record), highlight=False)
        except Exception:
            self.handleError(record)


class _LogFormat(logging.Formatter):
    """`-v`: the message, and `warning:`/`error:` before the records that are one. `-vv`:
    level and logger name too, for debugging."""

    def __init__(self, *, detailed: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s" if detailed else "%(message)s")
        self.detailed = detailed

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if not self.detailed and record.levelno >= logging.WARNING:
            text = f"{record.levelname.lower()}: {text}"
        return text


class _Threshold(logging.Filter):
    """Records of sitescout's loggers from `own` up; other libraries' from `others` up."""

    def __init__(self, *, own: int, others: int) -> None:
        super().__init__()
        self.own = own
        self.others = others

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        mine = name == "sitescout" or name.startswith("sitescout.")
        return record.levelno >= (self.own if mine else self.others)


# -- output --------------------------------------------------------------------------------


def print_json(data: object, *, stderr: bool = False) -> None:
    """One indented JSON document: a command's answer on stdout, or a summary on stderr when
    stdout carries the data."""
    text = json.dumps(data, indent=2)
    if stderr:
        err.out(text, highlight=False)
    else:
        sys.stdout.write(text + "\n")


def report_summary(report: WalkReport) -> dict[str, Any]:
    return {
        "source": report.source,
        "source_url": report.source_url,
        "sitemap_spellings": report.sitemap_spellings,
        "documents": len(report.documents),
        "urls": report.urls,
        "alternates": report.alternates,
        "duplicates": report.duplicates,
        "bytes": report.bytes,
        "errors": [
            {"url": d.url, "status": d.status, "error": d.error, "error_class": d.error_class}
            for d in report.errors
        ],
        "malformed": report.malformed_count,
        "malformed_examples": [
            {"raw": m.raw, "reason": m.reason, "sitemap": m.sitemap} for m in report.malformed[:20]
        ],
        "warnings": [*RUN_WARNINGS, *report.warnings],
        "notes": report.notes[:50],
        "budgets_hit": report.budgets_hit,
        "skipped_sitemaps": len(report.skipped_sitemaps),
        "filtered_pages": report.filtered_pages,
        "partial": report.partial,
        "partial_reasons": report.partial_reasons,
        "elapsed": round(report.elapsed, 3),
    } | ({} if report.llms is None else {"llms": report.llms.as_dict()})


ERRORS_SHOWN = 10


def print_summary(report: WalkReport, *, as_json: bool, quiet: bool) -> None:
    """The walk's summary on stderr: warnings, one line of counts, failed documents, why the
    result is partial. `as_json`: the summary as JSON instead (also with `quiet`, which asked
    for it). `quiet`: only errors (`print_errors`)."""
    if as_json:
        print_json(report_summary(report), stderr=True)
        return
    if quiet:
        print_errors(report)
        return
    for warning in [*RUN_WARNINGS, *report.warnings]:
        err.print(f"[yellow]warning:[/] {warning}", markup=True)
    source = _source_of(report)
    errors = len(report.errors)
    err.print(
        f"{report.urls + report.alternates:,} URLs ({report.alternates:,} alternates) "
        f"from {len(report.documents)} documents via {source}; {errors} errors, "
        f"{report.malformed_count} malformed entries; {report.elapsed:.2f} s",
        markup=False,
    )
    for spelling in report.sitemap_spellings:
        err.print(f'  robots.txt: sitemaps also read from "{spelling}:" lines', markup=False)
    for doc in report.errors[:ERRORS_SHOWN]:
        err.print(f"  error: {doc.url}: {doc.error}", markup=False)
    if report.partial:
        err.print("partial result: " + "; ".join(report.partial_reasons), markup=False)


def print_errors(report: WalkReport) -> None:
    """What `-q` still says about a walk: its failed documents, and one closing line when it
    gave no URL (the run failed). Warnings (a budget reached, a narrow base path) are not
    errors: the exit code still tells a partial result (1) from a complete one (0)."""
    for doc in report.errors[:ERRORS_SHOWN]:
        err.print(f"error: {doc.url}: {doc.error}", markup=False)
    more = len(report.errors) - ERRORS_SHOWN
    if more > 0:
        err.print(f"error: {more:,} more failed documents", markup=False)
    if report.urls + report.alternates == 0:
        source = _source_of(report)
        err.print(
            "error: no URLs found" + ("" if source == "none" else f" (via {source})"), markup=False
        )


def _source_of(report: WalkReport) -> str:
    source = report.source or "none"
    return source if report.source_url is None else f"{source} {report.source_url}"


class Tally:
    """The entries a command has passed on (written, or counted into groups).

    The walk counts an entry when it finds it; after Ctrl-C some of those were still queued
    inside the walk and never reached the command, so the summary takes its counts from here.
    """

    def __init__(self) -> None:
        self.urls = 0
        self.alternates = 0

    @property
    def total(self) -> int:
        return self.urls + self.alternates

    def add(self, batch: list[Entry] | Batch) -> None:
        if isinstance(batch, Batch):
            pages = batch.pages()
        else:
            pages = sum(1 for e in batch if e.alternate_of is None)
        self.urls += pages
        self.alternates += len(batch) - pages

    def settle(self, report: WalkReport) -> None:
        """Make `report` count what was passed on, noting what the walk found beyond it."""
        dropped = report.urls + report.alternates - self.total
        if dropped > 0:
            report.notes.append(f"{dropped:,} URLs found but not passed on before the interruption")
        report.urls, report.alternates = self.urls, self.alternates


def exit_code(report: WalkReport) -> int:
    """3 when the walk failed outright or a complete walk gave no URL (an empty sitemap, a base
    path or a source that matched nothing); 1 for a partial result, whose missing part may hold
    what was looked for (a budget, failed documents, Ctrl-C); 0 otherwise."""
    if report.found_nothing:
        return EXIT_NOTHING
    if report.partial:
        return EXIT_PARTIAL
    return EXIT_OK if report.urls + report.alternates else EXIT_NOTHING


def version_callback(value: bool) -> None:
    if value:
        print(f"sitescout {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """sitescout — site inventories from sitemaps, safely, at any size."""


def main() -> None:
    app()


class WalkProgress:
    """Documents, URLs and bytes on stderr while walking — only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and err.is_terminal
        self._status: Any = None
        self._last = 0.0

    def __enter__(self) -> WalkProgress:
        if self.enabled:
            self._status = err.status("walking sitemaps…")
            self._status.__enter__()
        return self

    def update(self, report: WalkReport) -> None:
        now = time.monotonic()
        if self._status is None or now - self._last < 0.1:
            return
        self._last = now
        self._status.update(
            f"{len(report.documents)} documents · {report.urls + report.alternates:,} URLs · "
            f"{report.bytes / 1048576:,.1f} MiB"
        )

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)

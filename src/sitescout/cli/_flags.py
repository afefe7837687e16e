"""The options the commands share, declared once: what to walk and how far (`WalkFlags`),
how to fetch (`FetchFlags`: headers, cookies, credentials, proxy, TLS, rate), the filters, and
the `WalkOptions` they make (`inventory_options`). Each value is checked as the command line is
read, so a bad one is a usage error naming its flag (exit 2) before any request."""

from __future__ import annotations

import functools
import getpass
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer

from .._budget import Budgets
from .._cookies import Cookie, parse_cookie, parse_cookies_txt
from .._core import UrlFilter
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
from .._since import parse_since
from .._walk import MAX_CONCURRENCY, WalkOptions
from ._app import (
    EXIT_USAGE,
    err,
)

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
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state",
        metavar="DIR",
        help="Keep each sitemap's bytes and validators in DIR: the next walk with the same DIR"
        " asks conditionally and reads unchanged sitemaps from it (batch: one per site).",
    ),
]
TrustLastmod = Annotated[
    bool,
    typer.Option(
        "--trust-lastmod",
        help="With --state: read a child sitemap whose index lastmod did not move from the"
        " state, without a request.",
    ),
]


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


# -- fetch control: headers, cookies, credentials, proxy, TLS, rate ----------------------------


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
    state: StateDir = None
    trust_lastmod: TrustLastmod = False

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
        state=flags.state,
        trust_lastmod=flags.trust_lastmod,
        **flags.filters(),
    )


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

"""How every request of a walk is made: `FetchConfig`, its checks, and what follows from it.

Fetch control (`FetchConfig`): the user's headers and Basic auth go to the start origin only and
cookies where their domain and path send them (`_cookies`), decided per request by the `Fetcher`,
so a redirect to another origin carries none of them. `--proxy` and, with `trust_env`, the
environment's proxies (`EnvProxies`) route requests through `guard.RoutedTransport` (the guard
still checks each target; it cannot pin the proxy's connection). `rate` spaces request starts per
host through `pace.RATE_CLOCK`.

Everything here is settled before the first request: the configuration is checked when it is
made (a `UsageError` names what is wrong), and the TLS context (`ssl_context_for`) and the
environment's proxies (`EnvProxies`) are read from it and the environment. Nothing here opens a
connection.
"""

from __future__ import annotations

import functools
import importlib.util
import ipaddress
import math
import os
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlsplit

import httpx

from .. import __about__
from .._cookies import Cookie, parse_cookie
from .._errors import UsageError

DEFAULT_USER_AGENT = f"sitescout/{__about__.__version__} (+https://pypi.org/project/sitescout/)"
MiB = 1 << 20


# Headers a user may not set: sitescout owns them (`--user-agent` sets the User-Agent; cookies
# and proxy credentials have options of their own), or they describe the message itself.
_OWN_HEADERS = frozenset(
    (
        "user-agent",
        "cookie",
        "proxy-authorization",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "accept-encoding",
        "te",
        "upgrade",
    )
)
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")


# Documents in flight per host where the caller runs no concurrency of its own.
DEFAULT_PER_HOST = 8


@dataclass(frozen=True, slots=True, repr=False)
class FetchConfig:
    """How every request of a walk is made.

    `headers`, `auth` (Basic: user, password) and `cookies` are secrets: the headers and the
    credentials go only to the walk's start origin (scheme, host and port), cookies only where
    their own domain and path send them (one without a domain: the start host), never across a
    redirect to another origin; `repr` masks them, and the proxy's password. `proxy`: every
    request through it (`http://`, `https://`, `socks5://` with `httpx[socks]`). `trust_env`:
    `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY`, `SSL_CERT_FILE`/`SSL_CERT_DIR` and
    `.netrc` (for the start origin) as curl reads them. `rate`: at most this many request
    starts per second per host (fractions allowed).
    """

    user_agent: str = DEFAULT_USER_AGENT
    connect_timeout: float = 8.0
    timeout: float = 30.0  # total per document: a trickling server cannot hang a walk
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5
    retry_after_cap: float = 30.0
    max_document_bytes: int = 50 * MiB  # decoded; beyond it a document is cut (§3)
    # Documents in flight per host. None: as many as the caller runs at once (the `concurrency`
    # of a walk, a link crawl, extract's pages), `DEFAULT_PER_HOST` for reads that set none of
    # their own (discovery, scope's samples).
    per_host: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    cookies: tuple[Cookie, ...] = ()
    auth: tuple[str, str] | None = None
    proxy: str | None = None
    trust_env: bool = False
    ca_bundle: str | None = None
    insecure: bool = False
    rate: float | None = None

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "timeout"):
            _check_number(name, getattr(self, name), low=0.0, low_allowed=False)
        for name in ("backoff", "retry_after_cap"):
            _check_number(name, getattr(self, name), low=0.0, low_allowed=True)
        for name, least in (
            ("retries", 0),
            ("max_redirects", 0),
            ("max_document_bytes", 1),
            ("per_host", 1),
        ):
            value = getattr(self, name)
            if name == "per_host" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise UsageError(
                    f"{name} must be a whole number of at least {least}, got {value!r}"
                )
        agent = self.user_agent
        if not isinstance(agent, str) or not agent.strip() or "\r" in agent or "\n" in agent:
            raise UsageError(f"user_agent must be one non-empty line, got {agent!r}")
        object.__setattr__(self, "headers", _checked_headers(self.headers))
        object.__setattr__(self, "cookies", _checked_cookies(self.cookies))
        if self.auth is not None:
            auth = tuple(self.auth) if isinstance(self.auth, list | tuple) else None
            if auth is None or len(auth) != 2 or not all(isinstance(a, str) for a in auth):
                raise UsageError("auth must be a (user, password) pair of strings")
            if ":" in auth[0] or any(has_control(a) for a in auth):
                raise UsageError("auth: the user may not hold ':' nor either a control character")
            object.__setattr__(self, "auth", auth)
            if any(name.lower() == "authorization" for name, _ in self.headers):
                raise UsageError("auth and an Authorization header cannot be combined")
        if self.proxy is not None:
            problem = proxy_problem(self.proxy)
            if problem is not None:
                raise UsageError(f"proxy {mask_url(str(self.proxy))}: {problem}")
        for name in ("trust_env", "insecure"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        bundle = self.ca_bundle
        if bundle is not None and (not isinstance(bundle, str) or not os.path.isfile(bundle)):
            raise UsageError(f"ca_bundle: no such file: {self.ca_bundle!r}")
        if self.rate is not None:
            rate = self.rate
            ok = isinstance(rate, int | float) and not isinstance(rate, bool)
            if not ok or not math.isfinite(rate) or rate <= 0:
                raise UsageError(
                    f"rate must be a finite number of requests per second, more than zero; "
                    f"got {rate!r}"
                )

    def per_host_for(self, concurrency: int) -> int:
        """Documents in flight per host for a caller that runs `concurrency` at once: that many,
        or `per_host` when it is set and lower."""
        return concurrency if self.per_host is None else min(concurrency, self.per_host)

    def for_concurrency(self, concurrency: int) -> FetchConfig:
        """This config for a caller that runs `concurrency` documents at once, on one host as on
        many: its limit per host `per_host_for(concurrency)`."""
        return replace(self, per_host=self.per_host_for(concurrency))

    @property
    def host_limit(self) -> int:
        """Documents in flight per host: `per_host`, or `DEFAULT_PER_HOST` when it is unset."""
        return self.per_host or DEFAULT_PER_HOST

    def __repr__(self) -> str:
        shown: list[str] = []
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name == "headers":
                value = tuple((name, "***") for name, _ in value)
            elif spec.name == "auth" and value is not None:
                value = (value[0], "***")
            elif spec.name == "proxy" and value is not None:
                value = mask_url(value)
            shown.append(f"{spec.name}={value!r}")  # cookies mask their own values
        return f"FetchConfig({', '.join(shown)})"


def render_problem(config: FetchConfig) -> str | None:
    """Why `--render` cannot run with `config`, or None: the browser's own requests would not
    go through the proxy (they are sent over the guard's direct, pinned connections)."""
    if config.proxy is not None or (config.trust_env and EnvProxies.read()):
        return (
            "--render cannot be combined with a proxy yet: the browser's requests would bypass it"
        )
    return None


def _checked_cookies(cookies: object) -> tuple[Cookie, ...]:
    """`cookies` (`Cookie`s, or `name=value` strings for the start host) as `Cookie`s."""
    wrong = "cookies must be a sequence of Cookie objects or 'name=value' strings"
    if isinstance(cookies, str | bytes) or not isinstance(cookies, Iterable):
        raise UsageError(wrong)
    out: list[Cookie] = []
    for cookie in cookies:
        if isinstance(cookie, str):
            try:
                cookie = parse_cookie(cookie)
            except ValueError as exc:
                raise UsageError(f"cookies: {exc}") from None
        if not isinstance(cookie, Cookie):
            raise UsageError(wrong)
        out.append(cookie)
    return tuple(out)


def _checked_headers(headers: object) -> tuple[tuple[str, str], ...]:
    """`headers` (a mapping or (name, value) pairs) as pairs; UsageError naming what is wrong."""
    if isinstance(headers, Mapping):
        pairs = list(headers.items())
    elif isinstance(headers, str | bytes) or not isinstance(headers, Iterable):
        raise UsageError("headers must be a mapping or a sequence of (name, value) pairs")
    else:
        pairs = list(headers)
    out: list[tuple[str, str]] = []
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise UsageError("headers must be a mapping or a sequence of (name, value) pairs")
        name, value = pair
        if not isinstance(name, str) or not name or not set(name) <= _TOKEN:
            raise UsageError(f"headers: not a header name: {name!r}")
        if name.lower() in _OWN_HEADERS:
            hint = " (use user_agent / --user-agent)" if name.lower() == "user-agent" else ""
            hint = " (use cookies / --cookie)" if name.lower() == "cookie" else hint
            raise UsageError(f"headers: sitescout sets {name} itself{hint}")
        if not isinstance(value, str) or has_control(value.replace("\t", " ")):
            raise UsageError(f"headers: the value of {name} must be one line of text")
        out.append((name, value.strip()))
    return tuple(out)


def mask_url(url: str) -> str:
    """`url` with the password of its user info replaced by `****`."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<an unparseable URL>"
    if password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:****@{host}").geturl()


def proxy_problem(proxy: object) -> str | None:
    """What is wrong with a proxy URL, or None when it can be used."""
    if not isinstance(proxy, str):
        return "must be a URL"
    try:
        parts = urlsplit(proxy)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in PROXY_SCHEMES:
        return f"unknown proxy scheme {parts.scheme or 'none'!r} (use http, https or socks5)"
    if not parts.hostname:
        return "no host"
    if parts.scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        return "a socks5 proxy needs the socksio package: pip install 'httpx[socks]'"
    return None


def _check_number(name: str, value: object, *, low: float, low_allowed: bool) -> None:
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value >= low if low_allowed else value > low)
    )
    if not ok:
        bound = "zero or more" if low_allowed else "more than zero"
        raise UsageError(f"{name} must be a finite number of seconds, {bound}; got {value!r}")


def has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or c == "\x7f" for c in text)


# -- TLS and proxies ---------------------------------------------------------------------------


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context per process: loading the CA bundle costs ~35 ms of CPU, which every
    walk (every site of a batch) paid again. A context is safe to share between clients."""
    return httpx.create_ssl_context(trust_env=False)


@functools.cache
def _ca_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile, capath=capath)


def ssl_context_for(config: FetchConfig) -> ssl.SSLContext:
    """The TLS context `config` asks for: `insecure` verifies nothing, `ca_bundle` trusts that
    file only, `trust_env` reads `SSL_CERT_FILE`/`SSL_CERT_DIR`; else the shared default.
    UsageError when the CA file cannot be loaded."""
    return own_ssl_context(config) or shared_ssl_context()


def own_ssl_context(config: FetchConfig) -> ssl.SSLContext | None:
    """`ssl_context_for`, or None where that is the shared default (made when first needed)."""
    if config.insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    cafile, capath = config.ca_bundle, None
    if cafile is None and config.trust_env:
        env_file, env_dir = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        cafile = env_file if env_file and os.path.isfile(env_file) else None
        capath = env_dir if env_dir and os.path.isdir(env_dir) else None
    if cafile is None and capath is None:
        return None
    try:
        return _ca_context(cafile, capath)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot load the CA certificates of {cafile or capath}: {exc}") from None


@dataclass(frozen=True, slots=True)
class EnvProxies:
    """The proxy settings of the environment, as curl reads them: `http_proxy`/`HTTP_PROXY`,
    `https_proxy`/`HTTPS_PROXY`, `all_proxy`/`ALL_PROXY` (lower case first) and `no_proxy`/
    `NO_PROXY` (host names, domain suffixes, IP addresses or networks, `*` for all)."""

    http: str | None = None
    https: str | None = None
    any: str | None = None
    no_proxy: tuple[str, ...] = ()

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> EnvProxies:
        env = os.environ if environ is None else environ
        found: dict[str, str | None] = {}
        for key in ("http", "https", "all"):
            name, value = next(
                ((n, env[n]) for n in (f"{key}_proxy", f"{key.upper()}_PROXY") if env.get(n)),
                ("", ""),
            )
            if not value:
                found[key] = None
                continue
            url = value.strip() if "://" in value else f"http://{value.strip()}"
            problem = proxy_problem(url)
            if problem is not None:
                raise UsageError(f"{name}={mask_url(url)}: {problem}")
            found[key] = url
        raw = env.get("no_proxy") or env.get("NO_PROXY") or ""
        skip = tuple(p.strip().lower().lstrip(".") for p in raw.split(",") if p.strip())
        return cls(found["http"], found["https"], found["all"], skip)

    def __bool__(self) -> bool:
        return bool(self.http or self.https or self.any)

    def for_url(self, url: str) -> str | None:
        parts = urlsplit(url)
        proxy = (self.https if parts.scheme == "https" else self.http) or self.any
        if proxy is None or self._bypassed(parts.hostname or "", parts.port):
            return None
        return proxy

    def _bypassed(self, host: str, port: int | None) -> bool:
        host = host.lower()
        for entry in self.no_proxy:
            if entry == "*":
                return True
            name, _, entry_port = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
            if entry_port and str(port) != entry_port:
                continue
            try:
                if ipaddress.ip_address(host) in ipaddress.ip_network(name.strip("[]"), False):
                    return True
                continue
            except ValueError:
                pass
            if host == name or host.endswith("." + name):
                return True
        return False


def _has_port(entry: str) -> bool:
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (head.endswith("]") or ":" not in head)

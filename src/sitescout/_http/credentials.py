"""Which of the user's headers and credentials one request carries.

The configured headers and Basic auth (from `FetchConfig.auth`, else `.netrc` when `trust_env`
asks for the environment) belong to the start origin, the walk's own: a request anywhere else,
a redirect to another origin included, carries none of them. Cookies go where their own domain
and path rules send them (`_cookies`). Decided per request, from the URL of that request.
"""

from __future__ import annotations

import base64
import logging
import netrc
import os
from urllib.parse import urlsplit

from .._cookies import cookie_header
from .._urls import is_http_url
from .config import FetchConfig
from .urls import full_origin

log = logging.getLogger(__package__)  # "sitescout._http": the name its records have always borne


def netrc_auth(host: str) -> tuple[str, str] | None:
    """The login and password `.netrc` (or `$NETRC`) holds for `host`, or None."""
    path = os.environ.get("NETRC") or os.path.join(os.path.expanduser("~"), ".netrc")
    if not os.path.isfile(path):
        return None
    try:
        found = netrc.netrc(path).authenticators(host)
    except netrc.NetrcParseError as exc:
        log.warning("cannot read %s (line %s); no credentials from it", path, exc.lineno)
        return None
    except OSError as exc:
        log.warning("cannot read %s: %s", path, exc.strerror or type(exc).__name__)
        return None
    if found is None or not found[0]:
        return None
    return found[0], found[2] or ""


class Credentials:
    """The start origin of a walk and the headers a request to a given URL may carry.

    `start` is the walk's start URL; None until the first http(s) URL is fetched, which then
    becomes it. The config is passed per request, not kept: a crawl swaps in another after the
    fetcher has been entered (`Pacer.config`), and each request reads the one in force.
    """

    def __init__(self, start: str | None) -> None:
        self.start = start
        # The start origin and its headers, built on first use: `.netrc` is read once, not per
        # request; rebuilt if the start moves to another origin.
        self._home: tuple[str, dict[str, str]] | None = None

    def adopt(self, url: str) -> None:
        """Take http(s) `url` as the start when there is none yet, or the start is not http(s)
        (a walk rooted on a file: its first http(s) document is the origin credentials go to)."""
        if self.start is None or not is_http_url(self.start):
            self.start = url

    def headers_for(self, url: str, config: FetchConfig) -> dict[str, str]:
        """The user's headers and credentials a request to `url` carries: headers and Basic
        auth at the start origin only; cookies where their own rules send them."""
        out: dict[str, str] = {}
        start = self.start
        if start is not None and (config.headers or config.auth or config.trust_env):
            home = full_origin(start)
            if self._home is None or self._home[0] != home:
                self._home = (home, self._start_headers(start, config))
            if full_origin(url) == self._home[0]:
                out.update(self._home[1])
        if config.cookies:
            host = urlsplit(start).hostname if start is not None else None
            cookie = cookie_header(config.cookies, url, host)
            if cookie is not None:
                out["Cookie"] = cookie
        return out

    def _start_headers(self, start: str, config: FetchConfig) -> dict[str, str]:
        out = dict(config.headers)
        auth = config.auth
        if auth is None and config.trust_env:
            auth = netrc_auth(urlsplit(start).hostname or "")
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            out["Authorization"] = f"Basic {token}"
        return out

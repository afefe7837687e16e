"""A command's site argument, read the way curl and browsers read one (`_urls.assume_https`)."""

from __future__ import annotations

from .._urls import assume_https
from ._app import err


def site_argument(arg: str, *, quiet: bool) -> str:
    """`arg` as the URL to walk: a bare host (`example.com`, `host:port`, `host/path`) means its
    https site, and stderr says so once (not under `quiet`). Anything else is returned as
    given, for the walk's own check to accept or refuse with its usual message."""
    url, assumed = assume_https(arg)
    if assumed and not quiet:
        err.print(f"note: no scheme given: using {url}", markup=False)
    return url

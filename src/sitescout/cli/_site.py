"""A command's site argument, read the way curl and browsers read one (`_urls.assume_https`),
or a sitemap you already have: a path on disk, `-` for stdin, a `file://` URL."""

from __future__ import annotations

from pathlib import Path

import typer

from .._local import STDIN_URL
from .._urls import assume_https, is_http_url
from ._app import EXIT_USAGE, err


def site_argument(arg: str, *, quiet: bool, files: bool = False) -> str:
    """`arg` as the URL to walk: a bare host (`example.com`, `host:port`, `host/path`) means its
    https site, and stderr says so once (not under `quiet`); `-` is stdin, read as one sitemap
    document; an existing path (or one that cannot be a host, such as `./sitemap.xml`) is that
    file, as a `file://` URL (these three only for a command that reads `files`). Anything else
    is returned as given, for the walk's own check to accept or refuse with its usual message."""
    if not files:
        url, assumed = assume_https(arg)
        if assumed and not quiet:
            err.print(f"note: no scheme given: using {url}", markup=False)
        return url
    if arg == "-":
        return STDIN_URL
    if is_http_url(arg) or "://" in arg:
        return arg
    path = Path(arg)
    if path.exists():  # a file named `example.com` wins over the bare host
        return path.resolve().as_uri()
    url, assumed = assume_https(arg)
    if assumed:
        if not quiet:
            err.print(f"note: no scheme given: using {url}", markup=False)
        return url
    if _path_like(arg):
        err.print(f"error: no such file: {arg}", markup=False)
        raise typer.Exit(EXIT_USAGE)
    return url


def _path_like(arg: str) -> bool:
    """Whether `arg`, neither a file nor a host, was meant as a path: it holds a `/` or starts
    with `.` or `~`, or names a sitemap file (`sitemap.xml`, `urls.txt.gz`)."""
    if arg.lower().startswith(("http:", "https:")) or any(c.isspace() for c in arg):
        return False
    name = arg.rsplit("/", 1)[-1].lower()
    return "/" in arg or arg.startswith((".", "~")) or name.endswith(_FILE_SUFFIXES)


_FILE_SUFFIXES = (".xml", ".gz", ".txt", ".rss", ".atom")


def sitemap_option(value: str | None, *, quiet: bool) -> str | None:
    """`--sitemap` read as the site argument of a command that reads files: a URL, a bare host,
    a sitemap file on disk, or `-` for stdin."""
    return None if value is None else site_argument(value, quiet=quiet, files=True)

"""Documents read from disk instead of the network: `file://` URLs and `--map` folders.

`Fetcher` asks `LocalFiles.target(url)` before any request: a `file://` URL, or an http(s) URL
under a mapped prefix, names a file, and `read_chunks` streams it in the same pieces a network
body arrives in. The bytes then take the network's own path: the same decoder (gzip by magic
bytes, the decoded-size cap), the same sink, the same parser. Nothing here decodes or parses.

Local files are untrusted input like any response. Only regular files are read (stdin, the
document a walk named with `-`, may be a pipe); a directory, a FIFO, a device or a socket is a
recorded error. A mapped path never leaves its folder: `..` segments (percent-encoded or not),
backslashes and NUL are refused by `confine` before the disk is asked, and a symlink that
points outside is refused after it is resolved. Reads never block the event loop: a pipe is
read non-blocking, a file in bounded pieces with a turn of the loop between them.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from ._errors import UsageError

READ_STEP = 256 * 1024  # bytes per read: one network read's worth
STDIN_URL = "file:///dev/stdin"  # how the command line hands `-` to the walk


class LocalRefused(Exception):
    """A local document that may not be read: its message says why, in plain words."""


class LocalMissing(LocalRefused):
    """No file at that path: answered like a 404."""


def is_file_url(url: object) -> bool:
    return isinstance(url, str) and url[:7].lower() == "file://"


def confine(relative: str) -> str:
    """`relative`, a URL path below a mapped prefix, as a path below its folder.

    Pure: percent-decoding first, then each segment is checked, so `%2e%2e` is `..`. Raises
    `LocalRefused` for a `..` segment, a backslash, a NUL or a path that is absolute once
    decoded. An empty path, or one ending in `/`, names the folder's `index.html`.
    """
    decoded = unquote(relative.split("?", 1)[0].split("#", 1)[0])
    if "\x00" in decoded or "\\" in decoded:
        raise LocalRefused("the path holds a backslash or a NUL")
    if decoded.startswith("/"):
        raise LocalRefused("the path is absolute")
    parts = decoded.split("/")
    if any(part == ".." for part in parts):
        raise LocalRefused("the path leaves its folder (..)")
    kept = [part for part in parts if part not in ("", ".")]
    if not kept or decoded.endswith("/"):
        kept.append("index.html")
    return "/".join(kept)


def file_path(url: str) -> str:
    """The filesystem path of a `file://` URL (no host, or `localhost`)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise LocalRefused(f"a file URL on another host ({parts.netloc}) cannot be read")
    return url2pathname(parts.path)


def local_child(parent: str, raw: str) -> str | None:
    """A relative `<loc>` of a local sitemap index as a `file://` URL beside or below its
    parent's folder; None when it cannot be one (another scheme, a path leaving the folder)."""
    value = raw.strip()
    if not value or "://" in value or value.startswith(("/", "\\")) or ":" in value.split("/")[0]:
        return None
    try:
        confine(value)
    except LocalRefused:
        return None
    return urljoin(parent, value)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True, slots=True)
class LocalTarget:
    """A file a URL names; `jail`: the folder its real path must stay in (None: any)."""

    url: str
    path: str
    jail: str | None
    stream_ok: bool = False  # a pipe may be read (stdin)


def check_maps(maps: object) -> tuple[tuple[str, str], ...]:
    """`maps` as (URL prefix, folder) pairs; UsageError naming what is wrong."""
    if isinstance(maps, str | bytes) or not isinstance(maps, tuple | list):
        raise UsageError("maps must be a sequence of (URL prefix, folder) pairs")
    out: list[tuple[str, str]] = []
    for pair in maps:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise UsageError("maps must be a sequence of (URL prefix, folder) pairs")
        prefix, folder = pair
        if not isinstance(prefix, str) or not prefix[:8].lower().startswith(
            ("http://", "https://")
        ):
            raise UsageError(f"maps: the prefix must be an http(s) URL, got {prefix!r}")
        parts = urlsplit(prefix)
        if not parts.hostname:
            raise UsageError(f"maps: the prefix has no host: {prefix!r}")
        if not parts.path:  # `https://example.com` must not cover `https://example.com.evil/`
            prefix += "/"
        if not isinstance(folder, str | os.PathLike):
            raise UsageError(f"maps: the folder must be a path, got {folder!r}")
        folder = os.fspath(folder)
        if not isinstance(folder, str) or not os.path.isdir(folder):
            raise UsageError(f"maps: no such folder: {folder!r}")
        out.append((prefix, folder))
    return tuple(out)


class LocalFiles:
    """Which URLs are read from disk, for one walk.

    `maps`: (URL prefix, folder) pairs, the longest matching prefix wins. `root`: the `file://`
    URL the walk started from; other `file://` URLs (its children) must stay in its folder.
    """

    def __init__(self, maps: tuple[tuple[str, str], ...] = (), root: str | None = None) -> None:
        self.maps = sorted(
            ((prefix, os.path.realpath(folder)) for prefix, folder in maps),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )
        self.root = root
        self._root_folder: str | None = None
        if root is not None and is_file_url(root) and root != STDIN_URL:
            self._root_folder = os.path.dirname(os.path.realpath(file_path(root)))

    def __bool__(self) -> bool:
        return bool(self.maps) or self.root is not None

    def handles(self, url: str) -> bool:
        """Whether `url` is read from disk (a file URL, or under a mapped prefix)."""
        return is_file_url(url) or any(url.startswith(prefix) for prefix, _ in self.maps)

    def target(self, url: str) -> LocalTarget | None:
        """The file `url` names, or None when it is fetched from the network. Raises
        `LocalRefused` when it names one that may not be read."""
        if is_file_url(url):
            path = file_path(url)
            if url == STDIN_URL:
                return LocalTarget(url, path, None, stream_ok=True)
            if url == self.root:
                return LocalTarget(url, path, None)
            return LocalTarget(url, path, self._root_folder or os.path.dirname(path))
        for prefix, folder in self.maps:
            if url.startswith(prefix):
                relative = confine(url[len(prefix) :].lstrip("/"))
                return LocalTarget(url, os.path.join(folder, *relative.split("/")), folder)
        return None


def _describe(exc: OSError, path: str) -> str:
    if exc.errno == errno.ENOENT:
        return f"no such file: {path}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied: {path}"
    if exc.errno == errno.EISDIR:
        return f"a directory, not a file: {path}"
    return f"cannot read {path}: {exc.strerror or exc}"


def open_target(target: LocalTarget) -> int:
    """An open descriptor on `target`'s file, checked; `LocalMissing` when there is none,
    `LocalRefused` when it may not be read."""
    path = target.path
    if target.jail is not None:
        real = os.path.realpath(path)
        if not _inside(real, target.jail):
            raise LocalRefused(f"{path} leaves its folder {target.jail} (a symlink points out)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise LocalMissing(f"no such file: {path}") from None
    except OSError as exc:
        raise LocalRefused(_describe(exc, path)) from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise LocalRefused(f"a directory, not a file: {path}")
        if stat.S_ISREG(mode):
            return fd
        if target.stream_ok and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return fd
        if target.stream_ok and os.isatty(fd):
            raise LocalRefused("stdin is a terminal: pipe a sitemap into it (… | sitescout urls -)")
        raise LocalRefused(f"not a regular file (a FIFO, device or socket): {path}")
    except BaseException:
        os.close(fd)
        raise


async def read_chunks(fd: int, path: str) -> AsyncGenerator[bytes, None]:
    """The file's bytes in pieces of at most `READ_STEP` (the caller closes `fd`). A pipe is
    waited on through the event loop, never by blocking it; `LocalRefused` for a read error."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data = os.read(fd, READ_STEP)
        except BlockingIOError:
            await _readable(loop, fd)
            continue
        except OSError as exc:
            raise LocalRefused(_describe(exc, path)) from None
        if not data:
            return
        yield data
        await asyncio.sleep(0)  # Ctrl-C, timeouts and the other documents get their turn


async def _readable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)

"""The project directory of an extraction run (§12): crawl log, page state and page records.

Every file is written whole to a temporary sibling and renamed over the old one, so a reader (or an
interrupted run) only ever sees a complete file. The crawl log is append-only: a run adds one entry
to `runs[]` and never rewrites an earlier one.

State is flushed at most once a second while pages complete, and always at the end of a run (also
after Ctrl-C): rewriting it after each of thousands of pages would cost time quadratic in pages.

The files on disk are untrusted input: anyone (or any tool) may have edited them. They are checked
against the shipped JSON Schemas before anything in them is used, a slug becomes a file name only
when it is in the slug alphabet, and no write follows a symbolic link out of the project. One
advisory lock per directory keeps two runs from interleaving their rewrites of the same files.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import logging
import math
import os
import re
import secrets
import stat
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .__about__ import __version__
from ._errors import UsageError

if TYPE_CHECKING:
    # Imported when a project file is first checked: the validator costs 60 ms to import, which
    # every command that never opens a project would pay at start-up.
    import jsonschema_rs

log = logging.getLogger(__name__)

CRAWL_LOG = "_crawl-log.json"
STATE = "state.json"
PAGES = "pages"
LOCK = ".extract.lock"
SCHEMA_VERSION = 1

# A slug's lifecycle: chosen by selection, then fetched into a page record or failed.
DISCOVERED, EXTRACTED, FAILED = "discovered", "extracted", "failed"

# An error message quotes at most this much of a bad value: a whole bad `runs` could be megabytes.
_QUOTE_MAX = 120
# A `\uD800`-`\uDFFF` escape: the only way JSON text yields a string that cannot be written back.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class ProjectError(UsageError):
    """The project directory cannot be used for this run: another origin, a damaged or
    hand-edited file, a symbolic link out of the project, or another run holding it."""


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped with the package: `crawl-log`, `state` or `page`."""
    text = resources.files("sitescout").joinpath("schemas", f"{name}.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _slug_rule() -> tuple[re.Pattern[str], int]:
    # The state schema is where the slug alphabet is written down; the code reads it from there.
    slug = schema("state")["$defs"]["slug"]
    return re.compile(slug["pattern"]), int(slug["maxLength"])


def is_slug(text: str) -> bool:
    """Whether `text` may name a page file: the slug alphabet, and short enough for a file name.

    A full match, unlike a schema `pattern` in Python, where `$` also matches before a final
    newline.
    """
    pattern, limit = _slug_rule()
    return len(text) <= limit and pattern.fullmatch(text) is not None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- the shipped schemas, checked ------------------------------------------------------------------
#
# The loader checks files against the JSON Schemas in `schemas/`, the one statement of what a valid
# file is, with `jsonschema_rs`: all of Draft 2020-12, in Rust, patterns read as ECMA-262 in a
# linear-time engine, no schema fetched from the network. It takes a few percent of the time
# `json.loads` takes on the same file: 2 ms for a 1.4 MB crawl log (five runs over a 600-URL
# site), 40 ms for a 46 MB one, where the pure-Python `jsonschema` takes 0.4 s and 25 s, which a
# large project would pay at every start. The fuzz tests hold the loader equal to `jsonschema`.


@functools.cache
def _validator(kind: str) -> jsonschema_rs.Validator:
    import jsonschema_rs

    return jsonschema_rs.validator_for(
        schema(kind), offline=True, pattern_options=jsonschema_rs.RegexOptions()
    )


def _kind(value: Any) -> str:
    """A value's JSON type, with a short preview of a scalar, for an error message."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    name = (
        "boolean" if isinstance(value, bool) else "string" if isinstance(value, str) else "number"
    )
    return f"{name} {_quote(repr(value))}"


def _problem(error: jsonschema_rs.ValidationError) -> str:
    """What is wrong, in one short line: the library's own message holds the whole bad value,
    which may be a megabyte of JSON, ahead of what is wrong with it."""
    from jsonschema_rs import ValidationErrorKind as Kind

    value = error.instance
    match error.kind:
        case Kind.Type(types):
            return f"expected {' or '.join(types)}, got {_kind(value)}"
        case Kind.Constant(expected):
            return f"expected one of {[expected]}, got {_kind(value)}"
        case Kind.Enum(options):
            return f"expected one of {options}, got {_kind(value)}"
        case Kind.Required(name):
            return f"{name!r} is a required property"
        case Kind.Pattern(pattern):
            return f"{_quote(repr(value))} does not match {pattern!r}"
        case Kind.MaxLength(limit):
            return f"longer than {limit} characters: {_quote(repr(value))}"
        case Kind.Minimum(limit):
            return f"expected at least {limit}, got {_kind(value)}"
        case Kind.MinItems(limit) if isinstance(value, list):
            return f"expected at least {limit} items, got {len(value)}"
        case Kind.PropertyNames(inner):
            return f"key {_problem(inner)}"
        case Kind.AnyOf(options):
            return "; or ".join(_problem(errors[0]) for errors in options if errors)
    return _quote(error.message)


def _json_path(steps: list[str | int]) -> str:
    """Where in the file, as JSONPath: `$.runs[0]['odd key']`."""
    return "$" + "".join(
        f"[{s}]" if isinstance(s, int) else f".{s}" if s.isidentifier() else f"[{s!r}]"
        for s in steps
    )


# -- reading: every project file is untrusted input ------------------------------------------------


def _quote(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 3] + "..."


def _read_bytes(directory: Path, name: str) -> bytes | None:
    """The bytes of a regular file in the project, None when it is missing.

    A symbolic link is refused rather than followed, and a FIFO or device is refused without
    blocking on it (`O_NONBLOCK`).
    """
    path = directory / name
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ProjectError(f"{path} is a symbolic link; refusing to follow it") from None
        raise ProjectError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ProjectError(f"{path} is not a regular file")
        try:
            return fh.read()
        except OSError as exc:
            raise ProjectError(f"cannot read {path}: {exc.strerror}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    """A JSON number as a float; one too large for a float (`1e400`) would be written back as
    `Infinity`, which is not JSON."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{_quote(text)} is too large a number")
    return value


def load_project_file(directory: Path, name: str, kind: str, origin: str) -> dict[str, Any] | None:
    """Read and validate one project file against the shipped `kind` schema; None when missing.

    Nothing from the file is used before it passes the schema, and the file is never written here.
    A file recorded for another origin is reported as such first: that is the likelier mistake.
    """
    raw = _read_bytes(directory, name)
    if raw is None:
        return None
    path = directory / name
    try:
        data = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ProjectError(f"cannot read {path}: {_quote(exc)}") from None
    if isinstance(data, dict):
        recorded = data.get("origin")
        if isinstance(recorded, str) and recorded != origin:
            raise ProjectError(
                f"{directory} belongs to {recorded}, not {origin}; "
                "pass --out with another directory for this site"
            )
    # Before the schema: the validator takes text only, and a lone surrogate is not text.
    if _SURROGATE_ESCAPE.search(raw) is not None:
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ProjectError(
                f"{path} is not a valid sitescout {kind} file: "
                "it holds a lone UTF-16 surrogate escape"
            ) from None
    validator = _validator(kind)
    from jsonschema_rs import ValidationError

    try:
        validator.validate(data)
    except ValidationError as error:
        raise ProjectError(
            f"{path} is not a valid sitescout {kind} file: {_problem(error)} "
            f"(at {_quote(_json_path(error.instance_path))})"
        ) from None
    except ValueError as exc:  # a bad value nested too deeply (> 255) to report
        raise ProjectError(
            f"{path} is not a valid sitescout {kind} file: a value is nested too deeply ({exc})"
        ) from None
    loaded: dict[str, Any] = data
    return loaded


def _check_slugs(path: Path, slugs: Iterator[str]) -> None:
    for slug in slugs:
        if not is_slug(slug):
            raise ProjectError(
                f"{path} is not a valid sitescout state file: "
                f"{_quote(repr(slug))} is not a slug (at $.pages)"
            )


# -- writing: never through a symbolic link out of the project -------------------------------------


@contextlib.contextmanager
def _opened_dir(path: Path, *, follow: bool = False) -> Iterator[int]:
    """A descriptor of the directory `path` (created if missing), refusing a symbolic link.

    With `follow`, for the project directory itself: the user named it, so a link is theirs.
    """
    with contextlib.suppress(FileExistsError):
        path.mkdir()
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and path.is_symlink():
            raise ProjectError(f"{path} is a symbolic link; refusing to write through it") from None
        if exc.errno == errno.ENOTDIR:
            raise ProjectError(f"{path} exists and is not a directory") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


# How a file is created: fresh (never one that exists), never through a symbolic link.
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (a write may take less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_file_at(dir_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `name` in `dir_fd` so that no reader ever sees a torn file.

    The temporary file is created fresh (`NEW_FILE`), synced, and renamed over `name`; a rename
    replaces a symbolic link at `name` rather than writing through it.
    """
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, NEW_FILE, mode, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _write_json_at(dir_fd: int, name: str, data: Any) -> None:
    """`data` as indented JSON, one trailing newline, written whole (`write_file_at`)."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_file_at(dir_fd, name, text.encode("utf-8"))


# -- one run at a time -----------------------------------------------------------------------------


def lock_directory(directory: Path, name: str = LOCK, what: str = "extract") -> int:
    """Take a directory's advisory lock, or raise at once if another run holds it.

    `flock` belongs to the open file, so the kernel drops it when the holder exits, however it
    exits: a lock file left by a killed run never blocks. The pid written into it only names the
    holder in the message.
    """
    path = directory / name
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ProjectError(f"{path} is a symbolic link; refusing to follow it") from None
        raise ProjectError(f"cannot lock {directory}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        pid = holder if holder.isdigit() else "unknown"
        raise ProjectError(f"another {what} is running in {directory} (pid {pid})") from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


@dataclass(slots=True)
class SlugState:
    url: str
    status: str
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"url": self.url, "status": self.status, "history": self.history}


class Project:
    """One site's project directory. Open it with `Project.open`, which checks the origin."""

    def __init__(self, directory: Path, origin: str, *, clock: Callable[[], float] | None = None):
        self.directory = directory
        self.origin = origin
        self.runs: list[dict[str, Any]] = []
        self.pages: dict[str, SlugState] = {}
        self.run: dict[str, Any] | None = None
        self._clock = clock or time.monotonic
        self._last_flush = 0.0
        self._dirty = False
        self._unlock: Callable[[], None] = lambda: None

    @classmethod
    def open(cls, directory: Path, origin: str) -> Project:
        """Lock and load `directory` (created if missing); refuse it when it is unusable.

        Unusable: recorded for another origin, a file that fails its schema, a symbolic link
        where a project file or `pages/` should be, or another run holding the lock. The caller
        owns the lock until `close()`.
        """
        if directory.exists() and not directory.is_dir():
            raise ProjectError(f"{directory} exists and is not a directory")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ProjectError(f"cannot create {directory}: {exc.strerror}") from None
        project = cls(directory, origin)
        fd = lock_directory(directory)
        # Also released if the project is dropped without close(); the kernel does it at exit.
        project._unlock = weakref.finalize(project, os.close, fd)
        try:
            project._load()
        except BaseException:
            project.close()
            raise
        return project

    def _load(self) -> None:
        pages = self.directory / PAGES
        if pages.is_symlink():
            raise ProjectError(f"{pages} is a symbolic link; refusing to write through it")
        if pages.exists() and not pages.is_dir():
            raise ProjectError(f"{pages} exists and is not a directory")
        crawl_log = load_project_file(self.directory, CRAWL_LOG, "crawl-log", self.origin)
        state = load_project_file(self.directory, STATE, "state", self.origin)
        if crawl_log is not None:
            self.runs = crawl_log["runs"]
        if state is not None:
            _check_slugs(self.directory / STATE, iter(state["pages"]))
            for slug, rec in state["pages"].items():
                self.pages[slug] = SlugState(rec["url"], rec["status"], rec["history"])

    def close(self) -> None:
        """Release the lock; the project is written already. Safe to call more than once."""
        self._unlock()

    # -- lifecycle ---------------------------------------------------------------------------

    def extracted(self, slug: str) -> bool:
        rec = self.pages.get(slug)
        return rec is not None and rec.status == EXTRACTED

    def mark(self, slug: str, url: str, status: str, **detail: Any) -> None:
        """Move `slug` to `status`, keeping its timestamped history."""
        entry = {"status": status, "at": now_iso(), "run": len(self.runs) - 1, **detail}
        rec = self.pages.get(slug)
        if rec is None:
            self.pages[slug] = SlugState(url, status, [entry])
        else:
            rec.url, rec.status = url, status
            rec.history.append(entry)
        self._dirty = True

    def start_run(self, discovery: dict[str, Any]) -> dict[str, Any]:
        """Append a run to the crawl log and write it at once, before any page is fetched."""
        self.run = {
            "_provenance": {
                "writtenBy": "sitescout",
                "writtenAt": now_iso(),
                "version": __version__,
            },
            "discovery": discovery,
            "crawl": {
                "startedAt": now_iso(),
                "finishedAt": None,
                "successes": 0,
                "failures": [],
                "skipped": [],
                "interrupted": False,
            },
        }
        self.runs.append(self.run)
        self.flush()
        return self.run

    def write_page(self, slug: str, record: dict[str, Any]) -> Path:
        if not is_slug(slug):
            raise ProjectError(f"refusing to write a page file for the slug {_quote(repr(slug))}")
        pages = self.directory / PAGES
        with _opened_dir(pages) as dir_fd:
            _write_json_at(dir_fd, f"{slug}.json", record)
        return pages / f"{slug}.json"

    def page_done(self, slug: str, url: str, record: dict[str, Any]) -> None:
        self.write_page(slug, record)
        self.mark(slug, url, EXTRACTED, httpStatus=record.get("status"))
        self._crawl()["successes"] += 1
        self.flush(soon=True)

    def page_failed(self, slug: str, url: str, error_class: str, message: str) -> None:
        at = now_iso()
        self.mark(slug, url, FAILED, errorClass=error_class, message=message)
        self._crawl()["failures"].append(
            {"slug": slug, "url": url, "errorClass": error_class, "message": message, "at": at}
        )
        self.flush(soon=True)

    def page_skipped(self, slug: str) -> None:
        self._crawl()["skipped"].append(slug)

    def finish_run(self, *, interrupted: bool = False) -> None:
        crawl = self._crawl()
        crawl["finishedAt"] = now_iso()
        crawl["interrupted"] = interrupted
        self.flush()

    def _crawl(self) -> dict[str, Any]:
        if self.run is None:
            raise RuntimeError("start_run() first")
        crawl: dict[str, Any] = self.run["crawl"]
        return crawl

    # -- files -------------------------------------------------------------------------------

    def flush(self, *, soon: bool = False) -> None:
        """Write the crawl log and state; with `soon`, only if a second has passed since last."""
        now = self._clock()
        if soon and now - self._last_flush < 1.0:
            self._dirty = True
            return
        self._last_flush = now
        self._dirty = False
        with _opened_dir(self.directory, follow=True) as dir_fd:
            _write_json_at(
                dir_fd,
                CRAWL_LOG,
                {"schemaVersion": SCHEMA_VERSION, "origin": self.origin, "runs": self.runs},
            )
            _write_json_at(
                dir_fd,
                STATE,
                {
                    "schemaVersion": SCHEMA_VERSION,
                    "origin": self.origin,
                    "updatedAt": now_iso(),
                    "pages": {slug: rec.to_dict() for slug, rec in self.pages.items()},
                },
            )
        log.debug(
            "project %s written (%d runs, %d slugs)",
            self.directory,
            len(self.runs),
            len(self.pages),
        )

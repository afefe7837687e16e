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
from typing import Any

from .__about__ import __version__
from ._errors import UsageError

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


# -- the shipped schemas, compiled --------------------------------------------------------------
#
# The loader checks files against the JSON Schemas in `schemas/`, which stay the one statement of
# what a valid file is. They use a small part of JSON Schema; that part is compiled here into plain
# functions, because a general validator spends ~100 µs per page of state.json, which a large
# `--all` project pays at every start. A keyword outside that part is refused when the schema is
# compiled, so a schema edit cannot be silently ignored; the fuzz tests hold the result equal to a
# general validator's.

# (where in the file, what is wrong); `where` is a JSONPath suffix, built only for a failure.
_Problem = tuple[str, str]
_Check = Callable[[Any], _Problem | None]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}
_KEYWORDS = _ANNOTATIONS | {
    "type", "const", "enum", "required", "properties", "additionalProperties", "propertyNames",
    "items", "minItems", "minimum", "pattern", "maxLength", "$ref", "anyOf",
}  # fmt: skip


def _kind(value: Any) -> str:
    """A value's JSON type, with a short preview of a scalar, for an error message."""
    for name in ("null", "boolean", "object", "array", "string"):
        if _TYPES[name](value):
            break
    else:
        name = "number"
    return name if name in ("object", "array", "null") else f"{name} {_quote(repr(value))}"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, `1` is `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return type(a) is type(b) and a == b if isinstance(a, str | list | dict) else a == b


def _key_path(key: str) -> str:
    return f".{key}" if key.isidentifier() else f"[{key!r}]"


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, _Check] = {}

    def ref(self, pointer: str) -> _Check:
        if pointer not in self.refs:
            if not pointer.startswith("#/"):
                raise ValueError(f"only local schema references are supported: {pointer}")
            target: Any = self.root
            for part in pointer[2:].split("/"):
                target = target[part]
            compiled: list[_Check] = []
            self.refs[pointer] = lambda v: compiled[0](v)  # a reference may recur
            compiled.append(self.compile(target))
        return self.refs[pointer]

    def compile(self, schema: dict[str, Any]) -> _Check:
        unknown = set(schema) - _KEYWORDS
        if unknown:
            raise ValueError(f"schema keywords the loader does not implement: {sorted(unknown)}")
        checks: list[_Check] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            checks.append(self._type(schema["type"]))
        if "const" in schema or "enum" in schema:
            checks.append(self._enum(schema))
        if "anyOf" in schema:
            checks.append(self._any_of([self.compile(s) for s in schema["anyOf"]]))
        if {"pattern", "maxLength"} & set(schema):
            checks.append(self._string(schema.get("pattern"), schema.get("maxLength")))
        if "minimum" in schema:
            checks.append(self._minimum(schema["minimum"]))
        if {"items", "minItems"} & set(schema):
            items = self.compile(schema["items"]) if "items" in schema else None
            checks.append(self._array(items, schema.get("minItems", 0)))
        if {"required", "properties", "additionalProperties", "propertyNames"} & set(schema):
            checks.append(self._object(schema))
        if len(checks) == 1:
            return checks[0]

        def all_of(value: Any) -> _Problem | None:
            for check in checks:
                problem = check(value)
                if problem is not None:
                    return problem
            return None

        return all_of

    @staticmethod
    def _type(names: str | list[str]) -> _Check:
        tests = [_TYPES[n] for n in ([names] if isinstance(names, str) else names)]
        wanted = " or ".join([names] if isinstance(names, str) else names)

        def check(value: Any) -> _Problem | None:
            if any(test(value) for test in tests):
                return None
            return "", f"expected {wanted}, got {_kind(value)}"

        return check

    @staticmethod
    def _enum(schema: dict[str, Any]) -> _Check:
        allowed = [schema["const"]] if "const" in schema else list(schema["enum"])

        def check(value: Any) -> _Problem | None:
            if any(_same(value, a) for a in allowed):
                return None
            return "", f"expected one of {allowed}, got {_kind(value)}"

        return check

    @staticmethod
    def _any_of(options: list[_Check]) -> _Check:
        def check(value: Any) -> _Problem | None:
            problems = [option(value) for option in options]
            if any(p is None for p in problems):
                return None
            return "", "; or ".join(p[1] for p in problems if p is not None)

        return check

    @staticmethod
    def _string(pattern: str | None, longest: int | None) -> _Check:
        regex = re.compile(pattern) if pattern is not None else None

        def check(value: Any) -> _Problem | None:
            if not isinstance(value, str):
                return None
            if longest is not None and len(value) > longest:
                return "", f"longer than {longest} characters: {_quote(repr(value))}"
            if regex is not None and regex.search(value) is None:
                return "", f"{_quote(repr(value))} does not match {regex.pattern!r}"
            return None

        return check

    @staticmethod
    def _minimum(least: float) -> _Check:
        def check(value: Any) -> _Problem | None:
            if _TYPES["number"](value) and value < least:
                return "", f"expected at least {least}, got {_kind(value)}"
            return None

        return check

    @staticmethod
    def _array(items: _Check | None, fewest: int) -> _Check:
        def check(value: Any) -> _Problem | None:
            if not isinstance(value, list):
                return None
            if len(value) < fewest:
                return "", f"expected at least {fewest} items, got {len(value)}"
            if items is not None:
                for index, item in enumerate(value):
                    problem = items(item)
                    if problem is not None:
                        return f"[{index}]{problem[0]}", problem[1]
            return None

        return check

    def _object(self, schema: dict[str, Any]) -> _Check:
        required: list[str] = schema.get("required", [])
        properties = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        other = schema.get("additionalProperties")
        if isinstance(other, bool):
            raise ValueError("additionalProperties must be a schema here")
        additional = self.compile(other) if other is not None else None
        names = self.compile(schema["propertyNames"]) if "propertyNames" in schema else None

        def check(value: Any) -> _Problem | None:
            if not isinstance(value, dict):
                return None
            for name in required:
                if name not in value:
                    return "", f"{name!r} is a required property"
            for key, item in value.items():
                if names is not None:
                    problem = names(key)
                    if problem is not None:
                        return problem[0], f"key {problem[1]}"
                sub = properties.get(key, additional)
                if sub is not None:
                    problem = sub(item)
                    if problem is not None:
                        return _key_path(key) + problem[0], problem[1]
            return None

        return check


@functools.cache
def _validator(kind: str) -> _Check:
    document = schema(kind)
    return _Compiler(document).compile(document)


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
        data = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ProjectError(f"cannot read {path}: {_quote(exc)}") from None
    if isinstance(data, dict):
        recorded = data.get("origin")
        if isinstance(recorded, str) and recorded != origin:
            raise ProjectError(
                f"{directory} belongs to {recorded}, not {origin}; "
                "pass --out with another directory for this site"
            )
    problem = _validator(kind)(data)
    if problem is not None:
        where, what = problem
        raise ProjectError(
            f"{path} is not a valid sitescout {kind} file: {what} (at {_quote('$' + where)})"
        )
    if _SURROGATE_ESCAPE.search(raw) is not None:
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ProjectError(
                f"{path} is not a valid sitescout {kind} file: "
                "it holds a lone UTF-16 surrogate escape"
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


def _write_json_at(dir_fd: int, name: str, data: Any) -> None:
    """Write `data` as JSON to `name` in `dir_fd` so that no reader ever sees a torn file.

    The temporary file is created fresh (`O_EXCL`, `O_NOFOLLOW`) and renamed over `name`; a rename
    replaces a symbolic link at `name` rather than writing through it.
    """
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o644, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


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

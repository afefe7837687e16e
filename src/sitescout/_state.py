"""A walk's state between runs (`--state DIR`): each sitemap document's bytes and validators, so
that the next walk asks conditionally and reads what did not change from disk.

The directory holds one generation of state and, while a walk runs, the one it writes::

    DIR/.walk.lock          one walk at a time (`flock`; a killed walk's lock never blocks)
    DIR/current             the name of the generation in force, replaced atomically
    DIR/gen-<hex>/state.json  the site, and per document: URL, final URL, content type,
                            Content-Encoding, ETag, Last-Modified, size and SHA-256 of its body
    DIR/gen-<hex>/<hex>.raw   the document's body as it came over the wire (still compressed)
    DIR/inventory.jsonl     the last complete walk's URLs (`urls --changes-only` writes it and
                            compares the next walk with it; `diff` reads it from DIR)

A walk writes a new generation beside the old one: bodies it downloads are written as they
stream, bodies the server says did not change are hard-linked from the old generation. Only a
walk that ends (not one interrupted) switches `current` to it and removes the old one, so a walk
killed at any point leaves the previous state usable; a generation `current` does not name is
a killed walk's leftover, removed by the next.

What a walk writes here is the user's alone (0600 files in 0700 generations): a sitemap fetched
with credentials may be private. Nothing the user sends (headers, cookies, passwords) is stored.

Everything read back is untrusted: a state that is corrupt, truncated, of another format or of
another site is ignored with one warning (`ignored`), and the walk runs in full. A body is
checked against its size and SHA-256 before it is replayed; a body that fails is fetched again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._http import Conditional, Response
from ._models import RewalkSummary
from ._project import NEW_FILE, ProjectError, lock_directory, write_all, write_file_at
from ._urls import document_key

__all__ = ["INVENTORY", "StoredDocument", "WalkState", "stored_inventory"]

log = logging.getLogger(__name__)

FORMAT = "sitescout-walk-state"
VERSION = 1
LOCK = ".walk.lock"
CURRENT = "current"
INVENTORY = "inventory.jsonl"
STATE_FILE = "state.json"
# A state file larger than this is not a state this tool wrote (a 10M-URL site has a few
# thousand documents; each takes a few hundred bytes).
MAX_STATE_BYTES = 256 * 1024 * 1024
MAX_DOCUMENTS = 1_000_000
_GENERATION = re.compile(r"gen-[0-9a-f]{16}\Z")
_BODY_FILE = re.compile(r"[0-9a-f]{32}\.raw\Z")
_HASH = re.compile(r"[0-9a-f]{64}\Z")
_STEP = 1024 * 1024
_OPEN_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """One sitemap document as a walk stored it."""

    url: str
    final_url: str
    content_type: str
    encoding: str
    etag: str | None
    last_modified: str | None
    size: int
    sha256: str
    file: str
    # The lastmod its sitemap index gave it when it was stored (`trust_lastmod` compares it).
    listed_lastmod: str | None = None

    @property
    def conditional(self) -> Conditional | None:
        """The validators to ask with; None when the server sent none (the body's hash still
        tells an unchanged answer)."""
        if self.etag is None and self.last_modified is None:
            return None
        return Conditional(self.final_url, self.etag, self.last_modified)

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "final_url": self.final_url,
            "content_type": self.content_type,
            "encoding": self.encoding,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "size": self.size,
            "sha256": self.sha256,
            "file": self.file,
            "listed_lastmod": self.listed_lastmod,
        }


class BadState(ValueError):
    """Why a stored state cannot be used."""


def _text(entry: dict[str, Any], name: str, *, optional: bool = False, limit: int = 65536) -> Any:
    value = entry.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise BadState(f"a document's {name!r} is not a string")
    return value


def _document(entry: object) -> StoredDocument:
    if not isinstance(entry, dict):
        raise BadState("a document is not an object")
    size = entry.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise BadState("a document's 'size' is not a whole number")
    sha = _text(entry, "sha256")
    if not _HASH.match(sha):
        raise BadState("a document's 'sha256' is not a SHA-256")
    file = _text(entry, "file")
    if not _BODY_FILE.match(file):
        raise BadState(f"a document's file name {file[:40]!r} is not one this tool writes")
    return StoredDocument(
        url=_text(entry, "url"),
        final_url=_text(entry, "final_url"),
        content_type=_text(entry, "content_type", limit=1024),
        encoding=_text(entry, "encoding", limit=1024),
        etag=_text(entry, "etag", optional=True, limit=8192),
        last_modified=_text(entry, "last_modified", optional=True, limit=1024),
        size=size,
        sha256=sha,
        file=file,
        listed_lastmod=_text(entry, "listed_lastmod", optional=True, limit=1024),
    )


def parse_state(data: bytes, site: str) -> dict[str, StoredDocument]:
    """The documents of a state file written for `site`; BadState for anything else."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise BadState(f"not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BadState("not a sitescout walk state")
    if doc.get("version") != VERSION:
        raise BadState(f"state version {doc.get('version')!r}, this sitescout reads {VERSION}")
    if doc.get("site") != site:
        stored = doc.get("site")
        named = stored if isinstance(stored, str) else "an unnamed site"
        raise BadState(f"it belongs to another site ({named[:200]})")
    entries = doc.get("documents")
    if not isinstance(entries, list) or len(entries) > MAX_DOCUMENTS:
        raise BadState("its document list is missing or too long")
    out: dict[str, StoredDocument] = {}
    for entry in entries:
        stored_doc = _document(entry)
        out[document_key(stored_doc.url)] = stored_doc
    return out


def _hex_name(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".raw"


class BodyRecorder:
    """Writes one document's body into the new generation as it streams, hashing it."""

    def __init__(self, state: WalkState, url: str) -> None:
        self.state = state
        self.url = url
        self.file = _hex_name(url)
        self._part = f".{self.file}.{secrets.token_hex(4)}.part"
        self.size = 0
        self._hash = hashlib.sha256()
        self._fd: int | None = None
        self._failed = False

    def write(self, data: bytes) -> None:
        self.size += len(data)
        self._hash.update(data)
        if self._failed:
            return
        try:
            write_all(self._open(), data)
        except OSError as exc:
            self._fail(exc)

    def _open(self) -> int:
        """The file being written, created on first use."""
        if self._fd is None:
            self._fd = os.open(self._part, NEW_FILE, 0o600, dir_fd=self.state.new_fd)
            self.state.open_recorders.add(self)
        return self._fd

    def _fail(self, exc: OSError) -> None:
        self._failed = True  # the walk goes on; this document is just not stored
        log.warning("walk state: cannot write %s: %s", self.url, exc.strerror)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def keep(self, url: str, resp: Response, listed: str | None) -> StoredDocument | None:
        """Store the body written: the document was read whole and is a sitemap. `listed`:
        the lastmod its index gave it."""
        if not self._failed:
            try:
                self._open()  # an empty body never opened it: an empty file
            except OSError as exc:
                self._fail(exc)
        self._close()
        if self._failed:
            self.discard()
            return None
        stored = StoredDocument(
            url=url,
            final_url=resp.final_url,
            content_type=resp.content_type,
            encoding=resp.content_encoding,
            etag=resp.etag,
            last_modified=resp.last_modified,
            size=self.size,
            sha256=self.sha256,
            file=self.file,
            listed_lastmod=listed,
        )
        try:
            fd = self.state.new_fd
            os.replace(self._part, self.file, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as exc:
            log.warning("walk state: cannot store %s: %s", url, exc.strerror)
            self.discard()
            return None
        self.state.add(stored)
        return stored

    def discard(self) -> None:
        self._close()
        if self.state.closed:
            return  # its generation went with the state
        with contextlib.suppress(OSError):
            os.unlink(self._part, dir_fd=self.state.new_fd)

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
            self.state.open_recorders.discard(self)


class WalkState:
    """The state directory of one site's walks, held (locked) from `open` to `close`."""

    def __init__(self, directory: Path, site: str) -> None:
        self.directory = directory
        self.site = site
        self.summary = RewalkSummary(directory=str(directory))
        self._stored: dict[str, StoredDocument] = {}
        self._written: dict[str, StoredDocument] = {}
        self._lock_fd: int | None = None
        self._dir_fd: int | None = None
        self._old: str | None = None
        self._old_fd: int | None = None
        self._new = f"gen-{secrets.token_hex(8)}"
        self._new_fd: int | None = None
        self.committed = False
        self.closed = False
        # Bodies being written: a walk cancelled mid-document leaves them to `close`.
        self.open_recorders: set[BodyRecorder] = set()

    @classmethod
    def open(cls, directory: Path, site: str) -> WalkState:
        """Lock `directory` (created if missing) and read its state for `site`. ProjectError
        when it cannot be used at all (not a directory, another walk holds it); a stored state
        that cannot be read is ignored (`summary.ignored` says why)."""
        state = cls(directory, site)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise ProjectError(f"cannot create the state directory {directory}: {why}") from None
        if directory.is_symlink() or not directory.is_dir():
            raise ProjectError(f"the state directory {directory} is not a directory")
        state._lock_fd = lock_directory(directory, LOCK, what="walk")
        try:
            state._dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            state._read()
            state._clean()
            os.mkdir(state._new, 0o700, dir_fd=state._dir_fd)
            state._new_fd = os.open(
                state._new, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=state._dir_fd
            )
        except OSError as exc:
            state.close()
            msg = f"cannot use the state directory {directory}: {exc.strerror}"
            raise ProjectError(msg) from None
        except BaseException:
            state.close()
            raise
        return state

    @property
    def new_fd(self) -> int:
        assert self._new_fd is not None, "the state is closed"
        return self._new_fd

    # -- reading the stored generation ------------------------------------------------------

    def _read(self) -> None:
        assert self._dir_fd is not None
        try:
            fd = os.open(CURRENT, _OPEN_READ, dir_fd=self._dir_fd)
        except FileNotFoundError:
            return  # a first walk
        except OSError as exc:
            self._ignore(f"cannot read {CURRENT}: {exc.strerror}")
            return
        with os.fdopen(fd, "rb") as fh:
            name = fh.read(64).decode("ascii", "replace").strip()
        if not _GENERATION.match(name):
            self._ignore(f"{CURRENT} names no generation")
            return
        try:
            gen_fd = os.open(name, _OPEN_READ | os.O_DIRECTORY, dir_fd=self._dir_fd)
        except OSError as exc:
            self._ignore(f"cannot open {name}: {exc.strerror}")
            return
        try:
            data = self._read_small(gen_fd, STATE_FILE, MAX_STATE_BYTES)
            self._stored = parse_state(data, self.site)
        except (OSError, BadState) as exc:
            os.close(gen_fd)
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            self._ignore(f"{STATE_FILE}: {why}")
            self._old = name  # removed at commit like any old generation
            return
        self._old, self._old_fd = name, gen_fd
        self.summary.known = len(self._stored)

    @staticmethod
    def _read_small(dir_fd: int, name: str, limit: int) -> bytes:
        fd = os.open(name, _OPEN_READ, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise BadState(f"larger than {limit} bytes")
        return data

    def _ignore(self, why: str) -> None:
        self._stored = {}
        self.summary.ignored = why
        log.warning("walk state in %s ignored: %s", self.directory, why)

    def _clean(self) -> None:
        """Remove what killed walks left: generations `current` does not name."""
        assert self._dir_fd is not None
        for name in os.listdir(self._dir_fd):
            if _GENERATION.match(name) and name != self._old:
                self._remove(name)

    def _remove(self, name: str) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(name, dir_fd=self._dir_fd)

    # -- during the walk --------------------------------------------------------------------

    def stored(self, url: str) -> StoredDocument | None:
        return self._stored.get(document_key(url))

    def recorder(self, url: str) -> BodyRecorder:
        return BodyRecorder(self, url)

    def add(self, stored: StoredDocument) -> None:
        self._written[document_key(stored.url)] = stored

    async def open_body(self, stored: StoredDocument) -> int | None:
        """A descriptor of the stored body (the caller closes it), at its start, once its bytes
        are checked against its size and hash; None when the file is missing or does not match
        (the document is fetched again)."""
        if self._old_fd is None:
            return None
        try:
            fd = os.open(stored.file, _OPEN_READ, dir_fd=self._old_fd)
        except OSError as exc:
            log.warning("walk state: %s unreadable: %s", stored.url, exc.strerror)
            return None
        try:
            if not await asyncio.to_thread(self._matches, fd, stored):
                log.warning("walk state: the stored body of %s does not match", stored.url)
                os.close(fd)
                return None
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError:
            os.close(fd)
            return None
        return fd

    @staticmethod
    def _matches(fd: int, stored: StoredDocument) -> bool:
        digest = hashlib.sha256()
        size = 0
        while data := os.read(fd, _STEP):
            size += len(data)
            if size > stored.size:
                return False
            digest.update(data)
        return size == stored.size and digest.hexdigest() == stored.sha256

    def carry(self, stored: StoredDocument, resp: Response, listed: str | None) -> None:
        """Keep a document that did not change in the new generation (a hard link, or a copy
        where links are not possible), with the validators the server sent this time and the
        lastmod its index gives it now."""
        assert self._old_fd is not None
        try:
            os.link(
                stored.file,
                stored.file,
                src_dir_fd=self._old_fd,
                dst_dir_fd=self.new_fd,
                follow_symlinks=False,
            )
        except FileExistsError:
            pass
        except OSError:
            try:
                self._copy(stored.file)
            except OSError as exc:
                log.warning("walk state: cannot keep %s: %s", stored.url, exc.strerror)
                return
        etag = resp.etag if resp.etag is not None else stored.etag
        modified = resp.last_modified if resp.last_modified is not None else stored.last_modified
        self.add(replace(stored, etag=etag, last_modified=modified, listed_lastmod=listed))

    def _copy(self, name: str) -> None:
        assert self._old_fd is not None
        src = os.open(name, _OPEN_READ, dir_fd=self._old_fd)
        try:
            dst = os.open(name, NEW_FILE, 0o600, dir_fd=self.new_fd)
            try:
                while data := os.read(src, _STEP):
                    write_all(dst, data)
            finally:
                os.close(dst)
        finally:
            os.close(src)

    # -- the end ----------------------------------------------------------------------------

    def commit(self) -> None:
        """Make the new generation the one in force and remove the old one."""
        assert self._dir_fd is not None
        document = {
            "format": FORMAT,
            "version": VERSION,
            "site": self.site,
            "written": datetime.now(UTC).isoformat(timespec="seconds"),
            "documents": [d.as_dict() for d in self._written.values()],
        }
        try:
            write_file_at(self.new_fd, STATE_FILE, json.dumps(document, indent=1).encode(), 0o600)
            os.fsync(self.new_fd)
            write_file_at(self._dir_fd, CURRENT, f"{self._new}\n".encode(), 0o600)
            os.fsync(self._dir_fd)
        except OSError as exc:
            log.warning("walk state: cannot save it in %s: %s", self.directory, exc.strerror)
            self.summary.ignored = f"not saved: {exc.strerror}"
            return
        self.committed = True
        if self._old is not None:
            self._close_old()
            self._remove(self._old)
            self._old = None

    def close(self) -> None:
        """Release the directory; a generation never committed is removed."""
        for recorder in list(self.open_recorders):
            recorder.discard()
        self.closed = True
        self._close_old()
        if self._new_fd is not None:
            os.close(self._new_fd)
            self._new_fd = None
            if not self.committed:
                self._remove(self._new)
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _close_old(self) -> None:
        if self._old_fd is not None:
            os.close(self._old_fd)
            self._old_fd = None


def stored_inventory(directory: Path) -> Path | None:
    """The inventory a state directory keeps of its last complete walk, when it has one."""
    path = directory / INVENTORY
    return path if path.is_file() and not path.is_symlink() else None

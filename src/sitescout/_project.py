"""The project directory of an extraction run (§12): crawl log, page state and page records.

Every file is written whole to a temporary sibling and renamed over the old one, so a reader (or an
interrupted run) only ever sees a complete file. The crawl log is append-only: a run adds one entry
to `runs[]` and never rewrites an earlier one.

State is flushed at most once a second while pages complete, and always at the end of a run (also
after Ctrl-C): rewriting it after each of thousands of pages would cost time quadratic in pages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
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
SCHEMA_VERSION = 1

# A slug's lifecycle: chosen by selection, then fetched into a page record or failed.
DISCOVERED, EXTRACTED, FAILED = "discovered", "extracted", "failed"


class ProjectError(UsageError):
    """The project directory cannot be used for this run (another origin, unreadable files)."""


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped with the package: `crawl-log`, `state` or `page`."""
    text = resources.files("sitescout").joinpath("schemas", f"{name}.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` so that no reader ever sees a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ProjectError(f"cannot read {path}: {exc}") from exc


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

    @classmethod
    def open(cls, directory: Path, origin: str) -> Project:
        """Load `directory` (it may not exist yet); refuse one recorded for another origin."""
        project = cls(directory, origin)
        if directory.exists() and not directory.is_dir():
            raise ProjectError(f"{directory} exists and is not a directory")
        crawl_log = _read_json(directory / CRAWL_LOG)
        state = _read_json(directory / STATE)
        for name, data in ((CRAWL_LOG, crawl_log), (STATE, state)):
            if data is None:
                continue
            if not isinstance(data, dict):
                raise ProjectError(f"{directory / name} is not a sitescout project file")
            recorded = data.get("origin")
            if recorded != origin:
                raise ProjectError(
                    f"{directory} belongs to {recorded}, not {origin}; "
                    "pass --out with another directory for this site"
                )
        if crawl_log is not None:
            project.runs = list(crawl_log.get("runs", []))
        if state is not None:
            for slug, rec in state.get("pages", {}).items():
                project.pages[slug] = SlugState(rec["url"], rec["status"], list(rec["history"]))
        return project

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
        path = self.directory / PAGES / f"{slug}.json"
        write_json_atomic(path, record)
        return path

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
        write_json_atomic(
            self.directory / CRAWL_LOG,
            {"schemaVersion": SCHEMA_VERSION, "origin": self.origin, "runs": self.runs},
        )
        write_json_atomic(
            self.directory / STATE,
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

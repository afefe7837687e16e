"""The driver of a batch: `BatchRun` (the site list, the cluster, one lane per host, the
results as they come) and `batch`, the library's entry point. The only module that imports
Dask, and only when a batch starts."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._extras import require_pyarrow
from .._locale import base_prefix, path_locale
from .._project import lock_directory
from .._signals import ctrl_c_ignored, ctrl_c_sets
from .._urls import is_http_url
from .._walk import WalkOptions, walk_options
from .parts import SiteJob, complete_result
from .results import SiteResult, write_sites
from .sites import SiteLine, host_of, partition_name, read_sites, site_key
from .tasks import LeafJob, LeafOutcome, SiteOutcome, finish_site, walk_leaf, walk_site

log = logging.getLogger(__name__)

INSTALL = "pip install 'sitescout[dask]'"
THREADS_PER_WORKER = 4  # walks wait on the network far more than they compute
SAVE_EVERY = 5.0  # seconds between rewrites of sites.parquet while a batch runs
CLOSE_TIMEOUT = 10.0  # seconds for the local cluster to shut down


def _dask() -> tuple[Any, Any]:
    try:
        import distributed  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(f"batch needs Dask: {INSTALL}") from exc
    return distributed, distributed.as_completed


@dataclass(slots=True)
class _Site:
    line: SiteLine
    result: SiteResult
    job: SiteJob | None = None
    outcome: SiteOutcome | None = None
    leaves: deque[LeafJob] = field(default_factory=deque)
    running: int = 0
    finished: list[LeafOutcome] = field(default_factory=list)


Progress = Callable[["BatchRun"], None]


class BatchRun:
    """One batch: the site list, the cluster, the lanes per host, the results as they come.

    `run()` blocks until every site is done. After Ctrl-C (KeyboardInterrupt, re-raised) the
    results hold what finished, and `sites.parquet` says so.
    """

    def __init__(
        self,
        sites: Iterable[str],
        out: str | os.PathLike[str],
        *,
        client: Any = None,
        scheduler: str | None = None,
        workers: int | None = None,
        fanout: int = 50,
        refresh: bool = False,
        options: WalkOptions | None = None,
        progress: Progress | None = None,
        quiet_workers: bool = False,
        **kwargs: Any,
    ) -> None:
        """`quiet_workers`: the library's log records stay inside worker processes whose logging
        nobody configured (the command line's stderr is for its own progress and summary)."""
        self.quiet_workers = quiet_workers
        self.distributed, self._as_completed = _dask()
        require_pyarrow()
        if isinstance(fanout, bool) or not isinstance(fanout, int) or fanout < 1:
            raise UsageError(f"fanout must be a whole number of at least 1, got {fanout!r}")
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise UsageError(f"workers must be a whole number of at least 1, got {workers!r}")
        self.options = walk_options(options, kwargs)
        self.out = Path(out)
        self.fanout = fanout
        self.refresh = refresh
        self.workers = workers
        self.scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
        self.client = client
        self.dashboard: str | None = None
        self.progress = progress
        self.sites: list[_Site] = []
        self._keys: dict[str, int] = {}
        for line in read_sites(sites):
            self._add(line)
        self._saved = 0.0
        self.urls_found = 0

    def _add(self, line: SiteLine) -> None:
        if line.problem is not None:
            result = SiteResult(None, line.url, status="failed", error_class="UsageError")
            result.error_message = f"line {line.line}: {line.problem}"
            self.sites.append(_Site(line, result))
            return
        key = site_key(line.url)
        if key in self._keys:
            log.info("line %d: %s is already in the list (line %d)", line.line, line.url, key)
            return
        self._keys[key] = len(self.sites)
        self.sites.append(_Site(line, SiteResult(key, line.url)))

    @property
    def results(self) -> list[SiteResult]:
        return [s.result for s in self.sites]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.sites:
            counts[s.result.status] = counts.get(s.result.status, 0) + 1
        return counts

    def _fanout_for(self, url: str) -> int | None:
        opts = self.options
        if (
            opts.crawl
            or opts.source in ("llms", "all")
            or opts.budgets.any_set
            or (opts.sitemap is None and base_prefix(url) is not None)
        ):
            return None
        return self.fanout

    def run(self) -> list[SiteResult]:
        """Walk every site not complete yet; one batch at a time per output directory."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "urls").mkdir(exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        lock = lock_directory(self.out, ".batch.lock", "batch")
        try:
            return self._run()
        finally:
            os.close(lock)

    def _run(self) -> list[SiteResult]:
        shutil.rmtree(self.out / ".trash", ignore_errors=True)
        todo: list[_Site] = []
        for s in self.sites:
            key = s.result.site
            if key is None:
                continue
            done = complete_result(self.out, key)
            if done is not None and not self.refresh:
                done.status = "skipped" if done.status == "complete" else done.status
                s.result = done
                continue
            exists = (self.out / "urls" / partition_name(key)).exists()
            options = self.options
            if not options.filter_locales and path_locale(s.line.url) is not None:
                options = replace(options, filter_locales=True)  # as `urls` does for a base URL
            if options.state is not None:  # one state per site
                options = replace(options, state=options.state / partition_name(key))
            s.job = SiteJob(
                url=s.line.url,
                key=key,
                out=str(self.out),
                options=options,
                quiet=self.quiet_workers,
                fanout=self._fanout_for(s.line.url),
                hash_key=secrets.token_bytes(16),
                run=uuid.uuid4().hex,
                replace=self.refresh or exists,
            )
            todo.append(s)
        if todo:
            with self._cluster() as client:
                self._drive(client, todo)
        self._save(force=True)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.out / ".staging", ignore_errors=True)
        return self.results

    @contextlib.contextmanager
    def _cluster(self) -> Iterator[Any]:
        if self.client is not None:
            yield self.client
            return
        distributed = self.distributed
        if self.scheduler:
            with distributed.Client(self.scheduler) as client:
                self.dashboard = client.dashboard_link
                yield client
            return
        n = self.workers or max(1, os.cpu_count() or 1)
        # Ctrl-C on a terminal reaches the whole process group: the driver alone should get
        # it and close the cluster in order, not have the workers die under it and restart.
        with ctrl_c_ignored():
            cluster = distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=THREADS_PER_WORKER,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
            )
        client = None
        try:
            client = distributed.Client(cluster)
            self.dashboard = client.dashboard_link
            yield client
        finally:
            # Bounded: after Ctrl-C a worker may still wait on a site that does not answer.
            with contextlib.suppress(Exception):
                if client is not None:
                    client.close(timeout=CLOSE_TIMEOUT)
            with contextlib.suppress(Exception):
                cluster.close(timeout=CLOSE_TIMEOUT)

    def _drive(self, client: Any, todo: list[_Site]) -> None:
        lanes: dict[str, deque[_Site]] = {}
        for s in todo:
            lanes.setdefault(host_of(s.line.url), deque()).append(s)
        leaf_limit = max(1, min(self.options.concurrency, self.options.fetch.host_limit))
        futures: dict[Any, tuple[str, _Site, Any]] = {}
        queue = self._as_completed(loop=client.loop)

        def submit(kind: str, s: _Site, fn: Callable[..., Any], *args: Any) -> None:
            future = client.submit(fn, *args, pure=False, key=f"{kind}-{uuid.uuid4().hex}")
            futures[future] = (kind, s, args)
            queue.add(future)

        def next_site(host: str) -> None:
            lane = lanes[host]
            if lane:
                s = lane.popleft()
                assert s.job is not None
                s.result.started_at = datetime.now(UTC)
                submit("site", s, walk_site, s.job)

        def feed_leaves(s: _Site) -> None:
            while s.leaves and s.running < leaf_limit:
                submit("leaf", s, walk_leaf, s.leaves.popleft())
                s.running += 1

        def handle(future: Any) -> None:
            kind, s, args = futures.pop(future)
            host = host_of(s.line.url)
            outcome: Any = None
            error: BaseException | None = None
            try:
                outcome = future.result()
            except Exception as exc:  # the task died with its worker, or Dask gave up
                error = exc
            finally:
                # Released at once: a result the client still holds is one the scheduler
                # recomputes when its worker dies, and these tasks fetch from sites.
                future.release()
            if kind == "leaf":
                s.running -= 1
                if error is not None:
                    job: LeafJob = args[0]
                    outcome = LeafOutcome(job.index, None, [], type(error).__name__, str(error))
                s.finished.append(outcome)
                feed_leaves(s)
                if not s.leaves and s.running == 0:
                    assert s.job is not None and s.outcome is not None
                    submit("finish", s, finish_site, s.job, s.outcome, s.finished)
                return
            if error is not None:
                s.result.status = "failed"
                s.result.error_class = type(error).__name__
                s.result.error_message = str(error) or repr(error)
                s.result.finished_at = datetime.now(UTC)
                self._done(s, host, next_site)
                return
            assert isinstance(outcome, SiteOutcome)
            if kind == "site" and outcome.leaves:
                s.outcome = outcome
                s.result = outcome.result
                assert s.job is not None and outcome.staging is not None
                s.leaves.extend(
                    LeafJob(s.job, i, leaf, outcome.staging)
                    for i, leaf in enumerate(outcome.leaves)
                )
                feed_leaves(s)
                return
            s.result = outcome.result
            self._done(s, host, next_site)

        if self.progress is not None:
            self.progress(self)
        interrupted = threading.Event()
        try:
            with ctrl_c_sets(interrupted):
                for host in lanes:
                    next_site(host)
                while futures:
                    if not queue.has_ready():
                        # Polled, not blocked on: Ctrl-C only sets the event (raised from a
                        # signal handler, KeyboardInterrupt can land in a callback of Dask's
                        # that swallows it, and the batch would run on).
                        if interrupted.wait(0.05):
                            raise KeyboardInterrupt
                        continue
                    for future in queue.next_batch(block=False):
                        handle(future)
        except BaseException:
            for s in self.sites:
                if s.result.status == "not run" and s.result.started_at is not None:
                    s.result.error_class = "Interrupted"
                    s.result.error_message = "the batch stopped before this site finished"
            with contextlib.suppress(Exception):
                client.cancel(list(futures))
            with contextlib.suppress(Exception):
                self._save(force=True)
            raise

    def _done(self, s: _Site, host: str, next_site: Callable[[str], None]) -> None:
        self.urls_found += s.result.urls + s.result.alternates
        next_site(host)
        if self.progress is not None:
            self.progress(self)
        self._save()

    def _save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._saved < SAVE_EVERY:
            return
        self._saved = now
        if force:
            self._reconcile()
        write_sites(self.out / "sites.parquet", self.results)

    def _reconcile(self) -> None:
        """A task promotes its own partition: one may have finished after the driver stopped
        listening (Ctrl-C). Its marker, not the driver's memory, says it is complete."""
        for s in self.sites:
            key = s.result.site
            if key is not None and s.result.status == "not run":
                done = complete_result(self.out, key)
                if done is not None:
                    s.result = done


def batch(
    sites: Iterable[str] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    fanout: int = 50,
    refresh: bool = False,
    options: WalkOptions | None = None,
    **kwargs: Any,
) -> list[SiteResult]:
    """Walk every site of `sites` on a Dask cluster into a Parquet dataset under `out`.

    `sites` is an iterable of site URLs (bare domains mean https), or the path of a file of
    them (one per line, `#` comments; or a CSV with a `url` column). Keyword arguments are the
    walk's (`concurrency=`, `timeout=`, `max_urls=`, `locale=`, `crawl=`…), applied to each
    site. `client` is a `distributed.Client`; without one, `scheduler` (or the
    DASK_SCHEDULER_ADDRESS environment variable) names a running cluster, and otherwise a
    LocalCluster of `workers` processes on 127.0.0.1 runs the batch and is closed after it.

    Writes `out/urls/site=<key>/part-<n>.parquet` (the columns of `urls --format parquet`),
    each partition complete once its `_SITE.json` marker exists, and `out/sites.parquet`, one
    row per site; returns those rows. Sites already complete in `out` are skipped unless
    `refresh`. Raises UsageError when Dask or pyarrow is missing or an option is wrong.
    """
    settings: dict[str, Any] = {
        "client": client,
        "scheduler": scheduler,
        "workers": workers,
        "fanout": fanout,
        "refresh": refresh,
        "options": options,
    }
    if not isinstance(sites, (str, os.PathLike)):
        return BatchRun(sites, out, **settings, **kwargs).run()
    if isinstance(sites, str) and is_http_url(sites):
        raise UsageError(f"sites is a list of site URLs or the path of a file; got {sites!r}")
    path = Path(sites)
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            run = BatchRun(f, out, **settings, **kwargs)
    except OSError as exc:
        raise UsageError(f"cannot read the site list {path}: {exc.strerror or exc}") from exc
    return run.run()

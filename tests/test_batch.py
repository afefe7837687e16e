"""`sitescout batch` end to end: a real Dask LocalCluster walking a farm of real HTTP sites.

Each site of the farm (`tests/sitefarm.py`) listens on its own loopback address, so the batch
sees distinct hosts: distinct lanes, distinct partitions, per-host limits counted at the server.
The reference for every site's URL set is the single-process walk (`sitescout.iter_urls`) with
the same options.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("dask.distributed")
dd = pytest.importorskip("dask.dataframe")
pa = pytest.importorskip("pyarrow")
ds = pytest.importorskip("pyarrow.dataset")
pq = pytest.importorskip("pyarrow.parquet")

import sitescout  # noqa: E402
import sitescout._batch.driver  # noqa: E402

from .sitefarm import (  # noqa: E402
    CRAWL_DELAY,
    FANOUT_LEAVES,
    Farm,
    FarmHandler,
    FarmSite,
    Gate,
    owner_pid,
)

REPO = Path(__file__).resolve().parent.parent
MARKER = "_SITE.json"
CLI = [sys.executable, "-m", "sitescout", "batch"]
# Fast failures: a hanging document costs one `timeout`, a 500 one quick retry.
OPTIONS: dict[str, Any] = {"concurrency": 3, "timeout": 1.0, "retries": 1, "backoff": 0.01}
CLUSTER_TIMEOUT = 30


# -- helpers -------------------------------------------------------------------------------------


def make_cluster(**kwargs: Any) -> Any:
    settings = {
        "n_workers": 2,
        "threads_per_worker": 2,
        "processes": True,
        "host": "127.0.0.1",
        "dashboard_address": "127.0.0.1:0",
        **kwargs,
    }
    if not settings["processes"]:
        del settings["host"]  # an in-process cluster talks over inproc://, not TCP
    return distributed.LocalCluster(**settings)


@contextlib.contextmanager
def cluster_client(*, set_as_default: bool = True, **kwargs: Any) -> Iterator[Any]:
    cluster = make_cluster(**kwargs)
    try:
        client = distributed.Client(cluster, set_as_default=set_as_default, timeout=CLUSTER_TIMEOUT)
        try:
            yield client
        finally:
            client.close(timeout=CLUSTER_TIMEOUT)
    finally:
        cluster.close(timeout=CLUSTER_TIMEOUT)


def reference(sites: dict[str, str], options: dict[str, Any]) -> dict[str, list[str]]:
    """What the single-process walk finds at each site (key -> site URL), with the batch's
    options. A few walks at a time, each in its own thread and event loop (many walks sharing
    one loop would delay each other's first requests past a short timeout)."""

    def walk(url: str) -> list[str]:
        return [entry.url for entry in sitescout.iter_urls(url, **options)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(walk, sites.values(), timeout=120))
    return dict(zip(sites, found, strict=True))


def site_urls(sites: list[FarmSite]) -> dict[str, str]:
    return {s.key: s.url for s in sites}


def read_urls(out: Path) -> Any:
    """DIR/urls as one Arrow table, read the way the docs say (hive partitioning)."""
    dataset = ds.dataset(out / "urls", format="parquet", partitioning="hive")
    return dataset.to_table()


def urls_by_site(table: Any) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for site, url in zip(
        table.column("site").to_pylist(), table.column("url").to_pylist(), strict=True
    ):
        grouped.setdefault(str(site), []).append(url)
    return grouped


def sorted_rows(table: Any) -> list[dict[str, Any]]:
    table = table.cast(
        pa.schema([pa.field(f.name, pa.string()) if f.name == "site" else f for f in table.schema])
    )
    return table.sort_by([("site", "ascending"), ("url", "ascending")]).to_pylist()


def read_sites(out: Path) -> dict[str | None, dict[str, Any]]:
    rows = pq.read_table(out / "sites.parquet").to_pylist()
    by_key = {row["site"]: row for row in rows}
    assert len(by_key) == len(rows), "one row per site"
    return by_key


def partitions(out: Path) -> list[Path]:
    urls = out / "urls"
    return sorted(p for p in urls.iterdir() if p.name.startswith("site=")) if urls.exists() else []


def markers(out: Path) -> list[Path]:
    return [p for p in partitions(out) if (p / MARKER).is_file()]


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry))
    return alive


def wait_until(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"}
    env.update(extra)
    return env


def run_cli(
    *args: str, stdin: str | None = None, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env or cli_env(),
    )


def json_summary(stderr: str) -> dict[str, Any]:
    """The JSON summary the CLI printed on stderr (possibly over several lines, possibly after
    log lines): the last object that starts a line and decodes."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    at = 0
    while (at := stderr.find("{", at)) != -1:
        if at == 0 or stderr[at - 1] == "\n":
            with contextlib.suppress(ValueError):
                value, _end = decoder.raw_decode(stderr, at)
                if isinstance(value, dict):
                    found = value
        at += 1
    assert found is not None, f"no JSON summary on stderr: {stderr!r}"
    return found


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with cluster_client() as c:
        yield c


@pytest.fixture(scope="module")
def scheduler(client: Any) -> str:
    address: str = client.scheduler.address
    return address


@pytest.fixture
def inproc() -> Iterator[Any]:
    """A small in-process cluster (threads of this process): starts in a fraction of a second,
    and what a test patches in this process is what its tasks run."""
    with cluster_client(processes=False, n_workers=1, threads_per_worker=2) as c:
        yield c


@pytest.fixture
def farm_factory() -> Iterator[Any]:
    farms: list[Farm] = []

    def make(kinds: list[str], **kwargs: Any) -> Farm:
        farm = Farm(kinds, **kwargs).start()
        farms.append(farm)
        return farm

    try:
        yield make
    finally:
        for farm in farms:
            farm.stop()


# -- 0. the instrument ---------------------------------------------------------------------------


def test_the_farm_counts_documents_in_flight(farm_factory: Any) -> None:
    """The per-host counts the batch tests rely on: three requests held at once read 3."""
    farm: Farm = farm_factory(["fanout", "hanging"])
    site, hanging = farm.sites
    gate = Gate(site, "/leaf-")
    paths = ["/leaf-1.xml", "/leaf-2.xml", "/leaf-4.xml"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        replies = [pool.submit(httpx.get, site.url + p, timeout=10) for p in paths]
        assert wait_until(lambda: site.in_flight == 3, timeout=10)
        gate.open()
        assert [r.result(timeout=10).status_code for r in replies] == [200, 200, 200]
    assert site.max_in_flight == 3 and site.in_flight == 0
    log = site.requests(lambda p: p.startswith("/leaf-"))
    assert all(r.end is not None and r.end >= r.start for r in log)
    with pytest.raises(httpx.TimeoutException):
        httpx.get(hanging.url + "/robots.txt", timeout=0.3)
    assert hanging.in_flight == 1  # the server still holds it, until the farm stops
    farm.stop()
    assert wait_until(lambda: hanging.in_flight == 0, timeout=5)


# -- 1. fifty sites, mixed kinds -----------------------------------------------------------------

MIXED = ["fanout", "crawl-delay", "hanging", "error500", "garbage", "cycle", "nosite"]
FAILING = {"hanging", "error500", "garbage"}


@dataclass
class Target:
    """One line of the big run's site list: its partition key, URL and server."""

    key: str
    url: str
    site: FarmSite
    expected: set[str] | None


@dataclass
class BigRun:
    farm: Farm
    targets: list[Target]
    out: Path
    results: list[Any]
    reference: dict[str, list[str]]
    seconds: float

    def target(self, kind: str) -> Target:
        (target,) = [t for t in self.targets if t.site.kind == kind and t.url == t.site.url]
        return target


@pytest.fixture(scope="module")
def big_run(client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BigRun]:
    kinds = [k for k in MIXED if k != "hanging"] + ["plain"] * 45
    random.Random(7).shuffle(kinds)
    # The hanging site holds its task for 8 timeouts (robots.txt, three well-known paths, two
    # llms.txt, robots.txt and / for the crawl): first in the list, it overlaps the others.
    kinds.insert(0, "hanging")
    farm = Farm(kinds).start()
    try:
        targets = [Target(s.key, s.url, s, s.expected_urls) for s in farm.sites]
        # A site that is a part of its host: its own partition, keyed by host, port and path,
        # and the same lane (host) as the whole site.
        whole = farm.of_kind("plain")[0]
        german = {u for u in whole.expected_urls or () if "/de/" in u}
        targets.append(Target(f"{whole.key}/de/", f"{whole.url}/de/", whole, german))
        ok = {t.key: t.url for t in targets if t.site.kind not in FAILING}
        expected = reference(ok, OPTIONS)
        farm.reset_counters()  # the server-side counts below are the batch's alone
        out = tmp_path_factory.mktemp("big")
        start = time.monotonic()
        results = sitescout.batch([t.url for t in targets], out, client=client, fanout=5, **OPTIONS)
        yield BigRun(farm, targets, out, results, expected, time.monotonic() - start)
    finally:
        farm.stop()


def test_every_site_gets_a_row_and_the_right_status(big_run: BigRun) -> None:
    farm = big_run.farm
    assert len(farm.sites) >= 50
    assert len({s.host for s in farm.sites}) == len(farm.sites)
    rows = read_sites(big_run.out)
    assert set(rows) == {t.key for t in big_run.targets}
    returned = {r.site: r for r in big_run.results}
    assert set(returned) == set(rows)
    for target in big_run.targets:
        row = rows[target.key]
        assert row["status"] == returned[target.key].status, target
        assert row["url"].rstrip("/") == target.url.rstrip("/"), row
        if target.site.kind in FAILING:
            assert row["status"] == "failed", (target, row)
            assert row["error_class"], row
            assert row["error_message"], row
            assert row["urls"] == row["alternates"] == 0, row
        else:
            assert row["status"] == "complete", (target, row)
            assert row["error_class"] is None, row
            assert not row["partial"], row
            assert row["urls"] + row["alternates"] == len(big_run.reference[target.key]), row
            assert row["finished_at"] >= row["started_at"], row
    # The classes name what went wrong.
    assert rows[big_run.target("hanging").key]["error_class"] == "TimeoutError"
    assert rows[big_run.target("error500").key]["error_class"] == "HTTPError"
    assert rows[big_run.target("garbage").key]["error_class"] == "NotASitemap"
    assert rows[big_run.target("cycle").key]["urls"] == 8
    assert rows[big_run.target("nosite").key]["source"] == "bfs"
    assert rows[big_run.target("crawl-delay").key]["source"] == "bfs"
    counts = Counter(r.status for r in big_run.results)
    assert counts == {"complete": len(big_run.targets) - len(FAILING), "failed": len(FAILING)}


def test_url_sets_equal_the_single_process_walk(big_run: BigRun) -> None:
    table = read_urls(big_run.out)
    got = urls_by_site(table)
    # Failing sites leave no partition at all (nothing to resume from, nothing half-written).
    assert set(got) == set(big_run.reference)
    # Directory names are the keys, percent-encoded (`:` and `/` included).
    names = {unquote(p.name.split("=", 1)[1]) for p in partitions(big_run.out)}
    assert names == set(big_run.reference)
    assert all("/" not in p.name and ":" not in p.name for p in partitions(big_run.out))
    for target in big_run.targets:
        if target.key not in got:
            continue
        urls = got[target.key]
        assert len(urls) == len(set(urls)), f"{target}: a URL appears twice"
        assert set(urls) == set(big_run.reference[target.key]), target
        assert target.expected is None or set(urls) == target.expected, target
    # Every partition is complete: data files plus the marker, nothing staged left around.
    for partition in partitions(big_run.out):
        assert (partition / MARKER).is_file(), partition
        assert any(p.suffix == ".parquet" for p in partition.iterdir()), partition
    staging = big_run.out / ".staging"
    assert not staging.exists() or not any(staging.iterdir())


# dask's parquet reader calls pandas' reset_index(inplace=True), which pandas 3.1 deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")
def test_dask_reads_the_same_dataset(big_run: BigRun) -> None:
    frame = dd.read_parquet(str(big_run.out / "urls")).compute(scheduler="sync")
    arrow = read_urls(big_run.out)
    assert len(frame) == arrow.num_rows
    pairs = set(zip(frame["site"].astype(str), frame["url"], strict=True))
    assert pairs == set(
        zip(arrow.column("site").to_pylist(), arrow.column("url").to_pylist(), strict=True)
    )
    assert set(frame.columns) >= {
        "url",
        "lastmod",
        "lastmod_raw",
        "priority",
        "changefreq",
        "hreflang",
        "alternate_of",
        "sitemap",
        "depth",
        "source",
        "title",
        "md_url",
        "sources",
        "site",
    }


def test_no_host_sees_more_than_concurrency_in_flight(big_run: BigRun) -> None:
    limit = OPTIONS["concurrency"]
    seen = {}
    for site in big_run.farm.sites:
        if site.kind == "hanging":
            continue  # its requests never end at the server: the client gave up on them
        assert site.total_hits() > 0, site
        seen[site.kind] = max(seen.get(site.kind, 0), site.max_in_flight)
        assert site.max_in_flight <= limit, (site, site.max_in_flight)
    assert seen["crawl-delay"] == 1


def test_crawl_delay_spaces_the_crawl(big_run: BigRun) -> None:
    site = big_run.target("crawl-delay").site
    pages = site.requests(lambda p: p == "/" or p.startswith("/cd/"))
    assert len(pages) == 6, [r.path for r in pages]
    pages.sort(key=lambda r: r.start)
    for before, after in itertools.pairwise(pages):
        assert before.end is not None
        gap = after.start - before.end
        assert gap >= CRAWL_DELAY - 0.05, (before.path, after.path, gap)
    assert site.max_in_flight == 1


def test_the_big_index_fans_out(big_run: BigRun) -> None:
    site = big_run.target("fanout").site
    result = next(r for r in big_run.results if r.site == site.key)
    assert result.status == "complete"
    assert result.leaves == FANOUT_LEAVES
    assert result.parts > 1
    assert result.urls == len(site.expected_urls or ())
    row = read_sites(big_run.out)[site.key]
    assert (row["leaves"], row["parts"]) == (result.leaves, result.parts)
    # Each leaf was fetched once (a fanned-out leaf is not walked again by its site's task).
    leaves = Counter(r.path for r in site.requests(lambda p: p.startswith("/leaf-")))
    assert len(leaves) == FANOUT_LEAVES and set(leaves.values()) == {1}, leaves
    assert 1 <= site.max_in_flight <= OPTIONS["concurrency"]


# -- 2. resume after a kill ----------------------------------------------------------------------

RESUME_ARGS = ["--concurrency", "2", "--timeout", "10", "--fanout", "5"]
RESUME_OPTIONS: dict[str, Any] = {"concurrency": 2, "timeout": 10.0}


def start_cli(sites_file: Path, out: Path, log: Path) -> subprocess.Popen[bytes]:
    """The CLI in a process group of its own (its LocalCluster's processes join it), stderr
    into a file: not a pipe nobody reads while it runs."""
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [*CLI, str(sites_file), "--out", str(out), "--workers", "2", *RESUME_ARGS],
            cwd=REPO,
            env=cli_env(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )


def test_resume_after_the_driver_is_killed(client: Any, farm_factory: Any, tmp_path: Path) -> None:
    farm: Farm = farm_factory(["plain"] * 9 + ["fanout", "cycle", "nosite"])
    sites_file = tmp_path / "sites.txt"
    sites_file.write_text("".join(s.url + "\n" for s in farm.sites))
    dir_a, dir_b = tmp_path / "a", tmp_path / "b"
    done_a = sitescout.batch(str(sites_file), dir_a, client=client, fanout=5, **RESUME_OPTIONS)
    assert {r.status for r in done_a} == {"complete"}

    # Four sites cannot finish while the gates are closed: their sitemap requests wait.
    held = farm.of_kind("plain")[:4]
    gates = [Gate(site, "/sitemap") for site in held]
    farm.reset_counters()
    log = tmp_path / "cli-stderr.txt"
    proc = start_cli(sites_file, dir_b, log)
    pgid = proc.pid
    try:
        started = wait_until(
            lambda: (
                proc.poll() is not None
                or (
                    len(markers(dir_b)) >= 3
                    and all(s.requests(lambda p: p.startswith("/sitemap")) for s in held)
                )
            ),
            timeout=90,
        )
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        assert started, "the batch did not get going within 90 s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=30)
        # The LocalCluster's nanny and worker processes went down with the driver.
        assert wait_until(lambda: not group_members(pgid), timeout=30), group_members(pgid)
    assert proc.returncode == -signal.SIGKILL
    for gate in gates:
        gate.open()

    # Whatever the kill interrupted, no partition exists without its marker.
    finished = {p.name for p in markers(dir_b)}
    assert finished == {p.name for p in partitions(dir_b)}
    keys_done = {
        json.loads((dir_b / "urls" / name / MARKER).read_text())["site"] for name in finished
    }
    assert keys_done and not keys_done & {s.key for s in held}

    farm.reset_counters()
    resumed = sitescout.batch(str(sites_file), dir_b, client=client, fanout=5, **RESUME_OPTIONS)
    statuses = {r.site: r.status for r in resumed}
    assert statuses == {s.key: "skipped" if s.key in keys_done else "complete" for s in farm.sites}
    for site in farm.sites:
        if site.key in keys_done:
            assert site.total_hits() == 0, f"{site} was complete, yet walked again"
    rows = read_sites(dir_b)
    assert {k: r["status"] for k, r in rows.items()} == statuses

    a_rows, b_rows = sorted_rows(read_urls(dir_a)), sorted_rows(read_urls(dir_b))
    assert len(b_rows) == len({(r["site"], r["url"]) for r in b_rows}), "duplicate rows"
    assert b_rows == a_rows
    # A skipped site's row is its earlier row (from the marker), but for the status.
    rows_a = read_sites(dir_a)
    for key in keys_done:
        for name in ("urls", "alternates", "documents", "source", "leaves"):
            assert rows[key][name] == rows_a[key][name], (key, name)


def test_ctrl_c_keeps_complete_partitions_and_records_the_rest(
    farm_factory: Any, tmp_path: Path
) -> None:
    """Ctrl-C on a terminal reaches the whole process group: the driver and its cluster."""
    farm: Farm = farm_factory(["plain"] * 6)
    sites_file = tmp_path / "sites.txt"
    sites_file.write_text("".join(s.url + "\n" for s in farm.sites))
    held = farm.sites[:2]
    gates = [Gate(site, "/sitemap") for site in held]
    out = tmp_path / "out"
    log = tmp_path / "cli-stderr.txt"
    proc = start_cli(sites_file, out, log)
    pgid = proc.pid
    try:
        started = wait_until(
            lambda: (
                proc.poll() is not None
                or (
                    len(markers(out)) >= 4
                    and all(s.requests(lambda p: p.startswith("/sitemap")) for s in held)
                )
            ),
            timeout=90,
        )
        assert proc.poll() is None and started, log.read_text(errors="replace")[-3000:]
        os.killpg(pgid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=30)
        for gate in gates:
            gate.open()
    text = log.read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "interrupted" in text and "Traceback" not in text, text[-3000:]
    assert wait_until(lambda: not group_members(pgid), timeout=30), group_members(pgid)
    assert {p.name for p in markers(out)} == {p.name for p in partitions(out)}
    rows = read_sites(out)
    assert {k for k, r in rows.items() if r["status"] == "complete"} == {
        json.loads((p / MARKER).read_text())["site"] for p in markers(out)
    }
    for site in held:
        assert rows[site.key]["status"] == "not run"
        assert rows[site.key]["error_class"] == "Interrupted"
    # The complete partitions are a usable dataset.
    table = read_urls(out)
    assert table.num_rows > 0
    assert set(table["site"].to_pylist()) <= {s.key for s in farm.sites} - {s.key for s in held}


# -- 3. a worker killed mid-run ------------------------------------------------------------------


@pytest.fixture(scope="module")
def killable() -> Iterator[Any]:
    """A cluster of its own for the tests that kill workers (its nannies restart them)."""
    with cluster_client() as c:
        yield c


def worker_pids(c: Any) -> list[int]:
    c.wait_for_workers(2, timeout=CLUSTER_TIMEOUT)  # a killed worker is back
    return list(c.run(os.getpid, wait=True).values())


def test_a_killed_worker_loses_and_doubles_nothing(
    killable: Any, farm_factory: Any, tmp_path: Path
) -> None:
    farm: Farm = farm_factory(["plain"] * 8 + ["fanout", "cycle"])
    expected = reference(site_urls(farm.sites), OPTIONS)
    farm.reset_counters()
    victim = farm.of_kind("plain")[0]
    state: dict[str, Any] = {}
    lock = threading.Lock()
    pids = worker_pids(killable)
    assert len(pids) == 2

    def kill_the_fetching_worker(handler: FarmHandler) -> None:
        if not handler.path.startswith("/sitemap"):
            return
        with lock:
            if state:
                return
            owner = owner_pid(handler, pids)
            state["owner"] = owner
            state["pid"] = owner if owner is not None else random.choice(pids)
            os.kill(state["pid"], signal.SIGKILL)
        handler.wait(0.3)  # the reply goes to a dead socket

    victim.hooks.append(kill_the_fetching_worker)
    results = sitescout.batch(
        [s.url for s in farm.sites], tmp_path / "out", client=killable, fanout=5, **OPTIONS
    )
    assert state, "the victim site was never asked for its sitemap"
    assert state["owner"] is not None, "the kill did not hit the worker fetching the sitemap"
    assert state["pid"] not in worker_pids(killable)
    assert victim.hits["/sitemap.xml"] + victim.hits["/sitemap.xml.gz"] >= 2, victim.hits
    assert {r.site: r.status for r in results} == {s.key: "complete" for s in farm.sites}
    got = urls_by_site(read_urls(tmp_path / "out"))
    for key, urls in got.items():
        assert len(urls) == len(set(urls)), f"{key}: a URL appears twice"
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in expected.items()}
    assert all((p / MARKER).is_file() for p in partitions(tmp_path / "out"))


def test_a_worker_killed_while_finishing_a_fanned_out_site(
    killable: Any, farm_factory: Any, tmp_path: Path
) -> None:
    """The last task of a fanned-out site (merge the leaves' parts, drop repeats, promote) dies
    with its worker after moving the parts, before the marker: Dask runs it again, and the site
    must still end complete, every URL once."""
    farm: Farm = farm_factory(["fanout", "plain"])
    site = farm.sites[0]
    flag = tmp_path / "killed-once"

    def arm(flag: str) -> None:  # runs in each worker process
        import os
        import signal

        import sitescout._batch.tasks as batch

        original = batch._write_final

        def write_then_die(*args: Any, **kwargs: Any) -> Any:
            try:
                os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return original(*args, **kwargs)
            original(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)

        batch._write_final = write_then_die

    before = worker_pids(killable)
    killable.run(arm, str(flag), wait=True)
    results = sitescout.batch(
        [s.url for s in farm.sites], tmp_path / "out", client=killable, fanout=5, **OPTIONS
    )
    assert flag.exists(), "no finishing task ran"
    assert set(before) - set(worker_pids(killable)), "no worker died"
    by_key = {r.site: r for r in results}
    assert (by_key[site.key].status, by_key[site.key].leaves) == ("complete", FANOUT_LEAVES)
    urls = urls_by_site(read_urls(tmp_path / "out"))[site.key]
    assert len(urls) == len(set(urls))
    assert set(urls) == site.expected_urls
    # Only the finishing task re-runs: a leaf whose result the driver already has is not
    # fetched again (that would be a request outside the host's lane).
    leaves = Counter(r.path for r in site.requests(lambda p: p.startswith("/leaf-")))
    assert set(leaves.values()) == {1}, leaves


# -- 4. a task that raises -----------------------------------------------------------------------


# The task function patched in: module-level, so that Dask pickles it by reference (the
# in-process cluster still serializes tasks); what it needs is read from here at call time.
_RAISING: dict[str, Any] = {}


def _raising_walk_site(job: Any) -> Any:
    if job.key == _RAISING["key"]:
        raise RuntimeError("boom in the task")
    return _RAISING["walk_site"](job)


def test_a_task_that_raises_fails_its_site_only(
    inproc: Any, farm_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    farm: Farm = farm_factory(["plain"] * 4 + ["cycle"])
    doomed = farm.sites[2]
    monkeypatch.setitem(_RAISING, "key", doomed.key)
    monkeypatch.setitem(_RAISING, "walk_site", sitescout._batch.walk_site)
    monkeypatch.setattr(sitescout._batch.driver, "walk_site", _raising_walk_site)
    out = tmp_path / "out"
    urls = [s.url for s in farm.sites]
    results = sitescout.batch(urls, out, client=inproc, **OPTIONS)
    by_key = {r.site: r for r in results}
    assert by_key[doomed.key].status == "failed"
    assert by_key[doomed.key].error_class == "RuntimeError"
    assert "boom in the task" in (by_key[doomed.key].error_message or "")
    others = {k: r.status for k, r in by_key.items() if k != doomed.key}
    assert others == {s.key: "complete" for s in farm.sites if s is not doomed}
    row = read_sites(out)[doomed.key]
    assert (row["status"], row["error_class"]) == ("failed", "RuntimeError")
    assert doomed.key not in urls_by_site(read_urls(out))

    # A re-run redoes the failed site, and only it.
    monkeypatch.setattr(sitescout._batch.driver, "walk_site", _RAISING["walk_site"])
    farm.reset_counters()
    again = sitescout.batch(urls, out, client=inproc, **OPTIONS)
    assert {r.site: r.status for r in again} == {
        s.key: "complete" if s is doomed else "skipped" for s in farm.sites
    }
    assert [s for s in farm.sites if s.total_hits()] == [doomed]
    assert set(urls_by_site(read_urls(out))[doomed.key]) == doomed.expected_urls
    before = sorted_rows(read_urls(out))

    # refresh=True walks every site again and replaces its partition: nothing doubles.
    farm.reset_counters()
    fresh = sitescout.batch(urls, out, client=inproc, refresh=True, **OPTIONS)
    assert {r.site: r.status for r in fresh} == {s.key: "complete" for s in farm.sites}
    assert all(s.total_hits() for s in farm.sites)
    assert sorted_rows(read_urls(out)) == before
    assert all((p / MARKER).is_file() for p in partitions(out))


def test_fanout_is_off_for_crawl_delay_base_paths_and_budgets(
    inproc: Any, farm_factory: Any, tmp_path: Path
) -> None:
    farm: Farm = farm_factory(["fanout", "fanout-delay", "fanout"])
    fanned, delayed, budgeted = farm.sites
    base_path = f"{fanned.url}/f/"
    results = sitescout.batch(
        [fanned.url, delayed.url, base_path], tmp_path / "a", client=inproc, fanout=5, **OPTIONS
    )
    by_key = {r.site: r for r in results}
    assert by_key[fanned.key].leaves == FANOUT_LEAVES
    assert by_key[delayed.key].leaves == 0  # robots.txt asks for a Crawl-delay
    assert by_key[f"{fanned.key}/f/"].leaves == 0  # a site with a base path
    with_budget = sitescout.batch(
        [budgeted.url], tmp_path / "b", client=inproc, fanout=5, max_urls=100_000, **OPTIONS
    )
    assert [(r.status, r.leaves) for r in with_budget] == [("complete", 0)]
    assert {r.status for r in results} == {"complete"}
    got = urls_by_site(read_urls(tmp_path / "a"))
    got.update(urls_by_site(read_urls(tmp_path / "b")))
    for key, site in [
        (fanned.key, fanned),
        (delayed.key, delayed),
        (f"{fanned.key}/f/", fanned),
        (budgeted.key, budgeted),
    ]:
        assert len(got[key]) == len(set(got[key])), key
        assert set(got[key]) == site.expected_urls, key


NOT_DEFAULT = """
import json, sys
import distributed
import sitescout

urls, out = json.loads(sys.argv[1]), sys.argv[2]
cluster = distributed.LocalCluster(
    n_workers=1, threads_per_worker=2, processes=False, dashboard_address="127.0.0.1:0"
)
client = distributed.Client(cluster, set_as_default=False)
try:
    results = sitescout.batch(urls, out, client=client, timeout=5.0)
    print(json.dumps({r.site: r.status for r in results}))
finally:
    client.close()
    cluster.close()
"""


def test_a_client_that_is_not_the_default_one(farm_factory: Any, tmp_path: Path) -> None:
    """`client=` is any Client, also one created with set_as_default=False (or while another
    client is the default): the batch must track its futures on that client. In a process of
    its own, so that no other client of this module is the default."""
    farm: Farm = farm_factory(["plain", "cycle"])
    proc = subprocess.run(
        [sys.executable, "-c", NOT_DEFAULT, json.dumps([s.url for s in farm.sites]), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=cli_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[-1]) == {s.key: "complete" for s in farm.sites}


# -- 5. the command line -------------------------------------------------------------------------


def test_cli_json_summary_and_exit_code_one(
    scheduler: str, farm_factory: Any, tmp_path: Path
) -> None:
    farm: Farm = farm_factory(["plain", "plain", "garbage"])
    sites_file = tmp_path / "sites.txt"
    sites_file.write_text("".join(s.url + "\n" for s in farm.sites))
    out = tmp_path / "out"
    proc = run_cli(str(sites_file), "--out", str(out), "--scheduler", scheduler, "--json")
    assert proc.returncode == 1, proc.stderr
    summary = json_summary(proc.stderr)
    assert summary["statuses"] == {"complete": 2, "failed": 1}, summary
    assert summary["sites"] == 3
    assert summary["urls"] + summary["alternates"] == sum(
        len(s.expected_urls or ()) for s in farm.sites
    )
    assert [f["error_class"] for f in summary["failed"]] == ["NotASitemap"]
    rows = read_sites(out)
    assert rows[farm.one("garbage").key]["status"] == "failed"
    assert "statuses" not in proc.stdout  # the summary goes to stderr


def test_cli_without_dask_exits_2_before_any_request(farm_factory: Any, tmp_path: Path) -> None:
    farm: Farm = farm_factory(["plain"])
    shadow = tmp_path / "shadow"
    for name in ("dask", "distributed"):
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(f"raise ImportError('no {name} here')\n")
    sites_file = tmp_path / "sites.txt"
    sites_file.write_text(farm.sites[0].url + "\n")
    env = cli_env(PYTHONPATH=str(shadow))
    proc = run_cli(str(sites_file), "--out", str(tmp_path / "out"), env=env, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "sitescout[dask]" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert farm.total_hits() == 0


# -- 6. the site list through the command line ---------------------------------------------------


def test_cli_reads_a_site_list_from_stdin(
    scheduler: str, farm_factory: Any, tmp_path: Path
) -> None:
    farm: Farm = farm_factory(["plain", "plain", "plain", "cycle"])
    first, second, commented, bare = farm.sites
    text = (
        "# sites for the batch\n"
        "\n"
        f"{first.url}\n"
        "   \n"
        f"   {second.url}/   \n"
        f"# {commented.url}\n"
        f"{bare.key}\n"  # a bare domain: https://, which this plain-HTTP server cannot speak
        f"{first.url}/\n"  # the same site again
    )
    out = tmp_path / "out"
    proc = run_cli("-", "--out", str(out), "--scheduler", scheduler, "--timeout", "0.5", stdin=text)
    assert proc.returncode == 1, proc.stderr  # the https site fails
    rows = read_sites(out)
    assert set(rows) == {first.key, second.key, bare.key}
    assert rows[first.key]["status"] == rows[second.key]["status"] == "complete"
    assert rows[bare.key]["url"].startswith(f"https://{bare.key}")
    assert rows[bare.key]["status"] == "failed"
    assert commented.total_hits() == 0
    assert bare.total_hits() == 0  # only TLS hellos reached it, never an HTTP GET
    got = urls_by_site(read_urls(out))
    assert set(got) == {first.key, second.key}
    assert set(got[first.key]) == first.expected_urls
    assert set(got[second.key]) == second.expected_urls


def test_cli_reads_a_csv_with_a_url_column(
    client: Any, scheduler: str, farm_factory: Any, tmp_path: Path
) -> None:
    """Also: without --scheduler, DASK_SCHEDULER_ADDRESS names the cluster (the requests come
    from this module's workers, not from a local cluster of the command's own)."""
    farm: Farm = farm_factory(["plain", "cycle", "nosite"])
    workers = set(client.run(os.getpid, wait=True).values())
    fetched_by: list[int | None] = []
    farm.sites[0].hooks.append(lambda h: fetched_by.append(owner_pid(h, workers)))
    sites_csv = tmp_path / "sites.csv"
    sites_csv.write_text(
        "name,url,notes\n"
        + "".join(f'"site, {i}",{s.url},"x ""quoted"""\n' for i, s in enumerate(farm.sites))
    )
    out = tmp_path / "out"
    env = cli_env(DASK_SCHEDULER_ADDRESS=scheduler)
    proc = run_cli(str(sites_csv), "--out", str(out), "--quiet", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = read_sites(out)
    assert {k: r["status"] for k, r in rows.items()} == {s.key: "complete" for s in farm.sites}
    got = urls_by_site(read_urls(out))
    assert {k: set(v) for k, v in got.items()} == {s.key: s.expected_urls for s in farm.sites}
    assert fetched_by and None not in fetched_by, fetched_by


def test_batch_keeps_one_state_per_site(inproc: Any, farm_factory: Any, tmp_path: Path) -> None:
    """`state=DIR`: each site (and each leaf of a fanned-out one) keeps its own state, so a
    second batch reads what did not change from it; sites.parquet counts what it saved."""
    farm: Farm = farm_factory(["plain", "fanout", "cycle"])
    state = tmp_path / "state"
    urls = [s.url for s in farm.sites]
    first = sitescout.batch(urls, tmp_path / "a", client=inproc, fanout=5, state=state, **OPTIONS)
    assert {r.status for r in first} == {"complete"}
    fanned = {r.site: r.leaves for r in first}
    assert fanned[farm.sites[1].key] == FANOUT_LEAVES
    assert all(r.unchanged_documents == 0 and r.fetched_documents > 0 for r in first)
    assert all(r.downloaded_bytes > 0 for r in first)
    farm.reset_counters()
    second = sitescout.batch(urls, tmp_path / "b", client=inproc, fanout=5, state=state, **OPTIONS)
    assert {r.status for r in second} == {"complete"}
    before = {r.site: r.fetched_documents for r in first}
    for r in second:  # the farm sends no validators: unchanged bodies are told by their bytes
        assert (r.unchanged_documents, r.fetched_documents) == (before[r.site], 0), r
    rows = read_sites(tmp_path / "b")
    assert {k: row["unchanged_documents"] for k, row in rows.items()} == before
    assert sorted_rows(read_urls(tmp_path / "a")) == sorted_rows(read_urls(tmp_path / "b"))
    kept = sorted(p.name for p in state.iterdir())
    assert len([name for name in kept if name.endswith(".leaves")]) == 1
    assert len([name for name in kept if not name.endswith(".leaves")]) == len(farm.sites)

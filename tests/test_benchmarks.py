"""Every benchmark runs: each script in `benchmarks/` with `--smoke`, as a subprocess.

`--smoke` is the script's real run on tiny sites of the same generators (the whole mix of
`benchmarks/_site.py` still in them), one round, in seconds. A script that no longer runs against
today's code, prints a table without its figures, or reports a wrong URL count fails here. The
figures themselves are not judged: at these sizes start-up dominates them.

Everything stays on loopback: the scripts serve their sites on 127.0.0.0/8 and walk nothing else.
Each run is killed (with everything it started) after `TIMEOUT` seconds. The selected scripts
run `LANES` at a time, started when the first of these tests runs, the slowest first (`batch.py`,
Dask clusters starting and stopping, takes about as long as all the others together).
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
TIMEOUT = 120.0  # seconds per script, a hard cap
LANES = 2  # scripts running at once
NUM = r"\d+\.\d+"  # a figure printed with decimals
COUNT = r"\d[\d,]*"  # a count, with thousands separators


@dataclass(frozen=True, slots=True)
class Smoke:
    """One script's smoke run: extra arguments (optional parts of the real run worth covering)
    and the patterns its stdout must match, each at least `times` times."""

    script: str
    args: tuple[str, ...]
    expect: tuple[tuple[str, int], ...]


def _row(label: str, cells: int) -> str:
    """A markdown table row starting with `label` (`{n}` standing for a number) whose next
    `cells` cells are figures."""
    return (
        r"^\| "
        + re.escape(label).replace(re.escape("{n}"), r"\d+")
        + r" \|"
        + rf" (?:{COUNT}|{NUM}) \|" * cells
    )


SMOKES = {
    s.script: s
    for s in (
        Smoke(
            "walk.py",
            ("--api",),
            (
                # URLs reported, wall s, CPU s, µs CPU/URL, peak RSS MiB, requests: per size.
                (_row("sitescout urls", 6), 2),
                # Start-up: its one URL checked (else WRONG, no match), and taken from the walk.
                (_row("sitescout urls of a one-URL sitemap (start-up)", 3), 2),
                (r"sitescout urls of a one-URL sitemap \(start-up\): its one URL, as expected", 2),
                (
                    rf"after start-up .*\| -?{NUM} µs \(start-up {NUM} s CPU\) \| n/a \|$",
                    1,
                ),
                (_row("sitescout.iter_urls()", 6), 2),
                (_row("sitescout.walk() batches", 6), 2),
                (_row("naive urllib + ElementTree", 6), 2),
                # Built with cargo; its count held to the generator's (else WRONG, no match).
                (_row("native floor (gunzip + every `<loc>` into a hash set, Rust)", 5), 2),
                (rf"AGREE on the unique page URLs: the same {COUNT} \(= the generator's\)", 2),
                (rf"sitescout\.iter_urls\(\): {COUNT} entries, as expected", 2),
                (rf"sitescout\.walk\(\) batches: {COUNT} entries, as expected", 2),
                (rf"^\| sitescout urls \| {NUM} \| {NUM} \| -?{NUM} \|$", 1),  # RSS growth
                (r"smoke site \(the smallest\): .* all 7 lastmod forms", 1),
            ),
        ),
        Smoke(
            "urls.py",
            (),
            tuple(
                (rf"^{re.escape(name)} +{COUNT} URLs/s +{NUM}x urlsplit$", 1)
                for name in ("urlsplit", "normalize_url", "normalize_url + classify")
            ),
        ),
        Smoke(
            "crawl.py",
            (),
            (
                (rf"^run 1: 20 pages \(0 failed\) in {NUM} s = \d+ pages/s; crawler CPU", 1),
                (r"^plain crawl of a 20-page site, concurrency 4: best \d+ pages/s", 1),
            ),
        ),
        Smoke(
            "peers.py",
            (),
            (
                # found == expected (a WRONG row does not match), then wall, CPU, RSS, requests.
                (r"^\| sitescout urls \| (\d[\d,]*) / \1 \|" + rf" (?:{COUNT}|{NUM}) \|" * 4, 3),
                (r"^\| naive urllib \+ ElementTree \| (\d[\d,]*) / \1 \|", 3),
                (r"^\| sitescout finds exactly the expected URLs \|  \| met \|$", 3),
                (r"^\| every document fetched once \| (\d+) of \1 requests \| met \|$", 1),
                (r"^### `(large|deep|cycle)`: ", 3),
            ),
        ),
        Smoke(
            "report.py",
            ("--cli",),
            (
                (rf"^walk of {COUNT} entries .*: .*, each walk yielded them all", 1),
                (
                    rf"^  inside add_batch +wall +{NUM} s +cpu +{NUM} s +=.*\(\d+ ns per entry\)",
                    1,
                ),
                (rf"^  render +{NUM} s, page {COUNT} bytes$", 1),
                (rf"^CLI \(best of 1\): urls -o /dev/null {NUM} s, report -o FILE {NUM} s", 1),
                (rf"^synthetic {COUNT} entries: aggregation cpu {NUM} s \(\d+ ns per entry\)", 1),
            ),
        ),
        Smoke(
            "startup.py",
            (),
            (
                # median s, ÷ the baseline; nothing after (no WRONG).
                *(
                    (rf"^  {re.escape(label)} +{NUM} s +{NUM}x$", 1)
                    for label in (
                        "python -c pass",
                        'python -c "import sitescout"',
                        "sitescout --version",
                        "sitescout --help",
                        "sitescout urls FILE -f txt -q",
                    )
                ),
                (
                    rf"^above the baseline: import -?{NUM} s, --version -?{NUM} s,"
                    rf" --help -?{NUM} s, a one-URL walk -?{NUM} s$",
                    1,
                ),
            ),
        ),
        Smoke(
            "tables.py",
            (),
            tuple(
                # rows, wall s, cpu s, peak RSS MiB, ÷ walk; nothing after (no WRONG).
                (rf"^  {name} +{COUNT} +{NUM} +{NUM} +\d+ +{NUM}x$", 1)
                for name in ("baseline", "walk", "to_arrow", "to_pandas", "dicts")
            ),
        ),
        Smoke(
            "diff.py",
            (),
            (
                # rows, wall s, cpu s, µs cpu/row, rows/s, peak MiB; nothing after (no WRONG).
                *(
                    (rf"^  {name} +{COUNT} +{NUM} +{NUM} +{NUM} +{COUNT} +{COUNT}$", 1)
                    for name in ("read", "diff", "cli", "naive")
                ),
                (rf"^diff ÷ read: wall {NUM}x, cpu {NUM}x .*; peak RSS {COUNT} MiB", 1),
                (rf"^diff ÷ naive: wall {NUM}x, cpu {NUM}x, peak RSS {NUM}x", 1),
            ),
        ),
        Smoke(
            "rewalk.py",
            (),
            (
                # URLs, wall s, CPU s, µs CPU/URL, peak RSS MiB, bytes sent, requests, 304s.
                *(
                    (_row(step, 8), 1)
                    for step in ("fresh", "first", "unchanged", "one changed", "trust")
                ),
                # Every stored document answered 304; with --trust-lastmod only the index asked.
                (r"^\| unchanged \|(?: [^|]* \|){8} (\d+) → \1 / 0 / 0 / 0 \|", 1),
                (r"^\| trust \|(?: [^|]* \|){8} \d+ → 1 / 0 / \d+ / 0 \|", 1),
                (rf"^- output of `unchanged` = the fresh walk's: {COUNT} lines, identical", 1),
                (rf"^- output of `trust` = the fresh walk's of the edited site: {COUNT} lines", 1),
                (rf"^\| bytes of the unchanged re-walk ≤ 2 % of the first walk's \| {NUM} % ", 1),
            ),
        ),
        Smoke(
            "llms.py",
            (),
            (
                (rf"^llms\.txt of {NUM} MiB, distinct links: {COUNT} page links kept in {NUM}", 1),
                (rf"^hostile llms\.txt of {NUM} MiB: {NUM} s CPU, \d+ links$", 1),
                # nothing after the figures: a wrong count would add "; WRONG ..."
                (
                    rf"^walk --source (sitemap|all    ): {COUNT} URLs in {NUM} s wall, "
                    rf"{NUM} s CPU \(best of 1\)$",
                    2,
                ),
            ),
        ),
        Smoke(
            "batch.py",
            (),
            (
                # wall s, URLs/s, [speed-up], driver CPU s ...
                (_row("sequential, 1 process (walk -> ParquetWriter)", 2), 1),
                (_row("`batch(workers=1)`, its own LocalCluster", 2), 1),
                (_row("`batch()`, started LocalCluster 1x{n}", 2), 1),
                (_row("`sitescout urls --format parquet`", 2), 1),
                (_row("`batch(fanout=2)`, started LocalCluster 1x{n}", 2), 1),
                (
                    r"^- every run checked URL by URL against the generator's sets \(all correct\)",
                    1,
                ),
                (rf"^Check of the model on the measured run .*: {NUM} s predicted vs {NUM} s", 1),
            ),
        ),
    )
}


# The slowest first (in a run of all of them, the others fill the second lane meanwhile).
SLOWEST_FIRST = ("batch.py", "walk.py", "tables.py", "peers.py", "report.py", "crawl.py")


@dataclass(frozen=True, slots=True)
class Ran:
    code: int | None  # None: killed at the timeout
    out: str
    err: str
    seconds: float


def _run(script: str, args: tuple[str, ...], tmp: Path) -> Ran:
    """Run `benchmarks/SCRIPT --smoke ARGS` from the project root, its temporary files under
    `tmp` (what a killed run leaves behind goes with it); kill it and everything it started
    (servers, launchers, clusters) if it takes longer than `TIMEOUT`."""
    argv = [sys.executable, str(BENCH / script), "--smoke", *args]
    start = time.monotonic()
    with subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_tree(proc.pid)
            out, err = proc.communicate(timeout=30)
            code = None
    return Ran(code, out, err, time.monotonic() - start)


def _descendants(root: int) -> list[int]:
    """`root` and every process below it, from /proc (parents before children)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(stat.parent.name))
    tree: list[int] = []
    todo = [root]
    while todo and len(tree) < 10_000:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def _kill_tree(root: int) -> None:
    """Kill a smoke run and all it started: its process group, and the processes that lead
    sessions of their own (the benchmarks' launchers start children so). Each is stopped first,
    so that none starts another or leaves the tree unseen while it is walked."""
    stopped: list[int] = []
    for _ in range(5):
        new = [pid for pid in _descendants(root) if pid not in stopped]
        if not new:
            break
        for pid in new:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        stopped += new
    with contextlib.suppress(ProcessLookupError):
        os.killpg(root, signal.SIGKILL)
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _tails(ran: Ran) -> str:
    return f"--- stdout (end)\n{ran.out[-4000:]}\n--- stderr (end)\n{ran.err[-4000:]}"


@pytest.fixture(scope="module")
def smoke_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("smoke")


@pytest.fixture(scope="module")
def smoke_runs(request: pytest.FixtureRequest, smoke_tmp: Path) -> Iterator[dict[str, Future[Ran]]]:
    """The smoke runs of the scripts whose test is selected, `LANES` at a time."""
    selected = {
        item.callspec.params["script"]
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and getattr(item, "originalname", None) == "test_smoke_run"
        and hasattr(item, "callspec")
    }
    order = [s for s in SLOWEST_FIRST if s in selected] + sorted(selected - set(SLOWEST_FIRST))
    with ThreadPoolExecutor(max_workers=LANES, thread_name_prefix="smoke") as pool:
        runs = {
            script: pool.submit(_run, script, SMOKES[script].args, smoke_tmp) for script in order
        }
        try:
            yield runs
        finally:
            for future in runs.values():
                future.cancel()  # those not started yet; the others end within TIMEOUT


@pytest.mark.parametrize("script", sorted(SMOKES))
def test_smoke_run(script: str, smoke_runs: dict[str, Future[Ran]], smoke_tmp: Path) -> None:
    smoke = SMOKES[script]
    future = smoke_runs.get(script)
    if future is None:  # not seen as selected: run it here
        ran = _run(script, smoke.args, smoke_tmp)
    else:
        ran = future.result(timeout=len(smoke_runs) * (TIMEOUT + 30))
    out, err = ran.out, ran.err
    assert ran.code is not None, f"{script} --smoke ran over {TIMEOUT:.0f} s\n{_tails(ran)}"
    assert ran.code == 0, f"{script} --smoke exited {ran.code}\n{_tails(ran)}"
    assert "Traceback" not in out + err, _tails(ran)
    for pattern, times in smoke.expect:
        found = len(re.findall(pattern, out, flags=re.MULTILINE))
        assert found >= times, (
            f"{script}: {pattern!r} matched {found} time(s), {times} expected\n{_tails(ran)}"
        )
    if script != "peers.py":
        # Wrong results are marked WRONG (a peer may be wrong: its rows are not asserted).
        assert "WRONG" not in out, _tails(ran)
    elif not (BENCH / ".peers-venv" / "bin" / "python").exists():
        assert "Peers skipped (usp, advertools, scrapy, trafilatura)" in out, _tails(ran)


def test_every_benchmark_has_a_smoke_run() -> None:
    """A new script in benchmarks/ (not a `_` helper) must be added to SMOKES."""
    scripts = {p.name for p in BENCH.glob("*.py") if not p.name.startswith("_")}
    assert scripts, f"no benchmark found in {BENCH}"
    assert scripts == set(SMOKES), (
        f"not smoke-tested: {sorted(scripts - set(SMOKES))}; "
        f"listed but gone: {sorted(set(SMOKES) - scripts)}"
    )


@pytest.mark.parametrize("script", sorted(SMOKES))
def test_docstring_mentions_smoke(script: str) -> None:
    """The usage at the top of each script says how to run it in smoke mode."""
    doc = ast.get_docstring(ast.parse((BENCH / script).read_text(encoding="utf-8")))
    assert doc is not None and "--smoke" in doc, f"{script}: its docstring does not say --smoke"

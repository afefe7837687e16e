"""Benchmark: sitescout against the Python tools users would pick instead.

Run from the project root with the project's venv (nothing else needs to exist):

    .venv/bin/python benchmarks/peers.py --scenario large             # 1M URLs, median of 3
    .venv/bin/python benchmarks/peers.py --scenario all --repeats 1
    .venv/bin/python benchmarks/peers.py --scenario all --size-scale 0.05 --repeats 1  # a look
    .venv/bin/python benchmarks/peers.py --smoke                      # seconds: does it work?
    .venv/bin/python benchmarks/peers.py --scenario deep --tools sitescout,naive,scrapy
    .venv/bin/python benchmarks/peers.py --scenario large --profile   # + a py-spy profile

The peers live in their own virtualenv, `benchmarks/.peers-venv` (created on first use, reused
while it holds the pinned versions below; never a project dependency): ultimate-sitemap-parser,
advertools, Scrapy and trafilatura. sitescout runs from the project venv as a user would run it,
`sitescout urls SITE -o FILE -q`. The naive baseline is `walk.py`'s: urllib + ElementTree,
sequential, everything in memory.

Scenarios (generated deterministically into `benchmarks/.work/`, expected counts from the
generator, see `_site.py`; `--size-scale` scales the URLs per urlset, not the documents):

- `large`: robots.txt -> index -> 20 gzipped urlsets x 50,000 URLs, no latency (the site of
  `walk.py`'s 1M size).
- `deep`: 4 levels of indexes (1 + 3 + 9 + 27) over 200 urlsets x 500 URLs, every other one
  gzipped: 100,000 URLs in 240 documents, 10 ms latency per request.
- `cycle`: 10,000 URLs in 20 urlsets under 5 indexes that list each other and themselves (each
  urlset listed twice), 10 ms latency per request.

Every scenario carries a real site's mix (see `_site.py`): date-only, offset, `Z`, fractional and
missing `<lastmod>`s, some `<priority>`/`<changefreq>`, three hreflang alternates on every tenth
URL (one of them a URL that is not a `<loc>` anywhere), an `&amp;` query on 3 % of the URLs,
whitespace or newlines around 2 % of the `<loc>`s, and page URLs on the server's `127.0.0.1:PORT`.

Each site is served from memory on 127.0.0.1 by `_site.SiteServer` (threaded, keep-alive,
TCP_NODELAY, counting requests). Every tool runs as its own process and writes the URLs it found
to a file (one per line; sitescout its JSON lines), counted afterwards against the generator's
exact sets: "found" is the expected URLs it reported (distinct), anything else is listed as
unexpected. Wall time covers the whole process, interpreter start-up included; peak RSS is the
process's `ru_maxrss`, read with `os.wait4` by a small launcher process started first (see
`walk.Launcher`: a child forked from this script, which holds the expected URL sets, would
inherit its high-water mark). Requests are the server's count for that run. Tools alternate
within each round (the order rotates every round) so drift on the machine hits all alike; the
table shows medians. A run longer than `--timeout` (300 s), or whose RSS passes `--max-rss-mib`
(4 GiB: a walk that never ends must not take a shared machine down with it), is killed with
whatever it started and reported as such, and that tool is not run again in that scenario.

sitescout's expected count includes hreflang alternates, which it emits as entries of their own
(`alternate_of` set); the peers list `<loc>`s only, so theirs does not. A tool that does not find
exactly the expected URLs is marked WRONG.

`--smoke` runs every scenario once on tiny sites of the same generators (`large`: 4 urlsets x 100
URLs; `deep`: the same 4 levels of indexes over 30 urlsets x 10 URLs; `cycle`: the same 5 indexes
over 20 urlsets x 10 URLs; latency as above, the whole mix in each), generated into a temporary
directory instead of `.work/`: seconds, for the test suite (`tests/test_benchmarks.py`). It never
creates or updates the peers' virtualenv: when that is absent (the usual case) it runs sitescout
and the naive walker and says the peers were skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from _site import (
    WORK_DIR,
    SiteServer,
    SiteStats,
    check_smoke_mix,
    ensure_flat_index,
    ensure_site,
    iter_alternate_only_urls,
    iter_page_urls,
    work_dir,
)
from walk import Launcher, Run, _child_argv, _child_naive, _version

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
ADAPTERS = BENCH_DIR / "_peers"
PEERS_VENV = BENCH_DIR / ".peers-venv"
PEERS_PYTHON = PEERS_VENV / "bin" / "python"
PEERS_MARKER = PEERS_VENV / "sitescout-peers.json"
# Pinned so that numbers stay comparable between runs; bump deliberately.
PEER_REQUIREMENTS = (
    "ultimate-sitemap-parser==1.8.1",
    "advertools==0.18.0",
    "Scrapy==2.19.0",
    "trafilatura==2.3.1",
    # justext (trafilatura's) imports lxml.html.clean, a project of its own since lxml 5.2,
    # and asks for it through an extra that lxml 6 no longer declares.
    "lxml_html_clean==0.4.6",
)
PROFILER_REQUIREMENT = "py-spy==0.4.3"
PEER_DISTRIBUTIONS = ("ultimate-sitemap-parser", "advertools", "Scrapy", "trafilatura")
MIB = 1024 * 1024
PEAK_RSS_GOAL_MIB = 100.0
SMOKE_TIMEOUT = 60.0


# --- scenarios ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """Where and how big the sites are: `root` holds them, `scale` scales the URLs per urlset;
    `smoke` picks the tiny shapes of `--smoke` instead."""

    root: Path
    scale: float = 1.0
    smoke: bool = False


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    latency: float  # seconds slept by the server before every response
    build: Callable[[Shape], tuple[SiteStats, Path]]  # -> the generated (or cached) site
    summary: Callable[[SiteStats], str]


def _per(n: int, scale: float) -> int:
    return max(1, round(n * scale))


def build_large(shape: Shape) -> tuple[SiteStats, Path]:
    shards, per_shard = (4, 100) if shape.smoke else (20, _per(50_000, shape.scale))
    directory = shape.root / f"flat-{shards}x{per_shard}"
    stats, _ = ensure_flat_index(directory, shards, per_shard)
    return stats, directory


def build_deep(shape: Shape) -> tuple[SiteStats, Path]:
    leaves, per_leaf = (30, 10) if shape.smoke else (200, _per(500, shape.scale))
    params = {"index_levels": 4, "fanout": 3, "leaves": leaves, "per_leaf": per_leaf}
    directory = shape.root / f"deep-4x3-{leaves}x{per_leaf}"
    stats, _ = ensure_site(directory, "deep", **params)
    return stats, directory


def build_cycle(shape: Shape) -> tuple[SiteStats, Path]:
    per_leaf = 10 if shape.smoke else _per(500, shape.scale)
    params = {"indexes": 5, "leaves": 20, "per_leaf": per_leaf}
    directory = shape.root / f"cycle-5-20x{per_leaf}"
    stats, _ = ensure_site(directory, "cycle", **params)
    return stats, directory


def _mix(s: SiteStats) -> str:
    return (
        f"the mixed lastmods, {s.hreflang_pages:,} with hreflang ({s.alternate_only_urls:,} "
        f"alternate-only URLs), {s.query_locs:,} with an `&amp;` query, {s.whitespace_locs:,} "
        "with whitespace in `<loc>`"
    )


SCENARIOS = {
    "large": Scenario(
        "large",
        0.0,
        build_large,
        lambda s: (
            f"{s.page_urls:,} URLs in {s.shards} gzipped urlsets under one index, {_mix(s)}, "
            "no added latency"
        ),
    ),
    "deep": Scenario(
        "deep",
        0.010,
        build_deep,
        lambda s: (
            f"{s.page_urls:,} URLs in {s.shards} urlsets ({s.gzipped_documents} gzipped) under "
            f"{s.index_levels} levels of indexes ({s.index_documents} indexes, {s.documents} "
            f"documents), {_mix(s)}, 10 ms latency per request"
        ),
    ),
    "cycle": Scenario(
        "cycle",
        0.010,
        build_cycle,
        lambda s: (
            f"{s.page_urls:,} URLs in {s.shards} urlsets under {s.index_documents} indexes that "
            f"list each other and themselves (each urlset listed by two), {_mix(s)}, 10 ms "
            "latency per request"
        ),
    ),
}


# --- tools -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tool:
    key: str
    label: str
    argv: Callable[[str, str], list[str]]  # (site URL, output file) -> command line
    jsonl: bool = False  # output is sitescout's JSON lines, not one URL a line
    peer: bool = True  # a tool from the peers' venv (a candidate for "fastest correct peer")


# `--sitescout` replaces it (another build or install).
SITESCOUT_EXE = Path(sys.executable).parent / "sitescout"


def _sitescout_argv(site_url: str, output: str) -> list[str]:
    exe = SITESCOUT_EXE
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "sitescout"]
    return [*command, "urls", site_url, "--output", output, "--quiet"]


def _adapter(script: str, *extra: str) -> Callable[[str, str], list[str]]:
    def argv(site_url: str, output: str) -> list[str]:
        return [str(PEERS_PYTHON), str(ADAPTERS / script), site_url, output, *extra]

    return argv


TOOLS = {
    t.key: t
    for t in (
        Tool("sitescout", "sitescout urls", _sitescout_argv, jsonl=True, peer=False),
        Tool(
            "naive",
            "naive urllib + ElementTree",
            lambda site, out: _child_argv(_child_naive, site, out),
            peer=False,
        ),
        Tool("usp", "ultimate-sitemap-parser", _adapter("run_usp.py")),
        Tool("advertools", "advertools sitemap_to_df", _adapter("run_advertools.py")),
        Tool("scrapy", "Scrapy SitemapSpider", _adapter("run_scrapy.py")),
        Tool("trafilatura", "trafilatura sitemap_search", _adapter("run_trafilatura.py")),
    )
}


# --- the peers' virtualenv ---------------------------------------------------------------------


def _venv_python_version() -> str:
    return platform.python_version()


def peers_venv_ready(extra: tuple[str, ...] = ()) -> bool:
    """Whether `.peers-venv` exists and holds the pinned requirements (nothing is installed)."""
    if not (PEERS_PYTHON.exists() and PEERS_MARKER.is_file()):
        return False
    try:
        saved = json.loads(PEERS_MARKER.read_text())
    except (OSError, ValueError):
        return False
    had = set(saved.get("requirements", []))
    wanted = {*PEER_REQUIREMENTS, *extra}
    return saved.get("python") == _venv_python_version() and wanted <= had


def ensure_peers_venv(extra: tuple[str, ...] = ()) -> None:
    """Create `.peers-venv` (or reuse it while its marker lists the same requirements)."""
    wanted = sorted({*PEER_REQUIREMENTS, *extra})
    if peers_venv_ready(extra):
        return
    if PEERS_PYTHON.exists() and PEERS_MARKER.is_file():
        saved = json.loads(PEERS_MARKER.read_text())
        had = set(saved.get("requirements", []))
        # Keep what was added on demand (the profiler) unless this run pins it differently.
        pinned = {_dist_name(r) for r in wanted}
        wanted = sorted({*wanted, *(r for r in had if _dist_name(r) not in pinned)})
    if PEERS_PYTHON.exists():
        probe = [str(PEERS_PYTHON), "-c", "import platform; print(platform.python_version())"]
        version = subprocess.run(probe, capture_output=True, text=True).stdout.strip()
        if version != _venv_python_version():
            print(f"== {PEERS_VENV.name}: Python {version}, rebuilding", file=sys.stderr)
            shutil.rmtree(PEERS_VENV)
    if not PEERS_PYTHON.exists():
        print(f"== creating {PEERS_VENV}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    print(f"== installing into {PEERS_VENV.name}: {' '.join(wanted)}", file=sys.stderr)
    pip = [str(PEERS_PYTHON), "-m", "pip", "install", "--disable-pip-version-check", *wanted]
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"pip install into {PEERS_VENV} failed (exit {done.returncode})")
    record = {"python": _venv_python_version(), "requirements": wanted}
    PEERS_MARKER.write_text(json.dumps(record, indent=2) + "\n")


def _dist_name(requirement: str) -> str:
    return requirement.split("==", 1)[0].strip().lower()


def peer_versions() -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m\n"
        f"print(json.dumps({{d: m.version(d) for d in {list(PEER_DISTRIBUTIONS)!r}}}))"
    )
    done = subprocess.run([str(PEERS_PYTHON), "-c", code], capture_output=True, text=True)
    return dict(json.loads(done.stdout)) if done.returncode == 0 else {}


# --- one run -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    """One tool, one run: what the launcher measured and what its output held."""

    run: Run
    requests: int
    lines: int = 0
    distinct: int = 0
    pages: int = 0  # expected page URLs (<loc>) among those reported
    alternates: int = 0  # hreflang-only URLs among those reported
    unexpected: list[str] = field(default_factory=list)
    unexpected_count: int = 0
    missing_examples: list[str] = field(default_factory=list)
    output_ok: bool = False

    @property
    def killed(self) -> bool:
        return self.run.timed_out or self.run.over_memory

    @property
    def ok(self) -> bool:
        return self.run.returncode == 0 and not self.killed and self.output_ok


@dataclass(slots=True)
class Expected:
    pages: set[str]
    alternates: set[str]


def _output_urls(path: Path, jsonl: bool) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            if jsonl and line.startswith("{"):
                yield str(json.loads(line).get("url", ""))
            else:
                yield line


def inspect_output(outcome: Outcome, path: Path, tool: Tool, expected: Expected) -> None:
    if not path.exists():
        return
    seen: set[str] = set()
    for url in _output_urls(path, tool.jsonl):
        outcome.lines += 1
        seen.add(url)
    outcome.output_ok = True
    outcome.distinct = len(seen)
    outcome.pages = len(seen & expected.pages)
    outcome.alternates = len(seen & expected.alternates)
    extra = seen - expected.pages - expected.alternates
    outcome.unexpected_count = len(extra)
    outcome.unexpected = sorted(extra)[:3]
    if outcome.pages < len(expected.pages):
        outcome.missing_examples = sorted(expected.pages - seen)[:3]


def run_once(
    launcher: Launcher,
    tool: Tool,
    server: SiteServer,
    expected: Expected,
    out_dir: Path,
    timeout: float,
    max_rss_mib: float,
) -> Outcome:
    output = out_dir / f"{tool.key}.out"
    output.unlink(missing_ok=True)
    server.reset_counts()
    threads = threading.active_count()
    argv = tool.argv(server.origin + "/", str(output))
    run = launcher.run(argv, timeout=timeout, max_rss_mib=max_rss_mib)
    # The handler threads of a killed client may still be reading requests it sent: let them
    # finish (and count) before the count is read and the next tool starts.
    deadline = time.monotonic() + 30
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)
    outcome = Outcome(run, sum(server.request_counts().values()))
    if run.returncode == 0 and not run.timed_out:
        inspect_output(outcome, output, tool, expected)
    output.unlink(missing_ok=True)
    return outcome


# --- a scenario --------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    tool: Tool
    expected: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def good(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.ok]

    @property
    def killed(self) -> Outcome | None:
        return next((o for o in self.outcomes if o.killed), None)

    @property
    def failed(self) -> Outcome | None:
        return next((o for o in self.outcomes if not o.ok), None)

    def wall(self) -> float | None:
        good = self.good
        return statistics.median(o.run.wall for o in good) if good else None

    def cpu(self) -> float | None:
        good = self.good
        return statistics.median(o.run.cpu for o in good) if good else None

    def rss_mib(self) -> float | None:
        good = self.good or self.outcomes
        return statistics.median(o.run.rss_kib for o in good) / 1024 if good else None

    def requests(self) -> int | None:
        runs = self.good or self.outcomes
        return round(statistics.median(o.requests for o in runs)) if runs else None

    def found(self) -> int | None:
        good = self.good
        return self._found_of(good[0]) if good else None

    def correct(self) -> bool:
        good = self.good
        return bool(good) and all(
            self._found_of(o) == self.expected and o.unexpected_count == 0 for o in good
        )

    def _found_of(self, o: Outcome) -> int:
        return o.pages + (o.alternates if self.tool.jsonl else 0)


@dataclass(slots=True)
class ScenarioResult:
    scenario: Scenario
    stats: SiteStats
    rows: list[Row]
    repeats: int
    timeout: float
    max_rss_mib: float
    load: list[float]
    profile: list[str] = field(default_factory=list)


def run_scenario(
    launcher: Launcher, scenario: Scenario, tools: list[Tool], args: Options, root: Path
) -> ScenarioResult:
    start = time.perf_counter()
    stats, directory = scenario.build(Shape(root, args.size_scale, args.smoke))
    if args.smoke:
        print("   " + check_smoke_mix(stats.page_urls, scenario.name), file=sys.stderr)
    print(
        f"== {scenario.name}: {scenario.summary(stats)} "
        f"(site ready in {time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
    )
    rows = [Row(t, stats.distinct_urls if t.key == "sitescout" else stats.page_urls) for t in tools]
    shm = Path("/dev/shm")
    tmp_parent = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    load = [os.getloadavg()[0]]
    with (
        SiteServer(directory, latency=scenario.latency) as server,
        tempfile.TemporaryDirectory(prefix="sitescout-peers-", dir=tmp_parent) as tmp,
    ):
        expected = Expected(
            set(iter_page_urls(stats, server.origin)),
            set(iter_alternate_only_urls(stats, server.origin)),
        )
        print(f"   serving {directory.name} at {server.origin}/", file=sys.stderr)
        for k in range(args.repeats):
            order = rows[k % len(rows) :] + rows[: k % len(rows)]
            for row in order:
                if row.killed:
                    continue
                outcome = run_once(
                    launcher, row.tool, server, expected, Path(tmp), args.timeout, args.max_rss_mib
                )
                row.outcomes.append(outcome)
                _log_run(row, outcome, k, args.repeats)
        load.append(os.getloadavg()[0])
        result = ScenarioResult(
            scenario, stats, rows, args.repeats, args.timeout, args.max_rss_mib, load
        )
        if args.profile and any(t.key == "sitescout" for t in tools):
            result.profile = profile_sitescout(server, Path(tmp), args.timeout)
    return result


def _log_run(row: Row, o: Outcome, k: int, n: int) -> None:
    state = f"exit {o.run.returncode}"
    if o.run.over_memory:
        state = "killed (RSS cap)"
    elif o.run.timed_out:
        state = "killed (timeout)"
    print(
        f"   [{k + 1}/{n}] {row.tool.key:<11} {o.run.wall:7.2f} s ({o.run.cpu:6.2f} s CPU) "
        f"{o.run.rss_kib / 1024:8.1f} MiB "
        f"{o.requests:>6} requests  {o.distinct:>9,} distinct URLs  {state}",
        file=sys.stderr,
    )
    if o.run.returncode != 0 and not o.killed:
        tail = o.run.stderr.strip().splitlines()[-15:]
        print("      " + "\n      ".join(tail), file=sys.stderr)


# --- profile -----------------------------------------------------------------------------------


def profile_sitescout(server: SiteServer, out_dir: Path, timeout: float) -> list[str]:
    """Run sitescout once under py-spy (not timed); the top functions by own and total time."""
    ensure_peers_venv((PROFILER_REQUIREMENT,))
    raw = out_dir / "profile.txt"
    output = out_dir / "profile.out"
    argv = [
        str(PEERS_VENV / "bin" / "py-spy"),
        "record",
        "--format",
        "raw",
        "--rate",
        "250",
        "--output",
        str(raw),
        "--",
        *_sitescout_argv(server.origin + "/", str(output)),
    ]
    print("   profiling sitescout with py-spy", file=sys.stderr)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    output.unlink(missing_ok=True)
    if done.returncode != 0 or not raw.exists():
        return [f"py-spy failed (exit {done.returncode}): {done.stderr.strip()[-500:]}"]
    lines = summarize_profile(raw.read_text().splitlines())
    keep = WORK_DIR / "profiles"
    keep.mkdir(parents=True, exist_ok=True)
    saved = keep / f"sitescout-{int(time.time())}.txt"
    shutil.copy(raw, saved)
    lines.append(
        f"Collapsed stacks: `{saved.relative_to(BENCH_DIR.parent)}` (feed to any flame graph tool)."
    )
    return lines


def _frame(frame: str) -> tuple[str, str, str]:
    """`func (path/to/module.py:123)` -> (`func`, `path/to/module.py`, `123`)."""
    name, _, where = frame.partition(" (")
    path, _, line = where.rstrip(")").rpartition(":")
    return name, path, line


def summarize_profile(raw: list[str], top: int = 15) -> list[str]:
    """Own time per function and per line, total time per sitescout function."""
    own: Counter[str] = Counter()
    own_line: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in raw:
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame(f) for f in stack.split(";") if f.endswith(")")]
        if not frames:
            continue
        samples += count
        name, path, lineno = frames[-1]
        module = path.rsplit("/", 1)[-1]
        own[f"{name} ({module})"] += count
        own_line[f"{path}:{lineno} {name}"] += count
        for name, path, _ in {(n, p, "") for n, p, _ in frames}:
            if path.startswith("sitescout/"):
                total[f"{name} ({path.removeprefix('sitescout/')})"] += count
    if not samples:
        return ["py-spy recorded no samples"]

    def pct(n: int) -> str:
        return f"{100 * n / samples:.1f}"

    out = [
        f"py-spy, {samples:,} samples at 250 Hz of threads that were busy (waits not sampled); "
        "time in C code (lxml, zlib, json) counts as the Python function that called it.\n",
        "| own % | function | total % | sitescout function |",
        "|---:|---|---:|---|",
    ]
    own_top, total_top = own.most_common(top), total.most_common(top)
    for i in range(max(len(own_top), len(total_top))):
        left = (pct(own_top[i][1]), f"`{own_top[i][0]}`") if i < len(own_top) else ("", "")
        right = (pct(total_top[i][1]), f"`{total_top[i][0]}`") if i < len(total_top) else ("", "")
        out.append(f"| {left[0]} | {left[1]} | {right[0]} | {right[1]} |")
    out += ["", "| own % | line |", "|---:|---|"]
    out += [f"| {pct(n)} | `{where}` |" for where, n in own_line.most_common(top)]
    return out


# --- report ------------------------------------------------------------------------------------


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return ""
    return f"{value / base:.2f}×"


def print_result(res: ScenarioResult, versions: dict[str, str]) -> None:
    stats = res.stats
    print(f"\n### `{res.scenario.name}`: {res.scenario.summary(stats)}\n")
    load = " -> ".join(f"{x:.2f}" for x in res.load)
    print(
        f"Median of {res.repeats} (whole process: wall, CPU = user + system, peak RSS), "
        f"{res.timeout:.0f} s timeout; a walk that fetches each document once makes "
        f"{stats.documents + 1} requests (robots.txt + {stats.documents} documents). "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, 1-min load {load}.\n"
    )
    base = next((r for r in res.rows if r.tool.key == "sitescout"), None)
    base_wall = base.wall() if base else None
    base_rss = base.rss_mib() if base else None
    print(
        "| tool | URLs found / expected | wall s | CPU s | peak RSS MiB | requests "
        "| wall ÷ sitescout | RSS ÷ sitescout |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    notes: list[str] = []
    for row in res.rows:
        label = row.tool.label
        if row.tool.peer:
            label += f" {versions.get(_dist_of(row.tool.key), '')}".rstrip()
        wall, rss, reqs = row.wall(), row.rss_mib(), row.requests()
        killed = row.killed
        if killed is not None:
            if killed.run.over_memory:
                found = f"killed at {res.max_rss_mib:,.0f} MiB RSS"
                wall_text = f"> {killed.run.wall:.0f}"
                floor = killed.run.wall
            else:
                found = f"killed after {res.timeout:.0f} s"
                wall_text = f"> {res.timeout:.0f}"
                floor = res.timeout
            rss = killed.run.rss_kib / 1024
            reqs_text = f"≥ {killed.requests:,}"
            ratio_wall = f"> {floor / base_wall:.0f}×" if base_wall else ""
        elif row.good:
            found = f"{row.found():,} / {row.expected:,}"
            if not row.correct():
                found += " **WRONG**"
            wall_text = f"{wall:.2f}"
            reqs_text = f"{reqs:,}"
            ratio_wall = "" if row is base else _ratio(wall, base_wall)
        else:
            failed = row.failed
            code = failed.run.returncode if failed else "?"
            found = f"failed (exit {code})"
            wall_text, reqs_text, ratio_wall = "", f"{reqs:,}" if reqs is not None else "", ""
        rss_text = f"{rss:.0f}" if rss is not None else ""
        cpu = row.cpu()
        cpu_text = f"{cpu:.2f}" if cpu is not None else ""
        ratio_rss = "" if row is base else _ratio(rss, base_rss)
        print(
            f"| {label} | {found} | {wall_text} | {cpu_text} | {rss_text} | {reqs_text} "
            f"| {ratio_wall} | {ratio_rss} |"
        )
        notes += _row_notes(row)
    print_targets(res, base)
    if notes:
        print()
        for note in notes:
            print(f"- {note}")
    if res.profile:
        print("\nWhere sitescout spends its time in this scenario:\n")
        for line in res.profile:
            print(line)


def _dist_of(key: str) -> str:
    return {
        "usp": "ultimate-sitemap-parser",
        "advertools": "advertools",
        "scrapy": "Scrapy",
        "trafilatura": "trafilatura",
    }.get(key, key)


def _row_notes(row: Row) -> list[str]:
    notes: list[str] = []
    name = row.tool.label
    failed = row.failed
    if failed is not None and not failed.killed:
        tail = " / ".join(failed.run.stderr.strip().splitlines()[-3:])[-300:]
        notes.append(f"{name}: exit {failed.run.returncode}: {tail}")
    good = row.good
    if not good:
        return notes
    o = good[0]
    if o.lines != o.distinct:
        notes.append(f"{name}: {o.lines - o.distinct:,} duplicate lines in its output")
    if o.alternates and row.tool.jsonl:
        notes.append(f"{name}: found includes {o.alternates:,} hreflang alternates")
    elif o.alternates:
        notes.append(f"{name}: also reported {o.alternates:,} hreflang alternates")
    if o.missing_examples:
        notes.append(
            f"{name}: missed {row.expected - row._found_of(o):,} URLs, e.g. "
            + ", ".join(f"`{u!r}`" for u in o.missing_examples[:2])
        )
    if o.unexpected_count:
        notes.append(
            f"{name}: {o.unexpected_count:,} unexpected URLs, e.g. "
            + ", ".join(f"`{u!r}`" for u in o.unexpected[:2])
        )
    return notes


def print_targets(res: ScenarioResult, base: Row | None) -> None:
    """The issue's targets for this scenario (naive is a baseline, not a peer)."""
    if base is None or base.wall() is None:
        return
    wall, rss = base.wall(), base.rss_mib()
    assert wall is not None and rss is not None
    peers = [r for r in res.rows if r.tool.peer and r.correct()]
    naive = next((r for r in res.rows if r.tool.key == "naive" and r.good), None)
    checks: list[tuple[str, str, bool | None]] = []
    name = res.scenario.name
    wall_goal = {"large": 5.0, "deep": 3.0}.get(name)
    naive_goal = {"large": 3.0, "deep": 2.0}.get(name)
    if wall_goal:
        fastest = min(peers, key=lambda r: r.wall() or 0.0, default=None)
        if fastest is None:
            checks.append((f"wall ≤ 1/{wall_goal:.0f} of the fastest correct peer", "none", None))
        else:
            ratio = (fastest.wall() or 0.0) / wall
            checks.append(
                (
                    f"wall ≤ 1/{wall_goal:.0f} of the fastest correct peer ({fastest.tool.label})",
                    f"1/{ratio:.2f}",
                    ratio >= wall_goal,
                )
            )
    if naive_goal and naive is not None:
        ratio = (naive.wall() or 0.0) / wall
        label = f"wall ≤ 1/{naive_goal:.0f} of the naive walker"
        checks.append((label, f"1/{ratio:.2f}", ratio >= naive_goal))
    if name == "large":
        checks.append(
            (f"peak RSS ≤ {PEAK_RSS_GOAL_MIB:.0f} MiB", f"{rss:.0f} MiB", rss <= PEAK_RSS_GOAL_MIB)
        )
        leanest = min(peers, key=lambda r: r.rss_mib() or 0.0, default=None)
        if leanest is not None:
            ratio = (leanest.rss_mib() or 0.0) / rss
            checks.append(
                (
                    f"peak RSS ≤ 1/2 of the leanest correct peer ({leanest.tool.label})",
                    f"1/{ratio:.2f}",
                    ratio >= 2,
                )
            )
    if name == "cycle":
        reqs = base.requests() or 0
        want = res.stats.documents + 1
        checks.append(("every document fetched once", f"{reqs} of {want} requests", reqs == want))
    checks.append(("sitescout finds exactly the expected URLs", "", base.correct()))
    print("\n| target | measured | verdict |\n|---|---:|---|")
    for label, measured, ok in checks:
        verdict = "n/a" if ok is None else ("met" if ok else "**NOT met**")
        print(f"| {label} | {measured} | {verdict} |")


# --- main --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    scenario: str
    repeats: int
    tools: str
    size_scale: float
    timeout: float
    max_rss_mib: float
    profile: bool
    sitescout: str
    smoke: bool


def parse_args() -> Options:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the table shows medians")
    parser.add_argument(
        "--tools",
        default=",".join(TOOLS),
        help=f"comma-separated, from: {', '.join(TOOLS)} (default: all)",
    )
    parser.add_argument(
        "--size-scale",
        type=float,
        default=1.0,
        help="scale the URLs per urlset (documents stay the same), e.g. 0.05 for a quick look",
    )
    parser.add_argument("--timeout", type=float, default=300, help="seconds per tool run")
    parser.add_argument(
        "--max-rss-mib",
        type=float,
        default=4096,
        help="kill a tool run whose RSS passes this (a runaway walk on a shared machine); 0: never",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="after the timed runs, profile one sitescout run per scenario with py-spy",
    )
    parser.add_argument(
        "--sitescout",
        default=str(SITESCOUT_EXE),
        help="the sitescout executable to measure (default: the one next to this Python)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run to check that the benchmark works: every scenario on tiny sites, one "
        "round, in a temporary directory; the peers only if their venv is already there",
    )
    ns = parser.parse_args()
    if ns.smoke:
        if ns.profile:
            parser.error("--smoke does not profile (py-spy would be installed)")
        ns.scenario, ns.repeats, ns.timeout = "all", 1, min(ns.timeout, SMOKE_TIMEOUT)
    if ns.repeats < 1:
        parser.error("--repeats must be at least 1")
    if not 0 < ns.size_scale <= 1:
        parser.error("--size-scale must be in (0, 1]")
    unknown = set(ns.tools.split(",")) - set(TOOLS)
    if unknown:
        parser.error(f"unknown tools: {', '.join(sorted(unknown))}")
    return Options(**vars(ns))


def main() -> int:
    global SITESCOUT_EXE
    args = parse_args()
    SITESCOUT_EXE = Path(args.sitescout)
    tools = [TOOLS[key] for key in dict.fromkeys(args.tools.split(","))]
    versions: dict[str, str] = {}
    skipped = ""
    if args.smoke and any(t.peer for t in tools) and not peers_venv_ready():
        # A smoke run installs nothing: without the peers' venv it measures what it can.
        skipped = ", ".join(t.key for t in tools if t.peer)
        tools = [t for t in tools if not t.peer]
        print(f"== peers skipped ({skipped}): no {PEERS_VENV.name} ready", file=sys.stderr)
    if any(t.peer for t in tools):
        ensure_peers_venv()
        versions = peer_versions()
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    results: list[ScenarioResult] = []
    # The launcher starts first, while this process is still small (see walk.Launcher).
    with Launcher() as launcher, work_dir(args.smoke) as root:
        for name in names:
            results.append(run_scenario(launcher, SCENARIOS[name], tools, args, root))
            sys.stderr.flush()
            print_result(results[-1], versions)
            sys.stdout.flush()
    peers = ", ".join(f"{k} {v}" for k, v in versions.items())
    command = " ".join([".venv/bin/python", "benchmarks/peers.py", *sys.argv[1:]])
    print(
        f"\nsitescout {_version('sitescout')}"
        + (f"; peers: {peers}" if peers else "")
        + f". Command: `{command}`"
    )
    if skipped:
        print(
            f"Peers skipped ({skipped}): their virtualenv `{PEERS_VENV.relative_to(ROOT)}` is "
            "absent or out of date, and a smoke run installs nothing (run without --smoke to "
            "create it)."
        )
    if args.smoke:
        print("Smoke run: tiny sites, the figures only show that every tool ran and was right.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: re-walking a site with `sitescout urls --state DIR`, against walking it afresh, on
a server that honours conditional requests, measured in the same run.

Run from the project root (the project venv has everything it needs):

    .venv/bin/python benchmarks/rewalk.py                     # 1,000,000 URLs, median of 3
    .venv/bin/python benchmarks/rewalk.py --repeat 1          # one round
    .venv/bin/python benchmarks/rewalk.py --size 250k         # a smaller site of the same shape
    .venv/bin/python benchmarks/rewalk.py --smoke             # seconds: does it still work?

Site: the 1M site of `walk.py` (robots.txt -> a sitemap index -> 20 gzipped urlsets of
`--per-shard` 50,000 URLs, the mix of `_site.py`: every lastmod form, hreflang alternates,
`&amp;` queries, whitespace around `<loc>`s), generated once into `benchmarks/.work/` and reused
while its manifest matches. It is served from memory on 127.0.0.1 by
`_site.SiteServer(validators=True)`: every file has a strong ETag (a hash of its bytes) and a
Last-Modified, and a conditional request that matches gets a 304 without a body (If-None-Match
decides when sent, as RFC 9110 says). The server counts the requests and the body bytes it sends.

Measured in every round, in this order, each a child process of its own
`sitescout urls SITE -f jsonl -o /dev/null -q --json` (the venv's console script) with:

- `fresh`: no `--state`: the baseline, what a walk costs without a state;
- `first`: `--state DIR` into an empty DIR: what storing every document costs;
- `unchanged`: `--state DIR` again, nothing changed: every document should come back 304;
- `one changed`: one urlset of the 20 edited first (one page more: new bytes, ETag and
  Last-Modified; its `<lastmod>` in the index moved, so the index changes too), then
  `--state DIR`;
- `trust`: `--state DIR --trust-lastmod`, nothing changed since: the children whose index
  `<lastmod>` did not move are read from DIR without a request (skipped, and said so, when the
  index gives its children no `<lastmod>`).

Each round starts from the site as generated and an empty DIR. Wall and CPU (user + system from
`os.wait4`) cover the whole process, start-up and imports included; peak RSS is its `ru_maxrss`.
Children are started by `walk.py`'s launcher, a small process started first, so that no child
inherits this script's memory high-water mark (it holds the served site). The table shows medians
of `--repeat` rounds, with the `state` counts of the walk's JSON summary, and the ratios the
issue asks about, each against a run of the same round: bytes of the unchanged re-walk ÷ bytes
of the first walk (target ≤ 2 %), its wall ÷ the first walk's (target ≤ 20 %), bytes with 1 of
20 urlsets changed ÷ the first walk's (target ≤ 10 %), and the size of DIR on disk.

After the timed rounds every step runs once more (a round of its own, fresh and with its own
DIR) writing its output to a file, and the sorted lines are compared: the first and the
unchanged walks against the fresh walk's, the walk after the edit and the trusting one against
a fresh walk of the edited site. The fresh walks must report the generator's distinct URLs (one
more after the edit), each once. A step whose output differs is marked WRONG and gets no target
credited.

`--smoke` is the same on a tiny site of the same generator (20 urlsets of 20 URLs, the whole mix
still in them), one round, generated into a temporary directory instead of `.work/`: seconds, for
the test suite (`tests/test_benchmarks.py`). Its figures say only that every step ran and was
right; the targets are judged on the full site.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _site import SiteServer, SiteStats, check_smoke_mix, work_dir
from walk import Launcher, Medians, Run, _size, _version, prepare

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = ROOT / ".venv" / "bin"
MIB = 1024 * 1024

# The targets, each a fraction of the first walk's figure.
TARGET_UNCHANGED_BYTES = 0.02
TARGET_UNCHANGED_WALL = 0.20
TARGET_CHANGED_BYTES = 0.10
SMOKE_SIZE = 400
SMOKE_PER_SHARD = 20
SMOKE_TIMEOUT = 60.0

# (key, label): the order the steps run in, every round (each needs the state the one before
# left).
STEPS = (
    ("fresh", "fresh"),
    ("first", "first"),
    ("unchanged", "unchanged"),
    ("changed", "one changed"),
    ("trust", "trust"),
)
LABELS = dict(STEPS)


@dataclass(slots=True)
class Measure(Medians):
    """One step's runs: figures per round, and what its last run's summary said."""

    key: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)  # body bytes the server sent
    requests: list[int] = field(default_factory=list)
    not_modified: list[int] = field(default_factory=list)  # 304s the server sent
    rows: int | None = None  # the summary's urls + alternates
    state: dict[str, Any] | None = None
    failure: str | None = None
    wrong: str | None = None  # its output is not what a fresh walk gives

    @property
    def label(self) -> str:
        return LABELS[self.key]

    @property
    def bytes(self) -> int:
        return int(statistics.median_low(self.sent))


@dataclass(slots=True)
class Bench:
    """The site being served, and where this run keeps its state directories and outputs."""

    args: Options
    launcher: Launcher
    server: SiteServer
    stats: SiteStats
    tmp: Path
    shard: str  # the served path of the urlset `one changed` edits
    index_lastmod: bool | None = None  # whether the index gives children a <lastmod>
    notes: list[str] = field(default_factory=list)

    @property
    def site_url(self) -> str:
        return self.server.origin + "/"

    def argv(self, key: str, state_dir: Path, output: str) -> list[str]:
        argv = [self.args.sitescout, "urls", self.site_url, "-f", "jsonl", "-o", output]
        argv += ["-q", "--json"]
        if key != "fresh":
            argv += ["--state", str(state_dir)]
        if key == "trust":
            argv.append("--trust-lastmod")
        return argv

    def prepare_step(self, key: str) -> bool:
        """Make the change a step walks after; False when the step cannot run on this site."""
        if key == "changed":
            moved = self.server.change_shard(self.shard, self.stats.index_path)
            if self.index_lastmod is None and not moved:
                self.notes.append(
                    "the index gives its children no <lastmod>: `one changed` changed the "
                    "urlset only, and the `trust` step was skipped"
                )
            self.index_lastmod = moved
        return key != "trust" or bool(self.index_lastmod)

    def run(
        self, key: str, state_dir: Path, output: str = os.devnull
    ) -> tuple[Run, dict[str, Any]]:
        """One walk as a child process; the server's counts are for it alone."""
        self.server.reset_counts()
        self.server.reset_bytes_sent()
        run = self.launcher.run(self.argv(key, state_dir, output), timeout=self.args.timeout)
        return run, _summary(run.stderr)


def _summary(stderr: str) -> dict[str, Any]:
    """The JSON summary `--json` prints on stderr, last (anything logged comes before it)."""
    decoder = json.JSONDecoder()
    for start in reversed([m.start() for m in re.finditer(r"^\{", stderr, flags=re.MULTILINE)]):
        try:
            found, _ = decoder.raw_decode(stderr, start)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return {}


def _failure(run: Run) -> str:
    why = "timed out" if run.timed_out else f"exit {run.returncode}"
    last = (run.stderr.strip().splitlines() or [""])[-1][-300:]
    return f"{why}: {last}"


# --- the timed rounds --------------------------------------------------------------------------


@dataclass(slots=True)
class DirSize:
    on_disk: int  # allocated blocks, each file once (hard links are how unchanged bodies move)
    apparent: int
    files: int


def dir_size(path: Path) -> DirSize:
    """What `du` would say of `path`, and its bytes and files."""
    seen: set[tuple[int, int]] = set()
    size = DirSize(0, 0, 0)
    for parent, _dirs, names in os.walk(path):
        for name in names:
            st = os.lstat(os.path.join(parent, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            size.on_disk += st.st_blocks * 512
            size.apparent += st.st_size
            size.files += 1
    return size


def run_rounds(bench: Bench) -> tuple[dict[str, Measure], dict[str, DirSize]]:
    measures = {key: Measure(key) for key, _ in STEPS}
    sizes: dict[str, DirSize] = {}
    repeat = bench.args.repeat
    for k in range(repeat):
        bench.server.restore_files()
        state_dir = bench.tmp / f"state-{k}"
        for key, label in STEPS:
            m = measures[key]
            if not bench.prepare_step(key):
                continue
            run, summary = bench.run(key, state_dir)
            server = bench.server
            if run.ok and summary:
                m.walls.append(run.wall)
                m.cpus.append(run.cpu)
                m.rss_mib.append(run.rss_kib / 1024)
                m.sent.append(server.bytes_sent())
                m.requests.append(sum(server.request_counts().values()))
                m.not_modified.append(server.not_modified_sent())
                m.rows = int(summary.get("urls", 0)) + int(summary.get("alternates", 0))
                m.state = summary.get("state")
            elif m.failure is None:
                m.failure = _failure(run) if not run.ok else "no JSON summary on stderr"
            if key == "first":
                sizes["first"] = dir_size(state_dir)
            state = "ok" if run.ok else _failure(run)
            print(
                f"   [{k + 1}/{repeat}] {label:<12} {run.wall:7.2f} s wall {run.cpu:7.2f} s CPU "
                f"{run.rss_kib / 1024:7.1f} MiB {server.bytes_sent():>12,} B sent "
                f"{sum(server.request_counts().values()):>3} requests  {state}",
                file=sys.stderr,
            )
        sizes["last"] = dir_size(state_dir)
        shutil.rmtree(state_dir, ignore_errors=True)
    return measures, sizes


# --- verification ------------------------------------------------------------------------------


def _sorted_lines(path: Path) -> list[bytes]:
    lines = sorted(path.read_bytes().splitlines())
    path.unlink()  # a 1M-URL output is hundreds of MB
    return lines


def _distinct_urls(lines: list[bytes]) -> int:
    return len({json.loads(line)["url"] for line in lines})


def _differ(ours: list[bytes], theirs: list[bytes]) -> str:
    first = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
        min(len(ours), len(theirs)),
    )
    example = ours[first][:200] if first < len(ours) else theirs[first][:200]
    return (
        f"{len(ours):,} lines vs {len(theirs):,}, first difference at sorted line {first:,}: "
        + (example.decode(errors="replace"))
    )


def verify(bench: Bench, measures: dict[str, Measure]) -> list[str]:
    """Every step once more, writing its output to a file, in a round of its own; the sorted
    lines compared with a fresh walk's of the same site. Marks a step WRONG when they differ."""
    notes: list[str] = []
    bench.server.restore_files()
    state_dir = bench.tmp / "state-verify"

    def output(key: str) -> list[bytes] | None:
        m = measures[key]
        out = bench.tmp / f"verify-{key}.jsonl"
        run, _ = bench.run(key, state_dir, str(out))
        if run.ok and out.exists():
            return _sorted_lines(out)
        m.wrong = f"its verification run failed ({_failure(run)})"
        notes.append(f"WRONG: `{m.label}`: {m.wrong}")
        return None

    def check_fresh(lines: list[bytes] | None, site: str, expected: int) -> None:
        m = measures["fresh"]
        if lines is None:
            return
        distinct = _distinct_urls(lines)
        if distinct == expected == len(lines):
            notes.append(
                f"fresh walk of {site}: {len(lines):,} lines, each a distinct URL, "
                f"= the generator's {expected:,}"
            )
            return
        m.wrong = (
            f"{len(lines):,} lines, {distinct:,} distinct URLs; the generator's {site} has "
            f"{expected:,}"
        )
        notes.append(f"WRONG: fresh walk of {site}: {m.wrong}")

    def compare(key: str, lines: list[bytes] | None, theirs: list[bytes] | None, what: str) -> None:
        m = measures[key]
        if lines is None:
            return
        if theirs is None:
            m.wrong = f"not verified: the {what} output is missing"
            notes.append(f"WRONG: `{m.label}`: {m.wrong}")
        elif lines == theirs:
            notes.append(
                f"output of `{m.label}` = the {what}: {len(lines):,} lines, identical when sorted"
            )
        else:
            m.wrong = f"its output differs from the {what}: {_differ(lines, theirs)}"
            notes.append(f"WRONG: `{m.label}`: {m.wrong}")

    fresh = output("fresh")
    check_fresh(fresh, "the site", bench.stats.distinct_urls)
    for key in ("first", "unchanged"):
        compare(key, output(key), fresh, "fresh walk's")
    del fresh
    bench.prepare_step("changed")
    changed = output("changed")
    fresh = output("fresh")
    # The edit adds one page that is in no other urlset.
    check_fresh(fresh, "the edited site", bench.stats.distinct_urls + 1)
    compare("changed", changed, fresh, "fresh walk's of the edited site")
    del changed
    if bench.prepare_step("trust"):
        compare("trust", output("trust"), fresh, "fresh walk's of the edited site")
    shutil.rmtree(state_dir, ignore_errors=True)
    return notes


# --- report ------------------------------------------------------------------------------------


def _ratio(a: float, b: float, unit: str = "×") -> str:
    if b <= 0:
        return ""
    return f"{a / b * 100:.2f} %" if unit == "%" else f"{a / b:.2f}×"


def _state_cell(state: dict[str, Any] | None) -> str:
    if not state:
        return ""
    cell = (
        f"{state.get('known', 0)} → {state.get('not_modified', 0)} / {state.get('same_body', 0)}"
        f" / {state.get('trusted', 0)} / {state.get('fetched', 0)}"
    )
    if state.get("refetched"):
        cell += f", {state['refetched']} refetched"
    if state.get("ignored"):
        cell += f", state ignored: {state['ignored']}"
    return cell


def _mib(n: float) -> str:
    return f"{n / MIB:,.1f} MiB" if n >= 0.1 * MIB else f"{n:,.0f} B"


def print_table(measures: dict[str, Measure], stats: SiteStats) -> None:
    fresh, first = measures["fresh"], measures["first"]
    print(
        "| step | URLs reported | wall s | CPU s | µs CPU/URL | peak RSS MiB | bytes sent "
        "| requests | 304s | state: known → 304 / same bytes / trusted / fetched "
        "| wall ÷ fresh | CPU ÷ fresh | bytes ÷ first | output |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
    for m in measures.values():
        if m.failure is not None:
            print(f"| {m.label} | failed: {m.failure} | | | | | | | | | | | | |")
            continue
        if not m.ok:
            continue  # not run (trust, without index lastmods)
        base = fresh if fresh.ok else None
        if m.wrong is not None:
            verdict = f"**WRONG**: {m.wrong}"
        elif m.key == "fresh":
            verdict = "= the generator's URLs"
        elif m.key in ("changed", "trust"):
            verdict = "= fresh walk's of the edited site"
        else:
            verdict = "= fresh walk's"
        rows = "?" if m.rows is None else f"{m.rows:,}"
        print(
            f"| {m.label} | {rows} | {m.wall:.2f} | {m.cpu:.2f} | "
            f"{m.cpu / stats.page_urls * 1e6:.2f} | {m.rss:.1f} | {m.bytes:,} | "
            f"{statistics.median_low(m.requests):,} | {statistics.median_low(m.not_modified):,} | "
            f"{_state_cell(m.state)} | {_ratio(m.wall, base.wall) if base else ''} | "
            f"{_ratio(m.cpu, base.cpu) if base else ''} | "
            f"{_ratio(m.bytes, first.bytes, '%') if first.ok else ''} | {verdict} |"
        )


def print_targets(measures: dict[str, Measure], shards: int) -> None:
    """The issue's targets, each a share of the first walk's figure of the same rounds."""
    first, unchanged, changed = measures["first"], measures["unchanged"], measures["changed"]
    rows: list[tuple[str, str, bool | None]] = []

    def share(what: str, m: Measure, attr: str, target: float) -> None:
        name = f"{what} ≤ {target * 100:.0f} % of the first walk's"
        if not (first.correct and m.correct):
            rows.append((name, "n/a: a run failed or was wrong", None))
            return
        ours, theirs = getattr(m, attr), getattr(first, attr)
        value = ours / theirs if theirs > 0 else float("inf")
        if attr == "bytes":
            shown = f"{_mib(ours)} of {_mib(theirs)}"
        else:
            shown = f"{ours:.2f} s of {theirs:.2f} s"
        rows.append((name, f"{value * 100:.2f} % ({shown})", value <= target))

    share("bytes of the unchanged re-walk", unchanged, "bytes", TARGET_UNCHANGED_BYTES)
    share("wall of the unchanged re-walk", unchanged, "wall", TARGET_UNCHANGED_WALL)
    what = f"bytes with 1 of {shards} urlsets changed"
    share(what, changed, "bytes", TARGET_CHANGED_BYTES)
    print("| target | measured | verdict |\n|---|---:|---|")
    for name, value, met in rows:
        verdict = "n/a" if met is None else ("met" if met else "**missed**")
        print(f"| {name} | {value} | {verdict} |")


def report(
    bench: Bench,
    measures: dict[str, Measure],
    sizes: dict[str, DirSize],
    site_bytes: int,
    load: list[float],
) -> None:
    args, stats = bench.args, bench.stats
    smoke = " (smoke run: a tiny site, the figures only show that it works)" if args.smoke else ""
    print(
        f"\n### sitescout re-walk benchmark: {stats.page_urls:,} page URLs "
        f"({stats.distinct_urls:,} distinct with the hreflang-only alternates) in {stats.shards} "
        f"gzipped urlsets under one index, {_mib(site_bytes)} of sitemaps as served, "
        f"median of {args.repeat}{smoke}\n"
    )
    print(
        f"Python {platform.python_version()}, sitescout {_version('sitescout')}, "
        f"{os.cpu_count()} CPUs, {platform.machine()}, 1-min load "
        f"{' -> '.join(f'{x:.2f}' for x in load)} (other work on the machine skews times). "
        "Each row is a whole `sitescout urls SITE -f jsonl -o /dev/null -q --json` process "
        "(start-up included): `fresh` without --state, `first` with --state into an empty DIR, "
        "`unchanged` with the same DIR again, `one changed` after one urlset was edited (and its "
        "index <lastmod> moved), `trust` with --trust-lastmod and nothing changed since. "
        "µs CPU/URL = CPU s ÷ page URLs (<loc>s). bytes sent, requests and 304s are the server's "
        "counts for that run (body bytes, headers not counted); state is the walk's JSON summary "
        "(documents stored before → answered 304 / downloaded, same bytes / read without a "
        "request / downloaded). output: the step's sorted output lines checked against a fresh "
        "walk's of the same site.\n"
    )
    print_table(measures, stats)
    print()
    print_targets(measures, stats.shards)
    print()
    first = measures["first"]
    if "first" in sizes:
        size, last = sizes["first"], sizes.get("last")
        after = f"; {_mib(last.on_disk)} after the round's last re-walk" if last else ""
        received = f"; the first walk received {_mib(first.bytes)}" if first.ok else ""
        print(
            f"- state directory: {_mib(size.on_disk)} on disk after the first walk "
            f"({size.files} files, {_mib(size.apparent)} of data){after}{received}"
        )
    fresh = measures["fresh"]
    if fresh.ok and first.ok:
        print(
            f"- storing (first ÷ fresh): wall {_ratio(first.wall, fresh.wall)}, CPU "
            f"{_ratio(first.cpu, fresh.cpu)}, peak RSS {_ratio(first.rss, fresh.rss)}"
        )
    unchanged = measures["unchanged"]
    if unchanged.ok and first.ok:
        print(
            f"- unchanged re-walk ÷ first walk: bytes {_ratio(unchanged.bytes, first.bytes, '%')},"
            f" wall {_ratio(unchanged.wall, first.wall, '%')}, CPU "
            f"{_ratio(unchanged.cpu, first.cpu, '%')}"
        )
    if unchanged.ok and first.ok and unchanged.wall > TARGET_UNCHANGED_WALL * first.wall:
        print(
            "- a re-walk still decompresses and parses every stored document (so its output is "
            "a fresh walk's); over loopback the transfer it saves costs little wall time"
        )
    for note in bench.notes:
        print(f"- {note}")
    command = " ".join([".venv/bin/python", "benchmarks/rewalk.py", *sys.argv[1:]])
    print(f"\nCommand: `{command}`")


# --- main --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    size: int
    per_shard: int
    repeat: int
    timeout: float
    sitescout: str
    smoke: bool


def parse_args() -> Options:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", default="1M", help="page URLs of the site; default 1M")
    parser.add_argument("--per-shard", type=int, default=50_000, help="URLs per urlset")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; tables show medians")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per child run")
    parser.add_argument(
        "--sitescout",
        default=str(VENV_BIN / "sitescout"),
        help="the sitescout executable to measure (default: the project venv's)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works: --size {SMOKE_SIZE}, --per-shard "
        f"{SMOKE_PER_SHARD}, --repeat 1, the site in a temporary directory",
    )
    ns = parser.parse_args()
    if ns.smoke:
        ns.size, ns.per_shard, ns.repeat = str(SMOKE_SIZE), SMOKE_PER_SHARD, 1
        ns.timeout = min(ns.timeout, SMOKE_TIMEOUT)
    try:
        size = _size(ns.size)
    except ValueError:
        parser.error(f"--size: not a number: {ns.size}")
    if ns.repeat < 1:
        parser.error("--repeat must be at least 1")
    if ns.per_shard < 1 or size < 2 * ns.per_shard or size % ns.per_shard:
        parser.error(
            f"--size ({size:,}) must be a multiple of --per-shard ({ns.per_shard:,}), "
            "with two urlsets at least (one of them is changed)"
        )
    if not Path(ns.sitescout).exists():
        parser.error(f"{ns.sitescout} does not exist (is the venv built?)")
    return Options(**{**vars(ns), "size": size})


def main() -> int:
    args = parse_args()
    notes: list[str] = []
    load = [os.getloadavg()[0]]
    if args.smoke:
        notes.append(check_smoke_mix(args.size, f"of {args.size // args.per_shard} urlsets"))
    # The launcher starts first, while this process is still small (see walk.Launcher).
    with (
        Launcher() as launcher,
        work_dir(args.smoke) as root,
        tempfile.TemporaryDirectory(prefix="sitescout-rewalk-") as tmp,
    ):
        site = prepare(root, args.size, args.per_shard, None)
        with SiteServer(site.directory, validators=True) as server:
            stats = site.stats
            shards = sorted(p for p in server.files if p.startswith("/sitemaps/"))
            site_bytes = sum(len(server.files[p][0]) for p in [stats.index_path, *shards])
            # A urlset from the middle: neither the first the walk asks for nor the last.
            bench = Bench(args, launcher, server, stats, Path(tmp), shards[len(shards) // 2])
            bench.notes += notes
            print(f"== serving {site.directory.name} at {server.origin}", file=sys.stderr)
            measures, sizes = run_rounds(bench)
            load.append(os.getloadavg()[0])
            # Last: it holds whole outputs in memory, which must not precede any timed run.
            bench.notes += verify(bench, measures)
    sys.stderr.flush()
    report(bench, measures, sizes, site_bytes, load)
    return 0 if all(m.failure is None and m.wrong is None for m in measures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: `sitescout diff` of two saved inventories, against reading them and a naive diff.

Run from the project root:

    .venv/bin/python benchmarks/diff.py                    # 1,000,000 rows, best of 3 rounds
    .venv/bin/python benchmarks/diff.py --big              # 10,000,000 once: bounded memory
    .venv/bin/python benchmarks/diff.py --rows 200000 --format csv   # a quick look, as CSV
    .venv/bin/python benchmarks/diff.py --smoke            # seconds: does it still work?

It writes two inventories the way `sitescout urls` does (JSON lines by default, every field of
a row) for a day-to-day change of one site: the new one drops 2 % of the URLs, adds 2 % new
ones, moves the lastmod of 5 % and respells another 1 % without moving it (`Z` for `+00:00`,
which is no change). The URLs carry a real site's mix: lastmods in seven forms (a date, `+00:00`,
other offsets, `Z`, fractions, minutes only, none), 3 % queries (`?color=3&size=7`, what
`&amp;` in a sitemap becomes), percent-escapes, and 10 % on odd hosts (punycode, a port, an IPv6
literal, a `.co.uk`, a few not normalized). They are generated once into `benchmarks/.work/`
(git ignores it) and reused while their manifest matches.

Each variant runs in a fresh process, so that its peak RSS is its own:

- read: both files through the reader `diff` uses (`url` and `lastmod`, bad rows counted),
  doing nothing with the rows: the floor, what reading both files costs;
- diff: `for change in sitescout.diff(old, new)`: the library;
- cli: `sitescout diff OLD NEW --format jsonl -q`, rows to /dev/null, timed as a whole process
  (imports, the per-group summary and writing the rows included);
- naive: the baseline a script would write: each file into a dict of URL to lastmod
  (`json.loads` per line), then set differences and a sort: the whole set in memory.

It prints wall and CPU time, CPU per input row, peak RSS, and the ratios the issue asks about:
diff ÷ read (time; the aim is ≤ 1.5), diff ÷ naive (time and memory). Every variant must find the
changes the generator made (added, removed, changed); one that does not is marked WRONG.
`--no-naive` skips the baseline (at 10M rows it holds several GiB).

`--smoke` runs the same on 4,000 rows in a temporary directory: seconds, for the test suite
(`tests/test_benchmarks.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / ".work"
VENV_BIN = BENCH_DIR.parent / ".venv" / "bin"
GENERATOR_VERSION = 1
SEED = 20261202
SMOKE_ROWS = 4_000
BIG_ROWS = 10_000_000

_SECTIONS = ("docs", "blog", "guides", "reference", "products", "support", "learn", "fr/blog")
_HOSTS = (
    "https://xn--bcher-kva.example",
    "http://127.0.0.1:8080",
    "https://[2001:db8::1]:8443",
    "https://shop.example.co.uk",
    "https://Example.NET",  # not normalized: the normalizer's slow path
)
_OFFSETS = ("+02:00", "-05:00", "+05:30", "+01:00", "-08:00", "+09:00")
_CHANGEFREQS = ("daily", "weekly", "monthly", "null")
CSV_COLUMNS = ("url", "lastmod", "priority", "changefreq", "hreflang", "alternate_of", "sitemap")


@dataclass(frozen=True)
class Manifest:
    version: int
    seed: int
    rows: int
    format: str
    old_rows: int
    new_rows: int
    added: int
    removed: int
    changed: int


def _url(i: int, rng: random.Random) -> str:
    roll = rng.random()
    host = "https://www.example.com" if roll < 0.9 else _HOSTS[i % len(_HOSTS)]
    topic = i // 1000
    path = f"/{_SECTIONS[topic % len(_SECTIONS)]}/topic-{topic:05d}/page-{i:08d}"
    if i % 97 == 5:
        path += "-%C3%A9t%C3%A9"
    if rng.random() < 0.03:
        path += f"?color={i % 11}&size={i % 7}"
    return host + path


def _lastmod(i: int, rng: random.Random) -> str | None:
    day = f"{2023 + i % 3}-{1 + i % 12:02d}-{1 + i % 28:02d}"
    clock = f"{i % 24:02d}:{i % 60:02d}:{(i // 60) % 60:02d}"
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.33:
        return day
    if roll < 0.60:
        return f"{day}T{clock}+00:00"
    if roll < 0.75:
        return f"{day}T{clock}{_OFFSETS[i % len(_OFFSETS)]}"
    if roll < 0.90:
        return f"{day}T{clock}Z"
    if roll < 0.96:
        return f"{day}T{clock}.{i % 1000:03d}Z"
    return f"{day}T{clock[:5]}Z"


def _moved(lastmod: str | None) -> str:
    return "2026-01-15T08:00:00+00:00" if lastmod != "2026-01-15T08:00:00+00:00" else "2026-01-16"


def _respelled(lastmod: str) -> str:
    """The same instant written another way: no change."""
    if lastmod.endswith("+00:00"):
        return lastmod[:-6] + "Z"
    if lastmod.endswith("Z") and "." not in lastmod and len(lastmod) == 20:
        return lastmod[:-1] + "+00:00"
    return lastmod


class _Writer:
    """Rows as `sitescout urls` writes them, in JSON lines or CSV."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.file = path.open("w", encoding="utf-8", newline="")
        self.fmt = fmt
        self.csv = csv.writer(self.file, lineterminator="\n") if fmt == "csv" else None
        if self.csv is not None:
            self.csv.writerow(CSV_COLUMNS)
        self.rows = 0

    def write(self, url: str, lastmod: str | None, i: int) -> None:
        priority = f"0.{i % 9 + 1}" if i % 5 else None
        changefreq = _CHANGEFREQS[i % len(_CHANGEFREQS)]
        sitemap = f"https://www.example.com/sitemaps/pages-{i // 50_000:04d}.xml.gz"
        if self.csv is not None:
            freq = "" if changefreq == "null" else changefreq
            self.csv.writerow((url, lastmod or "", priority or "", freq, "", "", sitemap))
        else:
            # The generated texts hold nothing JSON must escape: written as they are.
            text = "null" if lastmod is None else f'"{lastmod}"'
            freq = "null" if changefreq == "null" else f'"{changefreq}"'
            self.file.write(
                f'{{"url":"{url}","lastmod":{text},"priority":{priority or "null"},'
                f'"changefreq":{freq},"hreflang":null,"alternate_of":null,'
                f'"sitemap":"{sitemap}","depth":2}}\n'
            )
        self.rows += 1

    def close(self) -> None:
        self.file.close()


def generate(directory: Path, rows: int, fmt: str) -> Manifest:
    """Write old.FORMAT and new.FORMAT in `directory` (same random stream: same files)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    old, new = _Writer(directory / f"old.{fmt}", fmt), _Writer(directory / f"new.{fmt}", fmt)
    added = removed = changed = 0
    for i in range(rows):
        url, lastmod = _url(i, rng), _lastmod(i, rng)
        old.write(url, lastmod, i)
        fate = rng.random()
        if fate < 0.02:
            removed += 1
        elif fate < 0.07:
            new.write(url, _moved(lastmod), i)
            changed += 1
        elif fate < 0.08 and lastmod is not None:
            new.write(url, _respelled(lastmod), i)
        else:
            new.write(url, lastmod, i)
        if rng.random() < 0.02:
            new.write(_url(rows + i, rng) + "-new", _lastmod(i, rng), i)
            added += 1
    old.close()
    new.close()
    manifest = Manifest(
        GENERATOR_VERSION, SEED, rows, fmt, old.rows, new.rows, added, removed, changed
    )
    (directory / "manifest.json").write_text(json.dumps(asdict(manifest)))
    return manifest


def ensure(directory: Path, rows: int, fmt: str) -> tuple[Manifest, bool]:
    try:
        data = json.loads((directory / "manifest.json").read_text())
        manifest = Manifest(**data)
        if (
            manifest.version == GENERATOR_VERSION
            and manifest.seed == SEED
            and (directory / f"old.{fmt}").is_file()
            and (directory / f"new.{fmt}").is_file()
        ):
            return manifest, False
    except (OSError, ValueError, TypeError):
        pass
    return generate(directory, rows, fmt), True


_CHILD = """
import json, resource, sys, time
variant, old, new = sys.argv[1:4]
import sitescout
from sitescout._inventory import Inventory

def read():
    rows = 0
    for path in (old, new):
        for chunk in Inventory(path).chunks(("url", "lastmod"), strict=False, raw_lastmod=True):
            rows += len(chunk["url"])
    return rows, {}

def diff():
    found = sitescout.diff(old, new)
    kinds = {"added": 0, "removed": 0, "changed": 0}
    for change in found:
        kinds[change.change] += 1
    return found.old.rows + found.new.rows, kinds

def naive():
    def load(path):
        with open(path, "rb") as f:
            return {row["url"]: row.get("lastmod") for row in map(json.loads, f)}
    before, after = load(old), load(new)
    added = sorted(after.keys() - before.keys())
    removed = sorted(before.keys() - after.keys())
    changed = sorted(u for u in after.keys() & before.keys() if after[u] != before[u])
    # What a script gets wrong unless it reads dates: `Z` and `+00:00` are one instant.
    from datetime import datetime
    def instant(text):
        try:
            return datetime.fromisoformat(text)
        except (TypeError, ValueError):
            return text
    changed = [u for u in changed if instant(after[u]) != instant(before[u])]
    return len(before) + len(after), {
        "added": len(added), "removed": len(removed), "changed": len(changed)
    }

wall0, cpu0 = time.perf_counter(), time.process_time()
rows, kinds = {"read": read, "diff": diff, "naive": naive}[variant]()
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rows": rows, "kinds": kinds, "wall": wall, "cpu": cpu, "rss_mib": peak}))
"""


@dataclass
class Result:
    variant: str
    rows: int
    kinds: dict[str, int]
    wall: float
    cpu: float
    rss_mib: float


def run_child(variant: str, old: Path, new: Path, timeout: float) -> Result:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, variant, str(old), str(new)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{proc.stderr[-3000:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return Result(variant, data["rows"], data["kinds"], data["wall"], data["cpu"], data["rss_mib"])


def run_cli(old: Path, new: Path, timeout: float) -> Result:
    """The command as a whole process: its own CPU and peak RSS (`wait4`), rows to /dev/null."""
    argv = [str(VENV_BIN / "sitescout"), "diff", str(old), str(new), "-f", "jsonl", "-q", "--json"]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as summary:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=summary)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                raise SystemExit("sitescout diff ran over the timeout")
            time.sleep(0.02)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        summary.seek(0)
        text = summary.read()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"`{' '.join(argv)}` exited {proc.returncode}:\n{text[-3000:]}")
    data = json.loads(text)
    kinds = {k: data[k] for k in ("added", "removed", "changed")}
    rows = data["old"]["rows"] + data["new"]["rows"]
    return Result("cli", rows, kinds, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


@contextlib.contextmanager
def work_dir(smoke: bool) -> Iterator[Path]:
    if not smoke:
        yield WORK_DIR
        return
    with tempfile.TemporaryDirectory(prefix="sitescout-bench-diff-") as tmp:
        yield Path(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the old inventory")
    parser.add_argument("--big", action="store_true", help=f"--rows {BIG_ROWS:,}")
    parser.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    parser.add_argument("--no-naive", action="store_true", help="skip the whole-set baseline")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many (--big: 1)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per variant")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works ({SMOKE_ROWS:,} rows, in a "
        "temporary directory)",
    )
    args = parser.parse_args()
    if args.big:
        args.rows, args.rounds = BIG_ROWS, 1
    if args.smoke:
        args.rows, args.rounds, args.timeout = SMOKE_ROWS, 1, min(args.timeout, 60.0)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.rows < 100:
        parser.error("--rows must be at least 100")
    with work_dir(args.smoke) as root:
        directory = root / f"diff-{args.format}-{args.rows}"
        start = time.perf_counter()
        manifest, generated = ensure(directory, args.rows, args.format)
        print(
            f"inventories {directory.name}: {'generated' if generated else 'cached'} "
            f"({time.perf_counter() - start:.1f} s); old {manifest.old_rows:,} rows, "
            f"new {manifest.new_rows:,} rows; {manifest.added:,} added, "
            f"{manifest.removed:,} removed, {manifest.changed:,} changed",
            file=sys.stderr,
        )
        old, new = directory / f"old.{args.format}", directory / f"new.{args.format}"
        variants = ["read", "diff", "cli"] + ([] if args.no_naive else ["naive"])
        rounds: dict[str, list[Result]] = {v: [] for v in variants}
        for _ in range(args.rounds):  # the variants take turns: a busy spell falls on all
            for variant in variants:
                if variant == "cli":
                    rounds[variant].append(run_cli(old, new, args.timeout))
                else:
                    rounds[variant].append(run_child(variant, old, new, args.timeout))
        report([best(rounds[v]) for v in variants], manifest, old, args.rounds, args.smoke)


def best(runs: list[Result]) -> Result:
    """The fastest round, with the lowest peak RSS seen in any."""
    fastest = min(runs, key=lambda r: r.wall)
    return Result(
        fastest.variant,
        fastest.rows,
        fastest.kinds,
        fastest.wall,
        min(r.cpu for r in runs),
        min(r.rss_mib for r in runs),
    )


def report(results: list[Result], manifest: Manifest, old: Path, rounds: int, smoke: bool) -> None:
    expected = {"added": manifest.added, "removed": manifest.removed, "changed": manifest.changed}
    input_rows = manifest.old_rows + manifest.new_rows
    size = old.stat().st_size + old.with_name(f"new{old.suffix}").stat().st_size
    by = {r.variant: r for r in results}
    read, found = by["read"], by["diff"]
    print(
        f"\n{manifest.old_rows:,} + {manifest.new_rows:,} rows ({size / 1048576:,.0f} MiB of "
        f"{manifest.format}), {sum(expected.values()):,} changes; best of {rounds}"
        + ("; smoke run: tiny inventories, the figures only show that it works" if smoke else "")
    )
    print(
        f"\n  {'variant':<8} {'rows':>12} {'wall s':>9} {'cpu s':>9} {'µs cpu/row':>11} "
        f"{'rows/s':>11} {'peak MiB':>9}"
    )
    for r in results:
        wrong = ""
        if r.rows != input_rows:
            wrong = f"  WRONG: {r.rows:,} rows read, {input_rows:,} expected"
        elif r.variant != "read" and r.kinds != expected:
            wrong = f"  WRONG: {r.kinds} found, {expected} expected"
        print(
            f"  {r.variant:<8} {r.rows:>12,} {r.wall:>9.2f} {r.cpu:>9.2f} "
            f"{r.cpu / max(r.rows, 1) * 1e6:>11.2f} {r.rows / max(r.wall, 1e-9):>11,.0f} "
            f"{r.rss_mib:>9,.0f}{wrong}"
        )
    print()
    print(
        f"diff ÷ read: wall {found.wall / read.wall:.2f}x, cpu {found.cpu / read.cpu:.2f}x "
        f"(aim: ≤ 1.5x); peak RSS {found.rss_mib:,.0f} MiB vs {read.rss_mib:,.0f} MiB"
    )
    cli = by["cli"]
    print(
        f"cli ÷ read: wall {cli.wall / read.wall:.2f}x, cpu {cli.cpu / read.cpu:.2f}x; "
        f"peak RSS {cli.rss_mib:,.0f} MiB"
    )
    naive = by.get("naive")
    if naive is not None:
        print(
            f"diff ÷ naive: wall {found.wall / naive.wall:.2f}x, cpu {found.cpu / naive.cpu:.2f}x, "
            f"peak RSS {found.rss_mib / naive.rss_mib:.2f}x "
            f"({found.rss_mib:,.0f} vs {naive.rss_mib:,.0f} MiB)"
        )


if __name__ == "__main__":
    main()

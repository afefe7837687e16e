"""Start-up: what `import sitescout` and `sitescout --version` cost beside a bare interpreter.

    .venv/bin/python benchmarks/startup.py [--runs N]
    .venv/bin/python benchmarks/startup.py --smoke     # 3 runs each: does it still work?

Each command is a fresh process, timed from outside (wall seconds, start to exit), `--runs`
times (default 21), the commands taking turns (one of each, then again), so that a machine
getting slower or faster mid-run moves them all alike. Printed: the median of each and its
ratio to the baseline `python -c pass` of the same run, the floor no Python program is under.

* `python -c pass` - the baseline
* `python -c "import sitescout"` - the library's import
* `sitescout --version` - the installed program, answering without loading its commands
* `sitescout --help` - the program listing every command (it loads them all)
* `sitescout urls FILE -f txt -q` - a whole command: a walk of a one-URL sitemap on disk, with
  options of each kind given (a choice, whole numbers, a decimal, a string), so a command's own
  start-up (its module, the walk's, httpx, reading its options) without the network

A command that fails or prints the wrong thing is marked WRONG. `--smoke` takes 3 runs of each:
seconds, for the test suite (`tests/test_benchmarks.py`); its figures mean little.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sitescout

SMOKE_RUNS = 3
PROGRAM = str(Path(sys.executable).with_name("sitescout"))

BASELINE, IMPORT = "python -c pass", 'python -c "import sitescout"'
VERSION, HELP = "sitescout --version", "sitescout --help"
WALK = "sitescout urls FILE -f txt -q"
PAGE = "https://example.com/one"
ONE_URL = (
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    f"<url><loc>{PAGE}</loc></url></urlset>"
)
WALK_OPTIONS = ["-f", "txt", "-q", "--concurrency", "4", "--max-urls", "10", "--timeout", "30.5"]


def commands(sitemap: Path) -> dict[str, tuple[list[str], str]]:
    """label -> (argv, what its stdout must hold)"""
    return {
        BASELINE: ([sys.executable, "-c", "pass"], ""),
        IMPORT: ([sys.executable, "-c", "import sitescout"], ""),
        VERSION: ([PROGRAM, "--version"], f"sitescout {sitescout.__version__}\n"),
        HELP: ([PROGRAM, "--help"], "Usage: sitescout"),
        WALK: ([PROGRAM, "urls", str(sitemap), *WALK_OPTIONS], f"{PAGE}\n"),
    }


def timed(argv: list[str], expect: str) -> tuple[float, bool]:
    """Wall seconds of one run of `argv`, and whether it exited 0 printing `expect`."""
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    seconds = time.perf_counter() - start
    return seconds, proc.returncode == 0 and expect in proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--runs {SMOKE_RUNS})",
    )
    args = parser.parse_args()
    if args.smoke:
        args.runs = SMOKE_RUNS
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    with tempfile.TemporaryDirectory(prefix="sitescout-startup-") as tmp:
        sitemap = Path(tmp) / "sitemap.xml"
        sitemap.write_text(ONE_URL)
        seconds, wrong = measure(commands(sitemap), args.runs)

    print(f"median wall seconds of {args.runs} runs each, taking turns; ÷ python -c pass")
    baseline = statistics.median(seconds[BASELINE])
    for label, runs in seconds.items():
        median = statistics.median(runs)
        verdict = "; WRONG: failed or printed something else" if label in wrong else ""
        print(f"  {label:<30} {median:7.3f} s  {median / baseline:6.2f}x{verdict}")
    above = {label: statistics.median(runs) - baseline for label, runs in seconds.items()}
    print(
        f"above the baseline: import {above[IMPORT]:.3f} s, --version {above[VERSION]:.3f} s,"
        f" --help {above[HELP]:.3f} s, a one-URL walk {above[WALK]:.3f} s"
    )


def measure(
    runs_of: dict[str, tuple[list[str], str]], runs: int
) -> tuple[dict[str, list[float]], set[str]]:
    """Each command's wall seconds over `runs` turns (after one warm-up round), and the
    labels of those that failed or printed something else."""
    seconds: dict[str, list[float]] = {label: [] for label in runs_of}
    wrong: set[str] = set()
    for argv, expect in runs_of.values():  # a warm-up round, not counted
        timed(argv, expect)
    for _ in range(runs):
        for label, (argv, expect) in runs_of.items():
            took, ok = timed(argv, expect)
            seconds[label].append(took)
            if not ok:
                wrong.add(label)
    return seconds, wrong


if __name__ == "__main__":
    main()

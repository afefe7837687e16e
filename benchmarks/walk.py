"""Benchmark: `sitescout urls` and `iter_urls` on large sitemap sites over loopback, against a
naive stdlib walker and a bare lxml parse of the same bytes, measured in the same run.

Run from the project root (the project venv has everything it needs):

    .venv/bin/python benchmarks/walk.py                              # 250,000 and 1,000,000 URLs
    .venv/bin/python benchmarks/walk.py --sizes 100k --repeat 1      # a quick look (about 1 min)
    .venv/bin/python benchmarks/walk.py --before HEAD                # + a committed version
    .venv/bin/python benchmarks/walk.py --json walk.json --api       # + save figures, walk() too
    .venv/bin/python benchmarks/walk.py --smoke                      # seconds: does it still work?

Sites: for every size in `--sizes`, robots.txt -> a sitemap index -> gzipped urlsets of
`--per-shard` URLs (50,000: the 1M site has 20), generated once into `benchmarks/.work/` and
reused while their manifest matches (see `_site.py`). They carry a real site's mix: date-only,
offset, `Z`, fractional and missing `<lastmod>`s, some `<priority>`/`<changefreq>`, hreflang
alternates on every tenth URL, an `&amp;` query now and then, whitespace around some `<loc>`s,
and page URLs on the server's own `127.0.0.1:PORT` host. Each site is served from memory by a
threaded keep-alive HTTP server on 127.0.0.1 that stops when the script ends.

Measured, per size, each as a child process of its own (so wall and CPU cover the whole process,
interpreter start-up and imports included; CPU is user + system from `os.wait4`, peak RSS its
`ru_maxrss`):

- `sitescout urls SITE --output /dev/null --quiet` (the venv's console script, or `--sitescout`);
- `iter_urls`: a child running `for e in sitescout.iter_urls(SITE): n += 1` (one Entry per URL);
- the naive walker: urllib.request + xml.etree.ElementTree, sequential, all in memory;
- the lxml floor: `lxml.etree.fromstring` over the already-decompressed shards; its wall and CPU
  are the parse calls only (reading, gunzip and counting happen outside the timers);
- start-up: `sitescout urls` of a one-URL sitemap on the same server (`/startup.xml`), the same
  command line otherwise: interpreter, imports, one fetch. Its CPU taken from `sitescout urls`'
  gives the CPU per URL of the walk itself, which is what the core and the walk's code decide;
  it is no tool of its own (no speed-up or growth), and its one URL is checked after the rounds;
- the native floor (`floor/`, built here with cargo; skipped with a note where cargo is missing):
  gunzip each shard with the core's inflater and put every `<loc>` value into a hash set, the
  least work a walk can do on this machine; its wall and CPU are those two steps only, so
  `sitescout urls`' CPU ÷ this is how far the whole walk is from the physical limit;
- with `--api`: `async for batch in sitescout.walk(SITE)`;
- with `--before REV`: `sitescout urls` and `iter_urls` of that git revision (its `src/sitescout`
  exported with `git archive` into `.work/` and put first on PYTHONPATH; it must be a revision
  whose package is pure Python).

Tools alternate within each round (the order rotates every round) and the table shows medians of
`--repeat` rounds (3 by default). Children are started by a small launcher process spawned first:
Linux carries the forking process's memory high-water mark into a child's `ru_maxrss`, and this
script holds large URL sets while it verifies. A bare interpreter's ~10 MiB is every peak's floor.

After the timed rounds, `sitescout urls` and the naive walker run once more into files, and what
they found is checked against the generator's exact sets; the report says whether the two agree
on the unique page URLs. `iter_urls` and `walk()` must yield one entry per distinct URL. A tool
that does not report exactly the expected URLs is marked WRONG and gets no speed-up, growth or
target credited. The tables give, for each size, µs of CPU per page URL (`<loc>`),
speed-ups against the naive walker and the throughput against the lxml floor, then peak RSS and
its growth per URL from the smallest to the largest size, then the targets at the largest size.
`peers.py` measures the other tools users would pick.

`--smoke` is the same run on two tiny sites of the same generator (200 and 400 URLs in urlsets of
100, every lastmod form, hreflang, queries and whitespace still in them), one round, generated
into a temporary directory instead of `.work/`: seconds, for the test suite
(`tests/test_benchmarks.py`). Its figures say only that every tool ran and was right; the targets
are judged at sizes where start-up does not dominate.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from _site import (
    PLACEHOLDER_ORIGIN,
    WORK_DIR,
    SiteServer,
    SiteStats,
    check_smoke_mix,
    ensure_flat_index,
    iter_alternate_only_urls,
    iter_page_urls,
    work_dir,
)

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
MIB = 1024 * 1024
FLOOR_DIR = BENCH_DIR / "floor"
# The tools whose wall and CPU are their timed steps only, not the whole process.
FLOORS = ("floor", "native_floor")
# `sitescout urls` of a one-URL sitemap: start-up, to take from the walk's figures.
STARTUP = "startup"
STARTUP_PATH = "/startup.xml"
STARTUP_PAGE = "/startup-page"

TARGET_CPU_US_PER_URL = 2.5
TARGET_NAIVE_SPEEDUP = 3.0
TARGET_FLOOR_RATIO = 0.5
TARGET_PEAK_RSS_MIB = 100.0
TARGET_GROWTH_BYTES = 32.0
TARGET_ITER_SPEEDUP = 2.0
SMOKE_SIZES = [200, 400]
SMOKE_PER_SHARD = 100
SMOKE_TIMEOUT = 60.0


# --- child programs ----------------------------------------------------------------------------
# Each runs in a fresh interpreter from its own source (see `_child_argv`), so a baseline's RSS
# holds only what it imports itself, not this script or the server.


def _child_floor(site_dir: str, placeholder: str, origin: str) -> None:
    import gzip
    import json
    import pathlib
    import time

    from lxml import etree

    shards = sorted(pathlib.Path(site_dir, "sitemaps").iterdir())
    datas = []
    for path in shards:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        # Same bytes the server sends (it rewrites the placeholder into its own origin).
        datas.append(data.replace(placeholder.encode(), origin.encode()))
    loc_tag = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"
    parse_s = parse_cpu = extract_s = 0.0
    locs = 0
    for data in datas:
        start, start_cpu = time.perf_counter(), time.process_time()
        root = etree.fromstring(data)
        parse_s += time.perf_counter() - start
        parse_cpu += time.process_time() - start_cpu
        # Reported apart from the floor: the least Python work that turns a tree into URLs.
        start = time.perf_counter()
        urls = [(el.text or "").strip() for el in root.iter(loc_tag)]
        extract_s += time.perf_counter() - start
        locs += len(urls)
        del root, urls
    result = {
        "urls": locs,
        "parse_s": parse_s,
        "parse_cpu": parse_cpu,
        "extract_s": extract_s,
        "documents": len(datas),
        "bytes": sum(len(d) for d in datas),
    }
    print(json.dumps(result))


def _child_naive(site_url: str, output: str = "/dev/null") -> None:
    """Also the naive baseline of `peers.py`, which passes a file to count the URLs in."""
    import gzip
    import json
    import urllib.request
    import xml.etree.ElementTree as ET

    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

    def fetch(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=30) as response:
            data: bytes = response.read()
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data

    robots = fetch(site_url.rstrip("/") + "/robots.txt").decode()
    queue = [
        line.split(":", 1)[1].strip()
        for line in robots.splitlines()
        if line.lower().startswith("sitemap:")
    ]
    seen: set[str] = set()
    locs: list[str] = []
    documents = 0
    while queue and documents < 10_000:  # bounded: a hostile index cannot keep it going
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        documents += 1
        root = ET.fromstring(fetch(url))
        found = [el.text.strip() for el in root.iter(ns + "loc") if el.text]
        (queue if root.tag == ns + "sitemapindex" else locs).extend(found)
    with open(output, "w") as out:
        out.write("\n".join(locs))
    print(json.dumps({"urls": len(locs), "documents": documents}))


def _child_iter_urls(site_url: str) -> None:
    import json

    import sitescout

    n = 0
    for _entry in sitescout.iter_urls(site_url):
        n += 1
    print(json.dumps({"urls": n, "module": sitescout.__file__}))


def _child_api(site_url: str) -> None:
    import asyncio
    import json

    import sitescout

    async def main() -> tuple[int, int]:
        total = alternates = 0
        async for batch in sitescout.walk(site_url):
            total += len(batch)
            alternates += sum(1 for e in batch if getattr(e, "alternate_of", None) is not None)
        return total, alternates

    total, alternates = asyncio.run(main())
    print(json.dumps({"urls": total, "alternates": alternates, "module": sitescout.__file__}))


def _child_argv(func: Callable[..., None], *args: str, python: str = PYTHON) -> list[str]:
    source = textwrap.dedent(inspect.getsource(func))
    return [python, "-c", f"import sys\n{source}\n{func.__name__}(*sys.argv[1:])\n", *args]


# --- running children --------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    wall: float
    rss_kib: int
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    over_memory: bool = False  # killed for passing the run's RSS cap
    cpu: float = 0.0  # user + system seconds of the child (and of what it waited for)

    def result(self) -> dict[str, Any]:
        """The JSON line a child program prints last."""
        lines = self.stdout.strip().splitlines()
        try:
            return dict(json.loads(lines[-1])) if lines else {}
        except (json.JSONDecodeError, TypeError, ValueError):
            return {}

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.over_memory


def _child_launcher() -> None:
    import contextlib
    import json
    import os
    import subprocess
    import sys
    import threading
    import time

    def kill(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, 9)  # the child leads its own session: its helpers go too

    def watch_rss(pid: int, cap_kib: int, done: threading.Event, over: list[bool]) -> None:
        """Kill the child once its resident set passes the cap (polled every 50 ms)."""
        while not done.wait(0.05):
            try:
                with open(f"/proc/{pid}/statm") as statm:
                    rss_kib = int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            except (OSError, ValueError, IndexError):
                return
            if rss_kib > cap_kib:
                over.append(True)
                kill(pid)
                return

    for line in sys.stdin:
        job = json.loads(line)
        over: list[bool] = []
        with open(job["stdout"], "wb") as out, open(job["stderr"], "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                job["argv"],
                env={**os.environ, **job.get("env", {})},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            timer = threading.Timer(job["timeout"], kill, (proc.pid,))
            timer.start()
            done = threading.Event()
            if job.get("max_rss_kib"):
                args = (proc.pid, job["max_rss_kib"], done, over)
                threading.Thread(target=watch_rss, args=args, daemon=True).start()
            try:
                # wait4, not proc.wait(): it returns this child's rusage (ru_maxrss in KiB).
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
                done.set()
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
        reply = {
            "wall": wall,
            "rss_kib": usage.ru_maxrss,
            "returncode": proc.returncode,
            "timed_out": wall >= job["timeout"],
            "over_memory": bool(over),
            "cpu": usage.ru_utime + usage.ru_stime,
        }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


class Launcher:
    """Starts every measured child from a small process that was itself started first.

    Linux keeps the pre-exec memory high-water mark in a child's ru_maxrss, and a fork copies
    the parent's: a child spawned by this script after it held a 1M-URL verification set would
    report that set's size as its own peak. The launcher stays at a bare interpreter's RSS (about
    10 MiB, the floor of every reported peak), so each child's peak is its own.
    """

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            _child_argv(_child_launcher), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(
        self,
        argv: list[str],
        *,
        timeout: float,
        stdout_path: str | None = None,
        max_rss_mib: float | None = None,
        env: dict[str, str] | None = None,
    ) -> Run:
        """Run one child: wall time by perf_counter around it, peak RSS from its own rusage.

        The child (and anything it starts) is killed after `timeout` seconds, or as soon as its
        RSS passes `max_rss_mib` when given. `env` is added to the launcher's environment.
        """
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with tempfile.TemporaryDirectory() as tmp:
            out, err = str(Path(tmp) / "out"), str(Path(tmp) / "err")
            job = {
                "argv": argv,
                "stdout": stdout_path or out,
                "stderr": err,
                "timeout": timeout,
                "max_rss_kib": round(max_rss_mib * 1024) if max_rss_mib else 0,
                "env": env or {},
            }
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
            reply = json.loads(self._proc.stdout.readline() or "{}")
            if not reply:
                raise RuntimeError("the launcher process died")
            return Run(
                wall=reply["wall"],
                rss_kib=reply["rss_kib"],
                returncode=reply["returncode"],
                stdout="" if stdout_path else Path(out).read_text(errors="replace"),
                stderr=Path(err).read_text(errors="replace"),
                timed_out=reply["timed_out"],
                over_memory=reply.get("over_memory", False),
                cpu=reply.get("cpu", 0.0),
            )

    def __enter__(self) -> Launcher:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)


# --- tools -------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True, slots=True)
class Cli:
    """The `sitescout urls` command, adapted to the flags its `--help` shows."""

    command: list[str]
    help_text: str
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def probe(cls, command: list[str], env: dict[str, str] | None = None) -> Cli | None:
        """None while `sitescout urls --help` does not work (yet)."""
        if not Path(command[0]).exists():
            return None
        try:
            done = subprocess.run(
                [*command, "urls", "--help"],
                capture_output=True,
                timeout=60,
                env={**os.environ, **(env or {})},
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        return cls(command, _ANSI.sub("", done.stdout.decode(errors="replace")), env or {})

    def argv(self, site_url: str, output: str) -> tuple[list[str], bool]:
        """The command line, and whether it writes `output` itself (else it writes stdout)."""
        argv = [*self.command, "urls", site_url]
        if "--quiet" in self.help_text:
            argv.append("--quiet")
        if "--format" in self.help_text:
            argv += ["--format", "jsonl"]
        if "--output" in self.help_text:
            return [*argv, "--output", output], True
        return argv, False


def wait_for_cli(exe: str, poll_s: float, max_wait_s: float) -> Cli | None:
    deadline = time.monotonic() + max_wait_s
    while True:
        cli = Cli.probe([exe])
        if cli is not None or time.monotonic() >= deadline:
            return cli
        print(f"   {exe} urls --help not working yet; retrying in {poll_s:.0f} s", file=sys.stderr)
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))


@dataclass(slots=True)
class Site:
    stats: SiteStats
    directory: Path
    server: SiteServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.origin + "/"


@dataclass(frozen=True, slots=True)
class Tool:
    key: str
    label: str
    argv: Callable[[Site], list[str]]
    env: dict[str, str] = field(default_factory=dict)


def startup_url(site: Site) -> str:
    assert site.server is not None
    return site.server.origin + STARTUP_PATH


def serve_startup_sitemap(site: Site) -> None:
    """A one-URL urlset beside the site, for the start-up row."""
    assert site.server is not None
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"  <url><loc>{site.server.origin}{STARTUP_PAGE}</loc></url>\n</urlset>\n"
    )
    site.server.add_file(STARTUP_PATH, body.encode())


def build_native_floor(smoke: bool, notes: list[str]) -> Path | None:
    """The native floor's program, built now (a release build; a debug one for a smoke run,
    whose figures do not count), or None with a note saying why not."""
    profile = "debug" if smoke else "release"
    command = ["cargo", "build", "--quiet", "--manifest-path", str(FLOOR_DIR / "Cargo.toml")]
    try:
        done = subprocess.run(
            command + ([] if smoke else ["--release"]),
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        notes.append(f"native floor skipped: `cargo build` did not run ({exc})")
        return None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1][-300:]
        notes.append(f"native floor skipped: `cargo build` failed: {last}")
        return None
    return FLOOR_DIR / "target" / profile / "sitescout-floor"


def _native_floor_argv(program: Path, site: Site) -> list[str]:
    shards = sorted(str(p) for p in (site.directory / "sitemaps").iterdir())
    return [str(program), PLACEHOLDER_ORIGIN, site.url.rstrip("/"), *shards]


def build_tools(args: Options, notes: list[str]) -> list[Tool]:
    tools = [
        Tool(
            "floor",
            "lxml.etree.fromstring floor (parse only)",
            lambda s: _child_argv(
                _child_floor, str(s.directory), PLACEHOLDER_ORIGIN, s.url.rstrip("/")
            ),
        ),
        Tool("naive", "naive urllib + ElementTree", lambda s: _child_argv(_child_naive, s.url)),
    ]
    program = build_native_floor(args.smoke, notes)
    if program is not None:
        tools.insert(
            1,
            Tool(
                "native_floor",
                "native floor (gunzip + every `<loc>` into a hash set, Rust)",
                lambda s: _native_floor_argv(program, s),
            ),
        )
    cli = wait_for_cli(args.sitescout, 60, args.wait_for_cli)
    if cli is None:
        notes.append(f"`{args.sitescout} urls --help` fails: sitescout CLI rows skipped")
    else:
        tools.append(Tool("urls", "sitescout urls", lambda s: cli.argv(s.url, os.devnull)[0]))
        tools.append(
            Tool(
                STARTUP,
                "sitescout urls of a one-URL sitemap (start-up)",
                lambda s: cli.argv(startup_url(s), os.devnull)[0],
            )
        )
    tools.append(
        Tool("iter_urls", "sitescout.iter_urls()", lambda s: _child_argv(_child_iter_urls, s.url))
    )
    if args.api:
        tools.append(
            Tool("api", "sitescout.walk() batches", lambda s: _child_argv(_child_api, s.url))
        )
    if args.before:
        src = export_revision(args.before, notes)
        if src is not None:
            env = {"PYTHONPATH": str(src)}
            old = Cli.probe([PYTHON, "-m", "sitescout"], env)
            if old is None:
                notes.append(f"`sitescout urls --help` of {args.before} fails: its rows skipped")
            else:
                tools.append(
                    Tool(
                        "urls_before",
                        f"sitescout urls ({args.before})",
                        lambda s: old.argv(s.url, os.devnull)[0],
                        env,
                    )
                )
                tools.append(
                    Tool(
                        "iter_urls_before",
                        f"sitescout.iter_urls() ({args.before})",
                        lambda s: _child_argv(_child_iter_urls, s.url),
                        env,
                    )
                )
    return tools


def export_revision(rev: str, notes: list[str]) -> Path | None:
    """`src/sitescout` of a git revision, exported once into `.work/` (read-only git use)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        notes.append(f"--before {rev}: not a revision of this repository; skipped")
        return None
    sha = done.stdout.strip()
    dest = WORK_DIR / f"before-{sha[:12]}"
    if not (dest / "src" / "sitescout" / "__init__.py").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", sha, "src/sitescout"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    src = dest / "src"
    probe = subprocess.run(
        [PYTHON, "-c", "import sitescout; print(sitescout.__file__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    if probe.returncode != 0 or not probe.stdout.strip().startswith(str(src)):
        notes.append(f"--before {rev}: its package does not import on its own; skipped")
        return None
    notes.append(f"before = {rev} ({sha[:12]}), run from {src.relative_to(ROOT)} via PYTHONPATH")
    return src


# --- measuring ---------------------------------------------------------------------------------


class Medians:
    """The medians of a measure's runs, and whether it ran and was right (`rewalk.py` too)."""

    __slots__ = ()
    walls: list[float]
    cpus: list[float]
    rss_mib: list[float]
    failure: str | None
    wrong: str | None

    @property
    def ok(self) -> bool:
        return self.failure is None and bool(self.walls)

    @property
    def correct(self) -> bool:
        return self.ok and self.wrong is None

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    @property
    def rss(self) -> float:
        return statistics.median(self.rss_mib)


@dataclass(slots=True)
class Measure(Medians):
    """One tool on one site: the runs' figures; the floor's wall and CPU are its parse calls'."""

    tool: Tool
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    urls: int | None = None
    requests: int | None = None
    module: str | None = None
    failure: str | None = None
    wrong: str | None = None  # ran, but did not report exactly the expected URLs

    def add(self, run: Run, requests: int | None) -> None:
        if not run.ok:
            why = "timed out" if run.timed_out else f"exit {run.returncode}"
            last = (run.stderr.strip().splitlines() or [""])[-1][-300:]
            self.failure = f"{why}: {last}"
            return
        result = run.result()
        floor = self.tool.key in FLOORS
        self.walls.append(float(result["parse_s"]) if floor else run.wall)
        self.cpus.append(float(result["parse_cpu"]) if floor else run.cpu)
        self.rss_mib.append(run.rss_kib / 1024)
        urls = result.get("urls")
        self.urls = urls if isinstance(urls, int) else self.urls
        self.module = result.get("module") or self.module
        self.requests = requests


def run_rounds(
    launcher: Launcher, site: Site, tools: list[Tool], args: Options
) -> dict[str, Measure]:
    """`--repeat` rounds of every tool; the order rotates each round so drift hits all alike."""
    assert site.server is not None
    measures = {t.key: Measure(t) for t in tools}
    n = site.stats.page_urls
    for k in range(args.repeat):
        for tool in tools[k % len(tools) :] + tools[: k % len(tools)]:
            m = measures[tool.key]
            if m.failure is not None:
                continue
            site.server.reset_counts()
            run = launcher.run(tool.argv(site), timeout=args.timeout, env=tool.env)
            m.add(run, sum(site.server.request_counts().values()))
            state = "ok" if run.ok else ("timed out" if run.timed_out else f"exit {run.returncode}")
            print(
                f"   [{k + 1}/{args.repeat}] {n:>9,} {tool.key:<16} {run.wall:7.2f} s wall "
                f"{run.cpu:7.2f} s CPU {run.rss_kib / 1024:7.1f} MiB  {state}",
                file=sys.stderr,
            )
    return measures


# --- verification ------------------------------------------------------------------------------


def _output_urls(path: Path) -> Iterator[str]:
    """The URL of every output line: JSON lines, or plain URLs if a line is not JSON."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if line.startswith("{"):
                yield str(json.loads(line).get("url", ""))
            elif line:
                yield line


def verify(launcher: Launcher, res: SizeResult, args: Options) -> list[str]:
    """Run `sitescout urls` (both versions with `--before`) and the naive walker once more into
    files and hold what they found against the generator's exact sets, and each other."""
    site = res.site
    stats = site.stats
    assert site.server is not None
    origin = site.server.origin
    pages = set(iter_page_urls(stats, origin))
    alternates = set(iter_alternate_only_urls(stats, origin))
    notes: list[str] = []
    found: dict[str, set[str]] = {}
    shm = Path("/dev/shm")
    tmp_parent = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="sitescout-walk-", dir=tmp_parent) as tmp:
        for key in ("urls", "urls_before", "naive"):
            measure = res.measures.get(key)
            if measure is None or not measure.ok:
                continue
            tool = measure.tool
            out = Path(tmp) / f"{key}.out"
            if key == "naive":
                argv = _child_argv(_child_naive, site.url, str(out))
                run = launcher.run(argv, timeout=args.timeout, env=tool.env)
            else:
                run = run_into(launcher, tool, site, out, args)
            if not run.ok or not out.exists():
                notes.append(f"{tool.label}: verification run failed (exit {run.returncode})")
                measure.wrong = "its output could not be verified"
                continue
            lines = 0
            seen: set[str] = set()
            for url in _output_urls(out):
                lines += 1
                seen.add(url)
            out.unlink()
            extra = seen - pages - alternates
            text = (
                f"{tool.label}: {lines:,} lines, {len(seen):,} distinct URLs; page URLs "
                f"{len(seen & pages):,}/{len(pages):,}"
            )
            if key != "naive":
                measure.urls = len(seen)
                text += f", hreflang-only {len(seen & alternates):,}/{len(alternates):,}"
            text += f", unexpected {len(extra):,}, duplicate lines {lines - len(seen):,}"
            notes.append(text)
            notes += [f"  missing page URL e.g. {u}" for u in sorted(pages - seen)[:3]]
            notes += [f"  unexpected URL e.g. {u!r}" for u in sorted(extra)[:3]]
            found[key] = seen - alternates
            want = pages if key == "naive" else pages | alternates
            if seen != want or lines != len(seen):
                measure.wrong = (
                    f"{len(seen):,} distinct URLs in {lines:,} lines, {len(want - seen):,} "
                    f"missing, {len(seen - want):,} unexpected"
                )
    notes += verify_startup(launcher, res, args)
    theirs = found.get("naive")
    for key in ("urls", "urls_before"):
        ours = found.get(key)
        if ours is None or theirs is None:
            continue
        label = res.measures[key].tool.label
        if ours == theirs:
            same = "= the generator's" if ours == pages else f"≠ the generator's {len(pages):,}"
            notes.append(
                f"{label} and the naive walker AGREE on the unique page URLs: the same "
                f"{len(ours):,} ({same})"
            )
        else:
            notes.append(
                f"{label} and the naive walker DISAGREE on the unique page URLs: "
                f"{len(ours):,} vs {len(theirs):,}, {len(ours - theirs):,} only in sitescout's, "
                f"{len(theirs - ours):,} only in the naive walker's"
            )
    return notes


def run_into(launcher: Launcher, tool: Tool, site: Site, out: Path, args: Options) -> Run:
    """Run a `sitescout` row's command once with its output going to `out`."""
    argv = tool.argv(site)
    writes_itself = argv[-2:] == ["--output", os.devnull]
    argv = [*argv[:-1], str(out)] if writes_itself else argv
    return launcher.run(
        argv,
        timeout=args.timeout,
        stdout_path=None if writes_itself else str(out),
        env=tool.env,
    )


def verify_startup(launcher: Launcher, res: SizeResult, args: Options) -> list[str]:
    """Run the start-up row's command once more into a file: it must give its one URL."""
    measure = res.measures.get(STARTUP)
    if measure is None or not measure.ok:
        return []
    assert res.site.server is not None
    want = res.site.server.origin + STARTUP_PAGE
    with tempfile.TemporaryDirectory(prefix="sitescout-walk-") as tmp:
        out = Path(tmp) / "startup.out"
        run = run_into(launcher, measure.tool, res.site, out, args)
        got = list(_output_urls(out)) if run.ok and out.exists() else None
    if got != [want]:
        measure.wrong = f"gave {got!r}, not its one URL"
        return [f"{measure.tool.label}: WRONG, {measure.wrong}"]
    measure.urls = 1
    return [f"{measure.tool.label}: its one URL, as expected"]


def check_counts(res: SizeResult) -> None:
    """Hold the tools not verified URL by URL to the count they must report: a fast tool that
    misses URLs gets no speed-up credited."""
    stats = res.site.stats
    for key, m in res.measures.items():
        if key in ("urls", "urls_before", "naive", STARTUP) or not m.ok:
            continue
        want = stats.page_urls if key in FLOORS else stats.distinct_urls
        if m.urls != want:
            m.wrong = f"{m.urls if m.urls is not None else '?'} URLs reported, {want:,} expected"
            res.notes.append(f"{m.tool.label}: WRONG, {m.wrong}")
        elif key not in FLOORS:
            res.notes.append(f"{m.tool.label}: {m.urls:,} entries, as expected")


# --- report ------------------------------------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    site: Site
    measures: dict[str, Measure]
    notes: list[str] = field(default_factory=list)


def _speedup(base: Measure | None, m: Measure, attr: str) -> str:
    if base is None or not base.correct or base is m or not m.correct or m.tool.key == STARTUP:
        return ""
    value = getattr(m, attr)
    return f"{getattr(base, attr) / value:.2f}×" if value > 0 else ""


def print_size(res: SizeResult) -> None:
    stats = res.site.stats
    n = stats.page_urls
    print(
        f"\n#### {n:,} page URLs: index -> {stats.shards} gzipped urlsets, {stats.distinct_urls:,} "
        f"distinct URLs with the {stats.alternate_only_urls:,} hreflang-only alternates\n"
    )
    print(
        "| tool | URLs reported | wall s | CPU s | µs CPU/URL | peak RSS MiB | requests "
        "| speed-up vs naive (wall) | speed-up vs naive (CPU) | throughput ÷ lxml floor (CPU) "
        "| throughput ÷ native floor (CPU) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    naive, floor = res.measures.get("naive"), res.measures.get("floor")
    native = res.measures.get("native_floor")
    for m in res.measures.values():
        if not m.ok:
            print(f"| {m.tool.label} | failed: {m.failure} | | | | | | | | | |")
            continue
        urls = "?" if m.urls is None else f"{m.urls:,}"
        if m.wrong is not None:
            urls = f"**WRONG**: {m.wrong}"
        reqs = "" if m.tool.key in FLOORS or m.requests is None else f"{m.requests:,}"
        per_url = "" if m.tool.key == STARTUP else f"{m.cpu / n * 1e6:.2f}"
        print(
            f"| {m.tool.label} | {urls} | {m.wall:.2f} | {m.cpu:.2f} | {per_url} "
            f"| {m.rss:.1f} | {reqs} | {_speedup(naive, m, 'wall')} | {_speedup(naive, m, 'cpu')} "
            f"| {_speedup(floor, m, 'cpu')} | {_speedup(native, m, 'cpu')} |"
        )
    for note in res.notes:
        print(f"- {note}")


def print_growth(results: list[SizeResult]) -> None:
    small, large = results[0], results[-1]
    dn = large.site.stats.page_urls - small.site.stats.page_urls
    if len(results) < 2 or dn <= 0:
        return
    a, b = small.site.stats.page_urls, large.site.stats.page_urls
    print(f"\n#### Peak RSS growth, {a:,} -> {b:,} page URLs\n")
    print(f"| tool | peak RSS MiB at {a:,} | at {b:,} | growth B/URL |\n|---|---:|---:|---:|")
    for key, m in large.measures.items():
        s = small.measures.get(key)
        if key in (*FLOORS, STARTUP) or s is None or not (s.correct and m.correct):
            continue
        growth = (m.rss - s.rss) * MIB / dn
        print(f"| {m.tool.label} | {s.rss:.1f} | {m.rss:.1f} | {growth:.1f} |")


def print_before_after(results: list[SizeResult]) -> None:
    pairs = (("urls", "urls_before"), ("iter_urls", "iter_urls_before"))
    rows = []
    for res in results:
        for now_key, old_key in pairs:
            now, old = res.measures.get(now_key), res.measures.get(old_key)
            if now is None or old is None or not (now.correct and old.correct):
                continue
            n = res.site.stats.page_urls
            rows.append(
                f"| {now.tool.label} | {n:,} | {old.wall:.2f} -> {now.wall:.2f} "
                f"| {old.cpu / n * 1e6:.2f} -> {now.cpu / n * 1e6:.2f} "
                f"| {old.rss:.1f} -> {now.rss:.1f} | {old.wall / now.wall:.2f}× "
                f"| {old.cpu / now.cpu:.2f}× |"
            )
    if rows:
        print("\n#### Before -> after\n")
        print(
            "| tool | page URLs | wall s | µs CPU/URL | peak RSS MiB | speed-up (wall) "
            "| speed-up (CPU) |\n|---|---:|---:|---:|---:|---:|---:|"
        )
        print("\n".join(rows))


def print_targets(results: list[SizeResult]) -> None:
    res = results[-1]
    n = res.site.stats.page_urls
    ms = res.measures
    urls, naive, floor = ms.get("urls"), ms.get("naive"), ms.get("floor")
    native, startup = ms.get("native_floor"), ms.get(STARTUP)
    it, it_before = ms.get("iter_urls"), ms.get("iter_urls_before")
    rows: list[tuple[str, str, bool | None]] = []

    def ok(m: Measure | None) -> bool:
        return m is not None and m.correct

    if urls is not None and urls.correct:
        us = urls.cpu / n * 1e6
        rows.append(
            (
                f"`sitescout urls` CPU ≤ {TARGET_CPU_US_PER_URL} µs per URL",
                f"{us:.2f} µs",
                us <= TARGET_CPU_US_PER_URL,
            )
        )
        if ok(naive):
            assert naive is not None
            r = naive.wall / urls.wall
            rows.append(
                (
                    f"≥ {TARGET_NAIVE_SPEEDUP:.0f}× faster than naive (wall)",
                    f"{r:.2f}×",
                    r >= TARGET_NAIVE_SPEEDUP,
                )
            )
        if ok(floor):
            assert floor is not None
            r = floor.cpu / urls.cpu
            rows.append(
                (
                    f"≥ {TARGET_FLOOR_RATIO}× the lxml parse throughput (CPU)",
                    f"{r:.2f}×",
                    r >= TARGET_FLOOR_RATIO,
                )
            )
        # A floor read on tiny sites can be 0: its clock advances in scheduler ticks.
        if ok(native) and native is not None and native.cpu > 0:
            rows.append(
                (
                    "`sitescout urls` CPU ÷ the native floor's (how far from the limit)",
                    f"{urls.cpu / native.cpu:.2f}× ({native.cpu / n * 1e6:.2f} µs per URL)",
                    None,
                )
            )
        if ok(startup) and startup is not None:
            walk_us = (urls.cpu - startup.cpu) / n * 1e6
            rows.append(
                (
                    "`sitescout urls` CPU per URL after start-up (its CPU less the start-up row's)",
                    f"{walk_us:.2f} µs (start-up {startup.cpu:.2f} s CPU)",
                    None,
                )
            )
        rows.append(
            (
                f"peak RSS ≤ {TARGET_PEAK_RSS_MIB:.0f} MiB",
                f"{urls.rss:.1f} MiB",
                urls.rss <= TARGET_PEAK_RSS_MIB,
            )
        )
        small = results[0].measures.get("urls")
        dn = n - results[0].site.stats.page_urls
        if len(results) > 1 and small is not None and small.ok and dn > 0:
            g = (urls.rss - small.rss) * MIB / dn
            a = results[0].site.stats.page_urls
            rows.append(
                (
                    f"RSS growth {a:,} -> {n:,} ≤ {TARGET_GROWTH_BYTES:.0f} B/URL",
                    f"{g:.1f} B/URL",
                    g <= TARGET_GROWTH_BYTES,
                )
            )
        else:
            rows.append(("RSS growth per URL", "needs two sizes", None))
    else:
        rows.append(("`sitescout urls` measured", "failed, wrong or unavailable", None))
    if ok(it) and ok(it_before):
        assert it is not None and it_before is not None
        r = it_before.cpu / it.cpu
        rows.append(
            (
                f"`iter_urls` ≥ {TARGET_ITER_SPEEDUP:.0f}× faster than before (CPU)",
                f"{r:.2f}×",
                r >= TARGET_ITER_SPEEDUP,
            )
        )
    else:
        rows.append(
            (
                f"`iter_urls` ≥ {TARGET_ITER_SPEEDUP:.0f}× faster than before",
                "needs iter_urls correct now and with --before REV",
                None,
            )
        )
    print(f"\n#### Targets at {n:,} URLs (medians; the peers' targets are in peers.py)\n")
    print("| target | measured | verdict |\n|---|---:|---|")
    for name, value, met in rows:
        verdict = "n/a" if met is None else ("met" if met else "**NOT met**")
        print(f"| {name} | {value} | {verdict} |")


def save_json(path: Path, results: list[SizeResult], meta: dict[str, Any]) -> None:
    sizes = []
    for res in results:
        tools = {
            key: {
                "label": m.tool.label,
                "ok": m.ok,
                "failure": m.failure,
                "urls": m.urls,
                "requests": m.requests,
                "wall_s": m.walls,
                "cpu_s": m.cpus,
                "peak_rss_mib": m.rss_mib,
            }
            for key, m in res.measures.items()
        }
        sizes.append(
            {
                "page_urls": res.site.stats.page_urls,
                "distinct_urls": res.site.stats.distinct_urls,
                "shards": res.site.stats.shards,
                "tools": tools,
                "notes": res.notes,
            }
        )
    path.write_text(json.dumps({"meta": meta, "sizes": sizes}, indent=2) + "\n")


# --- main --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    sizes: list[int]
    per_shard: int
    repeat: int
    api: bool
    before: str | None
    json: str | None
    timeout: float
    wait_for_cli: float
    sitescout: str
    page_origin: str | None
    smoke: bool


def _size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def parse_args() -> Options:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="250k,1M",
        help="page URLs per site, comma-separated (RSS growth is taken between the smallest and "
        "the largest); default 250k,1M",
    )
    parser.add_argument("--per-shard", type=int, default=50_000, help="URLs per urlset")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; tables show medians")
    parser.add_argument("--api", action="store_true", help="also measure sitescout.walk()")
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also measure this git revision's sitescout (urls and iter_urls), e.g. HEAD",
    )
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per child run")
    parser.add_argument(
        "--wait-for-cli",
        type=float,
        default=0,
        metavar="S",
        help="poll up to S seconds for `sitescout urls` to start working",
    )
    parser.add_argument(
        "--sitescout",
        default=str(VENV_BIN / "sitescout"),
        help="the sitescout executable to measure (default: the project venv's)",
    )
    parser.add_argument(
        "--page-origin",
        metavar="URL",
        help="put page URLs on this origin (e.g. https://www.example.com) instead of the "
        "loopback server's http://127.0.0.1:PORT",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works: sizes "
        f"{','.join(map(str, SMOKE_SIZES))}, --per-shard {SMOKE_PER_SHARD}, --repeat 1, sites "
        "in a temporary directory",
    )
    ns = parser.parse_args()
    if ns.smoke:
        ns.sizes = ",".join(map(str, SMOKE_SIZES))
        ns.per_shard, ns.repeat = SMOKE_PER_SHARD, 1
        ns.timeout = min(ns.timeout, SMOKE_TIMEOUT)
    if ns.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        sizes = sorted({_size(s) for s in ns.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes: not a list of numbers: {ns.sizes}")
    if not sizes or ns.per_shard < 1:
        parser.error("--sizes and --per-shard must be positive")
    for size in sizes:
        if size < 1 or (size > ns.per_shard and size % ns.per_shard):
            parser.error(f"size {size:,} is not a multiple of --per-shard ({ns.per_shard:,})")
    return Options(**{**vars(ns), "sizes": sizes})


def site_dir(root: Path, shards: int, per_shard: int, page_origin: str | None) -> Path:
    pages = "" if page_origin is None else "-pages-" + re.sub(r"[^A-Za-z0-9.]+", "_", page_origin)
    return root / f"flat-{shards}x{per_shard}{pages}"


def prepare(root: Path, size: int, per_shard: int, page_origin: str | None) -> Site:
    per_shard = min(per_shard, size)
    shards = size // per_shard
    directory = site_dir(root, shards, per_shard, page_origin)
    start = time.perf_counter()
    stats, generated = ensure_flat_index(directory, shards, per_shard, page_origin=page_origin)
    print(
        f"== site {directory.name}: {'generated' if generated else 'cached'} "
        f"({time.perf_counter() - start:.1f} s), {stats.page_urls:,} page URLs, "
        f"{stats.distinct_urls:,} with hreflang-only alternates, {stats.documents} documents",
        file=sys.stderr,
    )
    return Site(stats, directory)


def main() -> int:
    args = parse_args()
    notes: list[str] = []
    results: list[SizeResult] = []
    load = [os.getloadavg()[0]]
    if args.smoke:
        notes.append(check_smoke_mix(args.sizes[0], "(the smallest)"))
    # The launcher starts first, while this process is still small (see Launcher).
    with (
        Launcher() as launcher,
        work_dir(args.smoke) as root,
        contextlib.ExitStack() as servers,
    ):
        sites = [prepare(root, size, args.per_shard, args.page_origin) for size in args.sizes]
        tools = build_tools(args, notes)
        for site in sites:
            site.server = servers.enter_context(SiteServer(site.directory))
            serve_startup_sitemap(site)
            print(f"== serving {site.directory.name} at {site.url}", file=sys.stderr)
        for site in sites:
            results.append(SizeResult(site, run_rounds(launcher, site, tools, args)))
        load.append(os.getloadavg()[0])
        # Verification last: it makes this process build big sets, which must not overlap
        # (or precede, through allocator and page-cache churn) any timed run.
        for res in results:
            res.notes += verify(launcher, res, args)
            check_counts(res)
    sys.stderr.flush()
    report(results, args, notes, load)
    return 0


def report(results: list[SizeResult], args: Options, notes: list[str], load: list[float]) -> None:
    stats = results[-1].site.stats
    host = stats.page_origin or "127.0.0.1:PORT"
    sizes = ", ".join(f"{r.site.stats.page_urls:,}" for r in results)
    smoke = " (smoke run: tiny sites, the figures only show that it works)" if args.smoke else ""
    print(
        f"\n### sitescout walk benchmark: {sizes} URLs, page URLs on {host}, "
        f"median of {args.repeat}{smoke}\n"
    )
    print(
        f"Python {platform.python_version()}, lxml {metadata.version('lxml')}, sitescout "
        f"{_version('sitescout')}, {os.cpu_count()} CPUs, {platform.machine()}, 1-min load "
        f"{' -> '.join(f'{x:.2f}' for x in load)} (other work on the machine skews times). "
        "Whole processes (start-up and imports included) except the two floors, whose wall and "
        "CPU are their timed steps only (the lxml parse calls; the native gunzip and scan). "
        "µs CPU/URL = CPU s / page URLs (<loc>s) for every row but the start-up one's; "
        "speed-ups are the naive walker's figure ÷ the tool's; throughput ÷ floor is the floor's "
        "parse CPU ÷ the tool's CPU. The site mix is described in benchmarks/_site.py."
    )
    for res in results:
        print_size(res)
    print_growth(results)
    print_before_after(results)
    print_targets(results)
    if notes:
        print()
        for note in notes:
            print(f"- {note}")
    command = " ".join([".venv/bin/python", "benchmarks/walk.py", *sys.argv[1:]])
    print(f"\nCommand: `{command}`")
    if args.json:
        meta = {
            "command": command,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load": load,
            "repeat": args.repeat,
            "sitescout": _version("sitescout"),
            "notes": notes,
        }
        save_json(Path(args.json), results, meta)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())

"""What `sitescout urls` leaves behind: the summary counts what was written, after Ctrl-C too, and
an existing output file survives a run that has nothing to put in it.

Every test runs the real command in a subprocess against a loopback site. The interrupted runs
walk sitemaps that send part of their body and then stall until the test releases them, so the
walk is reliably still running (with entries parsed but not yet handed out) when SIGINT lands.
"""

from __future__ import annotations

import csv
import json
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

import pytest

from .server import Reply, RequestHandler, Site, sitemapindex, urlset

CHILDREN = 3
HEAD_URLS = 1300  # per child, sent before the stall: not a multiple of the walk's batch size
STALL = 30.0  # seconds a stalled child waits for the test to release it
WAIT = 20.0  # seconds any wait on the subprocess may take


def stalled_child(site: Site, name: str, release: threading.Event, head: int) -> None:
    """A child sitemap that sends `head` URLs, then stalls until released, then the rest."""
    urls = [f"{site.url}/{name}/p{i}" for i in range(head + 10)]
    body = urlset(urls).encode()
    cut = body.index(f"<url><loc>{urls[head]}</loc>".encode())

    def handler(h: RequestHandler) -> Reply | None:
        h.send_response(200)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body[:cut])
        h.wfile.flush()
        release.wait(STALL)
        with suppress(OSError):
            h.wfile.write(body[cut:])
        return None

    site.handle(f"/{name}.xml", handler)


def stalling_site(site: Site, release: threading.Event, head: int = HEAD_URLS) -> list[str]:
    names = [f"c{i}" for i in range(CHILDREN)]
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{site.url}/{n}.xml" for n in names]))
    for name in names:
        stalled_child(site, name, release, head)
    return [f"/{n}.xml" for n in names]


def start(*args: str, stdout: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sitescout", *args],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(condition: Callable[[], bool], what: str) -> None:
    stop = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > stop:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def drain(stream: IO[str] | None) -> Callable[[], str]:
    """Read `stream` in a thread (a full pipe would stall the walk); the text once it ends."""
    chunks: list[str] = []

    def read() -> None:
        if stream is not None:
            with stream:
                chunks.append(stream.read())

    thread = threading.Thread(target=read)
    thread.start()

    def text() -> str:
        thread.join(WAIT)
        assert not thread.is_alive(), "the output did not end"
        return "".join(chunks)

    return text


def interrupt(proc: subprocess.Popen[str], site: Site, paths: list[str]) -> tuple[str, str]:
    """SIGINT once every stalled child has been requested and its head parsed."""
    stdout, stderr = drain(proc.stdout), drain(proc.stderr)
    try:
        wait_until(lambda: all(site.hits[p] for p in paths), "the walk to reach every child")
        time.sleep(1.0)  # the heads are a few hundred KiB: parsed well within this
        assert proc.poll() is None, "the walk ended before it was interrupted"
        proc.send_signal(signal.SIGINT)
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
    return stdout(), stderr()


def summary_of(stderr: str) -> dict[str, Any]:
    start_at = stderr.index("{")
    summary, _end = json.JSONDecoder().raw_decode(stderr, start_at)
    assert isinstance(summary, dict)
    return summary


def written(summary: dict[str, Any]) -> int:
    return int(summary["urls"]) + int(summary["alternates"])


def rows_in(path: Path, fmt: str) -> int:
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet")
        return int(pq.read_table(path).num_rows)  # also proves the file is a valid Parquet file
    text = path.read_text(encoding="utf-8")
    if fmt == "csv":
        return len(list(csv.reader(text.splitlines()))) - 1
    for line in text.splitlines():
        json.loads(line)  # no torn last line
    return len(text.splitlines())


def stray_files(directory: Path, keep: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p != keep)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_ctrl_c_summary_counts_what_the_file_holds(
    site: Site, release: threading.Event, tmp_path: Path, fmt: str
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    paths = stalling_site(site, release)
    out = tmp_path / f"inventory.{fmt}"
    proc = start("urls", site.url, "--format", fmt, "-o", str(out), "--json")
    _stdout, stderr = interrupt(proc, site, paths)
    assert proc.returncode == 1, stderr
    summary = summary_of(stderr)
    assert "interrupted" in summary["partial_reasons"]
    rows = rows_in(out, fmt)
    assert rows > 0
    assert written(summary) == rows
    assert stray_files(tmp_path, out) == []


def test_ctrl_c_summary_counts_the_lines_piped_to_stdout(
    site: Site, release: threading.Event
) -> None:
    paths = stalling_site(site, release)
    proc = start("urls", site.url, "--json")
    stdout, stderr = interrupt(proc, site, paths)
    assert proc.returncode == 1, stderr
    lines = stdout.splitlines()
    for line in lines:
        json.loads(line)
    assert len(lines) > 0
    assert written(summary_of(stderr)) == len(lines)


def test_ctrl_c_groups_keep_what_was_counted(site: Site, release: threading.Event) -> None:
    paths = stalling_site(site, release)
    proc = start("groups", site.url, "--json")
    stdout, stderr = interrupt(proc, site, paths)
    assert proc.returncode == 1, stderr
    result = json.loads(stdout)
    assert result["total"] > 0
    assert result["total"] == written(result["walk"])
    assert sum(g["count"] for g in result["groups"]) == result["total"]


OLD = {"jsonl": b'{"url": "old"}\n', "csv": b"url\nold\n", "parquet": b"PAR1 not really\n"}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_run_that_finds_nothing_leaves_the_file_alone(
    site: Site, tmp_path: Path, fmt: str
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"inventory.{fmt}"
    out.write_bytes(OLD[fmt])
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-f", fmt, "-o", str(out)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert out.read_bytes() == OLD[fmt]
    assert stray_files(tmp_path, out) == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_ctrl_c_before_the_first_entry_leaves_the_file_alone(
    site: Site, release: threading.Event, tmp_path: Path, fmt: str
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    paths = stalling_site(site, release, head=0)
    out = tmp_path / f"inventory.{fmt}"
    out.write_bytes(OLD[fmt])
    proc = start("urls", site.url, "-f", fmt, "-o", str(out), "--json")
    _stdout, stderr = interrupt(proc, site, paths)
    assert written(summary_of(stderr)) == 0
    assert out.read_bytes() == OLD[fmt]
    assert stray_files(tmp_path, out) == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_complete_run_replaces_the_file(site: Site, tmp_path: Path, fmt: str) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([f"{site.url}/p{i}" for i in range(5)]))
    out = tmp_path / f"inventory.{fmt}"
    out.write_bytes(OLD[fmt] * 1000)  # longer than the new output: nothing of it may remain
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-f", fmt, "-o", str(out), "--json"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert rows_in(out, fmt) == written(summary_of(proc.stderr)) == 5
    assert stray_files(tmp_path, out) == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_complete_empty_walk_writes_an_empty_inventory(
    site: Site, tmp_path: Path, fmt: str
) -> None:
    # The site answered and lists no page: that is the inventory now, not the old file.
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([]))
    out = tmp_path / f"inventory.{fmt}"
    out.write_bytes(OLD[fmt])
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-f", fmt, "-o", str(out)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert rows_in(out, fmt) == 0
    assert stray_files(tmp_path, out) == []


def test_the_file_behind_a_symlink_is_replaced_keeping_its_mode(site: Site, tmp_path: Path) -> None:
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([f"{site.url}/p{i}" for i in range(4)]))
    real = tmp_path / "real.jsonl"
    real.write_bytes(OLD["jsonl"])
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.name)
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-o", str(link)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink()
    assert rows_in(real, "jsonl") == 4
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "real.jsonl"]


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="needs /dev/stdout")
def test_output_to_a_device_is_written_in_place(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([f"{site.url}/p{i}" for i in range(4)]))
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-o", "/dev/stdout"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 4


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_a_clear_error(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([f"{site.url}/p{i}" for i in range(4)]))
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url, "-o", "/dev/full"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "error: cannot write /dev/full: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr

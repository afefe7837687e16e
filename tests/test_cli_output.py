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


FORMATS = ["jsonl", "csv", "txt", "parquet"]
OLD_TXT = b"https://old.example/\n"


def nothing_found_site(site: Site, way: str) -> list[str]:
    """A site, and the URL arguments of a run that finds nothing on it, in one of five ways."""
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    if way == "empty sitemap":
        site.add("/s.xml", urlset([]))
        return [site.url]
    site.add("/s.xml", urlset([f"{site.url}/en/p{i}" for i in range(5)]))
    site.add("/llms.txt", f"# Site\n\n- [One]({site.url}/en/one)\n", Content_Type="text/plain")
    if way == "base path":
        return [f"{site.url}/de/nothing/"]
    if way == "llms under base path":
        return [f"{site.url}/de/nothing/", "--source", "llms"]
    if way == "no llms.txt":
        site.routes.pop("/llms.txt")
        return [site.url, "--source", "llms"]
    assert way == "every sitemap fails"
    site.routes.pop("/llms.txt")
    site.add("/s.xml", b"", status=500)
    return [site.url]


WAYS = ["empty sitemap", "base path", "llms under base path", "no llms.txt", "every sitemap fails"]


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_no_entry_written_leaves_the_file_byte_for_byte(
    site: Site, tmp_path: Path, fmt: str, way: str
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    args = nothing_found_site(site, way)
    out = tmp_path / f"keep.{fmt}"
    old = OLD.get(fmt, OLD_TXT) * 57
    out.write_bytes(old)
    command = [sys.executable, "-m", "sitescout", "urls", *args, "-f", fmt, "-o", str(out)]
    proc = subprocess.run(
        [*command, "--timeout", "5"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert out.read_bytes() == old
    assert stray_files(tmp_path, out) == []
    assert f"{out}: left as it was (no entry written)" in proc.stderr


def test_no_entry_written_creates_no_file(site: Site, tmp_path: Path) -> None:
    args = nothing_found_site(site, "base path")
    out = tmp_path / "new.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", *args, "-o", str(out), "--json"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert f"{out}: not created (no entry written)" in summary_of(proc.stderr)["notes"]


def test_entries_stream_to_a_pipe_while_the_site_stalls(
    site: Site, release: threading.Event
) -> None:
    # Each child sends 5 URLs and stalls: they must reach the pipe within about half a second,
    # not when a batch of 1,000 fills or the walk ends, and Ctrl-C keeps and counts them.
    paths = stalling_site(site, release, head=5)
    proc = start("urls", site.url, "-f", "txt", "--json")
    assert proc.stdout is not None
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stdout is not None
        with proc.stdout:
            for line in proc.stdout:
                lines.append((time.monotonic(), line))

    reader = threading.Thread(target=read)
    reader.start()
    stderr = drain(proc.stderr)
    try:
        wait_until(lambda: all(site.hits[p] for p in paths), "the walk to reach every child")
        requested = time.monotonic()
        wait_until(lambda: len(lines) >= 5 * CHILDREN, "the first URLs on the pipe")
        assert lines[-1][0] - requested < 2.0  # about 0.5 s; generous for a loaded machine
        assert proc.poll() is None, "the walk ended: the children were not stalled"
        proc.send_signal(signal.SIGINT)
        proc.wait(WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
        reader.join(WAIT)
    urls = [line for _at, line in lines]
    assert len(urls) == len(set(urls)) == 5 * CHILDREN
    assert proc.returncode == 1
    assert written(summary_of(stderr())) == 5 * CHILDREN


def test_a_slow_small_sitemap_streams_to_a_library_consumer(
    site: Site, release: threading.Event
) -> None:
    import sitescout

    stalling_site(site, release, head=3)
    got: list[float] = []
    start_at = time.monotonic()
    it = sitescout.iter_urls(site.url)
    for _entry in it:
        got.append(time.monotonic() - start_at)
        if len(got) == 3 * CHILDREN:
            break
    it.close()
    assert len(got) == 3 * CHILDREN
    assert max(got) < 3.0  # the children stall for 30 s: the entries came before their end


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

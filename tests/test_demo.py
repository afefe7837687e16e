"""`sitescout demo --serve`: the sample site stays up, on the port asked for, until Ctrl-C or
SIGTERM (exit 0), and runs no extract; a port already in use is a one-line usage error (exit 2).

Real subprocesses on 127.0.0.1: every wait is bounded in count and in time.
"""

from __future__ import annotations

import contextlib
import http.client
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitescout._demo.server import serve

START_TIMEOUT = 30.0  # Python start-up and the import of sitescout, on a busy machine
STOP_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def listening() -> Iterator[int]:
    """A port of 127.0.0.1 held by a listening socket for the block's duration."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def get(port: int, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def wait_until_served(proc: subprocess.Popen[str], port: int) -> None:
    """Until the port accepts a connection; fails if the process ends or START_TIMEOUT passes."""
    deadline = time.monotonic() + START_TIMEOUT
    for _ in range(int(START_TIMEOUT / 0.05)):
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"demo --serve ended early ({proc.returncode}): {err}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    proc.kill()
    proc.communicate()
    pytest.fail(f"nothing served on port {port} within {START_TIMEOUT} s")


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sitescout", "demo", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_stays_up_until_a_signal_and_exits_0(tmp_path: Path, signum: int) -> None:
    port = free_port()
    proc = start("--serve", "--port", str(port), cwd=tmp_path)
    try:
        wait_until_served(proc, port)
        status, body = get(port, "/robots.txt")
        assert status == 200 and "Sitemap:" in body
        time.sleep(0.3)
        assert proc.poll() is None  # still serving: it waits for the signal, not for a walk
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=STOP_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == ""
    assert f"sample site served at http://127.0.0.1:{port}/" in err
    assert f"sitescout extract http://127.0.0.1:{port}/ --out sitescout-demo" in err
    assert "Traceback" not in err
    assert not (tmp_path / "sitescout-demo").exists()  # no extract ran
    with pytest.raises(OSError):  # and it is down
        socket.create_connection(("127.0.0.1", port), 1).close()


def test_a_port_in_use_is_a_one_line_usage_error(tmp_path: Path) -> None:
    with listening() as port:
        proc = start("--serve", "--port", str(port), cwd=tmp_path)
        try:
            out, err = proc.communicate(timeout=START_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 2
    assert out == ""
    assert err.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use; choose another with --port N"
    ]


def test_serve_defaults_to_the_readme_port() -> None:
    from sitescout.cli.demo import SERVE_PORT

    assert SERVE_PORT == 8765  # the README's examples use http://127.0.0.1:8765/


def test_the_server_takes_a_free_port_or_the_one_asked_for() -> None:
    with serve() as base:
        assert base.startswith("http://127.0.0.1:") and not base.endswith(":0")
    port = free_port()
    with serve(port=port) as base:
        assert base == f"http://127.0.0.1:{port}"
        assert get(port, "/robots.txt")[0] == 200
    with listening() as taken, pytest.raises(OSError), serve(port=taken):
        pass  # pragma: no cover - never reached: the bind fails

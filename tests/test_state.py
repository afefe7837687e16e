"""Re-walks with a state directory (`--state DIR`): conditional requests, replay of what did not
change, and a state that is untrusted input — at a loopback server that honours and counts
conditional requests the ways real servers do (ETag, Last-Modified, both, neither, weak ETags,
and one that answers 304 to anything)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
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
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sitescout import ProjectError, walk
from sitescout.cli import app

from .scaling import assert_linear
from .server import Reply, RequestHandler, Site

REPO = Path(__file__).resolve().parents[1]
MODES = ("etag", "last-modified", "both", "weak", "neither")
SECRET = "s3cret-token-7781"


def _urlset(base: str, shard: int, version: int, count: int) -> bytes:
    """A shard that looks like a real one: mixed lastmod formats, hreflang, `&amp;` queries,
    whitespace around `<loc>`."""
    rows = []
    for j in range(count):
        url = f"{base}/docs/{shard}/page-{j}"
        lastmod = (f"2024-05-0{1 + j % 9}", "2024-05-01T10:00:00+02:00", "")[j % 3]
        if j % 7 == 0:
            lastmod = f"2024-05-2{version}"  # a page edited in each version
        extra = ""
        if j % 4 == 0:
            alternate = f"{base}/de/docs/{shard}/page-{j}"
            extra = f'<xhtml:link rel="alternate" hreflang="de" href="{alternate}"/>'
        if j % 5 == 0:
            url += f"?ref=sm&amp;v={version}"
        lm = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        rows.append(f"<url>\n  <loc>\n    {url}\n  </loc>{lm}{extra}</url>")
    if version:
        rows.append(f"<url><loc>{base}/docs/{shard}/new-in-v{version}</loc></url>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(rows) + "\n</urlset>\n"
    ).encode()


class ConditionalSite:
    """A site of one index and `shards` shards (gzip files and plain XML, one served with
    Content-Encoding) whose documents answer conditional requests the way `mode` says."""

    def __init__(self, mode: str, shards: int = 4, urls: int = 40) -> None:
        self.mode = mode
        self.site = Site()
        self.urls = urls
        self.version: dict[str, int] = {}
        self.paths = [f"/s{i}.xml.gz" if i % 2 == 0 else f"/s{i}.xml" for i in range(shards)]
        self.full: Counter[str] = Counter()  # 200s with a body
        self.not_modified: Counter[str] = Counter()
        self.sent = 0  # body bytes sent for sitemap documents
        self.requests: list[dict[str, str]] = []  # every sitemap request's headers
        self.lock = threading.Lock()
        self.delay = 0.0
        # An index that stamps every child with the time it is served (counted per request).
        self.stamped = False
        self.stamps = 0
        self.stall = 0.0  # seconds each shard pauses halfway through its body
        self.site.add("/robots.txt", "Sitemap: /sitemap_index.xml\n", Content_Type="text/plain")
        for path in ["/sitemap_index.xml", *self.paths]:
            self.version[path] = 0
            self.site.handle(path, self._answer)
        self.site.start()

    @property
    def url(self) -> str:
        return self.site.url

    def stop(self) -> None:
        self.site.stop()

    def change(self, path: str) -> None:
        self.version[path] += 1

    def body(self, path: str) -> bytes:
        if path == "/sitemap_index.xml":
            if self.stamped:
                self.stamps += 1
            rows = "".join(
                f"<sitemap><loc>{self.url}{p}</loc><lastmod>{self._listed(p)}</lastmod></sitemap>"
                for p in self.paths
            )
            return (
                '<?xml version="1.0"?><sitemapindex '
                f'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</sitemapindex>'
            ).encode()
        shard = self.paths.index(path)
        xml = _urlset(self.url, shard, self.version[path], self.urls)
        return gzip.compress(xml, mtime=0) if path.endswith(".gz") else xml

    def _listed(self, path: str) -> str:
        if self.stamped:
            return f"2024-07-01T00:{self.stamps // 60:02d}:{self.stamps % 60:02d}Z"
        return f"2024-06-{1 + self.version[path]:02d}"

    def _validators(self, path: str, body: bytes) -> tuple[str, str]:
        tag = hashlib.sha256(body).hexdigest()[:20]
        etag = f'W/"{tag}"' if self.mode == "weak" else f'"{tag}"'
        # The index changes whenever a shard does (it lists their lastmods).
        version = max(self.version.values()) if path == "/sitemap_index.xml" else self.version[path]
        moment = datetime(2024, 6, 1, tzinfo=UTC) + timedelta(hours=version + self.stamps)
        return etag, format_datetime(moment, usegmt=True)

    def _answer(self, req: RequestHandler) -> Reply | None:
        path = req.path
        body = self.body(path)
        etag, modified = self._validators(path, body)
        with self.lock:
            self.requests.append({k.lower(): v for k, v in req.headers.items()})
        if self.delay:
            time.sleep(self.delay)
        headers: dict[str, str] = {}
        if self.mode in ("etag", "both", "weak"):
            headers["ETag"] = etag
        if self.mode in ("last-modified", "both"):
            headers["Last-Modified"] = modified
        if path.endswith(".gz"):
            headers["Content-Type"] = "application/gzip"
        elif path == "/s1.xml" and "gzip" in req.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, mtime=0)
            headers["Content-Encoding"] = "gzip"
        if self._unchanged(req, etag, modified):
            with self.lock:
                self.not_modified[path] += 1
            return Reply(304, b"", headers)
        with self.lock:
            self.full[path] += 1
            self.sent += len(body)
        if self.stall and path != "/sitemap_index.xml":
            # Half the body, then a pause: a walk stopped now is inside the document.
            req.send_response(200)
            for name, value in {"Content-Type": "application/xml", **headers}.items():
                req.send_header(name, value)
            req.send_header("Content-Length", str(len(body)))
            req.end_headers()
            req.wfile.write(body[: len(body) // 2])
            req.wfile.flush()
            time.sleep(self.stall)
            with contextlib.suppress(OSError):
                req.wfile.write(body[len(body) // 2 :])
            return None
        return Reply(200, body, headers)

    def _unchanged(self, req: RequestHandler, etag: str, modified: str) -> bool:
        if self.mode == "always304":
            return True
        asked_tag = req.headers.get("If-None-Match")
        asked_time = req.headers.get("If-Modified-Since")
        if asked_tag is not None and self.mode in ("etag", "both", "weak"):
            # RFC 9110: If-None-Match compares weakly, and when present If-Modified-Since
            # is ignored.
            return asked_tag.removeprefix("W/") == etag.removeprefix("W/")
        if asked_time is not None and self.mode in ("last-modified", "both"):
            try:
                return parsedate_to_datetime(asked_time) >= parsedate_to_datetime(modified)
            except (TypeError, ValueError):
                return False
        return False

    def documents(self) -> int:
        return 1 + len(self.paths)

    def reset_counts(self) -> None:
        with self.lock:
            self.full.clear()
            self.not_modified.clear()
            self.sent = 0
            self.requests.clear()


@pytest.fixture
def make_site() -> Iterator[Any]:
    made: list[ConditionalSite] = []

    def make(mode: str = "etag", **kwargs: Any) -> ConditionalSite:
        site = ConditionalSite(mode, **kwargs)
        made.append(site)
        return site

    yield make
    for site in made:
        site.stop()


def inventory(url: str, **options: Any) -> tuple[list[str], Any]:
    """The walk's rows as sorted JSON lines (every field), and its report."""

    async def run() -> tuple[list[str], Any]:
        w = walk(url, **options)
        lines: list[str] = []
        async for batch in w.batches():
            lines.extend(batch.to_jsonl().splitlines())
        return sorted(lines), w.report

    import asyncio

    return asyncio.run(run())


def fresh(site: ConditionalSite) -> list[str]:
    """What a walk without a state gives now (its requests are not counted)."""
    rows, _ = inventory(site.url)
    site.reset_counts()
    return rows


def generations(state: Path) -> list[str]:
    return sorted(p.name for p in state.iterdir() if p.name.startswith("gen-"))


# -- the second walk gives a fresh walk's inventory, for what it did not download --------------


@pytest.mark.parametrize("mode", MODES)
def test_an_unchanged_rewalk_equals_a_fresh_walk(make_site: Any, tmp_path: Path, mode: str) -> None:
    site = make_site(mode)
    state = tmp_path / "state"
    first, report1 = inventory(site.url, state=state)
    assert report1.rewalk.fetched == site.documents() and report1.rewalk.unchanged == 0
    assert report1.rewalk.downloaded == site.sent > 0
    expected = fresh(site)
    assert first == expected
    second, report2 = inventory(site.url, state=state)
    assert second == expected
    summary = report2.rewalk
    if mode == "neither":  # no validators: downloaded again, told unchanged by its bytes
        assert summary.same_body == site.documents() and summary.not_modified == 0
        assert summary.downloaded == site.sent == summary.total
    else:
        assert sum(site.full.values()) == 0, site.full
        assert sum(site.not_modified.values()) == site.documents()
        assert summary.not_modified == site.documents() and summary.fetched == 0
        assert summary.downloaded == 0 < summary.total
    assert report2.errors == [] and not report2.warnings
    assert len(generations(state)) == 1


@pytest.mark.parametrize("mode", ["etag", "last-modified", "weak"])
def test_the_conditional_headers_sent(make_site: Any, tmp_path: Path, mode: str) -> None:
    site = make_site(mode)
    inventory(site.url, state=tmp_path / "s")
    assert not any("if-none-match" in h or "if-modified-since" in h for h in site.requests)
    site.reset_counts()
    inventory(site.url, state=tmp_path / "s")
    asked = [h for h in site.requests if "if-none-match" in h or "if-modified-since" in h]
    assert len(asked) == site.documents()
    for headers in asked:
        if mode == "last-modified":
            assert "if-none-match" not in headers and headers["if-modified-since"].endswith("GMT")
        else:
            assert headers["if-none-match"].startswith('W/"' if mode == "weak" else '"')
            assert "if-modified-since" not in headers


@pytest.mark.parametrize("mode", ["etag", "last-modified", "neither"])
def test_one_changed_shard_is_the_only_shard_downloaded(
    make_site: Any, tmp_path: Path, mode: str
) -> None:
    site = make_site(mode)
    state = tmp_path / "state"
    inventory(site.url, state=state)
    site.change("/s1.xml")
    expected = fresh(site)
    assert any("new-in-v1" in line for line in expected)
    rows, report = inventory(site.url, state=state)
    assert rows == expected
    summary = report.rewalk
    # the shard, and the index whose lastmod for it moved
    assert summary.fetched == 2 and summary.unchanged == site.documents() - 2
    if mode != "neither":
        assert dict(site.full) == {"/s1.xml": 1, "/sitemap_index.xml": 1}
        assert summary.downloaded == site.sent < summary.total / 2
    # and the state now holds the new shard: a third walk downloads nothing (but 'neither')
    site.reset_counts()
    again, report3 = inventory(site.url, state=state)
    assert again == expected
    assert report3.rewalk.fetched == 0


def test_a_server_that_answers_304_to_anything(make_site: Any, tmp_path: Path) -> None:
    """A 304 to a request that asked nothing conditionally is an error of that document, with
    or without a state; nothing is stored, and the walk goes on."""
    site = make_site("always304")
    for options in ({}, {"state": tmp_path / "s"}):
        rows, report = inventory(site.url, **options)
        assert rows == []
        index = [d for d in report.errors if d.url.endswith("/sitemap_index.xml")]
        assert index and "304 Not Modified to a request that asked nothing" in str(index[0].error)
    assert (
        json.loads(next((tmp_path / "s").glob("gen-*/state.json")).read_text())["documents"] == []
    )


# -- --trust-lastmod ------------------------------------------------------------------------


def test_trust_lastmod_requests_only_what_the_index_says_changed(
    make_site: Any, tmp_path: Path
) -> None:
    site = make_site("etag", shards=5)
    state = tmp_path / "state"
    inventory(site.url, state=state, trust_lastmod=True)
    site.change("/s3.xml")
    expected = fresh(site)
    rows, report = inventory(site.url, state=state, trust_lastmod=True)
    assert rows == expected
    asked = Counter(site.full) + Counter(site.not_modified)
    assert set(asked) == {"/sitemap_index.xml", "/s3.xml"}, asked  # no request for the rest
    assert dict(site.full) == {"/sitemap_index.xml": 1, "/s3.xml": 1}
    assert report.rewalk.trusted == 4 and report.rewalk.fetched == 2
    assert "4 of 6 documents unchanged (index lastmod), 2 fetched" in report.rewalk.line()
    # without the flag the same walk asks every document
    site.reset_counts()
    rows, report = inventory(site.url, state=state)
    assert rows == expected and report.rewalk.not_modified == 6 and report.rewalk.trusted == 0


def test_trust_lastmod_needs_a_state() -> None:
    from sitescout import UsageError, WalkOptions

    with pytest.raises(UsageError, match="trust_lastmod needs a state"):
        WalkOptions(trust_lastmod=True)
    result = CliRunner().invoke(app, ["urls", "http://127.0.0.1:9/", "--trust-lastmod"])
    assert result.exit_code == 2 and "needs a state" in result.output


def test_an_index_that_stamps_every_child_is_told(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag")
    site.stamped = True
    state = tmp_path / "state"
    inventory(site.url, state=state)
    site.reset_counts()
    rows, report = inventory(site.url, state=state)
    assert rows and not report.warnings
    assert any("every child sitemap's lastmod moved" in n for n in report.notes)
    site.reset_counts()
    rows, report = inventory(site.url, state=state, trust_lastmod=True)
    assert len(report.warnings) == 1 and "--trust-lastmod saves nothing" in report.warnings[0]
    assert report.rewalk.trusted == 0
    assert sum(site.not_modified.values()) == len(site.paths)  # every child asked, unchanged


# -- the state is untrusted input ------------------------------------------------------------


def _current(state: Path) -> Path:
    return state / (state / "current").read_text().strip()


def _state_file(state: Path) -> Path:
    return _current(state) / "state.json"


def _edit(state: Path, change: Any) -> None:
    path = _state_file(state)
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _bad_body(state: Path) -> None:
    raw = next(_current(state).glob("*.raw"))
    raw.write_bytes(raw.read_bytes()[:-10] + b"0123456789")


CORRUPTIONS: dict[str, Any] = {
    "garbage": lambda s: _state_file(s).write_bytes(os.urandom(300)),
    "truncated": lambda s: _state_file(s).write_bytes(_state_file(s).read_bytes()[:150]),
    "empty": lambda s: _state_file(s).write_bytes(b""),
    "deep JSON": lambda s: _state_file(s).write_bytes(b"[" * 100_000),
    "not an object": lambda s: _state_file(s).write_text("[1, 2, 3]"),
    "another format": lambda s: _edit(s, lambda d: d.update(format="something-else")),
    "a future version": lambda s: _edit(s, lambda d: d.update(version=99)),
    "documents not a list": lambda s: _edit(s, lambda d: d.update(documents={"a": 1})),
    "a size of the wrong type": lambda s: _edit(s, lambda d: d["documents"][0].update(size="12")),
    "a negative size": lambda s: _edit(s, lambda d: d["documents"][0].update(size=-1)),
    "a bool for a size": lambda s: _edit(s, lambda d: d["documents"][0].update(size=True)),
    "a hash that is not one": lambda s: _edit(s, lambda d: d["documents"][0].update(sha256="zz")),
    "a file name out of the state": lambda s: _edit(
        s, lambda d: d["documents"][0].update(file="../../../etc/passwd")
    ),
    "a URL that is not text": lambda s: _edit(s, lambda d: d["documents"][0].update(url=7)),
    "current names nothing": lambda s: (s / "current").write_text("gen-00000000deadbeef\n"),
    "current is garbage": lambda s: (s / "current").write_bytes(b"../../etc\n"),
    "state.json missing": lambda s: _state_file(s).unlink(),
    "state.json a directory": lambda s: (_state_file(s).unlink(), _state_file(s).mkdir()),
}


@pytest.mark.parametrize("damage", sorted(CORRUPTIONS))
def test_a_damaged_state_is_ignored_with_one_warning(
    make_site: Any, tmp_path: Path, damage: str
) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    inventory(site.url, state=state)
    expected = fresh(site)
    CORRUPTIONS[damage](state)
    rows, report = inventory(site.url, state=state)
    assert rows == expected
    assert len(report.warnings) == 1 and "ignored" in report.warnings[0], report.warnings
    assert sum(site.full.values()) == site.documents()  # read in full
    assert report.rewalk.unchanged == 0 and report.errors == []
    # ... and written anew: the next walk downloads nothing
    site.reset_counts()
    again, report3 = inventory(site.url, state=state)
    assert again == expected and not report3.warnings
    assert sum(site.full.values()) == 0
    assert len(generations(state)) == 1


def test_another_sites_state_is_ignored(make_site: Any, tmp_path: Path) -> None:
    one, other = make_site("etag"), make_site("etag")
    state = tmp_path / "state"
    inventory(one.url, state=state)
    expected = fresh(other)
    rows, report = inventory(other.url, state=state)
    assert rows == expected
    assert len(report.warnings) == 1 and "another site" in report.warnings[0]
    assert not any("if-none-match" in h for h in other.requests)  # never asked with its tags


@pytest.mark.parametrize("damage", ["missing", "altered", "longer"])
def test_a_304_without_a_usable_stored_body_is_fetched_once_more(
    make_site: Any, tmp_path: Path, damage: str
) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    inventory(site.url, state=state)
    expected = fresh(site)
    raw = next(_current(state).glob("*.raw"))
    if damage == "missing":
        raw.unlink()
    elif damage == "altered":
        _bad_body(state)
    else:
        raw.write_bytes(raw.read_bytes() + b"<url><loc>http://evil.example/</loc></url>")
    rows, report = inventory(site.url, state=state)
    assert rows == expected
    assert report.rewalk.refetched == 1 and report.rewalk.not_modified == site.documents() - 1
    assert sum(site.full.values()) == 1 and sum(site.not_modified.values()) == site.documents()
    assert report.errors == []


def test_a_second_walk_into_the_same_state_is_refused(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    first = walk(site.url, state=state)
    with pytest.raises(ProjectError, match="another walk is running"):
        walk(site.url, state=state)
    result = CliRunner().invoke(app, ["urls", site.url, "--state", str(state), "-q"])
    assert result.exit_code == 2 and "another walk" in result.output
    assert sum(site.full.values()) == 0  # refused before any request
    del first  # dropped unwalked: the directory is free again
    import gc

    gc.collect()
    rows, _report = inventory(site.url, state=state)
    assert rows


def test_an_interrupted_walk_leaves_the_last_state(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag", shards=6)
    state = tmp_path / "state"
    inventory(site.url, state=state)
    before = (state / "current").read_text()
    site.change("/s1.xml")

    async def stop_early() -> None:
        w = walk(site.url, state=state, concurrency=1)
        async for _batch in w.batches():
            break

    import asyncio

    asyncio.run(stop_early())
    assert (state / "current").read_text() == before
    assert generations(state) == [before.strip()]
    expected = fresh(site)
    rows, report = inventory(site.url, state=state)
    assert rows == expected and report.rewalk.fetched == 2  # the shard and its index


def test_a_walk_killed_at_any_point_leaves_a_usable_state(make_site: Any, tmp_path: Path) -> None:
    """SIGKILL at random moments of walks into one state directory (some shards changing in
    between): every time, the next walk with it gives a fresh walk's inventory, and the
    directory never holds more than the state in force and the one being written."""
    site = make_site("etag", shards=6, urls=300)
    site.delay = 0.01
    state = tmp_path / "state"
    rng = random.Random(20261202)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "sitescout", "urls", site.url, "--state", str(state)]
    command += ["-o", os.devnull, "-q"]
    deadline = time.monotonic() + 120
    for trial in range(20):
        assert time.monotonic() < deadline, f"trial {trial}: out of time"
        if trial % 3 == 0:
            site.change(rng.choice(site.paths))
        proc = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.05, 0.9))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert len(generations(state)) <= 2 if state.exists() else True
        if trial % 4 == 3:
            expected = fresh(site)
            rows, report = inventory(site.url, state=state)
            assert rows == expected, f"trial {trial}"
            assert not report.warnings, report.warnings
            assert len(generations(state)) == 1


# -- secrets stay out of the state -----------------------------------------------------------


def test_credentials_never_reach_the_state(make_site: Any, tmp_path: Path) -> None:
    site = make_site("both")
    state = tmp_path / "state"
    options = {
        "headers": (("Authorization", f"Bearer {SECRET}"), ("X-Api-Key", SECRET + "-key")),
    }
    inventory(site.url, state=state, **options)
    inventory(site.url, state=state, **options)
    assert any(SECRET in h.get("authorization", "") for h in site.requests)  # it was sent
    for path in state.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


# -- the command line ------------------------------------------------------------------------


def test_the_cli_says_what_the_state_saved(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    runner = CliRunner()
    args = ["urls", site.url, "--state", str(state), "-o", str(tmp_path / "out.jsonl")]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert f"0 of {site.documents()} documents unchanged, {site.documents()} fetched" in (
        first.output
    )
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    n = site.documents()
    assert f"state: {n} of {n} documents unchanged (304), 0 fetched; 0 B of " in second.output
    third = runner.invoke(app, [*args, "--json"])
    summary = json.loads(third.output[third.output.index("{") :])
    assert summary["state"]["not_modified"] == n and summary["state"]["downloaded_bytes"] == 0
    assert summary["state"]["total_bytes"] > 0


def test_groups_and_report_take_the_state(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    runner = CliRunner()
    first = runner.invoke(app, ["groups", site.url, "--state", str(state), "--json"])
    assert first.exit_code == 0, first.output
    site.reset_counts()
    second = runner.invoke(app, ["groups", site.url, "--state", str(state), "--json"])
    assert second.exit_code == 0, second.output
    assert json.loads(second.output) == json.loads(first.output) | {
        "walk": json.loads(second.output)["walk"]
    }
    assert sum(site.full.values()) == 0
    report = runner.invoke(
        app, ["report", site.url, "--state", str(state), "-o", str(tmp_path / "r.html")]
    )
    assert report.exit_code == 0, report.output
    assert sum(site.full.values()) == 0


# -- --changes-only, and diff reading a state directory ---------------------------------------


def _lastmods(rows: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for line in rows:
        row = json.loads(line)
        out[row["url"]] = row.get("lastmod")
    return out


def _changes(path: Path) -> dict[str, tuple[str, str | None, str | None]]:
    found = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        found[row["url"]] = (row["change"], row["old_lastmod"], row["new_lastmod"])
    return found


def test_changes_only_writes_what_changed_since_the_last_walk(
    make_site: Any, tmp_path: Path
) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    runner = CliRunner()

    def run(name: str) -> Any:
        args = ["urls", site.url, "--state", str(state), "--changes-only"]
        return runner.invoke(app, [*args, "-o", str(tmp_path / name)])

    before = _lastmods(fresh(site))
    first = run("c1.jsonl")
    assert first.exit_code == 0, first.output
    assert "every URL is reported as added" in first.output
    assert _changes(tmp_path / "c1.jsonl") == {
        url: ("added", None, lastmod) for url, lastmod in before.items()
    }
    site.change("/s1.xml")
    after = _lastmods(fresh(site))
    second = run("c2.jsonl")
    assert second.exit_code == 0, second.output
    expected = {u: ("added", None, after[u]) for u in after.keys() - before.keys()}
    expected |= {u: ("removed", before[u], None) for u in before.keys() - after.keys()}
    expected |= {
        u: ("changed", before[u], after[u])
        for u in before.keys() & after.keys()
        if before[u] != after[u]
    }
    assert {c for c, _old, _new in expected.values()} == {"added", "removed", "changed"}
    assert _changes(tmp_path / "c2.jsonl") == expected
    assert "changes since the last walk: " in second.output
    # nothing changed since: no row; and the state directory reads as the last inventory
    third = run("c3.jsonl")
    assert third.exit_code == 0 and (tmp_path / "c3.jsonl").read_text() == ""
    full = tmp_path / "full.jsonl"
    full.write_text("\n".join(fresh(site)) + "\n")
    same = runner.invoke(app, ["diff", str(state), str(full)])
    assert same.exit_code == 0, same.output
    csv_run = runner.invoke(
        app,
        ["urls", site.url, "--state", str(state), "--changes-only", "-f", "csv", "--quiet"],
    )
    assert csv_run.exit_code == 0 and csv_run.output.splitlines() == [
        "url,change,old_lastmod,new_lastmod"
    ]


def test_a_partial_walk_reports_no_removals_and_keeps_the_inventory(
    make_site: Any, tmp_path: Path
) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    runner = CliRunner()
    args = ["urls", site.url, "--state", str(state), "--changes-only"]
    assert runner.invoke(app, [*args, "-o", str(tmp_path / "c1.jsonl")]).exit_code == 0
    stored = (state / "inventory.jsonl").read_bytes()
    site.change("/s0.xml.gz")
    site.site.add("/s1.xml", "gone", status=404)
    partial = runner.invoke(app, [*args, "-o", str(tmp_path / "c2.jsonl")])
    assert partial.exit_code == 1, partial.output
    assert "not reported as removed" in partial.output
    found = _changes(tmp_path / "c2.jsonl")
    assert found and {c for c, _o, _n in found.values()} <= {"added", "changed"}
    assert (state / "inventory.jsonl").read_bytes() == stored


def test_changes_only_needs_a_state_and_columns(tmp_path: Path) -> None:
    runner = CliRunner()
    alone = runner.invoke(app, ["urls", "http://127.0.0.1:9/", "--changes-only"])
    assert alone.exit_code == 2 and "needs --state" in alone.output
    txt = runner.invoke(
        app,
        ["urls", "http://127.0.0.1:9/", "--changes-only", "--state", str(tmp_path), "-f", "txt"],
    )
    assert txt.exit_code == 2 and "not txt" in txt.output
    bare = runner.invoke(app, ["diff", str(tmp_path), str(tmp_path)])
    assert bare.exit_code == 2 and "without a stored inventory" in bare.output


def test_the_state_is_private_to_its_user(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag")
    state = tmp_path / "state"
    inventory(site.url, state=state)
    generation = _current(state)
    assert generation.stat().st_mode & 0o777 == 0o700
    files = [p for p in generation.iterdir()]
    assert files and all(p.stat().st_mode & 0o077 == 0 for p in files), files


def test_reading_a_state_scales_linearly() -> None:
    """4x the documents in a state file cost at most 5x the time to read and check."""
    from sitescout._state import FORMAT, VERSION, parse_state

    def state_of(n: int) -> bytes:
        docs = [
            {
                "url": f"https://example.com/sitemaps/s{i}.xml.gz",
                "final_url": f"https://example.com/sitemaps/s{i}.xml.gz",
                "content_type": "application/gzip",
                "encoding": "",
                "etag": f'"{i:x}"',
                "last_modified": "Sat, 01 Jun 2024 00:00:00 GMT",
                "size": i,
                "sha256": f"{i:064x}",
                "file": f"{i:032x}.raw",
                "listed_lastmod": "2024-06-01",
            }
            for i in range(n)
        ]
        site = "https://example.com/"
        return json.dumps(
            {"format": FORMAT, "version": VERSION, "site": site, "documents": docs}
        ).encode()

    assert_linear(state_of, lambda data: parse_state(data, "https://example.com/"), 2_000)


def test_extract_walks_with_the_state(tmp_path: Path) -> None:
    from sitescout._extract.options import ExtractOptions

    options = ExtractOptions(state=tmp_path / "s", trust_lastmod=True)
    walk_options = options.walk_options()
    assert walk_options.state == tmp_path / "s" and walk_options.trust_lastmod
    assert ExtractOptions().walk_options().state is None


def test_a_walk_stopped_mid_document_leaves_no_open_file(make_site: Any, tmp_path: Path) -> None:
    site = make_site("etag", urls=2_000)
    site.stall = 2.0  # every shard stops halfway for a while: the walk is stopped inside them

    async def stop_early() -> None:
        w = walk(site.url, state=tmp_path / "state", concurrency=4)
        batches = w.batches()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.8):
                async for _batch in batches:
                    pass
        await batches.aclose()

    def open_files() -> set[str]:
        found = set()
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                found.add(os.readlink(f"/proc/self/fd/{fd}"))
        return found

    asyncio.run(stop_early())
    import gc

    gc.collect()
    left = [path for path in open_files() if str(tmp_path) in path]
    assert not left, left
    assert generations(tmp_path / "state") == []  # nothing committed, nothing left behind

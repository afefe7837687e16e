"""The project directory as untrusted input: shape errors, path traversal, symlinks, and two runs
into one directory. Real `sitescout extract` subprocesses against loopback sites where the exit code
and the message are what a user sees; `Project.open` directly where only the loader is at stake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sitescout._errors import UsageError
from sitescout._extract import ExtractOptions
from sitescout._project import CRAWL_LOG, LOCK, PAGES, STATE, Project, ProjectError

from .scaling import assert_linear
from .server import Reply, RequestHandler, Site, urlset
from .test_cli_extract import page, run

AT = "2026-01-01T00:00:00.000Z"


def state_file(origin: str, pages: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, "origin": origin, "updatedAt": AT, "pages": pages}


def crawl_log(origin: str, runs: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, "origin": origin, "runs": runs}


def record(url: str, status: str = "discovered") -> dict[str, Any]:
    return {"url": url, "status": status, "history": [{"status": status, "at": AT, "run": 0}]}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` (the lock file aside) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name != LOCK
    }


def two_page_site(site: Site) -> None:
    site.add("/", page("Home"), Content_Type="text/html")
    site.add("/about/", page("About"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/about/"]))


# --- item 3: slugs read back from project files are file names ---------------------------------


def test_a_traversal_slug_in_state_is_refused_before_anything_is_written(
    site: Site, tmp_path: Path
) -> None:
    two_page_site(site)
    out = tmp_path / "a" / "b" / "c" / "project"
    out.mkdir(parents=True)
    bad = state_file(site.url, {"../../../escaped-by-slug": record(site.url + "/about/")})
    (out / STATE).write_text(json.dumps(bad))
    before = snapshot(tmp_path)
    proc = run("extract", site.url + "/", "--out", str(out), "--all", "--yes")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert str(out / STATE) in proc.stderr and "escaped-by-slug" in proc.stderr
    assert list(tmp_path.rglob("escaped-by-slug*")) == []
    assert snapshot(tmp_path) == before
    assert site.hits == {}


@pytest.mark.parametrize("slug", ["../x", "a/b", "A", "", ".", "x.json", "a" * 201, "é"])
def test_every_slug_outside_the_alphabet_is_refused(tmp_path: Path, slug: str) -> None:
    (tmp_path / STATE).write_text(json.dumps(state_file("https://x.com", {slug: record("u")})))
    with pytest.raises(ProjectError, match=r"state\.json"):
        Project.open(tmp_path, "https://x.com")


def test_write_page_refuses_a_slug_outside_the_alphabet(tmp_path: Path) -> None:
    project = Project.open(tmp_path / "p", "https://x.com")
    try:
        with pytest.raises(ProjectError, match="slug"):
            project.write_page("../escaped", {})
    finally:
        project.close()
    assert list(tmp_path.rglob("escaped*")) == []


# --- item 7: wrongly typed project files -----------------------------------------------------

ORIGIN = "https://x.com"
SHAPES = [
    pytest.param(STATE, state_file(ORIGIN, []), "pages", id="pages-list"),
    pytest.param(STATE, state_file(ORIGIN, None), "pages", id="pages-null"),
    pytest.param(STATE, state_file(ORIGIN, {"home": "x"}), "home", id="record-string"),
    pytest.param(
        STATE,
        state_file(ORIGIN, {"home": {"status": "extracted", "history": []}}),
        "url",
        id="no-url",
    ),
    pytest.param(
        STATE,
        state_file(ORIGIN, {"home": {"url": "u", "status": "extracted", "history": None}}),
        "history",
        id="history-null",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"home": record("u", "gone")}), "status", id="bad-status"
    ),
    pytest.param(STATE, [], "object", id="state-list"),
    pytest.param(CRAWL_LOG, crawl_log(ORIGIN, 5), "runs", id="runs-int"),
    pytest.param(CRAWL_LOG, crawl_log(ORIGIN, "abc"), "runs", id="runs-string"),
    pytest.param(CRAWL_LOG, crawl_log(ORIGIN, [5]), "runs", id="run-int"),
    pytest.param(CRAWL_LOG, {"origin": ORIGIN, "runs": []}, "schemaVersion", id="no-version"),
    pytest.param(CRAWL_LOG, crawl_log(ORIGIN, []) | {"schemaVersion": 2}, "schemaVersion", id="v2"),
    pytest.param(CRAWL_LOG, "null", "object", id="log-null"),
]


@pytest.mark.parametrize(("name", "data", "where"), SHAPES)
def test_a_wrongly_typed_file_is_a_clear_project_error(
    tmp_path: Path, name: str, data: Any, where: str
) -> None:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    before = snapshot(tmp_path)
    with pytest.raises(ProjectError) as caught:
        Project.open(tmp_path, ORIGIN)
    message = str(caught.value)
    assert str(path) in message and where in message
    assert "\n" not in message
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param(CRAWL_LOG, {"runs": "abc"}, id="runs-string"),
        pytest.param(STATE, {"pages": []}, id="pages-list"),
        pytest.param(
            STATE, {"pages": {"home": {"url": "u", "status": "discovered"}}}, id="no-hist"
        ),
    ],
)
def test_the_cli_exits_2_and_leaves_a_wrongly_typed_file_alone(
    site: Site, tmp_path: Path, name: str, data: dict[str, Any]
) -> None:
    two_page_site(site)
    base = crawl_log(site.url, []) if name == CRAWL_LOG else state_file(site.url, {})
    raw = json.dumps(base | data).encode()
    (tmp_path / name).write_bytes(raw)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and str(tmp_path / name) in proc.stderr
    assert (tmp_path / name).read_bytes() == raw
    assert not (tmp_path / PAGES).exists()
    assert site.hits == {}


def test_values_that_cannot_be_written_back_are_refused(tmp_path: Path) -> None:
    """NaN, a number too large for a float, lone surrogates and absurd nesting: each would crash
    the parser or the rewrite (`1e400` would be written back as `Infinity`, which is not JSON)."""
    path = tmp_path / STATE
    cases = [
        json.dumps(state_file(ORIGIN, {})).replace("{}", "{}, " + '"n": NaN'),
        json.dumps(state_file(ORIGIN, {})).replace("{}", "{}, " + '"n": -1e400'),
        json.dumps(state_file(ORIGIN, {"home": record("\ud800")})),
        json.dumps(state_file(ORIGIN, {})).replace(
            "{}", "{}, " + '"x": ' + "[" * 100_000 + "]" * 100_000
        ),
    ]
    for text in cases:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        before = path.read_bytes()
        with pytest.raises(ProjectError, match=r"state\.json"):
            Project.open(tmp_path, ORIGIN)
        assert path.read_bytes() == before


def test_a_fifo_in_place_of_the_state_file_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / STATE)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            Project.open(tmp_path, ORIGIN).close()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # unblock the reader so the thread ends, then fail
        fd = os.open(tmp_path / STATE, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(5)
        pytest.fail("Project.open blocked on a FIFO")
    assert isinstance(outcome[0], ProjectError) and "regular file" in str(outcome[0])


def test_a_valid_project_loads(tmp_path: Path) -> None:
    (tmp_path / STATE).write_text(json.dumps(state_file(ORIGIN, {"home": record(ORIGIN + "/")})))
    (tmp_path / CRAWL_LOG).write_text(json.dumps(crawl_log(ORIGIN, [])))
    project = Project.open(tmp_path, ORIGIN)
    try:
        assert project.pages["home"].url == ORIGIN + "/"
        assert project.runs == []
    finally:
        project.close()


# --- item 11: symlinks out of the project ------------------------------------------------------


def test_a_pages_symlink_out_of_the_project_is_refused(site: Site, tmp_path: Path) -> None:
    two_page_site(site)
    out, outside = tmp_path / "project", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / PAGES).symlink_to(outside)
    proc = run("extract", site.url + "/", "--out", str(out), "--yes")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "symbolic link" in proc.stderr
    assert list(outside.iterdir()) == []
    assert site.hits == {}


def test_page_writes_do_not_follow_a_symlink_made_during_the_run(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = Project.open(tmp_path / "p", ORIGIN)
    try:
        project.write_page("home", {"ok": 1})
        (tmp_path / "p" / PAGES / "home.json").unlink()
        (tmp_path / "p" / PAGES).rmdir()
        (tmp_path / "p" / PAGES).symlink_to(outside)
        with pytest.raises(ProjectError, match="symbolic link"):
            project.write_page("about", {"ok": 1})
    finally:
        project.close()
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", [STATE, CRAWL_LOG, LOCK])
def test_a_project_file_that_is_a_symlink_is_refused(tmp_path: Path, name: str) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(state_file(ORIGIN, {})))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / name).symlink_to(target)
    with pytest.raises(ProjectError, match="symbolic link"):
        Project.open(tmp_path / "p", ORIGIN)
    assert json.loads(target.read_text()) == state_file(ORIGIN, {})


# --- item 4: one run at a time -----------------------------------------------------------------


def test_a_second_open_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = Project.open(tmp_path, ORIGIN)
    try:
        with pytest.raises(
            ProjectError, match=f"another extract is running in .* \\(pid {os.getpid()}\\)"
        ):
            Project.open(tmp_path, ORIGIN)
    finally:
        first.close()
    Project.open(tmp_path, ORIGIN).close()


def test_a_stale_lock_file_does_not_block(site: Site, tmp_path: Path) -> None:
    two_page_site(site)
    (tmp_path / LOCK).write_text("999999999\n")
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes")
    assert proc.returncode == 0, proc.stderr


def ten_page_site(site: Site) -> tuple[list[str], list[str]]:
    def slow(handler: RequestHandler) -> Reply:
        time.sleep(0.4)  # long enough that two runs started together overlap
        return Reply(200, page(handler.path).encode(), {"Content-Type": "text/html"})

    first = [f"/a{i}/" for i in range(5)]
    second = [f"/b{i}/" for i in range(5)]
    site.add("/", page("Home"), Content_Type="text/html")
    for path in first + second:
        site.handle(path, slow)
    site.add("/sitemap.xml", urlset([site.url + p for p in ["/", *first, *second]]))
    return first, second


@pytest.mark.parametrize("offset", [0.0, 0.3])
def test_two_runs_into_one_directory_lose_nothing(
    site: Site, tmp_path: Path, offset: float
) -> None:
    first, second = ten_page_site(site)
    procs: list[subprocess.Popen[str]] = []
    try:
        for paths in (first, second):
            args = ["extract", site.url + "/", "--out", str(tmp_path), "--pages", ",".join(paths)]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "sitescout", *args, "--yes"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    stdin=subprocess.DEVNULL,
                    text=True,
                )
            )
            time.sleep(offset)
        results = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    codes = sorted(p.returncode for p in procs)
    log = json.loads((tmp_path / CRAWL_LOG).read_text())
    state = json.loads((tmp_path / STATE).read_text())
    assert all(r["crawl"]["finishedAt"] is not None for r in log["runs"])
    extracted = {s for s, rec in state["pages"].items() if rec["status"] == "extracted"}
    if codes == [0, 0]:
        assert len(log["runs"]) == 2
        assert len(extracted) == 10
    else:
        assert codes == [0, 2], results
        loser = next(err for p, (_, err) in zip(procs, results, strict=True) if p.returncode == 2)
        assert f"another extract is running in {tmp_path} (pid " in loser
        assert len(log["runs"]) == 1
        assert len(extracted) == 5
        assert site.hits["/sitemap.xml"] == 1  # the loser stopped before any request
    assert len(list((tmp_path / PAGES).glob("*.json"))) == len(extracted)


def test_the_lock_is_released_after_ctrl_c(
    site: Site, release: threading.Event, tmp_path: Path
) -> None:
    """An interrupted run must not leave the directory locked for the next one."""
    import signal

    def slow(handler: RequestHandler) -> Reply:
        release.wait(20)
        return Reply(200, page("Slow").encode(), {"Content-Type": "text/html"})

    site.add("/", page("Home"), Content_Type="text/html")
    site.handle("/a/", slow)
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/a/"]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitescout", "extract", site.url + "/", "--out", str(tmp_path),
         "--all", "--yes"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not site.hits["/a/"]:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1
    release.set()
    Project.open(tmp_path, site.url).close()


# --- options validate at construction ----------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "option"),
    [
        pytest.param({"cap": 0}, "--cap", id="cap-zero"),
        pytest.param({"cap": 3, "all": True}, "--all", id="cap-all"),
        pytest.param({"concurrency": 0}, "--concurrency", id="concurrency-zero"),
    ],
)
def test_extract_options_reject_bad_values_at_construction(kw: dict[str, Any], option: str) -> None:
    with pytest.raises(UsageError, match=option):
        ExtractOptions(**kw)


def test_the_cli_reports_a_bad_concurrency_as_a_usage_error(tmp_path: Path) -> None:
    proc = run("extract", "http://127.0.0.1:9/", "--out", str(tmp_path), "--concurrency", "0")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "--concurrency" in proc.stderr


# --- scaling -----------------------------------------------------------------------------------


@pytest.mark.scaling
def test_loading_state_is_linear_in_pages(tmp_path: Path) -> None:
    def project_of(n: int) -> Path:
        directory = tmp_path / str(n)
        directory.mkdir()
        pages = {f"p{i}": record(f"{ORIGIN}/p{i}/", "extracted") for i in range(n)}
        (directory / STATE).write_text(json.dumps(state_file(ORIGIN, pages)))
        return directory

    assert_linear(project_of, lambda directory: Project.open(directory, ORIGIN).close(), 3000)


# --- the schemas stay the one statement of a valid file; a bad file gets one clear line --------


def a_run() -> dict[str, Any]:
    """A crawl-log run with every required field and no other."""
    ref = {"url": ORIGIN + "/", "slug": "home", "type": None, "priority": None, "lastmod": None}
    discovery = {
        "source": "sitemap", "sourceUrl": None, "fetchedAt": AT, "discoveredCount": 1,
        "filteredCount": 0, "filteredAsJunk": [], "cappedAt": None, "cap": None,
        "capSource": "--all", "userChoice": None, "kept": [ref | {"score": 1, "reason": "all"}],
        "cut": [], "scores": {"rules": {}, "urls": {}}, "malformed": [], "requiresAuth": [],
        "notes": [], "budgetsHit": [], "warnings": [],
    }  # fmt: skip
    return {
        "_provenance": {"writtenBy": "sitescout", "writtenAt": AT, "version": "0.1.0"},
        "discovery": discovery,
        "crawl": {"startedAt": AT, "finishedAt": None, "successes": 0, "failures": []},
    }


def with_run(**crawl: Any) -> dict[str, Any]:
    run = a_run()
    run["crawl"] |= crawl
    return crawl_log(ORIGIN, [run])


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


A_MEGABYTE = {f"k{i}": "v" * 100 for i in range(10_000)}  # where a string belongs
TIMESTAMP = "'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]+)?Z$'"
MESSAGES = [
    pytest.param(
        STATE, state_file(ORIGIN, {"home": record("u") | {"url": A_MEGABYTE}}),
        "expected string, got object (at $.pages.home.url)", id="type",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {}) | {"schemaVersion": True},
        "expected one of [1], got boolean True (at $.schemaVersion)", id="const",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"home": record("u", "gone")}),
        "expected one of ['discovered', 'extracted', 'failed'], got string 'gone' "
        "(at $.pages.home.status)", id="enum",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"home": {"url": "u", "status": "failed"}}),
        "'history' is a required property (at $.pages.home)", id="required",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"home": {"url": "u", "status": "failed", "history": []}}),
        "expected at least 1 items, got 0 (at $.pages.home.history)", id="min-items",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"../x": record("u")}),
        "key '../x' does not match '^[a-z0-9_-]+$' (at $.pages)", id="key-pattern",
    ),
    pytest.param(
        STATE, state_file(ORIGIN, {"a" * 5000: record("u")}),
        f"key longer than 200 characters: '{'a' * 116}... (at $.pages)", id="key-length",
    ),
    pytest.param(
        CRAWL_LOG, with_run(successes=-1),
        "expected at least 0, got number -1 (at $.runs[0].crawl.successes)", id="minimum",
    ),
    pytest.param(
        CRAWL_LOG, with_run(startedAt="2026-01-01T00:00:00.000Z\n"),
        f"'2026-01-01T00:00:00.000Z\\n' does not match {TIMESTAMP} (at $.runs[0].crawl.startedAt)",
        id="pattern-dollar-ends-the-text",
    ),
    pytest.param(
        CRAWL_LOG, with_run(startedAt="٢٠٢٦-01-01T00:00:00.000Z"),
        f"'٢٠٢٦-01-01T00:00:00.000Z' does not match {TIMESTAMP} (at $.runs[0].crawl.startedAt)",
        id="pattern-ascii-digits",
    ),
    pytest.param(
        CRAWL_LOG, with_run(finishedAt=5),
        "expected string, got number 5; or expected null, got number 5 "
        "(at $.runs[0].crawl.finishedAt)", id="any-of",
    ),
    pytest.param(
        CRAWL_LOG, crawl_log(ORIGIN, [a_run() | {"crawl": nested(300)}]),
        "a value is nested too deeply (Recursion limit reached)", id="deep",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "problem"), MESSAGES)
def test_a_bad_file_gets_one_line_naming_the_file_the_place_and_the_problem(
    tmp_path: Path, name: str, data: Any, problem: str
) -> None:
    (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProjectError) as caught:
        Project.open(tmp_path, ORIGIN)
    kind = "state" if name == STATE else "crawl-log"
    assert str(caught.value) == f"{tmp_path / name} is not a valid sitescout {kind} file: {problem}"


def test_what_the_schema_does_not_describe_is_kept_as_it_is(tmp_path: Path) -> None:
    """Keys the schema leaves open (a newer version's, a user's) load and are written back."""
    log = crawl_log(ORIGIN, [a_run() | {"extra": nested(500), "big": 10**100}])
    (tmp_path / CRAWL_LOG).write_text(json.dumps(log))
    project = Project.open(tmp_path, ORIGIN)
    try:
        project.flush()
    finally:
        project.close()
    assert json.loads((tmp_path / CRAWL_LOG).read_text())["runs"] == log["runs"]


async def test_a_run_whose_pages_directory_turns_into_a_link_writes_nothing_outside(
    site: Site, tmp_path: Path
) -> None:
    from sitescout._extract import plan_extract, run_extract

    two_page_site(site)
    out, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    options = ExtractOptions(out=out, all=True)
    plan = await plan_extract(site.url + "/", options)
    (out / PAGES).symlink_to(outside)  # after the checks at open, before the first page lands
    result = await run_extract(plan, options)
    assert list(outside.iterdir()) == []
    assert sorted(f.error_class or "" for f in result.failures) == ["InternalError"] * 2
    crawl = json.loads((out / CRAWL_LOG).read_text())["runs"][0]["crawl"]
    assert crawl["finishedAt"] is not None and len(crawl["failures"]) == 2

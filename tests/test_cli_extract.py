"""`sitescout extract` and `sitescout demo` as real subprocesses: output, exit codes, asking,
and an interrupted run leaving complete files."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema

from sitescout._project import CRAWL_LOG, STATE, schema

from .server import Reply, RequestHandler, Site, urlset


def run(
    *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def page(title: str) -> str:
    return f"<html><head><title>{title}</title></head><body><p>{title} text</p></body></html>"


def small_site(site: Site) -> None:
    site.add("/", page("Home"), Content_Type="text/html")
    site.add("/about/", page("About"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/about/"]))


def test_few_templates_warns_and_proceeds_without_a_tty(site: Site, tmp_path: Path) -> None:
    small_site(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "Discovered 2 pages on" in proc.stdout
    assert "Selecting 2 highest-priority pages:" in proc.stdout
    assert "Extracted 2 pages into" in proc.stdout
    assert "warning:" in proc.stderr and "template" in proc.stderr
    run0 = json.loads((tmp_path / CRAWL_LOG).read_text())["runs"][0]
    assert run0["discovery"]["userChoice"] == "proceed (non-interactive)"
    assert site.hits["/about/"] == 1


def test_json_summary_is_one_document_on_stdout(site: Site, tmp_path: Path) -> None:
    small_site(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--json", "--yes")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert sorted(summary["extracted"]) == ["about", "home"]
    assert summary["selection"]["capSource"] == "default"
    assert summary["userChoice"] == "proceed (--yes)"


def test_conflicting_scope_flags_are_a_usage_error(site: Site, tmp_path: Path) -> None:
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--cap", "3", "--all")
    assert proc.returncode == 2
    assert "only one of" in proc.stderr
    assert site.hits == {}


def test_another_origin_exits_2(site: Site, tmp_path: Path) -> None:
    small_site(site)
    (tmp_path / CRAWL_LOG).write_text(json.dumps({"origin": "https://example.com", "runs": []}))
    proc = run("extract", site.url + "/", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "belongs to https://example.com" in proc.stderr
    assert site.hits == {}


def test_sigint_mid_run_leaves_complete_files(
    site: Site, release: threading.Event, tmp_path: Path
) -> None:
    def slow(handler: RequestHandler) -> Reply:
        release.wait(20)
        return Reply(200, page("Slow").encode(), {"Content-Type": "text/html"})

    site.add("/", page("Home"), Content_Type="text/html")
    for name in ("a", "b", "c"):
        site.handle(f"/{name}/", slow)
    site.add("/sitemap.xml", urlset([site.url + p for p in ("/", "/a/", "/b/", "/c/")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitescout", "extract", site.url + "/", "--out", str(tmp_path),
         "--all", "--yes"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not ((tmp_path / "pages" / "home.json").exists() and site.hits["/c/"]):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr
    assert "interrupted" in stderr
    log = json.loads((tmp_path / CRAWL_LOG).read_text())
    state = json.loads((tmp_path / STATE).read_text())
    jsonschema.validate(log, schema("crawl-log"))
    jsonschema.validate(state, schema("state"))
    assert log["runs"][0]["crawl"]["interrupted"] is True
    assert state["pages"]["home"]["status"] == "extracted"
    assert state["pages"]["a"]["status"] == "discovered"


def test_demo_prints_the_selection_and_writes_the_artifacts(tmp_path: Path) -> None:
    proc = run("demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Selecting 5 highest-priority pages:" in proc.stdout
    assert "  - / (home)" in proc.stdout
    assert "Filtered as likely junk (3): /holiday1/, /sample-page/, /test/" in proc.stdout
    out = tmp_path / "sitescout-demo"
    assert (out / CRAWL_LOG).is_file() and (out / STATE).is_file()
    assert len(list((out / "pages").glob("*.json"))) == 5
    # A second demo serves on another port: it starts a fresh project instead of refusing.
    again = run("demo", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(json.loads((out / CRAWL_LOG).read_text())["runs"]) == 1


def test_url_budget_cut_prints_the_truncation_notice(site: Site, tmp_path: Path) -> None:
    urls = [f"{site.url}/p{i}/" for i in range(30)]
    for u in urls:
        site.add(u.removeprefix(site.url), page("P"), Content_Type="text/html")
    site.add("/", page("Home"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", *urls]))
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--max-urls", "10", "--cap", "2")
    assert proc.returncode == 1, proc.stderr  # a budget bound: partial
    assert (
        "Discovered 31 page URLs across 1 leaf sitemap. "
        "Truncated discovery to the first 10 page URLs; pass --all to lift the limit."
    ) in proc.stderr
    assert "Sitemap URL limit (10 URLs) reached; discovery results are partial." in proc.stderr
    run0 = json.loads((tmp_path / CRAWL_LOG).read_text())["runs"][0]["discovery"]
    assert run0["budgetsHit"] == ["max_urls"]
    assert run0["truncation"].startswith("Discovered 31 page URLs")


def test_all_asks_before_a_walk_estimated_above_100k_urls() -> None:
    from sitescout._scope import ScopeEstimate
    from sitescout.cli.extract import walk_question

    def estimate(children: int) -> ScopeEstimate:
        return ScopeEstimate(
            root_url="https://x.com/",
            top_sitemap_urls=("https://x.com/sitemap.xml",),
            source="robots.txt",
            url_estimate_range=(children * 1000, children * 50000),
            sub_sitemap_count=children,
            languages_detected=(),
            expected_duration_seconds=children / 8 * 1.5,
            transport="fetch",
        )

    assert walk_question(estimate(100)) is None  # 100,000 is not above 100,000
    question = walk_question(estimate(531))
    assert question is not None
    assert question.startswith("--all walks every sitemap: an estimated 531,000–26,550,000 URLs")
    assert question.endswith("proceed?")  # typer.confirm adds its own [y/N]


def test_extract_on_a_site_without_sitemap_says_it_crawled(site: Site, tmp_path: Path) -> None:
    site.add("/", '<html><title>Home</title><a href="/about/">About</a></html>',
             Content_Type="text/html")  # fmt: skip
    site.add("/about/", page("About"), Content_Type="text/html")
    proc = run("extract", site.url + "/", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"Discovered 2 pages on {site.url} (link crawl" in proc.stdout


def test_the_locale_note_follows_the_first_line(site: Site, tmp_path: Path) -> None:
    u = site.url
    pages = ["/", "/about/", "/fr/", "/fr/a-propos/"]
    for path in pages:
        site.add(path, page(path), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([u + path for path in pages]))
    proc = run("extract", u + "/", "--out", str(tmp_path), "--yes")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Discovered 2 pages on")
    assert lines[1] == (
        "multi-locale site: extracting the default locale only (un-localized paths); "
        "2 URLs in other locales skipped"
    )
    notes = json.loads((tmp_path / CRAWL_LOG).read_text())["runs"][0]["discovery"]["notes"]
    assert lines[1] in notes


def test_one_locale_shows_no_locale_note(site: Site, tmp_path: Path) -> None:
    small_site(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith("Selecting")


def test_an_empty_pages_list_is_a_usage_error(tmp_path: Path) -> None:
    proc = run("extract", "http://127.0.0.1:9/", "--out", str(tmp_path), "--pages", " , ")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "error: --pages needs at least one slug or path\n"

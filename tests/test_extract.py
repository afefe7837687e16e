"""The extraction run (§11, §12) against real servers on 127.0.0.1: selection on the sample site,
failure classes from real server behaviour, artifacts validated against the shipped schemas,
re-runs and interruptions."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sitescout._errors import UsageError
from sitescout._extract import ExtractOptions, Plan, RunResult, plan_extract, run_extract
from sitescout._http import FetchConfig, Fetcher
from sitescout._pages import extract_page
from sitescout._project import CRAWL_LOG, STATE, ProjectError, schema

from .server import InFlight, Reply, RequestHandler, Site, urlset


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    from sitescout._demo.server import serve

    with serve() as base:
        yield base + "/"


def html(title: str, body: str = "<p>Some words on the page.</p>") -> str:
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{body}<a href='/'>home</a></body></html>"
    )


async def extract(url: str, out: Path, **kw: Any) -> tuple[Plan, RunResult]:
    options = ExtractOptions(out=out, **kw)
    plan = await plan_extract(url, options)
    result = await run_extract(plan, options, user_choice="test")
    return plan, result


def load(out: Path, name: str) -> Any:
    return json.loads((out / name).read_text(encoding="utf-8"))


def validate(out: Path) -> None:
    jsonschema.validate(load(out, CRAWL_LOG), schema("crawl-log"))
    jsonschema.validate(load(out, STATE), schema("state"))
    for page in (out / "pages").glob("*.json"):
        jsonschema.validate(json.loads(page.read_text(encoding="utf-8")), schema("page"))


def kept_paths(plan: Plan) -> list[str]:
    return [s.path for s in plan.selection.kept]


# --- the sample site -----------------------------------------------------------------------------


async def test_default_run_on_the_sample_site(demo: str, tmp_path: Path) -> None:
    plan, result = await extract(demo, tmp_path)
    sel = plan.selection
    # Distinct templates, home first: the checklist fills before the score does.
    assert [s.page_type for s in sel.kept] == ["home", "pillar", "article", "listing", "form"]
    assert sel.cap == 5 and sel.cap_source == "default"
    assert dict(sel.junk) == {
        f"{demo}test/": "^/test(\\b|-|\\d|/)",
        f"{demo}sample-page/": "/sample-?page/",
        f"{demo}holiday1/": "/holiday[0-9]+(/|$)",
    }
    assert [s.url for s in sel.requires_auth] == [f"{demo}account/settings/"]
    # Default locale only: no /fr/ page is a candidate, and the output says why.
    every = [s.url for s in (*sel.kept, *sel.cut)]
    assert every and not any("/fr/" in u for u in every)
    assert plan.other_locales == 3
    assert any(n.startswith("multi-locale site") for n in plan.report.notes)

    assert sorted(result.successes) == sorted(s.slug for s in sel.kept)
    assert result.failures == []
    validate(tmp_path)
    log = load(tmp_path, CRAWL_LOG)
    assert len(log["runs"]) == 1
    discovery = log["runs"][0]["discovery"]
    assert discovery["capSource"] == "default"
    assert discovery["requiresAuth"] == [f"{demo}account/settings/"]
    assert {j["pattern"] for j in discovery["filteredAsJunk"]} == set(dict(sel.junk).values())
    assert discovery["userChoice"] == "test"
    about = next(k for k in discovery["kept"] if k["slug"] == "about")
    assert discovery["scores"]["urls"][about["url"]]
    state = load(tmp_path, STATE)
    assert {slug: rec["status"] for slug, rec in state["pages"].items()} == {
        s.slug: "extracted" for s in sel.kept
    }
    page = json.loads((tmp_path / "pages" / "about.json").read_text())
    assert page["title"] == "About Acme"
    assert page["status"] == 200
    assert page["headings"][0] == {"level": 1, "text": "About us"}


@pytest.mark.parametrize(
    ("flags", "source", "expected"),
    [
        pytest.param({"cap": 3}, "--cap", ["/", "/about/", None], id="cap-3"),
        pytest.param(
            {"pages": ("about", "pricing")}, "--pages", ["/about/", "/pricing/"], id="pages"
        ),
        pytest.param({"single": True}, "--single", ["/"], id="single"),
    ],
)
async def test_scope_flags_change_kept(
    demo: str, tmp_path: Path, flags: dict[str, Any], source: str, expected: list[str | None]
) -> None:
    plan, result = await extract(demo, tmp_path, **flags)
    paths = kept_paths(plan)
    assert len(paths) == len(expected)
    assert all(want is None or got == want for got, want in zip(paths, expected, strict=True))
    assert plan.selection.cap_source == source
    assert len(result.successes) == len(expected)
    run = load(tmp_path, CRAWL_LOG)["runs"][0]["discovery"]
    assert run["capSource"] == source and run["cap"] == plan.selection.cap


async def test_all_keeps_every_candidate_and_lifts_the_preset(demo: str, tmp_path: Path) -> None:
    options = ExtractOptions(out=tmp_path, all=True)
    plan = await plan_extract(demo, options)
    assert plan.selection.cut == ()
    assert plan.selection.cap is None and plan.selection.cap_source == "--all"
    # Every page of the default locale but junk and the auth area: 54 - 3 - 1.
    assert len(plan.selection.kept) == 50
    assert options.walk_budgets().max_fetches is None


# --- failure classes -----------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def failing_site(site: Site, release: threading.Event) -> dict[str, str]:
    """A site whose pages each fail one way; returns path → the error class expected."""

    def slow(handler: RequestHandler) -> Reply:
        release.wait(5)
        return Reply(200, html("Slow").encode(), {"Content-Type": "text/html"})

    site.add("/", html("Home"), Content_Type="text/html")
    site.add("/about/", html("About"), Content_Type="text/html")
    site.add("/missing/", "<html>gone</html>", 404, Content_Type="text/html")
    site.add("/report/", b"%PDF-1.4 ...", Content_Type="application/pdf")
    site.add("/blank/", b"", Content_Type="text/html")
    site.add("/shell/", "<html><head><title>App</title><script>x()</script></head></html>",
             Content_Type="text/html")  # fmt: skip
    site.handle("/slow/", slow)
    pages = ["/", "/about/", "/missing/", "/report/", "/blank/", "/shell/", "/slow/"]
    site.add("/sitemap.xml", urlset([site.url + p for p in pages]))
    return {
        "/missing/": "HTTPError",
        "/report/": "ContentTypeError",
        "/blank/": "EmptyPageError",
        "/shell/": "EmptyPageError",
        "/slow/": "TimeoutError",
    }


async def test_failure_classes_are_recorded_and_do_not_stop_the_others(
    site: Site, release: threading.Event, tmp_path: Path
) -> None:
    expected = failing_site(site, release)
    _plan, result = await extract(
        site.url + "/", tmp_path, all=True, fetch=FetchConfig(timeout=1.0, retries=0)
    )
    got = {f.url.removeprefix(site.url): f.error_class for f in result.failures}
    assert got == expected
    assert sorted(result.successes) == ["about", "home"]
    validate(tmp_path)
    failures = load(tmp_path, CRAWL_LOG)["runs"][0]["crawl"]["failures"]
    assert {f["slug"]: f["errorClass"] for f in failures} == {
        "missing": "HTTPError",
        "report": "ContentTypeError",
        "blank": "EmptyPageError",
        "shell": "EmptyPageError",
        "slow": "TimeoutError",
    }
    state = load(tmp_path, STATE)["pages"]
    assert state["slow"]["status"] == "failed"
    assert state["slow"]["history"][-1]["errorClass"] == "TimeoutError"
    # The PDF's body was never read past its headers.
    assert site.hits["/report/"] == 1


async def test_closed_port_is_a_network_error() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    async with Fetcher(FetchConfig(retries=0, connect_timeout=2)) as fetcher:
        outcome = await extract_page(fetcher, url)
    assert outcome.error_class == "NetworkError"
    assert not outcome.ok


async def test_a_page_whose_handler_dies_is_a_network_error(site: Site, tmp_path: Path) -> None:
    def dies(handler: RequestHandler) -> None:
        raise RuntimeError("handler crashed")

    site.add("/", html("Home"), Content_Type="text/html")
    site.handle("/about/", dies)
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/about/"]))
    _, result = await extract(site.url + "/", tmp_path, all=True, fetch=FetchConfig(retries=0))
    assert result.successes == ["home"]
    assert [f.error_class for f in result.failures] == ["NetworkError"]
    validate(tmp_path)


# --- artifacts and re-runs -----------------------------------------------------------------------


async def test_second_run_appends_and_skips_what_is_extracted(demo: str, tmp_path: Path) -> None:
    _first_plan, first = await extract(demo, tmp_path)
    run0 = load(tmp_path, CRAWL_LOG)["runs"][0]
    _plan, second = await extract(demo, tmp_path)
    log = load(tmp_path, CRAWL_LOG)
    assert len(log["runs"]) == 2
    assert log["runs"][0] == run0
    assert second.successes == []
    assert sorted(second.skipped) == sorted(first.successes)
    assert sorted(log["runs"][1]["crawl"]["skipped"]) == sorted(first.successes)
    validate(tmp_path)


async def test_refresh_re_extracts_one_slug_and_keeps_history(demo: str, tmp_path: Path) -> None:
    await extract(demo, tmp_path)
    before = load(tmp_path, STATE)["pages"]
    _, result = await extract(demo, tmp_path, refresh=("about",))
    assert result.successes == ["about"]
    after = load(tmp_path, STATE)["pages"]
    assert len(after["about"]["history"]) == len(before["about"]["history"]) + 2
    assert (
        after["about"]["history"][: len(before["about"]["history"])] == before["about"]["history"]
    )
    assert after["about"]["history"][-1]["run"] == 1
    assert after["home"] == before["home"]
    validate(tmp_path)


async def test_refresh_of_an_unknown_slug_is_a_usage_error(demo: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no page with that slug"):
        await plan_extract(demo, ExtractOptions(out=tmp_path, refresh=("nope",)))


async def test_another_origin_is_refused(demo: str, site: Site, tmp_path: Path) -> None:
    await extract(demo, tmp_path, single=True)
    site.add("/", html("Other"), Content_Type="text/html")
    with pytest.raises(ProjectError, match="belongs to"):
        await plan_extract(site.url + "/", ExtractOptions(out=tmp_path))
    assert site.hits == {}  # refused before any request


async def test_crash_while_fetching_leaves_valid_files(
    site: Site, release: threading.Event, tmp_path: Path
) -> None:
    """Cancelling the run mid-way (what Ctrl-C does) keeps what finished, in complete files."""
    started = threading.Event()

    def slow(handler: RequestHandler) -> Reply:
        started.set()
        release.wait(10)
        return Reply(200, html("Slow").encode(), {"Content-Type": "text/html"})

    site.add("/", html("Home"), Content_Type="text/html")
    for name in ("a", "b", "c"):
        site.handle(f"/{name}/", slow)
    site.add("/sitemap.xml", urlset([site.url + p for p in ("/", "/a/", "/b/", "/c/")]))
    options = ExtractOptions(out=tmp_path, all=True)
    plan = await plan_extract(site.url + "/", options)
    task = asyncio.create_task(run_extract(plan, options))
    deadline = time.monotonic() + 10
    while not (tmp_path / "pages" / "home.json").exists() or not started.is_set():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    validate(tmp_path)
    crawl = load(tmp_path, CRAWL_LOG)["runs"][0]["crawl"]
    assert crawl["interrupted"] is True and crawl["finishedAt"] is not None
    assert crawl["successes"] == 1
    assert load(tmp_path, STATE)["pages"]["home"]["status"] == "extracted"


async def test_few_templates_warns_and_continues_without_a_tty(site: Site, tmp_path: Path) -> None:
    from sitescout._select import questions

    site.add("/", html("Home"), Content_Type="text/html")
    site.add("/about/", html("About"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/about/"]))
    plan = await plan_extract(site.url + "/", ExtractOptions(out=tmp_path))
    assert [q.kind for q in questions(plan.selection)] == ["few-templates"]


async def test_pages_disallowed_by_robots_are_not_fetched(site: Site, tmp_path: Path) -> None:
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\n", Content_Type="text/plain")
    site.add("/", html("Home"), Content_Type="text/html")
    site.add("/private/", html("Private"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/private/"]))
    _, result = await extract(site.url + "/", tmp_path, all=True)
    assert result.successes == ["home"]
    assert result.disallowed == ["private"]
    assert site.hits["/private/"] == 0
    assert load(tmp_path, CRAWL_LOG)["runs"][0]["crawl"]["skipped"] == ["private"]


async def test_a_site_without_sitemap_is_crawled_and_logged_as_bfs(
    site: Site, tmp_path: Path
) -> None:
    links = "".join(f'<a href="/{p}/">{p}</a>' for p in ("about", "contact", "blog"))
    site.add("/", html("Home", f"<p>Welcome</p>{links}"), Content_Type="text/html")
    for name in ("about", "contact", "blog"):
        site.add(f"/{name}/", html(name.title()), Content_Type="text/html")
    plan, result = await extract(site.url + "/", tmp_path)
    assert plan.report.source == "bfs"
    assert sorted(result.successes) == ["about", "blog", "contact", "home"]
    discovery = load(tmp_path, CRAWL_LOG)["runs"][0]["discovery"]
    assert discovery["source"] == "bfs"
    assert discovery["sourceUrl"] == site.url + "/"
    validate(tmp_path)


@pytest.mark.browser
async def test_render_extracts_what_javascript_builds(site: Site, tmp_path: Path) -> None:
    """A page only its script fills: a plain fetch is EmptyPageError, --render reads it."""
    from .test_crawl import need_browser

    need_browser()
    shell = (
        "<html><head><title>App</title></head><body><div id=root></div><script>"
        "document.getElementById('root').innerHTML = "
        "'<h1>Built</h1><p>Rendered text for the reader.</p><a href=\"/\">home</a>';"
        "</script></body></html>"
    )
    site.add("/", html("Home"), Content_Type="text/html")
    site.add("/app/", shell, Content_Type="text/html; charset=utf-8")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/app/"]))
    _, plain = await extract(site.url + "/", tmp_path / "plain", all=True)
    assert [(f.url, f.error_class) for f in plain.failures] == [
        (site.url + "/app/", "EmptyPageError")
    ]
    _, rendered = await extract(site.url + "/", tmp_path / "rendered", all=True, render=True)
    assert sorted(rendered.successes) == ["app", "home"]
    page = json.loads((tmp_path / "rendered" / "pages" / "app.json").read_text())
    assert page["rendered"] is True
    assert page["headings"] == [{"level": 1, "text": "Built"}]
    assert page["textLength"] > len("Rendered text")
    assert site.hits["/app/"] == 2  # once per run: the browser did not fetch it again
    validate(tmp_path / "rendered")


def test_project_refuses_a_file_or_a_damaged_log(tmp_path: Path) -> None:
    from sitescout._project import Project

    afile = tmp_path / "notadir"
    afile.write_text("x")
    with pytest.raises(ProjectError, match="not a directory"):
        Project.open(afile, "https://x.com")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / CRAWL_LOG).write_text("{torn")
    with pytest.raises(ProjectError, match="cannot read"):
        Project.open(tmp_path / "p", "https://x.com")


async def test_trailing_slash_twins_are_one_candidate(site: Site, tmp_path: Path) -> None:
    site.add("/", html("Home"), Content_Type="text/html")
    site.add("/a", html("A"), Content_Type="text/html")
    site.add("/a/", html("A"), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + "/", site.url + "/a", site.url + "/a/"]))
    plan = await plan_extract(site.url + "/", ExtractOptions(out=tmp_path, all=True))
    assert sorted(s.path for s in plan.selection.kept) == ["/", "/a"]
    assert plan.discovered == 3


async def test_concurrency_is_pages_in_flight_on_one_host(site: Site, tmp_path: Path) -> None:
    """More than the fetcher's default of 8 when asked: the pages of a site share one host."""

    def page(handler: RequestHandler) -> Reply:
        return Reply(body=html(handler.path).encode(), headers={"Content-Type": "text/html"})

    slow = InFlight(0.2, page)
    names = "apple birch cedar daisy elm fern grape hazel iris juniper kale lilac".split()
    urls = [f"{site.url}/garden/{name}" for name in names]
    for url in urls:
        site.handle(url.removeprefix(site.url), slow)
    site.add("/sitemap.xml", urlset(urls))
    _plan, result = await extract(site.url + "/", tmp_path, all=True, concurrency=12)
    assert len(result.successes) == 12
    assert slow.most == 12

"""The public surface of `sitescout`: `__all__`, the deprecated aliases, the README's list of
names, config objects that check themselves, and `extract` as a library call."""

from __future__ import annotations

import builtins
import dataclasses
import json
import re
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import sitescout
from sitescout import _crawl, _html, _parse

from .server import Site, urlset

README = Path(__file__).resolve().parents[1] / "README.md"


# -- __all__ is the public namespace -----------------------------------------------------------


def public_names(module: types.ModuleType) -> set[str]:
    """Names a user sees in `module`: not private, not a module, not `from __future__` noise.

    Through `dir()` and `getattr`, as a user sees them: `sitescout` loads most of its names on
    first use (a module `__getattr__`), so its `vars()` hold only those used so far.
    """
    return {
        name
        for name in dir(module)
        if not name.startswith("_")
        and not isinstance(getattr(module, name), types.ModuleType)
        and name != "annotations"
    }


def test_all_is_exactly_the_public_names() -> None:
    assert set(sitescout.__all__) - {"__version__"} == public_names(sitescout)
    assert len(sitescout.__all__) == len(set(sitescout.__all__))  # no name twice
    assert sitescout.__all__ == sorted(sitescout.__all__)  # one place to look, in order


def test_the_check_sees_a_name_missing_from_all() -> None:
    fake = types.ModuleType("fake")
    source = "from __future__ import annotations\nimport json\ndef walk(): ...\ndef extra(): ..."
    exec(source, vars(fake))
    assert public_names(fake) - {"walk"} == {"extra"}


def test_the_documented_entry_points_are_public() -> None:
    wanted = {
        "walk",
        "iter_urls",
        "SyncEntries",
        "discover_sitemaps",
        "discover_sitemaps_async",
        "estimate_scope",
        "estimate_scope_async",
        "extract",
        "extract_async",
        "slugify",
        "ProjectError",
        "FetchTimeoutError",
    }
    assert wanted <= set(sitescout.__all__)
    internals = {"Crawler", "SitemapParser", "Heading", "TimeoutError", "estimate_scope_sync"}
    assert internals.isdisjoint(sitescout.__all__)


def test_exception_tree() -> None:
    assert issubclass(sitescout.HTTPError, sitescout.FetchError)
    assert issubclass(sitescout.FetchError, sitescout.SitescoutError)
    assert issubclass(sitescout.UsageError, ValueError)
    assert issubclass(sitescout.ProjectError, sitescout.UsageError)
    err = sitescout.HTTPError("HTTP 404", url="https://x.com/a", status=404)
    assert err.status == 404 and "https://x.com/a" in str(err)


def test_the_timeout_error_no_longer_shadows_the_builtin() -> None:
    from sitescout import _errors

    assert not hasattr(_errors, "TimeoutError")
    assert not issubclass(sitescout.FetchTimeoutError, builtins.TimeoutError)
    # Recorded outputs keep the spec's failure class name.
    assert sitescout.FetchTimeoutError.error_class == "TimeoutError"


# -- deprecated aliases: one release of grace ----------------------------------------------------

DEPRECATED: dict[str, tuple[Callable[[], object], str]] = {
    "TimeoutError": (lambda: sitescout.FetchTimeoutError, "FetchTimeoutError"),
    "estimate_scope_sync": (lambda: sitescout.estimate_scope, "sitescout.estimate_scope"),
    "Crawler": (lambda: _crawl.Crawler, "crawl=True"),
    "CrawledPage": (lambda: _crawl.CrawledPage, "crawl=True"),
    "SitemapFound": (lambda: _crawl.SitemapFound, "crawl=True"),
    "SitemapParser": (lambda: _parse.SitemapParser, "parse_document"),
    "Heading": (lambda: _html.Heading, "extract"),
    "PageInfo": (lambda: _html.PageInfo, "extract"),
    "parse_page": (lambda: _html.parse_page, "extract"),
}


def test_the_table_covers_every_deprecated_alias() -> None:
    assert set(DEPRECATED) == set(sitescout._DEPRECATED)


@pytest.mark.parametrize("name", sorted(DEPRECATED))
def test_a_deprecated_alias_warns_naming_its_replacement_and_still_works(name: str) -> None:
    current, replacement = DEPRECATED[name]
    with pytest.warns(DeprecationWarning, match=re.escape(replacement)):
        old = getattr(sitescout, name)
    assert old is current()


def test_the_timeout_alias_still_catches_what_it_caught() -> None:
    with pytest.warns(DeprecationWarning):
        old = sitescout.TimeoutError
    with pytest.raises(old):
        raise sitescout.FetchTimeoutError("too slow", url="https://x.com/")


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        sitescout.no_such_name  # noqa: B018


def test_estimate_scope_sync_alias_still_estimates(site: Site) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/a", f"{site.url}/b"]))
    with pytest.warns(DeprecationWarning):
        old = sitescout.estimate_scope_sync
    est = old(site.url + "/sitemap.xml", config=sitescout.FetchConfig(timeout=5.0, retries=0))
    assert est.url_estimate_range == (2, 2)


async def test_awaiting_estimate_scope_in_a_loop_warns_and_still_works(site: Site) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/a", f"{site.url}/b", f"{site.url}/c"]))
    config = sitescout.FetchConfig(timeout=5.0, retries=0)
    with pytest.warns(DeprecationWarning, match="estimate_scope_async"):
        pending: Any = sitescout.estimate_scope(site.url + "/sitemap.xml", config=config)
    est = await pending
    assert isinstance(est, sitescout.ScopeEstimate)
    assert est.url_estimate_range == (3, 3)


def test_estimate_scope_is_sync_outside_a_loop(site: Site) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/a"]))
    config = sitescout.FetchConfig(timeout=5.0, retries=0)
    est = sitescout.estimate_scope(site.url + "/sitemap.xml", config=config)
    assert isinstance(est, sitescout.ScopeEstimate) and est.url_estimate_range == (1, 1)


# -- the README's library section lists exactly __all__ -----------------------------------------


def library_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Library\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_the_readme_library_section_names_every_public_name() -> None:
    section = library_section()
    missing = [
        name
        for name in sitescout.__all__
        if not re.search(rf"`(?:sitescout\.)?{re.escape(name)}[`(]", section)
    ]
    assert missing == []


def test_the_readme_library_section_uses_only_public_names() -> None:
    used = set(re.findall(r"\bsitescout\.(\w+)", library_section()))
    assert used and used <= set(sitescout.__all__), used - set(sitescout.__all__)


# -- config objects check themselves --------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "option"),
    [
        pytest.param(lambda: sitescout.ExtractOptions(cap=0), "--cap", id="extract-cap"),
        pytest.param(lambda: sitescout.ExtractOptions(cap=True), "--cap", id="extract-cap-bool"),
        pytest.param(
            lambda: sitescout.ExtractOptions(concurrency=0), "--concurrency", id="extract-workers"
        ),
        pytest.param(lambda: sitescout.ExtractOptions(single=1), "single", id="extract-flag"),
        pytest.param(lambda: sitescout.ExtractOptions(pages="home"), "--pages", id="pages-str"),
        pytest.param(lambda: sitescout.ExtractOptions(source="web"), "--source", id="source"),
        pytest.param(lambda: sitescout.ExtractOptions(locale="xx-yy-zz"), "locale", id="locale"),
        pytest.param(lambda: sitescout.ExtractOptions(sitemap="/s.xml"), "--sitemap", id="map"),
        pytest.param(lambda: sitescout.ExtractOptions(fetch=None), "fetch", id="extract-fetch"),
        pytest.param(lambda: sitescout.ExtractOptions(budgets={}), "budgets", id="budgets"),
        pytest.param(lambda: sitescout.FetchConfig(timeout=0), "timeout", id="fetch-timeout"),
        pytest.param(lambda: sitescout.FetchConfig(per_host=0), "per_host", id="per-host"),
        pytest.param(lambda: sitescout.FetchConfig(retries=-1), "retries", id="retries"),
        pytest.param(lambda: sitescout.WalkOptions(concurrency=0), "concurrency", id="walk"),
        pytest.param(lambda: sitescout.Budgets(max_urls=0), "max_urls", id="max-urls"),
    ],
)
def test_a_bad_option_is_refused_at_construction_by_name(
    build: Callable[[], object], option: str
) -> None:
    with pytest.raises(sitescout.UsageError, match=re.escape(option)):
        build()


@pytest.mark.parametrize(
    ("value", "field"),
    [
        pytest.param(sitescout.ExtractOptions(), "cap", id="extract"),
        pytest.param(sitescout.FetchConfig(), "timeout", id="fetch"),
        pytest.param(sitescout.WalkOptions(), "concurrency", id="walk"),
        pytest.param(sitescout.Budgets(), "max_urls", id="budgets"),
    ],
)
def test_config_objects_are_frozen(value: object, field: str) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, 0)


def test_extract_options_take_paths_and_lists_from_python_callers() -> None:
    options = sitescout.ExtractOptions(out="somewhere", pages=["home", "/about/"])  # type: ignore[arg-type]
    assert options.out == Path("somewhere") and options.pages == ("home", "/about/")


# -- discovery ------------------------------------------------------------------------------------


def test_discover_sitemaps_reports_source() -> None:
    site = Site().start()
    try:
        site.add("/sitemap.xml", urlset([f"{site.url}/a"]))
        found = sitescout.discover_sitemaps(site.url + "/")
        assert found.source == "sitemap.xml"
        assert found.sitemaps == [f"{site.url}/sitemap.xml"]
        site.add("/robots.txt", "Sitemap: /s1.xml\nSitemap: /s2.xml\n", Content_Type="text/plain")
        found = sitescout.discover_sitemaps(site.url + "/")
        assert found.source == "robots.txt"
        assert found.sitemaps == [f"{site.url}/s1.xml", f"{site.url}/s2.xml"]
    finally:
        site.stop()


async def test_discover_sitemaps_in_a_running_loop_names_its_async_twin(site: Site) -> None:
    with pytest.raises(sitescout.UsageError, match="discover_sitemaps_async"):
        sitescout.discover_sitemaps(site.url + "/")
    site.add("/sitemap.xml", urlset([f"{site.url}/a"]))
    found = await sitescout.discover_sitemaps_async(site.url + "/")
    assert found.sitemaps == [f"{site.url}/sitemap.xml"]


# -- extract as a library call --------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    from sitescout._demo.server import serve

    with serve() as base:
        yield base + "/"


def test_extract_writes_the_project_as_the_cli_would(demo: str, tmp_path: Path) -> None:
    result = sitescout.extract(demo, tmp_path / "project", cap=3)
    assert isinstance(result, sitescout.RunResult)
    assert len(result.successes) == 3 and not result.failures and not result.interrupted
    project = tmp_path / "project"
    pages = sorted(p.stem for p in (project / "pages").glob("*.json"))
    assert pages == sorted(result.successes)
    runs = json.loads((project / "_crawl-log.json").read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 1 and runs[0]["crawl"]["finishedAt"] is not None
    # A second call is a re-run: what is extracted stays, nothing is fetched twice.
    again = sitescout.extract(demo, str(project), cap=3)
    assert sorted(again.skipped) == sorted(result.successes) and again.successes == []


async def test_extract_async_in_a_running_loop(demo: str, tmp_path: Path) -> None:
    result = await sitescout.extract_async(demo, tmp_path, single=True)
    assert result.successes == ["home"]
    with pytest.raises(sitescout.UsageError, match="extract_async"):
        sitescout.extract(demo, tmp_path)


def test_extract_refuses_an_unknown_option_with_a_guess(tmp_path: Path) -> None:
    with pytest.raises(sitescout.UsageError, match="did you mean 'concurrency'"):
        sitescout.extract("https://example.com/", tmp_path, concurency=2)
    with pytest.raises(sitescout.UsageError, match="http"):
        sitescout.extract("example.com", tmp_path)
    assert list(tmp_path.iterdir()) == []  # refused before the project directory was touched


def test_extract_of_a_site_without_pages_raises_nothing_found(site: Site, tmp_path: Path) -> None:
    site.add("/sitemap.xml", urlset([]))
    fetch = sitescout.FetchConfig(timeout=5.0, retries=0)
    for _ in range(2):  # the project's lock was released: a second call gets the same answer
        with pytest.raises(sitescout.NothingFoundError):
            sitescout.extract(site.url + "/", tmp_path, fetch=fetch)

"""Public option objects and the keyword entry points reject bad values at once, by name.

A bad option used to surface as a hang (`concurrency=0` starts no worker) or as a silent empty
walk; every check here runs the call in a thread bounded by a timeout, so a regression fails
instead of hanging the suite, and asserts that no request reached the loopback site.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout import (
    Budgets,
    FetchConfig,
    UsageError,
    Walk,
    WalkOptions,
    discover_sitemaps,
    iter_urls,
    walk,
)
from sitescout._crawl import Crawler, CrawlOptions

from .server import Site, urlset

BOUND = 10.0  # seconds any single call may take before the test calls it a hang
FUZZ_EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))


def bounded(call: Callable[[], object]) -> BaseException | None:
    """Run `call` in a daemon thread; the exception it raised, None if it returned.

    A call still running after BOUND seconds fails the test (the thread is abandoned).
    """
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # the test inspects whatever was raised
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        pytest.fail(f"the call did not return within {BOUND} s (it hangs)")
    return outcome[0]


def first_batch(url: str, **kwargs: Any) -> Callable[[], object]:
    async def run() -> None:
        async for _batch in walk(url, **kwargs):
            break

    return lambda: asyncio.run(run())


def first_entry(url: str, **kwargs: Any) -> Callable[[], object]:
    def run() -> None:
        entries = iter_urls(url, **kwargs)
        try:
            next(entries, None)
        finally:
            entries.close()

    return run


def one_page_site(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /s.xml\n", Content_Type="text/plain")
    site.add("/s.xml", urlset([f"{site.url}/p"]))


def assert_usage_error(raised: BaseException | None, name: str) -> None:
    assert isinstance(raised, UsageError), f"expected UsageError naming {name}, got {raised!r}"
    assert name in str(raised), str(raised)


BAD_WALK_VALUES = [
    ("concurrency", 0),
    ("concurrency", -1),
    ("concurrency", True),
    ("concurrency", 2.5),
    ("concurrency", "8"),
    ("concurrency", 10**9),
    ("alternates", "no"),
    ("crawl", 1),
    ("locale", "zz"),
    ("locale", 5),
    ("sitemap", 42),
    ("sitemap", "ftp://example.com/s.xml"),
    ("fetch", {"timeout": 5}),
    ("budgets", None),
]


@pytest.mark.parametrize(("name", "value"), BAD_WALK_VALUES)
def test_walk_rejects_a_bad_option_at_once(site: Site, name: str, value: object) -> None:
    one_page_site(site)
    assert_usage_error(bounded(first_batch(site.url, **{name: value})), name)
    assert_usage_error(bounded(first_entry(site.url, **{name: value})), name)
    assert site.hits == {}


@pytest.mark.parametrize(("name", "value"), [("per_host", 0), ("retries", -1)])
def test_walk_rejects_bad_fetch_settings_at_once(site: Site, name: str, value: int) -> None:
    # `per_host=0` used to hang and `retries=-1` to fetch nothing and record no error.
    one_page_site(site)
    assert_usage_error(bounded(first_batch(site.url, **{name: value})), name)
    assert_usage_error(bounded(first_entry(site.url, **{name: value})), name)
    assert site.hits == {}


def test_unknown_keyword_is_named_with_the_likely_option(site: Site) -> None:
    one_page_site(site)
    raised = bounded(first_batch(site.url, concurreny=4))
    assert_usage_error(raised, "concurreny")
    assert "concurrency" in str(raised).replace("concurreny", "")
    assert site.hits == {}


def test_options_must_be_walk_options(site: Site) -> None:
    one_page_site(site)
    assert_usage_error(bounded(lambda: walk(site.url, FetchConfig())), "options")  # type: ignore[arg-type]
    assert_usage_error(bounded(lambda: iter_urls(site.url, 5)), "options")  # type: ignore[arg-type]
    assert site.hits == {}


def test_url_must_be_a_string() -> None:
    assert_usage_error(bounded(lambda: walk(None)), "URL")  # type: ignore[arg-type]
    assert_usage_error(bounded(lambda: iter_urls(b"http://x/")), "URL")  # type: ignore[arg-type]


def test_fetch_keywords_apply_on_top_of_a_given_fetch_config(site: Site) -> None:
    w = walk(site.url, fetch=FetchConfig(user_agent="probe/1"), timeout=5.0)
    assert w.options.fetch.user_agent == "probe/1"
    assert w.options.fetch.timeout == 5.0
    w = walk(site.url, budgets=Budgets(max_depth=2), max_urls=7)
    assert (w.options.budgets.max_depth, w.options.budgets.max_urls) == (2, 7)


def test_good_options_still_walk(site: Site) -> None:
    one_page_site(site)
    entries = list(iter_urls(site.url, concurrency=1, locale="en-US", alternates=False))
    assert [e.url for e in entries] == [f"{site.url}/p"]


def test_render_without_crawl_is_allowed() -> None:
    # With no sitemap the walk falls back to the link crawl, which is what --render drives.
    assert WalkOptions(render=True).render is True


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"bogus": 1}, "bogus"),
        ({"config": "fast"}, "config"),
        ({"sitemap": 7}, "sitemap"),
        ({"sitemap": "/relative.xml"}, "sitemap"),
        ({"per_host": 0}, "per_host"),
    ],
)
def test_discover_sitemaps_rejects_bad_keywords_before_any_request(
    site: Site, kwargs: dict[str, Any], name: str
) -> None:
    one_page_site(site)
    assert_usage_error(bounded(lambda: discover_sitemaps(site.url, **kwargs)), name)
    assert site.hits == {}


def test_discover_sitemaps_takes_fetch_keywords(site: Site) -> None:
    one_page_site(site)
    found = discover_sitemaps(site.url, user_agent="probe/2")
    assert found.sitemaps == [f"{site.url}/s.xml"]
    assert {ua for _, _, ua in site.log} == {"probe/2"}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("command", ["urls", "groups"])
def test_cli_bad_locale_exits_2_before_any_request(site: Site, command: str) -> None:
    one_page_site(site)
    proc = run_cli(command, site.url, "--locale", "zz")
    assert proc.returncode == 2, proc.stderr
    assert "locale" in proc.stderr and "'zz'" in proc.stderr
    assert site.hits == {}


VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.builds(FetchConfig)
    | st.builds(Budgets)
)
WALK_FIELDS = sorted(WalkOptions.__dataclass_fields__)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(name=st.sampled_from(WALK_FIELDS), value=VALUES)
def test_walk_options_either_accept_or_name_the_option(name: str, value: object) -> None:
    try:
        options = WalkOptions(**{name: value})  # type: ignore[arg-type]
    except UsageError as exc:
        assert name in str(exc)
        return
    if name == "state" and value is not None:  # a directory, held as a Path
        assert isinstance(value, str) and options.state == Path(value)
        return
    assert getattr(options, name) == value or value != value  # NaN is never equal to itself
    if name == "concurrency":
        assert isinstance(value, int) and 1 <= value <= 64
    if name in ("alternates", "filter_locales", "ssrf_guard", "crawl", "render"):
        assert isinstance(value, bool)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(
    name=st.text(min_size=1, max_size=20).filter(str.isidentifier)
    | st.sampled_from(WALK_FIELDS + sorted(FetchConfig.__dataclass_fields__)),
    value=VALUES,
)
def test_walk_keywords_either_accept_or_raise_usage_error(name: str, value: object) -> None:
    kwargs: dict[str, Any] = {name: value}
    try:
        # `state` names a directory the walk takes at once: made in a scratch folder, not here.
        with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
            w = walk("http://127.0.0.1:9/", **kwargs)
    except UsageError as exc:
        assert name in str(exc)
        return
    assert isinstance(w.options, WalkOptions)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("max_pages", 0),
        ("max_pages", "5"),
        ("max_pages", True),
        ("max_depth", -1),
        ("max_depth", 1.5),
        ("concurrency", 0),
        ("concurrency", None),
        ("deadline", float("nan")),
        ("deadline", "soon"),
    ],
)
def test_crawler_names_the_bad_number(name: str, value: object) -> None:
    with pytest.raises(UsageError, match=name):
        CrawlOptions(**{name: value})  # type: ignore[arg-type]


def test_crawler_takes_a_spent_deadline() -> None:
    # The walk hands over what is left of its own deadline, which may already be used up.
    crawler = Crawler("https://example.com/", CrawlOptions(deadline=-0.5))
    assert crawler.options.deadline == -0.5


def test_cli_unwritable_output_exits_2_before_any_request(site: Site, tmp_path: Path) -> None:
    one_page_site(site)
    proc = run_cli("urls", site.url, "-o", str(tmp_path / "missing" / "out.jsonl"))
    assert proc.returncode == 2, proc.stderr
    assert "cannot write" in proc.stderr
    assert site.hits == {}


def test_walk_class_checks_its_arguments() -> None:
    with pytest.raises(UsageError, match="site URL"):
        Walk("ftp://example.com/")
    with pytest.raises(UsageError, match="site URL"):
        Walk(None)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="options"):
        Walk("https://example.com/", Budgets())  # type: ignore[arg-type]

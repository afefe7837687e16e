"""`--render`: a real Chromium on 127.0.0.1 pages; the SSRF guard on everything it asks for."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sitescout._errors import BlockedAddressError, FetchTimeoutError
from sitescout._html import parse_page
from sitescout._http import AddressGuard
from sitescout._render import (
    CHROMIUM_ENV,
    BrowserUnavailableError,
    Renderer,
    check_render_available,
    chromium_path,
)

from .server import Site
from .test_crawl import HTML, need_browser
from .test_guard_special import resolver, twin_sites


@pytest.fixture
async def renderer(site: Site) -> AsyncIterator[Renderer]:
    need_browser()
    async with Renderer(guard=AddressGuard(site.url), timeout=10.0, settle=2.0) as r:
        yield r


def links_of(html: str, url: str) -> list[str]:
    return parse_page(html.encode(), url).links_internal


# -- availability ----------------------------------------------------------------------------------


def test_missing_chromium_names_the_package_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CHROMIUM_ENV, "/nonexistent/chromium")
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Playwright is not installed; the Playwright message is tested below")
    with pytest.raises(BrowserUnavailableError) as info:
        check_render_available()
    message = str(info.value)
    assert "apt-get install chromium" in message and CHROMIUM_ENV in message
    assert "/nonexistent/chromium" in message


def test_missing_playwright_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "playwright" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(BrowserUnavailableError, match=r"pip install 'sitescout\[render\]'"):
        check_render_available()


def test_chromium_path_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "my-chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(CHROMIUM_ENV, str(fake))
    assert chromium_path() == str(fake)
    if importlib.util.find_spec("playwright") is not None:
        assert check_render_available() == str(fake)
    monkeypatch.delenv(CHROMIUM_ENV)
    assert chromium_path() == "/usr/bin/chromium"


def test_browser_tests_run_in_ci() -> None:
    """In CI (CI set) a missing browser fails here instead of silently skipping the suite."""
    if os.environ.get("CI"):
        check_render_available()
    else:
        need_browser()


# -- rendering -------------------------------------------------------------------------------------


@pytest.mark.browser
async def test_renders_the_bytes_it_is_given(site: Site, renderer: Renderer) -> None:
    body = (
        b"<html><head><title>T</title></head><body><script>"
        b"document.body.insertAdjacentHTML('beforeend', '<a href=\"/built\">b</a>');"
        b"</script></body></html>"
    )
    html = await renderer.render(site.url + "/page", body, content_type=HTML)
    assert links_of(html, site.url + "/page") == [site.url + "/built"]
    assert site.hits["/page"] == 0  # the browser did not fetch the page again


@pytest.mark.browser
async def test_a_reused_tab_carries_nothing_over(site: Site, renderer: Renderer) -> None:
    site.add("/tick", "{}", Content_Type="application/json")
    busy = (
        b"<html><body><a href='/one'>1</a><script>setInterval(function () { fetch('/tick'); }, 50);"
        b"setTimeout(function () { location.href = '/elsewhere'; }, 300);</script></body></html>"
    )
    calm = b"<html><body><a href='/two'>2</a></body></html>"
    first = await renderer.render(site.url + "/a", busy, content_type=HTML)
    await asyncio.sleep(0.3)  # a tick already on its way may still land
    ticks = site.hits["/tick"]
    pages = [await renderer.render(site.url + f"/b{i}", calm, content_type=HTML) for i in range(3)]
    assert links_of(first, site.url + "/a") == [site.url + "/one"]
    assert all(links_of(p, site.url + "/b") == [site.url + "/two"] for p in pages)
    assert site.hits["/tick"] == ticks  # the first page's timers died with it
    assert site.hits["/elsewhere"] == 0


@pytest.mark.browser
async def test_a_failing_sub_request_fails_fast_in_the_page(site: Site) -> None:
    need_browser()
    body = (
        b"<html><body><script>fetch('http://127.0.0.1:9/closed').catch(function () {"
        b"document.body.innerHTML = '<a href=\"/after-failure\">x</a>'; });</script></body></html>"
    )
    async with Renderer(guard=AddressGuard(site.url), timeout=20.0, settle=8.0) as renderer:
        start = time.monotonic()
        html = await renderer.render(site.url + "/", body, content_type=HTML)
        elapsed = time.monotonic() - start
    assert links_of(html, site.url + "/") == [site.url + "/after-failure"]
    assert elapsed < 6.0  # settle is 8 s: the refused request did not hang the page


@pytest.mark.browser
async def test_waiting_for_network_idle_is_bounded(site: Site, renderer: Renderer) -> None:
    site.add("/poll", "{}", Content_Type="application/json")
    body = (
        b"<html><body><script>setInterval(function () { fetch('/poll'); }, 100);"
        b"setTimeout(function () { document.body.innerHTML = '<a href=\"/late\">x</a>'; }, 50);"
        b"</script></body></html>"
    )
    start = time.monotonic()
    html = await renderer.render(site.url + "/", body, content_type=HTML)
    assert time.monotonic() - start < 8  # settle is 2 s; the network is never idle
    assert links_of(html, site.url + "/") == [site.url + "/late"]
    assert site.hits["/poll"] >= 5


@pytest.mark.browser
async def test_a_page_that_never_loads_times_out(site: Site) -> None:
    need_browser()
    body = b"<html><body><script>while (true) {}</script><a href='/never'>x</a></body></html>"
    async with Renderer(guard=AddressGuard(site.url), timeout=2.0, settle=1.0) as renderer:
        start = time.monotonic()
        with pytest.raises(FetchTimeoutError):
            await renderer.render(site.url + "/", body, content_type=HTML)
        assert time.monotonic() - start < 10


# -- the SSRF guard in the browser -----------------------------------------------------------------


def hostile_page(site: Site) -> bytes:
    port = site.url.rsplit(":", 1)[1]
    # 0.0.0.0 is never an allowed address (its class is "other"), and on Linux a connection to
    # it reaches this very server on 127.0.0.1: an unguarded request shows up in `site.hits`.
    forbidden = f"http://0.0.0.0:{port}"
    site.add("/redirect", status=302, Location=f"{forbidden}/secret-via-redirect")
    site.add("/secret-via-redirect", "leaked", Content_Type="text/plain")
    site.add("/secret-direct", "leaked", Content_Type="text/plain")
    site.add("/allowed.json", "[]", Content_Type="application/json")
    site.add("/away", "<html><body><a href='/from-away'>x</a></body></html>", Content_Type=HTML)
    script = f"""
      Promise.allSettled([
        fetch('/redirect'), fetch('{forbidden}/secret-direct'), fetch('/allowed.json')
      ]).then(function () {{
        document.body.insertAdjacentHTML('beforeend', '<a href="/done">done</a>');
        setTimeout(function () {{ location.href = '/away'; }}, 10);
      }});
      try {{ new WebSocket('ws://127.0.0.1:{port}/socket'); }} catch (e) {{}}
      var img = new Image(); img.src = '/picture.png';
    """
    return f"<html><body><a href='/static'>s</a><script>{script}</script></body></html>".encode()


@pytest.mark.browser
async def test_sub_requests_and_their_redirects_pass_the_guard(
    site: Site, renderer: Renderer
) -> None:
    html = await renderer.render(site.url + "/", hostile_page(site), content_type=HTML)
    assert site.hits["/redirect"] == 1 and site.hits["/allowed.json"] == 1
    assert site.hits["/secret-via-redirect"] == 0  # the redirect hop was refused
    assert site.hits["/secret-direct"] == 0
    assert site.hits["/picture.png"] == 0  # images never add links: not fetched
    assert site.hits["/socket"] == 0  # WebSockets never connect
    assert site.hits["/away"] == 0  # the page may not navigate away
    assert links_of(html, site.url + "/") == [site.url + "/static", site.url + "/done"]


@pytest.mark.browser
async def test_without_a_guard_the_same_page_does_reach_the_forbidden_address(
    site: Site,
) -> None:
    """The control for the test above: it would see a leak if there were one."""
    need_browser()
    async with Renderer(guard=None, timeout=10.0, settle=2.0) as renderer:
        await renderer.render(site.url + "/", hostile_page(site), content_type=HTML)
    assert site.hits["/secret-via-redirect"] == 1


@pytest.mark.browser
async def test_page_on_a_forbidden_address_is_not_rendered(site: Site) -> None:
    need_browser()

    async def resolve(host: str, port: int) -> list[str]:
        return {"public.test": ["93.184.216.34"]}[host]

    guard = AddressGuard("https://public.test/", resolver=resolve)
    async with Renderer(guard=guard, timeout=10.0) as renderer:
        with pytest.raises(BlockedAddressError):
            await renderer.render(site.url + "/", b"<html><body>x</body></html>")


@pytest.mark.browser
async def test_sub_requests_connect_only_to_the_address_the_guard_checked() -> None:
    """A page's fetch() of a name that rebinds reaches the checked server, never the second."""
    need_browser()
    checked, rebound = twin_sites()
    try:
        base = f"http://rebind.test:{checked.port}"
        for s, text in ((checked, "checked"), (rebound, "rebound")):
            # A new connection per request: every request would re-resolve the name.
            s.add("/data", text, Content_Type="text/plain", Connection="close")
        script = f"""
          Promise.all([1, 2, 3].map(function () {{
            return fetch('{base}/data').then(function (r) {{ return r.text(); }});
          }})).then(function (texts) {{
            texts.forEach(function (t) {{
              document.body.insertAdjacentHTML('beforeend', '<a href="/' + t + '">x</a>');
            }});
          }});
        """
        body = f"<html><body><script>{script}</script></body></html>".encode()
        resolve, calls = resolver({"rebind.test": [["127.0.0.2"], ["127.0.0.3"]]})
        guard = AddressGuard(f"{base}/", resolve)
        async with Renderer(guard=guard, timeout=10.0, settle=2.0) as renderer:
            html = await renderer.render(f"{base}/", body, content_type=HTML)
    finally:
        checked.stop()
        rebound.stop()
    assert links_of(html, f"{base}/") == [f"{base}/checked"]
    assert checked.hits["/data"] == 3
    assert rebound.total_hits() == 0
    assert calls == ["rebind.test"]  # one checked answer serves every connection

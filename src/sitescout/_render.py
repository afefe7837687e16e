"""`--render` (§10): a real headless Chromium, driven by Playwright, builds each page's DOM.

The page itself is fetched once by the `Fetcher` (SSRF guard on every redirect hop, size cap,
time limit, failure classes, politeness) and the browser is handed exactly those bytes for that
URL: Playwright's request interception answers the main document, and the browser runs the page's
scripts, which is what builds the links of a JavaScript site. So the crawl classifies one response
per page whatever the mode, and never asks the server for a page twice.

Everything else the page asks for passes the same guard before it leaves the machine:

* every sub-request is intercepted; images, media and fonts (they never add links) are refused,
  the rest is sent by sitescout's own HTTP client over the guard's pinned transport (the socket
  connects to the address the guard checked, so a DNS answer that changes cannot send it
  elsewhere), with redirects followed *by hand*, each hop checked - Chromium follows redirects of
  a request it sent itself without asking the route handler again, and Playwright's own request
  API resolves names by itself, so neither may send a sub-request;
* navigating the main frame away from the page is answered with `204 No Content`, which keeps
  the browser on the page (we render this page, not the next);
* WebSockets are answered by a mock that never connects, service workers are blocked, and WebRTC
  may not use UDP outside a proxy.

The browser is the system Chromium (`/usr/bin/chromium`, or `$SITESCOUT_CHROMIUM`), never a
Playwright browser download. It is launched headless with the flags §10 requires: on a machine with
a closed network Chromium otherwise stalls on its own background connections. Playwright gives
every launch a fresh temporary profile.

Without Playwright or Chromium, `Renderer` (and `check_render_available`, for a command line that
wants to fail before any work) raises `BrowserUnavailableError`, naming what to install.
"""

from __future__ import annotations

import asyncio
import builtins
import importlib.util
import logging
import os
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import httpx

from ._errors import (
    BlockedAddressError,
    BrowserUnavailableError,
    FetchTimeoutError,
    NetworkError,
)
from ._http import DEFAULT_USER_AGENT, AddressGuard, AddressRefused, PinnedTransport

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Route, WebSocketRoute

log = logging.getLogger(__name__)

__all__ = [
    "CHROMIUM_ARGS",
    "CHROMIUM_ENV",
    "DEFAULT_CHROMIUM",
    "BrowserUnavailableError",
    "Renderer",
    "check_render_available",
    "chromium_path",
]

CHROMIUM_ENV = "SITESCOUT_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
_REFUSED_TYPES = frozenset({"image", "media", "font"})
_MAX_REDIRECTS = 5
_SUB_REQUEST_BYTES = 16 * 1024 * 1024  # a script or data file larger than this is not served
# Headers that describe one connection or one encoding, not the resource: the client sets its
# own when it sends, and the body handed back to the browser is already decoded.
_HOP_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "accept-encoding",
        "te",
        "trailer",
        "upgrade",
    }
)
_LAUNCH_TIMEOUT = 30.0
_CLOSE_TIMEOUT = 5.0
_INSTALL_PLAYWRIGHT = (
    "`--render` needs Playwright: pip install 'sitescout[render]' "
    "(Playwright drives the system Chromium; no browser download is needed)"
)


def chromium_path(executable: str | None = None) -> str:
    """The Chromium binary to drive: the argument, else `$SITESCOUT_CHROMIUM`, else the default."""
    return executable or os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM


def check_render_available(executable: str | None = None) -> str:
    """Raise `BrowserUnavailableError` unless rendering can start; return the Chromium path.

    Cheap and synchronous: it checks that Playwright is importable and that the binary exists,
    without launching anything.
    """
    if importlib.util.find_spec("playwright") is None:
        raise BrowserUnavailableError(_INSTALL_PLAYWRIGHT)
    path = chromium_path(executable)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BrowserUnavailableError(
            f"`--render` needs Chromium at {path}: install it with `apt-get install chromium` "
            f"(Debian/Ubuntu), or set {CHROMIUM_ENV} to the path of a Chromium binary"
        )
    return path


class Renderer:
    """One headless Chromium for a run; `await render(url, body)` returns the rendered DOM.

    Use as `async with Renderer(guard=...) as r`. At most `max_open` pages render at once, each
    in a Chromium tab; tabs are kept and reused (a new tab costs a renderer process), emptied
    with `about:blank` between pages.
    """

    def __init__(
        self,
        *,
        guard: AddressGuard | None = None,
        executable: str | None = None,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout: float = 30.0,
        settle: float = 5.0,
        max_open: int = 2,
    ) -> None:
        self.guard = guard
        self.executable = executable
        self.user_agent = user_agent
        self.timeout = timeout  # total per page, loading and settling
        self.settle = settle  # longest wait for network idle after the DOM is ready
        self._slots = asyncio.Semaphore(max(1, max_open))
        self._stack = AsyncExitStack()
        self._context: BrowserContext | None = None
        self._client: httpx.AsyncClient | None = None  # sends the pages' sub-requests
        self._idle: list[_Tab] = []  # at most max_open

    async def __aenter__(self) -> Renderer:
        path = check_render_available(self.executable)
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        try:
            playwright = await self._stack.enter_async_context(async_playwright())
            browser = await playwright.chromium.launch(
                executable_path=path,
                headless=True,
                args=list(CHROMIUM_ARGS),
                timeout=_LAUNCH_TIMEOUT * 1000,
            )
            self._stack.push_async_callback(browser.close)
            self._context = await browser.new_context(
                user_agent=self.user_agent,
                service_workers="block",
                accept_downloads=False,
            )
        except PlaywrightError as exc:
            await self._stack.aclose()
            raise BrowserUnavailableError(f"could not start Chromium at {path}: {exc}") from exc
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=16)
        self._client = await self._stack.enter_async_context(
            httpx.AsyncClient(
                transport=PinnedTransport(self.guard, limits) if self.guard is not None else None,
                limits=limits,
                timeout=httpx.Timeout(self.timeout),
                follow_redirects=False,
                trust_env=False,
            )
        )
        log.debug("rendering with Chromium at %s", path)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._context = None
        self._client = None
        self._idle.clear()
        try:
            async with asyncio.timeout(_LAUNCH_TIMEOUT):
                await self._stack.aclose()
        except Exception:  # a dead browser must not turn a finished crawl into an error
            log.warning("closing Chromium failed", exc_info=True)

    async def render(
        self, url: str, body: bytes, *, content_type: str = "text/html", status: int = 200
    ) -> str:
        """The DOM of `url` after its scripts ran, as HTML, given the bytes the server sent.

        Waits for the DOM, then for network idle up to `settle` seconds. Raises the §12 classes:
        `FetchTimeoutError`, `NetworkError` (the browser failed), `BlockedAddressError`.
        """
        assert self._context is not None, "use Renderer as an async context manager"
        if not await self._allowed(url):
            raise BlockedAddressError("address not allowed (SSRF guard)", url=url)
        async with self._slots:
            try:
                async with asyncio.timeout(self.timeout):
                    return await self._render(url, body, content_type, status)
            except builtins.TimeoutError as exc:
                raise FetchTimeoutError(f"not rendered within {self.timeout:g} s", url=url) from exc

    async def _render(self, url: str, body: bytes, content_type: str, status: int) -> str:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        tab: _Tab | None = None
        reusable = False
        try:
            tab = await self._tab()
            tab.document = _Document(body, content_type or "text/html", status)
            page = tab.page
            await page.goto(url, wait_until="domcontentloaded", timeout=self.timeout * 1000)
            try:
                await page.wait_for_load_state("networkidle", timeout=self.settle * 1000)
            except PlaywrightTimeout:
                log.debug(
                    "%s: network not idle after %gs; taking the DOM as it is", url, self.settle
                )
            html = await page.content()
            # Stop the page's timers and requests before the tab serves another page.
            await page.goto("about:blank", timeout=_CLOSE_TIMEOUT * 1000)
            reusable = True
            return html
        except PlaywrightError as exc:
            raise NetworkError(f"browser: {_first_line(exc)}", url=url) from exc
        finally:
            if tab is not None:
                tab.document = None
                if reusable:
                    self._idle.append(tab)
                else:
                    await _close(tab, url)

    async def _tab(self) -> _Tab:
        """An idle tab, or a new one: opening a tab starts a renderer process, so they are kept."""
        if self._idle:
            return self._idle.pop()
        assert self._context is not None
        tab = _Tab(await self._context.new_page())
        await tab.page.route_web_socket("**/*", _refuse_web_socket)
        await tab.page.route("**/*", lambda route: self._route(route, tab))
        return tab

    async def _route(self, route: Route, tab: _Tab) -> None:
        from playwright.async_api import Error as PlaywrightError

        request = route.request
        document = tab.document
        try:
            if request.is_navigation_request() and request.frame.parent_frame is None:
                if document is None or document.served:
                    # The page navigating away. Aborting would replace the DOM with an error
                    # page; a 204 answer is the HTTP way of saying "stay where you are".
                    await route.fulfill(status=204)
                    return
                document.served = True
                headers = {"content-type": document.content_type}
                await route.fulfill(status=document.status, headers=headers, body=document.body)
                return
            if document is None or request.resource_type in _REFUSED_TYPES:
                await route.abort("blockedbyclient")  # a leftover of the previous page, or media
                return
            try:
                response = await self._fetch(route)
            except (httpx.HTTPError, builtins.TimeoutError) as exc:  # as the network would
                log.debug("sub-request %s failed: %s", request.url, exc)
                await route.abort("failed")
                return
            if response is None:
                await route.abort("blockedbyclient")
            else:
                await route.fulfill(
                    status=response.status, headers=response.headers, body=response.body
                )
        except PlaywrightError:  # the tab closed while a request was in flight
            log.debug("sub-request %s ended with its page", request.url, exc_info=True)

    async def _fetch(self, route: Route) -> _SubResponse | None:
        """Send a sub-request ourselves, following redirects by hand so each hop meets the guard."""
        assert self._client is not None
        request = route.request
        url = request.url
        headers = {
            name: value
            for name, value in (await request.all_headers()).items()
            if name.lower() not in _HOP_HEADERS and not name.startswith(":")
        }
        body = request.post_data_buffer
        for _hop in range(_MAX_REDIRECTS + 1):
            if not await self._allowed(url):
                log.info("blocked sub-request to %s (SSRF guard)", url)
                return None
            outgoing = self._client.build_request(
                request.method, url, headers=headers, content=body
            )
            try:
                response = await self._client.send(outgoing, stream=True)
            except AddressRefused as exc:
                log.info("blocked sub-request to %s (SSRF guard: %s)", url, exc)
                return None
            try:
                location = response.headers.get("location")
                if not (response.is_redirect and location):
                    return await _SubResponse.read(response)
            finally:
                await response.aclose()
            if request.method != "GET":
                return None  # a redirected POST would need method rewriting; not for links
            url = urljoin(url, location.strip())
        return None

    async def _allowed(self, url: str) -> bool:
        if urlsplit(url).scheme not in ("http", "https"):
            return False
        return self.guard is None or await self.guard.allowed(url)


class _SubResponse:
    """A sub-request's answer, decoded, as the browser is handed it."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @classmethod
    async def read(cls, response: httpx.Response) -> _SubResponse | None:
        """Read the decoded body; None past the size cap (the browser sees a failed request)."""
        parts: list[bytes] = []
        size = 0
        async for part in response.aiter_bytes():
            size += len(part)
            if size > _SUB_REQUEST_BYTES:
                log.info("sub-request %s over %d bytes; refused", response.url, size)
                return None
            parts.append(part)
        headers = {
            name: value
            for name, value in response.headers.items()
            if name.lower() not in _HOP_HEADERS
        }
        return cls(response.status_code, headers, b"".join(parts))


class _Tab:
    """A browser tab kept between pages, and the document it is rendering now (if any)."""

    __slots__ = ("document", "page")

    def __init__(self, page: Page) -> None:
        self.page = page
        self.document: _Document | None = None


async def _close(tab: _Tab, url: str) -> None:
    from playwright.async_api import Error as PlaywrightError

    try:
        async with asyncio.timeout(_CLOSE_TIMEOUT):
            await tab.page.close()
    except (PlaywrightError, builtins.TimeoutError):
        log.debug("closing the tab of %s failed", url, exc_info=True)


class _Document:
    """The main document's response, served to the browser once."""

    __slots__ = ("body", "content_type", "served", "status")

    def __init__(self, body: bytes, content_type: str, status: int) -> None:
        self.body = body
        self.content_type = content_type
        self.status = status
        self.served = False


async def _refuse_web_socket(ws: WebSocketRoute) -> None:
    # Not calling `connect_to_server()` keeps the socket inside Playwright: nothing connects.
    await ws.close()


def _first_line(exc: Any) -> str:
    text = str(getattr(exc, "message", "") or exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__

"""The rooms `Fetcher` was split into, each on its own and without a socket: the retry decision
(`retry`), where a redirect points and what origin a URL is in (`urls`), which headers and
credentials a request carries (`credentials`), the proxy a request takes (`client`), and the
attempt loop over a stand-in attempt. The `Fetcher` that puts them together is tested over
HTTP in tests/test_http_pure.py, tests/test_http_hostile.py and tests/test_fetch_control.py."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from sitescout._cookies import Cookie
from sitescout._errors import HTTPError, NetworkError
from sitescout._http import EnvProxies, FetchConfig
from sitescout._http.client import proxy_for
from sitescout._http.credentials import Credentials
from sitescout._http.response import Response
from sitescout._http.retry import Retry, check_status, retry_delay, retrying, waited_too_long
from sitescout._http.urls import full_origin, redirect_target, unusable

# -- retry -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 204, 301, 304, 399])
def test_a_status_below_400_passes(status: int) -> None:
    check_status(status, "https://example.com/", None)


@pytest.mark.parametrize("status", [400, 403, 404, 410, 499])
def test_a_4xx_other_than_429_fails_for_good(status: int) -> None:
    with pytest.raises(HTTPError) as caught:
        check_status(status, "https://example.com/", "5")
    assert caught.value.status == status and str(caught.value.args[0]) == f"HTTP {status}"


@pytest.mark.parametrize(
    ("status", "header", "asked"),
    [(429, "7", 7.0), (500, None, None), (503, "1.5", 1.5), (599, "soon", None)],
)
def test_429_and_5xx_are_asked_again_with_the_wait_they_ask_for(
    status: int, header: str | None, asked: float | None
) -> None:
    with pytest.raises(Retry) as caught:
        check_status(status, "https://example.com/s.xml", header)
    error = caught.value.error
    assert isinstance(error, HTTPError) and error.status == status
    assert error.url == "https://example.com/s.xml"
    assert caught.value.asked == asked


def test_a_retry_after_is_obeyed_up_to_its_cap() -> None:
    config = FetchConfig(retry_after_cap=10.0)
    assert retry_delay(4.0, 3, config) == 4.0
    assert retry_delay(40.0, 0, config) == 10.0


@pytest.mark.parametrize(("attempt", "jitter", "expected"), [(0, 0.0, 0.25), (2, 0.5, 2.0)])
def test_the_backoff_doubles_per_attempt_and_is_jittered(
    attempt: int, jitter: float, expected: float
) -> None:
    config = FetchConfig(backoff=0.5)
    assert retry_delay(None, attempt, config, lambda: jitter) == expected


def test_the_jitter_stays_within_half_and_one_and_a_half() -> None:
    config = FetchConfig(backoff=1.0)
    for _ in range(200):  # bounded
        assert 0.5 <= retry_delay(None, 0, config) < 1.5


def test_waited_too_long_keeps_the_kind_and_status_of_the_error() -> None:
    http = waited_too_long(HTTPError("HTTP 503", url="u", status=503), 120.0, 3.04)
    assert isinstance(http, HTTPError) and http.status == 503 and http.url == "u"
    assert http.args[0] == "HTTP 503; the server asked to wait 120 s, more than the 3.0 s left"
    net = waited_too_long(NetworkError("reset", url="u"), 9.6, 1.0)
    assert type(net) is NetworkError and net.args[0].startswith(
        "reset; the server asked to wait 10"
    )


def attempts_that(
    *outcomes: BaseException | None,
) -> tuple[list[int], Callable[[], Awaitable[None]]]:
    """A stand-in attempt raising each outcome in turn (None: it succeeds), and its call log."""
    calls: list[int] = []

    async def once() -> None:
        calls.append(len(calls))
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome

    return calls, once


async def test_retrying_stops_at_the_first_success() -> None:
    error = NetworkError("reset", url="u")
    calls, once = attempts_that(Retry(error), None)
    result = Response(url="u", final_url="u")
    await retrying(result, once, FetchConfig(backoff=0.0), 5.0)
    assert calls == [0, 1] and result.attempts == 2


async def test_retrying_runs_out_with_the_last_error(caplog: pytest.LogCaptureFixture) -> None:
    errors = [NetworkError(f"reset {i}", url="u") for i in range(3)]
    calls, once = attempts_that(*(Retry(e) for e in errors))
    result = Response(url="u", final_url="u")
    with caplog.at_level(logging.INFO, logger="sitescout._http"):
        await retrying(result, once, FetchConfig(retries=2, backoff=0.0), 5.0)
    assert len(calls) == 3 and result.attempts == 3 and result.error is errors[2]
    assert [r.name for r in caplog.records] == ["sitescout._http"] * 2  # two "retrying" lines


async def test_retrying_does_not_sleep_past_the_time_limit() -> None:
    error = HTTPError("HTTP 503", url="u", status=503)
    calls, once = attempts_that(Retry(error, asked=60.0), None)
    result = Response(url="u", final_url="u")
    await retrying(result, once, FetchConfig(), 1.0)
    assert calls == [0] and isinstance(result.error, HTTPError)
    assert "the server asked to wait 60 s" in result.error.args[0]


async def test_a_failure_that_is_not_a_retry_ends_at_once() -> None:
    error = HTTPError("HTTP 404", url="u", status=404)
    calls, once = attempts_that(error)
    result = Response(url="u", final_url="u")
    await retrying(result, once, FetchConfig(retries=5), 5.0)
    assert calls == [0] and result.error is error


async def test_an_attempt_over_the_time_limit_is_a_timeout() -> None:
    async def slow() -> None:
        await asyncio.sleep(10)

    result = Response(url="u", final_url="https://example.com/final")
    await retrying(result, slow, FetchConfig(), 0.05)
    assert result.error is not None and result.attempts == 1
    assert result.error.args[0] == "no complete response within 0.05 s"
    assert result.error.url == "https://example.com/final"


# -- urls --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Example.COM/a?b", "https://example.com:443"),
        ("HTTP://example.com/", "http://example.com:80"),
        ("http://example.com:8080/x", "http://example.com:8080"),
        ("http://example.com:99999/", "http://example.com:99999/"),  # no port: the URL itself
    ],
)
def test_full_origin_always_writes_the_port(url: str, origin: str) -> None:
    assert full_origin(url) == origin


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://example.com/", None),
        ("ftp://example.com/", "not an http(s) URL: ftp scheme"),
        ("//example.com/", "not an http(s) URL: no scheme"),
        ("http:///path", "no host"),
        ("http://exa\nmple.com/", "a control character in the URL"),
    ],
)
def test_unusable_says_why_a_url_cannot_be_requested(url: str, problem: str | None) -> None:
    assert unusable(url) == problem


def test_a_relative_location_resolves_against_the_url_it_came_from() -> None:
    assert (
        redirect_target("https://example.com/a/b.xml", " c.xml ") == "https://example.com/a/c.xml"
    )
    assert redirect_target("https://example.com/a/", "//cdn.example.org/s") == (
        "https://cdn.example.org/s"
    )


@pytest.mark.parametrize(
    ("location", "problem"),
    [
        ("file:///etc/passwd", "not an http(s) URL: file scheme"),
        ("/a\tb", "a control character in the Location"),
    ],
)
def test_a_location_sitescout_would_not_fetch_is_a_network_error(
    location: str, problem: str
) -> None:
    with pytest.raises(NetworkError) as caught:
        redirect_target("https://example.com/s.xml", location)
    assert caught.value.args[0] == f"redirect to an unusable URL: {problem}"
    assert caught.value.url == "https://example.com/s.xml"


# -- credentials -------------------------------------------------------------------------------

SECRET = FetchConfig(headers=(("X-Token", "t"),), auth=("user", "pass"))
BASIC = "Basic " + base64.b64encode(b"user:pass").decode("ascii")


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("https://example.com/sitemap.xml", True),
        ("https://EXAMPLE.com:443/other", True),
        ("http://example.com/", False),  # another scheme
        ("https://example.com:8443/", False),  # another port
        ("https://www.example.com/", False),  # another host, even a subdomain
        ("https://evil.example/", False),
    ],
)
def test_headers_and_basic_auth_go_to_the_start_origin_only(url: str, sent: bool) -> None:
    headers = Credentials("https://example.com/").headers_for(url, SECRET)
    expected = {"X-Token": "t", "Authorization": BASIC} if sent else {}
    assert headers == expected


def test_without_a_start_nothing_secret_is_sent_until_one_is_adopted() -> None:
    credentials = Credentials(None)
    assert credentials.headers_for("https://example.com/", SECRET) == {}
    credentials.adopt("https://example.com/")
    credentials.adopt("https://other.example/")  # the first http(s) start stays
    assert credentials.start == "https://example.com/"
    assert credentials.headers_for("https://example.com/x", SECRET)["X-Token"] == "t"


def test_a_start_on_a_file_gives_way_to_the_first_http_url() -> None:
    credentials = Credentials("file:///tmp/sitemap.xml")
    credentials.adopt("https://example.com/")
    assert credentials.start == "https://example.com/"


def test_cookies_follow_their_own_rules_not_the_start_origin() -> None:
    config = FetchConfig(
        cookies=(Cookie("host", "1"), Cookie("wide", "2", "example.com", subdomains=True))
    )
    credentials = Credentials("https://example.com/")
    assert credentials.headers_for("https://example.com/", config) == {"Cookie": "host=1; wide=2"}
    assert credentials.headers_for("https://www.example.com/", config) == {"Cookie": "wide=2"}
    assert credentials.headers_for("https://other.example/", config) == {}


def test_netrc_gives_basic_auth_to_the_start_host_with_trust_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine example.com login me password secret\n", encoding="utf-8")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    token = base64.b64encode(b"me:secret").decode("ascii")
    credentials = Credentials("https://example.com/")
    assert credentials.headers_for("https://example.com/", FetchConfig()) == {}
    trusting = FetchConfig(trust_env=True)
    assert credentials.headers_for("https://example.com/", trusting) == {
        "Authorization": f"Basic {token}"
    }
    assert credentials.headers_for("https://other.example/", trusting) == {}


# -- client: the proxy of each request ---------------------------------------------------------


def test_proxy_for_prefers_the_configured_proxy_to_the_environment() -> None:
    env = EnvProxies(http="http://env:3128", https="http://envs:3128", no_proxy=("local.test",))
    configured = FetchConfig(proxy="http://proxy:8080")
    assert proxy_for("https://local.test/", configured, env) == "http://proxy:8080"
    assert proxy_for("http://example.com/", FetchConfig(), env) == "http://env:3128"
    assert proxy_for("https://example.com/", FetchConfig(), env) == "http://envs:3128"
    assert proxy_for("https://a.local.test/", FetchConfig(), env) is None  # no_proxy
    assert proxy_for("https://example.com/", FetchConfig(), EnvProxies()) is None

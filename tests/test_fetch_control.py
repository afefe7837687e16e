"""Fetch control: headers, cookies, Basic auth, proxies, TLS trust and `--rate`, against real
servers on loopback (127.0.0.1 and 127.0.0.2 are two hosts) and a real forward proxy
(`tests/proxy.py`). Credentials are checked where they land: each server records the headers of
every request it gets."""

from __future__ import annotations

import base64
import itertools
import json
import pickle
import ssl
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import sitescout
from sitescout._cookies import Cookie, cookie_header, parse_cookie, parse_cookies_txt
from sitescout._errors import UsageError
from sitescout._http import EnvProxies, FetchConfig, mask_url
from sitescout.cli import app

from .proxy import ForwardProxy
from .server import Reply, RequestHandler, Site, _Server, sitemapindex, urlset

TOKEN = "hdr-T0KEN-9f3a"  # distinctive: searched for in every output
PASSWORD = "pw-S3CRET-77c1"
COOKIE = "ck-C00KIE-41e8"
PROXY_PASSWORD = "px-PA55-0b2d"
SECRETS = (TOKEN, PASSWORD, COOKIE, PROXY_PASSWORD)
BASIC = "Basic " + base64.b64encode(f"ops:{PASSWORD}".encode()).decode()


class _Recording(RequestHandler):
    def do_GET(self) -> None:
        site = self.server.site
        assert isinstance(site, HostSite)
        with site.lock:
            site.requests.append((time.monotonic(), self.path, dict(self.headers.items())))
        super().do_GET()


class HostSite(Site):
    """`Site` on any loopback address, recording every request's headers; TLS with `tls`."""

    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.routes = {}
        self.hits = Counter()
        self.log = []
        self.lock = threading.Lock()
        self.requests: list[tuple[float, str, dict[str, str]]] = []
        self.host = host
        self.scheme = "https" if tls else "http"
        self._server = _Server((host, 0), _Recording)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.site = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> HostSite:
        super().start()
        return self

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self._server.server_address[1]}"

    def headers_of(self, path: str) -> list[dict[str, str]]:
        with self.lock:
            return [h for _t, p, h in self.requests if p == path]

    def all_headers(self) -> list[dict[str, str]]:
        with self.lock:
            return [h for _t, _p, h in self.requests]


@pytest.fixture
def hosts() -> Iterator[tuple[HostSite, HostSite]]:
    a, b = HostSite("127.0.0.1").start(), HostSite("127.0.0.2").start()
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    p = ForwardProxy().start()
    try:
        yield p
    finally:
        p.stop()


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def lowered(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def gated(site: HostSite, pages: list[str], check: str) -> None:
    """robots.txt and /sitemap.xml answer 403 unless the request carries `check`."""

    def needs(body: str, content_type: str) -> Any:
        def handler(req: RequestHandler) -> Reply:
            h = lowered(dict(req.headers.items()))
            ok = {
                "header": h.get("x-token") == TOKEN,
                "cookie": f"waf={COOKIE}" in h.get("cookie", ""),
                "auth": h.get("authorization") == BASIC,
            }[check]
            if not ok:
                return Reply(403, b"forbidden", {"Content-Type": "text/plain"})
            return Reply(200, body.encode(), {"Content-Type": content_type})

        return handler

    robots = f"User-agent: *\nAllow: /\nSitemap: {site.url}/sitemap.xml\n"
    site.handle("/robots.txt", needs(robots, "text/plain"))
    site.handle("/sitemap.xml", needs(urlset(pages), "application/xml"))


CREDENTIALS = {
    "header": ("--header", f"X-Token: {TOKEN}"),
    "cookie": ("--cookie", f"waf={COOKIE}"),
    "auth": ("--auth", f"ops:{PASSWORD}"),
}


# -- 403 without, 200 with ----------------------------------------------------------------------


@pytest.mark.parametrize("check", ["header", "cookie", "auth"])
def test_a_gated_site_answers_only_with_the_credential_cli(
    hosts: tuple[HostSite, HostSite], check: str
) -> None:
    a, _b = hosts
    pages = [f"{a.url}/p{i}" for i in range(3)]
    gated(a, pages, check)
    code, out, _err = run("urls", a.url + "/", "-f", "txt")
    assert code == 3 and out == ""
    code, out, err = run("urls", a.url + "/", "-f", "txt", *CREDENTIALS[check])
    assert code == 0, err
    assert out.split() == pages


@pytest.mark.parametrize(
    ("check", "given"),
    [
        ("header", {"headers": {"X-Token": TOKEN}}),
        ("cookie", {"cookies": [f"waf={COOKIE}"]}),
        ("auth", {"auth": ("ops", PASSWORD)}),
    ],
)
def test_a_gated_site_answers_only_with_the_credential_library(
    hosts: tuple[HostSite, HostSite], check: str, given: dict[str, Any]
) -> None:
    a, _b = hosts
    pages = [f"{a.url}/p{i}" for i in range(2)]
    gated(a, pages, check)
    assert [e.url for e in sitescout.iter_urls(a.url + "/")] == []
    assert [e.url for e in sitescout.iter_urls(a.url + "/", **given)] == pages


# -- credentials stay home ----------------------------------------------------------------------


def test_no_credential_crosses_to_another_host(
    hosts: tuple[HostSite, HostSite], tmp_path: Path
) -> None:
    """An index on A lists a child on A and one on B, and A's second child redirects to B: B
    gets none of the header, the Basic auth nor A's cookies, and only the cookie the jar gives it.
    """
    a, b = hosts
    jar = tmp_path / "cookies.txt"
    jar.write_text(
        "# Netscape HTTP Cookie File\n"
        f"127.0.0.1\tFALSE\t/\tFALSE\t0\tjar_a\ta-{COOKIE}\n"
        f"#HttpOnly_127.0.0.2\tFALSE\t/\tFALSE\t0\tjar_b\tb-value\n"
        f"127.0.0.2\tFALSE\t/private\tFALSE\t0\tjar_p\tnot-for-this-path\n"
        f"127.0.0.2\tFALSE\t/\tTRUE\t0\tjar_s\tsecure-only\n"
        f"127.0.0.2\tFALSE\t/\tFALSE\t1\tjar_old\texpired\n"
    )
    a.add("/robots.txt", f"Sitemap: {a.url}/index.xml\n", content_type="text/plain")
    a.add("/index.xml", sitemapindex([f"{a.url}/a.xml", f"{b.url}/b.xml", f"{a.url}/moved.xml"]))
    a.add("/a.xml", urlset([f"{a.url}/pa"]))
    a.add("/moved.xml", status=302, Location=f"{b.url}/redirected.xml")
    b.add("/b.xml", urlset([f"{b.url}/pb"]))
    b.add("/redirected.xml", urlset([f"{b.url}/pr"]))
    code, out, err = run(
        "urls", a.url + "/", "-f", "txt", "--cookies", str(jar),
        "--header", f"X-Token: {TOKEN}", "--auth", f"ops:{PASSWORD}", "--cookie", f"waf={COOKIE}",
    )  # fmt: skip
    assert code == 0, err
    assert set(out.split()) == {f"{a.url}/pa", f"{b.url}/pb", f"{b.url}/pr"}
    assert b.headers_of("/b.xml") and b.headers_of("/redirected.xml")
    for headers in b.all_headers():
        h = lowered(headers)
        assert "x-token" not in h and "authorization" not in h
        assert h.get("cookie") == "jar_b=b-value"
        assert not any(secret in json.dumps(headers) for secret in SECRETS)
    for headers in a.all_headers():
        h = lowered(headers)
        assert h["x-token"] == TOKEN and h["authorization"] == BASIC
        assert sorted(h["cookie"].split("; ")) == [f"jar_a=a-{COOKIE}", f"waf={COOKIE}"]


# -- proxies ------------------------------------------------------------------------------------


def _small_site(site: HostSite) -> list[str]:
    pages = [f"{site.url}/p{i}" for i in range(3)]
    site.add("/robots.txt", f"Sitemap: {site.url}/sitemap.xml\n", content_type="text/plain")
    site.add("/sitemap.xml", urlset(pages))
    return pages


def test_every_request_goes_through_the_proxy(
    hosts: tuple[HostSite, HostSite], proxy: ForwardProxy
) -> None:
    a, _b = hosts
    pages = _small_site(a)
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--proxy", proxy.url())
    assert code == 0, err
    assert out.split() == pages
    seen = [target for _m, target, _auth in proxy.requests]
    assert f"{a.url}/robots.txt" in seen and f"{a.url}/sitemap.xml" in seen
    assert len(seen) == len(a.requests)  # nothing went around the proxy


def test_trust_env_takes_the_proxy_from_the_environment(
    hosts: tuple[HostSite, HostSite], proxy: ForwardProxy
) -> None:
    a, _b = hosts
    pages = _small_site(a)
    env = {"HTTP_PROXY": proxy.url(), "http_proxy": "", "NO_PROXY": "", "no_proxy": ""}
    code, out, _err = run("urls", a.url + "/", "-f", "txt", env=env)
    assert code == 0 and out.split() == pages
    assert proxy.requests == []  # without --trust-env the environment is ignored
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--trust-env", env=env)
    assert code == 0, err
    assert out.split() == pages
    assert len(proxy.requests) == len(a.requests) // 2 > 0
    before = len(proxy.requests)
    env["NO_PROXY"] = "127.0.0.0/8"
    code, out, _err = run("urls", a.url + "/", "-f", "txt", "--trust-env", env=env)
    assert code == 0 and len(proxy.requests) == before


def test_a_proxy_that_wants_credentials_is_one_clear_error(
    hosts: tuple[HostSite, HostSite],
) -> None:
    a, _b = hosts
    _small_site(a)
    guarded = ForwardProxy(auth=("me", "right")).start()
    try:
        url = guarded.url(f"me:{PROXY_PASSWORD}")
        code, out, err = run("urls", a.url + "/", "--proxy", url, "-v")
        assert code == 3
        assert out == ""
        assert PROXY_PASSWORD not in err
        assert f"proxy http://me:****@127.0.0.1:{guarded.port}" in err
        assert "407" in err
        assert "Traceback" not in err
        assert a.requests == []
        code, out, _err = run("urls", a.url + "/", "-f", "txt", "--proxy", guarded.url("me:right"))
        assert code == 0 and len(out.split()) == 3
    finally:
        guarded.stop()


def test_a_proxy_that_does_not_listen_is_one_clear_error(
    hosts: tuple[HostSite, HostSite],
) -> None:
    a, _b = hosts
    _small_site(a)
    code, _out, err = run("urls", a.url + "/", "--proxy", f"http://u:{PROXY_PASSWORD}@127.0.0.1:1")
    assert code == 3
    assert "proxy http://u:****@127.0.0.1:1" in err and "connection refused" in err
    assert PROXY_PASSWORD not in err and "Traceback" not in err


# -- TLS: a loopback https site, through a CONNECT tunnel ---------------------------------------


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("tls")
    crt, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(crt), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return crt, key


@pytest.fixture
def tls_site(cert: tuple[Path, Path]) -> Iterator[HostSite]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    site = HostSite("127.0.0.1", tls=context).start()
    try:
        yield site
    finally:
        site.stop()


def test_ca_bundle_insecure_and_a_connect_tunnel(
    tls_site: HostSite, cert: tuple[Path, Path], proxy: ForwardProxy
) -> None:
    pages = _small_site(tls_site)
    code, out, err = run("urls", tls_site.url + "/", "-f", "txt")
    assert code == 3 and "TLS" in err  # a self-signed certificate is not trusted by default
    code, out, err = run("urls", tls_site.url + "/", "-f", "txt", "--ca-bundle", str(cert[0]))
    assert code == 0, err
    assert out.split() == pages and "insecure" not in err
    code, out, err = run("urls", tls_site.url + "/", "-f", "txt", "--insecure")
    assert code == 0 and out.split() == pages
    assert "warning: TLS certificates are not verified (--insecure)" in err
    code, out, err = run("urls", tls_site.url + "/", "--insecure", "--json", "-f", "txt")
    assert any("--insecure" in w for w in json.loads(err)["warnings"])
    code, out, err = run(
        "urls", tls_site.url + "/", "-f", "txt", "--ca-bundle", str(cert[0]),
        "--proxy", proxy.url(),
    )  # fmt: skip
    assert code == 0, err
    assert out.split() == pages
    port = tls_site.url.rsplit(":", 1)[1]
    assert ("CONNECT", f"127.0.0.1:{port}", "") in proxy.requests


# -- rate ---------------------------------------------------------------------------------------


def test_rate_spaces_request_starts_from_the_first(hosts: tuple[HostSite, HostSite]) -> None:
    a, _b = hosts
    children = [f"{a.url}/s{i}.xml" for i in range(5)]
    a.add("/robots.txt", f"Sitemap: {a.url}/index.xml\n", content_type="text/plain")
    a.add("/index.xml", sitemapindex(children))
    for i, child in enumerate(children):
        a.add(child.removeprefix(a.url), urlset([f"{a.url}/p{i}"]))
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--rate", "5", "--concurrency", "8")
    assert code == 0, err
    assert len(out.split()) == 5
    gaps = _gaps(a)
    assert len(gaps) == 6
    assert_paced(gaps, 0.17)  # 1/5 s, less a little for the clocks' and threads' slack
    # Without --rate the same walk runs its children at once: the check can fail.
    a.requests.clear()
    run("urls", a.url + "/", "-f", "txt", "--concurrency", "8")
    starts = sorted(t for t, _p, _h in a.requests)
    assert min(later - earlier for earlier, later in itertools.pairwise(starts)) < 0.17


# -- secrets never show -------------------------------------------------------------------------


def test_secrets_never_appear_in_output_logs_or_project_files(
    hosts: tuple[HostSite, HostSite], proxy: ForwardProxy, tmp_path: Path
) -> None:
    a, _b = hosts
    pages = [f"{a.url}/", f"{a.url}/about", f"{a.url}/blog/post"]
    a.add("/robots.txt", f"Sitemap: {a.url}/sitemap.xml\n", content_type="text/plain")
    a.add("/sitemap.xml", urlset(pages))
    html = "<html><head><title>t</title></head><body><a href='/about'>a</a></body></html>"
    for page in pages:
        a.add(page.removeprefix(a.url) or "/", html, content_type="text/html")
    secret_flags = [
        "--header", f"X-Token: {TOKEN}", "--auth", f"ops:{PASSWORD}",
        "--cookie", f"waf={COOKIE}", "--proxy", proxy.url(f"me:{PROXY_PASSWORD}"),
    ]  # fmt: skip
    outputs = []
    for extra in (["-v"], ["-vv"], ["--json"]):
        code, out, err = run("urls", a.url + "/", *secret_flags, *extra)
        assert code == 0, err
        outputs += [out, err]
    page = tmp_path / "report.html"
    code, out, err = run("report", a.url + "/", *secret_flags, "-o", str(page), "--json")
    outputs += [out, err, page.read_text(encoding="utf-8")]
    project = tmp_path / "project"
    code, out, err = run(
        "extract", a.url + "/", "--out", str(project), "--yes", *secret_flags, "-v"
    )
    assert code in (0, 1), err
    outputs += [out, err]
    files = [p for p in project.rglob("*") if p.is_file()]
    assert files
    outputs += [p.read_bytes().decode("utf-8", "replace") for p in files]
    assert any(lowered(h).get("x-token") == TOKEN for h in a.all_headers())  # they were sent
    for text in outputs:
        for secret in SECRETS:
            assert secret not in text


def test_fetch_config_masks_its_secrets() -> None:
    config = FetchConfig(
        headers=(("X-Token", TOKEN),),
        cookies=(parse_cookie(f"waf={COOKIE}"),),
        auth=("ops", PASSWORD),
        proxy=f"http://me:{PROXY_PASSWORD}@127.0.0.1:3128",
    )
    shown = repr(config) + str(config) + repr(config.cookies)
    assert "X-Token" in shown and "ops" in shown and "127.0.0.1:3128" in shown
    for secret in SECRETS:
        assert secret not in shown


# -- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--header", f"X-Token {TOKEN}"], "--header"),
        (["--header", "User-Agent: x"], "--header"),
        (["--cookie", "novalue"], "--cookie"),
        (["--cookies", "MALFORMED"], "--cookies"),
        (["--cookies", "/nonexistent/cookies.txt"], "--cookies"),
        (["--proxy", f"ftp://u:{PROXY_PASSWORD}@127.0.0.1:21"], "--proxy"),
        (["--proxy", "socks5://127.0.0.1:1080"], "--proxy"),
        (["--ca-bundle", "/nonexistent/ca.pem"], "--ca-bundle"),
        (["--ca-bundle", "MALFORMED"], "--ca-bundle"),
        (["--auth", "ops"], "--auth"),
        (["--rate", "0"], "--rate"),
    ],
)
@pytest.mark.parametrize("command", ["urls", "scope", "extract"])
def test_a_bad_fetch_flag_is_a_usage_error_naming_it(
    args: list[str], flag: str, command: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("127.0.0.1\tMAYBE\t/\tFALSE\t0\tname\tvalue\n")
    args = [str(bad) if a == "MALFORMED" else a for a in args]
    code, out, err = run(command, "http://127.0.0.1:1/", *args)
    assert code == 2, err
    assert flag in err and out == ""
    assert TOKEN not in err and PROXY_PASSWORD not in err
    if "socks5" in " ".join(args):
        assert "pip install 'httpx[socks]'" in err


def test_a_bad_proxy_in_the_environment_is_a_usage_error() -> None:
    code, _out, err = run(
        "urls", "http://127.0.0.1:1/", "--trust-env", env={"HTTPS_PROXY": "gopher://x:1"}
    )
    assert code == 2 and "HTTPS_PROXY" in err


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"headers": {"Bad Name": "x"}}, "headers"),
        ({"headers": {"X-A": "a\nb"}}, "headers"),
        ({"headers": [("Cookie", "a=b")]}, "headers"),
        ({"cookies": ["nope"]}, "cookies"),
        ({"cookies": "a=b"}, "cookies"),
        ({"auth": ("ops",)}, "auth"),
        ({"proxy": "ftp://127.0.0.1:21"}, "proxy"),
        ({"ca_bundle": "/nonexistent"}, "ca_bundle"),
        ({"rate": 0}, "rate"),
        ({"rate": float("inf")}, "rate"),
        ({"trust_env": "yes"}, "trust_env"),
    ],
)
def test_fetch_config_checks_its_fields(given: dict[str, Any], field: str) -> None:
    with pytest.raises(UsageError, match=field):
        FetchConfig(**given)


# -- the pure parts -----------------------------------------------------------------------------


def test_cookies_txt_rules() -> None:
    jar = parse_cookies_txt(
        "# comment\n\n"
        ".example.com\tTRUE\t/\tFALSE\t0\twide\t1\n"
        "#HttpOnly_www.example.com\tFALSE\t/docs\tTRUE\t4102444800\tnarrow\t2\n"
        "example.com\tFALSE\t/\tFALSE\t1000\told\t3\n"
        "other.org\tFALSE\t/\tFALSE\t0\tempty\n"
    )
    assert [c.name for c in jar] == ["wide", "narrow", "old", "empty"]
    assert (
        cookie_header(jar, "https://www.example.com/docs/a", None, now=2000) == "narrow=2; wide=1"
    )
    assert cookie_header(jar, "http://www.example.com/docs/a", None, now=2000) == "wide=1"
    assert cookie_header(jar, "https://www.example.com/docsx", None, now=2000) == "wide=1"
    assert cookie_header(jar, "https://example.com/", None, now=500) == "wide=1; old=3"
    assert cookie_header(jar, "https://badexample.com/", None, now=2000) is None
    assert cookie_header(jar, "https://other.org/", None) == "empty="
    assert pickle.loads(pickle.dumps(FetchConfig(cookies=jar, rate=0.5))).cookies == jar
    start = [parse_cookie("k=v")]
    assert cookie_header(start, "http://a.test/x", "a.test") == "k=v"
    assert cookie_header(start, "http://sub.a.test/x", "a.test") is None
    assert cookie_header(start, "http://a.test/x", None) is None
    assert "v" not in repr(Cookie("k", "secretvalue")).replace("value=", "")
    for bad in (
        "a\tb\n",
        "x.com\tTRUE\t/\tFALSE\tsoon\tn\tv\n",
        "x.com\tTRUE\tnoslash\tFALSE\t0\tn\tv",
    ):
        with pytest.raises(ValueError, match="line 1"):
            parse_cookies_txt(bad)


def test_env_proxies_follow_curl() -> None:
    env = {
        "http_proxy": "proxy.corp:3128",
        "HTTPS_PROXY": "http://u:p@secure.corp:8443",
        "NO_PROXY": "internal.corp, .skip.test,10.0.0.0/8,host.test:8080",
    }
    proxies = EnvProxies.read(env)
    assert proxies.for_url("http://example.com/") == "http://proxy.corp:3128"
    assert proxies.for_url("https://example.com/") == "http://u:p@secure.corp:8443"
    assert proxies.for_url("http://internal.corp/") is None
    assert proxies.for_url("http://a.internal.corp/") is None
    assert proxies.for_url("http://x.skip.test/") is None
    assert proxies.for_url("http://10.1.2.3/") is None
    assert proxies.for_url("http://host.test:8080/") is None
    assert proxies.for_url("http://host.test/") == "http://proxy.corp:3128"
    assert (
        EnvProxies.read({"NO_PROXY": "*", "ALL_PROXY": "http://p:1"}).for_url("http://x/") is None
    )
    assert not EnvProxies.read({})
    assert mask_url("http://u:p@h:1/") == "http://u:****@h:1/"
    assert mask_url("http://h:1/") == "http://h:1/"


# -- more commands and sources ------------------------------------------------------------------


def test_scope_takes_the_fetch_flags(hosts: tuple[HostSite, HostSite]) -> None:
    a, _b = hosts
    gated(a, [f"{a.url}/p1"], "header")
    code, out, _err = run("scope", a.url + "/", "--json")
    assert code == 3 and json.loads(out)["url_estimate_range"] == [0, 0]
    code, out, err = run("scope", a.url + "/", "--json", "--header", f"X-Token: {TOKEN}")
    assert code == 0, err
    assert json.loads(out)["url_estimate_range"] == [1, 1]
    assert TOKEN not in out + err


def test_trust_env_reads_netrc_for_the_start_host(
    hosts: tuple[HostSite, HostSite], tmp_path: Path
) -> None:
    a, _b = hosts
    gated(a, [f"{a.url}/p1"], "auth")
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login ops password {PASSWORD}\n")
    netrc.chmod(0o600)
    env = {"NETRC": str(netrc)}
    code, out, _err = run("urls", a.url + "/", "-f", "txt", env=env)
    assert code == 3 and out == ""
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--trust-env", env=env)
    assert code == 0, err
    assert out.split() == [f"{a.url}/p1"]


def _gaps(site: HostSite) -> list[float]:
    starts = sorted(t for t, _p, _h in site.requests)
    return [later - earlier for earlier, later in itertools.pairwise(starts)]


def assert_paced(gaps: list[float], least: float) -> None:
    """Request starts at least `least` apart, read robustly: the server stamps a request in its
    handler thread, and on a loaded machine one stamp can come late, which moves time from one
    gap into the next without changing their sum. So each two neighbouring gaps must add up to
    two intervals, or, when a stamp came so late that it took more than a gap's worth from its
    neighbour, the three gaps around them three intervals; a request that skipped the pacing
    leaves every pair and triple around it an interval short."""
    assert gaps, "fewer than two requests"
    if len(gaps) == 1:
        assert gaps[0] >= least, gaps
    for i in range(len(gaps) - 1):
        if gaps[i] + gaps[i + 1] >= 2 * least:
            continue
        triples = [sum(gaps[j : j + 3]) for j in (i - 1, i) if j >= 0 and j + 3 <= len(gaps)]
        assert triples and max(triples) >= 3 * least, gaps


def test_rate_paces_the_link_crawl(hosts: tuple[HostSite, HostSite]) -> None:
    a, _b = hosts
    links = "".join(f"<a href='/p{i}'>p{i}</a>" for i in range(4))
    for path in ["/", *(f"/p{i}" for i in range(4))]:
        a.add(path, f"<html><body>{links}</body></html>", content_type="text/html")
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--crawl", "--rate", "5")
    assert code in (0, 1), err
    assert len(out.split()) == 5
    gaps = _gaps(a)
    assert len(gaps) >= 5, gaps
    assert_paced(gaps, 0.17)


def test_rate_paces_extract_from_the_walk_to_the_pages(
    hosts: tuple[HostSite, HostSite], tmp_path: Path
) -> None:
    a, _b = hosts
    pages = [f"{a.url}/", f"{a.url}/docs/a", f"{a.url}/blog/b"]
    a.add("/robots.txt", f"Sitemap: {a.url}/sitemap.xml\n", content_type="text/plain")
    a.add("/sitemap.xml", urlset(pages))
    for page in pages:
        html = "<html><head><title>t</title></head><body><p>text</p></body></html>"
        a.add(page.removeprefix(a.url), html, content_type="text/html")
    out_dir = str(tmp_path / "p")
    code, _out, err = run("extract", a.url + "/", "--out", out_dir, "--yes", "--rate", "4")
    assert code in (0, 1), err
    paths = {p for _t, p, _h in a.requests}
    assert {"/docs/a", "/blog/b"} <= paths
    assert_paced(_gaps(a), 0.22)  # 1/4 s less slack


def test_render_refuses_a_proxy() -> None:
    from sitescout._http import render_problem

    assert render_problem(FetchConfig()) is None
    problem = render_problem(FetchConfig(proxy="http://127.0.0.1:3128"))
    assert problem is not None and "--render" in problem
    with pytest.raises(UsageError, match="--render"):
        sitescout.ExtractOptions(render=True, fetch=FetchConfig(proxy="http://127.0.0.1:3128"))


def test_a_proxy_refusing_a_tunnel_is_one_clear_error(tls_site: HostSite) -> None:
    _small_site(tls_site)
    guarded = ForwardProxy(auth=("me", "right")).start()
    try:
        url = guarded.url(f"me:{PROXY_PASSWORD}")
        code, out, err = run("urls", tls_site.url + "/", "--insecure", "--proxy", url)
        assert code == 3 and out == ""
        assert f"proxy http://me:****@127.0.0.1:{guarded.port}" in err and "407" in err
        assert PROXY_PASSWORD not in err and "Traceback" not in err
        assert guarded.requests and all(m == "CONNECT" for m, _t, _a in guarded.requests)
        assert tls_site.requests == []
    finally:
        guarded.stop()


def test_trust_env_reads_ssl_cert_file(tls_site: HostSite, cert: tuple[Path, Path]) -> None:
    pages = _small_site(tls_site)
    env = {"SSL_CERT_FILE": str(cert[0])}
    code, _out, _err = run("urls", tls_site.url + "/", "-f", "txt", env=env)
    assert code == 3
    code, out, err = run("urls", tls_site.url + "/", "-f", "txt", "--trust-env", env=env)
    assert code == 0, err
    assert out.split() == pages


def test_the_flags_record_masks_its_secrets() -> None:
    from sitescout.cli._flags import WalkFlags

    flags = WalkFlags(header=[f"X-Token: {TOKEN}"], auth=f"ops:{PASSWORD}", cookie=[f"a={COOKIE}"])
    shown = repr(flags) + repr(flags.fetch())
    assert "X-Token" in shown
    assert not any(secret in shown for secret in SECRETS)


def test_the_guard_still_checks_targets_through_a_proxy(
    hosts: tuple[HostSite, HostSite], proxy: ForwardProxy
) -> None:
    a, _b = hosts
    metadata = "http://169.254.169.254/latest.xml"
    a.add("/robots.txt", f"Sitemap: {a.url}/index.xml\n", content_type="text/plain")
    a.add("/index.xml", sitemapindex([f"{a.url}/a.xml", metadata]))
    a.add("/a.xml", urlset([f"{a.url}/pa"]))
    code, out, err = run("urls", a.url + "/", "-f", "txt", "--proxy", proxy.url(), "--json")
    assert code == 1, err
    assert out.split() == [f"{a.url}/pa"]
    errors = json.loads(err)["errors"]
    assert [(e["url"], e["error_class"]) for e in errors] == [(metadata, "BlockedAddressError")]
    assert all("169.254" not in target for _m, target, _a in proxy.requests)
    assert f"{a.url}/a.xml" in [target for _m, target, _a in proxy.requests]

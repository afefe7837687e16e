"""SSRF guard: special-purpose ranges, fail-closed resolution and DNS rebinding.

Decisions are tested through `address_class`/`address_allowed` and a stub resolver; the only
connections ever opened go to servers this module starts on 127.0.0.2 and 127.0.0.3.
"""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sitescout
from sitescout import _http
from sitescout._http import (
    AddressGuard,
    AddressRefused,
    FetchConfig,
    Fetcher,
    address_allowed,
    address_class,
)

from .server import RequestHandler, Site, _Server, sitemapindex, urlset

FUZZ_EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))

NEVER = [
    "0.0.0.0",
    "0.1.2.3",
    "192.0.0.192",  # a cloud metadata address in the IETF protocol block
    "192.0.0.1",
    "192.0.0.170",
    "192.0.2.10",
    "198.18.0.1",
    "198.19.255.254",
    "198.51.100.7",
    "203.0.113.9",
    "240.0.0.1",
    "255.255.255.255",
    "224.0.0.1",
    "239.255.255.250",
    "::",
    "::ffff:192.0.0.192",
    "::ffff:0.0.0.0",
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b:1::1",
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:c000:c0::1",  # 6to4 of 192.0.0.192
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "fec0::1",
    "100::1",
    "2001:db8::1",
    "3fff::1",
    "ff02::1",
    "::127.0.0.1",  # IPv4-compatible, deprecated
]

METADATA = ["169.254.169.254", "fd00:ec2::254", "192.0.0.192", "169.254.170.2", "100.100.100.200"]


@pytest.mark.parametrize("ip", NEVER)
def test_special_purpose_addresses_are_never_allowed(ip: str) -> None:
    assert address_class(ip) == "other"
    for root in ("public", "loopback", "private", "link-local", "other"):
        assert not address_allowed(ip, root), (ip, root)


@pytest.mark.parametrize("ip", METADATA)
def test_metadata_addresses_are_refused_whatever_the_root(ip: str) -> None:
    for root in ("public", "loopback", "private", "link-local", "other"):
        assert not address_allowed(ip, root), (ip, root)


@pytest.mark.parametrize(
    ("ip", "cls"),
    [
        pytest.param("100.64.0.1", "private", id="cgnat"),
        pytest.param("100.127.255.254", "private", id="cgnat-top"),
        pytest.param("::ffff:10.0.0.1", "private", id="mapped-private"),
        pytest.param("64:ff9b::5db8:d822", "public", id="nat64-of-public"),
        pytest.param("2002:5db8:d822::1", "public", id="6to4-of-public"),
        pytest.param("2606:4700::1111", "public", id="public-v6"),
        pytest.param("8.8.8.8", "public", id="public-v4"),
        pytest.param("192.0.1.1", "public", id="next-to-192.0.0/24"),
        pytest.param("fe80::1%eth0", "link-local", id="scoped-link-local"),
    ],
)
def test_address_classes_of_edge_ranges(ip: str, cls: str) -> None:
    assert address_class(ip) == cls


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(st.ip_addresses())
def test_any_address_gets_a_class_and_public_walks_only_reach_public(ip: object) -> None:
    cls = address_class(str(ip))
    assert cls in ("public", "loopback", "private", "link-local", "other")
    assert address_allowed(str(ip), "public") is (cls == "public" and str(ip) not in METADATA)


def resolver(answers: dict[str, list[list[str]]]) -> tuple[_http.Resolver, list[str]]:
    """A stub DNS: each name answers its lists in turn, the last one forever after."""
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host not in answers:
            raise OSError(f"no such host: {host}")
        seq = answers[host]
        return seq[min(calls.count(host), len(seq)) - 1]

    return resolve, calls


async def test_rebinding_from_public_to_loopback_is_refused_at_the_second_answer() -> None:
    resolve, calls = resolver(
        {"site.example": [["93.184.216.34"]], "flip.example": [["93.184.216.35"], ["127.0.0.1"]]}
    )
    guard = AddressGuard("https://site.example/", resolve, ttl=0.0)
    assert await guard.addresses("flip.example", 443) == ["93.184.216.35"]
    with pytest.raises(AddressRefused):
        await guard.addresses("flip.example", 443)
    assert calls.count("flip.example") == 2


async def test_unresolvable_host_is_refused_not_allowed() -> None:
    resolve, _ = resolver({"site.example": [["93.184.216.34"]]})
    guard = AddressGuard("https://site.example/", resolve)
    assert not await guard.allowed("https://nowhere.example/sitemap.xml")
    with pytest.raises(OSError):
        await guard.addresses("nowhere.example", 443)


async def test_unresolvable_host_is_a_recorded_network_error(site: Site) -> None:
    resolve, _ = resolver({})
    guard = AddressGuard(site.url + "/", resolve)
    async with Fetcher(FetchConfig(retries=0), guard=guard) as fetcher:
        resp = await fetcher.fetch("http://nowhere.invalid/sitemap.xml", lambda _r: None)
    assert resp.error is not None
    assert resp.error.error_class == "NetworkError"
    assert "resolve" in str(resp.error)


# -- rebinding over real loopback servers -------------------------------------------------------


class HostSite(Site):
    """A `Site` on another loopback address (the whole of 127.0.0.0/8 is local)."""

    def __init__(self, host: str, port: int = 0) -> None:
        super().__init__()
        self._server.server_close()
        self._server = _Server((host, port), RequestHandler)
        self._server.site = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.host = host

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])


def twin_sites() -> tuple[HostSite, HostSite]:
    """Servers on 127.0.0.2 and 127.0.0.3 sharing one port, so a rebound name reaches either."""
    for _ in range(20):  # bounded: a port free on .2 is almost always free on .3
        first = HostSite("127.0.0.2")
        try:
            second = HostSite("127.0.0.3", first.port)
        except OSError:
            first.stop()
            continue
        first.start()
        second.start()
        return first, second
    raise RuntimeError("no shared port for the two loopback servers")


async def test_walk_connects_only_to_the_address_it_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked, rebound = twin_sites()
    try:
        base = f"http://rebind.test:{checked.port}"
        children = [f"{base}/s{i}.xml" for i in range(4)]
        for s in (checked, rebound):
            # A new connection per request: every fetch would re-resolve the name.
            s.add("/index.xml", sitemapindex(children), Connection="close")
            for i in range(len(children)):
                s.add(f"/s{i}.xml", urlset([f"{base}/p{i}"]), Connection="close")
        resolve, calls = resolver({"rebind.test": [["127.0.0.2"], ["127.0.0.3"]]})
        monkeypatch.setattr("sitescout._http.guard._system_resolver", resolve)
        w = sitescout.walk(f"{base}/index.xml", retries=0, timeout=5.0)
        async with asyncio.timeout(20):
            urls = [e.url async for batch in w for e in batch]
    finally:
        checked.stop()
        rebound.stop()
    assert sorted(urls) == sorted(f"{base}/p{i}" for i in range(4))
    assert rebound.total_hits() == 0
    assert checked.total_hits() == 5
    # One answer serves every connection to the name while it is fresh: never a second lookup
    # between the check and the connect.
    assert calls == ["rebind.test"]
    assert not w.report.errors


async def test_fetcher_connects_to_the_checked_address_after_the_answer_expires() -> None:
    checked, rebound = twin_sites()
    try:
        rebound.add("/x.xml", urlset(["http://rebind.test/a"]))
        checked.add("/x.xml", urlset(["http://rebind.test/a"]), Connection="close")
        # Answers expire at once: each new connection resolves the name once, checks that
        # answer and connects to it. The third answer is private: refused, nothing connects.
        answers = [["127.0.0.2"], ["127.0.0.2"], ["127.0.0.2"], ["10.0.0.1"]]
        resolve, calls = resolver({"rebind.test": answers})
        guard = AddressGuard(f"http://rebind.test:{checked.port}/", resolve, ttl=0.0)
        url = f"http://rebind.test:{checked.port}/x.xml"
        seen: list[int | None] = []
        async with Fetcher(FetchConfig(retries=0), guard=guard) as fetcher:
            for _ in range(2):
                resp = await fetcher.fetch(url, _ignore)
                seen.append(resp.status)
            last = await fetcher.fetch(url, _ignore)
    finally:
        checked.stop()
        rebound.stop()
    assert seen == [200, 200]
    assert rebound.total_hits() == 0
    assert last.error is not None and last.error.error_class == "BlockedAddressError"
    assert checked.total_hits() == 2
    assert len(calls) == 4  # the root's class, then once per connection


def _ignore(_resp: _http.Response) -> None:
    return None


@pytest.mark.parametrize("ip", ["fd00:ec2::254%eth0", "fe80::a9fe:a9fe%2"])
def test_an_ipv6_zone_does_not_hide_an_address(ip: str) -> None:
    assert not address_allowed(ip, "private")
    assert not address_allowed(ip, "public")

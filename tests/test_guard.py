"""SSRF guard: decision functions and a stub resolver; nothing ever connects."""

from __future__ import annotations

import pytest

from sitescout._http import AddressGuard, address_allowed, address_class


@pytest.mark.parametrize(
    ("ip", "cls"),
    [
        pytest.param("93.184.216.34", "public", id="public-v4"),
        pytest.param("2606:2800:220:1::1", "public", id="public-v6"),
        pytest.param("127.0.0.1", "loopback", id="loopback"),
        pytest.param("127.8.9.10", "loopback", id="loopback-range"),
        pytest.param("::1", "loopback", id="loopback-v6"),
        pytest.param("10.1.2.3", "private", id="10/8"),
        pytest.param("172.16.0.1", "private", id="172.16/12"),
        pytest.param("192.168.1.1", "private", id="192.168/16"),
        pytest.param("fd12::1", "private", id="ula-v6"),
        pytest.param("169.254.169.254", "link-local", id="metadata"),
        pytest.param("169.254.1.1", "link-local", id="link-local"),
        pytest.param("fe80::1", "link-local", id="link-local-v6"),
        pytest.param("::ffff:127.0.0.1", "loopback", id="v4-mapped-loopback"),
        pytest.param("0.0.0.0", "other", id="unspecified"),
        pytest.param("224.0.0.1", "other", id="multicast"),
    ],
)
def test_address_class(ip: str, cls: str) -> None:
    assert address_class(ip) == cls


@pytest.mark.parametrize(
    ("ip", "root", "allowed"),
    [
        pytest.param("93.184.216.34", "public", True, id="public-to-public"),
        pytest.param("127.0.0.1", "public", False, id="public-to-loopback"),
        pytest.param("10.0.0.5", "public", False, id="public-to-private"),
        pytest.param("169.254.169.254", "public", False, id="public-to-metadata"),
        pytest.param("127.0.0.1", "loopback", True, id="loopback-stays"),
        pytest.param("93.184.216.34", "loopback", False, id="loopback-root-cannot-leave"),
        pytest.param("10.0.0.5", "private", True, id="intranet-stays"),
        pytest.param("127.0.0.1", "private", False, id="intranet-to-loopback"),
        pytest.param("169.254.169.254", "private", False, id="intranet-to-metadata"),
        pytest.param("0.0.0.0", "loopback", False, id="never-unspecified"),
    ],
)
def test_address_allowed(ip: str, root: str, allowed: bool) -> None:
    assert address_allowed(ip, root) is allowed


def stub(table: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host not in table:
            raise OSError("no such host")
        return table[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


async def test_public_walk_cannot_be_sent_to_private_hosts() -> None:
    resolver = stub(
        {
            "site.example": ["93.184.216.34"],
            "cdn.example": ["151.101.1.1"],
            "internal.example": ["10.0.0.7"],
            "rebind.example": ["93.184.216.35", "127.0.0.1"],
        }
    )
    guard = AddressGuard("https://site.example/", resolver)
    assert await guard.allowed("https://cdn.example/sitemap.xml")
    assert not await guard.allowed("https://internal.example/sitemap.xml")
    assert not await guard.allowed("http://169.254.169.254/latest/meta-data/")
    assert not await guard.allowed("http://127.0.0.1:8080/admin")
    assert not await guard.allowed("https://rebind.example/")  # any bad address refuses
    assert not await guard.allowed("http://[::1]/x")


async def test_local_root_stays_local() -> None:
    guard = AddressGuard("http://127.0.0.1:8000/", stub({"example.com": ["93.184.216.34"]}))
    assert await guard.allowed("http://127.0.0.1:9000/sitemap.xml")
    assert not await guard.allowed("https://example.com/sitemap.xml")


async def test_decisions_are_cached_per_host() -> None:
    resolver = stub({"site.example": ["93.184.216.34"], "a.example": ["93.184.216.36"]})
    guard = AddressGuard("https://site.example/", resolver)
    for i in range(5):
        assert await guard.allowed(f"https://a.example/{i}.xml")
    assert resolver.calls.count("a.example") == 1  # type: ignore[attr-defined]


async def test_blocked_target_is_recorded_by_the_walk(tmp_path: object) -> None:
    """A loopback-rooted walk whose index points at a public host records a BlockedAddressError."""
    from sitescout import walk

    from .server import Site, sitemapindex, urlset

    site = Site().start()
    try:
        site.add(
            "/index.xml",
            sitemapindex(["http://93.184.216.34/outside.xml", f"{site.url}/in.xml"]),
        )
        site.add("/in.xml", urlset([f"{site.url}/a"]))
        w = walk(site.url + "/index.xml", retries=0)
        urls = [e.url async for batch in w for e in batch]
    finally:
        site.stop()
    assert urls == [f"{site.url}/a"]
    assert [d.error_class for d in w.report.errors] == ["BlockedAddressError"]

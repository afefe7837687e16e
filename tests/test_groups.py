"""§9 path groups: `group_by_path_prefix` over batches, and over a real walk on 127.0.0.1."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sitescout
from sitescout import Entry, UsageError
from sitescout._groups import (
    MAX_SAMPLES,
    OTHER,
    ROOT,
    PathGroup,
    PathGrouper,
    group_by_path_prefix,
    group_key,
)

from .server import Site, sitemapindex, urlset


async def stream(*batches: Iterable[str]) -> AsyncIterator[list[Entry]]:
    for batch in batches:
        yield [Entry(url=u) for u in batch]


async def grouped(*batches: Iterable[str], depth: int = 1, **kwargs: int) -> list[PathGroup]:
    return [g async for g in group_by_path_prefix(stream(*batches), depth, **kwargs)]


def by_prefix(groups: list[PathGroup]) -> dict[str, PathGroup]:
    return {g.prefix: g for g in groups}


# -- the list ----------------------------------------------------------------------------


async def test_basic_grouping() -> None:
    urls = [f"https://x.com/blog/post-{i}" for i in range(5)]
    urls += [f"https://x.com/docs/{p}/" for p in ("a", "b", "c")]
    urls += ["https://x.com/blog", "https://x.com/blog/"]
    groups = await grouped(urls)
    assert [(g.prefix, g.count) for g in groups] == [("/blog/*", 7), ("/docs/*", 3)]
    assert by_prefix(groups)["/docs/*"].samples == tuple(urls[5:8])


async def test_root_variants_share_the_root_group() -> None:
    urls = ["https://x.com", "https://x.com/", "https://x.com/?utm_source=a", "https://x.com/#top"]
    assert {group_key(u) for u in urls} == {ROOT}
    groups = await grouped(urls)
    assert groups == [PathGroup(ROOT, 4, tuple(sorted(urls, key=lambda u: (len(u), u))))]


async def test_small_groups_merge_into_other_yielded_last() -> None:
    big = [f"https://x.com/a/{i}" for i in range(3)]
    small = ["https://x.com/b/1", "https://x.com/b/2", "https://x.com/c/1", "https://x.com/"]
    small += [f"https://x.com/d{i}" for i in range(10)]  # `other` is the largest group here
    groups = await grouped(big + small)
    assert [g.prefix for g in groups] == ["/a/*", OTHER]
    other = groups[-1]
    assert other.count == len(small) == 14
    assert len(other.samples) == MAX_SAMPLES
    assert set(other.samples) <= set(small)


async def test_samples_are_the_shortest_urls_whatever_the_arrival_order() -> None:
    # Concurrent documents arrive in any order; the example a user sees must not change with it.
    urls = [f"https://x.com/blog/2024/01/{d:02d}/post-{d}/" for d in range(1, 30)]
    urls += ["https://x.com/blog/", "https://x.com/blog/page/2/", "https://x.com/blog/a/"]
    expected = tuple(sorted(urls, key=lambda u: (len(u), u))[:MAX_SAMPLES])
    assert expected[0] == "https://x.com/blog/"
    rng = random.Random(7)
    for _ in range(20):
        order = urls[:]
        rng.shuffle(order)
        (group,) = await grouped(order)
        assert group.samples == expected
        assert group.count == len(urls)


async def test_a_repeated_url_is_one_sample() -> None:
    urls = ["https://x.com/a/"] * 5 + ["https://x.com/a/1", "https://x.com/a/2"]
    (group,) = await grouped(urls)
    assert group.count == 7
    assert group.samples == ("https://x.com/a/", "https://x.com/a/1", "https://x.com/a/2")


async def test_other_shows_the_shortest_urls_of_what_it_took_in() -> None:
    big = [f"https://x.com/a/{i}" for i in range(3)]
    small = [f"https://x.com/long-slug-{i}/x" for i in range(12)] + ["https://x.com/b/"]
    groups = await grouped(big + small)
    other = groups[-1]
    assert other.prefix == OTHER
    assert other.samples[0] == "https://x.com/b/"
    assert other.samples == tuple(sorted(small, key=lambda u: (len(u), u))[:MAX_SAMPLES])


async def test_one_group_of_1000_keeps_10_samples() -> None:
    urls = [f"https://x.com/p/{i}" for i in range(1000)]
    groups = await grouped(urls)
    assert groups == [PathGroup("/p/*", 1000, tuple(urls[:10]))]


async def test_5_batches_of_1000_over_3_groups_sum_to_5000() -> None:
    batches = [
        [f"https://x.com/{('a', 'b', 'c')[(b * 1000 + i) % 3]}/{b}-{i}" for i in range(1000)]
        for b in range(5)
    ]
    groups = await grouped(*batches)
    assert [g.prefix for g in groups] == ["/a/*", "/b/*", "/c/*"]
    assert sum(g.count for g in groups) == 5000
    assert [g.count for g in groups] == [1667, 1667, 1666]
    assert all(len(g.samples) == MAX_SAMPLES for g in groups)


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("not a url", id="words"),
        pytest.param("", id="empty"),
        pytest.param("/blog/relative", id="relative"),
        pytest.param("http://[::1/x", id="unclosed-bracket"),
        pytest.param("https://x.com:port/a", id="bad-port"),
        pytest.param("mailto:someone@x.com", id="mailto"),
        pytest.param("https:///nohost", id="no-host"),
    ],
)
def test_unparseable_url_has_no_group(url: str) -> None:
    assert group_key(url) is None


async def test_unparseable_urls_land_in_other() -> None:
    good = [f"https://x.com/a/{i}" for i in range(3)]
    bad = ["not a url", "http://[::1/x", "https://x.com:port/a"]
    groups = await grouped(good, bad)
    assert groups == [PathGroup("/a/*", 3, tuple(good)), PathGroup(OTHER, 3, tuple(bad))]


# -- beyond the spec: depth, the group-table cap, plain strings ---------------------------------


@pytest.mark.parametrize(
    ("url", "depth", "key"),
    [
        pytest.param("https://x.com/blog/x", 1, "/blog/*", id="first-segment"),
        pytest.param("https://x.com//blog//x", 1, "/blog/*", id="empty-segments"),
        pytest.param("https://x.com/docs/api/x", 2, "/docs/api/*", id="depth-2"),
        pytest.param("https://x.com/docs", 2, "/docs/*", id="depth-2-shallow"),
        pytest.param("https://x.com/", 2, ROOT, id="depth-2-root"),
        pytest.param("https://x.com/Docs/API/x?q=1", 3, "/Docs/API/x/*", id="case-kept"),
    ],
)
def test_group_key(url: str, depth: int, key: str) -> None:
    assert group_key(url, depth) == key


async def test_depth_2_splits_a_site_under_one_top_segment() -> None:
    urls = [f"https://x.com/docs/api/{i}" for i in range(4)]
    urls += [f"https://x.com/docs/guides/{i}" for i in range(3)]
    groups = await grouped(urls, depth=2)
    assert [(g.prefix, g.count) for g in groups] == [("/docs/api/*", 4), ("/docs/guides/*", 3)]
    assert [(g.prefix, g.count) for g in await grouped(urls)] == [("/docs/*", 7)]


def test_bad_depth_is_a_usage_error_at_call_time() -> None:
    with pytest.raises(UsageError):
        group_by_path_prefix(stream(), 0)
    with pytest.raises(UsageError):
        PathGrouper(1, max_groups=0)


async def test_group_table_cap_counts_new_prefixes_in_other() -> None:
    urls = [f"https://x.com/{p}/{i}" for p in ("a", "b", "c") for i in range(3)]
    groups = await grouped(urls, max_groups=2)
    assert [(g.prefix, g.count) for g in groups] == [("/a/*", 3), ("/b/*", 3), (OTHER, 3)]


async def test_plain_url_strings_are_accepted() -> None:
    async def strings() -> AsyncIterator[list[str]]:
        yield ["https://x.com/a/1", "https://x.com/a/2", "https://x.com/a/3"]

    assert [g.prefix async for g in group_by_path_prefix(strings())] == ["/a/*"]


async def test_empty_stream_yields_nothing() -> None:
    assert await grouped() == []


segment = st.sampled_from(["", "a", "b", "blog", "docs", "x y", "%2F"])
url = st.builds(
    lambda segs, q: "https://x.com/" + "/".join(segs) + q,
    st.lists(segment, max_size=4),
    st.sampled_from(["", "?a=1", "#f"]),
) | st.sampled_from(["nope", "http://[::1", "https://x.com"])


@given(st.lists(url, max_size=200), st.integers(min_value=1, max_value=3))
@settings(max_examples=100, deadline=None)
def test_grouping_invariants(urls: list[str], depth: int) -> None:
    grouper = PathGrouper(depth)
    grouper.add_all(urls)
    groups = grouper.groups()
    assert sum(g.count for g in groups) == len(urls) == grouper.total
    assert all(len(g.samples) <= MAX_SAMPLES for g in groups)
    assert all(g.count >= 3 for g in groups if g.prefix != OTHER)
    assert [g.prefix for g in groups].count(OTHER) <= 1
    assert OTHER not in [g.prefix for g in groups[:-1]]
    counts = [g.count for g in groups if g.prefix != OTHER]
    assert counts == sorted(counts, reverse=True)


# -- over a real walk ----------------------------------------------------------------------------


async def test_groups_of_a_real_walk(site: Site) -> None:
    blog = [f"{site.url}/blog/{i}" for i in range(1200)]  # more than one batch
    docs = [f"{site.url}/docs/{i}" for i in range(5)]
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(blog))
    site.add("/b.xml", urlset([*docs, f"{site.url}/", f"{site.url}/about"]))
    walk = sitescout.walk(site.url + "/sitemap.xml", timeout=5.0)
    groups = [g async for g in group_by_path_prefix(walk)]
    assert [(g.prefix, g.count) for g in groups] == [("/blog/*", 1200), ("/docs/*", 5), (OTHER, 2)]
    assert walk.report.urls == 1207


async def test_groups_of_a_walks_native_batches_are_those_of_its_entries(site: Site) -> None:
    """`group_by_path_prefix(walk.batches())` groups in the core: the same groups and samples."""
    blog = [f"{site.url}/blog/{'x' * (i % 7)}{i}" for i in range(1500)]
    odd = [f"{site.url}/docs//a", f"{site.url}/?q=/blog/", f"{site.url}:99999/x", "mailto:a@b.c"]
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(blog))
    site.add("/b.xml", urlset([*odd, f"{site.url}/docs/b", f"{site.url}/docs/c"]))
    found = []
    for depth in (1, 2):
        by_entries = sitescout.walk(site.url + "/sitemap.xml", timeout=5.0)
        by_batches = sitescout.walk(site.url + "/sitemap.xml", timeout=5.0)
        entries = [g async for g in group_by_path_prefix(by_entries, depth)]
        batches = [g async for g in group_by_path_prefix(by_batches.batches(), depth)]
        assert batches == entries
        found.append(batches)
    assert [(g.prefix, g.count) for g in found[0]][:2] == [("/blog/*", 1500), ("/docs/*", 3)]
    # At depth 2 every blog URL is a group of one: all of them are in `other`.
    assert sum(g.count for g in found[1]) == sum(g.count for g in found[0])
    assert found[1][-1].prefix == OTHER and found[1][-1].count >= 1500

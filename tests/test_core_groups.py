"""Path groups in the core (rust/src/groups.rs) against the Python rule they replaced
(`tests/reference/groups.py`): `group_key` on any text, and `Batch.path_groups`, the per-batch
count `sitescout groups` merges, against `PathGrouper.add` of each URL in turn.

`SITESCOUT_DIFF_EXAMPLES` scales the number of generated cases.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitescout import _core
from sitescout._groups import MAX_SAMPLES, PathGrouper, group_key

from .reference import groups as ref
from .test_core_under import ANY_TEXT, PROPERTY, batch_of, urls


def test_the_python_rule_is_the_core() -> None:
    """One rule, one place."""
    assert group_key is _core.group_key


@pytest.mark.parametrize(
    ("url", "depth", "key"),
    [
        ("https://x.com/blog/post", 1, "/blog/*"),
        ("https://x.com/blog/post", 2, "/blog/post/*"),
        ("https://x.com//blog///post//", 3, "/blog/post/*"),
        ("HTTPS://x.com", 1, "/"),
        ("https://x.com/?q=/a/b#/c", 1, "/"),
        ("\u3000 https://x.com/a \x85", 1, "/a/*"),
        ("\x00https://x.com/a", 1, "/a/*"),
        ("https://x.com/a\t\n/b", 2, "/a/b/*"),
        ("https://u:p@x.com:0080/a", 1, "/a/*"),
        ("https://x.com:/a", 1, "/a/*"),
        ("https://[::1]:8/a", 1, "/a/*"),
        ("https://[v1.x]/a", 1, "/a/*"),
        ("https://x.com/\ud800/a", 1, "/\ud800/*"),
        ("https://x.com/caf\u00e9/", 1, "/caf\u00e9/*"),
        ("https://x.com:65536/a", 1, None),
        ("https://x.com:\uff18\uff10/a", 1, None),
        ("https://x.com: 80/a", 1, None),
        ("https://[::1/a", 1, None),
        ("https://[127.0.0.1]/a", 1, None),
        ("https://ex\uff0fcom/a", 1, None),
        ("https://@/a", 1, None),
        ("ftp://x.com/a", 1, None),
        ("//x.com/a", 1, None),
        ("/a/b", 1, None),
        ("", 1, None),
    ],
)
def test_known_answers(url: str, depth: int, key: str | None) -> None:
    assert ref.group_key(url, depth) == key
    assert group_key(url, depth) == key


DEPTHS = st.integers(min_value=1, max_value=4)


@given(urls(), DEPTHS)
@PROPERTY
def test_group_key(url: str, depth: int) -> None:
    assert group_key(url, depth) == ref.group_key(url, depth), repr(url)


@given(ANY_TEXT, DEPTHS)
@PROPERTY
def test_any_text(text: str, depth: int) -> None:
    for url in (text, "https://x.com/" + text, "http://" + text, "https:" + text):
        assert group_key(url, depth) == ref.group_key(url, depth), repr(url)


# --------------------------------------------------------------------------- the batch


def one_by_one(urls: list[str], depth: int, limit: int) -> list[tuple[str | None, int, list[str]]]:
    """What `Batch.path_groups` must give, from the reference rule URL by URL."""
    order: dict[str | None, tuple[int, list[str]]] = {}
    for url in urls:
        key = ref.group_key(url, depth)
        count, kept = order.get(key, (0, []))
        if url not in kept:
            kept = sorted([*kept, url], key=ref.sample_order)[:limit]
        order[key] = (count + 1, kept)
    return [(key, count, kept) for key, (count, kept) in order.items()]


@given(
    st.lists(urls().filter(lambda u: "\ud800" not in u), max_size=30),
    DEPTHS,
    st.integers(min_value=1, max_value=4),
)
@PROPERTY
def test_path_groups_of_a_batch(urls: list[str], depth: int, limit: int) -> None:
    assert batch_of(urls).path_groups(depth, limit) == one_by_one(urls, depth, limit)


def test_path_groups_keep_the_shortest_distinct_urls_by_code_points() -> None:
    urls = [
        "https://x.com/b/" + "\u00e9" * 3,  # 6 bytes, 3 code points
        "https://x.com/b/abcd",
        "https://x.com/b/abcd",
        "https://x.com/b/",
        "https://x.com/b/zz",
    ]
    assert batch_of(urls).path_groups(1, 3) == [
        ("/b/*", 5, ["https://x.com/b/", "https://x.com/b/zz", urls[0]])
    ]


def test_a_grouper_fed_batches_equals_one_fed_urls() -> None:
    """`sitescout groups` merges native batches; the answer is what URL-by-URL adds give,
    the group cap (`max_groups`) and `other` included."""
    rng = random.Random(19)
    segments = [f"s{i}" for i in range(40)] + ["", "%2F", "\u00e9"]
    urls = [
        f"https://x.com/{rng.choice(segments)}/{rng.choice(segments)}/{'p' * rng.randrange(9)}"
        if rng.random() > 0.05
        else rng.choice(["mailto:a@x.com", "https://:80/x", "ftp://x.com/a"])
        for _ in range(3_000)
    ]
    for depth, cap in ((1, 10_000), (2, 10_000), (1, 7), (2, 50)):
        by_url, by_batch = PathGrouper(depth, max_groups=cap), PathGrouper(depth, max_groups=cap)
        by_url.add_all(urls)
        for start in range(0, len(urls), 700):
            by_batch.add_batch(batch_of(urls[start : start + 700]))
        assert by_batch.groups() == by_url.groups()
        assert by_batch.total == by_url.total == len(urls)
        assert Counter(g.prefix for g in by_batch.groups()).most_common(1)[0][1] == 1
        assert max(len(g.samples) for g in by_batch.groups()) == MAX_SAMPLES

"""Walk budgets, their warnings, and child ordering under budgets (§5)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitescout._budget import (
    BudgetName,
    Budgets,
    BudgetTracker,
    budget_label,
    order_children,
    truncation_notice,
)
from sitescout._errors import UsageError


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def tracker(**limits: Any) -> BudgetTracker:
    return BudgetTracker(Budgets(**limits), clock=FakeClock())


# --- Budgets -------------------------------------------------------------------------------------


def test_sampler_preset() -> None:
    sampler = Budgets.SAMPLER
    limits = (sampler.max_depth, sampler.max_fetches, sampler.max_bytes, sampler.max_urls)
    assert limits == (3, 20, 52_428_800, 10_000)
    assert sampler.deadline is None
    assert sampler.any_set


@pytest.mark.parametrize(
    ("limits", "any_set"),
    [
        pytest.param({}, False, id="none"),
        pytest.param({"max_urls": 1}, True, id="urls"),
        pytest.param({"deadline": 0.5}, True, id="deadline"),
    ],
)
def test_any_set(limits: dict[str, Any], any_set: bool) -> None:
    assert Budgets(**limits).any_set is any_set


@pytest.mark.parametrize(
    "limits",
    [
        pytest.param({"max_depth": 0}, id="zero-depth"),
        pytest.param({"max_fetches": -1}, id="negative-fetches"),
        pytest.param({"max_bytes": 0}, id="zero-bytes"),
        pytest.param({"max_urls": -5}, id="negative-urls"),
        pytest.param({"deadline": 0.0}, id="zero-deadline"),
        pytest.param({"deadline": -1.5}, id="negative-deadline"),
        pytest.param({"deadline": float("nan")}, id="nan-deadline"),
        pytest.param({"max_fetches": 2.5}, id="fractional-count"),
        pytest.param({"max_urls": True}, id="bool"),
        pytest.param({"max_depth": "3"}, id="string"),
    ],
)
def test_budgets_reject_bad_values(limits: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Budgets(**limits)
    with pytest.raises(ValueError):  # UsageError is a ValueError for plain callers
        Budgets(**limits)


# --- fetches -------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [pytest.param(1, id="one"), pytest.param(20, id="twenty")])
def test_fetch_limit_allows_exactly_n_attempts(limit: int) -> None:
    budget = tracker(max_fetches=limit)
    assert [budget.try_fetch() for _ in range(limit)] == [True] * limit
    assert not budget.partial
    assert budget.try_fetch() is False
    assert budget.try_fetch() is False
    assert budget.fetches == limit
    assert budget.hit == ["max_fetches"]
    assert budget.exhausted_reason() == "max_fetches"


def test_fetch_limit_warning_text_appears_once() -> None:
    budget = tracker(max_fetches=20)
    for _ in range(25):
        budget.try_fetch()
    assert budget.warnings == [
        "Sitemap fetch limit (20 documents) reached; discovery results are partial."
    ]


def test_unlimited_tracker_never_refuses() -> None:
    budget = tracker()
    assert all(budget.try_fetch() for _ in range(1000))
    budget.add_bytes(10**12)
    assert budget.exhausted_reason() is None
    assert budget.deadline_left() is None
    assert budget.depth_allows_children(50)
    assert budget.warnings == [] and not budget.partial


def test_reaching_a_limit_without_needing_more_is_not_partial() -> None:
    budget = tracker(max_fetches=2, max_urls=10)
    assert budget.try_fetch() and budget.try_fetch()
    assert budget.hit == [] and budget.warnings == []


# --- bytes ---------------------------------------------------------------------------------------


def test_document_crossing_the_byte_limit_is_kept_and_the_next_fetch_refused() -> None:
    budget = tracker(max_bytes=100)
    assert budget.try_fetch()
    budget.add_bytes(60)
    assert budget.try_fetch()
    budget.add_bytes(50)  # crosses 100: this document still counts in full
    assert budget.bytes == 110
    assert budget.try_fetch() is False
    assert budget.fetches == 2
    assert budget.hit == ["max_bytes"]
    assert budget.warnings == [
        "Sitemap body byte limit (100 bytes) reached; discovery results are partial."
    ]


def test_byte_limit_reached_exactly_refuses_the_next_fetch() -> None:
    budget = tracker(max_bytes=100)
    assert budget.try_fetch()
    budget.add_bytes(100)
    assert budget.try_fetch() is False


def test_sampler_byte_warning_text() -> None:
    budget = BudgetTracker(Budgets.SAMPLER, clock=FakeClock())
    budget.try_fetch()
    budget.add_bytes(52_428_800)
    budget.try_fetch()
    assert budget.warnings == [
        "Sitemap body byte limit (52428800 bytes) reached; discovery results are partial."
    ]


# --- URLs ----------------------------------------------------------------------------------------


def test_url_limit_marked_by_the_walker_warns_once() -> None:
    # The walker counts kept URLs itself (tests/test_walk_budgets.py); the tracker words it.
    budget = tracker(max_urls=10_000)
    budget.mark_hit("max_urls")
    budget.mark_hit("max_urls")
    assert budget.partial and budget.hit == ["max_urls"]
    assert budget.warnings == [
        "Sitemap URL limit (10000 URLs) reached; discovery results are partial."
    ]


# --- deadline ------------------------------------------------------------------------------------


def test_deadline_with_a_fake_clock() -> None:
    clock = FakeClock(now=50.0)
    budget = BudgetTracker(Budgets(deadline=2.0), clock=clock)
    assert budget.deadline_left() == 2.0
    clock.now = 51.5
    assert budget.deadline_left() == 0.5
    assert budget.try_fetch()
    clock.now = 52.0
    assert budget.deadline_left() == 0.0
    assert budget.try_fetch() is False
    clock.now = 60.0
    assert budget.deadline_left() == 0.0  # never negative
    assert budget.warnings == [
        "Sitemap walk deadline (2 s) reached; discovery results are partial."
    ]


def test_explicit_start_time() -> None:
    clock = FakeClock(now=10.0)
    budget = BudgetTracker(Budgets(deadline=5.0), start=7.0, clock=clock)
    assert budget.deadline_left() == 2.0


@pytest.mark.parametrize(
    ("deadline", "shown"),
    [
        pytest.param(2, "2 s", id="int"),
        pytest.param(2.0, "2 s", id="whole-float"),
        pytest.param(2.5, "2.5 s", id="fraction"),
        pytest.param(0.125, "0.125 s", id="milliseconds"),
        pytest.param(90.0, "90 s", id="minute-and-half"),
        pytest.param(0.0001, "0.0001 s", id="tiny"),
    ],
)
def test_deadline_warning_formats_seconds(deadline: float, shown: str) -> None:
    budget = tracker(deadline=deadline)
    budget.mark_hit("deadline")
    assert budget.warnings == [
        f"Sitemap walk deadline ({shown}) reached; discovery results are partial."
    ]


# --- depth ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_depth", "depth", "allowed"),
    [
        pytest.param(None, 10, True, id="unlimited"),
        pytest.param(3, 1, True, id="root"),
        pytest.param(3, 2, True, id="middle"),
        pytest.param(3, 3, False, id="last-level"),
        pytest.param(3, 4, False, id="beyond"),
        pytest.param(1, 1, False, id="root-only"),
    ],
)
def test_depth_allows_children(max_depth: int | None, depth: int, allowed: bool) -> None:
    assert tracker(max_depth=max_depth).depth_allows_children(depth) is allowed


def test_depth_rejects_levels_below_the_root() -> None:
    with pytest.raises(UsageError):
        tracker(max_depth=3).depth_allows_children(0)


def test_depth_drops_accumulate_into_one_warning() -> None:
    budget = tracker(max_depth=3)
    budget.drop_children(4)
    budget.drop_children(0)
    budget.drop_children(7)
    assert budget.dropped_children == 11
    assert budget.hit == ["max_depth"]
    assert budget.warnings == [
        "Sitemap depth limit (3 levels) reached; dropped 11 child sitemaps; "
        "discovery results are partial."
    ]


def test_depth_warning_singular() -> None:
    budget = tracker(max_depth=1)
    budget.drop_children(1)
    assert budget.warnings == [
        "Sitemap depth limit (1 level) reached; dropped 1 child sitemap; "
        "discovery results are partial."
    ]


def test_dropping_no_children_binds_nothing() -> None:
    budget = tracker(max_depth=2)
    budget.drop_children(0)
    assert not budget.partial and budget.warnings == []


# --- several budgets -----------------------------------------------------------------------------


def test_one_warning_per_budget_in_binding_order() -> None:
    budget = BudgetTracker(Budgets.SAMPLER, clock=FakeClock())
    budget.drop_children(2)
    budget.mark_hit("max_urls")
    budget.drop_children(3)
    expected_hit: list[BudgetName] = ["max_depth", "max_urls"]
    assert budget.hit == expected_hit
    assert budget.warnings == [
        "Sitemap depth limit (3 levels) reached; dropped 5 child sitemaps; "
        "discovery results are partial.",
        "Sitemap URL limit (10000 URLs) reached; discovery results are partial.",
    ]


def test_refusal_names_the_deadline_first() -> None:
    clock = FakeClock()
    budget = BudgetTracker(Budgets(max_fetches=1, deadline=1.0), clock=clock)
    assert budget.try_fetch()
    clock.now += 5
    assert budget.exhausted_reason() == "deadline"
    assert budget.try_fetch() is False
    assert budget.hit == ["deadline"]


def test_mark_hit_is_idempotent_and_strict() -> None:
    budget = tracker(deadline=1.0)
    budget.mark_hit("deadline")
    budget.mark_hit("deadline")
    assert budget.hit == ["deadline"]
    with pytest.raises(UsageError):
        budget.mark_hit("max_fetches")


def test_hit_is_a_copy() -> None:
    budget = tracker(max_fetches=1)
    budget.try_fetch()
    budget.try_fetch()
    budget.hit.clear()
    assert budget.hit == ["max_fetches"]


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda b: b.add_bytes(-1), id="bytes"),
        pytest.param(lambda b: b.drop_children(-1), id="children"),
    ],
)
def test_negative_counts_are_rejected(call: Any) -> None:
    with pytest.raises(UsageError):
        call(tracker())


# --- order_children ------------------------------------------------------------------------------


def _shards(*names: str) -> list[str]:
    return [f"https://x.com/sitemap-{name}.xml" for name in names]


def test_priority_example_fetches_pages_and_posts_first() -> None:
    children = _shards("image", "video", "products", "pages", "posts", "blog")
    ordered = order_children(children, None)
    assert ordered == _shards("pages", "posts", "blog", "image", "video", "products")
    # max_fetches=3: the index itself plus two children.
    budget = tracker(max_fetches=3)
    assert budget.try_fetch()
    fetched = [child for child in ordered if budget.try_fetch()]
    assert fetched == _shards("pages", "posts")


@pytest.mark.parametrize(
    ("children", "preferred", "expected"),
    [
        pytest.param(
            ["/a/sitemap-fr.xml", "/a/sitemap-misc.xml", "/a/sitemap-en.xml"],
            "en",
            ["/a/sitemap-en.xml", "/a/sitemap-fr.xml", "/a/sitemap-misc.xml"],
            id="locale-first",
        ),
        pytest.param(
            ["/dotnet_de-de_1.xml", "/dotnet_en-us_1.xml", "/dotnet_en-us_2.xml"],
            "en-us",
            ["/dotnet_en-us_1.xml", "/dotnet_en-us_2.xml", "/dotnet_de-de_1.xml"],
            id="locale-stable",
        ),
        pytest.param(
            ["/sitemap-pages.xml", "/sitemap-en.xml"],
            "EN",
            ["/sitemap-en.xml", "/sitemap-pages.xml"],
            id="locale-before-content",
        ),
        pytest.param(
            ["/news_en.xml", "/sitemap-misc.xml"],
            "en",
            ["/sitemap-misc.xml", "/news_en.xml"],
            id="deranked-last-even-in-locale",
        ),
        pytest.param(
            ["/category-sitemap.xml", "/product-sitemap.xml", "/post-sitemap2.xml"],
            None,
            ["/post-sitemap2.xml", "/category-sitemap.xml", "/product-sitemap.xml"],
            id="yoast-names",
        ),
        pytest.param(
            ["/sitemap_products_1.xml", "/sitemap_collections_1.xml", "/sitemap_blogs_1.xml"],
            None,
            ["/sitemap_blogs_1.xml", "/sitemap_collections_1.xml", "/sitemap_products_1.xml"],
            id="shopify-names",
        ),
        pytest.param(
            ["/sitemap-images.xml", "/sitemap-partition-3.xml", "/sitemap-videos.xml", "/a.xml"],
            None,
            ["/a.xml", "/sitemap-images.xml", "/sitemap-partition-3.xml", "/sitemap-videos.xml"],
            id="deranked-plurals",
        ),
        pytest.param(
            ["/sitemap-pagesx.xml", "/sitemap-repost.xml", "/sitemap-page.xml"],
            None,
            ["/sitemap-page.xml", "/sitemap-pagesx.xml", "/sitemap-repost.xml"],
            id="whole-tokens-only",
        ),
        pytest.param(
            ["/blog/sitemap.xml", "/sitemap-content.xml?type=image"],
            None,
            ["/sitemap-content.xml?type=image", "/blog/sitemap.xml"],
            id="filename-only",
        ),
        pytest.param([], "en", [], id="empty"),
    ],
)
def test_order_children(children: list[str], preferred: str | None, expected: list[str]) -> None:
    assert order_children(children, preferred) == expected


def test_order_children_rejects_a_bad_locale() -> None:
    with pytest.raises(UsageError):
        order_children(["/sitemap.xml"], "english")


@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                _shards("image", "pages", "fr", "en-us", "products", "posts", "1", "news")
            ),
            st.text(max_size=30),
        ),
        max_size=15,
    ),
    st.sampled_from([None, "en", "fr", "en-gb"]),
)
def test_order_children_is_a_permutation(children: list[str], preferred: str | None) -> None:
    assert Counter(order_children(children, preferred)) == Counter(children)


# --- truncation notice ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("discovered", "leaves", "limit", "expected"),
    [
        pytest.param(
            329_018,
            612,
            10_000,
            "Discovered 329,018 page URLs across 612 leaf sitemaps. Truncated discovery to the "
            "first 10,000 page URLs; pass --all to lift the limit.",
            id="spec",
        ),
        pytest.param(
            1_234_567,
            1,
            10_000,
            "Discovered 1,234,567 page URLs across 1 leaf sitemap. Truncated discovery to the "
            "first 10,000 page URLs; pass --all to lift the limit.",
            id="one-leaf",
        ),
    ],
)
def test_truncation_notice(discovered: int, leaves: int, limit: int, expected: str) -> None:
    assert truncation_notice(discovered, leaves, limit) == expected


def test_overshoot_counts_the_bytes_read_past_the_byte_budget() -> None:
    tracker = BudgetTracker(Budgets(max_bytes=500), clock=lambda: 0.0)
    tracker.add_bytes(400)
    assert tracker.overshoot() == 0
    tracker.add_bytes(390)
    assert tracker.overshoot() == 290
    assert BudgetTracker(Budgets(), clock=lambda: 0.0).overshoot() == 0


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("max_urls", "Sitemap URL limit"),
        ("max_bytes", "Sitemap body byte limit"),
        ("max_fetches", "Sitemap fetch limit"),
        ("max_depth", "Sitemap depth limit"),
        ("deadline", "Sitemap walk deadline"),
        ("something else", "something else"),
    ],
)
def test_budget_label_is_the_warnings_own_name(name: str, label: str) -> None:
    assert budget_label(name) == label
    if name.startswith("max_"):
        tracker = BudgetTracker(Budgets(**{name: 7}), clock=lambda: 0.0)
        assert tracker.warning(name).startswith(f"{label} (")  # type: ignore[arg-type]

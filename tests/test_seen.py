from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitescout._core import SeenSet


def test_add_reports_novelty_and_grows() -> None:
    seen = SeenSet(capacity=4)
    urls = [f"https://x.com/p/{i}" for i in range(10_000)]
    assert all(seen.add(u) for u in urls)
    assert not any(seen.add(u) for u in urls)
    assert len(seen) == 10_000
    assert all(u in seen for u in urls)
    assert "https://x.com/other" not in seen


def test_memory_is_a_few_bytes_per_url() -> None:
    seen = SeenSet()
    for i in range(100_000):
        seen.add(f"https://x.com/{i}")
    assert seen.nbytes <= 100_000 * 32  # 8-byte slots at a load factor of at least 1/4


@given(st.lists(st.text(max_size=30), max_size=300))
def test_matches_a_real_set(keys: list[str]) -> None:
    seen = SeenSet(capacity=2)
    reference: set[str] = set()
    for key in keys:
        assert seen.add(key) is (key not in reference)
        reference.add(key)
    assert len(seen) == len(reference)

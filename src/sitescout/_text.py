"""Words for counts in messages, one rule for every module that writes them."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, *, separators: bool = False) -> str:
    """`1 page`, `2 pages`; `separators` writes `1,234 pages`."""
    number = f"{count:,}" if separators else str(count)
    return f"{number} {noun}" if count == 1 else f"{number} {noun}s"

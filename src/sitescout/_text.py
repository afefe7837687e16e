"""Words for counts in messages, one rule for every module that writes them."""

from __future__ import annotations

__all__ = ["byte_size", "plural"]


def plural(count: int, noun: str, *, separators: bool = False) -> str:
    """`1 page`, `2 pages`; `separators` writes `1,234 pages`."""
    number = f"{count:,}" if separators else str(count)
    return f"{number} {noun}" if count == 1 else f"{number} {noun}s"


def byte_size(count: int) -> str:
    """`950 B`, `1.9 MB`, `41.0 MB`, `2.3 GB` (decimal units, as transfer sizes are said)."""
    if count < 1000:
        return f"{count} B"
    for power, unit in ((1, "kB"), (2, "MB")):
        value = count / 1000**power
        if round(value, 1) < 1000:
            return f"{value:.1f} {unit}"
    return f"{count / 1000**3:,.1f} GB"

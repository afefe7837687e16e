"""The native scanner's fuzz harness (`fuzz/fuzz_scanner.py`) still runs, over its seed corpus.

The harness runs under atheris, which the test suite does not install; it once broke unseen
(`import sitescout` stopped loading the parser, which hands the core the entry classes, so every
input failed before the scanner was reached). Here its `check` (whole, in chunks, a byte at a
time: the same result, no panic) replays every seed of `fuzz/corpus`, in two chunk plans each,
truncated and not, without the fuzzer around it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "fuzz" / "fuzz_scanner.py"
SEEDS = sorted((ROOT / "fuzz" / "corpus").iterdir())


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    module = load(HARNESS)
    assert "atheris" not in sys.modules  # the harness needs it only to run under the fuzzer
    return module


def documents() -> list[bytes]:
    """The seeds' documents: each seed is the harness's input, the document after a prefix the
    fuzzer's input reader takes its flag and chunk sizes from."""
    prefix: bytes = load(ROOT / "fuzz" / "make_corpus.py").PREFIX
    assert all(path.read_bytes().startswith(prefix) for path in SEEDS)
    return [path.read_bytes()[len(prefix) :] for path in SEEDS]


def test_the_seed_corpus_is_there() -> None:
    assert len(SEEDS) > 500
    assert sum(path.stat().st_size for path in SEEDS) > 300_000


def test_every_seed_reads_alike_however_it_is_fed(harness: ModuleType) -> None:
    rnd = random.Random(19)
    started = time.monotonic()
    read_some = 0
    for data in documents():
        sizes = [rnd.randint(1, 512) for _ in range(rnd.randint(1, 8))]
        plan: list[int] = []
        left = len(data)
        while left > 0:
            plan.append(min(left, sizes[len(plan) % len(sizes)]))
            left -= plan[-1]
        harness.check(data, plan, truncated=rnd.random() < 0.25)
        whole = harness.read(data, None, truncated=False, drain=False)
        read_some += bool(whole.entries or whole.sitemaps)
        assert time.monotonic() - started < 300, "the corpus took too long"
    # The seeds are sitemaps, most of them: replaying them must have read their URLs.
    assert read_some > len(SEEDS) // 2, read_some


def test_a_difference_fails_the_check(harness: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` reports what it should: here a reader that loses the last entry when chunked."""
    real = harness.read

    def losing(data: bytes, plan: list[int] | None, *, truncated: bool, drain: bool) -> object:
        record = real(data, plan, truncated=truncated, drain=drain)
        if plan is not None and record.entries:
            return dataclasses.replace(record, entries=record.entries[:-1])
        return record

    monkeypatch.setattr(harness, "read", losing)
    doc = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://x.com/a</loc></url></urlset>"
    )
    with pytest.raises(AssertionError, match="chunking changes the result"):
        harness.check(doc, [9] * (len(doc) // 9 - 1) + [9 + len(doc) % 9], truncated=False)

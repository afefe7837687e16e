"""Fuzz the native sitemap scanner (`sitescout._core.Scanner`) with atheris. See README.md.

Each input is split by its first bytes into a document and a chunk plan. Checked per input:
- nothing escapes `feed()`/`close()`/`take()` but the documented `TypeError` (none is expected
  for bytes input), and a panic, which the binding catches and records in `errors`, counts as
  a crash too;
- the result (kind, entries with every field, child sitemaps, malformed, notes, damaged or not)
  is the same fed whole, in the plan's chunks with `take()` between them, and 1 byte at a time.

Run from the repository root:

    .venv/bin/python fuzz/fuzz_scanner.py fuzz/corpus -max_total_time=600

`SITESCOUT_FUZZ_CORE=/path/_core.abi3.so` loads that build of the extension instead of the
installed one (an instrumented build gives libFuzzer coverage of the Rust code: see README.md).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def _load_core() -> Any:
    path = os.environ.get("SITESCOUT_FUZZ_CORE")
    if not path:
        import sitescout._core as core

        return core
    loader = importlib.machinery.ExtensionFileLoader("sitescout._core", path)
    spec = importlib.util.spec_from_file_location("sitescout._core", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitescout._core"] = module
    loader.exec_module(module)
    return module


def _instrumented() -> contextlib.AbstractContextManager[Any]:
    """Coverage comes from the Rust code (an instrumented build); instrumenting the Python around
    it would only add edges of the harness itself. SITESCOUT_FUZZ_PY=1 instruments the harness
    and its helpers anyway, for a run against an uninstrumented build."""
    if os.environ.get("SITESCOUT_FUZZ_PY") != "1":
        return _nothing()
    import atheris

    return atheris.instrument_imports()


with _instrumented():
    import sitescout  # the package first: the extension is its submodule

    CORE = _load_core()
    from tests.reference import compare

    # The parser hands the entry classes to the core `Batch.entries()` builds: imported after
    # the build to fuzz is in place, so that it is the one they are registered with (`import
    # sitescout` alone loads no submodule).
    import sitescout._parse  # noqa: F401

URL = compare.DOC_URL
PANIC = "internal error in the sitemap scanner"


def read(data: bytes, plan: list[int] | None, *, truncated: bool, drain: bool) -> compare.Record:
    s = CORE.Scanner(URL, 1)
    entries: list[Any] = []
    sitemaps: list[str] = []
    malformed: list[Any] = []

    def take() -> None:
        batch, sm, mf = s.take()
        entries.extend(batch.entries())
        sitemaps.extend(sm)
        malformed.extend(mf)

    for chunk in compare.chunks(data, plan if plan is not None else [len(data)] if data else []):
        s.feed(chunk)
        if drain:
            take()
    if truncated:
        s.note_truncated()
    s.close()
    take()
    errors = list(s.errors)
    for e in errors:
        if PANIC in e:
            raise AssertionError(f"the scanner panicked: {e}")
    return compare.Record(
        s.kind,
        tuple(compare.entry_tuple(e) for e in entries),
        tuple(sitemaps),
        tuple((m[0], m[1]) for m in malformed),
        tuple(s.notes),
        bool(errors),
    )


def test_one_input(raw: bytes) -> None:
    import atheris  # only the fuzzer's input decoding needs it: the tests replay `check`

    fdp = atheris.FuzzedDataProvider(raw)
    truncated = fdp.ConsumeBool()
    n_sizes = fdp.ConsumeIntInRange(0, 8)
    sizes = [fdp.ConsumeIntInRange(1, 512) for _ in range(n_sizes)]
    data = fdp.ConsumeBytes(fdp.remaining_bytes())
    plan: list[int] = []
    left, k = len(data), 0
    while left > 0 and sizes:
        size = min(left, sizes[k % len(sizes)])
        plan.append(size)
        left -= size
        k += 1
    check(data, plan, truncated=truncated)


def check(data: bytes, plan: list[int], *, truncated: bool) -> None:
    """Read `data` whole, in the chunks of `plan` (taking results between them) and a byte at a
    time (up to 4 KiB); any difference, escaping exception or recorded panic is a failure."""
    whole = read(data, None, truncated=truncated, drain=False)
    if plan:
        chunked = read(data, plan, truncated=truncated, drain=True)
        if chunked != whole:
            raise AssertionError(
                f"chunking changes the result ({plan[:20]}):\n" + "\n".join(whole.diff(chunked))
            )
    if len(data) <= 4096:
        trickled = read(data, [1] * len(data), truncated=truncated, drain=False)
        if trickled != whole:
            raise AssertionError(
                "1-byte feeds change the result:\n" + "\n".join(whole.diff(trickled))
            )


def main() -> None:
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

"""The native scanner against the reference parser on real-world files: every file in the
sdists of protego 0.7.0, trafilatura 2.3.1 and scrapy 2.19.0 (their test data holds sitemaps,
sitemap indexes, RSS and Atom feeds, URL lists and thousands of robots.txt files).

`make test` downloads the sdists once into `.venv/corpus/` (see the Makefile); the tarballs are
read as they are, nothing is unpacked. Names are not trusted: every file is sniffed (gzip and
bzip2 are inflated, tar and zip archives inside are opened), and both parsers read it. The
documents that sitemap tests keep in their Python source (scrapy's, trafilatura's) are read
out of it too.

A file the reference reads as a well-formed sitemap or feed must give identical results (kind,
entries with every field, children, malformed, notes, damaged or not), fed whole and in
chunks. A damaged one (a truncated gzip member, a cut feed) holds the core to the damaged-input
properties instead: the same result for every chunking, and every URL a `<loc>` of the file.
Without the tarballs the test is skipped, or fails when CI=1.
"""

from __future__ import annotations

import bz2
import io
import os
import random
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reference import compare as c

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(
        not c.core_available(), reason="sitescout._core.Scanner is not built (`make build`)"
    ),
]

CORPUS = Path(__file__).resolve().parents[1] / ".venv" / "corpus"
SDISTS = ("protego-0.7.0.tar.gz", "trafilatura-2.3.1.tar.gz", "scrapy-2.19.0.tar.gz")
SITEMAP_KINDS = {"urlset", "sitemapindex", "rss", "atom", "text"}
MAX_FILE = 1 << 24


def _inflate(data: bytes) -> tuple[bytes, bool]:
    """gzip/bzip2 bodies inflated as the fetch would (a cut stream gives what it held, marked
    truncated); anything else as it is."""
    if data[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = d.decompress(data, MAX_FILE)
        except zlib.error:
            return b"", True
        return out, not d.eof
    if data[:3] == b"BZh":
        try:
            return bz2.decompress(data), False
        except (OSError, ValueError):
            return b"", True
    return data, False


def _members(name: str, data: bytes) -> Iterator[tuple[str, bytes]]:
    """The file, or the files of an archive inside the sdist."""
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if not info.is_dir() and info.file_size <= MAX_FILE:
                    yield f"{name}!{info.filename}", z.read(info)
        return
    if len(data) > 262 and data[257:262] == b"ustar":
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in t:
                f = t.extractfile(m) if m.isfile() and m.size <= MAX_FILE else None
                if f is not None:
                    yield f"{name}!{m.name}", f.read()
        return
    yield name, data


def corpus_files() -> list[tuple[str, bytes, bool]]:
    missing = [s for s in SDISTS if not (CORPUS / s).is_file()]
    if missing:
        why = f"real-world corpus missing: {missing} in {CORPUS} (`make test` downloads it)"
        if os.environ.get("CI") == "1":
            pytest.fail(why)
        pytest.skip(why)
    out = []
    for sdist in SDISTS:
        with tarfile.open(CORPUS / sdist) as tar:
            for member in tar:
                if not member.isfile() or member.size > MAX_FILE:
                    continue
                f = tar.extractfile(member)
                assert f is not None
                content = f.read()
                for name, raw in _members(member.name, content):
                    data, truncated = _inflate(raw)
                    out.append((name, data, truncated))
                if member.name.endswith(".py") and b"sitemap" in content.lower():
                    # The sitemap tests keep their documents in the source.
                    text = content.decode("utf-8", "replace")
                    for k, doc in enumerate(c.documents_in_source(text)):
                        out.append((f"{member.name}#{k}", doc, False))
    return out


def test_corpus_core_matches_the_oracle() -> None:
    files = corpus_files()
    kinds: Counter[str] = Counter()
    failures: list[str] = []
    for i, (name, data, truncated) in enumerate(files):
        want = c.run_oracle(data, truncated=truncated)
        kinds[str(want.kind)] += 1
        rnd = random.Random(i)
        if not want.damaged:
            try:
                c.assert_same(data, rnd=rnd, truncated=truncated, label=name)
            except AssertionError as e:
                failures.append(str(e)[:3000])
            continue
        kinds["damaged " + str(want.kind)] += 1
        whole = c.run_core(data, truncated=truncated)
        plan = c.chunk_plan(rnd, len(data))
        chunked = c.run_core(data, plan=plan, truncated=truncated, drain=rnd)
        if chunked != whole:
            failures.append(
                f"{name}: chunking changes the result\n" + "\n".join(whole.diff(chunked))
            )
        if whole.kind in ("urlset", "sitemapindex"):
            invented = c.invented_urls(
                whole.urls + list(whole.sitemaps), data, c.DOC_URL, whole.kind
            )
            if invented:
                failures.append(f"{name}: URLs that are no <loc> of the file: {invented[:5]}")
    print(f"\ncorpus: {len(files)} files read, by the oracle's kind: {dict(kinds)}")
    assert sum(kinds[k] for k in SITEMAP_KINDS) >= 10, kinds  # the sitemaps and feeds are there
    assert not failures, f"{len(failures)} files differ:\n" + "\n\n".join(failures[:10])

"""Write the fuzz seed corpus (fuzz/corpus/): the parser tests' documents, generated documents
of every kind and damaged ones. Run from the repository root after the generators change:

    .venv/bin/python fuzz/make_corpus.py
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reference import compare  # noqa: E402

OUT = ROOT / "fuzz" / "corpus"
MAX_SEED = 1 << 16  # bigger documents make slow inputs, not better ones
# The harness reads a flag, a count of chunk sizes and the sizes before the document.
PREFIX = b"\x00\x03\x07\x00\x40\x00\x01\x00"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    docs = [d for d in compare.suite_documents() if len(d) <= MAX_SEED]
    rnd = random.Random(14)
    for gen in (
        compare.urlset_docs(),
        compare.index_docs(),
        compare.rss_docs(),
        compare.atom_docs(),
        compare.text_docs(),
        compare.other_docs(),
    ):
        docs += [gen(rnd).data for _ in range(15)]
    damaged = compare.damaged_docs()
    docs += [damaged(rnd).data for _ in range(40)]
    for doc in docs:
        name = hashlib.sha1(doc).hexdigest()[:16]
        (OUT / name).write_bytes(PREFIX + doc)
    print(f"{len(docs)} seeds in {OUT}")


if __name__ == "__main__":
    main()

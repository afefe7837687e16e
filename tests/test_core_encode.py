"""One encoder per format, the core's: every kind of entry a walk yields (sitemap rows, hreflang
alternates, link-crawl pages, llms.txt links, rows marked with merged `sources`) encodes to the
bytes the Python writers gave (`tests/reference/encode.py`, saved in `encoded.jsonl` / `.csv`)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout._core import Batch
from sitescout._models import Alternate, Entry, Image, News, Video
from tests.reference import encode

HERE = Path(__file__).parent / "reference"
ODD = 'q"uo,te\\ new\nline\r\ttab \x01\x1f\x7f é ü 中文 🙂 \u2028'


def saved(name: str) -> str:
    """The saved bytes, `\r` inside values kept (no newline translation)."""
    return (HERE / name).read_bytes().decode("utf-8")


def varied() -> list[Entry]:
    """Entries of every kind and shape the walk makes, with awkward text in every field."""
    sm = "https://x.com/sitemaps/pages.xml"
    out = [
        Entry(url="https://x.com/", lastmod="2024-06-01", priority=1.0, sitemap=sm, depth=2),
        Entry(url="https://x.com/a", lastmod="2024-06-01T09:00:00+00:00", priority=0.8,
              changefreq="daily", sitemap=sm, depth=2,
              alternates=(Alternate("de", "https://x.com/de/a"),)),
        Entry(url="https://x.com/b?x=1,2", priority=1e-05, changefreq="weekly", sitemap=sm),
        Entry(url="https://x.com/c", priority=0.1 + 0.2, changefreq="never", sitemap=ODD),
        Entry(url="https://x.com/d", priority=0.0, lastmod=ODD, sitemap="", depth=0),
        Entry(url="https://x.com/e", priority=1.5e-7, lastmod="", sitemap=sm, depth=123456),
        Entry(url='https://x.com/"q"', priority=1e16, sitemap='s,"q"', depth=10,
              images=(Image("https://x.com/i.png", "t", None),), videos=(Video(title="v"),),
              news=News(title="n", language="en")),
        # alternates
        Entry(url="https://x.com/de/a", sitemap=sm, depth=2, hreflang="de",
              alternate_of="https://x.com/a"),
        Entry(url="https://x.com/fr/a", sitemap=sm, depth=2, hreflang=ODD,
              alternate_of='https://x.com/"a",b'),
        Entry(url="https://x.com/x-default", sitemap=sm, hreflang="x-default",
              alternate_of="https://x.com/a", sources=("sitemap",)),
        Entry(url="https://x.com/es/a", sitemap=sm, hreflang="es", alternate_of="https://x.com/a",
              sources=("sitemap", "llms.txt"), md_url="https://x.com/es/a.md", title="Es"),
        # link-crawl pages
        Entry(url="https://x.com/p", depth=0, source="bfs", title="Home"),
        Entry(url="https://x.com/q", depth=3, source="bfs", title=None,
              canonical="https://x.com/q2"),
        Entry(url="https://x.com/r", depth=1, source="bfs", title=ODD),
        Entry(url="https://x.com/s", depth=1, source="bfs", title="", sources=("bfs",)),
        Entry(url="https://x.com/t", depth=2, source="bfs", title="T, \"t\"",
              sources=("bfs", "llms.txt"), md_url="https://x.com/t.md"),
        # llms.txt links
        Entry(url="https://x.com/docs/", sitemap="https://x.com/llms.txt", source="llms.txt",
              title="Docs — guide", md_url="https://x.com/docs/index.md"),
        Entry(url="https://x.com/docs/api", sitemap="https://x.com/llms.txt", depth=2,
              source="llms.txt", title=ODD, md_url=None),
        Entry(url="https://x.com/docs/z", sitemap="https://x.com/llms-full.txt",
              source="llms.txt", title=None, md_url='https://x.com/"z".md',
              sources=("llms.txt",)),
        # sitemap rows marked by llms.txt (`--source all`): the title shows in CSV, not JSON
        Entry(url="https://x.com/m", lastmod="2024-01-01", priority=0.5, sitemap=sm,
              sources=("sitemap", "llms.txt"), md_url="https://x.com/m.md", title=ODD),
        Entry(url="https://x.com/n", sitemap=sm, sources=("sitemap",)),
        Entry(url="https://x.com/o", sitemap=sm, md_url="https://x.com/o.md"),
        Entry(url="https://x.com/o2", sitemap=sm, title="only in csv"),
    ]  # fmt: skip
    return out


def test_saved_bytes_are_the_python_writers() -> None:
    entries = varied()
    assert encode.to_jsonl(entries) == saved("encoded.jsonl")
    assert encode.to_csv(entries) == saved("encoded.csv")


def test_core_gives_the_saved_bytes() -> None:
    batch = Batch.from_entries(varied())
    assert batch.to_jsonl() == saved("encoded.jsonl")
    assert batch.to_csv() == saved("encoded.csv")
    assert batch.to_txt() == encode.to_txt(varied())


def test_entries_round_trip() -> None:
    entries = varied()
    assert Batch.from_entries(entries).entries() == entries


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    source = draw(st.sampled_from(["sitemap", "bfs", "llms.txt"]))
    alternate = draw(st.none() | st.tuples(TEXT, TEXT))
    hreflang, alternate_of = alternate if alternate else (None, None)
    sources = draw(st.sampled_from([(), (source,), (source, "llms.txt"), ("llms.txt",)]))
    return Entry(
        url=draw(TEXT),
        lastmod=draw(st.none() | TEXT),
        priority=draw(st.none() | st.floats(allow_nan=False) | st.floats(0, 1)),
        changefreq=draw(st.none() | st.sampled_from(["daily", "weekly", "always", 'we"ird\\'])),
        sitemap=draw(TEXT),
        depth=draw(st.integers(0, 2**31 - 1)),
        hreflang=hreflang,
        alternate_of=alternate_of,
        source=source,
        title=draw(st.none() | TEXT),
        md_url=draw(st.none() | TEXT),
        sources=tuple(dict.fromkeys(sources)),
        canonical=draw(st.none() | TEXT),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(entries(), max_size=5))
def test_core_encodes_any_entry_as_python_did(items: list[Entry]) -> None:
    batch = Batch.from_entries(items)
    assert batch.to_jsonl() == encode.to_jsonl(items)
    assert batch.to_csv() == encode.to_csv(items)
    assert batch.entries() == items
    # What the command line writes: the same text, as UTF-8 bytes.
    assert batch.encode("jsonl") == encode.to_jsonl(items).encode("utf-8")
    assert batch.encode("csv") == encode.to_csv(items).encode("utf-8")
    assert batch.encode("txt") == encode.to_txt(items).encode("utf-8")


def test_encode_knows_three_formats() -> None:
    with pytest.raises(ValueError, match='unknown format "parquet"'):
        Batch.from_entries(varied()).encode("parquet")


def test_extras_are_their_classes_own_objects() -> None:
    """The core builds alternates, images, videos and news through their slots, not their
    frozen `__init__`: each must be what the class itself makes, frozen and hashable alike."""
    alternates = (Alternate("de", "https://x.com/de/a"), Alternate(ODD, ODD))
    images = (Image("https://x.com/i.png"), Image("https://x.com/j.png", ODD, "c"))
    videos = (
        Video(),
        Video("https://x.com/v.mp4", "https://x.com/p", "https://x.com/t.jpg", ODD, "d"),
    )
    news = (News(), News("n", "2024-01-01", "en", ODD))
    entries = [
        Entry(url="https://x.com/a", alternates=alternates, images=images, videos=videos),
        Entry(url="https://x.com/b", news=news[0]),
        Entry(url="https://x.com/c", news=news[1]),
    ]
    a, b, c = Batch.from_entries(entries).entries()
    got = [*a.alternates, *a.images, *a.videos, b.news, c.news]
    want = [*alternates, *images, *videos, *news]
    assert got == want
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w)
        assert (hash(g), repr(g)) == (hash(w), repr(w))
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(g, dataclasses.fields(w)[0].name, "changed")


def test_extras_of_another_shape_are_built_by_their_class(tmp_path: Path) -> None:
    """Classes registered with fields other than the core expects, or with a `__post_init__`,
    are called as they are: the shortcut through the slots never skips what a class does."""
    script = textwrap.dedent(
        """
        import dataclasses
        from sitescout._core import Batch, register_models

        calls = []

        @dataclasses.dataclass(frozen=True, slots=True)
        class Alternate:
            hreflang: str
            url: str

            def __post_init__(self):
                calls.append(self.url)

        @dataclasses.dataclass(frozen=True, slots=True)
        class Image:  # fields in another order
            title: str | None
            loc: str
            caption: str | None

        import sitescout._models as m
        register_models(m.Entry, Alternate, Image, m.Video, m.News)
        entry = m.Entry(
            url="https://x.com/a",
            alternates=(m.Alternate("de", "https://x.com/de/a"),),
            images=(m.Image("https://x.com/i.png", "t", "c"),),
        )
        (back,) = Batch.from_entries([entry]).entries()
        assert calls == ["https://x.com/de/a"], calls
        assert back.alternates == (Alternate("de", "https://x.com/de/a"),)
        image = back.images[0]
        assert (image.title, image.loc, image.caption) == ("https://x.com/i.png", "t", "c")
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"

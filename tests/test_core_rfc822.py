"""RSS `pubDate` values read by the core (`_core.normalize_rfc822`, rust/src/scan/rfc822.rs)
against what the Python parser did: `email.utils.parsedate_to_datetime(value).isoformat()`,
else the W3C forms of `normalize_lastmod`, else the stripped value; None when blank.

The oracle below is that function as `sitescout._parse` had it, with one deliberate change:
OverflowError (a year or an offset too large for a C integer) falls back like ValueError does;
the Python version let it escape, and with it the whole feed failed (see
`test_overflow_falls_back_where_python_raised`).

`SITESCOUT_DIFF_EXAMPLES` scales the number of generated cases.
"""

from __future__ import annotations

import os
import re
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout import _core
from sitescout._parse import normalize_rfc822, parse_document

from .reference.parse import normalize_lastmod as ref_normalize_lastmod

EXAMPLES = int(os.environ.get("SITESCOUT_DIFF_EXAMPLES", "3000"))
PROPERTY = settings(
    max_examples=max(100, EXAMPLES // 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
RUST_SRC = Path(__file__).resolve().parent.parent / "rust" / "src"


def python_rfc822(raw: str) -> str | None:
    """`sitescout._parse.normalize_rfc822` before the core read RSS dates (OverflowError aside)."""
    value = raw.strip()
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):
        return ref_normalize_lastmod(value)


def assert_same(raw: str) -> None:
    assert _core.normalize_rfc822(raw) == python_rfc822(raw), repr(raw)


# --------------------------------------------------------------------------- real-world forms

REAL_WORLD = [
    "Tue, 10 Jun 2003 04:00:00 GMT",
    "Tue, 10 Jun 2003 04:00:00 +0200",
    "Tue, 10 Jun 2003 04:00:00 -0500",
    "Wed, 02 Oct 2002 08:00:00 EST",
    "Wed, 02 Oct 2002 08:00:00 EDT",
    "Wed, 02 Oct 2002 08:00:00 CST",
    "Wed, 02 Oct 2002 08:00:00 CDT",
    "Wed, 02 Oct 2002 08:00:00 MST",
    "Wed, 02 Oct 2002 08:00:00 MDT",
    "Wed, 02 Oct 2002 08:00:00 PST",
    "Wed, 02 Oct 2002 08:00:00 PDT",
    "Wed, 02 Oct 2002 08:00:00 AST",
    "Wed, 02 Oct 2002 08:00:00 ADT",
    "Wed, 02 Oct 2002 08:00:00 UT",
    "Wed, 02 Oct 2002 08:00:00 UTC",
    "Wed, 02 Oct 2002 08:00:00 Z",
    "Wed, 02 Oct 2002 08:00:00 z",
    "Wed, 02 Oct 2002 08:00:00 gmt",
    "Wed, 02 Oct 2002 08:00:00 est",
    *(f"Wed, 02 Oct 2002 08:00:00 {letter}" for letter in "ABCDEFGHIKLMNOPQRSTUVWXYZ"),
    "02 Oct 2002 08:00:00 GMT",  # no weekday
    "Wed, 02 Oct 02 08:00:00 GMT",  # two-digit years
    "Wed, 02 Oct 68 08:00:00 GMT",
    "Wed, 02 Oct 69 08:00:00 GMT",
    "Wed, 02 Oct 99 08:00:00 GMT",
    "Wed, 02 Oct 100 08:00:00 GMT",
    "Wed, 02 Oct 2002 08:00 GMT",  # no seconds
    "Wed, 02 Oct 2002 8:0 GMT",
    "  Wed,  02   Oct\t2002\n08:00:00   GMT  ",  # extra whitespace
    "Wed,02 Oct 2002 08:00:00 GMT",  # no space after the comma
    "wed, 02 oct 2002 08:00:00 gmt",  # lowercase names
    "WED, 02 OCT 2002 08:00:00 GMT",
    "Wednesday, 02 October 2002 08:00:00 GMT",
    "Wed, 02 October 2002 08:00:00 GMT",
    "Wed, 2 Oct 2002 08:00:00 GMT",
    "Wed, 02 Oct 2002 08:00:00 -0000",  # naive: no offset
    "Wed, 02 Oct 2002 08:00:00 +0000",
    "Wed, 02 Oct 2002 08:00:00 +00:00",  # colon: not a number, so no offset
    "Wed, 02 Oct 2002 08:00:00 +05:30",
    "Wed, 02 Oct 2002 08:00:00 +0530",
    "Wed, 02 Oct 2002 08:00:00 +0099",
    "Wed, 02 Oct 2002 08:00:00 +2359",
    "Wed, 02 Oct 2002 08:00:00 +2400",
    "Wed, 02 Oct 2002 08:00:00 -2400",
    "Wed, 02 Oct 2002 08:00:00 +05",
    "Wed, 02 Oct 2002 08:00:00 CEST",  # unknown names: naive
    "Wed, 02 Oct 2002 08:00:00 BST",
    "Wed, 02 Oct 2002 08:00:00 GMT+1",
    "Wed, 02 Oct 2002 08:00:00+0200",
    "Wed, 02 Oct 2002 08:00:00 GMT (comment)",
    "Wed, 02 Oct 2002 08.00.00 GMT",
    "Wed, 02 Oct 2002 08.00 GMT",
    "Oct 02 2002 08:00:00 GMT",
    "Wed Oct 02 08:00:00 2002",  # asctime
    "Wed Oct 02 08:00:00 GMT 2002",
    "02-Oct-02 08:00:00 GMT",  # RFC 850
    "Wednesday, 02-Oct-02 08:00:00 GMT",
    "2002-10-02T08:00:00Z",  # W3C forms: normalize_lastmod
    "2002-10-02T08:00Z",
    "2002-10-02 08:00:00 +0100",
    "2002-10-02",
    "Wed, 31 Feb 2002 08:00:00 GMT",  # out of range
    "Wed, 29 Feb 2000 08:00:00 GMT",
    "Wed, 29 Feb 1900 08:00:00 GMT",
    "Wed, 02 Oct 2002 24:00:00 GMT",
    "Wed, 02 Oct 2002 23:60:00 GMT",
    "Wed, 02 Oct 2002 23:59:60 GMT",
    "Wed, 00 Oct 2002 08:00:00 GMT",
    "Wed, 02 Oct 0 08:00:00 GMT",
    "Wed, 02 Oct 10000 08:00:00 GMT",
    "Wed, 02 Foo 2002 08:00:00 GMT",  # garbage
    "yesterday",
    "Wed,",
    "Wed, 02",
    ",,,,",
    "- - - - -",
    "1 jan 1 1:1 -0",
    "1 jan 1 1:1 +",
    "1 jan 1 1:1 -",
    "1 jan 2000 1:1 -00_00",
    "",  # empty
    " ",
    "\u3000\n",
]


@pytest.mark.parametrize("raw", REAL_WORLD)
def test_real_world_forms(raw: str) -> None:
    assert_same(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00+00:00"),
        ("Tue, 10 Jun 2003 04:00:00 -0500", "2003-06-10T04:00:00-05:00"),
        ("Tue, 10 Jun 2003 04:00:00 PDT", "2003-06-10T04:00:00-07:00"),
        ("Tue, 10 Jun 2003 04:00:00 -0000", "2003-06-10T04:00:00"),
        ("Tue, 10 Jun 2003 04:00:00 CEST", "2003-06-10T04:00:00"),
        ("Tue, 10 Jun 03 04:00 +0099", "2003-06-10T04:00:00+01:39"),
        ("2003-06-10T04:00Z", "2003-06-10T04:00:00+00:00"),
        ("  soon ", "soon"),
        (" ", None),
    ],
)
def test_known_answers(raw: str, expected: str | None) -> None:
    """Fixed answers, so that a core and an oracle wrong the same way still fail."""
    assert _core.normalize_rfc822(raw) == expected
    assert normalize_rfc822 is _core.normalize_rfc822  # one rule, one place


# --------------------------------------------------------------------------- deliberate difference

OVERFLOWS = [
    "Tue, 10 Jun 99999999999 04:00:00 GMT",
    "Tue, 10 Jun 2003 04:00:00 +99999999999999",
    "Tue, 10 Jun 2003 99999999999:00:00 GMT",
    "Tue, 99999999999 Jun 2003 04:00:00 GMT",
]


@pytest.mark.parametrize("raw", OVERFLOWS)
def test_overflow_falls_back_where_python_raised(raw: str) -> None:
    with pytest.raises(OverflowError):
        parsedate_to_datetime(raw.strip()).isoformat()
    assert _core.normalize_rfc822(raw) == raw.strip()


def test_feed_with_an_overflowing_date_is_read() -> None:
    """The Python callback raised OverflowError out of `Scanner.take()`: the feed failed."""
    feed = (
        "<rss><channel>"
        "<item><link>http://a.com/1</link><pubDate>Tue, 10 Jun 99999999999 04:00 GMT</pubDate>"
        "</item><item><link>http://a.com/2</link><pubDate>Tue, 10 Jun 2003 04:00 EST</pubDate>"
        "</item><item><link>http://a.com/3</link><pubDate> </pubDate></item>"
        "<item><link>http://a.com/4</link><pubDate>Tue, 10 Jun 03 04:00 GMT</pubDate>"
        "<pubDate>later</pubDate></item>"
        "</channel></rss>"
    )
    entries = parse_document(feed.encode(), "http://a.com/feed").take()[0]
    assert [(e.url, e.lastmod) for e in entries] == [
        ("http://a.com/1", "Tue, 10 Jun 99999999999 04:00 GMT"),
        ("http://a.com/2", "2003-06-10T04:00:00-05:00"),
        ("http://a.com/3", None),
        ("http://a.com/4", "later"),
    ]


# --------------------------------------------------------------------------- the scanner


@given(st.lists(st.sampled_from(REAL_WORLD), min_size=1, max_size=6))
@PROPERTY
def test_scanner_reads_every_pubdate_as_the_oracle(dates: list[str]) -> None:
    items = "".join(
        f"<item><link>http://a.com/{i}</link><pubDate>{escape(d)}</pubDate></item>"
        for i, d in enumerate(dates)
    )
    doc = f"<rss><channel>{items}</channel></rss>".encode()
    entries = parse_document(doc, "http://a.com/feed").take()[0]
    expected = [python_rfc822(d) if d else None for d in dates]
    assert [e.lastmod for e in entries] == expected


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


def test_the_glue_imports_no_module_of_the_package() -> None:
    """The RSS callback was the last `py.import("sitescout…")` of the Rust glue."""
    found = [
        f"{path.relative_to(RUST_SRC)}: {line.strip()}"
        for path in sorted(RUST_SRC.rglob("*.rs"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"""\bimport\w*\(\s*"sitescout""", line)
    ]
    assert not found


# --------------------------------------------------------------------------- lone surrogates


@pytest.mark.parametrize(
    "raw",
    [
        "Tue, 10 Jun 2003 04:00:00 \ud800",
        "\udcff, 10 Jun 2003 04:00:00 GMT",
        "10 Jun 2003 04:00 GMT \udc80",
    ],
)
def test_a_surrogate_in_a_date_reads_as_python_did(raw: str) -> None:
    assert _core.normalize_rfc822(raw) == python_rfc822(raw)


def test_a_surrogate_in_a_non_date_fails_as_normalize_lastmod_does() -> None:
    with pytest.raises(UnicodeEncodeError):
        _core.normalize_lastmod("soon \ud800")
    with pytest.raises(UnicodeEncodeError):
        _core.normalize_rfc822("soon \ud800")


# --------------------------------------------------------------------------- generated values

WEEKDAYS = ["Mon", "tue", "WED", "Thu,", "Fri ,", "sat,", "Sunday,", "Monday", "xyz,", "Kon", ""]
DAYS = ["1", "01", "10", "31", "32", "0", "00", "-1", "+5", "1_0", "\u0661\u0662", "\u00b2", "a"]
MONTHS = [
    "Jan", "jan", "JAN", "Feb", "May", "may,", "Sep", "Sept", "December", "DECEMBER", "Dec.",
    "Juni", "\u212aan", "foo", "",
]  # fmt: skip
YEARS = [
    "2003", "03", "3", "68", "69", "99", "100", "999", "1900", "2000", "0", "-5", "-1995", "9999",
    "10000", "2003,", ",", "\u0662\u0660\u0660\u0663", "\u00b2003", "2_003", "99999999999",
]  # fmt: skip
TIMES = [
    "04:00:00", "4:0", "04:00", "23:59:59", "24:00", "00:60", "00:00:60", "4.5", "4.5.6",
    "4.5.6.7", "4:5:6:7", "04:00:00,", ":00", "04:", "4", "1_0:00", "\u0661:\u0662", "-0:-0:-0",
]  # fmt: skip
ZONES = [
    "GMT", "gmt", "UT", "UTC", "Z", "z", "EST", "edt", "CST", "CDT", "MST", "MDT", "PST", "pdt",
    "AST", "ADT", "A", "M", "N", "Y", "J", "CEST", "+0000", "-0000", "-0", "+0", "0", "+0200",
    "-0500", "+0530", "+05:30", "+0099", "+2359", "+2400", "-2400", "+99999999999999", "+",
    "-", "+-1", "--0100", "+1_00", "+\u0662\u0660\u0660", "E\u017ft", "e\ufb06", "E\u00dfT",
    "\u0131", "GMT+1", "(GMT)", "",
]  # fmt: skip
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u3000", "\x1c", "\xa0", ",", ", ", " , "]


@st.composite
def dates(draw: st.DrawFn) -> str:
    parts = [
        draw(st.sampled_from(WEEKDAYS)),
        draw(st.sampled_from(DAYS)),
        draw(st.sampled_from(MONTHS)),
        draw(st.sampled_from(YEARS)),
        draw(st.sampled_from(TIMES)),
        draw(st.sampled_from(ZONES)),
    ]
    if draw(st.booleans()):  # day and month, year and time, trade places
        i = draw(st.integers(0, len(parts) - 2))
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    if draw(st.integers(0, 4)) == 0:  # RFC 850: day-month-year
        parts[1:4] = ["-".join(parts[1:4])]
    if draw(st.integers(0, 4)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(["x", "(c)", "1"])))
    if draw(st.integers(0, 4)) == 0:
        del parts[draw(st.integers(0, len(parts) - 1))]
    out = draw(st.sampled_from(["", " ", "\n "]))
    for part in parts:
        out += part + draw(st.sampled_from(SPACES))
    return out


@given(dates())
@PROPERTY
def test_generated_dates(raw: str) -> None:
    assert_same(raw)


DATE_ALPHABET = st.sampled_from(
    [
        *"0123456789 ,:.+-_JjAaNnMmYyGgTtEeSsZzUuDdPpCcOoFfBbRrVvWwHh",
        *("\t", "\n", "\u3000", "\xa0", "\u0662", "\u00b2", "\u017f", "\ufb06", "\u212a"),
    ]
)


@given(st.text(DATE_ALPHABET, max_size=40))
@PROPERTY
def test_date_like_text(raw: str) -> None:
    assert_same(raw)


@given(st.text(max_size=40))
@PROPERTY
def test_any_text(raw: str) -> None:
    assert_same(raw)

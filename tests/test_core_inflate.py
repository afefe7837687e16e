"""The core's inflater (`sitescout._core.Inflater`, behind `_http.decode._Inflate`) against the
Python layer it replaced (tests/reference/inflate.py, on the interpreter's zlib): the same bytes
out, the same end seen, the same bodies refused, for whole, damaged and random bodies fed in
random network-sized pieces under a random room. `SITESCOUT_DIFF_EXAMPLES` scales the run as in
tests/test_core_scan.py."""

from __future__ import annotations

import gzip
import os
import random
import zlib
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout._http.decode import _STEP, _Inflate
from tests.reference.compare import chunk_plan, chunks
from tests.reference.inflate import Inflate as ReferenceInflate

EXAMPLES = max(50, int(os.environ.get("SITESCOUT_DIFF_EXAMPLES", "5000")) // 10)
EXAMPLE_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck)
)
WBITS = {"gzip": 31, "zlib": 15, "raw": -15}


@dataclass(frozen=True)
class Outcome:
    out: bytes
    refused: bool
    ended: bool
    full: bool = False  # stopped at its room: the rest of the body was never read


def run(layer: _Inflate | ReferenceInflate, body: bytes, plan: list[int], room: int) -> Outcome:
    """Feed `body` as the decoder does: piece by piece while room is left and nothing is cut."""
    out: list[bytes] = []
    try:
        for piece in chunks(body, plan):
            for chunk in layer.decode(piece, room):
                room -= len(chunk)
                out.append(chunk)
            if layer.cut or room <= 0:
                break
    except zlib.error:
        return Outcome(b"".join(out), True, layer.ended)
    # Cut at the room, the rest of the body is never read: whether it ended says nothing.
    return Outcome(b"".join(out), False, layer.ended and room > 0, full=room <= 0)


def compress(kind: str, data: bytes, level: int) -> bytes:
    if kind == "gzip":
        return gzip.compress(data, level)
    c = zlib.compressobj(level, wbits=15 if kind == "zlib" else -15)
    return c.compress(data) + c.flush()


TEXT = st.one_of(
    st.binary(max_size=3000),
    st.builds(
        lambda n, seed: b"".join(
            b"<url><loc>https://x.com/p%d</loc></url>" % random.Random(seed).randrange(n + 1)
            for _ in range(n)
        ),
        st.integers(0, 2000),
        st.integers(0, 2**32),
    ),
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    """(the layer's kind, a body): well-formed, in several members, damaged, or any bytes."""
    kind = draw(st.sampled_from(sorted(WBITS)))
    form = draw(st.sampled_from(["whole", "members", "cut", "flipped", "trailing", "any"]))
    if form == "any":
        return kind, draw(st.binary(max_size=4000))
    level = draw(st.integers(0, 9))
    data = draw(TEXT)
    body = compress(kind, data, level)
    if form == "members":
        pad = b"\0" * draw(st.integers(0, 5))
        body = body + pad + compress(kind, data[: len(data) // 3], level)
    elif form == "cut":
        body = body[: draw(st.integers(0, max(0, len(body) - 1)))]
    elif form == "flipped" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([body[at] ^ (1 << draw(st.integers(0, 7)))]) + body[at + 1 :]
    elif form == "trailing":
        body += draw(st.binary(min_size=1, max_size=20))
    return kind, body


@EXAMPLE_SETTINGS
@given(bodies(), st.integers(0, 2**32), st.sampled_from([1 << 30, 1, 100, 5000, 300_000]))
def test_the_core_inflates_as_the_python_layer_did(
    body: tuple[str, bytes], seed: int, room: int
) -> None:
    kind, data = body
    wbits = WBITS[kind]
    rnd = random.Random(seed)
    whole = [len(data)] if data else []
    want = run(ReferenceInflate(wbits), data, whole, room)
    got_whole = run(_Inflate(wbits), data, whole, room)
    got = run(_Inflate(wbits), data, chunk_plan(rnd, len(data)), room)
    assert got_whole.refused == want.refused, (got_whole, want)
    if got.full and want.refused:
        # In pieces, the room filled before the bytes that are refused were read.
        assert want.out.startswith(got.out) or got.out.startswith(want.out)
        return
    assert got.refused == want.refused, "chunking changed whether the body was refused"
    if want.refused:
        # Bytes before the refusal may differ in amount (each gives what it had decoded when
        # it failed), never in content.
        for outcome in (got_whole, got):
            shorter, longer = sorted((outcome.out, want.out), key=len)
            assert longer.startswith(shorter)
        return
    assert got_whole == want
    assert got == want, "chunking changed what the inflater gave"


@pytest.mark.parametrize("kind", sorted(WBITS))
def test_a_bomb_gives_only_its_room_per_call_and_holds_one_read(kind: str) -> None:
    """A read of zeros that inflates to 200 MiB: each pull gives at most one step and the layer
    stops at its room with the rest of the read held, not inflated."""
    bomb = compress(kind, b"\0" * (200 << 20), 9)
    layer = _Inflate(WBITS[kind])
    sizes = [len(chunk) for chunk in layer.decode(bomb, 3 << 20)]
    assert sum(sizes) == 3 << 20 and max(sizes) <= _STEP and layer.cut


def test_a_raw_deflate_body_sent_as_deflate_is_read_even_a_byte_at_a_time() -> None:
    """The zlib-or-raw decision is made on the body's first bytes, however they are split (the
    Python layer decided on its first 2 KiB slice only)."""
    data = b"<urlset>" + b"<url><loc>https://x.com/a</loc></url>" * 300 + b"</urlset>"
    body = compress("raw", data, 6)
    layer = _Inflate(15)
    got = b"".join(b"".join(layer.decode(body[i : i + 1], 1 << 20)) for i in range(len(body)))
    assert got == data and layer.ended

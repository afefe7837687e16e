"""The gzip/deflate layer as it was in Python, on the interpreter's zlib, before the core's
`Inflater` replaced it: the oracle of tests/test_core_inflate.py. Frozen; do not fix here."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

_STEP = 256 * 1024
_FEED = 2 * 1024  # compressed input per step: a member's end copies at most this much


class Inflate:
    """zlib-family decoder with bounded output per call (gzip members, zlib or raw deflate)."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._d = zlib.decompressobj(wbits)
        self._raw_fallback = wbits == 15
        self.cut = False  # the last `decode` stopped at its room with input left
        self._inside = False  # a member has begun and its end marker is not seen yet
        self._members = 0  # members ended so far: zero bytes may pad what follows them

    @property
    def ended(self) -> bool:
        return not self._inside

    def decode(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decode `data` as it is consumed, producing at most `room` bytes; `cut` says, once
        it is exhausted, whether output was cut short."""
        self.cut = False
        pos = 0
        pending = b""
        while room > 0:
            if not pending:
                if pos >= len(data):
                    break
                # Fed in slices: zlib copies the input left after each member's end, which on
                # a body of many tiny members would otherwise cost the whole rest each time.
                pending = data[pos : pos + _FEED]
                pos += len(pending)
            if self._members and not self._inside:
                pending = pending.lstrip(b"\x00")  # padding after a member
                if not pending:
                    continue
            try:
                chunk = self._d.decompress(pending, min(room, _STEP))
            except zlib.error:
                if not self._raw_fallback:
                    raise
                # "deflate" is zlib-wrapped by the RFC, raw in practice on some servers.
                self._raw_fallback = False
                self._d = zlib.decompressobj(-15)
                continue
            self._raw_fallback = False
            self._inside = True
            room -= len(chunk)
            if self._d.eof:
                pending = self._d.unused_data
                self._d = zlib.decompressobj(self._wbits)
                self._inside = False
                self._members += 1
            else:
                pending = self._d.unconsumed_tail
            if chunk:
                yield chunk
        self.cut = bool(pending) or pos < len(data)

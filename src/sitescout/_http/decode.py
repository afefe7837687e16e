"""Response bodies decoded as their bytes arrive, under one decoded-size cap.

`Content-Encoding` (gzip, deflate, and br when the `brotli` package is installed) and gzip by
magic bytes are decoded here, not by httpx, so that the decoded-size cap (default 50 MiB) also
stops gzip bombs, and a compressed body cut before its end marker is told apart from a whole one
(`Decoder.ended`). gzip and deflate are inflated by the native core (`Inflater`), which holds
one network read of input (and up to 64 KiB more while a "deflate" body may still turn out to
be raw deflate) and gives at most the room it is asked for. Decoded bytes go to a `Sink`.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from .._core import Inflater

try:  # optional: only advertised when it can be decoded
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

# The Accept-Encoding of every request: what `Decoder` can read.
ACCEPT_ENCODING = "gzip, deflate, br" if _brotli is not None else "gzip, deflate"

_GZIP_MAGIC = b"\x1f\x8b"
# Decoded bytes per step: a bomb is cut in these, and the rows a document holds in flight grow
# with them. Each step is a turn of the walk's Python per document: 32 KiB steps took 0.94x the
# CPU of 16 KiB ones on the 1M-URL walk at the same peak; 64 KiB saved about 1 % more for
# 1.5 MiB more peak, 128 KiB nothing more for 7 MiB.
_STEP = 32 * 1024


class Sink(Protocol):
    """Receives decoded bytes as they arrive.

    `drain` runs after each network read: the walker awaits there to hand entries downstream
    (backpressure), and returning False stops reading the body early (a sniff has seen enough).
    """

    def feed(self, data: bytes) -> None: ...

    async def drain(self) -> bool: ...


@runtime_checkable
class RawTap(Protocol):
    """A sink that also keeps the body's bytes as they came, before decoding (a walk's state
    stores them to replay the document when the server says it did not change)."""

    def raw(self, data: bytes) -> None: ...


class _Inflate:
    """zlib-family decoder with bounded output per call (gzip members, zlib or raw deflate),
    inflated by the native core with the interpreter's lock released."""

    def __init__(self, wbits: int) -> None:
        self._core = Inflater(wbits)
        self.cut = False  # the last `decode` stopped at its room with input left

    @property
    def ended(self) -> bool:
        """No member is begun and unfinished."""
        return self._core.ended

    def decode(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decode `data` as it is consumed, producing at most `room` bytes; `cut` says, once
        it is exhausted, whether output was cut short."""
        self.cut = False
        core = self._core
        core.push(data)
        while room > 0:
            try:
                chunk = core.pull(min(room, _STEP))
            except ValueError as exc:  # the core's word for a corrupt stream
                raise zlib.error(str(exc)) from None
            if not chunk:
                break
            room -= len(chunk)
            yield chunk
        self.cut = core.cut


class _Brotli:
    def __init__(self) -> None:
        assert _brotli is not None
        self._d = _brotli.Decompressor()
        self.cut = False

    @property
    def ended(self) -> bool:
        return bool(self._d.is_finished())

    def decode(self, data: bytes, room: int) -> Iterator[bytes]:
        out = self._d.process(data)
        self.cut = len(out) > room
        yield out[:room]


def undecodable(content_encoding: str) -> str | None:
    """Why a body in this `Content-Encoding` cannot be read, or None when it can."""
    for enc in (e.strip().lower() for e in content_encoding.split(",")):
        if enc == "br" and _brotli is None:
            return "the body is br-compressed; install the 'brotli' package to read it"
        if enc == "zstd":
            return (
                "the body is zstd-compressed, which sitescout cannot decode (it never asks for it)"
            )
    return None


class Decoder:
    """Content-Encoding, then gzip by magic bytes (even on `.xml` URLs), under one size cap."""

    def __init__(self, content_encoding: str, cap: int) -> None:
        self.cap = cap
        self.bytes = 0
        self.truncated = False
        self._layers: list[_Inflate | _Brotli] = []
        for enc in reversed([e.strip().lower() for e in content_encoding.split(",")]):
            if enc in ("gzip", "x-gzip"):
                self._layers.append(_Inflate(31))
            elif enc == "deflate":
                self._layers.append(_Inflate(15))
            elif enc == "br" and _brotli is not None:
                self._layers.append(_Brotli())
        self._sniffed = False
        self._head = b""

    def decode(self, data: bytes) -> Iterator[bytes]:
        """`data` decoded, in pieces of at most 256 KiB made as they are consumed: a gzip bomb
        is never held whole, only the piece being handed on."""
        chunks: Iterator[bytes] = iter((data,))
        for layer in self._layers:
            chunks = self._through(layer, chunks)
        if not self._sniffed:
            for chunk in chunks:
                self._head += chunk
                if len(self._head) >= 2:
                    break
            else:
                return  # fewer than two bytes so far: the magic is still unknown
            head, self._head, self._sniffed = self._head, b"", True
            chunks = itertools.chain((head,), chunks)
            if head.startswith(_GZIP_MAGIC):
                self._layers.append(_Inflate(31))
                chunks = self._through(self._layers[-1], chunks)
        yield from self._limit(chunks)

    def flush(self) -> Iterator[bytes]:
        head, self._head = self._head, b""
        self._sniffed = True
        if head:
            yield from self._limit(iter((head,)))

    def ended(self) -> bool:
        """Whether every compressed layer reached its end marker (a cut stream has not)."""
        return all(layer.ended for layer in self._layers)

    def _through(self, layer: _Inflate | _Brotli, chunks: Iterator[bytes]) -> Iterator[bytes]:
        room = self.cap - self.bytes + 1  # one byte more than allowed reveals the cut
        for chunk in chunks:
            for decoded in layer.decode(chunk, room):
                room -= len(decoded)
                yield decoded
            if layer.cut or room <= 0:
                break

    def _limit(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            room = self.cap - self.bytes
            if len(chunk) > room:
                chunk = chunk[:room]
                self.truncated = True
            if chunk:
                self.bytes += len(chunk)
                yield chunk
            if self.truncated:
                break

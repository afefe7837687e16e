"""Reading a document's body into its sink: from the network or from disk, one path for both.

Every body is decoded as it streams (`decode.Decoder`) under the decoded-size cap, so a gzip
bomb is cut like any oversized document, and a compressed body cut before its end marker is an
error, not a short document. A local document (`file://`, a `--map` prefix) takes the same
decoder and the same sink as one read over HTTP, so the walk has one path for every document.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import zlib
from collections.abc import AsyncIterator

import httpx

from .._errors import HTTPError, NetworkError
from .._local import LocalFiles, LocalMissing, LocalRefused, open_target, read_chunks
from .decode import Decoder, RawTap, Sink, undecodable
from .failure import describe
from .response import Response, SinkFactory
from .retry import check_status

# Decoded bytes a sink is given before it must parse them: what one document in flight holds of
# its decoded body, however much a compressed read inflates to.
DRAIN_EVERY = 1 << 20


async def read_body(
    response: httpx.Response,
    result: Response,
    sink_factory: SinkFactory,
    cap: int,
    *,
    conditional: bool = False,
) -> None:
    """Read the answer that ended the redirects: its status, content type and validators into
    `result`, then its body into the sink `sink_factory` returns. Raises for an error status.

    `conditional`: the request asked `If-None-Match` / `If-Modified-Since`, so a 304 means
    the stored copy holds (`result.not_modified`); without one, a 304 answers nothing asked."""
    status = response.status_code
    result.status = status
    headers = response.headers
    result.content_type = headers.get("content-type", "")
    result.etag = headers.get("etag") or None
    result.last_modified = headers.get("last-modified") or None
    check_status(status, result.final_url, headers.get("retry-after"))
    result.error = None
    if status == 304:
        if not conditional:
            msg = "HTTP 304 Not Modified to a request that asked nothing conditionally"
            raise HTTPError(msg, url=result.final_url, status=304)
        result.not_modified = True
        return
    encoding = result.content_encoding = headers.get("content-encoding", "")
    why = undecodable(encoding)
    if why is not None:
        raise NetworkError(why, url=result.final_url)
    sink = sink_factory(result)
    if sink is None:
        return
    try:
        await decode_into(response.aiter_raw(), result, sink, encoding, cap)
    except httpx.TransportError as exc:
        # Bytes already parsed stay parsed; no retry, which would only repeat them.
        msg = f"{describe(exc)} after {result.bytes} bytes"
        raise NetworkError(msg, url=result.final_url) from exc


async def decode_into(
    raw: AsyncIterator[bytes], result: Response, sink: Sink, encoding: str, cap: int
) -> None:
    """Decode `raw` into `sink` under the size cap `cap`: the one path every body takes, from
    the network or from disk."""
    decoder = Decoder(encoding, cap)
    tap = sink.raw if isinstance(sink, RawTap) else None
    whole = True  # the body was read to its end, so its compressed layers must have ended
    try:
        async for piece in raw:
            if tap is not None:
                tap(piece)
            held = 0
            for chunk in decoder.decode(piece):
                sink.feed(chunk)
                held += len(chunk)
                if held >= DRAIN_EVERY:
                    # A small read may inflate to megabytes: parsed as they come, not held.
                    held = 0
                    result.bytes = decoder.bytes
                    if not await sink.drain():
                        whole = False
                        break
                    await asyncio.sleep(0)  # Ctrl-C, timeouts and the other documents
            result.bytes = decoder.bytes
            if not whole or decoder.truncated or not await sink.drain():
                whole = False
                break
        for chunk in decoder.flush():
            sink.feed(chunk)
    except zlib.error as exc:
        raise NetworkError(f"corrupt compressed body: {exc}", url=result.final_url) from exc
    finally:
        result.bytes = decoder.bytes
        result.truncated = decoder.truncated
    if whole and not decoder.ended():
        msg = f"compressed body ended before its end marker, after {decoder.bytes} bytes"
        raise NetworkError(msg, url=result.final_url)


async def read_local(
    local: LocalFiles | None,
    offline: bool,
    result: Response,
    sink_factory: SinkFactory,
    cap: int,
) -> bool:
    """Serve `result.url` from disk when it names a file (`file://`, a `--map` prefix);
    whether it did. Offline, an http(s) URL that names no file is refused unrequested."""
    url = result.url
    try:
        target = local.target(url) if local is not None else None
    except LocalRefused as exc:
        raise NetworkError(f"refused: {exc}", url=url) from None
    if target is None:
        if offline:
            raise NetworkError("not fetched (offline)", url=url)
        return False
    result.final_url = url
    result.redirects = []
    result.unreachable = None
    try:
        fd = open_target(target)
    except LocalMissing as exc:
        result.status = 404  # a missing file answers like a missing page
        raise HTTPError(f"HTTP 404: {exc}", url=url, status=404) from None
    except LocalRefused as exc:
        raise NetworkError(str(exc), url=url) from None
    result.status = 200
    result.error = None
    try:
        sink = sink_factory(result)
        if sink is None:
            return True
        async with contextlib.aclosing(read_chunks(fd, target.path)) as chunks:
            await decode_into(chunks, result, sink, "", cap)
    except LocalRefused as exc:
        raise NetworkError(f"{exc} after {result.bytes} bytes", url=url) from None
    finally:
        os.close(fd)
    return True

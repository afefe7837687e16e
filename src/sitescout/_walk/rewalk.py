"""One sitemap document against the state of the last walk (`--state DIR`).

`Rewalk` is the walk's side of its `WalkState`: `visit(url)` starts one document's dealings with
it (`Visit`). A stored child whose index gives it the lastmod it had is replayed without a
request when the user trusts lastmods; otherwise the document is asked for with the stored
validators, and a 304 replays the stored body through the decoder and parser a download takes,
so the walk gives what a fresh one would. A body downloaded is recorded as it streams, and kept
for the next walk once the document was read whole. A stored body that is missing or damaged
costs one plain request. The counts of what the state saved go into its `RewalkSummary`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Protocol, TypeVar

from .._errors import FetchError, NetworkError
from .._http import Fetcher, Response, Sink, decode_into
from .._local import LocalRefused, read_chunks
from .._models import WalkReport
from .._state import BodyRecorder, StoredDocument, WalkState
from .._urls import document_key
from .options import WalkOptions

__all__ = ["Recording", "Rewalk", "Visit"]


class Recording(Sink, Protocol):
    """A document's sink, which keeps the body's bytes as they came when given a recorder."""

    recorder: BodyRecorder | None


SinkT = TypeVar("SinkT", bound=Recording)


class Rewalk:
    """A walk's documents with a state directory: what the last walk stored, and what this
    one keeps."""

    def __init__(self, options: WalkOptions, report: WalkReport, state: WalkState) -> None:
        self.options = options
        self.report = report
        self.state = state
        # The lastmod each queued child's index gave it, by document key.
        self._listed: dict[str, str | None] = {}

    def visit(self, url: str) -> Visit:
        key = document_key(url)
        return Visit(self, url, self.state.stored(url), self._listed.get(key))

    def children_queued(self, index: str, lastmods: dict[str, str], queued: list[str]) -> None:
        """Remember the lastmod the index gave each child it queued; say so when every child
        the state knows has a new one: many sites stamp each entry with the time the index
        is served, which tells nothing."""
        for child in queued:
            self._listed[document_key(child)] = lastmods.get(child)
        known = moved = 0
        for child in lastmods:
            stored = self.state.stored(child)
            if stored is None or stored.listed_lastmod is None:
                continue
            known += 1
            moved += lastmods[child] != stored.listed_lastmod
        if known >= 2 and moved == known:
            message = (
                f"{index}: every child sitemap's lastmod moved since the last walk ({known});"
                " the index may stamp them with the time it is served"
            )
            if self.options.trust_lastmod:
                self.report.warn(message + ", so --trust-lastmod saves nothing there")
            else:
                self.report.notes.append(message)


class Visit:
    """One document's dealings with the state: how it is fetched, and what is kept of it."""

    def __init__(
        self, rewalk: Rewalk, url: str, stored: StoredDocument | None, listed: str | None
    ) -> None:
        self.rewalk = rewalk
        self.url = url
        self.stored = stored  # what the last walk kept of it
        self.listed = listed  # the lastmod its index gives it now
        self.replayed = False  # its body came from the state, not the network
        self._recorders: list[BodyRecorder] = []

    def record(self, sink: Recording, resp: Response) -> None:
        """Give a downloaded body's sink a recorder (each attempt gets its own)."""
        if not resp.not_modified:
            sink.recorder = self.rewalk.state.recorder(self.url)
            self._recorders.append(sink.recorder)

    async def fetch(
        self, fetcher: Fetcher, sink_for: Callable[[Response], SinkT], limit: float
    ) -> tuple[Response, SinkT | None]:
        """Fetch the document as the state allows, its body into a sink either way."""
        state, stored = self.rewalk.state, self.stored
        if (
            stored is not None
            and self.rewalk.options.trust_lastmod
            and self.listed is not None
            and self.listed == stored.listed_lastmod
        ):
            resp = Response(url=self.url, final_url=stored.final_url, not_modified=True)
            sink = await self._replay(fetcher, resp, stored, sink_for)
            if sink is not None:
                state.summary.trusted += 1
                return resp, sink
        conditional = stored.conditional if stored is not None else None
        resp, got = await fetcher.fetch_into(
            self.url, sink_for, time_limit=limit, conditional=conditional
        )
        if not resp.not_modified:
            return resp, got
        assert stored is not None
        got = await self._replay(fetcher, resp, stored, sink_for)
        if got is None:  # the stored copy is gone or damaged: asked once more, plainly
            state.summary.refetched += 1
            return await fetcher.fetch_into(self.url, sink_for, time_limit=limit)
        state.summary.not_modified += 1
        return resp, got

    async def _replay(
        self,
        fetcher: Fetcher,
        resp: Response,
        stored: StoredDocument,
        sink_for: Callable[[Response], SinkT],
    ) -> SinkT | None:
        """The stored body read into a new sink, through the decoder a download takes; None
        when it is missing or does not match what was stored."""
        fd = await self.rewalk.state.open_body(stored)
        if fd is None:
            return None
        self.replayed = True
        try:
            resp.final_url, resp.content_type = stored.final_url, stored.content_type
            sink = sink_for(resp)
            cap = fetcher.config.max_document_bytes
            async with contextlib.aclosing(read_chunks(fd, stored.file)) as body:
                await decode_into(body, resp, sink, stored.encoding, cap)
        except FetchError as exc:
            resp.error = exc
        except LocalRefused as exc:  # a read error of the stored file
            resp.error = NetworkError(f"stored copy: {exc}", url=resp.url)
        finally:
            os.close(fd)
        return sink

    def settle(self, resp: Response, whole: bool) -> None:
        """Keep what this document's answer was in the new state (when it was read `whole`),
        and count what it cost."""
        state = self.rewalk.state
        summary = state.summary
        stored = self.stored
        if self.replayed:  # no attempt after a replay: nothing was recorded
            assert stored is not None
            summary.total += stored.size
            if whole:
                state.carry(stored, resp, self.listed)
            return
        if not self._recorders:
            return
        *earlier, last = self._recorders
        for recorder in earlier:  # bodies of attempts that were retried
            recorder.discard()
        summary.downloaded += last.size
        summary.total += last.size
        kept = last.keep(self.url, resp, self.listed) if whole else None
        if kept is None:
            last.discard()
        if kept is not None and stored is not None and kept.sha256 == stored.sha256:
            summary.same_body += 1
        else:
            summary.fetched += 1

"""Where a walk's page URLs come from, and in what order (§2, §7, §10): the source plan, no I/O.

`Walk` asks the plan for a step, takes it, and feeds back what happened, in the style of
`DiscoveryPlan` (which decides, inside the `WalkSitemaps` step, which sitemaps are tried):

* source "llms": llms.txt alone;
* "all": llms.txt first, its links held so that a sitemap row can say llms.txt lists it too;
  then the sitemaps; then the held links no sitemap listed;
* "auto" and "sitemap": the sitemaps;
* when discovery found no sitemap and no budget is reached: llms.txt ("auto" only), then the link
  crawl (not for "all" when llms.txt gave links; neither offline); `crawl` crawls instead of
  walking the sitemaps found; a site that cannot be connected to gets neither;
* then, unless llms.txt is the only source: when a base path applies and no page URL of the
  sitemaps was under it, the sitemap under that path (§7), before the held llms.txt links go.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

__all__ = [
    "CloseSitemaps",
    "Crawl",
    "Finished",
    "LlmsRead",
    "ProbeUnderPrefix",
    "Progress",
    "ReadLlms",
    "SitemapsWalked",
    "SourcePlan",
    "SourceStep",
    "WalkSitemaps",
]

# -- steps ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReadLlms:
    """Read llms.txt and feed an `LlmsRead`. `hold`: keep its links for the sitemap walk to mark
    (source "all"); otherwise its pages go out now. `alone`: it is the walk's only source, so
    the walk says why it gave nothing."""

    hold: bool = False
    alone: bool = False


@dataclass(frozen=True, slots=True)
class WalkSitemaps:
    """Discover the site's sitemaps (§2), walk every one tried whole, and feed `SitemapsWalked`."""


@dataclass(frozen=True, slots=True)
class Crawl:
    """Find pages by following links from the site URL (§10), and feed `Progress`."""


@dataclass(frozen=True, slots=True)
class CloseSitemaps:
    """The sitemaps, and what stood in for them, are walked: held llms.txt links are marked no
    more, and `pass_held` hands on those no sitemap listed. Feed `Progress`."""

    pass_held: bool = False


@dataclass(frozen=True, slots=True)
class ProbeUnderPrefix:
    """Try the sitemap under the base path: documentation portals often keep their own. Feed
    `Progress`."""


@dataclass(frozen=True, slots=True)
class Finished:
    """Nothing more to read."""


SourceStep = ReadLlms | WalkSitemaps | Crawl | CloseSitemaps | ProbeUnderPrefix | Finished

# -- answers --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Progress:
    """Where the walk stands after a step."""

    urls_full: bool = False  # the URL budget cut rows: nothing more can be kept
    budget_hit: bool = False  # a budget (the URL budget too) is reached
    prefix_unmatched: bool = False  # a base path applies, and no sitemap page URL was under it


@dataclass(frozen=True, slots=True)
class LlmsRead:
    """What a `ReadLlms` step gave."""

    found: bool  # an llms.txt was read
    links: int  # its page links under the base path
    progress: Progress = Progress()


@dataclass(frozen=True, slots=True)
class SitemapsWalked:
    """What a `WalkSitemaps` step gave."""

    source: str  # where discovery found the sitemaps (`Discovery.source`); "none": nowhere
    sitemaps: int = 0  # how many it found
    cannot_connect: bool = False  # the first request reached no server
    progress: Progress = Progress()


SourceAnswer = LlmsRead | SitemapsWalked | Progress


class SourcePlan:
    """The sources of one walk as steps: `start()` gives the first, `feed(answer)` the next, until
    `Finished`; `new_notes()` hands out the notes added since the last call."""

    def __init__(self, source: str = "auto", *, crawl: bool = False, offline: bool = False) -> None:
        self.source = source  # one of `SOURCES`
        self.crawl = crawl
        self.offline = offline
        self._notes: list[str] = []
        self._noted = 0
        self._steps = self._chain()

    def start(self) -> SourceStep:
        return self._advance(None)

    def feed(self, answer: SourceAnswer) -> SourceStep:
        return self._advance(answer)

    def new_notes(self) -> list[str]:
        notes = self._notes[self._noted :]
        self._noted = len(self._notes)
        return notes

    def _advance(self, answer: SourceAnswer | None) -> SourceStep:
        try:
            return self._steps.send(answer)
        except StopIteration:
            return Finished()

    def _chain(self) -> Generator[SourceStep, SourceAnswer | None, None]:
        if self.source == "llms":
            read = yield ReadLlms(alone=True)
            assert isinstance(read, LlmsRead)
            if not read.found:
                self._notes.append("no usable llms.txt found")
            return
        held = 0
        if self.source == "all":
            read = yield ReadLlms(hold=True)
            assert isinstance(read, LlmsRead)
            held = read.links
        walked = yield WalkSitemaps()
        assert isinstance(walked, SitemapsWalked)
        progress = walked.progress
        if not walked.cannot_connect:
            # The first request reached no server: every other would fail alike, so neither
            # llms.txt nor the link crawl is tried.
            progress = yield from self._instead(walked, fallback=not held)
        if progress.prefix_unmatched and not progress.urls_full:
            # Before the held llms.txt links go: the sitemap under the path is a sitemap too,
            # so its rows say llms.txt lists them, and the links it lists are not passed alone.
            yield ProbeUnderPrefix()
        yield CloseSitemaps(pass_held=held > 0)

    def _instead(
        self, walked: SitemapsWalked, *, fallback: bool
    ) -> Generator[SourceStep, SourceAnswer | None, Progress]:
        """The crawl asked for, or what stands in for sitemaps that were not found; where the
        walk stands after it."""
        if self.crawl:
            if walked.sitemaps:
                self._notes.append(
                    f"--crawl: {walked.sitemaps} sitemaps from {walked.source} not walked"
                )
            return (yield from self._crawl())
        progress = walked.progress
        if walked.source != "none" or not fallback or progress.urls_full or progress.budget_hit:
            return progress
        if self.offline:
            self._notes.append("offline: no llms.txt, no link crawl")
            return progress
        if self.source == "auto":
            read = yield ReadLlms()
            assert isinstance(read, LlmsRead)
            if read.links:
                return read.progress
            progress = read.progress
        if not progress.urls_full and not progress.budget_hit:
            return (yield from self._crawl())
        return progress

    def _crawl(self) -> Generator[SourceStep, SourceAnswer | None, Progress]:
        progress = yield Crawl()
        assert isinstance(progress, Progress)
        return progress

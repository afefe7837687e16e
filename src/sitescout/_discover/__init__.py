"""The discovery chain (§2): user sitemap → robots.txt → well-known paths → (crawl fallback).

The chain is written once, as `DiscoveryPlan`: an object with no I/O that names the next step
(`FetchRobots`, `TrySitemaps`) and is fed what that step's fetch learned (`RobotsAnswer`,
`Tried`) until it is `Done`. Its callers differ on purpose, and each difference is a field of
`Rules` (one preset per caller below); the callers only fetch and feed:

- the walker (`_walk`) walks every tried URL as a whole document (`WALK`);
- `discover_sitemaps` sniffs the first kilobytes of a well-known path (`probe`, `SNIFF`);
- the scope estimate reads the top document it would read anyway (`SCOPE`);
- the link crawl only needs robots.txt's rules (`read_robots`, `CRAWL`).

When the walk's first request cannot connect at all (`Rules.stop_when_no_connection`), the plan
ends there and `DiscoveryPlan.cannot_connect` says so in one line; the walker then tries nothing
else (no llms.txt, no link crawl): every other request would meet the same closed door.

The rooms, each importing only those above it:

    plan.py    the chain with no I/O: `Rules` and its presets, the steps and answers,
               `DiscoveryPlan`, and the words its outcomes are told in
    fetch.py   the fetches the plan's callers share: robots.txt, a sniffed well-known path
    llms.py    `LlmsReader`: a site's llms.txt and its aggregates, through the walk's `Fetcher`

This face hands on the names the rest of sitescout imports.
"""

from .fetch import (
    ROBOTS_MAX_BYTES,
    ROBOTS_TIMEOUT,
    fetch_robots,
    probe,
    read_robots,
    robots_time_limit,
    why,
)
from .llms import MAX_OMITTED_KEPT, LlmsGate, LlmsObserver, LlmsReader
from .plan import (
    BLOCKING_STATUSES,
    CRAWL,
    NO_SITEMAP_FOUND,
    SCOPE,
    SNIFF,
    WALK,
    WALK_CRAWL,
    WELL_KNOWN,
    Answer,
    Discovery,
    DiscoveryPlan,
    Done,
    FetchRobots,
    RobotsAnswer,
    Rules,
    Step,
    Tried,
    TrySitemaps,
    cannot_connect_message,
    llms_shortfall,
    llms_txt_unread,
    names_a_document,
    spelling_notes,
)

__all__ = [
    "BLOCKING_STATUSES",
    "CRAWL",
    "MAX_OMITTED_KEPT",
    "NO_SITEMAP_FOUND",
    "ROBOTS_MAX_BYTES",
    "ROBOTS_TIMEOUT",
    "SCOPE",
    "SNIFF",
    "WALK",
    "WALK_CRAWL",
    "WELL_KNOWN",
    "Answer",
    "Discovery",
    "DiscoveryPlan",
    "Done",
    "FetchRobots",
    "LlmsGate",
    "LlmsObserver",
    "LlmsReader",
    "RobotsAnswer",
    "Rules",
    "Step",
    "Tried",
    "TrySitemaps",
    "cannot_connect_message",
    "fetch_robots",
    "llms_shortfall",
    "llms_txt_unread",
    "names_a_document",
    "probe",
    "read_robots",
    "robots_time_limit",
    "spelling_notes",
    "why",
]

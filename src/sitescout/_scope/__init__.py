"""The pre-flight scope estimate (§9): what a walk of this site would cost, in a second or two.

`estimate_scope(url)` runs discovery (§2) and reads **only the first top document**: a `urlset`
(or RSS, Atom, text list) is counted exactly, `[n, n]`; a `sitemapindex` with `c` children gives
`[c × 1,000, c × 50,000]` without fetching any child. Languages come from the URL paths it saw
and from hreflang values; the expected walk time is `c / 8 × 1.5 s` (8 documents in flight,
about 1.5 s each) within `[½×, 1½×]`, never under 5 s; the transport says whether plain HTTP
works (`fetch`), the site pushes back with 403/429 or a bot-challenge page (`browser`), the top
document was read from disk (`local`), or discovery itself failed (`unknown`).

A sitemap you already have is estimated the same way (`_local`): `url` may be a `file://` URL or a
path (stdin is `file:///dev/stdin`), read as the top document with no discovery, no robots.txt
and no llms.txt; `sitemap` may be one too, for a site given by URL; `maps` reads the documents
under a URL prefix from a folder; `offline` makes no request at all. Relative children of an
index on disk resolve in its folder, as in the walk. The expected duration counts only the
child sitemaps a walk would fetch over the network: one read from disk costs next to nothing,
and offline nothing is fetched (the 5 s floor stays).

With `sample=N` the top index's children are also sampled: N of them, chosen at random, are
read in full and the range is re-derived from their real sizes (and a note says so). Off by
default, so the estimate stays at one or two requests.

It never raises for what the network or the site does: every failure becomes a note.

The rooms, each importing only those above it:

    rules.py      no I/O: `ScopeEstimate`, the §9 formulas, bot-challenge pages, the languages
                  seen (`LanguageTally`), and the notes' words
    documents.py  one document fetched or read from disk, counted as it streams
    estimate.py   the §9 steps in order, and `estimate_scope` / `estimate_scope_async`

This face hands on the names the rest of sitescout imports.
"""

from .estimate import SCOPE_FETCH, estimate_scope, estimate_scope_async
from .rules import (
    LanguageTally,
    ScopeEstimate,
    Transport,
    expected_duration,
    looks_like_challenge,
    refine_range,
    url_range,
)

__all__ = [
    "SCOPE_FETCH",
    "LanguageTally",
    "ScopeEstimate",
    "Transport",
    "estimate_scope",
    "estimate_scope_async",
    "expected_duration",
    "looks_like_challenge",
    "refine_range",
    "url_range",
]

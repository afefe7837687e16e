"""The extraction run (§12): walk with the sampler preset, choose pages (§11), fetch, record.

Two phases so that a front end can show the selection and ask before anything is fetched:
`plan_extract` walks, filters and selects; `run_extract` fetches the kept pages and writes the
project directory. The walk is bounded by the sampler preset (§5), so the candidate list held
here is bounded too (10,000 URLs); `--all` lifts the preset and then holds what the site has.

The walk's filters (`--since`, `--include`, ... as `WalkOptions` has them) narrow the pool the
sampler chooses from, inside the walk, so the preset's budgets count only pages that can be
chosen. Pages the user names are theirs: with `--pages` or `--single` the filters are not
applied (none of them can hide a named page, and the output says so), and `--refresh SLUG`
re-extracts its page whatever the filters keep.

Each room has one job, and imports only rooms listed above it:

    options.py  `ExtractOptions`: what the run was asked, checked once; the walk it asks for
    plan.py     `Plan`: what a run will do, and its notes (locale, filters, --refresh-all) and
                why there may be nothing to fetch
    gather.py   phase 1, `plan_extract`: walk, gather candidates, select, choose the fetches
                (already extracted, --refresh, --refresh-all)
    run.py      phase 2, `run_extract`: fetch the pages, write them and the crawl log's run

This face hands on the names the rest of sitescout imports.
"""

from .gather import plan_extract
from .options import ExtractOptions
from .plan import Plan
from .run import RunResult, run_extract

__all__ = ["ExtractOptions", "Plan", "RunResult", "plan_extract", "run_extract"]

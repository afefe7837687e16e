"""Many sites, and huge sites, on a Dask cluster (`sitescout batch`).

Every site of a list is one task running the ordinary walk and writing its own Parquet part
into a staging directory of its own; when the walk ends, the directory gets its completion
marker (written last) and is renamed into `DIR/urls/site=<key>/` in one step. A partition
without its marker therefore never exists, an interrupted or killed attempt leaves only a
staging directory nobody reads, and a re-run skips exactly the sites whose partition exists.

A site whose root sitemap index lists more than `fanout` children hands them to tasks of their
own (`hand_off` on the walk). Each leaf task writes a part plus the 64-bit keyed hash of every
row's URL; a last task removes the URLs an earlier part already holds, in passes over slices
of the hash space so that its memory stays bounded however large the site, then promotes the
partition as above.

Politeness holds cluster-wide because the driver keeps one lane per host: one site task per
host at a time, and a fanned-out site's leaves at most `min(concurrency, per_host)` at once,
each walking with one document in flight. A site whose robots.txt sets a Crawl-delay is never
fanned out: the delay, not the parse, bounds it, and its one task paces its own requests.

Nothing else in the package imports Dask; it is an optional extra (`sitescout[dask]`).

The package's rooms, each with one job; imports run one way (sites and results import no
other room; parts imports them, tasks imports parts, driver all), and this face hands on the
names the rest of sitescout imports:

    sites.py    the site list (`read_sites`), partition keys and names, a URL's host
    results.py  `SiteResult` (a row of sites.parquet, a partition's marker) and `write_sites`
    parts.py    a site's partition on disk: `SiteJob`, part files, cross-part de-duplication,
                the marker and the rename that complete it
    tasks.py    what runs on a worker: `walk_site`, `walk_leaf`, `finish_site`
    driver.py   `BatchRun` (the cluster, the lanes per host) and `batch`
"""

from .driver import (
    CLOSE_TIMEOUT,
    INSTALL,
    SAVE_EVERY,
    THREADS_PER_WORKER,
    BatchRun,
    Progress,
    batch,
)
from .parts import (
    MARKER,
    PART_ROWS,
    PASS_HASHES,
    Part,
    Parts,
    SiteJob,
    complete_result,
    duplicate_rows,
)
from .results import SiteResult, write_sites
from .sites import (
    MAX_KEY,
    MAX_LINE,
    MAX_SITES,
    SiteLine,
    host_of,
    partition_name,
    read_sites,
    site_key,
)
from .tasks import LeafJob, LeafOutcome, SiteOutcome, finish_site, walk_leaf, walk_site

__all__ = [
    "CLOSE_TIMEOUT",
    "INSTALL",
    "MARKER",
    "MAX_KEY",
    "MAX_LINE",
    "MAX_SITES",
    "PART_ROWS",
    "PASS_HASHES",
    "SAVE_EVERY",
    "THREADS_PER_WORKER",
    "BatchRun",
    "LeafJob",
    "LeafOutcome",
    "Part",
    "Parts",
    "Progress",
    "SiteJob",
    "SiteLine",
    "SiteOutcome",
    "SiteResult",
    "batch",
    "complete_result",
    "duplicate_rows",
    "finish_site",
    "host_of",
    "partition_name",
    "read_sites",
    "site_key",
    "walk_leaf",
    "walk_site",
    "write_sites",
]

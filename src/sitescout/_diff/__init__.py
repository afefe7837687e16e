"""What changed between two saved inventories: `diff(old, new)` and `diff_frame(old, new)`.

The inputs are inventories as `sitescout urls` writes them, in any of its formats (`_inventory`
reads them, skipping and counting bad rows). The answer is one `Change` per URL that differs:
`added` (only in the new inventory), `removed` (only in the old one) or `changed` (in both, with
another lastmod), in one order: sorted by URL (code-point order), whatever the inputs' order.

Rules:

- URLs are compared, and reported, in their normalized form (`normalize_url`, what a walk writes),
  so a hand-edited inventory with `HTTPS://Example.com/a` still matches `https://example.com/a`.
- Two lastmods are the same when their texts are, or when both are dates naming the same instant
  (`2024-05-01T10:00:00Z` and `2024-05-01T12:00:00+02:00`; a bare date is midnight UTC). A lastmod
  that appears or disappears is a change. When either inventory has no lastmods at all (plain
  URLs, a CSV or Parquet file without the column), lastmods are not compared: only added and
  removed URLs come out (`Diff.lastmods_compared` says which).
- A URL listed twice in one inventory counts once, with the last row's lastmod; the duplicates
  are counted (`Diff.counts`), and logged as one warning per inventory.

Memory is bounded whatever the inputs' size (10M-URL inventories in well under 1 GiB): each
inventory is streamed once, and its rows are split by a hash of the URL into partitions, held in
memory while they are few (`spill_rows`) and written to temporary files once they are not. Each
partition, old and new rows together, then fits in a dictionary (`partition_rows`, one that came
out far larger is split again); its changes are sorted, and the sorted runs of all partitions
are merged into one stream, runs too going to disk when there are many changes. The temporary
files live in one `tempfile.TemporaryDirectory`, removed when the diff ends, fails, is closed or
is interrupted. Small inputs never touch the disk, and give the same answer as the partitioned
path (a property test forces partitions of a few rows).

The diff is synchronous: it reads local files and computes, with nothing to wait for that an
event loop could overlap, so unlike a walk it needs no async core and runs as well inside a
running event loop (a notebook) as outside one.
"""

from .changes import (
    ADDED,
    CHANGED,
    REMOVED,
    Change,
    ChangeGroups,
    ChangeKind,
    DiffCounts,
    GroupChanges,
    same_lastmod,
)
from .compare import Diff, change_batches, change_schema, diff, diff_frame

__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "Change",
    "ChangeGroups",
    "ChangeKind",
    "Diff",
    "DiffCounts",
    "GroupChanges",
    "change_batches",
    "change_schema",
    "diff",
    "diff_frame",
    "same_lastmod",
]

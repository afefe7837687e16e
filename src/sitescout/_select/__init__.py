"""Page selection for the sampler: §8 filtering, SCORING.md scores, the §11 checklist and cap.

Pure: no I/O. `select_pages` takes the walk's page URLs (normalized §6, scoped to the base path and
default locale §7) as `Candidate`s and returns a `Selection`; `Selection.to_dict` is the
`--json`/crawl-log form, and `questions` tells the caller when §11 wants the user asked (as data:
the CLI words the questions and prints the §11 block, `cli/_selection`). Memory is the sampler's
candidate list (≤ 10,000 URLs by its preset).

Each room has one job, and imports only rooms listed above it:

    inputs.py     what a selection is given: the `Candidate` pages and the `PagesWanted` scope
    score.py      SCORING.md applied: `score_path`, the `Scored` page, the rank order, and the
                  choices the table leaves open
    selection.py  the outcome: `Selection` (its `--json`/crawl-log form) and the §11 `questions`
    pick.py       `select_pages`: the pool (§8, junk, auth), then kept and cut by the scope

This face hands on the names the rest of sitescout imports.
"""

from .inputs import DEFAULT_CAP, Candidate, CapSource, Mode, PagesWanted
from .pick import select_pages
from .score import CHECKLIST_POINTS, RULES, Breakdown, Scored, score_path
from .selection import FewTemplates, LargeRun, Question, Selection, questions

__all__ = [
    "CHECKLIST_POINTS",
    "DEFAULT_CAP",
    "RULES",
    "Breakdown",
    "Candidate",
    "CapSource",
    "FewTemplates",
    "LargeRun",
    "Mode",
    "PagesWanted",
    "Question",
    "Scored",
    "Selection",
    "questions",
    "score_path",
    "select_pages",
]

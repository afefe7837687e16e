"""How `extract` words a selection: the §11 block on stdout and the questions it asks.

`_select` decides (a `Selection`, `Question`s as data); this module only writes text, so the
wording can change without touching the rules. Prompts carry no "(y/n)": `typer.confirm` adds
its own `[Y/n]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._junk import format_junk_notice
from .._pagetype import LABELS
from .._select import FewTemplates, LargeRun, Question, Selection
from .._text import plural
from .._urls import url_path


def render_selection(
    selection: Selection,
    *,
    site: str,
    source: str,
    notes: Sequence[str] = (),
    limit: int = 4,
) -> str:
    """The §11 informational block (no trailing newline). `source` is the discovery source
    (`sitemap.xml`, `robots.txt`, ...); `notes` go right after the first line (e.g. the default
    locale note of §12); `limit` is how many URLs the one-line lists show."""
    lines = [
        f"Discovered {plural(selection.discovered, 'page')} on {_site_label(site)} ({source})."
    ]
    lines += notes
    if selection.junk:
        lines.append(format_junk_notice(list(selection.junk), limit))
    if selection.requires_auth:
        auth = [_display(item.url) for item in selection.requires_auth]
        lines.append(f"Requires sign-in, not fetched ({len(auth)}): {_shown(auth, limit)}")
    if selection.unmatched:
        lines.append(
            f"Not among the discovered pages ({len(selection.unmatched)}): "
            + ", ".join(selection.unmatched)
        )
    lines.append(_heading(selection))
    lines += [f"  - {_display(item.url)} ({item.label})" for item in selection.kept]
    if selection.cut:
        cut = [_display(item.url) for item in selection.cut]
        what = plural(len(cut), "page")
        lines.append(f"Cut ({what}, --all to lift): {_shown(cut, limit)}")
    return "\n".join(lines)


def warning_text(question: Question) -> str:
    """What is always shown (on stderr) when §11 asks, on a terminal or not."""
    if isinstance(question, LargeRun):
        return (
            f"--all selects {question.pages} pages (more than {question.limit}), "
            f"about {_duration(question.seconds)} of fetching."
        )
    names = ", ".join(LABELS[kind] for kind in question.templates) or "none"
    return (
        f"Only {plural(len(question.templates), 'distinct page template')} discoverable "
        f"({names}); the selection may not show the range of the site's pages."
    )


def prompt_text(question: Question) -> str:
    """The yes/no question asked on a terminal."""
    if isinstance(question, FewTemplates):
        return "Continue with these pages?"
    return f"this will extract {question.pages} pages, ~{_duration(question.seconds)} — proceed?"


def _heading(selection: Selection) -> str:
    count = len(selection.kept)
    if count == 0:
        return "No pages to select."
    if selection.mode == "all":
        return f"Selecting all {plural(count, 'page')} (--all):"
    if selection.mode == "pages":
        return f"Selecting {plural(count, 'page')} named with --pages:"
    if selection.mode == "single":
        return f"Selecting {plural(count, 'page')} (--single):"
    return f"Selecting {plural(count, 'highest-priority page')}:"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return plural(max(1, round(seconds)), "second")
    return plural(round(seconds / 60), "minute")


def _shown(paths: Sequence[str], limit: int) -> str:
    shown = ", ".join(paths[: max(limit, 0)])
    return shown + ", ..." if len(paths) > limit else shown


def _display(url: str) -> str:
    """A page as the user reads it: the path, and the query when there is one."""
    query = url.partition("?")[2].partition("#")[0]
    path = url_path(url)
    return f"{path}?{query}" if query else path


def _site_label(site: str) -> str:
    """`https://example.com/` reads as `https://example.com`, as in §11's example."""
    value = site.strip()
    if "://" in value and url_path(value) == "/":
        return value.rstrip("/")
    return value

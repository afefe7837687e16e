"""The site report's page: a `ReportData` rendered as one self-contained HTML file.

Only the aggregated record goes in (`_report` builds it): summary, path treemap (SVG, drawn
with squarify), freshness bars, locales, sitemap tree, junk and sign-in lists, each table cut
to a fixed number of rows, so the page stays small however big the site is.

Every string that came from the site is escaped, and the page ships a Content-Security-Policy
that allows no network access at all and only the page's own script (by a fresh nonce).
"""

from __future__ import annotations

import html
import math
import secrets
from collections import Counter
from collections.abc import Sequence

import squarify  # type: ignore[import-untyped, unused-ignore]

from ._budget import budget_label
from ._groups import MIN_GROUP_SIZE, OTHER
from ._models import InventoryInfo, WalkReport
from ._report import LIST_LIMIT, TREEMAP_CHILDREN, ReportData

__all__ = ["render_report"]

MAX_SHOWN_URL = 300  # characters of one URL shown in the page; the rest is cut with …
TREEMAP_GROUPS = 40
MONTHS_SHOWN = 120
TABLE_ROWS = 50
DOCUMENTS_SHOWN = 300


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _short(url: str) -> str:
    return url if len(url) <= MAX_SHOWN_URL else url[:MAX_SHOWN_URL] + "…"


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"


def render_report(
    data: ReportData,
    *,
    title: str,
    walk: WalkReport | None = None,
    inventory: InventoryInfo | None = None,
    generated: str = "",
) -> str:
    """The whole HTML page. Strings from the site are escaped; nothing is loaded from anywhere."""
    nonce = secrets.token_urlsafe(16)
    sections = [
        _summary(data, walk, inventory),
        _treemap(data),
        _freshness(data),
        _locales(data),
        _sitemap_tree(data, walk),
        _lists(data, walk, inventory),
    ]
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>sitescout report: {_e(title)}</title>\n<style>{_CSS}</style></head>\n<body>\n"
        f'<h1>sitescout report: <span class="site">{_e(title)}</span></h1>\n'
        f'<p class="muted">{_e(generated)}</p>\n'
        + "\n".join(sections)
        + f'\n<script nonce="{nonce}">{_JS}</script>\n</body></html>\n'
    )


def _row(*cells: str, head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _grid(head: Sequence[str], body: str) -> str:
    return f'<table class="grid">{_row(*head, head=True)}{body}</table>'


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>{body}</details>"


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{title}</h2>{body}</section>'


def _urls_line(data: ReportData) -> str:
    pages, alternates = data.urls, data.alternates
    return f"{_n(pages + alternates)} ({_n(pages)} pages, {_n(alternates)} alternates)"


def _summary(data: ReportData, walk: WalkReport | None, inv: InventoryInfo | None) -> str:
    rows: list[tuple[str, str]] = []
    unknown = '<span class="muted">not recorded in an inventory</span>'
    if walk is not None:
        source = walk.source or "none"
        if walk.source_url:
            source += " " + walk.source_url
        rows += [
            ("source", _e(source)),
            ("documents", _n(len(walk.documents))),
            ("URLs", _urls_line(data)),
            ("duplicates", _n(walk.duplicates)),
            ("errors", _n(len(walk.errors))),
            ("malformed entries", _n(walk.malformed_count)),
            ("partial", _e("; ".join(walk.partial_reasons)) if walk.partial else "no"),
            ("budgets hit", _e(", ".join(walk.budgets_hit)) if walk.budgets_hit else "none"),
            ("walk time", f"{walk.elapsed:.2f} s"),
        ]
    else:
        where = f"{inv.format} inventory {inv.path}" if inv else "inventory"
        rows += [
            ("source", _e(where)),
            ("documents", f"{_n(len(data.sitemaps))} sitemaps named in the rows"),
            ("URLs", _urls_line(data)),
            ("errors", unknown),
            ("malformed entries", unknown),
            ("partial", unknown),
            ("budgets hit", unknown),
        ]
        if inv is not None:
            skipped = sum(inv.skipped.values())
            rows.append(("rows skipped", _n(skipped) if skipped else "none"))
            if inv.missing_columns:
                rows.append(("columns missing", _e(", ".join(inv.missing_columns))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    warnings = ""
    if walk is not None and walk.warnings:
        items = "".join(f"<li>{_e(w)}</li>" for w in walk.warnings[:TABLE_ROWS])
        warnings = f"<h3>Warnings</h3><ul>{items}</ul>"
    table = f'<table class="kv">{body}</table>'
    return f'<section id="summary"><h2>Summary</h2>{table}{warnings}</section>'


def _hue(index: int) -> int:
    return (index * 137) % 360


def _treemap(data: ReportData) -> str:
    table = data.groups
    total = sum(n for _, n in table)
    if not total:
        return '<section id="treemap"><h2>Path treemap</h2><p>No URLs.</p></section>'
    shown = [(k, n) for k, n in table if k != OTHER][:TREEMAP_GROUPS]
    rest = total - sum(n for _, n in shown)
    if rest:
        shown.append((OTHER, rest))
    width, height = 1000.0, 560.0
    ordered = sorted(shown, key=lambda kn: -kn[1])
    rects = squarify.squarify(
        squarify.normalize_sizes([n for _, n in ordered], width, height), 0.0, 0.0, width, height
    )
    cells: list[str] = []
    for index, ((group, count), rect) in enumerate(zip(ordered, rects, strict=True)):
        x, y, dx, dy = rect["x"], rect["y"], rect["dx"], rect["dy"]
        label = f"{group}: {_n(count)} URLs ({_pct(count, total)})"
        if group == OTHER:
            label = f"{OTHER} (smaller groups and non-http URLs): {label[len(OTHER) + 2 :]}"
        hue = _hue(index)
        parts = [
            f'<g class="cell" data-group="{_e(group)}" data-count="{count}"'
            f' data-x="{x:.1f}" data-y="{y:.1f}" data-w="{dx:.1f}" data-h="{dy:.1f}">'
            f"<title>{_e(label)}</title>"
            f'<rect class="area" x="{x:.1f}" y="{y:.1f}" width="{dx:.1f}" height="{dy:.1f}"'
            f' fill="hsl({hue},45%,78%)"/>'
        ]
        children = data.children.get(group, []) if group != OTHER else []
        header = 18.0
        if children and dx > 60 and dy > 50:
            inner = squarify.padded_squarify(
                squarify.normalize_sizes([n for _, n in children], dx - 4, dy - header - 2),
                x + 2,
                y + header,
                dx - 4,
                dy - header - 2,
            )
            for (child, n), r in zip(children, inner, strict=True):
                name = f"{group[:-1]}…" if child == OTHER else child
                sub_label = f"{name}: {_n(n)} URLs"
                if child == OTHER:
                    sub_label = f"other paths under {group}: {_n(n)} URLs"
                parts.append(
                    f'<rect class="sub" data-count="{n}" x="{r["x"]:.1f}" y="{r["y"]:.1f}"'
                    f' width="{r["dx"]:.1f}" height="{r["dy"]:.1f}"'
                    f' fill="hsl({hue},40%,66%)"><title>{_e(sub_label)}</title></rect>'
                )
                if r["dx"] > 48 and r["dy"] > 30:
                    tail = "…" if child == OTHER else (child[len(group) - 2 : -2] or "/")
                    chars = max(1, int(r["dx"] / 6.5))
                    tail = tail if len(tail) <= chars else tail[: chars - 1] + "…"
                    parts.append(
                        f'<text class="sub" x="{r["x"] + 3:.1f}" y="{r["y"] + 12:.1f}">'
                        f"{_e(tail)}</text>"
                    )
        if dx > 50 and dy > 16:
            chars = max(1, int(dx / 7.5))
            text = f"{group} {_n(count)}"
            if len(text) > chars:
                text = text[: chars - 1] + "…"
            parts.append(f'<text x="{x + 4:.1f}" y="{y + 13:.1f}">{_e(text)}</text>')
        parts.append("</g>")
        cells.append("".join(parts))
    legend = (
        f"{_n(total)} URLs in {_n(len(table))} groups (groups of fewer than {MIN_GROUP_SIZE} URLs"
        f" are in <em>other</em>); the {len(shown)} largest are drawn, each with up to"
        f" {TREEMAP_CHILDREN} second-level groups inside. Hover a cell for its exact count;"
        " click it to zoom, click again or press Escape to zoom out."
    )
    return (
        '<section id="treemap"><h2>Path treemap</h2>'
        f'<p class="muted">{legend}</p>'
        f'<svg id="treemap-svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img"'
        ' aria-label="URLs per path group">' + "".join(cells) + "</svg></section>"
    )


def _freshness(data: ReportData) -> str:
    entries = data.urls + data.alternates
    head = (
        f"<p>{_n(data.no_lastmod)} of {_n(entries)} URLs ({_pct(data.no_lastmod, entries)}) have no"
        f" lastmod; {_n(data.bad_lastmod)} have one that is not a date.</p>"
    )
    if not data.months:
        return f'<section id="freshness"><h2>Freshness (lastmod)</h2>{head}</section>'
    months = sorted(data.months.items())
    earlier = data.month_other + sum(n for _, n in months[:-MONTHS_SHOWN])
    months = months[-MONTHS_SHOWN:]
    bars = [("earlier", earlier)] if earlier else []
    bars += _fill_months(months)
    peak = max(n for _, n in bars) or 1
    width, height, gap = 1000.0, 220.0, 1.0
    step = width / len(bars)
    out: list[str] = []
    for i, (month, n) in enumerate(bars):
        h = (height - 30) * n / peak
        out.append(
            f'<rect class="month" data-month="{_e(month)}" data-count="{n}"'
            f' x="{i * step:.1f}" y="{height - 20 - h:.1f}" width="{max(step - gap, 0.5):.1f}"'
            f' height="{h:.1f}"><title>{_e(month)}: {_n(n)} URLs</title></rect>'
        )
    labels: list[str] = []
    every = max(1, math.ceil(len(bars) / 12))
    for i in range(0, len(bars), every):
        labels.append(f'<text x="{i * step:.1f}" y="{height - 5:.1f}">{_e(bars[i][0])}</text>')
    return (
        '<section id="freshness"><h2>Freshness (lastmod)</h2>'
        + head
        + f'<svg viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="URLs per month">'
        + "".join(out)
        + "".join(labels)
        + "</svg></section>"
    )


def _fill_months(months: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The months from the first to the last, empty ones included (so gaps show)."""
    counts = dict(months)
    year, month = int(months[0][0][:4]), int(months[0][0][5:7])
    last = months[-1][0]
    out: list[tuple[str, int]] = []
    for _ in range(MONTHS_SHOWN * 2):  # at most the shown span; a gap never adds more
        key = f"{year:04d}-{month:02d}"
        out.append((key, counts.get(key, 0)))
        if key >= last:
            break
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out[-MONTHS_SHOWN:]


def _locales(data: ReportData) -> str:
    if not data.locale_pages and not data.locale_rows:
        return _section("locales", "Locales (hreflang)", "<p>No hreflang alternates.</p>")
    pages = data.urls
    rows = [
        _row(
            "locale",
            "pages declaring it",
            "share of pages",
            "alternates listed as entries",
            head=True,
        )
    ]
    locales = data.locale_pages if data.declared_alternates else data.locale_rows
    for locale, _ in sorted(locales.items(), key=lambda kv: (-kv[1], kv[0]))[:TABLE_ROWS]:
        declared = data.locale_pages.get(locale)
        rows.append(
            _row(
                _e(locale),
                _n(declared) if declared is not None else "–",
                _pct(declared, pages) if declared is not None else "–",
                _n(data.locale_rows.get(locale, 0)),
            )
        )
    note = ""
    if not data.declared_alternates:
        note = (
            '<p class="muted">A saved inventory keeps an alternate only when its URL was new, and'
            " not the hreflang links of each page: the counts below are those alternates.</p>"
        )
    top_locales = [loc for loc, _ in sorted(locales.items(), key=lambda kv: -kv[1])[:8]]
    group_rows = [
        _row(
            "group",
            "URLs",
            "with hreflang" if data.declared_alternates else "alternates",
            *(_e(loc) for loc in top_locales),
            head=True,
        )
    ]
    for group, n in data.groups[:TABLE_ROWS]:
        with_h = data.group_hreflang.get(group, 0)
        share = f"{_n(with_h)} ({_pct(with_h, n)})" if data.declared_alternates else _n(with_h)
        group_rows.append(
            _row(
                _e(group),
                _n(n),
                share,
                *(_n(data.group_locales.get((group, loc), 0)) for loc in top_locales),
            )
        )
    return (
        '<section id="locales"><h2>Locales (hreflang)</h2>'
        + note
        + f'<table class="grid">{"".join(rows)}</table>'
        + "<h3>Per top-level group</h3>"
        + f'<table class="grid">{"".join(group_rows)}</table></section>'
    )


def _gz(url: str) -> str:
    return "yes" if url.lower().split("?", 1)[0].endswith(".gz") else ""


def _sitemap_tree(data: ReportData, walk: WalkReport | None) -> str:
    if walk is not None:
        docs = sorted(enumerate(walk.documents), key=lambda d: (d[1].depth, d[0]))
        rows = [
            _row("level", "sitemap", "kind", "URLs", "children", "bytes", ".gz", "error", head=True)
        ]
        for _, d in docs[:DOCUMENTS_SHOWN]:
            error = "" if d.error is None else f"{d.error_class or ''}: {d.error}"
            if d.stopped_by is not None:
                error = f"not read to its end: {budget_label(d.stopped_by)} reached"
            rows.append(
                _row(
                    str(d.depth),
                    f'<span class="url" style="padding-left:{(d.depth - 1) * 14}px">'
                    f"{_e(_short(d.url))}</span>",
                    _e(d.kind or "–"),
                    _n(d.entries),
                    _n(d.children),
                    _n(d.bytes),
                    _gz(d.final_url or d.url),
                    f'<span class="err">{_e(error)}</span>' if error else "",
                )
            )
        more = len(docs) - DOCUMENTS_SHOWN
        tail = f'<p class="muted">{_n(more)} more documents not shown.</p>' if more > 0 else ""
        return (
            '<section id="sitemaps"><h2>Sitemap tree</h2>'
            '<p class="muted">Documents by level (root = 1), in the order they were read;'
            " .gz: the URL names a gzip file (every body is decoded whatever its name).</p>"
            f'<table class="grid">{"".join(rows)}</table>{tail}</section>'
        )
    rows = [_row("sitemap", "URLs", ".gz", head=True)]
    ranked = sorted(data.sitemaps.items(), key=lambda kv: (-kv[1], kv[0]))
    for sitemap, n in ranked[:DOCUMENTS_SHOWN]:
        rows.append(
            _row(f'<span class="url">{_e(_short(sitemap)) or "(none)"}</span>', _n(n), _gz(sitemap))
        )
    rest = data.sitemap_other + sum(n for _, n in ranked[DOCUMENTS_SHOWN:])
    if rest:
        rows.append(_row("other sitemaps", _n(rest), ""))
    return (
        '<section id="sitemaps"><h2>Sitemaps</h2>'
        '<p class="muted">URLs per sitemap named in the inventory; document kinds, sizes and'
        " errors are not recorded in an inventory.</p>"
        f'<table class="grid">{"".join(rows)}</table></section>'
    )


def _counts(counter: Counter[str]) -> str:
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:TABLE_ROWS]
    return "".join(_row(_e(k), _n(n)) for k, n in items)


def _lists(data: ReportData, walk: WalkReport | None, inv: InventoryInfo | None) -> str:
    junk_rows = "".join(
        _row(f'<span class="url">{_e(_short(u))}</span>', _e(p)) for u, p in data.junk
    )
    auth_rows = "".join(_row(f'<span class="url">{_e(_short(u))}</span>') for u in data.auth)
    parts = [
        '<section id="junk"><h2>Likely junk</h2>',
        f"<p>{_n(data.junk_count)} URLs look like test, sample or duplicate pages"
        f" (the first {min(data.junk_count, LIST_LIMIT)} are listed).</p>",
        _grid(("pattern", "URLs"), _counts(data.junk_patterns)) if data.junk_count else "",
        _details("The URLs", _grid(("URL", "pattern"), junk_rows)) if junk_rows else "",
        "</section>",
        '<section id="signin"><h2>Sign-in areas</h2>',
        f"<p>{_n(data.auth_count)} URLs are behind a sign-in (account, admin, log-in paths)"
        f" (the first {min(data.auth_count, LIST_LIMIT)} are listed).</p>",
        f'<table class="grid">{_row("group", "URLs", head=True)}{_counts(data.auth_groups)}</table>'
        if data.auth_count
        else "",
        _details("The URLs", _grid(("URL",), auth_rows)) if auth_rows else "",
        "</section>",
        '<section id="malformed"><h2>Malformed entries</h2>',
    ]
    if walk is not None:
        reasons: Counter[str] = Counter(m.reason for m in walk.malformed)
        shown = walk.malformed[:LIST_LIMIT]
        parts.append(
            f"<p>{_n(walk.malformed_count)} sitemap entries could not be used"
            f" (the first {len(shown)} are listed).</p>"
        )
        if reasons:
            parts.append(_grid(("reason", "entries"), _counts(reasons)))
        if shown:
            rows = "".join(
                _row(
                    f'<span class="url">{_e(_short(m.raw))}</span>',
                    _e(m.reason),
                    _e(_short(m.sitemap)),
                )
                for m in shown
            )
            parts.append(_details("The entries", _grid(("entry", "reason", "sitemap"), rows)))
    else:
        parts.append("<p>Malformed sitemap entries are not recorded in an inventory.</p>")
        if inv is not None and inv.skipped:
            parts.append(
                f"<p>{_n(sum(inv.skipped.values()))} rows of the inventory file were skipped:</p>"
                + _grid(("reason", "rows"), _counts(inv.skipped))
            )
    parts.append("</section>")
    return "".join(parts)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1040px;padding:0 16px;color:#1d232b;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
h3{font-size:15px;margin:16px 0 6px}.muted{color:#667}.site,.url{word-break:break-all}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px 3px 0;text-align:left;
vertical-align:top}table.grid td,table.grid th{border-bottom:1px solid #eef}
summary{cursor:pointer;color:#345;margin:6px 0}
table.kv th{font-weight:600;color:#445;width:11em}.err{color:#a22}
svg{width:100%;height:auto;display:block;background:#fafbfd;border:1px solid #e3e6ee}
#treemap-svg rect{stroke:#fff;stroke-width:1}#treemap-svg text.sub{font-size:10px;fill:#333}
#treemap-svg text{font-size:12px;fill:#1d232b;
pointer-events:none}#treemap-svg g.cell{cursor:zoom-in}#treemap-svg.zoomed g.cell{cursor:zoom-out}
#treemap-svg g.cell:hover>rect.area{filter:brightness(.93)}rect.month{fill:#5b7fbf}
rect.month:hover{fill:#2d4f8f}svg text{font-size:11px;fill:#556}
"""

# Zoom into a treemap cell with the SVG viewBox; no library, no network.
_JS = """
(function(){var svg=document.getElementById('treemap-svg');if(!svg)return;
var full=svg.getAttribute('viewBox');
function reset(){svg.setAttribute('viewBox',full);svg.classList.remove('zoomed');}
svg.addEventListener('click',function(ev){var g=ev.target.closest('g.cell');
if(!g||svg.classList.contains('zoomed')){reset();return;}
svg.setAttribute('viewBox',[g.dataset.x,g.dataset.y,g.dataset.w,g.dataset.h].join(' '));
svg.classList.add('zoomed');});
document.addEventListener('keydown',function(ev){if(ev.key==='Escape')reset();});})();
"""

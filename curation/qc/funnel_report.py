"""The QC funnel's HTML page and charts: the cells of curation/qc/funnel.py drawn and tabled."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from curation.qc.funnel import END_STATES, PAPER, PATH, STAGES, check_line, paper_rates, percent
from curation.reports import page, write

# the stages a manifest written before the funnel counted current states recorded
_OLD_STEPS = (("authored", "authored"), ("valid", "valid"), ("shortcut_passed", "shortcut passed"),
              ("reviewed_ok", "reviewed ok"), ("kept", "kept"), ("revised", "revised"))


def bars_svg(items: list[tuple[str, int]], width: int = 560, colour: str = "#4a7ab5") -> str:
    """Horizontal bars, one per (label, count), scaled to the largest."""
    top = max((value for _, value in items), default=1) or 1
    left = 20 + 7 * max((len(name) for name, _ in items), default=0)  # room for the longest label
    bars = []
    for n, (name, value) in enumerate(items):
        w = max(2, (width - 60) * value / top)  # room for the count after the bar
        bars.append(f'<rect x="{left}" y="{10 + n * 28}" width="{w:.1f}" height="20" fill="{colour}"/>'
                    f'<text x="{left - 10}" y="{25 + n * 28}" font-size="12" text-anchor="end">{html.escape(name)}'
                    f'</text><text x="{left + 5 + w:.1f}" y="{25 + n * 28}" font-size="12">{value}</text>')
    return f'<svg width="{left + width}" height="{20 + len(items) * 28}" role="img">{"".join(bars)}</svg>'


def funnel_svg(total: dict[str, Any], width: int = 560) -> str:
    """The stages as bars (a release manifest from before the current-state funnel draws its own steps)."""
    steps = STAGES if "validated" in total else _OLD_STEPS
    return bars_svg([(label, int(total.get(key) or 0)) for key, label in steps], width)


def subcategory_bars_svg(groups: dict[str, dict[str, Any]], width: int = 620) -> str:
    top = max((g["tasks"] for g in groups.values()), default=1) or 1
    rows = []
    for n, (name, g) in enumerate(groups.items()):
        y = 10 + n * 24
        passed = g.get("passed_filter", g.get("shortcut_passed", 0))
        w_all = (width - 260) * g["tasks"] / top
        w_kept = (width - 260) * passed / top
        rows.append(f'<text x="230" y="{y + 14}" font-size="11" text-anchor="end">{html.escape(name)}</text>'
                    f'<rect x="240" y="{y}" width="{max(w_all, 1):.1f}" height="16" fill="#c9d6e8"/>'
                    f'<rect x="240" y="{y}" width="{w_kept:.1f}" height="16" fill="#4a7ab5"/>')
    return (f'<svg width="{width}" height="{20 + len(groups) * 24}" role="img">{"".join(rows)}</svg>'
            "<p class='muted'>light: tasks; dark: passed the shortcut filter (now at or past that step)</p>")


def _paper_table(total: dict[str, Any]) -> str:
    return ("<table><tr><th></th><th>here</th><th>from</th><th>the paper</th></tr>" + "".join(
        f"<tr><td>{name}</td><td>{percent(total[key])}</td><td>{part} of {whole} {what}</td>"
        f"<td>{PAPER[key]:.1%}</td></tr>" for name, key, part, whole, what in paper_rates(total)) + "</table>")


def _group_table(summary: dict[str, Any]) -> str:
    columns = [*STAGES, *END_STATES, *PATH]
    head = ("<tr><th rowspan='2'>group</th>" f"<th colspan='{len(STAGES)}'>stages</th>"
            f"<th colspan='{len(END_STATES)}'>end states</th><th colspan='{len(PATH)}'>on the way</th>"
            "<th rowspan='2'>kept by filter</th><th rowspan='2'>adds up</th></tr><tr>"
            + "".join(f"<th>{html.escape(label)}</th>" for _, label in columns) + "</tr>")
    body = []
    for name, g in [("all", summary["all"]), *summary["tiers"].items(), *summary["subcategories"].items()]:
        body.append(f"<tr><td>{html.escape(name)}</td>" + "".join(f"<td>{g[key]}</td>" for key, _ in columns)
                    + f"<td>{percent(g['shortcut_retained'])}</td><td>{'yes' if g['adds_up'] else 'NO'}</td></tr>")
    return f"<table>{head}{''.join(body)}</table>"


def write_funnel_report(path: Path, summary: dict[str, Any]) -> Path:
    total = summary["all"]
    body = [f"<p>{total['tasks']} tasks, each counted once by its latest version, in its current state. "
            f"{html.escape(check_line(total))}.</p>", "<h2>Beside the paper</h2>", _paper_table(total),
            "<h2>Stages</h2><p class='muted'>tasks now at or past each step</p>", funnel_svg(total),
            "<h2>End states</h2><p class='muted'>where each task is now</p>",
            bars_svg([(label, total[key]) for key, label in END_STATES], colour="#6b9e6b"),
            "<h2>On the way</h2>", bars_svg([(label, total[key]) for key, label in PATH], colour="#b58a4a"),
            "<h2>By sub-category</h2>", subcategory_bars_svg(summary["subcategories"]),
            "<h2>Every group</h2>", _group_table(summary),
            "<h2>Annotators</h2><table><tr><th>annotator</th><th>tasks</th><th>median lead time</th></tr>"]
    for author, a in summary["authors"].items():
        body.append(f"<tr><td>{html.escape(author)}</td><td>{a['tasks']}</td>"
                    f"<td>{a['median_lead_time_s']:.0f} s</td></tr>")
    body.append("</table>")
    return write(path, page("QC funnel", body))

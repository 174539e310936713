"""`curate qc report`: the QC funnel, from authored tasks to what a release may hold, beside
the paper's rates, per tier and sub-category, with annotator throughput and lead times.

A task counts once, by its first version's id: it reaches a step when any of its versions
did (a revision that comes round again still counts as one task).
"""

from __future__ import annotations

import html
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from curation.core.stage import StageRun, stage
from curation.reports import page, write
from curation.tasks.lifecycle import inherited_tasks

PAPER = {"shortcut_retained": 0.743, "deleted_after_review": 0.142, "revised_after_review": 0.220}
STEPS = ("authored", "valid", "shortcut_passed", "reviewed_ok", "escalated", "kept", "deleted", "revised")
APART = ("needs_fix", "imported", "inherited")  # shown beside the steps: sent back, and carried over


def funnel_rows(run: StageRun) -> list[dict[str, Any]]:
    inherited = inherited_tasks(run.db)
    return [row | {"inherited": row["task_id"] in inherited} for row in run.db.rows("""
        SELECT t.task_id, t.tier, t.subcategory, t.author, t.lead_time_s, list(DISTINCT x.to_state) AS reached
        FROM latest_tasks t JOIN task_transitions x USING (task_id) GROUP BY ALL ORDER BY t.task_id""")]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def counts(group: list[dict[str, Any]]) -> dict[str, Any]:
        reached = Counter(step for r in group for step in set(r["reached"]))
        judged = reached["shortcut_passed"] + reached["shortcut_discarded"]
        # a task reviewed twice (a revision goes round again) is one reviewed task
        reviewed = sum(1 for r in group if {"reviewed_ok", "escalated"} & set(r["reached"]))
        return {"tasks": len(group), **{s: reached[s] for s in (*STEPS, "needs_fix", "shortcut_discarded")},
                # tasks of an imported release kept as published: they did not go through this team's QC
                "imported": reached["imported"], "inherited": sum(1 for r in group if r.get("inherited")),
                "shortcut_retained": _rate(reached["shortcut_passed"], judged),
                "deleted_after_review": _rate(reached["deleted"], reviewed),
                "revised_after_review": _rate(reached["revised"], reviewed)}

    by_tier: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_sub: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_author: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_tier[row["tier"] or "?"].append(row)
        by_sub[f"{row['tier'] or '?'} {row['subcategory'] or '?'}"].append(row)
        by_author[row["author"] or "?"].append(row)
    authors = {a: {"tasks": len(g), "median_lead_time_s": statistics.median(
        [r["lead_time_s"] for r in g if r["lead_time_s"] is not None] or [0.0])} for a, g in sorted(by_author.items())}
    return {"all": counts(rows), "tiers": {k: counts(v) for k, v in sorted(by_tier.items())},
            "subcategories": {k: counts(v) for k, v in sorted(by_sub.items())}, "authors": authors}


def funnel_svg(total: dict[str, Any], width: int = 520) -> str:
    steps = [("authored", total["authored"]), ("valid", total["valid"]),
             ("shortcut passed", total["shortcut_passed"]), ("reviewed ok", total["reviewed_ok"]),
             ("kept", total["kept"]), ("revised", total["revised"])]
    top = max(total["authored"], 1)
    bars = []
    for n, (name, value) in enumerate(steps):
        w = max(2, (width - 210) * value / top)  # room for the count after the bar
        bars.append(f'<rect x="150" y="{10 + n * 28}" width="{w:.1f}" height="20" fill="#4a7ab5"/>'
                    f'<text x="140" y="{25 + n * 28}" font-size="12" text-anchor="end">{name}</text>'
                    f'<text x="{155 + w:.1f}" y="{25 + n * 28}" font-size="12">{value}</text>')
    return f'<svg width="{width}" height="{20 + len(steps) * 28}" role="img">{"".join(bars)}</svg>'


def subcategory_bars_svg(groups: dict[str, dict[str, Any]], width: int = 620) -> str:
    top = max((g["tasks"] for g in groups.values()), default=1) or 1
    rows = []
    for n, (name, g) in enumerate(groups.items()):
        y = 10 + n * 24
        w_all = (width - 260) * g["tasks"] / top
        w_kept = (width - 260) * g["shortcut_passed"] / top
        rows.append(f'<text x="230" y="{y + 14}" font-size="11" text-anchor="end">{html.escape(name)}</text>'
                    f'<rect x="240" y="{y}" width="{max(w_all, 1):.1f}" height="16" fill="#c9d6e8"/>'
                    f'<rect x="240" y="{y}" width="{w_kept:.1f}" height="16" fill="#4a7ab5"/>')
    return (f'<svg width="{width}" height="{20 + len(groups) * 24}" role="img">{"".join(rows)}</svg>'
            "<p class='muted'>light: tasks authored; dark: passed the shortcut filter</p>")


@stage("qc-report", command="curate qc report", reads=("tasks", "task_transitions"), writes=("report file",),
       summary="the QC funnel with the paper's rates, per tier and sub-category; annotator throughput")
def qc_report(run: StageRun, path: Path) -> dict[str, Any]:
    summary = summarise(funnel_rows(run))
    total = summary["all"]
    run.params.update(path=str(path))
    run.counts.update({k: v for k, v in total.items() if isinstance(v, int)})
    esc = html.escape

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{value:.1%}"

    body = [f"<p>{total['tasks']} tasks. Shortcut filter kept {pct(total['shortcut_retained'])} (the paper: "
            f"{PAPER['shortcut_retained']:.1%}); after review, {pct(total['deleted_after_review'])} deleted (paper "
            f"{PAPER['deleted_after_review']:.1%}) and {pct(total['revised_after_review'])} revised (paper "
            f"{PAPER['revised_after_review']:.1%}).</p>", "<h2>Funnel</h2>", funnel_svg(total),
            "<h2>By sub-category</h2>", subcategory_bars_svg(summary["subcategories"]),
            "<table><tr><th>group</th>" + "".join(f"<th>{s}</th>" for s in (*STEPS, *APART)) +
            "<th>kept by filter</th></tr>"]
    for name, g in [("all", total), *summary["tiers"].items(), *summary["subcategories"].items()]:
        body.append(f"<tr><td>{esc(name)}</td>" + "".join(f"<td>{g[s]}</td>" for s in (*STEPS, *APART))
                    + f"<td>{pct(g['shortcut_retained'])}</td></tr>")
    body.append("</table><h2>Annotators</h2><table><tr><th>annotator</th><th>tasks</th>"
                "<th>median lead time</th></tr>")
    for author, a in summary["authors"].items():
        body.append(f"<tr><td>{esc(author)}</td><td>{a['tasks']}</td><td>{a['median_lead_time_s']:.0f} s</td></tr>")
    body.append("</table>")
    write(path, page("QC funnel", body))
    return summary

"""`build/reports/grade.html`: per model, the observation buckets of every (episode, video) on
L2 and L3 tasks as one stacked bar (the paper's Figure 3 shape), SR beside WR and NS when
several models are graded together, the per-tier table, and the audit's under- and
over-observation rates (the paper's Table 3 shape) once trajectories have been audited; then the scores with
their intervals, the pairwise tests and the flagged tasks (`report_stats.py`)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.grade.metrics import BUCKETS
from curation.grade.report_stats import statistics_html
from curation.reports import page, write

COLOURS = {"skipped": "#b9c4d0", "glanced": "#f2c14e", "partially_viewed": "#4a7ab5", "fully_consumed": "#c0504d"}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def buckets_svg(per_model: list[dict[str, Any]], width: int = 640) -> str:
    rows = []
    for n, group in enumerate(per_model):
        y, x = 20 + n * 30, 160.0
        rows.append(f'<text x="150" y="{y + 15}" font-size="12" text-anchor="end">{html.escape(group["model"])}</text>')
        for name in BUCKETS:
            share = group["buckets"].get(name) or 0.0
            w = (width - 180) * share
            rows.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="20" fill="{COLOURS[name]}">'
                        f"<title>{name}: {share:.1%}</title></rect>")
            if share >= 0.06:
                rows.append(f'<text x="{x + w / 2:.1f}" y="{y + 14}" font-size="10" text-anchor="middle">'
                            f"{share:.0%}</text>")
            x += w
    legend = "".join(f'<rect x="{160 + i * 120}" y="2" width="10" height="10" fill="{COLOURS[b]}"/>'
                     f'<text x="{174 + i * 120}" y="11" font-size="11">{b.replace("_", " ")}</text>'
                     for i, b in enumerate(BUCKETS))
    return f'<svg width="{width}" height="{30 + len(per_model) * 30}" role="img">{legend}{"".join(rows)}</svg>'


def scatter_svg(points: list[tuple[str, float, float]], x_name: str, width: int = 320, height: int = 240) -> str:
    """SR (y, 0–1) against a cost (x, 0 to its largest value), one labelled dot per model."""
    top = max((x for _, x, _ in points), default=1.0) or 1.0
    dots = []
    for name, x, y in points:
        cx, cy = 40 + (width - 60) * x / top, height - 30 - (height - 50) * y
        dots.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="#4a7ab5"/>'
                    f'<text x="{cx + 6:.1f}" y="{cy - 4:.1f}" font-size="10">{html.escape(name)}</text>')
    axes = (f'<line x1="40" y1="{height - 30}" x2="{width - 10}" y2="{height - 30}" stroke="#888"/>'
            f'<line x1="40" y1="20" x2="40" y2="{height - 30}" stroke="#888"/>'
            f'<text x="{width / 2}" y="{height - 8}" font-size="11" text-anchor="middle">{x_name} (0–{top:.3g})</text>'
            f'<text x="12" y="{height / 2}" font-size="11" transform="rotate(-90 12 {height / 2})">SR</text>')
    return f'<div class="fig"><svg width="{width}" height="{height}" role="img">{axes}{"".join(dots)}</svg></div>'


def audit_rates(catalog: Catalog, release: str) -> list[dict[str, Any]]:
    """Per model: the share of audited trajectories with under-, over- and both kinds of observation."""
    return catalog.rows("""
        SELECT model, count(*) AS trajectories, avg(under::INT) AS under, avg(over::INT) AS over,
               avg((under AND over)::INT) AS both FROM (
            SELECT model, task_id, bool_or(under_observed) AS under, bool_or(over_observed) AS over
            FROM audit_flags WHERE release = ? GROUP BY ALL) GROUP BY model ORDER BY model""", [release])


def write_grade_page(catalog: Catalog, release: str, summary: dict[str, Any], path: Path) -> Path:
    """grade.html for a release: the summary beside the audit's rates so far (called inside a stage run)."""
    return write(path, grade_page(summary, audit_rates(catalog, release)))


def grade_page(summary: dict[str, Any], audit: list[dict[str, Any]] | None = None) -> str:
    per_model = summary["observed_l2_l3"]
    bucketed = [g for g in per_model if g["videos_bucketed"]]
    body = [f"<p>Release {html.escape(summary['release'])}.</p>", "<h2>Observation buckets (L2 and L3)</h2>",
            buckets_svg(bucketed) if bucketed else "<p>No bucket: the catalog knows no duration for these videos "
            "(ingest their source or run <code>curate media probe</code>), so WR and the watch ratios per video "
            "cannot be computed.</p>"]
    totals = {g["model"]: g for g in summarise_all(summary)}
    if len(totals) > 1:
        body += ["<h2>Success against cost</h2>",
                 scatter_svg([(m, g["wr"] or 0.0, g["sr"] or 0.0) for m, g in totals.items()], "WR"),
                 scatter_svg([(m, g["ns"] or 0.0, g["sr"] or 0.0) for m, g in totals.items()], "NS")]
    body.append("<h2>Per tier</h2><table><tr><th>model</th><th>tier</th><th>episodes</th><th>SR</th><th>NS</th>"
                "<th>WR</th><th>progress</th>" + "".join(f"<th>{b.replace('_', ' ')}</th>" for b in BUCKETS) + "</tr>")
    for g in summary["per_tier"]:
        body.append(f"<tr><td>{html.escape(g['model'])}</td><td>{g['tier']}</td><td>{g['episodes']}</td>"
                    f"<td>{_pct(g['sr'])}</td><td>{g['ns'] if g['ns'] is not None else '–'}</td>"
                    f"<td>{_pct(g['wr'])}</td>"
                    f"<td>{_pct(g['progress'])}</td>" + "".join(f"<td>{_pct(g['buckets'][b])}</td>" for b in BUCKETS)
                    + "</tr>")
    body.append("</table><h2>Per sub-category</h2><table><tr><th>model</th><th>tier</th><th>sub-category</th>"
                "<th>episodes</th><th>SR</th><th>NS</th><th>WR</th><th>progress</th></tr>")
    for g in summary.get("per_subcategory", []):
        body.append(f"<tr><td>{html.escape(g['model'])}</td><td>{g['tier']}</td><td>{html.escape(g['subcategory'])}"
                    f"</td><td>{g['episodes']}</td><td>{_pct(g['sr'])}</td><td>{g['ns']}</td><td>{_pct(g['wr'])}</td>"
                    f"<td>{_pct(g['progress'])}</td></tr>")
    body.append("</table>")
    body += statistics_html(summary)
    body += coverage_html(summary)
    if summary.get("rejected"):
        body.append("<h3>Logs that could not be graded</h3><ul>" + "".join(
            f"<li>{html.escape(r['log'])}: {html.escape(r['reason'])}</li>" for r in summary["rejected"]) + "</ul>")
    for key, title in (("answered_differently", "Answered more than once, differently (the first answer counts)"),
                       ("index0_disagreements", "A like, collect or report on a video the runner's 'no other "
                                                "video' rule does not read (video 1, or past its last position): "
                                                "SR is the runner's"),
                       ("state_disagreements", "Graded here otherwise than the logged result"),
                       ("replay_disagreements", "The replay contradicts the runner's result: graded from the logged "
                                                "result, the check that differed named"),
                       ("cut_off", "Ended without finish (cut off by the step cap, or broken off)"),
                       ("state_unknown", "Final state unknown (the replay could not tell what a call did): SR is "
                                         "the logged result")):
        if summary.get(key):
            body.append(f"<h3>{title}</h3><p>{html.escape(', '.join(summary[key]))}</p>")
    if audit:
        body.append("<h2>Audited trajectories</h2><table><tr><th>model</th><th>trajectories</th><th>under-observed</th>"
                    "<th>over-observed</th><th>both</th></tr>")
        body += [f"<tr><td>{html.escape(a['model'])}</td><td>{a['trajectories']}</td><td>{_pct(a['under'])}</td>"
                 f"<td>{_pct(a['over'])}</td><td>{_pct(a['both'])}</td></tr>" for a in audit]
        body.append("</table>")
    return page("Grades", body)


def coverage_html(summary: dict[str, Any]) -> list[str]:
    """The release's tasks per model and tier by what became of them, SR both ways; the defective tasks."""
    esc = html.escape
    out = []
    if summary.get("coverage"):
        out.append("<h2>Coverage</h2><p>SR over attempted tasks counts a crash (a task folder without a log) and a "
                   "rejected log as a failure, as the runner's all-tasks average does; SR over graded counts the "
                   "graded episodes only.</p><table><tr><th>model</th><th>tier</th><th>tasks</th><th>attempted</th>"
                   "<th>graded</th><th>crashed</th><th>rejected</th><th>missing</th><th>SR attempted</th>"
                   "<th>SR graded</th></tr>")
        out += [f"<tr><td>{esc(c['model'])}</td><td>{c['tier']}</td><td>{c['tasks']}</td><td>{c['attempted']}</td>"
                f"<td>{c['graded']}</td><td>{c['crashed']}</td><td>{c['rejected']}</td><td>{c['missing']}</td>"
                f"<td>{_pct(c['sr_attempted'])}</td><td>{_pct(c['sr_graded'])}</td></tr>" for c in summary["coverage"]]
        out.append("</table>")
    if summary.get("defective_tasks"):
        counted = "counted in" if summary.get("defective_included") else "left out of"
        out.append(f"<h3>Defective tasks ({counted} every figure above)</h3><ul>" + "".join(
            f"<li>{esc(d['task_id'])}: {esc(d['reasons'])}</li>" for d in summary["defective_tasks"]) + "</ul>")
    return out


def summarise_all(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Per model over every tier: SR, NS and WR weighted by episodes."""
    out: dict[str, dict[str, Any]] = {}
    for g in summary["per_tier"]:
        total = out.setdefault(g["model"], {"model": g["model"], "episodes": 0, "sr": 0.0, "ns": 0.0, "wr": 0.0,
                                            "_wr_n": 0})
        total["episodes"] += g["episodes"]
        total["sr"] += (g["sr"] or 0.0) * g["episodes"]
        total["ns"] += (g["ns"] or 0.0) * g["episodes"]
        if g["wr"] is not None:
            total["wr"] += g["wr"] * g["episodes"]
            total["_wr_n"] += g["episodes"]
    for total in out.values():
        n, with_wr = total["episodes"] or 1, total.pop("_wr_n")
        total["sr"], total["ns"] = total["sr"] / n, total["ns"] / n
        total["wr"] = total["wr"] / with_wr if with_wr else None
    return list(out.values())

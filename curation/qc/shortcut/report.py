"""`build/reports/shortcut.html`: what one run of the shortcut filter decided, under which
configuration, how much of it chance explains, and where other configurations disagreed."""

from __future__ import annotations

import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Protocol

from curation.core.catalog import Catalog
from curation.qc.shortcut.record import latest_decisions
from curation.reports import page, write

PAPER_RETENTION = 0.743


class JudgedRun(Protocol):
    """What one run of the filter hands its report: a `qc.shortcut.ShortcutRun`, named here by its
    shape, since the filter's stage writes this report and so imports this module."""

    config: dict[str, Any]
    config_sha256: str
    judged: list[tuple[str, int]]
    of_record: bool
    counts: dict[str, Any]


def run_verdicts(catalog: Catalog, result: JudgedRun) -> list[dict[str, Any]]:
    """The verdicts of exactly the tasks this run judged, under this run's configuration."""
    keys = {"task_id": [k[0] for k in result.judged], "task_version": [k[1] for k in result.judged]}
    import pyarrow as pa

    with catalog.staged(judged=pa.table(keys)):
        return catalog.rows("""
            SELECT v.*, t.tier, t.subcategory, t.eval_type, t.options FROM shortcut_verdicts v
            JOIN judged j ON j.task_id = v.task_id AND j.task_version = v.task_version
            JOIN tasks t ON t.task_id = v.task_id AND t.version = v.task_version
            WHERE v.config_sha256 = ? ORDER BY v.task_id""", [result.config_sha256])


def shortcut_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    inspectors: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    guesser_discards = 0.0
    for row in rows:
        kept = row["verdict"] == "shortcut_passed"
        for key in ("all", f"tier {row['tier']}", f"{row['tier']} {row['subcategory']}"):
            groups[key][0] += kept
            groups[key][1] += 1
        n_options = len(json.loads(row["options"])) if row["options"] else 0
        if row["eval_type"] == "label" and n_options:
            guesser_discards += 1 / n_options  # one random letter, the paper's rule
        for answer in json.loads(row["answers"]):
            stats = inspectors[answer["inspector"]]
            stats["answers"] += 1
            stats["correct"] += answer["correct"]
            stats["unparsed"] += answer["parsed"] == "unparsed"
            stats["abstained"] += answer["parsed"] == "cannot_answer"
            if row["eval_type"] == "label" and n_options:
                stats["chance"] += 1 / n_options
    return {"tasks": len(rows), "groups": {k: {"kept": v[0], "total": v[1]} for k, v in sorted(groups.items())},
            "inspectors": {k: dict(v) for k, v in inspectors.items()},
            "guesser_discards": round(guesser_discards, 2)}


def disagreements(catalog: Catalog, result: JudgedRun) -> list[dict[str, Any]]:
    """Verdicts of the same task versions under other configurations that differ from this run's."""
    rows = run_verdicts(catalog, result)
    mine = {(r["task_id"], r["task_version"]): r["verdict"] for r in rows}
    if not mine:
        return []
    others = catalog.rows("""
        SELECT s.task_id, s.task_version, s.verdict, s.config_sha256, s.run_id, r.params FROM shortcut_verdicts s
        LEFT JOIN runs r ON r.run_id = s.run_id WHERE s.config_sha256 <> ? AND list_contains(?, s.task_id)
        ORDER BY s.task_id, s.created_at""", [result.config_sha256, sorted({k[0] for k in mine})])
    decided = latest_decisions(catalog)
    out = []
    for other in others:
        key = (other["task_id"], other["task_version"])
        if key in mine and other["verdict"] != mine[key]:
            inspectors = [i.get("name") for i in json.loads(other["params"] or "{}").get("inspectors", [])]
            out.append({**other, "this_run": mine[key], "inspectors": inspectors,
                        "of_record": decided.get(key) == other["config_sha256"]})
    return out


def write_report(catalog: Catalog, path: Path, result: JudgedRun) -> Path:
    rows = run_verdicts(catalog, result)
    summary = shortcut_summary(rows)
    config = result.config
    esc = html.escape
    inspectors = ", ".join(f"{i['name']} ({i['model']}, {i['samples']} sample(s), T={i['temperature']})"
                           for i in config["inspectors"])
    body = [f"<p>This run judged {summary['tasks']} tasks with the <b>{esc(config['rule'])}</b> rule and the "
            f"<b>{esc(config['template'])}</b> prompt ({esc(config['language'])}); inspectors: {esc(inspectors)}; "
            f"configuration <code>{result.config_sha256}</code>. The paper kept {PAPER_RETENTION:.1%} of its "
            "authored tasks.</p>",
            ("<p>This configuration is the <b>configuration of record</b>: its verdicts decide the tasks' states.</p>"
             if result.of_record else
             f"<p>This configuration is <b>not the configuration of record</b> (<code>{esc(result.counts['record'])}"
             "</code>): its verdicts are kept as evidence and moved no task; the verdicts of record are shown "
             "beside them below. <code>curate qc shortcut-config adopt</code> would make it the one of record."
             "</p>"),
            "<p>Robust-evaluation tasks: " + ("a 'cannot be determined' answer counts as solving them."
                                              if config["robust_cannot_determine_discards"] else
                                              "a 'cannot be determined' answer alone never discards them "
                                              "(it is also what knowing nothing looks like).") + "</p>",
            "<h2>Retention</h2><table><tr><th>group</th><th>kept</th><th>of</th><th>retention</th></tr>"]
    for name, g in summary["groups"].items():
        body.append(f"<tr><td>{esc(name)}</td><td>{g['kept']}</td><td>{g['total']}</td>"
                    f"<td>{g['kept'] / g['total']:.1%}</td></tr>")
    body.append("</table><h2>Inspectors</h2><table><tr><th>inspector</th><th>answers</th><th>correct</th>"
                "<th>accuracy</th><th>chance level</th><th>abstained</th><th>unparsed</th></tr>")
    for name, s in summary["inspectors"].items():
        n = s.get("answers", 0) or 1
        body.append(f"<tr><td>{esc(name)}</td><td>{int(s.get('answers', 0))}</td><td>{int(s.get('correct', 0))}</td>"
                    f"<td>{s.get('correct', 0) / n:.1%}</td><td>{s.get('chance', 0) / n:.1%}</td>"
                    f"<td>{int(s.get('abstained', 0))}</td><td>{int(s.get('unparsed', 0))}</td></tr>")
    body.append(f"</table><p>A pure guesser (one random letter per label task) would have discarded "
                f"about {summary['guesser_discards']} tasks under the paper's rule.</p>")
    discarded = [r for r in rows if r["verdict"] == "shortcut_discarded"]
    body.append(f"<h2>Discarded ({len(discarded)})</h2><table><tr><th>task</th><th>v</th>"
                "<th>answers that solved it</th></tr>")
    for row in discarded:
        solved = [a for a in json.loads(row["answers"]) if a["correct"]]
        body.append(f"<tr><td>{esc(row['task_id'])}</td><td>{row['task_version']}</td><td>"
                    + "<br>".join(esc(f"{a['inspector']} #{a['sample']}: {a['parsed']} ({(a['raw'] or '')[:80]!r})")
                                  for a in solved) + "</td></tr>")
    body.append("</table>")
    differ = disagreements(catalog, result)
    body.append(f"<h2>Where other configurations decided otherwise ({len(differ)})</h2>")
    if differ:
        body.append("<table><tr><th>task</th><th>v</th><th>this run</th><th>other</th><th>configuration</th>"
                    "<th>inspectors</th><th>run</th></tr>")
        for d in differ:
            body.append(f"<tr><td>{esc(d['task_id'])}</td><td>{d['task_version']}</td><td>{esc(d['this_run'])}</td>"
                        f"<td>{esc(d['verdict'])}{' (of record)' if d['of_record'] else ''}</td>"
                        f"<td><code>{esc(d['config_sha256'])}</code></td>"
                        f"<td>{esc(', '.join(d['inspectors']))}</td><td>{esc(d['run_id'] or '')}</td></tr>")
        body.append("</table>")
    else:
        body.append("<p>None: no other configuration judged these task versions differently.</p>")
    return write(path, page("Shortcut filter", body))

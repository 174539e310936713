"""`build/reports/shortcut.html`: what the shortcut filter kept, and how much was luck."""

from __future__ import annotations

import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.reports import page, write

PAPER_RETENTION = 0.743


def shortcut_summary(catalog: Catalog) -> dict[str, Any]:
    rows = catalog.rows("""
        SELECT v.*, t.tier, t.subcategory, t.eval_type, t.options FROM shortcut_verdicts v
        JOIN tasks t ON t.task_id = v.task_id AND t.version = v.task_version ORDER BY v.task_id""")
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    inspectors: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    guesser_discards = 0.0
    for row in rows:
        kept = row["verdict"] == "shortcut_passed"
        for key in ("all", f"tier {row['tier']}", f"{row['tier']} {row['subcategory']}"):
            groups[key][0] += kept
            groups[key][1] += 1
        answers = json.loads(row["answers"])
        n_options = len(json.loads(row["options"])) if row["options"] else 0
        if row["eval_type"] == "label" and n_options:
            guesser_discards += 1 / n_options  # one random letter, the paper's rule
        for answer in answers:
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


def write_report(catalog: Catalog, path: Path, rule: str, robust_discards: bool) -> Path:
    summary = shortcut_summary(catalog)
    esc = html.escape
    body = [f"<p>{summary['tasks']} tasks judged with the <b>{esc(rule)}</b> rule. The paper kept "
            f"{PAPER_RETENTION:.1%} of its authored tasks.</p>",
            "<p>Robust-evaluation tasks: " + ("a 'cannot be determined' answer counts as solving them."
                                              if robust_discards else
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
    return write(path, page("Shortcut filter", body))

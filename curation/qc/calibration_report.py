"""The calibration meeting's papers: agreement over a pilot round as `calibration.md` (the agenda:
figures, then the most disputed items with every answer side by side) and `calibration.html`
(the same, with the pairwise agreement matrix as a picture)."""

from __future__ import annotations

import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from curation.qc.agreement import Agreement, Answers, agreement
from curation.reports import page, write

NOT_ENOUGH = "not enough overlap"
MOST_DISPUTED = 10


def answers_by_field(rows: list[dict[str, Any]], fields: tuple[str, ...], people: list[str]) -> dict[str, Answers]:
    """field -> annotator -> item -> answer; "all" pools every (item, field) pair."""
    out: dict[str, Answers] = {f: {p: {} for p in people} for f in (*fields, "all")}
    for row in rows:
        for f in fields:
            out[f][row["annotator"]][row["item"]] = row[f]
            out["all"][row["annotator"]][f"{row['item']} · {f}"] = row[f]
    return out


def figure(value: float | None) -> str:
    return NOT_ENOUGH if value is None else f"{value:.3f}"


def round_agreement(rows: list[dict[str, Any]], fields: tuple[str, ...], people: list[str]) -> dict[str, Agreement]:
    return {f: agreement(a) for f, a in answers_by_field(rows, fields, people).items()}


def _disputed_items(result: dict[str, Agreement], fields: tuple[str, ...]) -> list[str]:
    """Items ordered by how many of their fields are disputed, then by the pooled order."""
    score: dict[str, int] = defaultdict(int)
    order: dict[str, int] = {}
    for n, key in enumerate(result["all"].disputed):
        item = key.rsplit(" · ", 1)[0]
        score[item] += 1
        order.setdefault(item, n)
    return sorted(score, key=lambda i: (-score[i], order[i]))[:MOST_DISPUTED]


def _matrix_svg(people: list[str], kappa: dict[tuple[str, str], float | None], cell: int = 70) -> str:
    """Pairwise Cohen's kappa as a coloured grid: green agrees, red disagrees, grey has too little overlap."""
    left, top = 120, 30
    parts = []
    for i, a in enumerate(people):
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" font-size="12" '
                     f'text-anchor="end">{html.escape(a)}</text>')
        parts.append(f'<text x="{left + i * cell + cell / 2}" y="{top - 8}" font-size="12" '
                     f'text-anchor="middle">{html.escape(a)}</text>')
        for j, b in enumerate(people):
            value = 1.0 if a == b else kappa.get((a, b), kappa.get((b, a)))
            if value is None:
                colour, label = "#dddddd", "–"
            else:
                shade = max(-1.0, min(1.0, value))
                colour = (f"rgb({int(255 * (1 - shade))},200,{int(255 * (1 - shade))})" if shade >= 0
                          else f"rgb(230,{int(230 * (1 + shade))},{int(230 * (1 + shade))})")
                label = f"{value:.2f}"
            parts.append(f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell - 2}" height="{cell - 2}" '
                         f'fill="{colour}"/><text x="{left + j * cell + cell / 2}" y="{top + i * cell + cell / 2 + 4}" '
                         f'font-size="12" text-anchor="middle">{label}</text>')
    size = left + len(people) * cell + 10
    return f'<svg width="{size}" height="{top + len(people) * cell + 10}" role="img">{"".join(parts)}</svg>'


def write_calibration(rows: list[dict[str, Any]], round_name: str, fields: tuple[str, ...], reports_dir: Path,
                      members: list[str] | None = None) -> tuple[Path, Path, dict[str, Agreement]]:
    """`members`: everyone the round was sent to; who has not answered yet is listed as such."""
    people = sorted(set(members or []) | {r["annotator"] for r in rows})
    result = round_agreement(rows, fields, people)
    waiting = [p for p in people if p not in {r["annotator"] for r in rows}]
    by_item: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_item[row["item"]][row["annotator"]] = row
    disputed = _disputed_items(result, fields)
    pooled = result["all"]
    md = [f"# Calibration meeting: {round_name}", "",
          f"{len(people)} annotators ({', '.join(people)}), {len(by_item)} pilot items, "
          f"{pooled.comparable_items} item-fields answered by two or more."
          + (f" No answers yet from {', '.join(waiting)}." if waiting else ""), "",
          "## Agreement", "", "| field | Krippendorff's alpha (nominal) | items compared |", "|---|---|---|"]
    md += [f"| {f} | {figure(result[f].alpha)} | {result[f].comparable_items} |" for f in (*fields, "all")]
    md += ["", "## Each annotator against the majority (all fields)", "", "| annotator | agreement |", "|---|---|"]
    md += [f"| {p} | {figure(pooled.with_majority.get(p))} |" for p in people]
    md += ["", "## Pairwise Cohen's kappa (all fields)", "", "| pair | kappa |", "|---|---|"]
    md += [f"| {a} / {b} | {figure(k)} |" for (a, b), k in sorted(pooled.kappa.items())]
    md += ["", "## Most disputed items", ""]
    if not disputed:
        md.append("No item was answered differently." if pooled.comparable_items else NOT_ENOUGH.capitalize() + ".")
    for item in disputed:
        question = next((json.loads(r["question"]) for r in by_item[item].values() if r.get("question")), None)
        md += [f"### {item}", ""]
        if question:
            md += [f"> {question['question']}", ">"] + [f"> {k}: {v}  " for k, v in question["options"].items()] + [""]
        md += ["| annotator | " + " | ".join(fields) + " | instruction |", "|---" * (len(fields) + 2) + "|"]
        for p in people:
            r = by_item[item].get(p)
            cells = [str(r[f]) if r and r[f] is not None else "–" for f in fields]
            text = (r or {}).get("instruction") or "–"
            md.append(f"| {p} | " + " | ".join(cells) + f" | {text.replace('|', '/').replace(chr(10), ' ')} |")
        md.append("")
    md_path = write(reports_dir / "calibration.md", "\n".join(md) + "\n")
    body = [f"<p>{html.escape(round_name)}: {len(people)} annotators, {len(by_item)} pilot items.</p>",
            "<h2>Pairwise Cohen's kappa (all fields)</h2>", _matrix_svg(people, pooled.kappa),
            "<p class='muted'>green: agree beyond chance; red: below chance; grey: not enough overlap</p>",
            "<h2>Krippendorff's alpha</h2><table><tr><th>field</th><th>alpha</th><th>items compared</th></tr>"]
    body += [f"<tr><td>{f}</td><td>{figure(result[f].alpha)}</td><td>{result[f].comparable_items}</td></tr>"
             for f in (*fields, "all")]
    body.append("</table><h2>Against the majority</h2><table><tr><th>annotator</th><th>agreement</th></tr>")
    body += [f"<tr><td>{html.escape(p)}</td><td>{figure(pooled.with_majority.get(p))}</td></tr>" for p in people]
    body.append(f"</table><p>The most disputed items, with every answer, are in {html.escape(md_path.name)}.</p>")
    html_path = write(reports_dir / "calibration.html", page(f"Calibration · {round_name}", body))
    return md_path, html_path, result

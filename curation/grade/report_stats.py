"""grade.html's statistics: intervals drawn as intervals (a line from low to high through the estimate, one row a
model), the pairwise differences against a zero line, each model's IRT ability with its interval, and the flagged
tasks with the rule of each flag."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

ROW_H, LEFT, RIGHT = 22, 170, 60


def interval_svg(rows: list[tuple[str, float, float, float]], lo: float, hi: float, fmt: Callable[[float], str],
                 zero: float | None = None, width: int = 560) -> str:
    """One row per (label, estimate, low, high) on an axis from `lo` to `hi`; `zero` draws a reference line."""
    span = (hi - lo) or 1.0
    height = 30 + len(rows) * ROW_H

    def x(value: float) -> float:
        return LEFT + (width - LEFT - RIGHT) * (min(max(value, lo), hi) - lo) / span

    out = [f'<line x1="{LEFT}" y1="{height - 18}" x2="{width - RIGHT}" y2="{height - 18}" stroke="#888"/>']
    for q in range(5):  # a tick and a faint grid line at each quarter of the axis
        value = lo + span * q / 4
        out += [f'<line x1="{x(value):.1f}" y1="4" x2="{x(value):.1f}" y2="{height - 18}" stroke="#eee"/>',
                f'<text x="{x(value):.1f}" y="{height - 4}" font-size="10" text-anchor="middle">{fmt(value)}</text>']
    if zero is not None:
        out.append(f'<line x1="{x(zero):.1f}" y1="4" x2="{x(zero):.1f}" y2="{height - 18}" stroke="#c0504d" '
                   'stroke-dasharray="3,3"/>')
    for n, (label, estimate, low, high) in enumerate(rows):
        y = 14 + n * ROW_H
        tip = f"{label}: {fmt(estimate)} [{fmt(low)}, {fmt(high)}]"
        out += [f'<text x="{LEFT - 8}" y="{y + 4}" font-size="11" text-anchor="end">{html.escape(label)}</text>',
                f'<g><title>{html.escape(tip)}</title>'
                f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" stroke="#4a7ab5" stroke-width="2"/>'
                f'<line x1="{x(low):.1f}" y1="{y - 5}" x2="{x(low):.1f}" y2="{y + 5}" stroke="#4a7ab5"/>'
                f'<line x1="{x(high):.1f}" y1="{y - 5}" x2="{x(high):.1f}" y2="{y + 5}" stroke="#4a7ab5"/>'
                f'<path d="{_diamond(x(estimate), y)}" fill="#1f3b63"/></g>',
                f'<text x="{width - RIGHT + 6}" y="{y + 4}" font-size="10">{html.escape(fmt(estimate))}</text>']
    return f'<div class="fig"><svg width="{width}" height="{height}" role="img">{"".join(out)}</svg></div>'


def _diamond(cx: float, cy: float, r: float = 5.0) -> str:
    """The estimate's mark: a diamond, as forest plots draw it (grade.html's dots are the models in its scatters)."""
    return f"M{cx - r:.1f} {cy} L{cx:.1f} {cy - r} L{cx + r:.1f} {cy} L{cx:.1f} {cy + r} Z"


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _signed(value: float) -> str:
    return f"{value:+.1%}"


def oriented(pair: dict[str, Any]) -> dict[str, Any]:
    """A pair as read: the model with the higher SR first, so that the difference is not negative."""
    if pair["difference"] >= 0:
        return pair
    return {**pair, "model_a": pair["model_b"], "model_b": pair["model_a"], "sr_a": pair["sr_b"], "sr_b": pair["sr_a"],
            "difference": -pair["difference"], "low": -pair["high"], "high": -pair["low"],
            "a_only": pair["b_only"], "b_only": pair["a_only"]}


def statistics_html(summary: dict[str, Any]) -> list[str]:
    intervals, tasks = summary.get("intervals") or [], summary.get("tasks")
    pairs = [oriented(p) for p in summary.get("pairs") or []]
    if not intervals:
        return []
    stats = summary["stats"]
    body = [f"<h2>Scores with {stats['level']:.0%} intervals</h2><p>{html.escape(stats['methods'])} "
            f"Bootstrap: {stats['draws']} resamples, seed {stats['seed']}.</p>"]
    scopes = sorted({i["scope"] for i in intervals if "/" not in i["scope"]}, key=lambda s: (s != "all", s))
    for scope in scopes:
        rows = [(i["model"], i["estimate"], i["low"], i["high"]) for i in intervals
                if i["scope"] == scope and i["metric"] == "sr"]
        body += [f"<h3>SR, {'all tasks' if scope == 'all' else scope}</h3>", interval_svg(rows, 0.0, 1.0, _pct)]
    for metric, name in (("ns", "NS (steps)"), ("wr", "WR")):
        rows = [(i["model"], i["estimate"], i["low"], i["high"]) for i in intervals
                if i["scope"] == "all" and i["metric"] == metric]
        if rows:
            top = max(r[3] for r in rows) or 1.0
            fmt = (lambda v: f"{v:.1f}") if metric == "ns" else _pct
            body += [f"<h3>{name}, all tasks</h3>", interval_svg(rows, 0.0, top, fmt)]
    sub = [i for i in intervals if "/" in i["scope"] and i["metric"] == "sr"]
    if sub:
        body.append("<h3>SR per sub-category</h3><table><tr><th>model</th><th>sub-category</th><th>tasks</th>"
                    "<th>SR</th><th>interval</th><th>method</th></tr>" + "".join(
                        f"<tr><td>{html.escape(i['model'])}</td><td>{html.escape(i['scope'])}</td><td>{i['tasks']}"
                        f"</td><td>{_pct(i['estimate'])}</td><td>{_pct(i['low'])} – {_pct(i['high'])}</td>"
                        f"<td>{i['method']}</td></tr>" for i in sub) + "</table>")
    if pairs:
        reach = max(max(abs(p["low"]), abs(p["high"])) for p in pairs) or 0.1
        rows = [(f"{p['model_a']} − {p['model_b']}", p["difference"], p["low"], p["high"]) for p in pairs]
        body += ["<h3>Pairs: difference of SR on the tasks both played</h3>",
                 interval_svg(rows, -reach, reach, _signed, zero=0.0),
                 "<table><tr><th>pair</th><th>tasks</th><th>difference</th><th>interval</th><th>p</th><th>Holm</th>"
                 "<th>test</th></tr>" + "".join(
                     f"<tr><td>{html.escape(p['model_a'])} − {html.escape(p['model_b'])}</td><td>{p['tasks']}</td>"
                     f"<td>{_signed(p['difference'])}</td><td>{_signed(p['low'])} – {_signed(p['high'])}</td>"
                     f"<td>{p['p_value']:.2g}</td><td>{p['p_holm']:.2g}</td><td>{p['test']}</td></tr>"
                     for p in pairs) + "</table>"]
    return body + (tasks_html(tasks) if tasks else [])


def tasks_html(tasks: dict[str, Any]) -> list[str]:
    esc = html.escape
    body = [f"<h2>Tasks judged by the answers</h2><p>IRT model: {tasks['irt'] or 'none (under two models)'}; "
            f"the full table: {', '.join(tasks['files'])}.</p>"]
    able = [m for m in tasks["models"] if m["ability"] is not None]
    if able:
        rows = [(m["model"], m["ability"], m["ability"] - 1.96 * m["ability_se"], m["ability"] + 1.96 * m["ability_se"])
                for m in able]
        reach = max(max(abs(r[2]), abs(r[3])) for r in rows)
        body += ["<h3>Ability (IRT), 95% interval</h3>", interval_svg(rows, -reach, reach, lambda v: f"{v:+.2f}",
                                                                      zero=0.0)]
    body.append("<h3>Flags</h3><ul>" + "".join(
        f"<li><b>{esc(r['name'])}</b> ({tasks['flag_counts'][r['name']]}): {esc(r['rule'])}</li>"
        for r in tasks["rules"]) + "</ul>")
    if tasks["flagged"]:
        body.append("<table><tr><th>task</th><th>flags</th><th>models</th><th>solved</th><th>discrimination</th>"
                    "<th>key / most common wrong answer</th><th>most common unmet check</th><th>proofs</th></tr>")
        for r in tasks["flagged"]:
            answer = (f"{esc(str(r['answer_key']))} / {esc(str(r['wrong_answer']))}" if r["eval_type"] == "label"
                      else "")
            unmet = f"{esc(r['unmet_check'])} ({r['unmet_episodes']}/{r['known_state_episodes']})" \
                if r["unmet_check"] else ""
            disc = "–" if r["discrimination"] is None else f"{r['discrimination']:+.2f}"
            body.append(f"<tr><td>{esc(r['task_id'])}</td><td>{esc(', '.join(r['flags']))}</td><td>{r['models']}"
                        f"</td><td>{r['solved']}/{r['episodes']}</td><td>{disc}</td><td>{answer}</td><td>{unmet}</td>"
                        f"<td>perfect {r['perfect_proof']}, do-nothing {r['idle_proof'] or '–'}</td></tr>")
        body.append("</table>")
    return body

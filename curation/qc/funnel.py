"""`curate qc report`: the QC funnel beside the paper's rates, per tier and sub-category, with annotator
throughput and lead times. The cells are counted here, from the life cycle, and drawn on the report's page.

Every task is counted once, by its latest version, in the state its life cycle holds now
(curation/tasks/lifecycle.py is the only record of a task's state). Three kinds of cells:

- end states: where each task is now; they add up to the number of tasks, and the report
  says whether they do;
- stages: how many tasks stand now at or past each step of the flow (a task the filter
  discarded after an earlier configuration passed it is past the filter, not past review);
- the path: what happened on the way, once per task whatever the number of versions (revised,
  went through review, passed on without the filter), and the ids a rename retired (not tasks:
  their successor is counted).

The paper's rates are computed from these cells and nothing else. `funnel_rows(catalog)` is the
table as plain dicts, one per group, for callers outside the report.
"""

from __future__ import annotations

import html
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.stage import StageRun, stage
from curation.qc.shortcut.prompts import read_by_some_inspector
from curation.qc.shortcut.record import verdicts_in_force
from curation.reports import page, write
from curation.tasks.lifecycle import RELEASED_STATES, inherited_tasks, latest_states

PAPER = {"shortcut_retained": 0.743, "deleted_after_review": 0.142, "revised_after_review": 0.220}
# (key, label) in the flow's order; a key is the life-cycle state, except `inherited` (kept straight
# from valid, `curate qc accept-imported`) and `unvalidated` (authored or imported, not checked yet)
END_STATES = (("needs_fix", "needs a fix"), ("unvalidated", "not validated yet"),
              ("valid", "waiting for the shortcut filter"), ("inherited", "inherited, kept as published"),
              ("shortcut_discarded", "discarded by the shortcut filter"), ("shortcut_passed", "waiting for review"),
              ("reviewed_ok", "reviewed ok"), ("escalated", "escalated, waiting for the group"),
              ("kept", "kept by the group"), ("deleted", "deleted by the group"),
              ("retired_after_audit", "retired after an audit of how models answered it"))
STAGES = (("tasks", "tasks"), ("validated", "valid"), ("through_filter", "through the shortcut filter"),
          ("passed_filter", "passed it"), ("reviewed", "reviewed"), ("sent_to_group", "escalated to the group"),
          ("decided", "decided by the group"), ("releasable", "may be released"))
PATH = (("authored_here", "authored here"), ("imported", "imported from a release"),
        ("revised", "revised (the new version counts where it is now)"),
        ("went_through_review", "went through review (any version)"),
        ("not_filtered", "passed on without the filter (platform tiers outside it)"),
        ("unread", "passed the filter unjudged: no inspector could read it"),
        ("retired", "ids retired by a rename (counted under the new id)"))
_FLOW = ("validated", "through_filter", "passed_filter", "reviewed", "sent_to_group", "decided")
# How far along the flow each end state stands (how many of _FLOW it has passed). `revised` and `retired`
# are never a task's current state (a revision is the task's next version; a retired id is not a task):
# a task found in either has no end-state cell, and the check says so.
# A task the group retired in an audit (`deleted` from a released state) stands where its release had it:
# past review if it went through review, else (inherited) past validation, or past the group's decision.
_DEPTH = {"needs_fix": 0, "unvalidated": 0, "valid": 1, "inherited": 1, "shortcut_discarded": 2,
          "shortcut_passed": 3, "reviewed_ok": 4, "escalated": 5, "kept": 6, "deleted": 6, "retired_after_audit": 1}


def _end_state(state: str, inherited: bool, audit_retired: bool = False) -> str:
    if state in ("authored", "imported"):
        return "unvalidated"
    if state == "deleted" and audit_retired:
        return "retired_after_audit"
    return "inherited" if state == "kept" and inherited else state


def task_outcomes(catalog: Catalog) -> list[dict[str, Any]]:
    """One row per task (its latest version): its current state, the end-state cell and the stages it
    counts in, and what its path holds (origin, revised, reviewed, not filtered)."""
    inherited = inherited_tasks(catalog)
    verdicts = verdicts_in_force(catalog)
    facts = {r["task_id"]: r for r in catalog.rows("""
        WITH path AS (
            SELECT task_id, bool_or(to_state = 'revised') AS revised,
                   bool_or(to_state IN ('reviewed_ok', 'escalated')) AS went_through_review,
                   bool_or(to_state = 'escalated') AS escalated,
                   bool_or(to_state IN ('kept', 'deleted', 'revised')) AS decided_once,
                   bool_or(to_state = 'deleted' AND from_state IN ('reviewed_ok', 'kept')) AS audit_retired,
                   count(DISTINCT version) AS versions,
                   arg_min(to_state, version * 1000000 + seq) AS origin
            FROM task_transitions GROUP BY task_id),
        passed AS (  -- the latest move into shortcut_passed says whether the filter judged the version
            SELECT task_id, version, reason FROM task_transitions WHERE to_state = 'shortcut_passed'
            QUALIFY seq = max(seq) OVER (PARTITION BY task_id, version))
        SELECT t.task_id, t.tier, t.subcategory, t.lead_time_s, p.revised, p.went_through_review, p.versions,
               p.audit_retired,
               p.escalated, p.escalated AND p.decided_once AS decided,
               p.origin, coalesce(starts_with(s.reason, 'not filtered'), false) AS not_filtered
        FROM latest_tasks t JOIN path p USING (task_id)
        LEFT JOIN passed s ON s.task_id = t.task_id AND s.version = t.version""")}
    rows = []
    for task in latest_states(catalog):
        fact = facts[task["task_id"]]
        end = _end_state(task["state"], task["task_id"] in inherited, fact["audit_retired"])
        # a task counts in every stage its path reached on any version: one escalated and decided at v1,
        # revised and reviewed ok at v2, still went to the group and was decided
        depth = max(_DEPTH.get(end, 0), 6 if fact["decided"] else 5 if fact["escalated"] else
                    4 if end == "retired_after_audit" and fact["went_through_review"] else 0)
        stages = ["tasks", *_FLOW[:depth]] + (["releasable"] if task["state"] in RELEASED_STATES else [])
        rows.append({"task_id": task["task_id"], "version": task["version"], "versions": fact["versions"],
                     "tier": fact["tier"], "subcategory": fact["subcategory"], "author": task["author"],
                     "lead_time_s": fact["lead_time_s"], "origin": fact["origin"], "state": task["state"],
                     "end_state": end, "stages": stages, "revised": fact["revised"],
                     "went_through_review": fact["went_through_review"],
                     "not_filtered": fact["not_filtered"] and "passed_filter" in stages,
                     "unread": "passed_filter" in stages and not fact["not_filtered"] and _unread(
                         verdicts.get((task["task_id"], task["version"]))),
                     "inherited_from": inherited.get(task["task_id"])})
    return rows


def _unread(verdict: dict[str, Any] | None) -> bool:
    return verdict is not None and not read_by_some_inspector(verdict["answers"])


def retired_ids(catalog: Catalog) -> list[dict[str, Any]]:
    """Ids a rename retired (their latest version is `retired`), with the tier and sub-category they had."""
    return catalog.rows("""
        SELECT t.task_id, t.version, t.tier, t.subcategory, t.author FROM latest_tasks t
        JOIN task_states s ON s.task_id = t.task_id AND s.version = t.version
        WHERE s.state = 'retired' ORDER BY t.task_id""")


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def count_cells(tasks: list[dict[str, Any]], retired: int = 0) -> dict[str, Any]:
    """Every cell of the funnel for a group of task outcomes, the check that the end states add up, and
    the paper's rates computed from those cells."""
    cells: dict[str, Any] = {key: 0 for key, _ in (*END_STATES, *STAGES, *PATH)}
    unshown: dict[str, int] = defaultdict(int)
    for task in tasks:
        if task["end_state"] in _DEPTH:
            cells[task["end_state"]] += 1
        else:
            unshown[task["end_state"]] += 1
        for name in task["stages"]:
            cells[name] += 1
        cells["authored_here" if task["origin"] != "imported" else "imported"] += 1
        for name in ("revised", "went_through_review", "not_filtered", "unread"):
            cells[name] += bool(task[name])
    cells["retired"] = retired
    end_sum = sum(cells[key] for key, _ in END_STATES)
    # judged: through the filter, with a verdict some inspector could read
    judged = cells["through_filter"] - cells["not_filtered"] - cells["unread"]
    kept = cells["passed_filter"] - cells["not_filtered"] - cells["unread"]
    return cells | {"end_state_sum": end_sum, "adds_up": end_sum == cells["tasks"], "unshown": dict(unshown),
                    "judged_by_filter": judged, "kept_by_filter": kept, "shortcut_retained": _rate(kept, judged),
                    "deleted_after_review": _rate(cells["deleted"], cells["went_through_review"]),
                    "revised_after_review": _rate(cells["revised"], cells["went_through_review"])}


def summarise(tasks: list[dict[str, Any]], retired: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The funnel of every group: all, per tier, per tier and sub-category; and the annotators."""
    def tier(row: dict[str, Any]) -> str:
        return row["tier"] or "?"

    def sub(row: dict[str, Any]) -> str:
        return f"{tier(row)} {row['subcategory'] or '?'}"

    retired = list(retired)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {"tiers": defaultdict(list),
                                                          "subcategories": defaultdict(list)}
    by_author: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in tasks:
        groups["tiers"][tier(row)].append(row)
        groups["subcategories"][sub(row)].append(row)
        by_author[row["author"] or "?"].append(row)
    for row in retired:  # a group whose only ids were renamed away still shows them
        groups["tiers"].setdefault(tier(row), [])
        groups["subcategories"].setdefault(sub(row), [])
    authors = {a: {"tasks": len(g), "median_lead_time_s": statistics.median(
        [r["lead_time_s"] for r in g if r["lead_time_s"] is not None] or [0.0])} for a, g in sorted(by_author.items())}
    return {"all": count_cells(tasks, len(retired)),
            "tiers": {k: count_cells(v, sum(tier(r) == k for r in retired))
                      for k, v in sorted(groups["tiers"].items())},
            "subcategories": {k: count_cells(v, sum(sub(r) == k for r in retired))
                              for k, v in sorted(groups["subcategories"].items())},
            "authors": authors}


def compute_funnel(catalog: Catalog) -> dict[str, Any]:
    """The funnel of the catalog as it is now (see `summarise`)."""
    return summarise(task_outcomes(catalog), retired_ids(catalog))


def funnel_rows(catalog: Catalog) -> list[dict[str, Any]]:
    """The funnel as a table of plain dicts: one row per group (`level` all, tier or subcategory; `group`
    its name), with every cell (END_STATES, STAGES, PATH keys), the check (`end_state_sum`, `adds_up`,
    `unshown`) and the paper's rates; every value an int, a float, a bool or a string."""
    summary = compute_funnel(catalog)
    groups = [("all", "all", summary["all"])] + [(level, name, cells) for level, key in (
        ("tier", "tiers"), ("subcategory", "subcategories")) for name, cells in summary[key].items()]
    # flat values only (a frame takes them as they are): the states no cell shows as "state: n, ..."
    return [{"level": level, "group": name, **cells, "unshown": ", ".join(
        f"{state}: {n}" for state, n in sorted(cells["unshown"].items()))} for level, name, cells in groups]


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def check_line(total: dict[str, Any]) -> str:
    if total["adds_up"]:
        return f"= {total['end_state_sum']:,} end states for {total['tasks']:,} tasks: adds up"
    hidden = ", ".join(f"{n} in state {state}" for state, n in sorted(total["unshown"].items()))
    return (f"= {total['end_state_sum']:,} end states for {total['tasks']:,} tasks: does NOT add up"
            + (f" ({hidden}, which no cell shows)" if hidden else ""))


def paper_rates(total: dict[str, Any]) -> list[tuple[str, str, int, int, str]]:
    """The paper's three QC rates as (what, key, part, whole, whole's name): each from the funnel's cells."""
    reviewed = total["went_through_review"]
    return [("kept by the shortcut filter", "shortcut_retained", total["kept_by_filter"], total["judged_by_filter"],
             "judged"),
            ("deleted after review", "deleted_after_review", total["deleted"], reviewed, "went through review"),
            ("revised after review", "revised_after_review", total["revised"], reviewed, "went through review")]


def paper_lines(total: dict[str, Any]) -> list[str]:
    return [f"  {name:<30}{percent(total[key]):>7} ({part:,} of {whole:,} {what})   paper {PAPER[key]:.1%}"
            for name, key, part, whole, what in paper_rates(total)]


def funnel_lines(total: dict[str, Any]) -> list[str]:
    """The funnel as the command line prints it."""
    def cells(pairs: tuple[tuple[str, str], ...]) -> list[str]:
        width = max(len(label) for _, label in pairs) + 2
        return [f"  {label:<{width}}{total[key]:>6,}" for key, label in pairs]

    lines = [f"{total['tasks']:,} tasks, each counted once by its latest version, in its current state:",
             *cells(END_STATES)]
    lines += [f"  {check_line(total)}", "Stages (tasks now at or past each):",
              "  " + " → ".join(f"{label} {total[key]:,}" for key, label in STAGES[:-1])
              + f"; {STAGES[-1][1]} {total[STAGES[-1][0]]:,}", "On the way:"]
    lines += cells(PATH)
    return [*lines, "Beside the paper:", *paper_lines(total)]


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


@stage("qc-report", command="curate qc report",
       reads=("tasks", "task_transitions", "shortcut_verdicts", "shortcut_decisions"), writes=(),
       summary="the QC funnel (each task once, in its current state) with the paper's rates, per tier and "
       "sub-category; annotator throughput", files=("out: report file",))
def qc_report(run: StageRun, path: Path) -> dict[str, Any]:
    summary = compute_funnel(run.db)
    run.params.update(path=str(path))
    run.counts.update({k: v for k, v in summary["all"].items() if isinstance(v, int) and not isinstance(v, bool)})
    write_funnel_report(path, summary)
    return summary

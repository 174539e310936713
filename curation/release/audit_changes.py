"""What the group's task audits (`curate qc audit-tasks`, `grade/task_audit.py`) changed since a parent release:
each task of the parent whose released version the group fixed, revised or retired, with the evidence it was
decided on and who decided it (by pseudonym, as everywhere in a release).

Such a change is a fix of the benchmark, not a new benchmark: the version rule (`semver.required_level`) counts
it as a patch, and the CHANGELOG lists it with its evidence. The evidence's format (the per-task table's row, the
flags' rules, sample episodes) is read here and shown to the group by `evidence_facts`, one place for both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from curation.core.catalog import Catalog
from curation.qc.adjudicate import author_answer, decision_reason
from curation.release.contents import pseudonym


@dataclass(frozen=True)
class AuditedChange:
    task_id: str
    decision: str             # fix_answer | revise | retire
    audited_release: str
    version: int              # the released version audited
    revised_version: int | None
    decided_by: str           # pseudonyms
    why: str | None           # reasons and note
    evidence: list[tuple[str, str]]
    before: str               # the answer key or expected end state
    after: str | None


def evidence_facts(evidence: dict[str, Any]) -> list[tuple[str, str]]:
    """The evidence a task was audited on, as (what, value) lines: its flags with their rules and its row of the
    per-task table."""
    row = evidence["row"]
    facts = [(f"flag {name}", rule) for name, rule in evidence["flags"].items()]
    facts += [("solve rate", f"{row['solve_rate']:.0%} ({row['solved']} of {row['episodes']} episodes, "
                             f"{row['models']} models, {row['models_solving']} solving)"),
              ("difficulty / discrimination", f"{_num(row['difficulty'])} / {_num(row['discrimination'])}")]
    if row.get("wrong_answer"):
        facts.append(("most common wrong answer", f"{row['wrong_answer']} (the most common answer of "
                                                  f"{row['models_same_wrong']} of {row['models_answering']} models)"))
    if row.get("unmet_check"):
        facts.append(("most often unmet check", f"{row['unmet_check']} (in {row['unmet_episodes']} of "
                                                f"{row['known_state_episodes']} failed episodes)"))
    if row.get("idle_like_passes"):
        facts.append(("do-nothing-like episodes passing", str(row["idle_like_passes"])))
    facts.append(("proofs: perfect agent / do-nothing", f"{row['perfect_proof']} / {row['idle_proof'] or '–'}"))
    return facts


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def audited_changes(catalog: Catalog, parent: str | None) -> dict[str, AuditedChange]:
    """Task id -> the audit decision that changed or removed its version released in `parent`."""
    if parent is None:
        return {}
    rows = catalog.rows("""
        SELECT d.* FROM audit_decisions d JOIN (SELECT DISTINCT task_id, task_version FROM release_tasks
                                                WHERE version = ?) r
          ON r.task_id = d.task_id AND r.task_version = d.task_version
        WHERE d.decision <> 'keep' ORDER BY d.task_id""", [parent])
    out = {}
    for d in rows:
        versions = {t["version"]: t for t in catalog.rows("SELECT * FROM tasks WHERE task_id = ? AND version IN "
                                                          "(?, ?)", [d["task_id"], d["task_version"],
                                                                     d["revised_version"] or -1])}
        after = versions.get(d["revised_version"])
        people = ", ".join(pseudonym(catalog, p.strip()) or "?" for p in str(d["decided_by"] or "").split(","))
        why = decision_reason(d["reasons"], d["note"])
        out[d["task_id"]] = AuditedChange(
            d["task_id"], d["decision"], d["release"], d["task_version"], d["revised_version"], people, why,
            evidence_facts(json.loads(d["evidence"])), author_answer(versions[d["task_version"]]),
            author_answer(after) if after else None)
    return out


def changelog_lines(changes: dict[str, AuditedChange]) -> list[str]:
    """The CHANGELOG's section on fixes decided in an audit, each with its evidence and who decided."""
    if not changes:
        return []
    lines = [f"## Fixed after an audit of how models answered ({len(changes)})", ""]
    for c in changes.values():
        what = {"fix_answer": "answer fixed", "revise": "revised", "retire": "retired"}[c.decision]
        lines.append(f"- {c.task_id} v{c.version}: {what} in the audit of v{c.audited_release}, decided by "
                     f"{c.decided_by}" + (f"; why: {c.why}" if c.why else ""))
        if c.after is not None:
            lines += [f"  - answer before: {' '.join(c.before.split())}",
                      f"  - answer after (v{c.revised_version}): {' '.join(c.after.split())}"]
        lines += [f"  - evidence: {what_}: {value}" for what_, value in c.evidence]
    return lines + [""]

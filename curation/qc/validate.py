"""`curate qc validate`: the task rules over the catalog's tasks (or a runner directory), as a gate.

Every defect is (task id, severity, stable code, one line showing the offending value); the rules
and their severities are `curation.tasks.rules`, the same every other door uses. The catalog's
latest versions are judged whatever state they are in: a version with an error goes to
`needs_fix`, even one that was reviewed or kept before the rule existed; an imported version
with none becomes `valid`. The command fails while any task needs a fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curation.core.config import FeedsConfig, SourceConfig
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.playable import rule_context
from curation.tasks.lifecycle import FINAL_OUT, move
from curation.tasks.record import from_catalog, from_runner
from curation.tasks.rules import Defect, RuleContext, check_tasks, errors_by_task, reason_text
from curation.tasks.runner_format import catalog_task_rows


def validate_tasks(elements: list[dict[str, Any]], ctx: RuleContext | None = None) -> list[Defect]:
    """Every defect of runner elements (each may carry `_file`, the runner file it came from)."""
    return check_tasks([from_runner(e) for e in elements], ctx)


@dataclass
class Validation(RunResult):
    tasks: int = 0
    defects: list[Defect] = field(default_factory=list)
    # task versions in needs_fix that the rules cannot judge again (an annotation's own problems):
    # (task id, version, the reason recorded when it was sent back)
    left_to_fix: list[tuple[str, int, str]] = field(default_factory=list)


@stage("qc-validate", command="curate qc validate",
       reads=("tasks", "feeds", "videos", "media_files", "media_outputs", "task_transitions", "comments"),
       writes=("task_transitions",),
       summary="the task rules over every latest task version: an error sends it to needs_fix whatever its "
       "state; imported tasks become valid or needs_fix")
def validate_catalog(run: StageRun, config: FeedsConfig, sources: dict[str, SourceConfig] | None = None
                     ) -> Validation:
    catalog = run.db
    rows = [r for r in catalog_task_rows(catalog) if r["state"] not in FINAL_OUT]
    # an authored version sent back keeps its annotation's own reasons; only the author's fix settles it
    settled_by_author = [r for r in rows if r["state"] == "needs_fix" and r["origin"] != "imported"]
    judged = [r for r in rows if not (r["state"] == "needs_fix" and r["origin"] != "imported")]
    ctx = rule_context(catalog, sources, config)
    defects = check_tasks([from_catalog(r) for r in judged], ctx)
    errors = errors_by_task(defects)
    result = Validation(run.counts, tasks=len(rows), defects=defects)
    moved = {"to_needs_fix": 0, "to_valid": 0}
    for row in judged:
        found = errors.get(row["task_id"])
        if found and row["state"] != "needs_fix":
            move(run, row["task_id"], row["version"], "needs_fix", reason=reason_text(found), who="qc-validate")
            moved["to_needs_fix"] += 1
        elif not found and row["state"] in ("imported", "needs_fix"):
            move(run, row["task_id"], row["version"], "valid", who="qc-validate",
                 reason="the task rules pass" + (" now" if row["state"] == "needs_fix" else ""))
            moved["to_valid"] += 1
    for row in settled_by_author:
        reason = catalog.scalar("SELECT reason FROM task_transitions WHERE task_id = ? AND version = ? AND "
                                "to_state = 'needs_fix' ORDER BY seq DESC LIMIT 1", [row["task_id"], row["version"]])
        result.left_to_fix.append((row["task_id"], row["version"], reason or ""))
    severities = [d.severity for d in defects]
    run.counts.update(tasks=len(rows), errors=severities.count("error"), warnings=severities.count("warning"),
                      notes=severities.count("info"), needs_fix=len(errors) + len(settled_by_author), **moved)
    return result


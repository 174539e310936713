"""`curate qc accept-imported VERSION --reason TEXT`: carry a published release forward.

A team that takes over a published benchmark does not review it a second time: it records that the
release's tasks were inherited, by whom, when and why. Each task version the release recorded that
passes the task rules moves to `kept` (through `valid` if it was not validated yet), with the reason
"inherited from vX: …"; a task with an error goes to (or stays in) `needs_fix` and is listed. Tasks
revised here since the import are this team's own and are left to its QC.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field

from curation.core.config import FeedsConfig, SourceConfig
from curation.core.errors import PrerequisiteError, UsageError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.playable import rule_context
from curation.tasks.lifecycle import move
from curation.tasks.record import from_catalog
from curation.tasks.rules import Defect, check_tasks, errors_by_task, reason_text
from curation.tasks.runner_format import catalog_task_rows


@dataclass
class Acceptance(RunResult):
    needs_fix: dict[str, list[Defect]] = field(default_factory=dict)
    revised_here: list[str] = field(default_factory=list)


def _check_reason(version: str, reason: str, *_: object, **__: object) -> None:
    if not reason or not reason.strip():
        raise UsageError("say why the release is accepted as it is: --reason \"...\"")


@stage("qc-accept-imported", command="curate qc accept-imported VERSION --reason TEXT", check=_check_reason,
       reads=("releases", "release_tasks", "tasks", "task_transitions", "feeds", "videos", "media_files",
              "media_outputs", "comments"),
       writes=("task_transitions",),
       summary="an imported release's tasks that pass the task rules kept as inherited (who, when, why); "
       "the rest needs_fix")
def accept_imported(run: StageRun, version: str, reason: str, who: str | None = None,
                    sources: dict[str, SourceConfig] | None = None, feeds: FeedsConfig | None = None) -> Acceptance:
    catalog = run.db
    target = version.strip().removeprefix("v")
    origin = catalog.scalar("SELECT origin FROM releases WHERE version = ?", [target])
    if origin != "imported":
        imported = [r[0] for r in catalog.con.execute(
            "SELECT version FROM releases WHERE origin = 'imported' ORDER BY 1").fetchall()]
        raise PrerequisiteError(f"release {target} is {'built here' if origin else 'not recorded'}: only an imported "
                                f"release is accepted as inherited (imported: {', '.join(imported) or 'none'}; "
                                "`curate release import-livingscreen DIR --version V` records one)")
    who = who or getpass.getuser()
    run.params.update(version=target, reason=reason, who=who)
    shipped = dict(catalog.con.execute("SELECT task_id, task_version FROM release_tasks WHERE version = ? AND "
                                       "task_version IS NOT NULL", [target]).fetchall())
    latest = {r["task_id"]: r for r in catalog_task_rows(catalog) if r["task_id"] in shipped}
    result = Acceptance(run.counts)
    ours = [r for r in latest.values() if r["version"] != shipped[r["task_id"]]]
    result.revised_here = sorted(r["task_id"] for r in ours)
    rows = [r for r in latest.values() if r["version"] == shipped[r["task_id"]]]
    errors = errors_by_task(check_tasks([from_catalog(r) for r in rows], rule_context(catalog, sources, feeds)))
    counts = {"tasks": len(shipped), "kept": 0, "already_kept": 0, "needs_fix": 0, "revised_here": len(ours),
              "not_imported": 0}
    for row in rows:
        task_id, task_version, state = row["task_id"], row["version"], row["state"]
        found = errors.get(task_id)
        if found:
            result.needs_fix[task_id] = found
            counts["needs_fix"] += 1
            if state != "needs_fix":
                move(run, task_id, task_version, "needs_fix", reason=reason_text(found), who="qc-accept-imported")
        elif state == "kept":
            counts["already_kept"] += 1
        elif state in ("imported", "needs_fix", "valid") and row["origin"] == "imported":
            if state != "valid":
                move(run, task_id, task_version, "valid", reason="the task rules pass", who="qc-accept-imported")
            move(run, task_id, task_version, "kept", reason=f"inherited from v{target}: {reason.strip()}", who=who)
            counts["kept"] += 1
        else:  # already in this team's QC (filtered, reviewed): its outcome there stands
            counts["not_imported"] += 1
    run.counts.update(counts)
    return result

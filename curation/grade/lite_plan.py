"""The Lite choice for a release being built (`release build --lite N`): the graded episodes of a recorded release
(`evidence.release_evidence`), the tasks of the new release that ship unchanged since, and `lite.choose_lite` over
them. It lives with grading, which reads releases; the release build takes the planner as an argument
(`release/lite_config.py`'s `LitePlanner`) and writes what it returns."""

from __future__ import annotations

from functools import partial
from typing import Any

from curation.core.catalog import Catalog
from curation.core.errors import PrerequisiteError, UsageError
from curation.grade.evidence import release_evidence
from curation.grade.lite import MIN_MODELS, choose_lite
from curation.grade.task_table import Evidence
from curation.release.lite_config import NOT_ELIGIBLE, LitePlan, LitePlanner, LiteRequest, evidence_version


def lite_planner(n: int, evidence: str | None = None, seed: int = 0) -> LitePlanner:
    """`--lite N [--lite-evidence X.Y.Z] [--seed S]` as what `build_release(lite=...)` calls; a bad N or version
    is refused here, before anything is built."""
    return partial(plan_lite, request=LiteRequest(n, evidence, seed))


def plan_lite(catalog: Catalog, tasks: list[dict[str, Any]], parent: str | None, version: str, *,
              request: LiteRequest) -> LitePlan:
    """Choose the Lite tasks of the release `version` (its task rows, as `contents.gather` gives them)."""
    evidence = evidence_version(catalog, request, parent)
    if not catalog.scalar("SELECT count(*) FROM episode_grades WHERE release = ? AND sr IS NOT NULL", [evidence]):
        raise PrerequisiteError(f"--lite: v{evidence} has no graded episodes in the catalog: grade the runner's logs "
                                f"of it first (`curate grade LOGS --release v{evidence} --model NAME`)")
    graded = release_evidence(catalog, evidence)
    shipped_as = dict(catalog.con.execute("SELECT task_id, content_sha256 FROM release_tasks WHERE version = ? AND "
                                          "task_id IS NOT NULL", [evidence]).fetchall())
    not_eligible: dict[str, list[str]] = {why: [] for why in NOT_ELIGIBLE}
    for task in tasks:
        task_id = task["task_id"]
        why = ("not_in_evidence" if task_id not in shipped_as else "changed"
               if shipped_as[task_id] != task["content_sha256"] else "not_graded" if task_id not in graded.tasks
               else None)
        if why:
            not_eligible[why].append(task_id)
    unfit = {t for ids in not_eligible.values() for t in ids}
    keep = {t["task_id"] for t in tasks} - unfit  # (a graded task this release removed is not in it)
    eligible = Evidence({t: graded.tasks[t] for t in sorted(keep)}, [e for e in graded.episodes if e.task_id in keep])
    models = sorted({e.model for e in eligible.episodes})
    if len(models) < MIN_MODELS:
        raise PrerequisiteError(f"--lite: v{evidence} has graded episodes of {len(models)} models on the tasks this "
                                f"release ships unchanged; the Lite estimate's error is measured by leaving each "
                                f"model out in turn, which needs at least {MIN_MODELS} (`curate grade LOGS --release "
                                f"v{evidence} --model NAME`)")
    if request.n > len(eligible.tasks):
        raise UsageError(f"--lite {request.n}: only {len(eligible.tasks)} of v{version}'s {len(tasks)} tasks are "
                         f"eligible (shipped unchanged since v{evidence} and graded there); choose N from 1 to "
                         f"{len(eligible.tasks)}")
    choice = choose_lite(eligible, request.n, request.seed)
    return LitePlan(request, evidence, choice, models, {why: ids for why, ids in not_eligible.items() if ids})

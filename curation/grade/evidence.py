"""What the statistics read, from what grading holds: each graded episode as an `Outcome` (`stats.py`) and as
`EpisodeEvidence` (`task_table.py`), each release task as `TaskFacts` with its proofs' verdicts.

Runs: the catalog keeps one episode per release, model and task, so a model's repeated runs are graded under
`name#run` (`--model qwen#1 --model qwen#2`, `stats.split_run`) and pooled here into one model.

The proofs' verdicts are the task rules' own (`curation/tasks/perfect.py`, `curation/tasks/idle.py`), computed on
the release's runner element with what the catalog knows of its videos' lengths, as `collect.release_tasks`
computes them for the defects: the catalog does not store them. A label task has no plan to play: a perfect
agent answers its key, so its perfect proof passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curation.env.profile import default_profile
from curation.grade.stats import Outcome, split_run
from curation.grade.task_table import EpisodeEvidence, Evidence, TaskFacts
from curation.tasks.idle import IdleFacts, idle_verdict
from curation.tasks.perfect import prove_perfect

if TYPE_CHECKING:
    from curation.core.catalog import Catalog


def proof_verdicts(task: dict[str, Any], facts: IdleFacts) -> tuple[str, str | None]:
    """(perfect proof, do-nothing proof) of one runner element: passes | fails | undecided | ungradable."""
    if task["eval_type"] != "platform":
        return "passes", None
    checks, feed = task.get("eval_config") or [], task.get("video_feed") or []
    perfect = prove_perfect(checks, feed, facts)
    shown = "ungradable" if perfect.ungradable else _verdict(perfect.passed)
    return shown, _verdict(idle_verdict(checks, feed, facts).passes)


def _verdict(passed: bool | None) -> str:
    return "undecided" if passed is None else "passes" if passed else "fails"


def task_facts(tasks: dict[str, dict[str, Any]], durations: dict[str, float | None]) -> dict[str, TaskFacts]:
    """Each release task (runner elements by id, as `collect.release_tasks` gives them) with its proofs."""
    from curation.tasks.runner_format import subcategory_of

    facts = IdleFacts({v: d for v, d in durations.items() if d}, None, default_profile())
    out = {}
    for task_id, task in tasks.items():
        perfect, idle = proof_verdicts(task, facts)
        key = str((task.get("eval_config") or [{}])[0].get("answer", "")).strip() if task["eval_type"] == "label" \
            else None
        out[task_id] = TaskFacts(task_id, task["tier"], subcategory_of(task_id), task["eval_type"], key or None,
                                 perfect, idle)
    return out


def outcomes_of(rows: list[dict[str, Any]]) -> list[Outcome]:
    """Graded rows (`curate grade`'s, or `episode_grades`') with a known SR, runs pooled per model."""
    out = []
    for r in rows:
        if r["sr"] is None:
            continue
        model, run = split_run(r["model"])
        out.append(Outcome(model, run, r["task_id"], r["tier"], r["subcategory"], float(r["sr"]), r.get("ns"),
                           r.get("wr")))
    return out


def evidence_of(rows: list[dict[str, Any]], facts: dict[str, TaskFacts]) -> Evidence:
    """Graded rows as evidence, with each episode's unmet checks and acting calls as grading found them
    (`metrics.Grade`); None where a row does not know them (a catalog row graded before schema 26)."""
    episodes = []
    for r in rows:
        if r["sr"] is None or r["task_id"] not in facts:
            continue
        model, run = split_run(r["model"])
        unmet = r.get("unmet_checks")
        episodes.append(EpisodeEvidence(model, run, r["task_id"], r["sr"] == 1.0, r.get("answer"),
                                        tuple(unmet) if unmet is not None else None, r.get("acting_calls")))
    return Evidence({t: facts[t] for t in {e.task_id for e in episodes}}, episodes)


def release_evidence(catalog: Catalog, version: str, include_defective: bool = False) -> Evidence:
    """Every graded episode of a release in the catalog as evidence (what `lite.choose_lite` and the task audit
    read), with the unmet checks and acting calls `curate grade` stored (NULL, from an older grade: unknown)."""
    from curation.corpus.visible import video_durations
    from curation.release.livingscreen import runnable_elements

    tasks = {t["task_id"]: t for t in runnable_elements(catalog, version)}
    durations = video_durations(catalog, sorted({v for t in tasks.values() for v in t["video_feed"]}))
    rows = [r for r in catalog.rows("SELECT * FROM episode_grades WHERE release = ?", [version])
            if include_defective or not r["defective"]]
    return evidence_of(rows, task_facts(tasks, durations))

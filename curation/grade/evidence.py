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

from curation.env.checks import atoms
from curation.env.episodes import Episode
from curation.env.profile import default_profile
from curation.env.replay import rebuild_state
from curation.grade.metrics import Grade
from curation.grade.stats import Outcome, split_run
from curation.grade.task_table import ACTING_TOOLS, EpisodeEvidence, Evidence, TaskFacts
from curation.tasks.idle import IdleFacts, idle_verdict
from curation.tasks.perfect import prove_perfect

if TYPE_CHECKING:
    from curation.core.catalog import Catalog


def acting_calls(episode: Episode) -> int:
    return sum(c.name in ACTING_TOOLS and c.problem is None for c in episode.calls)


def unmet_checks(episode: Episode, task: dict[str, Any], grade: Grade) -> list[str] | None:
    """The checks (atomic conditions, as `curation.env.checks.atoms` names them) not met at the end of a platform
    episode whose SR was read from its end state; None when SR came from elsewhere (the logged result)."""
    if task["eval_type"] != "platform" or grade.sr_from not in ("state", "replay"):
        return None
    state, current, replayed = episode.state, None, False
    if grade.sr_from == "replay":  # the same state grading read: rebuilt from the calls (metrics.grade_episode)
        rebuilt = rebuild_state(episode.calls, max(len(task.get("video_feed") or []), 1))
        state, current, replayed = rebuilt.state, rebuilt.current, True
    if state is None:
        return None
    return [name for name, held in atoms(task.get("eval_config") or [], state, default_profile(), current, replayed)
            if held is False]


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
    """Graded rows as evidence; `unmet_checks` and `acting_calls` where the rows carry them (this run's episodes:
    the catalog keeps neither)."""
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
    """Every graded episode of a release in the catalog as evidence (what `lite.choose_lite` reads when a release
    is built from graded evidence); the unmet checks and acting calls, which the catalog does not keep, are unknown."""
    from curation.corpus.visible import video_durations
    from curation.release.livingscreen import runnable_elements

    tasks = {t["task_id"]: t for t in runnable_elements(catalog, version)}
    durations = video_durations(catalog, sorted({v for t in tasks.values() for v in t["video_feed"]}))
    rows = [r for r in catalog.rows("SELECT * FROM episode_grades WHERE release = ?", [version])
            if include_defective or not r["defective"]]
    return evidence_of(rows, task_facts(tasks, durations))

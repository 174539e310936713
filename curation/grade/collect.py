"""The one episode loader behind `curate grade` and `curate rewards build`: which logs of a logs
folder are episodes of the release's tasks, which are rejected and why, and which release tasks
were played at all.

A log is rejected when it cannot be read, names a task the release does not hold, is a second log
of a task already read for the same model, or carries another instruction than the release's task
(compared with whitespace normalised: a log from another release, or a task edited since). A task
folder without a `log.json` is a crash: the runner makes the folder before it plays and writes the
log only when the episode ends. What cannot be read as it stands (a symlinked task folder, a log.json
linked from outside the logs folder, a name that is not UTF-8: `folders.py`) is rejected with its line
too, so logs read = graded + rejected. Per model, every release task is graded, crashed, rejected or
missing (no folder at all).

A task is defective when the task rules find an error in its runner element, or when the catalog
holds its version in a state that is not released (e.g. sent back to `needs_fix` after shipping);
the reasons go with every episode of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.errors import InputError
from curation.core.stage import StageRun
from curation.core.storable import one_line, shown_name, storable, value_problem
from curation.env.episodes import Episode, EpisodeError, read_episode
from curation.grade.folders import scan_logs
from curation.release.livingscreen import runnable_elements
from curation.tasks.lifecycle import RELEASED_STATES
from curation.tasks.record import from_runner
from curation.tasks.rules import ERROR, RuleContext, check_task
from curation.tasks.runner_format import RUNNER_FILES
from curation.tasks.syntax import split_instruction

STATUSES = ("graded", "crashed", "rejected", "missing")


@dataclass
class Played:
    model: str
    log: Path
    episode: Episode
    task: dict[str, Any]


@dataclass
class Collected:
    played: list[Played] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)   # model, log, reason
    coverage: list[dict[str, Any]] = field(default_factory=list)   # model, task_id, tier, status, reason
    logs: int = 0


def squash(text: str) -> str:
    return " ".join(text.split())


def instruction_problem(logged: str, task: dict[str, Any]) -> str | None:
    """Why a log's instruction is not the release task's (None: it is, whitespace aside)."""
    wanted = str(task.get("instruction") or "")
    if squash(logged) == squash(wanted):
        return None
    if task.get("eval_type") == "label":
        (q1, o1), (q2, o2) = split_instruction(logged), split_instruction(wanted)
        if squash(q1) == squash(q2):
            return (f"the log's options {' '.join(f'{k}:{v}' for k, v in sorted(o1.items())) or '(none)'} are not "
                    f"the release's {' '.join(f'{k}:{v}' for k, v in sorted(o2.items()))}")
    return f"the log's instruction {_clip(logged)!r} is not the release's {_clip(wanted)!r}"


def _clip(text: str, n: int = 40) -> str:
    text = squash(text)
    return text if len(text) <= n else text[:n] + "…"


def release_tasks(run: StageRun, version: str) -> dict[str, dict[str, Any]]:
    """The release's runnable tasks by id, each with `defective`: its reasons ("" when none)."""
    tasks = {t["task_id"]: t for t in runnable_elements(run.db, version)}
    durations = dict(run.db.con.execute("SELECT video_id, duration_s FROM videos WHERE duration_s IS NOT NULL AND "
                                        "list_contains(?, video_id)",
                                        [sorted({v for t in tasks.values() for v in t["video_feed"]})]).fetchall())
    ctx = RuleContext(durations=durations)
    states = {r["task_id"]: (r["task_version"], r["state"]) for r in run.db.rows(
        "SELECT r.task_id, r.task_version, s.state FROM release_tasks r LEFT JOIN task_states s "
        "ON s.task_id = r.task_id AND s.version = r.task_version WHERE r.version = ?", [version])}
    for task_id, task in tasks.items():
        record = from_runner({**task, "_file": RUNNER_FILES[task["tier"]]})
        reasons = [f"{d.code}: {d.message}" for d in check_task(record, ctx) if d.severity == ERROR]
        task_version, state = states.get(task_id, (None, None))
        if task_version is not None and state not in RELEASED_STATES:
            hint = "; `curate qc accept-imported` carries an imported release forward" if state == "imported" else ""
            reasons.append(f"v{task_version} is {state or 'in no state'} in the catalog, not released "
                           f"({' or '.join(RELEASED_STATES)}){hint}")
        task["defective"] = "; ".join(reasons)
    return tasks


def episode_text_problem(episode: Episode) -> str | None:
    """Why text a log holds cannot be stored with its grade (a lone surrogate, which JSON can spell), or None."""
    for n, call in enumerate(episode.calls, start=1):
        if problem := value_problem(call.name, f"the tool name of call {n}"):
            return problem
        for key, value in call.args.items():
            if problem := value_problem(key, f"an argument name of call {n}") or value_problem(
                    value, f"argument {storable(key)} of call {n} ({call.name})"):
                return problem
    return value_problem(episode.instruction, "the instruction") or value_problem(episode.state, "state.json")


def collect(run: StageRun, logs: list[tuple[str, Path]], tasks: dict[str, dict[str, Any]], target: str,
            what: str) -> Collected:
    """Every log under each model's folder, read once: episodes to use, rejects (also recorded in the
    catalog's rejects under the calling stage) and each release task's coverage per model."""
    out = Collected()
    folders: dict[str, list[Path]] = {}  # one model's category folders, given one by one, are one model
    for model, folder in logs:
        folders.setdefault(model, []).append(folder)
    for model, given in folders.items():
        status = _collect_model(run, out, model, given, tasks, target, what)
        for task_id, task in tasks.items():
            state, reason = status.get(task_id, ("missing", None))
            out.coverage.append({"model": model, "task_id": task_id, "tier": task["tier"], "status": state,
                                 "reason": reason, "defective": task["defective"]})
    return out


def _collect_model(run: StageRun, out: Collected, model: str, given: list[Path], tasks: dict[str, dict[str, Any]],
                   target: str, what: str) -> dict[str, tuple[str, str | None]]:
    """One model's logs into `out`; returns each task's status and why."""
    status: dict[str, tuple[str, str | None]] = {}
    first: dict[str, Path] = {}

    def rejected(path: Path, task_folder: str, reason: str) -> None:
        # paths as shown (a byte that is not UTF-8 as `\xff`): the catalog and summary.json keep them as text, and
        # each summary line says one thing
        shown, task_folder, reason = shown_name(path), shown_name(task_folder), one_line(reason)
        run.reject(source=model, raw_ref=shown, reason=f"{shown}: {reason}", raw=b"",
                   record_id=f"{model}/{task_folder}")
        out.rejected.append({"model": model, "log": shown, "reason": reason})
        if task_folder in tasks and status.get(task_folder, ("",))[0] != "graded":
            status[task_folder] = ("rejected", reason)

    for folder in given:
        found = scan_logs(folder, tasks)
        if not found.logs and not found.crashed and not found.refused:
            raise InputError(f"{shown_name(folder)} holds no episode logs (<task_id>/log.json): give the folder the "
                             "runner wrote, e.g. logs/<model>/<category>")
        for task_id, crashed_in in found.crashed.items():
            status.setdefault(task_id, ("crashed", f"{shown_name(crashed_in)} holds no log.json"))
        for path, reason in found.refused:  # a symlink not followed, a name that is not UTF-8: one line each
            out.logs += 1
            rejected(path, (path.parent if path.name == "log.json" else path).name, reason)
        for log in run.progress(found.logs, f"{what} {model}"):
            out.logs += 1
            try:
                episode = read_episode(log)
                task = tasks.get(episode.task_id)
                if task is None:
                    raise EpisodeError(f"{log}: task {episode.task_id} is not in release {target}")
                if episode.task_id in first:
                    raise EpisodeError(f"{log}: a second log of {episode.task_id} for {model} "
                                       f"(the first: {first[episode.task_id]})")
                problem = instruction_problem(episode.instruction, task) or episode_text_problem(episode)
                if problem:
                    raise EpisodeError(f"{log}: {problem}")
            except EpisodeError as exc:
                rejected(log, log.parent.name, storable(str(exc).removeprefix(f"{log}: ")))
                continue
            first[episode.task_id] = log
            status[episode.task_id] = ("graded", None)
            run.clear_rejects(record_id=f"{model}/{log.parent.name}")
            out.played.append(Played(model, log, episode, task))
    return status

"""Cross-annotator review, the assignment part: every task version that passed the shortcut
filter goes to exactly one reviewer who is not its author.

Deterministic for a seed, load-balanced (the least-loaded eligible reviewer takes the next
task; with three or more reviewers who author alike, loads differ by at most one), and stable:
a task version keeps the reviewer it was given, so re-running changes nothing and new tasks
only add to the loads. A new version of a task may go to someone else.
"""

from __future__ import annotations

import hashlib
import html
import json
from functools import partial
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.errors import UsageError
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import load_feed
from curation.labelstudio.accounts import ExportResult
from curation.labelstudio.people import check_people, split_names
from curation.labelstudio.projects import feedback_text, read_fields, update_task_data
from curation.labelstudio.render import list_fields, render_feed, state_text
from curation.labelstudio.workspace import fresh_answers, open_session, person_project, send_missing
from curation.tasks.lifecycle import move, state_of
from curation.tasks.rules import end_state_errors
from curation.tasks.syntax import parse_platform_state, render_platform_state
from curation.tasks.taxonomy import load_taxonomy

TaskKey = tuple[str, int]  # (task_id, version)


def _rank(seed: int, *parts: object) -> str:
    return hashlib.sha256(":".join(str(p) for p in (seed, *parts)).encode()).hexdigest()


def assign_reviewers(tasks: dict[TaskKey, str], reviewers: list[str], seed: int,
                     previous: dict[TaskKey, str] | None = None) -> dict[TaskKey, str]:
    """`tasks` maps each task version to its author; returns task version -> reviewer."""
    reviewers = sorted(set(reviewers))
    if len(reviewers) < 2:
        raise UsageError("review needs at least two reviewers, so that nobody reviews their own task")
    assigned = {key: who for key, who in (previous or {}).items()
                if key in tasks and who in reviewers and who != tasks[key]}
    load = {r: sum(1 for who in assigned.values() if who == r) for r in reviewers}
    for key in sorted((k for k in tasks if k not in assigned), key=lambda k: _rank(seed, *k)):
        eligible = [r for r in reviewers if r != tasks[key]]
        if not eligible:
            raise UsageError(f"{key[0]} v{key[1]}: every reviewer is its author")
        chosen = min(eligible, key=lambda r: (load[r], _rank(seed, *key, r)))
        assigned[key] = chosen
        load[chosen] += 1
    return assigned


# ---- the review stages: `curate qc review export | import` ----------------------------------

PURPOSE = "review"
FLAGS = ("ambiguous", "poorly_worded", "disagree", "other")


def task_html(task: dict[str, Any]) -> str:
    """What the reviewer reads: the instruction and its options, never the author's answer."""
    options = json.loads(task["options"]) if task["options"] else {}
    listed = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in options.items())
    kind = ("Choose the answer / 请选择答案" if task["eval_type"] == "label"
            else "Write the end state the agent should reach / 请写出智能体应达到的最终状态")
    return (f'<div class="ls-task"><div class="ls-meta">{html.escape(task["tier"] or "")} · '
            f'{html.escape(task["subcategory"] or "")} · {kind}</div>'
            f'<p><b>{html.escape(task["instruction"] or "")}</b></p>' + (f"<ul>{listed}</ul>" if listed else "")
            + "</div>")


def reviewable(catalog: Catalog) -> list[dict[str, Any]]:
    """Latest versions that passed the filter (an older version an author has since edited is not reviewed)."""
    return catalog.rows("SELECT t.* FROM latest_tasks t JOIN task_states s ON s.task_id = t.task_id "
                        "AND s.version = t.version WHERE s.state = 'shortcut_passed' ORDER BY t.task_id")


def is_latest(catalog: Catalog, task_id: str, version: int) -> bool:
    return catalog.scalar("SELECT max(version) FROM tasks WHERE task_id = ?", [task_id]) == version


def _check_reviewers(reviewers: list[str], *_: Any, add: list[str] | None = None, **__: Any) -> None:
    if len(set(split_names(reviewers)) | set(split_names(add))) < 2:
        raise UsageError("review needs at least two reviewers, so that nobody reviews their own task: "
                         "--reviewers alice,bob")


@stage("qc-review-export", command="curate qc review export --reviewers a,b,c", batched=True,
       reads=("tasks", "task_transitions", "feeds", "videos", "comments", "media_outputs", "ls_projects",
              "qc_projects", "qc_items", "people"),
       writes=("qc_projects", "qc_items", "people"), check=_check_reviewers,
       summary="every shortcut-passed task to one reviewer who is not its author, blind (no answer shown)")
def export_reviews(run: StageRun, reviewers: list[str], seed: int = 0, media_root: Path | None = None,
                   passwords: Path | None = None, add: list[str] | None = None) -> ExportResult:
    """`reviewers` must be people the catalog knows; `add` names new people (accounts made here)."""
    catalog = run.db
    people = check_people(catalog, split_names(reviewers), split_names(add), "reviewer")
    tasks = {(t["task_id"], t["version"]): t for t in reviewable(catalog)}
    previous = {(r["task_id"], r["task_version"]): r["person"] for r in catalog.rows(
        "SELECT DISTINCT task_id, task_version, person FROM qc_items WHERE purpose = ?", [PURPOSE])}
    assigned = assign_reviewers({k: t["author"] for k, t in tasks.items()}, people, seed, previous)
    run.params.update(reviewers=people, added=split_names(add), seed=seed, tasks=len(tasks))
    result = ExportResult(run.counts)
    run.counts.update(tasks=len(tasks), sent=0, already_sent=0, accounts_created=0,
                      per_reviewer={p: sum(1 for r in assigned.values() if r == p) for p in people})
    session = open_session(passwords)
    media = media_root or Path("build/media")
    for person in people:
        mine = [tasks[k] for k, who in sorted(assigned.items()) if who == person]
        if not mine:
            continue
        with person_project(run, session, result, PURPOSE, person, resource_text("review.xml"),
                            f"LivingScreen review · {person}", "别人写的任务：请独立作答，有问题就勾选标记。指南："
                            "任务上方的 Instructions 按钮。 / Tasks other annotators wrote: answer each one yourself "
                            "and flag what is wrong. The guide: the Instructions button above each task.",
                            media) as project_id:
            send_missing(run, session, project_id, PURPOSE, person,
                         {f"{t['task_id']}@v{t['version']}": partial(_review_item, catalog, t, media) for t in mine},
                         f"the review tasks for {person}")
    return result


def _review_item(catalog: Catalog, task: dict[str, Any], media: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    feed = load_feed(catalog, task["feed_id"], task["feed_version"])
    data = {"task_ref": f"{task['task_id']} · v{task['version']} · {feed.feed_id} v{feed.version}",
            "task_html": task_html(task), "feed_html": render_feed(catalog, feed, media), "feedback": "",
            "task_id": task["task_id"], "task_version": task["version"], **list_fields(feed, "to_review")}
    record = {"item": f"{task['task_id']}@v{task['version']}", "task_id": task["task_id"],
              "task_version": task["version"], "feed_id": feed.feed_id, "feed_version": feed.version}
    return record, data


def canonical_check(check: dict[str, Any]) -> str:
    args = dict(check.get("args") or {})
    if isinstance(args.get("video_ids"), list) and len(args["video_ids"]) == 1:
        args["video_ids"] = args["video_ids"][0]
    elif isinstance(args.get("video_ids"), list):
        args["video_ids"] = sorted(args["video_ids"])
    return json.dumps({"func": check.get("func"), "args": args}, sort_keys=True, ensure_ascii=False)


def compare(task: dict[str, Any], answer: str | None, platform_state: str | None, flags: list[str],
            feed_len: int) -> tuple[str | None, list[str], list[str]]:
    """(outcome, reasons, problems for the reviewer): reviewed_ok, escalated, or None while the
    review cannot be read (the reviewer is told why)."""
    reasons = [f"flagged {', '.join(flags)}"] if flags else []
    expected = json.loads(task["eval_config"]) if task["eval_config"] else []
    if task["eval_type"] == "label":
        author = expected[0]["answer"] if expected else None
        options = sorted(json.loads(task["options"])) if task.get("options") else []
        if answer is None:
            letters = load_taxonomy().option_letters
            return ("escalated", reasons, []) if flags else (
                None, [], [f"choose your answer ({letters[0]}–{letters[-1]})"])
        if options and answer not in options:
            return None, [], [f"answer {answer} is not among the options {', '.join(options)}"]
        if answer != author:
            reasons.append(f"answers differ: author {author}, reviewer {answer}")
    else:
        checks, errors = parse_platform_state(platform_state)
        errors += end_state_errors(checks, feed_len) if checks else []
        if errors or not checks:
            if flags:
                return "escalated", reasons + [f"reviewer's end state unreadable: {'; '.join(errors) or 'empty'}"], []
            return None, [], errors or ["write the end state you expect, one check per line (e.g. 'like 3')"]
        # the same checks in any order, a position written as 3 or [3], are the same end state
        mine, theirs = sorted(map(canonical_check, expected)), sorted(map(canonical_check, checks))
        only_author = [c for c in mine if c not in theirs]
        only_reviewer = [c for c in theirs if c not in mine]
        if only_author or only_reviewer:
            reasons.append("end states differ: author " + (render_platform_state([json.loads(c) for c in only_author])
                                                           .replace("\n", "; ") or "nothing else")
                           + ", reviewer " + (render_platform_state([json.loads(c) for c in only_reviewer])
                                              .replace("\n", "; ") or "nothing else"))
    return ("escalated" if reasons else "reviewed_ok"), reasons, []


@stage("qc-review-import", command="curate qc review import", batched=True,
       reads=("qc_projects", "qc_items", "tasks", "task_transitions", "feeds", "reviews"),
       writes=("reviews", "task_transitions"),
       summary="blind reviews back: the same answer and no flag is reviewed_ok, anything else escalated")
def import_reviews(run: StageRun) -> dict[str, Any]:
    catalog = run.db
    session = open_session()
    run.counts.update(reviews=0, reviewed_ok=0, escalated=0, unchanged=0, unreadable=0, unanswered=0,
                      changed_after_decision=0, no_longer_in_review=0)
    for project, task, item, annotation, sha in fresh_answers(run, session, PURPOSE, "reviews", "reviews",
                                                              "unanswered"):
        key = [item["task_id"], item["task_version"]]
        result = annotation.get("result") or []
        if state_of(catalog, *key) != "shortcut_passed" or not is_latest(catalog, *key):
            run.counts["no_longer_in_review"] += 1  # decided elsewhere, or the author has written a newer version
            continue
        row = catalog.rows("SELECT * FROM tasks WHERE task_id = ? AND version = ?", key)[0]
        fields = read_fields(result)
        flags = [f for f in fields.get("flags") or [] if f in FLAGS]
        answer = (fields.get("answer") or [None])[0]
        feed_len = len(load_feed(catalog, row["feed_id"], row["feed_version"]).video_feed)
        outcome, reasons, problems = compare(row, answer, fields.get("platform_state"), flags, feed_len)
        update_task_data(session.client, task, {"feedback": feedback_text(problems),
                                                "state": state_text(outcome or "needs_fix")})
        if outcome is None:
            run.counts["unreadable"] += 1
            continue
        reason = "; ".join(reasons) + (f"; comment: {fields['comment']}" if fields.get("comment") else "")
        with catalog.transaction():
            catalog.insert("reviews", {
                "task_id": key[0], "task_version": key[1], "reviewer": project["person"], "answer": answer,
                "platform_state": fields.get("platform_state"), "flags": flags, "comment": fields.get("comment"),
                "outcome": outcome, "reason": reason or None, "ls_task_id": task["id"],
                "ls_annotation_id": annotation["id"], "annotation_sha256": sha, "run_id": run.run_id,
                "created_at": now()})
            move(run, key[0], key[1], outcome, reason=reason or None, who=project["person"])
        run.counts[outcome] += 1
    return run.counts

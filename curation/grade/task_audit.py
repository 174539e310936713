"""`curate qc audit-tasks export --release vX.Y.Z | import`: released tasks looked at again from how models
answered them.

Export reads every graded episode of the release (`grade.evidence.release_evidence`), judges its tasks
(`grade.task_table.analyse_tasks`) and sends each flagged task to the group's audit project in the admin's
organization, the same accounts and roles as the adjudication project: the task with its key, its row of the
per-task table, the rule behind each flag, the answers models gave and the steps of sample episodes. What was
shown is kept with the item (`qc_items.question`), so that the decision can cite it later.

The group keeps the task, fixes its answer, revises its instruction, options or checks, or retires it. A fix and
a revision are the task's next version, judged by the task rules and proofs as the adjudication's revisions are
(`adjudicate.read_decision`), then filtered and reviewed again; a retired task is `deleted` with its reasons. A
released version's audit decision is taken once. `release build` counts a change or removal that an audit
decided as a fix (a patch) and lists it in the CHANGELOG with its evidence and who decided
(`release/audit_changes.py`).
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict
from functools import cache, partial
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.config import SourceConfig
from curation.core.errors import PrerequisiteError
from curation.core.progress import note
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import load_feed
from curation.corpus.playable import rule_context
from curation.env.episodes import EpisodeError, read_episode
from curation.grade.evidence import release_evidence
from curation.grade.task_table import FLAGS, TaskRow, analyse_tasks
from curation.labelstudio.accounts import ExportResult
from curation.labelstudio.guide import guide_html
from curation.labelstudio.people import check_people, known_people, split_names
from curation.labelstudio.projects import feedback_text, read_fields, update_task_data
from curation.labelstudio.render import list_fields, render_feed, state_text
from curation.labelstudio.workspace import fresh_answers, group_project, open_session, provision_group, send_missing
from curation.qc import adjudicate
from curation.qc.adjudicate import author_answer, decided_by, decision_reason, read_decision, revise_task
from curation.qc.review import canonical_check, is_latest
from curation.release.audit_changes import evidence_facts
from curation.release.semver import Version
from curation.tasks.lifecycle import RELEASED_STATES, move, state_of
from curation.tasks.rules import RuleContext
from curation.tasks.syntax import parse_platform_state

PURPOSE = "task-audit"
DECISIONS = ("keep", "fix_answer", "revise", "retire")
# each decision as the adjudication form's decision it is read as (its checks, its new version)
AS_ADJUDICATION = {"keep": "keep", "fix_answer": "revise", "revise": "revise", "retire": "delete"}
# the state each decision moves the released version to, as the adjudication's does (keep: it stays where it is)
STATE_AFTER = {d: adjudicate.STATE_AFTER[a] for d, a in AS_ADJUDICATION.items() if a != "keep"}
SAMPLE_EPISODES = 4
SHOWN_CALLS = 30
RULES = {f.name: f.rule for f in FLAGS}


def flagged_tasks(catalog: Catalog, version: str) -> list[tuple[dict[str, Any], TaskRow]]:
    """(the released task version's catalog row, its per-task table row) for every flagged task of the release
    that the catalog wrote (an imported release's task it does not hold cannot be revised here)."""
    evidence = release_evidence(catalog, version)
    if not evidence.episodes:
        raise PrerequisiteError(f"release v{version} has no graded episodes: `curate grade LOGS --release "
                                f"v{version}` first (the audit reads how models answered its tasks)")
    released = dict(catalog.con.execute("SELECT DISTINCT task_id, task_version FROM release_tasks WHERE version = ? "
                                        "AND task_version IS NOT NULL", [version]).fetchall())
    out = []
    for row in analyse_tasks(evidence).flagged():
        if row.task_id in released:
            task = catalog.rows("SELECT * FROM tasks WHERE task_id = ? AND version = ?",
                                [row.task_id, released[row.task_id]])
            if task:
                out.append((task[0], row))
    return out


def sample_episodes(catalog: Catalog, version: str, task_id: str) -> list[dict[str, Any]]:
    """Up to SAMPLE_EPISODES graded episodes of the task, failed ones and distinct answers first, each with its
    calls as the runner logged them (or why they cannot be read)."""
    rows = catalog.rows("SELECT model, sr, answer, log_path FROM episode_grades WHERE release = ? AND task_id = ? "
                        "ORDER BY sr NULLS LAST, model", [version, task_id])
    first: dict[tuple[Any, Any], dict[str, Any]] = {}
    for r in rows:  # one episode per outcome first
        first.setdefault((r["sr"], r["answer"]), r)
    distinct = list(first.values())
    chosen = (distinct + [r for r in rows if r not in distinct])[:SAMPLE_EPISODES]
    out = []
    for r in chosen:
        try:
            calls = [f"{c.name}({json.dumps(c.args, ensure_ascii=False)})" + (f" — {c.problem}" if c.problem else "")
                     for c in read_episode(Path(r["log_path"])).calls] if r["log_path"] else []
            steps: list[str] | str = calls[:SHOWN_CALLS] + ([f"… {len(calls) - SHOWN_CALLS} more"]
                                                            if len(calls) > SHOWN_CALLS else [])
        except (OSError, EpisodeError) as error:
            steps = f"the log cannot be read: {error}"
        out.append({"model": r["model"], "solved": r["sr"] == 1.0, "answer": r["answer"], "steps": steps})
    return out


def evidence_record(catalog: Catalog, version: str, row: TaskRow) -> dict[str, Any]:
    return {"release": version, "flags": {f: RULES[f] for f in row.flags}, "row": asdict(row),
            "episodes": sample_episodes(catalog, version, row.task_id)}


def case_html(task: dict[str, Any], evidence: dict[str, Any]) -> str:
    esc = html.escape
    options = json.loads(task["options"]) if task["options"] else {}
    listed = "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in options.items())
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in evidence_facts(evidence))
    episodes = "".join(
        f"<li>{esc(e['model'])}: {'solved' if e['solved'] else 'failed'}"
        + (f", answered {esc(str(e['answer']))}" if e["answer"] else "")
        + (f"<br><span class='ls-meta'>{esc(e['steps'])}</span>" if isinstance(e["steps"], str) else
           "<ol class='ls-meta'>" + "".join(f"<li>{esc(s)}</li>" for s in e["steps"]) + "</ol>") + "</li>"
        for e in evidence["episodes"])
    return (f'<div class="ls-case"><div class="ls-meta">{esc(task["tier"] or "")} · {esc(task["subcategory"] or "")}'
            f' · released in v{esc(evidence["release"])}</div><p><b>{esc(task["instruction"] or "")}</b></p>'
            + (f"<ul>{listed}</ul>" if listed else "")
            + f"<p>answer key:</p><pre>{esc(author_answer(task))}</pre>"
            f"<p><b>why it is here</b></p><table>{table}</table>"
            f"<p><b>sample episodes</b></p><ul>{episodes}</ul></div>")


@stage("qc-audit-tasks-export", command="curate qc audit-tasks export --release vX.Y.Z", batched=True,
       reads=("release_tasks", "episode_grades", "tasks", "task_transitions", "feeds", "videos", "comments",
              "media_outputs", "audit_decisions", "qc_projects", "qc_items", "ls_projects", "people"),
       writes=("qc_projects", "qc_items", "people"),
       summary="every task the release's graded episodes flag, with its evidence, into the group's audit project")
def export_task_audit(run: StageRun, version: str, media_root: Path | None = None,
                      members: list[str] | None = None, passwords: Path | None = None,
                      add: list[str] | None = None) -> ExportResult:
    catalog = run.db
    target = str(Version.parse(version))
    group = check_people(catalog, split_names(members), split_names(add), "group member")
    run.params.update(release=target, members=group, added=split_names(add))
    flagged = flagged_tasks(catalog, target)
    decided = set(catalog.con.execute("SELECT task_id, task_version FROM audit_decisions").fetchall())
    # a version decided before, or no longer the task's latest released one (a later version exists), is not sent:
    # a decision on it could not be applied
    live = [(t, r) for t, r in flagged if (t["task_id"], t["version"]) not in decided
            and state_of(catalog, t["task_id"], t["version"]) in RELEASED_STATES
            and is_latest(catalog, t["task_id"], t["version"])]
    for task, row in flagged:
        if (task["task_id"], task["version"]) in decided:
            note(f"{task['task_id']} v{task['version']}: flagged again ({', '.join(row.flags)}), but the group "
                 "decided on this version before; not sent again")
    result = ExportResult(run.counts)
    run.counts.update(flagged=len(flagged), decided_before=len(flagged) - len(live), sent=0, already_sent=0,
                      accounts_created=0)
    session = open_session(passwords)
    provision_group(run, session, group, result)
    media = media_root or Path("build/media")
    with group_project(run, session, PURPOSE, resource_text("task_audit.xml"), "LivingScreen task audit",
                       "模型作答后被标记的已发布任务，由小组决定：保留、修正答案、修改或撤下。 / Released tasks "
                       "flagged by how models answered them, for the group's decision: keep, fix the answer, "
                       "revise or retire.",
                       media, instruction=guide_html()) as project_id:
        result.project_id = project_id
        send_missing(run, session, project_id, PURPOSE, "group",
                     {f"{t['task_id']}@v{t['version']}": partial(_audit_item, catalog, target, t, r, media)
                      for t, r in live}, "the flagged tasks")
    return result


def _audit_item(catalog: Catalog, version: str, task: dict[str, Any], row: TaskRow, media: Path
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    feed = load_feed(catalog, task["feed_id"], task["feed_version"])
    evidence = evidence_record(catalog, version, row)
    data = {"task_ref": f"{task['task_id']} · v{task['version']} · flagged: {', '.join(row.flags)}",
            "case_html": case_html(task, evidence), "feed_html": render_feed(catalog, feed, media), "feedback": "",
            "task_id": task["task_id"], "task_version": task["version"], **list_fields(feed, "to_decide")}
    return ({"item": f"{task['task_id']}@v{task['version']}", "round": version, "task_id": task["task_id"],
             "task_version": task["version"], "feed_id": feed.feed_id, "feed_version": feed.version,
             "question": json.dumps(evidence, ensure_ascii=False)}, data)


def read_audit_decision(fields: dict[str, Any], task: dict[str, Any], ctx: RuleContext, catalog: Catalog
                        ) -> tuple[str | None, dict[str, Any], list[str]]:
    """(decision, what it changes, problems the group must fix first), read as the adjudication form's decision
    it amounts to, so that a fix or revision meets exactly the rules a revision meets there."""
    decision = (fields.get("decision") or [None])[0]
    if decision not in DECISIONS:
        return None, {}, ["choose keep, fix the answer, revise or retire"]
    if decision == "fix_answer":
        if fields.get("instruction") or fields.get("options"):
            return None, {}, ["fixing the answer changes only the answer: choose revise to change the wording"]
        wanted = "answer" if task["eval_type"] == "label" else "platform_state"
        if not fields.get(wanted):
            return None, {}, ["fix the answer: choose the right option" if wanted == "answer"
                              else "fix the answer: write the right end state"]
        if _same_answer(task, fields[wanted]):
            return None, {}, [f"the answer is already {author_answer(task)}: choose keep, or fix it to another"]
    base = load_feed(catalog, task["feed_id"], task["base_feed_version"] or task["feed_version"])
    feed = load_feed(catalog, task["feed_id"], task["feed_version"])
    _, change, problems = read_decision({**fields, "decision": [AS_ADJUDICATION[decision]]}, task, base, feed, ctx)
    return (None, {}, problems) if problems else (decision, change, [])


def _same_answer(task: dict[str, Any], given: Any) -> bool:
    """Whether a fixed answer is the one the task has (a new version identical to the released one would only
    take the task out of the release until it is reviewed again)."""
    current = json.loads(task["eval_config"]) if task["eval_config"] else []
    if task["eval_type"] == "label":
        return bool(current) and [str(current[0].get("answer"))] == list(given)
    checks, problems = parse_platform_state(given)
    return not problems and sorted(map(canonical_check, checks)) == sorted(map(canonical_check, current))


@stage("qc-audit-tasks-import", command="curate qc audit-tasks import", batched=True,
       reads=("qc_projects", "qc_items", "tasks", "task_transitions", "feeds", "videos", "media_files",
              "media_outputs", "comments", "audit_decisions", "ls_projects", "people"),
       writes=("audit_decisions", "tasks", "task_transitions"),
       summary="the group's audit decisions back: kept, answer fixed or revised (a new version goes round again), "
       "or retired")
def import_task_audit(run: StageRun, sources: dict[str, SourceConfig] | None = None) -> dict[str, Any]:
    catalog = run.db
    session = open_session()
    known = known_people(catalog)
    run.counts.update(decisions=0, **{d: 0 for d in DECISIONS}, needs_fix=0, undecided=0, unchanged=0,
                      changed_after_decision=0, no_longer_released=0)

    @cache
    def ctx() -> RuleContext:
        return rule_context(catalog, sources)

    for _, task, item, annotation, sha in fresh_answers(run, session, PURPOSE, "audit_decisions", "decisions",
                                                        "undecided"):
        key = [item["task_id"], item["task_version"]]
        if state_of(catalog, *key) not in RELEASED_STATES or not is_latest(catalog, *key):
            why = (f"{key[0]} v{key[1]} is no longer the released version (now {state_of(catalog, *key)}, latest "
                   f"v{catalog.scalar('SELECT max(version) FROM tasks WHERE task_id = ?', [key[0]])}): the decision "
                   "is not applied")
            note(f"warning: {why}")
            update_task_data(session.client, task, {"feedback": feedback_text([why])})
            run.counts["no_longer_released"] += 1
            continue
        row = catalog.rows("SELECT * FROM tasks WHERE task_id = ? AND version = ?", key)[0]
        fields = read_fields(annotation.get("result") or [])
        decision, change, problems = read_audit_decision(fields, row, ctx(), catalog)
        update_task_data(session.client, task, {"feedback": feedback_text(problems),
                                                "state": state_text(STATE_AFTER.get(decision or "", "needs_fix")
                                                                    if decision != "keep" else "kept")})
        if decision is None:
            run.counts["needs_fix"] += 1
            continue
        who = decided_by(session, fields, annotation, known)
        reasons = change.get("delete_reasons") or []
        reason = decision_reason(reasons, fields.get("note"))
        with catalog.transaction():
            revised = revise_task(run, row, change, who) if "draft" in change else None
            catalog.insert("audit_decisions", {
                "task_id": key[0], "task_version": key[1], "release": item["round"], "decision": decision,
                "reasons": reasons or None, "note": fields.get("note"), "decided_by": who,
                "revised_version": revised, "evidence": item["question"], "ls_task_id": task["id"],
                "ls_annotation_id": annotation["id"], "annotation_sha256": sha, "run_id": run.run_id,
                "created_at": now()})
            why = f"audit of v{item['round']}: {decision}" + (f"; {reason}" if reason else "")
            if decision in STATE_AFTER:
                move(run, key[0], key[1], STATE_AFTER[decision], who=who,
                     reason=f"new version v{revised}; {why}" if revised else why)
            if revised:
                move(run, key[0], revised, "authored", reason=f"audit fix of v{key[1]}", who=who)
                move(run, key[0], revised, "valid", who=PURPOSE)
        run.counts[decision] += 1
    return run.counts

"""`curate qc adjudicate export | import`: the group's decision on every escalated task.

One project in the admin's organization shows each escalated task with the author's and the
reviewer's answers, the flags and the comment side by side. The group records keep, delete
(with reasons from a fixed list; "other" needs a note) or revise (new wording, options and/or
answer). A revision is the next version of the task: it is validated here, then goes through
the shortcut filter and review again, while the old version's history stays as it was.
"""

from __future__ import annotations

import html
import json
from functools import cache, partial
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.config import SourceConfig
from curation.core.errors import AnnotationError
from curation.core.progress import note
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import Feed, load_feed
from curation.corpus.playable import rule_context
from curation.labelstudio.accounts import ExportResult
from curation.labelstudio.client import ls_call
from curation.labelstudio.guide import guide_html
from curation.labelstudio.people import check_people, known_people, same_person, split_names
from curation.labelstudio.projects import feedback_text, read_fields, update_task_data
from curation.labelstudio.render import list_fields, render_feed, state_text
from curation.labelstudio.workspace import (
    Session,
    fresh_answers,
    group_project,
    open_session,
    provision_group,
    send_missing,
)
from curation.qc.review import is_latest
from curation.tasks.judge import judge_draft
from curation.tasks.lifecycle import move, state_of
from curation.tasks.record import Draft, stored_fields
from curation.tasks.rules import RuleContext
from curation.tasks.syntax import render_platform_state

PURPOSE = "adjudication"
DECISIONS = ("keep", "delete", "revise")
STATE_AFTER = {"keep": "kept", "delete": "deleted", "revise": "revised"}  # the state a decision moves a task to
DELETE_REASONS = ("wrong_answer", "ambiguous", "shortcut", "not_answerable", "duplicate", "off_taxonomy", "other")


def escalated(catalog: Catalog) -> list[dict[str, Any]]:
    return catalog.rows("SELECT t.*, r.reviewer, r.answer AS review_answer, r.platform_state AS review_state, "
                        "r.flags, r.comment, r.reason AS review_reason FROM latest_tasks t "
                        "JOIN task_states s ON s.task_id = t.task_id AND s.version = t.version "
                        "LEFT JOIN reviews r ON r.task_id = t.task_id AND r.task_version = t.version "
                        "WHERE s.state = 'escalated' ORDER BY t.task_id, t.version")


def author_answer(task: dict[str, Any]) -> str:
    config = json.loads(task["eval_config"]) if task["eval_config"] else []
    if task["eval_type"] == "label":
        return config[0]["answer"] if config else "–"
    return render_platform_state(config)


def case_html(task: dict[str, Any]) -> str:
    esc = html.escape
    options = json.loads(task["options"]) if task["options"] else {}
    listed = "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in options.items())
    review = task.get("review_answer") if task["eval_type"] == "label" else task.get("review_state")

    def pre(text: str | None) -> str:
        return f"<pre>{esc(text or '–')}</pre>"

    return (f'<div class="ls-case"><div class="ls-meta">{esc(task["tier"] or "")} · {esc(task["subcategory"] or "")}'
            f'</div><p><b>{esc(task["instruction"] or "")}</b></p>' + (f"<ul>{listed}</ul>" if listed else "")
            + "<table><tr><th></th><th>answer</th></tr>"
            f"<tr><td>author {esc(task['author'] or '?')}</td><td>{pre(author_answer(task))}</td></tr>"
            f"<tr><td>reviewer {esc(task.get('reviewer') or '?')}</td><td>{pre(review)}</td></tr></table>"
            f"<p>flags: {esc(', '.join(task.get('flags') or []) or 'none')}</p>"
            f"<p>comment: {esc(task.get('comment') or '–')}</p>"
            f"<p class='ls-meta'>why escalated: {esc(task.get('review_reason') or '–')}</p></div>")


@stage("qc-adjudicate-export", command="curate qc adjudicate export", batched=True,
       reads=("tasks", "task_transitions", "reviews", "feeds", "videos", "comments", "media_outputs",
              "qc_projects", "qc_items", "ls_projects", "people"),
       writes=("qc_projects", "qc_items", "people"),
       summary="every escalated task, with both answers, flags and comment, into the group's adjudication project")
def export_adjudication(run: StageRun, media_root: Path | None = None, members: list[str] | None = None,
                        passwords: Path | None = None, add: list[str] | None = None) -> ExportResult:
    """`members`: the people who decide, each known to the catalog (`add`: new ones, whose accounts
    are made here); each gets an account that can log in to the project."""
    catalog = run.db
    group = check_people(catalog, split_names(members), split_names(add), "group member")
    run.params.update(members=group, added=split_names(add))
    cases = escalated(catalog)
    result = ExportResult(run.counts)
    run.counts.update(escalated=len(cases), sent=0, already_sent=0, accounts_created=0)
    session = open_session(passwords)
    provision_group(run, session, group, result)
    media = media_root or Path("build/media")
    with group_project(run, session, PURPOSE, resource_text("adjudication.xml"), "LivingScreen adjudication",
                       "升级的任务由小组决定：保留、删除或修改。指南：任务上方的 Instructions 按钮。 / "
                       "Escalated tasks for the group's decision: keep, delete or revise. The guide: the Instructions "
                       "button above each task.", media, instruction=guide_html()) as project_id:
        result.project_id = project_id
        send_missing(run, session, project_id, PURPOSE, "group",
                     {f"{c['task_id']}@v{c['version']}": partial(_case_item, catalog, c, media) for c in cases},
                     "the escalated tasks")
    return result


def _case_item(catalog: Catalog, case: dict[str, Any], media: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    feed = load_feed(catalog, case["feed_id"], case["feed_version"])
    data = {"task_ref": f"{case['task_id']} · v{case['version']} · by {case['author']}", "case_html": case_html(case),
            "feed_html": render_feed(catalog, feed, media), "feedback": "", "task_id": case["task_id"],
            "task_version": case["version"], **list_fields(feed, "to_decide")}
    return ({"item": f"{case['task_id']}@v{case['version']}", "task_id": case["task_id"],
             "task_version": case["version"], "feed_id": feed.feed_id, "feed_version": feed.version}, data)


def decision_reason(reasons: list[str] | None, note: str | None) -> str | None:
    """A decision's reasons and note as the one line the task's path and the CHANGELOG show."""
    return "; ".join(p for p in (", ".join(reasons or []), note or "") if p) or None


def read_decision(fields: dict[str, Any], task: dict[str, Any], base: Feed, feed: Feed, ctx: RuleContext
                  ) -> tuple[str | None, dict[str, Any], list[str]]:
    """(decision, what it changes, problems the group must fix first)."""
    decision = (fields.get("decision") or [None])[0]
    if decision not in DECISIONS:
        return None, {}, ["choose keep, delete or revise"]
    if decision == "keep":
        return decision, {}, []
    if decision == "delete":
        reasons = [r for r in fields.get("delete_reasons") or [] if r in DELETE_REASONS]
        if not reasons:
            return None, {}, ["say why it is deleted: choose at least one reason"]
        if "other" in reasons and not fields.get("note"):
            return None, {}, ["'other' needs a note saying why"]
        return decision, {"delete_reasons": reasons}, []
    options = json.loads(task["options"]) if task["options"] else {}
    new = {"instruction": fields.get("instruction"), "options_text": fields.get("options"),
           "answer": (fields.get("answer") or [None])[0], "platform_state": fields.get("platform_state")}
    if not any(new.values()):
        return None, {}, ["a revision changes nothing: write the new wording, options or answer (or choose keep)"]
    draft = Draft(tier=task["tier"], subcategory=task["subcategory"],
                  instruction=new["instruction"] or task["instruction"],
                  options_text=new["options_text"] or "\n".join(f"{k}: {v}" for k, v in options.items()) or None,
                  answer=new["answer"] or author_answer(task) if task["eval_type"] == "label" else None,
                  platform_state=(new["platform_state"] or author_answer(task)) if task["eval_type"] == "platform"
                  else None)
    # the revision is judged by the same rules as an authored task, on the same feed
    record, defects = judge_draft(draft, task["task_id"], base, feed, [], ctx)
    problems = [f"the revision: {d.message} ({d.code})" for d in defects if d.severity == "error"]
    return (None, {}, problems) if problems else (decision, {"draft": draft, "fields": stored_fields(record)}, [])


def decided_by(session: Session, fields: dict[str, Any], annotation: dict[str, Any], known: set[str]) -> str:
    """The deciding member by the name the catalog knows them by, whether she typed it (in any case) or it is
    the account that submitted: one person is named one way wherever the catalog shows her."""
    typed = [" ".join(name.split()) for name in str(fields.get("decided_by") or "").split(",") if name.strip()]
    if typed:  # one name, several ("ana, ben"), or words of their own ("group meeting 1")
        return ", ".join(same_person(name, known) or name for name in typed)
    user = annotation.get("completed_by")
    try:
        email = str(ls_call("who decided", session.client.users.get, id=user).email)
    except AnnotationError:  # refused (a deleted account, another organization) or no answer: the id says who
        return f"Label Studio user {user}"
    return same_person(email, known) or email


@stage("qc-adjudicate-import", command="curate qc adjudicate import", batched=True,
       reads=("qc_projects", "qc_items", "tasks", "task_transitions", "feeds", "reviews", "decisions", "videos",
              "media_files", "media_outputs", "comments", "ls_projects", "people"),
       writes=("decisions", "tasks", "task_transitions"),
       summary="the group's decisions back: kept, deleted (with reasons) or revised (a new version goes round again)")
def import_adjudication(run: StageRun, sources: dict[str, SourceConfig] | None = None) -> dict[str, Any]:
    catalog = run.db
    session = open_session()
    known = known_people(catalog)
    run.counts.update(decisions=0, kept=0, deleted=0, revised=0, unchanged=0, needs_fix=0, undecided=0,
                      changed_after_decision=0, no_longer_escalated=0)

    @cache
    def ctx() -> RuleContext:
        return rule_context(catalog, sources)

    for _, task, item, annotation, sha in fresh_answers(run, session, PURPOSE, "decisions", "decisions", "undecided"):
        key = [item["task_id"], item["task_version"]]
        if state_of(catalog, *key) != "escalated" or not is_latest(catalog, *key):
            run.counts["no_longer_escalated"] += 1
            continue
        row = catalog.rows("SELECT * FROM tasks WHERE task_id = ? AND version = ?", key)[0]
        fields = read_fields(annotation.get("result") or [])
        feed = load_feed(catalog, row["feed_id"], row["feed_version"])
        base = load_feed(catalog, row["feed_id"], row["base_feed_version"] or row["feed_version"])
        decision, change, problems = read_decision(fields, row, base, feed, ctx())
        update_task_data(session.client, task, {
            "feedback": feedback_text(problems),
            "state": state_text(STATE_AFTER.get(decision or "", "needs_fix"))})
        if decision is None:
            run.counts["needs_fix"] += 1
            continue
        who = decided_by(session, fields, annotation, known)
        with catalog.transaction():
            revised = revise_task(run, row, change, who) if decision == "revise" else None
            reasons = change.get("delete_reasons") or []
            reason = decision_reason(reasons, fields.get("note"))
            catalog.insert("decisions", {
                "task_id": key[0], "task_version": key[1], "decision": decision, "delete_reasons": reasons or None,
                "note": fields.get("note"), "decided_by": who, "revised_version": revised, "ls_task_id": task["id"],
                "ls_annotation_id": annotation["id"], "annotation_sha256": sha, "run_id": run.run_id,
                "created_at": now()})
            state = STATE_AFTER[decision]
            move(run, key[0], key[1], state, who=who,
                 reason=f"new version v{revised}" + (f"; {reason}" if reason else "") if revised else reason)
            if revised:
                move(run, key[0], revised, "authored", reason=f"revision of v{key[1]}", who=who)
                move(run, key[0], revised, "valid", who=PURPOSE)
        run.counts[state] += 1
    return run.counts


def revise_task(run: StageRun, row: dict[str, Any], change: dict[str, Any], who: str) -> int:
    """The revised task as its next version; the annotation it came from stays linked, so an
    unchanged annotation in the authoring project is not imported again as yet another version."""
    draft, fields = change["draft"], change["fields"]
    version = int(run.db.scalar("SELECT max(version) FROM tasks WHERE task_id = ?", [row["task_id"]])) + 1
    run.db.insert("tasks", {
        **{k: row[k] for k in ("task_id", "author", "feed_id", "base_feed_version", "feed_version", "tier",
                                "subcategory", "eval_type", "feed_edits", "ls_project_id", "ls_task_id",
                                "ls_annotation_id", "annotation_sha256", "lead_time_s", "annotated_at")},
        "version": version, "instruction": draft.instruction, **fields, "run_id": run.run_id, "created_at": now()})
    note(f"{row['task_id']}: revised by {who} as v{version}; it goes through the shortcut filter and review again")
    return version

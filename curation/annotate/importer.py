"""`curate annotate import`: annotations back as versioned tasks in the catalog.

Every annotation becomes a task version judged by the task rules (`curation.tasks.rules`):
`valid`, or `needs_fix` with every error (never dropped). The task is the authoring item, a feed
version sent to a person's project and the person who wrote on it, not the annotation: re-importing
an unchanged annotation does nothing; an edited one, or one written again after the first was lost
on the server, becomes the next version of the same task. Every annotation read is kept
(`ls_annotations`), and what the server lost or changed of them is named (`curation.annotate.reconcile`).
Feed edits go through the feeds API and the task points at the new feed version.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from curation.annotate.reconcile import (
    CHANGED,
    LOST,
    LOST_ANNOTATION,
    OLDER,
    WRITTEN_AGAIN,
    Finding,
    changed_by,
    compare,
    mark,
    previous_read,
    standing,
    updated_at,
    went_back,
)
from curation.core.catalog import Catalog, now, one_row
from curation.core.config import FeedsConfig, SourceConfig
from curation.core.errors import FeedError
from curation.core.progress import note
from curation.core.stage import StageRun, stage
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feeds import Feed, load_feed
from curation.corpus.playable import rule_context
from curation.labelstudio.accounts import in_organization
from curation.labelstudio.client import base_url, connect_as_admin
from curation.labelstudio.projects import annotation_sha, feedback_text, project_tasks, read_fields, update_task_data
from curation.labelstudio.render import feed_ref, list_fields, render_feed
from curation.tasks.judge import judge_draft
from curation.tasks.lifecycle import move
from curation.tasks.reasons import Reason
from curation.tasks.record import Draft, stored_fields
from curation.tasks.rules import RuleContext, reason_text
from curation.tasks.runner_format import subcategory_of
from curation.tasks.syntax import parse_feed_edits
from curation.tasks.taxonomy import load_taxonomy


def read_result(result: list[dict[str, Any]]) -> Draft:
    fields = read_fields(result)

    def choice(name: str) -> str | None:
        return (fields.get(name) or [None])[0]

    return Draft(tier=choice("tier"), subcategory=choice("subcategory"), instruction=fields.get("instruction"),
                 options_text=fields.get("options"), answer=choice("answer"),
                 platform_state=fields.get("platform_state"), feed_edits=fields.get("feed_edits"))


def _feed_for(catalog: Catalog, feed_id: str, base_version: int, edits: str | None,
              author: str, previous: dict[str, Any] | None, config: FeedsConfig,
              sources: dict[str, SourceConfig] | None = None) -> tuple[Feed, Feed, list[str]]:
    """(the base feed, the feed version the task uses, problems) after applying the annotator's edits."""
    base = load_feed(catalog, feed_id, base_version)
    ops, errors = parse_feed_edits(edits, len(base.video_feed))
    if errors or not ops:
        return base, base, errors
    if previous and previous["feed_edits"] == edits and previous["base_feed_version"] == base_version:
        return base, load_feed(catalog, feed_id, previous["feed_version"]), []
    try:  # the edits apply to the version the annotator saw, whatever came since
        edited = edit_feed(catalog, feed_id, ops, config, author=author, base_version=base_version, sources=sources)
    except FeedError as exc:
        return base, base, [f"feed edit: {exc}"]
    return base, edited, []


def _mint_task_id(catalog: Catalog, subcategory: str | None) -> str:
    prefix = subcategory or "unclassified"
    (highest,) = one_row(catalog.con,
                         "SELECT max(TRY_CAST(regexp_extract(task_id, '_(\\d+)$', 1) AS INTEGER)) FROM tasks "
                         "WHERE regexp_replace(task_id, '_\\d+$', '') = ?", [prefix])
    return f"{prefix}_{(highest or 0) + 1}"


@stage("annotate-import", command="curate annotate import", batched=True,
       reads=("ls_projects", "ls_tasks", "feeds", "tasks", "videos", "runs", "clusters", "cluster_members",
              "keyword_sets", "embeddings", "media_files", "media_outputs", "task_transitions", "comments",
              "ls_annotations"),
       writes=("tasks", "feeds", "task_transitions", "ls_annotations"),
       summary="annotations back as versioned tasks, credited to who wrote them, each one read kept; "
       "annotations the server lost or changed named; "
       "feed edits as feed versions; problems, the feed version and the state written back to the Label Studio task")
def import_from_label_studio(run: StageRun, feeds_config: FeedsConfig,
                             sources: dict[str, SourceConfig] | None = None,
                             media_root: Path | None = None) -> dict[str, Any]:
    """`media_root`: the served media folder the cards' players point into (as for the export)."""
    catalog = run.db
    media = media_root or Path("build/media")
    client, (admin_id, admin_email, home) = connect_as_admin()
    url = base_url()
    projects = catalog.rows("SELECT * FROM ls_projects WHERE base_url = ? ORDER BY project_id", [url])
    run.params.update(base_url=url, projects=len(projects))
    counts = run.counts
    counts.update(annotations=0, new=0, new_versions=0, renamed=0, unchanged=0, needs_fix=0,
                  skipped_by_annotator=0, written_by_someone_else=0, gone_from_label_studio=0,
                  annotations_lost=0, changed=0, written_again=0, older_on_server=0, older_duplicates=0,
                  findings=[])

    @cache
    def ctx() -> RuleContext:  # the catalog's video facts, read once and only when an annotation is new
        return rule_context(catalog, sources, feeds_config)

    user_of = {r["annotator_user_id"]: r["annotator"] for r in projects if r["annotator_user_id"] is not None}
    name_of = {admin_id: admin_email, **user_of}
    for project in projects:
        organization = project["organization_id"]
        with in_organization(client, admin_id, organization, home) if organization else nullcontext():
            tasks = project_tasks(client, project["project_id"], f"{project['annotator']}'s annotations")
            lost = _reconcile(run, project["project_id"], tasks, name_of)
            for task in tasks:
                feedback = None
                mine: dict[str, list[dict[str, Any]]] = {}
                for annotation in sorted(task.get("annotations") or [], key=lambda a: a["id"]):
                    counts["annotations"] += 1
                    if annotation.get("was_cancelled"):
                        counts["skipped_by_annotator"] += 1
                        continue
                    author = user_of.get(annotation.get("completed_by"), f"user {annotation.get('completed_by')}")
                    mine.setdefault(author, []).append(annotation)
                for author, annotations in mine.items():
                    # one task per person on a task: an earlier one of hers there (posted twice) gives way
                    counts["older_duplicates"] += len(annotations) - 1
                    if author != project["annotator"]:
                        counts["written_by_someone_else"] += 1
                        note(f"warning: Label Studio task {task['id']} is in {project['annotator']}'s project but "
                             f"was annotated by {author}; it is credited to {author}")
                    reasons = _import_annotation(run, project, task, annotations[-1], author, feeds_config, ctx,
                                                 sources, name_of)
                    if reasons is not None:
                        feedback = feedback_text(reasons)
                gone = lost.get(task["id"])
                if gone is not None and gone.person not in mine:  # written again: its line says what it replaced
                    counts["findings"].append(gone.record())
                    counts["annotations_lost"] += 1
                    feedback = lost_text(gone)
                changes = {"feedback": feedback} if feedback is not None else {}
                update_task_data(client, task, changes | _card(catalog, project["project_id"], task, media))
    return counts


def _reconcile(run: StageRun, project_id: int, tasks: list[dict[str, Any]], name_of: dict[int, str]
               ) -> dict[int, Finding]:
    """The annotations standing for the project's tasks that the server lost, kept as lost; those gone with
    their task named, and by task those whose task is still there (named unless written again: empty again
    in the person's queue, the task says so at its top)."""
    catalog, counts = run.db, run.counts
    rows = standing(catalog, project_id)
    server = {t["id"]: ((t.get("data") or {}).get("feed_id"), t.get("annotations") or []) for t in tasks}
    found, present = compare(rows, server, name_of)
    lost = [f for f in found if f.how in LOST]  # a change is named when its annotation is imported
    with catalog.transaction():
        mark(catalog, rows, lost, present)
    gone_with_task = [f for f in lost if f.how != LOST_ANNOTATION]
    counts["findings"] += [f.record() for f in gone_with_task]
    counts["annotations_lost"] += len(gone_with_task)
    counts["gone_from_label_studio"] += len({f.task_id for f in gone_with_task})
    return {f.ls_task_id: f for f in lost if f.how == LOST_ANNOTATION}


def lost_text(finding: Finding) -> str:
    """What the person reads at the top of a task whose annotation the server lost."""
    task = f"{finding.task_id} v{finding.version}"
    return (f"你在这里写的答案（{task}）已不在 Label Studio 中（被删除，或恢复了更早的备份）；目录里仍保留着它。"
            f"重新写一遍并提交，它就成为 {finding.task_id} 的下一个版本。\n"
            f"Your answer here ({task}) is no longer in Label Studio (deleted, or an older backup restored); the "
            f"catalog keeps it. Write it again and submit: it becomes the next version of {finding.task_id}.")


def _card(catalog: Catalog, project_id: int, task: dict[str, Any], media: Path) -> dict[str, Any]:
    """The task data that shows the feed version the task now points at (the annotator's own edit
    made a new one, or undoing it went back) and its state, for the card and the task list."""
    rows = catalog.rows("SELECT t.feed_id, t.feed_version, t.base_feed_version, s.state FROM tasks t "
                        "JOIN task_states s USING (task_id, version) WHERE t.ls_project_id = ? AND t.ls_task_id = ? "
                        "AND t.feed_id = ? ORDER BY t.created_at DESC, t.version DESC LIMIT 1",
                        [project_id, task["id"], (task.get("data") or {}).get("feed_id")])
    if not rows:
        return {}  # nothing written yet: the card is as exported
    row = rows[0]
    feed = load_feed(catalog, row["feed_id"], row["feed_version"])
    fields = list_fields(feed, row["state"])
    if (task.get("data") or {}).get("feed") != fields["feed"]:
        fields |= {"feed_html": render_feed(catalog, feed, media), "feed_ref": feed_ref(feed, row["base_feed_version"])}
    return fields


def _import_annotation(run: StageRun, project: dict[str, Any], task: dict[str, Any], annotation: dict[str, Any],
                       author: str, feeds_config: FeedsConfig, ctx: Callable[[], RuleContext],
                       sources: dict[str, SourceConfig] | None = None, name_of: dict[int, str] | None = None
                       ) -> list[Reason] | None:
    """Store one annotation as a task version; its problems, or None when nothing changed.

    The authoring item is the task's identity: the feed version this project's task carries and the person
    who wrote on it. Its latest row (by when it was stored, since a rename gives it a new id) is the previous
    version, whichever annotation it was read from: an unchanged answer is nothing new, a changed one or one
    written again after the first was lost is the next version, and an Update that changes the sub-category
    renames the task: the next version under a new id, the old id retired in the same transaction. A server
    whose copy is older than the one imported (a backup restored) changes nothing."""
    catalog, counts, data = run.db, run.counts, task.get("data") or {}
    project_id = project["project_id"]
    result = annotation.get("result") or []
    sha = annotation_sha(result)
    item = (data["feed_id"], int(data["feed_version"]), author)
    latest = catalog.rows(
        "SELECT * FROM tasks WHERE ls_project_id = ? AND feed_id = ? AND base_feed_version = ? AND author = ? "
        "ORDER BY created_at DESC, version DESC LIMIT 1", [project_id, *item])
    previous = latest[0] if latest else None
    reads = previous_read(catalog, project_id, item)
    stood = reads[0] if reads else None  # the annotation standing for the item (a lost one was marked so above)
    # the same annotation as the one standing, by id: an older read of this id is history (ids come back after a
    # restore); before reads were kept, the task's own row says which annotation it came from
    same = stood["ls_annotation_id"] == annotation["id"] if stood else bool(
        previous and previous["ls_annotation_id"] == annotation["id"])

    def said(how: str, imported_as: int | None = None, by: str | None = None) -> None:
        assert previous is not None
        replaced = (stood or previous)["ls_annotation_id"]
        finding = Finding(how, previous["task_id"], previous["version"], author, project_id, task["id"],
                          replaced if how == WRITTEN_AGAIN else annotation["id"], by=by, imported_as=imported_as,
                          new_annotation_id=annotation["id"] if how == WRITTEN_AGAIN else None)
        counts["findings"].append(finding.record())

    if previous and previous["annotation_sha256"] == sha:
        counts["unchanged"] += 1
        if same and stood is not None:
            return None
        with catalog.transaction():  # the version this annotation now stands for
            _record_read(run, project_id, task, annotation, author, result, sha, previous["task_id"],
                         previous["version"])
        if same:  # imported before reads were kept
            return None
        counts["written_again"] += 1  # as it was: no new version
        said(WRITTEN_AGAIN, imported_as=previous["version"])
        return _reasons_of(catalog, previous["task_id"], previous["version"])
    if previous and same and went_back(annotation, previous["annotated_at"]):
        counts["older_on_server"] += 1
        said(OLDER)
        return None
    draft = read_result(result)
    base, feed, feed_errors = _feed_for(catalog, data["feed_id"], int(data["feed_version"]), draft.feed_edits,
                                        author, previous, feeds_config, sources)
    known = draft.subcategory if draft.subcategory in load_taxonomy().subcategories else None
    task_id = previous["task_id"] if previous else None
    renamed_from = None
    if task_id is None or subcategory_of(task_id) != (known or "unclassified"):
        renamed_from, task_id = task_id, _mint_task_id(catalog, known)
    version = int(catalog.scalar("SELECT max(version) FROM tasks WHERE task_id = ?", [task_id]) or 0) + 1
    version = max(version, previous["version"] + 1) if previous else version
    record, defects = judge_draft(draft, task_id, base, feed, feed_errors, ctx())
    errors = [d for d in defects if d.severity == "error"]
    with catalog.transaction():
        catalog.insert("tasks", {
            "task_id": task_id, "version": version, "author": author, "feed_id": data["feed_id"],
            "base_feed_version": int(data["feed_version"]), "feed_version": feed.version,
            "tier": draft.tier, "subcategory": draft.subcategory, "instruction": draft.instruction,
            **stored_fields(record), "feed_edits": draft.feed_edits, "ls_project_id": project_id,
            "ls_task_id": task["id"], "ls_annotation_id": annotation["id"], "annotation_sha256": sha,
            "lead_time_s": annotation.get("lead_time"), "annotated_at": updated_at(annotation),
            "run_id": run.run_id, "created_at": now()})
        _record_read(run, project_id, task, annotation, author, result, sha, task_id, version)
        if renamed_from:
            old_version = catalog.scalar("SELECT max(version) FROM tasks WHERE task_id = ?", [renamed_from])
            move(run, renamed_from, old_version, "retired", who=author,
                 reason=f"renamed to {task_id} v{version}: the sub-category is now {known or 'none'}")
        move(run, task_id, version, "authored", who=author,
             reason=f"renamed from {renamed_from} v{previous['version']}" if renamed_from and previous else None)
        move(run, task_id, version, "needs_fix" if errors else "valid", reason=reason_text(errors) or None,
             who="annotate-import")
    counts["new" if previous is None else "new_versions"] += 1
    counts["renamed"] += renamed_from is not None
    counts["needs_fix"] += bool(errors)
    if previous is not None and same:
        counts["changed"] += 1
        said(CHANGED, imported_as=version, by=changed_by(annotation, name_of or {}))
    elif previous is not None:
        counts["written_again"] += 1
        said(WRITTEN_AGAIN, imported_as=version)
    return [Reason(d.message, d.code) for d in errors]


def _record_read(run: StageRun, project_id: int, task: dict[str, Any], annotation: dict[str, Any], author: str,
                 result: list[dict[str, Any]], sha: str, task_id: str, version: int) -> None:
    """Keep the annotation as it was read, and the task version it stands for (the latest read of an item is
    the annotation standing for it)."""
    data = task.get("data") or {}
    run.db.con.execute(
        "INSERT INTO ls_annotations (task_id, task_version, ls_annotation_id, base_url, project_id, "
        "ls_task_id, feed_id, feed_version, person, completed_by, result, annotation_sha256, annotated_at, "
        "imported_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        # read again (an id Label Studio gave once more after a restore, with the same answer): it stands again
        "ON CONFLICT (task_id, task_version, ls_annotation_id) DO UPDATE SET ls_task_id = excluded.ls_task_id, "
        "completed_by = excluded.completed_by, result = excluded.result, annotated_at = excluded.annotated_at, "
        "imported_at = excluded.imported_at, run_id = excluded.run_id, lost_at = NULL, lost_how = NULL",
        [task_id, version, annotation["id"], base_url(), project_id, task["id"], data.get("feed_id"),
         int(data["feed_version"]), author, annotation.get("completed_by"), json.dumps(result, ensure_ascii=False),
         sha, updated_at(annotation), now(), run.run_id])


def _reasons_of(catalog: Catalog, task_id: str, version: int) -> list[Reason]:
    """The problems a task version was sent back with, as its needs_fix move recorded them (none unless its
    state is needs_fix now)."""
    row = catalog.rows("SELECT to_state, reason FROM task_transitions WHERE task_id = ? AND version = ? "
                       "ORDER BY seq DESC LIMIT 1", [task_id, version])
    if not row or row[0]["to_state"] != "needs_fix" or not row[0]["reason"]:
        return []
    reasons = []
    for part in row[0]["reason"].split(" | "):
        code, _, message = part.partition(": ")
        reasons.append(Reason(message, code) if message and "-" in code and " " not in code else Reason(part))
    return reasons

"""`curate annotate import`: annotations back as versioned tasks in the catalog.

Every annotation becomes a task version judged by the task rules (`curation.tasks.rules`):
`valid`, or `needs_fix` with every error (never dropped). Re-importing an unchanged annotation
does nothing; an edited one becomes the next version of the same task. Feed edits
go through the feeds API and the task points at the new feed version.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
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
    row = catalog.con.execute(
        "SELECT max(TRY_CAST(regexp_extract(task_id, '_(\\d+)$', 1) AS INTEGER)) FROM tasks "
        "WHERE regexp_replace(task_id, '_\\d+$', '') = ?", [prefix]).fetchone()
    return f"{prefix}_{(row[0] or 0) + 1}"


@stage("annotate-import", command="curate annotate import", batched=True,
       reads=("ls_projects", "ls_tasks", "feeds", "tasks", "videos", "runs", "clusters", "cluster_members",
              "keyword_sets", "embeddings", "media_files", "media_outputs", "task_transitions", "comments"),
       writes=("tasks", "feeds", "task_transitions"),
       summary="annotations back as versioned tasks, credited to who wrote them; "
       "feed edits as feed versions; problems, the feed version and the state written back to the Label Studio task")
def import_from_label_studio(run: StageRun, feeds_config: FeedsConfig,
                             sources: dict[str, SourceConfig] | None = None,
                             media_root: Path | None = None) -> dict[str, int]:
    """`media_root`: the served media folder the cards' players point into (as for the export)."""
    catalog = run.db
    media = media_root or Path("build/media")
    client, (admin_id, _, home) = connect_as_admin()
    url = base_url()
    projects = catalog.rows("SELECT * FROM ls_projects WHERE base_url = ? ORDER BY project_id", [url])
    run.params.update(base_url=url, projects=len(projects))
    counts = run.counts
    counts.update(annotations=0, new=0, new_versions=0, renamed=0, unchanged=0, needs_fix=0,
                  skipped_by_annotator=0, written_by_someone_else=0, gone_from_label_studio=0)

    @cache
    def ctx() -> RuleContext:  # the catalog's video facts, read once and only when an annotation is new
        return rule_context(catalog, sources, feeds_config)

    user_of = {r["annotator_user_id"]: r["annotator"] for r in projects if r["annotator_user_id"] is not None}
    for project in projects:
        organization = project["organization_id"]
        with in_organization(client, admin_id, organization, home) if organization else nullcontext():
            tasks = project_tasks(client, project["project_id"], f"{project['annotator']}'s annotations")
            # by task and feed: after a restored backup, a task's id may name another feed's task
            gone = catalog.con.execute(
                "SELECT count(DISTINCT task_id) FROM tasks WHERE ls_project_id = ? "
                "AND NOT list_contains(?, ls_task_id::VARCHAR || ' ' || feed_id)",
                [project["project_id"], [f"{t['id']} {(t.get('data') or {}).get('feed_id')}" for t in tasks]]
            ).fetchone()[0]
            if gone:  # imported before, deleted on the server since: the catalog keeps every version
                counts["gone_from_label_studio"] += gone
                note(f"warning: {project['annotator']}: {gone} tasks imported before are no longer in Label Studio "
                     f"(project {project['project_id']}); the catalog keeps them as imported")
            for task in tasks:
                feedback = None
                for annotation in sorted(task.get("annotations") or [], key=lambda a: a["id"]):
                    counts["annotations"] += 1
                    if annotation.get("was_cancelled"):
                        counts["skipped_by_annotator"] += 1
                        continue
                    author = user_of.get(annotation.get("completed_by"), f"user {annotation.get('completed_by')}")
                    if author != project["annotator"]:
                        counts["written_by_someone_else"] += 1
                        note(f"warning: Label Studio task {task['id']} is in {project['annotator']}'s project but "
                             f"was annotated by {author}; it is credited to {author}")
                    reasons = _import_annotation(run, project, task, annotation, author, feeds_config, ctx,
                                                 sources)
                    if reasons is not None:
                        feedback = feedback_text(reasons)
                changes = {"feedback": feedback} if feedback is not None else {}
                update_task_data(client, task, changes | _card(catalog, project["project_id"], task, media))
    return counts


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
                       sources: dict[str, SourceConfig] | None = None) -> list[Reason] | None:
    """Store one annotation as a task version; its problems, or None when it was unchanged.

    The annotation is the task's identity: its latest row (by when it was stored, since a rename
    gives it a new id) is the previous version, an unchanged annotation is nothing new, and an
    Update that changes the sub-category renames the task: the next version under a new id, the old
    id retired in the same transaction."""
    catalog, counts, data = run.db, run.counts, task.get("data") or {}
    result = annotation.get("result") or []
    sha = annotation_sha(result)
    previous = (catalog.rows(
        "SELECT * FROM tasks WHERE ls_project_id = ? AND ls_annotation_id = ? AND ls_task_id = ? AND feed_id = ? "
        "ORDER BY created_at DESC, version DESC LIMIT 1",
        [project["project_id"], annotation["id"], task["id"], data.get("feed_id")]) or [None])[0]
    if previous and previous["annotation_sha256"] == sha:
        counts["unchanged"] += 1
        return None
    draft = read_result(result)
    base, feed, feed_errors = _feed_for(catalog, data["feed_id"], int(data["feed_version"]), draft.feed_edits,
                                        author, previous, feeds_config, sources)
    known = draft.subcategory if draft.subcategory in load_taxonomy().subcategories else None
    task_id = previous["task_id"] if previous else None
    renamed_from = None
    if task_id is None or subcategory_of(task_id) != (known or "unclassified"):
        renamed_from, task_id = task_id, _mint_task_id(catalog, known)
    version = previous["version"] + 1 if previous else 1
    record, defects = judge_draft(draft, task_id, base, feed, feed_errors, ctx())
    errors = [d for d in defects if d.severity == "error"]
    with catalog.transaction():
        catalog.insert("tasks", {
            "task_id": task_id, "version": version, "author": author, "feed_id": data["feed_id"],
            "base_feed_version": int(data["feed_version"]), "feed_version": feed.version,
            "tier": draft.tier, "subcategory": draft.subcategory, "instruction": draft.instruction,
            **stored_fields(record), "feed_edits": draft.feed_edits, "ls_project_id": project["project_id"],
            "ls_task_id": task["id"], "ls_annotation_id": annotation["id"], "annotation_sha256": sha,
            "lead_time_s": annotation.get("lead_time"), "annotated_at": _timestamp(annotation.get("updated_at")),
            "run_id": run.run_id, "created_at": now()})
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
    return [Reason(d.message, d.code) for d in errors]


def _timestamp(text: str | None) -> datetime | None:
    if not text:
        return None
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is None else parsed.astimezone(UTC).replace(tzinfo=None)

"""`curate annotate import`: annotations back as versioned tasks in the catalog.

Every annotation becomes a task row: `ok` when it parses and validates, otherwise
`needs_fix` with every reason (never dropped). Re-importing an unchanged annotation
does nothing; an edited one becomes the next version of the same task. Feed edits
go through the feeds API and the task points at the new feed version.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from curation.annotate.accounts import current_admin, in_organization
from curation.annotate.client import base_url, connect
from curation.annotate.projects import annotation_sha, project_tasks, read_fields, write_feedback
from curation.annotate.syntax import parse_feed_edits, parse_options, parse_platform_state
from curation.annotate.taxonomy import Taxonomy, load_taxonomy
from curation.core.catalog import Catalog, now
from curation.core.config import FeedsConfig, SourceConfig
from curation.core.errors import FeedError
from curation.core.progress import note
from curation.core.stage import StageRun, stage
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feeds import load_feed
from curation.qc.lifecycle import move


@dataclass
class Draft:
    tier: str | None = None
    subcategory: str | None = None
    instruction: str | None = None
    options_text: str | None = None
    answer: str | None = None
    platform_state: str | None = None
    feed_edits: str | None = None


def read_result(result: list[dict[str, Any]]) -> Draft:
    fields = read_fields(result)

    def choice(name: str) -> str | None:
        return (fields.get(name) or [None])[0]

    return Draft(tier=choice("tier"), subcategory=choice("subcategory"), instruction=fields.get("instruction"),
                 options_text=fields.get("options"), answer=choice("answer"),
                 platform_state=fields.get("platform_state"), feed_edits=fields.get("feed_edits"))


def validate(draft: Draft, feed_len: int, taxonomy: Taxonomy) -> tuple[dict[str, Any], list[str]]:
    """The task's fields (eval_type, options, eval_config) and every problem found."""
    reasons: list[str] = []
    sub = taxonomy.subcategories.get(draft.subcategory or "")
    if sub is None:
        reasons.append(f"sub-category {draft.subcategory!r} is not in the taxonomy"
                       if draft.subcategory else "no sub-category chosen")
    elif draft.tier and draft.tier != sub.tier:
        reasons.append(f"sub-category {sub.id} belongs to {sub.tier}, not {draft.tier}")
    if not draft.instruction:
        reasons.append("empty instruction")
    out: dict[str, Any] = {"eval_type": sub.eval_type if sub else None, "options": None,
                           "eval_config": None}
    if sub and sub.eval_type == "label":
        options = parse_options(draft.options_text)
        out["options"] = options or None
        if not options:
            reasons.append("no options (write one per line: 'A: ...')")
        if not draft.answer:
            reasons.append("no answer chosen")
        elif options and draft.answer not in options:
            reasons.append(f"answer {draft.answer} is not among the options {', '.join(options)}")
        if options and sub.requires_cannot_determine and not taxonomy.offers_cannot_determine(options):
            reasons.append("robust-evaluation tasks must offer a 'cannot be determined' option")
        if draft.answer:
            out["eval_config"] = [{"answer": draft.answer}]
        if draft.platform_state:
            reasons.append("a label task has an expected end state; clear one of them")
    elif sub and sub.eval_type == "platform":
        checks, errors = parse_platform_state(draft.platform_state, feed_len, taxonomy.report_categories)
        reasons.extend(errors)
        if not checks and not errors:
            reasons.append("no expected end state (one check per line, e.g. 'like 3')")
        out["eval_config"] = checks or None
    return out, reasons


def _feed_for(catalog: Catalog, feed_id: str, base_version: int, edits: str | None,
              author: str, previous: dict[str, Any] | None, config: FeedsConfig,
              sources: dict[str, SourceConfig] | None = None
              ) -> tuple[int, int, list[str]]:
    """(feed version the task uses, its length, problems) after applying the annotator's edits."""
    base = load_feed(catalog, feed_id, base_version)
    ops, errors = parse_feed_edits(edits, len(base.video_feed))
    if errors or not ops:
        return base.version, len(base.video_feed), errors
    if previous and previous["feed_edits"] == edits and previous["base_feed_version"] == base_version:
        reused = load_feed(catalog, feed_id, previous["feed_version"])
        return reused.version, len(reused.video_feed), []
    try:  # the edits apply to the version the annotator saw, whatever came since
        edited = edit_feed(catalog, feed_id, ops, config, author=author, base_version=base_version, sources=sources)
    except FeedError as exc:
        return base.version, len(base.video_feed), [f"feed edit: {exc}"]
    return edited.version, len(edited.video_feed), []


def _mint_task_id(catalog: Catalog, subcategory: str | None) -> str:
    prefix = subcategory or "unclassified"
    row = catalog.con.execute(
        "SELECT max(TRY_CAST(regexp_extract(task_id, '_(\\d+)$', 1) AS INTEGER)) FROM tasks "
        "WHERE regexp_replace(task_id, '_\\d+$', '') = ?", [prefix]).fetchone()
    return f"{prefix}_{(row[0] or 0) + 1}"


def feedback_text(reasons: list[str]) -> str:
    """What the annotator reads at the top of the task after an import found problems."""
    if not reasons:
        return ""
    listed = " ".join(f"({n}) {r}" for n, r in enumerate(reasons, start=1))
    return f"需要修改 Needs a fix: {listed} — 请修改后点击 Update / fix it here and press Update."


@stage("annotate-import", command="curate annotate import", batched=True,
       reads=("ls_projects", "ls_tasks", "feeds", "tasks", "videos", "runs", "clusters", "cluster_members",
              "keyword_sets", "embeddings", "media_files", "media_outputs", "task_transitions"),
       writes=("tasks", "feeds", "task_transitions"),
       summary="annotations back as versioned tasks, credited to who wrote them; "
       "feed edits as feed versions; problems written back to the Label Studio task")
def import_from_label_studio(run: StageRun, feeds_config: FeedsConfig,
                             sources: dict[str, SourceConfig] | None = None) -> dict[str, int]:
    catalog = run.db
    client = connect()
    url = base_url()
    projects = catalog.rows("SELECT * FROM ls_projects WHERE base_url = ? ORDER BY project_id", [url])
    run.params.update(base_url=url, projects=len(projects))
    counts = run.counts
    counts.update(annotations=0, new=0, new_versions=0, unchanged=0, needs_fix=0, skipped_by_annotator=0,
                  written_by_someone_else=0)
    user_of = {r["annotator_user_id"]: r["annotator"] for r in projects if r["annotator_user_id"] is not None}
    admin_id, _, home = current_admin(client)
    for project in projects:
        organization = project["organization_id"]
        with in_organization(client, admin_id, organization, home) if organization else nullcontext():
            tasks = project_tasks(client, project["project_id"], f"{project['annotator']}'s annotations")
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
                    reasons = _import_annotation(run, project, task, annotation, author, feeds_config, sources)
                    if reasons is not None:
                        feedback = feedback_text(reasons)
                if feedback is not None:
                    write_feedback(client, task, feedback)
    return counts


def _import_annotation(run: StageRun, project: dict[str, Any], task: dict[str, Any], annotation: dict[str, Any],
                       author: str, feeds_config: FeedsConfig,
                       sources: dict[str, SourceConfig] | None = None) -> list[str] | None:
    """Store one annotation as a task version; its problems, or None when it was unchanged."""
    catalog, counts, data = run.db, run.counts, task.get("data") or {}
    result = annotation.get("result") or []
    sha = annotation_sha(result)
    previous = (catalog.rows(
        "SELECT * FROM tasks WHERE ls_project_id = ? AND ls_annotation_id = ? "
        "ORDER BY version DESC LIMIT 1", [project["project_id"], annotation["id"]]) or [None])[0]
    if previous and previous["annotation_sha256"] == sha:
        counts["unchanged"] += 1
        return None
    taxonomy = load_taxonomy()
    draft = read_result(result)
    feed_version, feed_len, feed_errors = _feed_for(
        catalog, data["feed_id"], int(data["feed_version"]), draft.feed_edits, author, previous, feeds_config, sources)
    fields, reasons = validate(draft, feed_len, taxonomy)
    reasons = feed_errors + reasons
    task_id = previous["task_id"] if previous else None
    if task_id is None or (draft.subcategory in taxonomy.subcategories
                           and not task_id.startswith(f"{draft.subcategory}_")):
        task_id = _mint_task_id(catalog, draft.subcategory if draft.subcategory in taxonomy.subcategories else None)
    version = previous["version"] + 1 if previous and previous["task_id"] == task_id else 1
    status = "needs_fix" if reasons else "ok"
    with catalog.transaction():
        catalog.insert("tasks", {
            "task_id": task_id, "version": version, "author": author, "feed_id": data["feed_id"],
            "base_feed_version": int(data["feed_version"]), "feed_version": feed_version,
            "tier": draft.tier, "subcategory": draft.subcategory, "eval_type": fields["eval_type"],
            "instruction": draft.instruction, "options": _json_or_none(fields["options"]),
            "eval_config": _json_or_none(fields["eval_config"]), "feed_edits": draft.feed_edits,
            "status": status, "reasons": _json_or_none(reasons), "ls_project_id": project["project_id"],
            "ls_task_id": task["id"], "ls_annotation_id": annotation["id"], "annotation_sha256": sha,
            "lead_time_s": annotation.get("lead_time"), "annotated_at": _timestamp(annotation.get("updated_at")),
            "run_id": run.run_id, "created_at": now()})
        move(run, task_id, version, "authored", who=author)
        move(run, task_id, version, "needs_fix" if reasons else "valid", reason="; ".join(reasons) or None,
             who="annotate-import")
    counts["new" if version == 1 else "new_versions"] += 1
    counts["needs_fix"] += status == "needs_fix"
    return reasons


def _json_or_none(value: Any) -> str | None:
    return json.dumps(value, ensure_ascii=False) if value else None


def _timestamp(text: str | None) -> datetime | None:
    if not text:
        return None
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is None else parsed.astimezone(UTC).replace(tzinfo=None)

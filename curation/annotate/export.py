"""`curate annotate export`: feeds into one Label Studio authoring project per annotator.

Label Studio Community has no per-task assignment, so each annotator gets a project
of their own. A feed goes to the same annotator every time (by a hash of its id),
and a feed version already sent is never sent again: its Label Studio task id is
remembered in `ls_tasks`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError, UsageError
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import latest_feeds
from curation.labelstudio.accounts import (
    Account,
    ExportResult,
    current_admin,
    ensure_account,
    in_organization,
    read_passwords,
)
from curation.labelstudio.client import base_url, connect, ls_call
from curation.labelstudio.projects import ensure_project as ensure_project_in
from curation.labelstudio.render import render_feed


def assign(feed_id: str, annotators: list[str]) -> str:
    digest = hashlib.sha256(feed_id.encode()).digest()
    return annotators[int.from_bytes(digest[:8], "big") % len(annotators)]


def ensure_project(client: Any, catalog: Catalog, run_id: str, account: Account, label_config: str,
                   media_root: Path) -> int:
    """The annotator's authoring project in their organization (the admin must be working in it)."""
    annotator = account.annotator
    return ensure_project_in(
        client, catalog, "ls_projects", "ls_tasks", {"base_url": base_url(), "annotator": annotator}, label_config,
        f"LivingScreen authoring · {annotator}", f"Feeds for {annotator} to write tasks on. Guide: annotation/GUIDE.md",
        media_root, {"run_id": run_id, "organization_id": account.organization_id,
                     "annotator_user_id": account.user_id})


@stage("annotate-export", command="curate annotate export --annotators a,b", batched=True,
       reads=("feeds", "videos", "comments", "media_outputs", "ls_projects", "ls_tasks", "tasks", "qc_projects"),
       writes=("ls_projects", "ls_tasks"), summary="one Label Studio authoring project per annotator, "
       "each in the annotator's own organization")
def export_to_label_studio(run: StageRun, annotators: list[str], media_root: Path,
                           feed_ids: list[str] | None = None, passwords: Path | None = None) -> ExportResult:
    catalog = run.db
    annotators = sorted({a.strip() for a in annotators if a.strip()})
    if not annotators:
        raise UsageError("give at least one annotator: --annotators alice,bob")
    from_file = read_passwords(passwords)
    client = connect()
    url = base_url()
    feeds = [f for f in latest_feeds(catalog) if feed_ids is None or f.feed_id in feed_ids]
    if not feeds:
        raise AnnotationError("no feeds to export: run `curate feeds build` first")
    label_config = resource_text("authoring.xml")
    run.params.update(annotators=annotators, base_url=url, feeds=len(feeds))
    owner = dict(catalog.con.execute("SELECT feed_id, any_value(annotator) FROM ls_tasks "
                                     "WHERE base_url = ? GROUP BY 1", [url]).fetchall())
    result = ExportResult(run.counts)
    counts = run.counts
    counts.update(feeds=len(feeds), exported=0, already_exported=0, accounts_created=0, per_annotator={})
    admin_id, admin_email, home = current_admin(client)
    for annotator in annotators:
        mine = [f for f in feeds if owner.get(f.feed_id, assign(f.feed_id, annotators)) == annotator]
        account = ensure_account(catalog, annotator, admin_email, from_file, result)
        with in_organization(client, admin_id, account.organization_id, home):
            with catalog.transaction():
                project_id = ensure_project(client, catalog, str(run.run_id), account, label_config, media_root)
            # read after ensure_project, which forgets the tasks of a project deleted on the server
            sent = {(f, v) for f, v in catalog.con.execute(
                "SELECT feed_id, feed_version FROM ls_tasks WHERE base_url = ?", [url]).fetchall()}
            # A feed version that an annotator's own edit produced is that task's feed, not new work.
            sent |= {(f, v) for f, v in catalog.con.execute(
                "SELECT DISTINCT feed_id, feed_version FROM tasks WHERE feed_version <> base_feed_version").fetchall()}
            todo = [f for f in mine if (f.feed_id, f.version) not in sent]
            counts["already_exported"] += len(mine) - len(todo)
            counts["per_annotator"][annotator] = {"feeds": len(mine), "new": len(todo)}
            if not todo:
                continue
            payload = [{"data": {"feed_html": render_feed(catalog, f, media_root),
                                 "feed_ref": f"{f.feed_id} · v{f.version} · {len(f.video_feed)} videos",
                                 "feed_id": f.feed_id, "feed_version": f.version, "feedback": ""}} for f in todo]
            response = ls_call(f"the tasks for {annotator}", client.projects.import_tasks, id=project_id,
                               request=payload, return_task_ids=True)
        task_ids = list(response.task_ids or [])
        if len(task_ids) != len(todo):
            raise AnnotationError(f"Label Studio returned {len(task_ids)} task ids for {len(todo)} feeds")
        with catalog.transaction():
            for feed, task_id in zip(todo, task_ids, strict=True):
                catalog.insert("ls_tasks", {"base_url": url, "project_id": project_id, "ls_task_id": task_id,
                                            "feed_id": feed.feed_id, "feed_version": feed.version,
                                            "annotator": annotator, "run_id": run.run_id})
        counts["exported"] += len(todo)
    return result

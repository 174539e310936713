"""Label Studio projects the toolkit keeps, whatever they are for (authoring, a pilot, a review,
the adjudication): one remembered row per project, its labeling config kept as the toolkit ships
it, and the tasks sent to it remembered so that nothing is sent twice.

A project deleted on the server is forgotten with the tasks sent to it, and made afresh.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError
from curation.labelstudio.client import base_url, ls_call


def ensure_project(client: Any, catalog: Catalog, table: str, items_table: str, key: dict[str, Any],
                   label_config: str, title: str, description: str, media_root: Path | None,
                   row: dict[str, Any]) -> int:
    """The project `key` names in `table` (the admin must be working in its organization).

    `key` holds the columns that name the project (base_url included); `row` the other columns
    written when it is made. The config on the server is compared, not the one remembered: a
    project member can change it in the web UI, and the next export puts it back."""
    sha = hashlib.sha256(label_config.encode()).hexdigest()
    where = " AND ".join(f"{column} = ?" for column in key)
    known = catalog.con.execute(f"SELECT project_id, config_sha256 FROM {table} WHERE {where}",
                                list(key.values())).fetchone()
    live = {p.id for p in ls_call("the project list", client.projects.list)}
    url = key["base_url"]
    if known and known[0] in live:
        current = ls_call("the project", client.projects.get, id=known[0]).label_config
        if known[1] != sha or (current or "").strip() != label_config.strip():
            ls_call("the labeling config", client.projects.update, id=known[0], label_config=label_config)
            catalog.con.execute(f"UPDATE {table} SET config_sha256 = ? WHERE base_url = ? AND project_id = ?",
                                [sha, url, known[0]])
        return int(known[0])
    if known:
        catalog.con.execute(f"DELETE FROM {items_table} WHERE base_url = ? AND project_id = ?", [url, known[0]])
        catalog.con.execute(f"DELETE FROM {table} WHERE base_url = ? AND project_id = ?", [url, known[0]])
    project = ls_call(f"the project {title!r}", client.projects.create, title=title, label_config=label_config,
                      description=description)
    if media_root is not None and media_root.is_dir():
        ls_call("serving the normalised media", client.import_storage.local.create, project=project.id,
                path=str(media_root.resolve()), title="normalised media", use_blob_urls=False)
    catalog.insert(table, {**key, **row, "project_id": project.id, "title": project.title, "config_sha256": sha})
    return int(project.id)


def send_tasks(client: Any, project_id: int, payload: list[dict[str, Any]], what: str) -> list[int]:
    """Import tasks into a project; their Label Studio ids, in the order given."""
    if not payload:
        return []
    response = ls_call(what, client.projects.import_tasks, id=project_id, request=payload, return_task_ids=True)
    ids = [int(i) for i in response.task_ids or []]
    if len(ids) != len(payload):
        raise AnnotationError(f"Label Studio returned {len(ids)} task ids for {len(payload)} tasks ({what})")
    return ids


def project_tasks(client: Any, project_id: int, what: str) -> list[dict[str, Any]]:
    """Every task of a project with its annotations, oldest first."""
    return sorted(ls_call(what, client.projects.exports.as_json, project_id), key=lambda t: t["id"])


def latest_annotation(task: dict[str, Any]) -> dict[str, Any] | None:
    """The newest submitted (not skipped) annotation of a task."""
    kept = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    return max(kept, key=lambda a: a["id"]) if kept else None


def read_fields(result: list[dict[str, Any]]) -> dict[str, Any]:
    """An annotation's controls by name: a list for choices, stripped text (or None) for text areas."""
    fields: dict[str, Any] = {}
    for item in result:
        value = item.get("value") or {}
        name = item.get("from_name")
        if "choices" in value:
            fields[name] = list(value.get("choices") or [])
        elif "text" in value:
            fields[name] = "\n".join(value.get("text") or []).strip() or None
    return fields


def annotation_sha(result: list[dict[str, Any]]) -> str:
    import json

    return hashlib.sha256(json.dumps(result, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def write_feedback(client: Any, task: dict[str, Any], feedback: str) -> bool:
    """Put `feedback` at the top of a Label Studio task (only when it changed)."""
    data = task.get("data") or {}
    if feedback == data.get("feedback", ""):
        return False
    ls_call("the feedback", client.tasks.update, id=str(task["id"]), data={**data, "feedback": feedback})
    return True


def remembered(catalog: Catalog, purpose: str) -> list[dict[str, Any]]:
    """The QC projects of one purpose on the current server."""
    return catalog.rows("SELECT * FROM qc_projects WHERE base_url = ? AND purpose = ? ORDER BY person",
                        [base_url(), purpose])


def feedback_text(reasons: list[str]) -> str:
    """What the annotator reads at the top of the task after an import found problems."""
    if not reasons:
        return ""
    listed = " ".join(f"({n}) {r}" for n, r in enumerate(reasons, start=1))
    return f"需要修改 Needs a fix: {listed} — 请修改后点击 Update / fix it here and press Update."

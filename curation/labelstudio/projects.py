"""Label Studio projects the toolkit keeps, whatever they are for (authoring, a pilot, a review,
the adjudication): one remembered row per project, its labeling config kept as the toolkit ships
it, and the tasks sent to it remembered so that nothing is sent twice.

A project deleted on the server is forgotten with the tasks sent to it, and made afresh.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError
from curation.core.fingerprint import json_sha256
from curation.labelstudio.client import base_url, ls_call, request_json
from curation.labelstudio.guide import same_html
from curation.tasks.reasons import Reason


class KeptProject(NamedTuple):
    """A project as `keep_project` left it: its id, and how many tasks Label Studio said it holds when it was
    checked (0 for one made now; None for one taken on from a failed run, whose tasks were not counted)."""

    project_id: int
    task_number: int | None
    forgot_tasks: bool = False  # the project the catalog knew was gone, and the tasks sent to it forgotten


def ensure_project(client: Any, catalog: Catalog, table: str, items_table: str, key: dict[str, Any],
                   label_config: str, title: str, description: str, media_root: Path | None,
                   row: dict[str, Any], instruction: str | None = None) -> int:
    """The id of the project `key` names in `table` (see `keep_project`)."""
    return keep_project(client, catalog, table, items_table, key, label_config, title, description, media_root, row,
                        instruction).project_id


def keep_project(client: Any, catalog: Catalog, table: str, items_table: str, key: dict[str, Any],
                 label_config: str, title: str, description: str, media_root: Path | None,
                 row: dict[str, Any], instruction: str | None = None) -> KeptProject:
    """The project `key` names in `table` (the admin must be working in its organization).

    `key` holds the columns that name the project (base_url included); `row` the other columns
    written when it is made; `instruction` the HTML shown as the project's instructions (for people's
    projects: `guide.guide_html()`, the annotator guide), None to leave them alone. The config, the
    description and the instructions on the server are compared, not the ones remembered: a project
    member can change them in the web UI, and the next export puts them back, as it puts a changed guide."""
    sha = hashlib.sha256(label_config.encode()).hexdigest()
    where = " AND ".join(f"{column} = ?" for column in key)
    known = catalog.con.execute(f"SELECT project_id, config_sha256 FROM {table} WHERE {where}",
                                list(key.values())).fetchone()
    url = key["base_url"]
    current = _project_or_none(client, known[0]) if known is not None else None
    lost = known is not None and current is None
    if known is not None and current is None:  # deleted on the server: forgotten with the tasks sent to it
        catalog.con.execute(f"DELETE FROM {items_table} WHERE base_url = ? AND project_id = ?", [url, known[0]])
        catalog.con.execute(f"DELETE FROM {table} WHERE base_url = ? AND project_id = ?", [url, known[0]])
    elif known is not None and current is not None:
        changes: dict[str, Any] = {}
        if known[1] != sha or _unmarked(current.label_config).strip() != label_config.strip():
            changes["label_config"] = label_config
        if (current.description or "") != description:
            changes["description"] = description
        if instruction is not None and (not same_html(current.expert_instruction, instruction)
                                        or not current.show_instruction):
            changes |= {"expert_instruction": instruction, "show_instruction": True}
        if changes:
            ls_call("the project's config, description and guide", client.projects.update, id=known[0], **changes)
        if "label_config" in changes:
            catalog.con.execute(f"UPDATE {table} SET config_sha256 = ? WHERE base_url = ? AND project_id = ?",
                                [sha, url, known[0]])
        return KeptProject(int(known[0]), current.task_number)
    listed = ls_call("the project list", lambda: list(client.projects.list(include="id,title", page_size=1000)))
    adopted = _made_by_this_catalog(client, catalog, table, title, listed)
    held = None if adopted is not None else 0
    if adopted is None:
        shown = {"expert_instruction": instruction, "show_instruction": True} if instruction is not None else {}
        adopted = int(ls_call(f"the project {title!r}", client.projects.create, title=title, description=description,
                              label_config=f"{MADE_BY}{row['run_id']} -->\n{label_config}", **shown).id)
    if media_root is not None and media_root.is_dir() and not ls_call(
            "the project's storages", client.import_storage.local.list, project=adopted):
        ls_call("serving the normalised media", client.import_storage.local.create, project=adopted,
                path=str(media_root.resolve()), title="normalised media", use_blob_urls=False)
    catalog.insert(table, {**key, **row, "project_id": adopted, "title": title, "config_sha256": sha})
    return KeptProject(adopted, held, lost)


# What `keep_project` compares and counts: asked for by name, Label Studio skips the dozen task and
# annotation counts it otherwise computes for a project (half the time of the request).
PROJECT_FIELDS = "id,title,label_config,description,expert_instruction,show_instruction,task_number"


def _project_or_none(client: Any, project_id: int) -> Any:
    """The project as Label Studio has it now, or None when it is gone (deleted, or a restored backup
    predates it)."""
    from label_studio_sdk.core.api_error import ApiError

    def fetch() -> Any:
        try:
            return client.projects.get(id=project_id, request_options={"additional_query_parameters": {
                "include": PROJECT_FIELDS}})
        except ApiError as exc:
            if exc.status_code == 404:
                return None
            raise  # ls_call makes it one line

    return ls_call("the project", fetch)


# The first line of a project's config as the toolkit makes it: the catalog run that made it. An export
# that fails after Label Studio made the project, before the catalog recorded it, leaves a project only
# this catalog can recognise; the next export takes it on instead of making a second one of the same
# title (a project another catalog made on the same server names a run this catalog does not have).
MADE_BY = "<!-- made by curate run "


def _made_by_this_catalog(client: Any, catalog: Catalog, table: str, title: str, listed: list[Any]) -> int | None:
    """A project of this title (among `listed`) that a run of this catalog made and never recorded, or None."""
    recorded = {r[0] for r in catalog.con.execute(f"SELECT project_id FROM {table} WHERE base_url = ?",
                                                  [base_url()]).fetchall()}
    for project in listed:
        if project.title != title or project.id in recorded:
            continue
        config = ls_call("the project", client.projects.get, id=project.id).label_config or ""
        run_id = config[len(MADE_BY):config.find(" -->")] if config.startswith(MADE_BY) else None
        if run_id and catalog.scalar("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]):
            return int(project.id)
    return None


def _unmarked(config: str | None) -> str:
    config = config or ""
    return config.split("\n", 1)[1] if config.startswith(MADE_BY) and "\n" in config else config


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


ANNOTATIONS_PAGE = 200  # task ids named in one listing's query
# What the listing keeps of each task: its id and annotations, and of each annotation these fields. Label Studio
# applies one `include` to the task and to its annotations alike (with "id,annotations" alone an annotation is
# its id), so the annotation's fields are named beside the task's.
ANNOTATION_FIELDS = "id,annotations,result,completed_by,updated_by,updated_at,was_cancelled"


def tasks_annotations(client: Any, project_id: int, task_ids: Sequence[int], what: str
                      ) -> dict[int, list[dict[str, Any]]]:
    """Task id -> its annotations (as dicts, the export format's fields), for the tasks `task_ids` the project
    still holds; a task it no longer holds is left out. The data manager's listing of the named ids, a page at a
    time, each task with its id and annotations only: the full export also sends every card (2 MB a page)."""
    found: dict[int, list[dict[str, Any]]] = {}
    chosen = sorted(set(task_ids))
    for start in range(0, len(chosen), ANNOTATIONS_PAGE):
        page = chosen[start:start + ANNOTATIONS_PAGE]
        query = json.dumps({"selectedItems": {"all": False, "included": page}})
        answer = request_json(client, what, "api/tasks/", "GET",
                              params={"project": project_id, "fields": "all", "include": ANNOTATION_FIELDS,
                                      "query": query, "page_size": ANNOTATIONS_PAGE, "page": 1})
        found.update((int(t["id"]), list(t.get("annotations") or [])) for t in answer.get("tasks") or [])
    return found


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
        if not isinstance(name, str):
            continue  # not a control's answer (a relation between regions names no control)
        if "choices" in value:
            fields[name] = list(value.get("choices") or [])
        elif "text" in value:
            fields[name] = "\n".join(value.get("text") or []).strip() or None
    return fields


def annotation_sha(result: list[dict[str, Any]]) -> str:
    return json_sha256(result, ensure_ascii=False)


def update_task_data(client: Any, task: dict[str, Any], changes: dict[str, Any]) -> bool:
    """Change some fields of a Label Studio task's data (the feedback at its top, the card, the
    task-list columns), only when one of them changed."""
    data = task.get("data") or {}
    if all(data.get(key) == value for key, value in changes.items()):
        return False
    ls_call("the task's feedback and card", client.tasks.update, id=str(task["id"]), data={**data, **changes})
    task["data"] = {**data, **changes}
    return True


def remembered(catalog: Catalog, purpose: str) -> list[dict[str, Any]]:
    """The QC projects of one purpose on the current server."""
    return catalog.rows("SELECT * FROM qc_projects WHERE base_url = ? AND purpose = ? ORDER BY person",
                        [base_url(), purpose])


def feedback_text(reasons: Sequence[str | Reason]) -> str:
    """What the person reads at the top of the task after an import found problems: each reason as
    a Chinese line and an English line, both naming the value it is about."""
    if not reasons:
        return ""
    lines = ["需要修改：请在这里改好后点击 Update。 / Needs a fix: fix it here and press Update."]
    for n, reason in enumerate(reasons, start=1):
        said = reason if isinstance(reason, Reason) else Reason(reason)
        lines += [f"({n}) {said.chinese()}", f"    {said.english()}"]
    return "\n".join(lines)

"""What the reconciliation tests start from: one person's feeds sent to Label Studio by `curate annotate export
--add`, one of her tasks answered by her own logged-in session (as Label Studio's frontend writes it) and taken in
by `curate annotate import`. Against the session's real server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set
from tests.annotate.test_labelstudio import result
from tests.cli.test_cli import curate
from tests.labelstudio import login


def answer(instruction: str) -> list[dict[str, Any]]:
    """An L1 gui_like authoring answer with `instruction`, as the labeling form writes it."""
    return result(tier="L1", subcategory="gui_like", instruction=instruction, platform_state="like 1")


class Author:
    """One annotator writing on her own tasks through Label Studio's API, as its frontend does."""

    def __init__(self, label_studio: dict[str, Any], person: str) -> None:
        self.url = label_studio["url"]
        self.session = login(self.url, f"{person}@annotators.local", label_studio["annotator_password"])

    def write(self, ls_task_id: int, fields: list[dict[str, Any]]) -> int:
        made = self.session.post(f"{self.url}/api/tasks/{ls_task_id}/annotations/", json={"result": fields})
        assert made.status_code == 201, made.text
        return int(made.json()["id"])

    def update(self, annotation_id: int, fields: list[dict[str, Any]]) -> None:
        changed = self.session.patch(f"{self.url}/api/annotations/{annotation_id}/", json={"result": fields})
        assert changed.status_code == 200, changed.text

    def feedback(self, ls_task_id: int) -> str:
        return self.session.get(f"{self.url}/api/tasks/{ls_task_id}").json()["data"].get("feedback") or ""


@dataclass
class Imported:
    db: str                     # the catalog, closed: the commands open it
    sent: list[dict[str, Any]]  # her tasks on the server (project_id, organization_id, ls_task_id, feed_id)
    author: Author
    annotation: int             # what she wrote on sent[0], imported
    task_id: str                # the task the import made of it

    @property
    def base(self) -> tuple[str, str]:
        return ("--catalog", self.db)


def one_imported(catalog: Catalog, label_studio: dict[str, Any], person: str, feeds: int, seed: int) -> Imported:
    """`feeds` new feeds (built with `seed`) exported to `person`, the first of her tasks answered and imported.
    `person` must be a name no other test file gives an account on the session-wide server."""
    build_feed_set(catalog, load_config().feeds, feeds, seed=seed)
    db = str(catalog.path)
    catalog.close()
    exported = curate("--catalog", db, "annotate", "export", "--add", person)
    assert exported.returncode == 0, exported.stderr
    with Catalog(db, read_only=True) as cat:
        sent = cat.rows("SELECT p.project_id, p.organization_id, t.ls_task_id, t.feed_id FROM ls_tasks t "
                        "JOIN ls_projects p USING (base_url, project_id) WHERE t.annotator = ? ORDER BY t.ls_task_id",
                        [person])
    assert len(sent) == feeds, sent
    author = Author(label_studio, person)
    annotation = author.write(sent[0]["ls_task_id"], answer("给第一个视频点赞"))
    imported = curate("--catalog", db, "annotate", "import")
    assert "1 new tasks" in imported.stdout, imported.stdout + imported.stderr
    with Catalog(db, read_only=True) as cat:
        task_id = str(cat.scalar("SELECT task_id FROM tasks"))
    return Imported(db, sent, author, annotation, task_id)

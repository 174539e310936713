"""What Label Studio lost or changed of the annotations the catalog imported, found the same way by the export
and the import, and said one line per annotation with the catalog's task id and the person who wrote it.

The catalog keeps every annotation it read (`ls_annotations`). For each authoring item (a feed version sent
to a person's project, and the person who wrote on it) the latest one read is the annotation that stands for
the task; the server is asked about that one. Gone with its task or its project, gone alone (deleted in the
UI, or a restored backup that predates it), changed since (an Update: the next import makes it a version),
or older than what was imported (a restored backup took it back: the catalog keeps the newer).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from curation.core.catalog import Catalog, now
from curation.labelstudio.client import base_url
from curation.labelstudio.projects import annotation_sha

LOST_ANNOTATION = "annotation"  # `ls_annotations.lost_how`: what the server no longer has
LOST_TASK = "task"
LOST_PROJECT = "project"
CHANGED = "changed"
OLDER = "older"
WRITTEN_AGAIN = "written again"
LOST = (LOST_ANNOTATION, LOST_TASK, LOST_PROJECT)

ITEM = ("feed_id", "feed_version", "person")  # with the server and project: one authoring item


@dataclass(frozen=True)
class Finding:
    """One annotation of the catalog's as the server has it now, when that is not as it was imported."""

    how: str
    task_id: str
    version: int
    person: str
    project_id: int
    ls_task_id: int
    ls_annotation_id: int
    by: str | None = None  # CHANGED: who changed it, when not its writer
    imported_as: int | None = None  # CHANGED, WRITTEN_AGAIN at the import: the version it became
    new_annotation_id: int | None = None  # WRITTEN_AGAIN: the annotation written in its place

    def line(self) -> str:
        where = f"Label Studio task {self.ls_task_id} (project {self.project_id})"
        said = f"{self.task_id} v{self.version} ({self.person}): "
        if self.how == LOST_ANNOTATION:
            return said + (f"annotation {self.ls_annotation_id} on {where} is gone from the server (deleted there, "
                           f"or a backup from before it restored); the catalog keeps v{self.version}, and the "
                           f"task, empty again in {self.person}'s queue, becomes the next version of "
                           f"{self.task_id} when written again")
        if self.how in (LOST_TASK, LOST_PROJECT):
            gone = where if self.how == LOST_TASK else f"project {self.project_id}"
            return said + (f"{gone} is gone from the server with annotation {self.ls_annotation_id}; the catalog "
                           f"keeps v{self.version} (a feed already written on is not sent again)")
        if self.how == CHANGED:
            by = f" by {self.by}" if self.by else ""
            then = (f"imported as v{self.imported_as}" if self.imported_as is not None
                    else "the next import makes it the next version")
            return said + f"annotation {self.ls_annotation_id} on {where} changed in Label Studio{by}; {then}"
        if self.how == OLDER:
            return said + (f"annotation {self.ls_annotation_id} on {where} is older in Label Studio than what was "
                           f"imported (a backup restored?); the catalog keeps v{self.version}, and an Update there "
                           "makes the next version")
        if self.how == WRITTEN_AGAIN:
            became = (f"v{self.imported_as}" if self.imported_as != self.version
                      else f"v{self.version} as it was (the same answer)")
            return said + (f"written again on {where} as annotation {self.new_annotation_id} in place of annotation "
                           f"{self.ls_annotation_id}, which is gone; {became}")
        raise ValueError(self.how)

    def record(self) -> dict[str, Any]:
        """The finding as the run's counts keep it (JSON), with its line."""
        return {**{k: v for k, v in asdict(self).items() if v is not None}, "line": self.line()}


def standing(catalog: Catalog, project_id: int) -> list[dict[str, Any]]:
    """The annotation that stands for each authoring item of the project: the latest one read of it."""
    return catalog.rows(
        "SELECT * FROM ls_annotations WHERE base_url = ? AND project_id = ? QUALIFY row_number() OVER ("
        f"PARTITION BY {', '.join(ITEM)} ORDER BY imported_at DESC, task_version DESC, ls_annotation_id DESC) = 1 "
        "ORDER BY task_id, task_version", [base_url(), project_id])


def previous_read(catalog: Catalog, project_id: int, item: tuple[str, int, str]) -> list[dict[str, Any]]:
    """Every annotation read of one authoring item, latest first."""
    return catalog.rows(
        "SELECT * FROM ls_annotations WHERE base_url = ? AND project_id = ? AND feed_id = ? AND feed_version = ? "
        "AND person = ? ORDER BY imported_at DESC, task_version DESC, ls_annotation_id DESC",
        [base_url(), project_id, *item])


def updated_at(annotation: dict[str, Any]) -> datetime | None:
    """When Label Studio last saved the annotation, naive UTC as the catalog stores times."""
    text = annotation.get("updated_at")
    if not text:
        return None
    parsed = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is None else parsed.astimezone(UTC).replace(tzinfo=None)


def went_back(annotation: dict[str, Any], imported_at: datetime | None) -> bool:
    """The server's copy was saved before the one imported was: a restored backup, not someone's Update."""
    saved = updated_at(annotation)
    return saved is not None and imported_at is not None and saved < imported_at


def compare(rows: list[dict[str, Any]], server: dict[int, tuple[str | None, list[dict[str, Any]]]],
            name_of: dict[int, str]) -> tuple[list[Finding], list[dict[str, Any]]]:
    """(what differs, the rows the server still has) for the standing annotations `rows`. `server`: each task
    the project holds, by id, as (its feed, its annotations); a task whose feed differs from the row's is another
    task that got a lost one's id again (ids come back after a restore). `name_of`: people by user id."""
    findings, present = [], []
    for row in rows:
        feed, annotations = server.get(row["ls_task_id"], (None, []))
        mine = next((a for a in annotations if a.get("id") == row["ls_annotation_id"]), None)
        how = None
        if feed != row["feed_id"]:
            how = LOST_TASK
        elif mine is None:
            how = LOST_ANNOTATION
        else:
            present.append(row)
            if annotation_sha(mine.get("result") or []) != row["annotation_sha256"]:
                how = OLDER if went_back(mine, row["annotated_at"]) else CHANGED
        if how is None:
            continue
        by = changed_by(mine, name_of) if how == CHANGED and mine is not None else None
        findings.append(Finding(how, row["task_id"], row["task_version"], row["person"], row["project_id"],
                                row["ls_task_id"], row["ls_annotation_id"], by=by))
    return findings, present


def user_id(value: Any) -> int | None:
    """A user as Label Studio names one in an annotation: its id, or an object with it (the data manager's)."""
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, int) else None


def changed_by(annotation: dict[str, Any], name_of: dict[int, str]) -> str | None:
    """Who last saved the annotation, when not the person who wrote it."""
    changer = user_id(annotation.get("updated_by"))
    if changer is None or changer == user_id(annotation.get("completed_by")):
        return None
    return name_of.get(changer, f"user {changer}")


def mark(catalog: Catalog, rows: list[dict[str, Any]], findings: list[Finding], present: list[dict[str, Any]]
         ) -> None:
    """Keep what the server lost in `ls_annotations` (when first found, and how), and clear it for the rows
    it has again (a later restore brought them back)."""
    key = "task_id = ? AND task_version = ? AND ls_annotation_id = ?"
    lost = {(f.task_id, f.version, f.ls_annotation_id): f.how for f in findings if f.how in LOST}
    at = now()
    for row in rows:
        ids = (row["task_id"], row["task_version"], row["ls_annotation_id"])
        how = lost.get(ids)
        if how is not None and (row["lost_at"] is None or row["lost_how"] != how):
            catalog.con.execute(f"UPDATE ls_annotations SET lost_at = coalesce(lost_at, ?), lost_how = ? WHERE {key}",
                                [at, how, *ids])
    for row in present:
        if row["lost_at"] is not None:
            catalog.con.execute(f"UPDATE ls_annotations SET lost_at = NULL, lost_how = NULL WHERE {key}",
                                [row["task_id"], row["task_version"], row["ls_annotation_id"]])


def lose_project(catalog: Catalog, project_id: int) -> list[Finding]:
    """A project gone from the server: every annotation standing in it is lost with it."""
    rows = standing(catalog, project_id)
    findings = [Finding(LOST_PROJECT, r["task_id"], r["task_version"], r["person"], project_id, r["ls_task_id"],
                        r["ls_annotation_id"]) for r in rows]
    mark(catalog, rows, findings, [])
    return findings


def lost_by_project(catalog: Catalog) -> list[dict[str, Any]]:
    """For `curate annotate status`: each annotation the catalog has that the server no longer has (as the last
    export or import found), with whether its item was written again since, by project."""
    return catalog.rows(
        "SELECT a.*, EXISTS (SELECT 1 FROM ls_annotations b WHERE b.base_url = a.base_url AND b.project_id = "
        "a.project_id AND b.feed_id = a.feed_id AND b.feed_version = a.feed_version AND b.person = a.person AND "
        "b.imported_at > a.imported_at) AS written_again FROM ls_annotations a WHERE a.lost_at IS NOT NULL "
        "ORDER BY a.base_url, a.project_id, a.task_id, a.task_version")

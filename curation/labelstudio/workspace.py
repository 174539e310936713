"""A person's QC project in Label Studio (their pilot batch, their review queue), in their own
organization, and the group's adjudication project in the admin's. Shared by the calibration,
review and adjudication stages, which differ only in what they send and read back."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.progress import note
from curation.core.stage import StageRun
from curation.labelstudio.accounts import (
    ExportResult,
    Wanted,
    choose_password,
    ensure_account,
    in_organization,
    provision_members,
    read_passwords,
)
from curation.labelstudio.client import base_url, connect_as_admin, ls_call
from curation.labelstudio.guide import guide_html
from curation.labelstudio.people import remember_person
from curation.labelstudio.projects import annotation_sha, ensure_project, latest_annotation, project_tasks, send_tasks


@dataclass
class Session:
    """The admin's client, who the admin is, and the password file read once for the run."""

    client: Any
    admin_id: int
    admin_email: str
    home: int | None
    passwords: dict[str, str]


def open_session(passwords: Path | None = None) -> Session:
    client, (admin_id, admin_email, home) = connect_as_admin()
    return Session(client, admin_id, admin_email, home, read_passwords(passwords))


@contextmanager
def person_project(run: StageRun, session: Session, result: ExportResult, purpose: str, person: str,
                   label_config: str, title: str, description: str, media_root: Path | None) -> Iterator[int]:
    """Inside the person's organization, their project for `purpose` (made when missing), with the
    annotator guide as its instructions."""
    catalog = run.db
    account = ensure_account(catalog, person, session.admin_email, session.passwords, result, run.run_id)
    with in_organization(session.client, session.admin_id, account.organization_id, session.home):
        with catalog.transaction():
            project_id = ensure_project(
                session.client, catalog, "qc_projects", "qc_items",
                {"base_url": base_url(), "purpose": purpose, "person": person}, label_config, title, description,
                media_root, {"run_id": run.run_id, "organization_id": account.organization_id,
                             "user_id": account.user_id}, instruction=guide_html())
        yield project_id


@contextmanager
def group_project(run: StageRun, session: Session, purpose: str, label_config: str, title: str,
                  description: str, media_root: Path | None, instruction: str | None = None) -> Iterator[int]:
    """A project in the admin's own organization, for decisions the group takes together;
    `instruction`: the HTML its members read as the project's instructions (None: none kept)."""
    with run.db.transaction():
        project_id = ensure_project(session.client, run.db, "qc_projects", "qc_items",
                                    {"base_url": base_url(), "purpose": purpose, "person": "group"}, label_config,
                                    title, description, media_root,
                                    {"run_id": run.run_id, "organization_id": session.home, "user_id": None},
                                    instruction=instruction)
    yield project_id


def provision_group(run: StageRun, session: Session, group: list[str], result: ExportResult) -> None:
    """Accounts in the admin's organization for the deciding group's members (made when missing); a password
    chosen here is put in `result` to be shown once."""
    chosen = {person: choose_password(person, session.passwords) for person in group}
    made = provision_members([Wanted(person, chosen[person][0], person in session.passwords) for person in group],
                             int(session.home or 0))
    for person, account in zip(group, made, strict=True):
        remember_person(run.db, person, run.run_id)
        run.counts["accounts_created"] += account.created
        if chosen[person][1] and account.created:
            result.passwords[person] = chosen[person][0]


def working_in(session: Session, organization_id: int | None) -> Any:
    if organization_id is None or organization_id == session.home:
        return nullcontext()
    return in_organization(session.client, session.admin_id, organization_id, session.home)


def sent_items(catalog: Catalog, project_id: int) -> dict[str, int]:
    """item -> Label Studio task id, for what this project already holds."""
    return dict(catalog.con.execute("SELECT item, ls_task_id FROM qc_items WHERE base_url = ? AND project_id = ?",
                                    [base_url(), project_id]).fetchall())


def send_missing(run: StageRun, session: Session, project_id: int, purpose: str, person: str,
                 wanted: dict[str, Callable[[], tuple[dict[str, Any], dict[str, Any]]]], what: str) -> int:
    """Send the wanted items the project does not hold yet. `wanted` maps an item key to a function
    giving its (record, task data), called only for what is sent; counts `sent` and `already_sent`."""
    have = sent_items(run.db, project_id)
    missing = {key: make for key, make in wanted.items() if key not in have}
    if missing:  # tasks sent by a run killed before it recorded them are taken on, not sent twice
        live = ls_call("the project's tasks", session.client.tasks.list, project=project_id)
        orphans = {key: t.id for t in live if isinstance(key := (t.data or {}).get("qc_item"), str) and key in missing}
        with run.db.transaction():
            for key, task_id in orphans.items():
                record, _ = missing.pop(key)()
                run.db.insert("qc_items", {"base_url": base_url(), "ls_task_id": task_id, "project_id": project_id,
                                           "purpose": purpose, "person": person, "run_id": run.run_id,
                                           "created_at": now(), **record})
    todo = [(record, {**data, "qc_item": key}) for key, make in missing.items() for record, data in [make()]]
    run.counts["already_sent"] += len(wanted) - len(todo)
    sent = send_items(run, session, project_id, purpose, person, todo, what)
    run.counts["sent"] += sent
    return sent


def fresh_answers(run: StageRun, session: Session, purpose: str, table: str, answered: str, waiting: str
                  ) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any], str]]:
    """(project, task, item, annotation, its sha256) for every answer not imported yet into `table`
    (keyed by task and version). An answer changed after its import does not count again: the
    decision taken on it stands, and the import says so."""
    for project, task, item in returned_tasks(run, session, purpose):
        annotation = latest_annotation(task)
        if annotation is None:
            run.counts[waiting] += 1
            continue
        run.counts[answered] += 1
        key = [item["task_id"], item["task_version"]]
        sha = annotation_sha(annotation.get("result") or [])
        before = run.db.scalar(f"SELECT annotation_sha256 FROM {table} WHERE task_id = ? AND task_version = ?", key)
        if before is not None:
            run.counts["unchanged" if before == sha else "changed_after_decision"] += 1
            if before != sha:
                note(f"warning: {key[0]} v{key[1]}: the answer in {project['person']}'s {purpose} project changed "
                     "after it was imported; the first one stands (the decision on it is made)")
            continue
        yield project, task, item, annotation, sha


def send_items(run: StageRun, session: Session, project_id: int, purpose: str, person: str,
               items: list[tuple[dict[str, Any], dict[str, Any]]], what: str) -> int:
    """Send (record, task data) pairs; each record (item, round, task, feed, ...) is remembered
    with the task id it got, in one transaction with nothing else."""
    ids = send_tasks(session.client, project_id, [{"data": data} for _, data in items], what)
    with run.db.transaction():
        for (record, _), task_id in zip(items, ids, strict=True):
            run.db.insert("qc_items", {"base_url": base_url(), "ls_task_id": task_id, "project_id": project_id,
                                       "purpose": purpose, "person": person, "run_id": run.run_id,
                                       "created_at": now(), **record})
    return len(ids)


def returned_tasks(run: StageRun, session: Session, purpose: str) -> Iterator[tuple[dict[str, Any], dict[str, Any],
                                                                                      dict[str, Any]]]:
    """(project row, Label Studio task with annotations, the item record) for every task sent for `purpose`."""
    catalog = run.db
    url = base_url()
    for project in catalog.rows("SELECT * FROM qc_projects WHERE base_url = ? AND purpose = ? ORDER BY person",
                                [url, purpose]):
        items = {r["ls_task_id"]: r for r in catalog.rows(
            "SELECT * FROM qc_items WHERE base_url = ? AND project_id = ?", [url, project["project_id"]])}
        with working_in(session, project["organization_id"]):
            tasks = project_tasks(session.client, project["project_id"], f"{project['person']}'s {purpose} project")
            for task in tasks:
                if task["id"] in items:
                    yield project, task, items[task["id"]]

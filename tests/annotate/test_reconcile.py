"""Nothing an annotator submitted is lost, and nothing vanishes unnoticed: tasks deleted on the Label Studio
server are named by the export (per person and project) and sent again with --resend-missing, an imported
task stays in the catalog and the import says it is gone from the server. Through the `curate` commands,
against a real server."""

from __future__ import annotations

import json
import shutil

import pytest

import curation.annotate.export as export
from curation.annotate.export import export_to_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.resources import resource_text
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.accounts import current_admin, in_organization
from curation.labelstudio.client import import_tasks
from tests.annotate.authored import one_imported
from tests.cli.test_cli import curate
from tests.labelstudio import login
from tests.qc.helpers import curate_in

pytestmark = pytest.mark.servers  # a real Label Studio

PERSON = "xena"


def live_tasks(ls_client, organization: int, project: int) -> list[int]:
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, organization, home):
        return sorted(t.id for t in ls_client.tasks.list(project=project))


def test_tasks_deleted_on_the_server_are_named_resent_and_never_duplicated(clustered_catalog, label_studio,
                                                                           ls_client):
    start = one_imported(clustered_catalog, label_studio, PERSON, feeds=6, seed=96)
    db, base, sent, task_id = start.db, start.base, start.sent, start.task_id
    project, org = sent[0]["project_id"], sent[0]["organization_id"]

    # three of her six tasks are deleted on the server, the imported one among them
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, org, home):
        for row in sent[:3]:
            ls_client.tasks.delete(id=str(row["ls_task_id"]))
    assert len(live_tasks(ls_client, org, project)) == 3

    out = curate(*base, "annotate", "export", "--annotators", PERSON)
    assert out.returncode == 0, out.stderr
    assert "6 feeds: 0 exported, 3 already in Label Studio" in out.stdout  # no longer "6 already there"
    written_on, resendable = sent[0], sent[1:3]
    shown = ", ".join(f"{r['feed_id']} v1" for r in sorted(resendable, key=lambda r: r["feed_id"]))
    (line,) = [x for x in out.stdout.splitlines() if f"warning: {PERSON}: 3 feeds sent to project {project}" in x]
    # what the warning says --resend-missing will do is what it does, below: the imported feed stays
    assert f"--resend-missing` sends 2 of them again ({shown})" in line, line
    assert line.endswith(f"not sent again: {written_on['feed_id']} v1 (imported as {task_id} v1, which the catalog "
                         "keeps)"), line
    imported = curate(*base, "annotate", "import")
    named = [x for x in imported.stdout.splitlines() if x.startswith(f"  warning: {task_id} v1 ({PERSON}): ")]
    assert len(named) == 1 and f"Label Studio task {written_on['ls_task_id']} (project {project}) is gone" in named[0]
    with Catalog(db, read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM tasks") == 1  # her annotation stays in the catalog

    again = curate(*base, "annotate", "export", "--annotators", PERSON, "--resend-missing")
    assert again.returncode == 0, again.stderr
    assert "2 exported" in again.stdout and f"sent again: {shown}" in again.stdout
    assert len(live_tasks(ls_client, org, project)) == 5
    with Catalog(db, read_only=True) as cat:
        resent = cat.rows("SELECT feed_id FROM ls_tasks WHERE project_id = ? AND NOT list_contains(?, ls_task_id) "
                          "ORDER BY feed_id", [project, [r["ls_task_id"] for r in sent]])
    assert ", ".join(f"{r['feed_id']} v1" for r in resent) == shown


def authoring_projects(ls_client, organization: int, title: str) -> list[int]:
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, organization, home):
        return sorted(p.id for p in ls_client.projects.list() if p.title == title)


def test_an_export_that_fails_part_way_leaves_nothing_a_rerun_duplicates(clustered_catalog_file, label_studio,
                                                                         ls_client, tmp_path, monkeypatch):
    """Run from a folder whose `build/media` Label Studio will not serve, the export fails after Label Studio
    made yara's project; the re-run (folder fixed) takes that project on instead of making a second one. A
    second catalog on the same server makes a project of its own: it never takes on the first one's."""
    first, second = tmp_path / "first.duckdb", tmp_path / "second.duckdb"
    for path, seed in ((first, 97), (second, 98)):
        shutil.copy(clustered_catalog_file, path)
        with Catalog(path) as cat:
            build_feed_set(cat, load_config().feeds, 3, seed=seed)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "build" / "media").mkdir(parents=True)  # not under the server's document root
    failed = curate_in(elsewhere, "--catalog", str(first), "annotate", "export", "--add", "yara")
    assert failed.returncode == 1 and "LOCAL_FILES_DOCUMENT_ROOT" in failed.stderr, failed.stderr
    with Catalog(first, read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM ls_projects WHERE annotator = 'yara'") == 0
    organization = login(label_studio["url"], "yara@annotators.local", label_studio["annotator_password"]).get(
        f"{label_studio['url']}/api/current-user/whoami").json()["active_organization"]
    title = "LivingScreen authoring · yara"
    orphan = authoring_projects(ls_client, organization, title)
    assert len(orphan) == 1, "Label Studio made the project before the export failed"

    (elsewhere / "build" / "media").rmdir()
    again = curate_in(elsewhere, "--catalog", str(first), "annotate", "export", "--annotators", "yara")
    assert again.returncode == 0, again.stderr
    assert authoring_projects(ls_client, organization, title) == orphan  # taken on, not made twice
    with Catalog(first, read_only=True) as cat:
        assert cat.scalar("SELECT project_id FROM ls_projects WHERE annotator = 'yara'") == orphan[0]
        assert cat.scalar("SELECT count(*) FROM ls_tasks WHERE project_id = ?", orphan) == 3

    # the second catalog knows nothing of yara's project and must not take it
    other = curate_in(elsewhere, "--catalog", str(second), "annotate", "export", "--add", "yara")
    assert other.returncode == 0, other.stderr
    with Catalog(second, read_only=True) as cat:
        theirs = cat.scalar("SELECT project_id FROM ls_projects WHERE annotator = 'yara'")
    assert theirs != orphan[0] and len(authoring_projects(ls_client, organization, title)) == 2

    # killed between Label Studio's import of the tasks and the catalog's record of them: the re-run records
    # the tasks Label Studio holds and sends none twice
    with Catalog(first) as cat:
        build_feed_set(cat, load_config().feeds, 2, seed=99)  # two more feeds for yara

        def killed(self, table, *args, **kwargs):
            if table == "ls_tasks":
                raise KeyboardInterrupt
            return real_insert(self, table, *args, **kwargs)

        real_insert = Catalog.insert_staged
        monkeypatch.setattr(Catalog, "insert_staged", killed)
        with pytest.raises(KeyboardInterrupt):
            export_to_label_studio(cat, ["yara"], label_studio["media"])
        monkeypatch.undo()
        assert export_to_label_studio(cat, ["yara"], label_studio["media"])["exported"] == 0
        recorded = sorted(r[0] for r in cat.con.execute(
            "SELECT ls_task_id FROM ls_tasks WHERE project_id = ?", orphan).fetchall())
    assert recorded == live_tasks(ls_client, organization, orphan[0]) and len(recorded) == 5


def test_tasks_the_catalog_did_not_record_are_read_by_id_a_page_at_a_time(ls_client, monkeypatch):
    """A killed export of 1,000 feeds leaves 1,000 tasks to take on: they are read by id in pages, and only
    the ones named (a page of the project's other tasks would cost as much as the whole listing)."""
    project = ls_client.projects.create(title="unrecorded", label_config=resource_text("authoring.xml"))
    try:
        ids = import_tasks(ls_client, "seven tasks", project.id, json.dumps(
            [{"data": {"feed_html": f"card {i}", "feed_id": f"f{i}", "feed_version": 1}} for i in range(7)]).encode())
        monkeypatch.setattr(export, "UNRECORDED_PAGE", 2)
        asked = [ids[1], ids[4], ids[5]]
        got = export.unrecorded_tasks(ls_client, project.id, asked)
        assert sorted(t.id for t in got) == asked
        assert sorted(t.data["feed_id"] for t in got) == ["f1", "f4", "f5"]
    finally:
        ls_client.projects.delete(id=project.id)


def test_a_project_deleted_on_the_server_is_made_again_with_all_its_feeds(clustered_catalog, label_studio,
                                                                          ls_client):
    """The second of two people loses her whole project on the server: the next export of both makes her a new
    one and sends all her feeds to it, and the first person's feeds stay where they are."""
    build_feed_set(clustered_catalog, load_config().feeds, 6, seed=97)
    cat = clustered_catalog
    first = export_to_label_studio(cat, [], label_studio["media"], add=["pia", "quin"])
    assert first["exported"] == 6
    before = {r["annotator"]: r for r in cat.rows("SELECT annotator, project_id, organization_id FROM ls_projects "
                                                  "WHERE annotator IN ('pia', 'quin')")}
    hers = sorted(r[0] for r in cat.con.execute(
        "SELECT feed_id FROM ls_tasks WHERE annotator = 'quin'").fetchall())
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, before["quin"]["organization_id"], home):
        ls_client.projects.delete(id=before["quin"]["project_id"])

    again = export_to_label_studio(cat, ["pia", "quin"], label_studio["media"])
    assert again["exported"] == len(hers) and again["per_annotator"]["pia"] == {"feeds": 6 - len(hers), "new": 0}
    made = cat.scalar("SELECT project_id FROM ls_projects WHERE annotator = 'quin'")
    assert made != before["quin"]["project_id"]
    assert sorted(r[0] for r in cat.con.execute(
        "SELECT feed_id FROM ls_tasks WHERE project_id = ?", [made]).fetchall()) == hers
    assert len(live_tasks(ls_client, before["quin"]["organization_id"], made)) == len(hers)
    kept = cat.scalar("SELECT count(*) FROM ls_tasks WHERE project_id = ?", [before["pia"]["project_id"]])
    assert kept == 6 - len(hers)

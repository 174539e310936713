"""Nothing an annotator submitted is lost, and nothing vanishes unnoticed: tasks deleted on the Label Studio
server are named by the export (per person and project) and sent again with --resend-missing, an imported
task stays in the catalog and the import says it is gone from the server. Through the `curate` commands,
against a real server."""

from __future__ import annotations

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.accounts import current_admin, in_organization
from tests.annotate.test_labelstudio import result
from tests.cli.test_cli import curate
from tests.labelstudio import login

pytestmark = pytest.mark.servers  # a real Label Studio

PERSON = "xena"


def live_tasks(ls_client, organization: int, project: int) -> list[int]:
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, organization, home):
        return sorted(t.id for t in ls_client.tasks.list(project=project))


def test_tasks_deleted_on_the_server_are_named_resent_and_never_duplicated(clustered_catalog, label_studio,
                                                                           ls_client):
    build_feed_set(clustered_catalog, load_config().feeds, 6, seed=96)
    db = str(clustered_catalog.path)
    clustered_catalog.close()
    base = ("--catalog", db)
    assert curate(*base, "annotate", "export", "--add", PERSON).returncode == 0
    with Catalog(db, read_only=True) as cat:
        sent = cat.rows("SELECT p.project_id, p.organization_id, t.ls_task_id, t.feed_id FROM ls_tasks t "
                        "JOIN ls_projects p USING (base_url, project_id) ORDER BY t.ls_task_id")
    project, org = sent[0]["project_id"], sent[0]["organization_id"]
    xena = login(label_studio["url"], f"{PERSON}@annotators.local", label_studio["annotator_password"])
    written = xena.post(f"{label_studio['url']}/api/tasks/{sent[0]['ls_task_id']}/annotations/",
                        json={"result": result(tier="L1", subcategory="gui_like", instruction="给第一个视频点赞",
                                               platform_state="like 1")})
    assert written.status_code == 201, written.text
    assert "1 new tasks" in curate(*base, "annotate", "import").stdout

    # three of her six tasks are deleted on the server, the imported one among them
    admin_id, _, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, org, home):
        for row in sent[:3]:
            ls_client.tasks.delete(id=str(row["ls_task_id"]))
    assert len(live_tasks(ls_client, org, project)) == 3

    out = curate(*base, "annotate", "export", "--annotators", PERSON)
    assert out.returncode == 0, out.stderr
    assert "6 feeds: 0 exported, 3 already in Label Studio" in out.stdout  # no longer "6 already there"
    assert (f"warning: {PERSON}: 3 feeds sent to project {project} are no longer in Label Studio" in out.stdout
            and "--resend-missing` sends them again" in out.stdout)
    imported = curate(*base, "annotate", "import")
    assert "1 tasks imported before are no longer in Label Studio" in imported.stdout, imported.stdout
    with Catalog(db, read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM tasks") == 1  # her annotation stays in the catalog

    again = curate(*base, "annotate", "export", "--annotators", PERSON, "--resend-missing")
    assert again.returncode == 0, again.stderr
    assert "2 exported" in again.stdout  # the imported one is not sent again
    assert len(live_tasks(ls_client, org, project)) == 5

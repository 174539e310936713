"""Who decided: a Label Studio account that cannot be looked up is named by its id, as meant;
a bug during the lookup fails the import, and no decision is recorded under a made-up name."""

from __future__ import annotations

import pytest
from label_studio_sdk.users.client import UsersClient

from curation.core.catalog import now
from curation.labelstudio.workspace import open_session
from curation.qc.adjudicate import decided_by, export_adjudication, import_adjudication
from curation.tasks.lifecycle import state_of
from tests.cli.planted import last_run
from tests.labelstudio import login
from tests.qc.helpers import plant_task, planted_catalog
from tests.qc.test_qc_labelstudio import answer, choices

pytestmark = pytest.mark.servers  # a real Label Studio server

TASK = "feature_analysis_89"


def escalate(cat, task_id: str) -> None:
    """The planted task (valid) on through the filter to the group, as review would send it."""
    for seq, (before, after) in enumerate([("valid", "shortcut_passed"), ("shortcut_passed", "escalated")], start=3):
        cat.insert("task_transitions", {"task_id": task_id, "version": 1, "seq": seq, "from_state": before,
                                        "to_state": after, "reason": "test", "who": "test", "run_id": "test",
                                        "moved_at": now()})


@pytest.fixture
def decided_case(clustered_catalog, label_studio):
    """One escalated task in the group's project, decided `keep` by the admin, who did not sign it."""
    cat = clustered_catalog
    feeds = planted_catalog(cat, 2, seed=89)
    plant_task(cat, TASK, feeds[0], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里一共有几只鸟？", options={"A": "三只", "B": "四只"}, eval_config=[{"answer": "B"}])
    escalate(cat, TASK)
    assert export_adjudication(cat, label_studio["media"])["sent"] == 1
    ls_task_id = cat.scalar("SELECT ls_task_id FROM qc_items WHERE purpose = 'adjudication' AND task_id = ?", [TASK])
    admin = login(label_studio["url"], label_studio["admin"], label_studio["password"])
    answer(admin, label_studio["url"], ls_task_id, [choices("decision", "keep")])
    return cat


def test_a_bug_looking_up_who_decided_fails_the_import_and_records_no_decision(decided_case, label_studio,
                                                                                monkeypatch):
    cat = decided_case

    def planted(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(UsersClient, "get", planted)
    with pytest.raises(RuntimeError, match="injected"):
        import_adjudication(cat)
    run = last_run(cat, "qc-adjudicate-import")
    assert run["status"] == "failed" and run["error"] == "RuntimeError: injected"
    assert "in decided_by" in run["traceback"] and "in ls_call" in run["traceback"]
    assert cat.scalar("SELECT count(*) FROM decisions") == 0
    assert state_of(cat, TASK, 1) == "escalated"
    # the bug gone, the same answer is imported under the name of the account that gave it
    monkeypatch.undo()
    assert import_adjudication(cat)["kept"] == 1
    assert cat.scalar("SELECT decided_by FROM decisions WHERE task_id = ?", [TASK]) == label_studio["admin"]
    assert state_of(cat, TASK, 1) == "kept"


def test_an_account_label_studio_does_not_know_is_named_by_its_id(label_studio):
    session = open_session()
    assert decided_by(session, {}, {"completed_by": 987654}, set()) == "Label Studio user 987654"
    assert decided_by(session, {"decided_by": " ana,  ben "}, {"completed_by": 987654}, set()) == "ana, ben"
    # a known member is named as the catalog knows her, however she typed it; other words stay hers
    assert decided_by(session, {"decided_by": "CARLA@annotators.local, ben,  group  meeting"}, {"completed_by": 1},
                {"Carla", "dan"}) == "Carla, ben, group meeting"

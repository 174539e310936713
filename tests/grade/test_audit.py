"""The trajectory audit on a real Label Studio server: sampled episodes out, flags back, rates."""

from __future__ import annotations

import pytest

from curation.grade.audit import export_audit, import_audit
from curation.grade.grade import grade_logs
from curation.grade.report import audit_rates
from tests.core.contract import run_traced
from tests.grade.logs import UP, write_episode
from tests.labelstudio import login

pytestmark = pytest.mark.servers


def test_audited_trajectories_give_under_and_over_observation_rates(released, label_studio, tmp_path):
    cat, tasks = released
    for model in ("seed", "gemini"):
        for task_id in ("feature_analysis_1", "feature_analysis_2", "moderation_1"):
            write_episode(tmp_path / model, task_id, tasks[task_id]["instruction"],
                          [("watch", {"seconds": 1}), ("swipe", UP), ("watch", {"seconds": 9}),
                           ("answer", {"text": "B"})], result=0.0)
    grade_logs(cat, [("seed", tmp_path / "seed"), ("gemini", tmp_path / "gemini")], "1.0.0", tmp_path / "out")
    sent = run_traced(cat, "grade-audit-export", lambda: export_audit(cat, "1.0.0", per_tier=1, seed=3,
                                                                       media_root=label_studio["media"]))
    assert (sent["graded"], sent["sampled"], sent["sent"]) == (6, 4, 4)  # one L2 and one L3 per model
    assert export_audit(cat, "1.0.0", per_tier=1, seed=3, media_root=label_studio["media"])["sent"] == 0
    items = cat.rows("SELECT * FROM qc_items WHERE purpose = 'audit' ORDER BY item")
    admin = login(label_studio["url"], label_studio["admin"], label_studio["password"])
    for item in items:
        data = admin.get(f"{label_studio['url']}/api/tasks/{item['ls_task_id']}").json()["data"]
        assert "seed" not in data["audit_ref"] and "gemini" not in data["audit_ref"]  # the model is not named
        assert "9.0 s" in data["episode_html"] and "fully consumed" in data["episode_html"]
        model = item["item"].split("/")[1]
        # seed's trajectories: video 1 under-observed, and on its L3 one video 2 over-observed as well
        result = [] if model == "gemini" else [
            {"from_name": "under", "to_name": "feed", "type": "choices", "value": {"choices": ["1"]}}]
        if model == "seed" and item["task_id"] == "moderation_1":
            result.append({"from_name": "over", "to_name": "feed", "type": "choices", "value": {"choices": ["2"]}})
        response = admin.post(f"{label_studio['url']}/api/tasks/{item['ls_task_id']}/annotations/",
                              json={"result": result})
        assert response.status_code == 201, response.text
    counts = run_traced(cat, "grade-audit-import", lambda: import_audit(cat, "v1.0.0", tmp_path / "grade.html"))
    assert (counts["audited"], counts["waiting"]) == (4, 0)
    rates = {r["model"]: r for r in audit_rates(cat, "1.0.0")}
    assert (rates["seed"]["trajectories"], rates["seed"]["under"], rates["seed"]["over"], rates["seed"]["both"]) == (
        2, 1.0, 0.5, 0.5)
    assert (rates["gemini"]["under"], rates["gemini"]["over"], rates["gemini"]["both"]) == (0.0, 0.0, 0.0)
    assert counts.rates == list(rates.values())  # the stage hands back the same rates, model by model
    page = (tmp_path / "grade.html").read_text(encoding="utf-8")  # written by the import's own run
    assert "Audited trajectories" in page and "<td>seed</td><td>2</td><td>100.0%</td><td>50.0%</td>" in page

import json

from curation.core.config import load_config
from curation.corpus.feeds import load_feed
from curation.qc.shortcut import TaskView, decide, filter_shortcuts
from curation.qc.shortcut_report import shortcut_summary, write_report
from curation.status import explain_task
from tests.qc.helpers import plant_task, planted_catalog

CONFIG = load_config().qc.shortcut
OPTIONS = {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}


def test_lexical_inspector_discards_what_a_title_gives_away(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = planted_catalog(cat)
    leaked = load_feed(cat, feeds[0]).video_feed[2]
    cat.con.execute("UPDATE videos SET title = '橘色的猫第一次见到雪' WHERE video_id = ?", [leaked])
    plant_task(cat, "feature_analysis_1", feeds[0], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里的猫是什么颜色？", options=OPTIONS, eval_config=[{"answer": "C"}])
    plant_task(cat, "feature_analysis_2", feeds[1], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里一共有几只鸟？", options={"A": "三只", "B": "四只", "C": "五只"},
               eval_config=[{"answer": "B"}])
    plant_task(cat, "robust_evaluation_1", feeds[2], tier="L2", subcategory="robust_evaluation",
               eval_type="label", instruction="作者明天会发什么？", options={"A": "美食", "B": "无法确定"},
               eval_config=[{"answer": "B"}])
    plant_task(cat, "moderation_1", feeds[3], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="举报不实视频", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}}])
    plant_task(cat, "event_association_1", feeds[4], tier="L2", subcategory="event_association",
               eval_type="label", instruction="?", options={"A": "x"}, eval_config=[{"answer": "A"}],
               status="needs_fix")
    counts = filter_shortcuts(cat, CONFIG)
    assert counts == {"tasks": 4, "passed": 3, "discarded": 1, "undecided": 0, "requests": 0, "failed": 0}
    verdicts = dict(cat.con.execute("SELECT task_id, verdict FROM shortcut_verdicts").fetchall())
    assert verdicts == {"feature_analysis_1": "shortcut_discarded", "feature_analysis_2": "shortcut_passed",
                        "robust_evaluation_1": "shortcut_passed", "moderation_1": "shortcut_passed"}
    answers = json.loads(cat.con.execute("SELECT answers FROM shortcut_verdicts WHERE task_id = "
                                         "'feature_analysis_1'").fetchone()[0])
    assert answers == [{"inspector": "lexical", "sample": 0, "raw": "C", "parsed": "C", "correct": True}]
    summary = shortcut_summary(cat)
    assert summary["groups"]["all"] == {"kept": 3, "total": 4}
    assert summary["groups"]["L2 feature_analysis"] == {"kept": 1, "total": 2}
    assert summary["guesser_discards"] == round(1 / 4 + 1 / 3 + 1 / 2, 2)
    explained = "\n".join(explain_task(cat, "feature_analysis_1"))
    assert "shortcut_discarded (paper rule" in explained and "lexical #0: C (correct)" in explained
    html = write_report(cat, tmp_path / "s.html", "paper", False).read_text(encoding="utf-8")
    assert "74.3%" in html and "75.0%" in html


def _view(correct: list[bool]) -> TaskView:
    view = TaskView("x_1", 1, "L2", "feature_analysis", "label", "q", {"A": "a"}, [{"answer": "A"}], [])
    view.answers = [{"inspector": f"i{n}", "sample": 0, "correct": c} for n, c in enumerate(correct)]
    return view


def test_decision_rules():
    assert decide(_view([True, False, False]), "paper", 0) == "shortcut_discarded"
    assert decide(_view([False, True, True]), "paper", 0) == "shortcut_passed"
    assert decide(_view([False, True, True]), "mmstar", 1) == "shortcut_discarded"
    assert decide(_view([False, True, False]), "mmstar", 1) == "shortcut_passed"
    assert decide(_view([False, False, False]), "mmstar", 0) == "shortcut_passed"

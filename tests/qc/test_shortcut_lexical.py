import json
from dataclasses import replace

from curation.core.config import InspectorConfig, load_config
from curation.corpus.feeds import load_feed
from curation.labelstudio.render import render_feed
from curation.qc.funnel import qc_report
from curation.qc.shortcut.filter import TaskView, decide, filter_shortcuts, load_views
from curation.qc.shortcut.prompts import CANNOT_ANSWER, UNPARSED, build_prompt, parse_label_answer
from curation.qc.shortcut.report import disagreements, run_verdicts, shortcut_summary, write_report
from curation.status import explain_task
from tests.qc.helpers import plant_giveaway_pair, plant_task, planted_catalog

CONFIG = load_config().qc.shortcut
OPTIONS = {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}


def test_lexical_inspector_discards_what_a_title_gives_away(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = planted_catalog(cat)
    plant_giveaway_pair(cat, feeds)
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
    assert {k: counts[k] for k in ("tasks", "passed", "discarded", "undecided", "requests", "failed")} == {
        "tasks": 4, "passed": 3, "discarded": 1, "undecided": 0, "requests": 0, "failed": 0}
    verdicts = dict(cat.con.execute("SELECT task_id, verdict FROM shortcut_verdicts").fetchall())
    assert verdicts == {"feature_analysis_1": "shortcut_discarded", "feature_analysis_2": "shortcut_passed",
                        "robust_evaluation_1": "shortcut_passed", "moderation_1": "shortcut_passed"}
    answers = json.loads(cat.con.execute("SELECT answers FROM shortcut_verdicts WHERE task_id = "
                                         "'feature_analysis_1'").fetchone()[0])
    assert answers == [{"inspector": "lexical", "sample": 0, "raw": "C", "parsed": "C", "correct": True}]
    summary = shortcut_summary(run_verdicts(cat, counts))
    assert summary["groups"]["all"] == {"kept": 3, "total": 4}
    assert summary["groups"]["L2 feature_analysis"] == {"kept": 1, "total": 2}
    assert summary["guesser_discards"] == round(1 / 4 + 1 / 3 + 1 / 2, 2)
    states = dict(cat.con.execute("SELECT task_id, state FROM task_states").fetchall())
    assert states == {"feature_analysis_1": "shortcut_discarded", "feature_analysis_2": "shortcut_passed",
                      "robust_evaluation_1": "shortcut_passed", "moderation_1": "shortcut_passed",
                      "event_association_1": "needs_fix"}  # a discarded task is out of the flow, on record
    funnel = qc_report(cat, tmp_path / "qc.html")["all"]
    assert (funnel["tasks"], funnel["authored_here"], funnel["validated"], funnel["needs_fix"]) == (5, 5, 4, 1)
    # moderation_1 passed unjudged (the lexical inspector cannot read a platform task): 2 kept of 3 judged
    assert (funnel["passed_filter"], funnel["shortcut_discarded"], funnel["unread"]) == (3, 1, 1)
    assert (funnel["kept_by_filter"], funnel["judged_by_filter"], funnel["shortcut_retained"]) == (2, 3, 0.6667)
    report = (tmp_path / "qc.html").read_text(encoding="utf-8")
    assert "74.3%" in report and "<svg" in report and "L2 feature_analysis" in report
    explained = "\n".join(explain_task(cat, "feature_analysis_1"))
    assert "v1: valid -> shortcut_discarded (qc-shortcut" in explained
    assert "solved from metadata by lexical" in explained
    assert "shortcut_discarded (paper rule" in explained and "lexical #0: C (correct)" in explained
    html = write_report(cat, tmp_path / "s.html", counts).read_text(encoding="utf-8")
    assert "74.3%" in html and "75.0%" in html and "Discarded (1)" in html and "feature_analysis_1" in html

    # Another configuration (an eager lexical inspector, no platform tasks) is a separate set of verdicts;
    # its report describes its own run and names where the first configuration decided otherwise.
    eager = replace(CONFIG, platform_tiers=[], inspectors=[InspectorConfig(name="eager", margin=0.0, minimum=0.0)])
    second = filter_shortcuts(cat, eager)
    assert second["tasks"] == 3 and second.config_sha256 != counts.config_sha256
    html = write_report(cat, tmp_path / "s2.html", second).read_text(encoding="utf-8")
    assert f"judged {second['tasks']} tasks" in html and "moderation_1" not in html
    differ = disagreements(cat, second)
    assert {d["task_id"] for d in differ} == {r[0] for r in cat.con.execute(
        "SELECT a.task_id FROM shortcut_verdicts a JOIN shortcut_verdicts b USING (task_id, task_version) "
        "WHERE a.config_sha256 = ? AND b.config_sha256 = ? AND a.verdict <> b.verdict",
        [second.config_sha256, counts.config_sha256]).fetchall()}
    rows_before = cat.rows("SELECT * FROM shortcut_verdicts ORDER BY ALL")
    again = filter_shortcuts(cat, CONFIG)
    assert again.config_sha256 == counts.config_sha256
    assert cat.rows("SELECT * FROM shortcut_verdicts ORDER BY ALL") == rows_before  # a re-run changes nothing


def test_the_filter_sees_what_annotators_see(clustered_catalog):
    """A caption only in the description (no title) is shown to annotators and to the filter alike;
    the corpus's own annotations (FakeSV's verdict, its event claim) are shown to neither."""
    cat = clustered_catalog
    feeds = planted_catalog(cat)
    feed = load_feed(cat, feeds[0])
    leaked = feed.video_feed[1]
    cat.con.execute("UPDATE videos SET title = NULL, description = '橘色的猫第一次见到雪', label = '辟谣', "
                    "keywords = ['网传白猫会说话'] WHERE video_id = ?", [leaked])
    plant_task(cat, "feature_analysis_1", feeds[0], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里的猫是什么颜色？", options=OPTIONS, eval_config=[{"answer": "C"}])
    card = render_feed(cat, feed, cat.path.parent)
    view = load_views(cat, "zh", ["L3"])[0]
    assert "橘色的猫第一次见到雪" in card and "橘色的猫第一次见到雪" in view.prompt.text
    for hidden in ("辟谣", "网传白猫会说话"):
        assert hidden not in card and hidden not in view.prompt.text
    counts = filter_shortcuts(cat, CONFIG)
    assert counts["discarded"] == 1


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


def test_answers_are_parsed_strictly():
    letters = ["A", "B", "C", "D"]
    assert parse_label_answer("B", letters) == "B"
    assert parse_label_answer("  答案：C。", letters) == "C"
    assert parse_label_answer("D: 无法确定", letters) == "D"  # choosing the unanswerable option is an answer
    assert parse_label_answer("Cannot answer", letters) == CANNOT_ANSWER
    assert parse_label_answer("“无法回答”", letters) == CANNOT_ANSWER
    # an echo of the option list holds the unanswerable option's words, but it is no abstention
    assert parse_label_answer("A: 白色的猫 B: 黑色的猫 C: 橘色的猫 D: 无法确定", letters) == UNPARSED
    assert parse_label_answer("A or B", letters) == UNPARSED
    assert parse_label_answer("E", letters) == UNPARSED
    assert parse_label_answer("", letters) == UNPARSED


def test_default_prompt_is_the_papers():
    from curation.corpus.visible import VisibleVideo

    videos = [VisibleVideo("FakeSV/1", caption="猫", hashtags=("萌宠",), author_bio="爱猫人士")]
    zh = build_prompt("label", "zh", videos, "视频里有几只猫？", {"A": "一只", "B": "两只"}).text
    assert zh.startswith("以下是一些视频的元信息:") and "请仅根据上述元信息回答以下问题" in zh
    assert "问题:视频里有几只猫？\nA: 一只\nB: 两只" in zh and "“无法回答”" in zh and "#萌宠" in zh
    en = build_prompt("label", "en", videos, "How many cats?", {"A": "one"}).text
    assert en.startswith("The following is the metadata of some videos:") and "“Cannot answer”" in en
    compact = build_prompt("label", "en", videos, "How many cats?", {"A": "one"}, style="compact").text
    assert compact != en and "How many cats?\nA: one" in compact

"""What the runner's app is reset with: real counts and comment threads from the catalog."""

from __future__ import annotations

import json

from curation.release.build import build_release
from curation.release.envfeeds import comment_threads, export_env_feeds, video_url
from tests.core.contract import run_traced
from tests.release.helpers import reviewed_catalog, settings


def test_video_urls_where_the_runner_serves_each_source():
    assert video_url("FakeSV/7031859613460925736") == "static/data/FakeSV/videos/7031859613460925736.mp4"
    assert video_url("LiveBot/美食/【深夜食堂】一碗 面") == (
        "static/data/LiveBot/videos/美食/%E3%80%90%E6%B7%B1%E5%A4%9C%E9%A3%9F%E5%A0%82%E3%80%91%E4%B8%80%E7%A2%97%20"
        "%E9%9D%A2.mp4")
    assert video_url("Video-SafetyBench/12_Sexual_Content/Erotic_Chats/8") == (
        "static/data/Video-SafetyBench/12_Sexual_Content/Erotic_Chats/8.mp4")
    assert video_url("KuaiRec/123") == "static/data/KuaiRec/videos/123.mp4"


def test_replies_nest_under_their_comment():
    rows = [{"comment_id": "c1", "author": None, "text": " 真的吗 ", "parent_id": None},
            {"comment_id": "c2", "author": "小王", "text": "是真的", "parent_id": "c1"},
            {"comment_id": "c3", "author": "", "text": "学到了", "parent_id": None}]
    assert comment_threads(rows) == [
        {"id": 1, "user": "评论1", "text": "真的吗", "replies": [{"id": 2, "user": "小王", "text": "是真的"}]},
        {"id": 3, "user": "评论3", "text": "学到了", "replies": []}]


def test_every_task_gets_its_feed_with_the_catalogs_counts_and_comments(clustered_catalog, tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)
    build_release(cat, "1.0.0", settings(tmp_path / "releases"))
    runner = {r["task_id"]: json.loads(r["runner"]) for r in cat.rows("SELECT * FROM release_tasks")}
    first = runner["feature_analysis_1"]["video_feed"][0]
    cat.con.execute("UPDATE videos SET like_count = 1234, collect_count = 56, author_bio = '科普博主' "
                    "WHERE video_id = ?", [first])
    cat.con.execute("UPDATE videos SET author_bio = NULL, author_name = NULL WHERE video_id = ?",
                    [runner["feature_analysis_1"]["video_feed"][1]])
    cat.con.execute("DELETE FROM comments WHERE video_id = ?", [first])
    for n, text in enumerate(["第一条", "第二条"]):
        cat.insert("comments", {"comment_id": f"x{n}", "video_id": first, "text": text, "like_count": 0,
                                "time_s": float(n)})
    counts = run_traced(cat, "release-env-feeds", lambda: export_env_feeds(cat, "1.0.0", tmp_path / "env", True))
    assert counts["tasks"] == 4 and sorted(p.stem for p in (tmp_path / "env").iterdir()) == sorted(runner)
    payload = json.loads((tmp_path / "env" / "feature_analysis_1.json").read_text(encoding="utf-8"))
    assert [v["id"] for v in payload] == list(range(1, len(runner["feature_analysis_1"]["video_feed"]) + 1))
    head = payload[0]
    assert (head["likes"], head["collects"], head["author"], head["is_liked"], head["reports"]) == (
        1234, 56, "科普博主", False, [])
    assert [c["text"] for c in head["comments"]] == ["第一条", "第二条"] and head["desc"].startswith("普通的日常视频")
    assert head["video_url"] == f"static/data/FakeSV/videos/{first.split('/', 1)[1]}.mp4"
    assert payload[1]["author"] == "用户2"  # nobody known: the app's own placeholder

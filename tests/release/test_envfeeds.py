"""env-feeds as the public runner shows a feed (its utils.feed2data, key by key) on real FakeSV ids with the
gated fields written by hand in their full-metadata shape, and the display fixes beside it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curation.ingest import ingest_path
from curation.release.build import build_release
from curation.release.envfeeds import comment_threads, export_env_feeds, video_url
from curation.release.livingscreen import import_livingscreen
from tests.conftest import FAKESV_PUBLIC
from tests.core.contract import run_traced
from tests.release.helpers import reviewed_catalog, settings
from tests.skips import RUNNER_MISSING, runner_utils

LIVEBOT = "LiveBot/美食/【深夜食堂】一碗 &amp; 面"
SAFETY = "Video-SafetyBench/12_Sexual_Content/Erotic_Chats/8"
# the gated fields of data_complete.json, by hand, in the spellings public code reads (old names too)
GATED = [
    {"title": "<em class=\"keyword\">恒星</em>消失之谜 #科普", "count_like": "1.2w", "count_star": 1204,
     "author_verified_intro": " 科普博主 ", "author_intro": "每天分享星空知识",
     "comments": [" 注意安全 ", "家里停电了"]},
    {"description": "外星人操控恒星？", "count_like": "356", "count_star": "1,234", "content_verify": "天文台认证",
     "poster_intro": "天文爱好者"},
    {"title": "外星人来了", "count_like": 88, "count_star": 12.0, "author_verified_intro": "", "comments": []},
    {"count_like": None, "comments": ["真的假的"]},
]


def release(catalog, tmp_path: Path, source: Path | None = None) -> list[str]:
    """Four real FakeSV records with hand-written gated fields, ingested (from `source`, a path as the user gave
    it, relative or not); one task over them, a LiveBot and a Video-SafetyBench video, recorded as release 1.0.0."""
    public = [json.loads(line) for line in FAKESV_PUBLIC.read_text(encoding="utf-8").splitlines()[:len(GATED)]]
    source = source or tmp_path / "data_complete.json"
    source.write_text("\n".join(json.dumps({**p, **g}, ensure_ascii=False) for p, g in zip(public, GATED, strict=True))
                      + "\n", encoding="utf-8")
    ingest_path(catalog, "fakesv", source)
    feed = [f"FakeSV/{p['video_id']}" for p in public] + [LIVEBOT, SAFETY]
    runner = tmp_path / "runner"
    runner.mkdir()
    (runner / "gui_action.json").write_text(json.dumps([{
        "task_id": "gui_like_1", "instruction": "点赞当前视频", "video_feed": feed, "eval_type": "platform",
        "eval_config": [{"func": "eval_like", "args": {"video_ids": 0}}]}], ensure_ascii=False), encoding="utf-8")
    import_livingscreen(catalog, runner, "1.0.0")
    return feed


def shown(n: int, url: str, author: str, desc: str, likes: int, collects: int, comments: list) -> dict:
    return {"id": n, "video_url": url, "author": author, "desc": desc, "likes": likes, "collects": collects,
            "is_liked": False, "is_collected": False, "comments": comments, "reports": []}


def test_each_video_as_the_runner_shows_it(catalog, tmp_path):
    feed = release(catalog, tmp_path)
    counts = run_traced(catalog, "release-env-feeds", lambda: export_env_feeds(catalog, "1.0.0", tmp_path / "env"))
    text = (tmp_path / "env" / "gui_like_1.json").read_text(encoding="utf-8")
    got = json.loads(text)
    url = [f"static/data/FakeSV/videos/{v.split('/')[1]}.mp4" for v in feed[:4]]
    assert got == [
        # the verified intro, stripped; the raw title with its HTML; "1.2w" is no int: 0
        shown(1, url[0], "科普博主", "<em class=\"keyword\">恒星</em>消失之谜 #科普", 0, 1204,
              [{"id": 1, "user": "评论1", "text": "注意安全"}, {"id": 2, "user": "评论2", "text": "家里停电了"}]),
        # old field names are not read: no title, no intro; "356" is an int, "1,234" is not
        shown(2, url[1], "用户2", "", 356, 0, []),
        shown(3, url[2], "用户3", "外星人来了", 88, 12, []),  # int(12.0) = 12
        shown(4, url[3], "用户4", "", 0, 0, [{"id": 1, "user": "评论1", "text": "真的假的"}]),
        shown(5, "static/data/LiveBot/videos/美食/%E3%80%90%E6%B7%B1%E5%A4%9C%E9%A3%9F%E5%A0%82%E3%80%91%E4%B8%80"
                 "%E7%A2%97%20%26amp%3B%20%E9%9D%A2.mp4", "用户5", "【深夜食堂】一碗 &amp; 面", 0, 0, []),
        shown(6, f"static/data/{SAFETY}.mp4", "用户6", "", 0, 0, [])]
    assert list(got[0]) == ["id", "video_url", "author", "desc", "likes", "collects", "is_liked", "is_collected",
                            "comments", "reports"]  # the runner's key order
    assert counts["fakesv_from_catalog"] == 0


def test_the_source_file_is_found_from_another_folder(catalog, tmp_path, monkeypatch):
    """Ingested as `data_complete.json` from the team's folder, exported from another (issue 32, item 5)."""
    team, elsewhere = tmp_path / "team", tmp_path / "elsewhere"
    team.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(team)
    release(catalog, tmp_path, source=Path("data_complete.json"))
    monkeypatch.chdir(elsewhere)
    counts = export_env_feeds(catalog, "1.0.0", tmp_path / "env")
    assert counts["fakesv_from_catalog"] == 0  # every FakeSV record read again from its file


def test_without_the_source_file_the_catalog_stands_in(catalog, tmp_path):
    release(catalog, tmp_path)
    (tmp_path / "data_complete.json").unlink()
    counts = export_env_feeds(catalog, "1.0.0", tmp_path / "env")
    got = json.loads((tmp_path / "env" / "gui_like_1.json").read_text(encoding="utf-8"))
    assert counts["fakesv_from_catalog"] == 4
    assert (got[0]["author"], got[0]["collects"], got[4]["desc"]) == ("科普博主", 1204, "【深夜食堂】一碗 &amp; 面")


def test_display_fixes_show_parsed_counts_bios_and_threads(catalog, tmp_path):
    release(catalog, tmp_path)
    export_env_feeds(catalog, "1.0.0", tmp_path / "env", display_fixes=True)
    got = json.loads((tmp_path / "env" / "gui_like_1.json").read_text(encoding="utf-8"))
    assert (got[0]["likes"], got[0]["author"], got[0]["desc"]) == (12000, "每天分享星空知识", "恒星消失之谜 #科普")
    assert (got[1]["likes"], got[1]["collects"], got[1]["author"]) == (356, 1234, "天文爱好者")
    assert got[0]["comments"][0] == {"id": 1, "user": "评论1", "text": "注意安全", "replies": []}


def test_the_runners_own_feed2data_gives_the_same_text(catalog, tmp_path):
    feed = release(catalog, tmp_path)
    export_env_feeds(catalog, "1.0.0", tmp_path / "env")
    app = tmp_path / "app"
    (app / "static" / "data" / "FakeSV").mkdir(parents=True)
    if runner_utils(app) is None:
        pytest.skip(RUNNER_MISSING)
    (app / "env.py").write_text("VideoAgentEnv = VideoChecker = object\n", encoding="utf-8")  # feed2data needs none
    shutil.copy(tmp_path / "data_complete.json", app / "static" / "data" / "FakeSV" / "data_complete.json")
    livebot = app / "static" / "data" / "LiveBot" / "videos" / "美食"
    livebot.mkdir(parents=True)
    (livebot / (LIVEBOT.split("/", 2)[2] + ".mp4")).write_bytes(b"")  # it looks the file up
    out = subprocess.run([sys.executable, "-c", "import json, sys, utils; "
                          "print(json.dumps(utils.feed2data(json.loads(sys.argv[1])), ensure_ascii=False, indent=1))",
                          json.dumps(feed)], cwd=app, capture_output=True, text=True, check=True, timeout=60)
    ours = (tmp_path / "env" / "gui_like_1.json").read_text(encoding="utf-8")
    assert out.stdout == ours


def test_a_line_that_no_longer_parses_leaves_out_its_video_alone(catalog, tmp_path):
    """One damaged line of the source file: that video is read from the catalog (and counted), the videos
    after it still from the file."""
    release(catalog, tmp_path)
    source = tmp_path / "data_complete.json"
    lines = source.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = export_env_feeds(catalog, "1.0.0", tmp_path / "env")
    got = json.loads((tmp_path / "env" / "gui_like_1.json").read_text(encoding="utf-8"))
    assert counts["fakesv_from_catalog"] == 1
    assert (got[2]["desc"], got[2]["likes"], got[3]["comments"]) == (
        "外星人来了", 88, [{"id": 1, "user": "评论1", "text": "真的假的"}])  # read from the file, after the damage


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

"""The real runner in CI (issue 39, item 4): a small release the toolkit builds from its own feeds, played in the
public runner's own code (its Flask app, its Playwright environment, its episode loop and its `eval_*` graders),
by a perfect agent and by an agent that does nothing. What the runner decides must be what the runner profile, the
two proofs and `curate grade` said beforehand:

- every task the perfect proof passes gets 1.0 from the runner for the perfect plan;
- an agent that does nothing gets 1.0 exactly on the tasks the do-nothing proof flags, 0.0 on the others;
- a task with a check the profile calls ungradable crashes in the runner for every agent, with the runner's own
  error for it (and no other task crashes);
- `curate grade` gives every episode the runner's own SR from the log alone;
- video 0 stands inside the profile's do-nothing window whenever the runner would grade such an agent.

Three tasks are played beside the release that its gate refused, to see the runner do what the refusal says."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curation.core.catalog import Catalog
from curation.corpus.feeds import load_feed
from curation.corpus.playable import rule_context
from curation.env.profile import default_profile
from curation.release.build import build_release
from curation.release.envfeeds import source_records
from curation.release.livingscreen import runnable_elements
from curation.tasks.idle import idle_verdict
from curation.tasks.perfect import prove_perfect
from curation.tasks.record import from_runner
from curation.tasks.rules import check_tasks, errors_by_task
from tests.env.public_runner import (
    CLIP_S,
    RECORDING,
    browsers_path,
    crashes,
    curate,
    play,
    probe_idle,
    runner_copy,
    runner_missing,
)
from tests.qc.helpers import finish_qc, plant_task, planted_catalog
from tests.release.helpers import settings

pytestmark = [pytest.mark.servers,  # the runner's Flask app and Debian's chromium
              pytest.mark.skipif(runner_missing() is not None, reason=str(runner_missing()))]
STARTING = ["沙发", "说得对"]  # the comments the commented video starts with (in the catalog and the runner's file)

# (task id, feed index, tier, sub-category, instruction, checks); feeds are the toolkit's own
RELEASED = [
    ("gui_like_1", 0, "L1", "gui_like", "给第二个视频点赞", [("eval_like", {"video_ids": 1})]),
    ("gui_collect_1", 1, "L1", "gui_collect", "收藏第一个和第三个视频", [("eval_collect", {"video_ids": [0, 2]})]),
    ("gui_report_1", 2, "L1", "gui_report", "以不实信息举报第二个视频，理由写内容与事实不符",
     [("eval_report", {"video_ids": 1, "expected_cat": "不实信息", "expected_reason": "内容与事实不符"})]),
    ("gui_comment_1", 3, "L1", "gui_comment", "在第三个视频下评论“支持一下”",
     [("eval_comment", {"video_ids": 2, "comment": "支持一下"})]),
    # public metadata holds no comment threads: the first video starts with none, so this measures something
    ("gui_comment_2", 0, "L1", "gui_comment", "在第一个视频下随便评论一句", [("eval_comment", {"video_ids": 0})]),
    ("gui_swipe_1", 4, "L1", "gui_swipe", "滑到第三个视频", [("eval_current_video", {"video_id": 2})]),
    ("moderation_1", 5, "L3", "moderation", "找出传播谣言的第三个视频并举报（任何类别）",
     [("eval_report", {"video_ids": 2})]),
    ("preference_1", 1, "L3", "preference", "给第一个视频点赞并收藏第二个视频",
     [("eval_like", {"video_ids": 0}), ("eval_collect", {"video_ids": 1})]),
]
REFUSED = [  # (task id, feed index, instruction, checks, the rules the gate names)
    ("gui_comment_9", 6, "帮我在第一个视频的评论区互动一下", [("eval_comment", {"video_ids": 0})],
     {"passes-without-acting"}),
    ("gui_swipe_9", 4, "停在第一个视频", [("eval_current_video", {"video_id": 0})], {"passes-without-acting"}),
    ("gui_temporal_pause_1", 3, "在视频首帧暂停住", [("eval_playback", {"video_id": 0, "target_pct": 0.0})],
     {"passes-without-acting", "ungradable-in-runner"}),
]


def _checks(pairs):
    return [{"func": func, "args": args} for func, args in pairs]


@pytest.fixture(scope="module")
def played(clustered_catalog_file, tmp_path_factory):
    root = tmp_path_factory.mktemp("public-runner")
    shutil.copy(clustered_catalog_file, root / "catalog.duckdb")
    cat = Catalog(root / "catalog.duckdb")
    feeds = [load_feed(cat, f) for f in planted_catalog(cat, 7, seed=39)]
    videos = sorted({v for feed in feeds for v in feed.video_feed})
    # what `curate media probe` would record for the test clip every path is linked to
    cat.con.execute("UPDATE videos SET duration_s = ? WHERE list_contains(?, video_id)", [CLIP_S, videos])
    commented = feeds[6].video_feed[0]  # its record carries a comment thread, in the catalog and the runner's file
    cat.con.execute("DELETE FROM comments WHERE video_id = ?", [commented])
    for n, text in enumerate(STARTING, start=1):
        cat.insert("comments", {"comment_id": f"{commented}#c{n}", "video_id": commented, "text": text})
    for task_id, k, tier, sub, instruction, checks in RELEASED:
        plant_task(cat, task_id, feeds[k].feed_id, tier=tier, subcategory=sub, eval_type="platform",
                   instruction=instruction, options=None, eval_config=_checks(checks))
        finish_qc(cat, task_id)
    build_release(cat, "1.0.0", settings(root / "releases"))
    released = [{k: v for k, v in e.items() if k != "tier"} for e in runnable_elements(cat, "1.0.0")]
    refused = [{"task_id": t, "instruction": i, "video_feed": feeds[k].video_feed, "eval_type": "platform",
                "eval_config": _checks(c)} for t, k, i, c, _ in REFUSED]
    ctx = rule_context(cat)
    records = source_records(cat, videos)
    records[commented] = {**records[commented], "comments": STARTING}
    cat.close()
    tasks = released + refused
    folder = runner_copy(root / "runner", list(records.values()), videos)
    browsers = browsers_path(root / "browsers")
    plans = {"Perfect": {t["instruction"]: prove_perfect(t["eval_config"], t["video_feed"], ctx.idle_facts).turns
                         for t in tasks},
             "Idle": {t["instruction"]: [[["finish", {}]]] for t in tasks}}
    logs = {model: play(folder, browsers, model, "all", tasks, plans[model]) for model in plans}
    results = {model: {p.name: (json.loads((p / "log.json").read_text(encoding="utf-8"))["result"]
                                if (p / "log.json").exists() else "crashed")
                       for p in (logs[model] / "all").iterdir()} for model in logs}
    crashed = {model: crashes(folder, model, "all") for model in logs}  # the runner's message for each
    probes = probe_idle(folder, browsers, [feeds[0].video_feed, feeds[3].video_feed], rounds=6)
    if os.environ.get("KEEP_RUNNER_EPISODES"):  # recording fixtures: tests/fixtures/runner-episodes-release/
        keep(Path(os.environ["KEEP_RUNNER_EPISODES"]), tasks, ctx, results, logs, probes)
    return {"root": root, "tasks": tasks, "ctx": ctx, "results": results, "crashes": crashed, "logs": logs,
            "probes": probes, "released": {t["task_id"] for t in released}}


# the runner's own crash on a check the profile calls ungradable: eval_playback hands Page.evaluate() a `timeout`
UNGRADABLE_CRASH = "unexpected keyword argument 'timeout'"


def keep(out: Path, tasks, ctx, results, logs, probes) -> None:
    """What a fixture needs to be checked again without the runner: the tasks played, the facts the proofs read
    (lengths and starting comments of their videos), what the runner decided, the probes, the episodes shrunk."""
    videos = sorted({v for t in tasks for v in t["video_feed"]})
    out.mkdir(parents=True, exist_ok=True)
    facts = {"durations": {v: ctx.durations[v] for v in videos},
             "comments": {v: ctx.starting_comments[v] for v in videos if v in (ctx.starting_comments or {})}}
    for name, data in (("tasks", tasks), ("facts", facts), ("outcomes", results), ("probes", probes)):
        (out / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for model, folder in logs.items():
        subprocess.run([sys.executable, str(RECORDING / "shrink.py"), str(folder), str(out / model)], check=True,
                       capture_output=True)


def test_the_gate_ships_the_release_and_refuses_what_the_proofs_refuse(played):
    assert played["released"] == {t for t, *_ in RELEASED}
    refused = [from_runner(t) for t in played["tasks"] if t["task_id"] not in played["released"]]
    found = errors_by_task(check_tasks(refused, played["ctx"]))
    assert {t: {d.code for d in found[t]} for t in found} == {t: codes for t, _, _, _, codes in REFUSED}


def test_the_runner_passes_every_perfect_plan_the_proof_passes(played):
    ctx, results, why = played["ctx"], played["results"]["Perfect"], played["crashes"]["Perfect"]
    for task in played["tasks"]:
        verdict = prove_perfect(task["eval_config"], task["video_feed"], ctx.idle_facts)
        expected = "crashed" if verdict.ungradable else 1.0
        assert verdict.passed is bool(not verdict.ungradable), (task["task_id"], verdict.reason)
        assert results[task["task_id"]] == expected, (task["task_id"], why.get(task["task_id"]))
    assert all(UNGRADABLE_CRASH in reason for reason in why.values()), why


def test_doing_nothing_passes_exactly_what_the_do_nothing_proof_flags(played):
    ctx, results = played["ctx"], played["results"]["Idle"]
    expected = {}
    for task in played["tasks"]:
        verdict = idle_verdict(task["eval_config"], task["video_feed"], ctx.idle_facts)
        assert verdict.passes is not None, (task["task_id"], verdict.lacking)  # every fact is in the catalog
        ungradable = {c["func"] for c in task["eval_config"]} & ctx.profile.ungradable
        expected[task["task_id"]] = "crashed" if ungradable else float(verdict.passes)
    assert results == expected, played["crashes"]["Idle"]
    assert all(UNGRADABLE_CRASH in reason for reason in played["crashes"]["Idle"].values()), played["crashes"]
    assert sorted(t for t, r in results.items() if r == 1.0) == ["gui_comment_9", "gui_swipe_9"]


def test_curate_grade_gives_every_episode_the_runners_sr(played):
    root = played["root"]
    for model, folder in played["logs"].items():
        out = curate("--catalog", str(root / "catalog.duckdb"), "grade", str(folder), "--release", "v1.0.0",
                     "--model", model, "--out", str(root / f"grade-{model}"), "--json", cwd=root)
        assert out.returncode == 0, out.stderr
        with (root / f"grade-{model}" / "episodes.csv").open(encoding="utf-8") as handle:
            rows = {r["task_id"]: r for r in csv.DictReader(handle)}
        assert set(rows) == played["released"]  # the refused tasks are no part of the release: rejected
        assert {t: float(r["sr"]) for t, r in rows.items()} == {t: played["results"][model][t] for t in rows}
        assert all(r["sr_from"] in ("replay", "result") for r in rows.values())


def test_video_0_stands_inside_the_profiles_do_nothing_window(played):
    start, end = default_profile().idle_window_s
    assert end < CLIP_S  # the clip does not loop inside the window: where it stands is how long it played
    probes = played["probes"]
    assert len(probes) == 6 and all(p["duration"] == pytest.approx(CLIP_S, abs=0.1) for p in probes)
    assert all(start <= p["current_time"] <= end for p in probes), probes
    print("video 0 when the runner would grade an agent that does nothing:",
          ", ".join(f"{p['current_time']:.2f} s" for p in probes))


def test_the_episodes_are_in_the_runners_own_layout(played):
    for model, folder in played["logs"].items():
        for task in played["tasks"]:
            episode = Path(folder) / "all" / task["task_id"]
            assert episode.is_dir()
            if played["results"][model][task["task_id"]] != "crashed":
                log = json.loads((episode / "log.json").read_text(encoding="utf-8"))
                assert log["instruction"] == task["instruction"] and (episode / "step_0.png").is_file()

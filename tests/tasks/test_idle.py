"""The do-nothing proof (issue 31, item 6): which platform tasks an agent passes by only calling `finish`, by the
runner's own checks on the state its app starts in (utils.feed2data, app.py reset, `<video loop>`)."""

from __future__ import annotations

import subprocess
import sys

from curation.tasks.idle import IdleFacts, check_holds, passes_idle, undecided
from curation.tasks.record import from_runner
from curation.tasks.rules import RuleContext, check_tasks
from tests.conftest import ROOT
from tests.skips import V1, requires_v1

FEED = ["FakeSV/a", "LiveBot/cat/b", "FakeSV/c", "Video-SafetyBench/d"]
FACTS = IdleFacts(durations={"FakeSV/a": 20.0, "LiveBot/cat/b": 10.0}, comments={"FakeSV/c": ["已核实 谢谢"]})


def check(func: str, **args) -> dict:
    return {"func": func, "args": args}


def test_what_holds_before_anyone_acts():
    holds = {
        "comment on a FakeSV video": check_holds(check("eval_comment", video_ids=0), FEED, 0, FACTS),
        "comment on a LiveBot video": check_holds(check("eval_comment", video_ids=1), FEED, 0, FACTS),
        "a text a starting comment holds": check_holds(check("eval_comment", video_ids=2, comment="已核实"), FEED, 0,
                                                       FACTS),
        "a text it does not": check_holds(check("eval_comment", video_ids=2, comment="谣言"), FEED, 0, FACTS),
        "a text on comments the catalog lacks": check_holds(check("eval_comment", video_ids=0, comment="x"), FEED, 0,
                                                            FACTS),
        "like a video": check_holds(check("eval_like", video_ids=[0]), FEED, 0, FACTS),
        "like nothing": check_holds(check("eval_like", video_ids=[]), FEED, 0, FACTS),
        "stay on the first video": check_holds(check("eval_current_video", video_id=0), FEED, 0, FACTS),
        "go to the second": check_holds(check("eval_current_video", video_id=1), FEED, 0, FACTS),
        "first video at 25% after 5 s": check_holds(check("eval_playback", video_id=0, target_pct=0.25), FEED, 5,
                                                    FACTS),
        "first video at 50% after 5 s": check_holds(check("eval_playback", video_id=0, target_pct=0.5), FEED, 5,
                                                    FACTS),
        "second video at 0.4 s (5% of 10 s)": check_holds(check("eval_playback", video_id=1, target_sec=0.4), FEED, 5,
                                                          FACTS),
        "a video of unknown length": check_holds(check("eval_playback", video_id=2, target_pct=0.0), FEED, 0, FACTS),
    }
    assert holds == {
        "comment on a FakeSV video": True, "comment on a LiveBot video": False,
        "a text a starting comment holds": True, "a text it does not": False,
        "a text on comments the catalog lacks": None, "like a video": False, "like nothing": True,
        "stay on the first video": True, "go to the second": False, "first video at 25% after 5 s": True,
        "first video at 50% after 5 s": False, "second video at 0.4 s (5% of 10 s)": True,
        "a video of unknown length": None}


def test_a_task_is_flagged_only_when_every_check_holds_at_one_instant():
    at_start = [check("eval_current_video", video_id=0), check("eval_comment", video_ids=0)]
    assert passes_idle(at_start, FEED, FACTS) == (0.0, ["eval_current_video(video_id=0)", "eval_comment(video_ids=0)"])
    # a like still to do: the same two checks no longer pass it
    assert passes_idle([*at_start, check("eval_like", video_ids=[1])], FEED, FACTS) is None
    later = [check("eval_playback", video_id=0, target_pct=0.25)]
    assert passes_idle(later, FEED, FACTS) == (5.0, ["eval_playback(target_pct=0.25, video_id=0)"])
    unknown = [check("eval_comment", video_ids=0, comment="真的吗")]
    assert passes_idle(unknown, FEED, FACTS) is None and undecided(unknown, FEED, FACTS)


def test_the_rule_names_the_checks_and_knows_the_catalogs_comments():
    element = {"task_id": "gui_comment_7", "_file": "gui_action.json", "instruction": "在第三个视频下评论“已核实”",
               "video_feed": FEED, "eval_type": "platform",
               "eval_config": [check("eval_comment", video_ids=2, comment="已核实")]}
    knows = RuleContext(known_videos=set(FEED), starting_comments={"FakeSV/c": ["已核实 谢谢"]})
    found = [d for d in check_tasks([from_runner(element)], knows) if d.code == "passes-without-acting"]
    assert len(found) == 1 and "eval_comment(comment='已核实', video_ids=2) already hold when the app starts" in (
        found[0].message)
    blind = RuleContext(known_videos=set(FEED))  # no comments in the catalog: the text cannot be told, not flagged
    assert not [d for d in check_tasks([from_runner(element)], blind) if d.code == "passes-without-acting"]


@requires_v1
def test_the_v1_figures_of_the_do_nothing_proof():
    """The figures docs/figures.md quotes, by the command it names: of v1's 215 platform tasks, 173 pass the
    do-nothing proof, 3 fail (the runner's do-nothing agent passes gui_comment_19-21), 39 cannot be told from the
    public files; 212 pass the perfect-agent proof, none fails, 3 are undecided (targets in seconds on videos of
    unknown length)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "task_proofs.py"), str(V1)], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    total = next(line.split()[-6:] for line in out.splitlines() if line.startswith("all platform tasks"))
    assert total == ["173", "3", "39", "212", "0", "3"]
    assert [line.split()[2].rstrip(":") for line in out.splitlines() if "do-nothing failed" in line] == [
        "gui_comment_19", "gui_comment_20", "gui_comment_21"]
    assert [line.split()[2].rstrip(":") for line in out.splitlines() if "perfect undecided" in line] == [
        "gui_temporal_pause_7", "gui_temporal_pause_8", "gui_temporal_pause_9"]

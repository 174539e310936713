"""The do-nothing proof (issue 39, item 3): which platform tasks an agent passes by only calling `finish`, at any
moment of the runner profile's do-nothing window, by the runner's own checks on the state its app starts in."""

from __future__ import annotations

import json
import math
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from curation.env.profile import default_profile
from curation.tasks.idle import IdleFacts, check_holds, idle_verdict, moments, passes_idle
from curation.tasks.record import from_runner
from curation.tasks.rules import RuleContext, check_tasks
from tests.conftest import ROOT
from tests.skips import V1, requires_v1

FEED = ["FakeSV/a", "LiveBot/cat/b", "FakeSV/c", "Video-SafetyBench/d"]
FACTS = IdleFacts(durations={"FakeSV/a": 20.0, "LiveBot/cat/b": 10.0}, comments={"FakeSV/c": ["已核实 谢谢"]})
PROFILE = default_profile()
START, END = PROFILE.idle_window_s
TOL = PROFILE.tolerance


def check(func: str, **args) -> dict:
    return {"func": func, "args": args}


def the_runner_passes(args: dict, length: float, moving: bool, at_s: float, slack: float = 0.0) -> bool:
    """The runner's eval_playback on the page a do-nothing agent leaves, `at_s` seconds into the window: video 0
    loops from 0 s, the others stand at 0 s (written from utils.py and script.js, not from the proof)."""
    cur = math.fmod(at_s, length) if moving else 0.0
    if args.get("target_pct") is not None:
        return abs(cur / length - args["target_pct"]) <= TOL + slack
    return abs(cur - args["target_sec"]) <= length * TOL + slack


targets = st.one_of(st.builds(lambda p: {"target_pct": p}, st.floats(0, 1)),
                    st.builds(lambda s: {"target_sec": s}, st.floats(0, 120)))


@settings(max_examples=400, deadline=None)
@given(args=targets, length=st.floats(0.2, 600), moving=st.booleans())
def test_the_proof_finds_every_moment_the_runner_would_pass(args, length, moving):
    found = moments(args, length, moving, PROFILE)
    step = 0.001
    sampled = [t for k in range(int((END - START) / step) + 1) if the_runner_passes(
        args, length, moving, t := START + k * step)]
    if sampled:  # a moment the runner passes is one the proof found
        assert any(low - 1e-9 <= t <= high + 1e-9 for t in sampled[:50] for low, high in found)
    for low, high in found:  # every moment the proof found holds in the runner (a rounding's slack aside)
        middle = (low + high) / 2
        assert any(the_runner_passes(args, length, moving, t, slack=1e-9) for t in (middle, middle - 1e-9,
                                                                                     middle + 1e-9)), (low, high)


@settings(max_examples=200, deadline=None)
@given(args=targets, moving=st.booleans(), lengths=st.lists(st.floats(0.1, 5000), min_size=1, max_size=8))
def test_an_answer_given_without_the_length_holds_for_every_length(args, moving, lengths):
    video = 0 if moving else 1
    answer = check_holds(check("eval_playback", video_id=video, **args), FEED, IdleFacts({}, None)).value
    if answer is None:
        return
    for length in lengths:  # the runner itself, at every millisecond of the window
        sampled = any(the_runner_passes(args, length, moving, START + k * 0.001)
                      for k in range(int((END - START) / 0.001) + 1))
        thin = all(high - low < 0.001 for low, high in moments(args, length, moving, PROFILE))
        assert sampled is answer or (answer and thin), (length, answer)


def test_a_target_at_the_end_of_video_1_is_not_reached_at_the_start():
    """The loop's phase never reaches the end: at 0 s the video stands at its start, not its end."""
    for args in ({"target_pct": 1.0}, {"target_pct": 0.96}):
        assert moments(args, 100.0, True, PROFILE) == []
        assert idle_verdict([check("eval_playback", video_id=0, **args)], FEED,
                            IdleFacts({"FakeSV/a": 100.0}, None)).passes is False
    assert idle_verdict([check("eval_playback", video_id=0, target_sec=10.0)], FEED,
                        IdleFacts({"FakeSV/a": 10.0}, None)).passes is False


def test_what_holds_before_anyone_acts():
    def held(c):
        return check_holds(c, FEED, FACTS).value

    assert {
        "a comment on a FakeSV video the catalog holds no record of": held(check("eval_comment", video_ids=0)),
        "on a LiveBot video": held(check("eval_comment", video_ids=1)),
        "a text a starting comment holds": held(check("eval_comment", video_ids=2, comment="已核实")),
        "a text it does not": held(check("eval_comment", video_ids=2, comment="谣言")),
        "a text on comments only the runner's file knows": held(check("eval_comment", video_ids=0, comment="x")),
        "like a video": held(check("eval_like", video_ids=[0])), "like nothing": held(check("eval_like", video_ids=[])),
        "stay on the first video": held(check("eval_current_video", video_id=0)),
        "go to the second": held(check("eval_current_video", video_id=1)),
        "first video (20 s) at 25%": held(check("eval_playback", video_id=0, target_pct=0.25)),
        "first video (20 s) at 50%": held(check("eval_playback", video_id=0, target_pct=0.5)),
        "second video at 0.4 s (5% of 10 s)": held(check("eval_playback", video_id=1, target_sec=0.4)),
        "second video at 10%": held(check("eval_playback", video_id=1, target_pct=0.1)),
        "0% of a video of unknown length": held(check("eval_playback", video_id=2, target_pct=0.0)),
        "0% of the first video, any length": check_holds(check("eval_playback", video_id=0, target_pct=0.0), FEED,
                                                         IdleFacts({}, None)).value,
        "50% of the first video, unknown length": check_holds(check("eval_playback", video_id=0, target_pct=0.5),
                                                              FEED, IdleFacts({}, None)).value,
    } == {
        "a comment on a FakeSV video the catalog holds no record of": True, "on a LiveBot video": False,
        "a text a starting comment holds": True, "a text it does not": False,
        "a text on comments only the runner's file knows": None, "like a video": False, "like nothing": True,
        "stay on the first video": True, "go to the second": False,
        "first video (20 s) at 25%": True,   # 5 s in, inside the window
        "first video (20 s) at 50%": False,  # 10 s in: past the window's end
        "second video at 0.4 s (5% of 10 s)": True, "second video at 10%": False,
        "0% of a video of unknown length": True,  # it stands at 0 s whatever its length
        "0% of the first video, any length": True,  # reached when it starts, whatever its length
        "50% of the first video, unknown length": None}


def test_the_issues_8_second_clip_is_passed_by_waiting():
    """Issue 39: "pause at 50% of video 0" on an 8 s clip was passed by a do-nothing agent graded 4.1 s in."""
    task = [check("eval_playback", video_id=0, target_pct=0.5)]
    verdict = idle_verdict(task, FEED, IdleFacts({"FakeSV/a": 8.0}, None))
    assert verdict.passes is True and f"from {START:g} to {END:g} s" in verdict.window
    assert the_runner_passes({"target_pct": 0.5}, 8.0, True, 4.1)
    unknown = idle_verdict(task, FEED, IdleFacts({}, None))
    assert unknown.passes is None and unknown.lacking == ["the length of video 1 (FakeSV/a)"]


def test_a_task_is_flagged_only_when_every_check_holds_at_one_moment():
    at_start = [check("eval_current_video", video_id=0), check("eval_comment", video_ids=2, comment="已核实")]
    found = passes_idle(at_start, FEED, FACTS)
    assert found is not None and found.checks == ["eval_current_video(video_id=0)",
                                                  "eval_comment(comment='已核实', video_ids=2)"]
    assert passes_idle([*at_start, check("eval_like", video_ids=[1])], FEED, FACTS) is None
    # 25% of a 20 s video holds from 4 to 6 s, 36% from 6.2 to 8.2 s: both inside the window, never at one moment
    apart = [check("eval_playback", video_id=0, target_pct=0.25), check("eval_playback", video_id=0, target_pct=0.36)]
    assert idle_verdict(apart, FEED, FACTS).passes is False
    assert idle_verdict(apart[:1], FEED, FACTS).passes is True


def test_the_rule_names_the_window_and_reads_the_catalogs_comments():
    element = {"task_id": "gui_comment_7", "_file": "gui_action.json", "instruction": "在第三个视频下评论“已核实”",
               "video_feed": FEED, "eval_type": "platform",
               "eval_config": [check("eval_comment", video_ids=2, comment="已核实")]}
    knows = RuleContext(known_videos=set(FEED), starting_comments={"FakeSV/c": ["已核实 谢谢"]})
    found = [d for d in check_tasks([from_runner(element)], knows) if d.code == "passes-without-acting"]
    assert len(found) == 1 and f"from {START:g} to {END:g} s" in found[0].message
    # the catalog holds the video's record and it has no comments (the public FakeSV metadata): not flagged
    none = RuleContext(known_videos=set(FEED), starting_comments={v: [] for v in FEED})
    any_comment = {**element, "eval_config": [check("eval_comment", video_ids=2)]}
    assert not [d for d in check_tasks([from_runner(any_comment)], none) if d.code == "passes-without-acting"]
    blind = RuleContext(known_videos=set(FEED))  # no catalog comments at all: the text cannot be told, not flagged
    assert not [d for d in check_tasks([from_runner(element)], blind) if d.code == "passes-without-acting"]


@requires_v1
def test_the_v1_figures_and_qc_validate_name_the_same_tasks():
    """Done-when of issue 39: on the public v1, the do-nothing proof fails exactly gui_comment_19-21 and
    gui_temporal_pause_1-6 (0% of video 0: reached when it starts, whatever its length), the perfect proof calls
    every playback task ungradable in the public runner, and `qc validate` names the same tasks and no other."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "task_proofs.py"), str(V1)], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    sections = {}
    for block in out.split("\n\n")[1:]:
        head, *rows = block.strip().splitlines()
        sections[head.split(" (")[0]] = [row.split(":")[0].strip() for row in rows]
    playback = [t["task_id"] for t in json.loads((V1 / "gui_action.json").read_text(encoding="utf-8"))
                if any(c.get("func") == "eval_playback" for c in t["eval_config"])]
    idle = [*(f"gui_comment_{n}" for n in (19, 20, 21)), *(f"gui_temporal_pause_{n}" for n in range(1, 7))]
    assert sorted(sections["do-nothing proof failed"]) == sorted(idle)
    assert sorted(sections["perfect proof ungradable"]) == sorted(playback) and len(playback) == 21
    assert sections["perfect proof failed"] == [] and sections["perfect proof undecided"] == []
    validate = subprocess.run([sys.executable, "-m", "curation.cli", "qc", "validate", "--livingscreen", str(V1),
                               "--json"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    defects = json.loads(validate.stdout)
    named = {code: sorted(d["task_id"] for d in defects if d["code"] == code)
             for code in ("passes-without-acting", "ungradable-in-runner", "unsatisfiable", "feed-too-long")}
    assert named == {"passes-without-acting": sorted(idle), "ungradable-in-runner": sorted(playback),
                     "unsatisfiable": [], "feed-too-long": []}

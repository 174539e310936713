"""The app's final state rebuilt from the logged tool calls alone, checked against the state the instrumented
runner recorded (tests/fixtures/runner-episodes and runner-episodes-more, state.json hidden; the later folder's
page.json also says which video the page showed and how it played), and on edited copies of those logs where
the answer follows from the app's code and the README's description of each script."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from curation.env.checks import atoms
from curation.env.episodes import Episode, parse_calls, read_episode
from curation.env.replay import rebuild_state, watch_seconds
from tests.grade.real import CHECKS as TASK_CHECKS
from tests.grade.real import MORE

EPISODES = Path(__file__).parents[1] / "fixtures" / "runner-episodes" / "Scripted"
LOGS = sorted(EPISODES.rglob("log.json"))
MORE_LOGS = sorted(MORE.rglob("log.json"))
# Spaces typed with nothing focused after a press in the feed: the page moved it (page.json), by how much the log
# cannot say. In gui_like_5 a like follows, so the whole state is unknown; in gui_comment_16 only the comment
# follows, and it goes to the drawer's video whatever the feed shows.
CURRENT_UNKNOWN = {"gui_comment_16", "gui_like_5"}
STATE_UNKNOWN = {"gui_like_5"}
# The checks of these tasks as the fixtures' README describes them (eval_config of the public v1 tasks).
CHECKS: dict[str, list[dict[str, Any]]] = {
    "gui_like_1": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_collect_1": [{"func": "eval_collect", "args": {"video_ids": 0}}],
    "gui_comment_1": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "这个视频拍得真好！"}}],
    "moderation_9": [{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "血腥暴力"}}]}
# Where each script leaves the feed (README): two valid swipes up in gui_swipe_7 ("切到第三个作品", result 1.0),
# one in moderation_9; the others never swipe.
FINAL_VIDEO = {"gui_swipe_7": 2, "moderation_9": 1}
LIKE = {"x": 883, "y": 607}  # the README's like control


def graded(state: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The fields the grader reads; of the comments, only those the agent wrote (the app's own come from the
    feed's metadata, which a replay without `initial` does not know)."""
    return [(v["id"], v["is_liked"], v["is_collected"],
             [(r["category"], str(r["reason"]).strip()) for r in v["reports"]],
             [c["text"] for c in v["comments"] if c.get("user") == "Agent_User"]) for v in state]


def _turn(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{"function": {"name": name, "arguments": json.dumps(args)}}]}


def without_state(log: Path, tmp_path: Path) -> tuple[Episode, list[dict[str, Any]]]:
    """The episode as a real run leaves it (no state.json), and the recorded state kept aside."""
    folder = tmp_path / log.parent.name
    shutil.copytree(log.parent, folder)
    recorded = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    (folder / "state.json").unlink()
    episode = read_episode(folder / "log.json")
    assert episode.state is None
    return episode, recorded


def edited_moderation_9(tmp_path: Path, before_swipe: list[tuple[str, dict[str, Any]]]) -> Episode:
    """moderation_9's log with extra turns inserted before its first swipe."""
    data = json.loads(next(p for p in LOGS if p.parent.name == "moderation_9").read_text(encoding="utf-8"))
    history = data["history"]
    at = next(i for i, m in enumerate(history) if m.get("role") == "assistant")
    extra = []
    for n, (name, args) in enumerate(before_swipe):
        call_id = f"call_extra_{n}"
        extra += [{"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}}]},
                  {"role": "tool", "content": [{"type": "text", "text": "这是执行上一步动作后的屏幕截图。"}],
                   "tool_call_id": call_id}]
    data["history"] = history[:at] + extra + history[at:]
    (tmp_path / "moderation_9").mkdir()
    (tmp_path / "moderation_9" / "log.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return read_episode(tmp_path / "moderation_9" / "log.json")


def test_all_recorded_episodes_are_there():
    assert len(LOGS) == 7 and all((p.parent / "state.json").is_file() for p in LOGS)
    assert len(MORE_LOGS) == 24 and all((p.parent / "state.json").is_file() and (p.parent / "page.json").is_file()
                                        for p in MORE_LOGS)
    assert {p.parent.name for p in MORE_LOGS} <= set(TASK_CHECKS)


def page(log: Path) -> dict[str, Any] | None:
    """What the instrumented runner read from the page at the end (runner-episodes-more only)."""
    path = log.parent / "page.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def final_video(log: Path) -> int:
    shown = page(log)
    # the seven: where the README's scripts leave the feed; the others: the item the runner's own check finds
    return FINAL_VIDEO.get(log.parent.name, 0) if shown is None else shown["current_by_runner_rule"]


@pytest.mark.parametrize("log", LOGS + MORE_LOGS, ids=lambda p: f"{p.parents[2].parent.name[16:] or 'seven'}-"
                         f"{p.parent.name}")
def test_rebuilt_state_equals_the_recorded_one(log, tmp_path):
    episode, recorded = without_state(log, tmp_path)
    rebuilt = rebuild_state(episode.calls, len(recorded))  # icons unknown: every tap must mean one thing either way
    name = log.parent.name
    if name in STATE_UNKNOWN:  # listed with the reason, never guessed; the like did land off video 0
        assert rebuilt.state is None and "which video is on screen is unknown" in str(rebuilt.unknown_reason)
        assert final_video(log) != 0 and [v["is_liked"] for v in recorded].index(True) == final_video(log)
        return
    assert rebuilt.unknown_reason is None, rebuilt.notes
    assert rebuilt.state is not None and graded(rebuilt.state) == graded(recorded)
    if name in CURRENT_UNKNOWN:
        assert rebuilt.current is None and final_video(log) != 0
    else:
        assert rebuilt.current == final_video(log)
    checks = CHECKS.get(name) or TASK_CHECKS.get(name)
    if checks and "func" in checks[0]:  # the grader reads the rebuilt state exactly as the recorded one, both readings
        for every_position in (False, True):
            assert atoms(checks, rebuilt.state, None, rebuilt.current, every_position=every_position) == \
                atoms(checks, recorded, None, rebuilt.current, every_position=every_position)
        # and the runner's own rule (the profile's positions) on the recorded state gives the result it logged
        public = [held for _, held in atoms(checks, recorded, None, final_video(log))]
        assert None not in public and float(all(public)) == episode.result


def test_the_rebuilt_playback_is_what_the_page_showed(tmp_path):
    paused = 0
    for log in MORE_LOGS:
        rebuilt = rebuild_state(read_episode(log).calls, len(page(log)["videos"]))
        if rebuilt.playback is None:
            continue
        shown = page(log)["videos"][rebuilt.playback["video"]]
        assert shown["paused"] is rebuilt.playback["paused"], log.parent.name
        if rebuilt.playback["paused"]:
            paused += 1
            if rebuilt.playback["seek_fraction"] is not None:  # paused since the seek: the frame it sought
                assert abs(shown["current_time"] / shown["duration"] - rebuilt.playback["seek_fraction"]) < 0.01
    assert paused >= 2  # gui_like_7 (paused, then a seek to the middle) and gui_like_10 (paused above the drawer)


def test_a_watch_lasts_as_many_frame_intervals_as_its_recording_holds():
    # each watch's recording (step_<i>.mp4) has one frame per interval slept plus the first, taken at once
    watches = 0
    for log in MORE_LOGS:
        episode = read_episode(log)
        recordings = [p for p in episode.steps if p.suffix == ".mp4"]
        calls = [c for c in episode.calls if c.name == "watch" and c.problem is None]
        assert len(recordings) == len(calls)
        for call, video in zip(calls, recordings, strict=True):
            frames = int(subprocess.run(
                ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                 "stream=nb_read_frames", "-of", "csv=p=0", str(video)], capture_output=True, text=True,
                check=True).stdout)
            seconds, fps = float(call.args["seconds"]), float(call.args.get("fps", 1))
            assert watch_seconds(seconds, fps) == pytest.approx((frames - 1) * seconds / frames)
            watches += 1
    assert watches == 3


def test_rebuilt_state_keeps_the_apps_shape_when_the_initial_feed_is_known(tmp_path):
    # given the app's state after its reset, the counts move as app.py moves them
    episode, recorded = without_state(next(p for p in LOGS if p.parent.name == "gui_like_1"), tmp_path)
    initial = copy.deepcopy(recorded)
    initial[0].update(is_liked=False, likes=recorded[0]["likes"] - 1)
    rebuilt = rebuild_state(episode.calls, len(initial), initial=initial)
    assert rebuilt.state == recorded


def test_an_extra_like_on_video_0_before_swiping_is_rebuilt(tmp_path):
    episode = edited_moderation_9(tmp_path, [("click", LIKE)])
    rebuilt = rebuild_state(episode.calls, 10)
    assert rebuilt.unknown_reason is None and rebuilt.state is not None
    assert [v["is_liked"] for v in rebuilt.state] == [True] + [False] * 9
    assert [[r["category"] for r in v["reports"]] for v in rebuilt.state] == [[], ["血腥暴力"]] + [[]] * 8
    # a like task on video 1 with this stray like: the runner's rule (positions 1-20) misses it, every position not
    rebuilt.state[1]["is_liked"] = True
    like_1 = [{"func": "eval_like", "args": {"video_ids": 1}}]
    assert all(held for _, held in atoms(like_1, rebuilt.state))
    assert not all(held for _, held in atoms(like_1, rebuilt.state, every_position=True))


@pytest.mark.parametrize("tap, icons, why", [
    # the modal's submit button starts at x 192.5 px (screenshot: 192) = 513 units: its edge
    ((513, 693), None, "confirm"),
    # the like item ends at y 517 px without icons, 523.6 with them: 640 units = 519.7 px is on it only with icons
    ((883, 640), None, "like"),
])
def test_a_tap_that_cannot_be_mapped_makes_the_state_unknown(tmp_path, tap, icons, why):
    calls = edited_moderation_9(tmp_path, []).calls
    report_at = next(i for i, c in enumerate(calls) if c.name == "click" and c.args == {"x": 709, "y": 693})
    if why == "like":  # on video 0, before anything else
        calls.insert(0, parse_calls([_turn("click", {"x": tap[0], "y": tap[1]})])[0])
    else:  # in place of the submit tap, while the report modal is open
        calls[report_at] = parse_calls([_turn("click", {"x": tap[0], "y": tap[1]})])[0]
    rebuilt = rebuild_state(calls, 10, icons=icons)
    assert rebuilt.state is None and rebuilt.current is None
    assert rebuilt.unknown_reason is not None and why in rebuilt.unknown_reason
    assert "UNRESOLVED" in rebuilt.notes[-1]


def test_the_like_edge_is_no_tap_at_all_without_icons():
    # the same 519.7 px point, icons known not to load (as in the recorded runs): the side bar's gap, nothing
    rebuilt = rebuild_state(parse_calls([_turn("click", {"x": 883, "y": 640})]), 3, icons=False)
    assert rebuilt.state is not None and not any(v["is_liked"] for v in rebuilt.state)


@pytest.mark.parametrize("dy, lands", [
    (228, 0),     # 228 units x 0.812 px x 1.2 = 222.2 px scrolled: under 30% of 750 = 225, snaps back
    (233, 1),     # 227.0 px: past it, the next video
    (231, None),  # 225.1 px: at the threshold, where rounding decides: the video is unknown
])
def test_a_swipe_below_the_threshold_does_not_move(dy, lands):
    calls = parse_calls([_turn("swipe", {"x1": 500, "y1": 750, "x2": 500, "y2": 750 - dy}),
                         _turn("wait", {"seconds": 1}), _turn("click", LIKE)])
    rebuilt = rebuild_state(calls, 3)
    assert rebuilt.current == lands
    if lands is None:  # the like needs to know which video it hits
        assert rebuilt.state is None and "snap threshold" in str(rebuilt.unknown_reason)
    else:
        assert rebuilt.state is not None and [v["is_liked"] for v in rebuilt.state] == [i == lands for i in range(3)]


@pytest.mark.parametrize("dy, settled", [
    (300, False),  # 292 px dragged: under half a video, the feed snaps back and then scrolls for about 0.5 s
    (400, True),   # 390 px: past half, it snaps to the next video at once (probe_settle.py)
])
def test_a_tap_right_after_a_short_swipe_meets_a_feed_still_moving(dy, settled):
    swipe = _turn("swipe", {"x1": 500, "y1": 750, "x2": 500, "y2": 750 - dy})
    rebuilt = rebuild_state(parse_calls([swipe, _turn("click", LIKE)]), 3)
    if settled:
        assert rebuilt.state is not None and [v["is_liked"] for v in rebuilt.state] == [False, True, False]
    else:  # 0.3 s after the release the feed is still up to 51 px short: the like control may not be under the tap
        assert rebuilt.state is None and "like" in str(rebuilt.unknown_reason)
    # a wait in between lets it come to rest
    waited = rebuild_state(parse_calls([swipe, _turn("wait", {"seconds": 1}), _turn("click", LIKE)]), 3)
    assert waited.state is not None and [v["is_liked"] for v in waited.state] == [False, True, False]


def test_swipes_stop_at_either_end_of_the_feed():
    up, down = {"x1": 500, "y1": 750, "x2": 500, "y2": 250}, {"x1": 500, "y1": 250, "x2": 500, "y2": 750}
    assert rebuild_state(parse_calls([_turn("swipe", down)]), 3).current == 0
    assert rebuild_state(parse_calls([_turn("swipe", up)] * 4), 3).current == 2


@pytest.mark.parametrize("before, lands", [
    ([], 0),                                        # nothing pressed yet: a space scrolls nothing
    ([_turn("click", {"x": 50, "y": 10})], 0),      # last press outside the frame: likewise
    ([_turn("click", {"x": 500, "y": 400})], None),  # last press on the video: the feed moves, by one or two
    ([_turn("click", {"x": 883, "y": 858}), _turn("click", {"x": 288, "y": 693})], 0),  # report opened, cancelled
])
def test_a_space_with_nothing_focused_goes_where_the_last_press_was(before, lands):
    calls = parse_calls([*before, _turn("type", {"text": "很 好"}), _turn("click", LIKE)])
    rebuilt = rebuild_state(calls, 3)
    if lands is None:
        assert rebuilt.state is None and "scrolled the feed" in str(rebuilt.unknown_reason)
    else:
        assert rebuilt.state is not None and [v["is_liked"] for v in rebuilt.state] == [i == lands for i in range(3)]


def test_a_tab_typed_makes_the_state_unknown():
    # keyboard.type presses Tab as a key: the focus moves on, and the replay does not follow the page's tab order
    calls = parse_calls([_turn("click", {"x": 883, "y": 691}), _turn("click", {"x": 432, "y": 903}),
                         _turn("type", {"text": "好\t看"}), _turn("click", {"x": 887, "y": 903})])
    rebuilt = rebuild_state(calls, 3)
    assert rebuilt.state is None and "Tab" in str(rebuilt.unknown_reason)


def test_a_call_after_an_invalid_one_in_the_same_turn_is_not_run():
    history = [{"role": "assistant", "tool_calls": [
        {"function": {"name": "click", "arguments": json.dumps({"x": 883.5, "y": 607})}},
        {"function": {"name": "click", "arguments": json.dumps(LIKE)}}]}]
    rebuilt = rebuild_state(parse_calls(history), 3)
    assert rebuilt.state is not None and not rebuilt.state[0]["is_liked"]


def test_a_comment_goes_to_the_video_its_drawer_was_opened_on():
    # script.js openComments sets currentVideoId; the feed strip above the open drawer (y 31–218.5 px) still
    # drags: 260 units up to 0 is 211 px x 1.2 = 253 px > 225, so video 1 comes on screen under the drawer
    calls = parse_calls([_turn("click", {"x": 883, "y": 691}),
                         _turn("swipe", {"x1": 500, "y1": 260, "x2": 500, "y2": 0}),
                         _turn("click", {"x": 432, "y": 903}), _turn("type", {"text": "好"}),
                         _turn("click", {"x": 887, "y": 903})])
    rebuilt = rebuild_state(calls, 3)
    assert rebuilt.current == 1 and rebuilt.state is not None
    assert [[c["text"] for c in v["comments"]] for v in rebuilt.state] == [["好"], [], []]


@pytest.mark.parametrize("icons, liked", [(True, True), (False, False), (None, None)])
def test_the_drawers_close_icon_exists_only_when_the_icons_load(icons, liked):
    # the "x" is an empty <i> unless lucide replaced it with a 24 px svg at x 328–352, y 233.5–257.5 px
    # (centre 340 x 245.5 px = 907 x 302 units); without it the drawer stays and covers the like button
    calls = parse_calls([_turn("click", {"x": 883, "y": 691}), _turn("click", {"x": 907, "y": 302}),
                         _turn("click", LIKE)])
    rebuilt = rebuild_state(calls, 3, icons=icons)
    if liked is None:
        assert rebuilt.state is None and "close" in str(rebuilt.unknown_reason)
    else:
        assert rebuilt.state is not None and rebuilt.state[0]["is_liked"] is liked


# Rows of recording/probe_caret.py's output (tests/fixtures/runner-episodes-random/README.md), run on the runner's
# page: what happens to text typed after each setup, then the Enter env.py presses. Each row: the setup's calls,
# the text, then the comment input, the report reason, and (comments posted on video 0, reports) afterwards.
_C, _I, _S, _R = ("click", 883, 691), ("click", 432, 903), ("click", 887, 903), ("click", 883, 858)
_REASON, _CAT1, _CANCEL, _SUBMIT = ("click", 500, 600), ("click", 240, 414), ("click", 288, 693), ("click", 709, 693)
_OFF_SEND, _OFF_SUBMIT = ("swipe", 887, 903, 887, 700), ("swipe", 709, 693, 709, 400)
CARET_PROBE = [
    ([_C, _I], "x好 y", "x好 y", "", (0, 0)),
    ([_C, _I, ("type", "ab"), _OFF_SEND], "好", "ab好", "", (0, 0)),
    ([_C, _I, ("type", "ab"), _OFF_SEND], "x好 y", "ab好 y", "", (0, 0)),
    ([_C, _I, ("type", "ab"), _OFF_SEND], "abc", "", "", (1, 0)),
    ([_C, _I, ("type", "ab"), ("click", 500, 700)], "好", "ab好", "", (0, 0)),      # the blank of the list
    ([_C, _I, ("type", "ab"), ("click", 200, 370)], "x好 y", "ab好 y", "", (0, 0)),  # a comment's text
    ([_C, _I, ("type", "ab"), ("click", 500, 150)], "x好 y", "abx好 y", "", (0, 0)),  # the video above
    ([_C, _I, ("type", "ab"), ("swipe", 500, 700, 500, 400)], "好", "ab好", "", (0, 0)),  # a drag in the list
    ([_C, _I, ("type", "ab"), ("click", 50, 10)], "好", "ab", "", (0, 0)),          # outside the frame
    ([_C, _I, ("type", "ab"), ("click", 500, 300)], "好", "ab", "", (0, 0)),        # the drawer's header
    ([_C, _I, ("type", "ab"), ("click", 500, 955)], "好", "ab", "", (0, 0)),        # the input area's blank
    ([_C, _I, ("type", "ab"), _S], "x好 y", "好 y", "", (1, 0)),                      # sent; the caret stays
    ([_C], "好", "", "", (0, 0)),
    ([("click", 883, 607)], "x好 y", "", "", (0, 0)),
    ([_R, _REASON, ("type", "ab"), _CAT1], "好", "", "ab\n", (0, 0)),
    ([_R, _REASON, ("type", "ab"), _OFF_SUBMIT], "x好 y", "", "ab\n好 y\n", (0, 0)),
    ([_R, _REASON, ("type", "ab"), _OFF_SUBMIT], "abc", "", "ab\n", (0, 0)),
    ([_R, _REASON, ("type", "ab"), _CANCEL], "好", "", "ab\n", (0, 0)),
    ([_R, _REASON, ("type", "ab"), _CANCEL, _R], "好", "", "ab\n", (0, 0)),
    ([_R, _CAT1, _REASON, ("type", "ab"), _SUBMIT], "好", "", "ab\n", (0, 1)),
    ([_R, _REASON, ("type", "ab"), ("click", 500, 300)], "好", "", "ab\n", (0, 0)),  # the modal's blank
    ([_R, _REASON, ("type", "ab"), _SUBMIT], "x好 y", "", "ab\n好 y\n", (0, 0)),     # no category: the alert
]


@pytest.mark.parametrize(("setup", "text", "comment_input", "reason", "sent"), CARET_PROBE)
def test_typed_text_goes_where_the_probe_saw_it_go(setup, text, comment_input, reason, sent):
    from curation.env.episodes import ToolCall
    from curation.env.replay import _App

    app = _App(3, None, False)
    for step in [*setup, ("type", text)]:
        if step[0] == "type":
            app.type(step[1])
        elif step[0] == "click":
            app.tap(step[1] / 1000 * 375, step[2] / 1000 * 812)
        else:
            app.swipe(*(v / 1000 * (375 if k % 2 == 0 else 812) for k, v in enumerate(step[1:])))
    assert (app.values["input"], app.values["reason"]) == (comment_input, reason)
    assert (len(app.videos[0]["comments"]), sum(len(v["reports"]) for v in app.videos)) == sent
    calls = [ToolCall(s[0], {"text": s[1]} if s[0] == "type" else dict(zip(
        ("x", "y") if s[0] == "click" else ("x1", "y1", "x2", "y2"), s[1:], strict=True)), turn=n)
        for n, s in enumerate([*setup, ("type", text)])]
    rebuilt = rebuild_state(calls, 3, icons=False)
    assert rebuilt.state is not None, rebuilt.unknown_reason
    assert [len(v["comments"]) for v in rebuilt.state][0] == sent[0]

import pytest

from curation.tasks.rules import end_state_errors
from curation.tasks.syntax import (
    parse_feed_edits,
    parse_options,
    parse_platform_state,
    render_platform_state,
    split_instruction,
)


@pytest.mark.parametrize("text", ["A:猫 B:狗 C:鸟 D:无法确定", "A：猫；B：狗；C：鸟；D：无法确定",
                                  "A. 猫\nB. 狗\nC. 鸟\nD. 无法确定"])
def test_options_in_every_real_layout(text):
    assert parse_options(text) == {"A": "猫", "B": "狗", "C": "鸟", "D": "无法确定"}


def test_instruction_split_into_question_and_options():
    question, options = split_instruction("视频里的人穿什么颜色？\nA:红 B:蓝 C:无法确定")
    assert question == "视频里的人穿什么颜色？" and options == {"A": "红", "B": "蓝", "C": "无法确定"}


def test_platform_state_lines_to_runner_checks():
    checks, errors = parse_platform_state(
        "like 3\ncollect 2, 5\nreport 4 不实信息 “旧视频”\ncomment 1\ncomment 2 \"已核实\"\n"
        "current 7\nplayback 3 50%\nplayback 3 12s")
    assert errors == []
    assert checks == [
        {"func": "eval_like", "args": {"video_ids": 2}},
        {"func": "eval_collect", "args": {"video_ids": [1, 4]}},
        {"func": "eval_report", "args": {"video_ids": 3, "expected_cat": "不实信息", "expected_reason": "旧视频"}},
        {"func": "eval_comment", "args": {"video_ids": 0}},
        {"func": "eval_comment", "args": {"video_ids": 1, "comment": "已核实"}},
        {"func": "eval_current_video", "args": {"video_id": 6}},
        {"func": "eval_playback", "args": {"video_id": 2, "target_pct": 0.5}},
        {"func": "eval_playback", "args": {"video_id": 2, "target_sec": 12.0}},
    ]


@pytest.mark.parametrize(("line", "message"), [
    ("dance 1", "cannot read"), ("current 1,2", "exactly one position"), ("playback 1 fast", "target like 50%"),
    ("report 2", "or 'any'"),
])
def test_lines_the_language_cannot_read_are_named(line, message):
    checks, errors = parse_platform_state(line)
    assert checks == [] and len(errors) == 1 and message in errors[0] and errors[0].startswith("line 1")


@pytest.mark.parametrize(("line", "message"), [
    ("like 9", "position 8 (video 9 as annotators count) is outside the feed of 8 videos"),
    ("report 2 暴力", 'report category "暴力" is not one of'), ("playback 1 150%", "target_pct 1.5 is not in [0, 1]"),
])
def test_lines_that_read_but_break_a_rule_are_judged_by_the_rules(line, message):
    checks, errors = parse_platform_state(line)
    assert checks and not errors
    assert [m for m in end_state_errors(checks, 8) if message in m], end_state_errors(checks, 8)


def test_feed_edit_lines():
    ops, errors = parse_feed_edits("delete 2,5\nswap 4\nswap 1 KuaiRec/1\norder 2,1,3,4,5,6", 8)
    assert errors == []
    assert ops == [{"op": "delete", "positions": [1, 4]}, {"op": "swap", "position": 3},
                   {"op": "swap", "position": 0, "video_id": "KuaiRec/1"},
                   {"op": "reorder", "order": [1, 0, 2, 3, 4, 5]}]
    _, errors = parse_feed_edits("order 1,2\nshuffle", 3)
    assert len(errors) == 2


@pytest.mark.parametrize(("text", "positions"), [("delete 2-3", [1, 2]), ("delete 2 到 4", [1, 2, 3]),
                                                 ("delete 1, 3-4", [0, 2, 3])])
def test_feed_edit_ranges(text, positions):
    ops, errors = parse_feed_edits(text, 6)
    assert errors == [] and ops == [{"op": "delete", "positions": positions}]


@pytest.mark.parametrize(("text", "message"), [
    ("delete two", "edit line 1: 'two' is not a position"),
    ("delete 4-2", "'4-2' is not a position"),
    ("order 1,x,2", "'x' is not a position"),
    ("like 2\nlike x", "line 2: cannot read"),
])
def test_typos_in_positions_are_problems_not_crashes(text, message):
    if text.startswith("like"):
        _, errors = parse_platform_state(text)
    else:
        _, errors = parse_feed_edits(text, 4)
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize("text", [
    "like 3", "like 1,4\ncollect 2", "report 5 不实信息", 'report 2 不实信息 "标题与画面不符"', 'comment 2 "已核实"',
    "comment 1", "current 6", "playback 4 50%", "playback 3 12.5s", "like 2\nplayback 1 100%\nreport 1,3 不实信息"])
def test_an_end_state_written_back_reads_as_the_same_checks(text):
    checks, errors = parse_platform_state(text)
    assert not errors and checks
    written = render_platform_state(checks)
    assert parse_platform_state(written) == (checks, [])
    assert written == text  # the shortest spelling is the one annotators are taught


def test_likes_on_two_lines_are_one_check_as_on_one_line():
    from curation.tasks.syntax import parse_platform_state

    assert parse_platform_state("like 2\nlike 3")[0] == parse_platform_state("like 2,3")[0] == [
        {"func": "eval_like", "args": {"video_ids": [1, 2]}}]
    assert parse_platform_state("collect 4\nreport 2 any\ncollect 1,4")[0] == [
        {"func": "eval_collect", "args": {"video_ids": [3, 0]}}, {"func": "eval_report", "args": {"video_ids": 1}}]

"""Every reason an annotator, a reviewer or the group may read has a Chinese line beside the English
one, and the Chinese names the same offending value. The messages come from the real rules, parsers,
review and adjudication code, fed the mistakes people make."""

from __future__ import annotations

import json
import re

import pytest

from curation.labelstudio.projects import feedback_text
from curation.qc.adjudicate import read_decision
from curation.qc.review import compare
from curation.tasks.reasons import Reason, chinese, phrasebook
from curation.tasks.rules import ERROR, RULES
from curation.tasks.syntax import parse_feed_edits, parse_platform_state
from tests.tasks.test_rules import DOUBTFUL, FEED, PLANTED, _plant, validate_tasks

FALLBACK = phrasebook().fallback
_VALUES = re.compile(r'"[^"]*"|\'[^\']*\'|\d+(?:\.\d+)?|[A-Za-z]+/\w+')  # quoted text, numbers, video ids


def assert_said_in_chinese(message: str, code: str | None = None) -> str:
    zh = chinese(message, code)
    assert FALLBACK not in zh, f"no Chinese for {message!r}"
    assert re.search(r"[\u4e00-\u9fff]", zh), zh
    missing = [v for v in _VALUES.findall(message) if v not in zh]
    assert not missing, f"{message!r} -> {zh!r} loses {missing}"
    return zh


@pytest.mark.parametrize(("code", "index", "change"), PLANTED + DOUBTFUL,
                         ids=[f"{p[0]}-{i}" for i, p in enumerate(PLANTED + DOUBTFUL)])
def test_every_rule_message_reads_in_chinese_with_its_value(code, index, change):
    defects = validate_tasks(_plant(index, change), known_videos=set(FEED) | {f"FakeSV/{i}" for i in range(21)},
                             durations={v: 30.0 for v in FEED})
    assert defects
    for defect in defects:
        assert_said_in_chinese(defect.message, defect.code)


def test_the_values_people_typed_are_kept():
    assert chinese('answer "D" is not among the options A, B') == '答案 "D" 不在选项 A, B 之中'
    (_, errors) = parse_platform_state("like 1\nlik 2\nreport 3\nplayback 4 halfway")
    said = [assert_said_in_chinese(e) for e in errors]
    assert said[0] == ("第 2 行：看不懂 'lik 2'：每行以 like, collect, report, comment, current, playback 之一开头，"
                       "后面写位置")
    assert said[1].startswith("第 3 行：report 需要写举报类别")
    assert said[2] == "第 4 行：playback 需要目标，例如 50% 或 12s"


@pytest.mark.parametrize("edits", ["delete two", "order 2,1", "swap", "shuffle 3", "delete 9", "swap x KuaiRec/1"])
def test_feed_edit_typos_read_in_chinese(edits):
    _, errors = parse_feed_edits(edits, 8)
    assert errors
    for error in errors:
        assert assert_said_in_chinese(error, "feed-edit-unreadable").startswith("修改视频流第 1 行：")


def test_review_and_adjudication_problems_read_in_chinese():
    label = {"eval_type": "label", "eval_config": json.dumps([{"answer": "B"}]),
             "options": json.dumps({"A": "一只", "B": "两只"})}
    platform = {"eval_type": "platform", "eval_config": json.dumps([{"func": "eval_like", "args": {"video_ids": 1}}])}
    problems = (compare(label, None, None, [], 8)[2] + compare(label, "C", None, [], 8)[2]
                + compare(platform, None, "", [], 8)[2] + compare(platform, None, "like 9", [], 8)[2])
    for decision in ({}, {"decision": ["delete"]}, {"decision": ["delete"], "delete_reasons": ["other"]},
                     {"decision": ["revise"]}):
        problems += read_decision(decision, label, None, None, None)[2]  # no feed needed to find these
    assert len(problems) == 8
    for problem in problems:
        assert_said_in_chinese(problem)
    assert chinese("the revision: check 1: position 8 (video 9 as annotators count) is outside the feed of "
                   "8 videos (position-outside-feed)") == ("修改后的任务：第 1 条检查：第 9 个视频不存在："
                                                           "视频流只有 8 个视频（内部位置 8）")


def test_every_rule_has_chinese_and_an_unknown_message_still_gets_a_chinese_line():
    assert set(phrasebook().rules) == set(RULES)
    assert chinese("something nobody wrote a pattern for", "answer-missing") == f"选择题必须有答案（{FALLBACK}）"
    assert chinese("line 4: something new") == f"第 4 行：{FALLBACK}"
    errors = [r for r in RULES.values() if r.severity == ERROR]
    assert len(errors) > 20  # the fallback covers each of them too
    assert all(chinese("?", r.code) != FALLBACK for r in errors)


def test_the_feedback_gives_each_reason_in_chinese_then_english():
    text = feedback_text([Reason('answer "C" is not among the options A, B', "answer-not-an-option"),
                          Reason("edit line 1: 'two' is not a position; write numbers like 2, 5 or a range 2-4",
                                 "feed-edit-unreadable"), "choose keep, delete or revise"])
    assert text.splitlines() == [
        "需要修改：请在这里改好后点击 Update。 / Needs a fix: fix it here and press Update.",
        '(1) 答案 "C" 不在选项 A, B 之中',
        '    answer "C" is not among the options A, B (answer-not-an-option)',
        "(2) 修改视频流第 1 行：'two' 不是位置：请写 2, 5 这样的数字或 2-4 这样的范围",
        "    edit line 1: 'two' is not a position; write numbers like 2, 5 or a range 2-4",
        "(3) 请选择保留（keep）、删除（delete）或修改（revise）",
        "    choose keep, delete or revise"]
    assert feedback_text([]) == ""

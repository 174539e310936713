"""The forms and the end-state syntax can express every valid task: every form offers the taxonomy's
option letters, and every platform check of a release written back in the review form's syntax
parses to the same checks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from curation.core.resources import resource, resource_text
from curation.qc.review import canonical_check
from curation.tasks.record import from_runner
from curation.tasks.rules import RuleContext, check_task
from curation.tasks.syntax import parse_platform_state, render_platform_state
from curation.tasks.taxonomy import load_taxonomy
from tests.skips import V1, requires_v1

# every packaged Label Studio form with an answer to choose
FORMS = sorted(f.name for f in resource().iterdir() if f.name.endswith(".xml")
               and any(c.get("name") == "answer" for c in ET.fromstring(f.read_text(encoding="utf-8")).iter("Choices")))


def test_the_forms_found_are_the_ones_people_answer_in():
    assert {"authoring.xml", "review.xml", "adjudication.xml", "task_audit.xml"} <= set(FORMS)


@pytest.mark.parametrize("form", FORMS)
def test_every_form_offers_exactly_the_taxonomys_option_letters(form):
    root = ET.fromstring(resource_text(form))
    (answer,) = [c for c in root.iter("Choices") if c.get("name") == "answer"]
    assert "".join(choice.get("value") for choice in answer.iter("Choice")) == load_taxonomy().option_letters


def _round_trip(checks):
    text = render_platform_state(checks)
    parsed, problems = parse_platform_state(text)
    return sorted(map(canonical_check, parsed)), problems, text


# every check shape a release holds: single and several positions, reports of a category, with a reason,
# and of any category, comments with and without text, current video, playback by share and by second
SHAPES = [
    {"func": "eval_like", "args": {"video_ids": 0}},
    {"func": "eval_like", "args": {"video_ids": [2, 5]}},
    {"func": "eval_collect", "args": {"video_ids": [1]}},
    {"func": "eval_report", "args": {"video_ids": 3, "expected_cat": "不实信息"}},
    {"func": "eval_report", "args": {"video_ids": [1, 4], "expected_cat": "虚假营销", "expected_reason": "夸大宣传"}},
    {"func": "eval_report", "args": {"video_ids": 1}},
    {"func": "eval_comment", "args": {"video_ids": 2, "comment": "已核实，谣言"}},
    {"func": "eval_comment", "args": {"video_ids": 0}},
    {"func": "eval_current_video", "args": {"video_id": 6}},
    {"func": "eval_playback", "args": {"video_id": 2, "target_pct": 0.35}},
    {"func": "eval_playback", "args": {"video_id": 0, "target_sec": 12.5}},
]


@pytest.mark.parametrize("check", SHAPES, ids=[f"{c['func']}-{i}" for i, c in enumerate(SHAPES)])
def test_each_check_shape_survives_the_review_forms_syntax(check):
    parsed, problems, text = _round_trip([check])
    assert not problems, text
    assert parsed == [canonical_check(check)], text


def test_report_any_category_is_its_own_words_not_a_missing_category():
    assert render_platform_state([{"func": "eval_report", "args": {"video_ids": 1}}]) == "report 2 any"
    assert parse_platform_state("report 2 任意")[0] == [{"func": "eval_report", "args": {"video_ids": 1}}]
    assert parse_platform_state("report 2")[1] == ["line 1: report needs a category, or 'any' when every "
                                                   "category counts"]




@requires_v1
def test_every_v1_platform_task_and_label_answer_can_be_written_in_the_forms():
    letters = set(load_taxonomy().option_letters)
    platform, answers = 0, 0
    for name in ("gui_action.json", "cross_source_understanding.json", "close_end_application.json"):
        for element in json.loads((V1 / name).read_text(encoding="utf-8")):
            record = from_runner({**element, "_file": name})
            if record.eval_type == "platform":
                platform += 1
                parsed, problems, text = _round_trip(record.eval_config)
                assert not problems and parsed == sorted(map(canonical_check, record.eval_config)), (
                    record.task_id, text)
            elif not [d for d in check_task(record, RuleContext()) if d.severity == "error"]:
                answers += 1
                assert record.answer in letters and record.answer in record.options, record.task_id
    assert (platform, answers) == (215, 282)

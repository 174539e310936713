"""The shortcut filter's answer parsing: what a model writes that has no usable shape is "unparsed"; a bug in
the parsing itself is a bug (it used to be swallowed as "unparsed", blaming the model)."""

from __future__ import annotations

import pytest

from curation.qc.shortcut import prompts
from curation.qc.shortcut.prompts import UNPARSED, parse_platform_answer


@pytest.mark.parametrize("text", ['{"like": "2"}', '{"like": [1.5]}', '{"report": [{"category": "a"}]}',
                                  '[1, 2]', '{"like": [null]}', '{"collect": [true]}', '{"report": "3"}',
                                  '{"like": [1,}'])
def test_an_answer_without_a_usable_shape_is_unparsed(text):
    assert parse_platform_answer(f"答案：{text}") == UNPARSED


def test_positions_as_a_model_writes_them():
    assert parse_platform_answer('{"like": [1, "3", 2.0], "report": [{"video": "2", "category": "不实信息"}]}') == {
        "like": [0, 1, 2], "collect": [], "report": [(1, "不实信息")]}


def test_a_bug_in_the_parsing_is_not_blamed_on_the_model(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("planted: a bug in the parser")

    monkeypatch.setattr(prompts, "sorted", broken, raising=False)  # shadows the builtin inside the module
    with pytest.raises(TypeError, match="planted"):
        parse_platform_answer('{"like": [1]}')

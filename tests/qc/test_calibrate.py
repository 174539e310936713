"""The pilot material: fixed questions as people write them, and the same pilot feeds for a seed."""

from __future__ import annotations

import pytest

from curation.core.errors import InputError, StateError, UsageError
from curation.core.stage import StageRun
from curation.corpus.feeds import latest_feeds
from curation.qc.calibrate import choose_pilot, read_questions
from tests.qc.helpers import planted_catalog


@pytest.fixture
def feeds(clustered_catalog):
    return clustered_catalog, planted_catalog(clustered_catalog, 6, seed=71)


def run_on(cat) -> StageRun:
    return StageRun("test", None, cat)


@pytest.mark.parametrize("options", ["['A: 猫', 'B: 狗']", "[A: 猫, B: 狗]", "{A: 猫, B: 狗}", "'A:猫 B:狗'",
                                     "|\n    A: 猫\n    B: 狗"])
def test_options_in_every_way_people_write_them(feeds, tmp_path, options):
    cat, ids = feeds
    path = tmp_path / "q.yaml"
    path.write_text(f"- feed: {ids[0]}\n  question: 视频里是什么动物？\n  options: {options}\n", encoding="utf-8")
    [item] = read_questions(path, run_on(cat))
    assert item.question == {"question": "视频里是什么动物？", "options": {"A": "猫", "B": "狗"}}
    assert (item.item, item.feed.feed_id) == ("q1", ids[0])


@pytest.mark.parametrize(("text", "message"), [
    ("- feed: {f}\n  question: 什么？\n  options: [A: 猫]\n", "question 1: give at least two options"),
    ("- feed: feed-nope\n  question: 什么？\n  options: [A: 猫, B: 狗]\n", "question 1: feed 'feed-nope' is not in"),
    ("- feed: {f}\n  questoin: 什么？\n  options: [A: 猫, B: 狗]\n", "question 1: unknown key(s) questoin"),
    ("- feed: {f}\n  question: 什么？\n  options: [A: 猫, B: 狗]\n- just a line\n", "question 2: write feed"),
    ("- id: a\n  feed: {f}\n  question: x\n  options: [A: 1, B: 2]\n- id: a\n  feed: {f}\n  question: y\n"
     "  options: [A: 1, B: 2]\n", "question 2: the id a is used twice"),
    ("feed: {f}\n", "write a list of questions"),
    ("- feed: {f}\n  question: [unclosed\n", "not valid YAML"),
])
def test_a_typo_in_the_questions_file_is_named_with_its_entry(feeds, tmp_path, text, message):
    cat, ids = feeds
    path = tmp_path / "q.yaml"
    path.write_text(text.replace("{f}", ids[0]), encoding="utf-8")
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_questions(path, run_on(cat))


def test_the_pilot_is_the_same_feeds_for_a_seed_whatever_their_order(feeds):
    cat, _ = feeds
    all_feeds = latest_feeds(cat)
    chosen = [f.feed_id for f in choose_pilot(all_feeds, 3, seed=4)]
    assert [f.feed_id for f in choose_pilot(list(reversed(all_feeds)), 3, seed=4)] == chosen
    assert len(set(chosen)) == 3 and [f.feed_id for f in choose_pilot(all_feeds, 3, seed=5)] != chosen
    with pytest.raises(StateError, match="only 6 feeds"):
        choose_pilot(all_feeds, 7, seed=4)
    with pytest.raises(UsageError, match="at least 1"):
        choose_pilot(all_feeds, 0, seed=4)

"""One check vocabulary (issue 39, item 2): every check has every facet, and everything that speaks of checks is
derived from it or refused at import when it misses one."""

from __future__ import annotations

import dataclasses
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.env import checks, vocabulary
from curation.env.vocabulary import POSITION, POSITIONS, VOCABULARY, CheckSpec, every_check
from curation.grade import negatives
from curation.qc.shortcut import prompts
from curation.release import card_text
from curation.tasks import idle, perfect, rules, syntax

# every table of a facet that is code, with the name its module gives it
TABLES = {"state reader": checks.READERS, "do-nothing state": idle.IDLE, "perfect-agent plan": perfect.PLANNERS,
          "authoring reader": syntax.ARG_READERS, "authoring writer": syntax.ARG_WRITERS}


@pytest.mark.parametrize("func", sorted(VOCABULARY))
def test_every_check_has_every_facet(func):
    spec = VOCABULARY[func]
    assert spec.func == func and spec.verb and spec.card and "{n}" in spec.negative
    assert spec.position_arg in spec.required and spec.required[spec.position_arg] in (POSITION, POSITIONS)
    assert all(kind in vocabulary.ARG_TYPES for kind in spec.args.values())
    assert set(spec.one_of) <= set(spec.optional)
    for facet, table in TABLES.items():
        assert func in table, f"{func} has no {facet}"


def test_what_speaks_of_checks_is_derived_from_the_vocabulary():
    assert {f: (set(s.required), set(s.optional)) for f, s in VOCABULARY.items()} == rules.ARGS
    assert {s.verb: f for f, s in VOCABULARY.items()} == syntax.CHECK_FUNCS
    assert {f: s.card for f, s in VOCABULARY.items()} == card_text.FUNCS
    assert {f: s.negative for f, s in VOCABULARY.items()} == negatives.TEMPLATES
    judged = {s.shortcut_key for s in VOCABULARY.values() if s.shortcut_key}
    assert judged == set(prompts.platform_truth([{"func": f, "args": {"video_ids": 0}} for f in VOCABULARY
                                                 if VOCABULARY[f].shortcut_key]) or {})


def test_a_check_added_to_the_vocabulary_without_its_facets_is_refused(monkeypatch):
    added = CheckSpec("eval_share", "share", {"video_ids": POSITIONS}, card="shared", negative="分享第{n}个视频")
    monkeypatch.setitem(VOCABULARY, "eval_share", added)
    for facet, table in TABLES.items():
        with pytest.raises(RuntimeError, match=f"no {facet} for eval_share"):
            every_check(table, facet)


def _check(spec: CheckSpec, feed_len: int):
    position = st.integers(0, feed_len - 1)
    text = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters='"“”＂'),
                   min_size=1, max_size=12).map(str.strip).filter(bool)
    fields = {spec.position_arg: position if spec.required[spec.position_arg] == POSITION
              else st.lists(position, min_size=2, max_size=3, unique=True) | position}
    if spec.func == "eval_report":
        fields["expected_cat"] = st.sampled_from(list(negatives.load_taxonomy().report_categories))
        return st.fixed_dictionaries(fields, optional={"expected_reason": text}).map(
            lambda a: {"func": spec.func, "args": a})
    if spec.func == "eval_comment":
        return st.fixed_dictionaries(fields, optional={"comment": text}).map(lambda a: {"func": spec.func, "args": a})
    if spec.func == "eval_playback":
        target = st.one_of(st.fixed_dictionaries({"target_pct": st.integers(0, 100).map(lambda p: p / 100)}),
                           st.fixed_dictionaries({"target_sec": st.integers(0, 300).map(float)}))
        return st.tuples(st.fixed_dictionaries(fields), target).map(lambda a: {"func": spec.func, "args": a[0] | a[1]})
    return st.fixed_dictionaries(fields).map(lambda a: {"func": spec.func, "args": a})


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_check_is_written_and_read_back_the_same(data):
    spec = data.draw(st.sampled_from(list(VOCABULARY.values())))
    check = data.draw(_check(spec, 8))
    text = syntax.render_platform_state([check])
    parsed, problems = syntax.parse_platform_state(text)
    assert problems == [] and parsed == [check], text


def test_a_profile_that_names_an_unknown_check_is_refused(tmp_path):
    from curation.core.errors import ConfigError
    from curation.core.resources import resource_text
    from curation.env.profile import load_profile

    text = resource_text("runners", "livingscreen-f02d1bc.toml").replace('ungradable = ["eval_playback"]',
                                                                          'ungradable = ["eval_playbak"]')
    (tmp_path / "p.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="eval_playbak, not a check"):
        load_profile(str(tmp_path / "p.toml"))
    assert dataclasses.replace(load_profile(""), ungradable=frozenset()).max_feed == 21


def test_a_profile_file_with_a_typo_is_one_line_naming_what_is_wrong(tmp_path):
    from tests.cli.test_cli import curate

    (tmp_path / "c.toml").write_text('[runner]\nprofile = "runers/ours.toml"\n', encoding="utf-8")
    out = curate("--config", str(tmp_path / "c.toml"), "env", "show")
    assert out.returncode == 1 and out.stderr.strip() == (
        "error: runner profile runers/ours.toml cannot be read: No such file or directory")
    (tmp_path / "p.toml").write_text('name = "ours"\n', encoding="utf-8")
    (tmp_path / "c.toml").write_text(f'[runner]\nprofile = "{tmp_path / "p.toml"}"\n', encoding="utf-8")
    out = curate("--config", str(tmp_path / "c.toml"), "env", "show")
    assert out.returncode == 1 and "lacks 'idle'" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_env_show_toml_prints_the_profile_in_force_as_a_team_starts_its_own_from_it(tmp_path):
    from tests.cli.test_cli import curate

    shipped = curate("env", "show", "--toml")
    assert shipped.returncode == 0 and tomllib.loads(shipped.stdout)["grading"]["ungradable"] == ["eval_playback"]
    own = tmp_path / "ours.toml"  # a team's profile made from it: it grades playback
    own.write_text(shipped.stdout.replace('ungradable = ["eval_playback"]', "ungradable = []"), encoding="utf-8")
    (tmp_path / "c.toml").write_text(f'[runner]\nprofile = "{own}"\n', encoding="utf-8")
    theirs = curate("--config", str(tmp_path / "c.toml"), "env", "show", "--toml")
    assert theirs.returncode == 0 and theirs.stdout == own.read_text(encoding="utf-8")
    assert "cannot grade:          nothing" in curate("--config", str(tmp_path / "c.toml"), "env", "show").stdout

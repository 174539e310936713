"""A logs folder as people leave it (issue 42): symlinked task folders and logs, symlink loops, names that are
not UTF-8 and logged text UTF-8 cannot hold are each a line, never a traceback, a run left `running` or a
silent skip; logs read = graded + rejected."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from curation.core.catalog import Catalog
from curation.core.errors import InputError, UsageError
from curation.grade.grade import grade_logs
from tests.cli.test_cli import curate
from tests.grade.real import episodes_copy, record_release, runner_dir


@pytest.fixture
def real(catalog, tmp_path):
    record_release(catalog, runner_dir(tmp_path / "v1"))
    return catalog


def graded(cat: Catalog, logs: Path, out: Path) -> tuple[dict[str, str], set[str]]:
    """Each rejected log's reason by path (as the summary and the catalog's rejects both say), and the graded tasks."""
    result = grade_logs(cat, [("Scripted", logs)], "1.0.0", out)
    assert result["logs"] == result["graded"] + result["rejected"]
    assert cat.scalar("SELECT count(*) FROM runs WHERE status = 'running'") == 0
    rejected = {r["log"]: r["reason"] for r in result.summary["rejected"]}
    kept = {r["raw_ref"]: r["reason"] for r in cat.rows("SELECT raw_ref, reason FROM rejects WHERE stage = 'grade'")}
    assert {ref: reason.removeprefix(f"{ref}: ") for ref, reason in kept.items()} == rejected
    return rejected, {row["task_id"] for row in result.rows}


def test_symlinks_are_refused_with_a_line_saying_which(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")
    like, collect = logs / "gui_action" / "gui_like_1", logs / "gui_action" / "gui_collect_1"
    # a task folder that is a symlink: not followed, not silently missing
    (tmp_path / "elsewhere").mkdir()
    like.rename(tmp_path / "elsewhere" / "gui_like_1")
    like.symlink_to(tmp_path / "elsewhere" / "gui_like_1")
    # a log.json pointing outside the logs folder is refused; one pointing inside is read
    outside = tmp_path / "outside.json"
    (collect / "log.json").rename(outside)
    (collect / "log.json").symlink_to(outside)
    comment = logs / "gui_action" / "gui_comment_1"
    (comment / "log.json").rename(logs / "kept.json")
    (comment / "log.json").symlink_to(logs / "kept.json")
    # a log.json that is a loop is a loop, not "holds no log.json"
    swipe = logs / "gui_action" / "gui_swipe_7" / "log.json"
    swipe.unlink()
    swipe.symlink_to(swipe)
    rejected, grades = graded(real, logs, tmp_path / "out")
    assert rejected == {
        str(like): f"the folder is a symlink to {tmp_path}/elsewhere/gui_like_1: not followed (task folders are read "
                   "where they are; copy it into the logs folder)",
        str(collect / "log.json"): f"log.json is a symlink to {outside}, outside the logs folder {logs}: not followed",
        str(swipe): "log.json is a symlink loop"}
    assert "gui_comment_1" in grades and not {"gui_like_1", "gui_collect_1", "gui_swipe_7"} & set(grades)


def test_a_name_that_is_not_utf8_and_logged_text_utf8_cannot_hold_are_rejects(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")
    odd = logs / "gui_action" / os.fsdecode(b"gui_like_1\xff")
    (logs / "gui_action" / "gui_like_1").rename(odd)
    log = logs / "close_end_application" / "moderation_9" / "log.json"
    data = json.loads(log.read_text(encoding="utf-8"))
    data["history"].append({"role": "assistant", "content": "", "tool_calls": [{
        "id": "x", "type": "function", "function": {"name": "type", "arguments": json.dumps({"text": "\udfff"})}}]})
    log.write_text(json.dumps(data), encoding="utf-8")
    rejected, grades = graded(real, logs, tmp_path / "out")
    assert rejected == {
        f"{logs}/gui_action/gui_like_1\\xff/log.json": "the log's path gui_action/gui_like_1\\xff/log.json is not "
        "UTF-8 (byte 0xff in the name 'gui_like_1\\xff'): the catalog keeps names as text; rename it",
        str(log): f"argument text of call {len([c for m in data['history'] for c in m.get('tool_calls') or []])} "
                  "(type) has an unpaired surrogate '\\udfff' at character 0"}
    assert real.scalar("SELECT record_id FROM rejects WHERE raw_ref LIKE '%xff%'") == "Scripted/gui_like_1\\xff"
    assert len(grades) == 5


def test_arguments_that_cannot_be_read_or_recorded_are_one_line_before_any_run(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    odd = tmp_path / os.fsdecode(b"\xfe")
    odd.mkdir()
    for args, error, message in [
        (([("m", tmp_path / "a")], "1.0.0", tmp_path / "out"), InputError, f"the logs folder {tmp_path}/a is a symlink "
                                                                           "loop"),
        (([("m", odd)], "1.0.0", tmp_path / "out"), InputError, f"the logs folder {tmp_path}/\\xfe is not UTF-8"),
        (([("m", logs)], "1.0.0", odd / "out"), InputError, f"the --out folder {tmp_path}/\\xfe/out is not UTF-8"),
        (([("m", logs)], "1.0.0", tmp_path / "a" / "out"), InputError, f"the --out folder {tmp_path}/a/out goes "
                                                                       "through a symlink loop"),
        (([(os.fsdecode(b"\xfe"), logs)], "1.0.0", tmp_path / "out"), UsageError, "the --model name \\xfe is not"),
    ]:
        with pytest.raises(error) as refused:
            grade_logs(real, *args)
        assert str(refused.value).startswith(message)
    assert real.scalar("SELECT count(*) FROM runs WHERE stage = 'grade'") == 0


def test_the_command_line_says_a_logs_folder_that_is_not_utf8_in_one_line_and_leaves_nothing_behind(real, tmp_path):
    odd = tmp_path / os.fsdecode(b"logs\xff")
    episodes_copy(odd)
    db = real.path
    real.close()
    out = curate("--catalog", str(db), "grade", str(odd), "--release", "v1.0.0", "--out", str(tmp_path / "out"))
    assert out.returncode == 1
    assert out.stderr.splitlines() == [f"error: the logs folder {tmp_path}/logs\\xff is not UTF-8 (byte 0xff in the "
                                       "name 'logs\\xff'): the catalog keeps names as text; rename it"]
    assert not list(db.parent.glob("*.part"))
    with Catalog(db) as cat:
        assert cat.scalar("SELECT count(*) FROM runs WHERE stage = 'grade'") == 0

"""What the suite needs beside the repo, and the rule on skips (tests/skips.py): a test whose folder is missing is
skipped with that folder's reason; outside CI the run ends with one block naming each missing folder, where it
was looked for and how to provide it, and exits 0; in CI the same skips fail the run, naming the tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.skips import (
    ALLOWED_IN_CI,
    EPISODES_2_FOLDER,
    EPISODES_FOLDER,
    RUNNER_FOLDER,
    SHARED_ENV,
    SHARED_FOLDERS,
    V1_FOLDER,
    SharedFolder,
    runner_utils,
    skip_summary,
    unlisted_skips,
)

# tests that read each folder, run without it by the clone test below (one per folder)
READERS = {
    V1_FOLDER.name: "tests/tasks/test_forms.py::"
                    "test_every_v1_platform_task_and_label_answer_can_be_written_in_the_forms",
    RUNNER_FOLDER.name: "tests/release/test_envfeeds.py::test_the_runners_own_feed2data_gives_the_same_text",
    EPISODES_2_FOLDER.name: "tests/grade/test_real_episodes.py::"
                            "test_text_typed_where_focus_is_not_goes_to_the_caret_and_sends_nothing",
    EPISODES_FOLDER.name: "tests/examples/test_examples.py::test_grade_episodes",
}
PLANTED = "planted for the skip rule"
# the starts of paths that exist on one machine only (joined here, so that this file does not hold them itself)
MACHINE_PATHS = tuple("/" + part + "/" for part in ("work", "home", "root", "Users", "tmp/ci"))


def report(reason: str, xfail: bool = False, nodeid: str = "tests/x.py::t") -> pytest.TestReport:
    path = nodeid.split("::")[0]
    made = pytest.TestReport(nodeid, (path, 1, "t"), {}, "skipped", (path, 1, f"Skipped: {reason}"), "setup")
    if xfail:
        made.wasxfail = "known"
    return made


def test_only_unlisted_skips_are_named(monkeypatch):
    listed = "a reason the list allows"
    monkeypatch.setitem(ALLOWED_IN_CI, listed, "for this test")
    assert unlisted_skips([report(listed), report("no v1 here"), report("x", xfail=True)]) == [
        "tests/x.py::t: no v1 here"]


@given(st.lists(st.tuples(st.sets(st.sampled_from(SHARED_FOLDERS)), st.sampled_from("ab"), st.integers(0, 3)),
                max_size=8))
def test_the_block_names_each_missing_folder_once_with_its_tests(skips):
    """Skips drawn over any mix of folders (a test may need several) and other reasons: each folder some skip
    needed is named once, with where it was looked for, its variable, and a count per file that adds up."""
    reports = [report("; ".join(f.reason for f in folders) or f"other reason {other}",
                      nodeid=f"tests/t{n}.py::case{i}") for i, (folders, other, n) in enumerate(skips)]
    lines = skip_summary(reports)
    for folder in SHARED_FOLDERS:
        needed = [r for r, (folders, _, _) in zip(reports, skips, strict=True) if folder in folders]
        heads = [line for line in lines if line.startswith(f"{folder.name}: ")]
        assert len(heads) == (1 if needed else 0)
        if needed:
            at = lines.index(heads[0])
            assert str(folder.path) in heads[0] and folder.env in lines[at + 1] and SHARED_ENV in lines[at + 1]
            counted = lines[at + 2].removeprefix("    skipped: ").split(", ")
            assert sum(int(part.rsplit("(", 1)[1].rstrip(")")) for part in counted) == len(needed)
    others = {o for folders, o, _ in skips if not folders}
    assert sorted(line.split(":")[0] for line in lines if line.startswith("skipped because")) == sorted(
        f"skipped because other reason {o}" for o in others)
    assert not skip_summary([report("x", xfail=True)])


@pytest.mark.parametrize("folder", SHARED_FOLDERS, ids=lambda f: f.name)
def test_each_shared_folder_holds_what_its_tests_read(folder: SharedFolder, tmp_path):
    """Where CI has the folder, it holds the files its tests read; elsewhere this skips with the folder's reason
    (and CI fails on that skip)."""
    if folder.found() is None:
        pytest.skip(folder.reason)
    assert all((folder.path / name).stat().st_size > 0 for name in folder.files)
    if folder is V1_FOLDER:
        assert all(isinstance(json.loads((folder.path / n).read_text(encoding="utf-8")), list) for n in folder.files)
    if folder is RUNNER_FOLDER:
        copied = runner_utils(tmp_path)
        assert copied is not None and "def eval_like(" in copied.read_text(encoding="utf-8")


def test_every_folder_has_a_reader_here():
    assert set(READERS) == {f.name for f in SHARED_FOLDERS}


def test_a_clone_without_the_shared_folders_says_what_it_skipped_and_ci_fails(tmp_path):
    """The suite's own tests, conftest and skip rule copied to a folder with no data beside it ($LIVINGSCREEN_SHARED
    an empty folder, no folder variable): a test reading each folder, the folder checks, and a planted skip.
    Outside CI: exit 0 and one block naming every folder, where it was looked for and how to provide it. In CI:
    exit 1, naming every skipped test."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "tests", clone / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    for shipped in ("raw", "schemas", "examples"):  # the repo's own files, which a clone has
        (clone / shipped).symlink_to(ROOT / shipped)
    (clone / "tests" / "test_planted_skip.py").write_text(
        f"import pytest\n\n\ndef test_planted():\n    pytest.skip({PLANTED!r})\n", encoding="utf-8")
    empty = tmp_path / "no-shared"
    empty.mkdir()
    selection = [*READERS.values(), "tests/test_skips.py::test_each_shared_folder_holds_what_its_tests_read",
                 "tests/test_planted_skip.py"]
    base = {k: v for k, v in os.environ.items() if k != "CI" and k not in {f.env for f in SHARED_FOLDERS}}
    runs = {}
    for ci in ("", "1"):
        env = {**base, SHARED_ENV: str(empty), **({"CI": ci} if ci else {})}
        runs[ci] = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   f"--basetemp={tmp_path / f'run{ci or 0}'}", *selection],
                                  cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    outside, in_ci = runs[""], runs["1"]
    assert outside.returncode == 0, outside.stdout[-3000:] + outside.stderr[-2000:]
    block = outside.stdout[outside.stdout.index("what this run skipped"):]
    assert outside.stdout.count("what this run skipped") == 1
    for folder in SHARED_FOLDERS:
        assert f"{folder.name}: {folder.holds}, not found at {empty / folder.name}" in block, block
        assert f"set {folder.env}=<the folder>" in block
    assert f"skipped because {PLANTED}: tests/test_planted_skip.py (1)" in block
    assert in_ci.returncode == 1, in_ci.stdout[-3000:]
    assert "what this run skipped" not in in_ci.stdout
    assert "skipped in CI for a reason tests/skips.py does not list" in in_ci.stdout
    for test in [*READERS.values(), "tests/test_planted_skip.py::test_planted"]:
        assert f"{test}: " in in_ci.stdout, test
    assert not (ROOT / "tests" / "test_planted_skip.py").exists()  # the clone's, never the repo's


def test_the_repo_holds_no_path_of_one_machine():
    """A path that exists on one machine only (the CI box's, a home folder) appears in no tracked file."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    assert listed.returncode == 0, f"{ROOT} is not a git checkout: {listed.stderr.decode(errors='replace')}"
    found = []
    for name in filter(None, listed.stdout.decode().split("\0")):
        path = Path(ROOT / name)
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        found += [f"{name}: {marker}" for marker in MACHINE_PATHS if marker in text]
    assert not found, found


def test_the_development_doc_lists_every_shared_folder_and_every_test_that_reads_one():
    from tests.test_readme import section, table_rows

    needs = section("## What the suite needs", (ROOT / "docs" / "development.md").read_text(encoding="utf-8"))
    rows = table_rows(needs, "| folder | variable | what it holds |")
    assert [(r[0].strip("`"), r[1].strip("`")) for r in rows] == [(f.name, f.env) for f in SHARED_FOLDERS]
    readers = sorted(p.name for p in (ROOT / "tests").rglob("test_*.py")
                     if "from tests.skips import" in (text := p.read_text(encoding="utf-8"))
                     or "from tests.env.public_runner import" in text)
    assert [name for name in readers if name not in needs] == []

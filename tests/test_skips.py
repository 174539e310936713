"""The CI rule on skips: a skip whose reason `tests/skips.py` does not list is a failure in CI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.skips import ALLOWED_IN_CI, RUNNER, runner_utils, unlisted_skips, v1_dir


def report(reason: str, xfail: bool = False) -> pytest.TestReport:
    made = pytest.TestReport("tests/x.py::t", ("tests/x.py", 1, "t"), {}, "skipped",
                             ("tests/x.py", 1, f"Skipped: {reason}"), "setup")
    if xfail:
        made.wasxfail = "known"
    return made


def test_only_unlisted_skips_are_named(monkeypatch):
    listed = "a reason the list allows"
    monkeypatch.setitem(ALLOWED_IN_CI, listed, "for this test")
    assert unlisted_skips([report(listed), report("no v1 here"), report("x", xfail=True)]) == [
        "tests/x.py::t: no v1 here"]


def test_a_planted_skip_fails_a_ci_run(tmp_path):
    """A real pytest run under the suite's conftest: the same planted skip passes outside CI, fails in CI."""
    planted = ROOT / "tests" / f"test_planted_skip_{os.getpid()}.py"
    planted.write_text("import pytest\n\ndef test_planted():\n    pytest.skip('planted for the CI rule')\n",
                       encoding="utf-8")
    try:
        runs = {ci: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(planted)],
                                   cwd=ROOT, capture_output=True, text=True, timeout=300,
                                   env={**os.environ, "CI": ci} if ci else
                                   {k: v for k, v in os.environ.items() if k != "CI"})
                for ci in ("", "true")}
    finally:
        planted.unlink()
    assert runs[""].returncode == 0, runs[""].stdout
    assert runs["true"].returncode == 1 and "planted for the CI rule" in runs["true"].stdout


def test_the_public_v1_is_found_where_ci_has_it():
    assert v1_dir() is not None and len(list(v1_dir().glob("*.json"))) == 3


def test_the_public_runner_is_found_where_ci_has_it(tmp_path):
    copied = runner_utils(tmp_path)
    assert copied is not None and "def eval_like(" in copied.read_text(encoding="utf-8")
    assert (RUNNER / "main_threaded.py").is_file() and (RUNNER / "app.py").is_file()

"""Every folder the suite reads from beside the repo, found in one place, and the rule on skips.

Some test data must never enter the repo: the public LivingScreen v1 release's runner files, the public runner's
code, episodes the public runner recorded. It lives beside the checkout, in `../shared/<folder>/` (CI has it
there); `$LIVINGSCREEN_SHARED` names another folder holding them all, and each folder's own variable
(`SHARED_FOLDERS` below) points at that folder alone. A test reads such data only through this module.

A test whose folder is missing is skipped, with the folder's reason. Outside CI the run ends with one block that
says what was skipped, why, and how to provide it (`skip_summary`, printed by tests/conftest.py). In CI (`CI`
set) a skip whose reason `ALLOWED_IN_CI` does not list fails the run (`unlisted_skips`).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_ENV = "LIVINGSCREEN_SHARED"


def shared_root() -> Path:
    return Path(os.environ.get(SHARED_ENV) or ROOT.parent / "shared")


@dataclass(frozen=True)
class SharedFolder:
    name: str                # its folder in the shared root
    env: str                 # the variable that points at it alone
    holds: str               # what it is, in the skip reason
    files: tuple[str, ...]   # what the tests read there: the folder is present when every one is

    @property
    def path(self) -> Path:
        return Path(os.environ.get(self.env) or shared_root() / self.name)

    def found(self) -> Path | None:
        return self.path if all((self.path / f).is_file() for f in self.files) else None

    @property
    def reason(self) -> str:
        """What a test that needs the folder gives when it skips: the same words wherever the folder was looked
        for, so that the reason alone says which folder was missing."""
        return f"needs {self.holds} (../shared/{self.name}/ or ${self.env})"

    def how_to_provide(self) -> str:
        return (f"put it at {self.path}, or set {self.env}=<the folder>, or {SHARED_ENV}=<a folder holding "
                f"{self.name}/>")


V1_FOLDER = SharedFolder("livingscreen-v1", "LIVINGSCREEN_V1", "the public LivingScreen v1 release's runner files",
                         ("gui_action.json", "cross_source_understanding.json", "close_end_application.json"))
RUNNER_FOLDER = SharedFolder("livingscreen-runner", "LIVINGSCREEN_RUNNER", "the public LivingScreen runner's code",
                             ("main_threaded.py", "app.py", "utils.py"))
EPISODES_2_FOLDER = SharedFolder(
    "runner-episodes-2", "LIVINGSCREEN_EPISODES_2", "two episodes the public runner recorded (runner-episodes-2)",
    tuple(f"Scripted/gui_action/{task}/{name}" for task in ("gui_comment_11", "gui_report_17")
          for name in ("log.json", "state.json")))
EPISODES_FOLDER = SharedFolder(
    "runner-episodes", "LIVINGSCREEN_EPISODES", "episodes the public runner recorded of v1 tasks (runner-episodes)",
    tuple(f"Scripted/gui_action/{task}/log.json" for task in ("gui_collect_1", "gui_comment_1", "gui_like_1")))

SHARED_FOLDERS = (V1_FOLDER, RUNNER_FOLDER, EPISODES_2_FOLDER, EPISODES_FOLDER)

# the paths and reasons the tests import (read once, when the suite starts)
V1, RUNNER, EPISODES_2 = V1_FOLDER.path, RUNNER_FOLDER.path, EPISODES_2_FOLDER.path
V1_MISSING, RUNNER_MISSING = V1_FOLDER.reason, RUNNER_FOLDER.reason

# reason a test gives when it skips -> why that is acceptable in CI. Nothing: CI has every folder the suite reads.
ALLOWED_IN_CI: dict[str, str] = {}


def requires(*folders: SharedFolder) -> pytest.MarkDecorator:
    """Skip the test unless every one of `folders` is present; the reason names each one missing."""
    missing = [f.reason for f in folders if f.found() is None]
    return pytest.mark.skipif(bool(missing), reason="; ".join(missing) or "every folder it needs is present")


requires_v1 = requires(V1_FOLDER)


def v1_dir() -> Path | None:
    return V1_FOLDER.found()


def runner_utils(into: Path) -> Path | None:
    """The public runner's `utils.py`, copied into `into`, or None when the runner's code is not found."""
    if RUNNER_FOLDER.found() is None:
        return None
    into.mkdir(parents=True, exist_ok=True)
    shutil.copy(RUNNER / "utils.py", into / "utils.py")
    return into / "utils.py"


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def _skips(reports: list[pytest.TestReport]) -> list[pytest.TestReport]:
    return [r for r in reports if r.skipped and not hasattr(r, "wasxfail")]


def unlisted_skips(reports: list[pytest.TestReport]) -> list[str]:
    return [f"{r.nodeid}: {skip_reason(r)}" for r in _skips(reports) if skip_reason(r) not in ALLOWED_IN_CI]


def _by_file(reports: list[pytest.TestReport]) -> str:
    files = Counter(r.nodeid.split("::")[0] for r in reports)
    return ", ".join(f"{name} ({n})" for name, n in sorted(files.items()))


def skip_summary(reports: list[pytest.TestReport]) -> list[str]:
    """The lines of the one block that ends a run with skips: for each missing folder, where it was looked for,
    how to provide it and the tests it held back; then any other reason with its tests. Empty: nothing skipped."""
    skipped = _skips(reports)
    lines: list[str] = []
    for folder in SHARED_FOLDERS:
        held = [r for r in skipped if folder.reason in skip_reason(r)]
        if held:
            lines += [f"{folder.name}: {folder.holds}, not found at {folder.path}",
                      f"    to run these tests: {folder.how_to_provide()}",
                      f"    skipped: {_by_file(held)}"]
    others: dict[str, list[pytest.TestReport]] = {}
    for report in skipped:
        if not any(folder.reason in skip_reason(report) for folder in SHARED_FOLDERS):
            others.setdefault(skip_reason(report), []).append(report)
    for reason, held in others.items():
        lines += [f"skipped because {reason}: {_by_file(held)}"]
    return lines

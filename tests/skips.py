"""The one place where a skip may be allowed in CI, and where the suite finds the public v1 files and the runner.

A CI run (`CI` set) fails when any test was skipped for a reason not listed in `ALLOWED_IN_CI`; elsewhere a skip
is reported as usual. The public v1 release's runner files and the public runner's code are test data that must
never enter the repo: they are read from `$LIVINGSCREEN_V1` and `$LIVINGSCREEN_RUNNER`, else from
`../shared/livingscreen-v1/` and `../shared/livingscreen-runner/` beside the checkout (CI has both there).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
V1 = Path(os.environ.get("LIVINGSCREEN_V1") or ROOT.parent / "shared" / "livingscreen-v1")
RUNNER = Path(os.environ.get("LIVINGSCREEN_RUNNER") or ROOT.parent / "shared" / "livingscreen-runner")

V1_MISSING = "the public LivingScreen v1 runner files are not found (set LIVINGSCREEN_V1)"
RUNNER_MISSING = "the public runner's code is not found (set LIVINGSCREEN_RUNNER)"

# reason a test gives when it skips -> why that is acceptable in CI. Nothing: CI has every file the suite reads.
ALLOWED_IN_CI: dict[str, str] = {}


def v1_dir() -> Path | None:
    return V1 if (V1 / "gui_action.json").is_file() else None


requires_v1 = pytest.mark.skipif(v1_dir() is None, reason=V1_MISSING)


def runner_utils(into: Path) -> Path | None:
    """The public runner's `utils.py`, copied into `into`, or None when it is not on this machine."""
    if not (RUNNER / "utils.py").is_file():
        return None
    into.mkdir(parents=True, exist_ok=True)
    shutil.copy(RUNNER / "utils.py", into / "utils.py")
    return into / "utils.py"


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def unlisted_skips(reports: list[pytest.TestReport]) -> list[str]:
    return [f"{r.nodeid}: {skip_reason(r)}" for r in reports
            if r.skipped and not hasattr(r, "wasxfail") and skip_reason(r) not in ALLOWED_IN_CI]

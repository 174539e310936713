"""The one place where a skip may be allowed in CI, and where the suite finds the public v1 files and the runner.

A CI run (`CI` set) fails when any test was skipped for a reason not listed in `ALLOWED_IN_CI`; elsewhere a skip
is reported as usual. The public v1 release's runner files are test data that must never enter the repo: they
are read from `$LIVINGSCREEN_V1`, else from `../shared/livingscreen-v1/` beside the checkout (CI has it there).
The public runner's `utils.py` is read from `$LIVINGSCREEN_RUNNER`, else from the mirror of its repository when
this machine has one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
V1 = Path(os.environ.get("LIVINGSCREEN_V1") or ROOT.parent / "shared" / "livingscreen-v1")
RUNNER_COMMIT = "f02d1bcfeb0b03af3ca080e0647f6bff7f5867f7"  # the commit the shared v1 files were taken from
RUNNER_MIRROR = Path(os.environ.get("LIVINGSCREEN_RUNNER_GIT", "/work/.mirror/BITHLP+LivingScreen/repo"))

V1_MISSING = "the public LivingScreen v1 runner files are not found (set LIVINGSCREEN_V1)"
RUNNER_MISSING = "the public runner's utils.py is not found (set LIVINGSCREEN_RUNNER)"

# reason a test gives when it skips -> why that is acceptable in CI.
ALLOWED_IN_CI: dict[str, str] = {
    RUNNER_MISSING: "the runner's code is not shared test data: a machine without its mirror cannot run the check "
                    "of its own feed2data (CI on the developers' machine has the mirror and runs it)",
}


def v1_dir() -> Path | None:
    return V1 if (V1 / "gui_action.json").is_file() else None


requires_v1 = pytest.mark.skipif(v1_dir() is None, reason=V1_MISSING)


def runner_utils(into: Path) -> Path | None:
    """The public runner's `utils.py`, copied into `into`, or None when neither source is on this machine."""
    folder = os.environ.get("LIVINGSCREEN_RUNNER")
    into.mkdir(parents=True, exist_ok=True)
    if folder and (Path(folder) / "utils.py").is_file():
        (into / "utils.py").write_bytes((Path(folder) / "utils.py").read_bytes())
        return into / "utils.py"
    if not RUNNER_MIRROR.is_dir():
        return None
    shown = subprocess.run(["git", "--git-dir", str(RUNNER_MIRROR), "show", f"{RUNNER_COMMIT}:utils.py"],
                           capture_output=True, check=False)
    if shown.returncode != 0:
        return None
    (into / "utils.py").write_bytes(shown.stdout)
    return into / "utils.py"


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def unlisted_skips(reports: list[pytest.TestReport]) -> list[str]:
    return [f"{r.nodeid}: {skip_reason(r)}" for r in reports
            if r.skipped and not hasattr(r, "wasxfail") and skip_reason(r) not in ALLOWED_IN_CI]

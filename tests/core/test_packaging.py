"""The package works when installed as a wheel, away from the source tree: resources come
from the package, not from the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import FIXTURES, ROOT


def test_wheel_in_a_fresh_venv_runs_from_another_folder(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("livingscreen_curation-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", site, str(wheel)],
                   check=True, capture_output=True)
    # The dependencies come from this environment's site-packages, appended after the venv's own
    # (a plain path line: the editable install's hook in there is not loaded).
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}

    def curate(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(py), "-c", "from curation.cli import main; main()", *args], cwd=work,
                              capture_output=True, text=True, env=env, timeout=300)

    where = subprocess.run([str(py), "-c", "import curation; print(curation.__file__)"], cwd=work,
                           capture_output=True, text=True, env=env, check=True).stdout.strip()
    assert where.startswith(site) and not where.startswith(str(ROOT))
    assert curate("--help").returncode == 0
    described = curate("describe")
    assert described.returncode == 0 and "qc-shortcut: curate qc shortcut" in described.stdout
    out = curate("--catalog", "c.duckdb", "ingest", "livebot", str(FIXTURES / "livebot"))
    assert out.returncode == 0 and "3 read, 3 accepted, 0 rejected" in out.stdout, out.stderr
    assert curate("--catalog", "c.duckdb", "keywords").returncode == 0  # packaged stop words
    from curation.core.resources import resource_text
    shown = subprocess.run([str(py), "-c", "from curation.tasks.taxonomy import load_taxonomy; "
                            "from curation.qc.shortcut.prompts import template; "
                            "print(len(load_taxonomy().subcategories), len(template('label', 'zh')))"],
                           cwd=work, capture_output=True, text=True, env=env, check=True).stdout.split()
    assert int(shown[0]) >= 10 and int(shown[1]) == len(resource_text("prompts", "shortcut_label_paper_zh.txt"))

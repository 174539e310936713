"""The public LivingScreen runner as tests play it: a copy of its code (`../shared/livingscreen-runner/`, test data:
copied to a temporary folder, never into the repo), its own dependencies in `.venv-runner` (`make test` makes it),
Debian's chromium where its Playwright looks for its browser, videos as one 30-second test clip linked to every path,
and its FakeSV metadata file written from the records the catalog was ingested from. Episodes are played by its
own `main_threaded.py` with stand-in models that play plans made beforehand (`planned_model.py` of the recording
tools): `Perfect` the perfect-agent plan of each task, `Idle` nothing but `finish`.

Two things of the runner's own lose episodes now and then, for reasons that say nothing of a task:
- its page asks the internet for a script in its <head> (unpkg.com) and for avatars (api.dicebear.com). With no
  network the lookups stall ~5 s in about one page load in five here (the first screenshot after `goto` took
  4.4-5.5 s in 4 of 20 loads, `goto` 6.2 s in 1 of 8; 0.2-0.8 s and 0.3-0.8 s without), and two stalls pass the
  runner's fixed Playwright limits (goto 10 s, screenshot 15 s). The chromium the tests give it refuses every name
  but the local app's at once (`NO_INTERNET`): the page loads as it does offline, without the stall;
- its worker sleeps a fixed 2 s after starting `app.py` before the first `/api/reset`; an app slower to listen
  refuses the reset and the episode crashes before it began. Such a task was never played: `play` plays it again
  (`NEVER_STARTED`), every other crash stands with the runner's own message."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.skips import RUNNER, RUNNER_MISSING

RUNNER_PYTHON = ROOT / ".venv-runner" / "bin" / "python"
RECORDING = ROOT / "tests" / "fixtures" / "runner-episodes-random" / "recording"
CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")  # what `make browser` installs
CLIP_S = 30.0  # longer than the profile's do-nothing window, so that where video 0 stands measures the window
# chromium's own switch: every host name the page asks for fails at once, but the app's address
NO_INTERNET = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"
CRASH = re.compile(r"❌ 任务 (\S+) 失败: (.*)")  # what main_threaded.py prints for an episode that raised
NEVER_STARTED = "/api/reset (Caused by NewConnectionError"  # its app did not listen yet: refused before the episode
REPLAYS = 2  # rounds of playing the tasks that never started again


def runner_missing() -> str | None:
    """Why the runner cannot be played here, or None."""
    if not (RUNNER / "main_threaded.py").is_file():
        return RUNNER_MISSING
    if not RUNNER_PYTHON.exists() or not CHROMIUM.exists():
        return "the runner's venv (.venv-runner) or Debian's chromium is missing: `make test` installs both"
    return None


def browsers_path(folder: Path) -> Path:
    """A Playwright browsers folder whose headless shell is Debian's chromium with no internet names
    (`NO_INTERNET`), under the name Playwright 1.58 looks for, so that the runner's own
    `chromium.launch(headless=True)` starts it unchanged."""
    listed = subprocess.run([str(RUNNER_PYTHON), "-c", "import json, playwright, pathlib; p = pathlib.Path("
                             "playwright.__file__).parent / 'driver/package/browsers.json'; print(next(b['revision'] "
                             "for b in json.loads(p.read_text())['browsers'] if b['name'] == "
                             "'chromium-headless-shell'))"], capture_output=True, text=True, check=True)
    shell = folder / f"chromium_headless_shell-{listed.stdout.strip()}" / "chrome-headless-shell-linux64"
    shell.mkdir(parents=True, exist_ok=True)
    launcher = shell / "chrome-headless-shell"
    launcher.write_text(f"#!/bin/sh\nexec {CHROMIUM} '{NO_INTERNET}' \"$@\"\n", encoding="utf-8")
    launcher.chmod(0o755)
    return folder


def runner_copy(folder: Path, records: list[dict[str, Any]], videos: list[str]) -> Path:
    """The runner's code in `folder`, the stand-in models registered, every video path linked to the test clip, and
    `records` as its FakeSV metadata file (the runner's `static/data/FakeSV/data_complete.json`)."""
    shutil.copytree(RUNNER, folder, ignore=shutil.ignore_patterns("__pycache__", "logs"))
    for path in folder.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)  # CI lays shared/ out read-only
    shutil.copy(RECORDING / "planned_model.py", folder / "planned_model.py")
    with (folder / "llms.py").open("a", encoding="utf-8") as llms:
        llms.write("\nfrom planned_model import Idle, Perfect  # noqa: E402,F401\n")
    clip = folder / "static" / "data" / "_clip.mp4"
    clip.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", f"testsrc=duration={CLIP_S:g}:size=320x568:"
                    "rate=25", "-pix_fmt", "yuv420p", str(clip)], check=True)
    for video in videos:
        source, _, native = video.partition("/")
        assert source == "FakeSV", video
        path = folder / "static" / "data" / "FakeSV" / "videos" / f"{native}.mp4"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            os.link(clip, path)
    (folder / "static" / "data" / "FakeSV" / "data_complete.json").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    (folder / "data").mkdir(exist_ok=True)
    return folder


def free_ports(count: int) -> int:
    """A base port with `count` free ports from it on 127.0.0.1 (the runner takes base + thread), looked for from a
    random start: two test workers playing the runner at once must not both take the first free one."""
    start = random.randrange(23000, 40000)
    for base in [*range(start, 40000, 97), *range(23000, start, 97)]:
        free = True
        for port in range(base, base + count):
            with socket.socket() as probe:
                free = free and probe.connect_ex(("127.0.0.1", port)) != 0
        if free:
            return base
    raise RuntimeError("no free ports")


def environment(folder: Path, browsers: Path, plans: dict[str, Path]) -> dict[str, str]:
    return {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(browsers),
            "PATH": f"{RUNNER_PYTHON.parent}:{os.environ['PATH']}",
            **{f"EPISODE_PLANS_{model.upper()}": str(path) for model, path in plans.items()}}


def play(folder: Path, browsers: Path, model: str, category: str, tasks: list[dict[str, Any]],
         plans: dict[str, list[list[list[Any]]]], threads: int = 2) -> Path:
    """`tasks` played by the runner's own `main_threaded.py` with the stand-in `model`; returns its log folder
    (`logs/<model>/<category>/<task_id>/log.json`, an empty folder where the episode crashed). What the runner
    printed is kept beside it (`logs/<model>-<category>.out`, `crashes` reads it); a task whose episode never
    started (`NEVER_STARTED`) is played again, alone, up to `REPLAYS` times."""
    plan_file = folder / f"plans_{model.lower()}.json"
    plan_file.write_text(json.dumps(plans, ensure_ascii=False), encoding="utf-8")
    logs = folder / "logs" / model
    todo = tasks
    for attempt in range(1 + REPLAYS):
        name = f"{model.lower()}_{category}" + (f"_again{attempt}" if attempt else "")
        (folder / "data" / f"{name}.json").write_text(json.dumps(todo, ensure_ascii=False), encoding="utf-8")
        said = folder / "logs" / f"{model}-{category}"
        said.parent.mkdir(parents=True, exist_ok=True)
        with said.with_suffix(".out").open("a", encoding="utf-8") as out, \
                said.with_suffix(".err").open("a", encoding="utf-8") as err:
            done = subprocess.run([str(RUNNER_PYTHON), "main_threaded.py", "-t", name, "--logs", category, "--model",
                                   model, "--threads", str(threads), "--base-port", str(free_ports(threads)),
                                   "--max-steps", "40"], cwd=folder,
                                  env=environment(folder, browsers, {model: plan_file}), stdout=out, stderr=err,
                                  timeout=900)
        assert done.returncode == 0, said.with_suffix(".err").read_text(encoding="utf-8")[-3000:]
        lost = {t for t, why in crashes(folder, model, category).items() if NEVER_STARTED in why}
        if not lost:
            break
        todo = [t for t in tasks if t["task_id"] in lost]
    return logs


def crashes(folder: Path, model: str, category: str) -> dict[str, str]:
    """The runner's own message for every episode of `model` in `category` that left no log.json, from what it
    printed (the last word on a task played again)."""
    said = dict(CRASH.findall((folder / "logs" / f"{model}-{category}.out").read_text(encoding="utf-8")))
    return {p.name: said.get(p.name, "(the runner printed nothing about it)")
            for p in sorted((folder / "logs" / model / category).iterdir()) if not (p / "log.json").exists()}


def probe_idle(folder: Path, browsers: Path, feeds: list[list[str]], rounds: int) -> list[dict[str, Any]]:
    """Where video 0 stands when the runner would grade an agent that does nothing (tests/env/runner_probe.py)."""
    (folder / "probe_feeds.json").write_text(json.dumps(feeds), encoding="utf-8")
    shutil.copy(Path(__file__).with_name("runner_probe.py"), folder / "runner_probe.py")
    done = subprocess.run([str(RUNNER_PYTHON), "runner_probe.py", "probe_feeds.json", str(free_ports(1)),
                           str(rounds)], cwd=folder, env=environment(folder, browsers, {}), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def curate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curation.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})

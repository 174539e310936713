"""Hypothesis over logs folders as people leave them (issue 42): task folders named as release tasks or anything
else (bytes that are not UTF-8, line breaks), each with a good log, none (a crash), garbage, a log.json linked
from inside or outside the logs folder or round a loop, a symlinked task folder, a log whose tool calls hold
a lone surrogate, or a folder or a named pipe called log.json. Whatever comes, no traceback (and no wait on a
pipe), logs read = graded + rejected, graded and crashed exactly as the layout says, every reject with where
and why on one line, and no run left `running`.

Each example gets its own folder (`tempfile.mkdtemp`) with a copy of one small catalog holding the release."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog
from curation.core.errors import InputError
from curation.grade.grade import grade_logs
from tests.conftest import ROOT
from tests.grade.real import EPISODES, record_release, runner_dir
from tests.names import is_utf8

LOGS = {log.parent.name: log for log in EPISODES.rglob("log.json")}  # the release's seven tasks, played
KINDS = ("good", "missing", "garbage", "linked inside", "linked outside", "loop", "folder linked", "surrogate",
         "a folder", "a pipe")
NAMES = st.one_of(st.sampled_from(sorted(LOGS)).map(str.encode),
                  st.sampled_from([b"\xff", b"gui_like_1\xfe", b"a\nb", b"\xe2\x80\xa8", b" ", b"x" * 200]),
                  st.binary(min_size=1, max_size=20).filter(lambda b: b"/" not in b and b"\x00" not in b
                                                            and b not in (b".", b"..", b".store")))


@dataclass
class Layout:
    folders: list[tuple[bytes, str]]  # task folder name, what it holds
    nested: bool  # under a category folder, as the runner writes them


layouts = st.builds(Layout, st.lists(st.tuples(NAMES, st.sampled_from(KINDS)), max_size=8, unique_by=lambda f: f[0]),
                    st.booleans())


def build(root: Path, layout: Layout) -> Path:
    """The logs folder the layout describes, with what its links point at beside it."""
    logs = root / "logs"
    folder = logs / "gui_action" if layout.nested else logs
    (logs / ".store").mkdir(parents=True)
    (root / "elsewhere").mkdir()
    folder.mkdir(exist_ok=True)
    for n, (raw, kind) in enumerate(layout.folders):
        name = os.fsdecode(raw)
        source = LOGS.get(name, LOGS["gui_like_1"]).read_bytes()  # another task's log: not that task's episode
        task = folder / name
        if kind == "folder linked":
            (root / "elsewhere" / str(n)).mkdir()
            (root / "elsewhere" / str(n) / "log.json").write_bytes(source)
            task.symlink_to(root / "elsewhere" / str(n))
            continue
        task.mkdir()
        log = task / "log.json"
        if kind == "good":
            log.write_bytes(source)
        elif kind == "garbage":
            log.write_bytes(bytes(range(n, n + 40)))
        elif kind == "linked inside":
            (logs / ".store" / f"{n}.json").write_bytes(source)
            log.symlink_to(logs / ".store" / f"{n}.json")
        elif kind == "linked outside":
            (root / "elsewhere" / f"{n}.json").write_bytes(source)
            log.symlink_to(root / "elsewhere" / f"{n}.json")
        elif kind == "loop":
            log.symlink_to(log)
        elif kind == "a folder":
            log.mkdir()
        elif kind == "a pipe":  # read, it would wait for a writer for ever
            os.mkfifo(log)
        elif kind == "surrogate":
            data = json.loads(source)
            data["history"].append({"role": "assistant", "content": "", "tool_calls": [{
                "id": "x", "type": "function", "function": {"name": "type", "arguments": '{"text": "\\udfff"}'}}]})
            log.write_text(json.dumps(data), encoding="utf-8")
    return logs


def expected(layout: Layout) -> tuple[int, int, int]:
    """Logs read, graded and crashed, from the layout alone."""
    task = [is_utf8(raw) and raw.decode() in LOGS for raw, _ in layout.folders]
    logs = sum(kind != "missing" for _, kind in layout.folders)
    graded = sum(t and kind in ("good", "linked inside") for t, (_, kind) in zip(task, layout.folders, strict=True))
    crashed = sum(t and kind == "missing" for t, (_, kind) in zip(task, layout.folders, strict=True))
    return logs, graded, crashed


@pytest.fixture(scope="module")
def base_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-grade")
    with Catalog(folder / "base.duckdb") as cat:
        record_release(cat, runner_dir(folder / "v1"))
    return folder / "base.duckdb"


def check_catalog(db: Path, rejected: int) -> None:
    with Catalog(db, read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM runs WHERE status = 'running'") == 0
        rejects = cat.rows("SELECT raw_ref, reason FROM rejects WHERE stage = 'grade'")
    assert len(rejects) == rejected
    for reject in rejects:  # where (the log or folder, on one line) and why
        assert reject["raw_ref"] and "\n" not in reject["raw_ref"], reject
        assert reject["reason"].startswith(reject["raw_ref"] + ": ") and "\n" not in reject["reason"], reject


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts)
def test_grade_reads_every_folder_alone(base_catalog: Path, layout: Layout) -> None:
    root = Path(tempfile.mkdtemp(dir=base_catalog.parent))
    try:
        shutil.copy(base_catalog, root / "c.duckdb")
        logs = build(root, layout)
        read, graded, crashed = expected(layout)
        with Catalog(root / "c.duckdb") as cat:
            if not read and not crashed:
                with pytest.raises(InputError, match="holds no episode logs"):
                    grade_logs(cat, [("m", logs)], "1.0.0", root / "out")
                assert cat.scalar("SELECT status FROM runs WHERE stage = 'grade'") == "failed"
                return
            result = grade_logs(cat, [("m", logs)], "1.0.0", root / "out")
        assert (result["logs"], result["graded"], result["crashed"]) == (read, graded, crashed)
        assert result["logs"] == result["graded"] + result["rejected"]
        check_catalog(root / "c.duckdb", result["rejected"])
        summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
        assert len(summary["rejected"]) == result["rejected"]
        assert not list(root.glob("*.part"))
    finally:
        shutil.rmtree(root)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts)
def test_the_command_line_never_shows_a_traceback(base_catalog: Path, layout: Layout) -> None:
    root = Path(tempfile.mkdtemp(dir=base_catalog.parent))
    try:
        shutil.copy(base_catalog, root / "c.duckdb")
        logs = build(root, layout)
        read, graded, _ = expected(layout)
        done = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(root / "c.duckdb"), "grade",
                               str(logs), "--release", "v1.0.0", "--out", str(root / "out")], cwd=ROOT,
                              capture_output=True, timeout=300)
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
        assert "Traceback" not in err
        assert done.returncode == (0 if graded else 1), err
        if read:
            counts = re.match(r"([\d,]+) episode logs: ([\d,]+) graded, ([\d,]+) rejected;", out)
            assert counts, out
            logs_read, graded_logs, rejected = (int(n.replace(",", "")) for n in counts.groups())
            assert (logs_read, graded_logs) == (read, graded) and logs_read == graded_logs + rejected
            check_catalog(root / "c.duckdb", rejected)
        assert not list(root.glob("*.part"))
    finally:
        shutil.rmtree(root)

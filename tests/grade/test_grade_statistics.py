"""End to end through `curate grade`: four noisy-oracle agents of known skill (tests/grade/agents.py) play a
generated release with two planted defects; the printed SR intervals and pairwise tests order the agents as
their skill does, the per-task table flags the planted defects, grade.html draws the intervals, the Polars API
gives the same intervals, pairs and table, and a Lite subset chosen from the catalog's evidence estimates each
agent's SR within the error it states."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl

import curation.api
from curation.core.catalog import Catalog
from curation.grade.evidence import release_evidence
from curation.grade.grade import grade_logs
from curation.grade.lite import choose_lite
from tests.conftest import ROOT
from tests.grade.agents import UNMEETABLE, WRONG_KEY, generate_release, play
from tests.grade.real import episodes_copy, record_release
from tests.skips import V1, requires_v1

RANDOM = Path(__file__).parents[1] / "fixtures" / "runner-episodes-random"
ERRORS = {"weak": 0.7, "fair": 0.4, "good": 0.15, "strong": 0.02}  # each agent's error per step
LINE = re.compile(r"^\s+(\w+) all: SR ([\d.]+)% \[([\d.]+)%, ([\d.]+)%\]", re.M)
PAIR = re.compile(r"^\s+(\w+) − (\w+): \+([\d.]+)% .* p = \S+ \(exact McNemar; Holm (\S+)\)$", re.M)


def test_curate_grade_orders_four_agents_and_flags_the_planted_defects(catalog, tmp_path):
    release = generate_release(tmp_path / "release", labels=60, platform=30, seed=3)
    record_release(catalog, release.folder)
    truth = {name: release.expected_sr(error) for name, error in ERRORS.items()}
    for n, (name, error) in enumerate(ERRORS.items()):
        play(release, tmp_path / "logs" / name, error, seed=100 + n)
    path = catalog.path
    catalog.close()
    config = tmp_path / "curation.toml"
    config.write_text(f'[reports]\ndir = "{tmp_path / "reports"}"\n', encoding="utf-8")
    command = [sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config), "grade",
               *(str(tmp_path / "logs" / name) for name in ERRORS), "--release", "v1.0.0", "--out",
               str(tmp_path / "out"), *(arg for name in ERRORS for arg in ("--model", name))]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = {m: (float(sr) / 100, float(lo) / 100, float(hi) / 100) for m, sr, lo, hi in LINE.findall(done.stdout)}
    assert set(printed) == set(ERRORS), done.stdout
    by_skill = sorted(ERRORS, key=truth.__getitem__)
    assert sorted(printed, key=lambda m: printed[m][0]) == by_skill
    # each a 95% interval: all four covering is the likely outcome, three the least a sound method gives here
    assert sum(lo <= truth[m] <= hi for m, (_, lo, hi) in printed.items()) >= 3, (printed, truth)
    pairs = PAIR.findall(done.stdout)
    assert len(pairs) == 6
    for better, worse, _, holm in pairs:  # printed with the higher SR first: it is the more skilled agent
        assert truth[better] > truth[worse] and float(holm) < 0.05, (better, worse, holm)

    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    flagged = {r["task_id"]: set(r["flags"]) for r in summary["tasks"]["flagged"]}
    assert {"suspect_key", "unsolved"} <= flagged.pop(WRONG_KEY)
    assert {"common_unmet_check", "unsolved"} <= flagged.pop(UNMEETABLE)
    assert len(flagged) <= 1, flagged  # the good tasks: hardly any flag
    assert summary["tasks"]["irt"] == "1PL"  # four models: too few for a slope per task
    unmeetable = next(r for r in summary["tasks"]["flagged"] if r["task_id"] == UNMEETABLE)
    assert unmeetable["unmet_check"] == "eval_like 3" and unmeetable["perfect_proof"] == "passes"

    page = (tmp_path / "out" / "grade.html").read_text(encoding="utf-8")
    assert "Scores with 95% intervals" in page and page.count('stroke-width="2"') >= 4 * 4 + 6
    assert WRONG_KEY in page and UNMEETABLE in page

    reader = curation.api.open(path)
    intervals = reader.grade_intervals("1.0.0")
    assert intervals.to_dicts() == summary["intervals"]  # the catalog's episodes give what the command printed
    assert reader.grade_pairs("1.0.0").height == 6
    table = reader.task_table("1.0.0")
    assert table.height == len(release.tasks)
    assert table.filter(pl.col("flags").list.contains("suspect_key"))["task_id"].to_list() == [WRONG_KEY]

    with Catalog(path, read_only=True) as graded:
        evidence = release_evidence(graded, "1.0.0")
    choice = choose_lite(evidence, 30, seed=0)
    assert len(choice.task_ids) == 30 and choice.estimated_error is not None
    for model, (sr, _, _) in printed.items():
        results = {e.task_id: (float(e.solved), 1.0) for e in evidence.episodes if e.model == model}
        estimate = choice.estimate({t: results[t] for t in choice.task_ids})
        print(model, round(sr, 3), round(estimate, 3), round(choice.estimated_error, 3))
        assert abs(estimate - sr) <= choice.estimated_error + 0.005, (model, sr, estimate, choice.method)


@requires_v1
def test_the_do_nothing_episodes_the_public_runner_recorded_flag_the_tasks_they_pass(catalog, tmp_path):
    """The runner's own episodes of a do-nothing agent (tests/fixtures/runner-episodes-random/Idle) pass
    gui_comment_19-21 and fail the other three they played: exactly those three are flagged `idle_passes`, and
    the do-nothing proof agrees on them."""
    record_release(catalog, V1, "1.0.0")
    logs = episodes_copy(tmp_path / "logs", roots=(RANDOM / "Idle",))
    result = grade_logs(catalog, [("Idle", logs)], "1.0.0", tmp_path / "out", include_defective=True)
    rows = {r["task_id"]: r for r in result.rows}
    assert all(r["acting_calls"] == 0 for r in rows.values()) and len(rows) == 6
    flagged = {r["task_id"]: r for r in result.summary["tasks"]["flagged"] if "idle_passes" in r["flags"]}
    assert set(flagged) == {t for t, r in rows.items() if r["sr"] == 1.0} == {"gui_comment_19", "gui_comment_20",
                                                                              "gui_comment_21"}
    assert {r["idle_proof"] for r in flagged.values()} == {"passes"}
    table = pl.read_parquet(tmp_path / "out" / "tasks.parquet")
    assert set(table["task_id"]) == set(rows) and table.filter(pl.col("idle_proof") == "passes").height == 3

"""What `curate grade` adds to its summary from the statistics: each model's scores with intervals and the pairwise
tests (`stats.py`) over the episodes it graded, and the per-task table with its flags (`task_table.py`) over every
graded episode of the release in the catalog (this run's and other models' graded before), written beside the
summary as tasks.parquet and tasks.csv."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from curation.grade.evidence import evidence_of, outcomes_of
from curation.grade.stats import DRAWS, LEVEL, model_scores, pair_tests
from curation.grade.task_table import TaskAnalysis, TaskFacts, TaskRow, analyse_tasks

METHODS = ("SR with one run per task: Wilson's score interval (each task one Bernoulli outcome); with several runs "
           "(`model#run`), NS and WR: percentile interval of a task-level bootstrap (a task's runs move together). "
           "Pairs: SR difference on common tasks, paired-bootstrap interval; p-value by the exact McNemar test "
           "with one run per task, else by the paired bootstrap; Holm-adjusted beside it.")
TASK_FILES = ("tasks.parquet", "tasks.csv")


def scores_summary(rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Intervals and pairwise tests of the graded rows, as summary.json holds them."""
    outcomes = outcomes_of(rows)
    return {"stats": {"level": LEVEL, "draws": DRAWS, "seed": seed, "methods": METHODS},
            "intervals": [asdict(i) for i in model_scores(outcomes, seed)],
            "pairs": [asdict(p) for p in pair_tests(outcomes, seed)]}


def task_analysis(rows: list[dict[str, Any]], facts: dict[str, TaskFacts]) -> TaskAnalysis:
    return analyse_tasks(evidence_of(rows, facts))


# derived from TaskRow's fields (a field of a new type fails here, at import, naming it)
_ARROW = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "list[str]": pa.list_(pa.string())}
TASK_SCHEMA = pa.schema([(f.name, _ARROW[str(f.type).removesuffix(" | None")]) for f in fields(TaskRow)])


def write_task_table(analysis: TaskAnalysis, out: Path) -> None:
    table = pa.Table.from_pylist([asdict(r) for r in analysis.rows], schema=TASK_SCHEMA)
    pq.write_table(table, out / TASK_FILES[0])
    flat = table.drop_columns(["flags"]).append_column(
        "flags", pa.array([" ".join(r.flags) for r in analysis.rows], pa.string()))
    pacsv.write_csv(flat, out / TASK_FILES[1])

"""The stage runner: run rows, transactions, failures, interruptions."""

from __future__ import annotations

import json

import pytest

from curation.core.catalog import Catalog
from curation.core.errors import CurationError
from curation.core.stage import Stage, StageRun


def _writes_then_raises(run: StageRun, error: BaseException | None) -> dict[str, int]:
    run.params["answer"] = 42
    run.db.insert("videos", {"video_id": "T/1", "source": "T", "native_id": "1"})
    run.counts["written"] = 1
    if error is not None:
        raise error
    return run.counts


def _batches(run: StageRun, fail_after: int) -> None:
    for i in range(3):
        if i == fail_after:
            raise CurationError(f"batch {i} is bad")
        with run.db.transaction():
            run.db.insert("videos", {"video_id": f"T/{i}", "source": "T", "native_id": str(i)})


ONE = Stage("toy", "curate toy", "a stage for the runner's tests", ("videos",), ("videos",), _writes_then_raises)
BATCHED = Stage("toy-batched", "curate toy-batched", "batches", ("videos",), ("videos",), _batches, batched=True)


def _runs(cat: Catalog) -> list[dict]:
    return cat.rows("SELECT stage, status, params, counts, error, finished_at FROM runs ORDER BY started_at")


def test_a_run_that_succeeds_is_ok_with_its_params_and_counts(catalog):
    assert ONE(catalog, None) == {"written": 1}
    (run,) = _runs(catalog)
    assert run["status"] == "ok" and run["finished_at"] is not None and run["error"] is None
    assert json.loads(run["params"]) == {"answer": 42} and json.loads(run["counts"]) == {"written": 1}


def test_a_run_that_raises_is_failed_with_the_error_and_writes_nothing(catalog):
    with pytest.raises(CurationError, match="the corpus is on fire"):
        ONE(catalog, CurationError("the corpus is on fire"))
    (run,) = _runs(catalog)
    assert run["status"] == "failed" and "the corpus is on fire" in run["error"]
    assert catalog.scalar("SELECT count(*) FROM videos") == 0  # one transaction: rolled back
    with pytest.raises(ZeroDivisionError):  # a bug is recorded too, and still raised as itself
        ONE(catalog, ZeroDivisionError("division by zero"))
    assert _runs(catalog)[-1]["status"] == "failed" and "ZeroDivisionError" in _runs(catalog)[-1]["error"]


def test_a_batched_run_keeps_its_committed_batches_when_it_fails(catalog):
    with pytest.raises(CurationError):
        BATCHED(catalog, 2)
    assert catalog.scalar("SELECT count(*) FROM videos") == 2
    assert _runs(catalog)[-1]["status"] == "failed"


def test_ctrl_c_is_interrupted_and_a_killed_run_is_relabelled_by_the_next(catalog):
    with pytest.raises(KeyboardInterrupt):
        ONE(catalog, KeyboardInterrupt())
    assert _runs(catalog)[-1]["status"] == "interrupted"
    # A process killed outright leaves its row running; the next run of the stage says what it was.
    catalog.insert("runs", {"run_id": "toy-killed", "stage": "toy", "status": "running", "params": "{}",
                            "started_at": "2026-01-01"})
    ONE(catalog, None)
    assert catalog.scalar("SELECT status FROM runs WHERE run_id = 'toy-killed'") == "interrupted"


def test_a_dry_run_writes_no_run_row(catalog):
    def count_only(run: StageRun) -> str:
        return "dry" if run.dry_run else "wet"

    probe = Stage("toy-dry", "curate toy-dry", "dry", (), (), count_only)
    assert probe.dry(catalog) == "dry" and probe(None) == "dry"
    assert catalog.scalar("SELECT count(*) FROM runs") == 0
    assert probe(catalog) == "wet" and catalog.scalar("SELECT count(*) FROM runs") == 1


def test_check_refuses_arguments_before_any_run_row(catalog):
    def refuse(value: int) -> None:
        if value < 0:
            raise CurationError("value must not be negative")

    checked = Stage("toy-checked", "curate toy-checked", "checked", (), (), lambda run, value: value, check=refuse)
    with pytest.raises(CurationError, match="negative"):
        checked(catalog, -1)
    assert catalog.scalar("SELECT count(*) FROM runs") == 0


def test_a_bug_keeps_its_traceback_in_the_run_row_and_says_where(catalog):
    with pytest.raises(RuntimeError, match="injected") as raised:
        ONE(catalog, RuntimeError("injected"))
    run = catalog.rows("SELECT run_id, status, error, traceback FROM runs")[0]
    assert run["status"] == "failed" and run["error"] == "RuntimeError: injected"
    # the traceback names the line that raised, as Python printed it
    assert run["traceback"].startswith("Traceback (most recent call last):")
    assert "in _writes_then_raises" in run["traceback"] and "raise error" in run["traceback"]
    assert run["traceback"].rstrip().endswith("RuntimeError: injected")
    # the exception goes on as itself, with a note of the run that kept it
    assert type(raised.value) is RuntimeError
    assert [n for n in raised.value.__notes__ if run["run_id"] in n and str(catalog.path) in n]


def test_a_stage_inside_another_leaves_the_record_to_the_outer_run(catalog):
    def outer(run: StageRun) -> None:
        ONE(run.db, KeyError("inner"))

    with pytest.raises(KeyError) as raised:
        Stage("toy-outer", "curate toy-outer", "calls toy", (), ("videos",), outer)(catalog)
    runs = catalog.rows("SELECT stage, status, error, traceback FROM runs")
    assert [(r["stage"], r["status"]) for r in runs] == [("toy-outer", "failed")]  # the inner row rolled back
    assert "KeyError: 'inner'" in runs[0]["traceback"] and "in outer" in runs[0]["traceback"]
    assert len(raised.value.__notes__) == 1


def test_a_project_error_keeps_its_traceback_too_and_its_message_unchanged(catalog):
    with pytest.raises(CurationError) as raised:
        ONE(catalog, CurationError("feed-1 is not in the catalog"))
    assert not getattr(raised.value, "__notes__", None)  # the CLI prints it as one line, as it was
    run = catalog.rows("SELECT error, traceback FROM runs")[0]
    assert run["error"] == "CurationError: feed-1 is not in the catalog"
    assert "in _writes_then_raises" in run["traceback"]


def test_a_stage_keeps_its_work_functions_signature_and_return_type():
    import inspect

    from curation.corpus.feeds import build_feed_set as build_feeds

    work = inspect.signature(build_feeds.work)
    called = inspect.signature(build_feeds)
    assert list(called.parameters)[0] == "catalog"
    assert list(called.parameters)[1:] == list(work.parameters)[1:] and list(work.parameters)[0] == "run"
    assert called.return_annotation == work.return_annotation != inspect.Signature.empty
    assert build_feeds.__doc__ == build_feeds.work.__doc__


def test_reads_and_writes_name_tables_and_files_go_apart():
    from curation.core.stage import stage

    with pytest.raises(ValueError, match="name catalog tables, not \\['report file'\\]"):
        stage("probe-prose", command="x", summary="x", reads=("videos",), writes=("report file",))(lambda run: None)
    with pytest.raises(ValueError, match="starts with 'in: ' or 'out: '"):
        stage("probe-files", command="x", summary="x", reads=(), writes=(), files=("report",))(lambda run: None)


def test_the_pipeline_order_and_the_declared_stages_are_one_registry():
    from curation.core.stage import STAGES, stage
    from curation.pipeline import PIPELINE, all_stages

    assert [s.name for s in all_stages()] == list(PIPELINE)
    stage("probe-unplaced", command="x", summary="x", reads=(), writes=())(lambda run: None)
    try:
        with pytest.raises(RuntimeError, match="not placed \\['probe-unplaced'\\]"):
            all_stages()
    finally:
        del STAGES["probe-unplaced"]
    assert [s.name for s in all_stages()] == list(PIPELINE)

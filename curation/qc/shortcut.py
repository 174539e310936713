"""`curate qc shortcut`: discard tasks that metadata alone can solve.

Each task is shown to every configured inspector as the degraded view of its feed
(titles, hashtags, author bios), `samples` times each. Model calls are cached in the
catalog by (endpoint, model, prompt sha256, sample, temperature), written as they
complete: a re-run sends nothing, a killed run resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.config import ShortcutConfig, as_dict
from curation.core.progress import note
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import VisibleVideo, load_visible
from curation.qc.inspectors import LexicalInspector, OpenAIInspector, RetryableError, make_inspectors
from curation.qc.prompts import (
    CANNOT_ANSWER,
    UNPARSED,
    Prompt,
    build_prompt,
    degraded_view,
    parse_label_answer,
    parse_platform_answer,
    platform_truth,
)
from curation.qc.shortcut_report import write_report
from curation.tasks.lifecycle import move
from curation.tasks.runner_format import catalog_task_rows
from curation.tasks.taxonomy import load_taxonomy


@dataclass
class TaskView:
    task_id: str
    version: int
    tier: str
    subcategory: str
    eval_type: str
    question: str
    options: dict[str, str]
    eval_config: list[dict[str, Any]]
    videos: list[VisibleVideo]
    prompt: Prompt | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)


JUDGED_STATES = ("valid", "shortcut_passed", "shortcut_discarded")  # later states belong to review


def load_views(catalog: Catalog, language: str, platform_tiers: list[str], style: str = "paper") -> list[TaskView]:
    rows = [r for r in catalog_task_rows(catalog) if r["state"] in JUDGED_STATES
            and not (r["eval_type"] == "platform" and r["tier"] not in platform_tiers)]
    visible = load_visible(catalog, sorted({v for r in rows for v in r["video_feed"]}))
    views = []
    for row in rows:
        view = TaskView(row["task_id"], row["version"], row["tier"], row["subcategory"], row["eval_type"],
                        row["instruction"] or "", json.loads(row["options"]) if row["options"] else {},
                        json.loads(row["eval_config"]) if row["eval_config"] else [],
                        [visible[v] for v in row["video_feed"]])
        view.prompt = build_prompt(row["eval_type"], language, view.videos, view.question, view.options, style)
        views.append(view)
    return views


def _cache_key(inspector: OpenAIInspector, prompt: Prompt, sample: int) -> tuple[str, str, str, int, float]:
    return (inspector.endpoint, inspector.model, prompt.sha256, sample, inspector.temperature)


async def _ask_all(catalog: Catalog, run_id: str, jobs: list[tuple[OpenAIInspector, Prompt, int]],
                   concurrency: int) -> dict[str, int]:
    semaphore = asyncio.Semaphore(concurrency)
    inspectors = {i.name: i for i, _, _ in jobs}
    clients = {name: inspector.client() for name, inspector in inspectors.items()}
    stats = {"requests": 0, "failed": 0}

    async def one(inspector: OpenAIInspector, prompt: Prompt, sample: int) -> tuple[Any, ...]:
        async with semaphore:
            stats["requests"] += 1
            try:
                text = await inspector.complete(clients[inspector.name], prompt.text, sample)
            except RetryableError as exc:
                return inspector, prompt, sample, None, str(exc)
            except Exception as exc:  # a 4xx or a protocol error: the task is left undecided
                return inspector, prompt, sample, None, f"{type(exc).__name__}: {str(exc)[:200]}"
            return inspector, prompt, sample, text, None

    # Answers are written in small batches as they arrive (not one commit per answer,
    # which would stall the event loop): a killed run loses at most one batch.
    pending: list[list[Any]] = []

    def flush() -> None:
        if pending:
            columns = ("endpoint", "model", "prompt_sha256", "sample", "temperature", "response", "run_id",
                       "created_at")
            table = pa.table({c: [row[i] for row in pending] for i, c in enumerate(columns)})
            with catalog.staged(answered=table):
                catalog.insert_staged("llm_calls", "answered", columns)
            pending.clear()

    last_flush = time.monotonic()
    for done in asyncio.as_completed([one(*job) for job in jobs]):
        inspector, prompt, sample, text, error = await done
        if error is not None:
            stats["failed"] += 1
            note(f"shortcut: {error}")
            continue
        pending.append([*_cache_key(inspector, prompt, sample), text, run_id, now()])
        if len(pending) >= 64 or time.monotonic() - last_flush > 1.0:
            flush()
            last_flush = time.monotonic()
    flush()
    for client in clients.values():
        await client.close()
    return stats


def _correct(view: TaskView, parsed: Any, robust_discards: bool) -> bool:
    if parsed in (UNPARSED, CANNOT_ANSWER):
        return False
    if view.eval_type == "label":
        truth = view.eval_config[0]["answer"] if view.eval_config else None
        sub = load_taxonomy().subcategories.get(view.subcategory)
        if sub and sub.requires_cannot_determine and not robust_discards:
            return False  # "cannot be determined" is also what knowing nothing looks like
        return parsed == truth
    return parsed == platform_truth(view.eval_config)


def decide(view: TaskView, rule: str, max_correct: int) -> str:
    if rule == "paper":
        first = view.answers[0]
        return "shortcut_discarded" if first["correct"] else "shortcut_passed"
    if rule == "mmstar":
        solved = sum(a["correct"] for a in view.answers)
        return "shortcut_passed" if solved <= max_correct else "shortcut_discarded"
    raise ValueError(f"unknown decision rule {rule!r}: paper or mmstar")


def verdict_config(config: ShortcutConfig, inspectors: list[LexicalInspector | OpenAIInspector]) -> dict[str, Any]:
    """Everything a verdict depends on besides the task: a verdict is reused only under the same."""
    return {"rule": config.rule, "max_correct": config.max_correct, "language": config.language,
            "template": config.template, "robust_cannot_determine_discards": config.robust_cannot_determine_discards,
            "inspectors": [{"name": i.name, "endpoint": i.endpoint, "model": i.model, "temperature": i.temperature,
                            "samples": i.samples, **({"margin": i.margin, "minimum": i.minimum}
                                                     if isinstance(i, LexicalInspector) else {})}
                           for i in inspectors]}


@dataclass
class ShortcutRun(RunResult):
    """What one run of the filter judged, for its report."""

    config: dict[str, Any]
    config_sha256: str
    judged: list[tuple[str, int]]


@stage("qc-shortcut", command="curate qc shortcut", batched=True,
       reads=("tasks", "feeds", "videos", "llm_calls", "shortcut_verdicts", "task_transitions"),
       writes=("llm_calls", "shortcut_verdicts", "task_transitions", "report file"),
       summary="discard tasks that titles, hashtags and bios give away; model answers cached")
def filter_shortcuts(run: StageRun, config: ShortcutConfig, report: Path | None = None) -> ShortcutRun:
    """Judge every valid task; with `report`, write this run's page there (its path joins the run's params)."""
    result = _filter_shortcuts(run, config)
    if report is not None:
        run.params.update(report=str(report))
        write_report(run.db, report, result)
    return result


def _filter_shortcuts(run: StageRun, config: ShortcutConfig) -> ShortcutRun:
    catalog = run.db
    inspectors = make_inspectors(config.inspectors)
    decisive = verdict_config(config, inspectors)
    digest = hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()[:16]
    note("shortcut filter: " + ", ".join(f"{i.name} ({i.model} at {i.endpoint}, {i.samples} sample"
                                         f"{'s' if i.samples > 1 else ''})" for i in inspectors)
         + f"; rule {config.rule}, {config.template} prompt ({config.language}), configuration {digest}")
    language, rule, max_correct = config.language, config.rule, config.max_correct
    robust_discards = config.robust_cannot_determine_discards
    views = load_views(catalog, language, config.platform_tiers, config.template)
    run.params.update({k: v for k, v in as_dict(config).items() if k != "inspectors"}, config_sha256=digest,
                      inspectors=[{**i, "api_key_env": spec.api_key_env or None}
                                  for i, spec in zip(decisive["inspectors"], config.inspectors, strict=True)])
    cached = {k[:5]: k[5] for k in catalog.con.execute(
        "SELECT endpoint, model, prompt_sha256, sample, temperature, response FROM llm_calls").fetchall()}
    # Two tasks can share a prompt (same feed metadata, same question): ask once.
    jobs = list({_cache_key(i, v.prompt, s): (i, v.prompt, s) for v in views for i in inspectors
                 if isinstance(i, OpenAIInspector) for s in range(i.samples)
                 if v.prompt and _cache_key(i, v.prompt, s) not in cached}.values())
    stats = asyncio.run(_ask_all(catalog, str(run.run_id), jobs, config.concurrency)) if jobs else \
        {"requests": 0, "failed": 0}
    cached = {k[:5]: k[5] for k in catalog.con.execute(
        "SELECT endpoint, model, prompt_sha256, sample, temperature, response FROM llm_calls").fetchall()}
    counts = run.counts
    counts.update(tasks=len(views), passed=0, discarded=0, undecided=0, **stats, config_sha256=digest)
    verdicts: list[tuple[str, int, str, str]] = []
    taxonomy = load_taxonomy()
    for view in views:
        assert view.prompt is not None
        undecided = False
        for inspector in inspectors:
            for sample in range(inspector.samples):
                if isinstance(inspector, LexicalInspector):
                    if view.eval_type != "label":
                        raw, parsed = None, CANNOT_ANSWER
                    else:
                        skip = {k for k, t in view.options.items() if taxonomy.is_cannot_determine(t)}
                        raw = parsed = inspector.answer_label(degraded_view(view.videos, language), view.options,
                                                              skip)
                else:
                    raw = cached.get(_cache_key(inspector, view.prompt, sample))
                    if raw is None:
                        undecided = True
                        continue
                    parsed = (parse_label_answer(raw, sorted(view.options)) if view.eval_type == "label"
                              else parse_platform_answer(raw))
                view.answers.append({"inspector": inspector.name, "sample": sample, "raw": raw,
                                     "parsed": parsed if isinstance(parsed, str) else json.dumps(parsed),
                                     "correct": _correct(view, parsed, robust_discards)})
        if undecided:
            counts["undecided"] += 1
            continue
        verdict = decide(view, rule, max_correct)
        counts["passed" if verdict == "shortcut_passed" else "discarded"] += 1
        verdicts.append((view.task_id, view.version, verdict, json.dumps(view.answers, ensure_ascii=False)))
    table = pa.table({"task_id": [v[0] for v in verdicts],
                      "task_version": pa.array([v[1] for v in verdicts], pa.int32()),
                      "verdict": [v[2] for v in verdicts], "answers": [v[3] for v in verdicts]})
    with catalog.staged(verdicts=table), catalog.transaction():
        # Same task version, same configuration, same outcome: the earlier row stands (a re-run changes nothing).
        catalog.con.execute("""
            DELETE FROM shortcut_verdicts s USING verdicts v
            WHERE s.task_id = v.task_id AND s.task_version = v.task_version AND s.config_sha256 = ?
              AND (s.verdict IS DISTINCT FROM v.verdict OR s.answers::VARCHAR IS DISTINCT FROM v.answers)""",
                            [digest])
        catalog.con.execute("""
            INSERT INTO shortcut_verdicts (task_id, task_version, config_sha256, verdict, rule, answers, run_id,
                                           created_at)
            SELECT task_id, task_version, ?, verdict, ?, answers, ?, ? FROM verdicts v WHERE NOT EXISTS (
                SELECT 1 FROM shortcut_verdicts s WHERE s.task_id = v.task_id
                AND s.task_version = v.task_version AND s.config_sha256 = ?)""",
                            [digest, rule, run.run_id, now(), digest])
        for task_id, version, verdict, answers in verdicts:
            solved = [f"{a['inspector']} #{a['sample']}: {a['parsed']}" for a in json.loads(answers) if a["correct"]]
            move(run, task_id, version, verdict, who=f"qc-shortcut {digest}",
                 reason=("solved from metadata by " + ", ".join(solved)) if solved else "not solved from metadata")
        # Platform tasks of tiers the filter does not judge (pure GUI actions) go on to review.
        counts["not_filtered"] = 0
        for row in catalog.rows("SELECT t.task_id, t.version, t.tier FROM latest_tasks t JOIN task_states s "
                                "ON s.task_id = t.task_id AND s.version = t.version WHERE s.state = 'valid' "
                                "AND t.eval_type = 'platform' AND NOT list_contains(?, t.tier)",
                                [list(config.platform_tiers)]):
            move(run, row["task_id"], row["version"], "shortcut_passed", who=f"qc-shortcut {digest}",
                 reason=f"not filtered: {row['tier']} platform tasks are outside qc.shortcut.platform_tiers")
            counts["not_filtered"] += 1
    return ShortcutRun(counts, decisive, digest, [(v[0], v[1]) for v in verdicts])

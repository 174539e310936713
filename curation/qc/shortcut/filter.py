"""`curate qc shortcut`: discard tasks that metadata alone can solve.

Each task is shown to every configured inspector as the degraded view of its feed
(titles, hashtags, author bios), `samples` times each. Model calls are cached in the
catalog by (endpoint, model, prompt sha256, sample, temperature), written as they
complete: a re-run sends nothing, a killed run resumes where it stopped.

A task version's verdict is decided once, by the configuration of record (`record.py`);
a run with another configuration keeps its verdicts as evidence and moves no task. A run whose
inspector answers mostly unparseable text fails before writing anything.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.config import ShortcutConfig, as_dict
from curation.core.errors import CurationError
from curation.core.progress import note
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import VisibleVideo, load_visible
from curation.qc.shortcut.ask import ask_all, cache_key
from curation.qc.shortcut.inspectors import LexicalInspector, OpenAIInspector, make_inspectors
from curation.qc.shortcut.prompts import (
    CANNOT_ANSWER,
    PARSER_VERSION,
    UNPARSED,
    Prompt,
    build_prompt,
    degraded_view,
    parse_label_answer,
    parse_platform_answer,
    platform_truth,
    prompt_hashes,
)
from curation.qc.shortcut.record import (
    AdoptionPlan,
    Record,
    adoption_plan,
    carried_verdicts,
    config_digest,
    current_record,
    difference_note,
    latest_decisions,
    record_decisions,
    remember_config,
    set_record,
    verdicts_of_record,
    verdicts_under,
)
from curation.qc.shortcut.report import write_report
from curation.tasks.lifecycle import Move, move_many
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
    state: str = "valid"  # its life-cycle state when loaded


JUDGED_STATES = ("valid", "shortcut_passed", "shortcut_discarded")  # later states belong to review


def plan_adoption(catalog: Catalog, config: ShortcutConfig) -> AdoptionPlan:
    """What adopting `config` as the configuration of record would re-decide (nothing is written)."""
    decisive, digest = configuration(config)
    rows = in_scope(catalog, config.platform_tiers)
    scope = [(r["task_id"], r["version"], r["state"]) for r in rows]
    carried = carried_verdicts(catalog, current_record(catalog), digest, decisive,
                               {(r["task_id"], r["version"]): r["eval_type"] for r in rows})
    return adoption_plan(catalog, digest, decisive, scope, carried)


def in_scope(catalog: Catalog, platform_tiers: list[str]) -> list[dict[str, Any]]:
    """The latest task versions the filter judges: not yet past it, and not GUI tiers it leaves alone."""
    return [r for r in catalog_task_rows(catalog) if r["state"] in JUDGED_STATES
            and not (r["eval_type"] == "platform" and r["tier"] not in platform_tiers)]


def load_views(catalog: Catalog, language: str, platform_tiers: list[str], style: str = "paper") -> list[TaskView]:
    rows = in_scope(catalog, platform_tiers)
    visible = load_visible(catalog, sorted({v for r in rows for v in r["video_feed"]}))
    views = []
    for row in rows:
        view = TaskView(row["task_id"], row["version"], row["tier"], row["subcategory"], row["eval_type"],
                        row["instruction"] or "", json.loads(row["options"]) if row["options"] else {},
                        json.loads(row["eval_config"]) if row["eval_config"] else [],
                        [visible[v] for v in row["video_feed"]], state=row["state"])
        view.prompt = build_prompt(row["eval_type"], language, view.videos, view.question, view.options, style)
        views.append(view)
    return views


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
    """Everything a verdict depends on besides the task: a verdict is reused only under the same. The
    platform tiers are part of it: they decide which platform tasks are judged and which pass unjudged. So are
    the prompts' texts (their hashes) and the parser's version: an edited prompt is another configuration."""
    return {"rule": config.rule, "max_correct": config.max_correct, "language": config.language,
            "template": config.template, "robust_cannot_determine_discards": config.robust_cannot_determine_discards,
            "prompts": prompt_hashes(config.language, config.template), "parser": PARSER_VERSION,
            "platform_tiers": sorted(config.platform_tiers),
            "inspectors": [{"name": i.name, "endpoint": i.endpoint, "model": i.model, "temperature": i.temperature,
                            "samples": i.samples, **({"margin": i.margin, "minimum": i.minimum}
                                                     if isinstance(i, LexicalInspector) else {})}
                           for i in inspectors]}


def configuration(config: ShortcutConfig) -> tuple[dict[str, Any], str]:
    """The decisive settings of a configuration and their hash (no API key needed)."""
    decisive = verdict_config(config, make_inspectors(config.inspectors, with_keys=False))
    return decisive, config_digest(decisive)


@dataclass
class ShortcutRun(RunResult):
    """What one run of the filter judged, for its report: every task version in scope with a verdict
    under this run's configuration (judged now or before), and what moved on them."""

    config: dict[str, Any]
    config_sha256: str
    judged: list[tuple[str, int]]
    of_record: bool = True
    record_before: Record | None = None
    moved: list[tuple[str, int, str, str]] = field(default_factory=list)  # task, version, from, to
    differ: list[tuple[str, int, str, str]] = field(default_factory=list)  # task, version, of record, this run's


class UnusableInspectorError(CurationError):
    """An inspector whose answers are mostly unparseable: its run writes no verdict and moves no task."""

    def __init__(self, message: str, result: ShortcutRun) -> None:
        super().__init__(message)
        self.result = result


def inspector_stats(answer_lists: list[list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    """Per inspector: answers, and how many decided (named an option or actions), abstained, were unparsed."""
    stats: dict[str, dict[str, int]] = {}
    for answers in answer_lists:
        for answer in answers:
            row = stats.setdefault(answer["inspector"], {"answers": 0, "decided": 0, "abstained": 0, "unparsed": 0})
            row["answers"] += 1
            row[{UNPARSED: "unparsed", CANNOT_ANSWER: "abstained"}.get(answer["parsed"], "decided")] += 1
    return stats


def _answers(view: TaskView, inspectors: list[LexicalInspector | OpenAIInspector], cached: dict[Any, str],
             language: str, robust_discards: bool) -> list[dict[str, Any]] | None:
    """Every inspector's answers to one task; None while a model answer is missing (undecided)."""
    taxonomy = load_taxonomy()
    assert view.prompt is not None
    answers = []
    raw: str | None
    parsed: str | dict[str, Any]  # a letter or a verdict word; a platform answer's choices
    for inspector in inspectors:
        for sample in range(inspector.samples):
            if isinstance(inspector, LexicalInspector):
                if view.eval_type != "label":
                    raw, parsed = None, CANNOT_ANSWER
                else:
                    skip = {k for k, t in view.options.items() if taxonomy.is_cannot_determine(t)}
                    raw = parsed = inspector.answer_label(degraded_view(view.videos, language), view.options, skip)
            else:
                raw = cached.get(cache_key(inspector, view.prompt, sample))
                if raw is None:
                    return None
                parsed = (parse_label_answer(raw, sorted(view.options)) if view.eval_type == "label"
                          else parse_platform_answer(raw))
            answers.append({"inspector": inspector.name, "sample": sample, "raw": raw,
                            "parsed": parsed if isinstance(parsed, str) else json.dumps(parsed),
                            "correct": _correct(view, parsed, robust_discards)})
    return answers


def _why(answers: list[dict[str, Any]]) -> str:
    solved = [f"{a['inspector']} #{a['sample']}: {a['parsed']}" for a in answers if a["correct"]]
    return ("solved from metadata by " + ", ".join(solved)) if solved else "not solved from metadata"


@stage("qc-shortcut", command="curate qc shortcut", batched=True,
       reads=("tasks", "feeds", "videos", "llm_calls", "shortcut_verdicts", "task_transitions", "shortcut_configs",
              "shortcut_config_record", "shortcut_decisions"),
       writes=("llm_calls", "shortcut_verdicts", "task_transitions", "shortcut_configs", "shortcut_config_record",
               "shortcut_decisions"),
       summary="discard tasks that titles, hashtags and bios give away, under the configuration of record; "
               "other configurations' verdicts are kept as evidence; model answers cached", files=("out: report file",))
def filter_shortcuts(run: StageRun, config: ShortcutConfig, report: Path | None = None,
                     source: str = "a configuration given in Python", adopt: bool = False) -> ShortcutRun:
    """Judge every task version in scope; with `report`, write this run's page there (its path joins the run's
    params). `source` names where `config` came from (kept with it); `adopt` makes it the configuration of record."""
    result = _filter_shortcuts(run, config, source, adopt)
    if report is not None:
        run.params.update(report=str(report))
        write_report(run.db, report, result)
    return result


def _filter_shortcuts(run: StageRun, config: ShortcutConfig, source: str, adopt: bool) -> ShortcutRun:
    catalog = run.db
    inspectors = make_inspectors(config.inspectors)
    decisive = verdict_config(config, inspectors)
    digest = config_digest(decisive)
    record = current_record(catalog)
    of_record = adopt or record is None or record.config_sha256 == digest
    note("shortcut filter: " + ", ".join(f"{i.name} ({i.model} at {i.endpoint}, {i.samples} sample"
                                         f"{'s' if i.samples > 1 else ''})" for i in inspectors)
         + f"; rule {config.rule}, {config.template} prompt ({config.language}), configuration {digest} from {source}")
    if record is None:
        note(f"shortcut filter: no configuration of record yet; this run makes {digest} the one of record "
             "if it decides a task")
    elif adopt and record.config_sha256 != digest:
        note(f"shortcut filter: adopting {digest} as the configuration of record in place of {record.config_sha256}")
    elif not of_record:
        note(f"shortcut filter: {difference_note(record, digest, decisive, source)}")
    views = load_views(catalog, config.language, config.platform_tiers, config.template)
    run.params.update({k: v for k, v in as_dict(config).items() if k != "inspectors"}, config_sha256=digest,
                      source=source, adopt=adopt, of_record=of_record,
                      inspectors=[{**i, "api_key_env": spec.api_key_env or None}
                                  for i, spec in zip(decisive["inspectors"], config.inspectors, strict=True)])
    # A verdict, once written for a task version under a configuration, stands: only the rest is judged.
    standing = verdicts_under(catalog, digest)
    carried = carried_verdicts(catalog, record, digest, decisive, {(v.task_id, v.version): v.eval_type for v in views})
    standing_now = {**carried, **standing}
    todo = [v for v in views if (v.task_id, v.version) not in standing_now]
    cached = {k[:5]: k[5] for k in catalog.con.execute(
        "SELECT endpoint, model, prompt_sha256, sample, temperature, response FROM llm_calls").fetchall()}
    # Two tasks can share a prompt (same feed metadata, same question): ask once.
    jobs = list({cache_key(i, v.prompt, s): (i, v.prompt, s) for v in todo for i in inspectors
                 if isinstance(i, OpenAIInspector) for s in range(i.samples)
                 if v.prompt and cache_key(i, v.prompt, s) not in cached}.values())
    stats = asyncio.run(ask_all(catalog, str(run.run_id), jobs, config.concurrency)) if jobs else \
        {"requests": 0, "failed": 0}
    cached = {k[:5]: k[5] for k in catalog.con.execute(
        "SELECT endpoint, model, prompt_sha256, sample, temperature, response FROM llm_calls").fetchall()}
    counts = run.counts
    counts.update(tasks=len(views), passed=0, discarded=0, undecided=0, new=0, moved=0, not_filtered=0, **stats,
                  carried=0,
                  config_sha256=digest, of_record=of_record, record=record.config_sha256 if record else None)
    verdicts: dict[tuple[str, int], tuple[str, list[dict[str, Any]], bool]] = {}  # verdict, answers, judged now
    for view in views:
        key = (view.task_id, view.version)
        if key in standing:
            verdicts[key] = (standing[key]["verdict"], json.loads(standing[key]["answers"]), False)
            continue
        if key in carried:  # the same inputs as under the record: its verdict, written under this configuration
            verdicts[key] = (carried[key]["verdict"], json.loads(carried[key]["answers"]), True)
            counts["carried"] += 1
            continue
        answers = _answers(view, inspectors, cached, config.language, config.robust_cannot_determine_discards)
        if answers is None:
            counts["undecided"] += 1
            continue
        view.answers = answers
        verdicts[key] = (decide(view, config.rule, config.max_correct), answers, True)
    for verdict, _, _ in verdicts.values():
        counts["passed" if verdict == "shortcut_passed" else "discarded"] += 1
    counts["new"] = sum(judged_now for _, _, judged_now in verdicts.values()) - counts["carried"]
    counts["inspectors"] = inspector_stats([answers for _, answers, _ in verdicts.values()])
    result = ShortcutRun(counts, decisive, digest, sorted(verdicts), of_record, record)
    if not of_record:
        on_record = verdicts_of_record(catalog)
        result.differ = [(*key, on_record[key], verdict) for key, (verdict, _, _) in sorted(verdicts.items())
                         if key in on_record and on_record[key] != verdict]
        counts["differ_from_record"] = len(result.differ)
    unusable = {name: s for name, s in counts["inspectors"].items()
                if s["answers"] and s["unparsed"] / s["answers"] > config.max_unparsed_share}
    if unusable:
        raise UnusableInspectorError("; ".join(
            f"inspector {name} is unusable: {s['unparsed']} of {s['answers']} answers "
            f"({s['unparsed'] / s['answers']:.0%}) could not be parsed, above qc.shortcut.max_unparsed_share "
            f"{config.max_unparsed_share:g}" for name, s in sorted(unusable.items()))
            + "; no verdict was written and no task moved", result)
    new = [(k, v) for k, v in verdicts.items() if v[2]]
    table = pa.table({"task_id": [k[0] for k, _ in new], "task_version": pa.array([k[1] for k, _ in new], pa.int32()),
                      "verdict": [v[0] for _, v in new],
                      "answers": [json.dumps(v[1], ensure_ascii=False) for _, v in new]})
    with catalog.staged(verdicts=table), catalog.transaction():
        remember_config(run, digest, decisive, source)
        catalog.con.execute("""
            INSERT INTO shortcut_verdicts (task_id, task_version, config_sha256, verdict, rule, answers, run_id,
                                           created_at)
            SELECT task_id, task_version, ?, verdict, ?, answers, ?, ? FROM verdicts""",
                            [digest, config.rule, run.run_id, now()])
        if of_record and (record is not None or verdicts):  # a first run that decided nothing sets no record
            if record is None or record.config_sha256 != digest:
                set_record(run, digest, source)
                counts["record"] = digest
            _decide_on_record(run, views, verdicts, digest, result)
    return result


def _decide_on_record(run: StageRun, views: list[TaskView], verdicts: dict[tuple[str, int], Any], digest: str,
                      result: ShortcutRun) -> None:
    """The verdicts of record decide: each task version is decided by this configuration once, and its
    state follows that decision. Platform tasks of tiers the filter does not judge go on to review."""
    catalog, counts = run.db, run.counts
    decided = latest_decisions(catalog)
    who = f"qc-shortcut {digest}"
    decisions, before = [], {}
    moves: list[Move] = []
    for view in views:
        key = (view.task_id, view.version)
        if key not in verdicts:
            continue
        verdict, answers, _ = verdicts[key]
        earlier = decided.get(key)
        why = _why(answers)
        if earlier != digest:
            again = f"re-decided by {digest}, the configuration of record (was {earlier})" if earlier else None
            why = f"{again}: {why}" if again else why
            decisions.append((view.task_id, view.version, again or "decided by the configuration of record"))
        moves.append((view.task_id, view.version, verdict, why, who))
        before[key] = view.state
    record_decisions(run, decisions, digest)
    result.moved += [(t, v, before[(t, v)], state) for t, v, state, _, _ in move_many(run, moves)]
    counts["moved"] = len(result.moved)
    outside = catalog.rows("SELECT t.task_id, t.version, t.tier FROM latest_tasks t JOIN task_states s "
                           "ON s.task_id = t.task_id AND s.version = t.version WHERE s.state = 'valid' "
                           "AND t.eval_type = 'platform' AND NOT list_contains(?, t.tier)",
                           [sorted(result.config["platform_tiers"])])
    counts["not_filtered"] += len(move_many(run, [
        (r["task_id"], r["version"], "shortcut_passed",
         f"not filtered: {r['tier']} platform tasks are outside qc.shortcut.platform_tiers", who) for r in outside]))

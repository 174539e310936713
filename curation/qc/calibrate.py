"""`curate qc calibrate export | import`: the pilot batch every annotator does first, and how far
they agreed on it, as the agenda of the calibration meeting.

The same pilot material goes to everyone, in a pilot project of their own (the tasks are marked
`pilot` and never become benchmark tasks): either N feeds chosen by a seed, on which each
annotator writes a task as in authoring, or a file of fixed questions that everyone answers.
A round is named by what was sent (`pilot-s7-n5`, `questions-<sha>`); an annotator added later
gets the same round.
"""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from curation.core.catalog import now
from curation.core.errors import FeedError, InputError, StateError, UsageError
from curation.core.resources import resource_text
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.feeds import Feed, latest_feeds, load_feed
from curation.labelstudio.accounts import ExportResult
from curation.labelstudio.people import check_people, split_names
from curation.labelstudio.projects import annotation_sha, latest_annotation, read_fields
from curation.labelstudio.render import list_fields, render_feed
from curation.labelstudio.workspace import open_session, person_project, returned_tasks, send_missing
from curation.qc.agreement import Agreement
from curation.qc.calibration_report import write_calibration
from curation.tasks.syntax import parse_options

PURPOSES = ("pilot", "pilot-questions")  # authoring on the pilot feeds; fixed questions (another config)
FIELDS_AUTHORING = ("tier", "subcategory")
FIELDS_QUESTIONS = ("tier", "subcategory", "answer")


@dataclass(frozen=True)
class PilotItem:
    item: str             # the feed (authoring) or the question's id
    feed: Feed
    question: dict[str, Any] | None  # {"question": ..., "options": {"A": ...}} for fixed questions


def _rank(seed: int, feed_id: str) -> str:
    return hashlib.sha256(f"{seed}:{feed_id}".encode()).hexdigest()


def choose_pilot(feeds: list[Feed], n: int, seed: int) -> list[Feed]:
    """N feeds, the same for a seed whatever order they come in."""
    if n < 1:
        raise UsageError("--pilot must be at least 1")
    if n > len(feeds):
        raise StateError(f"--pilot {n}: the catalog has only {len(feeds)} feeds")
    return sorted(feeds, key=lambda f: _rank(seed, f.feed_id))[:n]


def read_questions(path: Path, run: StageRun) -> list[PilotItem]:
    """A YAML list of `{feed, question, options}` (options: a list of 'A: ...' or one text); every
    problem is named by its entry number before anything is sent."""
    if not path.is_file():
        raise InputError(f"questions file {path} does not exist")
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path}: write a list of questions, each with feed, question and options")
    items, problems, seen = [], [], set()
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            problems.append(f"{path}: question {n}: write feed, question and options as keys")
            continue
        unknown = sorted(set(entry) - {"id", "feed", "question", "options"})
        options_text = entry.get("options")
        # `[A: x, B: y]` and `{A: x, B: y}` are what people write; YAML reads them as mappings
        if isinstance(options_text, dict):
            options_text = [options_text]
        if isinstance(options_text, list):
            options_text = "\n".join("\n".join(f"{k}: {v}" for k, v in o.items()) if isinstance(o, dict) else str(o)
                                     for o in options_text)
        options = parse_options(str(options_text or ""))
        item = str(entry.get("id") or f"q{n}")
        feed = None
        if unknown:
            problems.append(f"{path}: question {n}: unknown key(s) {', '.join(unknown)}")
        if not str(entry.get("question") or "").strip():
            problems.append(f"{path}: question {n}: no question text")
        if len(options) < 2:
            problems.append(f"{path}: question {n}: give at least two options ('A: ...', 'B: ...')")
        if item in seen:
            problems.append(f"{path}: question {n}: the id {item} is used twice")
        seen.add(item)
        try:
            feed = load_feed(run.db, str(entry.get("feed") or ""))
        except FeedError:  # the one thing load_feed refuses: no such feed
            problems.append(f"{path}: question {n}: feed {entry.get('feed')!r} is not in the catalog")
        if feed is not None and not problems:
            items.append(PilotItem(item, feed, {"question": str(entry["question"]).strip(), "options": options}))
    if problems:
        raise InputError(problems[0] + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""))
    return items


def question_html(question: dict[str, Any]) -> str:
    options = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in question["options"].items())
    return f'<div class="ls-question"><b>{html.escape(question["question"])}</b><ul>{options}</ul></div>'


def _pilot_item(catalog: Any, item: PilotItem, round_name: str, media: Path
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    ref = f"试标 PILOT · {item.item} · {len(item.feed.video_feed)} videos"
    data = {"feed_html": render_feed(catalog, item.feed, media), "feed_ref": ref, "feed_id": item.feed.feed_id,
            "feed_version": item.feed.version, "feedback": "", "pilot": True, "round": round_name,
            **list_fields(item.feed, "pilot")}
    if item.question:
        data["question_html"] = question_html(item.question)
    record = {"round": round_name, "item": f"{round_name}/{item.item}", "feed_id": item.feed.feed_id,
              "feed_version": item.feed.version,
              "question": json.dumps(item.question, ensure_ascii=False) if item.question else None}
    return record, data


def _check_export(annotators: list[str], pilot: int | None = None, seed: int = 0, questions: Path | None = None,
                  *_: Any, add: list[str] | None = None, **__: Any) -> None:
    if len(set(split_names(annotators)) | set(split_names(add))) < 2:
        raise UsageError("calibration needs at least two annotators: --annotators alice,bob (new people with --add)")
    if (pilot is None) == (questions is None):
        raise UsageError("give either --pilot N (annotators write tasks on N feeds) or --questions FILE")


@stage("qc-calibrate-export", command="curate qc calibrate export --annotators a,b,c --pilot N", batched=True,
       reads=("feeds", "videos", "comments", "media_outputs", "ls_projects", "qc_projects", "qc_items", "people"),
       writes=("qc_projects", "qc_items", "people"), check=_check_export,
       summary="the same pilot feeds (or fixed questions) into a pilot project of every annotator's own")
def export_pilot(run: StageRun, annotators: list[str], pilot: int | None = None, seed: int = 0,
                 questions: Path | None = None, media_root: Path | None = None,
                 passwords: Path | None = None, add: list[str] | None = None) -> ExportResult:
    """`annotators` must be people the catalog knows; `add` names new people (accounts made here)."""
    catalog = run.db
    people = check_people(catalog, split_names(annotators), split_names(add), "annotator")
    if questions is not None:
        items = read_questions(questions, run)
        round_name = f"questions-{hashlib.sha256(questions.read_bytes()).hexdigest()[:10]}"
        label_config = resource_text("pilot_questions.xml")
        purpose = PURPOSES[1]
    else:
        round_name = f"pilot-s{seed}-n{pilot}"
        # a round already sent keeps its feeds, whatever the catalog has gained since: everyone gets the same
        sent = catalog.rows("SELECT DISTINCT item, feed_id, feed_version FROM qc_items WHERE round = ? "
                            "AND purpose = 'pilot' ORDER BY item", [round_name])
        items = ([PilotItem(r["item"].split("/", 1)[1], load_feed(catalog, r["feed_id"], r["feed_version"]), None)
                  for r in sent] if sent else
                 [PilotItem(f"{f.feed_id}@v{f.version}", f, None)
                  for f in choose_pilot(latest_feeds(catalog), int(pilot or 0), seed)])
        label_config = resource_text("authoring.xml")
        purpose = PURPOSES[0]
    run.params.update(annotators=people, added=split_names(add), round=round_name, pilot=pilot, seed=seed,
                      questions=str(questions) if questions else None)
    result = ExportResult(run.counts)
    run.counts.update(round=round_name, items=len(items), sent=0, already_sent=0, accounts_created=0)
    session = open_session(passwords)
    media = media_root or Path("build/media")
    for person in people:
        with person_project(run, session, result, purpose, person, label_config,
                            f"LivingScreen {purpose.replace('-', ' ')} · {person}",
                            "试标：每个人拿到同样的视频流，只用于校准会议，不进入基准。"
                            "指南：任务上方的 Instructions 按钮。 / "
                            "Pilot batch for the calibration meeting: the same feeds for everyone. These tasks never "
                            "enter the benchmark. The guide: the Instructions button above each task.",
                            media) as project_id:
            send_missing(run, session, project_id, purpose, person,
                         {f"{round_name}/{i.item}": partial(_pilot_item, catalog, i, round_name, media) for i in items},
                         f"the pilot tasks for {person}")
    return result


@dataclass
class CalibrationResult(RunResult):
    rounds: dict[str, list[dict[str, Any]]] | None = None  # round -> its answers
    members: dict[str, list[str]] | None = None  # round -> everyone it was sent to
    round: str | None = None  # the round the meeting's papers are about
    agenda: Path | None = None  # calibration.md
    report: Path | None = None  # calibration.html
    agreement: dict[str, Agreement] | None = None  # field -> agreement over that round
    unreported: str | None = None  # why no papers were written although they were asked for


@stage("qc-calibrate-import", command="curate qc calibrate import", batched=True,
       reads=("qc_projects", "qc_items", "calibration_answers"),
       writes=("calibration_answers",),
       summary="the pilot answers back, for the agreement figures of the calibration meeting",
       files=("out: calibration.md and .html (with reports_dir)",))
def import_pilot(run: StageRun, reports_dir: Path | None = None, round_name: str | None = None) -> CalibrationResult:
    """The answers back; with `reports_dir`, the meeting's papers over `round_name` (default: the newest round)."""
    result = _import_answers(run)
    if reports_dir is not None:
        _write_papers(run, result, reports_dir, round_name)
    return result


def _write_papers(run: StageRun, result: CalibrationResult, reports_dir: Path, round_name: str | None) -> None:
    chosen = round_name or run.db.scalar(
        "SELECT round FROM qc_items WHERE purpose LIKE 'pilot%' ORDER BY created_at DESC LIMIT 1")
    run.params.update(round=chosen, reports_dir=str(reports_dir))
    if chosen is None:
        result.unreported = "no pilot round has been sent: run `curate qc calibrate export` first"
        return
    rows = (result.rounds or {}).get(chosen)
    if not rows:
        known = ", ".join(sorted(result.rounds or {})) or "none yet"
        result.unreported = f"no answers for round {chosen!r} (rounds with answers: {known})"
        return
    result.round = chosen
    result.agenda, result.report, result.agreement = write_calibration(
        rows, chosen, fields_of(chosen), reports_dir, (result.members or {}).get(chosen))
    run.params.update(agenda=str(result.agenda), report=str(result.report))


def _import_answers(run: StageRun) -> CalibrationResult:
    catalog = run.db
    session = open_session()
    run.counts.update(answers=0, new=0, changed=0, unchanged=0, unanswered=0)
    for project, task, item in (found for p in PURPOSES for found in returned_tasks(run, session, p)):
        annotation = latest_annotation(task)
        if annotation is None:
            run.counts["unanswered"] += 1
            continue
        run.counts["answers"] += 1
        result = annotation.get("result") or []
        sha = annotation_sha(result)
        key = [item["round"], item["item"], project["person"]]
        before = catalog.scalar("SELECT annotation_sha256 FROM calibration_answers WHERE round = ? AND item = ? "
                                "AND annotator = ?", key)
        if before == sha:
            run.counts["unchanged"] += 1
            continue
        fields = read_fields(result)
        with catalog.transaction():
            catalog.con.execute("DELETE FROM calibration_answers WHERE round = ? AND item = ? AND annotator = ?", key)
            catalog.insert("calibration_answers", {
                "round": item["round"], "item": item["item"], "annotator": project["person"],
                "tier": _first(fields.get("tier")), "subcategory": _first(fields.get("subcategory")),
                "answer": _first(fields.get("answer")), "instruction": fields.get("instruction"),
                "ls_annotation_id": annotation["id"], "annotation_sha256": sha, "run_id": run.run_id,
                "created_at": now()})
        run.counts["changed" if before else "new"] += 1
    rounds: dict[str, list[dict[str, Any]]] = {}
    for row in catalog.rows("SELECT a.*, i.question FROM calibration_answers a LEFT JOIN "
                            "(SELECT DISTINCT item, question FROM qc_items WHERE purpose LIKE 'pilot%') i USING (item) "
                            "ORDER BY round, item, annotator"):
        rounds.setdefault(row["round"], []).append(row)
    members: dict[str, list[str]] = {}
    for round_name, person in catalog.con.execute("SELECT DISTINCT round, person FROM qc_items WHERE purpose LIKE "
                                                  "'pilot%' ORDER BY round, person").fetchall():
        members.setdefault(round_name, []).append(person)
    return CalibrationResult(run.counts, rounds, members)


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None


def fields_of(round_name: str) -> tuple[str, ...]:
    """The fields compared: the chosen answer only when everyone answered the same questions."""
    return FIELDS_QUESTIONS if round_name.startswith("questions-") else FIELDS_AUTHORING

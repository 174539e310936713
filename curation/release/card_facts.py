"""What the dataset card may claim about QC, computed from what ran: the shortcut verdicts
recorded for each shipped task version (which inspector saw what, and what it did), the
reviews and group decisions recorded, and which tasks were inherited from another release.
A check with no record for a task is not claimed for it."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from curation.core.catalog import Catalog
from curation.qc.shortcut.prompts import CANNOT_ANSWER, UNPARSED

# what the degraded view shows each inspector (curation.qc.shortcut.prompts.degraded_view)
SEEN = "captions, hashtags, author names and author bios of the feed's videos, in feed order"
NOT_SEEN = "no video frames, audio, counts or comments"


@dataclass
class InspectorFacts:
    name: str
    model: str = "?"
    endpoint: str = "?"
    views: set[str] = field(default_factory=set)   # "paper prompt (zh)", ...
    decided: int = 0      # gave an answer (a letter, or platform actions) on at least one sample
    right: int = 0        # ... and it was the task's answer
    abstained: int = 0    # said it cannot answer
    unreadable: int = 0   # said something that is no answer
    not_seen: int = 0     # never read the task (the lexical inspector reads multiple-choice tasks only)


@dataclass
class CardFacts:
    tasks: int = 0
    judged: int = 0                                   # tasks with a shortcut verdict on record
    not_judged: Counter[str] = field(default_factory=Counter)  # why the others have none
    inspectors: dict[str, InspectorFacts] = field(default_factory=dict)
    reviewed: int = 0                                 # reached reviewed_ok or escalated here
    blind_reviews: int = 0                            # with a review recorded through the tool
    group_decisions: int = 0                          # escalated and decided by the group
    inherited: Counter[str] = field(default_factory=Counter)   # reason (names the release) -> tasks
    videos_without_metadata: int = 0
    ratio_range: tuple[float, float] = (0.5, 2.0)
    drifted: list[tuple[str, float | None]] = field(default_factory=list)  # task, its played feed's ratio


def _verdict(catalog: Catalog, task_id: str, version: int) -> dict[str, Any] | None:
    """The verdict a release ships for a task version (the same row `contents._qc_summary` reads)."""
    rows = catalog.rows("SELECT v.answers, r.params FROM shortcut_verdicts v LEFT JOIN runs r USING (run_id) "
                        "LEFT JOIN shortcut_verdicts_of_record o USING (task_id, task_version, config_sha256) "
                        "WHERE v.task_id = ? AND v.task_version = ? "
                        "ORDER BY o.task_id IS NULL, v.created_at DESC, v.config_sha256 LIMIT 1", [task_id, version])
    return rows[0] if rows else None


def _count(facts: InspectorFacts, answers: list[dict[str, Any]]) -> None:
    parsed = [a.get("parsed") for a in answers]
    if all(a.get("raw") is None for a in answers) and set(parsed) <= {CANNOT_ANSWER}:
        facts.not_seen += 1
    elif any(p not in (CANNOT_ANSWER, UNPARSED) for p in parsed):
        facts.decided += 1
        facts.right += any(a.get("correct") for a in answers)
    elif CANNOT_ANSWER in parsed:
        facts.abstained += 1
    else:
        facts.unreadable += 1


def card_facts(catalog: Catalog, tasks: list[dict[str, Any]], videos: list[dict[str, Any]],
               ratio_range: tuple[float, float] = (0.5, 2.0)) -> CardFacts:
    out = CardFacts(tasks=len(tasks), videos_without_metadata=sum(1 for v in videos if v["metadata_missing"]),
                    ratio_range=ratio_range)
    for task in tasks:
        ratio = played_ratio(task)
        if ratio != "as built" and (ratio is None or not ratio_range[0] <= ratio <= ratio_range[1]):
            out.drifted.append((task["task_id"], ratio))
        task_id, version = task["task_id"], task["task_version"]
        inherited = task["qc"].get("inherited_from")
        if inherited:
            out.inherited[inherited] += 1
        reached = {r[0] for r in catalog.con.execute(
            "SELECT DISTINCT to_state FROM task_transitions WHERE task_id = ? AND version = ?",
            [task_id, version]).fetchall()}
        out.reviewed += bool(reached & {"reviewed_ok", "escalated"})
        out.blind_reviews += bool(catalog.scalar("SELECT count(*) FROM reviews WHERE task_id = ? AND task_version = ?",
                                                 [task_id, version]))
        # a decision on any version of the task's path counts (a revision ships the version after it)
        out.group_decisions += bool(catalog.scalar("SELECT count(*) FROM decisions WHERE task_id = ? AND "
                                                   "task_version <= ?", [task_id, version]))
        verdict = _verdict(catalog, task_id, version)
        if verdict is None:
            out.not_judged[_why_not_judged(catalog, task_id, version, inherited)] += 1
            continue
        out.judged += 1
        params = json.loads(verdict["params"] or "{}")
        specs = {i.get("name"): i for i in params.get("inspectors", [])}
        by_inspector: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for answer in json.loads(verdict["answers"] or "[]"):
            by_inspector[answer["inspector"]].append(answer)
        for name, answers in by_inspector.items():
            spec = specs.get(name, {})
            facts = out.inspectors.setdefault(name, InspectorFacts(name, str(spec.get("model", "?")),
                                                                   str(spec.get("endpoint", "?"))))
            facts.views.add(f"{params.get('template', '?')} prompt ({params.get('language', '?')})")
            _count(facts, answers)
    return out


def qc_ran(facts: CardFacts) -> dict[str, Any]:
    """What ran for the shipped tasks, as the Croissant RAI fields state it: the same counts the card states, kept
    in the manifest so that metadata written from the release folder says what the card says."""
    return {"tasks": facts.tasks, "judged": facts.judged, "reviewed": facts.blind_reviews,
            "decided": facts.group_decisions, "inherited": dict(sorted(facts.inherited.items())),
            "inspectors": sorted(facts.inspectors)}


def played_ratio(task: dict[str, Any]) -> float | None | str:
    """Distractors per anchor video in the feed the task is played on; "as built" when its edits changed nothing
    of the base feed's videos, None when no anchor video is left."""
    anchors, feed = set(task["anchor_videos"]), task["video_feed"]
    base = anchors | set(task["distractor_videos"])
    if not anchors or set(feed) == base:
        return "as built"
    kept = len(anchors & set(feed))
    return (len(feed) - kept) / kept if kept else None


def _why_not_judged(catalog: Catalog, task_id: str, version: int, inherited: str | None) -> str:
    if inherited:
        return "inherited from another release, kept as published"
    reason = catalog.scalar("SELECT reason FROM task_transitions WHERE task_id = ? AND version = ? AND to_state = "
                            "'shortcut_passed' ORDER BY seq LIMIT 1", [task_id, version])
    if reason and str(reason).startswith("not filtered"):
        return "platform tasks of a tier the filter does not judge (qc.shortcut.platform_tiers)"
    return "no verdict recorded in the catalog"

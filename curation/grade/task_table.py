"""Tasks judged by how models answered them: one row per task over every graded episode of a release (several
models, several runs), with the IRT fit's difficulty and discrimination (`irt.py`), each model's ability, the
most common wrong answer (label tasks) and unmet check (platform tasks), the proofs' verdicts, and flags.

Each flag is a rule stated once, as data (`FLAGS`: its name, its rule in words, its test); a flag is a reason to
look at a task again, not a verdict on it. A rule that needs several models asks for `MIN_MODELS`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from curation.grade.irt import IrtFit, Responses, fit_irt

MIN_MODELS = 3
SUSPECT_SHARE = 0.75     # of the models that answered, the share whose most common answer is one same wrong option
NEGATIVE_Z = 1.96        # a 2PL discrimination this many standard errors below 0: weaker models solve it more
ACTING_TOOLS = ("click", "swipe", "type")  # an episode with none of these (valid) is do-nothing-like


@dataclass(frozen=True)
class EpisodeEvidence:
    model: str
    run: str
    task_id: str
    solved: bool
    answer: str | None = None                # label tasks: the first answer given (None: none)
    unmet: tuple[str, ...] | None = None     # platform tasks: the checks not met (None: end state unknown)
    acting_calls: int | None = None          # valid click, swipe and type calls (None: not known)


@dataclass(frozen=True)
class TaskFacts:
    task_id: str
    tier: str
    subcategory: str
    eval_type: str
    answer_key: str | None = None
    perfect_proof: str | None = None  # passes | fails | undecided | ungradable (label: passes, the key answered)
    idle_proof: str | None = None     # passes | fails | undecided (label: None)


@dataclass(frozen=True)
class Evidence:
    tasks: dict[str, TaskFacts]
    episodes: list[EpisodeEvidence]

    def responses(self) -> Responses:
        """Successes and runs per task and model, over the tasks that were played."""
        task_ids = sorted({e.task_id for e in self.episodes})
        models = sorted({e.model for e in self.episodes})
        row, col = {t: i for i, t in enumerate(task_ids)}, {m: j for j, m in enumerate(models)}
        k, n = np.zeros((len(task_ids), len(models))), np.zeros((len(task_ids), len(models)))
        for e in self.episodes:
            n[row[e.task_id], col[e.model]] += 1
            k[row[e.task_id], col[e.model]] += e.solved
        return Responses(task_ids, models, k, n)


@dataclass
class TaskRow:
    task_id: str
    tier: str
    subcategory: str
    eval_type: str
    models: int
    episodes: int
    solved: int
    solve_rate: float          # the mean over models of each model's share of runs solved
    models_solving: int
    difficulty: float | None = None
    discrimination: float | None = None
    discrimination_se: float | None = None
    information: float | None = None   # Fisher information at the models' abilities
    answer_key: str | None = None
    wrong_answer: str | None = None    # the most common wrong answer, and its share of the wrong answers
    wrong_answer_share: float | None = None
    models_answering: int = 0
    models_same_wrong: int = 0         # models whose most common answer is `wrong_answer`
    unmet_check: str | None = None     # the check most often unmet, and in how many failed episodes
    unmet_episodes: int = 0
    known_state_episodes: int = 0      # failed episodes whose end state was known
    known_state_models: int = 0
    idle_like_passes: int = 0
    perfect_proof: str | None = None
    idle_proof: str | None = None
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FlagRule:
    name: str
    rule: str
    test: Callable[[TaskRow, str | None], bool]  # (the row, the IRT model fitted)


FLAGS = (
    FlagRule("unsolved", f"no episode solves it, {MIN_MODELS} models at least played it, and the perfect-agent proof "
             "passes (a label task's key is its proof): hard, or broken",
             lambda r, _: r.solved == 0 and r.models >= MIN_MODELS and r.perfect_proof == "passes"),
    FlagRule("negative_discrimination", f"its 2PL discrimination is below 0 by {NEGATIVE_Z:g} standard errors or "
             "more: models of lower ability solve it more often than those of higher",
             lambda r, kind: kind == "2PL" and r.discrimination is not None and r.discrimination_se is not None
             and r.discrimination + NEGATIVE_Z * r.discrimination_se < 0),
    FlagRule("suspect_key", f"{MIN_MODELS} models at least answered it and one same option, not the key, is the most "
             f"common answer of {SUSPECT_SHARE:.0%} of them or more: a suspect answer key",
             lambda r, _: r.models_answering >= MIN_MODELS
             and r.models_same_wrong >= SUSPECT_SHARE * r.models_answering),
    FlagRule("idle_passes", f"an episode with no valid {', '.join(ACTING_TOOLS)} call (do-nothing-like) passes this "
             "platform task",
             lambda r, _: r.idle_like_passes > 0),
    FlagRule("common_unmet_check", f"no episode passes it, {MIN_MODELS} models at least have episodes whose end state "
             "is known, and one same check is unmet in every one of those episodes",
             lambda r, _: r.solved == 0 and r.known_state_models >= MIN_MODELS
             and r.unmet_episodes == r.known_state_episodes > 0),
)


@dataclass(frozen=True)
class ModelAbility:
    model: str
    ability: float | None
    ability_se: float | None
    tasks: int
    solve_rate: float   # mean over its tasks of its share of runs solved


@dataclass
class TaskAnalysis:
    rows: list[TaskRow]
    models: list[ModelAbility]
    irt: str | None     # the IRT model fitted (2PL | 1PL), None under two models
    fit: IrtFit | None
    responses: Responses

    def flagged(self) -> list[TaskRow]:
        return [r for r in self.rows if r.flags]

    def as_dict(self) -> dict[str, Any]:
        """What summary.json holds: the fit, each model's ability, the rules and the flagged rows."""
        return {"irt": self.irt, "models": [asdict(m) for m in self.models],
                "rules": [{"name": f.name, "rule": f.rule} for f in FLAGS],
                "flag_counts": {f.name: sum(f.name in r.flags for r in self.rows) for f in FLAGS},
                "flagged": [asdict(r) for r in self.flagged()]}


def _mode(values: list[str], strict: bool = False) -> tuple[str | None, int]:
    """The most common value and its count; ties go to the first in sort order, or to None when `strict`."""
    if not values:
        return None, 0
    counts = Counter(values).most_common()
    top = [v for v, c in counts if c == counts[0][1]]
    if strict and len(top) > 1:
        return None, 0
    return min(top), counts[0][1]


def _answers(row: TaskRow, episodes: list[EpisodeEvidence]) -> None:
    given = [e for e in episodes if e.answer]
    wrong = [e.answer for e in given if e.answer and not e.solved]
    row.wrong_answer, count = _mode(wrong)
    row.wrong_answer_share = count / len(wrong) if wrong else None
    by_model: dict[str, list[str]] = defaultdict(list)
    for e in given:
        by_model[e.model].append(str(e.answer))
    # a model's answer: the one it gave most often, when one did (a tie says no one answer)
    modes = [_mode(answers, strict=True)[0] for answers in by_model.values()]
    row.models_answering = len(modes)
    common, same = _mode([m for m in modes if m is not None and m != row.answer_key])
    row.models_same_wrong = same if common is not None else 0


def _checks(row: TaskRow, episodes: list[EpisodeEvidence]) -> None:
    known = [e for e in episodes if e.unmet is not None and not e.solved]
    row.known_state_episodes, row.known_state_models = len(known), len({e.model for e in known})
    row.unmet_check, _ = _mode([c for e in known for c in set(e.unmet or ())])
    row.unmet_episodes = sum(row.unmet_check in (e.unmet or ()) for e in known) if row.unmet_check else 0


def analyse_tasks(evidence: Evidence, kind: str | None = None) -> TaskAnalysis:
    """The per-task table of `evidence`, with flags; `kind` forces the IRT model (2PL | 1PL)."""
    responses = evidence.responses()
    fit = fit_irt(responses, kind)
    information = fit.information() if fit else None
    by_task: dict[str, list[EpisodeEvidence]] = defaultdict(list)
    for e in evidence.episodes:
        by_task[e.task_id].append(e)
    rates = responses.solve_rate()
    rows = []
    for i, task_id in enumerate(responses.task_ids):
        facts, episodes = evidence.tasks[task_id], by_task[task_id]
        played = responses.n[i] > 0
        row = TaskRow(task_id, facts.tier, facts.subcategory, facts.eval_type, int(played.sum()), len(episodes),
                      sum(e.solved for e in episodes), round(float(rates[i]), 4),
                      int((responses.k[i] > 0).sum()), answer_key=facts.answer_key,
                      perfect_proof=facts.perfect_proof, idle_proof=facts.idle_proof)
        if fit is not None and information is not None and played.sum() >= 2:
            row.difficulty, row.information = round(float(fit.difficulty[i]), 4), round(float(information[i]), 4)
            row.discrimination = round(float(fit.discrimination[i]), 4)
            row.discrimination_se = round(float(fit.discrimination_se[i]), 4) if fit.kind == "2PL" else None
        if facts.eval_type == "label":
            _answers(row, episodes)
        else:
            _checks(row, episodes)
        if facts.eval_type == "platform":  # a label task is passed by answering, which is not doing nothing
            row.idle_like_passes = sum(e.solved and e.acting_calls == 0 for e in episodes)
        row.flags = [f.name for f in FLAGS if f.test(row, fit.kind if fit else None)]
        rows.append(row)
    shares = np.where(responses.n > 0, responses.k / np.maximum(responses.n, 1), np.nan)
    models = [ModelAbility(m, round(float(fit.ability[j]), 4) if fit else None,
                           round(float(fit.ability_se[j]), 4) if fit else None, int((responses.n[:, j] > 0).sum()),
                           round(float(np.nanmean(shares[:, j])), 4)) for j, m in enumerate(responses.models)]
    return TaskAnalysis(rows, models, fit.kind if fit else None, fit, responses)

"""Evidence from agents of known skill, for the statistics alone: each agent solves each task with the probability
a known 2PL model gives (σ(a (θ − b))), run after run; tasks drawn from a known population, so an agent's true SR
is known both on the tasks drawn (its expected SR on them) and over the population (by quadrature).

Planted defects, each a known kind of broken task:
- `wrong_key`: a label task whose key is wrong; an easy one (nearly every agent knows the real answer), so every
  agent that solves it gives the same other option, and is graded wrong;
- `unmeetable`: a platform task with a check nobody can meet: every episode ends with that check unmet, while
  the perfect-agent proof passes (the check reads right, the instruction asks for something else);
- `reversed`: a task whose success falls with ability (discrimination −1.5);
- `idle`: a platform task passed by a do-nothing episode (no click, swipe or type).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from curation.grade.stats import Outcome
from curation.grade.task_table import EpisodeEvidence, Evidence, TaskFacts

STRATA = (("L1", "gui_like", "platform"), ("L1", "gui_swipe", "platform"), ("L2", "feature_analysis", "label"),
          ("L2", "event_association", "label"), ("L3", "moderation", "platform"), ("L3", "preference", "platform"))
OPTIONS = "ABCD"
DEFECTS = ("wrong_key", "unmeetable", "reversed", "idle")


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def population_sr(theta: float, draws: int = 200_000) -> float:
    """An agent's SR over the task population (difficulty N(0, 1), discrimination lognormal(0, 0.3))."""
    rng = np.random.default_rng(12345)
    a, b = rng.lognormal(0, 0.3, draws), rng.normal(0, 1, draws)
    return float(sigmoid(a * (theta - b)).mean())


@dataclass
class World:
    abilities: dict[str, float]
    difficulty: np.ndarray
    discrimination: np.ndarray
    task_ids: list[str]
    evidence: Evidence
    planted: dict[str, str] = field(default_factory=dict)   # task: defect
    runs: int = 1

    def expected_sr(self, model: str) -> float:
        """The agent's expected SR on the tasks drawn (good ones: what it is graded on)."""
        return float(sigmoid(self.discrimination * (self.abilities[model] - self.difficulty)).mean())

    def outcomes(self) -> list[Outcome]:
        facts = self.evidence.tasks
        return [Outcome(e.model, e.run, e.task_id, facts[e.task_id].tier, facts[e.task_id].subcategory,
                        float(e.solved), None, None) for e in self.evidence.episodes]


def world(seed: int, tasks: int, abilities: dict[str, float], runs: int = 1, planted: int = 0) -> World:
    """`tasks` drawn from the population, `planted` of each defect among them (on top), every agent on every task."""
    rng = np.random.default_rng(seed)
    a, b = rng.lognormal(0, 0.3, tasks), rng.normal(0, 1, tasks)
    kinds = [STRATA[i % len(STRATA)] for i in range(tasks)]
    defects: dict[int, str] = {}
    for d in DEFECTS:
        for _ in range(planted):
            stratum = {"wrong_key": 2, "unmeetable": 0, "reversed": 4, "idle": 1}[d]
            kinds.append(STRATA[stratum])
            defects[len(a)] = d
            a = np.append(a, -1.5 if d == "reversed" else 1.0)
            b = np.append(b, -3.0 if d in ("wrong_key", "idle") else 0.0)
    ids = [f"{sub}_{i + 1}" for i, (_, sub, _) in enumerate(kinds)]
    facts, episodes = {}, []
    for i, (tier, sub, kind) in enumerate(kinds):
        key = OPTIONS[rng.integers(4)] if kind == "label" else None
        real = OPTIONS[(OPTIONS.index(key) + 1) % 4] if defects.get(i) == "wrong_key" and key else key
        facts[ids[i]] = TaskFacts(ids[i], tier, sub, kind, key, "passes", "fails" if kind == "platform" else None)
        atoms = f"eval_like {i % 5}", "eval_like no other"
        unmet_kinds = ((atoms[0],), (atoms[1],), atoms)  # a failed episode leaves one or both unmet
        weakest = min(abilities, key=abilities.__getitem__)
        # every draw of the task at once: whether each agent knows it in each run, its wrong answer, what it missed
        knows = rng.random((len(abilities), runs)) < sigmoid(a[i] * (np.array(list(abilities.values()))[:, None]
                                                                       - b[i]))
        shifts, missed, acting = (rng.integers(1, 4, knows.shape), rng.integers(0, 3, knows.shape),
                                  rng.integers(1, 6, knows.shape))
        for m, model in enumerate(abilities):
            for run in range(runs):
                if kind == "label" and real:
                    answer = real if knows[m, run] else OPTIONS[(OPTIONS.index(real) + shifts[m, run]) % 4]
                    episodes.append(EpisodeEvidence(model, str(run + 1), ids[i], answer == key, answer))
                    continue
                solved = bool(knows[m, run]) and defects.get(i) != "unmeetable"
                unmet = () if solved else (("eval_report 3",) if defects.get(i) == "unmeetable"
                                           else unmet_kinds[missed[m, run]])
                idle = defects.get(i) == "idle" and model == weakest
                episodes.append(EpisodeEvidence(model, str(run + 1), ids[i], solved or idle,
                                                unmet=() if idle else unmet,
                                                acting_calls=0 if idle else int(acting[m, run])))
    good = [i for i in range(len(ids)) if i not in defects]
    return World(abilities, b[good], a[good], ids, Evidence(facts, episodes), {ids[i]: d for i, d in defects.items()},
                 runs)

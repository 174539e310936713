"""A Lite subset: N tasks of a release chosen from the graded evidence so that a model's SR on them estimates its
SR on the whole release, with the error of that estimate measured by leaving each graded model out in turn.

Choosing: N is shared among the release's sub-categories (tier and sub-category) in proportion to their tasks,
at least one each while N allows (largest remainders). Within one, two ways are measured:
- `information`: the tasks with the most Fisher information at the graded models' abilities under the IRT fit
  (`irt.py`) first: those that separate the models, not those every model solves or none does;
- `difficulty spread`: tasks at evenly spaced quantiles of the fitted difficulty, so that the subset keeps the
  sub-category's range of difficulty.
On generated evidence (tests/grade/test_lite.py, bench/grade_tasks.py) the second estimated SR better: picking the
largest estimated information picks the tasks whose discrimination was overestimated (the winner's curse) and
crowds them at the middle abilities, so extreme models are estimated from tasks that say little about them.
Ties and the order without a fit (fewer than two models: at random) come from `seed`.

Estimating: two estimators are measured:
- `stratified mean`: each sub-category's mean on its Lite tasks, weighted by its share of the release;
- `irt`: the model's ability from its Lite results under the fitted task parameters (`irt.ability_of`), then
  SR = (its results on the Lite tasks + the fit's probabilities on the other tasks) / all tasks, as
  tinyBenchmarks' IRT estimators do.

Not every pair is measured: the stratified mean stands for a sub-category only if its Lite tasks do, which picking
by information does not give. Measured on generated evidence of ten agents (tests/release/test_lite_release.py's
world: six graded agents, four more, 30 of 89 tasks, eight draws), that pair's error (RMSE over the ten agents)
was 13 to 18 points of SR while leaving each model out put it at 4 to 8: it was chosen as the best in three draws,
and in one its stated error held for 3 agents of 10. The other three pairs were off by 3 to 11 points, about what
their validation said.

Validation: for each graded model in turn, the fit, the choice and the estimate are made without it, and its
estimate from its own Lite results is compared with its SR on every task it played. The way of choosing and the
estimator with the smallest root mean square error are used, and the stated error is t × that error, t the 97.5%
quantile of Student's t with as many degrees of freedom as models left out: a 95% bound on a new model's error if
the errors are roughly normal around 0, the RMSE itself estimated from those few models. (1.96 × RMSE, the normal
quantile, held for 79% of the agents of that world with four graded models and 88% with six; t held for 91%.)
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from curation.grade.irt import IrtFit, Responses, ability_of, fit_irt
from curation.grade.task_table import Evidence

ESTIMATORS = ("irt", "stratified mean")
SELECTIONS = ("information", "difficulty spread")
# the pairs measured: the stratified mean needs tasks that stand for their sub-category, which picking by
# information does not give (see the module's docstring), so that pair is not among them
WAYS = ("information / irt", "difficulty spread / irt", "difficulty spread / stratified mean")
COVER = 0.95  # what the stated error bounds: the share of models whose estimate is within it
MIN_MODELS = 3      # leaving one out must leave two, the least an IRT fit separates
DECIMALS = 6        # of the floats `as_json` writes: a release's bytes should not hang on the last bits of a fit


@dataclass(frozen=True)
class HeldOut:
    model: str
    full_sr: float
    estimates: dict[str, float]  # per way of choosing and estimator: "difficulty spread / irt"


@dataclass
class LiteChoice:
    task_ids: list[str]
    method: str
    selection: str
    estimator: str
    estimated_error: float | None   # the stated ± bound on a model's full-release SR (None: fewer than 3 models)
    rmse: dict[str, float] = field(default_factory=dict)       # per "selection / estimator", leave-one-model-out
    max_error: dict[str, float] = field(default_factory=dict)
    validation: list[HeldOut] = field(default_factory=list)
    strata: dict[str, str] = field(default_factory=dict)       # every release task's sub-category
    params: dict[str, tuple[float, float]] = field(default_factory=dict)  # task: (difficulty, discrimination)

    def estimate(self, results: dict[str, tuple[float, float]], estimator: str | None = None) -> float:
        """A model's full-release SR from its Lite results (task: (solved runs, runs))."""
        return estimate_sr(estimator or self.estimator, self.task_ids, results, self.strata, self.params)

    @property
    def way(self) -> str:
        """The way of choosing and the estimator used, as `rmse` and `HeldOut.estimates` key them."""
        return f"{self.selection} / {self.estimator}"

    def as_json(self) -> dict[str, Any]:
        """The choice as JSON, enough for `from_json(...).estimate(...)` to give what `estimate` gives."""
        def r(x: float) -> float:
            return round(float(x), DECIMALS)

        return {"task_ids": list(self.task_ids), "method": self.method, "selection": self.selection,
                "estimator": self.estimator,
                "estimated_error": None if self.estimated_error is None else r(self.estimated_error),
                "rmse": {w: r(v) for w, v in self.rmse.items()},
                "max_error": {w: r(v) for w, v in self.max_error.items()},
                "validation": [{"model": h.model, "full_sr": r(h.full_sr),
                                "estimates": {w: r(v) for w, v in h.estimates.items()}} for h in self.validation],
                "strata": dict(sorted(self.strata.items())),
                "params": {t: [r(b), r(a)] for t, (b, a) in sorted(self.params.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LiteChoice:
        return cls(list(data["task_ids"]), data["method"], data["selection"], data["estimator"],
                   data["estimated_error"], dict(data["rmse"]), dict(data["max_error"]),
                   [HeldOut(h["model"], h["full_sr"], dict(h["estimates"])) for h in data["validation"]],
                   dict(data["strata"]), {t: (float(b), float(a)) for t, (b, a) in data["params"].items()})


def _stratum_of(evidence: Evidence, task_ids: list[str]) -> dict[str, str]:
    return {t: f"{evidence.tasks[t].tier}/{evidence.tasks[t].subcategory}" for t in task_ids}


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """N shared among strata in proportion to their sizes, one each first while N allows (largest remainders)."""
    n = min(n, sum(sizes.values()))
    base = {s: 1 if n >= len(sizes) and size else 0 for s, size in sizes.items()}
    left = n - sum(base.values())
    room = {s: sizes[s] - base[s] for s in sizes}
    total = sum(room.values()) or 1
    exact = {s: left * room[s] / total for s in sizes}
    out = {s: base[s] + min(room[s], math.floor(exact[s])) for s in sizes}
    for s in sorted(sizes, key=lambda s: (-(exact[s] - math.floor(exact[s])), s)):
        if sum(out.values()) >= n:
            break
        if out[s] < sizes[s]:
            out[s] += 1
    while sum(out.values()) < n:  # caps left some over: to the strata with room, largest first
        s = max((s for s in sizes if out[s] < sizes[s]), key=lambda s: (sizes[s] - out[s], s))
        out[s] += 1
    return out


def choose_tasks(task_ids: list[str], strata: dict[str, str], fit: IrtFit | None, n: int, seed: int,
                 selection: str = "difficulty spread") -> list[str]:
    """N tasks, stratified, chosen within each stratum by `selection` (at random without a fit)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(task_ids):
        members[strata[t]].append(i)
    counts = allocate({s: len(m) for s, m in members.items()}, n)
    chosen = []
    for s in sorted(members):
        rng = np.random.default_rng([seed, zlib.crc32(s.encode())])
        idx, take = np.array(members[s]), counts[s]
        tiebreak = rng.permutation(len(idx))
        if fit is None:
            picks = idx[tiebreak][:take]
        elif selection == "information":
            picks = idx[np.lexsort((tiebreak, -fit.information()[idx]))][:take]
        else:  # evenly spaced quantiles of difficulty
            ordered = idx[np.lexsort((tiebreak, fit.difficulty[idx]))]
            picks = ordered[np.floor((np.arange(take) + 0.5) * len(idx) / take).astype(int)] if take else idx[:0]
        chosen += [task_ids[i] for i in picks]
    return sorted(chosen)


def estimate_sr(estimator: str, lite: list[str], results: dict[str, tuple[float, float]], strata: dict[str, str],
                params: dict[str, tuple[float, float]]) -> float:
    """A model's full-release SR from its results on the Lite tasks it played (task: (solved runs, runs))."""
    played = [t for t in lite if t in results and results[t][1] > 0]
    share = {t: results[t][0] / results[t][1] for t in played}
    if estimator == "stratified mean" or not params:
        sizes: dict[str, int] = defaultdict(int)
        for s in strata.values():
            sizes[s] += 1
        by_stratum: dict[str, list[float]] = defaultdict(list)
        for t in played:
            by_stratum[strata[t]].append(share[t])
        weight = sum(sizes[s] for s in by_stratum)
        return sum(sizes[s] * float(np.mean(v)) for s, v in by_stratum.items()) / weight if weight else 0.0
    b = np.array([params[t][0] for t in played])
    a = np.array([params[t][1] for t in played])
    theta = ability_of(np.array([results[t][0] for t in played]), np.array([results[t][1] for t in played]), b, a)
    rest = [t for t in strata if t not in share]
    rb, ra = np.array([params[t][0] for t in rest]), np.array([params[t][1] for t in rest])
    predicted = float((1 / (1 + np.exp(-ra * (theta - rb)))).sum())
    return (sum(share.values()) + predicted) / (len(share) + len(rest))


def _params(fit: IrtFit | None, task_ids: list[str]) -> dict[str, tuple[float, float]]:
    if fit is None:
        return {}
    return {t: (float(fit.difficulty[i]), float(fit.discrimination[i])) for i, t in enumerate(task_ids)}


def _without(responses: Responses, j: int) -> Responses:
    keep = [c for c in range(len(responses.models)) if c != j]
    return Responses(responses.task_ids, [responses.models[c] for c in keep], responses.k[:, keep],
                     responses.n[:, keep])


def _results(responses: Responses, j: int) -> dict[str, tuple[float, float]]:
    return {t: (float(responses.k[i, j]), float(responses.n[i, j])) for i, t in enumerate(responses.task_ids)
            if responses.n[i, j] > 0}


def _full_sr(results: dict[str, tuple[float, float]]) -> float:
    return float(np.mean([k / n for k, n in results.values()]))


def choose_lite(evidence: Evidence, n: int, seed: int = 0, ways: tuple[str, ...] = WAYS) -> LiteChoice:
    """N tasks for a Lite config, the estimator to use on them and its error, validated leaving each model out."""
    responses = evidence.responses()
    strata = _stratum_of(evidence, responses.task_ids)
    validation = []
    for j, model in enumerate(responses.models if len(responses.models) >= MIN_MODELS else []):
        rest = _without(responses, j)
        held_fit = fit_irt(rest)
        results, params = _results(responses, j), _params(held_fit, rest.task_ids)
        chosen = {s: choose_tasks(rest.task_ids, strata, held_fit, n, seed, s) for s in SELECTIONS}
        estimates = {w: estimate_sr(w.split(" / ")[1], chosen[w.split(" / ")[0]], results, strata, params)
                     for w in ways}
        validation.append(HeldOut(model, _full_sr(results), estimates))
    errors = {w: np.array([h.estimates[w] - h.full_sr for h in validation]) for w in ways}
    rmse = {w: float(np.sqrt((v ** 2).mean())) for w, v in errors.items() if len(v)}
    worst = {w: float(np.abs(v).max()) for w, v in errors.items() if len(v)}
    fit = fit_irt(responses)
    best = min(rmse, key=lambda w: (rmse[w], w)) if rmse and fit else "difficulty spread / stratified mean"
    selection, estimator = best.split(" / ")
    task_ids = choose_tasks(responses.task_ids, strata, fit, n, seed, selection)
    factor = float(student_t.ppf(1 - (1 - COVER) / 2, len(validation))) if validation else 0.0
    stated = factor * rmse[best] if rmse else None
    how = (f"{selection} (under the {fit.kind} fit of {len(responses.models)} models)" if fit else
           "at random (no IRT fit under two models)")
    method = (f"{len(task_ids)} of {len(responses.task_ids)} tasks, stratified by tier and sub-category in proportion "
              f"to the release (one each at least while N allows), chosen within each by {how}, seed {seed}; a "
              f"model's SR on the full release is estimated by the {estimator} estimator. ")
    method += (f"Leaving each of the {len(validation)} graded models out in turn, the error of its estimate had a "
               f"root mean square of {rmse[best]:.1%} (largest {worst[best]:.1%}; the other ways: "
               + ", ".join(f"{w} {rmse[w]:.1%}" for w in ways if w != best)
               + f"): stated error ±{stated:.1%} ({factor:.2f} × RMSE, Student's t with {len(validation)} degrees of "
               f"freedom: a {COVER:.0%} bound)." if stated is not None else
               f"With fewer than {MIN_MODELS} models graded its error cannot be measured.")
    return LiteChoice(task_ids, method, selection, estimator, stated, rmse, worst, validation, strata,
                      _params(fit, responses.task_ids))

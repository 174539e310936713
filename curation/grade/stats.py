"""Scores with their uncertainty: each model's SR, NS and WR per tier and sub-category with a 95% interval, and
every pair of models graded on the same tasks compared on SR.

The unit of sampling is the task. A release is a sample of the tasks that could have been written for its
sub-categories, and a model's score is its success over that population, so intervals are over tasks. A model
may have several runs of a task (graded under `name#run`, `split_run`); its runs of one task share the task's
difficulty and are not independent, so they are averaged into the task's score first and tasks are resampled
whole (a cluster bootstrap), never runs.

- SR, one run per task: each task is one Bernoulli outcome and SR a binomial proportion, so the interval is
  Wilson's score interval. It is exact-looking without resampling noise, stays inside [0, 1] and keeps close to
  its stated coverage at small n and near 0 or 1, where the normal (Wald) interval collapses to a point.
- SR with several runs of a task, NS and WR: the percentile interval of a task-level bootstrap (`DRAWS`
  resamples of the model's tasks, with replacement, each task carrying the mean of its runs).
- Pairs: the difference of SR on the tasks both models played, with the percentile interval of a paired
  bootstrap (the same resampled tasks for both). Its p-value is the exact McNemar test when both models have
  one run per task: the tasks where the two agree say nothing about which is better, and the split of the
  discordant ones is Binomial(b + c, 1/2) under no difference, exact at any count. With several runs a task
  scores a fraction, McNemar does not apply, and the p-value is the paired bootstrap's (the resampled
  differences centred on the observed one, as the no-difference distribution). Holm's step-down adjustment
  over all pairs is given beside it, for reading many pairs at once.

Deterministic: each model, scope and metric draws from its own stream, seeded by `seed` and its name, so adding
a model does not move another's interval.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

LEVEL = 0.95
DRAWS = 2000
RUN_MARK = "#"  # `--model qwen#2`: run 2 of model qwen
METRICS = ("sr", "ns", "wr")
Floats = npt.NDArray[np.float64]


def split_run(name: str) -> tuple[str, str]:
    """(model, run) of a graded model name: `qwen#2` is run 2 of qwen; a name without the mark is run 1."""
    model, mark, run = name.rpartition(RUN_MARK)
    return (model, run) if mark and model and run else (name, "1")


@dataclass(frozen=True)
class Outcome:
    """One graded episode, as the statistics read it."""
    model: str
    run: str
    task_id: str
    tier: str
    subcategory: str
    sr: float
    ns: float | None = None
    wr: float | None = None


@dataclass(frozen=True)
class Interval:
    """A model's score on one scope (`all`, a tier, or `tier/sub-category`) with its interval."""
    model: str
    scope: str
    metric: str        # sr | ns | wr
    estimate: float
    low: float
    high: float
    tasks: int
    runs: int          # the most runs of one task
    method: str        # wilson | task bootstrap


@dataclass(frozen=True)
class PairTest:
    """SR of `model_a` minus SR of `model_b` on the tasks both played."""
    model_a: str
    model_b: str
    tasks: int
    sr_a: float
    sr_b: float
    difference: float
    low: float
    high: float
    p_value: float
    p_holm: float
    test: str          # exact McNemar | paired bootstrap
    a_only: int | None = None  # McNemar's discordant tasks: a solved, b did not
    b_only: int | None = None


def _stream(seed: int, *key: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("\x1f".join(key).encode())])


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    z, p = NormalDist().inv_cdf(0.5 + level / 2), successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_means(values: Floats, rng: np.random.Generator, draws: int = DRAWS) -> Floats:
    """The mean of `values` over `draws` resamples with replacement. Resampling n tasks is drawing how many times
    each distinct value comes up, Multinomial(n, its share): for SR (a few distinct fractions) that draw is the
    same distribution at a fraction of the cost of n indices per resample."""
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) <= 64:
        tallies = rng.multinomial(len(values), counts / len(values), size=draws)
        shares: Floats = tallies @ distinct / len(values)
        return shares
    picks = rng.integers(0, len(values), size=(draws, len(values)))
    means: Floats = values[picks].mean(axis=1)
    return means


def percentile_interval(draws: Floats, level: float = LEVEL) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the smaller discordant count against Binomial(a_only + b_only, 1/2)."""
    n, k = a_only + b_only, min(a_only, b_only)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / (1 << n))  # integers to the end: exact at any n


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def scopes_of(outcome: Outcome) -> tuple[str, ...]:
    return "all", outcome.tier, f"{outcome.tier}/{outcome.subcategory}"


def per_task(outcomes: Iterable[Outcome], metric: str) -> dict[str, list[float]]:
    """Each task's values of one metric over its runs (episodes whose value is unknown left out)."""
    out: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        value = getattr(o, metric)
        if value is not None:
            out[o.task_id].append(float(value))
    return out


def score(model: str, scope: str, metric: str, runs_of: dict[str, list[float]], seed: int,
          level: float = LEVEL) -> Interval | None:
    """One model's interval on one scope; None when no task of the scope has a known value."""
    if not runs_of:
        return None
    tasks = sorted(runs_of)
    means = np.array([sum(runs_of[t]) / len(runs_of[t]) for t in tasks], dtype=np.float64)
    runs = max(len(v) for v in runs_of.values())
    if metric == "sr" and runs == 1:
        low, high = wilson(int(round(means.sum())), len(means), level)
        method = "wilson"
    else:
        low, high = percentile_interval(bootstrap_means(means, _stream(seed, model, scope, metric)), level)
        method = "task bootstrap"
    return Interval(model, scope, metric, float(means.mean()), low, high, len(tasks), runs, method)


def model_scores(outcomes: list[Outcome], seed: int = 0, level: float = LEVEL) -> list[Interval]:
    """Every model's SR, NS and WR with intervals, over all its tasks, per tier and per sub-category."""
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        for scope in scopes_of(o):
            groups[(o.model, scope)].append(o)
    out = []
    for (model, scope), group in sorted(groups.items(), key=lambda kv: (kv[0][0], _scope_order(kv[0][1]))):
        for metric in METRICS:
            interval = score(model, scope, metric, per_task(group, metric), seed, level)
            if interval is not None:
                out.append(interval)
    return out


def _scope_order(scope: str) -> tuple[int, str]:
    return (0 if scope == "all" else 1 if "/" not in scope else 2), scope


def pair_tests(outcomes: list[Outcome], seed: int = 0, level: float = LEVEL) -> list[PairTest]:
    """Every pair of models with tasks in common, compared on SR over those tasks."""
    sr: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        sr[o.model][o.task_id].append(o.sr)
    mean_of = {m: {t: sum(v) / len(v) for t, v in tasks.items()} for m, tasks in sr.items()}
    drafts = []
    for a, b in combinations(sorted(sr), 2):
        common = sorted(set(sr[a]) & set(sr[b]))
        if not common:
            continue
        ya = np.array([mean_of[a][t] for t in common], dtype=np.float64)
        yb = np.array([mean_of[b][t] for t in common], dtype=np.float64)
        diff = ya - yb
        observed = float(diff.mean())
        spread = bootstrap_means(diff, _stream(seed, a, b, "pair"))
        low, high = percentile_interval(spread, level)
        one_run = all(len(sr[m][t]) == 1 for m in (a, b) for t in common)
        a_only: int | None = None
        b_only: int | None = None
        if one_run:
            a_only, b_only = int(((ya == 1) & (yb == 0)).sum()), int(((ya == 0) & (yb == 1)).sum())
            p, test = mcnemar_exact(a_only, b_only), "exact McNemar"
        else:
            extreme = int((np.abs(spread - observed) >= abs(observed) - 1e-12).sum())
            p, test = (extreme + 1) / (len(spread) + 1), "paired bootstrap"
        drafts.append((a, b, len(common), float(ya.mean()), float(yb.mean()), observed, low, high, p, test,
                       a_only, b_only))
    adjusted = holm([d[8] for d in drafts])
    return [PairTest(a, b, n, sa, sb, d, lo, hi, p, q, test, ao, bo)
            for (a, b, n, sa, sb, d, lo, hi, p, test, ao, bo), q in zip(drafts, adjusted, strict=True)]

"""Item response theory over graded episodes: each model's ability, each task's difficulty and discrimination.

The two-parameter logistic model (2PL): model j solves task i with probability σ(a_i (θ_j − b_i)), θ its
ability, b the task's difficulty, a its discrimination (how sharply success rises with ability; below 0, weaker
models solve it more often than stronger ones). With fewer than `MIN_MODELS_2PL` models a slope per task is not
identified from so few points, and the fit falls back to the 1PL (Rasch) model, a = 1 for every task. A model's
runs of a task are binomial trials of one probability: `k` successes of `n` runs.

Fitted by penalised joint maximum likelihood (scipy's L-BFGS-B with the exact gradient): the likelihood of every
(task, model) cell together with weak normal priors, θ ~ N(0, 1), b ~ N(0, 2.5²), a ~ N(1, 1²). The priors fix the
scale and keep tasks that every model solves (or none does) at finite difficulty, where plain JML runs off to
infinity; a's prior is centred on 1, not on 0, and allows negative values, so a reversed task can show as one.

Why not a library: `py-irt` 0.7.1 needs typer < 0.15 and rich < 14 (this project pins typer 0.29.1 and rich
15.0.0) and brings pyro-ppl and pandas; `girth` 0.8.0 (its last release, November 2021) needs only numpy and
scipy, but its 2PL marginal likelihood took 344 s on 500 tasks × 60 response vectors here, and its 2PL JML (1.7
s) returns no abilities and cannot pool a model's runs into one ability. This fit takes well under a second on
500 tasks × 20 models × 3 runs (bench/grade_tasks.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

MIN_MODELS_2PL = 5
PRIOR_SD_DIFFICULTY = 2.5
PRIOR_SD_DISCRIMINATION = 1.0
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Responses:
    """Successes `k` and runs `n` per task (rows) and model (columns); n = 0 where a model did not play a task."""
    task_ids: list[str]
    models: list[str]
    k: Floats
    n: Floats

    def solve_rate(self) -> Floats:
        """Per task: the mean over the models that played it of each model's share of runs solved."""
        played = self.n > 0
        share = np.divide(self.k, self.n, out=np.zeros_like(self.k), where=played)
        models = played.sum(axis=1)
        rate: Floats = np.divide(share.sum(axis=1), models, out=np.zeros(len(models)), where=models > 0)
        return rate


@dataclass(frozen=True)
class IrtFit:
    kind: str                  # 2PL | 1PL
    ability: Floats            # per model
    ability_se: Floats         # per model, from the fitted information (and the prior)
    difficulty: Floats         # per task
    discrimination: Floats     # per task (all 1 for the 1PL)
    discrimination_se: Floats  # per task, from the task's information given the abilities (and the prior); 0: 1PL
    converged: bool
    log_likelihood: float

    def probability(self, ability: Floats | None = None) -> Floats:
        """P(solve) per task (rows) at each ability (columns); the fitted models' by default."""
        theta = self.ability if ability is None else ability
        p: Floats = expit(self.discrimination[:, None] * (theta[None, :] - self.difficulty[:, None]))
        return p

    def information(self, ability: Floats | None = None) -> Floats:
        """Fisher information of each task summed over the abilities given (the fitted models' by default)."""
        p = self.probability(ability)
        info: Floats = (self.discrimination[:, None] ** 2 * p * (1 - p)).sum(axis=1)
        return info


def _unpack(x: Floats, tasks: int, models: int, two_pl: bool) -> tuple[Floats, Floats, Floats]:
    theta, b = x[:models], x[models:models + tasks]
    a = x[models + tasks:] if two_pl else np.ones(tasks)
    return theta, b, a


def _objective(x: Floats, k: Floats, n: Floats, two_pl: bool) -> tuple[float, Floats]:
    tasks, models = k.shape
    theta, b, a = _unpack(x, tasks, models, two_pl)
    gap = theta[None, :] - b[:, None]
    z = a[:, None] * gap
    log_lik = float((k * log_expit(z) + (n - k) * log_expit(-z)).sum())
    residual = k - n * expit(z)  # d log-likelihood / dz
    prior = (theta ** 2).sum() / 2 + (b ** 2).sum() / (2 * PRIOR_SD_DIFFICULTY ** 2)
    grad = [-(residual * a[:, None]).sum(axis=0) + theta,
            (residual.sum(axis=1) * a) + b / PRIOR_SD_DIFFICULTY ** 2]
    if two_pl:
        prior += ((a - 1) ** 2).sum() / (2 * PRIOR_SD_DISCRIMINATION ** 2)
        grad.append(-(residual * gap).sum(axis=1) + (a - 1) / PRIOR_SD_DISCRIMINATION ** 2)
    return -log_lik + float(prior), np.concatenate(grad)


def _logit(p: Floats) -> Floats:
    clipped = np.clip(p, 0.02, 0.98)
    out: Floats = np.log(clipped / (1 - clipped))
    return out


def fit_irt(responses: Responses, kind: str | None = None) -> IrtFit | None:
    """The 2PL fit (the 1PL under `MIN_MODELS_2PL` models, or when `kind` says); None under two models."""
    k, n = responses.k, responses.n
    models = len(responses.models)
    if models < 2 or not len(responses.task_ids):
        return None
    kind = kind or ("2PL" if models >= MIN_MODELS_2PL else "1PL")
    two_pl = kind == "2PL"
    with np.errstate(invalid="ignore", divide="ignore"):
        model_rate = np.where(n.sum(axis=0) > 0, k.sum(axis=0) / np.maximum(n.sum(axis=0), 1), 0.5)
    theta0 = _logit(model_rate)
    theta0 = (theta0 - theta0.mean()) / (theta0.std() or 1.0)
    start = [theta0, -_logit(responses.solve_rate())]
    if two_pl:
        start.append(np.ones(len(responses.task_ids)))
    # one BLAS thread: the optimiser's vectors are small, and on a busy machine threads waiting for a core made
    # the same fit ten times slower (2.4 s against 0.27 s, measured at a load of 10 on 2 cores)
    with threadpool_limits(1, "blas"):
        result = minimize(_objective, np.concatenate(start), args=(k, n, two_pl), jac=True, method="L-BFGS-B",
                          options={"maxiter": 2000, "gtol": 1e-6})
    theta, b, a = _unpack(np.asarray(result.x, dtype=np.float64), len(responses.task_ids), models, two_pl)
    gap = theta[None, :] - b[:, None]
    weight = n * expit(a[:, None] * gap) * expit(-a[:, None] * gap)  # n p (1 - p)
    info = (weight * a[:, None] ** 2).sum(axis=0) + 1.0  # + the prior's
    # each task's (b, a) information given the abilities; the variance of a is the (a, a) cell of its inverse
    i_bb = (weight * a[:, None] ** 2).sum(axis=1) + 1 / PRIOR_SD_DIFFICULTY ** 2
    i_aa = (weight * gap ** 2).sum(axis=1) + 1 / PRIOR_SD_DISCRIMINATION ** 2
    i_ab = (weight * a[:, None] * gap).sum(axis=1)
    a_se = np.sqrt(i_bb / (i_aa * i_bb - i_ab ** 2)) if two_pl else np.zeros(len(a))
    return IrtFit(kind, theta, 1 / np.sqrt(info), b, a.copy(), a_se, bool(result.success), -float(result.fun))


def ability_of(k: Floats, n: Floats, difficulty: Floats, discrimination: Floats, steps: int = 50) -> float:
    """One model's ability from its successes `k` of `n` runs on tasks of known parameters (the N(0, 1) prior's
    posterior mode, by Newton's method: the log-posterior is concave in θ)."""
    theta = 0.0
    for _ in range(steps):
        p = expit(discrimination * (theta - difficulty))
        gradient = float((discrimination * (k - n * p)).sum()) - theta
        curvature = float((n * discrimination ** 2 * p * (1 - p)).sum()) + 1.0
        step = gradient / curvature
        theta += step
        if abs(step) < 1e-8:
            break
    return theta

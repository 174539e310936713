"""Scores with their uncertainty, checked against agents of known skill (tests/grade/simulate.py): the intervals
cover each agent's true SR over the task population at about their stated rate, the pairwise test keeps its level
when two agents are equal and finds a real gap, and the exact formulas agree with scipy's.

Coverage bounds: over `SEEDS` independent releases an interval of true coverage c covers the truth
Binomial(SEEDS, c) times. A method within two points of its stated 95% (Wilson's interval, a percentile
bootstrap, at these sizes) then covers between the 0.1% quantile of Binomial(SEEDS, 0.93) and the 99.9% quantile
of Binomial(SEEDS, 0.97) times: 90% to 99% of 400, the band the assertions use, computed, not typed in."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from curation.grade.stats import (
    Outcome,
    holm,
    mcnemar_exact,
    model_scores,
    pair_tests,
    per_task,
    score,
    split_run,
    wilson,
)
from tests.grade.simulate import population_sr, world

SEEDS = 400
AGENTS = {"weak": -1.0, "fair": 0.0, "good": 0.7, "strong": 1.6}


def coverage_band(seeds: int = SEEDS) -> tuple[float, float]:
    return binom.ppf(0.001, seeds, 0.93) / seeds, binom.ppf(0.999, seeds, 0.97) / seeds


@given(st.integers(0, 300), st.integers(1, 300))
@settings(max_examples=200, deadline=None)
def test_wilson_is_scipys_wilson_interval(successes, n):
    successes = min(successes, n)
    ci = binomtest(successes, n).proportion_ci(0.95, method="wilson")
    assert wilson(successes, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


@given(st.integers(0, 400), st.integers(0, 400))
@settings(max_examples=200, deadline=None)
def test_exact_mcnemar_is_a_two_sided_binomial_test_on_the_discordant_tasks(a_only, b_only):
    expected = binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_by_its_definition(p_values):
    adjusted = holm(p_values)
    m = len(p_values)
    ranked = sorted(p_values)
    for p, q in zip(p_values, adjusted, strict=True):
        # Holm: the largest, over the p-values up to p's rank, of (m - rank) x p_(rank), capped at 1
        rank = ranked.index(p)
        assert q == pytest.approx(min(1.0, max((m - i) * ranked[i] for i in range(rank + 1))))
        assert p <= q + 1e-12


def test_a_run_mark_names_the_model_and_its_run():
    assert split_run("qwen#2") == ("qwen", "2")
    assert split_run("qwen") == ("qwen", "1") and split_run("#2") == ("#2", "1") and split_run("a#") == ("a#", "1")


def _coverage(runs: int, tasks: int) -> tuple[dict[str, float], dict[str, float]]:
    """Per agent: the share of releases whose SR interval covers its population SR, and that of a naive Wilson
    interval over episodes (runs counted as independent), for the cluster case."""
    truth = {m: population_sr(t) for m, t in AGENTS.items()}
    hits = dict.fromkeys(AGENTS, 0)
    naive = dict.fromkeys(AGENTS, 0)
    for seed in range(SEEDS):
        outcomes = world(seed, tasks, AGENTS, runs).outcomes()
        for model in AGENTS:
            mine = [o for o in outcomes if o.model == model]
            interval = score(model, "all", "sr", per_task(mine, "sr"), seed)
            assert interval is not None and interval.method == ("wilson" if runs == 1 else "task bootstrap")
            hits[model] += interval.low <= truth[model] <= interval.high
            low, high = wilson(int(sum(o.sr for o in mine)), len(mine))
            naive[model] += low <= truth[model] <= high
    return {m: h / SEEDS for m, h in hits.items()}, {m: h / SEEDS for m, h in naive.items()}


def test_intervals_cover_the_true_sr_at_their_stated_rate_one_run_per_task():
    low, high = coverage_band()
    covered, _ = _coverage(runs=1, tasks=60)
    assert all(low <= c <= high for c in covered.values()), (covered, (low, high))


def test_with_several_runs_the_task_bootstrap_covers_and_counting_runs_as_independent_does_not():
    low, high = coverage_band()
    covered, naive = _coverage(runs=5, tasks=60)
    assert all(low <= c <= high for c in covered.values()), (covered, (low, high))
    # runs of a task share its difficulty: an interval over episodes is too narrow, on every agent but the ends'
    assert np.mean(list(naive.values())) < np.mean(list(covered.values())) - 0.02, (naive, covered)


def test_the_paired_test_keeps_its_level_between_equal_agents_and_finds_a_real_gap():
    """Two agents of one skill: the test rejects at 5% no more often than a 5% test may (its 99.9% bound over the
    seeds); one agent 1.5 logits better (about 30 points of SR): it is found nearly always, and the interval of the
    difference covers the true difference of population SR at the stated rate."""
    equal, apart, covered = 0, 0, 0
    gap = population_sr(1.0) - population_sr(-0.5)
    for seed in range(SEEDS):
        same = pair_tests(world(seed, 80, {"a": 0.3, "b": 0.3}).outcomes(), seed)[0]
        assert same.test == "exact McNemar"
        equal += same.p_value < 0.05
        diff = pair_tests(world(seed, 80, {"a": 1.0, "b": -0.5}).outcomes(), seed)[0]
        apart += diff.p_value < 0.05 and diff.difference > 0
        covered += diff.low <= gap <= diff.high
    assert equal <= binom.ppf(0.999, SEEDS, 0.05), equal
    assert apart >= 0.9 * SEEDS, apart
    low, high = coverage_band()
    assert low <= covered / SEEDS <= high, covered


def test_the_paired_bootstrap_with_several_runs_keeps_its_level():
    rejected = 0
    for seed in range(SEEDS // 2):
        pair = pair_tests(world(seed, 60, {"a": 0.3, "b": 0.3}, runs=3).outcomes(), seed)[0]
        assert pair.test == "paired bootstrap" and pair.a_only is None
        rejected += pair.p_value < 0.05
    assert rejected <= binom.ppf(0.999, SEEDS // 2, 0.05), rejected


def test_scores_are_seeded_and_a_model_does_not_move_anothers_interval():
    outcomes = world(7, 60, AGENTS, runs=2).outcomes()
    first = model_scores(outcomes, seed=1)
    assert model_scores(outcomes, seed=1) == first
    assert model_scores(outcomes, seed=2) != first  # the bootstrap draws do depend on the seed
    without = model_scores([o for o in outcomes if o.model != "strong"], seed=1)
    assert without == [i for i in first if i.model != "strong"]
    scopes = {i.scope for i in first if i.model == "weak"}
    assert {"all", "L1", "L2", "L3", "L1/gui_like", "L2/feature_analysis"} <= scopes


def test_ns_and_wr_intervals_are_over_tasks_and_skip_unknown_values():
    outcomes = [Outcome("m", "1", f"t{i}", "L2", "feature_analysis", float(i % 2), ns=float(i),
                        wr=None if i < 5 else 0.5) for i in range(20)]
    by_metric = {i.metric: i for i in model_scores(outcomes) if i.scope == "all"}
    assert by_metric["ns"].tasks == 20 and by_metric["wr"].tasks == 15
    assert by_metric["ns"].estimate == pytest.approx(9.5)
    assert by_metric["ns"].low < by_metric["ns"].estimate < by_metric["ns"].high
    assert by_metric["wr"].low == by_metric["wr"].high == pytest.approx(0.5)  # every known WR is 0.5
    assert by_metric["ns"].method == "task bootstrap" and by_metric["sr"].method == "wilson"


def test_graded_runs_of_a_model_are_pooled_into_one_model():
    from curation.grade.evidence import outcomes_of

    rows = [{"model": f"qwen#{run}", "task_id": f"t{t}", "tier": "L1", "subcategory": "gui_like",
             "sr": float((t + run) % 2), "ns": 3, "wr": None} for run in (1, 2) for t in range(10)]
    rows.append({**rows[0], "task_id": "t99", "sr": None})  # a grade without SR says nothing
    outcomes = outcomes_of(rows)
    assert {(o.model, o.run) for o in outcomes} == {("qwen", "1"), ("qwen", "2")} and len(outcomes) == 20
    sr = next(i for i in model_scores(outcomes) if i.scope == "all" and i.metric == "sr")
    # every task solved in one run of two: SR 50% on each, the runs' mean; no task-to-task spread at all
    assert (sr.tasks, sr.runs, sr.method, sr.estimate, sr.low, sr.high) == (10, 2, "task bootstrap", 0.5, 0.5, 0.5)

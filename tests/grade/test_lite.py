"""A Lite subset chosen from the evidence of agents of known skill (tests/grade/simulate.py): stratified as stated,
seeded, and its estimate of an agent's full-release SR stays within the error it states, both for the graded agents
left out in turn and for agents it never saw."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from curation.grade.lite import SELECTIONS, allocate, choose_lite
from curation.grade.task_table import Evidence
from tests.grade.simulate import world

GRADED = {f"graded{i}": float(t) for i, t in enumerate(np.linspace(-2, 2, 12))}


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.integers(1, 40), min_size=1, max_size=8),
       st.integers(0, 200))
def test_allocation_is_proportional_capped_and_gives_each_stratum_one_while_n_allows(sizes, n):
    out = allocate(sizes, n)
    total = sum(sizes.values())
    assert sum(out.values()) == min(n, total)
    assert all(0 <= out[s] <= sizes[s] for s in sizes)
    if n >= len(sizes):
        assert all(out[s] >= 1 for s in sizes)
    if n <= total:
        # no stratum is further than one task (plus the one-each floor) from its proportional share, unless capped
        assert all(out[s] <= n * sizes[s] / total + 2 or out[s] == 1 for s in sizes)


def _split(evidence: Evidence, models: set[str]) -> Evidence:
    return Evidence(evidence.tasks, [e for e in evidence.episodes if e.model in models])


def test_the_lite_estimate_stays_within_its_stated_error():
    """Twelve agents graded, twenty more never seen: each new agent's SR on the whole release, estimated from its
    Lite results alone, is within the stated error for nearly all of them (the bound is 1.96 × the
    leave-one-model-out RMSE, a 95% bound: 17 of 20 at least is what a 95% bound gives with 98% probability)."""
    rng = np.random.default_rng(0)
    unseen = {f"new{i}": float(t) for i, t in enumerate(rng.uniform(-2, 2, 20))}
    w = world(11, 240, {**GRADED, **unseen}, runs=3)
    choice = choose_lite(_split(w.evidence, set(GRADED)), 48, seed=0)
    assert len(choice.task_ids) == 48 and choice.estimated_error is not None
    assert choice.selection in SELECTIONS and "stated error" in choice.method
    print(choice.method)
    # stratified: every sub-category in proportion (12 of each 6: 40 tasks per sub-category, 8 each)
    assert Counter(choice.strata[t] for t in choice.task_ids) == Counter(dict.fromkeys(set(choice.strata.values()), 8))
    within = 0
    full = _split(w.evidence, set(unseen)).responses()
    for j in range(len(full.models)):
        played = {t: (float(full.k[i, j]), float(full.n[i, j])) for i, t in enumerate(full.task_ids)}
        truth = float(np.mean([k / n for k, n in played.values()]))
        estimate = choice.estimate({t: played[t] for t in choice.task_ids})
        within += abs(estimate - truth) <= choice.estimated_error
    print("unseen within the stated error:", within, "of 20")
    assert within >= 17, (within, choice.estimated_error)
    # and the graded agents, each left out in turn
    errors = [abs(h.estimates[f"{choice.selection} / {choice.estimator}"] - h.full_sr) for h in choice.validation]
    assert len(errors) == len(GRADED) and sum(e <= choice.estimated_error for e in errors) >= 10
    assert choice.estimated_error < 0.12


def test_the_choice_is_seeded_and_needs_three_models_to_state_an_error():
    w = world(4, 120, dict(list(GRADED.items())[:6]), runs=2)
    first = choose_lite(w.evidence, 30, seed=1)
    assert choose_lite(w.evidence, 30, seed=1).task_ids == first.task_ids
    two = choose_lite(_split(w.evidence, {"graded0", "graded1"}), 30, seed=1)
    assert two.estimated_error is None and "cannot be measured" in two.method and len(two.task_ids) == 30
    one = choose_lite(_split(w.evidence, {"graded0"}), 30, seed=1)
    assert "at random" in one.method and len(one.task_ids) == 30
    assert choose_lite(w.evidence, 500, seed=1).task_ids == sorted(w.task_ids)  # N past the release: every task

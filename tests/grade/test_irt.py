"""Tasks judged by how agents of known skill answered them (tests/grade/simulate.py): the IRT fit ranks the agents
in their true order (and a fit of the same answers with the agents' names shuffled does not), recovers the tasks'
difficulty, and the flags find the planted defects while leaving the good tasks mostly alone, far better than
flags thrown at random."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad
from scipy.stats import spearmanr

from curation.grade.irt import MIN_MODELS_2PL, Responses, _objective, ability_of, fit_irt
from curation.grade.task_table import FLAGS, EpisodeEvidence, Evidence, TaskFacts, analyse_tasks
from tests.grade.simulate import DEFECTS, world

EIGHT = {f"agent{i}": float(t) for i, t in enumerate(np.linspace(-2, 2, 8))}
EXPECTED_FLAG = {"wrong_key": "suspect_key", "unmeetable": "common_unmet_check", "reversed": "negative_discrimination",
                 "idle": "idle_passes"}


@given(st.integers(0, 10_000), st.booleans())
@settings(max_examples=25, deadline=None)
def test_the_fits_gradient_is_the_gradient_of_its_objective(seed, two_pl):
    rng = np.random.default_rng(seed)
    tasks, models = 7, 5
    n = rng.integers(0, 4, (tasks, models)).astype(float)
    k = np.floor(n * rng.random((tasks, models)))
    x = rng.normal(0, 1, models + tasks + (tasks if two_pl else 0))
    error = check_grad(lambda v: _objective(v, k, n, two_pl)[0], lambda v: _objective(v, k, n, two_pl)[1], x)
    assert error < 1e-4 * max(1.0, float(np.abs(_objective(x, k, n, two_pl)[1]).max()))


def test_abilities_rank_the_agents_in_their_true_order_and_shuffled_names_do_not():
    ranked, shuffled = [], []
    for seed in range(8):
        responses = world(seed, 150, EIGHT, runs=3).evidence.responses()
        fit = fit_irt(responses)
        assert fit is not None and fit.kind == "2PL" and fit.converged
        truth = [EIGHT[m] for m in responses.models]
        ranked.append(spearmanr(fit.ability, truth).statistic)
        # the baseline: the same answers, each agent's column under another agent's name
        order = np.random.default_rng(seed).permutation(len(truth))
        shuffled.append(spearmanr(fit.ability, np.array(truth)[order]).statistic)
    assert min(ranked) >= 0.95, ranked
    assert abs(float(np.mean(shuffled))) < 0.4 and float(np.mean(shuffled)) < min(ranked) - 0.5, shuffled


def test_difficulty_is_recovered_and_few_models_fall_back_to_the_1pl():
    w = world(3, 200, EIGHT, runs=3)
    responses = w.evidence.responses()
    fit = fit_irt(responses)
    assert fit is not None
    truth = w.difficulty[[w.task_ids.index(t) for t in responses.task_ids]]  # rows are in task id order
    assert spearmanr(fit.difficulty, truth).statistic > 0.85
    few = dict(list(EIGHT.items())[:MIN_MODELS_2PL - 1])
    small = fit_irt(world(3, 100, few, runs=3).evidence.responses())
    assert small is not None and small.kind == "1PL" and set(small.discrimination) == {1.0}
    assert fit_irt(world(3, 50, {"alone": 0.0}).evidence.responses()) is None


def test_a_new_models_ability_from_known_task_parameters_is_where_the_fit_puts_it():
    w = world(5, 300, EIGHT, runs=3)
    responses = w.evidence.responses()
    fit = fit_irt(responses)
    assert fit is not None
    for j in range(len(responses.models)):
        alone = ability_of(responses.k[:, j], responses.n[:, j], fit.difficulty, fit.discrimination)
        assert abs(alone - fit.ability[j]) < 0.1


def _flag_scores(seeds: range, planted: int) -> tuple[int, int, int, int, dict[str, int]]:
    """(true positives, false positives, planted, good tasks, misses per defect) of the expected flags."""
    tp = fp = planted_total = good = 0
    missed = dict.fromkeys(DEFECTS, 0)
    for seed in seeds:
        w = world(seed, 120, EIGHT, runs=3, planted=planted)
        for row in analyse_tasks(w.evidence).rows:
            defect = w.planted.get(row.task_id)
            if defect:
                planted_total += 1
                found = EXPECTED_FLAG[defect] in row.flags
                tp += found
                missed[defect] += not found
            else:
                good += 1
                fp += bool(row.flags)
    return tp, fp, planted_total, good, missed


def test_planted_defects_are_flagged_and_good_tasks_mostly_are_not():
    tp, fp, planted, good, missed = _flag_scores(range(6), planted=2)
    recall, precision = tp / planted, tp / max(tp + fp, 1)
    # a random flagger that flags as many tasks: its precision is the share of planted tasks
    random_precision = planted / (planted + good)
    print(f"flags: recall {recall:.0%}, precision {precision:.0%} (random flags: {random_precision:.0%}); "
          f"false positives {fp} of {good} good tasks; missed {missed}")
    assert recall >= 0.85 and all(m <= 2 for m in missed.values()), missed
    assert fp <= 0.02 * good
    assert precision >= 0.9 > random_precision + 0.5


def test_each_flag_rule_is_stated_and_the_table_counts_what_was_played():
    assert len({f.name for f in FLAGS}) == len(FLAGS) and all(len(f.rule) > 30 for f in FLAGS)
    w = world(9, 30, EIGHT, runs=2, planted=1)
    analysis = analyse_tasks(w.evidence)
    assert {r.task_id for r in analysis.rows} == set(w.task_ids)
    assert all(r.models == len(EIGHT) and r.episodes == 2 * len(EIGHT) for r in analysis.rows)
    wrong_key = next(r for r in analysis.rows if w.planted.get(r.task_id) == "wrong_key")
    assert wrong_key.wrong_answer is not None and wrong_key.wrong_answer != wrong_key.answer_key
    unmeetable = next(r for r in analysis.rows if w.planted.get(r.task_id) == "unmeetable")
    assert unmeetable.unmet_check == "eval_report 3" and "unsolved" in unmeetable.flags
    assert analysis.as_dict()["flag_counts"]["common_unmet_check"] >= 1


def test_a_suspect_key_needs_most_models_to_agree_on_one_wrong_option():
    facts = {"q_1": TaskFacts("q_1", "L2", "feature_analysis", "label", "A", "passes")}

    def flags(answers: list[str]) -> list[str]:
        episodes = [EpisodeEvidence(f"m{i}", "1", "q_1", a == "A", a) for i, a in enumerate(answers)]
        return analyse_tasks(Evidence(facts, episodes)).rows[0].flags

    assert "suspect_key" in flags(["B", "B", "B", "C"])        # 3 of 4 models: B
    assert "suspect_key" not in flags(["B", "B", "C", "D"])    # 2 of 4
    assert "suspect_key" not in flags(["B", "B"])              # fewer than 3 models answered
    assert "suspect_key" not in flags(["A", "A", "A", "B"])    # the key is what they answer


def test_responses_hold_every_run_of_every_model():
    episodes = [EpisodeEvidence(m, r, t, (m, r) != ("x", "2")) for m in "xy" for r in "12" for t in ("t1", "t2")]
    facts = {t: TaskFacts(t, "L1", "gui_like", "platform") for t in ("t1", "t2")}
    responses: Responses = Evidence(facts, episodes).responses()
    assert responses.models == ["x", "y"] and responses.n.tolist() == [[2, 2], [2, 2]]
    assert responses.k.tolist() == [[1, 2], [1, 2]] and responses.solve_rate().tolist() == [0.75, 0.75]

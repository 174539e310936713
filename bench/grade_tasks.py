"""Time of the per-task analysis (IRT fit, the table, the flags) for 500 tasks × 20 models × 3 runs of generated
responses, beside a baseline measured in the same run: the plain solve-rate table (the same episodes counted into
successes and runs per task and model, and each task's solve rate). Also timed: the scores with intervals and the
190 pairwise tests (`stats.py`), and a Lite choice of 100 tasks with its leave-one-model-out validation.

    .venv/bin/python bench/grade_tasks.py [--tasks 500 --models 20 --runs 3 --repeat 3]

Responses come from a known 2PL model (abilities evenly spread over −2..2, difficulty N(0, 1), discrimination
lognormal(0, 0.3)); 10 tasks are reversed (discrimination −1.5), so the flags have something to find. Goal: seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.grade.lite import choose_lite  # noqa: E402
from curation.grade.stats import Outcome, model_scores, pair_tests  # noqa: E402
from curation.grade.task_table import EpisodeEvidence, Evidence, TaskFacts, analyse_tasks  # noqa: E402

SUBS = (("L1", "gui_like", "platform"), ("L2", "feature_analysis", "label"), ("L3", "moderation", "platform"))


def generate(tasks: int, models: int, runs: int, seed: int = 0) -> Evidence:
    rng = np.random.default_rng(seed)
    a, b = rng.lognormal(0, 0.3, tasks), rng.normal(0, 1, tasks)
    a[:10] = -1.5
    theta = np.linspace(-2, 2, models)
    solved = rng.random((tasks, models, runs)) < 1 / (1 + np.exp(-a[:, None, None] * (theta[None, :, None]
                                                                                        - b[:, None, None])))
    wrong = rng.choice(list("BCD"), size=solved.shape)
    facts = {f"t{i}": TaskFacts(f"t{i}", *SUBS[i % 3], "A" if SUBS[i % 3][2] == "label" else None, "passes")
             for i in range(tasks)}
    episodes = []
    for i in range(tasks):
        label = SUBS[i % 3][2] == "label"
        for j in range(models):
            for r in range(runs):
                ok = bool(solved[i, j, r])
                episodes.append(EpisodeEvidence(f"m{j:02d}", str(r + 1), f"t{i}", ok,
                                                ("A" if ok else str(wrong[i, j, r])) if label else None,
                                                None if label else (() if ok else ("eval_like 1",)), 3))
    return Evidence(facts, episodes)


def timed(work: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    evidence = generate(args.tasks, args.models, args.runs)
    print(f"{args.tasks} tasks × {args.models} models × {args.runs} runs = {len(evidence.episodes):,} episodes; "
          f"median of {args.repeat} runs each")
    baseline, _ = timed(lambda: evidence.responses().solve_rate(), args.repeat)
    analysis_s, analysis = timed(lambda: analyse_tasks(evidence), args.repeat)
    counts = analysis.as_dict()["flag_counts"]
    print(f"  baseline, the plain solve-rate table: {baseline:.3f} s")
    print(f"  per-task analysis ({analysis.irt} fit, table, flags): {analysis_s:.3f} s = {analysis_s / baseline:.1f} × "
          f"the baseline; flagged: {', '.join(f'{k} {v}' for k, v in counts.items() if v) or 'none'}")
    outcomes = [Outcome(e.model, e.run, e.task_id, evidence.tasks[e.task_id].tier,
                        evidence.tasks[e.task_id].subcategory, float(e.solved)) for e in evidence.episodes]
    scores_s, scores = timed(lambda: (model_scores(outcomes), pair_tests(outcomes)), 1)
    print(f"  scores with intervals and pairwise tests ({len(scores[0])} intervals, {len(scores[1])} pairs): "
          f"{scores_s:.3f} s = {scores_s / baseline:.1f} × the baseline")
    lite_s, lite = timed(lambda: choose_lite(evidence, 100, 0), 1)
    print(f"  Lite choice of 100 with leave-one-model-out ({args.models + 1} fits): {lite_s:.3f} s = "
          f"{lite_s / baseline:.1f} × the baseline\n    {lite.method}")


if __name__ == "__main__":
    main()

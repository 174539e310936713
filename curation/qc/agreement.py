"""Agreement between annotators on the same items, for the calibration meeting.

Answers are categories (a tier, a sub-category, a chosen option). A missing answer is missing,
never a category of its own. When too few items were answered by two or more people, the
figure is None ("not enough overlap"), never NaN.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import numpy as np

Answers = dict[str, dict[str, str | None]]  # annotator -> item -> answer (None: not answered)


@dataclass(frozen=True)
class Agreement:
    alpha: float | None                     # Krippendorff's alpha, nominal, over all annotators
    kappa: dict[tuple[str, str], float | None]  # Cohen's kappa per pair of annotators
    with_majority: dict[str, float | None]  # each annotator's share of answers equal to the item's majority
    disputed: list[str]                     # items with disagreement, most disputed first
    comparable_items: int                   # items answered by at least two annotators


def _items(answers: Answers) -> list[str]:
    return sorted({item for per in answers.values() for item in per})


def krippendorff_alpha(answers: Answers) -> float | None:
    """Nominal alpha; None when fewer than two items have two answers or only one category occurs."""
    import krippendorff

    people, items = sorted(answers), _items(answers)
    values = sorted({a for per in answers.values() for a in per.values() if a is not None})
    pairable = [i for i in items if sum(answers[p].get(i) is not None for p in people) >= 2]
    if len(pairable) < 2 or len(values) < 2:
        return None
    code = {v: n for n, v in enumerate(values)}
    data = np.array([[code[a] if (a := answers[p].get(i)) is not None else np.nan for i in items] for p in people],
                    dtype=float)
    return round(float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), 4)


def cohen_kappa(first: dict[str, str | None], second: dict[str, str | None]) -> float | None:
    """Kappa over the items both answered; None with fewer than two such items or no variation."""
    pairs = [(x, y) for i in sorted(set(first) & set(second)) if (x := first[i]) is not None
             and (y := second[i]) is not None]
    if len(pairs) < 2:
        return None
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    labels = sorted(set(a) | set(b))
    observed = sum(x == y for x, y in pairs) / len(pairs)
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[label] * count_b[label] for label in labels) / len(pairs) ** 2
    if expected == 1.0:
        return None  # both always gave the same single answer: agreement is undefined
    return round((observed - expected) / (1 - expected), 4)


def agreement(answers: Answers) -> Agreement:
    people, items = sorted(answers), _items(answers)
    majority: dict[str, str] = {}
    spread: dict[str, float] = {}
    comparable = 0
    for item in items:
        given = [a for p in people if (a := answers[p].get(item)) is not None]
        if len(given) < 2:
            continue
        comparable += 1
        counts = Counter(given).most_common()
        if len(counts) == 1 or counts[0][1] > counts[1][1]:
            majority[item] = counts[0][0]
        spread[item] = 1 - counts[0][1] / len(given)
    with_majority: dict[str, float | None] = {}
    for person in people:
        judged = [i for i in majority if answers[person].get(i) is not None]
        with_majority[person] = (round(sum(answers[person][i] == majority[i] for i in judged) / len(judged), 4)
                                 if judged else None)
    disputed = sorted((i for i, s in spread.items() if s > 0), key=lambda i: (-spread[i], i))
    return Agreement(krippendorff_alpha(answers), {(a, b): cohen_kappa(answers[a], answers[b])
                                                   for a, b in combinations(people, 2)},
                     with_majority, disputed, comparable)

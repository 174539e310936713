"""Cross-annotator review, the assignment part: every task version that passed the shortcut
filter goes to exactly one reviewer who is not its author.

Deterministic for a seed, load-balanced (the least-loaded eligible reviewer takes the next
task; with three or more reviewers who author alike, loads differ by at most one), and stable:
a task version keeps the reviewer it was given, so re-running changes nothing and new tasks
only add to the loads. A new version of a task may go to someone else.
"""

from __future__ import annotations

import hashlib

from curation.core.errors import UsageError

TaskKey = tuple[str, int]  # (task_id, version)


def _rank(seed: int, *parts: object) -> str:
    return hashlib.sha256(":".join(str(p) for p in (seed, *parts)).encode()).hexdigest()


def assign_reviewers(tasks: dict[TaskKey, str], reviewers: list[str], seed: int,
                     previous: dict[TaskKey, str] | None = None) -> dict[TaskKey, str]:
    """`tasks` maps each task version to its author; returns task version -> reviewer."""
    reviewers = sorted(set(reviewers))
    if len(reviewers) < 2:
        raise UsageError("review needs at least two reviewers, so that nobody reviews their own task")
    assigned = {key: who for key, who in (previous or {}).items()
                if key in tasks and who in reviewers and who != tasks[key]}
    load = {r: sum(1 for who in assigned.values() if who == r) for r in reviewers}
    for key in sorted((k for k in tasks if k not in assigned), key=lambda k: _rank(seed, *k)):
        eligible = [r for r in reviewers if r != tasks[key]]
        if not eligible:
            raise UsageError(f"{key[0]} v{key[1]}: every reviewer is its author")
        chosen = min(eligible, key=lambda r: (load[r], _rank(seed, *key, r)))
        assigned[key] = chosen
        load[chosen] += 1
    return assigned

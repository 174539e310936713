"""A task version's life cycle: the one place that says which states exist and how a task
may move between them. Every stage moves tasks only through `move`, and every move is a row
of `task_transitions` (task, version, from, to, reason, who, run): the path a task took stays
readable, and nothing is ever deleted ("deleted" is a state with its reason and author).

    authored ─┬─▶ needs_fix            (a fix is a new version, which starts at authored)
    imported ─┘  (a task from an existing release; validation decides)
              └─▶ valid ─┬─▶ shortcut_discarded ◀─┐  (a later filter configuration may
                         └─▶ shortcut_passed ─────┘   decide the other way)
                                 ├─▶ reviewed_ok
                                 └─▶ escalated ─▶ kept | deleted | revised
"""

from __future__ import annotations

from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.errors import CurationError
from curation.core.stage import StageRun

STARTS = frozenset({"authored", "imported"})
TRANSITIONS: dict[str, frozenset[str]] = {
    "authored": frozenset({"needs_fix", "valid"}),
    "imported": frozenset({"needs_fix", "valid"}),
    "needs_fix": frozenset(),
    "valid": frozenset({"shortcut_discarded", "shortcut_passed"}),
    "shortcut_discarded": frozenset({"shortcut_passed"}),
    "shortcut_passed": frozenset({"shortcut_discarded", "reviewed_ok", "escalated"}),
    "reviewed_ok": frozenset(),
    "escalated": frozenset({"kept", "deleted", "revised"}),
    "kept": frozenset(),
    "deleted": frozenset(),
    "revised": frozenset(),
}
STATES = tuple(TRANSITIONS)


class LifecycleError(CurationError):
    """A move the life cycle does not allow; the message names the task, the states and why."""


def state_of(catalog: Catalog, task_id: str, version: int) -> str | None:
    return catalog.scalar("SELECT to_state FROM task_transitions WHERE task_id = ? AND version = ? "
                          "ORDER BY seq DESC LIMIT 1", [task_id, version])


def move(run: StageRun, task_id: str, version: int, to_state: str, reason: str | None = None,
         who: str | None = None) -> bool:
    """Move a task version to `to_state`; False (and nothing written) when it is there already."""
    if to_state not in TRANSITIONS:
        raise LifecycleError(f"{task_id} v{version}: {to_state!r} is not a state ({', '.join(STATES)})")
    catalog = run.db
    current = state_of(catalog, task_id, version)
    if current == to_state:
        return False
    allowed = TRANSITIONS[current] if current is not None else STARTS
    if to_state not in allowed:
        raise LifecycleError(f"{task_id} v{version} is {current or 'new'}: it cannot become {to_state} "
                             f"(from there: {', '.join(sorted(allowed)) or 'nothing; it is final'})")
    seq = catalog.scalar("SELECT coalesce(max(seq), 0) + 1 FROM task_transitions WHERE task_id = ? "
                         "AND version = ?", [task_id, version])
    catalog.insert("task_transitions", {"task_id": task_id, "version": version, "seq": seq,
                                        "from_state": current, "to_state": to_state, "reason": reason,
                                        "who": who, "run_id": run.run_id, "moved_at": now()})
    return True


def path_of(catalog: Catalog, task_id: str) -> list[dict[str, Any]]:
    """Every move of every version of a task, in order."""
    return catalog.rows("SELECT * FROM task_transitions WHERE task_id = ? ORDER BY version, seq", [task_id])

"""A task version's life cycle: the only record of a task's state, and the one place that says
which states exist and how a task may move between them. Every stage moves tasks only through
`move`, and every move is a row of `task_transitions` (task, version, from, to, reason, who, run):
the path a task took stays readable, and nothing is ever deleted ("deleted" is a state with its
reason and author). No versioned row is changed in place; a change of a task is a new version.

    authored ─┬─▶ needs_fix            (a fix is a new version, which starts at authored)
    imported ─┘  (a task from an existing release; validation decides)
              └─▶ valid ─┬─▶ shortcut_discarded ◀─┐  (only when another filter configuration
                         │                         │   is adopted as the one of record)
                         ├─▶ shortcut_passed ─────┘
                         │       ├─▶ reviewed_ok
                         │       └─▶ escalated ─▶ kept | deleted | revised
                         └─▶ kept  (inherited: an imported release's task accepted as it was,
                                    `curate qc accept-imported`)

    reviewed_ok | kept ─▶ deleted | revised   (a released task after the group's audit of how models
                                               answered it, `curate qc audit-tasks import`)

Two moves cut across: the task rules may send any live version to `needs_fix` (a defect found
after the state was set, e.g. by a rule that did not exist then); an imported version in
`needs_fix` whose rules pass again goes back to `valid`. A task whose sub-category changed is
renamed: its old id is `retired` in the same transaction that starts the new id.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.errors import CurationError
from curation.core.stage import StageRun

STARTS = frozenset({"authored", "imported"})
FINAL_OUT = frozenset({"deleted", "revised", "retired"})  # versions that left the flow for good
TRANSITIONS: dict[str, frozenset[str]] = {
    "authored": frozenset({"needs_fix", "valid"}),
    "imported": frozenset({"needs_fix", "valid"}),
    "needs_fix": frozenset({"valid"}),
    "valid": frozenset({"shortcut_discarded", "shortcut_passed", "kept"}),
    "shortcut_discarded": frozenset({"shortcut_passed"}),
    "shortcut_passed": frozenset({"shortcut_discarded", "reviewed_ok", "escalated"}),
    "reviewed_ok": frozenset({"deleted", "revised"}),
    "escalated": frozenset({"kept", "deleted", "revised"}),
    "kept": frozenset({"deleted", "revised"}),
    "deleted": frozenset(),
    "revised": frozenset(),
    "retired": frozenset(),
}
# the task rules reach every version still in the flow; a rename retires any version
for _state in TRANSITIONS:
    if _state not in FINAL_OUT | {"needs_fix"}:
        TRANSITIONS[_state] = TRANSITIONS[_state] | {"needs_fix"}
    if _state != "retired":
        TRANSITIONS[_state] = TRANSITIONS[_state] | {"retired"}
STATES = tuple(TRANSITIONS)
RELEASED_STATES = ("kept", "reviewed_ok")


class LifecycleError(CurationError):
    """A move the life cycle does not allow; the message names the task, the states and why."""


def state_of(catalog: Catalog, task_id: str, version: int) -> str | None:
    return catalog.scalar("SELECT to_state FROM task_transitions WHERE task_id = ? AND version = ? "
                          "ORDER BY seq DESC LIMIT 1", [task_id, version])


def _checked(task_id: str, version: int, current: str | None, to_state: str) -> bool:
    """Whether the move changes anything; LifecycleError when the lifecycle does not allow it."""
    if to_state not in TRANSITIONS:
        raise LifecycleError(f"{task_id} v{version}: {to_state!r} is not a state ({', '.join(STATES)})")
    if current == to_state:
        return False
    allowed = TRANSITIONS[current] if current is not None else STARTS
    if to_state not in allowed:
        raise LifecycleError(f"{task_id} v{version} is {current or 'new'}: it cannot become {to_state} "
                             f"(from there: {', '.join(sorted(allowed)) or 'nothing; it is final'})")
    return True


def move(run: StageRun, task_id: str, version: int, to_state: str, reason: str | None = None,
         who: str | None = None) -> bool:
    """Move a task version to `to_state`; False (and nothing written) when it is there already."""
    return bool(move_many(run, [(task_id, version, to_state, reason, who)]))


Move = tuple[str, int, str, str | None, str | None]  # task id, version, to state, reason, who


def move_many(run: StageRun, moves: list[Move]) -> list[Move]:
    """The moves `move` would make one by one, read and written in one go (a stage that moves thousands
    of tasks spends milliseconds, not a query pair per task); the ones made, in order. All or nothing:
    one move the lifecycle refuses refuses the lot before anything is written."""
    if not moves:
        return []
    catalog = run.db
    keys = pa.table({"task_id": [m[0] for m in moves], "version": pa.array([m[1] for m in moves], pa.int32())})
    with catalog.staged(wanted=keys):
        last = {(r[0], r[1]): (r[2], r[3]) for r in catalog.con.execute(
            "SELECT t.task_id, t.version, arg_max(t.to_state, t.seq), max(t.seq) FROM task_transitions t "
            "SEMI JOIN wanted w ON w.task_id = t.task_id AND w.version = t.version GROUP BY ALL").fetchall()}
    made, rows, moved_at = [], [], now()
    for task_id, version, to_state, reason, who in moves:
        current, seq = last.get((task_id, version), (None, 0))
        if not _checked(task_id, version, current, to_state):
            continue
        last[(task_id, version)] = (to_state, seq + 1)
        rows.append((task_id, version, seq + 1, current, to_state, reason, who, run.run_id, moved_at))
        made.append((task_id, version, to_state, reason, who))
    if rows:
        columns = ("task_id", "version", "seq", "from_state", "to_state", "reason", "who", "run_id", "moved_at")
        table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
        with catalog.staged(moved=table):
            catalog.insert_staged("task_transitions", "moved", columns)
    return made


def path_of(catalog: Catalog, task_id: str) -> list[dict[str, Any]]:
    """Every move of every version of a task, in order."""
    return catalog.rows("SELECT * FROM task_transitions WHERE task_id = ? ORDER BY version, seq", [task_id])


def inherited_tasks(catalog: Catalog) -> dict[str, str]:
    """Latest task versions kept because an imported release was accepted as it was (task id ->
    the reason recorded, which names the release), not because they went through this team's QC."""
    return {r[0]: r[1] for r in catalog.con.execute("""
        SELECT x.task_id, x.reason FROM task_transitions x JOIN latest_tasks t
          ON t.task_id = x.task_id AND t.version = x.version
        WHERE x.to_state = 'kept' AND x.from_state = 'valid' ORDER BY 1""").fetchall()}


# Every task's latest version (all its columns) with its state, since when, and, for `needs_fix`, the reason it
# was sent back; an id retired by a rename is not a task of its own (its successor is). A query, so that
# `curation.api` can take the same rows as Arrow.
LATEST_STATES_SQL = """
    SELECT t.*, s.state, s.since,
           (SELECT x.reason FROM task_transitions x WHERE x.task_id = t.task_id AND x.version = t.version
            AND x.to_state = 'needs_fix' ORDER BY x.seq DESC LIMIT 1) AS fix_reason
    FROM latest_tasks t JOIN task_states s ON s.task_id = t.task_id AND s.version = t.version
    WHERE s.state <> 'retired' ORDER BY t.task_id"""


def latest_states(catalog: Catalog) -> list[dict[str, Any]]:
    return catalog.rows(LATEST_STATES_SQL)

"""The task life cycle: one table of allowed moves, every move a row, re-runs change nothing."""

from __future__ import annotations

import pytest

from curation.core.stage import Stage, StageRun
from curation.tasks.lifecycle import STARTS, TRANSITIONS, LifecycleError, move, path_of, state_of


def _mover(run: StageRun, steps: list[tuple[str, int, str]]) -> list[bool]:
    return [move(run, task, version, to, reason=f"to {to}", who="tester") for task, version, to in steps]


MOVER = Stage("toy-mover", "-", "moves tasks", ("task_transitions",), ("task_transitions",), _mover)


def test_a_task_moves_only_along_allowed_edges(catalog):
    moved = MOVER(catalog, [("gui_like_1", 1, "authored"), ("gui_like_1", 1, "valid"),
                            ("gui_like_1", 1, "shortcut_passed"), ("gui_like_1", 1, "escalated"),
                            ("gui_like_1", 1, "revised"), ("gui_like_1", 2, "authored")])
    assert moved == [True] * 6
    assert state_of(catalog, "gui_like_1", 1) == "revised" and state_of(catalog, "gui_like_1", 2) == "authored"
    path = [(m["version"], m["from_state"], m["to_state"]) for m in path_of(catalog, "gui_like_1")]
    assert path == [(1, None, "authored"), (1, "authored", "valid"), (1, "valid", "shortcut_passed"),
                    (1, "shortcut_passed", "escalated"), (1, "escalated", "revised"), (2, None, "authored")]
    assert MOVER(catalog, [("gui_like_1", 1, "revised")]) == [False]  # already there: nothing written
    assert len(path_of(catalog, "gui_like_1")) == 6


@pytest.mark.parametrize(("steps", "message"), [
    ([("x_1", 1, "valid")], "x_1 v1 is new: it cannot become valid"),
    ([("x_1", 1, "authored"), ("x_1", 1, "retired"), ("x_1", 1, "valid")], "nothing; it is final"),
    ([("x_1", 1, "authored"), ("x_1", 1, "kept")], "from there: needs_fix, retired, valid"),
    ([("x_1", 1, "authored"), ("x_1", 1, "approved")], "'approved' is not a state"),
])
def test_a_move_the_life_cycle_does_not_allow_is_refused_by_name(catalog, steps, message):
    with pytest.raises(LifecycleError, match=message):
        MOVER(catalog, steps)
    assert catalog.scalar("SELECT count(*) FROM task_transitions") == 0  # the run's moves rolled back


def test_every_state_is_reachable_from_a_start():
    reached, frontier = set(STARTS), list(STARTS)
    while frontier:
        for nxt in TRANSITIONS[frontier.pop()]:
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    assert reached == set(TRANSITIONS)

"""A platform task's checks read on the app's state, as the runner's `eval_*` functions read them: each check as
atomic conditions (held, not held, or unknown where the state cannot tell). Shared by grading (curation/grade) and
the proofs a task must pass before it ships (curation/tasks/perfect.py). Which other videos the "no other video"
half reads is the runner profile's (curation/env/profile.py); how each check is read is `READERS`, one reader per
check of the vocabulary (curation/env/vocabulary.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from curation.env.profile import RunnerProfile, default_profile
from curation.env.vocabulary import VOCABULARY, every_check

Atom = tuple[str, bool | None]


def positions(value: Any) -> list[int]:
    """The positions a check's `video_ids` / `video_id` names, as a list."""
    return [value] if isinstance(value, int) else list(value or [])


def targets(check: dict[str, Any]) -> list[int]:
    """The positions one check names."""
    spec = VOCABULARY.get(str(check.get("func")))
    args = check.get("args") or {}
    return positions(args.get(spec.position_arg) if spec else args.get("video_ids", args.get("video_id")))


def report_matches(report: dict[str, Any], args: dict[str, Any]) -> bool:
    return (args.get("expected_cat") is None or report.get("category") == args["expected_cat"]) and (
        args.get("expected_reason") is None
        or str(report.get("reason", "")).strip() == str(args["expected_reason"]).strip())


def comment_holds(texts: list[str], wanted: Any) -> bool:
    """The runner's comment test: any comment at all, or one whose stripped text holds the stripped `wanted`."""
    return bool(texts) if wanted is None else any(str(wanted).strip(" \n") in t.strip(" \n") for t in texts)


@dataclass(frozen=True)
class EndState:
    """What the checks are read on: the app's videos, the video on screen when known (a replay knows it, state.json
    does not), whether the state was rebuilt without the feed's own comments, and which positions the "no other
    video" half reads."""

    videos: list[dict[str, Any]]
    current: int | None
    replayed: bool
    others: Callable[[list[int]], list[int]]

    def video(self, i: int) -> dict[str, Any]:
        return self.videos[i] if 0 <= i < len(self.videos) else {}


def _no_other(func: str, at: list[int], state: EndState, has: Callable[[dict[str, Any]], bool]) -> list[Atom]:
    """The runner's `_check_others_*` half, for a check the vocabulary calls exclusive."""
    if not VOCABULARY[func].exclusive:
        return []
    return [(f"{func} no other", not any(has(state.video(i)) for i in state.others(at)))]


def _flag(flag: str) -> Callable[[str, dict[str, Any], list[int], EndState], list[Atom]]:
    def read(func: str, args: dict[str, Any], at: list[int], state: EndState) -> list[Atom]:
        return [*((f"{func} {i}", bool(state.video(i).get(flag))) for i in at),
                *_no_other(func, at, state, lambda video: bool(video.get(flag)))]
    return read


def _report(func: str, args: dict[str, Any], at: list[int], state: EndState) -> list[Atom]:
    return [*((f"{func} {i}", any(report_matches(r, args) for r in state.video(i).get("reports") or []))
              for i in at),
            *_no_other(func, at, state, lambda video: bool(video.get("reports")))]


def _comment(func: str, args: dict[str, Any], at: list[int], state: EndState) -> list[Atom]:
    # a replay lacks the feed's own comments: a comment check it finds unmet may still have been met by one of them
    out: list[Atom] = []
    for i in at:
        texts = [str(c.get("text", "")) for c in state.video(i).get("comments") or []]
        held = comment_holds(texts, args.get("comment"))
        out.append((f"{func} {i}", True if held else None if state.replayed else False))
    return out


def _current(func: str, args: dict[str, Any], at: list[int], state: EndState) -> list[Atom]:
    return [(f"{func} {i}", None if state.current is None else state.current == i) for i in at]


def _not_in_state(func: str, args: dict[str, Any], at: list[int], state: EndState) -> list[Atom]:
    return [(f"{func} {at}", None)]  # how far a video played is not in the app's state


READERS: dict[str, Callable[[str, dict[str, Any], list[int], EndState], list[Atom]]] = {
    "eval_like": _flag("is_liked"), "eval_collect": _flag("is_collected"), "eval_report": _report,
    "eval_comment": _comment, "eval_current_video": _current, "eval_playback": _not_in_state}
every_check(READERS, "state reader")


def atoms(checks: list[dict[str, Any]], videos: list[dict[str, Any]], profile: RunnerProfile | None = None,
          current: int | None = None, replayed: bool = False, every_position: bool = False) -> list[Atom]:
    """Each check as atomic conditions (name, held?); None where the state cannot tell. The "no other video" half
    reads the profile's positions (the runner's rule), or every position of the feed with `every_position`."""
    profile = profile or default_profile()

    def others(at: list[int]) -> list[int]:
        if every_position:
            return [i for i in range(len(videos)) if i not in at]
        return profile.others(at, len(videos))

    state = EndState(videos, current, replayed, others)
    out: list[Atom] = []
    for check in checks:
        func = str(check.get("func"))
        reader = READERS.get(func)
        if reader is None:
            out.append((f"{func} {targets(check)}", None))
        else:
            out += reader(func, check.get("args") or {}, targets(check), state)
    return out

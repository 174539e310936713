"""What a perfect agent plays for a platform task, and whether it then passes.

From the task's checks alone (its ground truth) the plan goes to each target video in turn and does what the
checks ask: like, collect, report with the category and reason given, comment with the text given, pause and seek
to a playback target, and ends on the video a current-video check names. The plan is replayed with the same
replay that grades episodes (`curation.env.replay`, the page as the runner drives it, its icons not loaded as in
every recorded run) and graded with the runner's own rule. A task the plan cannot pass is `unsatisfiable`; one the
replay cannot decide, or no plan reaches (comments on two videos: the open drawer cannot be closed without the
page's icons), is listed as undecided, never passed silently.

Coordinates are the runner's 0–1000 units (see the fixtures' READMEs: like (883, 607), comment (883, 691),
collect (883, 775), report (883, 858), the comment input (432, 903), send (887, 903), a category (240, 372 + 42.5k
roughly), the reason (500, 600), submit (709, 693), a swipe up (500, 750) -> (500, 250)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curation.env.checks import atoms, targets
from curation.env.episodes import ToolCall
from curation.env.page import CATEGORIES, PROGRESS, VIEW_W
from curation.env.replay import rebuild_state
from curation.env.vocabulary import every_check
from curation.tasks.idle import IdleFacts, describe, starts_with_comment

Call = tuple[str, dict[str, Any]]
LIKE, COMMENT, COLLECT, REPORT = ((883, y) for y in (607, 691, 775, 858))
INPUT, SEND, REASON, SUBMIT, VIDEO = (432, 903), (887, 903), (500, 600), (709, 693), (500, 400)
CATEGORY_Y = (372, 414, 457, 501)  # the four report categories, top to bottom
UP, DOWN = ("swipe", {"x1": 500, "y1": 750, "x2": 500, "y2": 250}), ("swipe", {"x1": 500, "y1": 250, "x2": 500,
                                                                                "y2": 750})
# With the comment drawer open only the strip of video above it answers a drag; dragged past the frame's edge
# it still moves one video (the drag is followed on the window, the snap is one video whatever the distance).
STRIP_UP = ("swipe", {"x1": 500, "y1": 260, "x2": 500, "y2": 0})
STRIP_DOWN = ("swipe", {"x1": 500, "y1": 45, "x2": 500, "y2": 990})
WAIT = ("wait", {"seconds": 1})
SEEK_Y = 925  # the progress bar's middle


def tap(point: tuple[int, int]) -> Call:
    return "click", {"x": point[0], "y": point[1]}


@dataclass
class PerfectVerdict:
    passed: bool | None                   # None: undecided
    reason: str                           # what failed, or why it is undecided, or "" when passed
    turns: list[list[Call]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the replay's line per call
    ungradable: list[str] = field(default_factory=list)  # checks the target runner cannot grade (its profile)



def seek_x(fraction: float) -> int:
    """The progress bar's x (0–1000) for a fraction of the video, kept 3 px inside its ends (its edges are
    ambiguous in the replay); 3 px is under 1% of the bar, well inside the runner's 5% tolerance."""
    px = PROGRESS.x0 + 3 + min(1.0, max(0.0, fraction)) * (PROGRESS.x1 - PROGRESS.x0 - 6)
    return round(px / VIEW_W * 1000)


@dataclass
class PlanDraft:
    """What the checks ask a perfect agent to do, gathered check by check before the turns are laid out."""
    durations: list[float | None]
    acts: dict[int, list[list[Call]]] = field(default_factory=dict)
    comments: dict[int, str] = field(default_factory=dict)
    final: int | None = None
    playback: tuple[int, float] | None = None


def _mark(check: dict[str, Any], i: int, draft: PlanDraft) -> str | None:
    draft.acts.setdefault(i, []).append([tap(LIKE if check.get("func") == "eval_like" else COLLECT)])
    return None


def _report(check: dict[str, Any], i: int, draft: PlanDraft) -> str | None:
    args = check.get("args") or {}
    category = args.get("expected_cat") or CATEGORIES[0]
    if category not in CATEGORIES:
        return f"report category {category!r} is not one the app offers"
    flow = [[tap(REPORT)], [tap((240, CATEGORY_Y[CATEGORIES.index(category)]))]]
    if args.get("expected_reason"):
        flow += [[tap(REASON)], [("type", {"text": str(args["expected_reason"]).strip()})]]
    draft.acts.setdefault(i, []).extend([*flow, [tap(SUBMIT)]])
    return None


def _comment(check: dict[str, Any], i: int, draft: PlanDraft) -> str | None:
    if draft.comments:
        return "comments on two videos: the drawer cannot be closed without the page's icons"
    wanted = (check.get("args") or {}).get("comment")
    draft.comments[i] = str(wanted) if wanted is not None else "好"
    return None


def _current(check: dict[str, Any], i: int, draft: PlanDraft) -> str | None:
    draft.final = i
    return None


def _playback(check: dict[str, Any], i: int, draft: PlanDraft) -> str | None:
    args = check.get("args") or {}
    duration = draft.durations[i] if 0 <= i < len(draft.durations) else None
    if args.get("target_pct") is not None:
        draft.playback = (i, float(args["target_pct"]))
    elif duration:
        draft.playback = (i, float(args["target_sec"]) / duration)
    else:
        return f"a playback target in seconds on video {i}, whose length is unknown"
    return None


# what a perfect agent does for each check of the vocabulary, at each position it names
PLANNERS: dict[str, Callable[[dict[str, Any], int, PlanDraft], str | None]] = {
    "eval_like": _mark, "eval_collect": _mark, "eval_report": _report, "eval_comment": _comment,
    "eval_current_video": _current, "eval_playback": _playback}
every_check(PLANNERS, "perfect-agent plan")


def perfect_plan(checks: list[dict[str, Any]], durations: list[float | None]) -> tuple[list[list[Call]], str | None]:
    """The turns a perfect agent plays (one call per turn, a swipe with its wait), or a reason none is made."""
    draft = PlanDraft(durations)
    for check in checks:
        planner = PLANNERS.get(str(check.get("func")))
        if planner is None:
            return [], f"no plan for {describe(check)}"
        for i in targets(check):
            why_not = planner(check, i, draft)
            if why_not:
                return [], why_not
    acts, comments, final, playback = draft.acts, draft.comments, draft.final, draft.playback
    if playback and comments:
        return [], "a playback target and a comment: the open drawer covers the progress bar"
    if playback:
        if final is not None and final != playback[0]:
            return [], "the playback target and the video to end on differ"
        final = playback[0]
    turns: list[list[Call]] = []
    at, drawer = 0, False

    def move(to: int) -> None:
        nonlocal at
        step = (STRIP_UP if to > at else STRIP_DOWN) if drawer else (UP if to > at else DOWN)
        turns.extend([step, WAIT] for _ in range(abs(to - at)))
        at = to

    for i in sorted(acts):
        move(i)
        turns.extend(acts[i])
    for i, text in comments.items():
        move(i)
        turns.extend([[tap(COMMENT)], [tap(INPUT)], [("type", {"text": text})], [tap(SEND)]])
        drawer = True
    if playback:
        move(playback[0])
        turns.extend([[tap(VIDEO)], [("click", {"x": seek_x(playback[1]), "y": SEEK_Y})]])
    if final is not None:
        move(final)
    return [*turns, [("finish", {})]], None


def prove_perfect(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> PerfectVerdict:
    """Play the perfect plan in the replay and grade the end state with the runner's rule. `facts`: the videos'
    lengths and starting comments as far as the catalog knows them, and the runner's profile (tasks/idle.py). A
    task with a check the runner cannot grade fails here: no agent is scored on it in that runner."""
    ungradable = sorted({str(c.get("func")) for c in checks} & facts.profile.ungradable)
    if ungradable:
        return PerfectVerdict(False, f"{facts.profile.name} cannot grade {', '.join(ungradable)} (its profile, "
                              "[grading] ungradable)", ungradable=ungradable)
    durations = [facts.durations.get(v) for v in feed]
    turns, why_not = perfect_plan(checks, durations)
    if why_not:
        return PerfectVerdict(None, f"no plan: {why_not}")
    calls = [ToolCall(name, args, turn=n) for n, turn in enumerate(turns) for name, args in turn]
    rebuilt = rebuild_state(calls, max(len(feed), 1), icons=False)
    if rebuilt.state is None:
        return PerfectVerdict(None, f"the replay cannot tell: {rebuilt.unknown_reason}", turns, rebuilt.notes)
    held = []
    for check in checks:  # the runner's rule, check by check; playback and a video's own comments from the facts
        for name, ok in atoms([check], rebuilt.state, facts.profile, rebuilt.current, replayed=True):
            if check.get("func") == "eval_playback":
                ok = _playback_held(check, rebuilt.playback, durations, facts.profile.tolerance)
            elif check.get("func") == "eval_comment" and ok is None:  # the agent's own comment did not meet it
                i = int(name.split()[-1])
                ok = starts_with_comment(feed[i] if 0 <= i < len(feed) else "", (check.get("args") or {}).get(
                    "comment"), facts)
            held.append((name, ok))
    failed = [name for name, ok in held if ok is False]
    if failed:
        return PerfectVerdict(False, f"{', '.join(failed)} not met after the plan", turns, rebuilt.notes)
    unknown = [name for name, ok in held if ok is None]
    if unknown:
        return PerfectVerdict(None, f"the replay cannot read {', '.join(unknown)}", turns, rebuilt.notes)
    return PerfectVerdict(True, "", turns, rebuilt.notes)


def _playback_held(check: dict[str, Any], playback: dict[str, Any] | None, durations: list[float | None],
                   tolerance: float) -> bool | None:
    """A playback check on the replay's end: the video paused where the seek put it (the runner's 5% of its
    length). None when the replay does not know the playback, or the video's length is needed and unknown."""
    args = check.get("args") or {}
    i = targets(check)[0]
    if not playback or playback.get("video") != i or playback.get("paused") is not True \
            or playback.get("seek_fraction") is None:
        return None
    fraction = float(playback["seek_fraction"])
    if args.get("target_pct") is not None:
        return abs(fraction - float(args["target_pct"])) <= tolerance
    duration = durations[i] if 0 <= i < len(durations) else None
    if not duration:
        return None
    return abs(fraction * duration - float(args["target_sec"])) <= duration * tolerance



"""What an episode scored: SR, NS, WR, progress and the observation bucket of every video.

- SR, label tasks: the stripped text of the first `answer` call equals the answer (the public
  runner's rule: a later answer does not count).
- SR, platform tasks: re-graded from the app's final state when every check can be read from
  it, by the runner's own rule: the "no other video liked / collected / reported" half reads the
  positions the runner profile names (1 to 20 in the public runner; curation/env/profile.py). An
  action on a video that rule does not read (video 0, or past 20) is flagged (`index0_disagrees`)
  but does not change SR, so an episode gets the same SR from state.json as from its replay. The
  state is `state.json` when it is there (sr_from
  "state"), else rebuilt from the logged calls by `replay.rebuild_state` (sr_from "replay"; it
  also knows which video is on screen). A replay that cannot tell what a call did leaves the
  state unknown, with the reason (`state_unknown`), and SR is the logged `result`; so is it when
  a check cannot be read from the state (playback, or a comment a replay cannot rule out).
- Unmet checks: when SR was read from the end state (sr_from "state" or "replay"), the checks (atomic
  conditions, as `curation.env.checks.atoms` names them) that state does not meet, read here from the one
  state grading had, so that nothing replays an episode twice; None when SR came from elsewhere.
- NS: tool calls issued, whether or not they worked. Acting calls: the valid ones of `ACTING_TOOLS` (an
  episode with none is do-nothing-like). WR: seconds recorded by valid `watch` calls over the feed's total
  runtime.
- Buckets: the current video is tracked through the episode (an upward swipe of at least
  `SWIPE_MIN` goes to the next video, a downward one to the previous, clamped to the feed);
  each `watch` counts for the video on screen; r = seconds watched / duration puts every
  video in skipped (0), glanced (≤ 10%), partially viewed (≤ 80%) or fully consumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curation.env.checks import atoms
from curation.env.episodes import Episode, ToolCall
from curation.env.profile import default_profile
from curation.env.replay import rebuild_state
from curation.grade.task_table import ACTING_TOOLS

SWIPE_MIN = 231  # normalised units: the app snaps to the next video past 30% of its 750 px feed
BUCKETS = ("skipped", "glanced", "partially_viewed", "fully_consumed")


def bucket(ratio: float) -> str:
    if ratio <= 0:
        return "skipped"
    if ratio <= 0.10:
        return "glanced"
    return "partially_viewed" if ratio <= 0.80 else "fully_consumed"


def first_answer(calls: list[ToolCall]) -> tuple[str | None, bool]:
    """(the first answer's text, whether later answers said something else). As the runner grades,
    the first `answer` call counts even when its arguments were broken (its text is then empty)."""
    texts = [str(c.args.get("text") or "").strip() for c in calls if c.name == "answer"]
    return (texts[0] if texts else None), len(set(texts)) > 1


@dataclass
class Grade:
    sr: float | None
    sr_from: str                       # answer | state | result | none
    public_sr: float | None = None     # the runner profile's rule on the same state (what SR is now too)
    ns: int = 0
    invalid_calls: int = 0
    watch_s: float = 0.0
    runtime_s: float | None = None
    wr: float | None = None
    progress: float | None = None
    answer: str | None = None
    answered_differently: bool = False
    state_disagrees: bool = False      # the re-grade from the state (public rule) differs from the logged result
    state_unknown: str | None = None   # why no state could be had: the replay could not tell what a call did
    index0_disagrees: bool = False     # every position read would fail it: an action on a video the runner's
    #                                    "no other video" rule does not read (video 0, or past its last position)
    replay_disagreement: str | None = None  # the replay, by the runner's rule, contradicts the runner's result
    cut_off: str | None = None         # the episode ended without `finish` (the step cap, or it broke off)
    unmet_checks: list[str] | None = None  # checks the end state SR was read from does not meet (None: not read)
    acting_calls: int = 0              # valid calls of ACTING_TOOLS
    watched: list[float] = field(default_factory=list)      # seconds per feed position
    buckets: list[str | None] = field(default_factory=list)  # per feed position; None when its duration is unknown


def track_watching(calls: list[ToolCall], feed_len: int) -> list[float]:
    seconds = [0.0] * feed_len
    current = 0
    for call in calls:
        if call.problem is not None or feed_len == 0:
            continue
        if call.name == "swipe":
            dy = call.args["y2"] - call.args["y1"]
            if dy <= -SWIPE_MIN:
                current = min(current + 1, feed_len - 1)
            elif dy >= SWIPE_MIN:
                current = max(current - 1, 0)
        elif call.name == "watch":
            seconds[current] += float(call.args["seconds"])
    return seconds


def acting_calls(calls: list[ToolCall]) -> int:
    return sum(c.name in ACTING_TOOLS and c.problem is None for c in calls)


def grade_episode(episode: Episode, task: dict[str, Any], durations: list[float | None]) -> Grade:
    """`task` is the release's runner element; `durations` the feed's video lengths in order."""
    calls = episode.calls
    answer, differently = first_answer(calls)
    grade = Grade(None, "none", answer=answer, answered_differently=differently, ns=len(calls),
                  invalid_calls=sum(c.problem is not None for c in calls), acting_calls=acting_calls(calls))
    if not any(c.name == "finish" and c.problem is None for c in calls):
        # the log does not say the runner's --max-steps: a run stopped by it and one that broke off look alike
        grade.cut_off = f"no finish: stopped after {episode.turns} turns (the step cap, or it broke off)"
    if task["eval_type"] == "label":
        expected = str((task.get("eval_config") or [{}])[0].get("answer", "")).strip()
        grade.sr, grade.sr_from = (float(answer == expected) if answer is not None else 0.0), "answer"
        grade.state_disagrees = episode.result is not None and episode.result != grade.sr
    else:
        checks = task.get("eval_config") or []
        state, current, replayed = episode.state, None, False
        if state is None:
            rebuilt = rebuild_state(calls, max(len(task.get("video_feed") or []), 1))
            state, current, replayed = rebuilt.state, rebuilt.current, True
            grade.state_unknown = rebuilt.unknown_reason
        if state is not None:
            public = atoms(checks, state, default_profile(), current, replayed)
            everywhere = atoms(checks, state, default_profile(), current, replayed, every_position=True)
            known = [held for _, held in public if held is not None]
            unknown_ok = episode.result == 1.0  # the runner saw every check pass, those it alone can see too
            grade.progress = (sum(known) + (len(public) - len(known)) * unknown_ok) / len(public) if public else None
            if public and len(known) == len(public):
                grade.sr, grade.sr_from = float(all(known)), "replay" if replayed else "state"
                grade.public_sr = grade.sr
                grade.unmet_checks = [name for name, held in public if not held]
                grade.index0_disagrees = grade.sr != float(all(held for _, held in everywhere))
                grade.state_disagrees = episode.result is not None and grade.public_sr != episode.result
                if replayed and grade.state_disagrees:
                    # The runner graded the app's real end state by this same rule: a replay that disagrees
                    # is wrong about what happened, so the runner's result stands.
                    grade.replay_disagreement = (
                        f"the runner passed it; the replay found {', '.join(grade.unmet_checks)} unmet"
                        if episode.result == 1.0 else "the runner failed it; every check held in the replay")
                    grade.sr, grade.sr_from, grade.index0_disagrees = episode.result, "result", False
                    grade.unmet_checks = None
        if grade.sr is None and episode.result is not None:
            grade.sr, grade.sr_from = episode.result, "result"
            if grade.progress is None:
                grade.progress = episode.result
    grade.watched = track_watching(calls, len(durations))
    grade.watch_s = sum(float(c.args["seconds"]) for c in calls if c.name == "watch" and c.problem is None)
    known_runtime = [d for d in durations if d]
    grade.runtime_s = sum(known_runtime) if durations and len(known_runtime) == len(durations) else None
    grade.wr = grade.watch_s / grade.runtime_s if grade.runtime_s else None
    grade.buckets = [bucket(w / d) if d else None for w, d in zip(grade.watched, durations, strict=True)]
    return grade

"""What a do-nothing agent leaves behind, and the platform tasks it would pass.

The runner resets its app with the feed's videos, nothing liked, collected or reported, each with the comments the
runner profile says it starts with (curation/env/starts.py, the same statement `release env-feeds` writes). The
video on screen plays from its start in a loop; the others stand at 0 s. The runner reads the state whenever the
agent's `finish` comes: for an agent that does nothing, at any moment of the profile's do-nothing window. A task
whose checks all hold at one moment of that window is passed by an agent that only answers `finish`: it measures
nothing.

Each check gets one of three answers: it holds at some moment of the window, it holds at none, or the facts at
hand cannot tell, and then the facts that would decide it are named (a video's length: `curate media probe`
supplies it; a video's starting comments). An answer that does not depend on a missing fact is given without it:
0% of the video on screen is reached at the start, whatever its length. A task the facts cannot settle is never
flagged, and never counted as proven either.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curation.env.checks import comment_holds, targets
from curation.env.profile import RunnerProfile, default_profile
from curation.env.vocabulary import every_check

# the lengths a video of unknown length may have, for answers that hold whatever the length
LENGTH_RANGE_S = (0.1, 86_400.0)
Interval = tuple[float, float]


@dataclass(frozen=True)
class IdleFacts:
    """What the catalog knows of how the feed's videos start: lengths, and starting comments by video (None: no
    catalog at all, so only the profile's source rules speak; a video absent from the dict: its record is not in
    the catalog)."""

    durations: dict[str, float]
    comments: dict[str, list[str]] | None
    profile: RunnerProfile = field(default_factory=default_profile)


@dataclass(frozen=True)
class Held:
    value: bool | None
    lacking: tuple[str, ...] = ()  # the facts that would decide it, when value is None


@dataclass(frozen=True)
class IdleVerdict:
    passes: bool | None  # True: a do-nothing agent passes it at some moment of the window
    checks: list[str]
    window: str          # when, in words
    lacking: list[str]   # the facts that would decide it, when passes is None


def _name(feed: list[str], i: int) -> str:
    return f"video {i + 1} ({feed[i]})" if 0 <= i < len(feed) else f"video {i + 1}"


def _all(values: list[Held]) -> Held:
    if any(v.value is False for v in values):
        return Held(False)
    lacking = tuple(dict.fromkeys(x for v in values for x in v.lacking))
    return Held(None, lacking) if any(v.value is None for v in values) else Held(True)


def starts_with_comment(video: str, wanted: Any, facts: IdleFacts) -> bool | None:
    """Whether `video` starts, in the runner's app, with a comment holding `wanted` (any comment when None); None
    when only the runner's own metadata file can say."""
    known = None if facts.comments is None else facts.comments.get(video)
    if known is not None:
        return comment_holds(known, wanted)
    source = facts.profile.source_of(video)
    if source is None or source.comments == "none" or source.unknown_record == "none":
        return False
    return True if wanted is None else None


def playback_band(args: dict[str, Any], length: float, tolerance: float) -> Interval | None:
    """The positions (seconds into the video) at which the runner's playback check holds; None when none."""
    if args.get("target_pct") is not None:
        low, high = (float(args["target_pct"]) - tolerance) * length, (float(args["target_pct"]) + tolerance) * length
    elif args.get("target_sec") is not None:
        low, high = float(args["target_sec"]) - tolerance * length, float(args["target_sec"]) + tolerance * length
    else:
        return None
    low, high = max(low, 0.0), min(high, length)
    return (low, high) if low <= high else None


def moments(args: dict[str, Any], length: float, moving: bool, profile: RunnerProfile) -> list[Interval]:
    """The moments of the do-nothing window at which one playback check holds, for a video of `length` seconds
    that plays in a loop from 0 s (`moving`) or stands at 0 s."""
    band, (start, end) = playback_band(args, length, profile.tolerance), profile.idle_window_s
    if band is None:
        return []
    if not moving:
        return [(start, end)] if band[0] <= 0.0 else []
    out = []
    # loop k plays from k * length; its phase never reaches `length` (the video is at 0 s again), so no loop
    # before the first one counts, even where the band touches the end
    for k in range(max(0, math.floor((start - band[1]) / length)), math.ceil((end - band[0]) / length) + 1):
        low, high = max(start, k * length + band[0]), min(end, k * length + band[1])
        if low <= high:
            out.append((low, high))
    return out


def _overlap(a: list[Interval], b: list[Interval]) -> list[Interval]:
    return [(max(x[0], y[0]), min(x[1], y[1])) for x in a for y in b if max(x[0], y[0]) <= min(x[1], y[1])]


def _critical_lengths(args: dict[str, Any], profile: RunnerProfile) -> set[float]:
    """Every length at which whether the check holds in the window can change (an edge of its band meets an edge
    of the window, a loop's end, the band's clipping): between two of them the answer is the same."""
    start, end = profile.idle_window_s
    tol, shortest = profile.tolerance, LENGTH_RANGE_S[0]
    out = {end - start}
    loops = math.ceil(end / shortest) + 1
    for moment in (start, end):
        for k in range(loops + 1):
            if k:
                out.add(moment / k)
            for edge in (-tol, tol):
                if args.get("target_pct") is not None and k + float(args["target_pct"]) + edge > 0:
                    out.add(moment / (k + float(args["target_pct"]) + edge))
                if args.get("target_sec") is not None and k + edge != 0:
                    out.add((moment - float(args["target_sec"])) / (k + edge))
    if args.get("target_sec") is not None:
        sec = float(args["target_sec"])
        out |= {sec / tol, sec / (1 - tol), sec / (1 + tol)}
    return {d for d in out if LENGTH_RANGE_S[0] < d < LENGTH_RANGE_S[1]}


def for_every_length(held: Callable[[float], bool], critical: set[float]) -> bool | None:
    """True when `held` is true for every length a video may have, False when for none, None when it depends."""
    points = sorted({*LENGTH_RANGE_S, *critical})
    probes = points + [math.sqrt(a * b) for a, b in zip(points, points[1:], strict=False)]
    answers = {held(d) for d in probes}
    return answers.pop() if len(answers) == 1 else None


def _playback(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> Held:
    """Whether every playback check holds at one common moment of the window."""
    profile = facts.profile
    by_video: dict[int, list[dict[str, Any]]] = {}
    for check in checks:
        at = targets(check)
        if len(at) != 1:  # the runner reads one video; the rules name the defect
            return Held(False)
        by_video.setdefault(at[0], []).append(check.get("args") or {})
    held: list[Held] = []
    for i, argses in by_video.items():
        if not 0 <= i < len(feed):
            return Held(False)
        moving, length = i == profile.autoplay_position, facts.durations.get(feed[i])

        def when(d: float, argses: list[dict[str, Any]] = argses, moving: bool = moving) -> list[Interval]:
            out = [profile.idle_window_s]
            for args in argses:
                out = _overlap(out, moments(args, d, moving, profile))
            return out
        if length:
            held.append(Held(bool(when(length))))
            continue
        decided = None if len(argses) > 1 else for_every_length(lambda d: bool(when(d)),
                                                                 _critical_lengths(argses[0], profile))
        held.append(Held(decided, () if decided is not None else (f"the length of {_name(feed, i)}",)))
    # moments on different videos: the one moving video sets them, the others hold at every moment or none
    return _all(held)


def _marked(check: dict[str, Any], feed: list[str], facts: IdleFacts) -> Held:
    return Held(not targets(check))  # nothing is liked, collected or reported; only an empty list of targets holds


def _comment(check: dict[str, Any], feed: list[str], facts: IdleFacts) -> Held:
    wanted = (check.get("args") or {}).get("comment")
    out = []
    for i in targets(check):
        if not 0 <= i < len(feed):
            return Held(False)
        value = starts_with_comment(feed[i], wanted, facts)
        out.append(Held(value, () if value is not None else (f"the comments {_name(feed, i)} starts with",)))
    return _all(out)


def _current(check: dict[str, Any], feed: list[str], facts: IdleFacts) -> Held:
    return Held(targets(check) == [facts.profile.autoplay_position])


def _one_playback(check: dict[str, Any], feed: list[str], facts: IdleFacts) -> Held:
    return _playback([check], feed, facts)


IDLE: dict[str, Callable[[dict[str, Any], list[str], IdleFacts], Held]] = {
    "eval_like": _marked, "eval_collect": _marked, "eval_report": _marked, "eval_comment": _comment,
    "eval_current_video": _current, "eval_playback": _one_playback}
every_check(IDLE, "do-nothing state")


def check_holds(check: dict[str, Any], feed: list[str], facts: IdleFacts) -> Held:
    """Whether one check holds at some moment of the do-nothing window."""
    idle = IDLE.get(str(check.get("func")))
    return idle(check, feed, facts) if idle else Held(None, (f"how {check.get('func')} is read",))


def idle_verdict(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> IdleVerdict:
    """Whether an agent that does nothing passes these checks: all of them at one moment of the window."""
    start, end = facts.profile.idle_window_s
    window = (f"at a moment from {start:g} to {end:g} s after video {facts.profile.autoplay_position + 1} starts "
              "playing, as the runner grades an agent that does nothing")
    playback = [c for c in checks if IDLE.get(str(c.get("func"))) is _one_playback]
    held = _all([*(check_holds(c, feed, facts) for c in checks if c not in playback),
                 *([_playback(playback, feed, facts)] if playback else [])])
    if not checks:
        held = Held(False)
    return IdleVerdict(held.value, [describe(c) for c in checks], window, list(held.lacking))


def passes_idle(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> IdleVerdict | None:
    """The verdict when a do-nothing agent passes the checks; None otherwise (or when the facts cannot tell)."""
    verdict = idle_verdict(checks, feed, facts)
    return verdict if verdict.passes else None


def describe(check: dict[str, Any]) -> str:
    args = check.get("args") or {}
    shown = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in sorted(args.items()))
    return f"{check.get('func')}({shown})"


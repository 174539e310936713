"""What a do-nothing agent leaves behind, and the platform tasks it would pass.

The runner (BITHLP/LivingScreen `main_threaded.py`) resets its app with the feed's videos as `utils.feed2data`
builds them: nothing liked, collected or reported; a FakeSV video with the comments of the runner's own
metadata file (every one has some), a LiveBot or Video-SafetyBench video with none. The first video plays from
its start, in a loop (`<video loop>`), and the others stand at 0 s. A task whose checks all hold on that state,
when the app starts or a few seconds later, is passed by an agent that only answers `finish`: it measures
nothing. The checks are the runner's own (`utils.py` `eval_*`, `env.py` `Checker`): positions of other
videos counted from 1 to 20, comments matched as substrings, playback within 5% of the video's length.

Three answers per check: held, not held, or None when the facts at hand cannot tell (a comment text on a video
whose starting comments are not in the catalog, a playback target on a video of unknown length). A task is
flagged only when every check held at one instant; one the facts cannot settle is never flagged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curation.env.checks import positions

# utils.feed2data: only FakeSV videos are given comments, from the runner's metadata file (texts in the catalog
# only when the gated metadata was ingested)
STARTS_WITH_COMMENTS = ("FakeSV",)
IDLE_INSTANTS_S = (0.0, 5.0)  # when the app starts, and a few seconds later with no action
PLAYBACK_TOLERANCE = 0.05     # utils.eval_playback
OTHERS = range(1, 21)         # utils._check_others_*: ids 1..MAX_VIDEO_ID (20)


@dataclass(frozen=True)
class IdleFacts:
    """What the catalog knows of how the feed's videos start: lengths, and comment texts by video (None: the
    catalog has no comments at all, so only the source's rule speaks)."""

    durations: dict[str, float]
    comments: dict[str, list[str]] | None


def _all(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True



def starts_with_comment(video: str, wanted: Any, facts: IdleFacts) -> bool | None:
    """Whether `video` starts, in the runner's app, with a comment holding `wanted` (any comment when None);
    None when the catalog does not know its starting comments."""
    texts = (facts.comments or {}).get(video) or []
    if texts:
        return wanted is None or any(str(wanted).strip(" \n") in text.strip(" \n") for text in texts)
    if video.split("/", 1)[0] in STARTS_WITH_COMMENTS:
        return True if wanted is None else None  # it has comments; which ones the catalog does not say
    return False


def _playback(video: str | None, position: int, args: dict[str, Any], at_s: float, facts: IdleFacts) -> bool | None:
    duration = facts.durations.get(video or "")
    if not duration:
        return None
    current = at_s % duration if position == 0 else 0.0
    if args.get("target_pct") is not None:
        return abs(current / duration - float(args["target_pct"])) <= PLAYBACK_TOLERANCE
    if args.get("target_sec") is not None:
        return abs(current - float(args["target_sec"])) <= duration * PLAYBACK_TOLERANCE
    return False


def check_holds(check: dict[str, Any], feed: list[str], at_s: float, facts: IdleFacts) -> bool | None:
    """Whether one check already holds `at_s` seconds after the app started, nothing done."""
    func, args = check.get("func"), check.get("args") or {}
    targets = positions(args.get("video_ids", args.get("video_id")))
    if func in ("eval_like", "eval_collect", "eval_report"):
        return not targets  # nothing is liked, collected or reported; only an empty list of targets holds
    if func == "eval_comment":
        return _all([starts_with_comment(feed[i], args.get("comment"), facts) if 0 <= i < len(feed) else False
                     for i in targets])
    if func == "eval_current_video":
        return targets == [0]
    if func == "eval_playback" and targets:
        i = targets[0]
        return _playback(feed[i] if 0 <= i < len(feed) else None, i, args, at_s, facts)
    return None


def passes_idle(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> tuple[float, list[str]] | None:
    """(the instant, the checks as written) when every check holds with nothing done; None otherwise."""
    for at_s in IDLE_INSTANTS_S:
        if checks and all(check_holds(c, feed, at_s, facts) is True for c in checks):
            return at_s, [describe(c) for c in checks]
    return None


def undecided(checks: list[dict[str, Any]], feed: list[str], facts: IdleFacts) -> bool:
    """Whether the facts leave it open if a do-nothing agent passes (no check failed, one could not be told)."""
    return any(all(check_holds(c, feed, t, facts) is not False for c in checks)
               and any(check_holds(c, feed, t, facts) is None for c in checks) for t in IDLE_INSTANTS_S)


def describe(check: dict[str, Any]) -> str:
    args = check.get("args") or {}
    shown = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in sorted(args.items()))
    return f"{check.get('func')}({shown})"

"""A platform task's checks read on the app's state, as the runner's `eval_*` functions read them: each check as
atomic conditions (held, not held, or unknown where the state cannot tell). Shared by grading (curation/grade) and
the proofs a task must pass before it ships (curation/tasks/perfect.py)."""

from __future__ import annotations

from typing import Any


def positions(value: Any) -> list[int]:
    """The positions a check's `video_ids` / `video_id` names, as a list."""
    return [value] if isinstance(value, int) else list(value or [])


def report_matches(report: dict[str, Any], args: dict[str, Any]) -> bool:
    return (args.get("expected_cat") is None or report.get("category") == args["expected_cat"]) and (
        args.get("expected_reason") is None
        or str(report.get("reason", "")).strip() == str(args["expected_reason"]).strip())


def atoms(checks: list[dict[str, Any]], state: list[dict[str, Any]], others_from: int = 0,
          current: int | None = None, replayed: bool = False) -> list[tuple[str, bool | None]]:
    """Each check as atomic conditions (name, held?); None where the state cannot tell. `current`: the
    video on screen at the end, when known (a replay knows it, state.json does not). `replayed`: the
    state was rebuilt without the feed's own comments, so a comment check it finds unmet may still
    have been met by one of them (the runner's test is a substring, or any comment at all)."""
    out: list[tuple[str, bool | None]] = []

    def video(i: int) -> dict[str, Any]:
        return state[i] if 0 <= i < len(state) else {}

    for check in checks:
        func, args = check.get("func"), check.get("args") or {}
        targets = positions(args.get("video_ids", args.get("video_id")))
        if func in ("eval_like", "eval_collect"):
            flag = "is_liked" if func == "eval_like" else "is_collected"
            out += [(f"{func} {i}", bool(video(i).get(flag))) for i in targets]
            others = [i for i in range(others_from, len(state)) if i not in targets]
            out.append((f"{func} no other", not any(video(i).get(flag) for i in others)))
        elif func == "eval_report":
            out += [(f"eval_report {i}", any(report_matches(r, args) for r in video(i).get("reports") or []))
                    for i in targets]
            others = [i for i in range(others_from, len(state)) if i not in targets]
            out.append(("eval_report no other", not any(video(i).get("reports") for i in others)))
        elif func == "eval_comment":
            wanted = args.get("comment")
            for i in targets:
                held = any(wanted is None or str(wanted).strip() in str(c.get("text", "")).strip()
                           for c in video(i).get("comments") or [])
                out.append((f"eval_comment {i}", True if held else None if replayed else False))
        elif func == "eval_current_video" and current is not None:
            out += [(f"eval_current_video {i}", current == i) for i in targets]
        else:  # how far a video played is not in the app's state
            out.append((f"{func} {targets}", None))
    return out


def targets(check: dict[str, Any]) -> list[int]:
    """The positions one check names."""
    args = check.get("args") or {}
    return positions(args.get("video_ids", args.get("video_id")))

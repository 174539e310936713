"""The small languages annotators write in: options, expected end states, feed edits.

Annotators count videos from 1, as they see them; everything stored is 0-based,
as the public runner's `eval_config` expects. Each parser returns its result and
a list of one-line problems (`line 2: ...`); an empty list means it parsed.
"""

from __future__ import annotations

import re
from typing import Any

from curation.env.vocabulary import VERBS, VOCABULARY, every_check
from curation.tasks.taxonomy import load_taxonomy

OPTION_LETTERS = load_taxonomy().option_letters
_OPTION_START = re.compile(r"(?:^|(?<=[\s;；,，。？?！!）)」】]))([" + OPTION_LETTERS + r"])\s*[:：.、．)]\s*")
_CHECK_LINE = re.compile(r"^(\w+)\s+(\d+(?:\s*[,，、\-–~～到至]\s*\d+)*)(?:\s+(.*))?$")
_QUOTED = re.compile(r'"([^"]*)"')

CHECK_FUNCS = VERBS  # the authoring verb of each check (curation/env/vocabulary.py)


def parse_options(text: str | None) -> dict[str, str]:
    """`A: x B: y` on one line, `A：x；B：y`, or one option per line -> {"A": "x", ...}."""
    if not text:
        return {}
    matches = list(_OPTION_START.finditer(text))
    options: dict[str, str] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[match.end():end].strip().rstrip(";；,，").strip()
        options.setdefault(match.group(1), body)
    return options


def split_instruction(text: str) -> tuple[str, dict[str, str]]:
    """A runner instruction (question, then options) split into the two."""
    first = _OPTION_START.search(text)
    options = parse_options(text)
    if first is None or "A" not in options:
        return text.strip(), {}
    return text[:first.start()].strip(), options


def _normalise_quotes(line: str) -> str:
    return line.replace("“", '"').replace("”", '"').replace("＂", '"')


_RANGE = re.compile(r"(\d+)\s*[-–~～到至]\s*(\d+)")
# "report 3 any": the video is reported, whatever category the agent picks
ANY_CATEGORY = ("any", "任意", "任何", "*")


def _numbers(text: str, where: str, errors: list[str]) -> list[int]:
    """1-based positions as written ('2 5', '2,5', '2-4', '2到4'), in order, without repeats."""
    out: list[int] = []
    text = _RANGE.sub(lambda m: " ".join(str(n) for n in range(int(m.group(1)), int(m.group(2)) + 1))
                      if int(m.group(1)) <= int(m.group(2)) else m.group(0), text.strip())
    for token in re.split(r"[\s,，、]+", text):
        if not token:
            continue
        if not token.isdigit():
            errors.append(f"{where}: {token!r} is not a position; write numbers like 2, 5 or a range 2-4")
        elif int(token) not in out:
            out.append(int(token))
    return out


def _positions(text: str, feed_len: int, where: str, errors: list[str]) -> list[int]:
    """1-based positions as 0-based ones, each inside a feed of `feed_len` (feed edits)."""
    out = []
    for number in _numbers(text, where, errors):
        if not 1 <= number <= feed_len:
            errors.append(f"{where}: position {number} is outside the feed (1-{feed_len})")
        else:
            out.append(number - 1)
    return out


def parse_platform_state(text: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """End-state lines as the runner's checks (positions made 0-based) and the lines that could not be
    read. Reading is all this does: whether a position is inside the feed or a category is one the app
    offers is for the task rules to say, the same way whichever door a task came in by."""
    checks: list[dict[str, Any]] = []
    errors: list[str] = []
    for n, raw in enumerate((text or "").splitlines(), start=1):
        line = _normalise_quotes(raw.strip())
        if not line or line.startswith("#"):
            continue
        where = f"line {n}"
        match = _CHECK_LINE.match(line)
        if not match or match.group(1).lower() not in CHECK_FUNCS:
            errors.append(f"{where}: cannot read {raw.strip()!r}; start with one of "
                          f"{', '.join(CHECK_FUNCS)} and a position")
            continue
        verb, rest = match.group(1).lower(), (match.group(3) or "").strip()
        numbers = _numbers(match.group(2), where, errors)
        if not numbers:
            continue
        positions = [number - 1 for number in numbers]
        func = CHECK_FUNCS[verb]
        if not VOCABULARY[func].required.get("video_ids") and len(positions) != 1:
            errors.append(f"{where}: {verb} takes exactly one position")
            continue
        args = ARG_READERS[func](positions, rest)
        if isinstance(args, str):
            errors.append(f"{where}: {args}")
            continue
        checks.append({"func": func, "args": args})
    return _liked_together(checks), errors


def _liked_together(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`like 2` and `like 3` on two lines mean both liked, as `like 2,3` does. Kept apart they would be two of the
    runner's checks, each saying no other video is liked: a task no agent can pass. Likes join the first like line,
    collects the first collect line, positions in the order written."""
    out: list[dict[str, Any]] = []
    first: dict[str, dict[str, Any]] = {}
    for check in checks:
        func = check["func"]
        if not VOCABULARY[func].joins_lines:
            out.append(check)
            continue
        ids = check["args"]["video_ids"]
        ids = ids if isinstance(ids, list) else [ids]
        if func not in first:
            first[func] = {"func": func, "args": {"video_ids": ids}}
            out.append(first[func])
        else:
            held = first[func]["args"]["video_ids"]
            held += [i for i in ids if i not in held]
    for check in first.values():
        ids = check["args"]["video_ids"]
        check["args"]["video_ids"] = ids[0] if len(ids) == 1 else ids
    return out


def parse_feed_edits(text: str | None, feed_len: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Feed-edit lines into the feeds API's operations, positions made 0-based."""
    ops: list[dict[str, Any]] = []
    errors: list[str] = []
    length = feed_len
    for n, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"edit line {n}"
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if verb == "order":
            order = _positions(rest, length, where, errors)
            if sorted(order) != list(range(length)):
                errors.append(f"{where}: order must list every position 1-{length} exactly once")
                continue
            ops.append({"op": "reorder", "order": order})
        elif verb == "delete":
            positions = _positions(rest, length, where, errors)
            if positions:
                ops.append({"op": "delete", "positions": positions})
                length -= len(positions)
        elif verb == "swap":
            pos_text, _, video = rest.partition(" ")
            if not pos_text.isdigit():
                errors.append(f"{where}: swap needs a position, e.g. 'swap 4'")
                continue
            positions = _positions(pos_text, length, where, errors)
            if positions:
                ops.append({"op": "swap", "position": positions[0]}
                           | ({"video_id": video.strip()} if video.strip() else {}))
        else:
            errors.append(f"{where}: cannot read {line!r}; use order, delete or swap")
    return ops, errors


def render_platform_state(checks: list[dict[str, Any]] | None) -> str:
    """Checks back in the authoring syntax (1-based positions): what a reviewer or the group reads,
    and what a revision starts from. `parse_platform_state` reads it back to the same checks."""
    lines = []
    for check in checks or []:
        func, args = str(check.get("func", "?")), check.get("args") or {}
        spec = VOCABULARY.get(func)
        ids = args.get(spec.position_arg if spec else "video_ids", args.get("video_id"))
        where = ",".join(str(i + 1) for i in (ids if isinstance(ids, list) else [ids]) if i is not None)
        rest = ARG_WRITERS[func](args) if func in ARG_WRITERS else ""
        lines.append(f"{spec.verb if spec else func} {where}" + (f" {rest}" if rest else ""))
    return "\n".join(lines)


def _ids(positions: list[int]) -> int | list[int]:
    return positions[0] if len(positions) == 1 else positions


def _read_marks(positions: list[int], rest: str) -> dict[str, Any] | str:
    return {"video_ids": _ids(positions)}


def _read_report(positions: list[int], rest: str) -> dict[str, Any] | str:
    quoted, category = _QUOTED.search(rest), _QUOTED.sub("", rest).strip()
    if not category:
        return "report needs a category, or 'any' when every category counts"
    args = {"video_ids": _ids(positions)} | ({} if category.lower() in ANY_CATEGORY else {"expected_cat": category})
    return args | ({"expected_reason": quoted.group(1)} if quoted else {})


def _read_comment(positions: list[int], rest: str) -> dict[str, Any] | str:
    quoted = _QUOTED.search(rest)
    return {"video_ids": _ids(positions)} | ({"comment": quoted.group(1)} if quoted else {})


def _read_current(positions: list[int], rest: str) -> dict[str, Any] | str:
    return {"video_id": positions[0]}


def _read_playback(positions: list[int], rest: str) -> dict[str, Any] | str:
    target = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(%|s|秒)", rest)
    if not target:
        return "playback needs a target like 50% or 12s"
    value = float(target.group(1))
    return {"video_id": positions[0]} | ({"target_pct": round(value / 100, 6)} if target.group(2) == "%"
                                         else {"target_sec": value})


def _write_report(args: dict[str, Any]) -> str:
    reason = args.get("expected_reason")
    return f"{args.get('expected_cat') or 'any'}" + (f' "{reason}"' if reason is not None else "")


def _write_comment(args: dict[str, Any]) -> str:
    return f'"{args["comment"]}"' if args.get("comment") is not None else ""


def _write_playback(args: dict[str, Any]) -> str:
    return f"{round(args['target_pct'] * 100, 4):g}%" if "target_pct" in args else f"{args.get('target_sec', 0):g}s"


# each check's arguments after its positions, read from an end-state line and written back
ARG_READERS = {"eval_like": _read_marks, "eval_collect": _read_marks, "eval_report": _read_report,
               "eval_comment": _read_comment, "eval_current_video": _read_current, "eval_playback": _read_playback}
ARG_WRITERS = {"eval_like": lambda args: "", "eval_collect": lambda args: "", "eval_report": _write_report,
               "eval_comment": _write_comment, "eval_current_video": lambda args: "",
               "eval_playback": _write_playback}
every_check(ARG_READERS, "authoring reader")
every_check(ARG_WRITERS, "authoring writer")

"""The public runner's episode logs: `<logs>/<task_id>/log.json` with `instruction`, `history`
(chat messages; an assistant's `tool_calls` carry a function name and its arguments as a JSON
string) and `result` (1.0 / 0.0), the step recordings beside it (`step_<i>.png`, `step_<i>.mp4`
after a `watch`, from 0: step 0 is the screen before any action), and optionally `state.json`:
the app's `/api/debug/state` after the episode.

A call whose arguments do not parse or do not fit its tool is kept with its problem: it still
costs a step, but moves nothing. A log that cannot be read at all is an `EpisodeError` naming
the file and the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.errors import InputError

# Each tool's arguments and their kinds (the runner's schema: coordinates are integers 0–1000).
TOOLS: dict[str, dict[str, str]] = {
    "click": {"x": "int", "y": "int"}, "swipe": {"x1": "int", "y1": "int", "x2": "int", "y2": "int"},
    "wait": {"seconds": "number"}, "watch": {"seconds": "number"}, "type": {"text": "str"},
    "answer": {"text": "str"}, "finish": {}, "mark_point": {"x": "int", "y": "int"}}
LIMITS = {"int": (0, 1000), "number": (0, 60)}


class EpisodeError(InputError):
    """An episode log that cannot be graded; the message names the file and why."""


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]
    problem: str | None = None  # why the call did nothing (bad JSON, unknown tool, an argument out of range)
    turn: int = 0               # which model turn issued it (the runner records one step per turn)


@dataclass
class Episode:
    task_id: str
    folder: Path
    instruction: str
    calls: list[ToolCall]
    result: float | None
    state: list[dict[str, Any]] | None
    steps: list[Path] = field(default_factory=list)  # step recordings in order (png or mp4)
    turns: int = 0  # the model's turns (assistant messages), whether or not they held a call


def check_args(name: str, args: Any) -> str | None:
    if name not in TOOLS:
        return f"unknown tool {name!r}"
    if not isinstance(args, dict):
        return "arguments are not an object"
    for key, kind in TOOLS[name].items():
        value = args.get(key)
        if value is None:
            return f"missing argument {key}"
        if kind == "str":
            if not isinstance(value, str):
                return f"{key} is not text"
            continue
        ok = isinstance(value, int) if kind == "int" else isinstance(value, int | float)
        if not ok or isinstance(value, bool):
            return f"{key} is not {'an integer' if kind == 'int' else 'a number'}"
        low, high = LIMITS[kind]
        if not low <= value <= high:
            return f"{key} = {value} is outside [{low}, {high}]"
    fps = args.get("fps") if name == "watch" else None
    if fps is not None and (isinstance(fps, bool) or not isinstance(fps, int | float) or not 0.1 <= fps <= 30):
        return f"fps = {fps!r} is outside [0.1, 30]"
    return None


def parse_calls(history: list[Any]) -> list[ToolCall]:
    calls = []
    turn = 0
    for message in history:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        turn += 1
        for call in message.get("tool_calls") or []:
            function = (call or {}).get("function") or {}
            name = str(function.get("name") or "")
            raw = function.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else (raw if raw is not None else {})
            except json.JSONDecodeError as exc:
                calls.append(ToolCall(name, {}, f"arguments are not JSON ({exc.msg})", turn))
                continue
            problem = check_args(name, args)
            calls.append(ToolCall(name, args if isinstance(args, dict) else {}, problem, turn))
    return calls


def _step_index(path: Path) -> int:
    match = re.fullmatch(r"step_(\d+)(?:_frame_\d+)?\.(png|mp4)", path.name)
    return int(match.group(1)) if match else -1


def _frame_index(path: Path) -> int:
    match = re.search(r"_frame_(\d+)", path.name)
    return int(match.group(1)) if match else -1


def step_files(folder: Path) -> list[Path]:
    """One recording per recorded step, in step order: the screenshot, else the watch video, else (runs
    with --no-video) the last of the watch's frames."""
    by_step: dict[int, list[Path]] = {}
    for path in folder.iterdir():
        if _step_index(path) >= 0:
            by_step.setdefault(_step_index(path), []).append(path)

    def pick(files: list[Path]) -> Path:
        whole = [f for f in files if "_frame_" not in f.name]
        if whole:
            return sorted(whole, key=lambda f: f.suffix != ".png")[0]
        return max(files, key=_frame_index)

    return [pick(files) for _, files in sorted(by_step.items())]


def step_index(path: Path) -> int:
    return _step_index(path)


def read_episode(log: Path) -> Episode:
    folder = log.parent
    try:
        data = json.loads(log.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EpisodeError(f"{log}: not readable JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise EpisodeError(f"{log}: expected an object with a history list")
    result = data.get("result")
    if result is not None and not isinstance(result, int | float):
        raise EpisodeError(f"{log}: result {result!r} is not a number")
    state = None
    if (folder / "state.json").is_file():
        try:
            state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EpisodeError(f"{folder / 'state.json'}: not readable JSON ({exc})") from None
        if not isinstance(state, list):
            raise EpisodeError(f"{folder / 'state.json'}: expected the app's list of videos")
    steps = step_files(folder)
    turns = sum(1 for m in data["history"] if isinstance(m, dict) and m.get("role") == "assistant")
    return Episode(folder.name, folder, str(data.get("instruction") or ""), parse_calls(data["history"]),
                   float(result) if result is not None else None, state, steps, turns)


def find_logs(logs_dir: Path) -> list[Path]:
    """Every `log.json` under a logs folder (`<task_id>/log.json`, at any depth), in a stable order."""
    if not logs_dir.is_dir():
        raise InputError(f"{logs_dir} is not a folder of episode logs")
    return sorted(logs_dir.rglob("log.json"))

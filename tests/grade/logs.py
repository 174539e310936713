"""Episode logs in the public runner's exact shape, written by the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

UP = {"x1": 500, "y1": 800, "x2": 500, "y2": 200}    # to the next video
DOWN = {"x1": 500, "y1": 200, "x2": 500, "y2": 800}  # to the previous one


def write_episode(logs: Path, task_id: str, instruction: str, calls: list[tuple[str, Any]], result: float,
                  state: list[dict[str, Any]] | None = None, steps: int = 0) -> Path:
    """`calls`: (tool, arguments as a dict, or a raw string standing for what the model sent)."""
    folder = logs / task_id
    folder.mkdir(parents=True, exist_ok=True)
    history: list[dict[str, Any]] = [{"role": "system", "content": "你是一个手机短视频应用上的智能体。"},
                                     {"role": "user", "content": [{"type": "text", "text": instruction}]}]
    for n, (name, args) in enumerate(calls):
        call_id = f"call_{n}"
        history.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}]})
        history.append({"role": "tool", "content": [{"type": "text", "text": "这是执行上一步动作后的屏幕截图。"}],
                        "tool_call_id": call_id})
    (folder / "log.json").write_text(json.dumps({"instruction": instruction, "history": history, "result": result},
                                                ensure_ascii=False, indent=4), encoding="utf-8")
    if state is not None:
        (folder / "state.json").write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    return folder


def app_state(n: int, **changes: dict[str, Any]) -> list[dict[str, Any]]:
    """The app's /api/debug/state for an n-video feed; `changes` by position: v0={"is_liked": True}."""
    state = [{"id": i + 1, "video_url": f"static/data/FakeSV/videos/{i}.mp4", "author": f"用户{i + 1}", "desc": "",
              "likes": 0, "collects": 0, "is_liked": False, "is_collected": False, "total_comment_count": 0,
              "comments": [], "reports": []} for i in range(n)]
    for key, change in changes.items():
        state[int(key[1:])].update(change)
    return state

"""`curate rewards build LOGS_DIR --release vX.Y.Z`: video–instruction–reward records in the
shape ExeVR-53k uses, from the runner's episodes.

Each episode with step recordings becomes a step-level video: one post-action frame per step
(`step_<i>.png` as it is, the last frame of a `step_<i>.mp4` watch recording), concatenated at
1 fps, so second i shows step i. Its own instruction gets the graded label; a trajectory that
succeeded is also paired with a derived instruction it does not fulfil (`negatives.py`),
labelled incorrect with the second at which it departs when that can be told. Paths in the
JSONL are relative to the output folder.

Episodes are read by the same loader as grading (`collect.py`): the same rejects (a second log
of a task, another instruction, a task not in the release), so no two episodes write one step
video; an episode without step recordings is rejected here too. An episode of a defective task
yields no record at all: its label would teach the rule of a task that cannot be graded as
written (counted as `defective skipped`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from curation.core.config import MediaConfig
from curation.core.errors import MediaError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import video_durations
from curation.env.episodes import Episode, step_index
from curation.grade.collect import collect, release_tasks
from curation.grade.folders import check_logs_arguments
from curation.grade.metrics import grade_episode
from curation.grade.negatives import make_negative
from curation.release.semver import Version

QUIET_TOOLS = ("answer", "finish")  # the runner saves no recording after these
CANVAS = (376, 812)  # the runner's 375×812 viewport, one column wider for H.264's even sizes


def _ffmpeg(binary: str, *args: str) -> None:
    proc = subprocess.run([binary, "-v", "error", "-y", "-nostdin", *args], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise MediaError(f"ffmpeg failed: {(proc.stderr.strip().splitlines() or ['no output'])[-1][:200]}")


def keyframe_video(episode: Episode, target: Path, media: MediaConfig) -> int:
    """The 1-fps step video of an episode; the number of frames (= steps) in it."""
    with tempfile.TemporaryDirectory() as tmp:
        frames = Path(tmp)
        for n, step in enumerate(episode.steps):
            frame = frames / f"{n:05d}.png"
            if step.suffix == ".png":
                shutil.copyfile(step, frame)
            else:  # the last moment of the watch recording: every frame written over the one before
                _ffmpeg(media.ffmpeg, "-i", str(step), "-update", "1", str(frame))
            if not frame.is_file():
                raise MediaError(f"{step}: no frame could be read from it")
        target.parent.mkdir(parents=True, exist_ok=True)
        # screenshots and watch recordings differ in size (the runner rounds recordings to multiples of 16)
        _ffmpeg(media.ffmpeg, "-framerate", "1", "-i", str(frames / "%05d.png"), "-vf",
                f"scale={CANVAS[0]}:{CANVAS[1]}:force_original_aspect_ratio=decrease,"
                f"pad={CANVAS[0]}:{CANVAS[1]}:(ow-iw)/2:(oh-ih)/2,format=yuv420p", "-c:v", "libx264",
                "-preset", "veryfast", "-r", "1", str(target))
    return len(episode.steps)


def turn_steps(episode: Episode) -> dict[int, int]:
    """turn -> the step index the runner gave its recording. Step 0 is the screen before any action;
    a turn whose last call is `answer` or `finish` records nothing; one that failed uses an index
    although no file is written."""
    last: dict[int, str] = {}
    for call in episode.calls:
        last[call.turn] = call.name
    out, step = {}, 0
    for turn in sorted(last):
        if last[turn] not in QUIET_TOOLS:
            step += 1
            out[turn] = step
    return out


def departure_second(episode: Episode, negative: Any) -> int | None:
    """The second of the step video at which the trajectory leaves the new instruction: the frame of
    the step that recorded the departing call's turn (None when that step has no recording)."""
    wanted = ("answer",) if negative.departs_at_answer else ("click", "type") if negative.departs_at_first_action \
        else ()
    call = next((c for c in episode.calls if c.name in wanted and c.problem is None), None)
    if call is None:
        return None
    if call.name == "answer":  # nothing is recorded after an answer: the departure shows on the last frame before it
        recorded = [s for t, s in turn_steps(episode).items() if t < call.turn]
        step = max(recorded, default=0)
    else:
        step = turn_steps(episode).get(call.turn, -1)
    positions = {step_index(path): n for n, path in enumerate(episode.steps)}
    return positions.get(step)


def record(video: str, instruction: str, correct: bool, span: int | None = None) -> dict[str, Any]:
    label = "\\box{correct}" if correct else "\\box{incorrect}" + (f" [{span}s, {span + 1}s)" if span is not None
                                                                    else "")
    return {"conversations": [{"from": "human", "value": f"<video>{instruction}"}, {"from": "gpt", "value": label}],
            "videos": [video]}


def _check(logs: list[tuple[str, Path]], version: str = "", out: Path | None = None, *_: Any, **__: Any) -> None:
    check_logs_arguments([folder for _, folder in logs], out, [model for model, _ in logs])


@stage("rewards-build", command="curate rewards build LOGS_DIR --release vX.Y.Z", batched=False, check=_check,
       reads=("releases", "release_tasks", "task_transitions", "videos"), writes=("rejects",),
       summary="ExeVR-style records: each episode's 1-fps step video with its instruction and graded label, "
       "plus derived hard negatives", files=("out: reward files",))
def build_rewards(run: StageRun, logs: list[tuple[str, Path]], version: str, out: Path,
                  media: MediaConfig) -> RunResult:
    catalog = run.db
    target = str(Version.parse(version))
    tasks = release_tasks(run, target)
    durations = video_durations(catalog, sorted({v for t in tasks.values() for v in t["video_feed"]}))
    run.params.update(release=target, models=[m for m, _ in logs], out=str(out))
    counts: Counter[str] = Counter()
    records = []
    found = collect(run, logs, tasks, target, "reward records for")
    counts.update(logs=found.logs, rejected=len(found.rejected))
    for item in found.played:
        episode, task, model = item.episode, item.task, item.model
        if not episode.steps:
            run.reject(source=model, raw_ref=str(item.log), reason=f"{item.log}: no step recordings beside it",
                       raw=b"", record_id=f"{model}/{item.log.parent.name}")
            counts["rejected"] += 1
            continue
        if task["defective"]:
            counts["defective skipped"] += 1
            continue
        grade = grade_episode(episode, task, [durations.get(v) for v in task["video_feed"]])
        video = f"videos/{model}/{episode.task_id}.mp4"
        keyframe_video(episode, out / video, media)
        correct = grade.sr == 1.0
        records.append(record(video, task["instruction"], correct))
        counts[f"{task['tier']} {'positive' if correct else 'negative'}"] += 1
        negative = make_negative(task) if correct else None
        if negative is not None:
            records.append(record(video, negative.instruction, False, departure_second(episode, negative)))
            counts[f"{task['tier']} derived negative"] += 1
    out.mkdir(parents=True, exist_ok=True)
    with (out / "rewards.jsonl").open("w", encoding="utf-8") as handle:
        for written in records:
            handle.write(json.dumps(written, ensure_ascii=False) + "\n")
    run.counts.update(dict(sorted(counts.items())), records=len(records))
    (out / "counts.json").write_text(json.dumps(run.counts, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return RunResult(run.counts)

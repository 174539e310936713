"""`curate media normalise`: every probed video as H.264/AAC CFR MP4 on the app's canvas,
with a poster frame and 1-fps keyframes. One ffmpeg process per file decodes once and
writes all three outputs; each lands under a temporary name and is renamed into place."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ffmpeg

from curation.catalog import Catalog
from curation.media.files import MediaError, one_line
from curation.media.probe import probe_file
from curation.progress import progress

RECIPE_VERSION = 1  # bump when the command line changes in a way that changes outputs
SETTINGS = ("width", "height", "fps", "crf", "preset", "audio_bitrate", "poster_at_s", "keyframe_fps")


@dataclass
class Job:
    video_id: str
    source_path: Path
    input_sha256: str
    duration_s: float
    has_audio: bool
    output: Path
    poster: Path
    frames_dir: Path


def settings_sha256(config: dict[str, Any]) -> str:
    settings = {k: config[k] for k in SETTINGS} | {"recipe": RECIPE_VERSION}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()


def output_paths(video_id: str, out_dir: Path) -> tuple[Path, Path, Path]:
    # video ids are "<source>/<native id>"; a native id may itself hold one '/' (LiveBot).
    parts = [p for p in video_id.split("/") if p not in ("", ".", "..")]
    base = out_dir.joinpath(*parts)
    return (base.with_name(base.name + ".mp4"), base.with_name(base.name + ".jpg"),
            base.with_name(base.name + ".frames"))


def build_command(job: Job, config: dict[str, Any], tmp_out: Path, tmp_poster: Path,
                  tmp_frames: Path) -> list[str]:
    w, h, fps = int(config["width"]), int(config["height"]), int(config["fps"])
    source = ffmpeg.input(str(job.source_path))
    canvas = (source.video
              .filter("scale", w, h, force_original_aspect_ratio="decrease")
              .filter("pad", w, h, "(ow-iw)/2", "(oh-ih)/2", color="black")
              .filter("setsar", 1)
              .filter("fps", fps=fps)
              .filter("format", "yuv420p"))
    branches = canvas.split()
    main, poster, frames = branches[0], branches[1], branches[2]
    audio = (source.audio if job.has_audio else
             ffmpeg.input("anullsrc=channel_layout=stereo:sample_rate=44100", f="lavfi",
                          t=f"{job.duration_s:.3f}").audio)
    poster_at = min(float(config["poster_at_s"]), job.duration_s / 2)
    outputs = [
        ffmpeg.output(main, audio, str(tmp_out), vcodec="libx264", preset=config["preset"],
                      crf=int(config["crf"]), acodec="aac", audio_bitrate=config["audio_bitrate"],
                      movflags="+faststart", **{"fps_mode": "cfr", "f": "mp4"}),
        ffmpeg.output(poster.filter("trim", start=poster_at).filter("setpts", "PTS-STARTPTS"),
                      str(tmp_poster), vframes=1, **{"q:v": 3, "f": "image2"}),
        # The first frame, then one each 1/keyframe_fps seconds: a 0.2 s clip still gets one.
        ffmpeg.output(frames.filter("select", f"isnan(prev_selected_t)+gte(t-prev_selected_t,"
                                              f"{1 / float(config['keyframe_fps']):.6f})"),
                      str(tmp_frames / "%04d.jpg"), **{"q:v": 4, "f": "image2", "fps_mode": "vfr"}),
    ]
    return ffmpeg.merge_outputs(*outputs).global_args("-nostdin", "-v", "error").overwrite_output(
    ).compile(cmd=config.get("ffmpeg", "ffmpeg"))


def normalise_one(job: Job, config: dict[str, Any]) -> dict[str, Any]:
    """Transcode one file; on failure nothing is left at the final paths."""
    job.output.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = job.output.with_name(job.output.name + ".part.mp4")
    tmp_poster = job.poster.with_name(job.poster.name + ".part.jpg")
    tmp_frames = job.frames_dir.with_name(job.frames_dir.name + ".part")
    shutil.rmtree(tmp_frames, ignore_errors=True)
    tmp_frames.mkdir(parents=True)
    try:
        cmd = build_command(job, config, tmp_out, tmp_poster, tmp_frames)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise MediaError(f"ffmpeg failed: {one_line(proc.stderr, job.source_path)}")
        if not tmp_poster.exists():
            raise MediaError("ffmpeg wrote no poster frame")
        out = probe_file(tmp_out, config.get("ffprobe", "ffprobe"))
        os.replace(tmp_out, job.output)
        os.replace(tmp_poster, job.poster)
        shutil.rmtree(job.frames_dir, ignore_errors=True)
        os.replace(tmp_frames, job.frames_dir)
    finally:
        for leftover in (tmp_out, tmp_poster):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(tmp_frames, ignore_errors=True)
    return {"width": out.width, "height": out.height, "fps": out.fps, "duration_s": out.duration_s,
            "frames": len(list(job.frames_dir.glob("*.jpg")))}


def plan_jobs(catalog: Catalog, config: dict[str, Any]) -> tuple[list[Job], int]:
    """Jobs still to do, and how many probed videos are already up to date."""
    settings = settings_sha256(config)
    out_dir = Path(config["output_dir"])
    done = {(v, s) for v, s, p in catalog.con.execute(
        "SELECT video_id, input_sha256, output_path FROM media_outputs WHERE settings_sha256 = ?",
        [settings]).fetchall() if Path(p).exists()}
    jobs, skipped = [], 0
    for video_id, path, sha, duration, has_audio in catalog.con.execute(
            "SELECT video_id, path, sha256, duration_s, has_audio FROM media_probes ORDER BY video_id"
    ).fetchall():
        if (video_id, sha) in done:
            skipped += 1
            continue
        jobs.append(Job(video_id, Path(path), sha, duration, has_audio, *output_paths(video_id, out_dir)))
    return jobs, skipped


def run_normalise(catalog: Catalog, config: dict[str, Any], workers: int,
                  dry_run: bool = False) -> dict[str, int]:
    jobs, skipped = plan_jobs(catalog, config)
    rejected_at_probe = catalog.con.execute(
        "SELECT count(*) FROM rejects WHERE stage = 'media-probe'").fetchone()[0]
    counts = {"seen": len(jobs) + skipped + rejected_at_probe, "normalised": 0, "skipped": skipped,
              "rejected": rejected_at_probe, "to_do": len(jobs)}
    if dry_run:
        return counts
    settings = settings_sha256(config)
    run = catalog.start_run("media-normalise", {k: config[k] for k in SETTINGS} | {"workers": workers})

    def work(job: Job) -> tuple[Job, dict[str, Any] | str]:
        try:
            return job, normalise_one(job, config)
        except MediaError as exc:
            return job, str(exc)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for job, result in progress(pool.map(work, jobs), "normalise", len(jobs)):
            with catalog.transaction():
                if isinstance(result, str):
                    counts["rejected"] += 1
                    catalog.con.execute("INSERT INTO rejects VALUES (?, 'media-normalise', ?, ?, ?, ?, ?)",
                                        [run.run_id, job.video_id.split("/")[0], str(job.source_path),
                                         job.video_id, result, str(job.source_path).encode()])
                    continue
                counts["normalised"] += 1
                catalog.con.execute("DELETE FROM media_outputs WHERE video_id = ?", [job.video_id])
                catalog.con.execute(
                    "INSERT INTO media_outputs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [job.video_id, job.input_sha256, settings, str(job.output), str(job.poster),
                     str(job.frames_dir), result["frames"], result["width"], result["height"],
                     result["fps"], result["duration_s"], run.run_id])
    del counts["to_do"]
    run.counts = counts
    catalog.finish_run(run)
    return counts

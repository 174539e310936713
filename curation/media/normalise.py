"""`curate media normalise`: every probed video as H.264/AAC CFR MP4 on the app's canvas,
with a poster frame and 1-fps keyframes. One ffmpeg process per file decodes once and
writes all three outputs; each lands under a temporary name and is renamed into place."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import ffmpeg
import pyarrow as pa

from curation.core.catalog import Catalog
from curation.core.config import ExecutorConfig, MediaConfig
from curation.core.errors import MediaError
from curation.core.executor import Resources, map_tables
from curation.core.fingerprint import json_sha256
from curation.core.stage import STAGES, StageRun, stage
from curation.media.files import one_line
from curation.media.probe import probe_file

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


def settings(config: MediaConfig) -> dict[str, Any]:
    return {k: getattr(config, k) for k in SETTINGS}


def settings_sha256(config: MediaConfig) -> str:
    # the settings hash as before the config was typed, where keyframe_fps was the integer 1:
    # outputs made then stay up to date
    values = settings(config)
    if float(values["keyframe_fps"]).is_integer():
        values["keyframe_fps"] = int(values["keyframe_fps"])
    keyed = values | {"recipe": RECIPE_VERSION}
    return json_sha256(keyed)


def output_paths(video_id: str, out_dir: Path) -> tuple[Path, Path, Path]:
    # video ids are "<source>/<native id>"; a native id may itself hold one '/' (LiveBot).
    parts = [p for p in video_id.split("/") if p not in ("", ".", "..")]
    base = out_dir.joinpath(*parts)
    return (base.with_name(base.name + ".mp4"), base.with_name(base.name + ".jpg"),
            base.with_name(base.name + ".frames"))


def media_root(catalog: Catalog, configured: Path) -> Path:
    """The folder the normalised media are in, as the catalog records it, so that an export from any
    working folder serves the files `curate media normalise` wrote; the configured folder (made
    absolute) when nothing is recorded, or only paths relative to some earlier working folder."""
    row = catalog.con.execute("SELECT video_id, output_path FROM media_outputs ORDER BY video_id LIMIT 1").fetchone()
    if row is not None and Path(row[1]).is_absolute():
        depth = len(output_paths(row[0], Path("/"))[0].parts) - 1  # the parts the video id adds to the root
        return Path(row[1]).parents[depth - 1]
    return configured.resolve()


def build_command(job: Job, config: MediaConfig, tmp_out: Path, tmp_poster: Path,
                  tmp_frames: Path) -> list[str]:
    w, h, fps = config.width, config.height, config.fps
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
    poster_at = min(config.poster_at_s, job.duration_s / 2)
    outputs = [
        ffmpeg.output(main, audio, str(tmp_out), vcodec="libx264", preset=config.preset,
                      crf=config.crf, acodec="aac", audio_bitrate=config.audio_bitrate,
                      movflags="+faststart", **{"fps_mode": "cfr", "f": "mp4"}),
        ffmpeg.output(poster.filter("trim", start=poster_at).filter("setpts", "PTS-STARTPTS"),
                      str(tmp_poster), vframes=1, **{"q:v": 3, "f": "image2"}),
        # The first frame, then one each 1/keyframe_fps seconds: a 0.2 s clip still gets one.
        ffmpeg.output(frames.filter("select", f"isnan(prev_selected_t)+gte(t-prev_selected_t,"
                                              f"{1 / config.keyframe_fps:.6f})"),
                      str(tmp_frames / "%04d.jpg"), **{"q:v": 4, "f": "image2", "fps_mode": "vfr"}),
    ]
    return ffmpeg.merge_outputs(*outputs).global_args("-nostdin", "-v", "error").overwrite_output(
    ).compile(cmd=config.ffmpeg)


def normalise_one(job: Job, config: MediaConfig) -> dict[str, Any]:
    """Transcode one file; on failure nothing is left at the final paths."""
    job.output.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = job.output.with_name(job.output.name + ".part.mp4")
    tmp_poster = job.poster.with_name(job.poster.name + ".part.jpg")
    tmp_frames = job.frames_dir.with_name(job.frames_dir.name + ".part")
    shutil.rmtree(tmp_frames, ignore_errors=True)
    tmp_frames.mkdir(parents=True)
    try:
        cmd = build_command(job, config, tmp_out, tmp_poster, tmp_frames)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                  timeout=config.transcode_timeout_s)
        except subprocess.TimeoutExpired:
            raise MediaError(f"ffmpeg did not finish within {config.transcode_timeout_s:g} s "
                             "([media] transcode_timeout_s)") from None
        except FileNotFoundError:
            raise MediaError(f"ffmpeg not found ({config.ffmpeg}): install ffmpeg or set [media] ffmpeg") from None
        if proc.returncode != 0:
            raise MediaError(f"ffmpeg failed: {one_line(proc.stderr, job.source_path)}")
        if not tmp_poster.exists():
            raise MediaError("ffmpeg wrote no poster frame")
        out = probe_file(tmp_out, config.ffprobe, timeout_s=config.probe_timeout_s)
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


def plan_jobs(catalog: Catalog, config: MediaConfig) -> tuple[list[Job], int]:
    """Jobs still to do, and how many probed videos are already up to date."""
    digest = settings_sha256(config)
    out_dir = Path(config.output_dir).resolve()  # recorded absolute: served wherever `curate` runs later
    done = {(v, s) for v, s, p in catalog.con.execute(
        "SELECT video_id, input_sha256, output_path FROM media_outputs WHERE settings_sha256 = ?",
        [digest]).fetchall() if Path(p).exists()}
    jobs, skipped = [], 0
    for video_id, path, sha, duration, has_audio in catalog.con.execute(
            "SELECT video_id, path, sha256, duration_s, has_audio FROM media_probes ORDER BY video_id"
    ).fetchall():
        if (video_id, sha) in done:
            skipped += 1
            continue
        jobs.append(Job(video_id, Path(path), sha, duration, has_audio, *output_paths(video_id, out_dir)))
    return jobs, skipped


RESULT_SCHEMA = pa.schema([("video_id", pa.string()), ("error", pa.string()), ("width", pa.int64()),
                           ("height", pa.int64()), ("fps", pa.float64()), ("duration_s", pa.float64()),
                           ("frames", pa.int64())])
JOB_FIELDS = ("video_id", "source_path", "input_sha256", "duration_s", "has_audio", "output", "poster", "frames_dir")


def jobs_table(jobs: list[Job]) -> pa.Table:
    return pa.table({f: [str(getattr(j, f)) if isinstance(getattr(j, f), Path) else getattr(j, f) for j in jobs]
                     for f in JOB_FIELDS})


def normalise_rows(config: MediaConfig, batch: pa.Table) -> pa.Table:
    """The per-batch work, the same here and on a Ray worker: jobs in, one result row each (or the error)."""
    out = []
    for row in batch.to_pylist():
        job = Job(row["video_id"], Path(row["source_path"]), row["input_sha256"], row["duration_s"],
                  row["has_audio"], Path(row["output"]), Path(row["poster"]), Path(row["frames_dir"]))
        try:
            out.append({"video_id": job.video_id, "error": None, **normalise_one(job, config)})
        except MediaError as exc:
            out.append({"video_id": job.video_id, "error": str(exc)})
    return pa.Table.from_pylist(out, schema=RESULT_SCHEMA)


@stage("media-normalise", command="curate media normalise [--executor local|ray]",
       reads=("media_probes", "media_outputs", "rejects"), writes=("media_outputs", "rejects"), batched=True,
       resources=Resources(cpus=1.0, memory_mb=512),
       summary="H.264/AAC CFR MP4 on the app canvas, poster, 1-fps keyframes; failures are rejected")
def normalise_media(run: StageRun, config: MediaConfig, workers: int,
                    executor: ExecutorConfig | None = None) -> dict[str, int]:
    """Transcode what is not up to date (a dry run only counts). Locally each file commits as it is
    done; on Ray the job merges in one transaction (the workers write the files where the catalog
    says: a cluster needs the media folders on shared storage)."""
    catalog = run.db
    executor = executor or ExecutorConfig()
    jobs, skipped = plan_jobs(catalog, config)
    rejected_at_probe = catalog.scalar("SELECT count(*) FROM rejects WHERE stage = 'media-probe'")
    counts = run.counts
    counts.update(seen=len(jobs) + skipped + rejected_at_probe, normalised=0, skipped=skipped,
                  rejected=rejected_at_probe)
    if run.dry_run:
        return {**counts, "to_do": len(jobs)}
    digest = settings_sha256(config)
    run.params.update(settings(config), workers=workers, executor=executor.kind)
    by_id = {job.video_id: job for job in jobs}
    work = partial(normalise_rows, config)

    def record(result: dict[str, Any]) -> None:
        job = by_id[result["video_id"]]
        run.clear_rejects(record_id=job.video_id)
        if result["error"] is not None:
            counts["rejected"] += 1
            run.reject(source=job.video_id.split("/")[0], raw_ref=str(job.source_path),
                       record_id=job.video_id, reason=result["error"], raw=str(job.source_path).encode())
            return
        counts["normalised"] += 1
        catalog.con.execute("DELETE FROM media_outputs WHERE video_id = ?", [job.video_id])
        catalog.insert("media_outputs", {
            "video_id": job.video_id, "input_sha256": job.input_sha256, "settings_sha256": digest,
            "output_path": str(job.output), "poster_path": str(job.poster), "frames_dir": str(job.frames_dir),
            "frames": result["frames"], "width": result["width"], "height": result["height"], "fps": result["fps"],
            "duration_s": result["duration_s"], "run_id": run.run_id})

    if executor.kind == "local":
        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = pool.map(lambda job: work(jobs_table([job])), jobs)
            for table in run.progress(done, "normalise", len(jobs)):
                with catalog.transaction():
                    record(table.to_pylist()[0])
        return counts
    batches = [jobs_table(jobs[i:i + 4]) for i in range(0, len(jobs), 4)]
    results = [row for table in run.progress(map_tables(work, batches, executor,
                                                        STAGES["media-normalise"].resources or Resources()),
                                             "normalise on Ray", len(batches)) for row in table.to_pylist()]
    with catalog.transaction():
        for result in sorted(results, key=lambda r: r["video_id"]):
            record(result)
    return counts

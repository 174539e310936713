"""`curate media probe`: what each linked file really is, by ffprobe."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.config import MediaConfig
from curation.core.errors import MediaError
from curation.core.stage import StageRun, stage
from curation.media.files import inside, one_line, sha256_file


@dataclass
class ProbeInfo:
    path: str
    sha256: str
    size_bytes: int
    container: str
    video_codec: str
    audio_codec: str | None
    width: int
    height: int
    rotation: int
    fps: float | None
    variable_fps: bool
    duration_s: float
    has_audio: bool


def _rate(text: str | None) -> float | None:
    try:
        value = Fraction(text) if text and text != "0/0" else None
    except (ValueError, ZeroDivisionError):
        return None
    return float(value) if value else None


def _rotation(stream: dict[str, Any]) -> int:
    for side in stream.get("side_data_list") or []:
        if "rotation" in side:
            return int(round(float(side["rotation"]))) % 360
    rotate = (stream.get("tags") or {}).get("rotate")
    return int(rotate) % 360 if rotate else 0


def probe_file(path: Path, ffprobe: str = "ffprobe", max_duration_s: float = 14400,
               timeout_s: float = 120) -> ProbeInfo:
    """ffprobe facts about one file, or MediaError with ffprobe's own one-line error."""
    try:
        proc = subprocess.run([ffprobe, "-v", "error", "-print_format", "json", "-show_format",
                               "-show_streams", str(path)], capture_output=True, text=True,
                              errors="replace", timeout=timeout_s)
    except FileNotFoundError:
        raise MediaError(f"ffprobe not found ({ffprobe}): install ffmpeg or set [media] ffprobe") from None
    except subprocess.TimeoutExpired:
        raise MediaError(f"ffprobe gave no answer within {timeout_s:g} s") from None
    if proc.returncode != 0:
        raise MediaError(f"not readable as media: {one_line(proc.stderr, path)}")
    try:
        data = json.loads(proc.stdout or "{}")
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        raise MediaError(f"ffprobe printed output that is not its JSON ({str(exc)[:80]}): "
                         f"{(proc.stdout or '').strip()[:80]!r}") from None
    streams = data.get("streams") or []
    video = next((s for s in streams if s.get("codec_type") == "video"
                  and not (s.get("disposition") or {}).get("attached_pic")), None)
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    fmt = data.get("format") or {}
    if video is None:
        raise MediaError("no video stream")
    if video.get("codec_name") in (None, "none", "unknown"):
        raise MediaError(f"unsupported video codec (tag {video.get('codec_tag_string', '?')})")
    duration = _rate(str(fmt.get("duration") or video.get("duration") or "0")) or 0.0
    if duration <= 0:
        raise MediaError("zero or unknown duration")
    if duration > max_duration_s:
        raise MediaError(f"absurd duration {duration:.0f} s (over {max_duration_s:.0f} s)")
    width, height = int(video.get("width") or 0), int(video.get("height") or 0)
    if width <= 0 or height <= 0:
        raise MediaError("video stream has no frame size")
    real, average = _rate(video.get("r_frame_rate")), _rate(video.get("avg_frame_rate"))
    variable = bool(real and average and abs(real - average) / real > 0.01)
    return ProbeInfo(
        path=str(path), sha256=sha256_file(path), size_bytes=path.stat().st_size,
        container=str(fmt.get("format_name") or "unknown"), video_codec=video["codec_name"],
        audio_codec=audio.get("codec_name") if audio else None, width=width, height=height,
        rotation=_rotation(video), fps=round(average or real or 0.0, 4) or None,
        variable_fps=variable, duration_s=round(duration, 4), has_audio=audio is not None)


def linked_files(catalog: Catalog, config: MediaConfig) -> list[tuple[str, str, str]]:
    """(video_id, path as linked, root) for scanned files and for `media_path`s set at ingest."""
    rows = catalog.con.execute("""
        SELECT video_id, path, root FROM media_files
        UNION ALL
        SELECT video_id, media_path, NULL FROM videos
        WHERE media_path IS NOT NULL AND video_id NOT IN (SELECT video_id FROM media_files)
        ORDER BY video_id""").fetchall()
    return [(v, p, r or config.root) for v, p, r in rows]


@stage("media-probe", command="curate media probe", reads=("media_files", "videos", "media_probes"),
       writes=("media_probes", "videos", "rejects"), batched=True,
       summary="ffprobe facts; fills videos.duration_s; unreadable files are rejected")
def probe_media(run: StageRun, config: MediaConfig, workers: int) -> dict[str, int]:
    catalog = run.db
    files = linked_files(catalog, config)
    known = {(v, s) for v, s in catalog.con.execute("SELECT video_id, sha256 FROM media_probes").fetchall()}
    run.params.update(workers=workers, files=len(files))

    def probe_one(item: tuple[str, str, str]) -> tuple[str, str, ProbeInfo | str]:
        video_id, linked, root = item
        try:
            path = inside(Path(linked), Path(root))
            if not path.is_file():
                raise MediaError("file is missing")
            return video_id, linked, probe_file(path, config.ffprobe, config.max_duration_s, config.probe_timeout_s)
        except MediaError as exc:
            return video_id, linked, str(exc)

    counts = run.counts
    counts.update(files=len(files), probed=0, unchanged=0, rejected=0)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for video_id, linked, info in run.progress(pool.map(probe_one, files), "probe", len(files)):
            with catalog.transaction():
                run.clear_rejects(record_id=video_id)
                if isinstance(info, str):
                    counts["rejected"] += 1
                    run.reject(source=video_id.split("/")[0], raw_ref=linked, record_id=video_id, reason=info,
                               raw=linked.encode())
                    continue
                if (video_id, info.sha256) in known:
                    counts["unchanged"] += 1
                    continue
                counts["probed"] += 1
                catalog.con.execute("DELETE FROM media_probes WHERE video_id = ?", [video_id])
                catalog.insert("media_probes", {"video_id": video_id, **asdict(info), "run_id": run.run_id})
                catalog.con.execute("UPDATE videos SET duration_s = ? WHERE video_id = ?",
                                    [info.duration_s, video_id])
    return counts

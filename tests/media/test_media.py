import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.ingest import ingest_path
from curation.media.normalise import normalise_media
from curation.media.probe import probe_media
from curation.media.scan import scan_media
from curation.media.synthetic import register_synthetic
from tests.conftest import FIXTURES, ROOT
from tests.media.conftest import FAKE_IDS, dark_rows_on_top, ffmpeg, ffprobe_stream, make_clips

MEDIA = load_config().media
SMALL = replace(MEDIA, width=180, height=320)


def _catalog_with_fakesv(tmp_path) -> Catalog:
    data = tmp_path / "data.json"
    data.write_text("\n".join(json.dumps({"video_id": i, "keywords": "测试事件", "annotation": "真"})
                              for i in FAKE_IDS), encoding="utf-8")
    cat = Catalog(tmp_path / "catalog.duckdb")
    ingest_path(cat, "fakesv", data)
    return cat


def _linked(tmp_path, clip_dir, config=MEDIA) -> Catalog:
    folder, _ = clip_dir
    cat = _catalog_with_fakesv(tmp_path)
    scan_media(cat, folder, "FakeSV", config)
    return cat


def test_scan_matches_reports_and_rejects_links_out(tmp_path, clip_dir):
    folder, clips = clip_dir
    media = tmp_path / "media"
    shutil.copytree(folder, media)
    (media / "0000000000.mp4").write_bytes(clips["portrait"].read_bytes())  # no such video
    outside = tmp_path / "outside.mp4"
    outside.write_bytes(b"x")
    (media / "sub").mkdir()
    (media / "sub" / f"{FAKE_IDS[7]}.flv").symlink_to(outside)
    with _catalog_with_fakesv(tmp_path) as cat:
        cat.con.execute("INSERT INTO videos (video_id, source, native_id) VALUES ('FakeSV/nofile', 'FakeSV', 'nofile')")
        result = scan_media.dry(cat, media, "FakeSV", MEDIA)
        assert cat.scalar("SELECT count(*) FROM media_files") == 0  # a dry run links nothing
        assert len(result.matched) == 8 and result.unmatched_files == ["0000000000.mp4"]
        assert result.videos_without_file == 1
        assert [r[0] for r in result.rejected] == [f"sub/{FAKE_IDS[7]}.flv"]
        assert "outside the media root" in result.rejected[0][1]
        scan_media(cat, media, "FakeSV", MEDIA)
        path = cat.con.execute("SELECT media_path FROM videos WHERE native_id = ?", [FAKE_IDS[0]]).fetchone()[0]
        assert path == str((media / f"{FAKE_IDS[0]}.mp4").resolve())


def test_livebot_titles_match_with_or_without_entities(tmp_path):
    with Catalog(tmp_path / "c.duckdb") as cat:
        ingest_path(cat, "livebot", FIXTURES / "livebot")
        media = tmp_path / "lb" / "airplane"
        media.mkdir(parents=True)
        (media / "A380's first landing.flv").write_bytes(b"FLV")
        (tmp_path / "lb" / "cat").mkdir()
        (tmp_path / "lb" / "cat" / "猫咪第一次见到雪.flv").write_bytes(b"FLV")
        result = scan_media(cat, tmp_path / "lb", "LiveBot", MEDIA)
        assert sorted(v for v, _ in result.matched) == ["LiveBot/airplane/A380&#39;s first landing",
                                                        "LiveBot/cat/猫咪第一次见到雪"]


def test_probe_values_and_rejects(tmp_path, clip_dir):
    _, clips = clip_dir
    with _linked(tmp_path, clip_dir) as cat:
        counts = probe_media(cat, MEDIA, workers=2)
        assert counts == {"files": 8, "probed": 6, "unchanged": 0, "rejected": 2}
        probes = {r["video_id"].split("/")[1]: r for r in cat.rows("SELECT * FROM media_probes")}
        by_name = {name: probes.get(path.stem) for name, path in clips.items()}
        p = by_name["portrait"]
        assert (p["width"], p["height"], p["fps"], p["has_audio"], p["video_codec"]) == (360, 640, 30.0, True, "h264")
        assert p["duration_s"] == pytest.approx(2.0, abs=0.05)
        assert p["sha256"] == hashlib.sha256(clips["portrait"].read_bytes()).hexdigest()
        assert by_name["landscape"]["fps"] == 25.0 and by_name["landscape"]["width"] == 640
        assert by_name["rotated"]["rotation"] in (90, 270)
        assert by_name["vfr"]["variable_fps"] is True and by_name["portrait"]["variable_fps"] is False
        assert by_name["audioless"]["has_audio"] is False and by_name["audioless"]["audio_codec"] is None
        assert by_name["short"]["duration_s"] == pytest.approx(0.2, abs=0.05)
        duration = cat.con.execute("SELECT duration_s FROM videos WHERE native_id = ?",
                                   [clips["portrait"].stem]).fetchone()[0]
        assert duration == pytest.approx(2.0, abs=0.05)
        rejects = dict(cat.con.execute("SELECT record_id, reason FROM rejects WHERE stage = 'media-probe'").fetchall())
        assert "moov atom not found" in rejects[f"FakeSV/{clips['truncated'].stem}"]
        assert "Invalid data" in rejects[f"FakeSV/{clips['notmedia'].stem}"]
        assert all("\n" not in r for r in rejects.values())
        assert probe_media(cat, MEDIA, workers=2)["unchanged"] == 6


def test_probe_rejects_no_video_stream_and_paths_escaping_the_root(tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440", "-t", "1", "-c:a", "aac", str(root / "a.mp4"))
    mapping = tmp_path / "m.toml"
    mapping.write_text('source = "X"\nformat = "jsonl"\n[fields]\nnative_id = "id"\nmedia_path = "file"\n')
    data = tmp_path / "x.jsonl"
    data.write_text('{"id": "1", "file": "a.mp4"}\n{"id": "2", "file": "../../etc/passwd"}\n')
    with Catalog(tmp_path / "c.duckdb") as cat:
        ingest_path(cat, "generic", data, mapping=mapping)
        counts = probe_media(cat, replace(MEDIA, root=str(root)), workers=1)
        assert counts["rejected"] == 2
        rejects = dict(cat.con.execute("SELECT record_id, reason FROM rejects").fetchall())
        assert rejects["X/1"] == "no video stream"
        assert "escapes outside the media root" in rejects["X/2"]


def test_normalise_geometry_codec_fps_duration_and_idempotency(tmp_path, clip_dir):
    _, clips = clip_dir
    config = replace(SMALL, output_dir=str(tmp_path / "out"))
    with _linked(tmp_path, clip_dir) as cat:
        probe_media(cat, config, workers=2)
        assert normalise_media.dry(cat, config, workers=2)["to_do"] == 6
        assert not (tmp_path / "out").exists()
        counts = normalise_media(cat, config, workers=2)
        assert counts == {"seen": 8, "normalised": 6, "skipped": 0, "rejected": 2}
        outputs = {r["video_id"].split("/")[1]: r for r in cat.rows("SELECT * FROM media_outputs")}
        inputs = {r["video_id"].split("/")[1]: r for r in cat.rows("SELECT * FROM media_probes")}
        for native, out in outputs.items():
            stream = ffprobe_stream(out["output_path"])
            assert (stream["codec_name"], stream["pix_fmt"]) == ("h264", "yuv420p")
            assert (int(stream["width"]), int(stream["height"])) == (180, 320)
            assert stream["r_frame_rate"] == stream["avg_frame_rate"] == "30/1"
            assert abs(out["duration_s"] - inputs[native]["duration_s"]) <= 1 / 30 + 0.03
            assert os.path.getsize(out["poster_path"]) > 0
            assert out["frames"] == math.ceil(inputs[native]["duration_s"] - 1e-6)
            assert not list((tmp_path / "out").rglob("*.part*"))
        # letterbox, never stretch: 640x360 leaves tall bars, the rotated 320x240 (shown 240x320) short ones
        wide = dark_rows_on_top(outputs[clips["landscape"].stem]["poster_path"], 180, 320)
        turned = dark_rows_on_top(outputs[clips["rotated"].stem]["poster_path"], 180, 320)
        assert wide == pytest.approx((320 - 180 * 360 / 640) / 2, abs=3)
        assert turned == pytest.approx((320 - 180 * 320 / 240) / 2, abs=3)
        again = normalise_media(cat, config, workers=2)
        assert again == {"seen": 8, "normalised": 0, "skipped": 6, "rejected": 2}


def test_default_canvas_is_720x1280(tmp_path, clip_dir):
    _, clips = clip_dir
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(clips["landscape"], folder)
    config = replace(MEDIA, output_dir=str(tmp_path / "out"))
    with _catalog_with_fakesv(tmp_path) as cat:
        scan_media(cat, folder, "FakeSV", config)
        probe_media(cat, config, workers=1)
        assert normalise_media(cat, config, workers=1)["normalised"] == 1
        out = cat.con.execute("SELECT output_path FROM media_outputs").fetchone()[0]
        stream = ffprobe_stream(out)
        assert (int(stream["width"]), int(stream["height"])) == (720, 1280)


def _written_into(parts) -> bool:
    for part in parts:
        try:
            if part.stat().st_size > 0:
                return True
        except FileNotFoundError:  # renamed to its final name between the listing and the look
            return True
    return False


def test_killed_normalise_leaves_no_half_written_output(tmp_path):
    folder = tmp_path / "long"
    folder.mkdir()
    for native in FAKE_IDS[:3]:
        ffmpeg("-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30", "-t", "12", "-c:v", "libx264",
               "-preset", "ultrafast", str(folder / f"{native}.mp4"))
    out_dir = tmp_path / "out"
    override = tmp_path / "o.toml"
    override.write_text(f'[media]\noutput_dir = "{out_dir}"\npreset = "medium"\n')
    db = tmp_path / "catalog.duckdb"
    with _catalog_with_fakesv(tmp_path) as cat:
        scan_media(cat, folder, "FakeSV", MEDIA)
        probe_media(cat, MEDIA, workers=2)
    cmd = [sys.executable, "-m", "curation.cli", "--catalog", str(db), "--config", str(override),
           "media", "normalise", "--workers", "2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # kill once ffmpeg has written into a part file: mid-way through a video, not before it began
    deadline, seen = time.monotonic() + 60, False
    while not seen and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = _written_into(out_dir.rglob("*.part.mp4"))
    running = proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # otherwise the kill tested nothing: it came before any output, or after the command had ended
    assert seen, f"normalise wrote into no part file within 60 s (exit {proc.returncode} when it was killed)"
    assert running, f"normalise had ended (exit {proc.returncode}) before it could be killed mid-way"
    finals = list(out_dir.rglob("*.mp4"))
    finished = [p for p in finals if not p.name.endswith(".part.mp4")]
    assert len(finished) < 3  # it was killed mid-way
    for path in finished:  # whatever is at a final name is whole
        assert ffprobe_stream(path)["codec_name"] == "h264"
    config = replace(MEDIA, output_dir=str(out_dir), preset="medium")
    with Catalog(db) as cat:
        counts = normalise_media(cat, config, workers=2)
        assert counts["normalised"] + counts["skipped"] == 3
    assert not list(out_dir.rglob("*.part*"))


def test_register_synthetic(tmp_path, catalog):
    gen = tmp_path / "gen"
    make_clips(tmp_path / "tmpclips")
    gen.mkdir()
    shutil.copy(tmp_path / "tmpclips" / f"{FAKE_IDS[0]}.mp4", gen / "violence_01.mp4")
    shutil.copy(tmp_path / "tmpclips" / f"{FAKE_IDS[4]}.mp4", gen / "violence_02.mp4")
    result = register_synthetic(catalog, gen, "wan2.1", MEDIA)
    assert (result.accepted, result.rejected) == (2, 0)
    rows = catalog.rows("SELECT * FROM videos ORDER BY video_id")
    assert [r["video_id"] for r in rows] == ["Synthetic/wan2.1/violence_01", "Synthetic/wan2.1/violence_02"]
    assert all(r["synthetic"] and json.loads(r["extra"])["generator"] == "wan2.1" for r in rows)
    assert probe_media(catalog, MEDIA, workers=1)["probed"] == 2
    assert register_synthetic(catalog, gen, "wan2.1", MEDIA).new == 0


def _tool(folder, name: str, body: str):
    """A stand-in for an ffmpeg binary that misbehaves the way broken builds and hung decoders do."""
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_ffprobe_printing_garbage_rejects_that_file_only(tmp_path, clip_dir):
    real = shutil.which("ffprobe")
    # garbage for one file, the real ffprobe for every other
    garbage = _tool(tmp_path, "ffprobe", f'case "$*" in *{FAKE_IDS[0]}*) echo "Segmentation fault? {{";; '
                                           f'*) exec {real} "$@";; esac')
    with _linked(tmp_path, clip_dir) as cat:
        counts = probe_media(cat, replace(MEDIA, ffprobe=garbage), workers=2)
        assert counts["rejected"] == 3 and counts["probed"] == 5  # truncated + notmedia + the garbage one
        reason = cat.scalar("SELECT reason FROM rejects WHERE record_id = ?", [f"FakeSV/{FAKE_IDS[0]}"])
        assert "not its JSON" in reason
        assert cat.scalar("SELECT status FROM runs WHERE stage = 'media-probe'") == "ok"


def test_a_hung_ffmpeg_is_a_reject_and_rejects_do_not_pile_up(tmp_path, clip_dir):
    hung = _tool(tmp_path, "ffmpeg", "sleep 30")
    failing = _tool(tmp_path, "ffmpeg-fails", 'echo "Conversion failed: codec exploded" >&2; exit 1')
    with _linked(tmp_path, clip_dir, SMALL) as cat:
        probe_media(cat, SMALL, workers=2)
        counts = normalise_media(cat, replace(SMALL, ffmpeg=hung, transcode_timeout_s=1,
                                              output_dir=str(tmp_path / "out")), workers=6)
        assert counts["normalised"] == 0 and counts["rejected"] == 6 + 2  # 6 timed out, 2 rejected at probe
        reasons = [r[0] for r in cat.con.execute(
            "SELECT reason FROM rejects WHERE stage = 'media-normalise'").fetchall()]
        assert len(reasons) == 6 and all("did not finish within 1 s" in r for r in reasons)
        for _ in range(2):
            normalise_media(cat, replace(SMALL, ffmpeg=failing, output_dir=str(tmp_path / "out")), workers=2)
        rows = cat.rows("SELECT record_id, reason FROM rejects WHERE stage = 'media-normalise'")
        assert len(rows) == 6 and all("codec exploded" in r["reason"] for r in rows)  # replaced, not added
        assert not list((tmp_path / "out").rglob("*.mp4"))


def test_on_ray_normalise_gives_the_catalog_and_files_the_local_run_gives(tmp_path, clip_dir):
    from curation.core.config import ExecutorConfig

    def stuck(*_):
        raise TimeoutError("the Ray job did not finish within 300 s")

    outputs, files = {}, {}
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(300)
    shards = str(tmp_path / "shards")
    try:
        for kind in ("local", "ray"):
            config = replace(SMALL, output_dir=str(tmp_path / kind / "out"))
            (tmp_path / kind).mkdir()
            with _linked(tmp_path / kind, clip_dir) as cat:
                probe_media(cat, config, workers=2)
                counts = normalise_media(cat, config, workers=2, executor=ExecutorConfig(kind=kind, shard_dir=shards))
                assert counts == {"seen": 8, "normalised": 6, "skipped": 0, "rejected": 2}
                outputs[kind] = [{k: v for k, v in r.items() if k != "run_id"} | {
                    "output_path": os.path.relpath(r["output_path"], tmp_path / kind)} for r in cat.rows(
                    "SELECT video_id, input_sha256, settings_sha256, output_path, frames, width, height, fps, "
                    "duration_s, run_id FROM media_outputs ORDER BY video_id")]
                files[kind] = sorted(p.relative_to(tmp_path / kind).as_posix() for p in (tmp_path / kind / "out")
                                     .rglob("*") if p.is_file())
                rejects = cat.scalar("SELECT count(*) FROM rejects WHERE stage = 'media-normalise'")
                assert rejects == 0  # the two rejected files were rejected at probe
                again = normalise_media(cat, config, workers=2, executor=ExecutorConfig(kind=kind, shard_dir=shards))
                assert again["normalised"] == 0 and again["skipped"] == 6  # a re-run reuses every output
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        import ray

        ray.shutdown()
    assert outputs["ray"] == outputs["local"] and files["ray"] == files["local"]

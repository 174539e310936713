"""Media fixtures made by ffmpeg's lavfi sources at test time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

FAKE_IDS = ("7031859613460925736", "3x4zj7hyemptkvm", "6853696307836488973", "6782715640990928131",
            "6998443161127243039", "7041921581278416158", "6930123456789012345", "3xbadfile00001")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *args], check=True)


def make_clips(folder: Path) -> dict[str, Path]:
    """Named clips, each saved under a FakeSV id from FAKE_IDS."""
    folder.mkdir(parents=True, exist_ok=True)
    src = "testsrc=size={}:rate={}"
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"]
    clips = dict(zip(("portrait", "landscape", "rotated", "vfr", "audioless", "short", "truncated",
                      "notmedia"), (folder / f"{i}.mp4" for i in FAKE_IDS), strict=True))
    ffmpeg("-f", "lavfi", "-i", src.format("360x640", 30), *tone, "-t", "2", "-c:v", "libx264",
           "-c:a", "aac", "-shortest", str(clips["portrait"]))
    ffmpeg("-f", "lavfi", "-i", src.format("640x360", 25), *tone, "-t", "2", "-c:v", "libx264",
           "-c:a", "aac", "-shortest", str(clips["landscape"]))
    plain = folder / "plain.mkv"
    ffmpeg("-f", "lavfi", "-i", src.format("320x240", 30), "-t", "2", "-c:v", "libx264", str(plain))
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(clips["rotated"]))
    plain.unlink()
    ffmpeg("-f", "lavfi", "-i", src.format("320x240", 30), "-t", "2", "-vf",
           r"setpts='N/(30*TB)+if(gte(N\,30)\,(N-30)/(30*TB)\,0)'", "-fps_mode", "vfr",
           "-c:v", "libx264", str(clips["vfr"]))
    ffmpeg("-f", "lavfi", "-i", src.format("480x480", 30), "-t", "2", "-c:v", "libx264",
           str(clips["audioless"]))
    ffmpeg("-f", "lavfi", "-i", src.format("320x240", 30), "-t", "0.2", "-c:v", "libx264",
           str(clips["short"]))
    whole = clips["landscape"].read_bytes()
    clips["truncated"].write_bytes(whole[: len(whole) // 2])
    clips["notmedia"].write_text("this is a text file, not a video\n", encoding="utf-8")
    return clips


@pytest.fixture(scope="session")
def clip_dir(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("clips") / "fakesv"
    return folder, make_clips(folder)


def ffprobe_stream(path: Path) -> dict[str, str]:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=codec_name,pix_fmt,width,height,r_frame_rate,avg_frame_rate",
                          "-of", "default=noprint_wrappers=1", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def dark_rows_on_top(image: Path, width: int, height: int) -> int:
    """How many rows at the top of a picture are black (the letterbox bar)."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(image), "-f", "rawvideo", "-pix_fmt",
                          "gray", "-"], capture_output=True, check=True).stdout
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, width).mean(axis=1)
    return int(np.argmax(rows > 20))

"""LiveBot (Ma et al., AAAI 2019): `video/<category>/<title>.flv` with `<title>.ass` danmaku.

The file name is the title. It may hold HTML entities (`&#39;`): the raw name stays
in `native_id` (so ids match the public runner's `LiveBot/<category>/<title>`), the
unescaped text becomes the display title.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path

from curation.core.storable import name_problem, shown_name
from curation.ingest.records import SourceRecord

SOURCE = "LiveBot"
MEDIA_SUFFIXES = (".flv", ".mp4")
_OVERRIDE_RE = re.compile(r"\{[^}]*\}")


def _seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.strip().split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def parse_ass(text: str) -> list[dict[str, object]]:
    """Danmaku lines of an ASS subtitle file as comments with their time in seconds."""
    fields = ["layer", "start", "end", "style", "name", "marginl", "marginr", "marginv",
              "effect", "text"]
    comments: list[dict[str, object]] = []
    for line in text.splitlines():
        if line.startswith("Format:") and "text" in line.lower():
            fields = [f.strip().lower() for f in line[len("Format:"):].split(",")]
        elif line.startswith("Dialogue:"):
            parts = line[len("Dialogue:"):].split(",", len(fields) - 1)
            if len(parts) != len(fields):
                raise ValueError(f"malformed Dialogue line: {line[:60]!r}")
            row = dict(zip(fields, parts, strict=True))
            body = _OVERRIDE_RE.sub("", row["text"]).replace("\\N", " ").strip()
            if body:
                comments.append({"text": body, "time_s": _seconds(row["start"])})
    comments.sort(key=lambda c: (c["time_s"], c["text"]))
    return comments


def read_livebot(root: Path) -> Iterator[SourceRecord]:
    base = root / "video" if (root / "video").is_dir() else root
    titles: dict[tuple[str, str], dict[str, Path]] = {}
    for path in sorted(base.glob("*/*")):
        if path.is_file() and path.suffix.lower() in (*MEDIA_SUFFIXES, ".ass"):
            kind = "ass" if path.suffix.lower() == ".ass" else "media"
            titles.setdefault((path.parent.name, path.stem), {})[kind] = path
    for (category, title), files in sorted(titles.items()):
        name = f"{category}/{title}"
        ref = f"{root.name}:{shown_name(name)}"
        if problem := name_problem(name, "the file name"):  # the name is the id and the title
            # the id as shown (`\xff` for the byte) is the one `curate explain` finds the reject by
            yield SourceRecord(ref, os.fsencode(name), {"native_id": shown_name(name)}, error=problem)
            continue
        fields: dict[str, object] = {
            "native_id": f"{category}/{title}",
            "title": html.unescape(title),
            "category": category,
            "media_path": str(files["media"]) if "media" in files else None,
        }
        comments: list[dict[str, object]] = []
        raw = f"{category}/{title}".encode()
        if "ass" in files:
            data = raw = files["ass"].read_bytes()
            try:
                comments = parse_ass(data.decode("utf-8-sig"))
            except UnicodeDecodeError as exc:
                yield SourceRecord(ref, data, error=f"invalid UTF-8 in danmaku file at byte {exc.start}")
                continue
            except ValueError as exc:
                yield SourceRecord(ref, data, error=f"danmaku file: {exc}")
                continue
        yield SourceRecord(ref, raw, fields=fields, comments=comments)

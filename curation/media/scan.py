"""`curate media scan`: which file on disk is which catalog video."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from curation.catalog import Catalog
from curation.media.files import MediaError, inside


@dataclass
class ScanResult:
    run_id: str | None
    matched: list[tuple[str, str]] = field(default_factory=list)
    unmatched_files: list[str] = field(default_factory=list)
    videos_without_file: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)

    @property
    def files_seen(self) -> int:
        return len(self.matched) + len(self.unmatched_files) + len(self.rejected)


def file_key(path: Path, root: Path, rule: str) -> str:
    if rule == "stem":
        return path.stem
    if rule == "parent/stem":
        return f"{path.parent.name}/{path.stem}"
    raise MediaError(f"unknown match rule {rule!r}: stem or parent/stem")


def _normal(native_id: str) -> str:
    # LiveBot titles are stored with HTML entities in some copies and without in others.
    return html.unescape(native_id).strip()


def scan_media(catalog: Catalog | None, root: Path, source: str, config: dict[str, Any]
               ) -> ScanResult:
    """Link files under `root` to `source`'s videos (catalog None: report, write nothing)."""
    if not root.is_dir():
        raise MediaError(f"{root} is not a folder")
    rule = (config.get("match") or {}).get(source)
    if rule is None:
        raise MediaError(f"no [media.match] rule for source {source!r} in the config")
    suffixes = tuple(s.lower() for s in config["suffixes"])
    db = catalog
    if db is None:
        raise MediaError("scan needs a catalog to match against")
    ids = {_normal(n): v for v, n in db.con.execute(
        "SELECT video_id, native_id FROM videos WHERE source = ?", [source]).fetchall()}
    result = ScanResult(None)
    seen: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in suffixes or not (path.is_file() or path.is_symlink()):
            continue
        rel = str(path.relative_to(root))
        try:
            resolved = inside(path.relative_to(root), root)
            key = _normal(file_key(path, root, rule))
        except MediaError as exc:
            result.rejected.append((rel, str(exc)))
            continue
        video_id = ids.get(key)
        if video_id is None or video_id in seen:
            result.unmatched_files.append(rel)
            continue
        seen[video_id] = rel
        result.matched.append((video_id, str(resolved)))
    result.videos_without_file = len(ids) - len(seen)
    return result


def write_scan(catalog: Catalog, result: ScanResult, root: Path, source: str) -> None:
    run = catalog.start_run("media-scan", {"root": str(root), "source": source})
    result.run_id = run.run_id
    table = pa.table({"video_id": [m[0] for m in result.matched],
                      "path": [m[1] for m in result.matched]})
    with catalog.staged(scanned=table), catalog.transaction():
        catalog.con.execute("DELETE FROM media_files WHERE video_id IN (SELECT video_id FROM scanned)")
        catalog.con.execute("INSERT INTO media_files SELECT video_id, path, ?, 'scan', ? FROM scanned",
                            [str(root.resolve()), run.run_id])
        catalog.con.execute("UPDATE videos SET media_path = s.path FROM scanned s "
                            "WHERE videos.video_id = s.video_id")
        catalog.con.execute("DELETE FROM rejects WHERE stage = 'media-scan' AND source = ?", [source])
        for rel, reason in result.rejected:
            catalog.con.execute("INSERT INTO rejects VALUES (?, 'media-scan', ?, ?, NULL, ?, ?)",
                                [run.run_id, source, rel, reason, rel.encode()])
        run.counts = {"files": result.files_seen, "matched": len(result.matched),
                      "unmatched_files": len(result.unmatched_files),
                      "videos_without_file": result.videos_without_file,
                      "rejected": len(result.rejected)}
        catalog.finish_run(run)

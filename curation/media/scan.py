"""`curate media scan`: which file on disk is which catalog video."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from curation.core.config import MediaConfig
from curation.core.errors import ConfigError, InputError, MediaError, PrerequisiteError
from curation.core.sources import MATCH_RULES
from curation.core.stage import StageRun, stage
from curation.media.files import inside


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




def file_key(path: Path, rule: str) -> str:
    return path.stem if rule == "stem" else f"{path.parent.name}/{path.stem}"


def _normal(native_id: str) -> str:
    # LiveBot titles are stored with HTML entities in some copies and without in others.
    return html.unescape(native_id).strip()


@stage("media-scan", command="curate media scan <dir> --source S", reads=("videos",),
       writes=("media_files", "videos", "rejects"), summary="which file is which catalog video "
       "(sets videos.media_path); files outside the root are rejected", files=("in: media folder",))
def scan_media(run: StageRun, root: Path, source: str, config: MediaConfig) -> ScanResult:
    """Link files under `root` to `source`'s videos (a dry run reports and writes nothing)."""
    catalog = run.catalog
    if catalog is None:
        raise PrerequisiteError("scan needs a catalog to match against")
    if not root.is_dir():
        raise InputError(f"{root} is not a folder")
    rule = config.match.get(source)
    if rule is None:
        raise ConfigError(f"no [media.match] rule for source {source!r} in the config "
                          f"(rules for: {', '.join(sorted(config.match))})")
    if rule not in MATCH_RULES:
        raise ConfigError(f"[media.match] {source} = {rule!r}: use one of {', '.join(MATCH_RULES)}")
    run.params.update(root=str(root), source=source, rule=rule)
    suffixes = tuple(s.lower() for s in config.suffixes)
    ids = {_normal(n): v for v, n in catalog.con.execute(
        "SELECT video_id, native_id FROM videos WHERE source = ?", [source]).fetchall()}
    result = ScanResult(run.run_id)
    seen: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in suffixes or not (path.is_file() or path.is_symlink()):
            continue
        rel = str(path.relative_to(root))
        try:
            resolved = inside(path.relative_to(root), root)
        except MediaError as exc:
            result.rejected.append((rel, str(exc)))
            continue
        video_id = ids.get(_normal(file_key(path, rule)))
        if video_id is None or video_id in seen:
            result.unmatched_files.append(rel)
            continue
        seen[video_id] = rel
        result.matched.append((video_id, str(resolved)))
    result.videos_without_file = len(ids) - len(seen)
    run.counts.update(files=result.files_seen, matched=len(result.matched),
                      unmatched_files=len(result.unmatched_files),
                      videos_without_file=result.videos_without_file, rejected=len(result.rejected))
    if not run.dry_run:
        _write_scan(run, result, root, source)
    return result


def _write_scan(run: StageRun, result: ScanResult, root: Path, source: str) -> None:
    catalog = run.db
    table = pa.table({"video_id": [m[0] for m in result.matched],
                      "path": [m[1] for m in result.matched]})
    with catalog.staged(scanned=table):
        catalog.con.execute("DELETE FROM media_files WHERE video_id IN (SELECT video_id FROM scanned)")
        catalog.con.execute("INSERT INTO media_files (video_id, path, root, matched_by, run_id) "
                            "SELECT video_id, path, ?, 'scan', ? FROM scanned", [str(root.resolve()), run.run_id])
        catalog.con.execute("UPDATE videos SET media_path = s.path FROM scanned s "
                            "WHERE videos.video_id = s.video_id")
    catalog.con.execute("DELETE FROM rejects WHERE stage = ? AND source = ?", [run.stage, source])
    for rel, reason in result.rejected:
        run.reject(source=source, raw_ref=rel, reason=reason, raw=rel.encode())

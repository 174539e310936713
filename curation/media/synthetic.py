"""`curate media register-synthetic`: generated videos join the catalog, flagged.

The benchmark keeps under 1% synthetic videos (for safety risks too rare to find
in real corpora); each one is `synthetic = true` with its generator recorded, and
the feeds stage counts it against the synthetic budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from curation.core.config import IngestConfig, MediaConfig
from curation.core.errors import InputError, MediaError, UsageError
from curation.core.sources import SOURCES
from curation.core.stage import StageRun, stage
from curation.ingest.load import IngestResult, merge_records
from curation.ingest.records import SourceRecord
from curation.media.files import inside

SOURCE = next(s.name for s in SOURCES.values() if s.synthetic)  # curation/resources/sources.toml


def synthetic_records(root: Path, generator: str, suffixes: tuple[str, ...]) -> Iterator[SourceRecord]:
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in suffixes:
            continue
        rel = str(path.relative_to(root))
        ref = f"{root.name}:{rel}"
        try:
            resolved = inside(path.relative_to(root), root)
        except MediaError as exc:
            yield SourceRecord(ref, rel.encode(), error=str(exc))
            continue
        yield SourceRecord(ref, rel.encode(), fields={
            "native_id": f"{generator}/{path.stem}", "title": None, "synthetic": True,
            "media_path": str(resolved)}, extra={"generator": generator, "file": rel})


@stage("media-register-synthetic", command="curate media register-synthetic <dir> --generator NAME",
       reads=("videos", "rejects"), writes=("videos", "comments", "rejects", "media_files"),
       summary="generated videos as Synthetic/<generator>/<name>, synthetic = true, linked to their files",
       files=("in: media folder",))
def register_synthetic(run: StageRun, root: Path, generator: str, config: MediaConfig) -> IngestResult:
    catalog = run.db
    if not root.is_dir():
        raise InputError(f"{root} is not a folder")
    if not generator or "/" in generator:
        raise UsageError("--generator must be a name without '/'")
    run.params.update(path=str(root), generator=generator)
    suffixes = tuple(s.lower() for s in config.suffixes)
    result = merge_records(run, SOURCE, synthetic_records(root, generator, suffixes), file_key=root.name,
                           max_field_bytes=IngestConfig().max_field_bytes)
    catalog.con.execute("""
        DELETE FROM media_files WHERE video_id IN (
            SELECT video_id FROM videos WHERE source = ? AND native_id LIKE ? || '/%')""", [SOURCE, generator])
    catalog.con.execute("""
        INSERT INTO media_files (video_id, path, root, matched_by, run_id)
        SELECT video_id, media_path, ?, 'register-synthetic', ?
        FROM videos WHERE source = ? AND native_id LIKE ? || '/%'""",
                        [str(root.resolve()), run.run_id, SOURCE, generator])
    return result

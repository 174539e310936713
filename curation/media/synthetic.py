"""`curate media register-synthetic`: generated videos join the catalog, flagged.

The benchmark keeps under 1% synthetic videos (for safety risks too rare to find
in real corpora); each one is `synthetic = true` with its generator recorded, and
the feeds stage counts it against the synthetic budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.catalog import Catalog
from curation.ingest.load import IngestResult, run_ingest
from curation.ingest.records import SourceRecord
from curation.media.files import MediaError, inside

SOURCE = "Synthetic"


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


def register_synthetic(catalog: Catalog, root: Path, generator: str, config: dict[str, Any]
                       ) -> IngestResult:
    if not root.is_dir():
        raise MediaError(f"{root} is not a folder")
    if not generator or "/" in generator:
        raise MediaError("--generator must be a name without '/'")
    suffixes = tuple(s.lower() for s in config["suffixes"])
    result = run_ingest(catalog, SOURCE, synthetic_records(root, generator, suffixes),
                        stage_params={"adapter": "synthetic", "path": str(root), "generator": generator},
                        file_key=root.name, max_field_bytes=1 << 20)
    with catalog.transaction():
        catalog.con.execute("""
            DELETE FROM media_files WHERE video_id IN (
                SELECT video_id FROM videos WHERE source = ? AND native_id LIKE ? || '/%')""",
                            [SOURCE, generator])
        catalog.con.execute("""
            INSERT INTO media_files SELECT video_id, media_path, ?, 'register-synthetic', ?
            FROM videos WHERE source = ? AND native_id LIKE ? || '/%'""",
                            [str(root.resolve()), result.run_id, SOURCE, generator])
    return result

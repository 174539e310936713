"""Ingest: public corpora into the catalog, one adapter per source format."""

from __future__ import annotations

from pathlib import Path

from curation.core.catalog import Catalog
from curation.core.config import IngestConfig
from curation.core.errors import InputError, UsageError
from curation.core.stage import StageRun, stage
from curation.ingest import fakesv, kuairec, livebot
from curation.ingest.generic import Mapping, read_generic
from curation.ingest.lines import merge_jsonl
from curation.ingest.load import IngestResult, merge_records

ADAPTERS = ("fakesv", "kuairec", "livebot", "generic")


def check_arguments(adapter: str, path: Path, mapping: Path | None = None, max_field_bytes: int = 0,
                    columnar: bool = True) -> None:
    if adapter not in ADAPTERS:
        raise UsageError(f"unknown adapter {adapter!r}; choose one of {', '.join(ADAPTERS)}")
    if adapter == "generic" and mapping is None:
        raise UsageError("the generic adapter needs --mapping FILE")
    if not path.exists():
        raise InputError(f"{path} does not exist")
    if adapter == "livebot" and not path.is_dir():
        raise InputError(f"livebot expects the corpus folder, got the file {path}")
    if adapter != "livebot" and not path.is_file():
        raise InputError(f"{adapter} expects a file, got the folder {path}")
    if mapping is not None and not mapping.is_file():
        raise InputError(f"mapping file {mapping} does not exist")


@stage("ingest", command="curate ingest <adapter> <path>", reads=("videos", "rejects"),
       writes=("videos", "comments", "rejects"), summary="public corpora into the catalog, bad records rejected",
       check=check_arguments, files=("in: corpus file",))
def ingest_corpus(run: StageRun, adapter: str, path: Path, mapping: Path | None = None,
                  max_field_bytes: int = IngestConfig().max_field_bytes, columnar: bool = True) -> IngestResult:
    # absolute: `release env-feeds` reads the records again from this file, from whatever folder it runs in
    run.params.update(adapter=adapter, path=str(Path(path).resolve()), max_field_bytes=max_field_bytes)
    if adapter == "fakesv":
        source, records = fakesv.SOURCE, fakesv.read_fakesv(path)
    elif adapter == "kuairec":
        source, records = kuairec.SOURCE, kuairec.read_kuairec(path)
    elif adapter == "livebot":
        source, records = livebot.SOURCE, livebot.read_livebot(path)
    else:
        assert mapping is not None
        spec = Mapping.load(mapping)
        run.params["mapping"] = str(mapping)
        if spec.labels:  # what `curate cluster` scores its clusters against (corpus/quality.py)
            run.params["labels"] = {spec.source: list(spec.labels)}
        if spec.format == "jsonl":
            run.params["columnar"] = columnar
            return merge_jsonl(run, spec, path, max_field_bytes=max_field_bytes, columnar=columnar)
        source, records = spec.source, read_generic(path, spec)
    return merge_records(run, source, records, file_key=path.name, max_field_bytes=max_field_bytes)


def ingest_path(catalog: Catalog | None, adapter: str, path: Path, *, mapping: Path | None = None,
                max_field_bytes: int = IngestConfig().max_field_bytes, columnar: bool = True) -> IngestResult:
    """Ingest `path` with `adapter`; `catalog=None` validates and counts only. `columnar=False`
    reads a JSON Lines corpus record by record (the reference path; same result, slower)."""
    return ingest_corpus(catalog, adapter, path, mapping, max_field_bytes, columnar)

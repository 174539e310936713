"""Ingest: public corpora into the catalog, one adapter per source format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from curation.core.catalog import Catalog
from curation.core.config import IngestConfig
from curation.core.errors import InputError, UsageError
from curation.core.stage import StageRun, stage
from curation.core.storable import missing_problem, name_problem, shown_name
from curation.ingest import fakesv, kuairec, livebot
from curation.ingest.generic import Mapping, read_generic
from curation.ingest.lines import merge_jsonl
from curation.ingest.load import IngestResult, merge_records
from curation.ingest.readers import Warn, compressed_as
from curation.ingest.records import SourceRecord

ADAPTERS = ("fakesv", "kuairec", "livebot", "generic")


def check_arguments(adapter: str, path: Path, mapping: Path | None = None, max_field_bytes: int = 0,
                    columnar: bool = True) -> None:
    if adapter not in ADAPTERS:
        raise UsageError(f"unknown adapter {adapter!r}; choose one of {', '.join(ADAPTERS)}")
    if adapter == "generic" and mapping is None:
        raise UsageError("the generic adapter needs --mapping FILE")
    # the run records both paths, resolved (`release env-feeds` reads the corpus again), so both must be text
    for given, what in ((path, "the corpus path"), (mapping, "the mapping path")):
        if given is None:
            continue
        if problem := name_problem(given, what):
            raise InputError(problem)
        if not given.exists():  # a symlink loop or one to nothing is said as such
            raise InputError(missing_problem(given) if given is path else f"mapping file {missing_problem(given)}")
        if problem := name_problem(given.resolve(), what):
            raise InputError(problem)
    shown = shown_name(path)  # on one line, whatever the name holds
    if adapter == "livebot" and not path.is_dir():
        raise InputError(f"livebot expects the corpus folder, got the file {shown}")
    if adapter != "livebot" and not path.is_file():
        raise InputError(f"{adapter} expects a file, got the folder {shown}" if path.is_dir()
                         else f"{adapter} expects a file, and {shown} is not a regular file")
    if mapping is not None and not mapping.is_file():
        raise InputError(f"mapping file {shown_name(mapping)} is not a file")
    for given in [p for p in ((mapping,) if adapter == "livebot" else (path, mapping)) if p is not None]:
        try:
            compressed = compressed_as(given)
        except OSError as exc:
            raise InputError(f"{shown_name(given)} cannot be read: {exc.strerror}") from None
        if compressed:  # not "invalid UTF-8 at byte 1", which sends people looking for an encoding problem
            raise InputError(f"{shown_name(given)} {compressed}")


@stage("ingest", command="curate ingest <adapter> <path>", reads=("videos", "rejects"),
       writes=("videos", "comments", "rejects"), summary="public corpora into the catalog, bad records rejected",
       check=check_arguments, files=("in: corpus file",))
def ingest_corpus(run: StageRun, adapter: str, path: Path, mapping: Path | None = None,
                  max_field_bytes: int = IngestConfig().max_field_bytes, columnar: bool = True) -> IngestResult:
    # absolute: `release env-feeds` reads the records again from this file, from whatever folder it runs in
    run.params.update(adapter=adapter, path=str(Path(path).resolve()), max_field_bytes=max_field_bytes)
    warnings: list[str] = []  # what a reader read past, said after the counts
    if adapter != "generic":
        source, records = _adapter_records(adapter, path, warnings.append)
        result = merge_records(run, source, records, file_key=path.name, max_field_bytes=max_field_bytes)
    else:
        assert mapping is not None
        spec = Mapping.load(mapping)
        run.params["mapping"] = str(mapping)
        if spec.labels:  # what `curate cluster` scores its clusters against (corpus/quality.py)
            run.params["labels"] = {spec.source: list(spec.labels)}
        if spec.format == "jsonl":
            run.params["columnar"] = columnar
            result = merge_jsonl(run, spec, path, max_field_bytes=max_field_bytes, columnar=columnar)
        else:
            result = merge_records(run, spec.source, read_generic(path, spec, warnings.append), file_key=path.name,
                                   max_field_bytes=max_field_bytes)
    result.warnings[:0] = warnings
    if result.warnings:  # kept with the run, for whoever reads the runs later
        run.counts["warnings"] = result.warnings
    return result


def _adapter_records(adapter: str, path: Path, warn: Warn) -> tuple[str, Iterator[SourceRecord]]:
    if adapter == "fakesv":
        return fakesv.SOURCE, fakesv.read_fakesv(path, warn)
    if adapter == "kuairec":
        return kuairec.SOURCE, kuairec.read_kuairec(path)
    return livebot.SOURCE, livebot.read_livebot(path)


def ingest_path(catalog: Catalog | None, adapter: str, path: Path, *, mapping: Path | None = None,
                max_field_bytes: int = IngestConfig().max_field_bytes, columnar: bool = True) -> IngestResult:
    """Ingest `path` with `adapter`; `catalog=None` validates and counts only. `columnar=False`
    reads a JSON Lines corpus record by record (the reference path; same result, slower)."""
    return ingest_corpus(catalog, adapter, path, mapping, max_field_bytes, columnar)

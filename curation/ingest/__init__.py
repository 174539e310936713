"""Ingest: public corpora into the catalog, one adapter per source format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.catalog import Catalog
from curation.ingest import fakesv, kuairec, livebot
from curation.ingest.generic import Mapping, read_generic
from curation.ingest.load import IngestResult, run_ingest

ADAPTERS = ("fakesv", "kuairec", "livebot", "generic")


def ingest_path(catalog: Catalog | None, adapter: str, path: Path, *,
                mapping: Path | None = None, max_field_bytes: int = 1_048_576) -> IngestResult:
    """Ingest `path` with `adapter`; `catalog=None` validates and counts only."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    params: dict[str, Any] = {"adapter": adapter, "path": str(path),
                              "max_field_bytes": max_field_bytes}
    if adapter == "fakesv":
        source, records = fakesv.SOURCE, fakesv.read_fakesv(path)
    elif adapter == "kuairec":
        source, records = kuairec.SOURCE, kuairec.read_kuairec(path)
    elif adapter == "livebot":
        if not path.is_dir():
            raise ValueError(f"livebot expects the corpus folder, got the file {path}")
        source, records = livebot.SOURCE, livebot.read_livebot(path)
    elif adapter == "generic":
        if mapping is None:
            raise ValueError("the generic adapter needs --mapping FILE")
        spec = Mapping.load(mapping)
        params["mapping"] = str(mapping)
        source, records = spec.source, read_generic(path, spec)
    else:
        raise ValueError(f"unknown adapter {adapter!r}; choose one of {', '.join(ADAPTERS)}")
    return run_ingest(catalog, source, records, stage_params=params, file_key=path.name,
                      max_field_bytes=max_field_bytes)

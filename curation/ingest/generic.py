"""Any corpus in JSON Lines, a JSON array, a JSON object keyed by id, CSV or Parquet,
described by a TOML mapping from catalog fields to source fields (docs/ingest.md, "Mapping file for the
`generic` adapter")."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.errors import InputError
from curation.ingest.readers import READERS, RawItem, Warn, unheard
from curation.ingest.records import VIDEO_FIELDS, RecordError, SourceRecord
from curation.ingest.text import extract_hashtags, missing_to_none, parse_list_string, strip_html

EXTRACTORS = ("hashtags", "list", "split")


class MappingError(InputError):
    """The mapping file itself is wrong; nothing was ingested."""


@dataclass
class FieldRule:
    path: str
    extract: str | None = None
    sep: str = ","


@dataclass
class Mapping:
    source: str
    format: str
    fields: dict[str, FieldRule]
    strip_html: list[str] = field(default_factory=list)
    missing: tuple[str, ...] = ("",)
    labels: tuple[str, ...] = ()  # unmapped top-level fields that hold a human label (cluster quality)

    @property
    def used_fields(self) -> frozenset[str]:
        return frozenset({"$key", *(rule.path.split(".")[0] for rule in self.fields.values())})

    @classmethod
    def load(cls, path: Path) -> Mapping:
        try:
            spec = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise MappingError(f"mapping {path}: {exc}") from None
        return cls.from_dict(spec, str(path))

    @classmethod
    def from_dict(cls, spec: dict[str, Any], name: str = "mapping") -> Mapping:
        source, fmt = spec.get("source"), spec.get("format")
        if not isinstance(source, str) or not source or "/" in source:
            raise MappingError(f"{name}: `source` must be a name without '/'")
        if fmt not in READERS:
            raise MappingError(f"{name}: `format` must be one of {sorted(READERS)}, got {fmt!r}")
        rules: dict[str, FieldRule] = {}
        for target, rule in (spec.get("fields") or {}).items():
            if target not in (*VIDEO_FIELDS, "comments"):
                raise MappingError(f"{name}: unknown catalog field {target!r}")
            if isinstance(rule, str):
                rules[target] = FieldRule(rule)
            elif isinstance(rule, dict) and isinstance(rule.get("from"), str):
                if rule.get("extract") not in (None, *EXTRACTORS):
                    raise MappingError(f"{name}: field {target}: extract must be one of {EXTRACTORS}")
                rules[target] = FieldRule(rule["from"], rule.get("extract"), rule.get("sep", ","))
            else:
                raise MappingError(f"{name}: field {target}: give a source field name or "
                                   "{{ from = ..., extract = ... }}")
        if "native_id" not in rules:
            raise MappingError(f"{name}: [fields] must map native_id")
        clean = spec.get("clean") or {}
        missing = tuple(str(v) for v in clean.get("missing", [""]))
        labels = spec.get("labels", [])
        if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
            raise MappingError(f"{name}: `labels` must be a list of source field names, got {labels!r}")
        if odd := [x for x in labels if "." in x or '"' in x]:
            raise MappingError(f"{name}: label {odd[0]!r}: a label is a top-level field of the record, named "
                               "without '.' or '\"'")
        mapping = cls(source, fmt, rules, list(clean.get("strip_html", [])), missing, tuple(labels))
        if mapped := sorted(set(labels) & mapping.used_fields):
            raise MappingError(f"{name}: label {mapped[0]!r} is also mapped to a catalog field; a label must be "
                               "a field the mapping leaves unmapped (it is kept in `extra`)")
        return mapping


def _lookup(obj: dict[str, Any], path: str) -> tuple[bool, Any]:
    if "." not in path:  # the common case, kept cheap: this runs once per field per record
        return (True, obj[path]) if path in obj else (False, None)
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def map_record(mapping: Mapping, obj: Any) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    if not isinstance(obj, dict):
        raise RecordError(f"record is not an object ({type(obj).__name__})")
    fields: dict[str, Any] = {}
    comments: list[Any] = []
    for target, rule in mapping.fields.items():
        found, value = _lookup(obj, rule.path)
        value = missing_to_none(value, mapping.missing)
        if not found or value is None:
            continue
        if target in mapping.strip_html and isinstance(value, str):
            value = strip_html(value)
        if rule.extract == "hashtags":
            value = extract_hashtags(value if isinstance(value, str) else None) or None
        elif rule.extract == "list" and isinstance(value, str):
            value = parse_list_string(value)
        elif rule.extract == "split" and isinstance(value, str):
            value = [v.strip() for v in value.split(rule.sep) if v.strip()]
        if target == "comments":
            if not isinstance(value, list):
                raise RecordError(f"comments must be a list, got {type(value).__name__}")
            comments = value
        else:
            fields[target] = value
    return fields, comments, unmapped(mapping, obj)


def unmapped(mapping: Mapping, obj: dict[str, Any]) -> dict[str, Any]:
    """The top-level fields no mapping path starts from: they are kept as `extra`."""
    used = mapping.used_fields
    return {k: v for k, v in obj.items() if k not in used}


def source_record(mapping: Mapping, item: RawItem) -> SourceRecord:
    ref, raw, obj, error = item
    if error:
        return SourceRecord(ref, raw, error=error)
    try:
        fields, comments, extra = map_record(mapping, obj)
    except RecordError as exc:
        return SourceRecord(ref, raw, error=str(exc))
    return SourceRecord(ref, raw, fields=fields, comments=comments, extra=extra)


def read_generic(path: Path, mapping: Mapping, warn: Warn = unheard) -> Iterator[SourceRecord]:
    for item in READERS[mapping.format](path, warn):
        yield source_record(mapping, item)

"""A release's manifest: the sha256 of every file, so that `curate release verify` can say
exactly what changed since the release was built."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from curation.core.errors import InputError

MANIFEST = "manifest.json"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_tree(folder: Path) -> dict[str, dict[str, Any]]:
    """Every file under `folder` but the manifest, by its POSIX path, in sorted order."""
    return {p.relative_to(folder).as_posix(): {"sha256": file_sha256(p), "bytes": p.stat().st_size}
            for p in sorted(folder.rglob("*")) if p.is_file() and p.relative_to(folder).as_posix() != MANIFEST}


def write_manifest(folder: Path, body: dict[str, Any]) -> Path:
    path = folder / MANIFEST
    path.write_text(json.dumps({**body, "files": hash_tree(folder)}, ensure_ascii=False, indent=2, sort_keys=True)
                    + "\n", encoding="utf-8")
    return path


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(f"{folder} has no {MANIFEST}: it is not a release built by this toolkit")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None


def verify(folder: Path) -> list[str]:
    """Every difference between the folder and its manifest, one line each (empty: intact)."""
    manifest = read_manifest(folder)
    listed: dict[str, dict[str, Any]] = manifest.get("files", {})
    found = hash_tree(folder)
    problems = [f"{name}: missing" for name in sorted(set(listed) - set(found))]
    problems += [f"{name}: not in the manifest" for name in sorted(set(found) - set(listed))]
    problems += [f"{name}: changed (sha256 {found[name]['sha256'][:12]}…, manifest {listed[name]['sha256'][:12]}…)"
                 for name in sorted(set(found) & set(listed)) if found[name]["sha256"] != listed[name]["sha256"]]
    return problems

"""A release's manifest: the sha256 of every file, so that `curate release verify` can say
exactly what changed since the release was built.

The manifest lists every other file; the catalog records the manifest's own hash at build time
(`releases.manifest_sha256`), so that a file changed together with its manifest entry is still
caught. That hash has one definition, `manifest_sha256`: the sha256 of the manifest's canonical
JSON (sorted keys, no spaces), so that it speaks of what the manifest says, not of its layout."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from curation.core.errors import InputError
from curation.release.contents import sha256_of

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


def parse_manifest(data: bytes, where: str) -> dict[str, Any]:
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise InputError(f"{where}: not a release manifest (no files listed)")
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(f"{folder} has no {MANIFEST}: it is not a release built by this toolkit")
    return parse_manifest(path.read_bytes(), str(path))


def manifest_sha256(manifest: dict[str, Any]) -> str:
    """The hash the catalog records for a release's manifest (see the module's docstring)."""
    return sha256_of(manifest)


def differences(manifest: dict[str, Any], found: dict[str, str], recorded: str | None) -> list[str]:
    """Every difference between files found (path -> sha256, the manifest itself left out), the
    manifest, and the manifest hash the catalog recorded (None: nothing recorded to check)."""
    listed: dict[str, dict[str, Any]] = manifest.get("files", {})
    problems = []
    if recorded is not None and manifest_sha256(manifest) != recorded:
        problems.append(f"{MANIFEST}: not the manifest built for this release (sha256 "
                        f"{manifest_sha256(manifest)[:12]}…, the catalog recorded {recorded[:12]}…)")
    problems += [f"{name}: missing" for name in sorted(set(listed) - set(found))]
    problems += [f"{name}: not in the manifest" for name in sorted(set(found) - set(listed))]
    problems += [f"{name}: changed (sha256 {found[name][:12]}…, manifest {listed[name]['sha256'][:12]}…)"
                 for name in sorted(set(found) & set(listed)) if found[name] != listed[name]["sha256"]]
    return problems


def verify(folder: Path, recorded: str | None = None) -> list[str]:
    """Every difference between the folder, its manifest and the recorded manifest hash, one line
    each (empty: intact)."""
    return differences(read_manifest(folder), {k: v["sha256"] for k, v in hash_tree(folder).items()}, recorded)

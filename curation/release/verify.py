"""`curate release verify`: a release folder, or a published tag, against its manifest and
against the manifest hash the catalog recorded when the release was built. A file changed
together with its manifest entry passes the first check and fails the second.

The remote check downloads every file of the tag (through `huggingface_hub`, into a temporary
folder that is removed afterwards) and hashes the bytes that came back: the hub's own claims
(blob ids, LFS oids) are not taken on trust."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from curation.core.catalog import Catalog
from curation.core.config import ReleaseConfig
from curation.core.errors import InputError, UsageError
from curation.release.manifest import MANIFEST, differences, file_sha256, parse_manifest, read_manifest, verify
from curation.release.publish import HUB_FILES, _hub, folder_of, hub_online
from curation.release.semver import Version


@dataclass
class Verdict:
    where: str                      # the folder, or ENDPOINT/datasets/REPO@TAG
    version: str
    recorded: str | None            # the manifest hash the catalog recorded (None: none to check)
    problems: list[str] = field(default_factory=list)
    files: int = 0
    commit: str | None = None       # remote: the commit the tag points at


def _record(catalog: Catalog | None, version: str) -> dict[str, str | None] | None:
    if catalog is None:  # a release checked where there is no catalog: against its manifest only
        return None
    rows = catalog.rows("SELECT origin, path, manifest_sha256 FROM releases WHERE version = ?", [version])
    return rows[0] if rows else None


def verify_local(catalog: Catalog | None, target: str, settings: ReleaseConfig) -> Verdict:
    """`target` is vX.Y.Z (its recorded folder, else `[release] dir`/vX.Y.Z) or a release folder."""
    if Path(target).is_dir():
        folder = Path(target)
        version = str(Version.parse(str(read_manifest(folder).get("version", ""))))
    else:
        version = str(Version.parse(target))
        folder = folder_of(catalog, Version.parse(version), settings)
    record = _record(catalog, version)
    recorded = record["manifest_sha256"] if record else None
    return Verdict(str(folder), version, recorded, verify(folder, recorded), files=len(read_manifest(folder)["files"]))


def verify_remote(catalog: Catalog, version: str, repo: str, settings: ReleaseConfig,
                  endpoint: str | None = None) -> Verdict:
    target = Version.parse(version)
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise UsageError(f"--repo {repo!r}: write ORG/NAME")
    record = _record(catalog, str(target))
    if not record or not record["manifest_sha256"]:
        raise InputError(f"the catalog holds no manifest hash for {target.tag}: only a release built here "
                         "can be checked against what was built")
    hub = (endpoint or os.environ.get("HF_ENDPOINT") or settings.endpoint).rstrip("/")
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.hf_api import RepoFile

    token = os.environ.get("HF_TOKEN") or False  # False: no token from a login cache; a public repo needs none
    api = HfApi(endpoint=hub, token=token)
    out = Verdict(f"{hub}/datasets/{repo}@{target.tag}", str(target), record["manifest_sha256"])
    with hub_online(), tempfile.TemporaryDirectory(prefix="curate-verify-") as tmp:
        refs = _hub(f"listing the tags of {repo}", api.list_repo_refs, repo, repo_type="dataset")
        out.commit = next((t.target_commit for t in refs.tags if t.name == target.tag), None)
        if out.commit is None:
            raise InputError(f"{repo} at {hub} has no tag {target.tag}: `curate release publish` makes it")
        paths = [f.path for f in _hub(f"listing the files of {target.tag}", lambda: list(api.list_repo_tree(
            repo, recursive=True, revision=out.commit, repo_type="dataset"))) if isinstance(f, RepoFile)]
        if MANIFEST not in paths:
            out.problems.append(f"{MANIFEST}: missing")
            return out
        found, manifest_bytes = {}, b""
        for path in (p for p in paths if p not in HUB_FILES):
            local = Path(_hub(f"downloading {path}", hf_hub_download, repo, path, repo_type="dataset",
                              revision=out.commit, cache_dir=tmp, endpoint=hub, token=token))
            found[path] = file_sha256(local)
            manifest_bytes = local.read_bytes() if path == MANIFEST else manifest_bytes
    manifest = parse_manifest(manifest_bytes, f"{out.where}/{MANIFEST}")
    found.pop(MANIFEST)
    out.files = len(found)
    out.problems = differences(manifest, found, out.recorded)
    published = catalog.scalar("SELECT commit_oid FROM publications WHERE version = ? AND endpoint = ? "
                               "AND repo = ?", [str(target), hub, repo])
    if published and published != out.commit:
        out.problems.insert(0, f"{target.tag}: points at commit {out.commit[:12]}, published as {published[:12]}")
    return out


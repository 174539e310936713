"""`curate release publish`: a verified release folder to a Hugging Face dataset repo in one
commit, tagged `vX.Y.Z`. The token comes from `HF_TOKEN` only; the hub from `--endpoint`, else
`HF_ENDPOINT`, else `[release] endpoint`. An existing tag is never moved: publishing the same
version twice is refused before anything is uploaded.

A tag is its folder: the commit adds every file of the release and deletes, in the same commit,
every file the repo holds that the release does not (an earlier version's delta config, say),
but the hub's own `.gitattributes`. The folder must match its manifest and the manifest the
catalog recorded at build time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.config import ReleaseConfig, secret
from curation.core.errors import AnnotationError, InputError, StateError, UsageError
from curation.core.stage import RunResult, StageRun, stage
from curation.release.manifest import MANIFEST, hash_tree, read_manifest, verify
from curation.release.semver import Version


class HubError(AnnotationError):
    """The hub refused or did not answer; the message names the step."""


@dataclass
class PublishPlan(RunResult):
    endpoint: str = ""
    repo: str = ""
    tag: str = ""
    files: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # at the repo before, not in this release
    commit: str | None = None


# the hub's own file, written when the repo is created: it tells git clients which files are LFS
HUB_FILES = frozenset({".gitattributes"})


def recorded_manifest(run: StageRun, version: Version) -> str | None:
    """The manifest hash the catalog recorded when this version was built here (None: not built here)."""
    return run.db.scalar("SELECT manifest_sha256 FROM releases WHERE version = ? AND origin = 'built'",
                         [str(version)]) if run.db is not None else None


def recorded_releases(catalog: Catalog) -> list[dict[str, Any]]:
    """Every recorded release, oldest first, with the repos it was published to (`repos`)."""
    return catalog.rows("SELECT r.*, list(p.repo) FILTER (WHERE p.repo IS NOT NULL) AS repos FROM releases r "
                        "LEFT JOIN publications p USING (version) GROUP BY ALL ORDER BY r.created_at")


def check_folder(folder: Path, recorded: str | None) -> None:
    problems = verify(folder, recorded)
    if problems:
        raise InputError(f"{folder} does not match its manifest: " + "; ".join(problems[:5])
                         + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""))


def release_folder(run: StageRun, version: Version, settings: ReleaseConfig) -> Path:
    return folder_of(run.db, version, settings)


def folder_of(catalog: Catalog | None, version: Version, settings: ReleaseConfig) -> Path:
    """A release's folder, from any working folder: where the catalog recorded building it (an absolute path;
    catalogs from before recorded it relative to the folder `release build` ran in), else `[release] dir`/vX.Y.Z."""
    rows = catalog.rows("SELECT origin, path FROM releases WHERE version = ?", [str(version)]) if catalog else []
    built = next((r["path"] for r in rows if r["origin"] == "built" and r["path"]), None)
    imported = next((r["path"] for r in rows if r["origin"] == "imported"), None)
    folder = Path(built) if built else Path(settings.dir) / version.tag
    if folder.is_dir():
        return folder
    if built and not Path(built).is_absolute():
        raise InputError(f"{version} was built into {built}, relative to the folder `release build` ran in, which "
                         f"is not {Path.cwd()}: run there (releases built now record where they are)")
    if built:
        raise InputError(f"{version} was built into {built}, which is gone: `curate release build --version "
                         f"{version}` makes it again, byte for byte, from the catalog")
    if imported:
        raise InputError(f"{version} was imported from {imported}, not built here: build a release "
                         "(`curate release build --version …`) to publish")
    raise InputError(f"no release folder {folder}: run `curate release build --version {version}` first")


def check_card_states(folder: Path, version: Version, repo: str) -> None:
    """A card published says what the team stated: the annotations' licence, a contact, and the repo its
    `load_dataset` line names, as the build recorded them in the manifest. A release is never rebuilt, so one
    that lacks any needs a new version."""
    stated = read_manifest(folder).get("stated") or {}
    missing = [what for what, key in (("the annotations' licence ([release] annotations_license)",
                                       "annotations_license"), ("a contact ([release] contact)", "contact"))
               if not stated.get(key)]
    if stated.get("repo") != repo:
        built_for = stated.get("repo") or "no repo"
        missing.append(f"the repo it is published to (its card was built for {built_for}: `release build --repo "
                       f"{repo}`)")
    if missing:
        raise StateError(f"{version}'s card does not state {', '.join(missing)}: state them and build a new "
                         "version to publish (a release is never rebuilt)")


@contextmanager
def hub_online() -> Iterator[None]:
    """The toolkit keeps the hub offline (`HF_HUB_OFFLINE=1`: models load from their packages);
    publishing and remote verification talk to a hub, the one the user named, and only for their calls.

    Large files go by the Git LFS protocol (batch, PUT, verify), not Xet, even where `hf_xet` is
    installed: the Hub accepts both, a release is a few megabytes, and LFS is the protocol the
    toolkit's tests check byte for byte (and `upload_folder` under Xet may split a folder into
    several commits, where a release must be one).

    huggingface_hub reads both settings from the environment once, at import, and has no per-call
    switch for either, so this sets its `constants` for the length of the calls and restores them
    after: a private use, pinned by tests/test_private_apis.py."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET
    constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET = False, True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET = before


def _hub(step: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    import httpx2  # the HTTP client huggingface_hub 2 talks through
    from huggingface_hub.errors import HfHubHTTPError

    try:
        return fn(*args, **kwargs)
    except (OSError, httpx2.HTTPError, RuntimeError) as outer:
        # an LFS upload's error arrives wrapped in a RuntimeError naming the file: look inside;
        # a RuntimeError with no network error inside is not the hub's, and goes on as it came
        exc: BaseException | None = outer
        while exc is not None:
            if isinstance(exc, HfHubHTTPError):
                status = exc.response.status_code if exc.response is not None else "?"
                raise HubError(f"the hub refused {step}: HTTP {status}") from None
            if isinstance(exc, OSError | httpx2.HTTPError):
                raise HubError(f"the hub did not answer {step} ({type(exc).__name__})") from None
            exc = exc.__cause__
        raise


@stage("release-publish", command="curate release publish vX.Y.Z --repo ORG/NAME [--dry-run]",
       reads=("releases", "publications"), writes=("publications",),
       summary="a verified release to a Hugging Face dataset repo: one commit, tagged vX.Y.Z")
def publish_release(run: StageRun, version: str, repo: str, settings: ReleaseConfig,
                    endpoint: str | None = None) -> PublishPlan:
    target = Version.parse(version)
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise UsageError(f"--repo {repo!r}: write ORG/NAME")
    folder = release_folder(run, target, settings)
    check_folder(folder, recorded_manifest(run, target))
    check_card_states(folder, target, repo)
    hub = (endpoint or os.environ.get("HF_ENDPOINT") or settings.endpoint).rstrip("/")
    plan = PublishPlan(run.counts, endpoint=hub, repo=repo, tag=target.tag,
                       files=sorted([*hash_tree(folder), MANIFEST]))
    run.params.update(version=str(target), repo=repo, endpoint=hub, files=len(plan.files))
    if run.run_id is None:  # a dry run: the plan, no network
        return plan
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=hub, token=secret("HF_TOKEN", "the Hugging Face token"))
    with hub_online():
        _hub(f"creating the dataset repo {repo}", api.create_repo, repo, repo_type="dataset", exist_ok=True)
        refs = _hub(f"listing the tags of {repo}", api.list_repo_refs, repo, repo_type="dataset")
        if target.tag in {t.name for t in refs.tags}:
            raise StateError(f"{repo} already has the tag {target.tag}: a published version is never replaced")
        head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        remote = [f.path for f in _hub(f"listing the files of {repo}", lambda: list(api.list_repo_tree(
            repo, recursive=True, revision=head, repo_type="dataset"))) if isinstance(f, RepoFile)] if head else []
        plan.deleted = sorted(set(remote) - set(plan.files) - HUB_FILES)
        operations = [*(CommitOperationDelete(path_in_repo=p) for p in plan.deleted),
                      *(CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(folder / p)) for p in plan.files)]
        # parent_commit: the deletions were worked out against this head; a commit since is refused
        commit = _hub(f"the commit of {folder}", api.create_commit, repo, operations, repo_type="dataset",
                      commit_message=f"Release {target.tag}", parent_commit=head)
        _hub(f"the tag {target.tag}", api.create_tag, repo, tag=target.tag, revision=commit.oid,
             repo_type="dataset", tag_message=f"LivingScreen tasks {target.tag}")
    plan.commit = commit.oid
    run.db.con.execute("DELETE FROM publications WHERE version = ? AND endpoint = ? AND repo = ?",
                       [str(target), hub, repo])
    run.db.insert("publications", {"version": str(target), "endpoint": hub, "repo": repo, "tag": target.tag,
                                   "commit_oid": commit.oid, "run_id": run.run_id, "published_at": now()})
    run.counts.update(files=len(plan.files), deleted=len(plan.deleted), published=1)
    return plan

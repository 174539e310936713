"""`curate release publish`: a verified release folder to a Hugging Face dataset repo in one
commit, tagged `vX.Y.Z`. The token comes from `HF_TOKEN` only; the hub from `--endpoint`, else
`HF_ENDPOINT`, else `[release] endpoint`. An existing tag is never moved: publishing the same
version twice is refused before anything is uploaded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.core.catalog import now
from curation.core.config import ReleaseConfig, secret
from curation.core.errors import AnnotationError, InputError, UsageError
from curation.core.stage import RunResult, StageRun, stage
from curation.release.manifest import hash_tree, verify
from curation.release.semver import Version


class HubError(AnnotationError):
    """The hub refused or did not answer; the message names the step."""


@dataclass
class PublishPlan(RunResult):
    endpoint: str = ""
    repo: str = ""
    tag: str = ""
    files: list[str] = field(default_factory=list)
    commit: str | None = None


def release_folder(run: StageRun, version: Version, settings: ReleaseConfig) -> Path:
    recorded = run.db.scalar("SELECT path FROM releases WHERE version = ? AND origin = 'built'", [str(version)]) \
        if run.db is not None else None
    imported = run.db.scalar("SELECT path FROM releases WHERE version = ? AND origin = 'imported'",
                             [str(version)]) if run.db is not None else None
    folder = Path(recorded) if recorded else Path(settings.dir) / version.tag
    if not folder.is_dir() and imported:
        raise InputError(f"{version} was imported from {imported}, not built here: build a release "
                         "(`curate release build --version …`) to publish")
    if not folder.is_dir():
        raise InputError(f"no release folder {folder}: run `curate release build --version {version}` first")
    return folder


@contextmanager
def hub_online() -> Iterator[None]:
    """The toolkit keeps the hub offline (`HF_HUB_OFFLINE=1`: models load from their packages);
    publishing is the one step that talks to a hub, the one the user named, and only for its calls."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def _hub(step: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    from huggingface_hub.errors import HfHubHTTPError

    try:
        return fn(*args, **kwargs)
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise HubError(f"the hub refused {step}: HTTP {status}") from None
    except OSError as exc:
        raise HubError(f"the hub did not answer {step} ({type(exc).__name__})") from None
    except Exception as exc:  # httpx transport errors are not OSErrors
        if type(exc).__module__.startswith(("httpx", "requests")):
            raise HubError(f"the hub did not answer {step} ({type(exc).__name__})") from None
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
    problems = verify(folder)
    if problems:
        raise InputError(f"{folder} does not match its manifest: " + "; ".join(problems[:5])
                         + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""))
    hub = (endpoint or os.environ.get("HF_ENDPOINT") or settings.endpoint).rstrip("/")
    plan = PublishPlan(run.counts, endpoint=hub, repo=repo, tag=target.tag,
                       files=sorted([*hash_tree(folder), "manifest.json"]))
    run.params.update(version=str(target), repo=repo, endpoint=hub, files=len(plan.files))
    if run.run_id is None:  # a dry run: the plan, no network
        return plan
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub, token=secret("HF_TOKEN", "the Hugging Face token"))
    with hub_online():
        _hub(f"creating the dataset repo {repo}", api.create_repo, repo, repo_type="dataset", exist_ok=True)
        refs = _hub(f"listing the tags of {repo}", api.list_repo_refs, repo, repo_type="dataset")
        if target.tag in {t.name for t in refs.tags}:
            raise UsageError(f"{repo} already has the tag {target.tag}: a published version is never replaced")
        commit = _hub(f"the commit of {folder}", api.upload_folder, repo_id=repo, folder_path=str(folder),
                      repo_type="dataset", commit_message=f"Release {target.tag}")
        _hub(f"the tag {target.tag}", api.create_tag, repo, tag=target.tag, revision=commit.oid,
             repo_type="dataset", tag_message=f"LivingScreen tasks {target.tag}")
    plan.commit = commit.oid
    run.db.con.execute("DELETE FROM publications WHERE version = ? AND endpoint = ? AND repo = ?",
                       [str(target), hub, repo])
    run.db.insert("publications", {"version": str(target), "endpoint": hub, "repo": repo, "tag": target.tag,
                                   "commit_oid": commit.oid, "run_id": run.run_id, "published_at": now()})
    run.counts.update(files=len(plan.files), published=1)
    return plan

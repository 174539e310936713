"""Publishing, against a local stand-in hub that answers as the Hub does and records every
request: parquet goes by LFS (batch, PUT, verify) and its bytes arrive intact; one commit per
release, tagged; a tag holds exactly its release's files (an earlier version's delta config is
deleted in the same commit); the refusals."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from curation.core.errors import ConfigError, InputError, StateError, UsageError
from curation.release.build import build_release
from curation.release.publish import publish_release
from tests.core.contract import run_traced
from tests.qc.helpers import finish_qc, plant_task
from tests.release.helpers import reviewed_catalog, settings
from tests.release.hub import RecordingHub

TOKEN = "hf_" + "x" * 34
REPO = "livingscreen/tasks"


@pytest.fixture
def built(clustered_catalog, tmp_path):
    feeds = reviewed_catalog(clustered_catalog)
    release = build_release(clustered_catalog, "1.0.0", settings(tmp_path), repo=REPO)
    return clustered_catalog, release.folder, settings(tmp_path), feeds


def folder_files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def add_task(cat, task_id: str, feed: str) -> None:
    plant_task(cat, task_id, feed, tier="L1", subcategory="gui_collect", eval_type="platform",
               instruction=f"收藏第{task_id[-1]}个视频", options=None,
               eval_config=[{"func": "eval_collect", "args": {"video_ids": int(task_id[-1])}}])
    finish_qc(cat, task_id)


def test_publish_is_one_commit_with_every_file_then_the_tag(built, monkeypatch):
    cat, folder, config, _ = built
    monkeypatch.delenv("HF_TOKEN", raising=False)
    plan = publish_release.dry(cat, "1.0.0", REPO, config, "http://127.0.0.1:9")
    files = folder_files(folder)
    assert plan.files == sorted(files) and plan.tag == "v1.0.0" and plan.commit is None  # no token, no network
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        publish_release(cat, "1.0.0", REPO, config, "http://127.0.0.1:9")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RecordingHub() as hub:
        published = run_traced(cat, "release-publish", lambda: publish_release(cat, "1.0.0", REPO, config, hub.url))
        parquet = sorted(f for f in files if f.endswith(".parquet"))
        api = f"/api/datasets/{REPO}"
        calls = hub.calls()
        assert calls[:3] == [("POST", "/api/repos/create"), ("GET", f"{api}/refs"),
                             ("GET", f"{api}/tree/{hub.repos[REPO]['commits'][0]}")]
        assert calls[-2:] == [("POST", f"{api}/commit/main"), ("POST", f"{api}/tag/{published.commit}")]
        middle = calls[3:-2]
        assert ("POST", f"{api}/preupload/main") in middle
        assert ("POST", f"/datasets/{REPO}.git/info/lfs/objects/batch") in middle
        # every parquet file went by LFS: its bytes were PUT once, hashing to the oid the batch named
        puts = {r["path"].split("/")[2]: r["raw"] for r in hub.requests if r["method"] == "PUT"}
        assert sorted(puts) == sorted({hashlib.sha256(files[f]).hexdigest() for f in parquet})
        assert all(hashlib.sha256(raw).hexdigest() == oid for oid, raw in puts.items())
        assert sum(1 for m, p in middle if m == "POST" and p.endswith("/verify")) == len(puts)
        lines = next(r["commit"] for r in hub.requests if r["path"].endswith("/commit/main"))
        kinds = {line["value"]["path"]: line["key"] for line in lines if line["key"] != "header"}
        assert kinds == {f: "lfsFile" if f in parquet else "file" for f in files}  # nothing to delete yet
        assert all(base64.b64decode(line["value"]["content"]) == files[line["value"]["path"]]
                   for line in lines if line["key"] == "file")
        assert json.loads(hub.requests[0]["raw"]) | {"private": None} == {
            "name": "tasks", "organization": "livingscreen", "type": "dataset", "private": None}
        assert all(r["authorization"] == f"Bearer {TOKEN}" for r in hub.requests if not r["path"].startswith("/lfs/"))
        # the tag holds the folder, byte for byte, and the hub's own .gitattributes
        assert hub.files_at(REPO, "v1.0.0") == files | {".gitattributes": hub.files_at(REPO, "v1.0.0")[
            ".gitattributes"]}
        assert hub.lfs_paths_at(REPO, "v1.0.0") == set(parquet)
        assert hub.repos[REPO]["tags"] == {"v1.0.0": published.commit}
        assert len(hub.repos[REPO]["commits"]) == 2  # the repo's first commit, and the release

        seen = len(hub.requests)
        with pytest.raises(StateError, match="already has the tag v1.0.0"):
            publish_release(cat, "1.0.0", REPO, config, hub.url)
        assert [r["path"] for r in hub.requests[seen:]] == ["/api/repos/create", f"{api}/refs"]
    recorded = cat.rows("SELECT * FROM publications")
    assert [(r["version"], r["repo"], r["tag"], r["commit_oid"]) for r in recorded] == [
        ("1.0.0", REPO, "v1.0.0", published.commit)]
    stored = json.dumps([cat.rows("SELECT * FROM runs"), recorded], default=str)
    assert TOKEN not in stored


def test_a_tag_is_its_folder_files_of_earlier_versions_are_deleted_in_the_same_commit(built, monkeypatch):
    cat, _, config, feeds = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    add_task(cat, "gui_collect_1", feeds[0])
    v110 = build_release(cat, "1.1.0", config, repo=REPO)
    add_task(cat, "gui_collect_2", feeds[1])
    v120 = build_release(cat, "1.2.0", config, repo=REPO)
    old_delta, new_delta = "data/v1_0_0_to_v1_1_0/test-00000-of-00001.parquet", \
        "data/v1_1_0_to_v1_2_0/test-00000-of-00001.parquet"
    assert (v110.folder / old_delta).is_file() and not (v120.folder / old_delta).exists()
    with RecordingHub() as hub:
        publish_release(cat, "1.1.0", REPO, config, hub.url)
        seen = len(hub.requests)
        second = publish_release(cat, "1.2.0", REPO, config, hub.url)
        assert second.deleted == [old_delta]
        lines = next(r["commit"] for r in hub.requests[seen:] if r["path"].endswith("/commit/main"))
        assert {"key": "deletedFile", "value": {"path": old_delta}} in lines
        assert lines[0]["value"]["parentCommit"] == hub.repos[REPO]["tags"]["v1.1.0"]
        at_tag = hub.files_at(REPO, "v1.2.0")
        assert sorted(at_tag) == sorted([*folder_files(v120.folder), ".gitattributes"])
        assert {f: at_tag[f] for f in folder_files(v120.folder)} == folder_files(v120.folder)
        assert new_delta in hub.lfs_paths_at(REPO, "v1.2.0")
        # the earlier tag still shows its own release, delta included
        assert sorted(hub.files_at(REPO, "v1.1.0")) == sorted([*folder_files(v110.folder), ".gitattributes"])
        # a parquet file whose bytes the hub already holds is not sent again
        unchanged = (v110.folder / "feeds.parquet").read_bytes() == (v120.folder / "feeds.parquet").read_bytes()
        sent = {r["path"].split("/")[2] for r in hub.requests[seen:] if r["method"] == "PUT"}
        assert (hashlib.sha256((v120.folder / "feeds.parquet").read_bytes()).hexdigest() in sent) != unchanged


def test_a_changed_release_or_a_bad_repo_name_is_refused_before_any_upload(built, monkeypatch):
    cat, folder, config, _ = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with pytest.raises(UsageError, match="write ORG/NAME"):
        publish_release(cat, "1.0.0", "tasks", config, "http://127.0.0.1:9")
    with RecordingHub() as hub:
        (folder / "README.md").write_text("edited by hand\n", encoding="utf-8")
        with pytest.raises(InputError, match="does not match its manifest: README.md: changed"):
            publish_release(cat, "1.0.0", REPO, config, hub.url)
        # the same edit with its manifest entry rewritten: the manifest is not the one recorded at build time
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        manifest["files"]["README.md"]["sha256"] = hashlib.sha256(b"edited by hand\n").hexdigest()
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match="manifest.json: not the manifest built for this release"):
            publish_release(cat, "1.0.0", REPO, config, hub.url)
        assert hub.requests == []
    with pytest.raises(InputError, match="run `curate release build --version 2.0.0` first"):
        publish_release(cat, "2.0.0", REPO, config, "http://127.0.0.1:9")


def test_publish_refuses_a_card_that_states_nothing(clustered_catalog, tmp_path, monkeypatch):
    """Issue 32: no licence, contact or repo is asserted by default; the card says "not stated" and publish
    refuses until a new version states them (a release is never rebuilt)."""
    from dataclasses import replace

    reviewed_catalog(clustered_catalog)
    bare = replace(settings(tmp_path), annotations_license="", contact="")
    folder = build_release(clustered_catalog, "1.0.0", bare).folder
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "The annotations' licence is not stated" in card and "CC-BY" not in card
    assert "Not stated: the team sets a contact" in card and 'load_dataset("./v1.0.0"' in card
    assert "ORG/NAME" not in card  # no placeholder: the snippet loads the folder itself
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with pytest.raises(StateError) as refused:
        publish_release.dry(clustered_catalog, "1.0.0", REPO, bare, "http://127.0.0.1:9")
    said = str(refused.value)
    assert "annotations_license" in said and "[release] contact" in said and "built for no repo" in said

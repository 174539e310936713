"""Publishing, against a local stand-in hub that records every request: the exact sequence a
release upload makes (repo, one commit with every file, the tag), and the refusals."""

from __future__ import annotations

import json

import pytest

from curation.core.errors import ConfigError, InputError, UsageError
from curation.release.build import build_release
from curation.release.publish import publish_release
from tests.core.contract import run_traced
from tests.release.helpers import reviewed_catalog, settings
from tests.release.hub import RecordingHub

TOKEN = "hf_" + "x" * 34


@pytest.fixture
def built(clustered_catalog, tmp_path):
    reviewed_catalog(clustered_catalog)
    release = build_release(clustered_catalog, "1.0.0", settings(tmp_path))
    return clustered_catalog, release.folder, settings(tmp_path)


def test_publish_is_one_commit_with_every_file_then_the_tag(built, monkeypatch):
    cat, folder, config = built
    monkeypatch.delenv("HF_TOKEN", raising=False)
    plan = publish_release(cat, "1.0.0", "livingscreen/tasks", config, "http://127.0.0.1:9", dry_run=True)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert plan.files == files and plan.tag == "v1.0.0" and plan.commit is None  # no token, no network
    with pytest.raises(ConfigError, match="HF_TOKEN"):
        publish_release(cat, "1.0.0", "livingscreen/tasks", config, "http://127.0.0.1:9")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RecordingHub() as hub:
        published = run_traced(cat, "release-publish", lambda: publish_release(
            cat, "1.0.0", "livingscreen/tasks", config, hub.url))
        calls = [(r["method"], r["path"]) for r in hub.requests]
        assert calls == [("POST", "/api/repos/create"), ("GET", "/api/datasets/livingscreen/tasks/refs"),
                         ("POST", "/api/validate-yaml"), ("POST", "/api/datasets/livingscreen/tasks/preupload/main"),
                         ("POST", "/api/datasets/livingscreen/tasks/commit/main"),
                         ("POST", f"/api/datasets/livingscreen/tasks/tag/{published.commit}")]
        assert json.loads(hub.requests[0]["raw"]) | {"private": None} == {
            "name": "tasks", "organization": "livingscreen", "type": "dataset", "private": None}
        assert all(r["authorization"] == f"Bearer {TOKEN}" for r in hub.requests)
        uploaded = hub.repos["livingscreen/tasks"]["files"]
        assert sorted(uploaded) == files and all(uploaded[f] == (folder / f).read_bytes() for f in files)
        assert hub.repos["livingscreen/tasks"]["tags"] == {"v1.0.0": published.commit}
        assert len(hub.repos["livingscreen/tasks"]["commits"]) == 1

        with pytest.raises(UsageError, match="already has the tag v1.0.0"):
            publish_release(cat, "1.0.0", "livingscreen/tasks", config, hub.url)
        assert [r["path"] for r in hub.requests[6:]] == ["/api/repos/create", "/api/datasets/livingscreen/tasks/refs"]
    recorded = cat.rows("SELECT * FROM publications")
    assert [(r["version"], r["repo"], r["tag"], r["commit_oid"]) for r in recorded] == [
        ("1.0.0", "livingscreen/tasks", "v1.0.0", published.commit)]
    stored = json.dumps([cat.rows("SELECT * FROM runs"), recorded], default=str)
    assert TOKEN not in stored


def test_a_changed_release_or_a_bad_repo_name_is_refused_before_any_upload(built, monkeypatch):
    cat, folder, config = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with pytest.raises(UsageError, match="write ORG/NAME"):
        publish_release(cat, "1.0.0", "tasks", config, "http://127.0.0.1:9")
    (folder / "README.md").write_text("edited by hand\n", encoding="utf-8")
    with RecordingHub() as hub:
        with pytest.raises(InputError, match="does not match its manifest: README.md: changed"):
            publish_release(cat, "1.0.0", "livingscreen/tasks", config, hub.url)
        assert hub.requests == []
    with pytest.raises(InputError, match="run `curate release build --version 2.0.0` first"):
        publish_release(cat, "2.0.0", "livingscreen/tasks", config, "http://127.0.0.1:9")

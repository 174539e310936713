"""Publishing names the hub's refusals and silences, also when an LFS upload wraps them in a
RuntimeError; a bug inside an upload is a failed run with its traceback, not a hub error."""

from __future__ import annotations

from typing import Any

import pytest

from curation.core.catalog import Catalog
from curation.core.services import free_port
from curation.release.publish import HubError, publish_release
from tests.cli.planted import curate_with_bug, last_run
from tests.release.hub import RecordingHub
from tests.release.test_publish import REPO, TOKEN, built  # noqa: F401  (the built release, a fixture)


class RefusingHub(RecordingHub):
    """Takes the commit's LFS batch, then refuses every upload of bytes, as a full quota would."""

    def _lfs_object(self, method: str, oid: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        if method == "PUT":
            return 403, {"error": "storage quota exceeded"}, {}
        return super()._lfs_object(method, oid, raw)


def test_a_bug_inside_an_upload_is_a_failed_run_not_a_hub_error(built, monkeypatch):  # noqa: F811
    cat, _, _, _ = built
    db = str(cat.path)
    cat.close()
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RecordingHub() as hub:
        out = curate_with_bug("huggingface_hub._commit_api:lfs_upload", "KeyError:oid", "--catalog", db,
                              "release", "publish", "v1.0.0", "--repo", REPO, "--endpoint", hub.url)
        assert out.returncode == 1
        said = [line for line in out.stderr.splitlines() if line.startswith("error:")]  # after huggingface's bars
        assert len(said) == 1 and said[0].startswith("error: unexpected RuntimeError: Error while uploading"), \
            out.stderr
        assert "the hub refused" not in out.stderr and "the hub did not answer" not in out.stderr
        assert hub.repos[REPO]["tags"] == {} and len(hub.repos[REPO]["commits"]) == 1  # only the hub's own
    with Catalog(db) as cat:
        run = last_run(cat, "release-publish")
        assert run["status"] == "failed" and run["error"].startswith("RuntimeError: Error while uploading")
        assert "KeyError: 'oid'" in run["traceback"] and "in _hub" in run["traceback"]
        assert cat.scalar("SELECT count(*) FROM publications") == 0


def test_a_refused_upload_and_a_closed_port_are_each_named_by_their_step(built, monkeypatch):  # noqa: F811
    cat, folder, config, _ = built
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RefusingHub() as hub:
        with pytest.raises(HubError, match=rf"^the hub refused the commit of {folder}: HTTP 403$"):
            publish_release(cat, "1.0.0", REPO, config, hub.url)
        assert hub.repos[REPO]["tags"] == {}
    closed = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(HubError, match=rf"^the hub did not answer creating the dataset repo {REPO} \(ConnectError\)$"):
        publish_release(cat, "1.0.0", REPO, config, closed)
    failed = cat.rows("SELECT error, traceback FROM runs WHERE stage = 'release-publish' ORDER BY started_at")
    assert [r["error"].split(":")[0] for r in failed] == ["HubError", "HubError"]
    assert all("in publish_release" in r["traceback"] for r in failed)
    assert cat.scalar("SELECT count(*) FROM publications") == 0

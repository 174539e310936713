"""`curate release verify`, run as the user runs it: a folder against its manifest and against the
manifest hash the catalog recorded at build time, so that a data file changed together with its
manifest entry is caught; `--remote` does the same for a published tag, downloading its files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from curation.release.build import TASK_SCHEMA, build_release
from curation.release.card import data_path
from tests.cli.test_cli import curate
from tests.release.helpers import reviewed_catalog, settings
from tests.release.hub import RecordingHub

TOKEN = "hf_" + "y" * 34
REPO = "livingscreen/tasks"
ALL = data_path("all")


@pytest.fixture
def released(clustered_catalog, tmp_path) -> tuple[str, Path]:
    """v1.0.0 built into a catalog file the CLI can open (the test's own handle closed)."""
    reviewed_catalog(clustered_catalog)
    folder = build_release(clustered_catalog, "1.0.0", settings(tmp_path / "releases"), repo=REPO).folder
    clustered_catalog.close()
    return str(tmp_path / "catalog.duckdb"), folder


def flip_an_answer(data: bytes) -> bytes:
    """The `all` config with one label task's answer changed, written back as parquet."""
    import io

    rows = pq.read_table(io.BytesIO(data)).to_pylist()
    label = next(r for r in rows if r["eval_type"] == "label")
    label["answer"] = "A" if label["answer"] != "A" else "B"
    out = io.BytesIO()
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows, schema=TASK_SCHEMA), out, compression="zstd")
    return out.getvalue()


def rewrite_entry(manifest: bytes, path: str, data: bytes) -> bytes:
    body = json.loads(manifest)
    body["files"][path] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return (json.dumps(body, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()


def test_a_data_file_changed_with_its_manifest_entry_is_caught(released):
    db, folder = released
    out = curate("--catalog", db, "release", "verify", "v1.0.0")
    assert out.returncode == 0, out.stderr
    assert "the manifest is the one recorded when v1.0.0 was built" in out.stdout
    assert curate("--catalog", db, "release", "verify", str(folder)).returncode == 0

    tampered = flip_an_answer((folder / ALL).read_bytes())
    (folder / ALL).write_bytes(tampered)
    out = curate("--catalog", db, "release", "verify", "v1.0.0")
    assert out.returncode == 1 and out.stdout.startswith(f"{ALL}: changed (sha256 ")
    (folder / "manifest.json").write_bytes(rewrite_entry((folder / "manifest.json").read_bytes(), ALL, tampered))
    for target in ("v1.0.0", str(folder)):
        out = curate("--catalog", db, "release", "verify", target)
        assert out.returncode == 1
        assert out.stdout.splitlines() == [
            next(line for line in out.stdout.splitlines() if line.startswith("manifest.json: not the manifest "
                                                                             "built for this release (sha256 "))]
        assert "1 differences from the release built as v1.0.0" in out.stderr
    out = curate("--catalog", db, "release", "verify", "v1.0.0", "--remote")
    assert out.returncode == 2 and "--remote needs --repo ORG/NAME" in out.stderr
    # where there is no catalog (a downloaded release), the files are checked against the manifest, and
    # the command says the manifest itself could not be
    out = curate("--catalog", db + ".absent", "release", "verify", str(folder))
    assert out.returncode == 0, out.stderr
    assert "the catalog holds no manifest hash for v1.0.0, so the manifest itself is unchecked" in out.stdout


def test_a_published_tag_is_checked_against_what_was_built(released, monkeypatch):
    db, folder = released
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RecordingHub() as hub:
        published = curate("--catalog", db, "release", "publish", "v1.0.0", "--repo", REPO, "--endpoint", hub.url)
        assert published.returncode == 0, published.stderr
        check = ("--catalog", db, "release", "verify", "v1.0.0", "--remote", "--repo", REPO, "--endpoint", hub.url)
        out = curate(*check)
        assert out.returncode == 0, out.stderr
        commit = hub.repos[REPO]["tags"]["v1.0.0"]
        assert f"{hub.url}/datasets/{REPO}@v1.0.0: every file matches the manifest (" in out.stdout
        assert f"(commit {commit})" in out.stdout
        downloads = [r for r in hub.requests if r["method"] == "GET" and "/resolve/" in r["path"]]
        assert sorted(r["path"].split(f"/resolve/{commit}/")[1] for r in downloads) == sorted(
            [*(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())])

        # someone moves the tag to a commit whose parquet and manifest entry were changed together
        tree = dict(hub.repos[REPO]["trees"][commit])
        tampered = flip_an_answer(tree[ALL][0])
        tree[ALL] = (tampered, True)
        tree["manifest.json"] = (rewrite_entry(tree["manifest.json"][0], ALL, tampered), False)
        hub.repos[REPO]["trees"]["f" * 40] = tree
        hub.repos[REPO]["tags"]["v1.0.0"] = "f" * 40
        out = curate(*check)
        assert out.returncode == 1
        lines = out.stdout.splitlines()
        assert lines[0] == f"v1.0.0: points at commit {'f' * 12}, published as {commit[:12]}"
        assert lines[1].startswith("manifest.json: not the manifest built for this release") and len(lines) == 2

        # a file changed at the tag, its manifest left alone; a file of another version added
        tree = dict(hub.repos[REPO]["trees"][commit])
        tree["README.md"] = (b"edited on the hub\n", False)
        tree["data/v0_9_0_to_v1_0_0/test-00000-of-00001.parquet"] = tree[ALL]
        hub.repos[REPO]["trees"]["e" * 40] = tree
        hub.repos[REPO]["tags"]["v1.0.0"] = "e" * 40
        out = curate(*check)
        assert out.returncode == 1
        assert out.stdout.splitlines()[1:] == [
            "data/v0_9_0_to_v1_0_0/test-00000-of-00001.parquet: not in the manifest",
            next(line for line in out.stdout.splitlines() if line.startswith("README.md: changed (sha256 "))]

        out = curate("--catalog", db, "release", "verify", "v1.0.0", "--remote", "--repo", "other/repo",
                     "--endpoint", hub.url)
        assert out.returncode != 0 and out.stderr.strip().splitlines()[-1].startswith("error: the hub refused")


def test_a_release_is_found_from_any_folder(clustered_catalog, tmp_path, monkeypatch):
    """Built from the team's folder with a relative `--out`, verified and published from another (issue 32: the
    recorded path was relative, and `publish` elsewhere advised building a release that existed)."""
    import duckdb

    from tests.qc.helpers import curate_in

    reviewed_catalog(clustered_catalog)
    clustered_catalog.close()
    db = str(tmp_path / "catalog.duckdb")
    team, elsewhere = tmp_path / "team", tmp_path / "elsewhere"
    team.mkdir()
    elsewhere.mkdir()
    stated = {"CURATE__RELEASE__ANNOTATIONS_LICENSE": "CC-BY-4.0", "CURATE__RELEASE__CONTACT": "https://example.org/issues"}
    built = curate_in(team, "--catalog", db, "release", "build", "--version", "1.0.0", "--out", "releases",
                      "--repo", REPO, env=stated)
    assert built.returncode == 0, built.stderr
    verified = curate_in(elsewhere, "--catalog", db, "release", "verify", "v1.0.0")
    assert verified.returncode == 0, verified.stderr
    assert str(team / "releases" / "v1.0.0") in verified.stdout
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with RecordingHub() as hub:
        published = curate_in(elsewhere, "--catalog", db, "release", "publish", "v1.0.0", "--repo", REPO,
                              "--endpoint", hub.url, env={"HF_TOKEN": TOKEN})
        assert published.returncode == 0, published.stderr
        assert "v1.0.0" in hub.repos[REPO]["tags"]

    # a catalog from before kept the path relative to where `release build` ran: the error says so
    with duckdb.connect(db) as con:
        con.execute("UPDATE releases SET path = 'releases/v1.0.0' WHERE version = '1.0.0'")
    old = curate_in(elsewhere, "--catalog", db, "release", "verify", "v1.0.0")
    assert old.returncode == 1 and "relative to the folder `release build` ran in" in old.stderr, old.stderr
    assert curate_in(team, "--catalog", db, "release", "verify", "v1.0.0").returncode == 0

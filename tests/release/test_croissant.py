"""croissant.json as a consumer reads it: mlcroissant validates it, reads every record set back equal to the
parquet rows, carries the RAI texts computed from the release, and refuses a tampered file or description."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pyarrow.parquet as pq
import pytest

from curation.release.build import build_release
from curation.release.card import data_path
from curation.release.croissant import CROISSANT, croissant_metadata, write_croissant
from curation.release.manifest import write_manifest
from tests.qc.helpers import finish_qc, plant_task
from tests.release.helpers import reviewed_catalog, settings


def plain(value: Any) -> Any:
    """A record as mlcroissant yields it, as pyarrow's to_pylist gives the row: keys without their record-set
    path, bytes as text."""
    if isinstance(value, dict):
        return {k.rsplit("/", 1)[-1]: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value.decode() if isinstance(value, bytes) else value


@pytest.fixture
def release(clustered_catalog, tmp_path) -> Path:
    """A minor release (v1.1.0 on v1.0.0), so that a delta config is there too."""
    cat = clustered_catalog
    feeds = reviewed_catalog(cat)
    build_release(cat, "1.0.0", settings(tmp_path))
    plant_task(cat, "gui_collect_1", feeds[0], tier="L1", subcategory="gui_collect", eval_type="platform",
               instruction="收藏第一个视频", options=None,
               eval_config=[{"func": "eval_collect", "args": {"video_ids": 0}}])
    finish_qc(cat, "gui_collect_1")
    return build_release(cat, "1.1.0", settings(tmp_path)).folder


def test_mlcroissant_validates_it_and_reads_every_record_set_back_as_the_parquet_rows(release, tmp_path):
    path = write_croissant(release, settings(tmp_path), repo="org/ls", date_published="2026-11-01")
    assert path == release / CROISSANT
    dataset = mlc.Dataset(jsonld=path)  # raises on any validation error
    assert not dataset.metadata.ctx.issues.errors and not dataset.metadata.ctx.issues.warnings
    body = json.loads(path.read_text(encoding="utf-8"))
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert body["version"] == "1.1.0" and body["url"] == "https://huggingface.co/datasets/org/ls"
    files = {f["contentUrl"]: f for f in body["distribution"]}
    assert {f: e["sha256"] for f, e in files.items()} == {
        f: manifest["files"][f]["sha256"] for f in files}
    assert files["livingscreen/gui_action.json"]["encodingFormat"] == "application/json"
    by_id = {f["@id"]: f for f in body["distribution"]}
    sets = [r["@id"] for r in body["recordSet"]]
    assert sets == manifest["configs"] + ["videos", "feeds"]
    assert sets[4] == "v1_0_0_to_v1_1_0"

    for record_set in sets:
        parquet = release / by_id[_file_of(body, record_set)]["contentUrl"]
        expected = pq.read_table(parquet).to_pylist()
        got = [plain(r) for r in dataset.records(record_set)]
        assert got == expected, record_set

    fields = {f["name"]: f for f in body["recordSet"][0]["field"]}
    assert fields["task_version"]["dataType"] == "sc:Integer" and fields["video_feed"]["repeated"] is True
    assert fields["distractor_ratio"]["dataType"] == "sc:Float"
    assert [s["name"] for s in fields["options"]["subField"]] == ["label", "text"] and fields["options"]["repeated"]
    qc_members = pq.read_schema(release / data_path("all")).field("qc").type.names
    assert "repeated" not in fields["qc"] and [s["name"] for s in fields["qc"]["subField"]] == qc_members

    meta = dataset.metadata
    assert "5 tasks (L1 2, L2 2, L3 1)" in meta.data_collection
    assert meta.annotator_demographics == ["not collected"]
    assert "No video in this release is synthetic." in meta.data_collection_raw_data
    assert any("FakeSV 100%" in text for text in meta.data_biases)
    assert meta.data_release_maintenance_plan and meta.personal_sensitive_information and meta.data_use_cases
    assert meta.annotations_per_item and meta.data_limitations and meta.data_social_impact


def _file_of(body: dict[str, Any], record_set: str) -> str:
    """The FileObject a record set reads (its first field's source)."""
    fields = next(r["field"] for r in body["recordSet"] if r["@id"] == record_set)
    return next(f["source"]["fileObject"]["@id"] for f in fields if "source" in f)


def test_the_same_folder_gives_the_same_bytes(release, tmp_path):
    first = write_croissant(release, settings(tmp_path)).read_bytes()
    assert write_croissant(release, settings(tmp_path)).read_bytes() == first
    assert "datePublished" not in json.loads(first)
    # the lead's wiring: write the manifest again so that it lists croissant.json too
    body = {k: v for k, v in json.loads((release / "manifest.json").read_text(encoding="utf-8")).items()
            if k != "files"}
    write_manifest(release, body)
    assert CROISSANT in json.loads((release / "manifest.json").read_text(encoding="utf-8"))["files"]


@pytest.mark.parametrize("tamper, error", [
    ("sha256", "GenerationError"), ("dataType", "ValidationError"), ("encodingFormat", "ValidationError"),
    ("column", "GenerationError")])
def test_a_tampered_hash_or_a_missing_property_fails(release, tmp_path, tamper, error):
    good = croissant_metadata(release, settings(tmp_path))
    bad = copy.deepcopy(good)
    first_file, first_field = bad["distribution"][0], bad["recordSet"][0]["field"][0]
    if tamper == "sha256":
        first_file["sha256"] = "0" * 64
    elif tamper == "dataType":
        del first_field["dataType"]
    elif tamper == "encodingFormat":
        del first_file["encodingFormat"]
    else:
        first_field["source"]["extract"]["column"] = "no_such_column"
    path = release / CROISSANT
    for body, fails in ((good, False), (bad, True)):
        path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
        try:
            records = list(mlc.Dataset(jsonld=path).records("all"))
        except Exception as exc:  # mlcroissant's errors are not exported under one base class
            assert fails and type(exc).__name__ == error, exc
            if tamper == "sha256":
                assert "hash" in str(exc.__cause__ or exc).lower() or "checksum" in str(exc.__cause__).lower()
        else:
            assert not fails and len(records) == 5


def test_rai_claims_are_what_ran_for_these_tasks(release, clustered_catalog, tmp_path):
    """Issue 32: each RAI claim about QC is computed from the records. Here every task was written and checked
    here; the numbers are the catalog's (the all-inherited release: tests/release/test_carry_forward.py)."""
    cat = clustered_catalog
    rai = croissant_metadata(release, settings(tmp_path))
    shipped = [r["task_id"] for r in pq.read_table(release / "data/all/test-00000-of-00001.parquet").to_pylist()]
    reviewed = cat.scalar("SELECT count(DISTINCT task_id) FROM reviews WHERE list_contains(?, task_id)", [shipped])
    judged = cat.scalar("SELECT count(DISTINCT task_id) FROM shortcut_verdicts WHERE list_contains(?, task_id)",
                        [shipped])
    protocol = rai["rai:dataAnnotationProtocol"][1]
    assert protocol.startswith(f"every task passed the task rules at the release gate ({len(shipped)} tasks)")
    assert (f"{reviewed} of {len(shipped)} carry a blind review" in protocol) == bool(reviewed)
    assert (f"{judged} of {len(shipped)} were judged by a metadata-only shortcut filter" in protocol) == bool(judged)
    assert "inherited" not in protocol and "Label Studio" in rai["rai:dataAnnotationPlatform"]
    tools = " ".join(rai["rai:machineAnnotationTools"])
    assert ("shortcut filter" in tools) == bool(judged) and "keyword-set clustering" in tools


def test_rai_claims_for_a_mix_of_inherited_and_written_here(clustered_catalog, tmp_path):
    """The third release of issue 32's three: some tasks inherited from a release, the rest written and checked
    here. Every number in the RAI claims is the catalog's, by SQL over the shipped tasks."""
    from curation.qc.accept import accept_imported
    from curation.release.livingscreen import import_livingscreen
    from tests.release.test_livingscreen import RELEASE, write_release

    cat = clustered_catalog
    reviewed_catalog(cat)
    import_livingscreen(cat, write_release(tmp_path / "earlier", RELEASE), "0.9.0")
    accept_imported(cat, "0.9.0", "the team's earlier tasks")
    folder = build_release(cat, "1.0.0", settings(tmp_path), exclude_invalid=True).folder
    shipped = [r["task_id"] for r in pq.read_table(folder / "data/all/test-00000-of-00001.parquet").to_pylist()]
    inherited = cat.scalar("SELECT count(DISTINCT task_id) FROM task_transitions WHERE to_state = 'kept' AND "
                           "reason LIKE 'inherited from v0.9.0%' AND list_contains(?, task_id)", [shipped])
    reviewed = cat.scalar("SELECT count(DISTINCT task_id) FROM reviews WHERE list_contains(?, task_id)", [shipped])
    assert 0 < inherited < len(shipped)
    rai = croissant_metadata(folder, settings(tmp_path))
    protocol = rai["rai:dataAnnotationProtocol"][1]
    assert (f"{inherited} tasks were inherited from v0.9.0: the team's earlier tasks, without this team's shortcut "
            "filter or review.") in protocol
    assert (f"{reviewed} of {len(shipped)} carry a blind review" in protocol) == bool(reviewed)
    assert f"{len(shipped) - inherited} tasks were written or checked here" in rai["rai:dataCollection"]
    assert f"{inherited} tasks: as the release they were inherited from made them" in rai["rai:annotationsPerItem"]
    assert rai["rai:dataAnnotationPlatform"] == ["Label Studio"]
    # the card and Croissant state one reading of what ran (facts.ReleaseFacts, kept in the manifest)
    ran = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["facts"]
    assert (ran["tasks"], ran["blind_reviews"], ran["inherited"]) == (
        len(shipped), reviewed, {"inherited from v0.9.0: the team's earlier tasks": inherited})
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert f"{inherited} tasks were inherited and kept as published" in card
    if "went through this team's QC review" in card:
        assert f": {ran['blind_reviews']} with a blind review by a second annotator" in card

"""The schema as the catalog states it: every table, view and table column described, keys shown, and
docs/schema.md equal to what `curate schema --markdown` prints."""

from __future__ import annotations

from curation.core.catalog import UNIQUE_KEYS, Catalog
from curation.core.schema import read_schema, undescribed
from tests.cli.test_cli import curate
from tests.conftest import ROOT


def test_every_table_view_and_column_is_described(catalog):
    docs = read_schema(catalog)
    assert undescribed(docs) == []
    tables = {doc.name: doc for doc in docs}
    assert tables["tasks"].key == ("task_id", "version") and not tables["tasks"].key_checked_by_runner
    assert tables["videos"].key == UNIQUE_KEYS["videos"].columns and tables["videos"].key_checked_by_runner
    assert tables["latest_tasks"].kind == "view"


def test_one_name_for_the_run_that_wrote_a_row(catalog):
    """A column holding the run that wrote the row is `run_id` in every table (feeds.cluster_run names the
    cluster run a feed was built from, which is not the run that wrote it)."""
    other = [f"{doc.name}.{col.name}" for doc in read_schema(catalog) if doc.kind == "table" for col in doc.columns
             if col.name.endswith("_run") or col.name.endswith("_run_id")]
    assert other == ["feeds.cluster_run"]


def test_docs_schema_md_is_what_curate_schema_prints(tmp_path):
    Catalog(tmp_path / "c.duckdb").close()
    out = curate("--catalog", str(tmp_path / "c.duckdb"), "schema", "--markdown")
    assert out.returncode == 0, out.stderr
    assert (ROOT / "docs" / "schema.md").read_text(encoding="utf-8") == out.stdout, (
        "docs/schema.md is out of date: run `curate schema --markdown > docs/schema.md`")
    plain = curate("--catalog", str(tmp_path / "c.duckdb"), "schema")
    assert "videos [table]  key (video_id): A video of a public corpus" in plain.stdout

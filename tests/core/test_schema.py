"""The schema as the catalog states it: every table, view and table column described, keys shown, references
declared as data that the catalog bears out, and docs/schema.md equal to what the generator prints from it,
grouped by the stage that owns each table."""

from __future__ import annotations

import re

from curation.core.catalog import UNIQUE_KEYS, Catalog
from curation.core.config import load_config
from curation.core.schema import NOT_STAGES, REFERENCES, owners, read_schema, schema_markdown, undescribed
from curation.corpus.feeds import build_feed_set
from curation.pipeline import all_stages
from tests.cli.test_cli import curate
from tests.conftest import ROOT


def test_every_table_view_and_column_is_described(catalog):
    docs = read_schema(catalog)
    assert undescribed(docs) == []
    tables = {doc.name: doc for doc in docs}
    assert tables["tasks"].key == ("task_id", "version") and not tables["tasks"].key_checked_by_runner
    assert tables["videos"].key == UNIQUE_KEYS["videos"].columns and tables["videos"].key_checked_by_runner
    assert tables["latest_tasks"].kind == "view" and tables["latest_tasks"].sources == ("tasks",)


def test_one_name_for_the_run_that_wrote_a_row(catalog):
    """A column holding the run that wrote the row is `run_id` in every table (feeds.cluster_run names the
    cluster run a feed was built from, which is not the run that wrote it)."""
    other = [f"{doc.name}.{col.name}" for doc in read_schema(catalog) if doc.kind == "table" for col in doc.columns
             if col.name.endswith("_run") or col.name.endswith("_run_id")]
    assert other == ["feeds.cluster_run"]


def test_every_reference_is_to_the_key_of_a_table_through_columns_of_the_same_type(catalog):
    docs = {doc.name: doc for doc in read_schema(catalog)}
    assert set(REFERENCES) <= {name for name, doc in docs.items() if doc.kind == "table"}
    for doc in docs.values():
        types = {col.name: col.type for col in doc.columns}
        for ref in doc.references:
            target = docs[ref.table]
            assert ref.target_columns == target.key, f"{doc.name} {ref}: not the key {target.key}"
            target_types = {col.name: col.type for col in target.columns}
            assert [types[c] for c in ref.columns] == [target_types[c] for c in ref.target_columns], f"{doc.name} {ref}"


def test_a_description_that_names_another_tables_key_is_a_declared_reference(catalog):
    """The prose '(videos.video_id)' in a column's description and the references as data say the same."""
    docs = {doc.name: doc for doc in read_schema(catalog)}
    named = 0
    for doc in docs.values():
        for col in doc.columns:
            for table, column in re.findall(r"\((\w+)\.(\w+)\)", col.description or ""):
                if table in docs and table != doc.name and column in docs[table].key:
                    named += 1
                    assert any(ref.table == table and col.name in ref.columns and
                               ref.target_columns[ref.columns.index(col.name)] == column for ref in doc.references), (
                        f"{doc.name}.{col.name} says ({table}.{column}) but declares no such reference")
    assert named > 30  # every run_id column's description names runs.run_id


def test_every_reference_holds_on_a_catalog_the_corpus_stages_made(clustered_catalog):
    """On a catalog made by the real ingest, keywords, embed, cluster and feeds stages, no row names a missing
    row of the table it refers to (every reference whose tables these stages fill is checked)."""
    config, cat = load_config(), clustered_catalog
    build_feed_set(cat, config.feeds, 5, seed=3, sources=config.sources)
    checked = []
    for doc in read_schema(cat):
        for ref in doc.references:
            present = " AND ".join(f"s.{c} IS NOT NULL" for c in ref.columns)
            joined = " AND ".join(f"t.{t} = s.{c}" for c, t in zip(ref.columns, ref.target_columns, strict=True))
            rows = cat.con.execute(f"SELECT count(*) FROM {doc.name} s WHERE {present}").fetchone()[0]
            missing = cat.con.execute(f"SELECT count(*) FROM {doc.name} s WHERE {present} AND NOT EXISTS "
                                      f"(SELECT 1 FROM {ref.table} t WHERE {joined})").fetchone()[0]
            assert missing == 0, f"{doc.name} {ref}: {missing} of {rows} rows name no row"
            if rows:
                checked.append(doc.name)
    assert {"videos", "keyword_sets", "embeddings", "clusters", "cluster_members", "feeds",
            "feed_coherence"} <= set(checked)


def test_every_table_has_one_owner_and_the_schema_page_is_grouped_by_it(catalog):
    """A table's owner writes it and no stage before it in the pipeline does; a view goes with a table it reads;
    docs/schema.md lists each under its owner's heading."""
    docs, stages = read_schema(catalog), all_stages()
    owned = owners(docs, stages)
    assert {name for name, owner in owned.items() if owner is None} == set(NOT_STAGES)
    order = [s.name for s in stages]
    page = schema_markdown(docs, catalog.schema_version, stages)
    sections = dict(re.findall(r"^## `([\w-]+)`\n(.*?)(?=^## |\Z)", page, flags=re.MULTILINE | re.DOTALL))
    for doc in docs:
        owner = owned[doc.name]
        if owner is None:
            continue
        if doc.kind == "table":
            writers = [s.name for s in stages if doc.name in s.writes]
            assert owner in writers and not set(writers) & set(order[:order.index(owner)]), (doc.name, owner)
        else:
            assert owner in {owned[t] for t in doc.sources}, (doc.name, owner)
        assert re.search(rf"^### `{doc.name}` {doc.kind}$", sections[owner], flags=re.MULTILINE), (doc.name, owner)


def test_docs_schema_md_is_what_the_generator_prints(tmp_path):
    Catalog(tmp_path / "c.duckdb").close()
    with Catalog(tmp_path / "c.duckdb", read_only=True) as cat:
        expected = schema_markdown(read_schema(cat), cat.schema_version, all_stages()) + "\n"
    assert (ROOT / "docs" / "schema.md").read_text(encoding="utf-8") == expected, (
        "docs/schema.md is out of date: run `curate docs --write`")
    plain = curate("--catalog", str(tmp_path / "c.duckdb"), "schema")
    assert "videos [table]  key (video_id): A video of a public corpus" in plain.stdout

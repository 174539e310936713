"""Commands over the corpus: ingest, status, explain, describe, config, keywords, embeddings, clusters."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app, catalog_path, config, config_origin, console, executor_config, open_catalog
from curation.core.errors import CurationError, UsageError


@app.command()
def ingest(
    adapter: Annotated[str, typer.Argument(help="fakesv | kuairec | livebot | generic")],
    path: Annotated[Path, typer.Argument(help="Corpus file (or folder for livebot).")],
    mapping: Annotated[Path | None, typer.Option(help="TOML field mapping (generic).")] = None,
    dry_run: Annotated[bool, typer.Option(help="Validate and count; write nothing.")] = False,
    columnar: Annotated[bool, typer.Option(
        "--columnar/--per-record", help="JSON Lines: check lines as columns (fast) or one by one.")] = True,
) -> None:
    """Load a corpus into the catalog; bad records go to `rejects` with their reason."""
    from curation.core.storable import one_line
    from curation.ingest import check_arguments, ingest_path

    max_bytes = config().ingest.max_field_bytes
    check_arguments(adapter, path, mapping)  # before the catalog file is made
    if dry_run:
        result = ingest_path(None, adapter, path, mapping=mapping, max_field_bytes=max_bytes, columnar=columnar)
    else:
        with open_catalog(create=True) as cat:
            result = ingest_path(cat, adapter, path, mapping=mapping, max_field_bytes=max_bytes,
                                     columnar=columnar)
    typer.echo(result.summary())
    for line in result.reject_lines():  # a file name may hold a line break: each line says one thing
        typer.echo(f"  {one_line(line)}")
    for line in result.warnings:
        typer.echo(f"warning: {one_line(line)}", err=True)


@app.command()
def status() -> None:
    """Per-source counts, rejects by reason, recent runs (failed ones with their error)."""
    from curation.status import status_report

    with open_catalog(read_only=True) as cat:
        console.print(status_report(cat))


@app.command()
def explain(record_id: Annotated[str, typer.Argument(help="A video_id, task_id, or a raw_ref of a reject.")]) -> None:
    """A video's record, its comments count and runs; a task's versions; or why a record was rejected."""
    from curation.core.storable import shown_name, unstorable_at
    from curation.status import explain_record

    with open_catalog(read_only=True) as cat:
        text = explain_record(cat, record_id)
    if text is None:
        odd = " (it is not UTF-8: looked up with each such byte written \\xNN, as rejects keep it)" if (
            unstorable_at(record_id) is not None) else ""
        raise CurationError(f"{shown_name(record_id)} is neither a video, a task nor a rejected record in the "
                            f"catalog{odd}")
    typer.echo(text)


@app.command()
def describe() -> None:
    """Each stage: the command, the catalog tables it reads and writes, and their row counts."""
    from curation.pipeline import all_stages

    stages = all_stages()
    counts: dict[str, int] = {}
    if catalog_path().exists():
        with open_catalog(read_only=True) as cat:
            counts = cat.row_counts({t for s in stages for t in (*s.reads, *s.writes)})
    for stage in stages:
        typer.echo(stage.describe(counts))


@app.command()
def schema(markdown: Annotated[bool, typer.Option(help="Print docs/schema.md's Markdown.")] = False) -> None:
    """Every table and view of the catalog with its key and the description of it and of each column."""
    from curation.core.schema import read_schema, schema_markdown, schema_text
    from curation.pipeline import all_stages

    with open_catalog(read_only=True) as cat:
        docs, version = read_schema(cat), cat.schema_version
    typer.echo(schema_markdown(docs, version, all_stages()) if markdown else schema_text(docs))


@app.command()
def migrate() -> None:
    """Bring a catalog made by an older version up to the current schema (read-only commands never do)."""
    from curation.core.catalog import schema_version_of

    path = catalog_path()
    before = schema_version_of(path) if path.exists() else None
    with open_catalog() as cat:
        after = cat.schema_version
    typer.echo(f"catalog {path}: schema version {before} -> {after}" if before != after
               else f"catalog {path}: schema version {after}, already up to date")


@app.command("config")
def show_config(
    defaults: Annotated[bool, typer.Option(help="The built-in defaults, ignoring files and environment.")] = False,
) -> None:
    """The configuration in force, as TOML (a starting point for your own --config file)."""
    from curation.core.config import Config
    from curation.core.config_toml import config_toml

    if not defaults:  # a TOML comment, so that the output still reads back as a config file
        typer.echo(f"# configuration from {config_origin()}")
    typer.echo(config_toml(Config() if defaults else config()), nl=False)


@app.command()
def keywords(
    executor: Annotated[str | None, typer.Option(help="local or ray (default: kind in the executor section).")] = None,
    workers: Annotated[int | None, typer.Option(
        help="Local processes for more than 20k videos (default: \\[keywords] workers; 0 = one per core).")] = None,
) -> None:
    """Each video's keyword set, with the origin of every keyword."""
    from dataclasses import replace

    from curation.corpus.keywords import build_keyword_sets

    settings = config().keywords
    if workers is not None:
        if workers < 0:
            raise UsageError(f"--workers {workers}: give 0 (one per core) or more")
        settings = replace(settings, workers=workers)
    with open_catalog() as cat:
        counts = build_keyword_sets(cat, settings, executor=executor_config(executor))
    typer.echo(f"{counts['videos']:,} videos: {counts['changed']:,} keyword sets changed, "
               f"{counts['empty']:,} without any keyword")


@app.command()
def embed(
    executor: Annotated[str | None, typer.Option(help="local or ray (default: kind in the executor section).")] = None,
) -> None:
    """Embed keyword sets with the configured model; cached texts are not encoded again."""
    from curation.corpus.embed import embed_keyword_sets

    with open_catalog() as cat:
        counts = embed_keyword_sets(cat, config().embedding, executor=executor_config(executor))
    typer.echo(f"{counts['texts_encoded']:,} texts encoded, {counts['texts_cached']:,} cached "
               f"in all, for {counts['videos_with_keywords']:,} videos with keywords")


@app.command()
def cluster(
    report: Annotated[bool, typer.Option(help="Write build/reports/clusters.html.")] = False,
    allow_missing_vectors: Annotated[bool, typer.Option(
        help="Cluster the videos whose keyword sets have a vector, though others have none yet (says how many).")]
    = False,
) -> None:
    """HDBSCAN clusters of keyword-set embeddings, with quality against human labels."""
    from curation.corpus.cluster import cluster_videos
    from curation.corpus.quality import agreement_line, agreements_of

    path = Path(config().reports.dir) / "clusters.html" if report else None
    with open_catalog() as cat:
        result = cluster_videos(cat, config().cluster, config().embedding.model, report=path,
                                allow_missing_vectors=allow_missing_vectors)
    stats = result.counts
    typer.echo(f"cluster run {result.run_id}{' (inputs unchanged: reused)' if result.reused else ''}: "
               f"{stats.get('clusters', 0):,} clusters over {stats.get('videos', 0):,} videos, "
               f"noise {stats.get('noise', 0) / max(stats.get('videos', 1), 1):.1%}")
    for fact in agreements_of(stats):
        typer.echo(f"  {agreement_line(fact)}")
    if "fakesv_events" in stats:
        typer.echo(f"  FakeSV: {stats['fakesv_events_split']:,} of {stats['fakesv_events_clustered']:,} "
                   f"clustered events split across clusters ({stats['fakesv_events']:,} events in all)")
    if result.report:
        typer.echo(f"  report: {result.report}")

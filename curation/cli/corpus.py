"""Commands over the corpus: ingest, inspect, keywords, embeddings, clusters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app, catalog_path, config, console, fail, open_catalog


@app.command()
def ingest(
    adapter: Annotated[str, typer.Argument(help="fakesv | kuairec | livebot | generic")],
    path: Annotated[Path, typer.Argument(help="Corpus file (or folder for livebot).")],
    mapping: Annotated[Path | None, typer.Option(help="TOML field mapping (generic).")] = None,
    dry_run: Annotated[bool, typer.Option(help="Validate and count; write nothing.")] = False,
) -> None:
    """Load a corpus into the catalog; bad records go to `rejects` with their reason."""
    from curation.ingest import ingest_path
    from curation.ingest.generic import MappingError

    max_bytes = int(config()["ingest"]["max_field_bytes"])
    try:
        if dry_run:
            result = ingest_path(None, adapter, path, mapping=mapping, max_field_bytes=max_bytes)
        else:
            with open_catalog() as cat:
                result = ingest_path(cat, adapter, path, mapping=mapping, max_field_bytes=max_bytes)
    except (FileNotFoundError, ValueError, MappingError) as exc:
        fail(str(exc))
        return
    typer.echo(result.summary())
    for reason, count in sorted((result.rejects_by_reason or {}).items(), key=lambda x: -x[1]):
        typer.echo(f"  rejected {count:,}: {reason}")


@app.command()
def status() -> None:
    """Per-source counts, rejects by reason, recent runs."""
    from curation.inspect import status_report

    with open_catalog(read_only=True) as cat:
        console.print(status_report(cat))


@app.command()
def explain(record_id: Annotated[str, typer.Argument(help="A video_id, or a raw_ref of a reject.")]) -> None:
    """A video's record, its comments count and runs; or why a record was rejected."""
    from curation.inspect import explain_record

    with open_catalog(read_only=True) as cat:
        text = explain_record(cat, record_id)
    if text is None:
        fail(f"{record_id} is neither a video in the catalog nor a rejected record", 1)
    typer.echo(text)


@app.command()
def describe() -> None:
    """Each stage: the command, the catalog tables it reads and writes, and their row counts."""
    from curation.stages import STAGES

    counts: dict[str, int] = {}
    if catalog_path().exists():
        with open_catalog(read_only=True) as cat:
            for table in {t for s in STAGES for t in (*s.reads, *s.writes) if " " not in t}:
                counts[table] = int(cat.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    for stage in STAGES:
        def show(tables: tuple[str, ...]) -> str:
            return ", ".join(f"{t} ({counts[t]:,})" if t in counts else t for t in tables)
        typer.echo(f"{stage.name:<11} {stage.command}\n            {stage.summary}\n"
                   f"            reads: {show(stage.reads)}\n            writes: {show(stage.writes)}")


@app.command()
def keywords() -> None:
    """Each video's keyword set, with the origin of every keyword."""
    from curation.keywords import run_keywords

    with open_catalog() as cat:
        counts = run_keywords(cat, config()["keywords"])
    typer.echo(f"{counts['videos']:,} videos: {counts['changed']:,} keyword sets changed, "
               f"{counts['empty']:,} without any keyword")


@app.command()
def embed() -> None:
    """Embed keyword sets with the configured model; cached texts are not encoded again."""
    from curation.embed import run_embed

    try:
        with open_catalog() as cat:
            counts = run_embed(cat, config()["embedding"])
    except ValueError as exc:
        fail(str(exc))
        return
    typer.echo(f"{counts['texts_encoded']:,} texts encoded, {counts['texts_cached']:,} cached "
               f"in all, for {counts['videos_with_keywords']:,} videos with keywords")


@app.command()
def cluster(
    report: Annotated[bool, typer.Option(help="Write build/reports/clusters.html.")] = False,
) -> None:
    """HDBSCAN clusters of keyword-set embeddings, with quality against human labels."""
    from curation.cluster import run_cluster

    try:
        with open_catalog() as cat:
            result = run_cluster(cat, config()["cluster"], config()["embedding"]["model"])
            counts = cat.rows("SELECT counts FROM runs WHERE run_id = ?", [result.run_id])[0]
            if report:
                from curation.embed import model_id_for
                from curation.reports import cluster_report

                path = cluster_report(cat, result.run_id, model_id_for(config()["embedding"]["model"]),
                                      Path(config()["reports"]["dir"]) / "clusters.html")
    except ValueError as exc:
        fail(str(exc))
        return
    stats = json.loads(counts["counts"] or "{}")
    typer.echo(f"cluster run {result.run_id}{' (inputs unchanged: reused)' if result.reused else ''}: "
               f"{stats.get('clusters', 0):,} clusters over {stats.get('videos', 0):,} videos, "
               f"noise {stats.get('noise', 0) / max(stats.get('videos', 1), 1):.1%}")
    for level in ("second", "third"):
        if f"kuairec_{level}_nmi" in stats:
            typer.echo(f"  KuaiRec {level}-level category: NMI {stats[f'kuairec_{level}_nmi']:.3f}, "
                       f"ARI {stats[f'kuairec_{level}_ari']:.3f} (noise excluded; "
                       f"{stats[f'kuairec_{level}_noise']:.1%} of labelled videos are noise)")
    if "fakesv_events" in stats:
        typer.echo(f"  FakeSV: {stats['fakesv_events_split']:,} of {stats['fakesv_events_clustered']:,} "
                   f"clustered events split across clusters ({stats['fakesv_events']:,} events in all)")
    if report:
        typer.echo(f"  report: {path}")



"""`curate <stage>`: a thin command line over the stage modules."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from curation.catalog import Catalog
from curation.config import load_config

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LivingScreen curation toolkit: corpora -> catalog -> feeds -> releases.")
console = Console()
STATE: dict[str, Any] = {}


def fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def config() -> dict[str, Any]:
    return STATE["config"]


def catalog_path() -> Path:
    return STATE.get("catalog") or Path(config()["catalog"]["path"])


def open_catalog(read_only: bool = False) -> Catalog:
    try:
        return Catalog(catalog_path(), read_only=read_only)
    except FileNotFoundError as exc:
        fail(str(exc))
        raise


@app.callback()
def main(
    catalog: Annotated[Path | None, typer.Option(help="Catalog file (default from config).")] = None,
    config_file: Annotated[Path | None, typer.Option("--config", help="TOML laid over curation.toml.")] = None,
) -> None:
    try:
        STATE["config"] = load_config(config_file)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    STATE["catalog"] = catalog


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


feeds_app = typer.Typer(no_args_is_help=True, help="Build, edit and export feeds.")
app.add_typer(feeds_app, name="feeds")


@feeds_app.command("build")
def feeds_build(
    n: Annotated[int, typer.Option("--n", min=1, help="How many feeds.")] = 50,
    seed: Annotated[int, typer.Option(help="Seed: same inputs + seed = same feeds.")] = 0,
    replace: Annotated[bool, typer.Option(help="Drop earlier feeds of this seed first.")] = False,
    report: Annotated[bool, typer.Option(help="Write build/reports/feeds.html.")] = False,
) -> None:
    """Anchor cluster + r in [50%, 200%] unrelated distractors, shuffled."""
    from curation.feed_export import feeds_report
    from curation.feeds import FeedError, run_build

    cfg = config()["feeds"]
    try:
        with open_catalog() as cat:
            counts = run_build(cat, cfg, n, seed, replace=replace)
            if report:
                path = feeds_report(cat, Path(config()["reports"]["dir"]) / "feeds.html",
                                    cfg["ratio_min"], cfg["ratio_max"])
    except FeedError as exc:
        fail(str(exc))
        return
    typer.echo(f"{counts['feeds']:,} feeds (seed {seed}) from cluster run {counts['cluster_run']}: "
               f"{counts['written']:,} written" + ("" if counts["written"] else " (already up to date)"))
    if report:
        typer.echo(f"  report: {path}")


def _positions(text: str) -> list[int]:
    try:
        return [int(p) - 1 for p in text.replace(" ", "").split(",") if p]
    except ValueError:
        fail(f"positions must be 1-based integers separated by commas, got {text!r}")
        raise


@feeds_app.command("edit")
def feeds_edit(
    feed_id: str,
    reorder: Annotated[str | None, typer.Option(help="New order, 1-based: '3,1,2,...'.")] = None,
    delete: Annotated[str | None, typer.Option(help="Positions to delete, 1-based: '2,5'.")] = None,
    swap: Annotated[list[str] | None, typer.Option(
        help="Replace a position (1-based) with a sampled distractor, or POS=VIDEO_ID.")] = None,
    author: Annotated[str | None, typer.Option(help="Who made the edit.")] = None,
) -> None:
    """Make a new version of a feed; earlier versions stay readable."""
    from curation.feed_edit import edit_feed
    from curation.feeds import FeedError

    ops: list[dict[str, Any]] = []
    if delete:
        ops.append({"op": "delete", "positions": _positions(delete)})
    for item in swap or []:
        pos, _, video = item.partition("=")
        ops.append({"op": "swap", "position": _positions(pos)[0], **({"video_id": video} if video else {})})
    if reorder:
        ops.append({"op": "reorder", "order": _positions(reorder)})
    try:
        with open_catalog() as cat:
            feed = edit_feed(cat, feed_id, ops, config()["feeds"], author=author)
    except FeedError as exc:
        fail(str(exc))
        return
    typer.echo(f"{feed.feed_id} version {feed.version}: {len(feed.video_feed)} videos, "
               f"ratio {feed.ratio:.2f}")


@feeds_app.command("show")
def feeds_show(feed_id: str, version: Annotated[int | None, typer.Option()] = None) -> None:
    """Print one feed (latest version unless --version)."""
    from curation.feeds import FeedError, load_feed

    try:
        with open_catalog(read_only=True) as cat:
            typer.echo(load_feed(cat, feed_id, version).to_json(), nl=False)
    except FeedError as exc:
        fail(str(exc))


@feeds_app.command("export")
def feeds_export(out_dir: Annotated[Path, typer.Argument(help="Folder to write into.")]) -> None:
    """One JSON per feed (latest version) plus feeds.jsonl."""
    from curation.feed_export import export_feeds

    with open_catalog(read_only=True) as cat:
        feeds = export_feeds(cat, out_dir)
    typer.echo(f"{len(feeds):,} feeds written to {out_dir}/")


@feeds_app.command("drift")
def feeds_drift(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Feeds whose distractor ratio left the design range after edits."""
    from curation.feed_export import ratio_drift

    cfg = config()["feeds"]
    with open_catalog(read_only=True) as cat:
        drift = ratio_drift(cat, cfg["ratio_min"], cfg["ratio_max"])
    if as_json:
        typer.echo(json.dumps(drift, ensure_ascii=False, indent=2))
        return
    for item in drift["drifted"]:
        typer.echo(f"{item['feed_id']} v{item['version']}: ratio {item['ratio']:.2f} "
                   f"({item['other_videos']} other / {item['keyword_videos']} keyword videos)")
    typer.echo(f"{drift['outside']} of {drift['feeds']} feeds outside [{cfg['ratio_min']}, "
               f"{cfg['ratio_max']}] ({drift['edited']} edited)")


media_app = typer.Typer(no_args_is_help=True, help="Link, probe and normalise video files.")
app.add_typer(media_app, name="media")


def _workers(requested: int | None) -> int:
    value = requested if requested is not None else int(config()["media"].get("workers") or 0)
    return value if value > 0 else (os.cpu_count() or 1)


@media_app.command("scan")
def media_scan(
    folder: Annotated[Path, typer.Argument(help="Folder holding the source's video files.")],
    source: Annotated[str, typer.Option(help="Catalog source the files belong to, e.g. FakeSV.")],
    dry_run: Annotated[bool, typer.Option(help="Report matches; link nothing.")] = False,
) -> None:
    """Match files to catalog videos by native id; report what matched and what did not."""
    from curation.media.files import MediaError
    from curation.media.scan import scan_media, write_scan

    try:
        with open_catalog() as cat:
            result = scan_media(cat, folder, source, config()["media"])
            if not dry_run:
                write_scan(cat, result, folder, source)
    except MediaError as exc:
        fail(str(exc))
        return
    typer.echo(f"{result.files_seen:,} files: {len(result.matched):,} matched, "
               f"{len(result.unmatched_files):,} with no catalog video, {len(result.rejected):,} rejected; "
               f"{result.videos_without_file:,} {source} videos have no file"
               + (" (dry run: nothing linked)" if dry_run else ""))
    for rel in result.unmatched_files[:10]:
        typer.echo(f"  no catalog video: {rel}")
    for rel, reason in result.rejected[:10]:
        typer.echo(f"  rejected {rel}: {reason}")


@media_app.command("probe")
def media_probe(workers: Annotated[int | None, typer.Option(help="Parallel probes.")] = None) -> None:
    """ffprobe every linked file: codecs, geometry, rotation, frame rate, duration, sha256."""
    from curation.media.probe import run_probe

    with open_catalog() as cat:
        counts = run_probe(cat, config()["media"], _workers(workers))
    typer.echo(f"{counts['files']:,} files: {counts['probed']:,} probed, {counts['unchanged']:,} "
               f"unchanged, {counts['rejected']:,} rejected (curate status lists why)")


@media_app.command("normalise")
def media_normalise(
    workers: Annotated[int | None, typer.Option(help="Parallel ffmpeg processes (default: cores).")] = None,
    dry_run: Annotated[bool, typer.Option(help="Say what would be transcoded.")] = False,
) -> None:
    """Transcode to the canvas (H.264/AAC, CFR, letterboxed), with poster and 1-fps keyframes."""
    from curation.media.normalise import run_normalise

    with open_catalog() as cat:
        counts = run_normalise(cat, config()["media"], _workers(workers), dry_run=dry_run)
    if dry_run:
        typer.echo(f"{counts['to_do']:,} to transcode, {counts['skipped']:,} up to date, "
                   f"{counts['rejected']:,} rejected at probe (dry run)")
        return
    typer.echo(f"{counts['seen']:,} files: {counts['normalised']:,} normalised, {counts['skipped']:,} "
               f"skipped (up to date), {counts['rejected']:,} rejected")


@media_app.command("register-synthetic")
def media_register_synthetic(
    folder: Annotated[Path, typer.Argument(help="Folder of generated videos.")],
    generator: Annotated[str, typer.Option(help="The generator's name, recorded with each video.")],
) -> None:
    """Add generated videos as synthetic = true, linked to their files."""
    from curation.media.files import MediaError
    from curation.media.synthetic import register_synthetic

    try:
        with open_catalog() as cat:
            result = register_synthetic(cat, folder, generator, config()["media"])
    except MediaError as exc:
        fail(str(exc))
        return
    typer.echo(result.summary())


annotate_app = typer.Typer(no_args_is_help=True, help="Authoring projects in Label Studio.")
app.add_typer(annotate_app, name="annotate")


@annotate_app.command("export")
def annotate_export(
    annotators: Annotated[str, typer.Option(help="Comma-separated annotator names (or emails).")],
    feed: Annotated[list[str] | None, typer.Option(help="Only these feed ids (repeatable).")] = None,
) -> None:
    """One authoring project per annotator; each feed version is sent once."""
    from curation.annotate.client import AnnotationError
    from curation.annotate.export import run_export

    try:
        with open_catalog() as cat:
            counts = run_export(cat, annotators.split(","), Path(config()["media"]["output_dir"]), feed)
    except AnnotationError as exc:
        fail(str(exc))
        return
    typer.echo(f"{counts['feeds']:,} feeds: {counts['exported']:,} exported, "
               f"{counts['already_exported']:,} already in Label Studio; "
               f"{counts['accounts_created']} annotator accounts created")


@annotate_app.command("import")
def annotate_import() -> None:
    """Annotations back as versioned tasks; problems are kept as needs_fix with reasons."""
    from curation.annotate.client import AnnotationError
    from curation.annotate.importer import run_import

    try:
        with open_catalog() as cat:
            counts = run_import(cat, config()["feeds"])
    except AnnotationError as exc:
        fail(str(exc))
        return
    typer.echo(f"{counts['annotations']:,} annotations: {counts['new']:,} new tasks, "
               f"{counts['new_versions']:,} new versions, {counts['unchanged']:,} unchanged, "
               f"{counts['skipped_by_annotator']:,} skipped by the annotator; "
               f"{counts['needs_fix']:,} need a fix (curate annotate status)")


@annotate_app.command("status")
def annotate_status() -> None:
    """Tasks by status, and every task that needs a fix with its reasons."""
    with open_catalog(read_only=True) as cat:
        latest = cat.rows("SELECT * FROM tasks QUALIFY version = max(version) OVER (PARTITION BY task_id) "
                          "ORDER BY task_id")
    by_status: dict[str, int] = {}
    for task in latest:
        by_status[task["status"]] = by_status.get(task["status"], 0) + 1
    typer.echo(f"{len(latest):,} tasks: " + ", ".join(f"{n:,} {s}" for s, n in sorted(by_status.items())))
    for task in latest:
        if task["status"] == "needs_fix":
            typer.echo(f"{task['task_id']} v{task['version']} ({task['author']}, {task['feed_id']}, "
                       f"Label Studio task {task['ls_task_id']}):")
            for reason in json.loads(task["reasons"] or "[]"):
                typer.echo(f"  - {reason}")


qc_app = typer.Typer(no_args_is_help=True, help="Quality control of tasks.")
app.add_typer(qc_app, name="qc")


@qc_app.command("validate")
def qc_validate(
    livingscreen: Annotated[Path | None, typer.Option(
        help="Check a runner directory (gui_action.json, ...) instead of the catalog.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Defects as a JSON array.")] = False,
) -> None:
    """Structural checks; exit status 1 when any error is found."""
    from curation.qc.runner_format import RunnerFormatError, load_runner_dir
    from curation.qc.validate import catalog_tasks, validate_tasks

    cfg = config()["feeds"]
    skipped = 0
    try:
        if livingscreen is not None:
            tasks = load_runner_dir(livingscreen)
            defects = validate_tasks(tasks, ratio_range=(cfg["ratio_min"], cfg["ratio_max"]))
        else:
            with open_catalog(read_only=True) as cat:
                tasks, skipped = catalog_tasks(cat)
                known = {r[0] for r in cat.con.execute("SELECT video_id FROM videos").fetchall()}
                durations = dict(cat.con.execute(
                    "SELECT video_id, duration_s FROM videos WHERE duration_s IS NOT NULL").fetchall())
                defects = validate_tasks(tasks, known_videos=known, durations=durations,
                                         ratio_range=(cfg["ratio_min"], cfg["ratio_max"]))
    except RunnerFormatError as exc:
        fail(str(exc))
        return
    errors = sum(d.severity == "error" for d in defects)
    if as_json:
        typer.echo(json.dumps([d.as_dict() for d in defects], ensure_ascii=False, indent=2))
    else:
        for defect in defects:
            typer.echo(defect.line())
        typer.echo(f"{len(tasks):,} tasks checked: {errors:,} errors, {len(defects) - errors:,} warnings"
                   + (f" ({skipped:,} needs_fix tasks left to `curate annotate status`)" if skipped else ""))
    if errors:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()

"""`curate media ...`: scan, probe, normalise, register-synthetic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app, config, executor_config, open_catalog

media_app = typer.Typer(no_args_is_help=True, help="Link, probe and normalise video files.")
app.add_typer(media_app, name="media")


def _workers(requested: int | None) -> int:
    value = requested if requested is not None else config().media.workers
    return value if value > 0 else (os.cpu_count() or 1)


@media_app.command("scan")
def media_scan(
    folder: Annotated[Path, typer.Argument(help="Folder holding the source's video files.")],
    source: Annotated[str, typer.Option(help="Catalog source the files belong to, e.g. FakeSV.")],
    dry_run: Annotated[bool, typer.Option(help="Report matches; link nothing.")] = False,
) -> None:
    """Match files to catalog videos by native id; report what matched and what did not."""
    from curation.media.scan import scan_media

    with open_catalog() as cat:
        result = (scan_media.dry if dry_run else scan_media)(cat, folder, source, config().media)
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
    from curation.media.probe import probe_media

    with open_catalog() as cat:
        counts = probe_media(cat, config().media, _workers(workers))
    typer.echo(f"{counts['files']:,} files: {counts['probed']:,} probed, {counts['unchanged']:,} "
               f"unchanged, {counts['rejected']:,} rejected (curate status lists why)")


@media_app.command("normalise")
def media_normalise(
    workers: Annotated[int | None, typer.Option(help="Parallel ffmpeg processes (default: cores).")] = None,
    dry_run: Annotated[bool, typer.Option(help="Say what would be transcoded.")] = False,
    executor: Annotated[str | None, typer.Option(help="local or ray (default: kind in the executor section).")]
    = None,
) -> None:
    """Transcode to the canvas (H.264/AAC, CFR, letterboxed), with poster and 1-fps keyframes."""
    from curation.media.normalise import normalise_media

    with open_catalog() as cat:
        counts = (normalise_media.dry if dry_run else normalise_media)(cat, config().media, _workers(workers),
                                                                          executor_config(executor))
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
    from curation.media.synthetic import register_synthetic

    with open_catalog(create=True) as cat:
        result = register_synthetic(cat, folder, generator, config().media)
    typer.echo(result.summary())

"""`curate feeds ...`: build, edit, show, export, drift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from curation.cli.base import app, config, fail, open_catalog

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



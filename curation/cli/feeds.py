"""`curate feeds ...`: build, edit, show, export, drift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from curation.cli.base import app, config, open_catalog
from curation.core.errors import UsageError

feeds_app = typer.Typer(no_args_is_help=True, help="Build, edit and export feeds.")
app.add_typer(feeds_app, name="feeds")


@feeds_app.command("build")
def feeds_build(
    n: Annotated[int, typer.Option("--n", min=1, help="How many feeds.")] = 50,
    seed: Annotated[int, typer.Option(help="Seed: same inputs + seed = same feeds.")] = 0,
    replace: Annotated[bool, typer.Option(help="Drop earlier feeds of this seed first.")] = False,
    report: Annotated[bool, typer.Option(help="Write build/reports/feeds.html.")] = False,
    cluster_run: Annotated[str | None, typer.Option(
        help="Build from this cluster run (default: the latest, which must cluster the vectors as they are now).")]
    = None,
) -> None:
    """Anchor cluster + r in [50%, 200%] unrelated distractors, shuffled."""
    from curation.corpus.coherence import coherence_line
    from curation.corpus.feeds import build_feed_set

    path = Path(config().reports.dir) / "feeds.html" if report else None
    with open_catalog() as cat:
        counts = build_feed_set(cat, config().feeds, n, seed, cluster_run=cluster_run, replace=replace,
                                sources=config().sources, report=path)
    typer.echo(f"{counts['feeds']:,} feeds (seed {seed}) from cluster run {counts['cluster_run']}: "
               f"{counts['written']:,} written" + ("" if counts["written"] else " (already up to date)"))
    typer.echo(f"  {coherence_line(counts['coherence'])}")
    if path:
        typer.echo(f"  report: {path}")


def _positions(text: str, option: str) -> list[int]:
    """1-based positions as typed ('2,5' or '2-4') into 0-based ones."""
    out: list[int] = []
    for token in text.replace(" ", "").split(","):
        if not token:
            continue
        first, dash, last = token.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise UsageError(f"{option}: positions are 1-based numbers separated by commas ('2,5' or '2-4'), "
                             f"got {text!r}")
        out.extend(range(int(first) - 1, int(last if dash else first)))
    return out


@feeds_app.command("edit")
def feeds_edit(
    feed_id: Annotated[str, typer.Argument(help="The feed to edit (feeds list shows them).")],
    reorder: Annotated[str | None, typer.Option(help="New order, 1-based: '3,1,2,...'.")] = None,
    delete: Annotated[str | None, typer.Option(help="Positions to delete, 1-based: '2,5' or '2-4'.")] = None,
    swap: Annotated[list[str] | None, typer.Option(
        help="Replace a position (1-based) with a sampled distractor, or POS=VIDEO_ID.")] = None,
    author: Annotated[str | None, typer.Option(help="Who made the edit.")] = None,
) -> None:
    """Make a new version of a feed; earlier versions stay readable."""
    from curation.corpus.feed_edit import edit_feed
    from curation.corpus.feeds_report import format_ratio

    ops: list[dict[str, Any]] = []
    if delete:
        ops.append({"op": "delete", "positions": _positions(delete, "--delete")})
    for item in swap or []:
        pos, _, video = item.partition("=")
        positions = _positions(pos, "--swap")
        if len(positions) != 1:
            raise UsageError(f"--swap takes one position (or POS=VIDEO_ID), got {item!r}")
        ops.append({"op": "swap", "position": positions[0], **({"video_id": video} if video else {})})
    if reorder:
        ops.append({"op": "reorder", "order": _positions(reorder, "--reorder")})
    if not ops:
        raise UsageError("give --reorder, --delete or --swap")
    with open_catalog() as cat:
        feed = edit_feed(cat, feed_id, ops, config().feeds, author=author, sources=config().sources)
    typer.echo(f"{feed.feed_id} version {feed.version}: {len(feed.video_feed)} videos, "
               f"ratio {format_ratio(feed.ratio)}")


@feeds_app.command("show")
def feeds_show(feed_id: Annotated[str, typer.Argument(help="The feed to print (feeds list shows them).")],
               version: Annotated[int | None, typer.Option(help="This version of it, not the latest.")] = None) -> None:
    """Print one feed (latest version unless --version)."""
    from curation.corpus.feeds import load_feed

    with open_catalog(read_only=True) as cat:
        typer.echo(load_feed(cat, feed_id, version).to_json(), nl=False)


@feeds_app.command("export")
def feeds_export(out_dir: Annotated[Path, typer.Argument(help="Folder to write into.")]) -> None:
    """One JSON per feed (latest version) plus feeds.jsonl."""
    from curation.corpus.feed_export import export_feeds

    with open_catalog() as cat:
        feeds = export_feeds(cat, out_dir)
    typer.echo(f"{len(feeds):,} feeds written to {out_dir}/")


@feeds_app.command("list")
def feeds_list(
    seed: Annotated[int | None, typer.Option(help="Only feeds of this seed.")] = None,
    edited: Annotated[bool | None, typer.Option("--edited/--unedited", help="Only edited / unedited feeds.")] = None,
    sent: Annotated[bool | None, typer.Option("--sent/--unsent", help="Only feeds sent / not sent to annotators.")]
    = None,
) -> None:
    """Feeds (latest versions): length, ratio, whether edited, who they went to, tasks written on them."""
    from curation.corpus.feed_export import list_feeds
    from curation.corpus.feeds_report import format_ratio

    with open_catalog(read_only=True) as cat:
        rows = list_feeds(cat, seed, edited, sent)
    for r in rows:
        sent_to = f"sent to {r['sent_to']}" if r["sent_to"] else "not sent"
        typer.echo(f"{r['feed_id']}\tv{r['version']}\t{r['videos']} videos\tratio {format_ratio(r['ratio'])}\t"
                   f"{'edited' if r['edited'] else 'as built'}\t{sent_to}\t{r['tasks']} tasks")
    typer.echo(f"{len(rows):,} feeds")


@feeds_app.command("drift")
def feeds_drift(as_json: Annotated[bool, typer.Option("--json", help="Print the drift as JSON.")] = False) -> None:
    """Feeds whose distractor ratio left the design range after edits."""
    from curation.corpus.feed_export import ratio_drift
    from curation.corpus.feeds_report import format_ratio

    cfg = config().feeds
    with open_catalog(read_only=True) as cat:
        drift = ratio_drift(cat, cfg.ratio_min, cfg.ratio_max)
    if as_json:
        typer.echo(json.dumps(drift, ensure_ascii=False, indent=2))
        return
    for item in drift["drifted"]:
        typer.echo(f"{item['feed_id']} v{item['version']}: ratio {format_ratio(item['ratio'])} "
                   f"({item['other_videos']} other / {item['keyword_videos']} keyword videos)")
    typer.echo(f"{drift['outside']} of {drift['feeds']} feeds outside [{cfg.ratio_min}, "
               f"{cfg.ratio_max}] ({drift['edited']} edited)")

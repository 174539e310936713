"""`curate qc shortcut` and `curate qc shortcut-config`: the shortcut filter and its configuration of record."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from curation.cli.base import config, config_origin, open_catalog
from curation.cli.qc import qc_app

if TYPE_CHECKING:
    from curation.qc.shortcut.filter import ShortcutRun

shortcut_config_app = typer.Typer(no_args_is_help=True, help="The shortcut filter's configuration of record.")
qc_app.add_typer(shortcut_config_app, name="shortcut-config")
LISTED = 20  # task lines printed before "... and N more"


def _listed(lines: list[str]) -> None:
    for line in lines[:LISTED]:
        typer.echo(line)
    if len(lines) > LISTED:
        typer.echo(f"  ... and {len(lines) - LISTED:,} more")


def _summary(result: ShortcutRun, limit: float, written: bool = True) -> None:
    """What a run decided, on whose authority, and how usable each inspector's answers were; `written`
    is False for a run that failed before writing its verdicts."""
    from curation.qc.shortcut.report import PAPER_RETENTION

    counts = result.counts
    judged = counts["passed"] + counts["discarded"]
    if not written:
        typer.echo(f"configuration {result.config_sha256}: nothing written, no task moved (the error says why); "
                   "what its answers would have decided:")
    elif result.of_record and counts["record"] is None:
        typer.echo(f"configuration {result.config_sha256}: no task was decided, so no configuration is of record yet")
    elif result.of_record:
        typer.echo(f"configuration {result.config_sha256}: the configuration of record"
                   + ("" if result.record_before and result.record_before.config_sha256 == result.config_sha256
                      else " from this run on"))
    else:
        typer.echo(f"configuration {result.config_sha256}: evidence only, not the configuration of record "
                   f"({counts['record']}); no task moved. {counts.get('differ_from_record', 0):,} of its verdicts "
                   "differ from the verdicts of record")
        _listed([f"  {t} v{v}: of record {mine_of_record}, this configuration {mine}"
                 for t, v, mine_of_record, mine in result.differ])
    typer.echo(f"{counts['tasks']:,} tasks: {counts['passed']:,} passed, {counts['discarded']:,} discarded"
               f" (retention {counts['passed'] / max(judged, 1):.1%}; the paper kept {PAPER_RETENTION:.1%}), "
               f"{counts['undecided']:,} undecided; {counts['new']:,} judged now, {judged - counts['new']:,} "
               f"earlier under this configuration; {counts['moved']:,} moved; {counts['not_filtered']:,} platform "
               f"tasks outside the filter's tiers passed on to review; {counts['requests']:,} model requests sent, "
               f"{counts['failed']:,} failed")
    _listed([f"  {t} v{v}: {before} -> {after}" for t, v, before, after in result.moved])
    for name, s in sorted(counts.get("inspectors", {}).items()):
        share = s["unparsed"] / s["answers"] if s["answers"] else 0.0
        typer.echo(f"  inspector {name}: {s['decided']:,} decided, {s['abstained']:,} abstained, "
                   f"{s['unparsed']:,} unparsed of {s['answers']:,} answers ({share:.0%} unparsed; "
                   f"the limit is {limit:.0%})")


@qc_app.command("shortcut")
def qc_shortcut(report: Annotated[bool, typer.Option(help="Write the HTML report.")] = True) -> None:
    """Show each task's metadata-only view to the inspectors; discard what they solve (under the
    configuration of record; another configuration's verdicts are kept as evidence)."""
    from curation.qc.shortcut.filter import UnusableInspectorError, filter_shortcuts

    cfg = config().qc.shortcut
    path = Path(cfg.report) if report else None
    typer.echo(f"configuration from {config_origin()}")
    typer.echo(cfg.who_decides())
    with open_catalog() as cat:
        try:
            result = filter_shortcuts(cat, cfg, report=path, source=config_origin())
        except UnusableInspectorError as exc:
            _summary(exc.result, cfg.max_unparsed_share, written=False)
            raise
    _summary(result, cfg.max_unparsed_share)
    if path:
        typer.echo(f"  report: {path}")
    if result["undecided"]:
        raise typer.Exit(1)


@shortcut_config_app.command("show")
def shortcut_config_show() -> None:
    """The configuration of record, its history, and whether the configuration in force differs."""
    from curation.qc.shortcut.filter import configuration, plan_adoption
    from curation.qc.shortcut.record import config_changes, record_history, verdict_counts

    decisive, digest = configuration(config().qc.shortcut)
    with open_catalog(read_only=True) as cat:
        history = record_history(cat)
        evidence = verdict_counts(cat)
        plan = plan_adoption(cat, config().qc.shortcut)
    if not history:
        typer.echo("no configuration of record yet: the first `curate qc shortcut` run sets it")
    for entry in history:
        typer.echo(f"{'of record' if entry is history[-1] else 'earlier  '} {entry.config_sha256} since "
                   f"{entry.adopted_at:%Y-%m-%d %H:%M} (run {entry.run_id}), from {entry.source}")
    record = history[-1] if history else None
    same = record is not None and record.config_sha256 == digest
    typer.echo(f"in force  {digest}, from {config_origin()}"
               + (": the configuration of record" if same else ""))
    typer.echo(f"  {config().qc.shortcut.who_decides()}")
    if record is not None and not same:
        typer.echo("  differs from the configuration of record in: "
                   + ("; ".join(config_changes(record.config, decisive)) or "settings not recorded"))
        typer.echo(f"  under it, {len(plan.to_judge):,} task versions are due to be judged again (no answers "
                   f"under it yet); {plan.carried:,} keep the verdicts of record, asked with the same prompt and "
                   "settings")
        _listed([f"  {task_id} v{version}: {state}, due" for task_id, version, state in plan.to_judge])
    for kept_under, n in evidence.items():
        typer.echo(f"verdicts kept under {kept_under}: {n:,}")


@shortcut_config_app.command("adopt")
def shortcut_config_adopt(
    config_file: Annotated[Path | None, typer.Option(
        "--config", help="The configuration to adopt (default: the configuration in force).")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Adopt it; without --yes, only show what would change.")]
    = False,
) -> None:
    """Make a configuration the one of record: shows which task versions it re-decides, then (with --yes)
    re-decides them, judging those it has no answers for yet."""
    from curation.core.config import config_source, load_config
    from curation.qc.shortcut.filter import UnusableInspectorError, filter_shortcuts, plan_adoption

    cfg = load_config(config_file).qc.shortcut if config_file else config().qc.shortcut
    origin = config_source(config_file) if config_file else config_origin()
    typer.echo(f"configuration from {origin}")
    with open_catalog() as cat:
        plan = plan_adoption(cat, cfg)
        for line in plan.summary():
            typer.echo(line)
        _listed(plan.task_lines())
        if plan.nothing_to_adopt:
            return
        if not yes:
            typer.echo("nothing adopted: run again with --yes to adopt it")
            return
        try:
            result = filter_shortcuts(cat, cfg, source=origin, adopt=True)
        except UnusableInspectorError as exc:
            _summary(exc.result, cfg.max_unparsed_share, written=False)
            raise
    _summary(result, cfg.max_unparsed_share)
    if result["undecided"]:
        raise typer.Exit(1)

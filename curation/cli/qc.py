"""`curate qc ...`: validation and the shortcut filter."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app, config, open_catalog

qc_app = typer.Typer(no_args_is_help=True, help="Quality control of tasks.")
app.add_typer(qc_app, name="qc")


@qc_app.command("validate")
def qc_validate(
    livingscreen: Annotated[Path | None, typer.Option(
        help="Check a runner directory (gui_action.json, ...) instead of the catalog.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Defects as a JSON array (notes included).")] = False,
    notes: Annotated[bool, typer.Option("--notes", help="Also print notes (severity info), e.g. feed edits.")] = False,
) -> None:
    """Structural checks; exit status 1 when any task cannot be run or graded as written."""
    from curation.qc.runner_format import load_runner_dir
    from curation.qc.validate import validate_catalog, validate_tasks

    cfg = config().feeds
    skipped = 0
    if livingscreen is not None:
        tasks = load_runner_dir(livingscreen)
        defects = validate_tasks(tasks, ratio_range=(cfg.ratio_min, cfg.ratio_max))
    else:
        with open_catalog() as cat:
            tasks, defects, skipped = validate_catalog(cat, cfg, config().sources)
    count = Counter(d.severity for d in defects)
    errors = count["error"]
    if as_json:
        typer.echo(json.dumps([d.as_dict() for d in defects], ensure_ascii=False, indent=2))
    else:
        for defect in defects:
            if defect.severity != "info" or notes:
                typer.echo(defect.line())
        noted = Counter(d.code for d in defects if d.severity == "info")
        typer.echo(f"{len(tasks):,} tasks checked: {errors:,} errors, {count['warning']:,} warnings, "
                   f"{count['info']:,} notes" + (f" ({', '.join(f'{n:,} {c}' for c, n in sorted(noted.items()))}"
                                                  f"{'' if notes else '; --notes lists them'})" if noted else "")
                   + (f"; {skipped:,} needs_fix tasks left to `curate annotate status`" if skipped else ""))
    if errors:
        raise typer.Exit(1)


@qc_app.command("shortcut")
def qc_shortcut(report: Annotated[bool, typer.Option(help="Write the HTML report.")] = True) -> None:
    """Show each task's metadata-only view to the inspectors; discard what they solve."""
    from curation.qc.shortcut import filter_shortcuts
    from curation.qc.shortcut_report import PAPER_RETENTION, write_report

    cfg = config().qc.shortcut
    with open_catalog() as cat:
        counts = filter_shortcuts(cat, cfg)
        path = write_report(cat, Path(cfg.report), counts) if report else None
    judged = counts["passed"] + counts["discarded"]
    typer.echo(f"{counts['tasks']:,} tasks: {counts['passed']:,} passed, {counts['discarded']:,} discarded"
               f" (retention {counts['passed'] / max(judged, 1):.1%}; the paper kept {PAPER_RETENTION:.1%}), "
               f"{counts['undecided']:,} undecided; {counts['requests']:,} model requests sent, "
               f"{counts['failed']:,} failed")
    if path:
        typer.echo(f"  report: {path}")
    if counts["undecided"]:
        raise typer.Exit(1)


@qc_app.command("report")
def qc_report_command(
    out: Annotated[Path | None, typer.Option(help="Where to write the report (default: reports dir / qc.html).")]
    = None,
) -> None:
    """The QC funnel (authored, valid, shortcut passed, reviewed, kept / deleted / revised) beside the paper's."""
    from curation.qc.funnel import qc_report

    path = out or Path(config().reports.dir) / "qc.html"
    with open_catalog() as cat:
        summary = qc_report(cat, path)
    total = summary["all"]
    kept = total["shortcut_retained"]
    typer.echo(f"{total['tasks']:,} tasks: {total['valid']:,} valid, {total['needs_fix']:,} need a fix, "
               f"{total['shortcut_passed']:,} passed the shortcut filter"
               + (f" ({kept:.1%} kept; the paper kept 74.3%)" if kept is not None else "")
               + f", {total['reviewed_ok']:,} reviewed ok, {total['kept'] + total['revised']:,} kept or revised")
    typer.echo(f"  report: {path}")

"""`curate qc ...`: validation, review and the funnel (the shortcut filter: cli/shortcut.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import ADD_HELP, app, config, open_catalog, served_media

qc_app = typer.Typer(no_args_is_help=True, help="Quality control of tasks.")
app.add_typer(qc_app, name="qc")


@qc_app.command("validate")
def qc_validate(
    livingscreen: Annotated[Path | None, typer.Option(
        help="Check a runner directory (gui_action.json, ...) instead of the catalog.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Defects as a JSON array (notes included).")] = False,
    notes: Annotated[bool, typer.Option("--notes", help="Also print notes (severity info), e.g. feed edits.")] = False,
) -> None:
    """The task rules as a gate: exit 1 while any task has an error or needs a fix, 0 when none does."""
    from curation.qc.validate import validate_catalog, validate_tasks
    from curation.tasks.rules import RuleContext
    from curation.tasks.runner_format import load_runner_dir

    cfg = config().feeds
    left: list[tuple[str, int, str]] = []
    if livingscreen is not None:
        elements = load_runner_dir(livingscreen)
        checked = len(elements)
        defects = validate_tasks(elements, RuleContext(ratio_range=(cfg.ratio_min, cfg.ratio_max)))
    else:
        with open_catalog() as cat:
            validation = validate_catalog(cat, cfg, config().sources)
        checked, defects, left = validation.tasks, validation.defects, validation.left_to_fix
    count = Counter(d.severity for d in defects)
    failing = {d.task_id for d in defects if d.severity == "error"} | {t for t, _, _ in left}
    if as_json:
        typer.echo(json.dumps([d.as_dict() for d in defects]
                              + [{"task_id": t, "severity": "error", "code": "needs-fix",
                                  "message": f"v{v} was sent back: {why}"} for t, v, why in left],
                              ensure_ascii=False, indent=2))
    else:
        for defect in defects:
            if defect.severity != "info" or notes:
                typer.echo(defect.line())
        for task_id, version, why in left:
            typer.echo(f"{task_id}\terror\tneeds-fix\tv{version} was sent back: {why}")
        noted = Counter(d.code for d in defects if d.severity == "info")
        errors = count["error"] + len(left)  # every error line printed above, the versions sent back included
        typer.echo(f"{checked:,} tasks checked: {errors:,} errors, {count['warning']:,} warnings, "
                   f"{count['info']:,} notes" + (f" ({', '.join(f'{n:,} {c}' for c, n in sorted(noted.items()))}"
                                                  f"{'' if notes else '; --notes lists them'})" if noted else "")
                   + (f"; {len(left):,} tasks sent back to their authors wait for a fix" if left else "")
                   + (f"; {len(failing):,} tasks need a fix" if failing else "; every task passes"))
    if failing:
        raise typer.Exit(1)


@qc_app.command("accept-imported")
def qc_accept_imported(
    version: Annotated[str, typer.Argument(help="The imported release, e.g. 1.0.0.")],
    reason: Annotated[str, typer.Option(help="Why its tasks are accepted as they are (recorded with each).")],
    by: Annotated[str | None, typer.Option(help="Who accepts them (default: the user running this).")] = None,
) -> None:
    """Keep an imported release's tasks as inherited (no second review); tasks with defects stay needs_fix."""
    from curation.qc.accept import accept_imported

    with open_catalog() as cat:
        accepted = accept_imported(cat, version, reason, by, config().sources, config().feeds)
    typer.echo(f"{accepted['tasks']:,} tasks of {version}: {accepted['kept']:,} kept as inherited, "
               f"{accepted['already_kept']:,} kept before, {accepted['needs_fix']:,} need a fix, "
               f"{accepted['revised_here']:,} revised here since (left to this team's QC)")
    for _task_id, found in sorted(accepted.needs_fix.items()):
        for defect in found:
            typer.echo(f"  needs_fix: {defect.line()}")


@qc_app.command("report")
def qc_report_command(
    out: Annotated[Path | None, typer.Option(help="Where to write the report (default: reports dir / qc.html).")]
    = None,
) -> None:
    """The QC funnel: each task once, in its current state; stages, the path, and the paper's rates beside."""
    from curation.qc.funnel import funnel_lines, qc_report

    path = out or Path(config().reports.dir) / "qc.html"
    with open_catalog() as cat:
        summary = qc_report(cat, path)
    for line in funnel_lines(summary["all"]):
        typer.echo(line)
    typer.echo(f"  report: {path}")
    if not summary["all"]["adds_up"]:
        raise typer.Exit(1)


calibrate_app = typer.Typer(no_args_is_help=True, help="The pilot batch and the calibration meeting.")
review_app = typer.Typer(no_args_is_help=True, help="Blind cross-annotator review.")
adjudicate_app = typer.Typer(no_args_is_help=True, help="The group's decision on escalated tasks.")
qc_app.add_typer(calibrate_app, name="calibrate")
qc_app.add_typer(review_app, name="review")
qc_app.add_typer(adjudicate_app, name="adjudicate")

PASSWORDS_HELP = "File of 'name password' lines for accounts made here (as in `curate annotate export`)."
MEMBERS_HELP = ("Comma-separated people the catalog knows who decide (name or e-mail, any case); each gets an "
                "account that can open the project.")


def _show_passwords(result) -> None:
    from curation.labelstudio.client import annotator_url, login_line
    from curation.labelstudio.people import annotator_email

    for person, password in sorted(result.passwords.items()):
        typer.echo(f"  new account {person} ({annotator_email(person)}), password {password} "
                   "(shown once, stored nowhere)")
    typer.echo(login_line("people"))
    if result.project_id is not None and annotator_url() is not None:
        typer.echo(f"  the project: {annotator_url()}/projects/{result.project_id}/data (open it from this link: a "
                   "member who also annotates is switched to the group's projects by it)")


@calibrate_app.command("export")
def calibrate_export(
    annotators: Annotated[str | None, typer.Option(
        help="Comma-separated annotators the catalog knows (name or e-mail, any case); each gets the same "
        "pilot batch.")] = None,
    add: Annotated[list[str] | None, typer.Option(help=ADD_HELP)] = None,
    pilot: Annotated[int | None, typer.Option(help="Number of pilot feeds; annotators write a task on each.")]
    = None,
    seed: Annotated[int, typer.Option(help="Chooses the pilot feeds.")] = 0,
    questions: Annotated[Path | None, typer.Option(
        help="YAML list of fixed questions (feed, question, options) that everyone answers, instead of --pilot.")]
    = None,
    passwords: Annotated[Path | None, typer.Option(help=PASSWORDS_HELP)] = None,
) -> None:
    """The same pilot material into a pilot project of every annotator's own (never benchmark tasks)."""
    from curation.qc.calibrate import export_pilot

    with open_catalog() as cat:
        result = export_pilot(cat, (annotators or "").split(","), pilot, seed, questions,
                              served_media(cat), passwords, add=add)
    typer.echo(f"pilot round {result['round']}: {result['items']} items per annotator; {result['sent']:,} tasks "
               f"sent, {result['already_sent']:,} already there; {result['accounts_created']} accounts created")
    _show_passwords(result)


@calibrate_app.command("import")
def calibrate_import(
    round_name: Annotated[str | None, typer.Option("--round", help="The pilot round to report (default: newest).")]
    = None,
) -> None:
    """The pilot answers back; agreement for the meeting as calibration.md and calibration.html."""
    from curation.core.errors import UsageError
    from curation.qc.calibrate import import_pilot
    from curation.qc.calibration_report import figure

    with open_catalog() as cat:
        result = import_pilot(cat, Path(config().reports.dir), round_name)
    typer.echo(f"{result['answers']:,} pilot answers: {result['new']:,} new, {result['changed']:,} changed, "
               f"{result['unchanged']:,} unchanged; {result['unanswered']:,} pilot tasks not answered yet")
    if result.agreement is None:  # no round to report on, or none with answers
        raise UsageError(str(result.unreported))
    typer.echo(f"round {result.round}: Krippendorff's alpha " + ", ".join(
        f"{field} {figure(a.alpha)}" for field, a in result.agreement.items()))
    typer.echo(f"  agenda: {result.agenda}\n  report: {result.report}")


@review_app.command("export")
def review_export(
    reviewers: Annotated[str | None, typer.Option(
        help="Comma-separated reviewers the catalog knows (name or e-mail, any case); nobody gets their own "
        "task.")] = None,
    add: Annotated[list[str] | None, typer.Option(help=ADD_HELP)] = None,
    seed: Annotated[int, typer.Option(help="Breaks ties in the assignment.")] = 0,
    passwords: Annotated[Path | None, typer.Option(help=PASSWORDS_HELP)] = None,
) -> None:
    """Every shortcut-passed task to one reviewer, blind; a task keeps its reviewer on re-runs."""
    from curation.qc.review import export_reviews

    with open_catalog() as cat:
        result = export_reviews(cat, (reviewers or "").split(","), seed, served_media(cat), passwords,
                                add=add)
    typer.echo(f"{result['tasks']:,} tasks to review: {result['sent']:,} sent, {result['already_sent']:,} already "
               "there; " + ", ".join(f"{p} {n:,}" for p, n in sorted(result["per_reviewer"].items())))
    _show_passwords(result)


@review_app.command("import")
def review_import() -> None:
    """Reviews back: the same answer and no flag is reviewed_ok; anything else is escalated with why."""
    from curation.qc.review import import_reviews

    with open_catalog() as cat:
        c = import_reviews(cat)
    typer.echo(f"{c['reviews']:,} reviews: {c['reviewed_ok']:,} reviewed ok, {c['escalated']:,} escalated, "
               f"{c['unchanged']:,} already imported; {c['unreadable']:,} sent back to the reviewer to fix, "
               f"{c['unanswered']:,} not reviewed yet")


@adjudicate_app.command("export")
def adjudicate_export(
    members: Annotated[str | None, typer.Option(help=MEMBERS_HELP)] = None,
    add: Annotated[list[str] | None, typer.Option(help=ADD_HELP)] = None,
    passwords: Annotated[Path | None, typer.Option(help=PASSWORDS_HELP)] = None,
) -> None:
    """Every escalated task, with both answers, flags and comment, into the adjudication project."""
    from curation.qc.adjudicate import export_adjudication

    with open_catalog() as cat:
        c = export_adjudication(cat, served_media(cat), (members or "").split(","), passwords, add=add)
    typer.echo(f"{c['escalated']:,} escalated tasks: {c['sent']:,} sent, {c['already_sent']:,} already there; "
               f"{c['accounts_created']} accounts created")
    _show_passwords(c)


@adjudicate_app.command("import")
def adjudicate_import() -> None:
    """The group's decisions back: kept, deleted with reasons, or revised (the new version goes round again)."""
    from curation.qc.adjudicate import import_adjudication

    with open_catalog() as cat:
        c = import_adjudication(cat)
    typer.echo(f"{c['decisions']:,} decisions: {c['kept']:,} kept, {c['deleted']:,} deleted, {c['revised']:,} "
               f"revised; {c['needs_fix']:,} sent back to fix, {c['undecided']:,} not decided yet")


audit_tasks_app = typer.Typer(no_args_is_help=True,
                              help="Released tasks looked at again from how models answered them (the per-task flags).")
qc_app.add_typer(audit_tasks_app, name="audit-tasks")


@audit_tasks_app.command("export")
def audit_tasks_export(
    release: Annotated[str, typer.Option(help="The graded release whose flagged tasks the group audits (X.Y.Z).")],
    members: Annotated[str | None, typer.Option(help=MEMBERS_HELP)] = None,
    add: Annotated[list[str] | None, typer.Option(help=ADD_HELP)] = None,
    passwords: Annotated[Path | None, typer.Option(help=PASSWORDS_HELP)] = None,
) -> None:
    """Every task the release's graded episodes flag, with its evidence, into the group's audit project."""
    from curation.grade.task_audit import export_task_audit

    with open_catalog() as cat:
        c = export_task_audit(cat, release, served_media(cat), (members or "").split(","), passwords, add=add)
    typer.echo(f"{c['flagged']:,} flagged tasks: {c['sent']:,} sent, {c['already_sent']:,} already there, "
               f"{c['decided_before']:,} decided before; {c['accounts_created']} accounts created")
    _show_passwords(c)


@audit_tasks_app.command("import")
def audit_tasks_import() -> None:
    """The group's audit decisions back: kept, answer fixed or revised (the new version goes round again), retired."""
    from curation.grade.task_audit import import_task_audit

    with open_catalog() as cat:
        c = import_task_audit(cat, config().sources)
    typer.echo(f"{c['decisions']:,} decisions ({c['unchanged']:,} imported before): {c['keep']:,} kept, "
               f"{c['fix_answer']:,} answers fixed, "
               f"{c['revise']:,} revised, {c['retire']:,} retired; {c['needs_fix']:,} sent back to fix, "
               f"{c['undecided']:,} not decided yet"
               + (f"; {c['no_longer_released']:,} not applied: the version is no longer the released one"
                  if c["no_longer_released"] else "")
               + (f"; {c['changed_after_decision']:,} changed after their import (the first stands)"
                  if c["changed_after_decision"] else ""))

"""`curate annotate ...`: Label Studio export, import, status."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from curation.cli.base import ADD_HELP, app, config, open_catalog, served_media
from curation.labelstudio.client import login_line
from curation.labelstudio.people import annotator_email

annotate_app = typer.Typer(no_args_is_help=True, help="Authoring projects in Label Studio.")
app.add_typer(annotate_app, name="annotate")


@annotate_app.command("export")
def annotate_export(
    annotators: Annotated[str | None, typer.Option(
        help="Comma-separated annotators the catalog knows, by name or e-mail, in any case.")] = None,
    add: Annotated[list[str] | None, typer.Option(help=ADD_HELP)] = None,
    feed: Annotated[list[str] | None, typer.Option(help="Only these feed ids (repeatable).")] = None,
    passwords: Annotated[Path | None, typer.Option(
        help="File of 'name password' lines: new accounts get these (and listed existing ones are reset).")] = None,
    resend_missing: Annotated[bool, typer.Option(
        "--resend-missing", help="Send again the feeds whose Label Studio tasks are gone from the server (not "
        "one already written on: the catalog keeps that task; the export says which is which).")] = False,
) -> None:
    """One authoring project per annotator, in their own organization; each feed version is sent once.

    Feeds are shared out evenly and stay with the annotator they first went to. Only people the
    catalog knows are accepted; a new person is named with --add. New accounts get the password
    from --passwords, else LABEL_STUDIO_ANNOTATOR_PASSWORD, else a generated one printed here once
    (it is stored nowhere)."""
    from curation.annotate.export import export_to_label_studio

    with open_catalog() as cat:
        counts = export_to_label_studio(cat, (annotators or "").split(","), served_media(cat), feed,
                                        passwords, add=add, resend_missing=resend_missing)
    typer.echo(f"{counts['feeds']:,} feeds: {counts['exported']:,} exported, "
               f"{counts['already_exported']:,} already in Label Studio; "
               f"{counts['accounts_created']} annotator accounts created")
    for annotator, mine in sorted(counts["per_annotator"].items()):
        typer.echo(f"  {annotator}: {mine['feeds']:,} feeds ({mine['new']:,} new)")
    for annotator, missing in sorted(counts["missing"].items()):
        typer.echo(missing_line(annotator, missing))
    for finding in counts["findings"]:
        typer.echo(finding_line(finding))
    for annotator, password in sorted(counts.passwords.items()):
        typer.echo(f"  new account {annotator} ({annotator_email(annotator)}), password {password} "
                   "(shown once, stored nowhere)")
    typer.echo(login_line("annotators"))


@annotate_app.command("import")
def annotate_import() -> None:
    """Annotations back as versioned tasks; problems are kept as needs_fix with reasons."""
    from curation.annotate.importer import import_from_label_studio

    with open_catalog() as cat:
        counts = import_from_label_studio(cat, config().feeds, config().sources, served_media(cat))
    typer.echo(f"{counts['annotations']:,} annotations: {counts['new']:,} new tasks, "
               f"{counts['new_versions']:,} new versions, {counts['unchanged']:,} unchanged, "
               f"{counts['skipped_by_annotator']:,} skipped by the annotator; "
               f"{counts['needs_fix']:,} need a fix (curate annotate status; annotators see why in the task)")
    if counts["written_by_someone_else"]:
        typer.echo(f"  warning: {counts['written_by_someone_else']:,} annotations were written by someone other "
                   "than the project's annotator (credited to who wrote them)")
    if counts["gone_from_label_studio"]:
        typer.echo(f"  warning: {counts['gone_from_label_studio']:,} tasks imported before are no longer in Label "
                   "Studio (deleted there, or a backup from before them restored); the catalog keeps them as imported")
    if counts["annotations_lost"]:
        typer.echo(f"  warning: {counts['annotations_lost']:,} annotations imported before are no longer in Label "
                   "Studio, one line each below (`curate annotate status` lists them)")
    for finding in counts["findings"]:
        typer.echo(finding_line(finding))


def finding_line(finding: dict[str, Any]) -> str:
    """One annotation the server lost or changed (`curation.annotate.reconcile.Finding`): a loss or a server
    gone back in time is a warning; someone's Update, or an answer written again, is news."""
    return ("  warning: " if finding["how"] in ("annotation", "task", "project", "older") else "  ") + finding["line"]


def missing_line(annotator: str, missing: dict[str, Any]) -> str:
    """The export's line on the feeds whose tasks the server lost, saying what `--resend-missing` does (did)
    with each, as the export decided it (`curation.annotate.export.plan_missing`)."""
    plan = missing["plan"]
    send = [m for m in plan if m["action"] == "send"]
    kept = [m for m in plan if m["action"] != "send"]
    if missing["resent"]:
        line = (f"  {annotator}: {len(plan):,} feeds were missing from Label Studio (project {missing['project']})"
                + (f"; sent again: {_feeds(send)}" if send else ""))
    else:
        line = (f"  warning: {annotator}: {len(plan):,} feeds sent to project {missing['project']} are no longer in "
                f"Label Studio (deleted there, or a backup from before them restored): {_feeds(plan)}")
        if send:
            line += (f"; `curate annotate export --annotators {annotator} --resend-missing` sends "
                     + ("it" if len(plan) == 1 else "them" if len(send) == len(plan) else f"{len(send)} of them")
                     + " again" + (f" ({_feeds(send)})" if len(send) < len(plan) else ""))
    if kept:
        line += "; not sent again: " + ", ".join(f"{m['feed']} v{m['version']} ({m['why_not']})" for m in kept[:5]) + (
            " …" if len(kept) > 5 else "")
    return line


def _feeds(plan: list[dict[str, Any]]) -> str:
    return ", ".join(f"{m['feed']} v{m['version']}" for m in plan[:5]) + (" …" if len(plan) > 5 else "")


@annotate_app.command("status")
def annotate_status() -> None:
    """Tasks by life-cycle state (latest versions), every task that needs a fix with its reasons, and per
    project the annotations the catalog imported that Label Studio no longer has (as the last export or
    import found)."""
    from curation.annotate.reconcile import lost_by_project
    from curation.tasks.lifecycle import latest_states

    with open_catalog(read_only=True) as cat:
        latest = latest_states(cat)
        lost = lost_by_project(cat)
    by_state = Counter(task["state"] for task in latest)
    typer.echo(f"{len(latest):,} tasks: " + ", ".join(f"{n:,} {s}" for s, n in sorted(by_state.items())))
    for task in latest:
        if task["state"] == "needs_fix":
            typer.echo(f"{task['task_id']} v{task['version']} ({task['author'] or 'imported'}, {task['feed_id']}"
                       + (f", Label Studio task {task['ls_task_id']}" if task["ls_task_id"] else "") + "):")
            for reason in (task["fix_reason"] or "").split(" | "):
                typer.echo(f"  - {reason}")
    projects: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in lost:
        projects.setdefault((row["base_url"], row["project_id"]), []).append(row)
    for (url, project), rows in projects.items():
        again = sum(1 for r in rows if r["written_again"])
        people = ", ".join(sorted({r["person"] for r in rows}))
        typer.echo(f"Label Studio lost {len(rows):,} annotations of project {project} ({people}; {url}) that the "
                   f"catalog keeps" + (f", {again:,} of them written again since" if again else "") + ":")
        for r in rows:
            typer.echo(f"  {r['task_id']} v{r['task_version']} ({r['person']}): annotation {r['ls_annotation_id']} "
                       f"on Label Studio task {r['ls_task_id']}, {_lost_how(r['lost_how'])} "
                       f"(found {r['lost_at']:%Y-%m-%d %H:%M} UTC)"
                       + ("; written again since" if r["written_again"] else ""))


def _lost_how(how: str) -> str:
    return {"annotation": "the annotation deleted", "task": "its task deleted",
            "project": "its project deleted"}.get(how, how)

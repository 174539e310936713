"""`curate annotate ...`: Label Studio export, import, status."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

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
        "--resend-missing", help="Send again the feeds whose Label Studio tasks are gone from the server.")] = False,
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
        shown = ", ".join(f"{f} v{v}" for f, v in missing["feeds"][:5]) + (" …" if len(missing["feeds"]) > 5 else "")
        if missing["resent"]:
            typer.echo(f"  {annotator}: {len(missing['feeds']):,} feeds were missing from Label Studio (project "
                       f"{missing['project']}): {shown}; sent again unless their task was already imported "
                       "(the catalog keeps it)")
        else:
            typer.echo(f"  warning: {annotator}: {len(missing['feeds']):,} feeds sent to project {missing['project']} "
                       f"are no longer in Label Studio (deleted there, or a backup from before them restored): "
                       f"{shown}; `curate annotate export --annotators {annotator} --resend-missing` sends them again")
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


@annotate_app.command("status")
def annotate_status() -> None:
    """Tasks by life-cycle state (latest versions), and every task that needs a fix with its reasons."""
    from curation.tasks.lifecycle import latest_states

    with open_catalog(read_only=True) as cat:
        latest = latest_states(cat)
    by_state = Counter(task["state"] for task in latest)
    typer.echo(f"{len(latest):,} tasks: " + ", ".join(f"{n:,} {s}" for s, n in sorted(by_state.items())))
    for task in latest:
        if task["state"] == "needs_fix":
            typer.echo(f"{task['task_id']} v{task['version']} ({task['author'] or 'imported'}, {task['feed_id']}"
                       + (f", Label Studio task {task['ls_task_id']}" if task["ls_task_id"] else "") + "):")
            for reason in (task["fix_reason"] or "").split(" | "):
                typer.echo(f"  - {reason}")

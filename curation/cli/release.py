"""`curate release ...`: build, verify, publish; the public runner's format in and out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app, catalog_path, config, open_catalog
from curation.core.errors import UsageError

release_app = typer.Typer(no_args_is_help=True, help="Versioned releases of the tasks.")
app.add_typer(release_app, name="release")


@release_app.command("build")
def release_build(
    version: Annotated[str, typer.Option(help="The new version, MAJOR.MINOR.PATCH.")],
    parent: Annotated[str | None, typer.Option(help="The release it follows (default: the latest before it).")]
    = None,
    out: Annotated[Path | None, typer.Option(help="Folder to build under (default: \\[release] dir).")] = None,
    repo: Annotated[str | None, typer.Option(help="ORG/NAME, for the card's loading example.")] = None,
    with_media: Annotated[bool, typer.Option(help="Copy the normalised video files into media/.")] = False,
    exclude_invalid: Annotated[bool, typer.Option(
        help="Leave out tasks that fail the task rules (listed in CHANGELOG.md) instead of refusing the build.")]
    = False,
    health_strict: Annotated[bool, typer.Option(
        help="Refuse the build when the release's health breaks the \\[release] strict_* limits.")] = False,
    accept_ungradable: Annotated[str, typer.Option(
        metavar="REASON", help="Ship tasks whose checks the runner profile cannot grade, saying why (e.g. the "
        "runner you play it in grades them); recorded in the manifest. `curate env show` lists those checks.")] = "",
    lite: Annotated[int | None, typer.Option(
        metavar="N", help="Add a `lite` config of N tasks chosen from graded episodes (`curate grade ... --release`) "
        "so that a model's SR on them estimates its SR on the rest; the card states how, and the error.")] = None,
    lite_evidence: Annotated[str | None, typer.Option(
        metavar="X.Y.Z", help="The graded release the Lite choice reads (default: the parent); only tasks shipped "
        "unchanged since it are eligible.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the Lite choice's tie-breaks (default 0).")] = None,
) -> None:
    """Freeze the tasks that finished QC into vX.Y.Z: parquet configs, runner JSON, card, changelog, manifest.
    Every task is judged by the task rules first: an error refuses the build unless --exclude-invalid."""
    from curation.grade.lite_plan import lite_planner
    from curation.release.build import build_release
    from curation.release.facts import summary_line

    if lite is None and (lite_evidence is not None or seed is not None):
        raise UsageError(f"{'--lite-evidence' if lite_evidence is not None else '--seed'} is for --lite N")
    planner = lite_planner(lite, lite_evidence, seed or 0) if lite is not None else None
    with open_catalog() as cat:
        built = build_release(cat, version, config().release, parent, out, with_media, repo,
                              exclude_invalid=exclude_invalid, sources=config().sources, feeds=config().feeds,
                              health_strict=health_strict, reports_dir=Path(config().reports.dir),
                              accept_ungradable=accept_ungradable, lite=planner)
    assert built.folder is not None and built.diff is not None
    typer.echo(f"release {built.folder}: {built['tasks']:,} tasks, {built['videos']:,} videos, "
               f"{built['feeds']:,} feeds; configs " + ", ".join(
                   f"{c} ({built['per_config'][c]:,})" for c in built.configs))
    if built.parent:
        typer.echo(f"  against {built.parent}: {len(built.diff.added)} added, {len(built.diff.removed)} removed, "
                   f"{len(built.diff.changed)} revised (CHANGELOG.md)")
    if built.diff.excluded:
        typer.echo(f"  left out: {len(built.diff.excluded)} tasks fail the task rules: "
                   + ", ".join(sorted(built.diff.excluded)) + " (CHANGELOG.md says why)")
    if "lite" in built.counts:
        chosen = built["lite"]
        typer.echo(f"  lite: {chosen['tasks']} tasks chosen from the {chosen['eligible']} graded in "
                   f"v{chosen['evidence_release']} by {chosen['models']} models; they estimate a model's SR on those "
                   f"{chosen['eligible']} within ±{chosen['estimated_error']:.1%} (README.md, lite.json)")
    if built.facts is not None:
        typer.echo(f"  QC: {summary_line(built.facts)}")
    typer.echo(f"  report: {built.report}")


@release_app.command("verify")
def release_verify(
    version: Annotated[str, typer.Argument(help="vX.Y.Z, or a release folder.")],
    remote: Annotated[bool, typer.Option(help="Check the published tag vX.Y.Z at --repo instead of the folder.")]
    = False,
    repo: Annotated[str | None, typer.Option(help="The dataset repo, ORG/NAME (with --remote).")] = None,
    endpoint: Annotated[str | None, typer.Option(help="The hub (default: HF_ENDPOINT, else \\[release] endpoint).")]
    = None,
) -> None:
    """Re-hash every file against the manifest, and the manifest against the hash the catalog recorded
    at build time; exit 1 naming what differs. --remote downloads the tag's files and checks those."""
    from curation.release.verify import verify_local, verify_remote

    if remote and not repo:
        raise UsageError("--remote needs --repo ORG/NAME")
    if repo and not remote:
        raise UsageError("--repo is for --remote: without it the release folder is checked")
    if remote and repo:
        with open_catalog(read_only=True) as cat:
            found = verify_remote(cat, version, repo, config().release, endpoint)
    elif catalog_path().exists():
        with open_catalog(read_only=True) as cat:
            found = verify_local(cat, version, config().release)
    else:  # a downloaded release, no catalog here: its files against its manifest
        found = verify_local(None, version, config().release)
    for line in found.problems:
        typer.echo(line)
    if found.problems:
        typer.echo(f"{found.where}: {len(found.problems)} differences from the release built as v{found.version}",
                   err=True)
        raise typer.Exit(1)
    if found.recorded is None:
        typer.echo(f"{found.where}: every file matches the manifest; the catalog holds no manifest hash for "
                   f"v{found.version}, so the manifest itself is unchecked")
        return
    typer.echo(f"{found.where}: every file matches the manifest ({found.files} files), and the manifest is the "
               f"one recorded when v{found.version} was built" + (f" (commit {found.commit})" if found.commit else ""))


@release_app.command("publish")
def release_publish(
    version: Annotated[str, typer.Argument(help="vX.Y.Z")],
    repo: Annotated[str, typer.Option(help="The dataset repo, ORG/NAME.")],
    endpoint: Annotated[str | None, typer.Option(help="The hub (default: HF_ENDPOINT, else \\[release] endpoint).")]
    = None,
    dry_run: Annotated[bool, typer.Option(help="List every file and the tag; no network, no token needed.")] = False,
) -> None:
    """Verify, create the dataset repo if missing, and make one commit that holds exactly the folder (files
    of earlier versions that this one lacks are deleted in it); tag it vX.Y.Z."""
    from curation.release.publish import publish_release

    with open_catalog() as cat:
        plan = (publish_release.dry if dry_run else publish_release)(cat, version, repo, config().release, endpoint)
    if dry_run:
        for name in plan.files:
            typer.echo(f"  {name}")
        typer.echo(f"would upload {len(plan.files)} files to {plan.endpoint}/datasets/{plan.repo} in one commit "
                   f"that also deletes any other file there (but .gitattributes), and tag it {plan.tag}")
        return
    for name in plan.deleted:
        typer.echo(f"  deleted {name}")
    typer.echo(f"published {plan.tag}: {len(plan.files)} files to {plan.endpoint}/datasets/{plan.repo}"
               + (f", {len(plan.deleted)} files of earlier versions deleted" if plan.deleted else "")
               + f", commit {plan.commit}")


@release_app.command("import-livingscreen")
def release_import(
    folder: Annotated[Path, typer.Argument(help="A folder with gui_action.json / cross_source_understanding.json / "
                                                "close_end_application.json.")],
    version: Annotated[str, typer.Option(help="The version to record it as.")],
) -> None:
    """A release in the runner's format into the catalog (tasks start as `imported`; run `curate qc validate`)."""
    from curation.release.livingscreen import import_livingscreen

    with open_catalog(create=True) as cat:
        c = import_livingscreen(cat, folder, version)
    typer.echo(f"{c['elements']:,} tasks read: {c['tasks_new']:,} new, {c['tasks_new_versions']:,} new versions, "
               f"{c['tasks_unchanged']:,} unchanged, {c['rejected']:,} rejected" + (" (curate status lists why)"
                                                                                   if c["rejected"] else "")
               + f"; {c['feeds_new']:,} feed versions (a task's base feed, and its edited feed where it differs), "
               f"{c['video_stubs']:,} videos without metadata; next: curate qc validate")


@release_app.command("export-livingscreen")
def release_export(
    version: Annotated[str, typer.Argument(help="A recorded release, built or imported.")],
    out: Annotated[Path, typer.Argument(help="Folder for the three JSON files.")],
) -> None:
    """Any recorded release in the runner's format."""
    from curation.release.livingscreen import export_livingscreen

    with open_catalog(read_only=False) as cat:
        c = export_livingscreen(cat, version, out)
    typer.echo(f"{out}: " + ", ".join(f"{name} {n:,}" for name, n in c.counts.items()))


@release_app.command("list")
def release_list() -> None:
    """Recorded releases: version, parent, origin, tasks, where, and where they were published."""
    from curation.release.publish import recorded_releases

    with open_catalog(read_only=True) as cat:
        rows = recorded_releases(cat)
    for r in rows:
        typer.echo(f"{r['version']}\t{r['origin']}\tparent {r['parent'] or '-'}\t{r['tasks']:,} tasks\t{r['path']}"
                   + (f"\tpublished to {', '.join(r['repos'])}" if r["repos"] else ""))


@release_app.command("env-feeds")
def release_env_feeds(
    version: Annotated[str, typer.Argument(help="A recorded release.")],
    out: Annotated[Path, typer.Argument(help="Folder for one <task_id>.json per task.")],
    display_fixes: Annotated[bool, typer.Option(
        "--display-fixes", help="Parsed counts, bios and comment threads from the catalog instead of what the "
        "runner's app shows.")] = False,
) -> None:
    """Per task, the video list the runner's app takes at /api/reset: by default what the runner itself shows."""
    from curation.release.envfeeds import export_env_feeds

    with open_catalog() as cat:
        c = export_env_feeds(cat, version, out, display_fixes)
    typer.echo(f"{out}: {c['tasks']:,} tasks, {c['videos']:,} videos in their feeds")
    if c["videos_without_metadata"]:
        typer.echo(f"  {c['videos_without_metadata']:,} of them have no metadata in the catalog (ingest their source):"
                   " the app gets 0 likes and collects, no comments and the author 用户<n> for those")

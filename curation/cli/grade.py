"""`curate grade ...` and `curate rewards ...`: reading the public runner's episodes back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from curation.cli.base import app, config, open_catalog, served_media
from curation.core.errors import UsageError


class GradeGroup(TyperGroup):
    """`curate grade LOGS_DIR ...` grades; `curate grade audit ...` audits: a first word that names
    no subcommand is a logs folder."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["logs", *args]
        return super().resolve_command(ctx, args)


grade_app = typer.Typer(cls=GradeGroup, no_args_is_help=True,
                        help="Grade the runner's episode logs: `curate grade LOGS_DIR --release vX.Y.Z`.")
app.add_typer(grade_app, name="grade")
audit_app = typer.Typer(no_args_is_help=True, help="People judge how agents observed (under / over).")
grade_app.add_typer(audit_app, name="audit")
rewards_app = typer.Typer(no_args_is_help=True, help="Reward-model training data from graded episodes.")
app.add_typer(rewards_app, name="rewards")


def paired(logs: list[Path], models: list[str] | None) -> list[tuple[str, Path]]:
    if models and len(models) != len(logs):
        raise UsageError(f"give one --model per logs folder ({len(logs)} folders, {len(models)} models)")
    if models and any("/" in m for m in models):
        raise UsageError("a --model name cannot contain '/': write Qwen2.5-VL-7B, not Qwen/Qwen2.5-VL-7B")
    return [(models[i] if models else model_of(folder), folder) for i, folder in enumerate(logs)]


def model_of(folder: Path) -> str:
    """The model a logs folder belongs to in the runner's layout `logs/<model>/<category>/<task_id>/`: a
    category folder is its model's, so `logs/Qwen/gui_action` and `logs/Qwen/close_end_application` are Qwen."""
    from curation.tasks.runner_format import RUNNER_FILES

    resolved = folder.resolve()
    categories = {Path(name).stem for name in RUNNER_FILES.values()}
    return resolved.parent.name if resolved.name in categories else resolved.name


@grade_app.command("logs", hidden=True)
def grade_command(
    logs: Annotated[list[Path], typer.Argument(help="Episode log folders (<task_id>/log.json), one per model.")],
    release: Annotated[str, typer.Option(help="The release the episodes ran, vX.Y.Z.")],
    model: Annotated[list[str] | None, typer.Option(help="The model of each logs folder, in order (repeatable).")]
    = None,
    out: Annotated[Path | None, typer.Option(help="Folder for episodes.parquet/.csv, summary.json and grade.html "
                                                  "(default: [grade] dir/vX.Y.Z).")] = None,
    include_defective: Annotated[bool, typer.Option(
        "--include-defective", help="Count episodes of defective tasks in SR (they are flagged either way).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    seed: Annotated[int, typer.Option(help="Seeds the bootstrap of the intervals and pairwise tests.")] = 0,
) -> None:
    """SR, NS, WR, progress and observation buckets per episode; coverage and a summary per tier, sub-category
    and model; SR with 95% intervals, every pair of models tested, and the release's tasks judged by how the
    models answered them (flags). Several runs of a model: `--model NAME#1 --model NAME#2`. Exits 1 when no
    episode could be graded."""
    from curation.grade.folders import check_logs_arguments
    from curation.grade.grade import grade_logs
    from curation.release.semver import Version

    target = Version.parse(release)
    check_logs_arguments(logs, out, model)  # before the catalog is opened: it notes this command line
    folder = (out or Path(config().grade.dir) / target.tag).resolve()
    with open_catalog() as cat:
        result = grade_logs(cat, paired(logs, model), str(target), folder, include_defective, seed)
    if as_json:
        typer.echo(json.dumps(result.summary, ensure_ascii=False, indent=2))
    else:
        _print_summary(result, folder, result.report)
    if not result["graded"]:
        typer.echo(f"nothing graded: {result['rejected']:,} logs rejected, {result['crashed']:,} task folders "
                   f"without a log (is {target.tag} the release these episodes ran?)", err=True)
        raise typer.Exit(1)


def _print_summary(result: Any, folder: Path, page: Path | None) -> None:
    summary = result.summary
    typer.echo(f"{result['logs']:,} episode logs: {result['graded']:,} graded, {result['rejected']:,} rejected; "
               f"{result['crashed']:,} crashed (a task folder without a log)")
    for r in summary["rejected"][:10]:
        typer.echo(f"  rejected {r['log']}: {r['reason']}")
    for c in summary["coverage"]:
        typer.echo(f"  {c['model']} {c['tier']}: {c['attempted']}/{c['tasks']} tasks attempted, {c['graded']} graded, "
                   f"{c['crashed']} crashed, {c['rejected']} rejected, {c['missing']} missing; SR over attempted "
                   f"{_pct(c['sr_attempted'])}, over graded {_pct(c['sr_graded'])}")
    if summary["defective_tasks"]:
        typer.echo(f"  {len(summary['defective_tasks'])} defective tasks "
                   f"{'counted' if summary['defective_included'] else 'left out of SR (--include-defective)'}, e.g. "
                   f"{summary['defective_tasks'][0]['task_id']}: {summary['defective_tasks'][0]['reasons']}")
    for g in summary["per_tier"]:
        typer.echo(f"  {g['model']} {g['tier']}: {g['episodes']} episode{'s' if g['episodes'] != 1 else ''}, "
                   f"SR {_pct(g['sr'])}, NS {g['ns']}, WR {_pct(g['wr'])}")
    if summary["durations_unknown"]:
        typer.echo(f"  WR and the observation buckets need every feed video's duration; the catalog lacks some "
                   f"(e.g. {', '.join(summary['durations_unknown'][:3])}): ingest their source or run "
                   "`curate media probe`")
    for key in ("answered_differently", "index0_disagreements", "state_disagreements", "state_unknown"):
        if summary[key]:
            typer.echo(f"  {key.replace('_', ' ')}: {', '.join(summary[key])}")
    _print_statistics(summary)
    typer.echo(f"  episodes: {folder}/episodes.parquet (.csv), summary.json; tasks: {folder}/tasks.parquet (.csv)"
               f"\n  report: {page}")


def _print_statistics(summary: dict[str, Any]) -> None:
    """SR with its interval per model (all tasks, then each tier), the pairs, and the flagged tasks."""
    level = f"{summary['stats']['level']:.0%}"
    sr = [i for i in summary["intervals"] if i["metric"] == "sr" and "/" not in i["scope"]]
    if sr:
        typer.echo(f"  SR with {level} intervals over tasks (wilson: one run per task; task bootstrap: several)")
    for i in sr:
        typer.echo(f"    {i['model']} {i['scope']}: SR {i['estimate']:.1%} [{i['low']:.1%}, {i['high']:.1%}] "
                   f"({i['tasks']} tasks, {i['runs']} run{'s' if i['runs'] != 1 else ''}, {i['method']})")
    from curation.grade.report_stats import oriented

    if summary["pairs"]:
        typer.echo(f"  pairs (SR of the first minus the second on the tasks both played, {level} interval)")
    for p in sorted((oriented(p) for p in summary["pairs"]), key=lambda p: (p["p_value"], p["model_a"])):
        typer.echo(f"    {p['model_a']} − {p['model_b']}: {p['difference']:+.1%} [{p['low']:+.1%}, {p['high']:+.1%}] "
                   f"on {p['tasks']} tasks, p = {p['p_value']:.2g} ({p['test']}; Holm {p['p_holm']:.2g})")
    tasks = summary["tasks"]
    counts = ", ".join(f"{name} {n}" for name, n in tasks["flag_counts"].items() if n) or "none"
    typer.echo(f"  tasks judged from {len(tasks['models'])} models (IRT: {tasks['irt'] or 'none, under two models'});"
               f" flagged: {counts}")
    for row in tasks["flagged"][:10]:
        typer.echo(f"    {row['task_id']}: {', '.join(row['flags'])} (solved {row['solved']}/{row['episodes']})")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


@rewards_app.command("build")
def rewards_build(
    logs: Annotated[list[Path], typer.Argument(help="Episode log folders with their step recordings, one per model.")],
    release: Annotated[str, typer.Option(help="The release the episodes ran, vX.Y.Z.")],
    model: Annotated[list[str] | None, typer.Option(help="The model of each logs folder, in order.")] = None,
    out: Annotated[Path | None, typer.Option(help="Output folder (default build/rewards/vX.Y.Z).")] = None,
) -> None:
    """1-fps step videos with their instruction and graded label, plus derived hard negatives (JSONL)."""
    from curation.grade.folders import check_logs_arguments
    from curation.grade.rewards import build_rewards
    from curation.release.semver import Version

    target = Version.parse(release)
    check_logs_arguments(logs, out, model)  # before the catalog is opened: it notes this command line
    folder = (out or Path(config().grade.rewards_dir) / target.tag).resolve()
    with open_catalog() as cat:
        c = build_rewards(cat, paired(logs, model), str(target), folder, config().media)
    typer.echo(f"{c['logs']:,} episodes: {c['records']:,} records in {folder}/rewards.jsonl; "
               + ", ".join(f"{k} {v:,}" for k, v in c.counts.items() if k[:2] in ("L1", "L2", "L3"))
               + f"; {c.counts.get('rejected', 0):,} rejected; {c.counts.get('defective skipped', 0):,} of defective "
               "tasks skipped")


@audit_app.command("export")
def audit_export(
    release: Annotated[str, typer.Option(help="The graded release, vX.Y.Z.")],
    per_tier: Annotated[int, typer.Option(help="Trajectories per model from each of L2 and L3.")] = 50,
    seed: Annotated[int, typer.Option(help="Chooses the sample.")] = 0,
) -> None:
    """Sampled graded trajectories into the audit project (per video: under- or over-observed)."""
    from curation.grade.audit import export_audit
    from curation.release.semver import Version

    with open_catalog() as cat:
        c = export_audit(cat, str(Version.parse(release)), per_tier, seed, served_media(cat),
                         config().feeds.max_feed_len)
    typer.echo(f"{c['sampled']:,} of {c['graded']:,} graded trajectories: {c['sent']:,} sent, "
               f"{c['already_sent']:,} already in the audit project")


@audit_app.command("import")
def audit_import(release: Annotated[str, typer.Option(help="The graded release, vX.Y.Z.")]) -> None:
    """The auditors' flags back; per model the share of trajectories under-, over- and both (grade.html)."""
    from curation.grade.audit import import_audit
    from curation.release.semver import Version

    target = Version.parse(release)
    with open_catalog() as cat:
        c = import_audit(cat, str(target), Path(config().grade.dir).resolve() / target.tag / "grade.html")
    typer.echo(f"{c['audited']:,} trajectories audited, {c['waiting']:,} waiting")
    for r in c.rates:
        typer.echo(f"  {r['model']}: {r['trajectories']} trajectories, under-observed {r['under']:.1%}, "
                   f"over-observed {r['over']:.1%}, both {r['both']:.1%}")
    typer.echo(f"  report: {c.report}")

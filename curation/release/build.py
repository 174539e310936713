"""`curate release build`: freeze the tasks that finished QC into `build/releases/vX.Y.Z/`:
parquet configs (per tier, `all`, and the tasks added since the parent), videos and feeds,
the runner's three JSON files, the dataset card, a changelog and a manifest of hashes; with
`lite`, a Lite config chosen from a graded release's episodes (`lite_config.py`).

A release is never overwritten; the same catalog state always gives the same bytes (rows in
one order, parquet written the same way, no clock in any file); the version must move as
semantic versioning says against its parent. The folder is written aside and renamed into
place at the end, so a killed build leaves no half release.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation import __version__
from curation.core.catalog import Catalog, now
from curation.core.config import FeedsConfig, ReleaseConfig, SourceConfig
from curation.core.errors import InputError, PrerequisiteError, StateError, UsageError
from curation.core.progress import note
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.embed import cached_encoder
from curation.corpus.playable import rule_context
from curation.env.profile import accepted_ungradable, default_profile
from curation.qc.funnel import compute_funnel
from curation.release.audit_changes import AuditedChange, audited_changes, changelog_lines
from curation.release.card import data_path, render_card
from curation.release.contents import (
    ReleaseContents,
    config_rows,
    gather,
    released_task_rows,
    sha256_of,
    shipped_elements,
)
from curation.release.croissant import write_croissant
from curation.release.facts import ReleaseFacts, release_facts
from curation.release.health import (
    HealthLimits,
    has_baseline,
    health_svg,
    health_table_markdown,
    health_violations,
    release_health,
)
from curation.release.lite_config import LitePlanner
from curation.release.manifest import manifest_sha256, read_manifest, write_manifest
from curation.release.report import release_report
from curation.release.semver import Version, check_bump
from curation.tasks.record import from_runner
from curation.tasks.rules import Defect, check_tasks, errors_by_task, reason_text
from curation.tasks.runner_format import RUNNER_FILES
from curation.tasks.syntax import split_instruction

_STRINGS = pa.list_(pa.string())
TASK_SCHEMA = pa.schema([
    ("task_id", pa.string()), ("task_version", pa.int32()), ("tier", pa.string()), ("subcategory", pa.string()),
    ("config", pa.string()), ("eval_type", pa.string()), ("instruction", pa.string()),
    ("options", pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())]))), ("answer", pa.string()),
    ("eval_config", pa.string()), ("runner_instruction", pa.string()), ("feed_id", pa.string()),
    ("feed_version", pa.int32()), ("video_feed", _STRINGS), ("anchor_videos", _STRINGS),
    ("distractor_videos", _STRINGS), ("feed_runtime_s", pa.float64()), ("distractor_ratio", pa.float64()),
    ("qc", pa.struct([("shortcut_verdict", pa.string()), ("shortcut_answers", pa.string()),
                      ("review_outcome", pa.string()), ("decision", pa.string()),
                      ("inherited_from", pa.string())])),
    ("author_id", pa.string()), ("reviewer_id", pa.string()), ("content_sha256", pa.string())])
VIDEO_SCHEMA = pa.schema([
    ("video_id", pa.string()), ("source", pa.string()), ("caption", pa.string()), ("hashtags", _STRINGS),
    ("author_name", pa.string()), ("author_bio", pa.string()), ("like_count", pa.int64()),
    ("collect_count", pa.int64()), ("comment_count", pa.int64()), ("share_count", pa.int64()),
    ("duration_s", pa.float64()), ("media_sha256", pa.string()), ("metadata_missing", pa.bool_())])
FEED_SCHEMA = pa.schema([
    ("feed_id", pa.string()), ("version", pa.int32()), ("video_feed", _STRINGS), ("anchor_videos", _STRINGS),
    ("distractor_videos", _STRINGS), ("anchor_cluster", pa.int32()), ("distractor_ratio", pa.float64()),
    ("total_runtime_s", pa.float64()), ("seed", pa.int64()), ("edited", pa.bool_())])


def write_parquet(rows: list[dict[str, Any]], schema: pa.Schema, path: Path) -> None:
    """Deterministic parquet: fixed schema and row order, one row group, no timestamps."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, compression="zstd", compression_level=9, row_group_size=max(len(rows), 1))


def delta_config(parent: str, version: str) -> str:
    return f"v{parent}_to_v{version}".replace(".", "_")


class ReleaseGateError(InputError):
    """Tasks a release would ship fail the task rules; the message names each task and rule."""


@dataclass
class Diff:
    added: list[str] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (task id, why)
    changed: list[tuple[str, str, str]] = field(default_factory=list)  # (task id, old wording, new wording)
    excluded: dict[str, list[Defect]] = field(default_factory=dict)  # left out by the release gate
    fixed: dict[str, AuditedChange] = field(default_factory=dict)  # removed or changed exactly as an audit decided
    pending: dict[str, str] = field(default_factory=dict)  # audit decisions this release does not ship yet: why

    def counts(self) -> tuple[int, int, int, int]:
        """(added, removed, changed, fixed), as the version rule reads them."""
        return len(self.added), len(self.removed), len(self.changed), len(self.fixed)


def diff_against(catalog: Catalog, parent: str | None, contents: ReleaseContents,
                 excluded: dict[str, list[Defect]] | None = None) -> Diff:
    out = Diff(excluded=excluded or {})
    new = {t["task_id"]: t for t in contents.tasks}
    old = {r["task_id"]: r for r in catalog.rows("SELECT task_id, content_sha256, runner FROM release_tasks "
                                                 "WHERE version = ?", [parent])} if parent else {}
    out.added = [t for t in new if t not in old]
    for task_id, row in old.items():
        if task_id in out.excluded:
            out.removed.append((task_id, "left out by the release gate: " + reason_text(out.excluded[task_id])))
        elif task_id not in new:
            why = catalog.rows("SELECT to_state, reason, who FROM task_transitions WHERE task_id = ? "
                               "ORDER BY version DESC, seq DESC LIMIT 1", [task_id])
            out.removed.append((task_id, f"{why[0]['to_state']}" + (f": {why[0]['reason']}" if why[0]["reason"]
                                                                    else "") if why else "no longer in the catalog"))
        elif row["content_sha256"] != new[task_id]["content_sha256"]:
            out.changed.append((task_id, json.loads(row["runner"])["instruction"], new[task_id]["runner_instruction"]))
    # a fix counts as one only when what ships is what the group decided: the task gone (retired, and not left out
    # by the gate for a reason of its own), or its revised version shipped; anything else is an ordinary change
    shipped = {t["task_id"]: t["task_version"] for t in contents.tasks}
    gone = {t for t, _ in out.removed} - set(out.excluded)
    for task_id, change in audited_changes(catalog, parent).items():
        if (task_id in gone and change.revised_version is None) or (
                change.revised_version is not None and shipped.get(task_id) == change.revised_version):
            out.fixed[task_id] = change
        elif task_id not in shipped or shipped[task_id] != change.version:
            out.pending[task_id] = (f"the audit of v{change.audited_release} made v{change.revised_version}, which "
                                    "is not released yet (it goes through the shortcut filter and review)"
                                    if change.revised_version is not None else
                                    f"retired in the audit of v{change.audited_release}, but left out for another "
                                    "reason too")
    return out


def changelog(version: str, parent: str | None, diff: Diff) -> str:
    lines = [f"# v{version}", "", f"Against v{parent}." if parent else "The first release.", ""]
    lines += [f"## Added ({len(diff.added)})", ""] + [f"- {t}" for t in diff.added] + [""]
    lines += [f"## Removed ({len(diff.removed)})", ""] + [f"- {t}: {why}" for t, why in diff.removed] + [""]
    lines += [f"## Revised ({len(diff.changed)})", ""]
    for task_id, before, after in diff.changed:
        lines += [f"- {task_id}", f"  - before: {' '.join(before.split())}", f"  - after: {' '.join(after.split())}"]
    if diff.fixed:
        lines += [""] + changelog_lines(diff.fixed)
    if diff.excluded:
        lines += ["", f"## Left out: they fail the task rules ({len(diff.excluded)})", ""]
        lines += [f"- {t}: {reason_text(found)}" for t, found in sorted(diff.excluded.items())]
    return "\n".join(lines) + "\n"


def release_gate(run: StageRun, rows: list[dict[str, Any]], elements: dict[str, dict[str, Any]],
                 sources: dict[str, SourceConfig] | None, feeds: FeedsConfig | None, version: str,
                 exclude_invalid: bool, accept_ungradable: str = "") -> dict[str, list[Defect]]:
    """The task rules over every element the release would ship, in the runner profile's environment. An error
    refuses the build (nothing is written) unless `exclude_invalid`, which leaves those tasks out; either way each
    is named. `accept_ungradable`: why checks the profile cannot grade may ship in this release."""
    records = [from_runner(elements[r["task_id"]], RUNNER_FILES[r["tier"]]) for r in rows]
    ctx = rule_context(run.db, sources, feeds, accept_ungradable.strip() or None)
    invalid = errors_by_task(check_tasks(records, ctx))
    for defect in sorted((d for found in invalid.values() for d in found), key=lambda d: d.task_id):
        note(f"{'left out' if exclude_invalid else 'refused'}: {defect.line()}")
    if invalid and not exclude_invalid:
        listed = ", ".join(f"{t} ({', '.join(sorted({d.code for d in found}))})"
                           for t, found in sorted(invalid.items()))
        raise ReleaseGateError(f"release v{version} refused: {len(invalid)} tasks fail the task rules: {listed}; "
                               "fix them (curate qc validate) or build with --exclude-invalid to leave them out")
    run.counts["excluded_invalid"] = len(invalid)
    return invalid


def ctx_accepts(given: str) -> str | None:
    """Why this release may ship checks its runner profile cannot grade: given for the build, else configured."""
    return given.strip() or accepted_ungradable() or None


def choose_parent(catalog: Catalog, version: Version, parent: str | None) -> str | None:
    """The release `version` follows: the latest recorded one below it. A parent given must be that one, so that
    each release's changes are counted against the one just before it on its line (2.1.0 after 2.0.0, not 1.0.0;
    1.0.1 after 1.0.0 even when 2.0.0 exists)."""
    known = {str(Version.parse(v)): v for (v,) in catalog.con.execute("SELECT version FROM releases").fetchall()}
    earlier = sorted((Version.parse(v) for v in known if Version.parse(v) < version), reverse=True)
    latest = str(earlier[0]) if earlier else None
    if parent is not None:
        if str(Version.parse(parent)) not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise StateError(f"parent {parent} is not a recorded release (recorded: {listed})")
        if Version.parse(parent) < version and str(Version.parse(parent)) != latest:  # (a later one: check_bump)
            raise StateError(f"v{version}'s parent is v{latest}, the latest release below it, not v{parent}: "
                             f"build with --parent {latest} (or leave --parent out)")
        return str(Version.parse(parent))
    return latest


@dataclass
class BuiltRelease(RunResult):
    folder: Path | None = None
    parent: str | None = None
    diff: Diff | None = None
    configs: list[str] = field(default_factory=list)
    report: Path | None = None  # release-vX.Y.Z.html, when asked for
    facts: ReleaseFacts | None = None


@stage("release-build", command="curate release build --version X.Y.Z [--parent X.Y.Z] [--lite N]",
       reads=("tasks", "task_transitions", "feeds", "videos", "media_files", "media_probes", "media_outputs",
              "shortcut_verdicts", "shortcut_decisions", "reviews", "decisions", "pseudonyms", "releases",
              "release_tasks", "comments", "embeddings", "episode_grades", "audit_decisions"),
       writes=("pseudonyms", "releases", "release_tasks", "embeddings"),
       summary="the tasks that finished QC, frozen as parquet configs, runner JSON, a dataset card and a manifest",
       files=("out: release folder", "out: report file (with reports_dir)"))
def build_release(run: StageRun, version: str, settings: ReleaseConfig, parent: str | None = None,
                  out_root: Path | None = None, with_media: bool = False, repo: str | None = None,
                  exclude_invalid: bool = False, sources: dict[str, SourceConfig] | None = None,
                  feeds: FeedsConfig | None = None, health_strict: bool = False,
                  reports_dir: Path | None = None, accept_ungradable: str = "",
                  lite: LitePlanner | None = None) -> BuiltRelease:
    """Build vX.Y.Z; with `reports_dir`, the release's page (release-vX.Y.Z.html) goes there too; with `lite`, a
    `lite` config of the tasks it chooses (`grade.lite_plan.lite_planner`: from graded episodes)."""
    catalog = run.db
    target = Version.parse(version)
    folder = (out_root or Path(settings.dir)) / target.tag
    rows = released_task_rows(catalog)
    elements = shipped_elements(catalog, rows)
    excluded = release_gate(run, rows, elements, sources, feeds, str(target), exclude_invalid, accept_ungradable)
    contents = gather(catalog, [r for r in rows if r["task_id"] not in excluded], elements)
    if folder.exists() and not _adoptable(catalog, folder, str(target), contents):
        raise StateError(f"{folder} exists: a release is never overwritten; choose a new version")
    if not contents.tasks:
        raise PrerequisiteError("no task has finished QC (reviewed ok, or kept by the group): tasks pass "
                                "`curate qc validate`, `curate qc shortcut`, then review (`curate qc review export`, "
                                "then `import`) before they can be released")
    parent = choose_parent(catalog, target, parent)
    diff = diff_against(catalog, parent, contents, excluded)
    if parent:
        try:
            check_bump(Version.parse(parent), target, *diff.counts())
        except UsageError as exc:
            if not diff.pending:
                raise
            raise UsageError(f"{exc}; audit fixes count as a patch once they ship: " + "; ".join(
                f"{t}: {why}" for t, why in sorted(diff.pending.items()))) from None
        if not (diff.added or diff.removed or diff.changed):
            raise StateError(f"v{target} would hold exactly what v{parent} holds: a release needs a change "
                             "(a task added, removed or revised)")
    chosen = lite(catalog, contents.tasks, parent, str(target)) if lite else None
    embed = cached_encoder(catalog, settings.health_embedding, run.run_id) if settings.health_embedding else None
    health = release_health(contents.tasks, parent_health_rows(catalog, parent), similarity=settings.health_similarity,
                            embed=embed)
    if health_strict:
        problems = health_violations(health, strict_limits(settings))
        if problems:
            raise ReleaseGateError(f"release v{target} refused by --health-strict: " + "; ".join(problems))
    content_sha = sha256_of([contents.tasks, contents.feeds, contents.videos])
    recorded = catalog.rows("SELECT * FROM releases WHERE version = ?", [str(target)])
    if recorded and recorded[0]["content_sha256"] != content_sha:
        raise StateError(f"v{target} was already released with other content: choose a new version")
    same = catalog.scalar("SELECT min(version) FROM releases WHERE content_sha256 = ? AND version <> ?",
                          [content_sha, str(target)])
    if same is not None:
        raise StateError(f"v{same} already holds exactly this content: a release is never made twice under two "
                         "versions (change a task, or use v" + same + ")")
    run.params.update(version=str(target), parent=parent, with_media=with_media, folder=str(folder),
                      exclude_invalid=exclude_invalid, health_strict=health_strict,
                      accept_ungradable=ctx_accepts(accept_ungradable))
    if chosen:
        run.params["lite"] = chosen.params()
    result = BuiltRelease(run.counts, folder=folder, parent=parent, diff=diff)
    if folder.exists():  # the same content, built by a run killed before it was recorded: record it now
        shutil.rmtree(folder)
    partial = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    per_config = config_rows(contents.tasks, delta_config(parent, str(target)) if parent else None, diff.added,
                             chosen.choice.task_ids if chosen else None)
    for config, config_tasks in per_config.items():
        write_parquet(config_tasks, TASK_SCHEMA, partial / data_path(config))
    configs = result.configs = list(per_config)
    if chosen:
        chosen.write(partial)
    write_parquet(contents.videos, VIDEO_SCHEMA, partial / "videos.parquet")
    write_parquet(contents.feeds, FEED_SCHEMA, partial / "feeds.parquet")
    for name in RUNNER_FILES.values():
        path = partial / "livingscreen" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(contents.runner[name], ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    qc = compute_funnel(catalog)
    (partial / "health.json").write_text(json.dumps(health, ensure_ascii=False, indent=2, sort_keys=True) + "\n",
                                         encoding="utf-8")
    (partial / "health.svg").write_text(health_svg(health), encoding="utf-8")
    # one reading of what ran for these tasks, for the card and (through the manifest) the Croissant RAI fields
    facts = release_facts(catalog, contents.tasks, contents.videos, qc["all"],
                          ratio_range=(feeds or FeedsConfig()).ratio_range)
    result.facts = facts
    (partial / "README.md").write_text(render_card(settings, str(target), repo, configs, contents.tasks, qc, parent,
                                                   facts, health_table_markdown(health), with_media=with_media,
                                                   baseline=has_baseline(health), lite=chosen), encoding="utf-8")
    (partial / "CHANGELOG.md").write_text(changelog(str(target), parent, diff), encoding="utf-8")
    if with_media:
        _copy_media(catalog, [v["video_id"] for v in contents.videos], partial / "media")
    counts = {"tasks": len(contents.tasks), "videos": len(contents.videos), "feeds": len(contents.feeds),
              "per_config": {c: len(rows) for c, rows in per_config.items()},
              "added": len(diff.added), "removed": len(diff.removed), "changed": len(diff.changed),
              **({"lite": chosen.summary()} if chosen else {})}
    # the package version, not the checkout's git state: the same catalog gives the same bytes anywhere
    profile = default_profile()
    body = {"version": str(target), "parent": parent, "toolkit_version": __version__,
            "content_sha256": content_sha, "counts": counts, "catalog_runs": contents.run_ids,
            "qc": qc["all"], "facts": facts.as_json(), "configs": configs,
            # what the team stated when it was built (publish refuses a release that lacks one)
            "stated": {"annotations_license": settings.annotations_license.strip() or None,
                       "contact": settings.contact.strip() or None, "repo": repo,
                       "accept_ungradable": ctx_accepts(accept_ungradable)},
            # the environment the release targets (curation/env/profile.py)
            "runner": {"name": profile.name, "repository": profile.repository, "commit": profile.commit,
                       "ungradable": sorted(profile.ungradable)}}
    write_manifest(partial, body)
    # Croissant reads the files' hashes from the manifest; the manifest is written again to list it
    write_croissant(partial, settings, repo=repo)
    write_manifest(partial, body)
    partial.rename(folder)
    manifest_sha = manifest_sha256(read_manifest(folder))  # verify and publish check the folder against it
    if not recorded:
        catalog.insert("releases", {"version": str(target), "parent": parent, "origin": "built",
                                    "path": str(folder.resolve()),  # found from any working folder
                                    "content_sha256": content_sha, "manifest_sha256": manifest_sha,
                                    "tasks": len(contents.tasks), "run_id": run.run_id, "created_at": now()})
        versions = {t["task_id"]: t["task_version"] for t in contents.tasks}
        record_runner_tasks(catalog, str(target), contents.runner, versions)
    run.counts.update(counts)
    if reports_dir is not None:
        result.report = release_report(folder, reports_dir)
        run.params.update(report=str(result.report))
    return result


def parent_health_rows(catalog: Catalog, parent: str | None) -> list[dict[str, Any]] | None:
    """The parent's tasks as the health check compares them: id, question and feed."""
    if not parent:
        return None
    out = []
    for (element,) in catalog.con.execute("SELECT runner FROM release_tasks WHERE version = ? ORDER BY runner_file, "
                                          "position", [parent]).fetchall():
        task = json.loads(element)
        out.append({"task_id": task.get("task_id"), "video_feed": task.get("video_feed") or [],
                    "instruction": split_instruction(task.get("instruction") or "")[0]})
    return out


def strict_limits(settings: ReleaseConfig) -> HealthLimits:
    return HealthLimits(balance_p_value=settings.strict_balance_p,
                        max_near_duplicates=settings.strict_max_near_duplicates,
                        max_parent_duplicates=settings.strict_max_parent_duplicates,
                        max_baseline_over_chance=settings.strict_max_baseline_over_chance)


def _adoptable(catalog: Catalog, folder: Path, version: str, contents: ReleaseContents) -> bool:
    """A folder with this version's content but no catalog record: a build killed between its rename
    and its commit, which this build may finish (the content is the same, so are the bytes)."""
    if catalog.scalar("SELECT count(*) FROM releases WHERE version = ?", [version]):
        return False
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("content_sha256") == sha256_of([contents.tasks, contents.feeds, contents.videos])


def record_runner_tasks(catalog: Catalog, version: str, runner: dict[str, list[dict[str, Any]]],
                        versions: dict[str, int]) -> None:
    """What a release holds, element by element in the runner's format (built or imported)."""
    for name, elements in runner.items():
        for position, element in enumerate(elements):
            task_id = element.get("task_id")  # None in an imported element that names no task
            catalog.insert("release_tasks", {
                "version": version, "runner_file": name, "position": position, "task_id": task_id,
                "task_version": versions.get(task_id) if task_id is not None else None,
                "content_sha256": sha256_of(element), "runner": json.dumps(element, ensure_ascii=False)})


def _copy_media(catalog: Catalog, video_ids: list[str], into: Path) -> None:
    for row in catalog.rows("SELECT video_id, output_path FROM media_outputs WHERE list_contains(?, video_id) "
                            "ORDER BY video_id", [video_ids]):
        source = Path(row["output_path"] or "")
        if source.is_file():
            target = into / f"{row['video_id']}{source.suffix}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)

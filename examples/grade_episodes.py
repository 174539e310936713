"""Grade a folder of episodes the public LivingScreen runner wrote, and read the grades from a notebook.

    .venv/bin/python examples/grade_episodes.py [--work DIR] [--episodes DIR] [--release-files DIR]

1. records the release the episodes ran (the public v1 runner files) in a new catalog in WORK/grading/, and keeps
   its tasks as published (`curate release import-livingscreen`, `curate qc accept-imported`);
2. grades every model's episodes with `curate grade` (the runner's layout: EPISODES/<model>/<category>/<task>/);
3. reads the grades back through the notebook API (`curation.api`) and prints SR per model and tier, and each
   episode with where its success came from.

Where the data is (read only; nothing is written beside it):
  --episodes       $LIVINGSCREEN_EPISODES, else runner-episodes in $LIVINGSCREEN_SHARED or ../shared/
  --release-files  $LIVINGSCREEN_V1, else livingscreen-v1 in $LIVINGSCREEN_SHARED or ../shared/
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
from _shared import ROOT, curate, fresh_folder, parser

import curation.api

VERSION = "1.0.0"  # the public release the episodes were recorded on


def beside_checkout(variable: str, name: str) -> Path:
    """`$variable`, else `<name>` in `$LIVINGSCREEN_SHARED`, else `../shared/<name>` next to the checkout (where CI
    keeps data that never enters the repo)."""
    shared = Path(os.environ.get("LIVINGSCREEN_SHARED") or ROOT.parent / "shared")
    return Path(os.environ.get(variable) or shared / name)


def grade(folder: Path, episodes: Path, release_files: Path) -> Path:
    """Everything through `curate` in `folder` (emptied first); returns the catalog's path."""
    models = sorted(p for p in episodes.iterdir() if p.is_dir()) if episodes.is_dir() else []
    if not models:
        raise SystemExit(f"no model folders in {episodes} (give --episodes, or set LIVINGSCREEN_EPISODES)")
    if not (release_files / "gui_action.json").is_file():
        raise SystemExit(f"{release_files} holds no runner files such as gui_action.json "
                         "(give --release-files, or set LIVINGSCREEN_V1)")
    fresh_folder(folder)
    curate(folder, "release", "import-livingscreen", str(release_files), "--version", VERSION)
    # imported tasks are not this team's to review again: they ship as published, unless the task rules find an
    # error (those stay needs_fix, and grading leaves their episodes out of SR, flagged as defective)
    curate(folder, "qc", "accept-imported", VERSION, "--reason", "the public release, graded as published")
    curate(folder, "grade", *map(str, models), "--release", f"v{VERSION}")
    return folder / "build" / "catalog.duckdb"


def show(catalog_path: Path) -> None:
    """The grades as a notebook reads them: one row per release, model and task (`episode_grades`)."""
    grades = curation.api.open(catalog_path).grades(release=VERSION)
    counted = grades.filter(pl.col("defective").is_null())  # as `curate grade` counts SR without --include-defective
    per_tier = (counted.group_by("model", "tier")
                .agg(episodes=pl.len(), sr=pl.col("sr").mean(), ns=pl.col("ns").mean())
                .sort("model", "tier"))
    print(f"\ncatalog {catalog_path}")
    print(f"episodes graded: {grades.height} ({grades.height - counted.height} on defective tasks, left out of SR)")
    for row in per_tier.iter_rows(named=True):
        print(f"{row['model']} {row['tier']}: {row['episodes']} episodes, SR {row['sr']:.3f}, "
              f"mean steps {row['ns']:.2f}")
    for row in grades.sort("model", "tier", "task_id").iter_rows(named=True):
        flags = [name for name in ("index0_disagrees", "answered_differently", "state_disagrees") if row[name]]
        print(f"  {row['model']} {row['task_id']}: SR {row['sr']:.0f} from {row['sr_from']}, runner logged "
              f"{row['logged_result']}" + (f"; {', '.join(flags)}" if flags else ""))


def main() -> None:
    parse = parser(__doc__.splitlines()[0])
    parse.add_argument("--episodes", type=Path, default=beside_checkout("LIVINGSCREEN_EPISODES", "runner-episodes"),
                       help="the runner's logs folder: one sub-folder per model")
    parse.add_argument("--release-files", type=Path, default=beside_checkout("LIVINGSCREEN_V1", "livingscreen-v1"),
                       help="the release's runner files (gui_action.json, ...)")
    args = parse.parse_args()
    show(grade(args.work / "grading", args.episodes, args.release_files))


if __name__ == "__main__":
    main()

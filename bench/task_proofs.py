"""The proofs a platform task must pass before it ships, counted per sub-category for a release's runner files.

    .venv/bin/python bench/task_proofs.py ../shared/livingscreen-v1 [--catalog build/catalog.duckdb]

Do-nothing: an agent that only calls `finish` must not pass the task at any moment of the runner profile's
do-nothing window (curation/tasks/idle.py, the rule `passes-without-acting`). "passed" = the proof holds (doing
nothing fails the task), "failed" = doing nothing passes it, "undecided" = the facts at hand cannot tell, and the
facts it lacks are named (a video's length, a video's starting comments).
Perfect agent: the plan the checks ask for, played in the replay, must pass the task (curation/tasks/perfect.py,
the rule `unsatisfiable`); "undecided" when no plan is made or the replay cannot read a check; "ungradable" when the
runner profile says the runner cannot grade one of its checks (the rule `ungradable-in-runner`).
With `--catalog`, video lengths and starting comments come from the catalog; without, only what the runner files
themselves say. Every task is named under every column it is counted in, with the reason where there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.corpus.playable import rule_context  # noqa: E402
from curation.tasks.idle import IdleFacts, idle_verdict  # noqa: E402
from curation.tasks.perfect import prove_perfect  # noqa: E402
from curation.tasks.record import from_runner  # noqa: E402
from curation.tasks.runner_format import RUNNER_FILES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a release's runner files (gui_action.json, ...)")
    parser.add_argument("--catalog", type=Path, help="a catalog with the videos' lengths and comments")
    args = parser.parse_args()
    facts = IdleFacts({}, None)
    if args.catalog:
        with Catalog(args.catalog, read_only=True) as cat:
            facts = rule_context(cat).idle_facts
    print(f"runner profile: {facts.profile.name} ({facts.profile.origin}); do-nothing window "
          f"{facts.profile.idle_window_s[0]:g}-{facts.profile.idle_window_s[1]:g} s")
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    listed: dict[str, list[str]] = defaultdict(list)
    for name in RUNNER_FILES.values():
        path = args.folder / name
        if not path.exists():
            continue
        for element in json.loads(path.read_text(encoding="utf-8")):
            task = from_runner({**element, "_file": name})
            if task.eval_type != "platform":
                continue
            idle = idle_verdict(task.eval_config, task.video_feed, facts)
            perfect = prove_perfect(task.eval_config, task.video_feed, facts)
            # the do-nothing proof holds when doing nothing fails the task
            cells = {"do-nothing": {True: "failed", False: "passed", None: "undecided"}[idle.passes],
                     "perfect": "ungradable" if perfect.ungradable
                     else {True: "passed", False: "failed", None: "undecided"}[perfect.passed]}
            counts[task.subcategory or "?"].update(f"{proof} {cell}" for proof, cell in cells.items())
            why = {"do-nothing": f"{'; '.join(idle.checks)} hold {idle.window}" if idle.passes
                   else f"lacking {', '.join(idle.lacking)}" if idle.passes is None else "",
                   "perfect": perfect.reason}
            for proof, cell in cells.items():
                listed[f"{proof} {cell}"].append(f"{task.task_id}" + (f": {why[proof]}" if why[proof] else ""))
    columns = [("do-nothing", ("passed", "failed", "undecided")), ("perfect", ("passed", "failed", "undecided",
                                                                               "ungradable"))]
    print(f"{'sub-category':<22}" + "".join(f" {proof[:7] + ' ' + cell:>19}" for proof, cells in columns
                                            for cell in cells))
    total = sum(counts.values(), Counter())
    for sub, c in [*sorted(counts.items()), ("all platform tasks", total)]:
        print(f"{sub:<22}" + "".join(f" {c[f'{proof} {cell}']:>19}" for proof, cells in columns for cell in cells))
    for proof, cells in columns:  # every task of every column, by name
        for cell in cells:
            tasks = listed[f"{proof} {cell}"]
            print(f"\n{proof} proof {cell} ({len(tasks)}):")
            for line in tasks:
                print(f"  {line}")


if __name__ == "__main__":
    main()

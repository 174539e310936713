"""The proofs a platform task must pass before it ships, counted per sub-category for a release's runner files.

    .venv/bin/python bench/task_proofs.py ../shared/livingscreen-v1 [--catalog build/catalog.duckdb]

Do-nothing: an agent that only calls `finish` must not pass the task (curation/tasks/idle.py, the rule
`passes-without-acting`). "passed" = the proof holds (doing nothing fails the task), "failed" = doing nothing
passes it, "undecided" = the facts at hand cannot tell (a comment text on a video whose starting comments the
catalog lacks, a playback target on a video of unknown length).
Perfect agent: the plan the checks ask for, played in the replay, must pass the task (curation/tasks/perfect.py,
the rule `unsatisfiable`); "undecided" when no plan is made or the replay cannot read a check.
With `--catalog`, video lengths and starting comments come from the catalog; without, only what the runner files
themselves say. Every task that fails a proof or leaves it undecided is listed with the reason.
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
from curation.tasks.idle import IdleFacts, passes_idle, undecided  # noqa: E402
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
            ctx = rule_context(cat)
        facts = IdleFacts(ctx.durations, ctx.starting_comments)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    listed: list[str] = []
    for name in RUNNER_FILES.values():
        path = args.folder / name
        if not path.exists():
            continue
        for element in json.loads(path.read_text(encoding="utf-8")):
            task = from_runner({**element, "_file": name})
            if task.eval_type != "platform":
                continue
            held = passes_idle(task.eval_config, task.video_feed, facts)
            idle = "failed" if held else "undecided" if undecided(task.eval_config, task.video_feed, facts) \
                else "passed"
            perfect = prove_perfect(task.eval_config, task.video_feed, facts)
            best = {True: "passed", False: "failed", None: "undecided"}[perfect.passed]
            counts[task.subcategory or "?"].update([f"idle {idle}", f"perfect {best}"])
            if held:
                listed.append(f"do-nothing failed   {task.task_id}: {'; '.join(held[1])} hold {held[0]:g} s after "
                              "the app starts")
            if perfect.passed is not True:
                listed.append(f"perfect {best:<11} {task.task_id}: {perfect.reason}")
    print(f"{'':<22} {'do-nothing agent':^28} {'perfect agent':^28}")
    print(f"{'sub-category':<22}" + f" {'passed':>8} {'failed':>8} {'undecided':>10}" * 2)
    total = sum(counts.values(), Counter())
    for sub, c in [*sorted(counts.items()), ("all platform tasks", total)]:
        print(f"{sub:<22}" + "".join(f" {c[f'{proof} passed']:>8} {c[f'{proof} failed']:>8} "
                                     f"{c[f'{proof} undecided']:>10}" for proof in ("idle", "perfect")))
    for line in listed:
        print(f"  {line}")

if __name__ == "__main__":
    main()

"""The `lite` config of a release (`release build --lite N`): N of its tasks chosen from the graded episodes of a
recorded release (`curation/grade/lite.py`), `lite.json` with what turns a model's results on them into an
estimate of its SR on the rest, and the card's section saying how they were chosen and how far off that estimate
may be.

Only a task whose runner element is the one that was graded (the same `content_sha256` in `release_tasks`) counts:
the episodes of a task added or revised since played other content, so they say nothing about what ships.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from curation.core.errors import StateError, UsageError
from curation.release.semver import Version

if TYPE_CHECKING:
    from curation.core.catalog import Catalog

LITE_CONFIG = "lite"
LITE_FILE = "lite.json"
# why a task of the release being built has no evidence, as lite.json keys it and the card says it
NOT_ELIGIBLE = {"not_in_evidence": "not in v{v}", "changed": "revised since v{v}", "not_graded": "never graded in v{v}"}


@dataclass(frozen=True)
class LiteRequest:
    """`--lite N [--lite-evidence X.Y.Z] [--seed S]`, checked before anything is built."""
    n: int
    evidence: str | None = None  # the graded release (None: the parent of the release being built)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UsageError(f"--lite {self.n}: a Lite config holds at least 1 task")
        if self.evidence is not None:
            try:
                Version.parse(self.evidence)
            except UsageError as exc:
                raise UsageError(f"--lite-evidence: {exc}") from None


class HeldOutModel(Protocol):
    """One graded model left out of the choice: its SR on the eligible tasks and each way's estimate of it."""

    @property
    def model(self) -> str: ...
    @property
    def full_sr(self) -> float: ...
    @property
    def estimates(self) -> dict[str, float]: ...


class ChosenTasks(Protocol):
    """What the release reads of a Lite choice (`curation.grade.lite.LiteChoice`, which the grading layer makes:
    a release does not import grading, whose evidence comes from releases)."""

    @property
    def task_ids(self) -> list[str]: ...
    @property
    def method(self) -> str: ...
    @property
    def selection(self) -> str: ...
    @property
    def estimator(self) -> str: ...
    @property
    def estimated_error(self) -> float | None: ...
    @property
    def strata(self) -> dict[str, str]: ...
    @property
    def validation(self) -> Sequence[HeldOutModel]: ...
    @property
    def way(self) -> str: ...
    def as_json(self) -> dict[str, Any]: ...


@dataclass
class LitePlan:
    request: LiteRequest
    evidence: str                        # the graded release, X.Y.Z
    choice: ChosenTasks
    models: list[str]                    # the graded models the choice was validated on
    not_eligible: dict[str, list[str]] = field(default_factory=dict)   # NOT_ELIGIBLE key: task ids

    @property
    def eligible(self) -> int:
        return len(self.choice.strata)

    def as_json(self) -> dict[str, Any]:
        """lite.json: the request, what was not eligible and why, and the choice with its estimator."""
        return {"config": LITE_CONFIG, "evidence_release": self.evidence, "seed": self.request.seed,
                "tasks": len(self.choice.task_ids), "eligible": self.eligible, "models": self.models,
                "not_eligible": self.not_eligible, "choice": self.choice.as_json()}

    def write(self, folder: Path) -> Path:
        path = folder / LITE_FILE
        path.write_text(json.dumps(self.as_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return path

    def params(self) -> dict[str, Any]:
        """What the catalog run records as asked and chosen (its counts record `summary`)."""
        return {"n": self.request.n, "evidence": self.evidence, "seed": self.request.seed,
                "task_ids": self.choice.task_ids}

    def summary(self) -> dict[str, Any]:
        """What the manifest and the catalog run record of it (lite.json holds the rest)."""
        return {"tasks": len(self.choice.task_ids), "evidence_release": self.evidence, "seed": self.request.seed,
                "eligible": self.eligible, "models": len(self.models),
                "not_eligible": {why: len(ids) for why, ids in self.not_eligible.items()},
                "selection": self.choice.selection, "estimator": self.choice.estimator,
                "estimated_error": self.choice.as_json()["estimated_error"]}


def evidence_version(catalog: Catalog, request: LiteRequest, parent: str | None) -> str:
    """The recorded release whose graded episodes the choice reads: the one asked for, else the parent."""
    if request.evidence is None and parent is None:
        raise UsageError("--lite: this release has no parent to take graded episodes from; name the graded release "
                         "with --lite-evidence X.Y.Z")
    asked = str(Version.parse(request.evidence or str(parent)))
    known = sorted(str(Version.parse(v)) for (v,) in catalog.con.execute("SELECT version FROM releases").fetchall())
    if asked not in known:
        raise StateError(f"--lite-evidence {request.evidence}: v{asked} is not a recorded release (recorded: "
                         f"{', '.join(known) or 'none'})")
    return asked


# (catalog, the release's task rows as `contents.gather` gives them, its parent, its version) -> the plan;
# `curation.grade.lite_plan.lite_planner` makes one from `--lite N [--lite-evidence] [--seed]`
LitePlanner = Callable[["Catalog", list[dict[str, Any]], str | None, str], LitePlan]


def lite_lines(plan: LitePlan, total: int) -> list[str]:
    """The card's Lite section: read from the choice, nothing restated by hand."""
    choice, ev = plan.choice, plan.evidence
    assert choice.estimated_error is not None  # plan_lite refuses fewer than MIN_MODELS models
    lines = ["### Lite config", "",
             f"`{LITE_CONFIG}` is a subset of the release's {total} tasks, chosen from the graded episodes of v{ev} "
             f"among the {plan.eligible} tasks this release ships as v{ev} graded them: {choice.method}", "",
             f"A model's SR on those {plan.eligible} tasks, estimated from its results on the `{LITE_CONFIG}` tasks "
             f"alone by the {choice.estimator} estimator, is within ±{choice.estimated_error:.1%} of the SR it would "
             f"get on all of them (a 95% bound), as measured on the {len(plan.models)} graded models, each left out "
             f"in turn (the choice and the fit made without it):", "",
             "| model left out | SR on the eligible tasks | estimate from its Lite tasks | error |",
             "|---|---|---|---|"]
    lines += [f"| {h.model} | {h.full_sr:.1%} | {h.estimates[choice.way]:.1%} | "
              f"{h.estimates[choice.way] - h.full_sr:+.1%} |" for h in choice.validation]
    lines += ["", f"`{LITE_FILE}` holds the estimator's inputs (each eligible task's tier and sub-category, and its "
              "fitted difficulty and discrimination) and this validation; with the toolkit, "
              f'`LiteChoice.from_json(json.load(open("{LITE_FILE}"))["choice"]).estimate(results)` '
              "(`curation.grade.lite`; `results`: task id → (solved runs, runs) on the Lite tasks) gives the estimate.",
              ""]
    if plan.not_eligible:
        lines += [f"Not eligible: {sum(map(len, plan.not_eligible.values()))} tasks, whose shipped content has no "
                  "graded episode (" + ", ".join(f"{len(ids)} {NOT_ELIGIBLE[why].format(v=ev)}"
                                                 for why, ids in plan.not_eligible.items())
                  + "); the Lite estimate says nothing of a model's SR on them.", ""]
    lines += ["The runner plays one file of tasks at a time (`python main_threaded.py -t <name>` reads "
              "`data/<name>.json`): to play only the Lite tasks, put the elements of `livingscreen/*.json` whose "
              f"`task_id` is in the `{LITE_CONFIG}` config in `data/lite.json` and run it with `-t lite`.", ""]
    return lines

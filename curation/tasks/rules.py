"""The one rule set for tasks: every door (authoring import, `qc validate`, adjudication's revise,
`release build`, `grade`) judges a `TaskRecord` with these rules and nothing else.

Each rule has one stable code and one severity, declared once in `RULES`; a check names the code
and the severity comes from here, so no door can give a defect a verdict of its own.
`error` = the task cannot be run or graded as written (it may not ship); `warning` = a person
should look, the task may be what its author meant; `info` = a normal fact worth counting.
Every message shows the offending value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from curation.env.profile import RunnerProfile, accepted_ungradable, default_profile
from curation.env.vocabulary import CATEGORY, FRACTION, POSITION, SECONDS, VOCABULARY
from curation.tasks.idle import IdleFacts, passes_idle
from curation.tasks.perfect import prove_perfect
from curation.tasks.record import TaskRecord
from curation.tasks.taxonomy import Taxonomy, load_taxonomy

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    asks: str  # what a task must do to pass, in one line


RULES: dict[str, Rule] = {r.code: r for r in (
    Rule("duplicate-task-id", ERROR, "a task id names one task"),
    Rule("unknown-subcategory", ERROR, "the sub-category is one of the taxonomy's"),
    Rule("tier-mismatch", ERROR, "the tier is the sub-category's tier"),
    Rule("eval-type-unknown", ERROR, "eval_type is 'label' or 'platform'"),
    Rule("eval-type-mismatch", ERROR, "the eval type is the sub-category's"),
    Rule("instruction-empty", ERROR, "the instruction says something"),
    Rule("feed-empty", ERROR, "the feed holds at least one video"),
    Rule("feed-too-long", ERROR, "a feed holds no video the runner's 'no other video' rule does not read (the "
         "runner profile's longest feed)"),
    Rule("feed-duplicate-video", WARNING, "a video stands once in a feed"),
    Rule("feed-source-not-served", ERROR, "every video is of a source the target runner serves (the runner "
         "profile's [sources])"),
    Rule("feed-unknown-video", ERROR, "every video of the feed is in the catalog"),
    Rule("feed-video-not-playable", ERROR, "every video has a normalised file once its source's media was scanned"),
    Rule("feed-video-no-media-yet", WARNING, "videos of sources without scanned media may not play"),
    Rule("feed-keyword-other-overlap", WARNING, "no video is both an anchor and a distractor"),
    Rule("feed-edited", INFO, "edits of the base feed are counted"),
    Rule("feed-ratio-out-of-range", WARNING, "the base feed's distractor ratio stays in the configured range"),
    Rule("feed-ratio-drifted", WARNING, "the feed as the task plays it, after its edits, keeps its distractor ratio "
         "in the configured range"),
    Rule("feed-edit-unreadable", ERROR, "feed edits are lines of order, delete or swap the feed allows"),
    Rule("options-unparsed", ERROR, "a label task offers at least two lettered options"),
    Rule("answer-missing", ERROR, "a label task has an answer"),
    Rule("answer-malformed", ERROR, "the answer is one option letter"),
    Rule("answer-not-an-option", ERROR, "the answer is one of the options"),
    Rule("no-cannot-determine-option", WARNING, "a robust-evaluation task offers a 'cannot be determined' option"),
    Rule("label-has-end-state", ERROR, "a label task has no expected end state"),
    Rule("end-state-unreadable", ERROR, "every end-state line reads as a check"),
    Rule("checks-missing", ERROR, "a platform task has at least one check"),
    Rule("platform-has-answer", ERROR, "a platform task has checks, not an answer letter"),
    Rule("unknown-func", ERROR, "each check's func is one the runner grades"),
    Rule("unexpected-arg", ERROR, "a check carries only its func's arguments"),
    Rule("missing-arg", ERROR, "a check carries its func's required arguments"),
    Rule("position-not-integer", ERROR, "positions are whole numbers"),
    Rule("position-outside-feed", ERROR, "positions point into the feed"),
    Rule("report-category-unknown", ERROR, "a report category is one the app offers (or any category)"),
    Rule("target-pct-out-of-range", ERROR, "target_pct lies in [0, 1]"),
    Rule("target-sec-negative", ERROR, "target_sec is not negative"),
    Rule("target-sec-beyond-duration", ERROR, "target_sec lies within the video"),
    Rule("comment-text-missing", WARNING, "a comment the instruction quotes is in its check"),
    Rule("near-duplicate-task", WARNING, "no two tasks share feed and instruction"),
    Rule("passes-without-acting", ERROR, "a platform task is not passed by an agent that does nothing (its checks "
         "do not already hold on the state the runner's app starts in)"),
    Rule("unsatisfiable", ERROR, "a platform task is passed by a perfect agent: the plan its checks ask for, played "
         "in the replay of the runner's app, meets every check"),
    Rule("ungradable-in-runner", ERROR, "every check is one the target runner can grade (the runner profile's "
         "[grading] ungradable)"),
    Rule("ungradable-accepted", INFO, "a check the runner profile cannot grade ships because the release states "
         "why its runner grades it"),
)}

ARGS = {func: (set(spec.required), set(spec.optional)) for func, spec in VOCABULARY.items()}
_QUOTE = re.compile(r"[“\"「『]([^”\"」』]{1,200})[”\"」』]")


@dataclass(frozen=True)
class Defect:
    task_id: str
    code: str
    message: str

    @property
    def severity(self) -> str:
        return RULES[self.code].severity

    def line(self) -> str:
        return f"{self.task_id}\t{self.severity}\t{self.code}\t{self.message}"

    def as_dict(self) -> dict[str, str]:
        return {**asdict(self), "severity": self.severity}


@dataclass
class RuleContext:
    """What the catalog knows about the videos; a door that knows less passes less, and the rules
    that need the missing facts do not run (they never guess)."""
    known_videos: set[str] | None = None
    durations: dict[str, float] = field(default_factory=dict)
    playable: set[str] | None = None
    scanned_sources: set[str] = field(default_factory=set)
    ratio_range: tuple[float, float] = (0.5, 2.0)
    taxonomy: Taxonomy = field(default_factory=load_taxonomy)
    # the comments each video starts with in the runner's app, as far as the catalog knows them (env/starts.py)
    starting_comments: dict[str, list[str]] | None = None
    profile: RunnerProfile = field(default_factory=default_profile)
    # why a check the profile cannot grade may ship ('' = it may not): `[runner] accept_ungradable`, or
    # `release build --accept-ungradable` for one release
    accept_ungradable: str = field(default_factory=accepted_ungradable)

    @property
    def idle_facts(self) -> IdleFacts:
        return IdleFacts(self.durations, self.starting_comments, self.profile)


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _check_feed(task: TaskRecord, ctx: RuleContext) -> Iterable[Defect]:
    tid, feed = task.task_id, task.video_feed
    if not feed:
        yield Defect(tid, "feed-empty", "video_feed is empty")
        return
    if len(feed) > ctx.profile.max_feed:
        profile = ctx.profile
        yield Defect(tid, "feed-too-long", f"{len(feed)} videos; {profile.name} reads positions "
                     f"{profile.others_first}-{profile.others_last} for other videos liked, collected or reported, "
                     f"so a feed holds at most {profile.max_feed}")
    refused = [v for v in feed if ctx.profile.source_of(v) is None]
    if refused:
        served = ", ".join(s.prefix for s in ctx.profile.sources.values())
        yield Defect(tid, "feed-source-not-served", f"{len(refused)} videos of a source {ctx.profile.name} does not "
                     f"serve, e.g. {refused[0]} (it serves {served})")
    for video, count in Counter(feed).items():
        if count > 1:
            where = " and ".join(str(i + 1) for i, v in enumerate(feed) if v == video)
            yield Defect(tid, "feed-duplicate-video",
                         f"{video} is in the feed {count} times, at positions {where} (from 1)")
    if ctx.known_videos is not None:
        unknown = [v for v in feed if v not in ctx.known_videos]
        if unknown:
            yield Defect(tid, "feed-unknown-video", f"{len(unknown)} videos not in the catalog, e.g. {unknown[0]}")
    if ctx.playable is not None:
        missing = [v for v in feed if v not in ctx.playable]
        scanned = [v for v in missing if v.split("/")[0] in ctx.scanned_sources]
        unscanned = [v for v in missing if v.split("/")[0] not in ctx.scanned_sources]
        if scanned:
            yield Defect(tid, "feed-video-not-playable",
                         f"{len(scanned)} videos the app cannot play (no normalised file), e.g. {scanned[0]}")
        if unscanned:
            yield Defect(tid, "feed-video-no-media-yet", f"{len(unscanned)} videos the app cannot play "
                         f"(source not playable, or no media yet), e.g. {unscanned[0]}")
    keyword, other = task.keyword_videos, task.other_videos
    if keyword is None and other is None:
        return
    # the lists describe the base feed as built; video_feed is after the annotator's edits
    keyword, other = keyword or [], other or []
    both = set(keyword) & set(other)
    if both:
        yield Defect(tid, "feed-keyword-other-overlap",
                     f"{len(both)} videos are both keyword and other videos, e.g. {sorted(both)[0]}")
    in_feed, base = set(feed), set(keyword) | set(other)
    deleted = [v for v in (*keyword, *other) if v not in in_feed]
    swapped_in = [v for v in feed if v not in base]
    if deleted or swapped_in:
        yield Defect(tid, "feed-edited", f"the base feed was edited: {len(deleted)} base videos deleted, "
                     f"{len(swapped_in)} videos swapped in")
    lo, hi = ctx.ratio_range
    if keyword and not lo <= len(other) / len(keyword) <= hi:
        yield Defect(tid, "feed-ratio-out-of-range",
                     f"base distractor ratio {len(other) / len(keyword):.2f} outside [{lo}, {hi}]")
    if keyword and (deleted or swapped_in):
        # what `curate feeds drift` flags: the edits moved the ratio of the feed the task is played on
        anchors = len(set(feed) & set(keyword))
        played = (len(feed) - anchors) / anchors if anchors else float("inf")
        if not lo <= played <= hi:
            yield Defect(tid, "feed-ratio-drifted", f"the feed as edited has distractor ratio "
                         f"{'no keyword video left' if not anchors else f'{played:.2f}'} outside [{lo}, {hi}] "
                         f"(base {len(other) / len(keyword):.2f})")


def _check_label(task: TaskRecord, ctx: RuleContext) -> Iterable[Defect]:
    tid, options, letters = task.task_id, task.options, ctx.taxonomy.option_letters
    config = task.eval_config if isinstance(task.eval_config, list) else []
    if len(options) < 2:
        yield Defect(tid, "options-unparsed", f"{len(options)} lettered options found (A: … B: …), at least 2 needed")
    if any(isinstance(c, dict) and "func" in c for c in config):
        yield Defect(tid, "label-has-end-state", "a label task has an expected end state too; keep one of them")
    answers = [c for c in config if isinstance(c, dict) and "func" not in c]
    answer = answers[0].get("answer") if answers else None
    if len(answers) > 1:
        shown = ", ".join(_show(a.get("answer")) for a in answers)
        yield Defect(tid, "answer-malformed", f"{len(answers)} answers ({shown}); a label task has exactly one")
    elif answer is None or answer == "":
        yield Defect(tid, "answer-missing", 'the answer is ""' if answers and answer == "" else "no answer given")
    elif not isinstance(answer, str) or not re.fullmatch(f"[{letters}]", answer):
        yield Defect(tid, "answer-malformed", f"answer {_show(answer)} is not one letter {letters[0]}–{letters[-1]}")
    elif options and answer not in options:
        yield Defect(tid, "answer-not-an-option",
                     f"answer {_show(answer)} is not among the options {', '.join(sorted(options))}")
    sub = ctx.taxonomy.subcategories.get(task.subcategory or "")
    if sub and sub.requires_cannot_determine and options and not ctx.taxonomy.offers_cannot_determine(options):
        yield Defect(tid, "no-cannot-determine-option", "robust-evaluation tasks offer a 'none of the above' / "
                     f"'cannot be determined' option; none of {', '.join(sorted(options))} reads like one")


def _check_platform(task: TaskRecord, ctx: RuleContext) -> Iterable[Defect]:
    tid, feed = task.task_id, task.video_feed
    for problem in task.unreadable:
        yield Defect(tid, "end-state-unreadable", problem)
    config = task.eval_config
    if not isinstance(config, list) or not config:
        if not task.unreadable:
            yield Defect(tid, "checks-missing", f"eval_config {_show(config)}: write one check per line, e.g. 'like 3'")
        return
    commented_text = False
    for n, check in enumerate(config, start=1):
        where = f"check {n}"
        if isinstance(check, dict) and "func" not in check and "answer" in check:
            yield Defect(tid, "platform-has-answer", f"{where}: answer {_show(check['answer'])} in a platform task")
            continue
        func = check.get("func") if isinstance(check, dict) else None
        if func not in ARGS:
            yield Defect(tid, "unknown-func", f"{where}: func {_show(func)} is not one of {', '.join(ARGS)}")
            continue
        args = check.get("args") if isinstance(check.get("args"), dict) else {}
        required, optional = ARGS[func]
        extra = set(args) - required - optional
        if extra:
            yield Defect(tid, "unexpected-arg", f"{where}: {func} takes no {', '.join(sorted(extra))}")
        missing = required - set(args)
        if missing:
            yield Defect(tid, "missing-arg", f"{where}: {func} needs {', '.join(sorted(missing))}")
            continue
        spec = VOCABULARY[func]
        if spec.one_of and not any(args.get(name) is not None for name in spec.one_of):
            yield Defect(tid, "missing-arg", f"{where}: {func} needs {' or '.join(spec.one_of)}")
        ids = args.get(spec.position_arg)
        if isinstance(ids, list) and spec.required[spec.position_arg] == POSITION:
            yield Defect(tid, "position-not-integer", f"{where}: {spec.position_arg} {_show(ids)} is not one "
                         f"position; {func} reads one video")
            continue
        for position in ids if isinstance(ids, list) else [ids]:
            if not isinstance(position, int) or isinstance(position, bool):
                yield Defect(tid, "position-not-integer", f"{where}: position {_show(position)} is not a whole number")
            elif not 0 <= position < len(feed):
                yield Defect(tid, "position-outside-feed", f"{where}: position {position} (video {position + 1} as "
                             f"annotators count) is outside the feed of {len(feed)} videos")
        for name, kind in spec.args.items():
            if args.get(name) is not None and kind in ARG_CHECKS:
                yield from ARG_CHECKS[kind](tid, where, name, args, feed, ctx)
        if func == "eval_comment" and args.get("comment"):
            commented_text = True
    quoted = _QUOTE.search(task.question or "")
    if quoted and any(isinstance(c, dict) and c.get("func") == "eval_comment" for c in config) and not commented_text:
        yield Defect(tid, "comment-text-missing",
                     f"the instruction quotes {quoted.group(1)!r} but no comment check gives the text")


def _category(tid: str, where: str, name: str, args: dict[str, Any], feed: list[str], ctx: RuleContext
              ) -> Iterable[Defect]:
    if args[name] not in ctx.taxonomy.report_categories:
        yield Defect(tid, "report-category-unknown", f"{where}: report category {_show(args[name])} is not one of "
                     f"{', '.join(ctx.taxonomy.report_categories)} (or 'any')")


def _fraction(tid: str, where: str, name: str, args: dict[str, Any], feed: list[str], ctx: RuleContext
              ) -> Iterable[Defect]:
    value = args[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        yield Defect(tid, "target-pct-out-of-range", f"{where}: {name} {_show(value)} is not in [0, 1]")


def _seconds(tid: str, where: str, name: str, args: dict[str, Any], feed: list[str], ctx: RuleContext
             ) -> Iterable[Defect]:
    value, position = args[name], args.get("video_id")
    video = feed[position] if isinstance(position, int) and 0 <= position < len(feed) else None
    duration = ctx.durations.get(video) if video else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        yield Defect(tid, "target-sec-negative", f"{where}: {name} {_show(value)} is below 0")
    elif duration is not None and value > duration:
        yield Defect(tid, "target-sec-beyond-duration", f"{where}: {name} {value} is beyond the video's "
                     f"{duration:.1f} s")


# what an argument of each type must be (curation/env/vocabulary.py gives each argument its type)
ARG_CHECKS = {CATEGORY: _category, FRACTION: _fraction, SECONDS: _seconds}


def _check_idle(task: TaskRecord, ctx: RuleContext) -> Iterable[Defect]:
    held = passes_idle(task.eval_config, task.video_feed, ctx.idle_facts)
    if held is not None:
        yield Defect(task.task_id, "passes-without-acting", f"an agent that does nothing passes it: "
                     f"{'; '.join(held.checks)} hold {held.window} (nothing liked, collected or reported; each "
                     f"video with the comments it starts with; video {ctx.profile.autoplay_position + 1} on screen and "
                     "playing in a loop)")


def _check_perfect(task: TaskRecord, ctx: RuleContext) -> Iterable[Defect]:
    verdict = prove_perfect(task.eval_config, task.video_feed, ctx.idle_facts)
    if verdict.ungradable and ctx.accept_ungradable:
        yield Defect(task.task_id, "ungradable-accepted", f"{', '.join(verdict.ungradable)}: {verdict.reason}; "
                     f"shipped because: {ctx.accept_ungradable}")
        # the runner it is played in grades the check: a perfect agent must still pass it there
        grading = replace(ctx.idle_facts, profile=replace(ctx.profile, ungradable=frozenset()))
        verdict = prove_perfect(task.eval_config, task.video_feed, grading)
    if verdict.ungradable:
        yield Defect(task.task_id, "ungradable-in-runner", f"{verdict.reason}: every agent's episode is lost on it "
                     "there; state a runner profile that grades it, or accept it for a release with a reason")
    elif verdict.passed is False:
        yield Defect(task.task_id, "unsatisfiable", f"a perfect agent cannot pass it: {verdict.reason} (the plan: "
                     f"{plan_line(verdict.turns)})")


def plan_line(turns: list[list[tuple[str, dict[str, Any]]]]) -> str:
    return ", ".join(f"{name}({', '.join(f'{v}' for v in args.values())})" for turn in turns for name, args in turn
                     if name != "wait")


def end_state_errors(checks: list[dict[str, Any]], feed_len: int, ctx: RuleContext | None = None) -> list[str]:
    """What the rules find wrong in end-state checks alone, on a feed of `feed_len` videos: for a
    reviewer's own end state, which is compared with the author's, never stored as a task."""
    record = TaskRecord(task_id="(review)", tier=None, subcategory=None, eval_type="platform", question="",
                        options={}, eval_config=checks, video_feed=[f"#{i}" for i in range(feed_len)])
    return [d.message for d in _check_platform(record, ctx or RuleContext()) if d.severity == ERROR]


def check_task(task: TaskRecord, ctx: RuleContext | None = None) -> list[Defect]:
    """Every defect of one task (the rules that look at one task at a time)."""
    ctx = ctx or RuleContext()
    tid, taxonomy = task.task_id, ctx.taxonomy
    out: list[Defect] = []
    sub = taxonomy.subcategories.get(task.subcategory or "")
    if sub is None:
        out.append(Defect(tid, "unknown-subcategory", f"sub-category {_show(task.subcategory)} is not one of the "
                          "taxonomy's" if task.subcategory else "no sub-category chosen"))
    else:
        if task.tier and task.tier != sub.tier:
            out.append(Defect(tid, "tier-mismatch", f"sub-category {sub.id} belongs to {sub.tier}, not "
                              f"{_show(task.tier)}"))
        if task.eval_type in ("label", "platform") and task.eval_type != sub.eval_type:
            out.append(Defect(tid, "eval-type-mismatch",
                              f"{sub.id} tasks are {sub.eval_type} tasks, not {_show(task.eval_type)}"))
    if not (task.question or "").strip():
        out.append(Defect(tid, "instruction-empty", "the instruction is empty"))
    out.extend(Defect(tid, "feed-edit-unreadable", p) for p in task.feed_edit_problems)
    out.extend(_check_feed(task, ctx))
    if task.eval_type == "label":
        out.extend(_check_label(task, ctx))
    elif task.eval_type == "platform":
        out.extend(_check_platform(task, ctx))
        if not any(d.severity == ERROR for d in out):  # checks that read right: does doing nothing pass them?
            out.extend(_check_idle(task, ctx))
            out.extend(_check_perfect(task, ctx))
    elif sub is not None or task.eval_type is not None:
        out.append(Defect(tid, "eval-type-unknown",
                          f"eval_type {_show(task.eval_type)}: the runner grades 'label' or 'platform'"))
    return out


def check_tasks(tasks: Iterable[TaskRecord], ctx: RuleContext | None = None) -> list[Defect]:
    """Every defect of a set of tasks: each task's own, then what only the set shows (shared ids,
    the same feed and instruction twice)."""
    ctx = ctx or RuleContext()
    tasks = list(tasks)
    ids = Counter(t.task_id for t in tasks)
    out: list[Defect] = []
    first_with: dict[tuple[tuple[str, ...], str], str] = {}
    for task in tasks:
        if ids[task.task_id] > 1:
            out.append(Defect(task.task_id, "duplicate-task-id",
                              f"task id {task.task_id} is used {ids[task.task_id]} times"))
        out.extend(check_task(task, ctx))
        key = (tuple(task.video_feed), " ".join(task.instruction.split()))
        if key in first_with:
            out.append(Defect(task.task_id, "near-duplicate-task", f"same feed and instruction as {first_with[key]}"))
        else:
            first_with[key] = task.task_id
    return out


def errors_by_task(defects: Iterable[Defect]) -> dict[str, list[Defect]]:
    out: dict[str, list[Defect]] = {}
    for defect in defects:
        if defect.severity == ERROR:
            out.setdefault(defect.task_id, []).append(defect)
    return out


def reason_text(defects: Iterable[Defect]) -> str:
    """Findings as one reason for the life cycle: `code: message; code: message`."""
    return " | ".join(f"{d.code}: {d.message}" for d in defects)

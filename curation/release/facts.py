"""Every fact a release states about itself, computed once from the catalog and the release's rows: what
it holds, where its videos, feeds and tasks came from, who made and checked them (as counts of
pseudonyms), and what ran for which task. The card, Croissant (core and RAI), the release report and the
CLI render sentences from these values and nothing else, so no output names a tool, a stage or a count
that is not a fact here; the manifest keeps them (`facts`) so that anything written later from the
release folder says the same. A check with no record for a task is not claimed for it."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from curation.core.catalog import Catalog
from curation.core.sources import SOURCES
from curation.corpus.feeds import CARRIED_IN
from curation.qc.funnel import task_outcomes
from curation.qc.shortcut.prompts import read_by_some_inspector, reading
from curation.qc.shortcut.record import verdicts_in_force
from curation.release.contents import METADATA_PARTS, lacking

# what the degraded view shows each inspector (curation.qc.shortcut.prompts.degraded_view)
SEEN = "captions, hashtags, author names and author bios of the feed's videos, in feed order"
NOT_SEEN = "no video frames, audio, counts or comments"
BUILTIN = "builtin"  # the endpoint of an inspector that is code, not a model (LexicalInspector)


@dataclass
class InspectorFacts:
    name: str
    model: str = "?"
    is_model: bool = True     # a language model behind an endpoint, not the built-in lexical inspector
    views: list[str] = field(default_factory=list)   # "paper prompt (zh)", ...
    decided: int = 0          # gave an answer (a letter, or platform actions) on at least one sample
    right: int = 0            # ... and it was the task's answer
    abstained: int = 0        # said it cannot answer
    unreadable: int = 0       # said something that is no answer
    not_seen: int = 0         # never read the task (the lexical inspector reads multiple-choice tasks only)

    @property
    def saw(self) -> int:
        return self.decided + self.abstained + self.unreadable


@dataclass
class ReleaseFacts:
    tasks: int = 0
    tiers: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)              # eval_type -> tasks
    here: int = 0                                                     # written here (not inherited)
    inherited: dict[str, int] = field(default_factory=dict)          # reason (names the release) -> tasks
    authors: int = 0                                                  # pseudonyms authoring the tasks written here
    reviewers: int = 0                                                # pseudonyms reviewing shipped tasks
    videos: int = 0
    sources: dict[str, int] = field(default_factory=dict)            # source -> videos
    synthetic: int = 0
    without_metadata: int = 0                                         # `metadata_missing` videos
    lacking: dict[str, int] = field(default_factory=dict)            # METADATA_PARTS part -> videos lacking it
    with_media_hash: int = 0
    feeds: int = 0
    on_built_feeds: int = 0        # tasks on a feed the toolkit built from a cluster of this catalog
    on_carried_feeds: int = 0      # tasks on a feed that came with an imported release
    built_ratios: tuple[float, float] | None = None  # least and most distractors per anchor of those built feeds
    cluster_models: list[str] = field(default_factory=list)  # embedding models of the clusters they were built on
    origins: dict[str, int] = field(default_factory=dict)   # how each task version began: authored, imported
    judged: int = 0                # tasks whose verdict some inspector could read
    unread: int = 0                # tasks with a verdict no inspector could read (passed unjudged)
    not_judged: dict[str, int] = field(default_factory=dict)         # why the others have no verdict
    configurations: dict[str, int] = field(default_factory=dict)     # filter configuration -> tasks with a verdict
    inspectors: list[InspectorFacts] = field(default_factory=list)
    reviewed: int = 0              # reached reviewed_ok or escalated here
    blind_reviews: int = 0         # with a review recorded through the tool
    group_decisions: int = 0       # escalated and decided by the group (on any version of the task's path)
    catalog: dict[str, int] = field(default_factory=dict)            # funnel cells over the whole catalog
    ratio_range: tuple[float, float] = (0.5, 2.0)
    drifted: list[tuple[str, float | None]] = field(default_factory=list)  # task, its played feed's ratio

    @property
    def any_model(self) -> bool:
        return any(i.is_model and i.saw for i in self.inspectors)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ReleaseFacts:
        out = cls(**{k: v for k, v in body.items() if k not in ("inspectors", "ratio_range", "drifted")})
        out.inspectors = [InspectorFacts(**i) for i in body.get("inspectors", [])]
        low, high = body.get("ratio_range", (0.5, 2.0))  # JSON keeps the pairs as lists
        out.ratio_range = (low, high)
        built = body.get("built_ratios")
        out.built_ratios = (built[0], built[1]) if built else None
        out.drifted = [(t, r) for t, r in body.get("drifted", [])]
        return out


# the funnel cells over the catalog that outputs state (curation/qc/funnel.py names them)
CATALOG_CELLS = ("tasks", "authored_here", "imported", "went_through_review", "revised", "deleted", "kept")


def release_facts(catalog: Catalog, tasks: list[dict[str, Any]], videos: list[dict[str, Any]],
                  funnel: dict[str, Any], ratio_range: tuple[float, float] = (0.5, 2.0)) -> ReleaseFacts:
    """The facts of a release of `tasks` over `videos` (rows as the release ships them); `funnel`: the cells of
    `compute_funnel(catalog)["all"]`."""
    out = ReleaseFacts(tasks=len(tasks), tiers=dict(sorted(Counter(t["tier"] for t in tasks).items())),
                       kinds=dict(sorted(Counter(t["eval_type"] for t in tasks).items())),
                       videos=len(videos), ratio_range=ratio_range,
                       catalog={k: int(funnel.get(k) or 0) for k in CATALOG_CELLS})
    _video_facts(out, videos)
    inherited = Counter(t["qc"]["inherited_from"] for t in tasks if t["qc"].get("inherited_from"))
    out.inherited = dict(sorted(inherited.items()))
    out.here = len(tasks) - sum(inherited.values())
    out.authors = len({t["author_id"] for t in tasks if t["author_id"] and not t["qc"].get("inherited_from")})
    out.reviewers = len({t["reviewer_id"] for t in tasks if t["reviewer_id"]})
    _feed_facts(out, catalog, tasks)
    first = {o["task_id"]: o["origin"] for o in task_outcomes(catalog)}  # how each task's life began
    out.origins = dict(sorted(Counter(str(first.get(t["task_id"], "?")) for t in tasks).items()))
    _review_facts(out, catalog, tasks)
    _verdict_facts(out, catalog, tasks)
    for task in tasks:
        ratio = played_ratio(task)
        if isinstance(ratio, str):  # as built: the ratio the feed was built to
            continue
        if ratio is None or not ratio_range[0] <= ratio <= ratio_range[1]:
            out.drifted.append((task["task_id"], ratio))
    return out


def _video_facts(out: ReleaseFacts, videos: list[dict[str, Any]]) -> None:
    sources = Counter(v["source"] for v in videos)
    out.sources = dict(sorted(sources.items()))
    out.synthetic = sum(n for s, n in sources.items() if s in SOURCES and SOURCES[s].synthetic)
    out.without_metadata = sum(1 for v in videos if v["metadata_missing"])
    parts = Counter(part for v in videos for part in lacking(v))
    out.lacking = {part: parts[part] for part in METADATA_PARTS}
    out.with_media_hash = sum(1 for v in videos if v["media_sha256"])


def _feed_facts(out: ReleaseFacts, catalog: Catalog, tasks: list[dict[str, Any]]) -> None:
    """Where each task's feed came from: built here from a cluster (it names the cluster run), or carried in."""
    keys = sorted({(t["feed_id"], t["feed_version"]) for t in tasks})
    out.feeds = len(keys)
    built = {(r[0], r[1]): (r[2], r[3]) for r in catalog.con.execute(
        "SELECT f.feed_id, f.version, b.ratio, b.cluster_run FROM feeds f JOIN feeds b ON b.feed_id = f.feed_id "
        "WHERE b.version = 1 AND b.cluster_run <> ?", [CARRIED_IN]).fetchall()}
    on_built = [built[k] for k in ((t["feed_id"], t["feed_version"]) for t in tasks) if k in built]
    out.on_built_feeds = len(on_built)
    out.on_carried_feeds = len(tasks) - out.on_built_feeds
    ratios = [r for r, _ in on_built if r is not None]
    out.built_ratios = (min(ratios), max(ratios)) if ratios else None
    runs = sorted({run for _, run in on_built})
    out.cluster_models = sorted({str(m) for (m,) in catalog.con.execute(
        "SELECT DISTINCT json_extract_string(params, '$.model') FROM runs WHERE list_contains(?, run_id)",
        [runs]).fetchall() if m})


def _review_facts(out: ReleaseFacts, catalog: Catalog, tasks: list[dict[str, Any]]) -> None:
    keys = [(t["task_id"], t["task_version"]) for t in tasks]
    reached = defaultdict(set)
    for task_id, version, state in catalog.con.execute(
            "SELECT task_id, version, to_state FROM task_transitions WHERE to_state IN ('reviewed_ok', 'escalated')"
    ).fetchall():
        reached[(task_id, version)].add(state)
    reviews = {(r[0], r[1]) for r in catalog.con.execute("SELECT task_id, task_version FROM reviews").fetchall()}
    decided: dict[str, int] = {}
    for task_id, version in catalog.con.execute("SELECT task_id, min(task_version) FROM decisions GROUP BY 1"
                                                ).fetchall():
        decided[task_id] = version
    out.reviewed = sum(1 for k in keys if reached[k])
    out.blind_reviews = sum(1 for k in keys if k in reviews)
    # a decision on any version of the task's path counts (a revision ships the version after it)
    out.group_decisions = sum(1 for task_id, version in keys if decided.get(task_id, version + 1) <= version)


def _verdict_facts(out: ReleaseFacts, catalog: Catalog, tasks: list[dict[str, Any]]) -> None:
    verdicts = verdicts_in_force(catalog)
    specs: dict[str, dict[str, Any]] = {}
    for run_id, params in catalog.con.execute("SELECT run_id, params FROM runs WHERE stage = 'qc-shortcut'"
                                              ).fetchall():
        specs[run_id] = _json(params)
    inspectors: dict[str, InspectorFacts] = {}
    views: dict[str, set[str]] = defaultdict(set)
    not_judged: Counter[str] = Counter()
    configurations: Counter[str] = Counter()
    for task in tasks:
        inherited = task["qc"].get("inherited_from")
        verdict = verdicts.get((task["task_id"], task["task_version"]))
        if verdict is None:
            not_judged[_why_not_judged(catalog, task["task_id"], task["task_version"], inherited)] += 1
            continue
        configurations[verdict["config_sha256"]] += 1
        if read_by_some_inspector(verdict["answers"]):
            out.judged += 1
        else:
            out.unread += 1
        params = specs.get(verdict["run_id"], {})
        named = {i.get("name"): i for i in params.get("inspectors", [])}
        by_inspector: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for answer in verdict["answers"]:
            by_inspector[answer["inspector"]].append(answer)
        for name, answers in by_inspector.items():
            spec = named.get(name, {})
            facts = inspectors.setdefault(name, InspectorFacts(name, str(spec.get("model", "?")),
                                                               spec.get("endpoint") != BUILTIN))
            views[name].add(f"{params.get('template', '?')} prompt ({params.get('language', '?')})")
            kind = reading(answers)
            setattr(facts, kind, getattr(facts, kind) + 1)
            facts.right += kind == "decided" and any(a.get("correct") for a in answers)
    for name, facts in inspectors.items():
        facts.views = sorted(views[name])
    out.inspectors = sorted(inspectors.values(), key=lambda i: i.name)
    out.not_judged = dict(sorted(not_judged.items()))
    out.configurations = dict(sorted(configurations.items()))


def _json(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def played_ratio(task: dict[str, Any]) -> float | None | str:
    """Distractors per anchor video in the feed the task is played on; "as built" when its edits changed nothing
    of the base feed's videos, None when no anchor video is left."""
    anchors, feed = set(task["anchor_videos"]), task["video_feed"]
    base = anchors | set(task["distractor_videos"])
    if not anchors or set(feed) == base:
        return "as built"
    kept = len(anchors & set(feed))
    return (len(feed) - kept) / kept if kept else None


NOT_JUDGED_INHERITED = "inherited from another release, kept as published"
NOT_JUDGED_TIER = "platform tasks of a tier the filter does not judge (qc.shortcut.platform_tiers)"
NOT_JUDGED_NONE = "no verdict recorded in the catalog"


def _why_not_judged(catalog: Catalog, task_id: str, version: int, inherited: str | None) -> str:
    if inherited:
        return NOT_JUDGED_INHERITED
    reason = catalog.scalar("SELECT reason FROM task_transitions WHERE task_id = ? AND version = ? AND to_state = "
                            "'shortcut_passed' ORDER BY seq LIMIT 1", [task_id, version])
    if reason and str(reason).startswith("not filtered"):
        return NOT_JUDGED_TIER
    return NOT_JUDGED_NONE


def plural(n: int, word: str, verb: str = "") -> str:
    """"1 task", "2 tasks"; with `verb` ("was/were") the verb agreeing with them."""
    one, _, many = verb.partition("/")
    return f"{n} {word}{'' if n == 1 else 's'}" + (f" {one if n == 1 else many}" if verb else "")


def inspector_phrase(inspector: InspectorFacts) -> str:
    """What an inspector is, in a sentence: a model is named, the lexical inspector is said to be none."""
    return (f"a language model ({inspector.model})" if inspector.is_model
            else f"the built-in lexical inspector ({inspector.name}, no model: option words against the metadata)")


def inspectors_phrase(facts: ReleaseFacts) -> str:
    """The inspectors that read at least one shipped task."""
    return " and ".join(inspector_phrase(i) for i in facts.inspectors if i.saw) or "no inspector"


def summary_line(facts: ReleaseFacts) -> str:
    """What ran for the shipped tasks, in one line (the release build's output, the release report)."""
    inherited = sum(facts.inherited.values())
    return (f"{facts.judged} of {plural(facts.tasks, 'task')} judged by the shortcut filter"
            + (f" ({facts.unread} passed unread)" if facts.unread else "")
            + (f" under {len(facts.configurations)} configurations" if len(facts.configurations) > 1 else "")
            + f", {facts.blind_reviews} blind-reviewed, {facts.group_decisions} decided by the group, "
            f"{inherited} inherited; feeds: {facts.on_built_feeds} built here, {facts.on_carried_feeds} carried in; "
            f"{facts.without_metadata} of {plural(facts.videos, 'video')} without public metadata")

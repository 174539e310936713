"""`croissant.json`: a release described in Croissant 1.0 with the Responsible-AI vocabulary (RAI 1.0), so
that `mlcroissant`, the Hub and dataset search engines read the same release the card describes.

Everything comes from the built folder: the manifest (version, configs, sha256 of every file), the parquet
schemas (field types), the rows (counts for the RAI texts). No clock: the same folder gives the same bytes,
unless a publication date is passed in. The RAI property names are those of the RAI 1.0 vocabulary as
mlcroissant 1.1.1 reads them; two that mlcroissant spells differently from the spec's vocabulary
(the collection timeframe, the manipulation protocol) and `hasSyntheticData`, which RAI 1.0 does not define,
are left out, and what they would say is in the texts below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.core.config import ReleaseConfig
from curation.release.card import SOURCE_TERMS, data_path
from curation.release.card_text import PAPER_BIBTEX
from curation.release.contents import CONFIGS
from curation.release.facts import ReleaseFacts, inspector_phrase, inspectors_phrase, plural
from curation.release.lite_config import LITE_CONFIG, LITE_FILE
from curation.release.manifest import file_sha256, read_manifest

CROISSANT = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/", "citeAs": "cr:citeAs", "column": "cr:column", "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"}, "extract": "cr:extract", "field": "cr:field",
    "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject", "fileSet": "cr:fileSet", "format": "cr:format",
    "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset", "jsonPath": "cr:jsonPath", "key": "cr:key",
    "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path", "recordSet": "cr:recordSet",
    "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated", "replace": "cr:replace",
    "samplingRate": "cr:samplingRate", "equivalentProperty": "cr:equivalentProperty", "separator": "cr:separator",
    "source": "cr:source", "subField": "cr:subField", "transform": "cr:transform"}
PARQUET, JSON_FORMAT = "application/x-parquet", "application/json"
SIDE_TABLES = {"videos": "videos.parquet", "feeds": "feeds.parquet"}
COLUMN_NOTES = {
    "instruction": "The question or command shown to the agent, without its options.",
    "options": "Answer options of a label task (empty for platform tasks).",
    "answer": "The correct option's letter (label tasks only).",
    "eval_config": "JSON: the answer, or the checks on the app's final state.",
    "runner_instruction": "The instruction exactly as the LivingScreen runner shows it.",
    "video_feed": "Video ids in the order the feed plays them.",
    "qc": "Shortcut verdict and answers, review outcome and group decision.",
}


def _scalar_type(kind: pa.DataType) -> str:
    if pa.types.is_boolean(kind):
        return "sc:Boolean"
    if pa.types.is_integer(kind):
        return "sc:Integer"
    if pa.types.is_floating(kind):
        return "sc:Float"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "sc:Text"
    raise ValueError(f"no Croissant type for parquet type {kind}")


def field_for(record_set: str, file_id: str, arrow: pa.Field, parent: str | None = None) -> dict[str, Any]:
    """One `cr:Field` for a parquet column. A list is `repeated` (Croissant 1.0's word); a struct, or a list of
    structs, gets one subField per member, each read from the parent column through a jsonPath: mlcroissant
    reads that back as a dict (or a list of dicts) with the member values, as pandas holds the column."""
    field_id = f"{parent or record_set}/{arrow.name}"
    out: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": arrow.name}
    if arrow.name in COLUMN_NOTES and parent is None:
        out["description"] = COLUMN_NOTES[arrow.name]
    kind, repeated = arrow.type, False
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        kind, repeated = kind.value_type, True
    column = parent.split("/", 1)[1] if parent else arrow.name
    source: dict[str, Any] = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
    if parent:
        source["transform"] = {"jsonPath": arrow.name}
    if pa.types.is_struct(kind):
        if parent:
            raise ValueError(f"{field_id}: structs nested two deep are not described")
        out["subField"] = [field_for(record_set, file_id, kind.field(i), field_id) for i in range(kind.num_fields)]
    else:
        out["dataType"] = _scalar_type(kind)
        out["source"] = source
    if repeated:
        out["repeated"] = True
    return out


def record_set(name: str, file_id: str, schema: pa.Schema, description: str) -> dict[str, Any]:
    return {"@type": "cr:RecordSet", "@id": name, "name": name, "description": description,
            "field": [field_for(name, file_id, schema.field(i)) for i in range(len(schema))]}


def _file(file_id: str, path: str, fmt: str, sha256: str, description: str) -> dict[str, Any]:
    return {"@type": "cr:FileObject", "@id": file_id, "name": path, "description": description, "contentUrl": path,
            "encodingFormat": fmt, "sha256": sha256}


def _config_description(config: str, manifest: dict[str, Any]) -> str:
    tier = next((t for t, c in CONFIGS.items() if c == config), None)
    if config == "all":
        return "Every task of the release, one row each."
    if tier:
        return f"The tasks of tier {tier} ({config.split('_', 1)[1].replace('_', ' ')})."
    if config == LITE_CONFIG:
        lite = manifest["counts"]["lite"]
        return (f"A Lite subset: {lite['tasks']} tasks chosen from the graded episodes of v{lite['evidence_release']} "
                f"so that a model's SR on them estimates its SR on the {lite['eligible']} tasks graded there "
                f"({LITE_FILE}, the dataset card).")
    return f"Only the tasks added since v{manifest.get('parent')}."


def _protocol(facts: ReleaseFacts) -> str:
    n = facts.tasks
    steps = [f"every task passed the task rules at the release gate ({plural(n, 'task')})"]
    if facts.judged:
        steps.append(f"{facts.judged} of {n} were judged by a metadata-only shortcut filter ({inspectors_phrase(facts)}"
                     ", shown only titles, hashtags and bios, must not solve the task)")
    if len(facts.configurations) > 1:
        steps.append(f"the filter's verdicts were given under {len(facts.configurations)} configurations")
    if facts.unread:
        steps.append(f"{facts.unread} of {n} passed that filter unjudged: no inspector could read them")
    if facts.blind_reviews:
        steps.append(f"{facts.blind_reviews} of {n} carry a blind review by a second annotator")
    if facts.group_decisions:
        steps.append(f"{facts.group_decisions} were decided by the group after a disagreement (kept or revised)")
    text = "; ".join(steps) + "."
    for reason, k in facts.inherited.items():
        text += f" {plural(k, 'task', 'was/were')} {reason}, without this team's shortcut filter or review."
    if facts.here and not (facts.judged or facts.blind_reviews):
        text += f" {plural(facts.here, 'task', 'was/were')} written here with no shortcut verdict or review on record."
    return text


def _missing(facts: ReleaseFacts) -> str:
    parts = ", ".join(f"{part} {n}" for part, n in facts.lacking.items())
    return (f"{facts.without_metadata} of {plural(facts.videos, 'video')} have no public metadata (no caption, "
            "hashtags, author or counts, or only a stub in the catalog); the `metadata_missing` column of "
            f"videos.parquet marks them. Videos lacking each part: {parts}.")


def rai_fields(facts: ReleaseFacts, contact: str | None = None, with_media: bool = False) -> dict[str, Any]:
    """The RAI texts, each rendered from the release's facts (`facts.ReleaseFacts`, kept in the manifest); fixed
    statements only where they hold for any release."""
    per_tier = ", ".join(f"{tier} {n}" for tier, n in facts.tiers.items())
    inherited = sum(facts.inherited.values())
    real = facts.videos - facts.synthetic
    raw = [f"{source}: {plural(n, 'video')}; {SOURCE_TERMS.get(source, 'its terms are not recorded here.')}"
           for source, n in facts.sources.items()]
    feeds = []
    if facts.on_built_feeds:
        feeds.append(f"{plural(facts.on_built_feeds, 'task', 'is/are')} played on feeds built here by clustering the "
                     "videos' keyword sets and mixing videos of one cluster (the anchors a task is about) with "
                     "distractors from other clusters")
    if facts.on_carried_feeds:
        feeds.append(f"{plural(facts.on_carried_feeds, 'task', 'is/are')} played on feeds that came with an "
                     "imported release")
    made_here = (f"{plural(facts.here, 'task', 'was/were')} written or checked here by "
                 f"{plural(facts.authors, 'annotator')}." if facts.here else "")
    carried = " ".join(f"{plural(k, 'task', 'was/were')} {reason}." for reason, k in facts.inherited.items())
    catalog = facts.catalog
    return {
        "rai:dataCollection": " ".join(part for part in (
            f"{plural(facts.tasks, 'task')} ({per_tier}) over {plural(facts.videos, 'short video')} from "
            f"{plural(len(facts.sources), 'source')}.", made_here, carried,
            ("; ".join(feeds) + ".") if feeds else "") if part),
        "rai:dataCollectionType": [*(["Manual Human Curator"] if facts.here else []),
                                   *(["Secondary Data analysis", "User-generated content data"] if real else []),
                                   *(["Others"] if facts.synthetic else [])],
        "rai:dataCollectionRawData": " ".join(raw) + (
            f" {plural(facts.synthetic, 'video')} in this release {'is' if facts.synthetic == 1 else 'are'} "
            "synthetic, generated for the benchmark; the rest are real user uploads." if facts.synthetic else
            " No video in this release is synthetic."),
        "rai:dataCollectionMissingData": _missing(facts),
        "rai:dataPreprocessingProtocol": [
            *(["Keyword sets were extracted from each video's caption, hashtags and author bio, embedded"
               + (f" ({', '.join(facts.cluster_models)})" if facts.cluster_models else "")
               + ", and clustered; feeds draw anchors from one cluster and distractors from others at a recorded "
               f"ratio (the feeds of {plural(facts.on_built_feeds, 'task')})."] if facts.on_built_feeds else []),
            "Author and reviewer identities are replaced by stable pseudonyms (annotator-NNN)."],
        "rai:dataAnnotationProtocol": [
            f"Each task is an instruction over a feed, graded either by a multiple-choice answer "
            f"({plural(facts.kinds.get('label', 0), 'label task')}) or by checks on the app's final state "
            f"({plural(facts.kinds.get('platform', 0), 'platform task')}).", _protocol(facts)],
        "rai:dataAnnotationPlatform": ["Label Studio"] if facts.origins.get("authored") else [],
        "rai:dataAnnotationAnalysis": [
            f"{facts.blind_reviews} of {facts.tasks} tasks carry a recorded blind-review outcome and "
            f"{facts.group_decisions} a group decision; {inherited} were inherited. Across the catalog's "
            f"{plural(catalog.get('tasks', 0), 'task')}, {catalog.get('went_through_review', 0)} went through "
            f"review; the group deleted {catalog.get('deleted', 0)} and {catalog.get('revised', 0)} were revised; "
            "only kept or approved tasks ship."],
        "rai:annotationsPerItem": "; ".join(part for part in (
            f"{facts.blind_reviews} tasks: one author and one blind reviewer" if facts.blind_reviews else "",
            f"{facts.group_decisions} tasks: a group decision" if facts.group_decisions else "",
            f"{facts.here - facts.blind_reviews} tasks: one author, no blind review on record"
            if facts.here > facts.blind_reviews else "",
            f"{inherited} tasks: as the release they were inherited from made them" if inherited else "")
            if part) + ".",
        "rai:annotatorDemographics": ["not collected"],
        "rai:machineAnnotationTools": [
            *(f"{inspector_phrase(i)[0].upper()}{inspector_phrase(i)[1:]} answering tasks from video metadata "
              f"alone (the shortcut filter, read {plural(i.saw, 'task')})." for i in facts.inspectors if i.saw),
            *([f"A sentence-embedding model ({', '.join(facts.cluster_models) or 'not recorded'}) for keyword-set "
               "clustering."] if facts.on_built_feeds else [])],
        "rai:personalSensitiveInformation": [
            "Videos are public user uploads: captions, hashtags, author names and bios as their platforms "
            "showed them, which can name or describe real people.",
            "No annotator is named: authors and reviewers appear only as pseudonyms; no demographics were kept."],
        "rai:dataBiases": [
            "Sources: " + ", ".join(f"{s} {n / max(facts.videos, 1):.0%}" for s, n in facts.sources.items())
            + " of the videos; the content is mostly Chinese-language short video and reflects what those "
              "corpora collected, not short-video platforms at large.",
            f"Tiers are not balanced: {per_tier}."
            + (f" The {plural(facts.here, 'task')} written here come from {plural(facts.authors, 'annotator')}, "
               "whose choices of question and answer shape the benchmark." if facts.here else "")
            + (f" Who wrote the {inherited} inherited tasks is not recorded here." if inherited else "")],
        "rai:dataLimitations": [
            "Meant for evaluation of GUI agents in the LivingScreen environment; not a training set, and "
            "scores do not transfer to other apps or languages without checking.",
            "Normalised video files ship in media/; results depend on the same files." if with_media else
            "Video files are not shipped; results depend on obtaining the same videos from their sources."],
        "rai:dataUseCases": ["Testing: benchmark GUI agents on a short-video app whose screen keeps changing.",
                             "Not validated for training, fine-tuning, or judging people."],
        "rai:dataSocialImpact": (
            "Better agents for attention-heavy apps can help users (accessibility, moderation support) and can "
            "also automate engagement or reporting at scale; the moderation tasks are for measurement, not "
            "for deploying automated reporting."),
        "rai:dataReleaseMaintenancePlan": (
            "Releases are immutable and semantically versioned: a minor version adds tasks, a major one removes "
            "or rewords them, each with a CHANGELOG and a manifest of sha256 hashes; "
            + (f"problems reported to {contact} are fixed in the next version." if contact else
               "no contact for reporting problems is stated.")),
    }


def croissant_metadata(folder: Path, settings: ReleaseConfig, *, repo: str | None = None,
                       date_published: str | None = None) -> dict[str, Any]:
    """Croissant 1.0 + RAI 1.0 metadata of a built release folder (its manifest must be written)."""
    manifest = read_manifest(folder)
    hashes = {name: entry["sha256"] for name, entry in manifest.get("files", {}).items()}

    def sha(path: str) -> str:  # the manifest's hash; a file added since is hashed here
        return hashes.get(path) or file_sha256(folder / path)

    version = manifest["version"]
    facts = ReleaseFacts.from_json(manifest["facts"])
    distribution, record_sets = [], []
    for config in manifest["configs"]:
        path, file_id = data_path(config), f"parquet-{config}"
        distribution.append(_file(file_id, path, PARQUET, sha(path), f"Parquet file of the `{config}` config."))
        record_sets.append(record_set(config, file_id, pq.read_schema(folder / path),
                                      _config_description(config, manifest)))
    for name, path in SIDE_TABLES.items():
        if (folder / path).is_file():
            distribution.append(_file(f"parquet-{name}", path, PARQUET, sha(path), f"The release's {name}."))
            record_sets.append(record_set(name, f"parquet-{name}", pq.read_schema(folder / path),
                                          "Visible metadata, source and media hash of every video a feed uses."
                                          if name == "videos" else "Every feed version a task uses."))
    for runner in sorted((folder / "livingscreen").glob("*.json")):
        path = runner.relative_to(folder).as_posix()
        distribution.append(_file(f"runner-{runner.stem}", path, JSON_FORMAT, sha(path),
                                  "Tasks in the LivingScreen runner's format."))
    if (folder / LITE_FILE).is_file():
        distribution.append(_file("lite-estimator", LITE_FILE, JSON_FORMAT, sha(LITE_FILE),
                                  "How the Lite config was chosen, and what estimates a model's SR from its Lite "
                                  "results."))
    if (folder / "media").is_dir():
        distribution.append({"@type": "cr:FileSet", "@id": "media", "name": "media", "encodingFormat": "video/mp4",
                             "includes": "media/*.mp4", "description": "Normalised video files, named by video id."})
    tiers = ", ".join(f"{tier} {n}" for tier, n in facts.tiers.items())
    url = f"https://huggingface.co/datasets/{repo}" if repo else settings.homepage
    body: dict[str, Any] = {
        "@context": CONTEXT, "@type": "sc:Dataset", "conformsTo": CONFORMS_TO, "name": settings.pretty_name,
        "description": (f"{settings.pretty_name} v{version}: {plural(facts.tasks, 'task')} ({tiers}) for GUI "
                        "agents on a short-video app whose screen keeps playing while the agent thinks "
                        "(LivingScreen)."),
        "license": settings.license, **({"url": url} if url else {}),
        **({"sameAs": settings.homepage} if settings.homepage else {}), "version": version,
        "inLanguage": list(settings.language),
        "keywords": list(settings.tags),
        "citeAs": settings.citation.strip() or PAPER_BIBTEX,
        "distribution": distribution, "recordSet": record_sets,
        **rai_fields(facts, (manifest.get("stated") or {}).get("contact"), (folder / "media").is_dir()),
    }
    if date_published:
        body["datePublished"] = date_published
    return body


def write_croissant(folder: Path, settings: ReleaseConfig, **kwargs: Any) -> Path:
    path = folder / CROISSANT
    text = json.dumps(croissant_metadata(folder, settings, **kwargs), ensure_ascii=False, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
    return path

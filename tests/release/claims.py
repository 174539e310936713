"""What a release must say about itself, computed apart from `curation/release/facts.py`: SQL over the
catalog, and what the test knows of the filter's inspectors. The checks read the card and the Croissant
RAI fields as a reviewer does, sentence by sentence and number by number."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from curation.core.catalog import Catalog
from curation.release.card import SOURCE_TERMS, data_path
from curation.release.croissant import CROISSANT

MODEL = "qwen-test-0.5b"  # the language model inspector's model, as the test names it


def check_release(cat: Catalog, folder: Path, inspectors: tuple[str, ...], homepage: str,
                  known: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every check below on a built release folder; returns what it expected. `known`: strings with digits of
    their own the texts may quote (release names)."""
    shipped = pq.read_table(folder / data_path("all")).to_pylist()
    video_ids = pq.read_table(folder / "videos.parquet").column("video_id").to_pylist()
    want = expected_claims(cat, inspectors, shipped, video_ids)
    facts = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["facts"]
    for key in ("tasks", "here", "authors", "reviewers", "blind_reviews", "reviewed", "group_decisions", "judged",
                "unread", "videos", "synthetic", "without_metadata", "on_built_feeds", "on_carried_feeds",
                "inherited", "lacking", "sources"):
        assert facts[key] == want[key], key
    assert len(facts["configurations"]) == want["configurations"]
    assert {k: facts["catalog"][k] for k in want["catalog"]} == want["catalog"]
    check_card((folder / "README.md").read_text(encoding="utf-8"), want, homepage)
    body = json.loads((folder / CROISSANT).read_text(encoding="utf-8"))
    check_rai(body, want, homepage, [*SOURCE_TERMS.values(), *want["inherited"], MODEL, *facts["cluster_models"],
                                     *known])
    return want


def expected_claims(cat: Catalog, inspectors: tuple[str, ...], shipped: list[dict[str, Any]],
                    video_ids: list[str]) -> dict[str, Any]:
    """What a release of `shipped` must say, from SQL over the catalog and the inspectors the filter ran
    with (`lexical`, and a language model named MODEL)."""
    keys = [[t["task_id"], t["task_version"]] for t in shipped]
    ids = [t["task_id"] for t in shipped]

    def count(sql: str, *params: Any) -> int:
        return int(cat.scalar(sql, list(params)) or 0)

    shipped_sql = "SELECT * FROM (SELECT unnest(?::VARCHAR[]) AS task_id, unnest(?::INTEGER[]) AS version)"
    with_keys = [[k[0] for k in keys], [k[1] for k in keys]]
    inherited = dict(cat.con.execute(
        f"SELECT x.reason, count(*) FROM task_transitions x JOIN ({shipped_sql}) s USING (task_id, version) "
        "WHERE x.to_state = 'kept' AND x.from_state = 'valid' GROUP BY 1", with_keys).fetchall())
    inherited_ids = {r[0] for r in cat.con.execute(
        f"SELECT x.task_id FROM task_transitions x JOIN ({shipped_sql}) s USING (task_id, version) "
        "WHERE x.to_state = 'kept' AND x.from_state = 'valid'", with_keys).fetchall()}
    verdicts = {(r[0], r[1]) for r in cat.con.execute(
        f"SELECT v.task_id, v.task_version FROM shortcut_verdicts v JOIN ({shipped_sql}) s "
        "ON s.task_id = v.task_id AND s.version = v.task_version", with_keys).fetchall()}
    kind = {t["task_id"]: t["eval_type"] for t in shipped}
    only_lexical = tuple(inspectors) == ("lexical",)
    unread = sum(1 for t, _ in verdicts if only_lexical and kind[t] == "platform")
    configs = count(f"""SELECT count(DISTINCT coalesce(o.config_sha256, v.config_sha256)) FROM ({shipped_sql}) s
        JOIN shortcut_verdicts v ON v.task_id = s.task_id AND v.task_version = s.version
        LEFT JOIN shortcut_verdicts_of_record o ON o.task_id = s.task_id AND o.task_version = s.version""",
                    *with_keys)
    empty = "coalesce(trim({0}), '') = ''"
    lacks = {"caption": f"{empty.format('title')} AND {empty.format('description')}",
             "hashtags": "(hashtags IS NULL OR len(list_filter(hashtags, lambda h: coalesce(h, '') <> '')) = 0)",
             "author": f"{empty.format('author_name')} AND {empty.format('author_bio')}",
             "counts": "like_count IS NULL AND collect_count IS NULL AND comment_count IS NULL AND share_count IS NULL"}
    videos = "FROM videos WHERE list_contains(?, video_id)"
    out = {
        "tasks": len(shipped), "inherited": inherited, "here": len(shipped) - sum(inherited.values()),
        "authors": count("SELECT count(DISTINCT author) FROM tasks t JOIN (" + shipped_sql + ") s USING (task_id, "
                         "version) WHERE NOT list_contains(?, t.task_id) AND author IS NOT NULL", *with_keys,
                         sorted(inherited_ids)),
        "reviewers": count(f"SELECT count(DISTINCT reviewer) FROM reviews r JOIN ({shipped_sql}) s "
                           "ON s.task_id = r.task_id AND s.version = r.task_version", *with_keys),
        "blind_reviews": count(f"SELECT count(*) FROM reviews r JOIN ({shipped_sql}) s "
                               "ON s.task_id = r.task_id AND s.version = r.task_version", *with_keys),
        "reviewed": count(f"SELECT count(DISTINCT x.task_id) FROM task_transitions x JOIN ({shipped_sql}) s "
                          "USING (task_id, version) WHERE x.to_state IN ('reviewed_ok', 'escalated')", *with_keys),
        "group_decisions": count(f"SELECT count(DISTINCT s.task_id) FROM decisions d JOIN ({shipped_sql}) s "
                                 "ON s.task_id = d.task_id AND d.task_version <= s.version", *with_keys),
        "judged": len(verdicts) - unread, "unread": unread, "configurations": configs,
        "videos": len(video_ids),
        "sources": dict(cat.con.execute(f"SELECT source, count(*) {videos} GROUP BY 1", [video_ids]).fetchall()),
        "synthetic": count(f"SELECT count(*) {videos} AND source = 'Synthetic'", video_ids),
        "without_metadata": count(f"SELECT count(*) {videos} AND (metadata_missing OR ("
                                  + " AND ".join(f"({c})" for c in lacks.values()) + "))", video_ids),
        "lacking": {p: count(f"SELECT count(*) {videos} AND {c}", video_ids) for p, c in lacks.items()},
        "on_built_feeds": sum(1 for t in shipped if t["feed_id"].startswith("feed-")),
        "authored_here": any(not t.startswith("counting_") and t not in inherited_ids for t in ids),
        "catalog": {
            "tasks": count("SELECT count(DISTINCT task_id) FROM tasks"),
            "went_through_review": count("SELECT count(DISTINCT task_id) FROM task_transitions WHERE to_state IN "
                                         "('reviewed_ok', 'escalated')"),
            "revised": count("SELECT count(DISTINCT task_id) FROM task_transitions WHERE to_state = 'revised'"),
            "deleted": count("SELECT count(*) FROM task_states s JOIN latest_tasks t ON t.task_id = s.task_id "
                             "AND t.version = s.version WHERE s.state = 'deleted'")}}
    out["on_carried_feeds"] = out["tasks"] - out["on_built_feeds"]
    saw = {t for t, _ in verdicts}
    out["model_read"] = len(saw) if MODEL in inspectors else 0
    out["lexical_read"] = sum(1 for t in saw if kind[t] == "label") if "lexical" in inspectors else 0
    out["model_saw"], out["lexical_saw"] = bool(out["model_read"]), bool(out["lexical_read"])
    out["tiers"] = dict(Counter(t["tier"] for t in shipped))
    out["kinds"] = dict(Counter(t["eval_type"] for t in shipped))
    return out


def numbers(text: str, known: list[str]) -> set[int]:
    """The whole numbers a text states, leaving out the fact strings that carry digits of their own (source
    terms, release names, model names) and percentages."""
    for phrase in sorted(known, key=len, reverse=True):
        text = text.replace(phrase, " ")
    text = re.sub(r"\d+%", " ", text)
    return {int(n) for n in re.findall(r"(?<![\w.-])\d+(?![\w.-]*\w)", text)}


def check_card(card: str, want: dict[str, Any], homepage: str) -> None:
    assert f"{want['tasks']} task{'s' if want['tasks'] != 1 else ''} (" in card
    n_sources = len(want["sources"])
    assert f"from {n_sources} source{'s' if n_sources != 1 else ''} (" in card
    if want["judged"]:
        assert f"Shortcut filter: {want['judged']} of the {want['tasks']} shipped tasks were judged by" in card
    elif want["unread"]:
        assert "Shortcut filter: no shipped task was judged." in card
    else:
        assert "No shipped task has a shortcut-filter verdict on record" in card
    assert ("a verdict no inspector could read" in card) == bool(want["unread"])
    assert (f"under {want['configurations']} filter configurations" in card) == (want["configurations"] > 1)
    assert ("filter configurations" in card) == (want["configurations"] > 1)
    assert (f"a language model ({MODEL})" in card) == want["model_saw"]
    assert ("built-in lexical inspector" in card) == want["lexical_saw"]
    if want["reviewed"]:
        assert (f"went through this team's QC review: {want['blind_reviews']} with a blind review by a second "
                f"annotator recorded in the catalog, {want['group_decisions']} decided by the group") in card
    else:
        assert "went through this team's QC review" not in card
    for reason, n in want["inherited"].items():
        assert f"{n} task{'s were' if n != 1 else ' was'} inherited and kept as published" in card and reason in card
    if want["here"] and (want["authors"] or want["reviewers"]):
        assert f"{want['authors']} task author" in card and f" and {want['reviewers']} reviewer" in card
    elif not want["here"]:
        assert "Nobody here: every task was inherited" in card
    built, carried = want["on_built_feeds"], want["on_carried_feeds"]
    assert (f"{built} task{'s are' if built != 1 else ' is'} played on feeds this toolkit built" in card) == bool(built)
    assert (f"{carried} task{'s are' if carried != 1 else ' is'} played on feeds that came with an imported release"
            in card) == bool(carried)
    assert "BITHLP" not in card
    if homepage:
        assert f"- Repository: {homepage}" in card and f"for the team at {homepage}" in card
    else:
        assert "Repository: not stated" in card and "has not stated its homepage" in card


def check_rai(body: dict[str, Any], want: dict[str, Any], homepage: str, known: list[str]) -> None:
    n = want["tasks"]
    allowed = {v for k, v in want.items() if isinstance(v, int) and not isinstance(v, bool)}
    allowed |= set(want["inherited"].values()) | set(want["sources"].values()) | set(want["lacking"].values())
    allowed |= set(want["catalog"].values()) | {want["here"] - want["blind_reviews"], len(want["sources"])}
    allowed |= set(want["tiers"].values()) | set(want["kinds"].values())
    for key, value in body.items():
        if key.startswith("rai:"):
            text = " ".join(value) if isinstance(value, list) else str(value)
            assert numbers(text, known) <= allowed, (key, text, allowed)
    missing = body["rai:dataCollectionMissingData"]
    assert missing.startswith(f"{want['without_metadata']} of {want['videos']} video")
    assert all(f"{p} {k}" in missing.split("each part: ")[1] for p, k in want["lacking"].items())
    tools = " ".join(body["rai:machineAnnotationTools"])
    assert (f"language model ({MODEL})" in tools) == want["model_saw"]
    assert ("lexical inspector" in tools) == want["lexical_saw"]
    for seen in ("model_read", "lexical_read"):
        if want[seen]:
            assert f"read {want[seen]} task" in tools, (seen, tools)
    assert ("sentence-embedding" in tools) == bool(want["on_built_feeds"])
    assert (body["rai:dataAnnotationPlatform"] == ["Label Studio"]) == want["authored_here"]
    protocol = body["rai:dataAnnotationProtocol"][1]
    assert (f"{want['judged']} of {n} were judged by a metadata-only shortcut filter" in protocol) == bool(
        want["judged"])
    assert (f"{want['unread']} of {n} passed that filter unjudged" in protocol) == bool(want["unread"])
    assert (f"{want['blind_reviews']} of {n} carry a blind review" in protocol) == bool(want["blind_reviews"])
    assert (f"given under {want['configurations']} configurations" in protocol) == (want["configurations"] > 1)
    analysis = body["rai:dataAnnotationAnalysis"][0]
    catalog = want["catalog"]
    assert analysis.startswith(f"{want['blind_reviews']} of {n} tasks carry a recorded blind-review outcome and "
                               f"{want['group_decisions']} a group decision")
    assert (f"{catalog['went_through_review']} went through review; the group deleted {catalog['deleted']} and "
            f"{catalog['revised']} were revised") in analysis
    raw = body["rai:dataCollectionRawData"]
    assert (f"{want['synthetic']} video" in raw and "synthetic, generated" in raw) == bool(want["synthetic"])
    assert ("sameAs" in body) == bool(homepage) and ("url" in body) == bool(homepage)
    assert "BITHLP" not in json.dumps(body)



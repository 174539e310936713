"""Calibration, blind review and adjudication on a real Label Studio server, with three
annotators who each log in with their own password and answer in their own projects."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import replace

import pytest

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.errors import InputError, UsageError
from curation.qc.adjudicate import export_adjudication, import_adjudication
from curation.qc.calibrate import export_pilot, fields_of, import_pilot
from curation.qc.calibration_report import NOT_ENOUGH, write_calibration
from curation.qc.funnel import qc_report
from curation.qc.review import export_reviews, import_reviews
from curation.qc.shortcut.filter import filter_shortcuts
from curation.qc.validate import validate_catalog, validate_tasks
from curation.release.build import build_release
from curation.status import explain_task
from curation.tasks.lifecycle import path_of, state_of
from curation.tasks.runner_format import load_runner_dir
from tests.core.contract import run_traced
from tests.labelstudio import login
from tests.qc.helpers import planted_catalog
from tests.release.claims import check_release
from tests.release.helpers import load_release

pytestmark = pytest.mark.servers

PEOPLE = ["ana", "ben", "cai"]
CONFIG = load_config()


@pytest.fixture(scope="module")
def qc_env(clustered_catalog_file, label_studio, tmp_path_factory):
    """A catalog of nine feeds with plain titles, and the three annotators' accounts."""
    path = tmp_path_factory.mktemp("qc") / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    with Catalog(path) as cat:
        feeds = planted_catalog(cat, 9, seed=31)
        for n, person in enumerate(PEOPLE):  # three feeds each, so that everyone authors
            export_to_label_studio(cat, [], label_studio["media"], feed_ids=feeds[3 * n:3 * n + 3],
                                   add=[person])
    sessions = {p: login(label_studio["url"], f"{p}@annotators.local", label_studio["annotator_password"])
                for p in PEOPLE}
    return path, feeds, sessions


def choices(name: str, *values: str) -> dict:
    return {"from_name": name, "to_name": "feed", "type": "choices", "value": {"choices": list(values)}}


def text(name: str, value: str) -> dict:
    return {"from_name": name, "to_name": "feed", "type": "textarea", "value": {"text": [value]}}


def answer(session, url: str, ls_task_id: int, result: list) -> int:
    response = session.post(f"{url}/api/tasks/{ls_task_id}/annotations/", json={"result": result})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def items_of(cat: Catalog, purpose: str) -> dict[tuple[str, str], dict]:
    return {(r["person"], r["item"]): r for r in cat.rows("SELECT * FROM qc_items WHERE purpose = ?", [purpose])}


def test_calibration_agreement_by_hand_on_fixed_questions(qc_env, label_studio, tmp_path):
    path, feeds, sessions = qc_env
    url = label_studio["url"]
    bad = tmp_path / "typo.yaml"
    bad.write_text(f"- feed: {feeds[0]}\n  question: 几只猫？\n  options: [A: 一只, B: 两只]\n"
                   f"- feed: {feeds[1]}\n  question: 几只狗？\n  option: [A: 一只, B: 两只]\n", encoding="utf-8")
    questions = tmp_path / "questions.yaml"
    questions.write_text("".join(f"- feed: {feeds[n]}\n  question: 第{n + 1}个问题？\n"
                                 f"  options: ['A: 甲', 'B: 乙', 'C: 丙']\n" for n in range(3)), encoding="utf-8")
    with Catalog(path) as cat:
        with pytest.raises(InputError, match=r"typo.yaml: question 2: unknown key\(s\) option"):
            export_pilot(cat, PEOPLE, questions=bad, media_root=label_studio["media"])
        with pytest.raises(UsageError, match="either --pilot N"):
            export_pilot(cat, PEOPLE, pilot=2, questions=questions)
        sent = run_traced(cat, "qc-calibrate-export", lambda: export_pilot(
            cat, PEOPLE, questions=questions, media_root=label_studio["media"]))
        assert (sent["items"], sent["sent"], sent["accounts_created"]) == (3, 9, 0)
        again = export_pilot(cat, PEOPLE, questions=questions, media_root=label_studio["media"])
        assert (again["sent"], again["already_sent"]) == (0, 9)
        items = items_of(cat, "pilot-questions")
        # the pilot never becomes benchmark tasks: the authoring import does not see it
        assert import_from_label_studio(cat, CONFIG.feeds)["annotations"] == 0

    # Answers chosen so the figures can be worked out by hand (see below); nobody gives a tier
    # except cai on q1: one answer is no overlap, and an empty field is missing, not a category.
    given = {"ana": "ABA", "ben": "ABB", "cai": "ACB"}
    round_name = sent["round"]
    for person, letters in given.items():
        for n, letter in enumerate(letters, start=1):
            row = items[(person, f"{round_name}/q{n}")]
            data = sessions[person].get(f"{url}/api/tasks/{row['ls_task_id']}").json()["data"]
            assert data["pilot"] is True and data["feed_id"] == feeds[n - 1] and f"第{n}个问题" in data["question_html"]
            extra = [choices("tier", "L2")] if (person, n) == ("cai", 1) else []
            answer(sessions[person], url, row["ls_task_id"], [choices("answer", letter), *extra])
    with Catalog(path) as cat:
        result = run_traced(cat, "qc-calibrate-import", lambda: import_pilot(cat, tmp_path / "reports"))
        assert (result["new"], result["unanswered"]) == (9, 0)
        params = json.loads(cat.scalar("SELECT params FROM runs WHERE stage = 'qc-calibrate-import'"))
        assert import_pilot(cat)["unchanged"] == 9
    # the meeting's papers are the import run's own: over the newest round, their paths in its params
    md_path, html_path, agreement = result.agenda, result.report, result.agreement
    assert result.round == round_name and agreement is not None and md_path and html_path
    assert (params["agenda"], params["report"]) == (str(tmp_path / "reports" / "calibration.md"),
                                                    str(tmp_path / "reports" / "calibration.html"))
    # By hand, nominal alpha over q1 (A,A,A), q2 (B,B,C), q3 (A,B,B): the coincidences are
    # AA 3, BB 2, AB 1+1, BC 1+1, so n_A = 4, n_B = 4, n_C = 1, n = 9; D_o = 4/9;
    # D_e = (81 - 16 - 16 - 1) / 72 = 2/3; alpha = 1 - (4/9) / (2/3) = 1/3.
    assert agreement["answer"].alpha == pytest.approx(1 / 3, abs=1e-4)
    # kappa(ana, ben): observed 2/3, expected (2*1 + 1*2)/9 = 4/9 -> (2/9)/(5/9) = 0.4;
    # (ana, cai): observed 1/3 = expected -> 0; (ben, cai): observed 2/3, expected 1/3 -> 0.5.
    assert agreement["answer"].kappa == {("ana", "ben"): pytest.approx(0.4), ("ana", "cai"): pytest.approx(0.0),
                                         ("ben", "cai"): pytest.approx(0.5)}
    assert agreement["answer"].with_majority == {"ana": pytest.approx(2 / 3, abs=1e-4), "ben": 1.0,
                                                 "cai": pytest.approx(2 / 3, abs=1e-4)}
    assert agreement["tier"].alpha is None and agreement["tier"].comparable_items == 0
    md = md_path.read_text(encoding="utf-8")
    assert f"| tier | {NOT_ENOUGH} | 0 |" in md and "nan" not in md.lower()
    assert f"### {round_name}/q2" in md and f"### {round_name}/q3" in md and f"### {round_name}/q1" not in md
    assert "第2个问题" in md  # the question is on the agenda beside the answers
    page = html_path.read_text(encoding="utf-8")
    assert "<svg" in page and "0.40" in page and "0.50" in page


def test_pilot_feeds_are_the_same_for_everyone_and_too_little_overlap_says_so(qc_env, label_studio, tmp_path):
    path, _, sessions = qc_env
    url = label_studio["url"]
    with Catalog(path) as cat:
        sent = export_pilot(cat, PEOPLE, pilot=2, seed=3, media_root=label_studio["media"])
        assert sent["sent"] == 6
        items = items_of(cat, "pilot")
    per_person = {p: sorted(i for (who, i) in items if who == p) for p in PEOPLE}
    assert per_person["ana"] == per_person["ben"] == per_person["cai"] and len(per_person["ana"]) == 2
    # only ana writes a pilot task: there is nothing to compare, and the report says so
    first = items[("ana", per_person["ana"][0])]
    answer(sessions["ana"], url, first["ls_task_id"],
           [choices("tier", "L2"), choices("subcategory", "feature_analysis"), text("instruction", "视频中有几只猫？")])
    with Catalog(path) as cat:
        result = import_pilot(cat, tmp_path / "asked", round_name="pilot-s3-n9")  # a round typed wrong
    assert result.unreported is not None and result.unreported.startswith(
        "no answers for round 'pilot-s3-n9' (rounds with answers: ") and sent["round"] in result.unreported
    assert result.report is None and not (tmp_path / "asked").exists()
    rows = result.rounds[sent["round"]]
    assert [(r["annotator"], r["tier"], r["subcategory"]) for r in rows] == [("ana", "L2", "feature_analysis")]
    md_path, _, agreement = write_calibration(rows, sent["round"], fields_of(sent["round"]), tmp_path,
                                              result.members[sent["round"]])
    assert agreement["all"].alpha is None and agreement["all"].kappa[("ana", "ben")] is None
    md = md_path.read_text(encoding="utf-8")
    assert "Not enough overlap." in md and "No answers yet from ben, cai." in md


LABEL = {"tier": "L2", "subcategory": "feature_analysis", "instruction": "这些视频里一共出现了几种动物？",
         "options": "A: 一种\nB: 两种\nC: 三种\nD: 无法确定", "answer": "B"}
PLATFORM = {"tier": "L1", "subcategory": "gui_like", "instruction": "给第二个视频点赞", "platform_state": "like 2"}


def authoring_result(spec: dict) -> list:
    return [choices(k, v) if k in ("tier", "subcategory", "answer") else text(k, v) for k, v in spec.items()]


def test_blind_review_escalation_adjudication_and_a_revision_going_round_again(qc_env, label_studio):
    path, feeds, sessions = qc_env
    url = label_studio["url"]
    with Catalog(path) as cat:
        owners = {r["feed_id"]: r for r in cat.rows("SELECT * FROM ls_tasks")}
        assert {r["annotator"] for r in owners.values()} == set(PEOPLE)  # every annotator authors
        kinds = {}
        for n, feed in enumerate(feeds):
            kinds[feed] = LABEL if n % 2 == 0 else PLATFORM
            row = owners[feed]
            answer(sessions[row["annotator"]], url, row["ls_task_id"], authoring_result(kinds[feed]))
        assert import_from_label_studio(cat, CONFIG.feeds)["new"] == 9
        defects = validate_catalog(cat, CONFIG.feeds).defects
        assert not [d for d in defects if d.severity == "error"]
        shortcut = filter_shortcuts(cat, CONFIG.qc.shortcut)
        assert (shortcut["passed"], shortcut["not_filtered"]) == (5, 4)  # L1 GUI tasks go on unjudged
        tasks = {r["feed_id"]: r for r in cat.rows("SELECT * FROM tasks")}

        with pytest.raises(UsageError, match="at least two reviewers"):
            export_reviews(cat, ["ana"])
        sent = run_traced(cat, "qc-review-export", lambda: export_reviews(cat, PEOPLE, seed=5,
                                                                           media_root=label_studio["media"]))
        assert sent["sent"] == 9
        review = {(r["task_id"]): r for r in cat.rows("SELECT * FROM qc_items WHERE purpose = 'review'")}
        author = {t["task_id"]: t["author"] for t in tasks.values()}
        assert all(review[t]["person"] != author[t] for t in review)  # never the author
        loads = Counter(r["person"] for r in review.values())
        assert max(loads.values()) - min(loads.values()) <= 1 and sum(loads.values()) == 9
        again = export_reviews(cat, PEOPLE, seed=5, media_root=label_studio["media"])
        assert (again["sent"], again["already_sent"]) == (0, 9)
        assert {r["task_id"]: r["person"] for r in cat.rows(
            "SELECT * FROM qc_items WHERE purpose = 'review'")} == {t: r["person"] for t, r in review.items()}
        # a run killed after Label Studio took its tasks, before the catalog recorded them:
        # the next run takes them on instead of sending them twice
        victim = next(iter(review.values()))
        cat.con.execute("DELETE FROM qc_items WHERE ls_task_id = ?", [victim["ls_task_id"]])
        adopted = export_reviews(cat, PEOPLE, seed=5, media_root=label_studio["media"])
        assert (adopted["sent"], adopted["already_sent"]) == (0, 9)
        assert cat.scalar("SELECT ls_task_id FROM qc_items WHERE task_id = ? AND purpose = 'review'",
                          [victim["task_id"]]) == victim["ls_task_id"]

    # Blind: what the reviewer's own login reads has no answer in it
    by_task = {t["task_id"]: t for t in tasks.values()}
    label_ids = sorted(t for t, row in by_task.items() if row["eval_type"] == "label")
    platform_ids = sorted(t for t, row in by_task.items() if row["eval_type"] == "platform")
    data = {}
    for task_id, row in review.items():
        seen = sessions[row["person"]].get(f"{url}/api/tasks/{row['ls_task_id']}")
        assert seen.status_code == 200
        data[task_id] = seen.json()["data"]
        assert not {"answer", "eval_config", "platform_state", "options"} & set(data[task_id])
        other = next(p for p in PEOPLE if p != row["person"])
        assert sessions[other].get(f"{url}/api/tasks/{row['ls_task_id']}").status_code == 404
    assert all("like 2" not in json.dumps(data[t], ensure_ascii=False) for t in platform_ids)
    assert "两种" in data[label_ids[0]]["task_html"]  # the options are shown, not which one is right

    def review_as(task_id: str, result: list) -> None:
        answer(sessions[review[task_id]["person"]], url, review[task_id]["ls_task_id"], result)

    same_label, other_label, flagged_label = label_ids[:3]
    same_platform, other_platform, unreadable = platform_ids[:3]
    review_as(same_label, [choices("answer", "B")])
    review_as(other_label, [choices("answer", "C"), text("comment", "第三个视频里还有一只鸟")])
    review_as(flagged_label, [choices("answer", "B"), choices("flags", "ambiguous")])
    review_as(same_platform, [text("platform_state", "like 2")])
    review_as(other_platform, [text("platform_state", "like 3")])
    review_as(unreadable, [text("platform_state", "lik 2")])
    with Catalog(path) as cat:
        counts = run_traced(cat, "qc-review-import", lambda: import_reviews(cat))
        assert {k: counts[k] for k in ("reviews", "reviewed_ok", "escalated", "unreadable", "unanswered")} == {
            "reviews": 6, "reviewed_ok": 2, "escalated": 3, "unreadable": 1, "unanswered": 3}
        assert state_of(cat, same_label, 1) == state_of(cat, same_platform, 1) == "reviewed_ok"
        reasons = {r["task_id"]: r["reason"] for r in cat.rows("SELECT * FROM reviews")}
        assert reasons[other_label] == "answers differ: author B, reviewer C; comment: 第三个视频里还有一只鸟"
        assert reasons[flagged_label] == "flagged ambiguous"
        assert reasons[other_platform] == "end states differ: author like 2, reviewer like 3"
        assert state_of(cat, unreadable, 1) == "shortcut_passed"  # the reviewer fixes it first
        feedback = sessions[review[unreadable]["person"]].get(
            f"{url}/api/tasks/{review[unreadable]['ls_task_id']}").json()["data"]["feedback"]
        assert "cannot read 'lik 2'" in feedback
        assert import_reviews(cat)["unchanged"] == 5

        cases = run_traced(cat, "qc-adjudicate-export", lambda: export_adjudication(cat, label_studio["media"],
                                                                                     add=["lena"]))
        assert (cases["escalated"], cases["sent"], cases["accounts_created"]) == (3, 3, 1)
        assert export_adjudication(cat, label_studio["media"])["sent"] == 0
        adjudication = {r["task_id"]: r for r in cat.rows("SELECT * FROM qc_items WHERE purpose = 'adjudication'")}

    admin = login(url, label_studio["admin"], label_studio["password"])
    case = admin.get(f"{url}/api/tasks/{adjudication[other_label]['ls_task_id']}").json()["data"]["case_html"]
    assert f"author {author[other_label]}" in case and f"reviewer {review[other_label]['person']}" in case
    assert "<pre>B</pre>" in case and "<pre>C</pre>" in case and "第三个视频里还有一只鸟" in case

    # lena leads the group's meeting with an account of her own (not the admin's)
    lena = login(url, "lena@annotators.local", label_studio["annotator_password"])
    listed = lena.get(f"{url}/api/projects/").json()
    assert "LivingScreen adjudication" in [p["title"] for p in (listed["results"] if isinstance(listed, dict)
                                                                 else listed)]

    def decide(task_id: str, result: list, who=admin) -> int:
        return answer(who, url, adjudication[task_id]["ls_task_id"], result)

    decide(other_label, [choices("decision", "keep"), text("decided_by", "ana, ben, cai")])
    decide(flagged_label, [choices("decision", "delete"), text("note", "两种和三种都说得通")], who=lena)  # no reason
    decide(other_platform, [choices("decision", "revise"), text("instruction", "给第二个视频点赞，再给第三个点赞"),
                            text("platform_state", "like 2\nlike 3"), text("decided_by", "group meeting 1")])
    with Catalog(path) as cat:
        counts = run_traced(cat, "qc-adjudicate-import", lambda: import_adjudication(cat))
        assert {k: counts[k] for k in ("kept", "deleted", "revised", "needs_fix")} == {
            "kept": 1, "deleted": 0, "revised": 1, "needs_fix": 1}
    assert "choose at least one reason" in lena.get(
        f"{url}/api/tasks/{adjudication[flagged_label]['ls_task_id']}").json()["data"]["feedback"]
    delete_id = lena.get(f"{url}/api/tasks/{adjudication[flagged_label]['ls_task_id']}/annotations/").json()[0]["id"]
    fixed = lena.patch(f"{url}/api/annotations/{delete_id}/", json={"result": [
        choices("decision", "delete"), choices("delete_reasons", "ambiguous", "other"),
        text("note", "两种和三种都说得通")]})
    assert fixed.status_code == 200
    with Catalog(path) as cat:
        assert import_adjudication(cat)["deleted"] == 1
        decisions = {r["task_id"]: r for r in cat.rows("SELECT * FROM decisions")}
        assert decisions[other_label]["decided_by"] == "ana, ben, cai"
        assert decisions[flagged_label]["decided_by"] == "lena"  # nobody named: her account, by her name
        assert list(decisions[flagged_label]["delete_reasons"]) == ["ambiguous", "other"]
        assert state_of(cat, flagged_label, 1) == "deleted" and state_of(cat, other_label, 1) == "kept"
        assert cat.scalar("SELECT count(*) FROM tasks WHERE task_id = ?", [flagged_label]) == 1  # nothing deleted

        # the revision is version 2: validated, filtered and reviewed again; v1's history stays
        assert state_of(cat, other_platform, 1) == "revised" and state_of(cat, other_platform, 2) == "valid"
        v2 = cat.rows("SELECT * FROM tasks WHERE task_id = ? AND version = 2", [other_platform])[0]
        # "like 2" and "like 3" on two lines: both liked, one check (two would each forbid the other's like)
        assert json.loads(v2["eval_config"]) == [{"func": "eval_like", "args": {"video_ids": [1, 2]}}]
        assert filter_shortcuts(cat, CONFIG.qc.shortcut)["not_filtered"] == 1
        assert import_from_label_studio(cat, CONFIG.feeds)["new_versions"] == 0  # the author's annotation is old news
        resent = export_reviews(cat, PEOPLE, seed=5, media_root=label_studio["media"])
        assert resent["sent"] == 1
        second = cat.rows("SELECT * FROM qc_items WHERE purpose = 'review' AND task_id = ? AND task_version = 2",
                          [other_platform])[0]
        assert second["person"] != author[other_platform]
    answer(sessions[second["person"]], url, second["ls_task_id"], [text("platform_state", "like 2\nlike 3")])
    with Catalog(path) as cat:
        assert import_reviews(cat)["reviewed_ok"] == 1
        steps = [(m["version"], m["to_state"]) for m in path_of(cat, other_platform)]
        assert steps == [(1, "authored"), (1, "valid"), (1, "shortcut_passed"), (1, "escalated"), (1, "revised"),
                         (2, "authored"), (2, "valid"), (2, "shortcut_passed"), (2, "reviewed_ok")]
        explained = "\n".join(explain_task(cat, other_platform))
        assert "group meeting 1" in explained and "end states differ" in explained

        summary = qc_report(cat, path.parent / "qc.html")
    total = summary["all"]
    # 9 tasks, each in its current state: reviewed ok (same_label, same_platform, other_platform's v2), kept,
    # deleted, and 4 waiting for review (the unreadable one and the 3 nobody answered); nothing is escalated now.
    # 5 went through review (the revised one counts once although both its versions were reviewed): 1 deleted
    # and 1 revised of those 5; the 4 L1 platform tasks passed on unjudged, so the filter kept 5 of 5
    assert (total["tasks"], total["reviewed_ok"], total["kept"], total["deleted"], total["shortcut_passed"],
            total["escalated"]) == (9, 3, 1, 1, 4, 0)
    # to the group, on any version: the kept one, the deleted one, and other_platform (escalated at v1, revised)
    assert (total["reviewed"], total["sent_to_group"], total["went_through_review"], total["revised"],
            total["not_filtered"], total["adds_up"]) == (5, 3, 5, 1, 4, True)
    assert total["shortcut_retained"] == 1.0
    assert total["deleted_after_review"] == pytest.approx(1 / 5)
    assert total["revised_after_review"] == pytest.approx(1 / 5)

    # the end of the pipeline: what finished QC is released, and loads as a benchmark user loads it

    with Catalog(path) as cat:
        built = build_release(cat, "1.0.0", replace(CONFIG.release, dir=str(path.parent / "releases")))
        # issue 41: authored and reviewed in Label Studio, judged by the lexical inspector alone, the card and
        # Croissant read true sentence by sentence against the catalog (no model named, nothing unread judged)
        assert built.folder is not None
        claims = check_release(cat, built.folder, ("lexical",), CONFIG.release.homepage)
        assert claims["authored_here"] and not claims["model_saw"]
    finished = {same_label, same_platform, other_platform, other_label}
    assert built.configs == ["all", "l1_gui_action", "l2_cross_source_understanding"]
    rows = load_release(built.folder, "all")
    assert set(rows["task_id"]) == finished
    by_id = {r["task_id"]: r for r in rows}
    assert by_id[other_platform]["task_version"] == 2 and by_id[other_label]["qc"]["decision"] == "keep"
    assert by_id[same_label]["qc"]["review_outcome"] == "reviewed_ok" and by_id[same_label]["answer"] == "B"
    assert by_id[same_label]["reviewer_id"].startswith("annotator-") and by_id[same_label]["author_id"] != \
        by_id[same_label]["reviewer_id"]
    l1 = load_release(built.folder, "l1_gui_action")
    assert set(l1["task_id"]) == {same_platform, other_platform}
    runner = load_runner_dir(built.folder / "livingscreen")
    assert {t["task_id"] for t in runner} == finished and not [
        d for d in validate_tasks(runner) if d.severity == "error"]

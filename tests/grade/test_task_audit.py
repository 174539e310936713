"""Issue 45's audit loop, end to end on a real Label Studio: four noisy-oracle agents (tests/grade/agents.py) play
a release with two planted defects and `curate grade` stores their episodes; `curate qc audit-tasks export` sends
the flagged tasks with their evidence to the group's project; a member of the group, logged in through the access
gate, fixes the wrong key and the unmeetable check (after an incomplete decision the import sends back); the
import makes each fix the task's next version, which goes through the shortcut filter and review again; `curate
release build` makes the patch release 1.0.1, whose CHANGELOG cites the evidence and the decider by pseudonym;
and the same agents playing 1.0.1 no longer raise either flag."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.resources import resource_text
from curation.grade import task_audit
from curation.grade.task_audit import export_task_audit, import_task_audit
from curation.labelstudio.gate import start_gate
from curation.qc import adjudicate
from curation.qc.review import export_reviews, import_reviews
from curation.qc.shortcut.filter import filter_shortcuts
from curation.tasks.lifecycle import state_of
from tests.conftest import ROOT
from tests.core.contract import run_traced
from tests.grade.agents import UNMEETABLE, WRONG_KEY, generate_release, play
from tests.grade.real import record_release
from tests.labelstudio import login
from tests.qc.test_qc_labelstudio import answer, choices, text

pytestmark = pytest.mark.servers

MEMBER = "ottilie"               # names unique to this file on the session's Label Studio
REVIEWERS = ["petra", "quirin"]
ERRORS = {"weak": 0.6, "fair": 0.35, "good": 0.15, "strong": 0.03}


@pytest.mark.parametrize(("form", "decisions"), [("adjudication.xml", adjudicate.DECISIONS),
                                                  ("task_audit.xml", task_audit.DECISIONS)])
def test_a_decision_form_offers_exactly_the_decisions_and_reasons_its_import_reads(form, decisions):
    root = ET.fromstring(resource_text(form))
    offered = {c.get("name"): [choice.get("alias") for choice in c.iter("Choice")] for c in root.iter("Choices")}
    assert offered["decision"] == list(decisions)
    assert offered["delete_reasons"] == list(adjudicate.DELETE_REASONS)


def curate(path: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config),
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def graded(path: Path, config: Path, release, logs: Path, version: str) -> dict[str, set[str]]:
    """Every agent plays `version`; the flags `curate grade` gives its tasks."""
    for n, (name, error) in enumerate(ERRORS.items()):
        play(release, logs / name, error, seed=200 + n)
    out = logs / "graded"
    curate(path, config, "grade", *(str(logs / name) for name in ERRORS), "--release", version, "--out", str(out),
           *(arg for name in ERRORS for arg in ("--model", name)))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {r["task_id"]: set(r["flags"]) for r in summary["tasks"]["flagged"]}


def test_an_audit_round_fixes_the_planted_defects_into_a_patch_release(catalog, label_studio, tmp_path):
    release = generate_release(tmp_path / "release", labels=24, platform=12, seed=5)
    record_release(catalog, release.folder)
    path = catalog.path
    catalog.close()
    config = tmp_path / "curation.toml"
    config.write_text(f'[release]\ndir = "{tmp_path / "releases"}"\n[reports]\ndir = "{tmp_path / "reports"}"\n',
                      encoding="utf-8")
    before = graded(path, config, release, tmp_path / "logs-1.0.0", "v1.0.0")
    assert "suspect_key" in before[WRONG_KEY] and "common_unmet_check" in before[UNMEETABLE]

    typo = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config),
                           "qc", "audit-tasks", "export", "--release", "1.0"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert typo.returncode != 0 and "'1.0' is not a version" in typo.stderr + typo.stdout
    sent = curate(path, config, "qc", "audit-tasks", "export", "--release", "v1.0.0", "--add", MEMBER).stdout
    assert f"{len(before)} flagged tasks: {len(before)} sent" in sent, sent
    with Catalog(path) as cat:
        again = run_traced(cat, "qc-audit-tasks-export", lambda: export_task_audit(cat, "1.0.0",
                                                                                     label_studio["media"]))
        assert (again["sent"], again["already_sent"]) == (0, len(before))
        items = {r["task_id"]: r for r in cat.rows("SELECT * FROM qc_items WHERE purpose = 'task-audit'")}
    assert set(items) == set(before)

    server, _ = start_gate(label_studio["url"], label_studio["token"])
    try:
        gate = server.url
        member = login(gate, f"{MEMBER}@annotators.local", label_studio["annotator_password"])
        shown = {t: member.get(f"{gate}/api/tasks/{items[t]['ls_task_id']}").json()["data"]["case_html"]
                 for t in (WRONG_KEY, UNMEETABLE)}
        # the evidence the group decides on: the flag's rule, the answer models gave, the unmet check, the steps
        assert "suspect_key" in shown[WRONG_KEY] and "most common wrong answer" in shown[WRONG_KEY]
        assert "answered B" in shown[WRONG_KEY]
        assert "common_unmet_check" in shown[UNMEETABLE] and "eval_like 3" in shown[UNMEETABLE]
        assert "click(" in shown[UNMEETABLE]  # a sample episode's steps
        key_fix = answer(member, gate, items[WRONG_KEY]["ls_task_id"],
                         [choices("decision", "fix_answer"), text("note", "every agent answers B, which is right")])
        answer(member, gate, items[UNMEETABLE]["ls_task_id"],
               [choices("decision", "fix_answer"), text("platform_state", "like 2"),
                text("note", "the instruction asks for the second video; the check read the fourth")])
        first = curate(path, config, "qc", "audit-tasks", "import").stdout
        assert "2 decisions (0 imported before): 0 kept, 1 answers fixed" in first, first
        assert "1 sent back to fix" in first, first
        feedback = member.get(f"{gate}/api/tasks/{items[WRONG_KEY]['ls_task_id']}").json()["data"]["feedback"]
        assert "choose the right option" in feedback
        fixed = member.patch(f"{gate}/api/annotations/{key_fix}/", json={"result": [
            choices("decision", "fix_answer"), choices("answer", "B"),
            text("note", "every agent answers B, which is right")]})
        assert fixed.status_code == 200, fixed.text
        with Catalog(path) as cat:
            second = run_traced(cat, "qc-audit-tasks-import", lambda: import_task_audit(cat))
        assert {k: second[k] for k in ("decisions", "unchanged", "fix_answer", "needs_fix")} == {
            "decisions": 2, "unchanged": 1, "fix_answer": 1, "needs_fix": 0}
    finally:
        server.shutdown()
        server.server_close()

    after_import = curate(path, config, "qc", "audit-tasks", "export", "--release", "v1.0.0").stdout
    assert "0 sent" in after_import and "2 decided before" in after_import, after_import  # decided once
    # built before the fixes are reviewed, the release would lose both tasks: not a patch, and it says why
    early = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config),
                            "release", "build", "--version", "1.0.1", "--parent", "1.0.0"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert early.returncode != 0 and "2 tasks removed and 0 changed" in early.stderr, early.stderr
    assert f"{WRONG_KEY}: the audit of v1.0.0 made v2, which is not released yet" in early.stderr, early.stderr
    with Catalog(path) as cat:
        for task_id in (WRONG_KEY, UNMEETABLE):
            assert state_of(cat, task_id, 1) == "revised" and state_of(cat, task_id, 2) == "valid"
        shortcut = filter_shortcuts(cat, load_config().qc.shortcut)
        assert shortcut["passed"] + shortcut["not_filtered"] == 2
        export_reviews(cat, [], seed=1, media_root=label_studio["media"], add=REVIEWERS)
        reviews = {r["task_id"]: r for r in cat.rows("SELECT * FROM qc_items WHERE purpose = 'review'")}
    reviewer = {p: login(label_studio["url"], f"{p}@annotators.local", label_studio["annotator_password"])
                for p in REVIEWERS}
    answer(reviewer[reviews[WRONG_KEY]["person"]], label_studio["url"], reviews[WRONG_KEY]["ls_task_id"],
           [choices("answer", "B")])
    answer(reviewer[reviews[UNMEETABLE]["person"]], label_studio["url"], reviews[UNMEETABLE]["ls_task_id"],
           [text("platform_state", "like 2")])
    with Catalog(path) as cat:
        assert import_reviews(cat)["reviewed_ok"] == 2

    built = curate(path, config, "release", "build", "--version", "1.0.1", "--parent", "1.0.0").stdout
    assert "2 revised" in built, built
    changelog = (tmp_path / "releases" / "v1.0.1" / "CHANGELOG.md").read_text(encoding="utf-8")
    section = changelog[changelog.index("## Fixed after an audit"):]
    for task_id, flag, before_key, after_key in ((WRONG_KEY, "suspect_key", "A", "B"),
                                                 (UNMEETABLE, "common_unmet_check", "like 4", "like 2")):
        entry = section[section.index(f"- {task_id} v1"):].split("\n- ")[0]
        assert "answer fixed in the audit of v1.0.0, decided by annotator-" in entry, entry
        assert f"evidence: flag {flag}: " in entry and re.search(r"evidence: solve rate: \d+% \(", entry), entry
        assert f"answer before: {before_key}" in entry and f"answer after (v2): {after_key}" in entry
    assert MEMBER not in changelog  # people by pseudonym only

    after = graded(path, config, release, tmp_path / "logs-1.0.1", "v1.0.1")
    assert WRONG_KEY not in after and UNMEETABLE not in after, after

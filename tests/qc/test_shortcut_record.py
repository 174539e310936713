"""Verdicts of record, along a team's path through the command line: the first `qc shortcut` run sets the
configuration of record, a run from another folder with another curation.toml is evidence only, and
`qc shortcut-config adopt` shows what it re-decides before it does. Also: a bug in the filter fails the run."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from curation.core.catalog import MIGRATIONS, Catalog
from curation.core.config import ShortcutConfig, build
from curation.core.services import free_port
from curation.qc.shortcut.filter import filter_shortcuts
from curation.qc.shortcut.inspectors import OpenAIInspector
from tests.qc.helpers import curate_in, plant_giveaway_pair, planted_catalog


def _giveaway_catalog(cat: Catalog) -> None:
    """feature_analysis_1's answer (C, 橘色的猫) is in a video title; feature_analysis_2's is nowhere."""
    feeds = planted_catalog(cat)
    plant_giveaway_pair(cat, feeds)


def _folder(root: Path, name: str, inspector: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "curation.toml").write_text(
        f'[qc.shortcut]\nreport = "{folder / "shortcut.html"}"\n\n[[qc.shortcut.inspectors]]\n{inspector}\n',
        encoding="utf-8")
    return folder


def _states(path: Path) -> dict[str, str]:
    with Catalog(path, read_only=True) as cat:
        return dict(cat.con.execute("SELECT task_id, state FROM task_states").fetchall())


def _records(path: Path) -> list[dict]:
    with Catalog(path, read_only=True) as cat:
        return cat.rows("SELECT seq, config_sha256, source FROM shortcut_config_record ORDER BY seq")


def test_a_verdict_stays_put_until_another_configuration_is_adopted(clustered_catalog, tmp_path):
    cat = clustered_catalog
    _giveaway_catalog(cat)
    db = str(cat.path)
    cat.close()
    # the team's folder keeps the default n-gram inspector; someone's home folder has a cautious one
    team = _folder(tmp_path, "team", 'name = "lexical"\nkind = "lexical"')
    home = _folder(tmp_path, "home", 'name = "cautious"\nkind = "lexical"\nmargin = 0.5')

    first = curate_in(team, "--catalog", db, "qc", "shortcut")
    assert first.returncode == 0, first.stderr
    assert f"configuration from {team / 'curation.toml'} (./curation.toml of the working directory)" in first.stdout
    assert "the configuration of record from this run on" in first.stdout
    assert "\nrule paper: inspector " in first.stdout and " decides, by its first answer" in first.stdout
    assert "feature_analysis_1 v1: valid -> shortcut_discarded" in first.stdout
    assert _states(Path(db)) == {"feature_analysis_1": "shortcut_discarded", "feature_analysis_2": "shortcut_passed"}
    (record,) = _records(Path(db))
    assert str(team / "curation.toml") in record["source"]
    team_digest = record["config_sha256"]

    # the same command from another folder: another configuration, named with its file; nothing moves
    second = curate_in(home, "--catalog", db, "qc", "shortcut")
    assert second.returncode == 0, second.stderr
    output = second.stdout + second.stderr
    assert f"from {home / 'curation.toml'} (./curation.toml of the working directory)" in output
    assert f"is not the configuration of record ({team_digest}, from {team / 'curation.toml'}" in output
    assert 'inspectors[0].margin: 0.2 -> 0.5' in output and 'inspectors[0].name: "lexical" -> "cautious"' in output
    assert "evidence only" in second.stdout and "no task moved" in second.stdout
    assert "feature_analysis_1 v1: of record shortcut_discarded, this configuration shortcut_passed" in second.stdout
    assert _states(Path(db)) == {"feature_analysis_1": "shortcut_discarded", "feature_analysis_2": "shortcut_passed"}
    with Catalog(db, read_only=True) as cat:
        home_digest = cat.scalar("SELECT config_sha256 FROM shortcut_configs WHERE config_sha256 <> ?", [team_digest])
        assert cat.scalar("SELECT verdict FROM shortcut_verdicts WHERE task_id = 'feature_analysis_1' "
                          "AND config_sha256 = ?", [home_digest]) == "shortcut_passed"  # kept as evidence
    explained = curate_in(home, "--catalog", db, "explain", "feature_analysis_1").stdout
    assert f"version 1, verdict of record: shortcut_discarded (paper rule, configuration {team_digest}" in explained
    assert f"version 1, evidence, not of record: shortcut_passed (paper rule, configuration {home_digest}" \
        in explained
    report = (home / "shortcut.html").read_text(encoding="utf-8")
    assert "not the configuration of record" in report and "shortcut_discarded (of record)" in report
    shown = curate_in(home, "--catalog", db, "qc", "shortcut-config", "show").stdout
    assert f"of record {team_digest}" in shown and f"in force  {home_digest}" in shown and "margin" in shown

    # a typo in the file to adopt is named, and changes nothing
    typo = curate_in(home, "--catalog", db, "qc", "shortcut-config", "adopt", "--config", "curation.tmol")
    assert typo.returncode == 1 and "config file curation.tmol does not exist" in typo.stderr
    # adopting without --yes shows what it would re-decide and does nothing
    plan = curate_in(home, "--catalog", db, "qc", "shortcut-config", "adopt")
    assert plan.returncode == 0, plan.stderr
    assert f"adopting {home_digest} in place of {team_digest}" in plan.stdout
    assert "1 task versions would move" in plan.stdout and "1 keep their state" in plan.stdout
    assert "feature_analysis_1 v1: shortcut_discarded -> shortcut_passed" in plan.stdout
    assert "nothing adopted: run again with --yes" in plan.stdout
    assert len(_records(Path(db))) == 1 and _states(Path(db))["feature_analysis_1"] == "shortcut_discarded"
    adopted = curate_in(home, "--catalog", db, "qc", "shortcut-config", "adopt", "--yes")
    assert adopted.returncode == 0, adopted.stderr
    assert "feature_analysis_1 v1: shortcut_discarded -> shortcut_passed" in adopted.stdout
    assert [r["config_sha256"] for r in _records(Path(db))] == [team_digest, home_digest]
    assert _states(Path(db)) == {"feature_analysis_1": "shortcut_passed", "feature_analysis_2": "shortcut_passed"}
    explained = curate_in(home, "--catalog", db, "explain", "feature_analysis_1").stdout
    assert f"re-decided by {home_digest}, the configuration of record (was {team_digest})" in explained
    assert "version 1, verdict of record: shortcut_passed" in explained
    assert "version 1, earlier verdict of record: shortcut_discarded" in explained

    # the team's configuration, run again, is now the evidence: the task does not flip back
    third = curate_in(team, "--catalog", db, "qc", "shortcut")
    assert third.returncode == 0, third.stderr
    assert "evidence only" in third.stdout and f"not the configuration of record ({home_digest})" in third.stdout
    assert _states(Path(db)) == {"feature_analysis_1": "shortcut_passed", "feature_analysis_2": "shortcut_passed"}
    again = curate_in(home, "--catalog", db, "qc", "shortcut-config", "adopt", "--yes")
    assert again.returncode == 0 and "already the configuration of record" in again.stdout
    assert len(_records(Path(db))) == 2


def _openai_config(port: int) -> ShortcutConfig:
    inspector = {"name": "remote", "kind": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m",
                 "max_retries": 0, "backoff_s": 0.01, "timeout_s": 5.0}
    return build(ShortcutConfig, {"inspectors": [inspector]}, "qc.shortcut")


class NotAChatServer:
    """A real HTTP server that answers every POST with JSON that is no chat completion."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = b'{"status": "maintenance"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_bug_fails_the_run_while_an_endpoint_failure_leaves_tasks_undecided(clustered_catalog, monkeypatch):
    cat = clustered_catalog
    _giveaway_catalog(cat)

    async def broken(self, client, prompt, sample):
        raise RuntimeError("inspector bug: sample index out of range")

    with monkeypatch.context() as patch:
        patch.setattr(OpenAIInspector, "complete", broken)
        with pytest.raises(RuntimeError, match="inspector bug"):
            filter_shortcuts(cat, _openai_config(free_port()))
    assert cat.rows("SELECT status, error FROM runs WHERE stage = 'qc-shortcut'") == [
        {"status": "failed", "error": "RuntimeError: inspector bug: sample index out of range"}]
    assert cat.scalar("SELECT count(*) FROM shortcut_verdicts") == 0
    assert cat.scalar("SELECT count(*) FROM shortcut_config_record") == 0
    assert dict(cat.con.execute("SELECT task_id, state FROM task_states").fetchall()) == {
        "feature_analysis_1": "valid", "feature_analysis_2": "valid"}

    # what the filter means to tolerate: nothing listening, or a reply that is no chat completion
    for port in (free_port(), NotAChatServer().port):
        counts = filter_shortcuts(cat, _openai_config(port))
        assert (counts["undecided"], counts["failed"], counts["tasks"]) == (2, 2, 2)
    assert [r["status"] for r in cat.rows("SELECT status FROM runs WHERE stage = 'qc-shortcut' "
                                          "ORDER BY started_at")] == ["failed", "ok", "ok"]
    assert cat.scalar("SELECT count(*) FROM shortcut_verdicts") == 0
    assert cat.scalar("SELECT count(*) FROM shortcut_config_record") == 0  # nothing decided: no record yet


def test_migration_21_reads_back_which_verdict_decided_each_task(tmp_path):
    """A catalog from before verdicts of record: the last filter move of each task names its deciding verdict."""
    path = tmp_path / "old.duckdb"
    cat = Catalog.__new__(Catalog)
    cat.path, cat.con, cat._depth = path, duckdb.connect(str(path)), 0
    cat._migrate(MIGRATIONS[:20])
    con = cat.con
    con.execute("INSERT INTO shortcut_verdicts (task_id, task_version, config_sha256, verdict, rule, answers, run_id, "
                "created_at) VALUES "
                "('feature_analysis_1', 1, 'aaaa', 'shortcut_discarded', 'paper', '[]', 'r1', now()), "
                "('feature_analysis_1', 1, 'bbbb', 'shortcut_passed', 'paper', '[]', 'r2', now())")
    moves = [("feature_analysis_1", 1, None, "authored", "alice"), ("feature_analysis_1", 2, "authored", "valid", "x"),
             ("feature_analysis_1", 3, "valid", "shortcut_discarded", "qc-shortcut aaaa"),
             ("feature_analysis_1", 4, "shortcut_discarded", "shortcut_passed", "qc-shortcut bbbb"),
             ("gui_like_1", 1, None, "authored", "bob"), ("gui_like_1", 2, "authored", "valid", "x"),
             ("gui_like_1", 3, "valid", "shortcut_passed", "qc-shortcut aaaa")]  # passed unjudged: no verdict
    for task_id, seq, before, after, who in moves:
        con.execute("INSERT INTO task_transitions (task_id, version, seq, from_state, to_state, who) "
                    "VALUES (?, 1, ?, ?, ?, ?)", [task_id, seq, before, after, who])
    con.close()
    with Catalog(path) as cat:
        assert cat.rows("SELECT task_id, config_sha256 FROM shortcut_decisions") == [
            {"task_id": "feature_analysis_1", "config_sha256": "bbbb"}]
        assert cat.rows("SELECT task_id, verdict FROM shortcut_verdicts_of_record") == [
            {"task_id": "feature_analysis_1", "verdict": "shortcut_passed"}]
        assert cat.scalar("SELECT count(*) FROM shortcut_config_record") == 0  # the next run sets it
        assert cat.scalar("SELECT count(*) FROM shortcut_configs") == 0


def test_the_configuration_names_its_file_and_how_it_was_found(tmp_path):
    here, other = tmp_path / "here", tmp_path / "other.toml"
    here.mkdir()
    other.write_text('[qc.shortcut]\nrule = "mmstar"\n', encoding="utf-8")

    def first_line(*args: str, env: dict[str, str] | None = None) -> str:
        out = curate_in(here, *args, "config", env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()[0]

    assert first_line().startswith(f"# configuration from the built-in defaults (no --config, no $CURATE_CONFIG, "
                                   f"no ./curation.toml in {here}")
    (here / "curation.toml").write_text('[qc.shortcut]\nrule = "paper"\n', encoding="utf-8")
    assert first_line() == f"# configuration from {here / 'curation.toml'} (./curation.toml of the working directory)"
    assert first_line("--config", "../other.toml") == f"# configuration from {other} (--config)"
    assert first_line(env={"CURATE_CONFIG": str(other), "CURATE__QC__SHORTCUT__MAX_CORRECT": "1"}) == \
        f"# configuration from {other} ($CURATE_CONFIG) with CURATE__QC__SHORTCUT__MAX_CORRECT"


def test_an_edited_prompt_rejudges_exactly_the_task_versions_asked_with_it(clustered_catalog, monkeypatch, tmp_path):
    """The prompts' texts are part of a verdict's configuration: editing the platform prompt makes another
    configuration, under which the label tasks keep the verdicts of record (same prompt, same settings) and
    only the platform tasks are judged again; `qc shortcut-config show` names the change and the tasks due."""
    from typer.testing import CliRunner

    from curation.cli.base import app
    from curation.core.config import load_config
    from curation.qc.shortcut import prompts
    from curation.qc.shortcut.filter import configuration, plan_adoption
    from tests.qc.helpers import plant_task

    cat = clustered_catalog
    feeds = planted_catalog(cat)
    plant_giveaway_pair(cat, feeds)
    plant_task(cat, "moderation_1", feeds[3], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="举报不实视频", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}}])
    config = load_config().qc.shortcut
    first = filter_shortcuts(cat, config)
    assert first["new"] == 3 and first["carried"] == 0
    before, before_digest = configuration(config)

    original = prompts.template

    def edited(kind: str, language: str, style: str = "paper") -> str:
        text = original(kind, language, style)
        return text + "\n请只回答一个选项。" if kind == "platform" else text

    monkeypatch.setattr(prompts, "template", edited)
    after, digest = configuration(config)
    assert digest != before_digest and after["prompts"]["label"] == before["prompts"]["label"]
    plan = plan_adoption(cat, config)
    assert [t for t, _, _ in plan.to_judge] == ["moderation_1"] and plan.carried == 2
    catalog_path = cat.path
    cat.close()
    shown = CliRunner().invoke(app, ["--catalog", str(catalog_path), "qc", "shortcut-config", "show"])
    assert shown.exit_code == 0, shown.output
    old, new = before["prompts"]["platform"], after["prompts"]["platform"]
    assert f'prompts.platform: "{old}" -> "{new}"' in shown.output
    assert "1 task versions are due to be judged again" in shown.output and "moderation_1 v1: " in shown.output
    with Catalog(catalog_path) as again:
        second = filter_shortcuts(again, config)  # evidence: the record is the first configuration
        assert (second["new"], second["carried"], second["of_record"]) == (1, 2, False)
        third = filter_shortcuts(again, config)  # nothing left to judge under it
        assert (third["new"], third["carried"]) == (0, 0)
        kept = dict(again.con.execute("SELECT config_sha256, count(*) FROM shortcut_verdicts GROUP BY 1").fetchall())
        assert kept == {before_digest: 3, digest: 3}

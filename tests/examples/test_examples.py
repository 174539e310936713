"""The examples run as examples/README.md says to run them, and what they print is checked against the files they
made: the catalog read with a connection of its own, the exported feeds, the release's runner files, and
`curate grade` run again on the same episodes.

The commands are read from the README's shell block, so the documentation and this test cannot drift. They run
with TMPDIR set to a folder of this module's, where the examples' default work folder then lies, so the
authoring round starts from the feeds the first example made. The authoring round uses the suite's Label Studio
(`tests/labelstudio`), passed through the environment the example documents, instead of starting its own."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT
from tests.skips import EPISODES_FOLDER, V1_FOLDER, requires

EXAMPLES = ROOT / "examples"
TIMEOUT_S = 900  # a first Label Studio login and two model loads on a busy two-core machine


def readme_commands() -> dict[str, list[str]]:
    """Each example's command line from the README's ```sh block, by script name."""
    text = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines() if "examples/" in line]
    return {Path(shlex.split(line)[1]).name: shlex.split(line) for line in lines}


COMMANDS = readme_commands()


@pytest.fixture(scope="module")
def tmpdir_of_examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("examples-tmp")


def run_example(name: str, tmpdir: Path) -> str:
    """The example's README command, from the checkout, with TMPDIR pointing into this module's folder."""
    done = subprocess.run(COMMANDS[name], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
                          env={**os.environ, "TMPDIR": str(tmpdir)}, check=False)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def printed(pattern: str, out: str) -> re.Match[str]:
    found = re.search(pattern, out, re.MULTILINE)
    assert found is not None, f"no line matches {pattern!r} in:\n{out[-3000:]}"
    return found


def rows(catalog: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_readme_runs_every_example_and_nothing_else():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert set(COMMANDS) == scripts
    for name, argv in COMMANDS.items():  # from the checkout, with the interpreter `make` sets up
        assert argv[:2] == [".venv/bin/python", f"examples/{name}"], argv


def test_new_corpus_to_feeds(tmpdir_of_examples):
    out = run_example("new_corpus_to_feeds.py", tmpdir_of_examples)
    corpus = Path(printed(r"^wrote (\d+) videos to (\S+), ", out).group(2))
    assert corpus.is_relative_to(tmpdir_of_examples)  # the default work folder follows TMPDIR
    lines = corpus.read_text(encoding="utf-8").splitlines()
    catalog = Path(printed(r"^catalog (\S+)$", out).group(1))
    videos = int(printed(r"^videos in the catalog: (\d+)$", out).group(1))
    feeds = int(printed(r"^feeds in the catalog: (\d+)$", out).group(1))
    # every generated record was ingested under the mapping's source, and every feed asked for was built
    assert videos == len(lines) == rows(catalog, "SELECT count(*) FROM videos WHERE source = 'DemoCorpus'")[0][0]
    assert printed(r"^  (\d+) read, (\d+) accepted, 0 rejected", out).groups() == (str(len(lines)),) * 2
    asked = int(printed(r"^\$ curate .*feeds build --n (\d+)", out).group(1))
    assert feeds == asked == rows(catalog, "SELECT count(*) FROM latest_feeds")[0][0]
    assert len(list((corpus.parent / "feeds").glob("feed-*.json"))) == feeds
    # the feed shown is the catalog's, in order, with its anchor videos starred
    head = printed(r"^feed (\S+) v(\d+): (\d+) videos, (\d+) from cluster", out)
    shown = re.findall(r"^ +\d+ ([* ]) (\S+)  ", out[head.end():], re.MULTILINE)
    (video_feed, keyword_videos), = rows(catalog, f"SELECT video_feed, keyword_videos FROM feeds WHERE feed_id = "
                                                  f"'{head.group(1)}' AND version = {head.group(2)}")
    assert [v for _, v in shown] == video_feed and int(head.group(3)) == len(video_feed)
    assert {v for star, v in shown if star == "*"} == set(keyword_videos) and int(head.group(4)) == len(keyword_videos)


@pytest.mark.servers
def test_authoring_round(tmpdir_of_examples, label_studio):
    assert os.environ["LABEL_STUDIO_URL"] == label_studio["url"] and os.environ["LABEL_STUDIO_DATA_DIR"]
    out = run_example("authoring_round.py", tmpdir_of_examples)
    assert f"Label Studio: {label_studio['url']} (from the environment)" in out  # no second server
    written = re.findall(r"^(\S+) wrote on (\S+): (L\d) (\S+) (.+) -> (.+)$", out, re.MULTILINE)
    reviewed = re.findall(r"^(\S+) reviewed (\S+) \(written by (\S+)\)$", out, re.MULTILINE)
    assert len(written) >= 2 and {w[0] for w in written} == {"ex-ana", "ex-ben"}  # both wrote
    assert len(reviewed) == len(written) and all(reviewer != author for reviewer, _, author in reviewed)
    catalog = Path(printed(r"^catalog (\S+)$", out).group(1))
    release = Path(printed(r"^release folder: (\S+)$", out).group(1))
    assert int(printed(r"^tasks in the release: (\d+)$", out).group(1)) == len(written)

    # the release's runner files hold exactly the tasks the annotators wrote: each on its feed, with its check
    # (the runner's instruction carries a question's options after a line break)
    shipped = [{**t, "instruction": t["instruction"].split("\n")[0]}
               for f in sorted((release / "livingscreen").glob("*.json")) for t in json.loads(f.read_text("utf-8"))]
    feeds = dict(rows(catalog, "SELECT feed_id, video_feed FROM latest_feeds"))
    as_written = sorted((tuple(feeds[feed]), instruction, tier) for _, feed, tier, _, instruction, _ in written)
    tier_of = dict(rows(catalog, "SELECT task_id, tier FROM latest_tasks"))
    as_shipped = sorted((tuple(t["video_feed"]), t["instruction"], tier_of[t["task_id"]]) for t in shipped)
    assert as_shipped == as_written
    by_instruction_and_feed = {(t["instruction"], tuple(t["video_feed"])): t["eval_config"] for t in shipped}
    for _, feed, _, _, instruction, what in written:
        check = by_instruction_and_feed[(instruction, tuple(feeds[feed]))]
        like = re.fullmatch(r"like (\d+)", what)
        # annotators count videos from 1, the runner from 0
        assert check == ([{"func": "eval_like", "args": {"video_ids": int(like.group(1)) - 1}}] if like
                         else [{"answer": what}])
    # and each went through one blind review by someone else than its author
    assert sorted(rows(catalog, "SELECT r.task_id, r.reviewer, t.author FROM reviews r JOIN latest_tasks t "
                                "USING (task_id) WHERE r.outcome = 'reviewed_ok'")) == \
        sorted((task, reviewer, author) for reviewer, task, author in reviewed)


@requires(V1_FOLDER, EPISODES_FOLDER)
def test_grade_episodes(tmpdir_of_examples, tmp_path):
    # the folders the suite found, told to the example by the variables its help documents
    env = {**os.environ, "TMPDIR": str(tmpdir_of_examples), V1_FOLDER.env: str(V1_FOLDER.path),
           EPISODES_FOLDER.env: str(EPISODES_FOLDER.path)}
    done = subprocess.run(COMMANDS["grade_episodes.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env, check=False)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    out = done.stdout
    catalog = Path(printed(r"^catalog (\S+)$", out).group(1))
    command = shlex.split(printed(r"^\$ curate (grade .*)$", out).group(1))
    models = [Path(p) for p in command[1:command.index("--release")]]
    logs = sum(len(list(m.rglob("log.json"))) for m in models)
    assert int(printed(r"^episodes graded: (\d+) ", out).group(1)) == logs > 0

    # `curate grade` again, on a copy of the example's catalog (the release recorded there), as JSON
    shutil.copy(catalog, tmp_path / "catalog.duckdb")
    again = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(tmp_path / "catalog.duckdb"),
                            *command, "--json", "--out", str(tmp_path / "grades")], cwd=tmp_path,
                           capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert again.returncode == 0, again.stderr
    expected = {(g["model"], g["tier"]): (g["episodes"], round(g["sr"], 3))
                for g in json.loads(again.stdout)["per_tier"]}
    shown = {(m, t): (int(n), float(sr)) for m, t, n, sr in
             re.findall(r"^(\S+) (L\d): (\d+) episodes, SR ([\d.]+), ", out, re.MULTILINE)}
    assert shown == expected

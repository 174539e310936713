"""A small authoring round in Label Studio, through QC to a release, with two scripted annotators.

    .venv/bin/python examples/authoring_round.py [--work DIR]

It starts from the feeds of `new_corpus_to_feeds.py` (WORK/corpus/, made first when missing), in a copy of
that catalog in WORK/authoring/, and plays every part a team plays, by the shortest honest path:

  curate annotate export      the feeds into one authoring project per annotator (ex-ana, ex-ben)
  (ex-ana and ex-ben)         log in to Label Studio and write one task on each of their feeds
  curate annotate import      their annotations back as versioned tasks
  curate qc validate          the task rules
  curate qc shortcut          the shortcut filter; its default inspector is lexical (no LLM needed)
  curate qc review export     each task to the other annotator, blind
  (ex-ana and ex-ben)         answer the tasks they review, on their own
  curate qc review import     the same answer is `reviewed_ok`, a released state
  curate qc report            the funnel
  curate release build        the release, with its card, Croissant and runner files

Label Studio: when LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY (an admin's token) and LABEL_STUDIO_DATA_DIR (the
server's data folder: accounts are made through its own shell) are all set, that server is used. Otherwise
the example starts one on 127.0.0.1 (from `.venv-ls`, which `make test` or `make labelstudio` makes), with
its data in WORK/authoring/labelstudio/, and stops it at the end.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from _shared import curate, fresh_folder, parser
from new_corpus_to_feeds import FEEDS, SEED, VIDEOS, build_feeds

import curation.api
from curation.core.config import load_config

CONFIG = ("--config", "curation.toml")  # the round's configuration: the team's runner profile
RELEASE = "0.1.0"
ANNOTATORS = ("ex-ana", "ex-ben")  # names no other user of a shared server is likely to have
SERVER_ENV = ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY", "LABEL_STUDIO_DATA_DIR")
# A release targets a runner, and the public one serves FakeSV, LiveBot and Video-SafetyBench only: a task on
# videos it cannot serve is the error feed-source-not-served. A team that serves its own corpus says so in its
# own runner profile: the public one (`curate env show` prints it) plus the source (docs/manual.md, "The
# environment a release targets").
OUR_SOURCE = """
[sources.DemoCorpus]
prefix = "DemoCorpus/"
url = "static/data/DemoCorpus/{native}.mp4"   # where the team's runner serves each video from
shown = "none"                                # what the app shows beside it: no title, no counts
comments = "none"                             # and what it starts with: no comments
"""

# the counting question's options: every number of anchor videos a feed can have ([feeds] anchor_min..max)
COUNTS = range(load_config().feeds.anchor_min, load_config().feeds.anchor_max + 1)
LETTERS = "ABCDEFGHIJ"


# -- the server --------------------------------------------------------------------------------------------

@contextmanager
def label_studio(folder: Path) -> Iterator[dict[str, str]]:
    """The environment `curate` needs to reach Label Studio: the one given, or a server started here."""
    if all(os.environ.get(name) for name in SERVER_ENV):
        print(f"Label Studio: {os.environ['LABEL_STUDIO_URL']} (from the environment)")
        yield {name: os.environ[name] for name in SERVER_ENV}
        return
    from curation.core.services import free_port
    from curation.labelstudio.server import start_server, stop_server, wait_ready

    data, port, token = folder / "labelstudio", free_port(), secrets.token_hex(20)
    url = f"http://127.0.0.1:{port}"
    print(f"Label Studio: starting one at {url} (data and log in {data})", flush=True)
    server = start_server(data / "data", port, "admin@example.local", "Admin-" + secrets.token_hex(8), token,
                          log=data / "server.log")
    try:
        wait_ready(url, timeout_s=300, proc=server)
        yield {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token, "LABEL_STUDIO_DATA_DIR": str(data / "data")}
    finally:
        stop_server(server)


def log_in(url: str, name: str, password: str) -> requests.Session:
    """A person's own session, through Label Studio's login form as a browser fills it in (its CSRF check
    compares the page's `Origin` and the form's token)."""
    session = requests.Session()
    session.headers["Origin"] = url
    session.get(f"{url}/user/login/", timeout=60)
    answer = session.post(f"{url}/user/login/", timeout=60, allow_redirects=False,
                          data={"email": f"{name}@annotators.local", "password": password,
                                "csrfmiddlewaretoken": session.cookies.get("csrftoken") or ""},
                          headers={"Referer": f"{url}/user/login/"})
    if answer.status_code != 302 or "/user/login" in answer.headers.get("Location", ""):
        raise SystemExit(f"{name} could not log in to {url} (HTTP {answer.status_code})")
    session.headers.update({"X-CSRFToken": session.cookies.get("csrftoken") or "", "Referer": f"{url}/"})
    return session


def annotate(session: requests.Session, url: str, ls_task_id: int, fields: dict[str, str]) -> None:
    """One annotation, in the shape the labelling page writes: choices for the fixed lists, text for the rest."""
    result: list[dict[str, Any]] = [{"from_name": name, "to_name": "feed", **(
        {"type": "choices", "value": {"choices": [value]}} if name in ("tier", "subcategory", "answer")
        else {"type": "textarea", "value": {"text": [value]}})} for name, value in fields.items()]
    answer = session.post(f"{url}/api/tasks/{ls_task_id}/annotations/", json={"result": result}, timeout=60)
    if answer.status_code != 201:
        raise SystemExit(f"Label Studio refused the annotation of task {ls_task_id}: {answer.text[:300]}")


# -- what the scripted people write ------------------------------------------------------------------------

def counting_options() -> str:
    return "\n".join([*(f"{LETTERS[i]}: {count}个" for i, count in enumerate(COUNTS)),
                      f"{LETTERS[len(COUNTS)]}: 无法确定"])


def count_letter(topic: str, screen: list[list[str]], where: str) -> str:
    """The answer to "how many videos are about `topic`", counted on the hashtags of each video's card."""
    count = sum(topic in tags for tags in screen)
    if count not in COUNTS:
        raise SystemExit(f"{where}: {count} videos are about {topic}, outside the options {COUNTS}")
    return LETTERS[COUNTS.index(count)]


def authored(n: int, feed: dict[str, Any], tags: dict[str, list[str]]) -> dict[str, str]:
    """The task a scripted annotator writes on its n-th feed: a question with options on the topic the feed was
    built around (L2), or a like (L1). `tags`: each video's hashtags, as the feed's cards in Label Studio show
    them (the made-up corpus has no pictures to look at)."""
    if n % 2 == 0:
        topic = Counter(t for v in feed["keyword_videos"] for t in tags[v]).most_common(1)[0][0]
        return {"tier": "L2", "subcategory": "feature_analysis", "instruction": f"这组视频里，有几个是关于{topic}的？",
                "options": counting_options(),
                "answer": count_letter(topic, [tags[v] for v in feed["video_feed"]], feed["feed_id"])}
    target = 2 + n % (len(feed["video_feed"]) - 1)
    return {"tier": "L1", "subcategory": "gui_like", "instruction": f"给第{target}个视频点赞",
            "platform_state": f"like {target}"}


def reviewed(task: dict[str, Any], feed: dict[str, Any], tags: dict[str, list[str]]) -> dict[str, str]:
    """A reviewer's own answer, from the instruction and the feed only (the review is blind: no answer shown)."""
    question = re.fullmatch(r"这组视频里，有几个是关于(.+)的？", task["instruction"])
    like = re.fullmatch(r"给第(\d+)个视频点赞", task["instruction"])
    if question is not None:
        return {"answer": count_letter(question.group(1), [tags[v] for v in feed["video_feed"]], task["task_id"])}
    if like is not None:
        return {"platform_state": f"like {like.group(1)}"}
    raise SystemExit(f"{task['task_id']}: the scripted reviewer cannot read {task['instruction']!r}")


# -- the round ---------------------------------------------------------------------------------------------

def authoring_round(folder: Path, corpus_catalog: Path) -> None:
    fresh_folder(folder)
    # the team's runner profile starts from the public runner's, as `curate env show --toml` prints it
    (folder / "team-runner.toml").write_text(curate(folder, "env", "show", "--toml") + OUR_SOURCE,
                                             encoding="utf-8")
    (folder / "curation.toml").write_text('[runner]\nprofile = "team-runner.toml"\n', encoding="utf-8")
    (folder / "build").mkdir()
    shutil.copy(corpus_catalog, folder / "build" / "catalog.duckdb")
    catalog = curation.api.open(folder / "build" / "catalog.duckdb")
    passwords = {name: "Example-" + secrets.token_hex(6) for name in ANNOTATORS}
    # a new person's password: from this file (names and passwords, one pair a line), never on the command line
    password_file = folder / "passwords.txt"
    password_file.write_text("".join(f"{n} {p}\n" for n, p in passwords.items()), encoding="utf-8")
    password_file.chmod(0o600)

    with label_studio(folder) as server:
        url = server["LABEL_STUDIO_URL"]
        curate(folder, *CONFIG, "annotate", "export", "--add", ",".join(ANNOTATORS),
               "--passwords", password_file.name, env=server)
        sessions = {name: log_in(url, name, passwords[name]) for name in ANNOTATORS}

        feeds = {row["feed_id"]: row for row in catalog.feeds().iter_rows(named=True)}
        tags = {v: t or [] for v, t in catalog.videos().select("video_id", "hashtags").iter_rows()}
        sent = catalog.sql("SELECT feed_id, annotator, ls_task_id FROM ls_tasks ORDER BY feed_id")
        print()
        for n, row in enumerate(sent.iter_rows(named=True)):
            task = authored(n, feeds[row["feed_id"]], tags)
            annotate(sessions[row["annotator"]], url, row["ls_task_id"], task)
            print(f"{row['annotator']} wrote on {row['feed_id']}: {task['tier']} {task['subcategory']} "
                  f"{task['instruction']} -> {task.get('answer') or task['platform_state']}")

        curate(folder, *CONFIG, "annotate", "import", env=server)
        curate(folder, *CONFIG, "qc", "validate")
        curate(folder, *CONFIG, "qc", "shortcut")
        curate(folder, *CONFIG, "qc", "review", "export", "--reviewers", ",".join(ANNOTATORS), env=server)

        tasks = {row["task_id"]: row for row in catalog.tasks().iter_rows(named=True)}
        to_review = catalog.sql("SELECT person, ls_task_id, task_id FROM qc_items WHERE purpose = 'review' "
                                "ORDER BY task_id")
        print()
        for row in to_review.iter_rows(named=True):
            task = tasks[row["task_id"]]
            annotate(sessions[row["person"]], url, row["ls_task_id"], reviewed(task, feeds[task["feed_id"]], tags))
            print(f"{row['person']} reviewed {row['task_id']} (written by {task['author']})")
        curate(folder, *CONFIG, "qc", "review", "import", env=server)

    curate(folder, *CONFIG, "qc", "report")
    curate(folder, *CONFIG, "release", "build", "--version", RELEASE)

    states = catalog.tasks()["state"].value_counts(sort=True)
    (path, shipped), = catalog.sql("SELECT path, tasks FROM releases WHERE version = ?", [RELEASE]).iter_rows()
    print("\ntasks by state: " + ", ".join(f"{s} {n}" for s, n in states.iter_rows()))
    print(f"catalog {catalog.path}")
    print(f"release folder: {path}")
    print(f"tasks in the release: {shipped}")


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    corpus = args.work / "corpus" / "build" / "catalog.duckdb"
    if not corpus.is_file():
        print(f"no feeds at {corpus} yet: running new_corpus_to_feeds.py first")
        build_feeds(args.work / "corpus", VIDEOS, FEEDS, SEED)
    authoring_round(args.work / "authoring", corpus)


if __name__ == "__main__":
    main()

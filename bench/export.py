"""`curate annotate export` of many feeds to new annotators, beside Label Studio's own bulk import.

Starts a Label Studio server of its own (fresh data folder, free port), plants `--feeds` feeds of real
FakeSV metadata (12 videos each) in a fresh catalog, and exports them to `--annotators` new people,
timing where the time goes: the people's accounts (Label Studio's management shell), projects, rendering
the feed cards from the catalog, the import requests, and the catalog's records. Then the baseline: the
same task payloads imported with Label Studio's bulk import (one request per project) into fresh
projects, as a team would without the toolkit. Prints both and the ratio ours/baseline (goal <= 1.5x).

    .venv/bin/python bench/export.py --feeds 1000 --annotators 5
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.services import free_port  # noqa: E402
from curation.corpus.feeds import Feed, insert_feeds  # noqa: E402
from curation.ingest import ingest_path  # noqa: E402
from curation.labelstudio.server import start_server, wait_ready  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def timed(module: Any, name: str, label: str) -> None:
    """Wrap `module.name` so that the time spent in it adds to SPENT[label]."""
    inner: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - t0

    setattr(module, name, wrapper)


def plant(cat: Catalog, n: int, batch: int) -> None:
    videos = [r[0] for r in cat.con.execute("SELECT video_id FROM videos ORDER BY video_id").fetchall()]
    feeds = []
    for i in range(n):
        start = (i * 7) % (len(videos) - 12)
        chosen = videos[start:start + 12]
        chosen = chosen[::-1] if batch else chosen
        feeds.append(Feed(f"feed-{batch}-{i:04d}", 1, 0, "bench", chosen[:6], chosen[6:], chosen, 1.0, batch,
                          "bench"))
    insert_feeds(cat, feeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=5)
    args = parser.parse_args()

    from label_studio_sdk import LabelStudio

    import curation.annotate.export as export
    import curation.labelstudio.accounts as accounts
    from curation.labelstudio.client import http_client
    
    with tempfile.TemporaryDirectory() as tmp:
        data, media = Path(tmp) / "ls", Path(tmp) / "served" / "media"
        media.mkdir(parents=True)
        token, port = secrets.token_hex(20), free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(data, port, "admin@bench.local", "Bench-" + secrets.token_hex(6), token,
                            media_root=media, log=Path(tmp) / "ls.log")
        try:
            wait_ready(url, timeout_s=240, proc=proc)
            os.environ.update(LABEL_STUDIO_URL=url, LABEL_STUDIO_API_KEY=token, LABEL_STUDIO_DATA_DIR=str(data),
                              LABEL_STUDIO_ANNOTATOR_PASSWORD="Bench-" + secrets.token_hex(6))
            # the baseline talks to Label Studio through the same HTTP client as the toolkit
            client = LabelStudio(base_url=url, api_key=token, httpx_client=http_client(url))
            with Catalog(Path(tmp) / "c.duckdb") as cat:
                ingest_path(cat, "fakesv", ROOT / "raw/FakeSV/data.json")
                plant(cat, args.feeds, 0)
                people = [f"bench{i}" for i in range(args.annotators)]
                timed(accounts, "_django", "accounts (Label Studio's shell)")
                timed(export, "ensure_project", "projects (made, guide, media storage)")
                timed(export, "render_feeds", "rendering feed cards")
                timed(export, "ls_call", "Label Studio requests (tasks, lists)")
                t0 = time.perf_counter()
                counts = export.export_to_label_studio(cat, [], media, add=people)
                first = time.perf_counter() - t0
                assert counts["exported"] == args.feeds, counts
                spent_first = dict(SPENT)
                SPENT.clear()
                # the daily case: as many new feeds again, to the same people
                plant(cat, args.feeds, 1)
                t0 = time.perf_counter()
                counts = export.export_to_label_studio(cat, people, media)
                daily = time.perf_counter() - t0
                assert counts["exported"] == args.feeds, counts
                organizations = dict(cat.con.execute(
                    "SELECT project_id, organization_id FROM ls_projects").fetchall())
                second = {r[0] for r in cat.con.execute("SELECT ls_task_id FROM ls_tasks WHERE feed_id LIKE "
                                                        "'feed-1-%'").fetchall()}
            me = client.users.whoami()
            home = me.active_organization
            # the same task payloads, read back from the toolkit's projects, for the baseline's bulk import
            batches = []
            for project_id, organization in organizations.items():
                client.users.update(id=me.id, active_organization=organization)
                batches.append([{"data": t.data} for t in client.tasks.list(project=project_id) if t.id in second])
            client.users.update(id=me.id, active_organization=home)
            # the baseline: the same tasks imported into the same projects, each in its person's organization
            t0 = time.perf_counter()
            for (project_id, organization), batch in zip(organizations.items(), batches, strict=True):
                client.users.update(id=me.id, active_organization=organization)
                client.projects.import_tasks(id=project_id, request=batch, return_task_ids=True)
            client.users.update(id=me.id, active_organization=home)
            bulk = time.perf_counter() - t0
        finally:
            os.killpg(proc.pid, signal.SIGTERM)

    accounts_s = spent_first.get("accounts (Label Studio's shell)", 0.0)
    print(f"{args.feeds:,} feeds to {args.annotators} new annotators, then {args.feeds:,} more to the same people")
    print(f"Label Studio's bulk import of the second {args.feeds:,} tasks into the same projects: {bulk:6.2f} s")
    print(f"curate annotate export, the second {args.feeds:,} (known people):          {daily:6.2f} s")
    for label, spent in sorted(SPENT.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<44} {spent:6.2f} s")
    print(f"curate annotate export, the first {args.feeds:,} (new people, accounts):   {first:6.2f} s")
    for label, spent in sorted(spent_first.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<44} {spent:6.2f} s")
    print(f"ratio ours/bulk import (second export): {daily / bulk:.2f}x  (goal <= 1.5x)")
    print(f"the first export without the accounts, made once per person: {first - accounts_s:.2f} s "
          f"({(first - accounts_s) / bulk:.2f}x the bulk import)")

if __name__ == "__main__":
    main()

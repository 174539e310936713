"""Shortcut-filter throughput against an endpoint with a fixed artificial latency.

A small OpenAI-compatible server, in a process of its own as a real model server is, answers every
chat completion after `--latency` seconds. Our filter runs N tasks at concurrency C; the ideal is
ceil(N / C) x latency. Prints both and the ratio ideal/ours (goal >= 0.9), then re-runs and prints
how many requests the server received (goal: 0).

Where the time went (issue 30, measured at 2,000 tasks, C = 64, 0.2 s): ~5 ms per task were two catalog
queries and an insert per task when the verdicts moved the tasks (now one read and one write for all);
the endpoint answered ~40 ms late on every kept-alive connection (Nagle's algorithm, which model servers
turn off, as this one now does); and building a typed response object per answer (the reply's JSON is
read as it is).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog, now  # noqa: E402
from curation.core.config import ShortcutConfig, build  # noqa: E402
from curation.corpus.feeds import Feed, insert_feeds  # noqa: E402
from curation.ingest import ingest_path  # noqa: E402


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def _serve_forever(latency: float, port: Any, requests: Any) -> None:
    """The fake endpoint, in a process of its own as a real model server is: its work must not take the
    interpreter lock from the filter being measured."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as vLLM, Ollama or llama.cpp servers do
        disable_nagle_algorithm = True  # as they do too: without it every answer waits ~40 ms for a delayed ACK

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with requests.get_lock():
                requests.value += 1
            time.sleep(latency)
            body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "slow",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "A"}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = CountingServer(("127.0.0.1", 0), Handler)
    port.value = server.server_address[1]
    server.serve_forever()


class Endpoint:
    """A chat-completions endpoint answering "A" after `latency` seconds; `requests` counts what reached it."""

    def __init__(self, latency: float) -> None:
        ctx = multiprocessing.get_context("fork")
        self._port, self._requests = ctx.Value("i", 0), ctx.Value("i", 0)
        self._process = ctx.Process(target=_serve_forever, args=(latency, self._port, self._requests), daemon=True)
        self._process.start()
        while not self._port.value:
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port.value}/v1"

    @property
    def requests(self) -> int:
        return int(self._requests.value)

    def stop(self) -> None:
        self._process.terminate()
        self._process.join()


def plant(cat: Catalog, n: int) -> None:
    videos = [r[0] for r in cat.con.execute("SELECT video_id FROM videos ORDER BY video_id LIMIT 600").fetchall()]
    feeds = []
    for i in range(n):
        chosen = videos[(i * 9) % 590:(i * 9) % 590 + 9]
        feeds.append(Feed(f"feed-0-{i:04d}", 1, 0, "bench", chosen[:3], chosen[3:], chosen, 2.0, 0, "bench"))
    insert_feeds(cat, feeds)
    for i in range(n):
        cat.insert("tasks", {
            "task_id": f"feature_analysis_{i + 1}", "version": 1, "author": "bench", "feed_id": f"feed-0-{i:04d}",
            "base_feed_version": 1, "feed_version": 1, "tier": "L2", "subcategory": "feature_analysis",
            "eval_type": "label", "instruction": f"问题 {i}", "options": json.dumps({"A": "甲", "B": "乙", "C": "丙"}),
            "eval_config": json.dumps([{"answer": "B"}]), "annotation_sha256": "sha",
            "lead_time_s": 1.0, "annotated_at": now(), "run_id": "bench", "created_at": now()})
        for seq, (before, after) in enumerate([(None, "authored"), ("authored", "valid")], start=1):
            cat.insert("task_transitions", {"task_id": f"feature_analysis_{i + 1}", "version": 1, "seq": seq,
                                            "from_state": before, "to_state": after, "run_id": "bench",
                                            "moved_at": now()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=320)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    import openai  # noqa: F401  (imported before the clock starts, as in a warm process)

    from curation.qc.shortcut.filter import filter_shortcuts

    server = Endpoint(args.latency)
    with tempfile.TemporaryDirectory() as tmp, Catalog(Path(tmp) / "c.duckdb") as cat:
        ingest_path(cat, "fakesv", ROOT / "raw/FakeSV/data.json")
        plant(cat, args.tasks)
        config = build(ShortcutConfig, {"concurrency": args.concurrency, "inspectors": [
            {"name": "slow", "kind": "openai", "base_url": server.url,
             "model": "slow", "temperature": 0.0, "samples": 1}]}, "qc.shortcut")
        t0 = time.perf_counter()
        counts = filter_shortcuts(cat, config)
        ours = time.perf_counter() - t0
        assert counts["failed"] == 0 and counts["tasks"] == args.tasks, counts
        ideal = math.ceil(args.tasks / args.concurrency) * args.latency
        print(f"{args.tasks} tasks, concurrency {args.concurrency}, latency {args.latency:.2f} s")
        print(f"ideal (ceil(N/C) x latency): {ideal:6.2f} s")
        print(f"curate qc shortcut:          {ours:6.2f} s   ({server.requests} requests)")
        print(f"ratio ideal/ours: {ideal / ours:.3f}x  (goal >= 0.9x)")
        before = server.requests
        t0 = time.perf_counter()
        again = filter_shortcuts(cat, config)
        print(f"re-run: {server.requests - before} requests reached the server (goal 0), "
              f"{again['requests']} sent, {time.perf_counter() - t0:.2f} s")
    server.stop()


if __name__ == "__main__":
    main()

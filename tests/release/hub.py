"""A stand-in Hugging Face hub on 127.0.0.1 that answers the calls a dataset upload makes and
records every request it gets (method, path, body), so a test can check the exact sequence."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class RecordingHub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.repos: dict[str, dict[str, Any]] = {}  # repo -> {"files": {path: bytes}, "tags": {name: oid}}
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                record = {"method": self.command, "path": self.path.split("?")[0],
                          "authorization": self.headers.get("Authorization"), "raw": raw}
                hub.requests.append(record)
                code, body = hub.answer(record)
                self._reply(code, body)

            do_GET = do_POST = do_PUT = do_DELETE = _handle  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, request: dict[str, Any]) -> tuple[int, Any]:
        method, path = request["method"], request["path"]
        parts = path.strip("/").split("/")
        if path == "/api/repos/create":
            body = json.loads(request["raw"])
            repo = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
            if repo in self.repos:
                return 409, {"error": "You already created this dataset repo", "url": f"{self.url}/datasets/{repo}"}
            self.repos[repo] = {"files": {}, "tags": {}, "commits": []}
            return 200, {"url": f"{self.url}/datasets/{repo}", "name": repo}
        if path == "/api/validate-yaml":
            return 200, {}
        if len(parts) >= 5 and parts[:2] == ["api", "datasets"]:
            repo, action = f"{parts[2]}/{parts[3]}", parts[4]
            state = self.repos.get(repo)
            if state is None:
                return 404, {"error": "Repository not found"}
            if action == "refs" and method == "GET":
                head = state["commits"][-1] if state["commits"] else "0" * 40
                return 200, {"branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": head}],
                             "converts": [], "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": oid}
                                                      for t, oid in state["tags"].items()]}
            if action == "preupload":
                files = json.loads(request["raw"])["files"]
                return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                        "oid": None} for f in files]}
            if action == "commit":
                lines = [json.loads(line) for line in request["raw"].decode().splitlines() if line.strip()]
                request["commit"] = lines
                for line in lines:
                    if line["key"] == "file":
                        state["files"][line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                oid = hashlib.sha1(request["raw"]).hexdigest()
                state["commits"].append(oid)
                return 200, {"commitUrl": f"{self.url}/datasets/{repo}/commit/{oid}", "commitOid": oid,
                             "pullRequestUrl": None}
            if action == "tag":
                tag = json.loads(request["raw"])["tag"]
                if tag in state["tags"]:
                    return 409, {"error": "Tag already exists"}
                state["tags"][tag] = parts[5] if len(parts) > 5 else state["commits"][-1]
                return 200, {}
        return 404, {"error": f"no route for {method} {path}"}

"""A stand-in Hugging Face hub on 127.0.0.1 that answers the calls a dataset upload and a
download make, as the real Hub does, and records every request (method, path, body).

What it keeps of the real Hub's behaviour, because publishing depends on it:
- a new repo starts with one commit holding `.gitattributes` (the LFS patterns);
- `preupload` says `lfs` for a file its `.gitattributes` sends to LFS, a file whose sample is
  binary, or one over the size threshold; `regular` otherwise;
- LFS objects go through the batch endpoint, then a PUT of the bytes (refused unless they hash to
  the oid), then a verify call; a commit may only name LFS objects that arrived;
- a commit starts from the branch head (`parentCommit`, when given, must be that head) and applies
  `file`, `lfsFile` and `deletedFile` lines; every commit keeps its own tree, so a tag shows the
  files of its commit;
- `tree` lists a revision's files (git blob id, LFS sha256); `resolve` serves a file's bytes with
  the headers `hf_hub_download` reads.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

LFS_PATTERNS = ("*.parquet", "*.arrow", "*.zip", "*.gz", "*.mp4", "*.npy", "*.bin", "*.png", "*.jpg")
GITATTRIBUTES = "".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in LFS_PATTERNS).encode()
LFS_THRESHOLD = 10 * 1024 * 1024  # the real Hub sends a file this size or larger to LFS


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\n"
            f"size {len(data)}\n").encode()


class RecordingHub:
    def __init__(self, lfs_threshold: int = LFS_THRESHOLD) -> None:
        self.requests: list[dict[str, Any]] = []
        # repo -> {"files": {path: bytes} at main, "trees": {commit: {path: (bytes, lfs?)}},
        #          "commits": [oid, ...] on main, "tags": {name: oid}}
        self.repos: dict[str, dict[str, Any]] = {}
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> bytes, as PUT by the client
        self.lfs_threshold = lfs_threshold
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                url = urlsplit(self.path)
                record = {"method": self.command, "path": unquote(url.path), "query": parse_qs(url.query),
                          "authorization": self.headers.get("Authorization"), "raw": raw}
                with hub.lock:
                    hub.requests.append(record)
                    code, body, headers = hub.answer(record)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(code)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- what a test reads back -------------------------------------------------------------
    def files_at(self, repo: str, revision: str) -> dict[str, bytes]:
        state = self.repos[repo]
        return {path: data for path, (data, _) in state["trees"][self._resolve(state, revision)].items()}

    def lfs_paths_at(self, repo: str, revision: str) -> set[str]:
        state = self.repos[repo]
        return {path for path, (_, lfs) in state["trees"][self._resolve(state, revision)].items() if lfs}

    def calls(self, since: int = 0) -> list[tuple[str, str]]:
        return [(r["method"], r["path"]) for r in self.requests[since:]]

    # --- the routes -------------------------------------------------------------------------
    @staticmethod
    def _resolve(state: dict[str, Any], revision: str) -> str:
        if revision == "main":
            return state["commits"][-1]
        return state["tags"].get(revision, revision)

    def _commit(self, state: dict[str, Any], tree: dict[str, tuple[bytes, bool]], raw: bytes) -> str:
        oid = hashlib.sha1(raw + str(len(state["commits"])).encode()).hexdigest()
        state["trees"][oid] = tree
        state["commits"].append(oid)
        state["files"] = {path: data for path, (data, _) in tree.items()}
        return oid

    def answer(self, request: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        method, path = request["method"], request["path"]
        parts = path.strip("/").split("/")
        if path == "/api/repos/create":
            body = json.loads(request["raw"])
            repo = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
            if repo in self.repos:
                return 409, {"error": "You already created this dataset repo",
                             "url": f"{self.url}/datasets/{repo}"}, {}
            self.repos[repo] = {"name": repo, "files": {}, "trees": {}, "commits": [], "tags": {}}
            self._commit(self.repos[repo], {".gitattributes": (GITATTRIBUTES, False)}, b"initial commit")
            return 200, {"url": f"{self.url}/datasets/{repo}", "name": repo}, {}
        if path == "/api/validate-yaml":
            return 200, {}, {}
        if path.startswith("/lfs/"):
            return self._lfs_object(method, parts[1], request["raw"])
        if len(parts) >= 4 and parts[0] == "datasets" and parts[2].endswith(".git"):
            return self._lfs_batch(json.loads(request["raw"]))
        if len(parts) >= 5 and parts[0] == "datasets" and parts[3] == "resolve":
            state = self.repos.get(f"{parts[1]}/{parts[2]}")
            return self._resolve_file(state, parts[4], "/".join(parts[5:])) if state else \
                (404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        if len(parts) >= 5 and parts[:2] == ["api", "datasets"]:
            state = self.repos.get(f"{parts[2]}/{parts[3]}")
            if state is None:
                return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
            return self._repo_api(state, method, parts[4], parts[5:], request)
        return 404, {"error": f"no route for {method} {path}"}, {}

    def _repo_api(self, state: dict[str, Any], method: str, action: str, rest: list[str],
                  request: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if action == "refs" and method == "GET":
            return 200, {"branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": state["commits"][-1]}],
                         "converts": [], "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": oid}
                                                  for t, oid in state["tags"].items()]}, {}
        if action == "preupload":
            files = json.loads(request["raw"])["files"]
            return 200, {"files": [{"path": f["path"], "uploadMode": self._upload_mode(f), "shouldIgnore": False,
                                    "oid": None} for f in files]}, {}
        if action == "commit":
            return self._apply_commit(state, request)
        if action == "tag":
            tag = json.loads(request["raw"])["tag"]
            if tag in state["tags"]:
                return 409, {"error": "Tag already exists"}, {}
            state["tags"][tag] = self._resolve(state, rest[0] if rest else "main")
            return 200, {}, {}
        if action == "tree" and method == "GET":
            revision = self._resolve(state, rest[0] if rest else "main")
            if revision not in state["trees"]:
                return 404, {"error": f"Invalid rev id: {rest[0]}"}, {"X-Error-Code": "RevisionNotFound"}
            return 200, self._tree(state["trees"][revision], "/".join(rest[1:])), {}
        return 404, {"error": f"no route for {method} {action}"}, {}

    def _upload_mode(self, entry: dict[str, Any]) -> str:
        sample = base64.b64decode(entry["sample"])
        binary = b"\0" in sample
        tracked = any(fnmatch.fnmatch(entry["path"].rsplit("/", 1)[-1], p) for p in LFS_PATTERNS)
        return "lfs" if tracked or binary or entry["size"] >= self.lfs_threshold else "regular"

    def _lfs_batch(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        objects = []
        for obj in body["objects"]:
            if obj["oid"] in self.lfs_objects:  # already stored: nothing to send
                objects.append({"oid": obj["oid"], "size": obj["size"]})
            else:
                objects.append({"oid": obj["oid"], "size": obj["size"], "authenticated": True, "actions": {
                    "upload": {"href": f"{self.url}/lfs/{obj['oid']}"},
                    "verify": {"href": f"{self.url}/lfs/{obj['oid']}/verify"}}})
        return 200, {"transfer": "basic", "objects": objects}, {"Content-Type": "application/vnd.git-lfs+json"}

    def _lfs_object(self, method: str, oid: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        if method == "PUT":
            if hashlib.sha256(raw).hexdigest() != oid:
                return 400, {"error": "the bytes do not hash to the oid"}, {}
            self.lfs_objects[oid] = raw
            return 200, {}, {}
        body = json.loads(raw)
        ok = body["oid"] in self.lfs_objects and len(self.lfs_objects[body["oid"]]) == body["size"]
        return (200, {}, {}) if ok else (404, {"error": "object not uploaded"}, {})

    def _apply_commit(self, state: dict[str, Any], request: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        lines = [json.loads(line) for line in request["raw"].decode().splitlines() if line.strip()]
        request["commit"] = lines
        head = state["commits"][-1]
        tree = dict(state["trees"][head])
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header" and value.get("parentCommit") not in (None, head):
                return 412, {"error": "A commit has happened since. Please refresh and try again."}, {}
            if key == "file":
                tree[value["path"]] = (base64.b64decode(value["content"]), False)
            elif key == "lfsFile":
                data = self.lfs_objects.get(value["oid"])
                if data is None or len(data) != value["size"]:
                    return 422, {"error": f"LFS object {value['oid']} was not uploaded"}, {}
                tree[value["path"]] = (data, True)
            elif key == "deletedFile" and tree.pop(value["path"], None) is None:
                return 404, {"error": f"{value['path']} does not exist"}, {}
        oid = self._commit(state, tree, request["raw"])
        return 200, {"commitUrl": f"{self.url}/datasets/{state['name']}/commit/{oid}", "commitOid": oid,
                     "pullRequestUrl": None}, {}

    @staticmethod
    def _tree(tree: dict[str, tuple[bytes, bool]], under: str) -> list[dict[str, Any]]:
        prefix = f"{under.strip('/')}/" if under else ""
        folders = sorted({p.rsplit("/", 1)[0] for p in tree if "/" in p and p.startswith(prefix)})
        entries: list[dict[str, Any]] = [{"type": "directory", "path": f, "oid": hashlib.sha1(f.encode()).hexdigest()}
                                         for f in folders]
        for path, (data, lfs) in sorted(tree.items()):
            if path.startswith(prefix):
                entry = {"type": "file", "path": path, "size": len(data),
                         "oid": blob_id(lfs_pointer(data) if lfs else data)}
                if lfs:
                    entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                    "pointerSize": len(lfs_pointer(data))}
                entries.append(entry)
        return entries

    def _resolve_file(self, state: dict[str, Any], revision: str, path: str) -> tuple[int, Any, dict[str, str]]:
        commit = self._resolve(state, revision)
        found = state["trees"].get(commit, {}).get(path)
        if found is None:
            return 404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
        data, lfs = found
        etag = hashlib.sha256(data).hexdigest() if lfs else blob_id(data)
        headers = {"Content-Type": "application/octet-stream", "X-Repo-Commit": commit, "ETag": f'"{etag}"'}
        if lfs:
            headers |= {"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))}
        return 200, data, headers

"""An access gate in front of Label Studio: annotators and reviewers use the gate's URL, and reach
only their own projects and what is in them (issue 24: Label Studio Community checks login, not
ownership, so a reviewer could read the author's answer at /api/annotations/<id>).

A threaded reverse proxy on 127.0.0.1 (standard library only: http.server in, http.client out,
bodies streamed). The admin's token (`Authorization: Token $LABEL_STUDIO_API_KEY`) and the admin's
own login pass unchanged; every other request must be on the allow-list in `gate_rules` and name
only objects the caller owns (`gate_owner`), else the gate answers 403 itself and Label Studio never
sees it. Lists that Label Studio would fill with other people's projects are cut to the caller's.

    python -m curation.labelstudio.gate --upstream http://127.0.0.1:8080 --port 8081
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from curation.labelstudio.client import GATE_FILE
from curation.labelstudio.gate_owner import Caller, Owners, Upstream
from curation.labelstudio.gate_rules import Refused, canonical_path, decide

TOKEN_ENV = "LABEL_STUDIO_API_KEY"
# Controls Label Studio shows everyone that only the admin may use (the gate refuses what they send): hidden
# on the pages the gate serves to others, so nobody is offered a button that can only fail
HIDDEN_CONTROLS = ('button[aria-label="Create new project"]', 'button[data-testid="dm-import-button"]',
                   'button[aria-label="Tasks Actions"]')
PAGE_STYLE = ("<style>/* added by the access gate */ " + ", ".join(HIDDEN_CONTROLS)
              + " { display: none !important; }</style>").encode()
REFUSED_HEADER = "X-Access-Gate"  # on every answer the gate gives itself: "refused"
MAX_BODY = 256 * 1024 * 1024
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
              "transfer-encoding", "upgrade", "expect", "content-length"}
CHUNK = 64 * 1024


class GateServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], upstream: Upstream, admin_token: str, verbose: bool = False) -> None:
        if not admin_token:
            raise ValueError(f"the admin token is empty: set {TOKEN_ENV}")
        super().__init__(address, GateHandler)
        self.upstream = upstream
        self.owners = Owners(upstream, admin_token)
        self.admin_authorization = f"Token {admin_token}"
        self.verbose = verbose

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class GateHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: GateServer

    def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
        self.gate()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # http.server's own lines would print paths for every file; `note` says what matters

    def note(self, who: str, status: int, why: str = "") -> None:
        if self.server.verbose or status in (400, 403):
            path = self.path.split("?", 1)[0]
            sys.stderr.write(f"gate: {who} {self.command} {path} -> {status}{f' ({why})' if why else ''}\n")

    # ---- deciding -------------------------------------------------------------------------

    def gate(self) -> None:
        try:
            body = self.read_body()
        except Refused as refused:
            self.refuse(refused.status, refused.reason, api=True)
            return
        authorization = self.headers.get("Authorization", "")
        if authorization and hmac.compare_digest(authorization.encode(), self.server.admin_authorization.encode()):
            self.note("admin-token", 200)
            self.forward(body, drop_cookie=True)  # one identity per request: the token's
            return
        target = self.path
        raw_path, _, query = target.partition("?")
        api = raw_path.startswith("/api")
        try:
            path = canonical_path(raw_path)
        except Refused as refused:
            self.note("?", refused.status, refused.reason)
            self.refuse(refused.status, refused.reason, api)
            return
        decision, refusal = None, None
        try:
            decision = decide(self.command, path, query, body, self.headers.get("Content-Type", ""))
        except Refused as refused:
            refusal = refused
        if decision is not None and decision.rule.public:
            self.forward(body)
            return
        credentials = {"Authorization": authorization} if authorization else (
            {"Cookie": self.headers["Cookie"]} if self.headers.get("Cookie") else {})
        try:
            caller = self.server.owners.identify(credentials)
        except OSError:
            self.refuse(502, "Label Studio did not answer", api)
            return
        if caller is None:
            self.note("anonymous", 401)
            self.not_logged_in(path, api)
            return
        who = caller.email or f"user {caller.user_id}"
        if caller.user_id == self.server.owners.admin_id():
            self.forward(body, drop_cookie=bool(authorization))
            return
        try:
            if refusal is not None:
                raise refusal
            assert decision is not None
            owners = self.server.owners
            projects = [object_id for kind, object_id in decision.objects if kind == "project"]
            for project_id in projects:
                owners.check(caller, "project", project_id)
            if projects:  # before the other objects: Label Studio shows them only in the project's organization
                owners.work_in(caller, projects[0])
            for kind, object_id in decision.objects:
                if kind != "project":
                    owners.check(caller, kind, object_id)
        except Refused as refused:
            self.note(who, refused.status, refused.reason)
            self.refuse(refused.status, refused.reason, api)
            return
        except OSError:
            self.refuse(502, "Label Studio did not answer", api)
            return
        self.note(who, 200)
        page = self.command == "GET" and not api and decision.rule.filter is None
        self.forward(body, drop_cookie=bool(authorization), cut=decision.rule.filter, caller=caller, page=page)

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise Refused("send a Content-Length, not a chunked body", 411)
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        if not (length.isascii() and length.isdigit()) or len(length) > 12 or int(length) > MAX_BODY:
            raise Refused("body too large or its length unreadable", 413)
        return self.rfile.read(int(length))

    def not_logged_in(self, path: str, api: bool) -> None:
        if api:
            self.send_plain(401, json.dumps({"detail": "log in first"}).encode(), "application/json")
            return
        self.send_response(302)
        self.send_header("Location", "/user/login/?next=" + path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def refuse(self, status: int, reason: str, api: bool) -> None:
        if api:
            body, kind = json.dumps({"detail": f"refused by the access gate: {reason}"}).encode(), "application/json"
        else:
            body, kind = f"<h1>{status}</h1><p>Refused by the access gate: {reason}</p>".encode(), "text/html"
        self.send_plain(status, body, kind)

    def send_plain(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header(REFUSED_HEADER, "refused")
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # ---- forwarding -----------------------------------------------------------------------

    def forward(self, body: bytes, drop_cookie: bool = False, cut: str | None = None,
                caller: Caller | None = None, page: bool = False) -> None:
        """Label Studio's answer, streamed; a list cut to the caller's own (`cut`); an HTML page with the
        admin-only controls hidden (`page`)."""
        named = {h.strip().lower() for h in self.headers.get("Connection", "").split(",")}
        plain = cut or page  # read and rewritten here: asked for uncompressed
        drop = HOP_BY_HOP | named | ({"cookie"} if drop_cookie else set()) | ({"accept-encoding"} if plain else set())
        conn = self.server.upstream.connection()
        try:
            # the client's Host is kept: Django checks a POST's Origin against it, and builds redirects from it
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in drop:
                    conn.putheader(name, value)
            conn.putheader("X-Forwarded-For", self.client_address[0])
            if body or self.command in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            response = conn.getresponse()
        except OSError:
            conn.close()
            self.refuse(502, "Label Studio did not answer", self.path.startswith("/api"))
            return
        try:
            headers = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP]
            if cut and caller is not None and response.status == 200:
                self.send_cut(response.status, headers, response.read(), cut, caller)
                return
            if page and response.status == 200 and "text/html" in (response.getheader("Content-Type") or ""):
                self.send_page(headers, response.read())
                return
            self.send_response(response.status, response.reason)
            for name, value in headers:
                self.send_header(name, value)
            no_body = self.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
            length = response.getheader("Content-Length")
            if no_body:
                self.send_header("Content-Length", length or "0")
                self.end_headers()
            elif length is not None:
                self.send_header("Content-Length", length)
                self.end_headers()
                while chunk := response.read(CHUNK):
                    self.wfile.write(chunk)
            else:  # Label Studio streamed without a length: stream on, chunked
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while chunk := response.read1(CHUNK):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
        finally:
            conn.close()

    def send_page(self, headers: list[tuple[str, str]], body: bytes) -> None:
        head = body.find(b"</head>")
        out = body[:head] + PAGE_STYLE + body[head:] if head >= 0 else body
        self.send_response(200)
        for name, value in headers:
            if name.lower() not in ("content-encoding", "etag"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def send_cut(self, status: int, headers: list[tuple[str, str]], body: bytes, cut: str, caller: Caller) -> None:
        """A list answer with only the caller's own entries in it."""
        try:
            data = json.loads(body)
        except ValueError:
            self.refuse(502, "Label Studio's list was not JSON", True)
            return
        items = data.get("results") if isinstance(data, dict) else data
        if not isinstance(items, list):
            self.refuse(502, "Label Studio's list had an unexpected shape", True)
            return
        owners = self.server.owners
        keep = {"projects": lambda item: owners.owns_project(caller, int(item["id"])),
                "users": lambda item: int(item["id"]) == caller.user_id,
                "organizations": lambda item: caller.user_id in owners.members(int(item["id"]))}[cut]
        kept = [item for item in items if isinstance(item, dict) and "id" in item and keep(item)]
        if isinstance(data, dict):
            data["results"] = kept
            if isinstance(data.get("count"), int):
                data["count"] -= len(items) - len(kept)
        else:
            data = kept
        out = json.dumps(data).encode()
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-encoding", "etag"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)


def start_gate(upstream: str, admin_token: str, host: str = "127.0.0.1", port: int = 0,
               verbose: bool = False) -> tuple[GateServer, threading.Thread]:
    """A running gate (port 0: a free one) and its thread; `server.shutdown()` stops it."""
    server = GateServer((host, port), Upstream(upstream), admin_token, verbose)
    thread = threading.Thread(target=server.serve_forever, name="labelstudio-gate", daemon=True)
    thread.start()
    return server, thread


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The access gate annotators use in front of Label Studio.")
    parser.add_argument("--upstream", default=os.environ.get("LABEL_STUDIO_URL", "http://127.0.0.1:8080"),
                        help="Label Studio's own URL (default: $LABEL_STUDIO_URL or http://127.0.0.1:8080)")
    parser.add_argument("--host", default=os.environ.get("LABEL_STUDIO_GATE_HOST", "127.0.0.1"),
                        help="address to listen on (default: $LABEL_STUDIO_GATE_HOST or 127.0.0.1; 0.0.0.0 = every "
                        "interface, for annotators on other machines)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("LABEL_STUDIO_GATE_PORT", 8081)))
    parser.add_argument("--public-url", default=os.environ.get("LABEL_STUDIO_GATE_PUBLIC_URL", ""),
                        help="the address annotators open when a reverse proxy sits in front (https://...); "
                        "exports tell them this URL")
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("LABEL_STUDIO_DATA_DIR") or None,
                        help="Label Studio's data folder: the gate announces its URL there (gate.json) for exports")
    parser.add_argument("--verbose", action="store_true", help="one line per request (never a token or cookie)")
    args = parser.parse_args(argv)
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        raise SystemExit(f"set {TOKEN_ENV} (the Label Studio admin token) in the environment")
    server = GateServer((args.host, args.port), Upstream(args.upstream), token, args.verbose)
    try:
        server.owners.admin_id()
    except (OSError, RuntimeError) as exc:
        raise SystemExit(f"Label Studio at {args.upstream} is not usable: {exc}") from None
    url = (args.public_url or public_url(args.host, server.server_address[1])).rstrip("/")
    announce = args.data_dir / GATE_FILE if args.data_dir else None
    if announce is not None:
        announce.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    print(f"Label Studio gate ready at {url}/ (give annotators this URL); forwarding to {args.upstream}",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if announce is not None:
            announce.unlink(missing_ok=True)


def public_url(host: str, port: int) -> str:
    """The gate's address as another machine writes it: this machine's name when it listens everywhere."""
    shown = socket.getfqdn() if host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"


if __name__ == "__main__":
    main()

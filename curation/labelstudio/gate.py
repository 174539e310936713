"""An access gate in front of Label Studio: annotators and reviewers use the gate's URL, and reach
only their own projects and what is in them (issue 24: Label Studio Community checks login, not
ownership, so a reviewer could read the author's answer at /api/annotations/<id>).

A threaded reverse proxy on 127.0.0.1 (standard library only: http.server in, http.client out,
bodies streamed). The admin's token (`Authorization: Token $LABEL_STUDIO_API_KEY`) and the admin's
own login pass unchanged; every other request must be on the allow-list in `gate_rules` and name
only objects the caller owns (`gate_owner`), else the gate answers 403 itself and Label Studio never
sees it. Lists that Label Studio would fill with other people's projects are cut to the caller's.

Every request gets exactly one answer: what cannot be read (a method, a target, an id, a body) is a 4xx
from the gate, a client that goes away is one line in the log, and a failure of the gate's own is a 500
with its traceback in the log, never a connection dropped without an answer.

    python -m curation.labelstudio.gate --upstream http://127.0.0.1:8080 --port 8081
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import html
import http.client
import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

from curation.labelstudio.client import GATE_FILE
from curation.labelstudio.gate_owner import Caller, Owners, Upstream
from curation.labelstudio.gate_rules import METHODS, Refused, canonical_path, check_target, decide, refused_to_people

TOKEN_ENV = "LABEL_STUDIO_API_KEY"


@dataclass(frozen=True)
class Control:
    """A control of Label Studio 1.23's pages that changes something, and the request pressing it sends."""

    selector: str  # CSS as the frontend marks it (plain CSS: one invalid selector would void the whole style)
    method: str
    target: str  # `1` stands for the person's own project or account


# Every control that sends a request a member of the project could be refused. The gate's rules decide
# which are hidden on the pages it serves to people (`HIDDEN_CONTROLS`): a control whose request the rules
# refuse to everyone but the admin is never offered, so no page claims that something the gate refused
# was done (the Danger Zone said "Project deleted successfully" on a 403).
CONTROLS = (
    Control('button[aria-label="Create new project"]', "POST", "/api/projects/"),
    Control('button[data-testid="dm-import-button"]', "POST", "/api/projects/1/import"),
    Control('button[aria-label="Tasks Actions"]', "POST", "/api/dm/actions?id=delete_tasks&project=1"),
    Control('a[href="/organization"]', "GET", "/organization"),  # the main menu's people page
    # the settings menu: a page is linked only when the gate serves it
    Control('a[href$="/settings/labeling"]', "GET", "/projects/1/settings/labeling"),
    Control('a[href$="/settings/annotation"]', "GET", "/projects/1/settings/annotation"),
    Control('a[href$="/settings/ml"]', "GET", "/projects/1/settings/ml"),
    Control('a[href$="/settings/predictions"]', "GET", "/projects/1/settings/predictions"),
    Control('a[href$="/settings/storage"]', "GET", "/projects/1/settings/storage"),
    Control('a[href$="/settings/webhooks"]', "GET", "/projects/1/settings/webhooks"),
    Control('a[href$="/settings/danger-zone"]', "GET", "/projects/1/settings/danger-zone"),
    Control('button[aria-label="Add machine learning model"]', "POST", "/api/ml"),
    # the account page: one's name, avatar and e-mail settings are Label Studio's user record, which
    # people read but do not change through the gate (their tokens and hotkeys they do)
    Control("#personal-info form", "PATCH", "/api/users/1/"),
    Control('a[href="/user/account/email-preferences"]', "PATCH", "/api/users/1/"),
    Control("#email-preferences", "PATCH", "/api/users/1/"),
)
HIDDEN_CONTROLS = tuple(c.selector for c in CONTROLS if refused_to_people(c.method, c.target))
PAGE_STYLE = ("<style>/* added by the access gate */ " + ", ".join(HIDDEN_CONTROLS)
              + " { display: none !important; }</style>").encode()
REFUSED_HEADER = "X-Access-Gate"  # on every answer the gate gives itself: "refused"
MAX_BODY = 256 * 1024 * 1024
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
              "transfer-encoding", "upgrade", "expect", "content-length"}
CHUNK = 64 * 1024
IDLE_S = 300.0  # a client silent this long, between requests or inside a body, is let go (its thread with it)
LINGER_BYTES = 1024 * 1024  # read and dropped after a refusal that left a body unread, so the answer arrives


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
        host, port = self.socket.getsockname()[:2]  # as bound: a text host (the declared address may be bytes)
        return f"http://{host}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """What escaped a request's own handling (socketserver prints a traceback): a client gone is one line."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            sys.stderr.write(f"gate: {client_address[0]} went away ({type(error).__name__})\n")
        else:
            super().handle_error(request, client_address)


class GateHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_S
    server: GateServer

    def __getattr__(self, name: str) -> Callable[[], None]:
        # http.server answers a method it finds no `do_<METHOD>` for with its own 501 page: every method
        # comes to `gate` instead, the one place that decides which are served (METHODS; the rest 405)
        if name.startswith("do_"):
            return self.gate
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # http.server's own lines would print paths for every file; `note` says what matters

    def note(self, who: str, status: int, why: str = "") -> None:
        if self.server.verbose or status in (400, 403, 405, 411, 413, 415):
            path = (getattr(self, "path", None) or "").split("?", 1)[0][:200]
            sys.stderr.write(f"gate: {who} {getattr(self, 'command', None)} {path} -> {status}"
                             f"{f' ({why})' if why else ''}\n")

    # ---- one answer per request -----------------------------------------------------------

    def handle_one_request(self) -> None:
        self.answered = False
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError) as exc:  # the client (or, mid-answer, Label Studio) went away
            self.close_connection = True
            path = (getattr(self, "path", None) or "").split("?", 1)[0][:200]
            sys.stderr.write(f"gate: {self.client_address[0]} {getattr(self, 'command', None)} {path} "
                             f"went away ({type(exc).__name__})\n")
        except Exception:  # a fault of the gate's own: still one answer, then on to socketserver's handle_error,
            self.close_connection = True  # which logs where it failed (no handler here swallows a bug)
            sys.stderr.write(f"gate: failed on {getattr(self, 'command', None)} "
                             f"{(getattr(self, 'path', None) or '')[:200]}\n")
            if not self.answered:
                with contextlib.suppress(OSError):
                    self.refuse(500, "the gate failed on this request", True)
            raise

    def send_response_only(self, code: int, message: str | None = None) -> None:
        if code >= 200:
            self.answered = True
        super().send_response_only(code, message)

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":  # an answer without a status line: nothing a client can check
            self.send_error(400, "HTTP/0.9 is not spoken here")
            return False
        return True

    def handle_expect_100(self) -> bool:
        # a client that asks before sending a body learns before sending it that it is too large
        length = self.headers.get("Content-Length", "")
        if length.isascii() and length.isdigit() and (len(length) > 12 or int(length) > MAX_BODY):
            self.close_connection = True
            self.refuse(413, "body too large", True)
            return False
        return super().handle_expect_100()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a request line or headers it cannot read, 414, 431): the gate's answer,
        with a status line whatever version the client wrote, and 4xx (505 for HTTP/2.0 becomes a 400)."""
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        status = code if code < 500 else 400
        self.refuse(status, message or self.responses.get(code, ("",))[0], True)

    # ---- deciding -------------------------------------------------------------------------

    def gate(self) -> None:
        api = self.path.startswith("/api")
        try:
            body = self.read_body()
            if self.command not in METHODS:
                raise Refused(f"{self.command} is not a method this server takes", 405)
            check_target(self.path)
        except Refused as refused:
            self.note("?", refused.status, refused.reason)
            self.refuse(refused.status, refused.reason, api)
            return
        authorization = self.headers.get("Authorization", "")
        if authorization and hmac.compare_digest(authorization.encode(), self.server.admin_authorization.encode()):
            self.note("admin-token", 200)
            self.forward(body, drop_cookie=True)  # one identity per request: the token's
            return
        raw_path, _, query = self.path.partition("?")
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
            if refusal is not None and refusal.status != 403:
                self.note("anonymous", refusal.status, refusal.reason)
                self.refuse(refusal.status, refusal.reason, api)  # malformed whoever sends it
                return
            self.note("anonymous", 401)
            self.not_logged_in(path, api)
            return
        who = caller.email or f"user {caller.user_id}"
        if caller.user_id == self.server.owners.admin_id():
            self.forward(body, drop_cookie=bool(authorization))
            return
        with contextlib.ExitStack() as held:
            listing = None
            try:
                if refusal is not None:
                    raise refusal
                assert decision is not None
                owners = self.server.owners
                projects = [object_id for kind, object_id in decision.objects if kind == "project"]
                for project_id in projects:
                    owners.check(caller, "project", project_id)
                # before the other objects: Label Studio shows them only in the project's organization; held
                # there until the answer is sent
                held.enter_context(owners.working_in(caller, projects[0] if projects else None))
                for kind, object_id in decision.objects:
                    if kind != "project":
                        owners.check(caller, kind, object_id)
                if decision.rule.filter == "projects" and self.command == "GET" and not projects:
                    listing = owners.projects_everywhere(caller, self.path)  # (a lease held would wait on itself)
            except Refused as refused:
                self.note(who, refused.status, refused.reason)
                self.refuse(refused.status, refused.reason, api)
                return
            except OSError:
                self.refuse(502, "Label Studio did not answer", api)
                return
            self.note(who, 200)
            if listing is not None:  # a person of several organizations: her projects in each
                self.send_cut(200, [("Content-Type", "application/json")], json.dumps(listing).encode(), "projects",
                              caller)
                return
            page = self.command == "GET" and not api and decision.rule.filter is None
            self.forward(body, drop_cookie=bool(authorization), cut=decision.rule.filter, caller=caller, page=page)

    def read_body(self) -> bytes:
        """The request's body, whole (Content-Length only), or Refused; a refusal that leaves the body
        unread closes the connection after its answer, as what follows could not be told from a request."""
        if self.headers.get_all("Transfer-Encoding"):
            self.close_connection = True
            raise Refused("send a Content-Length, not a chunked or encoded body", 411)
        lengths = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if not lengths:
            return b""
        length = lengths.pop()
        if lengths or not (length.isascii() and length.isdigit()) or len(length) > 12:
            self.close_connection = True
            raise Refused("the body's length is unreadable", 400)
        if int(length) > MAX_BODY:
            self.close_connection = True
            raise Refused(f"the body is larger than {MAX_BODY // 2**20} MiB", 413)
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            raise ConnectionResetError("the client closed the connection inside the body")
        return body

    def not_logged_in(self, path: str, api: bool) -> None:
        if api:
            self.send_plain(401, json.dumps({"detail": "log in first"}).encode(), "application/json")
            return
        self.send_response(302)
        self.send_header("Location", "/user/login/?next=" + quote(path, safe="/"))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def refuse(self, status: int, reason: str, api: bool) -> None:
        if api:
            body, kind = json.dumps({"detail": f"refused by the access gate: {reason}"}).encode(), "application/json"
        else:
            body, kind = (f"<h1>{status}</h1><p>Refused by the access gate: {html.escape(reason)}</p>".encode(),
                          "text/html")
        self.send_plain(status, body, kind)

    def send_plain(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header(REFUSED_HEADER, "refused")
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if status == 405:
            self.send_header("Allow", ", ".join(sorted(METHODS)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        if self.close_connection:
            self.linger()

    def linger(self) -> None:
        """Read and drop what the client still sends (a body not read), up to LINGER_BYTES, before the
        connection closes: closing on unread data resets it, and the client may lose the answer."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1.0)
            dropped = 0
            while dropped < LINGER_BYTES and (chunk := self.connection.recv(CHUNK)):
                dropped += len(chunk)
        except OSError:
            pass

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
        except ValueError:  # http.client will not write a header it finds malformed (InvalidURL is one too)
            conn.close()
            self.refuse(400, "a header of this request cannot be forwarded", self.path.startswith("/api"))
            return
        except (OSError, http.client.HTTPException):
            conn.close()
            self.refuse(502, "Label Studio did not answer", self.path.startswith("/api"))
            return
        try:
            headers = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP]
            if cut and caller is not None and response.status == 200 and self.command == "GET":
                self.send_cut(response.status, headers, response.read(), cut, caller)
                return
            if page and response.status == 200 and "text/html" in (response.getheader("Content-Type") or ""):
                self.send_page(headers, response.read())
                return
            self.send_response(response.status, response.reason)
            for name, value in headers:
                self.send_header(name, value)
            no_body = self.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
            # a list's length before the cut would tell how many projects others have
            length = None if cut else response.getheader("Content-Length")
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
        except ValueError:  # e.g. `?format=api`, Django REST framework's HTML page of the whole list
            self.refuse(406, "the gate cuts lists in JSON only: ask for JSON", True)
            return
        items = data.get("results") if isinstance(data, dict) else data
        if not isinstance(items, list):
            self.refuse(406, "the gate cuts lists in JSON only: ask for JSON", True)
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

"""Who is asking, and whether an object is theirs: answers from Label Studio itself, cached briefly.

Ownership is Label Studio's own model made strict: an account owns a project when it is a member
of the project's organization (the toolkit gives each person an organization of their own; the
deciding group shares the admin's). The project's organization and the organization's members are
read with the admin token. Annotations and drafts name their task and project to the admin from
any organization; a task, a data-manager tab or a prediction does not (Label Studio filters those
by the admin's *active* organization, which the toolkit switches while it works), so which project
one of those is in is read with the caller's own credentials, and that project is then checked
with the admin token like any other. A lookup that fails refuses the request.

Label Studio shows a person the projects of one organization at a time, their *active* one. The gate
switches a person who belongs to several (a group member who also annotates) to the organization of the
project a request names, and holds it there until the answer is sent: a switch to another organization
waits until no request in flight relies on the current one. Her project list is read in each of her
organizations in turn, so that it holds all her projects whichever she is working in.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from curation.labelstudio.gate_rules import Refused


class Upstream:
    """Label Studio's address, and one fresh connection per call (loopback: cheap, nothing shared
    between threads)."""

    def __init__(self, url: str, timeout_s: float = 300.0) -> None:
        parts = urlsplit(url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http(s) URL, not {url!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.timeout_s = timeout_s

    def connection(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout_s)

    def get_json(self, path: str, headers: dict[str, str]) -> tuple[int, Any]:
        return self.call_json("GET", path, headers)

    def call_json(self, method: str, path: str, headers: dict[str, str], payload: Any = None) -> tuple[int, Any]:
        conn = self.connection()
        body = None if payload is None else json.dumps(payload).encode()
        sent = {**headers, "Accept": "application/json", **({"Content-Type": "application/json"} if body else {})}
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            answer = response.read()
        except http.client.HTTPException as exc:  # a garbled answer is as good as none: the gate says 502
            raise OSError(f"Label Studio's answer was unreadable ({type(exc).__name__})") from None
        finally:
            conn.close()
        try:
            return response.status, json.loads(answer) if response.status == 200 else None
        except ValueError:
            return 502, None


class TTLCache:
    def __init__(self, ttl_s: float, max_items: int = 10_000) -> None:
        self.ttl_s, self.max_items = ttl_s, max_items
        self._items: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] < time.monotonic():
                self._items.pop(key, None)
                return None
            return found[1]

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            if len(self._items) >= self.max_items:
                self._items.clear()  # crude, but bounded; everything is asked again
            self._items[key] = (time.monotonic() + self.ttl_s, value)


@dataclass(frozen=True)
class Caller:
    user_id: int
    email: str
    credentials: dict[str, str]  # the headers that identify them to Label Studio (never logged)


SWITCH_WAIT_S = 10.0  # how long a switch of organization waits for requests in the other one to finish


class Owners:
    """Identity and ownership answers for the gate, from Label Studio."""

    def __init__(self, upstream: Upstream, admin_token: str, identity_ttl_s: float = 10.0,
                 membership_ttl_s: float = 30.0, object_ttl_s: float = 300.0) -> None:
        self.upstream = upstream
        self.admin_headers = {"Authorization": f"Token {admin_token}"}
        self._callers = TTLCache(identity_ttl_s)
        self._members = TTLCache(membership_ttl_s)
        self._objects = TTLCache(object_ttl_s)
        self._active = TTLCache(identity_ttl_s)  # user id -> the organization Label Studio shows them
        self._organizations = TTLCache(membership_ttl_s)  # user id -> the organizations they belong to
        self._switching = threading.Condition()
        self._in_flight: dict[int, Counter[int]] = {}  # user id -> organization -> requests relying on it
        self._admin_id: int | None = None

    def admin_id(self) -> int:
        if self._admin_id is None:
            status, me = self.upstream.get_json("/api/current-user/whoami", self.admin_headers)
            if status != 200 or not isinstance(me, dict):
                raise RuntimeError(f"Label Studio refused the admin token (HTTP {status})")
            self._admin_id = int(me["id"])
        return self._admin_id

    def identify(self, credentials: dict[str, str]) -> Caller | None:
        """The account these headers log in as (whoami, cached per credential), or None."""
        if not credentials:
            return None
        key = hashlib.sha256(json.dumps(sorted(credentials.items())).encode()).hexdigest()
        cached = self._callers.get(key)
        if cached is None:
            status, me = self.upstream.get_json("/api/current-user/whoami", credentials)
            cached = (int(me["id"]), str(me.get("email") or "")) if status == 200 and isinstance(me, dict) else ()
            # the organization it names is not kept: read outside the switching lock, it may predate a switch
            # made meanwhile, and a stale one sends the next request to the other organization (a 404)
            self._callers.put(key, cached)
        return Caller(cached[0], cached[1], credentials) if cached else None

    def members(self, organization_id: int) -> frozenset[int]:
        cached = self._members.get(organization_id)
        if cached is None:
            status, page = self.upstream.get_json(
                f"/api/organizations/{organization_id}/memberships?page=1&page_size=-1", self.admin_headers)
            if status != 200 or not isinstance(page, dict):
                return frozenset()  # not cached: an organization made a moment ago is asked again
            cached = frozenset(int(m["user"]["id"]) for m in page.get("results", []))
            self._members.put(organization_id, cached)
        return cached

    def _lookup(self, key: tuple[str, int] | tuple[str, int, int], path: str, headers: dict[str, str],
                field: str) -> int | None:
        """`field` of the JSON at `path`, cached by `key`: kind and id, and the caller's user id when the answer
        depends on who asks."""
        cached = self._objects.get(key)
        if cached is None:
            status, found = self.upstream.get_json(path, headers)
            value = found.get(field) if status == 200 and isinstance(found, dict) else None
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            cached = value
            self._objects.put(key, cached)
        return cached

    def project_organization(self, project_id: int) -> int | None:
        return self._lookup(("project", project_id), f"/api/dm/project/?project={project_id}", self.admin_headers,
                            "organization")

    def project_of(self, kind: str, object_id: int, caller: Caller) -> int | None:
        """The project an object is in, or None when Label Studio does not show it."""
        if kind == "project":
            return object_id
        if kind == "annotation":
            return self._lookup((kind, object_id), f"/api/annotations/{object_id}/", self.admin_headers, "project")
        if kind == "draft":
            task = self._lookup((kind, object_id), f"/api/drafts/{object_id}/", self.admin_headers, "task")
            return None if task is None else self.project_of("task", task, caller)
        paths = {"task": f"/api/tasks/{object_id}/", "view": f"/api/dm/views/{object_id}/",
                 "prediction": f"/api/predictions/{object_id}/"}
        if kind not in paths:
            return None
        # asked as the caller (see the module's doc); cached per caller, as the answer depends on them
        return self._lookup((kind, object_id, caller.user_id), paths[kind], caller.credentials, "project")

    def check(self, caller: Caller, kind: str, object_id: int) -> None:
        """Refused unless the object is the caller's."""
        if kind == "user":
            if object_id != caller.user_id:
                raise Refused("another person's account")
            return
        if kind == "org":
            if caller.user_id not in self.members(object_id):
                raise Refused("an organization you do not belong to")
            return
        project = self.project_of(kind, object_id, caller)
        organization = None if project is None else self.project_organization(project)
        if organization is None or caller.user_id not in self.members(organization):
            raise Refused(f"{kind} {object_id} is not in one of your projects")

    def organizations_of(self, caller: Caller) -> list[int]:
        """The organizations the caller belongs to (Label Studio lists only one's own to oneself)."""
        cached = self._organizations.get(caller.user_id)
        if cached is None:
            status, found = self.upstream.get_json("/api/organizations/", caller.credentials)
            items = found.get("results") if isinstance(found, dict) else found
            if status != 200 or not isinstance(items, list):
                return []  # not cached: asked again next time
            cached = sorted(int(o["id"]) for o in items if isinstance(o, dict) and isinstance(o.get("id"), int))
            self._organizations.put(caller.user_id, cached)
        return cached

    @contextmanager
    def working_in(self, caller: Caller, project_id: int | None) -> Iterator[None]:
        """The project's organization is the one Label Studio shows the caller until the block ends (the
        project checked theirs before): forward inside it. No project, no switch.

        A group member who is also an annotator belongs to two organizations, her own and the deciding
        group's; opening a project of one switches her there, as an organization switcher would."""
        organization = None if project_id is None else self.project_organization(project_id)
        if organization is None:
            yield
            return
        with self.in_organization(caller, organization):
            yield

    @contextmanager
    def in_organization(self, caller: Caller, organization: int) -> Iterator[None]:
        with self._switching:
            self._switch(caller, organization)
            using = self._in_flight.setdefault(caller.user_id, Counter())
            using[organization] += 1
        try:
            yield
        finally:
            with self._switching:
                using[organization] -= 1
                self._switching.notify_all()

    def _active_of(self, caller: Caller) -> Any:
        """The organization Label Studio shows the caller: known since the last switch, or asked (lock held)."""
        active = self._active.get(caller.user_id)
        if active is None:
            status, me = self.upstream.get_json("/api/current-user/whoami", caller.credentials)
            active = me.get("active_organization") if status == 200 and isinstance(me, dict) else None
        return active

    def _switch(self, caller: Caller, organization: int) -> None:
        """Make `organization` the caller's active one, once no request in flight relies on another (or
        SWITCH_WAIT_S passed: a long download in one tab must not stop the other for good). Lock held."""
        deadline = time.monotonic() + SWITCH_WAIT_S
        while True:
            active = self._active_of(caller)
            if active == organization:
                self._active.put(caller.user_id, active)
                return
            using = self._in_flight.get(caller.user_id, Counter())
            left = deadline - time.monotonic()
            if not any(n for org, n in using.items() if org != organization) or left <= 0:
                break
            self._switching.wait(left)
        status, _ = self.upstream.call_json("PATCH", f"/api/users/{caller.user_id}/", _as_writer(caller),
                                            {"active_organization": organization})
        if status != 200:
            raise Refused(f"Label Studio did not switch you to organization {organization} (HTTP {status})", 502)
        self._active.put(caller.user_id, organization)

    def projects_everywhere(self, caller: Caller, target: str) -> Any:
        """A project list (`/api/projects/...`, as the caller asked for it) with the projects of every
        organization of theirs, read in each in turn; the caller works in the one they were in after.
        None when they belong to one organization only (the list Label Studio gives is all of it)."""
        organizations = self.organizations_of(caller)
        if len(organizations) < 2:
            return None
        with self._switching:
            home = self._active_of(caller)
        merged: dict[str, Any] = {"count": 0, "next": None, "previous": None, "results": []}
        for organization in sorted(organizations, key=lambda org: org != home):
            with self.in_organization(caller, organization):
                status, page = self.upstream.get_json(target, caller.credentials)
            if status == 404:  # a page past this organization's last
                continue
            items = page.get("results") if isinstance(page, dict) else page
            if status != 200 or not isinstance(items, list):
                raise Refused("the gate lists projects in JSON only: ask for JSON", 406)
            merged["results"] += items
            merged["count"] += page.get("count", len(items)) if isinstance(page, dict) else len(items)
        if isinstance(home, int) and home in organizations:
            with self.in_organization(caller, home):
                pass
        return merged

    def owns_project(self, caller: Caller, project_id: int) -> bool:
        try:
            self.check(caller, "project", project_id)
        except Refused:
            return False
        return True


def _as_writer(caller: Caller) -> dict[str, str]:
    """The caller's credentials for a write: a browser session also needs Django's CSRF token, which
    its own cookie carries (a token login needs none)."""
    cookie = caller.credentials.get("Cookie")
    if not cookie:
        return caller.credentials
    jar = SimpleCookie()
    jar.load(cookie)
    token = jar["csrftoken"].value if "csrftoken" in jar else ""
    return {**caller.credentials, "X-CSRFToken": token}

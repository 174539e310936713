"""Which Label Studio 1.23 paths a non-admin account may use through the gate, and which objects a
request names (so the gate can check that each one belongs to the caller).

Label Studio Community checks login, not ownership, on many object paths (`/api/annotations/<id>`,
`/api/drafts/<id>`, `/api/tasks/<id>/annotations/` for POST, `/api/dm/project`, `/api/tasks?project=`
...). The rules here are an allow-list: a path not listed is refused, so a Label Studio upgrade that
adds an endpoint adds nothing an annotator can reach until it is listed here.

An object is named by the path (`/api/tasks/<task>/`), by a query parameter (`?project=`, `?task=`,
`?view=`) or by a top-level key of a JSON or form body (`project`, `draft_id`, `parent_annotation`...).
Every one named must be the caller's, whichever of them Label Studio would act on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote

READ = frozenset({"GET", "HEAD", "OPTIONS"})
EDIT = READ | {"PATCH", "PUT"}
WRITE = EDIT | {"POST", "DELETE"}
KINDS = ("project", "task", "annotation", "draft", "view", "prediction", "org", "user")
QUERY_KEYS = {"project": "project", "task": "task", "view": "view"}
BODY_KEYS = {"project": "project", "task": "task", "view": "view", "draft_id": "draft", "annotation": "annotation",
             "parent_annotation": "annotation", "parent_prediction": "prediction", "prediction": "prediction"}


class Refused(Exception):
    """A request the gate answers itself (403 unless `status` says otherwise)."""

    def __init__(self, reason: str, status: int = 403) -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    methods: frozenset[str]
    public: bool = False  # no login needed; otherwise any logged-in account, if every object named is theirs
    needs: tuple[str, ...] = ()  # at least one object of these kinds must be named (a list read by project)
    filter: str | None = None  # "projects" | "users" | "organizations": the JSON answer is cut to the caller's
    actions: frozenset[str] = frozenset()  # data-manager actions (`?id=`) a POST may run; none for other rules


@dataclass
class Decision:
    rule: Rule
    api: bool
    objects: list[tuple[str, int]] = field(default_factory=list)


def _rule(path: str, methods: frozenset[str], **kw: object) -> Rule:
    # `<kind>` stands for an id; a trailing slash is optional, as Label Studio's frontend mixes both
    # ASCII digits only: Python's \d also takes other scripts' digits, which Django's routes do not
    regex = re.sub(r"<(\w+)>", lambda m: rf"(?P<{m.group(1)}>[0-9]+)", path.rstrip("/"))
    return Rule(re.compile(rf"^{regex}/?$"), methods, **kw)  # type: ignore[arg-type]


STATIC = r"(static|label-studio-frontend|dm|react-app)/.*"
RULES: list[Rule] = [
    # anyone: the login form, the app's own files, liveness
    _rule("/user/login", READ | {"POST"}, public=True),
    _rule("/logout", READ, public=True),
    _rule(rf"/{STATIC}", READ, public=True),
    _rule(r"/(favicon\.ico|sw\.js|sw-fallback\.js|health|version|api/version|heidi-tips)", READ, public=True),
    # any logged-in account: pages that name no object; what they show comes through the API rules below
    _rule(r"", READ),
    _rule("/projects", READ),
    _rule("/user/account(/.*)?", READ),
    _rule(r"/(feature-flags|data/avatars/.*)", READ),
    _rule("/__lsa", READ | {"POST"}),  # the frontend's usage beacon, kept on this server
    _rule("/data/local-files", READ),  # the feed videos; Label Studio checks the storage itself
    _rule("/api/current-user/whoami", READ),
    # the account page: whether personal tokens are on, one's own tokens (they open nothing the gate
    # would not: a token is one more way to be oneself here), one's own membership
    _rule("/api/jwt/settings", READ),
    _rule("/api/token", READ | {"POST"}),
    _rule("/api/current-user/token", READ),
    _rule("/api/current-user/reset-token", frozenset({"POST"})),
    _rule("/api/current-user/(hotkeys|product-tour)", EDIT),
    _rule("/api/session-policy", READ),
    # pages of one project or task
    _rule("/projects/<project>(/data(/import|/export)?|/settings(/.*)?)?", READ),
    _rule("/(projects/<project>|tasks/<task>)/(resolve|presign)", READ),
    # projects: read and edit one's own; never create or delete (that is the toolkit's job)
    _rule("/api/projects", READ, filter="projects"),
    _rule("/api/projects/counts", READ, filter="projects"),
    _rule("/api/projects/<project>", EDIT),
    _rule("/api/projects/<project>/(next|label-stream-history|summary|model-versions|annotators|validate|tasks)",
          READ),
    _rule("/api/projects/<project>/(export|export/formats|export/files)", READ),
    _rule("/api/projects/<project>/exports", READ | {"POST"}),
    _rule(r"/api/projects/<project>/exports/\d+(/download)?", READ | {"DELETE"}),
    _rule(r"/api/projects/<project>/exports/\d+/convert", READ | {"POST"}),
    # tasks, annotations, drafts, predictions: one's own, by id or by the project they are listed for
    _rule("/api/tasks", READ, needs=("project", "view")),
    _rule("/api/tasks/<task>", EDIT),
    _rule("/api/tasks/<task>/(annotations|drafts|agreement)", READ | {"POST"}),
    _rule("/api/tasks/<task>/annotations/<annotation>/drafts", READ | {"POST"}),
    _rule("/api/annotations/<annotation>", WRITE - {"POST"}),
    _rule("/api/annotations/<annotation>/convert-to-draft", READ | {"POST"}),
    _rule("/api/drafts/<draft>", WRITE - {"POST"}),
    _rule("/api/predictions", READ, needs=("project", "task")),
    _rule("/api/predictions/<prediction>", READ),
    # the data manager (task table, tabs) of one's own project
    _rule("/api/dm/(project|columns|actions)", READ, needs=("project",)),
    # "Label All Tasks" asks the data manager for the next task of one's own project; no other action
    _rule("/api/dm/actions", frozenset({"POST"}), needs=("project",), actions=frozenset({"next_task"})),
    _rule("/api/dm/views", READ | {"POST"}, needs=("project",)),
    _rule("/api/dm/views/(reset|order)", READ | {"POST"}, needs=("project",)),
    _rule("/api/dm/views/<view>", WRITE - {"POST"}),
    _rule("/api/label_links", READ, needs=("project",)),
    # the labelling page asks for the project's ML backends; refused, it shows every annotator an error
    _rule("/api/ml", READ, needs=("project",)),
    # people: oneself, and the organizations one belongs to (read only)
    _rule("/api/users", READ, filter="users"),
    _rule("/api/users/<user>", READ),
    _rule("/api/organizations", READ, filter="organizations"),
    _rule("/api/organizations/<org>/memberships", READ),
    _rule("/api/organizations/<org>/memberships/<user>", READ),
]


def canonical_path(raw: str) -> str:
    """The path as Django routes it (percent-decoded), or Refused for one that could be read two ways."""
    try:
        path = unquote(raw, errors="strict") if "%" in raw else raw
    except UnicodeDecodeError:
        raise Refused("malformed path", 400) from None
    if (not path.startswith("/") or "//" in path or "\\" in path or any(ord(c) < 32 or c == "\x7f" for c in path)
            or re.search(r"/\.\.?(/|$)", path)):
        raise Refused("malformed path", 400)
    return path


def _ids(kind: str, values: object) -> list[tuple[str, int]]:
    """The ids a query or body value names; anything that is not a plain id is refused, not skipped."""
    items = values if isinstance(values, list) else [values]
    out = []
    for value in items:
        if value is None or value == "":
            continue
        text = str(value).strip()
        # ASCII digits only ("²".isdigit() is true, int("²") fails), and no longer than an id can be
        if isinstance(value, bool) or not (text.isascii() and text.isdigit()) or len(text) > 18:
            raise Refused(f"{kind} must be a plain id", 400)
        if int(text):  # 0 is the frontend's "none" (`draft_id: 0`); Label Studio's ids start at 1
            out.append((kind, int(text)))
    return out


def body_objects(body: bytes, content_type: str) -> list[tuple[str, int]]:
    """Objects a request body names at its top level (a list body: in each of its items)."""
    if not body.strip():
        return []
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            data = json.loads(body)
        except ValueError:
            raise Refused("the body is not JSON", 400) from None
        items = data if isinstance(data, list) else [data]
    elif kind == "application/x-www-form-urlencoded":
        items = [parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)]
    else:  # multipart and the rest: no annotator request sends them, and they could hide ids from the check
        raise Refused(f"a {kind or 'untyped'} body is not accepted here")
    out: list[tuple[str, int]] = []
    for item in items:
        if not isinstance(item, dict):
            raise Refused("the body must be an object")
        for key, kind_of in BODY_KEYS.items():
            if key in item:
                out += _ids(kind_of, item[key])
    return out


def decide(method: str, path: str, query: str, body: bytes = b"", content_type: str = "") -> Decision:
    """The rule for a request by a non-admin account and the objects it names, or Refused."""
    api = path.startswith("/api/") or path == "/api"
    seen = False
    for rule in RULES:
        match = rule.pattern.match(path)
        if match is None:
            continue
        seen = True
        if method not in rule.methods:
            continue  # another rule may allow the method on the same path
        decision = Decision(rule, api)
        decision.objects += [(k, int(v)) for k, v in match.groupdict().items() if v is not None and k in KINDS]
        if rule.public:
            return decision
        params = parse_qs(query, keep_blank_values=True)
        for key, kind in QUERY_KEYS.items():
            decision.objects += _ids(kind, params.get(key, []))
        # Django REST framework reads a body whatever the method, so a GET's body counts too
        decision.objects += body_objects(body, content_type)
        if rule.needs and not any(kind in rule.needs for kind, _ in decision.objects):
            raise Refused(f"name the {' or '.join(rule.needs)} this list is for")
        if rule.actions and not (params.get("id") and set(params["id"]) <= rule.actions):
            raise Refused(f"only the actions {', '.join(sorted(rule.actions))} are allowed here")
        return decision
    raise Refused(f"{method} is not allowed on this path" if seen else "not on the gate's allow-list")

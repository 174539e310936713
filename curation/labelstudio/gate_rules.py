"""Which Label Studio 1.23 paths a non-admin account may use through the gate, and which objects a
request names (so the gate can check that each one belongs to the caller).

Label Studio Community checks login, not ownership, on many object paths (`/api/annotations/<id>`,
`/api/drafts/<id>`, `/api/tasks/<id>/annotations/` for POST, `/api/dm/project`, `/api/tasks?project=`
...). The rules here are an allow-list: a path not listed is refused, so a Label Studio upgrade that
adds an endpoint adds nothing an annotator can reach until it is listed here.

An object is named by the path (`/api/tasks/<task>/`), by a query parameter (`?project=`, `?task=`,
`?view=`) or by a top-level key of a JSON or form body (`project`, `draft_id`, `parent_annotation`...).
Every one named must be the caller's, whichever of them Label Studio would act on.

What a request is made of is read in one place each, and what cannot be read is a 400, never an
exception of the gate's: the method (`METHODS`, else 405), the target (`check_target`, `canonical_path`),
an id (`parse_id`), a body (`body_objects`, `read_json`) and a file below the media root (`check_file`).
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

# the methods Label Studio's frontend and API use; any other (PROPFIND, TRACE, a lower-case get) is a 405
METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
READ = frozenset({"GET", "HEAD", "OPTIONS"})
EDIT = READ | {"PATCH", "PUT"}
WRITE = EDIT | {"POST", "DELETE"}
KINDS = ("project", "task", "annotation", "draft", "view", "prediction", "org", "user")
QUERY_KEYS = {"project": "project", "task": "task", "view": "view"}
BODY_KEYS = {"project": "project", "task": "task", "view": "view", "draft_id": "draft", "annotation": "annotation",
             "parent_annotation": "annotation", "parent_prediction": "prediction", "prediction": "prediction"}
# Label Studio's ids are 64-bit: 18 digits always fit, and Python's int() raises on strings over 4,300 digits
MAX_ID_DIGITS = 18
# the frontend's bodies (an annotation's result, a data-manager tab's filters) nest a few levels; Python's parser
# raises RecursionError near 1,000 levels, and Label Studio's, deeper in its own stack, sooner
MAX_JSON_DEPTH = 64
NAME_MAX = 255  # no id or file of Label Studio's has a longer path segment; the file system refuses one


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
    files: tuple[str, ...] = ()  # query keys that name a file below Label Studio's document root


@dataclass
class Decision:
    rule: Rule
    api: bool
    objects: list[tuple[str, int]] = field(default_factory=list)


def _rule(path: str, methods: frozenset[str], **fields: Any) -> Rule:
    """A Rule for a route; `fields`: its other fields by name (the dataclass refuses an unknown one)."""
    # `<kind>` stands for an id (read by `parse_id`; a kind not in KINDS is an id nobody owns, such as an
    # export's); a trailing slash is optional, as Label Studio's frontend mixes both. ASCII digits only:
    # Python's \d also takes other scripts' digits, which Django's routes do not
    regex = re.sub(r"<(\w+)>", lambda m: rf"(?P<{m.group(1)}>[0-9]+)", path.rstrip("/"))
    return Rule(re.compile(rf"^{regex}/?$"), methods, **fields)


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
    _rule("/data/local-files", READ, files=("d",)),  # the feed videos; Label Studio checks the storage itself
    _rule("/api/current-user/whoami", READ),
    # the account page: whether personal tokens are on, one's own tokens (they open nothing the gate
    # would not: a token is one more way to be oneself here), one's own membership
    _rule("/api/jwt/settings", READ),
    _rule("/api/token", READ | {"POST"}),
    _rule("/api/current-user/token", READ),
    _rule("/api/current-user/reset-token", frozenset({"POST"})),
    _rule("/api/current-user/(hotkeys|product-tour)", EDIT),
    _rule("/api/session-policy", READ),
    # pages of one project or task; of its settings, those with something a member may change (the storage,
    # webhook and danger-zone pages hold only what the gate refuses: `gate.CONTROLS` hides their links)
    _rule("/projects/<project>(/data(/import|/export)?|/settings(/(labeling|annotation|ml|predictions))?)?", READ),
    _rule("/(projects/<project>|tasks/<task>)/(resolve|presign)", READ),
    # projects: read and edit one's own; never create or delete (that is the toolkit's job)
    _rule("/api/projects", READ, filter="projects"),
    _rule("/api/projects/counts", READ, filter="projects"),
    _rule("/api/projects/<project>", EDIT),
    _rule("/api/projects/<project>/(next|label-stream-history|summary|model-versions|annotators|tasks)", READ),
    # the labeling-interface settings check a config and draw a sample task of it (neither writes); saving it
    # is the PATCH above, which the toolkit's next export undoes
    _rule("/api/projects/<project>/(validate|sample-task)", READ | {"POST"}),
    _rule("/api/templates", READ),  # Label Studio's gallery of config templates, the same for everyone
    _rule("/api/projects/<project>/(export|export/formats|export/files)", READ),
    _rule("/api/projects/<project>/exports", READ | {"POST"}),
    _rule("/api/projects/<project>/exports/<export>(/download)?", READ | {"DELETE"}),
    _rule("/api/projects/<project>/exports/<export>/convert", READ | {"POST"}),
    # tasks, annotations, drafts, predictions: one's own, by id or by the project they are listed for
    _rule("/api/tasks", READ, needs=("project", "view")),
    _rule("/api/tasks/<task>", EDIT),
    _rule("/api/tasks/<task>/(annotations|drafts|agreement)", READ | {"POST"}),
    _rule("/api/tasks/<task>/annotations/<annotation>/drafts", READ | {"POST"}),
    _rule("/api/annotations/<annotation>", WRITE - {"POST"}),
    # POST only: Label Studio answers a GET or HEAD here with a 500 (the view has no serializer to show)
    _rule("/api/annotations/<annotation>/convert-to-draft", frozenset({"POST"})),
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


def check_target(target: str) -> None:
    """Refused (400) unless the request target is a path as a browser sends it: `/` first, printable ASCII
    (http.server hands over raw bytes as Latin-1; a browser percent-encodes everything else). Anything else
    could not even be forwarded: http.client refuses to write it."""
    if not target.startswith("/") or not (target.isascii() and target.isprintable()) or " " in target:
        raise Refused("malformed request target", 400)


def canonical_path(raw: str) -> str:
    """The path as Django routes it (percent-decoded), or Refused for one that could be read two ways."""
    try:
        path = unquote(raw, errors="strict") if "%" in raw else raw
    except UnicodeDecodeError:
        raise Refused("malformed path", 400) from None
    if (not path.startswith("/") or "//" in path or "\\" in path or not path.isprintable()
            or re.search(r"/\.\.?(/|$)", path) or any(len(part.encode()) > NAME_MAX for part in path.split("/"))):
        raise Refused("malformed path", 400)
    return path


def parse_id(kind: str, value: object) -> int:
    """The one reading of an id, wherever a request names it (path, query, body): ASCII digits ("²".isdigit()
    is true, int("²") fails), at most MAX_ID_DIGITS of them, an int or a string; anything else is Refused
    (400), never skipped."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise Refused(f"{kind} must be a plain id", 400)
    text = value.strip() if isinstance(value, str) else str(value)
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_ID_DIGITS:
        raise Refused(f"{kind} must be a plain id", 400)
    return int(text)


def _ids(kind: str, values: object) -> list[tuple[str, int]]:
    """The ids a query or body value names."""
    out = []
    for value in values if isinstance(values, list) else [values]:
        if value is None or value == "":
            continue
        object_id = parse_id(kind, value)
        if object_id:  # 0 is the frontend's "none" (`draft_id: 0`); Label Studio's ids start at 1
            out.append((kind, object_id))
    return out


def check_file(values: list[str]) -> None:
    """Refused (400) unless each value is a file path that stays below Label Studio's document root: Label
    Studio answers 500 on one that climbs out (`../../etc/passwd`) or holds a NUL."""
    for value in values:
        normal = posixpath.normpath(value).lstrip("/")  # as Label Studio reads it before joining it to its root
        if (not value.isprintable() or "\\" in value or normal == ".." or normal.startswith("../")
                or any(len(part.encode()) > NAME_MAX for part in normal.split("/"))):
            raise Refused("the file must be a path below the media folder", 400)


def _depth(data: object) -> int:
    """How deep a parsed JSON value nests (iteratively: the value may be as deep as the parser allowed)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            stack += [(item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)]
    return deepest


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):  # the gate and Label Studio could each take a different one
        raise ValueError("a key named twice")
    return dict(pairs)


def read_json(body: bytes) -> object:
    """A JSON body as the gate reads it, or Refused (400): UTF-8, each key once, nested at most
    MAX_JSON_DEPTH deep. Python's parser raises RecursionError (not ValueError) on deep nesting."""
    try:
        data = json.loads(body.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):  # UnicodeDecodeError and the int-digits limit are ValueErrors
        raise Refused("the body is not JSON the gate can read", 400) from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise Refused(f"the body nests deeper than {MAX_JSON_DEPTH}", 400)
    return data


def body_objects(body: bytes, content_type: str) -> list[tuple[str, int]]:
    """Objects a request body names at its top level. A JSON body is one object: no request a person's pages
    send has another shape, and Label Studio answers 500 to a list where it reads an object."""
    if not body.strip():
        return []
    kind, *params = (part.strip().lower() for part in content_type.split(";"))
    charset = next((p.split("=", 1)[1].strip('" ') for p in params if p.startswith("charset=")), "utf-8")
    if charset not in ("utf-8", "utf8"):  # Django would decode it as that charset, and read other ids
        raise Refused(f"a body in {charset} is not accepted here: send UTF-8", 415)
    if kind == "application/json":
        item = read_json(body)
        if not isinstance(item, dict):
            raise Refused("the body must be a JSON object", 400)
    elif kind == "application/x-www-form-urlencoded":
        item = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    else:  # multipart and the rest: no annotator request sends them, and they could hide ids from the check
        raise Refused(f"a {kind or 'untyped'} body is not accepted here")
    out: list[tuple[str, int]] = []
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
        for kind, value in match.groupdict().items():
            if value is not None:
                object_id = parse_id(kind, value)
                if kind in KINDS:
                    decision.objects.append((kind, object_id))
        if rule.public:
            return decision
        params = parse_qs(query, keep_blank_values=True)
        for key, kind in QUERY_KEYS.items():
            decision.objects += _ids(kind, params.get(key, []))
        for key in rule.files:
            check_file(params.get(key, []))
        # Django REST framework reads a body whatever the method, so a GET's body counts too
        decision.objects += body_objects(body, content_type)
        if rule.needs and not any(kind in rule.needs for kind, _ in decision.objects):
            raise Refused(f"name the {' or '.join(rule.needs)} this list is for")
        if rule.actions and not (params.get("id") and set(params["id"]) <= rule.actions):
            raise Refused(f"only the actions {', '.join(sorted(rule.actions))} are allowed here")
        return decision
    raise Refused(f"{method} is not allowed on this path" if seen else "not on the gate's allow-list")


def refused_to_people(method: str, target: str) -> bool:
    """Whether the gate refuses this request to every account but the admin's, whoever owns what it
    names (`1` in `target` stands for an id of one's own)."""
    path, _, query = target.partition("?")
    try:
        decide(method, canonical_path(path), query)
    except Refused:
        return True
    return False

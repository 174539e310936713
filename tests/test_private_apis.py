"""The private parts of dependencies the toolkit uses, each where the dependency has no public way, pinned: each
test fails on an upgrade that changes what the toolkit relies on, naming the installed and the pinned version
and what to re-check.

- label-studio-sdk has no public call for a request it does not model, nor a public way to read back a client's
  address and credentials: `request_json` (curation/labelstudio/client.py) sends through the client's private
  `_client_wrapper.httpx_client`, which adds the address and the token.
- pytest-xdist's `--dist loadgroup` names a test's group by renaming its id through `item._nodeid`, which pytest
  9 no longer reads, so it groups nothing; `tests/conftest.py` makes the scheduler instead
  (`pytest_xdist_make_scheduler`, a public hook) from xdist's `LoadScopeScheduling` with its `_split_scope`
  overridden: a module's tests on one worker, every module that mentions Ray on one.
- huggingface_hub reads `HF_HUB_OFFLINE` and `HF_HUB_DISABLE_XET` once, at import, into `huggingface_hub.constants`,
  and has no per-call switch for either: `hub_online` (curation/release/publish.py) sets the two constants for the
  length of a publish or a remote verify, and restores them.
"""

from __future__ import annotations

import inspect
import json
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from typing import Any

import pytest

from curation.core.errors import AnnotationError
from tests.conftest import ROOT


def pinned(distribution: str) -> str:
    """The version pyproject.toml pins `distribution` to (in the dependencies or an extra)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dependencies = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    return next(d.split("==", 1)[1] for d in dependencies
                if d.split("==", 1)[0].split("[")[0].replace("_", "-") == distribution)


def recheck(distribution: str, use: str, where: str) -> str:
    return (f"{distribution} {version(distribution)} (pyproject.toml pins {pinned(distribution)}): {use}, which "
            f"{where} relies on, is not what it was; re-check it against this version's sources, or move to a "
            "public call")


@contextmanager
def recording_server(status: int, answer: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP server on 127.0.0.1 that answers every request with `status` and `answer`, and keeps each request."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _handle  # noqa: N815

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_label_studio_sdk_private_route_request_json_uses():
    """The route's shape, then what it puts on the wire: the bytes given, unchanged, to the client's address with
    its token (a legacy token, as the toolkit's Label Studio is set up with), and the answer or refusal read back."""
    from label_studio_sdk import LabelStudio

    from curation.labelstudio.client import http_client, import_tasks, request_json

    why = recheck("label-studio-sdk", "the private `LabelStudio(...)._client_wrapper.httpx_client.request`",
                  "curation/labelstudio/client.py request_json")
    token = "0123456789abcdef" * 2 + "01234567"
    with recording_server(201, {"task_ids": [5, 6]}) as (url, seen):
        client = LabelStudio(base_url=url, api_key=token, httpx_client=http_client(url))
        route = getattr(getattr(getattr(client, "_client_wrapper", None), "httpx_client", None), "request", None)
        assert callable(route), why
        assert {"path", "method", "params", "content", "headers"} <= set(inspect.signature(route).parameters), why
        sent = json.dumps([{"data": {"feed_html": "<p>第一</p>"}}, {"data": {"feed_html": "x"}}],
                          ensure_ascii=False).encode()
        assert import_tasks(client, "two tasks", 7, sent) == [5, 6], why
        (request,) = seen
        headers = {k.lower(): v for k, v in request["headers"].items()}
        assert (request["method"], request["path"]) == ("POST", "/api/projects/7/import?return_task_ids=true"), why
        assert request["body"] == sent and headers["content-type"] == "application/json", why
        assert headers["authorization"] == f"Token {token}", why
    with recording_server(400, {"detail": "no such project"}) as (url, seen):
        client = LabelStudio(base_url=url, api_key=token, httpx_client=http_client(url))
        with pytest.raises(AnnotationError, match=r"refused the tasks of nobody: HTTP 400 \(no such project\)"):
            request_json(client, "the tasks of nobody", "api/tasks/", "GET", params={"project": 3})
        assert [(r["method"], r["path"]) for r in seen] == [("GET", "/api/tasks/?project=3")], why


def test_huggingface_hub_switches_hub_online_sets(monkeypatch):
    """Offline (as the toolkit runs), the hub's HTTP session refuses to go out; inside `hub_online` it reaches the
    hub named and Xet is off (so uploads go by LFS); after it, both are as they were."""
    import huggingface_hub
    from huggingface_hub import constants, get_session
    from huggingface_hub.errors import OfflineModeIsEnabled
    from huggingface_hub.utils import _runtime

    from curation.release.publish import hub_online

    why = recheck("huggingface-hub", "`huggingface_hub.constants.HF_HUB_OFFLINE` / `HF_HUB_DISABLE_XET` (read at "
                  "import, set by the toolkit for the length of a hub call)", "curation/release/publish.py hub_online")
    assert isinstance(constants.HF_HUB_OFFLINE, bool) and isinstance(constants.HF_HUB_DISABLE_XET, bool), why
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    with recording_server(200, {}) as (url, seen):
        with pytest.raises(OfflineModeIsEnabled):
            get_session().get(f"{url}/api/whoami-v2")
        assert not seen, why
        with hub_online():
            assert not huggingface_hub.is_offline_mode() and not _runtime.is_xet_available(), why
            assert get_session().get(f"{url}/api/whoami-v2").status_code == 200, why
        assert len(seen) == 1, why
        assert (constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET) == (True, False)
        with pytest.raises(OfflineModeIsEnabled):
            get_session().get(f"{url}/api/whoami-v2")


def test_pytest_xdist_scheduler_tests_conftest_overrides():
    """`LoadScopeScheduling._split_scope(nodeid)` is what groups tests on a worker (its own use: a module's tests
    together), so the override in tests/conftest.py is what decides; and the groups are the ones it means."""
    from xdist.scheduler import LoadScopeScheduling

    from tests.conftest import worker_group

    why = recheck("pytest-xdist", "the private `LoadScopeScheduling._split_scope(nodeid)` (overridden to group "
                  "the tests of a worker)", "tests/conftest.py pytest_xdist_make_scheduler")
    split = getattr(LoadScopeScheduling, "_split_scope", None)
    assert callable(split) and list(inspect.signature(split).parameters) == ["self", "nodeid"], why
    assert split(None, "tests/grade/test_lite.py::test_a[1]") == "tests/grade/test_lite.py", why
    assert worker_group("tests/corpus/test_embed.py::test_x") == worker_group("tests/core/test_ray_cluster.py::y") \
        == "ray"
    assert worker_group("tests/grade/test_lite.py::test_a") == "tests/grade/test_lite.py"

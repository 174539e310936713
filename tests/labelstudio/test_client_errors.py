"""The Label Studio client names what it meant to catch (a refusal, no answer, a timeout) and
nothing else: a bug inside a call is a failed run with its traceback, never "not reachable"."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from label_studio_sdk import LabelStudio

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.errors import AnnotationError
from curation.core.resources import resource_text
from curation.core.services import free_port
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.client import connect_as_admin, http_client, import_tasks, ls_call
from tests.cli.planted import assert_bug_kept, curate_with_bug, last_run
from tests.cli.test_cli import curate

pytestmark = pytest.mark.servers  # a real Label Studio server


def exportable(cat: Catalog) -> str:
    build_feed_set(cat, load_config().feeds, 2, seed=87)
    path = str(cat.path)
    cat.close()
    return path


def test_a_bug_while_connecting_is_not_an_unreachable_server(clustered_catalog, label_studio):
    db = exportable(clustered_catalog)
    out = curate_with_bug("label_studio_sdk.users.client:UsersClient.whoami", "RuntimeError:injected",
                          "--catalog", db, "annotate", "export", "--add", "zed")
    assert_bug_kept(out, db, "annotate-export", "RuntimeError: injected", where="connect", hidden="reachable")
    with Catalog(db) as cat:
        assert cat.scalar("SELECT count(*) FROM ls_projects") == 0


def test_a_bug_inside_a_call_is_not_a_refusal_or_silence(clustered_catalog, label_studio):
    db = exportable(clustered_catalog)
    out = curate_with_bug("label_studio_sdk.projects.client:ProjectsClient.create",
                          "KeyError:id", "--catalog", db, "annotate", "export", "--add", "zed")
    assert out.returncode == 1
    assert out.stderr.startswith("error: unexpected KeyError: 'id'"), out.stderr
    assert "refused" not in out.stderr and "did not answer" not in out.stderr
    with Catalog(db) as cat:
        run = last_run(cat, "annotate-export")
        assert run["status"] == "failed" and run["error"] == "KeyError: 'id'"
        assert "in ls_call" in run["traceback"] and "in export_to_label_studio" in run["traceback"]
        assert cat.scalar("SELECT count(*) FROM ls_projects") == 0  # no project recorded as made
        assert cat.scalar("SELECT count(*) FROM ls_tasks") == 0  # no task recorded as sent


def test_a_closed_port_is_still_not_reachable_in_one_line(clustered_catalog, label_studio, monkeypatch):
    db = exportable(clustered_catalog)
    closed = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("LABEL_STUDIO_URL", closed)
    out = curate("--catalog", db, "annotate", "export", "--add", "zed")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [f"error: Label Studio at {closed} is not reachable (ConnectError)"]
    with Catalog(db) as cat:
        run = last_run(cat, "annotate-export")
        assert run["status"] == "failed" and "is not reachable (ConnectError)" in run["error"]


def test_an_address_without_its_scheme_is_named_not_called_unreachable(clustered_catalog, label_studio,
                                                                       monkeypatch):
    db = exportable(clustered_catalog)
    monkeypatch.setenv("LABEL_STUDIO_URL", label_studio["url"].removeprefix("http://"))
    out = curate("--catalog", db, "annotate", "export", "--add", "zed")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: LABEL_STUDIO_URL must start with http:// or https:// (it is '{label_studio['url'][7:]}')"]


def test_a_refusal_no_answer_and_a_timeout_are_each_one_clear_error(label_studio):
    admin = LabelStudio(base_url=label_studio["url"], api_key=label_studio["token"])
    with pytest.raises(AnnotationError, match=r"^Label Studio refused project 987654: HTTP 404"):
        ls_call("project 987654", admin.projects.get, id=987654)
    closed = LabelStudio(base_url=f"http://127.0.0.1:{free_port()}", api_key=label_studio["token"])
    with pytest.raises(AnnotationError, match=r"^Label Studio did not answer the projects \(ConnectError\)$"):
        ls_call("the projects", closed.projects.list)
    with socket.socket() as silent:  # takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        slow = LabelStudio(base_url=f"http://127.0.0.1:{silent.getsockname()[1]}", api_key=label_studio["token"],
                           timeout=1)
        with pytest.raises(AnnotationError, match=r"^Label Studio did not answer who I am \(ReadTimeout\)$"):
            ls_call("who I am", slow.users.whoami)


def test_the_bulk_import_of_encoded_tasks_names_what_label_studio_refused(label_studio, monkeypatch):
    """The export sends its tasks already encoded, past the SDK's own import method: a refusal is still one
    line with Label Studio's reason, and a plain-HTTP client never follows a redirect to HTTPS."""
    url = label_studio["url"]
    admin = LabelStudio(base_url=url, api_key=label_studio["token"], httpx_client=http_client(url))
    with pytest.raises(AnnotationError, match=r"^Label Studio refused the tasks for nobody: HTTP 404"):
        import_tasks(admin, "the tasks for nobody", 987654, b'[{"data": {"feed_html": "x"}}]')
    project = admin.projects.create(title="encoded import", label_config=resource_text("authoring.xml"))
    try:
        ids = import_tasks(admin, "two tasks", project.id, json.dumps(
            [{"data": {"feed_html": "<b>一</b>", "feed_ref": "a"}}, {"data": {"feed_html": "二", "feed_ref": "b"}}],
            ensure_ascii=False).encode())
        assert len(ids) == 2 and [admin.tasks.get(id=str(i)).data["feed_html"] for i in ids] == ["<b>一</b>", "二"]
        with pytest.raises(AnnotationError, match=r"^Label Studio refused broken JSON: HTTP 400"):
            import_tasks(admin, "broken JSON", project.id, b'[{"data": ')
    finally:
        admin.projects.delete(id=project.id)
    with socket.socket() as redirecting:  # answers every request with a redirect to an HTTPS address
        redirecting.bind(("127.0.0.1", 0))
        redirecting.listen()
        port = redirecting.getsockname()[1]

        def answer() -> None:
            conn, _ = redirecting.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(f"HTTP/1.1 301 Moved\r\nLocation: https://127.0.0.1:{port}/x\r\n"
                             "Content-Length: 0\r\nConnection: close\r\n\r\n".encode())

        threading.Thread(target=answer, daemon=True).start()
        monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{port}")
        with pytest.raises(AnnotationError, match=r"^Label Studio at a plain-HTTP address sent us to https://.*; "
                           "give its HTTPS address in LABEL_STUDIO_URL$"):
            connect_as_admin()

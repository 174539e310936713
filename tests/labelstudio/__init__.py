"""A real Label Studio server for the suite (fresh data dir, free port, started once), and logging in as a person.

It is started as a team starts it behind the TLS proxy of docs/deployment.md: with the public URL the proxy
serves (`https://127.0.0.1:<a port kept for it>`, `public_url`), which `tests/labelstudio/proxy.py` puts
nginx on in front of a gate."""

from __future__ import annotations

import os
import secrets
import signal

import pytest

from curation.core.services import free_port
from curation.labelstudio.backup import backup
from curation.labelstudio.server import start_server, wait_ready

ADMIN = "admin@livingscreen.local"
PASSWORD = "Admin-" + secrets.token_hex(8)


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    data = tmp_path_factory.mktemp("labelstudio")
    media = tmp_path_factory.mktemp("served") / "media"
    token = secrets.token_hex(20)
    port, proxy_port = free_port(), free_port()
    while proxy_port == port:
        proxy_port = free_port()
    public_url = f"https://127.0.0.1:{proxy_port}"
    log = data / "server.log"
    proc = start_server(data / "data", port, ADMIN, PASSWORD, token, media_root=media, log=log, public_url=public_url)
    url = f"http://127.0.0.1:{port}"
    try:
        # its first start migrates an empty database on one core for most of a minute: the session's clustered
        # catalog, when a collected test needs it, is built meanwhile rather than after
        if any("clustered_catalog_file" in getattr(item, "fixturenames", ()) for item in request.session.items):
            request.getfixturevalue("clustered_catalog_file")
        wait_ready(url, timeout_s=240, proc=proc)
    except Exception:
        os.killpg(proc.pid, signal.SIGKILL)
        raise RuntimeError(f"Label Studio did not start: {log.read_text(errors='replace')[-2000:]}") from None
    saved = {k: os.environ.get(k) for k in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY",
                                            "LABEL_STUDIO_ANNOTATOR_PASSWORD", "LABEL_STUDIO_DATA_DIR")}
    # its data folder as a fresh server leaves it (database migrated, admin and token made), before any test
    # writes: a test that needs a server of its own starts from a copy, not from migrating an empty one again
    fresh = backup(data / "data", tmp_path_factory.mktemp("labelstudio-fresh") / "fresh.tar.gz")
    annotator_password = "Annotator-" + secrets.token_hex(6)
    os.environ.update(LABEL_STUDIO_URL=url, LABEL_STUDIO_API_KEY=token, LABEL_STUDIO_DATA_DIR=str(data / "data"),
                      LABEL_STUDIO_ANNOTATOR_PASSWORD=annotator_password)
    yield {"url": url, "token": token, "media": media, "admin": ADMIN, "password": PASSWORD,
           "annotator_password": annotator_password, "public_url": public_url, "fresh_backup": fresh}
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except Exception:
        os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture
def ls_client(label_studio):
    from label_studio_sdk import LabelStudio

    from curation.labelstudio.client import http_client

    return LabelStudio(base_url=label_studio["url"], api_key=label_studio["token"],
                       httpx_client=http_client(label_studio["url"]))


def login(url: str, email: str, password: str):
    """A browser-like session logged in through Label Studio's own login form, or AssertionError. Like a
    browser it sends its page's `Origin` with every request (Django's CSRF check compares it)."""
    import requests

    from curation.labelstudio.server import origin

    session = requests.Session()
    session.headers["Origin"] = origin(url)
    if url.startswith("https://"):  # the test proxy's certificate is self-signed (and REQUESTS_CA_BUNDLE would
        session.trust_env, session.verify = False, False  # override `verify` if the environment were read)
    session.get(f"{url}/user/login/", timeout=30)
    response = session.post(f"{url}/user/login/", timeout=30, allow_redirects=False,
                            data={"email": email, "password": password,
                                  "csrfmiddlewaretoken": session.cookies.get("csrftoken")},
                            headers={"Referer": f"{url}/user/login/"})
    assert response.status_code == 302 and "/user/login" not in response.headers.get("Location", ""), (
        f"{email} could not log in (HTTP {response.status_code})")
    session.headers.update({"X-CSRFToken": session.cookies.get("csrftoken") or "", "Referer": f"{url}/"})
    return session

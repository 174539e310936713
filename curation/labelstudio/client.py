"""The one way the toolkit talks to Label Studio: `label-studio-sdk` 2.x, with the
URL and API key from the environment (never from config, never logged)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from curation.core.config import secret
from curation.core.errors import AnnotationError, ConfigError

DEFAULT_URL = "http://127.0.0.1:8080"


def base_url() -> str:
    return os.environ.get("LABEL_STUDIO_URL", DEFAULT_URL).rstrip("/")


GATE_URL_ENV = "LABEL_STUDIO_GATE_URL"
GATE_FILE = "gate.json"  # written into Label Studio's data folder by the running gate: its URL and pid


def annotator_url() -> str | None:
    """What annotators and reviewers open: the access gate in front of Label Studio, never its own port.
    $LABEL_STUDIO_GATE_URL when the team set it (a TLS proxy's address), else the URL the running gate
    announced in Label Studio's data folder; None when neither says."""
    if os.environ.get(GATE_URL_ENV):
        return os.environ[GATE_URL_ENV].rstrip("/")
    return running_gate()


def login_line(who: str) -> str:
    """What an export prints for the people it made work for: where they log in."""
    url = annotator_url()
    if url is None:
        return (f"{who} log in through the access gate, which is not running here: start it with "
                "`make labelstudio` (or set LABEL_STUDIO_GATE_URL to the address they use)")
    return f"{who} log in at {url}/user/login/ (the access gate; never give out Label Studio's own URL)"


def running_gate() -> str | None:
    """The URL a gate still running announced in $LABEL_STUDIO_DATA_DIR/gate.json, or None."""
    folder = os.environ.get("LABEL_STUDIO_DATA_DIR")
    if not folder:
        return None
    try:
        said = json.loads((Path(folder) / GATE_FILE).read_text(encoding="utf-8"))
        os.kill(int(said["pid"]), 0)  # still running (signal 0 only asks)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(said["url"]).rstrip("/")


def ls_call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A Label Studio call whose failure is one clear line (AnnotationError), not a traceback."""
    import httpx
    from label_studio_sdk.core.api_error import ApiError

    try:
        return fn(*args, **kwargs)
    except ApiError as exc:
        raise refused(what, exc.status_code, exc.body) from None
    except (OSError, httpx.HTTPError) as exc:  # httpx's transport errors and timeouts are not OSErrors
        raise AnnotationError(f"Label Studio did not answer {what} ({type(exc).__name__})") from None


def refused(what: str, status: int | None, body: Any) -> AnnotationError:
    """Label Studio's refusal as one line, with the reason it gives."""
    body = body if isinstance(body, dict) else {}
    # a validation error names the field that failed in `validation_errors`, not in `detail`
    detail = " ".join(str(part) for part in (body.get("detail"), body.get("validation_errors")) if part)
    return AnnotationError(f"Label Studio refused {what}: HTTP {status}" + (f" ({detail[:300]})" if detail else ""))


def import_tasks(client: Any, what: str, project_id: int, tasks_json: bytes) -> list[int]:
    """Label Studio's bulk import of tasks already encoded as one JSON list; the new tasks' ids, in order. The
    SDK's own `import_tasks` walks the list through its encoder on the calling thread (60 ms for the 1,000 cards
    of bench/export.py); this sends the bytes as they are, through the SDK's HTTP client and authentication."""
    answer = request_json(client, what, f"api/projects/{project_id}/import", "POST",
                          params={"return_task_ids": True}, content=tasks_json,
                          headers={"Content-Type": "application/json"})
    return [int(i) for i in answer.get("task_ids") or []]


def request_json(client: Any, what: str, path: str, method: str, **options: Any) -> dict[str, Any]:
    """One request through the SDK's HTTP client and authentication, for what the SDK has no call for; the
    JSON object answered, or the refusal raised (`refused`) naming `what`. The SDK (2.1.2) has no public call for
    a request it does not model, nor a public way to read a client's address and token back, so this goes through
    its private `_client_wrapper`: the one private use, pinned by tests/test_private_apis.py."""
    response = ls_call(what, client._client_wrapper.httpx_client.request, path, method=method, **options)
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not 200 <= response.status_code < 300 or not isinstance(answer, dict):
        raise refused(what, response.status_code, answer)
    return answer


class Admin(NamedTuple):
    """Who the toolkit works as in Label Studio, and the organization it was working in when it connected."""

    user_id: int
    email: str
    home: int | None


def admin_of(me: Any) -> Admin:
    """`whoami`'s answer as an Admin."""
    return Admin(int(me.id), str(me.email), getattr(me, "active_organization", None))


def connect() -> Any:
    """A checked client: one clear error when the server is down or the token is wrong."""
    return connect_as_admin()[0]


def connect_as_admin() -> tuple[Any, Admin]:
    """A checked client and who it works as, from the one `whoami` that checks it."""
    import httpx
    from label_studio_sdk import LabelStudio
    from label_studio_sdk.core.api_error import ApiError

    key = secret("LABEL_STUDIO_API_KEY", "the Label Studio API token")
    url = base_url()
    if httpx.URL(url).scheme not in ("http", "https"):
        raise ConfigError(f"LABEL_STUDIO_URL must start with http:// or https:// (it is {url!r})")
    client = LabelStudio(base_url=url, api_key=key, timeout=60, httpx_client=http_client(url))
    try:
        me = client.users.whoami()
    except httpx.UnsupportedProtocol as exc:  # a plain-HTTP address that sends us to HTTPS (_plain_http_transport)
        raise AnnotationError(str(exc)) from None
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise AnnotationError(f"Label Studio at {url} refused the API key "
                                  f"(HTTP {exc.status_code})") from None
        raise AnnotationError(f"Label Studio at {url} answered HTTP {exc.status_code}") from None
    except (OSError, httpx.HTTPError) as exc:  # refused, reset, timed out, a name that does not resolve
        raise AnnotationError(f"Label Studio at {url} is not reachable "
                              f"({type(exc).__name__})") from None
    return client, admin_of(me)


def http_client(url: str) -> Any:
    """The HTTP client for Label Studio at `url`. Over plain HTTP every request gets a connection of its own:
    Label Studio's server writes a response's head and body apart, and on a kept-alive connection the body
    waits for the client's delayed ACK, 40 ms on Linux, so every call took about 50 ms where a fresh
    connection answers in about 10 (measured on whoami; bench/export.py); and no TLS set-up is made (loading
    the CA bundle cost 30 ms a command). Over HTTPS the handshake costs more than that wait, and connections
    are kept."""
    import httpx

    parsed = httpx.URL(url)
    if parsed.scheme != "http":
        return httpx.Client(timeout=60, follow_redirects=True)
    if _proxied(parsed.host):  # the plain transport would bypass the proxy the environment names
        return httpx.Client(timeout=60, follow_redirects=True, limits=httpx.Limits(max_keepalive_connections=0))
    return httpx.Client(timeout=60, follow_redirects=True, transport=_plain_http_transport())


def _proxied(host: str) -> bool:
    import urllib.request

    return bool(urllib.request.getproxies().get("http")) and not urllib.request.proxy_bypass(host)


def _plain_http_transport() -> Any:
    import httpx

    class PlainHTTP(httpx.HTTPTransport):
        """No TLS: a redirect to HTTPS is refused, never followed unverified."""

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.scheme != "http":
                raise httpx.UnsupportedProtocol(f"Label Studio at a plain-HTTP address sent us to {request.url}; "
                                                "give its HTTPS address in LABEL_STUDIO_URL")
            return super().handle_request(request)

    return PlainHTTP(verify=False, limits=httpx.Limits(max_keepalive_connections=0))

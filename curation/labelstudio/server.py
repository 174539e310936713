"""Start a Label Studio server on 127.0.0.1 with a preset admin and API token.

Label Studio lives in its own venv (`.venv-ls`: it pins `openai<2` and `pyarrow<25`,
which clash with ours). The legacy-token flag must be set at the *first* start of
a data dir, or the preset token is refused for good. Everything Label Studio is told
comes from `label_studio_environment`; `make labelstudio` starts it with the gate
through `curation.labelstudio.launch`.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from curation.core.errors import InputError, PrerequisiteError
from curation.core.services import installation_root, wait_http


def label_studio_bin() -> Path:
    """Label Studio's own program: `$LABEL_STUDIO_BIN`, else in `.venv-ls` of the installation root
    (where `make labelstudio` makes it), whatever the working directory."""
    if os.environ.get("LABEL_STUDIO_BIN"):
        return Path(os.environ["LABEL_STUDIO_BIN"])
    return installation_root() / ".venv-ls" / "bin" / "label-studio"


def wait_ready(url: str, timeout_s: float | None = None, proc: subprocess.Popen | None = None,
               log: Path | None = None) -> None:
    """Until Label Studio answers; without `timeout_s`, for as long as `proc` lives."""
    wait_http(f"{url}/health", "Label Studio", timeout_s, proc, interval_s=1.0, log=log)


def origin(public_url: str) -> str:
    """`scheme://host[:port]` of the URL people open, as a browser writes it in `Origin` (host in lower
    case, the scheme's default port left out), or InputError."""
    parts = urlsplit(public_url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise InputError(f"the public URL {public_url!r} is not an http:// or https:// address "
                         "(LS_PUBLIC_URL, e.g. https://label.example.org)")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def label_studio_environment(data_dir: Path, username: str, password: str, token: str,
                             media_root: Path | None = None, public_url: str = "") -> dict[str, str]:
    """What Label Studio is told at start, beside the caller's environment.

    With a public URL (a TLS proxy in front of the gate), its origin is trusted for Django's CSRF
    check: the browser's `Origin: https://…` never matches the plain-http request Label Studio
    sees behind the proxy, and every login would be refused."""
    env = {"LABEL_STUDIO_USERNAME": username, "LABEL_STUDIO_PASSWORD": password,
           "LABEL_STUDIO_USER_TOKEN": token, "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
           "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true", "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
           # each start would otherwise ask pypi.org for a newer release, waiting up to 10 s where there is no network
           "LATEST_VERSION_CHECK": "false"}
    if media_root is not None:
        # Label Studio refuses a storage path equal to its document root: serve the parent.
        env |= {"LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
                "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(media_root.resolve().parent)}
    if public_url:
        env["CSRF_TRUSTED_ORIGINS"] = origin(public_url)
    return env


def start_server(data_dir: Path, port: int, username: str, password: str, token: str,
                 media_root: Path | None = None, log: Path | None = None, public_url: str = "") -> subprocess.Popen:
    """Label Studio on 127.0.0.1:`port`, in a session of its own (`stop_server` stops it and its workers)."""
    binary = label_studio_bin()
    if not binary.exists():
        raise PrerequisiteError(f"{binary} is missing: run `make labelstudio` (it makes .venv-ls) "
                                "or set LABEL_STUDIO_BIN")
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **label_studio_environment(data_dir, username, password, token, media_root, public_url)}
    for name in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"):
        env.pop(name, None)
    out = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(
        [str(binary), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(data_dir)],
        env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        start_new_session=True)


def stop_server(proc: subprocess.Popen, grace_s: float = 30) -> None:
    """Stop a server `start_server` started, with its worker processes: asked first, killed after `grace_s`."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue

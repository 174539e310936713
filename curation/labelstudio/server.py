"""Start a Label Studio server on 127.0.0.1 with a preset admin and API token.

Label Studio lives in its own venv (`.venv-ls`: it pins `openai<2` and `pyarrow<25`,
which clash with ours). The legacy-token flag must be set at the *first* start of
a data dir, or the preset token is refused for good. `python -m
curation.labelstudio.server` is what `make labelstudio` runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

from curation.core.config import load_config
from curation.core.errors import PrerequisiteError
from curation.core.services import installation_root, wait_http


def label_studio_bin() -> Path:
    """Label Studio's own program: `$LABEL_STUDIO_BIN`, else in `.venv-ls` of the installation root
    (where `make labelstudio` makes it), whatever the working directory."""
    if os.environ.get("LABEL_STUDIO_BIN"):
        return Path(os.environ["LABEL_STUDIO_BIN"])
    return installation_root() / ".venv-ls" / "bin" / "label-studio"


def wait_ready(url: str, timeout_s: float = 180, proc: subprocess.Popen | None = None) -> None:
    wait_http(f"{url}/health", "Label Studio", timeout_s, proc, interval_s=1.0)


def start_server(data_dir: Path, port: int, username: str, password: str, token: str,
                 media_root: Path | None = None, log: Path | None = None) -> subprocess.Popen:
    binary = label_studio_bin()
    if not binary.exists():
        raise PrerequisiteError(f"{binary} is missing: run `make labelstudio` (it makes .venv-ls) "
                                "or set LABEL_STUDIO_BIN")
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ,
           "LABEL_STUDIO_USERNAME": username, "LABEL_STUDIO_PASSWORD": password,
           "LABEL_STUDIO_USER_TOKEN": token, "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
           "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true", "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir)}
    if media_root is not None:
        # Label Studio refuses a storage path equal to its document root: serve the parent.
        env |= {"LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
                "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(media_root.resolve().parent)}
    for name in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"):
        env.pop(name, None)
    out = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(
        [str(binary), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(data_dir)],
        env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        start_new_session=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run Label Studio for the curation toolkit.")
    parser.add_argument("--port", type=int, default=int(os.environ.get("LABEL_STUDIO_PORT", 8080)))
    parser.add_argument("--data-dir", type=Path, default=Path("build/labelstudio"))
    parser.add_argument("--media-root", type=Path, default=Path(load_config().media.output_dir),
                        help="normalised media served to annotators (default: [media] output_dir)")
    args = parser.parse_args()
    missing = [n for n in ("LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_API_KEY")
               if not os.environ.get(n)]
    if missing:
        raise SystemExit(f"set {', '.join(missing)} in the environment first (the API key is the "
                         "admin's preset token: 40 hex characters)")
    proc = start_server(args.data_dir, args.port, os.environ["LABEL_STUDIO_USERNAME"],
                        os.environ["LABEL_STUDIO_PASSWORD"], os.environ["LABEL_STUDIO_API_KEY"],
                        args.media_root, log=args.data_dir / "server.log")
    url = f"http://127.0.0.1:{args.port}"
    wait_ready(url, proc=proc)
    print(f"Label Studio ready at {url} (pid {proc.pid}, log {args.data_dir / 'server.log'}); "
          f"export LABEL_STUDIO_URL={url} LABEL_STUDIO_DATA_DIR={args.data_dir.resolve()}")


if __name__ == "__main__":
    main()
